//! `lockbench fidelity`: the harness's loop against a bare loop of the same lock.

use std::path::PathBuf;

use clap::Args as ClapArgs;

use crate::engine::options::OracleArg;
use crate::report::Format;

pub use crate::app::fidelity as exec;

/// Options of `fidelity`.
#[derive(ClapArgs, Debug)]
pub struct Args {
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
