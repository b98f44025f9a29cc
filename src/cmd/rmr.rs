//! `lockbench rmr`: RMRs per passage under the papers' models, on a deterministic schedule.

use clap::Args as ClapArgs;

use crate::opts::FormatOpt;

pub use crate::app::rmr as exec;

/// Options of `rmr`.
#[derive(ClapArgs, Debug)]
pub struct Args {
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
    /// `--format`: table (default) or json.
    #[command(flatten)]
    pub format: FormatOpt,
}
