//! `lockbench fidelity`: the harness's loop against a bare loop of the same lock.

use clap::Args as ClapArgs;

use crate::engine::options::OracleArg;
use crate::opts::{FormatOpt, LockOpt, OutOpt, ThreadsOpt};

pub use crate::app::fidelity as exec;

/// Options of `fidelity`.
#[derive(ClapArgs, Debug)]
pub struct Args {
    /// `--lock`: the locks to measure (default: parking-lot-mutex, spin-ticket, std-mutex, ticket; `noop`
    /// is always added at 1 thread: the harness's cost above an empty loop).
    #[command(flatten)]
    pub lock: LockOpt,
    /// `--threads`: the thread counts (default 1 and every physical core).
    #[command(flatten)]
    pub threads: ThreadsOpt,
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
    /// `--format`: table (default) or json.
    #[command(flatten)]
    pub format: FormatOpt,
    /// `--out`: the directory the results are saved under (default reports/).
    #[command(flatten)]
    pub out: OutOpt,
}
