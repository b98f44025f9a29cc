//! `lockbench sim`: message passing on the simulator.

use std::path::PathBuf;

use super::mp_model::{usage, ModelArgs, WatchdogOpt, WRITES};
use crate::mp::batch::{self, SimOptions};
use crate::mp::model::MAX_SEEDS;
use crate::mp::{output, paper};
use crate::opts::{Format, TraceOpt};

/// Options of `sim`.
#[derive(clap::Args, Debug, Clone)]
#[command(mut_arg("watchdog", |a| a.help("A request unserved for this many time units is a liveness failure; default the larger of 1e6 and 1000 mean cycles (ncs + cs + 2 cd).")))]
#[command(mut_arg("trace", |a| a.help("Print every simulated event to stderr (for small runs).")))]
pub struct Args {
    /// The model.
    #[command(flatten)]
    pub model: ModelArgs,
    /// Run this many seeds (seed, seed + 1, ...) of each algorithm.
    #[arg(long, default_value_t = 1)]
    pub seeds: u64,
    /// Let channels reorder messages (only for algorithms that allow it).
    #[arg(long)]
    pub non_fifo: bool,
    /// `--watchdog`: in simulated time units (default the larger of 1e6 and 1000 mean cycles).
    #[command(flatten)]
    pub watchdog: WatchdogOpt,
    /// `--trace`: print every simulated event to stderr (for small runs).
    #[command(flatten)]
    pub trace: TraceOpt,
    /// Run seed 003's Fig. 6 / Fig. 7 suite from this TOML file instead (the model options
    /// are ignored; the suite names its algorithms).
    #[arg(long)]
    pub paper: Option<PathBuf>,
    /// Simulations run at once, one per thread (0: one per CPU). Results do not depend on it.
    #[arg(long, default_value_t = 0)]
    pub jobs: usize,
}

/// `lockbench sim`.
pub fn exec(args: &Args) -> anyhow::Result<i32> {
    if let Some(path) = &args.paper {
        let format = args.model.format.pick("sim", WRITES, Format::Table)?;
        return paper::run(path, format, args.jobs);
    }
    let model = args.model.model()?;
    let format = args.model.format.pick("sim", WRITES, Format::Table)?;
    if args.seeds == 0 || args.seeds > MAX_SEEDS {
        return Err(usage(format!(
            "--seeds {}: use 1 to {MAX_SEEDS}",
            args.seeds
        )));
    }
    let opts = SimOptions {
        seeds: args.seeds,
        fifo: !args.non_fifo,
        watchdog: args.watchdog.scaled(1e6, &model),
        trace: args.trace.trace,
        jobs: args.jobs,
    };
    let results = batch::simulate(&model, &opts)?;
    print!("{}", output::render(&results, format));
    Ok(output::exit_code(&results))
}
