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

pub mod monitor;
pub mod mutants;
pub mod replay;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::Serialize;
use shuttle::rand::RngCore;
use shuttle::scheduler::{PctScheduler, RandomScheduler, ReplayScheduler, Scheduler};
use shuttle::{Config, FailurePersistence, MaxSteps, Runner};

use crate::locks::{Builder, Lock, Params, Problem};
use crate::mem::scheduled::{
    process_done, set_mark_observer, set_observer, set_wait_observer, track_deadlocks,
};
use crate::mem::WaitPolicy;
use crate::registry::LockEntry;
use monitor::{Broken, Monitor};
use replay::ReplayContext;

/// Which scheduler explores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum SchedulerKind {
    /// Uniformly random choice at every step.
    Random,
    /// Probabilistic concurrency testing: random priorities with `depth` change points.
    Pct,
    /// Half the schedules each (PCT first).
    Both,
}

/// How each passage's session is chosen (GME; other problems ignore sessions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum SessionPlan {
    /// Drawn uniformly from `0..sessions` by the schedule's own randomness, per passage.
    Random,
    /// Process p asks session p mod `sessions` on every passage.
    Fixed,
}

impl SessionPlan {
    fn name(self) -> &'static str {
        match self {
            SessionPlan::Random => "random",
            SessionPlan::Fixed => "fixed",
        }
    }
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
    /// Sessions a GME passage chooses from.
    pub sessions: usize,
    /// How sessions are chosen.
    pub plan: SessionPlan,
    /// Check the properties the lock does not claim as if claimed, and stop at the first
    /// failure (a witness with its replay).
    pub witness: bool,
    /// The mutant being run (for the replay string), if any.
    pub mutant: Option<String>,
    /// Replay this replay string instead of exploring.
    pub replay: Option<String>,
}

/// Default schedules per run.
pub const DEFAULT_SCHEDULES: usize = 1000;
/// Default passages per process.
pub const DEFAULT_PASSAGES: usize = 2;
/// Default steps inside the critical section.
pub const DEFAULT_CS_STEPS: usize = 2;
/// Default PCT depth.
pub const DEFAULT_PCT_DEPTH: usize = 3;
/// Default step bound of one schedule.
pub const DEFAULT_MAX_STEPS: usize = 100_000;
/// Default number of GME sessions.
pub const DEFAULT_SESSIONS: usize = 3;

impl VerifyOptions {
    /// Defaults for `threads` processes.
    pub fn new(threads: usize) -> Self {
        VerifyOptions {
            threads,
            schedules: DEFAULT_SCHEDULES,
            seed: 1,
            scheduler: SchedulerKind::Both,
            passages: DEFAULT_PASSAGES,
            cs_steps: DEFAULT_CS_STEPS,
            pct_depth: DEFAULT_PCT_DEPTH,
            max_steps: DEFAULT_MAX_STEPS,
            k: Self::default_k(threads),
            sessions: DEFAULT_SESSIONS,
            plan: SessionPlan::Random,
            witness: false,
            mutant: None,
            replay: None,
        }
    }

    /// The default k: 2 at three or more processes (so k-exclusion is neither mutual
    /// exclusion nor vacuous), else 1.
    pub fn default_k(threads: usize) -> usize {
        if threads >= 3 {
            2
        } else {
            1
        }
    }

    /// The replay context of a schedule found by `scheduler` for `lock`.
    fn context(&self, lock: &str, scheduler: &str, schedule: String) -> ReplayContext {
        ReplayContext {
            lock: lock.to_string(),
            mutant: self.mutant.clone(),
            threads: self.threads,
            passages: self.passages,
            k: self.k,
            sessions: self.sessions,
            plan: self.plan.name().to_string(),
            cs_steps: self.cs_steps,
            max_steps: self.max_steps,
            witness: self.witness,
            scheduler: scheduler.to_string(),
            schedule,
        }
    }
}

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
    /// Unclaimed properties seen failing.
    pub witnesses: Vec<WitnessTally>,
    /// Outcome.
    pub outcome: Outcome,
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
                writeln!(f, "  VIOLATION: {kind}")?;
                writeln!(f, "  replay: lockbench verify --replay '{schedule}'")
            }
            Outcome::Witness { kind, schedule } => {
                writeln!(f, "  WITNESS: {kind}")?;
                writeln!(f, "  replay: lockbench verify --replay '{schedule}'")
            }
        }
    }
}

/// Counters shared by the executions of one exploration.
#[derive(Default)]
struct Tally {
    completed: AtomicUsize,
    crashes: AtomicUsize,
    witnesses: Mutex<BTreeMap<&'static str, (usize, String)>>,
    /// Processes frozen in the current execution.
    crashed: Mutex<Vec<usize>>,
}

/// Where a frozen process stops: in passage `passage`, in `phase` (0 entry, 1 inside, 2 exit),
/// after its `writes`-th write of that phase (entry: or on entering, if it writes less).
#[derive(Clone, Copy, Debug)]
struct CrashAt {
    passage: usize,
    phase: u8,
    writes: usize,
}

/// The state of one execution, shared by its tasks (one runs at a time: never contended).
struct Exec {
    monitor: Monitor,
    /// Shuttle task id → process.
    task_of: BTreeMap<usize, usize>,
    crash: Vec<Option<CrashAt>>,
    /// (passage, phase, writes in this phase) of each process.
    progress: Vec<(usize, u8, usize)>,
    freezers: Vec<Option<shuttle::sync::mpsc::Receiver<()>>>,
    /// The victims have been released: nothing more is checked.
    over: bool,
}

fn broken_panic(b: Broken) -> ! {
    if b.property == "safety" {
        panic!("SAFETY VIOLATION: {}", b.what);
    } else if b.claimed {
        panic!("PROPERTY VIOLATION: {}: {}", b.property, b.what);
    } else {
        panic!("WITNESS: {}: {}", b.property, b.what);
    }
}

/// Stops process p for ever (until the execution's end releases it): a crash.
fn freeze(exec: &Arc<Mutex<Exec>>, tally: &Tally, p: usize) {
    let rx = {
        let mut ex = exec.lock().unwrap();
        ex.monitor.crash(p);
        ex.crash[p] = None;
        ex.freezers[p].take()
    };
    tally.crashed.lock().unwrap().push(p);
    process_done(p);
    if let Some(rx) = rx {
        let _ = rx.recv();
    }
}

/// One execution: every process does its passages; the monitor checks each event; the lock's
/// invariants are checked after every write.
fn execution(
    build: Builder,
    problem: Problem,
    fcfs: bool,
    opts: &VerifyOptions,
    tally: &Arc<Tally>,
) {
    let n = opts.threads;
    let params = Params::new(n, opts.k, WaitPolicy::Spin);
    let lock: Arc<dyn Lock> = Arc::from(build(&params));
    let claims = lock.claims();
    let mut rng = shuttle::rand::thread_rng();
    // Crash plan: for crash-tolerant k-exclusion, half the schedules freeze k − 1 processes.
    let mut crash = vec![None; n];
    let victims = opts.k.saturating_sub(1).min(n.saturating_sub(1));
    if claims.crash_tolerant
        && problem == Problem::KExclusion
        && victims > 0
        && rng.next_u64().is_multiple_of(2)
    {
        let mut chosen = 0;
        while chosen < victims {
            let p = (rng.next_u64() % n as u64) as usize;
            if crash[p].is_none() {
                crash[p] = Some(CrashAt {
                    passage: (rng.next_u64() % opts.passages as u64) as usize,
                    phase: (rng.next_u64() % 3) as u8,
                    writes: 1 + (rng.next_u64() % (3 * n as u64)) as usize,
                });
                chosen += 1;
            }
        }
        tally.crashes.fetch_add(1, Ordering::Relaxed);
    }
    tally.crashed.lock().unwrap().clear();
    let mut releases = Vec::new();
    let mut freezers = Vec::new();
    for c in &crash {
        if c.is_some() {
            let (tx, rx) = shuttle::sync::mpsc::channel();
            releases.push(tx);
            freezers.push(Some(rx));
        } else {
            freezers.push(None);
        }
    }
    let exec = Arc::new(Mutex::new(Exec {
        monitor: Monitor::new(problem, n, opts.k, fcfs, claims, opts.witness),
        task_of: BTreeMap::new(),
        crash: crash.clone(),
        progress: vec![(0, 0, 0); n],
        freezers,
        over: false,
    }));
    let (observed, ex, t) = (lock.clone(), exec.clone(), tally.clone());
    set_observer(Some(Rc::new(move || {
        if let Err(e) = observed.check_invariants(true) {
            panic!("INVARIANT BROKEN: {e}");
        }
        let me: usize = shuttle::current::me().into();
        let victim = {
            let mut e = ex.lock().unwrap();
            let Some(&p) = e.task_of.get(&me) else { return };
            if e.over {
                return;
            }
            e.progress[p].2 += 1;
            let (passage, phase, writes) = e.progress[p];
            match e.crash[p] {
                Some(c) if c.passage == passage && c.phase == phase && writes >= c.writes => {
                    Some(p)
                }
                _ => None,
            }
        };
        if let Some(p) = victim {
            freeze(&ex, &t, p);
        }
    })));
    let marked = lock.clone();
    set_mark_observer(Some(Rc::new(move |p, line, args| {
        if let Err(e) = marked.lemma_step(p, line, args) {
            panic!("INVARIANT BROKEN: {e}");
        }
    })));
    let ex = exec.clone();
    set_wait_observer(Some(Rc::new(move |p, outcome| {
        let mut e = ex.lock().unwrap();
        if e.over {
            return;
        }
        let result = match outcome {
            None => {
                e.monitor.wait_begin(p);
                Ok(())
            }
            Some(ok) => e.monitor.wait_end(p, ok),
        };
        drop(e);
        if let Err(b) = result {
            broken_panic(b);
        }
    })));
    track_deadlocks(Some(n));
    let handles: Vec<_> = (0..n)
        .map(|p| {
            let (lock, exec, tally) = (lock.clone(), exec.clone(), tally.clone());
            let (passages, cs_steps, sessions, plan) = (
                opts.passages,
                opts.cs_steps,
                opts.sessions.max(1),
                opts.plan,
            );
            shuttle::thread::spawn(move || {
                let me: usize = shuttle::current::me().into();
                exec.lock().unwrap().task_of.insert(me, p);
                let mut rng = shuttle::rand::thread_rng();
                for c in 0..passages {
                    let s = match (problem, plan) {
                        (Problem::Gme, SessionPlan::Random) => {
                            (rng.next_u64() % sessions as u64) as usize
                        }
                        (Problem::Gme, SessionPlan::Fixed) => p % sessions,
                        _ => p,
                    };
                    {
                        let mut e = exec.lock().unwrap();
                        e.progress[p] = (c, 0, 0);
                        e.monitor.request(p, s);
                    }
                    lock.enter_traced(p, s, &mut || exec.lock().unwrap().monitor.doorway(p));
                    let frozen_inside = {
                        let mut e = exec.lock().unwrap();
                        let r = e.monitor.enter(p);
                        e.progress[p] = (c, 1, 0);
                        let stop = matches!(e.crash[p], Some(k) if k.passage == c && k.phase <= 1);
                        drop(e);
                        if let Err(b) = r {
                            broken_panic(b);
                        }
                        stop
                    };
                    if frozen_inside {
                        freeze(&exec, &tally, p);
                    }
                    for _ in 0..cs_steps {
                        shuttle::thread::yield_now();
                    }
                    {
                        let mut e = exec.lock().unwrap();
                        e.progress[p] = (c, 2, 0);
                        e.monitor.exit_begin(p);
                    }
                    lock.exit(p, s);
                    exec.lock().unwrap().monitor.exit_end(p);
                }
                process_done(p);
            })
        })
        .collect();
    let mut frozen_handles = Vec::new();
    for (p, h) in handles.into_iter().enumerate() {
        if crash[p].is_some() {
            frozen_handles.push(h);
        } else {
            h.join().unwrap();
        }
    }
    // Every process that did not crash has finished: that is the check. Release the frozen ones
    // (they finish their passages unobserved, with deadlock detection off).
    {
        let mut e = exec.lock().unwrap();
        e.over = true;
    }
    track_deadlocks(None);
    for tx in releases {
        let _ = tx.send(());
    }
    for h in frozen_handles {
        h.join().unwrap();
    }
    set_observer(None);
    set_wait_observer(None);
    set_mark_observer(None);
    if let Some(w) = exec.lock().unwrap().monitor.witness.take() {
        let mut all = tally.witnesses.lock().unwrap();
        let entry = all.entry(w.property).or_insert((0, w.what));
        entry.0 += 1;
    }
    tally.completed.fetch_add(1, Ordering::Relaxed);
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

const TAGS: [&str; 5] = [
    "SAFETY VIOLATION: ",
    "INVARIANT BROKEN: ",
    "PROPERTY VIOLATION: ",
    "DEADLOCK: ",
    "WITNESS: ",
];

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

/// Runs `scheduler` over the lock.
fn explore<S: Scheduler + 'static>(
    scheduler: S,
    build: Builder,
    problem: Problem,
    fcfs: bool,
    opts: &VerifyOptions,
    tally: &Arc<Tally>,
    runs: &RefCell<usize>,
) -> Ended {
    let mut config = Config::new();
    config.failure_persistence = FailurePersistence::Print;
    config.max_steps = MaxSteps::ContinueAfter(opts.max_steps);
    config.silence_warnings = true;
    let o = opts.clone();
    let t = tally.clone();
    let attempts = Arc::new(AtomicUsize::new(0));
    let a = attempts.clone();
    let result = catch_unwind(AssertUnwindSafe(|| {
        Runner::new(scheduler, config).run(move || {
            a.fetch_add(1, Ordering::Relaxed);
            execution(build, problem, fcfs, &o, &t)
        })
    }));
    *runs.borrow_mut() += attempts.load(Ordering::Relaxed);
    set_observer(None);
    set_wait_observer(None);
    set_mark_observer(None);
    track_deadlocks(None);
    match result {
        Ok(_) => Ended::Clean,
        Err(payload) => {
            let text = panic_text(payload.as_ref());
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

/// The properties checked as claims for a lock, for reports.
fn claimed_names(problem: Problem, fcfs: bool, claims: crate::locks::Claims) -> Vec<String> {
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

/// Checks the options; `Err` is a one-line message for the user.
fn validate(entry: &LockEntry, opts: &VerifyOptions) -> Result<(), String> {
    if opts.threads == 0 {
        return Err("--threads must be at least 1".into());
    }
    if opts.passages == 0 {
        return Err("--passages must be at least 1 (with none, nothing is checked)".into());
    }
    if opts.max_steps == 0 {
        return Err("--max-steps must be at least 1".into());
    }
    if entry.info.problem == Problem::KExclusion && opts.k == 0 {
        return Err("--k must be at least 1".into());
    }
    if entry.info.problem == Problem::Gme && opts.sessions == 0 {
        return Err("--sessions must be at least 1".into());
    }
    if opts.replay.is_none() && opts.schedules == 0 {
        return Err("--schedules must be at least 1".into());
    }
    Ok(())
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
    validate(entry, opts)?;
    let problem = entry.info.problem;
    let fcfs = entry.info.fcfs;
    let claims = build(&Params::new(opts.threads, opts.k.max(1), WaitPolicy::Spin)).claims();
    let tally = Arc::new(Tally::default());
    let runs = RefCell::new(0usize);
    let started = Instant::now();
    let quiet = QuietStderr::new(quiet);
    let lock_name = entry.info.name;
    let (scheduler_name, failure) = if let Some(encoded) = &opts.replay {
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
        match explore(replay, build, problem, fcfs, opts, &tally, &runs) {
            Ended::Clean => (name, None),
            Ended::Failed(kind, _) => (name, Some((kind, ctx.encode()))),
            Ended::Other(why) => {
                drop(quiet);
                return Err(format!(
                    "the --replay schedule does not replay on {lock_name} ({why}): it was recorded on other code or edited"
                ));
            }
        }
    } else {
        let (random, pct) = match opts.scheduler {
            SchedulerKind::Random => (opts.schedules, 0),
            SchedulerKind::Pct => (0, opts.schedules),
            SchedulerKind::Both => (opts.schedules - opts.schedules / 2, opts.schedules / 2),
        };
        let mut failure = None;
        let record = |ended: Ended, scheduler: &str| -> Result<Option<(String, String)>, String> {
            match ended {
                Ended::Clean => Ok(None),
                Ended::Failed(kind, schedule) => {
                    let ctx = opts.context(lock_name, scheduler, schedule);
                    Ok(Some((kind, ctx.encode())))
                }
                Ended::Other(why) => Err(format!("the scheduler failed: {why}")),
            }
        };
        // PCT first: it finds shallow ordering bugs in few schedules.
        if pct > 0 {
            let s = PctScheduler::new_from_seed(opts.seed, opts.pct_depth, pct);
            failure = record(explore(s, build, problem, fcfs, opts, &tally, &runs), "pct")?;
        }
        if failure.is_none() && random > 0 {
            let s = RandomScheduler::new_from_seed(opts.seed, random);
            failure = record(
                explore(s, build, problem, fcfs, opts, &tally, &runs),
                "random",
            )?;
        }
        let name = match opts.scheduler {
            SchedulerKind::Random => "random".to_string(),
            SchedulerKind::Pct => format!("pct depth {}", opts.pct_depth),
            SchedulerKind::Both => format!("pct depth {} + random", opts.pct_depth),
        };
        (name, failure)
    };
    drop(quiet);
    let schedules_run = *runs.borrow();
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
        lock: lock_name.to_string(),
        mutant: opts.mutant.clone(),
        problem: problem.name().to_string(),
        threads: opts.threads,
        k: opts.k,
        passages: opts.passages,
        sessions: opts.sessions,
        plan: opts.plan.name().to_string(),
        cs_steps: opts.cs_steps,
        max_steps: opts.max_steps,
        claimed: claimed_names(problem, fcfs, claims),
        schedules_run,
        schedules_completed: completed,
        schedules_cut: schedules_run.saturating_sub(completed + failed),
        schedules_with_crashes: tally.crashes.load(Ordering::Relaxed),
        scheduler: scheduler_name,
        seed: opts.seed,
        elapsed_secs: started.elapsed().as_secs_f64(),
        witnesses,
        outcome,
    })
}

/// The settings of a replay context, without the schedule, for error messages.
fn describe(ctx: &ReplayContext) -> String {
    let mut c = ctx.clone();
    c.schedule.clear();
    c.scheduler.clear();
    let text = c.encode();
    text.trim_end_matches(";scheduler=;schedule=").to_string()
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
