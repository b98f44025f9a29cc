//! `lockbench sim`: message passing on the simulator.

use std::path::PathBuf;

use super::mp_model::{
    check_size, usage, ModelArgs, WatchdogOpt, MAX_SIM_TIME, MAX_SIM_TOTAL, WRITES,
};
use crate::mp::algo::lkcs::RuleSet;
use crate::mp::batch::{self, SimOptions};
use crate::mp::model::MAX_SEEDS;
use crate::mp::sim::{check_crashes, Crash};
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
    /// Run this many seeds (seed, seed + 1, ...) of each algorithm (default 1; with `--paper`,
    /// seeds 1..=N of every point, default the suite's `seeds`, else 5).
    #[arg(long)]
    pub seeds: Option<u64>,
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
    /// With `--paper`: a smoke run of the suite (30 requests, n at most 12, at most 2 seeds;
    /// seconds), not the paper's points.
    #[arg(long, requires = "paper")]
    pub quick: bool,
    /// Simulations run at once, one per thread (0: one per CPU). Results do not depend on it.
    #[arg(long, default_value_t = 0)]
    pub jobs: usize,
    /// Crash process P at simulated time T for good (repeatable; token-gme and token-gme-fifo,
    /// which recover as seed 003 §5.3 says). Messages to a crashed process are lost; every
    /// other process detects the crash after a channel delay.
    #[arg(long, value_name = "P@T")]
    pub crash: Vec<String>,
    /// Each request names G distinct types, drawn from the workload's group distribution
    /// (--hot, or --mix uniform:M / hot:M:A,B), and is served by a session of any one of them
    /// (seed 003 §5.1; token-gme, token-gme-fifo, token-gme-bounded). 1 to --m; default 1.
    #[arg(long, default_value_t = 1, value_name = "G")]
    pub types_per_request: usize,
    /// The rules of lkcs / lmutin (seed 004): `ours` (LK-14 no leader, LK-15 parking, LK-16
    /// clock; the default), `printed` (the seed's leader, Algorithms 6-7, and no parking; it
    /// keeps our readings LK-1..LK-4, LK-7, LK-11, LK-13 and the clock LK-16, and starts
    /// within the leader's bounds L_i = l_i + 1, K_i = k_i - 1 near p0, refused where none
    /// exists), or
    /// `printed-at-capacity` (Algorithm 6's tests at Cond's limits, LK-14g).
    #[arg(long, value_enum, value_name = "RULES")]
    pub lkcs_rules: Option<RuleSet>,
}

/// `lockbench sim`.
pub fn exec(args: &Args) -> anyhow::Result<i32> {
    // Before anything of note is allocated: the heap on huge pages (see `mp::heap`).
    crate::mp::heap::on_huge_pages();
    if let Some(path) = &args.paper {
        if args.types_per_request != 1 {
            return Err(usage(
                "--types-per-request does not apply to --paper (the suite makes single-type requests)",
            ));
        }
        let format = args.model.format.pick("sim", WRITES, Format::Table)?;
        let seeds = match args.seeds {
            None => 0,
            Some(s) if (1..=MAX_SEEDS).contains(&s) => s as usize,
            Some(s) => return Err(usage(format!("--seeds {s}: use 1 to {MAX_SEEDS}"))),
        };
        if !args.crash.is_empty() {
            return Err(usage(
                "--crash does not apply to --paper (the suite's runs crash no process); drop it",
            ));
        }
        if args.lkcs_rules.is_some() {
            return Err(usage(
                "--lkcs-rules does not apply to --paper (the suite runs no lkcs or lmutin)",
            ));
        }
        return paper::run(path, format, args.jobs, seeds, args.quick);
    }
    let model = args.model.model()?;
    check_size(&model, MAX_SIM_TIME, "time units", MAX_SIM_TOTAL)?;
    args.watchdog.check()?;
    let format = args.model.format.pick("sim", WRITES, Format::Table)?;
    let seeds = args.seeds.unwrap_or(1);
    if seeds == 0 || seeds > MAX_SEEDS {
        return Err(usage(format!("--seeds {seeds}: use 1 to {MAX_SEEDS}")));
    }
    let types_per_request = types_per_request(args, &model)?;
    let opts = SimOptions {
        seeds,
        fifo: !args.non_fifo,
        watchdog: args.watchdog.scaled(1e6, &model),
        trace: args.trace.trace,
        jobs: args.jobs,
        crashes: crashes(args, &model)?,
        types_per_request,
        lkcs_rules: lkcs_rules(args, &model)?,
    };
    let results = batch::simulate(&model, &opts)?;
    print!("{}", output::render(&results, format));
    Ok(output::exit_code(&results))
}

/// The `--crash` schedule, checked against the model.
fn crashes(args: &Args, model: &crate::mp::model::Model) -> anyhow::Result<Vec<Crash>> {
    let crashes = args
        .crash
        .iter()
        .map(|c| c.parse::<Crash>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(usage)?;
    if crashes.is_empty() {
        return Ok(crashes);
    }
    check_crashes(&crashes, model.n).map_err(usage)?;
    if let Some(a) = model.algos.iter().find(|a| !RECOVERS.contains(&a.name)) {
        return Err(usage(format!(
            "--crash: {} has no crash recovery (use --algo {})",
            a.name,
            RECOVERS.join(" or ")
        )));
    }
    Ok(crashes)
}

/// `--lkcs-rules`, checked against the model: only lkcs and lmutin take it.
fn lkcs_rules(args: &Args, model: &crate::mp::model::Model) -> anyhow::Result<RuleSet> {
    let Some(rules) = args.lkcs_rules else {
        return Ok(RuleSet::Ours);
    };
    if let Some(a) = model.algos.iter().find(|a| a.lkcs_rules().is_none()) {
        return Err(usage(format!(
            "--lkcs-rules {}: {} has no such rules (use --algo lkcs or lmutin)",
            rules.name(),
            a.name
        )));
    }
    Ok(rules)
}

/// The algorithms that recover from crashes (seed 003 §5.3).
const RECOVERS: [&str; 2] = ["token-gme", "token-gme-fifo"];

/// The algorithms that take multi-type requests (seed 003 §5.1): the TokenGME family, which
/// shares one code path.
pub const MULTI_TYPE: [&str; 3] = ["token-gme", "token-gme-fifo", "token-gme-bounded"];

/// `--types-per-request`, checked against the model.
fn types_per_request(args: &Args, model: &crate::mp::model::Model) -> anyhow::Result<usize> {
    let g = args.types_per_request;
    let what = format!("--types-per-request {g}");
    if g == 0 {
        return Err(usage(format!("{what}: a request names at least 1 type")));
    }
    if g == 1 {
        return Ok(1);
    }
    if g > model.m {
        return Err(usage(format!(
            "{what}: at most --m {} (a request names distinct types)",
            model.m
        )));
    }
    if let Some(a) = model.algos.iter().find(|a| !MULTI_TYPE.contains(&a.name)) {
        return Err(usage(format!(
            "{what}: {} takes single-type requests (use --algo {})",
            a.name,
            MULTI_TYPE.join(", ")
        )));
    }
    if !args.crash.is_empty() {
        return Err(usage(format!(
            "{what}: crash recovery (§5.3) takes single-type requests; drop --crash"
        )));
    }
    match crate::mp::workload::reachable_types(&model.mix) {
        None => Err(usage(format!(
            "{what}: types are drawn from --hot or --mix uniform:M / hot:M:A,B, not --mix {}",
            model.mix
        ))),
        Some(r) if g > r => Err(usage(format!(
            "{what}: --mix {} draws only {r} type(s); name at most {r}",
            model.mix
        ))),
        Some(_) => Ok(g),
    }
}
