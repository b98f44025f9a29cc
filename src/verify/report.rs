//! What `verify` reports: how exploration ended ([`Outcome`]), the unclaimed properties seen
//! failing, the figures of the run and the properties checked as claims, and the text form.

use serde::Serialize;

use crate::locks::{Claims, Problem};

/// How exploration ended.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(tag = "result", rename_all = "lowercase")]
pub enum Outcome {
    /// No violation in any completed schedule.
    Safe,
    /// A schedule broke the lock's safety property, one of its invariants or a property it
    /// claims, or deadlocked.
    Violation {
        /// What broke.
        kind: String,
        /// The replay string; `--replay` reproduces it.
        schedule: String,
    },
    /// With `--witness`: a schedule in which a property the lock does not claim fails.
    Witness {
        /// What failed.
        kind: String,
        /// The replay string.
        schedule: String,
    },
    /// No schedule completed (every one was cut at the step bound): nothing was checked.
    Inconclusive {
        /// Why.
        reason: String,
    },
}

/// An unclaimed property seen failing (a witness) during exploration.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct WitnessTally {
    /// The property.
    pub property: String,
    /// Schedules in which it failed.
    pub schedules: usize,
    /// The first failure seen.
    pub first: String,
}

/// The result of `verify`.
#[derive(Clone, Debug, Serialize)]
pub struct VerifyReport {
    /// Lock name.
    pub lock: String,
    /// Mutant name, when a mutant ran.
    pub mutant: Option<String>,
    /// Its problem.
    pub problem: String,
    /// Processes.
    pub threads: usize,
    /// k (k-exclusion).
    pub k: usize,
    /// Passages per process.
    pub passages: usize,
    /// Sessions (GME).
    pub sessions: usize,
    /// Session plan.
    pub plan: String,
    /// Steps inside the critical section.
    pub cs_steps: usize,
    /// Step bound of one schedule.
    pub max_steps: usize,
    /// Properties checked as claims (besides safety, invariants and deadlock freedom).
    pub claimed: Vec<String>,
    /// Schedules run (including the failing one).
    pub schedules_run: usize,
    /// Schedules that ran to completion.
    pub schedules_completed: usize,
    /// Schedules cut at the step bound (a spin loop starved by an unfair scheduler).
    pub schedules_cut: usize,
    /// Schedules in which k − 1 processes were frozen mid-protocol (crash-tolerant locks).
    pub schedules_with_crashes: usize,
    /// Scheduler.
    pub scheduler: String,
    /// Seed.
    pub seed: u64,
    /// Wall-clock seconds.
    pub elapsed_secs: f64,
    /// The largest token number held after any write of any schedule run (including one that
    /// broke a bound), for locks whose papers bound their tokens
    /// ([`crate::locks::Lock::largest_token`]); None for the others.
    pub largest_token: Option<i64>,
    /// FIFE's step count (seed 001 Lemma 5): the most steps a process took, counted by the
    /// scheduler, between being enabled (a process it doorway-preceded, with its session,
    /// entered) and entering, over every schedule run; None when no process was enabled.
    pub fife_steps_max: Option<u64>,
    /// Unclaimed properties seen failing.
    pub witnesses: Vec<WitnessTally>,
    /// Outcome.
    pub outcome: Outcome,
    /// The failing schedule as a numbered step trace (its last steps), when one was asked
    /// for and something failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<Vec<super::trace::TraceLine>>,
    /// Shared-memory steps of the failing schedule, when traced (the trace may show fewer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_steps: Option<usize>,
    /// The trace for the text form.
    #[serde(skip)]
    pub trace_text: Option<String>,
}

impl VerifyReport {
    /// The exit code of `lockbench verify`: 0 safe (or a witness found), 1 violation, 3
    /// inconclusive.
    pub fn exit_code(&self) -> i32 {
        match self.outcome {
            Outcome::Safe | Outcome::Witness { .. } => 0,
            Outcome::Violation { .. } => 1,
            Outcome::Inconclusive { .. } => 3,
        }
    }

    fn write_trace(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.trace_text {
            Some(t) => write!(f, "{t}"),
            None => Ok(()),
        }
    }

    fn name(&self) -> String {
        match &self.mutant {
            Some(m) => format!("{} mutant {m}", self.lock),
            None => self.lock.clone(),
        }
    }
}

impl std::fmt::Display for VerifyReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sessions = if self.problem == "gme" {
            format!(", {} sessions ({})", self.sessions, self.plan)
        } else {
            String::new()
        };
        writeln!(
            f,
            "{} ({}), {} processes, {} passages each{}{}: {} schedules ({}, seed {}) in {:.1} s",
            self.name(),
            self.problem,
            self.threads,
            self.passages,
            if self.problem == "k-exclusion" {
                format!(", k = {}", self.k)
            } else {
                String::new()
            },
            sessions,
            self.schedules_run,
            self.scheduler,
            self.seed,
            self.elapsed_secs
        )?;
        writeln!(
            f,
            "  checked: safety, invariants, deadlock{}{}",
            if self.claimed.is_empty() { "" } else { ", " },
            self.claimed.join(", ")
        )?;
        if let Some(t) = self.largest_token {
            writeln!(f, "  largest token seen: {t} (N = {})", self.threads)?;
        }
        if let Some(s) = self.fife_steps_max {
            writeln!(
                f,
                "  most steps from enabled (FIFE) to entering: {s} (N = {})",
                self.threads
            )?;
        }
        if self.schedules_with_crashes > 0 {
            writeln!(
                f,
                "  {} schedules froze k − 1 = {} processes mid-protocol (starvation freedom with fewer than k crashes)",
                self.schedules_with_crashes,
                self.k.saturating_sub(1)
            )?;
        }
        if self.schedules_cut > 0 {
            writeln!(
                f,
                "  {} schedules cut at the step bound ({} steps; a waiting process starved by the scheduler; not a result)",
                self.schedules_cut, self.max_steps
            )?;
        }
        for w in &self.witnesses {
            writeln!(
                f,
                "  witness (not claimed): {} fails in {} schedules, e.g. {}",
                w.property, w.schedules, w.first
            )?;
        }
        match &self.outcome {
            Outcome::Safe => writeln!(
                f,
                "  no violation found in {} completed schedules",
                self.schedules_completed
            ),
            Outcome::Inconclusive { reason } => writeln!(f, "  INCONCLUSIVE: {reason}"),
            Outcome::Violation { kind, schedule } => {
                writeln!(f, "  {}", headed("VIOLATION", kind))?;
                self.write_trace(f)?;
                writeln!(f, "  replay: lockbench verify --replay '{schedule}'")
            }
            Outcome::Witness { kind, schedule } => {
                writeln!(f, "  {}", headed("WITNESS", kind))?;
                self.write_trace(f)?;
                writeln!(f, "  replay: lockbench verify --replay '{schedule}'")
            }
        }
    }
}

/// `kind` under the heading `head`: as it is when its own tag already says `head`
/// (`WITNESS: …`, `SAFETY VIOLATION: …`), so no word is printed twice; `DEADLOCK: …` is
/// headed `VIOLATION: DEADLOCK: …`.
fn headed(head: &str, kind: &str) -> String {
    let tagged = super::execution::TAGS
        .iter()
        .any(|t| kind.starts_with(t) && t.contains(head));
    if tagged {
        kind.to_string()
    } else {
        format!("{head}: {kind}")
    }
}

/// The properties checked as claims for a lock, for reports.
pub(super) fn claimed_names(problem: Problem, fcfs: bool, claims: Claims) -> Vec<String> {
    let mut v = Vec::new();
    if fcfs && problem != Problem::KExclusion {
        v.push("P5 FCFS");
    }
    if claims.bounded_exit {
        v.push("P3 bounded exit");
    }
    if problem == Problem::Gme && claims.concurrent_entry {
        v.push("P4 concurrent entry");
    }
    if problem == Problem::Gme && claims.strong_concurrent_entry {
        v.push("P8 strong concurrent entry");
    }
    if problem != Problem::Mutex && claims.fife {
        v.push("P7 FIFE");
    }
    if problem == Problem::KExclusion && claims.crash_tolerant {
        v.push("starvation freedom with k − 1 crashes");
    }
    v.into_iter().map(String::from).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tagged_kind_is_not_headed_twice() {
        assert_eq!(
            headed("WITNESS", "WITNESS: P7 FIFE: p1 overtaken"),
            "WITNESS: P7 FIFE: p1 overtaken"
        );
        assert_eq!(
            headed("VIOLATION", "SAFETY VIOLATION: two inside"),
            "SAFETY VIOLATION: two inside"
        );
        assert_eq!(headed("VIOLATION", "two inside"), "VIOLATION: two inside");
        assert_eq!(
            headed("VIOLATION", "DEADLOCK: all wait"),
            "VIOLATION: DEADLOCK: all wait"
        );
    }
}
