//! The rounds of `app` → results in `run`'s JSON contract (one [`RunResult`] per
//! configuration, so `report` and `compare` read them) and `app.json` with what only `app`
//! has: every run's status, wall time and figure, what the interposer saw, and the
//! interposer's own cost.
//!
//! The figure of a run is its speed: 1 / wall time (runs per second), or the figure `--metric`
//! reads (higher is better). A lock's ratio to `pthread` is the median of the ratios paired
//! within each round, with the median's distribution-free interval
//! ([`crate::metrics::stats::median_estimate`]); above 1 the program ran faster on the lock.

use std::sync::OnceLock;

use serde::Serialize;

use super::launch::{Outcome, Status};
use super::stats::Seen;
use super::{AppOptions, Config, ALONE, BASELINE};
use crate::metrics::latency::LatencySummary;
use crate::metrics::stats::{median_estimate, Estimate, Spread};
use crate::report::result::{RoundFigure, RunResult, SCHEMA_VERSION};
use crate::runner::host::Host;

/// A run's figure (None when it failed).
pub fn figure(o: &Outcome) -> Option<f64> {
    if o.status != Status::Ok {
        return None;
    }
    match o.metric {
        Some(m) => Some(m),
        None if o.wall_s > 0.0 => Some(1.0 / o.wall_s),
        None => None,
    }
}

/// Per round, `a`'s figure over `b`'s (rounds where both succeeded).
pub fn paired(a: &Config, b: &Config) -> Vec<Option<f64>> {
    a.runs
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let x = figure(r)?;
            let y = figure(b.runs.get(i)?)?;
            (y > 0.0).then(|| x / y)
        })
        .collect()
}

/// The interposer's own cost: per round, the program alone's speed over pthread's through the
/// interposer, minus 1 (0.02: the interposer made it 2% slower).
pub fn interposer_cost(configs: &[Config]) -> Option<Estimate> {
    let alone = configs.iter().find(|c| c.name == ALONE)?;
    let pthread = configs.iter().find(|c| c.name == BASELINE)?;
    let ratios: Vec<f64> = paired(alone, pthread)
        .into_iter()
        .flatten()
        .map(|r| r - 1.0)
        .collect();
    median_estimate(&ratios)
}

/// What the interposer saw over a configuration's successful runs.
pub fn seen(c: &Config) -> Option<Seen> {
    Seen::sum(c.runs.iter().filter_map(|r| r.seen.as_ref()))
}

fn host() -> Host {
    static HOST: OnceLock<Host> = OnceLock::new();
    HOST.get_or_init(|| match crate::runner::topology::Topology::detect() {
        Ok(t) => Host::detect(&t),
        Err(_) => Host::default(),
    })
    .clone()
}

fn latency(h: &super::stats::Hist) -> LatencySummary {
    LatencySummary {
        p50: h.p50 as f64,
        p90: h.p90 as f64,
        p99: h.p99 as f64,
        p999: h.p99.max(h.max) as f64,
        max: h.max as f64,
        mean: 0.0,
        count: h.samples,
    }
}

/// One result per configuration, in `run`'s contract.
pub fn results(configs: &[Config], program: &str, opts: &AppOptions) -> Vec<RunResult> {
    let base = configs.iter().find(|c| c.name == BASELINE);
    let threads = configs
        .iter()
        .flat_map(|c| c.runs.iter().filter_map(|r| r.seen.as_ref()))
        .map(|s| s.ids_peak)
        .max()
        .unwrap_or(1)
        .max(1);
    configs
        .iter()
        .map(|c| {
            let figures: Vec<f64> = c.runs.iter().filter_map(figure).collect();
            let ratios = match base {
                Some(b) if c.name != BASELINE => paired(c, b),
                _ => vec![None; c.runs.len()],
            };
            let per_round: Vec<RoundFigure> = c
                .runs
                .iter()
                .enumerate()
                .map(|(round, r)| RoundFigure {
                    round,
                    throughput_per_sec: figure(r).unwrap_or(0.0),
                    vs_baseline: ratios[round],
                    passages: r.seen.as_ref().map(|s| s.acquisitions),
                })
                .collect();
            let estimate = median_estimate(&ratios.iter().flatten().copied().collect::<Vec<_>>());
            let seen = seen(c);
            let failures: Vec<String> = c
                .runs
                .iter()
                .enumerate()
                .filter(|(_, r)| r.status != Status::Ok)
                .map(|(i, r)| {
                    let tail = if r.stderr_tail.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", r.stderr_tail)
                    };
                    format!("round {i}: {}{tail}", r.status.describe())
                })
                .collect();
            let spread = if figures.is_empty() {
                Spread::default()
            } else {
                Spread::of(&figures)
            };
            let ok_runs = figures.len().max(1) as u64;
            let mut r = RunResult {
                schema_version: SCHEMA_VERSION,
                lock: c.name.clone(),
                problem: c.problem.clone(),
                source: c.source.clone(),
                threads,
                slots: opts.procs,
                sessions: 1,
                k: 1,
                mix: format!("app:{program}"),
                passages: seen.as_ref().map_or(0, |s| s.acquisitions / ok_runs),
                nothing_measured: figures.is_empty(),
                throughput_per_sec: spread.median,
                throughput_spread: spread,
                spread_wide: spread.wide(),
                per_round,
                repeat: c.runs.len(),
                latency_ns: seen
                    .as_ref()
                    .map(|s| latency(&s.wait_ns))
                    .unwrap_or_default(),
                safety_checked: seen.is_some(),
                oracle: if seen.is_some() { "interposer" } else { "none" }.into(),
                safety_violations: seen.as_ref().map_or(0, |s| s.violations),
                stalled: (!failures.is_empty()).then(|| failures.join("; ")),
                baseline: Some(BASELINE.into()),
                throughput_vs_baseline: estimate.map(|e| e.median),
                throughput_vs_baseline_interval: estimate.and_then(|e| e.interval),
                throughput_vs_baseline_differs: estimate
                    .and_then(|e| e.interval)
                    .map(|i| !i.contains(1.0)),
                pin: "none".into(),
                oversubscribed: threads > host().logical_cpus,
                wait_policy: if c.name == ALONE || c.name == BASELINE {
                    "pthread".into()
                } else {
                    "spin-then-yield".into()
                },
                stop: match &opts.metric {
                    Some(m) => format!("program exit; figure after {m:?}"),
                    None => "program exit; figure 1/wall time".into(),
                },
                latency_sample: 64,
                warnings: failures,
                host: host(),
                version: env!("CARGO_PKG_VERSION").into(),
                timestamp: crate::report::store::now_secs(),
                ..RunResult::default()
            };
            r.quality = crate::report::quality::assess(&r);
            r
        })
        .collect()
}

/// One configuration in `app.json`.
#[derive(Serialize)]
struct ConfigDetails<'a> {
    name: &'a str,
    problem: &'a str,
    source: &'a str,
    vs_pthread: Option<Estimate>,
    seen: Option<Seen>,
    runs: &'a [Outcome],
}

/// `app.json`.
#[derive(Serialize)]
pub struct Details<'a> {
    program: &'a str,
    argv: Vec<String>,
    metric: Option<&'a str>,
    rounds: usize,
    procs: usize,
    /// The program alone against pthread through the interposer: the interposer's cost as a
    /// fraction of the program's speed.
    interposer_cost: Option<Estimate>,
    configs: Vec<ConfigDetails<'a>>,
}

/// Everything `app` measured, for `app.json`.
pub fn details<'a>(configs: &'a [Config], program: &'a str, opts: &'a AppOptions) -> Details<'a> {
    let base = configs.iter().find(|c| c.name == BASELINE);
    Details {
        program,
        argv: opts
            .argv
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        metric: opts.metric.as_deref(),
        rounds: configs.first().map_or(0, |c| c.runs.len()),
        procs: opts.procs,
        interposer_cost: interposer_cost(configs),
        configs: configs
            .iter()
            .map(|c| ConfigDetails {
                name: &c.name,
                problem: &c.problem,
                source: &c.source,
                vs_pthread: base.and_then(|b| {
                    median_estimate(&paired(c, b).into_iter().flatten().collect::<Vec<_>>())
                }),
                seen: seen(c),
                runs: &c.runs,
            })
            .collect(),
    }
}
