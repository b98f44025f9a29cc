//! The oracle inside one execution: safety at every entry, and the progress properties checked
//! exactly against a global step index.
//!
//! Shuttle runs one task at a time, so every event (a request, the end of a doorway, an entry,
//! an exit, the start and the end of one evaluation of a wait condition, a write) happens at a
//! distinct step and precedence between events is exact: no timestamps, no clock skew.
//!
//! - **P5 FCFS**: when j enters, no conflicting i whose doorway ended before j's request began
//!   may still be waiting.
//! - **P4 concurrent entry** (GME): a failed wait evaluation by a process in its entry section
//!   while no conflicting process was active at any time during the evaluation.
//! - **P8 strong concurrent entry** (GME): a failed wait evaluation by a process past its
//!   doorway while it doorway-preceded every active conflicting process.
//! - **P7 FIFE** (GME, k-exclusion): once j, doorway-preceded by i and with i's session, has
//!   entered, an evaluation of i's wait condition begun after that must not fail.
//! - **P3 bounded exit**: a failed wait evaluation in the exit section.
//!
//! A wait condition that fails is the only way a process here can take an unbounded number of
//! its own steps (every loop of every algorithm waits through `wait_until`), so "enters within
//! a bounded number of its own steps" is exactly "no evaluation of its wait fails".

use crate::locks::{Claims, Problem};

/// A property that failed.
#[derive(Debug)]
pub struct Broken {
    /// The property, e.g. "P4 concurrent entry".
    pub property: &'static str,
    /// What happened.
    pub what: String,
    /// Whether the lock claims the property.
    pub claimed: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    Entry,
    Inside,
    Exit,
}

#[derive(Clone, Debug)]
struct Proc {
    phase: Phase,
    session: usize,
    request: u64,
    doorway: Option<u64>,
    /// FIFE: the step at which a process it doorway-preceded (same session) entered.
    enabled: Option<u64>,
    /// Its own steps (counted by the scheduler) when it was enabled.
    enabled_steps: u64,
    /// An evaluation of its wait condition is under way.
    evaluating: bool,
    eval_begin: u64,
    /// A conflicting process was active at some time during the current evaluation.
    eval_conflict: bool,
    /// At the start of the evaluation it doorway-preceded every active conflicting process.
    eval_precedes_all: bool,
    crashed: bool,
}

/// The state of one execution.
pub struct Monitor {
    problem: Problem,
    k: usize,
    fcfs: bool,
    claims: Claims,
    step: u64,
    procs: Vec<Proc>,
    /// The first failure of each unclaimed property (its witness), in the order they failed.
    pub witnesses: Vec<Broken>,
    /// Check unclaimed properties as if claimed (stop at the first witness).
    strict: bool,
    /// The steps each process has taken, counted by the scheduler, as last told
    /// ([`Monitor::steps`]).
    steps: Vec<u64>,
    /// Seed 001 Lemma 5: the most steps a process took between being enabled and entering.
    pub fife_steps: Option<u64>,
}

impl Monitor {
    /// A monitor for `n` processes of a lock solving `problem`.
    pub fn new(
        problem: Problem,
        n: usize,
        k: usize,
        fcfs: bool,
        claims: Claims,
        strict: bool,
    ) -> Self {
        let idle = Proc {
            phase: Phase::Idle,
            session: 0,
            request: 0,
            doorway: None,
            enabled: None,
            enabled_steps: 0,
            evaluating: false,
            eval_begin: 0,
            eval_conflict: false,
            eval_precedes_all: false,
            crashed: false,
        };
        Monitor {
            problem,
            k,
            fcfs,
            claims,
            step: 0,
            procs: vec![idle; n],
            witnesses: Vec::new(),
            strict,
            steps: vec![0; n],
            fife_steps: None,
        }
    }

    fn tick(&mut self) -> u64 {
        self.step += 1;
        self.step
    }

    /// Whether requests of p and q conflict (may not be inside together).
    fn conflict(&self, p: usize, q: usize) -> bool {
        match self.problem {
            Problem::Gme => self.procs[p].session != self.procs[q].session,
            Problem::Mutex => p != q,
            // k-exclusion: every request is of "the same session" (FIFE applies to all pairs).
            Problem::KExclusion => false,
        }
    }

    fn active(&self, q: usize) -> bool {
        self.procs[q].phase != Phase::Idle
    }

    /// Records a failure: `Err` when the run must stop (a claimed property, or any property
    /// when strict), otherwise the first failure of each unclaimed property is kept as its
    /// witness.
    fn broken(
        &mut self,
        property: &'static str,
        claimed: bool,
        what: String,
    ) -> Result<(), Broken> {
        let b = Broken {
            property,
            what,
            claimed,
        };
        if claimed || self.strict {
            Err(b)
        } else {
            if !self.witnesses.iter().any(|w| w.property == property) {
                self.witnesses.push(b);
            }
            Ok(())
        }
    }

    /// p begins its entry section asking for `session`.
    pub fn request(&mut self, p: usize, session: usize) {
        let now = self.tick();
        let pr = &mut self.procs[p];
        pr.phase = Phase::Entry;
        pr.session = session;
        pr.request = now;
        pr.doorway = None;
        pr.enabled = None;
        pr.evaluating = false;
        for q in 0..self.procs.len() {
            if q != p && self.procs[q].evaluating && self.conflict(p, q) {
                self.procs[q].eval_conflict = true;
            }
        }
    }

    /// p's doorway ended.
    pub fn doorway(&mut self, p: usize) {
        let now = self.tick();
        self.procs[p].doorway = Some(now);
    }

    /// The steps each process has taken so far, counted by the scheduler (told before an
    /// entry, for FIFE's step count).
    pub fn steps(&mut self, steps: Vec<u64>) {
        self.steps = steps;
    }

    /// p entered the critical section: safety, FCFS, and FIFE's enabling (and, when p was
    /// enabled, the steps it took since).
    pub fn enter(&mut self, p: usize) -> Result<(), Broken> {
        let now = self.tick();
        if self.procs[p].enabled.is_some() {
            let took = self
                .own_steps(p)
                .saturating_sub(self.procs[p].enabled_steps);
            self.fife_steps = Some(self.fife_steps.map_or(took, |s| s.max(took)));
        }
        self.procs[p].phase = Phase::Inside;
        self.procs[p].evaluating = false;
        let inside: Vec<usize> = (0..self.procs.len())
            .filter(|&q| self.procs[q].phase == Phase::Inside)
            .collect();
        let unsafe_ = match self.problem {
            Problem::Mutex if inside.len() > 1 => Some(format!(
                "{} processes inside (mutual exclusion): {inside:?}",
                inside.len()
            )),
            Problem::KExclusion if inside.len() > self.k => Some(format!(
                "{} processes inside with k = {}: {inside:?}",
                inside.len(),
                self.k
            )),
            Problem::Gme => inside
                .iter()
                .find(|&&q| q != p && self.procs[q].session != self.procs[p].session)
                .map(|&q| {
                    format!(
                        "process {p} (session {}) inside with process {q} (session {})",
                        self.procs[p].session, self.procs[q].session
                    )
                }),
            _ => None,
        };
        if let Some(what) = unsafe_ {
            return Err(Broken {
                property: "safety",
                what,
                claimed: true,
            });
        }
        let request = self.procs[p].request;
        for i in 0..self.procs.len() {
            let pi = &self.procs[i];
            if i == p || pi.phase != Phase::Entry || pi.crashed {
                continue;
            }
            let Some(d) = pi.doorway else { continue };
            if d >= request {
                continue;
            }
            // i doorway-precedes p and is still waiting.
            if self.problem != Problem::KExclusion && self.conflict(i, p) {
                let sessions = if self.problem == Problem::Gme {
                    format!(
                        " (sessions {} and {})",
                        self.procs[p].session, self.procs[i].session
                    )
                } else {
                    String::new()
                };
                let what = format!(
                    "process {p} entered at step {now} before process {i}, whose doorway ended at step {d}, before {p} requested at step {request}{sessions}"
                );
                self.broken("P5 FCFS", self.fcfs, what)?;
            } else if self.problem != Problem::Mutex && self.procs[i].enabled.is_none() {
                self.procs[i].enabled = Some(now);
                self.procs[i].enabled_steps = self.own_steps(i);
            }
        }
        Ok(())
    }

    fn own_steps(&self, p: usize) -> u64 {
        self.steps.get(p).copied().unwrap_or(0)
    }

    /// p begins its exit section.
    pub fn exit_begin(&mut self, p: usize) {
        self.tick();
        self.procs[p].phase = Phase::Exit;
    }

    /// p finished its exit section.
    pub fn exit_end(&mut self, p: usize) {
        self.tick();
        self.procs[p].phase = Phase::Idle;
        self.procs[p].evaluating = false;
    }

    /// p crashed (stops for ever where it is; it stays active).
    pub fn crash(&mut self, p: usize) {
        self.tick();
        self.procs[p].crashed = true;
        self.procs[p].evaluating = false;
    }

    /// p begins one evaluation of its wait condition.
    pub fn wait_begin(&mut self, p: usize) {
        let now = self.tick();
        let n = self.procs.len();
        let conflicting: Vec<usize> = (0..n)
            .filter(|&q| q != p && self.active(q) && self.conflict(p, q))
            .collect();
        let precedes_all = match self.procs[p].doorway {
            Some(d) => conflicting.iter().all(|&q| self.procs[q].request > d),
            None => false,
        };
        let pr = &mut self.procs[p];
        pr.evaluating = true;
        pr.eval_begin = now;
        pr.eval_conflict = !conflicting.is_empty();
        pr.eval_precedes_all = precedes_all;
    }

    /// p's evaluation ended, satisfied or not.
    pub fn wait_end(&mut self, p: usize, satisfied: bool) -> Result<(), Broken> {
        let now = self.tick();
        let pr = self.procs[p].clone();
        self.procs[p].evaluating = false;
        if satisfied || !pr.evaluating {
            return Ok(());
        }
        match pr.phase {
            Phase::Exit => {
                let what = format!("process {p} waited in its exit section (step {now})");
                self.broken("P3 bounded exit", self.claims.bounded_exit, what)?;
            }
            Phase::Entry if self.problem == Problem::Gme => {
                if !pr.eval_conflict {
                    let what = format!(
                        "process {p} (session {}) waited at step {now} while no conflicting process was active",
                        pr.session
                    );
                    self.broken("P4 concurrent entry", self.claims.concurrent_entry, what)?;
                } else if pr.eval_precedes_all {
                    let what = format!(
                        "process {p} (session {}) waited at step {now}, past its doorway, though it doorway-preceded every active conflicting process",
                        pr.session
                    );
                    self.broken(
                        "P8 strong concurrent entry",
                        self.claims.strong_concurrent_entry,
                        what,
                    )?;
                }
            }
            _ => {}
        }
        if pr.phase == Phase::Entry {
            if let Some(e) = pr.enabled {
                if pr.eval_begin > e {
                    let what = format!(
                        "process {p} waited at step {now} although a process it doorway-preceded, with its session, entered at step {e}"
                    );
                    self.broken("P7 FIFE", self.claims.fife, what)?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gme(claims: Claims) -> Monitor {
        Monitor::new(Problem::Gme, 3, 1, true, claims, false)
    }

    #[test]
    fn conflicting_sessions_inside_together_are_unsafe() {
        let mut m = gme(Claims::default());
        m.request(0, 0);
        m.request(1, 1);
        assert!(m.enter(0).is_ok());
        let e = m.enter(1).expect_err("unsafe");
        assert_eq!(e.property, "safety");
    }

    #[test]
    fn fcfs_overtaking_a_finished_doorway_is_caught() {
        let mut m = gme(Claims::default());
        m.request(0, 0);
        m.doorway(0);
        m.request(1, 1);
        m.doorway(1);
        let e = m.enter(1).expect_err("overtook");
        assert_eq!(e.property, "P5 FCFS");
        // Overlapping doorways: no precedence, no violation.
        let mut m = gme(Claims::default());
        m.request(0, 0);
        m.request(1, 1);
        m.doorway(0);
        m.doorway(1);
        assert!(m.enter(1).is_ok());
    }

    #[test]
    fn waiting_alone_breaks_concurrent_entry() {
        let claims = Claims {
            concurrent_entry: true,
            ..Claims::default()
        };
        let mut m = gme(claims);
        m.request(0, 0);
        m.request(1, 0);
        m.wait_begin(0);
        assert!(m.wait_end(0, false).is_err(), "same session only");
        // A conflicting request during the evaluation excuses the failure.
        let mut m = gme(claims);
        m.request(0, 0);
        m.wait_begin(0);
        m.request(2, 1);
        assert!(m.wait_end(0, false).is_ok());
    }

    #[test]
    fn unclaimed_failures_are_witnesses() {
        let mut m = gme(Claims::default());
        m.request(0, 0);
        m.doorway(0);
        m.request(1, 1);
        m.wait_begin(0);
        assert!(m.wait_end(0, false).is_ok());
        assert_eq!(m.witnesses[0].property, "P8 strong concurrent entry");
        assert_eq!(m.witnesses.len(), 1);
    }

    #[test]
    fn fife_steps_are_counted_from_the_enabling_entry() {
        let mut m = Monitor::new(Problem::KExclusion, 2, 2, false, Claims::default(), false);
        m.request(0, 0);
        m.doorway(0);
        m.request(1, 1);
        m.doorway(1);
        m.steps(vec![10, 20]);
        m.enter(1).unwrap();
        assert_eq!(m.fife_steps, None, "1 was not enabled");
        m.steps(vec![17, 25]);
        m.enter(0).unwrap();
        assert_eq!(m.fife_steps, Some(7), "0 took 7 steps after 1 entered");
    }

    #[test]
    fn fife_is_enabled_by_a_later_entrant() {
        let claims = Claims {
            fife: true,
            ..Claims::default()
        };
        let mut m = Monitor::new(Problem::KExclusion, 3, 1, false, claims, false);
        m.request(0, 0);
        m.doorway(0);
        m.request(1, 1);
        m.doorway(1);
        m.enter(1).unwrap();
        m.wait_begin(0);
        assert_eq!(m.wait_end(0, false).err().unwrap().property, "P7 FIFE");
    }

    #[test]
    fn waiting_in_the_exit_breaks_bounded_exit() {
        let mut m = Monitor::new(Problem::Mutex, 2, 1, false, Claims::BOUNDED_EXIT, false);
        m.request(0, 0);
        m.enter(0).unwrap();
        m.exit_begin(0);
        m.wait_begin(0);
        assert_eq!(
            m.wait_end(0, false).err().unwrap().property,
            "P3 bounded exit"
        );
    }
}
