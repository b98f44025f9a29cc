//! Schedule exploration: the same algorithm code, built on the scheduled memory (every register
//! access a scheduling point), run under shuttle's random and PCT schedulers. Checked exactly in
//! every execution: the lock's safety property at every entry, its register invariants after
//! every write, its papers' lemmas at every step they speak of ([`crate::locks::Lock::lemma_step`]),
//! global deadlock, and the progress properties it claims ([`monitor`]): FCFS,
//! concurrent entry, FIFE, bounded exit, and for crash-tolerant k-exclusion starvation freedom
//! with k − 1 processes frozen mid-protocol.
//!
//! Each passage's session is drawn from the schedule's own randomness, so a replay reproduces
//! it. A violation comes back as a replay string (the schedule with the settings it depends on,
//! [`replay`]), which `--replay` reproduces exactly. Seeded mutants of the paper algorithms
//! ([`mutants`]) measure how strong all this is.

mod execution;
mod explore;
pub mod monitor;
pub mod mutants;
mod options;
pub mod replay;
mod report;
mod script;
mod steps;
#[cfg(test)]
mod tests;
pub mod trace;

use std::cell::RefCell;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use crate::locks::Params;
use crate::mem::WaitPolicy;
use crate::registry::LockEntry;
use explore::{Exploration, QuietStderr};
pub use options::{SchedulerKind, SessionPlan, VerifyOptions};
pub use report::{Outcome, VerifyReport, WitnessTally};

/// Explores `opts.schedules` schedules of `entry` (or replays one), quietly when `quiet`.
pub fn verify(
    entry: &LockEntry,
    opts: &VerifyOptions,
    quiet: bool,
) -> Result<VerifyReport, String> {
    let build = entry.scheduled.clone().ok_or_else(|| {
        format!(
            "{} is not written over the register abstraction, so it cannot run on the scheduled memory: verify a paper algorithm or ticket",
            entry.info.name
        )
    })?;
    options::validate(entry, opts)?;
    let problem = entry.info.problem;
    let fcfs = entry.info.fcfs;
    let claims = build(&Params::new(opts.threads, opts.k.max(1), WaitPolicy::Spin)).claims();
    let exploration = Exploration {
        lock: entry.info.name,
        build,
        problem,
        fcfs,
        opts,
        tally: Arc::new(Default::default()),
        runs: RefCell::new(0usize),
        script: match opts.scheduler {
            SchedulerKind::Script => Some(options::script_of(entry, opts)?),
            _ => None,
        },
    };
    let started = Instant::now();
    let quiet = QuietStderr::new(quiet);
    let (scheduler_name, failure) = match &opts.replay {
        Some(encoded) => exploration.replay(encoded)?,
        None => exploration.search()?,
    };
    let trace = match (&failure, opts.trace) {
        (Some((kind, schedule)), Some(keep)) => exploration.traced(schedule, keep, kind),
        _ => None,
    };
    drop(quiet);
    let tally = &exploration.tally;
    let schedules_run = *exploration.runs.borrow();
    let completed = tally.completed.load(Ordering::Relaxed);
    let failed = usize::from(failure.is_some());
    let outcome = match failure {
        Some((kind, schedule)) if kind.starts_with("WITNESS") => Outcome::Witness { kind, schedule },
        Some((kind, schedule)) => Outcome::Violation { kind, schedule },
        None if completed == 0 => Outcome::Inconclusive {
            reason: format!(
                "no schedule completed: all {schedules_run} were cut at the step bound of {} steps, so nothing was checked (raise --max-steps, lower --threads or --passages)",
                opts.max_steps
            ),
        },
        None => Outcome::Safe,
    };
    let largest_token = *tally.largest_token.lock().unwrap();
    let fife_steps_max = *tally.fife_steps.lock().unwrap();
    let witnesses = tally
        .witnesses
        .lock()
        .unwrap()
        .iter()
        .map(|(p, (count, first))| WitnessTally {
            property: p.to_string(),
            schedules: *count,
            first: first.clone(),
        })
        .collect();
    Ok(VerifyReport {
        lock: entry.info.name.to_string(),
        mutant: opts.mutant.clone(),
        problem: problem.name().to_string(),
        threads: opts.threads,
        k: opts.k,
        passages: opts.passages,
        sessions: opts.sessions,
        plan: opts.plan.name().to_string(),
        cs_steps: opts.cs_steps,
        max_steps: opts.max_steps,
        claimed: report::claimed_names(problem, fcfs, claims),
        schedules_run,
        schedules_completed: completed,
        schedules_cut: schedules_run.saturating_sub(completed + failed),
        schedules_with_crashes: tally.crashes.load(Ordering::Relaxed),
        scheduler: scheduler_name,
        seed: opts.seed,
        elapsed_secs: started.elapsed().as_secs_f64(),
        largest_token,
        fife_steps_max,
        witnesses,
        outcome,
        trace_steps: trace.as_ref().map(|t| t.steps),
        trace_text: trace.as_ref().map(|t| t.to_string()),
        trace: trace.map(|t| t.lines),
    })
}
