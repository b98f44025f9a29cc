//! What `verify` is asked to explore: the schedulers, the session plan, the options and their
//! defaults, and the check that the options make sense for the lock.

use serde::Serialize;

use crate::locks::Problem;
use crate::registry::LockEntry;
use crate::verify::replay::ReplayContext;

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
    /// The lock's scripted counter-example (one schedule): the failure its paper states.
    Script,
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
    pub(super) fn name(self) -> &'static str {
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
    /// After a failure, replay its schedule once more recording every step and keep this many
    /// last steps as its trace (`usize::MAX`: all); None builds no trace.
    pub trace: Option<usize>,
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
            trace: None,
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
    pub(super) fn context(&self, lock: &str, scheduler: &str, schedule: String) -> ReplayContext {
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

/// Checks the options; `Err` is a one-line message for the user.
pub(super) fn validate(entry: &LockEntry, opts: &VerifyOptions) -> Result<(), String> {
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
    if opts.scheduler == SchedulerKind::Script && opts.replay.is_none() {
        script_fits(entry, opts)?;
    }
    if opts.replay.is_none() && opts.schedules == 0 {
        return Err("--schedules must be at least 1".into());
    }
    Ok(())
}

/// The lock's scripted counter-example, checked against the options it assumes.
pub(super) fn script_of(
    entry: &LockEntry,
    opts: &VerifyOptions,
) -> Result<crate::locks::CounterExample, String> {
    let build = entry
        .scheduled
        .clone()
        .ok_or("not on the scheduled memory")?;
    let lock = build(&crate::locks::Params::new(
        opts.threads,
        opts.k.max(1),
        crate::mem::WaitPolicy::Spin,
    ));
    lock.counter_example().ok_or_else(|| {
        format!(
            "--scheduler script: {} scripts no counter-example; use pct, random or both",
            entry.info.name
        )
    })
}

fn script_fits(entry: &LockEntry, opts: &VerifyOptions) -> Result<(), String> {
    let c = script_of(entry, opts)?;
    if opts.threads != c.threads
        || (entry.info.problem == Problem::Gme
            && (opts.sessions != c.sessions || opts.plan != SessionPlan::Fixed))
    {
        let sessions = if entry.info.problem == Problem::Gme {
            format!(" --sessions {} --plan fixed", c.sessions)
        } else {
            String::new()
        };
        return Err(format!(
            "--scheduler script: the script of {} ({}) runs --threads {}{sessions}: pass those",
            entry.info.name, c.source, c.threads
        ));
    }
    Ok(())
}
