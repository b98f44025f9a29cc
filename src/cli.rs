//! Command-line definitions (clap derive). Run options are all optional here so that a config
//! file can supply them; [`crate::config`] layers defaults, the file and the command line.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::report::Format;
use crate::runner::topology::PinMode;

/// Measures lock algorithms against their theory: speed, fairness, safety.
#[derive(Parser, Debug)]
#[command(name = "lockbench", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// List the locks with their problem, source and claimed properties.
    List {
        /// Output format.
        #[arg(long, value_enum, default_value = "table")]
        format: ListFormat,
    },
    /// Run locks under a workload and report throughput, latency, fairness and safety.
    Run(Box<RunArgs>),
    /// Explore interleavings of a lock on a scheduled memory and check its safety property
    /// after every step.
    Verify(Box<VerifyArgs>),
}

/// Formats of `list`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ListFormat {
    /// Aligned table.
    Table,
    /// JSON array.
    Json,
}

/// How waiting threads wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WaitArg {
    /// Spin with a spin-loop hint (right when each thread has its own core).
    Spin,
    /// Spin a little, then yield the CPU between tries (right when oversubscribed).
    Yield,
}

/// Options of `run`. Every option may also come from `--config FILE.toml` (same names, with
/// `-` or `_`); the command line wins.
#[derive(Args, Debug, Default)]
pub struct RunArgs {
    /// Locks to run: comma-separated names, or `all` (every safe lock fitting the mix).
    #[arg(long, value_delimiter = ',')]
    pub lock: Option<Vec<String>>,
    /// Thread counts to run, comma-separated (default: 1 and every physical core).
    #[arg(long, value_delimiter = ',')]
    pub threads: Option<Vec<usize>>,
    /// Session mix; repeat the flag for several: single, distinct, uniform:M, hot:M:A,B,
    /// zipf:M:S, fixed:M, rw:P (default distinct: every thread its own session).
    #[arg(long)]
    pub mix: Option<Vec<String>>,
    /// Build every lock for this many processes even when fewer threads run (the others stay
    /// idle): the cost of a lock's size on an uncontended passage (default: the thread count).
    #[arg(long)]
    pub slots: Option<usize>,
    /// Capacity of k-exclusion locks (default 1).
    #[arg(long)]
    pub k: Option<usize>,
    /// Busy work inside the critical section, e.g. 0, 200ns, 1us (default 0).
    #[arg(long)]
    pub cs: Option<String>,
    /// Busy work between passages (default 0).
    #[arg(long)]
    pub think: Option<String>,
    /// Shared cache lines read and written in each critical section (default 0).
    #[arg(long)]
    pub cs_lines: Option<usize>,
    /// Measure for this long per run, e.g. 2s (default 1s).
    #[arg(long, conflicts_with = "passages")]
    pub duration: Option<String>,
    /// Instead of a duration, measure this many passages per thread.
    #[arg(long)]
    pub passages: Option<u64>,
    /// Warm-up before measuring (default 100ms).
    #[arg(long)]
    pub warmup: Option<String>,
    /// Repetitions of each run; the median is reported with the spread (default 1).
    #[arg(long)]
    pub repeat: Option<usize>,
    /// Lock every other is compared with (default ticket).
    #[arg(long)]
    pub baseline: Option<String>,
    /// Output format (default table).
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Directory results are saved under (default reports/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// TOML file of options (see bench-configs/).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Thread placement: physical cores first, logical CPUs in id order, or no pinning
    /// (default physical).
    #[arg(long, value_enum)]
    pub pin: Option<PinMode>,
    /// Also place threads on SMT siblings (after every physical core is used).
    #[arg(long)]
    pub smt: bool,
    /// Allow more threads than CPUs (the wait policy then defaults to yield).
    #[arg(long)]
    pub oversubscribe: bool,
    /// How waiting threads wait (default spin; yield when oversubscribed).
    #[arg(long, value_enum)]
    pub wait: Option<WaitArg>,
    /// Remove the safety oracle from timed runs.
    #[arg(long)]
    pub no_check: bool,
    /// Time every N-th passage only (a power of two; default 1 = every passage): two clock
    /// reads per passage cost more than some locks, so sampling shows them with less
    /// disturbance. Throughput is unaffected; latency histograms hold 1/N of the passages.
    #[arg(long)]
    pub latency_sample: Option<u64>,
    /// Trace every passage and check FCFS, concurrent entry and FIFE from the trace.
    #[arg(long)]
    pub trace: bool,
    /// Counters to read: names (cycles, instructions, cache-misses, l1d-read-misses,
    /// context-switches, task-clock, ...) or raw codes (r0443); `none` for no counters.
    #[arg(long)]
    pub counters: Option<String>,
    /// Stop a run with no progress for this long and report it stalled (default 10s).
    #[arg(long)]
    pub stall_timeout: Option<String>,
    /// Seed of the session samplers (default 1).
    #[arg(long)]
    pub seed: Option<u64>,
}

/// Options of `verify`. Options left out take their default, or when replaying, the value the
/// replay string carries (an option given that contradicts it is refused).
#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// Lock to verify (not needed with --replay, which carries it; with --mutants, the lock
    /// whose mutants run when --mutants names none).
    #[arg(long)]
    pub lock: Option<String>,
    /// Processes (default 3).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Schedules to explore (default 1000; with --mutants, per thread count tried, default
    /// 2000).
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum VerifyFormat {
    /// Human-readable.
    Text,
    /// JSON.
    Json,
}
