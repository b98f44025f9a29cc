//! Runs a model's algorithms: every seed of each on the simulator (independent simulations,
//! in parallel), or each in turn on the threaded runtime.

use super::algo::lkcs::RuleSet;
use super::algo::{AlgoInfo, Make};
use super::metrics::MpResult;
use super::model::Model;
use super::sim::{self, SimConfig};
use super::threaded::{self, ThreadConfig};
use super::Problem;
use crate::error::UsageError;

/// How `sim` runs a model besides the model itself.
#[derive(Clone, Debug)]
pub struct SimOptions {
    /// Seeds per algorithm (the model's seed, seed + 1, ...).
    pub seeds: u64,
    /// FIFO channels.
    pub fifo: bool,
    /// A request unserved for this many time units is a liveness failure.
    pub watchdog: f64,
    /// Print every simulated event to stderr (one simulation at a time).
    pub trace: bool,
    /// Simulations at once (0: one per CPU).
    pub jobs: usize,
    /// Processes that crash (seed 003 §5.3; empty: none).
    pub crashes: Vec<sim::Crash>,
    /// Types each request names (seed 003 §5.1; 1: single-type requests).
    pub types_per_request: usize,
    /// The rules LKCS / LMUTIN run (`ours` unless `--lkcs-rules` says otherwise).
    pub lkcs_rules: RuleSet,
}

/// Simulates every seed of every algorithm of `model`; the results in that order.
pub fn simulate(model: &Model, opts: &SimOptions) -> Result<Vec<MpResult>, UsageError> {
    let mut runs = Vec::new();
    for info in &model.algos {
        if !opts.fifo && !info.allows_non_fifo {
            return Err(UsageError(format!(
                "{} needs FIFO channels (drop --non-fifo)",
                info.name
            )));
        }
        let info = &info.with_lkcs_rules(opts.lkcs_rules).unwrap_or(**info);
        for s in 0..opts.seeds {
            let seed = model.seed + s;
            let mut run = model.run_config(info, seed, opts.watchdog)?;
            if let Make::Local(variant, rules) = info.make {
                rules
                    .prepare(variant, &mut run.setup, seed)
                    .map_err(|e| UsageError(format!("{}: {e}", info.name)))?;
            }
            let cfg = SimConfig {
                run,
                topology: if info.problem == Problem::LocalCs {
                    model.topology.to_string()
                } else {
                    "complete".into()
                },
                fifo: opts.fifo,
                trace: opts.trace,
            };
            runs.push((*info, cfg));
        }
    }
    // A trace interleaves nothing: one simulation at a time.
    let jobs = if opts.trace { 1 } else { opts.jobs };
    Ok(crate::runner::parallel::in_parallel(
        &runs,
        jobs,
        |&(info, ref cfg)| {
            let r = crate::with_algo!(&info, |make| sim::run_typed(
                cfg,
                &opts.crashes,
                opts.types_per_request,
                make
            ));
            with_rules(r, &info)
        },
    ))
}

/// Runs every algorithm of `model` in turn on the threaded runtime (`pin`: each process
/// thread on a CPU in turn; `watchdog` in seconds).
pub fn run_threaded(model: &Model, pin: bool, watchdog: f64) -> anyhow::Result<Vec<MpResult>> {
    let mut results = Vec::new();
    for info in &model.algos {
        let cfg = ThreadConfig {
            run: model.run_config(info, model.seed, watchdog)?,
            pin,
        };
        let r = crate::with_algo!(info, |make| threaded::run(&cfg, make))?;
        results.push(with_rules(r, info));
    }
    Ok(results)
}

/// `r` saying which rules LKCS / LMUTIN ran (`lkcs_rules`; other algorithms have none).
fn with_rules(mut r: MpResult, info: &AlgoInfo) -> MpResult {
    r.lkcs_rules = info.lkcs_rules().map(|s| s.name().to_string());
    r
}
