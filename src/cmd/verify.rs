//! `lockbench verify`: explore interleavings of a lock on the scheduled memory.

use clap::Args as ClapArgs;

pub use crate::app::verify as exec;

/// Options of `verify`. Options left out take their default, or when replaying, the value the
/// replay string carries (an option given that contradicts it is refused).
#[derive(ClapArgs, Debug)]
pub struct Args {
    /// Lock to verify (not needed with --replay, which carries it; with --mutants, the lock
    /// whose mutants run when --mutants names none).
    #[arg(long)]
    pub lock: Option<String>,
    /// Processes (default 3; with --mutants each mutant runs at its own ladder of counts).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Schedules to explore (default 1000; with --mutants, per setting tried, default 1500:
    /// each mutant is tried at 3, 4 and 5 processes (2, 3, 4 for mutual exclusion), each with
    /// --cs-steps and with none, until killed).
    #[arg(long)]
    pub schedules: Option<usize>,
    /// Seed of the schedulers (default 1).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Passages per process in each schedule (default 2).
    #[arg(long)]
    pub passages: Option<usize>,
    /// Capacity for k-exclusion locks (default 2 at 3 or more processes, else 1).
    #[arg(long)]
    pub k: Option<usize>,
    /// Sessions a GME passage chooses from (default 3).
    #[arg(long)]
    pub sessions: Option<usize>,
    /// Session plan: random (each passage draws its session from the schedule's randomness)
    /// or fixed (process p asks p mod --sessions). Default random.
    #[arg(long, value_enum)]
    pub plan: Option<crate::verify::SessionPlan>,
    /// Scheduling steps each process spends inside the critical section (default 2).
    #[arg(long)]
    pub cs_steps: Option<usize>,
    /// PCT depth: priority change points per schedule (default 3).
    #[arg(long)]
    pub pct_depth: Option<usize>,
    /// Steps after which one schedule is cut, neither safe nor unsafe (default 100000).
    #[arg(long)]
    pub max_steps: Option<usize>,
    /// Scheduler: random, pct, or both (half the schedules each; the default).
    #[arg(long, value_enum)]
    pub scheduler: Option<crate::verify::SchedulerKind>,
    /// Check the properties the lock does not claim too, and stop at the first that fails
    /// (a witness, printed with its replay; exit 0).
    #[arg(long)]
    pub witness: bool,
    /// Run seeded mutants: all, a lock name (its mutants) or lock/mutant; prints killed or
    /// survived per mutant and the mutation score.
    #[arg(long)]
    pub mutants: Option<String>,
    /// Replay one replay string (as printed by a failing verify) instead of exploring.
    #[arg(long)]
    pub replay: Option<String>,
    /// Let the scheduler print its own failure messages to stderr.
    #[arg(long)]
    pub loud: bool,
    /// Output format: text or json.
    #[arg(long, value_enum, default_value = "text")]
    pub format: VerifyFormat,
    /// Output as JSON (same as --format json).
    #[arg(long)]
    pub json: bool,
}

/// Formats of `verify`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum VerifyFormat {
    /// Human-readable.
    Text,
    /// JSON.
    Json,
}
