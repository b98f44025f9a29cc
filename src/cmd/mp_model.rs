//! The options of the message-passing model that `sim` and `mp-run` share ([`ModelArgs`]:
//! processes, groups, delays, the workload, the topology) and their validation into a
//! [`Model`]; and `--watchdog`, which both take in their own unit.

use crate::error::UsageError;
use crate::mp::algo::{self, ALGOS};
use crate::mp::model::{Model, MAX_M, MAX_N};
use crate::mp::workload::Dist;
use crate::opts::{only_one, Format, FormatOpt, KOpt, MixOpt, SeedOpt};
use crate::workload::Mix;

/// The formats `sim` and `mp-run` write.
pub const WRITES: &[Format] = &[Format::Table, Format::Json];

/// The model both runtimes share: algorithm, processes, groups, workload, topology.
#[derive(clap::Args, Debug, Clone)]
#[command(mut_arg("seed", |a| a.help("Seed (default 1).")))]
#[command(mut_arg("format", |a| a.help("Output format: table or json (default table).")))]
#[command(mut_arg("k", |a| a.help("lkcs upper bound k_i: one value, or one per process (comma-separated).")))]
#[command(mut_arg("mix", |a| a.help("Group selection as a session mix instead of --hot: uniform:M, zipf:M:S, hot:M:A,B, ...")))]
pub struct ModelArgs {
    /// Algorithms, comma-separated, or `all`: suzuki-kasami, ricart-agrawala, token-gme,
    /// token-gme-fifo, token-gme-bounded, ra1, ra2, lmutin, lkcs (required, but for `sim --paper`).
    #[arg(long, value_delimiter = ',')]
    pub algo: Vec<String>,
    /// Processes (default 100; `mp-run --runtime mpi`: the ranks × --procs-per-rank).
    #[arg(long)]
    pub n: Option<usize>,
    /// Groups (critical-section types).
    #[arg(long, default_value_t = 50)]
    pub m: usize,
    /// Inter-request time: a number is an exponential mean (seed 003), or exp:X, const:X,
    /// uniform:A,B.
    #[arg(long, default_value = "50")]
    pub ncs: String,
    /// Critical-section time: a number X is uniform on [0, 2X] (seed 003), or a distribution.
    // The one option name declared twice: `run`'s --cs is a busy-work duration with a unit
    // (`200ns`, also a config-file key), this one a distribution of simulated time units
    // beside --ncs and --cd, parsed like them; one type cannot serve both without weakening one.
    #[arg(long, default_value = "20")]
    pub cs: String,
    /// Channel delay: a number is an exponential mean (seed 003), or a distribution.
    #[arg(long, default_value = "10")]
    pub cd: String,
    /// (α, β) hot groups: α% of the groups get β% of the requests (default 20,80).
    #[arg(long, conflicts_with = "mix")]
    pub hot: Option<String>,
    /// `--mix`: group selection as a session mix instead of --hot (uniform:M, zipf:M:S,
    /// hot:M:A,B, ...).
    #[command(flatten)]
    pub mix: MixOpt,
    /// Critical sections each process enters.
    #[arg(long, default_value_t = 500)]
    pub requests: u64,
    /// `--seed` (default 1).
    #[command(flatten)]
    pub seed: SeedOpt,
    /// Topology of lmutin/lkcs: complete, ring, grid, random:D.
    #[arg(long, default_value = "complete")]
    pub topology: String,
    /// lmutin/lkcs lower bound l_i: one value, or one per process (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub l: Option<Vec<usize>>,
    /// `--k`: the lkcs upper bound k_i: one value, or one per process (comma-separated).
    #[command(flatten)]
    pub k: KOpt,
    /// `--format`: table (default) or json.
    #[command(flatten)]
    pub format: FormatOpt,
}

/// `--watchdog`.
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct WatchdogOpt {
    /// A request unserved for this long is a liveness failure (`sim`: simulated time units,
    /// default 1e6; `mp-run`: seconds, default 10).
    #[arg(long)]
    pub watchdog: Option<f64>,
}

/// `sim`'s default watchdog in mean cycles of one process (pause, critical section and a
/// round trip of the channel), when that exceeds its floor of 10^6 time units. A wait that
/// only a neighbour's next request can end (seed 004 under light load: a lower bound l_i met
/// again only when a neighbour enters) grows with the pause, so a fixed bound would report
/// that wait, which the paper's model (processes request forever) has too, as a failure.
pub const WATCHDOG_CYCLES: f64 = 1000.0;

impl WatchdogOpt {
    /// The bound given, or `default`.
    pub fn get(&self, default: f64) -> f64 {
        self.watchdog.unwrap_or(default)
    }

    /// The bound given, or the larger of `floor` and [`WATCHDOG_CYCLES`] mean cycles of the
    /// model's workload.
    pub fn scaled(&self, floor: f64, model: &Model) -> f64 {
        let cycle = model.ncs.mean() + model.cs.mean() + 2.0 * model.cd.mean();
        self.watchdog
            .unwrap_or_else(|| floor.max(WATCHDOG_CYCLES * cycle))
    }
}

pub use crate::mp::model::{
    MAX_REQUESTS, MAX_SIM_TIME, MAX_SIM_TOTAL, MAX_THREADED_MS, MAX_THREADED_TOTAL, MAX_WATCHDOG,
};

impl WatchdogOpt {
    /// Refuses a watchdog that is not a finite positive number below [`MAX_WATCHDOG`].
    pub fn check(&self) -> anyhow::Result<()> {
        match self.watchdog {
            Some(w) if !(w > 0.0 && w <= MAX_WATCHDOG) => Err(usage(format!(
                "--watchdog {w}: a number above 0 and at most {MAX_WATCHDOG:e}"
            ))),
            _ => Ok(()),
        }
    }
}

/// The largest value a distribution can draw (its mean for the exponential).
fn dist_top(d: &Dist) -> f64 {
    match *d {
        Dist::Exp(m) | Dist::Const(m) => m,
        Dist::Uniform(_, b) => b,
    }
}

/// Refuses delays past `most` (in the runtime's `unit`) and more critical sections than
/// `total` in all: a run that would overflow its clocks or never end.
pub fn check_size(model: &Model, most: f64, unit: &str, total: u64) -> anyhow::Result<()> {
    for (what, d) in [("ncs", &model.ncs), ("cs", &model.cs), ("cd", &model.cd)] {
        let top = dist_top(d);
        if top > most {
            return Err(usage(format!(
                "--{what}: draws up to {top:e} {unit}, at most {most:e}; use a smaller distribution"
            )));
        }
    }
    let all = (model.n as u64).saturating_mul(model.requests);
    if all > total {
        return Err(usage(format!(
            "--n {} × --requests {} = {all} critical sections: at most {total} in one run; use fewer requests",
            model.n, model.requests
        )));
    }
    Ok(())
}

pub(super) fn usage(msg: impl Into<String>) -> anyhow::Error {
    UsageError(msg.into()).into()
}

/// A distribution option: a number is the default family's mean (`cs_style`: uniform on
/// [0, 2X], else exponential), or a named distribution.
fn dist(what: &str, s: &str, cs_style: bool) -> anyhow::Result<Dist> {
    if cs_style {
        if let Ok(x) = s.parse::<f64>() {
            if x.is_finite() && x >= 0.0 {
                return Ok(Dist::cs_of_mean(x));
            }
        }
    }
    s.parse()
        .map_err(|e: String| usage(format!("--{what}: {e}")))
}

/// Processes when `--n` is not given.
pub const DEFAULT_N: usize = 100;

impl ModelArgs {
    /// Validates everything but the per-algorithm set-up.
    pub fn model(&self) -> anyhow::Result<Model> {
        self.model_of(self.n.unwrap_or(DEFAULT_N))
    }

    /// Validates everything but the per-algorithm set-up, with `n` processes.
    pub fn model_of(&self, n: usize) -> anyhow::Result<Model> {
        if n == 0 {
            return Err(usage("--n must be at least 1"));
        }
        if n > MAX_N {
            return Err(usage(format!(
                "--n {}: at most {MAX_N} processes (the simulator keeps n² link clocks and \
                 tables of n entries per process; mp-run starts one thread each)",
                n
            )));
        }
        if self.m == 0 {
            return Err(usage("--m must be at least 1"));
        }
        if self.m > MAX_M {
            return Err(usage(format!(
                "--m {}: at most {MAX_M} groups (the algorithms keep per-group tables)",
                self.m
            )));
        }
        if self.algo.is_empty() {
            return Err(usage(
                "--algo is required: name algorithms, comma-separated, or `all`",
            ));
        }
        let mut algos = Vec::new();
        for a in &self.algo {
            if a == "all" {
                algos.extend(ALGOS.iter());
            } else {
                algos.push(algo::info(a).ok_or_else(|| {
                    usage(format!(
                        "unknown algorithm `{a}`: use {} or all",
                        algo::names()
                    ))
                })?);
            }
        }
        // The local-CS options bind lmutin/lkcs only: given to none of them, they would be
        // silently ignored.
        if !algos
            .iter()
            .any(|a| a.problem == crate::mp::Problem::LocalCs)
        {
            let given = [
                (self.topology != "complete", "--topology"),
                (self.l.is_some(), "--l"),
                (self.k.k.is_some(), "--k"),
            ];
            if let Some((_, opt)) = given.iter().find(|(g, _)| *g) {
                return Err(usage(format!(
                    "{opt} applies to the local-CS algorithms (lmutin, lkcs) only: drop it, or add one of them to --algo"
                )));
            }
        }
        if self.requests == 0 || self.requests > MAX_REQUESTS {
            return Err(usage(format!(
                "--requests {}: between 1 and {MAX_REQUESTS} critical sections per process",
                self.requests
            )));
        }
        let one = only_one(self.mix.mix.as_deref(), || {
            "give one --mix: each request's group is drawn from one mix".into()
        })?;
        let mix = match (&self.hot, one) {
            (_, Some(m)) => m,
            (h, None) => {
                let h = h.as_deref().unwrap_or("20,80");
                format!("hot:{}:{h}", self.m)
                    .parse::<Mix>()
                    .map_err(|e| usage(format!("--hot `{h}`: {e}")))?
            }
        };
        if mix.sessions(n) > self.m.max(n + 1) {
            return Err(usage(format!(
                "--mix {mix} draws more groups than --m {}",
                self.m
            )));
        }
        Ok(Model {
            algos,
            n,
            m: self.m,
            requests: self.requests,
            seed: self.seed.get(1),
            ncs: dist("ncs", &self.ncs, false)?,
            cs: dist("cs", &self.cs, true)?,
            cd: dist("cd", &self.cd, false)?,
            mix,
            topology: self.topology.parse().map_err(usage)?,
            l: self.l.clone(),
            k: self.k.k.clone(),
        })
    }
}
