//! Command-line definitions (clap derive). Run options are all optional here so that a config
//! file can supply them; [`crate::config`] layers defaults, the file and the command line.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

pub use crate::engine::options::RunArgs;
use crate::report::Format;

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
    Run(Box<crate::cmd::run::Args>),
    /// Explore interleavings of a lock on a scheduled memory and check its safety property
    /// after every step.
    Verify(Box<crate::cmd::verify::Args>),
    /// Measure the observer effect: the harness's default loop against a bare loop of the same
    /// lock, in interleaved rounds, at 1 thread and at every physical core.
    Fidelity(crate::cmd::fidelity::Args),
    /// Measure the cost of moving a cache line between each pair of CPUs (load, store, atomic
    /// RMW) and save the matrix for `predict`.
    Calibrate(crate::cmd::calibrate::Args),
    /// Set model RMRs against hardware coherence counts in a directory of results: Pearson and
    /// Spearman per event and model, with scatter plots (SVG).
    Correlate(crate::cmd::correlate::Args),
    /// Predict passage times from model RMRs and a calibration, against the measured ones.
    Predict(crate::cmd::predict::Args),
    /// Simulate message-passing algorithms (deterministic discrete events) and report their
    /// messages, waiting time, synchronization delay, throughput, concurrency and safety.
    Sim(Box<crate::cmd::sim::Args>),
    /// Run message-passing algorithms for real: one thread per process, channels, real time.
    MpRun(Box<crate::cmd::mp_run::Args>),
    /// Count RMRs per passage under the papers' models (cc, cc-wb, dsm) on a deterministic
    /// schedule, beside the paper's bound.
    Rmr(crate::cmd::rmr::Args),
    /// Render a directory of results as report.md with SVG plots and HdrHistogram interval
    /// logs.
    Report(crate::cmd::report::Args),
    /// Compare two result sets point by point: B/A throughput with its interval, differences
    /// beyond the noise flagged; --fail-above X% exits 1 on a regression (for CI).
    Compare(crate::cmd::compare::Args),
    /// Run a config with lists (threads, mix, cs, think, k, cs-lines) as a matrix of points,
    /// with a progress bar; each finished point is saved at once and --resume DIR finishes an
    /// interrupted sweep.
    Sweep(crate::cmd::sweep::Args),
}

/// Options of `rmr`.
#[derive(Args, Debug)]
pub struct RmrArgs {
    /// Locks: comma-separated names, or `all` (every safe lock written over the register
    /// abstraction).
    #[arg(long, value_delimiter = ',', default_value = "all")]
    pub lock: Vec<String>,
    /// Process counts, comma-separated (each at most 64).
    #[arg(long, value_delimiter = ',', default_value = "4")]
    pub threads: Vec<usize>,
    /// Models, comma-separated: cc (write-through, every write remote), cc-wb (write-back),
    /// dsm (remote unless the register's home).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "cc")]
    pub model: Vec<crate::mem::Model>,
    /// Schedules, comma-separated: round-robin, random, pct, adversarial (the paper's scripted
    /// worst case where there is one, else a greedy adversary against process N−1).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "round-robin")]
    pub schedule: Vec<crate::rmr::ScheduleKind>,
    /// Passages per process.
    #[arg(long, default_value_t = 3)]
    pub passages: usize,
    /// Seed of the random and PCT schedules.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Capacity of k-exclusion locks.
    #[arg(long, default_value_t = 1)]
    pub k: usize,
    /// Local steps each process spends inside the critical section.
    #[arg(long, default_value_t = 2)]
    pub cs_steps: usize,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: ListFormat,
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

/// Which safety oracle runs check with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OracleArg {
    /// The sampled self-check for mutual exclusion (and k = 1), the counting oracle for GME
    /// and k-exclusion.
    Auto,
    /// The self-check on sampled passages (the timed ones and about one other in 256), and one
    /// plain load of its owner word on every other: sees a passage entering while a sampled one
    /// is inside, for almost nothing per passage. Mutual exclusion and k = 1 (GME: self-check).
    Sampled,
    /// Plain loads and stores in every critical section: an id (GME: the session) written on
    /// entry and read back before exit, and a shared checksum compared at the end.
    SelfCheck,
    /// Atomic counts of who is inside, on a line of the oracle's own: exact, and the source of
    /// the concurrency figures, at the cost of two atomic read-modify-writes per passage.
    Counting,
    /// No check (as --no-check).
    None,
}

/// Options of `verify`. Options left out take their default, or when replaying, the value the
/// replay string carries (an option given that contradicts it is refused).
#[derive(Args, Debug)]
pub struct VerifyArgs {
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

/// Options of `fidelity`.
#[derive(Args, Debug)]
pub struct FidelityArgs {
    /// Locks to measure (default: parking-lot-mutex, spin-ticket, std-mutex, ticket; `noop`
    /// is always added at 1 thread: the harness's cost above an empty loop).
    #[arg(long, value_delimiter = ',')]
    pub lock: Option<Vec<String>>,
    /// Thread counts (default 1 and every physical core).
    #[arg(long, value_delimiter = ',')]
    pub threads: Option<Vec<usize>>,
    /// Rounds per point; each runs the bare loop and the harness once (default 7).
    #[arg(long, default_value_t = 7)]
    pub rounds: usize,
    /// Measured time of each loop in each round (default 200ms).
    #[arg(long, default_value = "200ms")]
    pub duration: String,
    /// Warm-up of each loop (default 50ms).
    #[arg(long, default_value = "50ms")]
    pub warmup: String,
    /// The harness loop's oracle (default auto, as `run`): `--oracle none` shows what the loop
    /// costs without the oracle's critical-section accesses.
    #[arg(long, value_enum, default_value = "auto")]
    pub oracle: OracleArg,
    /// Time one passage in N in the harness loop (default as `run`: chosen from what timing
    /// one passage costs here).
    #[arg(long)]
    pub latency_sample: Option<u64>,
    /// Output format: table or json (default table).
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Directory the results are saved under (default reports/).
    #[arg(long, default_value = "reports")]
    pub out: PathBuf,
}

/// Formats of `verify`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum VerifyFormat {
    /// Human-readable.
    Text,
    /// JSON.
    Json,
}
