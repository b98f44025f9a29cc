//! Schedule exploration: the same algorithm code, built on the scheduled memory (every register
//! access a scheduling point), run under shuttle's random and PCT schedulers; the lock's safety
//! property is checked at every entry and its register invariants after every write.
//!
//! A violation comes back with shuttle's encoded schedule, which `--replay` reproduces exactly.

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;
use shuttle::scheduler::{PctScheduler, RandomScheduler, ReplayScheduler, Scheduler};
use shuttle::{Config, FailurePersistence, MaxSteps, Runner};

use crate::locks::{Builder, Lock, LockEntry, Params, Problem};
use crate::mem::scheduled::{process_done, set_observer, track_deadlocks};
use crate::mem::WaitPolicy;

/// Which scheduler explores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum SchedulerKind {
    /// Uniformly random choice at every step.
    Random,
    /// Probabilistic concurrency testing: random priorities with `depth` change points.
    Pct,
    /// Half the schedules each.
    Both,
}

/// What to explore.
#[derive(Clone, Debug)]
pub struct VerifyOptions {
    /// Processes.
    pub threads: usize,
    /// Schedules to explore.
    pub schedules: usize,
    /// Seed of the schedulers.
    pub seed: u64,
    /// Scheduler(s).
    pub scheduler: SchedulerKind,
    /// Passages per process in each schedule.
    pub passages: usize,
    /// Steps each process spends inside the critical section (yields), so others run while it
    /// is inside.
    pub cs_steps: usize,
    /// PCT depth.
    pub pct_depth: usize,
    /// Steps after which one schedule is cut (a spin loop starved by an unfair schedule).
    pub max_steps: usize,
    /// k for k-exclusion locks.
    pub k: usize,
    /// Replay this encoded schedule instead of exploring.
    pub replay: Option<String>,
}

impl VerifyOptions {
    /// Defaults for `threads` processes.
    pub fn new(threads: usize) -> Self {
        VerifyOptions {
            threads,
            schedules: 1000,
            seed: 1,
            scheduler: SchedulerKind::Both,
            passages: 2,
            cs_steps: 2,
            pct_depth: 3,
            max_steps: 100_000,
            k: if threads >= 3 { 2 } else { 1 },
            replay: None,
        }
    }

    /// The session of process `p` in every passage: for GME, process p asks p mod 2, so
    /// processes share (0 and 2) and conflict (0 and 1); for mutual exclusion each its own.
    pub fn session(problem: Problem, p: usize) -> usize {
        match problem {
            Problem::Gme => p % 2,
            _ => p,
        }
    }
}

/// How exploration ended.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(tag = "result", rename_all = "lowercase")]
pub enum Outcome {
    /// No violation in any explored schedule.
    Safe,
    /// A schedule broke the lock's safety property or one of its invariants.
    Violation {
        /// What broke.
        kind: String,
        /// The encoded schedule; `--replay` reproduces it.
        schedule: String,
    },
}

/// The result of `verify`.
#[derive(Clone, Debug, Serialize)]
pub struct VerifyReport {
    /// Lock name.
    pub lock: String,
    /// Its problem.
    pub problem: String,
    /// Processes.
    pub threads: usize,
    /// k (k-exclusion).
    pub k: usize,
    /// Passages per process.
    pub passages: usize,
    /// Schedules run (including the failing one).
    pub schedules_run: usize,
    /// Schedules cut at the step bound (a spin loop starved by an unfair scheduler).
    pub schedules_cut: usize,
    /// Scheduler.
    pub scheduler: String,
    /// Seed.
    pub seed: u64,
    /// Wall-clock seconds.
    pub elapsed_secs: f64,
    /// Outcome.
    pub outcome: Outcome,
}

impl std::fmt::Display for VerifyReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{} ({}), {} processes, {} passages each{}: {} schedules ({}, seed {}) in {:.1} s",
            self.lock,
            self.problem,
            self.threads,
            self.passages,
            if self.problem == "k-exclusion" {
                format!(", k = {}", self.k)
            } else {
                String::new()
            },
            self.schedules_run,
            self.scheduler,
            self.seed,
            self.elapsed_secs
        )?;
        if self.schedules_cut > 0 {
            writeln!(
                f,
                "  {} schedules cut at the step bound (a waiting process starved by the scheduler; not a safety result)",
                self.schedules_cut
            )?;
        }
        match &self.outcome {
            Outcome::Safe => writeln!(f, "  no violation found"),
            Outcome::Violation { kind, schedule } => {
                writeln!(f, "  VIOLATION: {kind}")?;
                writeln!(
                    f,
                    "  replay: lockbench verify --lock {} --threads {} --passages {}{} --replay '{schedule}'",
                    self.lock,
                    self.threads,
                    self.passages,
                    if self.problem == "k-exclusion" { format!(" --k {}", self.k) } else { String::new() }
                )
            }
        }
    }
}

/// The safety oracle inside one execution. Shuttle runs one task at a time, so a plain mutex is
/// never contended and the check is exact.
struct Inside {
    problem: Problem,
    k: usize,
    inside: Mutex<Vec<(usize, usize)>>,
}

impl Inside {
    fn enter(&self, p: usize, s: usize) {
        let mut v = self.inside.lock().unwrap();
        v.push((p, s));
        let broken = match self.problem {
            Problem::Mutex if v.len() > 1 => {
                Some(format!("{} processes inside (mutual exclusion)", v.len()))
            }
            Problem::KExclusion if v.len() > self.k => {
                Some(format!("{} processes inside with k = {}", v.len(), self.k))
            }
            Problem::Gme => v.iter().find(|(_, t)| *t != s).map(|(q, t)| {
                format!("process {p} (session {s}) inside with process {q} (session {t})")
            }),
            _ => None,
        };
        if let Some(what) = broken {
            drop(v);
            panic!("SAFETY VIOLATION: {what}");
        }
    }

    fn exit(&self, p: usize) {
        self.inside.lock().unwrap().retain(|(q, _)| *q != p);
    }
}

/// One execution: every process does its passages; the oracle checks each entry; the lock's
/// invariants are checked after every write.
fn execution(build: Builder, problem: Problem, opts: &VerifyOptions, completed: &AtomicUsize) {
    let params = Params::new(opts.threads, opts.k, WaitPolicy::Spin);
    let lock: Arc<dyn Lock> = Arc::from(build(&params));
    let observed = lock.clone();
    set_observer(Some(Rc::new(move || {
        if let Err(e) = observed.check_invariants(true) {
            panic!("INVARIANT BROKEN: {e}");
        }
    })));
    track_deadlocks(Some(opts.threads));
    let oracle = Arc::new(Inside {
        problem,
        k: opts.k,
        inside: Mutex::new(Vec::new()),
    });
    let handles: Vec<_> = (0..opts.threads)
        .map(|p| {
            let (lock, oracle) = (lock.clone(), oracle.clone());
            let (passages, cs_steps) = (opts.passages, opts.cs_steps);
            shuttle::thread::spawn(move || {
                let s = VerifyOptions::session(problem, p);
                for _ in 0..passages {
                    lock.enter(p, s);
                    oracle.enter(p, s);
                    for _ in 0..cs_steps {
                        shuttle::thread::yield_now();
                    }
                    oracle.exit(p);
                    lock.exit(p, s);
                }
                process_done(p);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    set_observer(None);
    track_deadlocks(None);
    completed.fetch_add(1, Ordering::Relaxed);
}

/// The encoded schedule inside shuttle's failure message.
fn schedule_of(message: &str) -> Option<String> {
    let start = message.find("failing schedule:\n\"\n")? + "failing schedule:\n\"\n".len();
    let len = message[start..].find("\n\"")?;
    Some(message[start..start + len].split_whitespace().collect())
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".into())
}

/// What failed, from the panic message.
fn kind_of(message: &str) -> String {
    for tag in ["SAFETY VIOLATION: ", "INVARIANT BROKEN: ", "DEADLOCK: "] {
        if let Some(i) = message.find(tag) {
            let rest = &message[i..];
            return rest.lines().next().unwrap_or(rest).to_string();
        }
    }
    message.lines().next().unwrap_or(message).to_string()
}

/// Runs `scheduler` over the lock; `Err` carries the failure (kind, schedule).
fn explore<S: Scheduler + 'static>(
    scheduler: S,
    build: Builder,
    problem: Problem,
    opts: &VerifyOptions,
    completed: Arc<AtomicUsize>,
    runs: &RefCell<usize>,
) -> Result<(), (String, String)> {
    let mut config = Config::new();
    config.failure_persistence = FailurePersistence::Print;
    config.max_steps = MaxSteps::ContinueAfter(opts.max_steps);
    config.silence_warnings = true;
    let o = opts.clone();
    let c = completed.clone();
    let attempts = Arc::new(AtomicUsize::new(0));
    let a = attempts.clone();
    let result = catch_unwind(AssertUnwindSafe(|| {
        Runner::new(scheduler, config).run(move || {
            a.fetch_add(1, Ordering::Relaxed);
            execution(build, problem, &o, &c)
        })
    }));
    *runs.borrow_mut() += attempts.load(Ordering::Relaxed);
    set_observer(None);
    track_deadlocks(None);
    match result {
        Ok(_) => Ok(()),
        Err(payload) => {
            let text = panic_text(payload.as_ref());
            let schedule = schedule_of(&text).unwrap_or_default();
            Err((kind_of(&text), schedule))
        }
    }
}

/// Redirects stderr to /dev/null while alive (shuttle prints every failing schedule; the report
/// carries it instead).
struct QuietStderr(Option<i32>);

impl QuietStderr {
    fn new(on: bool) -> Self {
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

/// Explores `opts.schedules` schedules of `entry` (or replays one), quietly when `quiet`.
pub fn verify(
    entry: &LockEntry,
    opts: &VerifyOptions,
    quiet: bool,
) -> Result<VerifyReport, String> {
    let build = entry.scheduled.ok_or_else(|| {
        format!(
            "{} is not written over the register abstraction, so it cannot run on the scheduled memory: verify a paper algorithm or ticket",
            entry.info.name
        )
    })?;
    if opts.threads == 0 {
        return Err("--threads must be at least 1".into());
    }
    if entry.info.problem == Problem::KExclusion && opts.k == 0 {
        return Err("--k must be at least 1".into());
    }
    let problem = entry.info.problem;
    let completed = Arc::new(AtomicUsize::new(0));
    let runs = RefCell::new(0usize);
    let started = Instant::now();
    let _quiet = QuietStderr::new(quiet);
    let (scheduler_name, failure) = if let Some(encoded) = &opts.replay {
        let replay = catch_unwind(|| ReplayScheduler::new_from_encoded(encoded)).map_err(|_| {
            "malformed --replay schedule: pass the string a failing verify printed".to_string()
        })?;
        (
            "replay".to_string(),
            explore(replay, build, problem, opts, completed.clone(), &runs).err(),
        )
    } else {
        let (random, pct) = match opts.scheduler {
            SchedulerKind::Random => (opts.schedules, 0),
            SchedulerKind::Pct => (0, opts.schedules),
            SchedulerKind::Both => (opts.schedules - opts.schedules / 2, opts.schedules / 2),
        };
        // PCT first: it finds shallow ordering bugs in few schedules.
        let mut failure = None;
        if pct > 0 {
            let s = PctScheduler::new_from_seed(opts.seed, opts.pct_depth, pct);
            failure = explore(s, build, problem, opts, completed.clone(), &runs).err();
        }
        if failure.is_none() && random > 0 {
            let s = RandomScheduler::new_from_seed(opts.seed, random);
            failure = explore(s, build, problem, opts, completed.clone(), &runs).err();
        }
        let name = match opts.scheduler {
            SchedulerKind::Random => "random".to_string(),
            SchedulerKind::Pct => format!("pct depth {}", opts.pct_depth),
            SchedulerKind::Both => format!("pct depth {} + random", opts.pct_depth),
        };
        (name, failure)
    };
    let schedules_run = *runs.borrow();
    let done = completed.load(Ordering::Relaxed);
    let outcome = match failure {
        None => Outcome::Safe,
        Some((kind, schedule)) => Outcome::Violation { kind, schedule },
    };
    let failed = usize::from(outcome != Outcome::Safe);
    Ok(VerifyReport {
        lock: entry.info.name.to_string(),
        problem: problem.name().to_string(),
        threads: opts.threads,
        k: opts.k,
        passages: opts.passages,
        schedules_run,
        schedules_cut: schedules_run.saturating_sub(done + failed),
        scheduler: scheduler_name,
        seed: opts.seed,
        elapsed_secs: started.elapsed().as_secs_f64(),
        outcome,
    })
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
            kind_of("x\nSAFETY VIOLATION: 2 inside\nmore"),
            "SAFETY VIOLATION: 2 inside"
        );
    }
}
