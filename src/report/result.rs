//! The result of one (lock, configuration) run: the machine-readable contract, written by `run`
//! and `sweep` and read back, as this same type, by `report`, `compare`, `correlate` and
//! `predict`.
//!
//! Field names are stable: add, don't rename. Every figure is documented here; JSON carries
//! them under the same names. Reading back is tolerant: a field an older file lacks takes its
//! default (zero, empty, null), so results saved by earlier versions still load.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

use crate::check::trace::TraceReport;
use crate::metrics::counters::CounterReport;
use crate::metrics::fairness::Fairness;
use crate::metrics::latency::LatencySummary;
use crate::metrics::stats::Interval;
pub use crate::metrics::stats::Spread;
use crate::report::quality::Quality;
use crate::runner::fidelity::FidelityPoint;
use crate::runner::host::Host;

/// A thread starves when its rate (passages over its own window) is below this fraction of
/// the busiest thread's: the rule of the kernel's lock torture test.
pub const STARVED_BELOW: f64 = 0.5;

/// Processes inside together, as the oracle saw them at each entry.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Concurrency {
    /// Mean over entries.
    #[serde(deserialize_with = "null_as_nan")]
    pub mean: f64,
    /// Largest.
    pub max: u64,
}

/// Per-thread figures.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct ThreadResult {
    /// Thread (= process id).
    pub thread: usize,
    /// CPU it was pinned to (null: not pinned).
    pub cpu: Option<usize>,
    /// That CPU's physical core (the lowest CPU id of the core; null: not pinned).
    pub core: Option<usize>,
    /// That CPU's NUMA node (null: not pinned, or no node reported).
    pub node: Option<usize>,
    /// That CPU's package (socket; null: not pinned).
    pub socket: Option<usize>,
    /// Measured passages.
    pub passages: u64,
    /// Its measured window, ns.
    #[serde(deserialize_with = "null_as_nan")]
    pub window_ns: f64,
    /// Its passages per second over its own window.
    #[serde(deserialize_with = "null_as_nan")]
    pub rate_per_sec: f64,
}

/// The lock's pages under a memory policy (first repetition).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct MemPages {
    /// Pages bound.
    pub bound: usize,
    /// Pages not on a node the policy names, as `move_pages` read them back.
    pub misplaced: usize,
    /// Pages (under `local`) holding registers of processes on different nodes.
    pub mixed: usize,
    /// What the kernel said when it refused, if it did.
    pub error: Option<String>,
}

/// One round's figures of a run.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct RoundFigure {
    /// Round (0-based); every configuration runs once per round.
    pub round: usize,
    /// Passages per second in that round.
    #[serde(deserialize_with = "null_as_nan")]
    pub throughput_per_sec: f64,
    /// Over the baseline's throughput in the same round (null for the baseline itself, or when
    /// the baseline did not run in that round, or when either measured fewer than
    /// [`crate::report::quality::MIN_ROUND_PASSAGES`] passages in it).
    pub vs_baseline: Option<f64>,
    /// Passages measured in that round (null in results saved before it was recorded).
    pub passages: Option<u64>,
}

/// The version of the JSON this build writes: 2 added `schema_version`, `quality`,
/// `host.load` and the rounds' `passages`. Every JSON output of `run`, `sweep`, `report` and
/// `compare` carries it.
pub const SCHEMA_VERSION: u32 = 2;

/// One (lock, configuration) run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RunResult {
    /// [`SCHEMA_VERSION`] of the build that wrote it (0: written before versions were kept).
    pub schema_version: u32,
    /// Lock name.
    pub lock: String,
    /// Problem it solves: mutex, gme, k-exclusion.
    pub problem: String,
    /// Paper and figure, or "baseline".
    pub source: String,
    /// The lock claims first-come-first-served (P5): a trace must show no FCFS violation.
    pub fcfs_claimed: bool,
    /// Threads (processes 0..threads).
    pub threads: usize,
    /// Processes the lock was built for (≥ threads; the rest idle).
    pub slots: usize,
    /// Distinct session ids the mix can ask for at this thread count.
    pub sessions: usize,
    /// k-exclusion capacity (the lock's k; 1 for the other problems' view).
    pub k: usize,
    /// Session mix.
    pub mix: String,
    /// Measured passages (median repetition).
    pub passages: u64,
    /// No passage was measured in any round (a critical section or think time longer than the
    /// measured window, or a stall): every figure of the run is empty.
    pub nothing_measured: bool,
    /// Passages per second over the wall-clock window (median over repetitions).
    #[serde(deserialize_with = "null_as_nan")]
    pub throughput_per_sec: f64,
    /// Throughput spread over repetitions.
    pub throughput_spread: Spread,
    /// Each round's throughput and paired ratio to the baseline.
    pub per_round: Vec<RoundFigure>,
    /// The spread is wide: half the min–max range over the rounds exceeds 5% of the median
    /// ([`WIDE_SPREAD`]; the table's `range` marked `!`), so the figure is not to be trusted alone.
    pub spread_wide: bool,
    /// Rounds this configuration ran in (each round runs every configuration once, in a
    /// shuffled order).
    pub repeat: usize,
    /// Entry latency (request → inside), ns, over all rounds; `count` is the number of sampled
    /// passages it rests on.
    pub latency_ns: LatencySummary,
    /// The entry-latency histogram behind `latency_ns`, in ns: HdrHistogram V2 with deflate,
    /// base64 (as in an interval log line); null when nothing was sampled. `lockbench report`
    /// exports it as an interval log (`.hlog`).
    pub latency_histogram: Option<String>,
    /// Whole passage (request to the next request: enter, CS, exit, think), ns.
    pub passage_ns: LatencySummary,
    /// Exit latency (the exit section, start to end: bounded exit, P3), ns.
    pub exit_ns: LatencySummary,
    /// Passages of each thread (median repetition).
    pub per_thread_passages: Vec<u64>,
    /// Each thread's CPU, window and rate (median repetition).
    pub per_thread: Vec<ThreadResult>,
    /// Threads did not all run for the same window (windows differ by more than 5%): rates of
    /// threads that finished early are inflated.
    pub windows_uneven: bool,
    /// Threads (ids) whose rate was below half the busiest thread's ([`STARVED_BELOW`]), in
    /// the median repetition; empty when none starved.
    pub starved_threads: Vec<usize>,
    /// Jain's fairness index over per-thread rates.
    #[serde(deserialize_with = "null_as_nan")]
    pub fairness_jain: f64,
    /// Fairness details (max/min share).
    pub fairness: Fairness,
    /// Processes inside together (null when the oracle was off).
    pub concurrency: Option<Concurrency>,
    /// Whether a safety oracle ran.
    pub safety_checked: bool,
    /// Which: "self-check" (plain loads and stores in the critical section), "counting" (atomic
    /// counts of who is inside) or "none".
    pub oracle: String,
    /// Safety violations seen (all repetitions).
    pub safety_violations: u64,
    /// Failed checks of the lock's register bounds (all repetitions).
    pub invariant_failures: u64,
    /// The first failed register-bound check.
    pub invariant_example: Option<String>,
    /// Counters, each per passage or null with the reason it is unavailable.
    pub counters: Vec<CounterReport>,
    /// RMRs under the papers' model (null: not measured in this run); read back, it must hold
    /// at least what [`ModelRmrs`] reads.
    #[serde(deserialize_with = "model_rmrs_checked")]
    pub rmr: Option<serde_json::Value>,
    /// Trace analysis (`--trace`), null otherwise.
    pub trace: Option<TraceReport>,
    /// Why the run was stopped early, when it stalled.
    pub stalled: Option<String>,
    /// Baseline the ratio is against.
    pub baseline: Option<String>,
    /// Throughput over the baseline's in the same configuration: the median of the ratios
    /// paired within each round.
    pub throughput_vs_baseline: Option<f64>,
    /// Confidence interval of that median (null with a single round).
    pub throughput_vs_baseline_interval: Option<Interval>,
    /// Whether the interval excludes 1 (false: no difference shown; null with a single round).
    pub throughput_vs_baseline_differs: Option<bool>,
    /// Pinning mode.
    pub pin: String,
    /// SMT siblings used.
    pub smt: bool,
    /// The CPUs the run was limited to (`--cpus`; null: every CPU the process may use).
    pub cpus: Option<String>,
    /// Where the lock's registers were placed (`--mem-policy`: local, interleave, node:N;
    /// null: the kernel's first touch, no binding).
    pub mem_policy: Option<String>,
    /// What binding the lock's pages under `mem_policy` did, read back with `move_pages`
    /// (null without a policy).
    pub mem_pages: Option<MemPages>,
    /// More threads than CPUs.
    pub oversubscribed: bool,
    /// How waiting threads waited.
    pub wait_policy: String,
    /// Critical-section busy work, ns.
    pub cs_ns: u64,
    /// Think-time busy work, ns.
    pub think_ns: u64,
    /// Shared cache lines touched in each critical section.
    pub cs_lines: usize,
    /// Stop rule, e.g. "duration 1s" or "passages 10000".
    pub stop: String,
    /// Warm-up, ns.
    pub warmup_ns: u64,
    /// What the harness's loop adds to a passage, ns: `noop` in the harness's default loop
    /// against an empty loop, at one thread, median of interleaved rounds.
    #[serde(deserialize_with = "null_as_nan")]
    pub harness_overhead_ns: f64,
    /// The observer effect of this invocation: harness / bare-loop throughput of one reference
    /// lock at one thread (`lockbench fidelity` measures more).
    pub harness_fidelity: Option<FidelityPoint>,
    /// One passage in this many was timed, chosen at random (1: all); with
    /// `latency_sample_adaptive`, at least this many.
    pub latency_sample: u64,
    /// The rate was the default: each thread timed fewer passages where timing would have cost
    /// more than about 1% of its passage time (the `samples` of each figure say how many).
    pub latency_sample_adaptive: bool,
    /// Clock resolution: nanoseconds per tick.
    #[serde(deserialize_with = "null_as_nan")]
    pub ns_per_tick: f64,
    /// Notes a reader must see (oversubscription, pinning failures, ...).
    pub warnings: Vec<String>,
    /// The flags of figures that rest on too little to be read as precise numbers (see
    /// [`crate::report::quality`]): each with its name, the figure it affects and the reason.
    pub quality: Quality,
    /// Host description.
    pub host: Host,
    /// lockbench version.
    pub version: String,
    /// The build that measured it: version, commit, dirty flag, rustc, profile (empty in
    /// results saved before it was recorded).
    pub build: super::build::Build,
    /// Seconds since the Unix epoch when the run finished.
    pub timestamp: u64,
}

/// Sections of a passage, in order.
pub const SECTIONS: [&str; 4] = ["doorway", "waiting", "cs", "exit"];

/// The figures of a result's `rmr` object that are read back: RMRs under a model, as `run
/// --rmr` saves them.
#[derive(Clone, Debug, Deserialize)]
pub struct ModelRmrs {
    /// Model: cc, cc-wb, dsm.
    pub model: String,
    /// Mean RMRs per passage.
    #[serde(deserialize_with = "null_as_nan")]
    pub per_passage_mean: f64,
    /// Largest RMRs of one passage.
    #[serde(default)]
    pub per_passage_max: Option<f64>,
    /// Per-passage mean of each section (doorway, waiting, cs, exit).
    #[serde(default)]
    pub by_section: BTreeMap<String, serde_json::Value>,
}

impl ModelRmrs {
    /// The per-passage mean of one section: a number, or an object's `mean` /
    /// `per_passage_mean`.
    pub fn section(&self, name: &str) -> Option<f64> {
        let v = self.by_section.get(name)?;
        v.as_f64().or_else(|| {
            v.get("mean")
                .or_else(|| v.get("per_passage_mean"))
                .and_then(serde_json::Value::as_f64)
        })
    }

    /// The sections present, in passage order, with their means.
    pub fn sections(&self) -> Vec<(&'static str, f64)> {
        SECTIONS
            .iter()
            .filter_map(|s| self.section(s).map(|v| (*s, v)))
            .collect()
    }
}

/// Reads `rmr` as it was written, refusing one [`ModelRmrs`] cannot read.
fn model_rmrs_checked<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<serde_json::Value>, D::Error> {
    let v = Option::<serde_json::Value>::deserialize(d)?;
    if let Some(v) = &v {
        ModelRmrs::deserialize(v).map_err(serde::de::Error::custom)?;
    }
    Ok(v)
}

impl RunResult {
    /// No safety violation, register-bound failure or stall: nothing but figures to report.
    pub fn is_clean(&self) -> bool {
        self.safety_violations == 0 && self.invariant_failures == 0 && self.stalled.is_none()
    }

    /// The model RMRs of a run with `--rmr`.
    pub fn model_rmrs(&self) -> Option<ModelRmrs> {
        ModelRmrs::deserialize(self.rmr.as_ref()?).ok()
    }
}

/// A figure JSON holds as `null` where it was not a number (serde_json writes NaN so): read
/// back as NaN, so that a result measuring nothing stays readable.
fn null_as_nan<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_read_back_writes_the_same_bytes() {
        let r = RunResult {
            lock: "ticket".into(),
            threads: 2,
            throughput_per_sec: 1.5e7,
            per_thread: vec![ThreadResult {
                thread: 0,
                cpu: Some(1),
                core: Some(1),
                node: Some(0),
                socket: Some(0),
                passages: 3,
                window_ns: 2.0,
                rate_per_sec: 1.5,
            }],
            rmr: Some(serde_json::json!({
                "model": "cc", "per_passage_mean": 2.5, "by_section": {"exit": 1.0, "cs": 0}
            })),
            ..RunResult::default()
        };
        let text = serde_json::to_string_pretty(&r).unwrap();
        let back: RunResult = serde_json::from_str(&text).unwrap();
        assert_eq!(serde_json::to_string_pretty(&back).unwrap(), text);
        let rmrs = back.model_rmrs().unwrap();
        assert_eq!(rmrs.sections(), vec![("cs", 0.0), ("exit", 1.0)]);
        // Older files lack fields: they take defaults. An rmr without its model is refused.
        let old: RunResult = serde_json::from_str(r#"{"lock": "a", "rmr": null}"#).unwrap();
        assert_eq!((old.threads, old.model_rmrs().is_none()), (0, true));
        let bad = r#"{"lock": "a", "rmr": {"per_passage_mean": 1}}"#;
        assert!(serde_json::from_str::<RunResult>(bad).is_err());
    }
}
