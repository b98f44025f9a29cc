//! Driving shuttle over a lock: running a scheduler's schedules through [`execution`], reading
//! back from a failure's panic message what broke and the schedule that broke it, and the two
//! ways `verify` explores: replaying one recorded schedule, or searching with PCT and random
//! schedules.

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use shuttle::scheduler::{PctScheduler, RandomScheduler, ReplayScheduler, Scheduler};
use shuttle::{Config, FailurePersistence, MaxSteps, Runner};

use crate::error::panic_message;
use crate::locks::{Builder, Problem};
use crate::mem::scheduled::{
    set_mark_observer, set_observer, set_wait_observer, start_recording, stop_recording,
    track_deadlocks,
};
use crate::verify::execution::{execution, Tally, TAGS};
use crate::verify::options::{SchedulerKind, VerifyOptions};
use crate::verify::replay::ReplayContext;
use crate::verify::script::ScriptScheduler;
use crate::verify::steps::Counted;
use crate::verify::trace::Trace;

/// The encoded schedule inside shuttle's failure message.
fn schedule_of(message: &str) -> Option<String> {
    let start = message.find("failing schedule:\n\"\n")? + "failing schedule:\n\"\n".len();
    let len = message[start..].find("\n\"")?;
    Some(message[start..start + len].split_whitespace().collect())
}

/// What failed, from the panic message (`None`: not one of the checks; shuttle itself, e.g.
/// a schedule that does not replay).
fn kind_of(message: &str) -> Option<String> {
    for tag in TAGS {
        if let Some(i) = message.find(tag) {
            let rest = &message[i..];
            return Some(rest.lines().next().unwrap_or(rest).to_string());
        }
    }
    None
}

/// How one call of the shuttle runner ended.
enum Ended {
    Clean,
    /// (kind, encoded schedule)
    Failed(String, String),
    /// Shuttle failed for a reason that is none of the checks.
    Other(String),
}

/// What failed and its replay string, if something did.
pub(super) type Failure = Option<(String, String)>;

/// One exploration of a lock: what its executions build and check, and what they tally.
pub(super) struct Exploration<'a> {
    /// Name of the lock (for replay strings and messages).
    pub(super) lock: &'static str,
    /// Builds it on the scheduled memory.
    pub(super) build: Builder,
    /// Its problem.
    pub(super) problem: Problem,
    /// Whether it claims FCFS.
    pub(super) fcfs: bool,
    /// What to explore.
    pub(super) opts: &'a VerifyOptions,
    /// Counters of the executions.
    pub(super) tally: Arc<Tally>,
    /// Schedules run, over every call of the shuttle runner.
    pub(super) runs: RefCell<usize>,
    /// The lock's scripted counter-example, for `--scheduler script`.
    pub(super) script: Option<crate::locks::CounterExample>,
}

impl Exploration<'_> {
    /// Runs `scheduler` over the lock.
    fn explore<S: Scheduler + 'static>(&self, scheduler: S) -> Ended {
        let (build, problem, fcfs, opts, tally) = (
            self.build.clone(),
            self.problem,
            self.fcfs,
            self.opts,
            &self.tally,
        );
        let mut config = Config::new();
        config.failure_persistence = FailurePersistence::Print;
        config.max_steps = MaxSteps::ContinueAfter(opts.max_steps);
        config.silence_warnings = true;
        let o = opts.clone();
        let t = tally.clone();
        let attempts = Arc::new(AtomicUsize::new(0));
        let a = attempts.clone();
        let result = catch_unwind(AssertUnwindSafe(|| {
            Runner::new(Counted(scheduler), config).run(move || {
                a.fetch_add(1, Ordering::Relaxed);
                execution(&build, problem, fcfs, &o, &t)
            })
        }));
        *self.runs.borrow_mut() += attempts.load(Ordering::Relaxed);
        set_observer(None);
        set_wait_observer(None);
        set_mark_observer(None);
        track_deadlocks(None);
        match result {
            Ok(_) => Ended::Clean,
            Err(payload) => {
                let text = panic_message(payload.as_ref())
                    .unwrap_or("unknown panic")
                    .to_string();
                let schedule = schedule_of(&text).unwrap_or_default();
                match kind_of(&text) {
                    Some(mut kind) => {
                        let crashed = tally.crashed.lock().unwrap().clone();
                        if kind.starts_with("DEADLOCK") && !crashed.is_empty() {
                            kind = format!(
                                "STARVATION with {} crashed (processes {crashed:?} frozen mid-protocol): {kind}",
                                crashed.len()
                            );
                        }
                        Ended::Failed(kind, schedule)
                    }
                    None => Ended::Other(text.lines().next().unwrap_or("").to_string()),
                }
            }
        }
    }

    /// Replays the replay string `encoded`, which must carry this run's settings: the name of
    /// the scheduler, and what failed with its replay string if something did.
    pub(super) fn replay(&self, encoded: &str) -> Result<(String, Failure), String> {
        let (opts, lock_name) = (self.opts, self.lock);
        let ctx = ReplayContext::decode(encoded)?;
        let expected = opts.context(lock_name, &ctx.scheduler, ctx.schedule.clone());
        if ctx != expected {
            return Err(format!(
                "--replay was recorded with {} but this run has {}: replay it with the settings it carries",
                describe(&ctx),
                describe(&expected)
            ));
        }
        let replay =
            catch_unwind(|| ReplayScheduler::new_from_encoded(&ctx.schedule)).map_err(|_| {
                "malformed --replay schedule: pass the string a failing verify printed".to_string()
            })?;
        let name = format!("replay of {}", ctx.scheduler);
        match self.explore(replay) {
            Ended::Clean => Ok((name, None)),
            Ended::Failed(kind, _) => Ok((name, Some((kind, ctx.encode())))),
            Ended::Other(why) => Err(format!(
                "the --replay schedule does not replay on {lock_name} ({why}): it was recorded on other code or edited"
            )),
        }
    }

    /// Replays the replay string `encoded`, which failed with `kind`, once more with the
    /// scheduled memory recording every step: its trace, keeping the last `keep` steps (None
    /// if the replay does not fail the same way). Counts nothing in this exploration's tally.
    pub(super) fn traced(&self, encoded: &str, keep: usize, kind: &str) -> Option<Trace> {
        let again = Exploration {
            tally: Arc::new(Default::default()),
            runs: RefCell::new(0),
            build: self.build.clone(),
            ..*self
        };
        start_recording();
        let replayed = again.replay(encoded);
        let recording = stop_recording();
        match replayed {
            Ok((_, Some((k, _)))) if k == kind => Some(Trace::new(&recording, keep, kind)),
            _ => None,
        }
    }

    /// Explores `opts.schedules` schedules, PCT first (it finds shallow ordering bugs in few
    /// schedules), until one fails: the name of the scheduler(s), and what failed with its
    /// replay string if something did.
    pub(super) fn search(&self) -> Result<(String, Failure), String> {
        let (opts, lock_name) = (self.opts, self.lock);
        let (random, pct) = match opts.scheduler {
            SchedulerKind::Script => (0, 0),
            SchedulerKind::Random => (opts.schedules, 0),
            SchedulerKind::Pct => (0, opts.schedules),
            SchedulerKind::Both => (opts.schedules - opts.schedules / 2, opts.schedules / 2),
        };
        let mut failure = None;
        let record = |ended: Ended, scheduler: &str| -> Result<Failure, String> {
            match ended {
                Ended::Clean => Ok(None),
                Ended::Failed(kind, schedule) => {
                    let ctx = opts.context(lock_name, scheduler, schedule);
                    Ok(Some((kind, ctx.encode())))
                }
                Ended::Other(why) => Err(format!("the scheduler failed: {why}")),
            }
        };
        if let (SchedulerKind::Script, Some(c)) = (opts.scheduler, self.script) {
            let (s, _board) = ScriptScheduler::new(c);
            let failure = record(self.explore(s), "script")?;
            return Ok((format!("script ({})", c.source), failure));
        }
        if pct > 0 {
            let s = PctScheduler::new_from_seed(opts.seed, opts.pct_depth, pct);
            failure = record(self.explore(s), "pct")?;
        }
        if failure.is_none() && random > 0 {
            let s = RandomScheduler::new_from_seed(opts.seed, random);
            failure = record(self.explore(s), "random")?;
        }
        let name = match opts.scheduler {
            SchedulerKind::Random => "random".to_string(),
            SchedulerKind::Pct => format!("pct depth {}", opts.pct_depth),
            SchedulerKind::Both => format!("pct depth {} + random", opts.pct_depth),
            SchedulerKind::Script => "script".to_string(),
        };
        Ok((name, failure))
    }
}

/// The settings of a replay context, without the schedule, for error messages.
fn describe(ctx: &ReplayContext) -> String {
    let mut c = ctx.clone();
    c.schedule.clear();
    c.scheduler.clear();
    let text = c.encode();
    text.trim_end_matches(";scheduler=;schedule=").to_string()
}

/// Redirects stderr to /dev/null while alive (shuttle prints every failing schedule; the report
/// carries it instead).
pub(super) struct QuietStderr(Option<i32>);

impl QuietStderr {
    pub(super) fn new(on: bool) -> Self {
        if !on {
            return QuietStderr(None);
        }
        // SAFETY: dup/open/dup2 on valid descriptors; the saved descriptor is restored on drop.
        unsafe {
            let saved = libc::dup(2);
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY);
            if saved < 0 || null < 0 {
                return QuietStderr(None);
            }
            libc::dup2(null, 2);
            libc::close(null);
            QuietStderr(Some(saved))
        }
    }
}

impl Drop for QuietStderr {
    fn drop(&mut self) {
        if let Some(saved) = self.0 {
            // SAFETY: `saved` is the descriptor dup'ed in `new`.
            unsafe {
                libc::dup2(saved, 2);
                libc::close(saved);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_is_parsed_from_the_failure_message() {
        let msg =
            "test panicked in task 'main'\nfailing schedule:\n\"\n91022800\n\"\npass that string";
        assert_eq!(schedule_of(msg).as_deref(), Some("91022800"));
        assert_eq!(schedule_of("no schedule"), None);
        assert_eq!(
            kind_of("x\nSAFETY VIOLATION: 2 inside\nmore").as_deref(),
            Some("SAFETY VIOLATION: 2 inside")
        );
        assert_eq!(kind_of("schedule ended early"), None);
    }
}
