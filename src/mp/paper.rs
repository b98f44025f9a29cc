//! Seed 003's experiment (Fig. 6 (a)–(f): TokenGME / RA2; Fig. 7 (a)–(b): priority / FIFO
//! type selection) as ratio tables, from a TOML suite such as
//! `bench-configs/message-passing-paper.toml`. The paper's figures were lost in extraction;
//! what its text reports is printed beside our ratios, never used to tune them.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::algo::{self, Setup};
use super::run_config::RunConfig;
use super::sim::{self, SimConfig};
use super::topo::Graph;
use super::workload::Dist;
use crate::error::UsageError;
use crate::opts::Format;

/// The base point every figure varies one parameter of.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Base {
    /// Processes.
    pub n: usize,
    /// Groups.
    pub m: usize,
    /// Mean inter-request time (exponential).
    pub ncs: f64,
    /// Mean CS time (uniform on [0, 2·cs]).
    pub cs: f64,
    /// Mean channel delay (exponential).
    pub cd: f64,
    /// (α, β).
    pub hot: [f64; 2],
}

/// One figure: a parameter swept over values, two algorithms compared.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Figure {
    /// E.g. `6a`.
    pub name: String,
    /// `m`, `ncs`, `cs`, `cd`, `hot` (α; β = 100 − α) or `n`.
    pub vary: String,
    /// Values of the parameter.
    pub values: Vec<f64>,
    /// Numerator and denominator algorithms.
    pub compare: [String; 2],
    /// Overrides of the base point (e.g. n = 200 for Fig. 7 (b)).
    #[serde(default)]
    pub n: Option<usize>,
    /// What the paper's text reports for this figure.
    pub paper: String,
}

/// A suite.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    /// Requests per process (500 in the paper).
    pub requests: u64,
    /// Seeds averaged per point.
    pub seeds: u64,
    /// The base point.
    pub base: Base,
    /// The figures.
    pub figure: Vec<Figure>,
}

/// One row of a ratio table.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// Figure.
    pub figure: String,
    /// Parameter varied.
    pub vary: String,
    /// Its value.
    pub value: f64,
    /// "A/B".
    pub ratio_of: String,
    /// Messages per request, A / B.
    pub messages: f64,
    /// Mean message size, A / B.
    pub message_size: f64,
    /// Mean waiting time, A / B.
    pub waiting_time: f64,
    /// Throughput, A / B.
    pub throughput: f64,
    /// Safety violations and liveness failures over both algorithms' runs.
    pub failures: u64,
    /// Wall seconds for the point (its simulations run at once, up to `--jobs`).
    pub wall_seconds: f64,
    /// Seconds its simulations took, summed (each on one core).
    pub run_seconds: f64,
}

/// Runs the suite in `path` and prints its tables.
pub fn run(path: &Path, format: Format, jobs: usize) -> anyhow::Result<i32> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| UsageError(format!("cannot read {}: {e}", path.display())))?;
    let suite: Suite = toml::from_str(&text)
        .map_err(|e| UsageError(format!("{}: {}", path.display(), e.message())))?;
    let mut rows = Vec::new();
    let mut out = String::new();
    for fig in &suite.figure {
        for a in &fig.compare {
            if algo::info(a).is_none() {
                return Err(
                    UsageError(format!("figure {}: unknown algorithm `{a}`", fig.name)).into(),
                );
            }
        }
        if format == Format::Table {
            out.push_str(&format!(
                "Fig. {} — {} / {} varying {}\n  paper: {}\n  {:>8}  {:>8}  {:>8}  {:>8}  {:>8}  {:>6}  {:>6}\n",
                fig.name, fig.compare[0], fig.compare[1], fig.vary, fig.paper,
                fig.vary, "msgs", "size", "wait", "thrpt", "wall s", "run s"
            ));
        }
        for &v in &fig.values {
            let row = point(&suite, fig, v, jobs)?;
            if format == Format::Table {
                out.push_str(&format!(
                    "  {:>8}  {:>8.3}  {:>8.3}  {:>8.3}  {:>8.3}  {:>6.1}  {:>6.1}{}\n",
                    v,
                    row.messages,
                    row.message_size,
                    row.waiting_time,
                    row.throughput,
                    row.wall_seconds,
                    row.run_seconds,
                    if row.failures > 0 { "  FAILURES" } else { "" }
                ));
                print!("{out}");
                out.clear();
            }
            rows.push(row);
        }
    }
    if format == Format::Json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        print!("{out}");
    }
    Ok(if rows.iter().any(|r| r.failures > 0) {
        1
    } else {
        0
    })
}

fn point(suite: &Suite, fig: &Figure, v: f64, jobs: usize) -> anyhow::Result<Row> {
    let started = std::time::Instant::now();
    let b = &suite.base;
    let mut n = fig.n.unwrap_or(b.n);
    let (mut m, mut ncs, mut cs, mut cd, mut hot) = (b.m, b.ncs, b.cs, b.cd, b.hot);
    match fig.vary.as_str() {
        "m" => m = v as usize,
        "n" => n = v as usize,
        "ncs" => ncs = v,
        "cs" => cs = v,
        "cd" => cd = v,
        "hot" => hot = [v, 100.0 - v],
        other => {
            return Err(UsageError(format!(
                "figure {}: cannot vary `{other}` (m, n, ncs, cs, cd, hot)",
                fig.name
            ))
            .into())
        }
    }
    let mix = format!("hot:{m}:{},{}", hot[0], hot[1])
        .parse()
        .map_err(UsageError)?;
    let mut runs = Vec::new();
    for (i, name) in fig.compare.iter().enumerate() {
        let info = algo::info(name).expect("checked");
        for s in 0..suite.seeds {
            let run = RunConfig {
                algo: name.clone(),
                problem: info.problem,
                setup: Setup {
                    n,
                    m,
                    graph: Graph::complete(0),
                    l: vec![0; n],
                    k: vec![n; n],
                    initial_in: vec![false; n],
                    leader: 0,
                },
                requests: suite.requests,
                seed: 1 + s,
                ncs: Dist::Exp(ncs),
                cs: Dist::cs_of_mean(cs),
                delay: Dist::Exp(cd),
                mix: Clone::clone(&mix),
                watchdog: 1e9,
            };
            let cfg = SimConfig {
                run,
                topology: "complete".into(),
                fifo: true,
                trace: false,
            };
            runs.push((i, info, cfg));
        }
    }
    let results = super::in_parallel(&runs, jobs, |&(_, info, ref cfg)| {
        crate::with_algo!(info, |make| sim::run(cfg, make))
    });
    let mut sums = [[0.0f64; 4]; 2];
    let mut failures = 0;
    let mut run_seconds = 0.0;
    for ((i, _, _), r) in runs.iter().zip(&results) {
        failures += r.safety_violations + u64::from(r.liveness_failure.is_some());
        run_seconds += r.wall_seconds;
        for (k, x) in [
            r.messages_per_request_mean,
            r.message_size_mean,
            r.waiting_time_mean,
            r.throughput,
        ]
        .into_iter()
        .enumerate()
        {
            sums[*i][k] += x;
        }
    }
    let ratio = |k: usize| {
        if sums[1][k] == 0.0 {
            f64::NAN
        } else {
            sums[0][k] / sums[1][k]
        }
    };
    Ok(Row {
        figure: fig.name.clone(),
        vary: fig.vary.clone(),
        value: v,
        ratio_of: format!("{}/{}", fig.compare[0], fig.compare[1]),
        messages: ratio(0),
        message_size: ratio(1),
        waiting_time: ratio(2),
        throughput: ratio(3),
        failures,
        wall_seconds: started.elapsed().as_secs_f64(),
        run_seconds,
    })
}
