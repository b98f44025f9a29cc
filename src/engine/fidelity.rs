//! The harness against a bare loop of the same lock: the template of a fidelity run, the
//! harness's cost above an empty loop, the default latency sampling, the measurement behind
//! `lockbench fidelity`, and the plug-in boundary's cost (`fidelity --boundary`).

use std::io::Write as _;
use std::time::Duration;

use anyhow::Result;

use crate::engine::options::OracleArg;
use crate::engine::plan::oracle_for;
use crate::mem::WaitPolicy;
use crate::metrics::counters;
use crate::metrics::stats::{median_estimate, Spread};
use crate::registry::{lookup, LockEntry};
use crate::report::store::Store;
use crate::runner::exec::{
    auto_latency_sample, timed_passage_cost_ns, LoopKind, RunFailure, RunSpec, StopRule,
};
use crate::runner::fidelity::{self, FidelityPoint};
use crate::runner::host::{Load, LoadSample};

/// The locks `fidelity` measures by default: the common baselines.
pub const FIDELITY_LOCKS: [&str; 4] = ["parking-lot-mutex", "spin-ticket", "std-mutex", "ticket"];

/// The lock whose fidelity every `run` reports in its header: the fastest uncontended lock of
/// the common baselines, so the figure is the harshest one.
pub(crate) const FIDELITY_REFERENCE: &str = "parking-lot-mutex";

/// A run of `entry` at `threads` threads with the defaults of a timing run (no think time,
/// empty critical section, default oracle), pinned by `placement`: the template that
/// `fidelity` and the header's fidelity figure measure.
pub(crate) fn fidelity_template(
    entry: LockEntry,
    threads: usize,
    placement: &[usize],
    policy: WaitPolicy,
    duration: Duration,
    warmup: Duration,
    (latency_sample, timing_cost_ns): (u64, Option<f64>),
) -> RunSpec {
    let k = 1;
    RunSpec {
        oracle: oracle_for(OracleArg::Auto, &entry, k),
        warmup,
        latency_sample,
        timing_cost_ns,
        cpus: (0..threads)
            .map(|t| crate::runner::topology::cpu_for(placement, t))
            .collect(),
        policy,
        counters: counters::default_specs(),
        ..RunSpec::new(entry.subject(), threads, StopRule::Duration(duration))
    }
}

/// The harness's cost above an empty loop, ns per passage: `noop` in the default loop against
/// `noop` in the bare loop, at one thread.
pub(crate) fn noop_overhead(
    placement: &[usize],
    sampling: (u64, Option<f64>),
    rounds: usize,
) -> Result<FidelityPoint> {
    let noop = lookup("noop")?;
    let t = fidelity_template(
        noop,
        1,
        placement,
        WaitPolicy::Spin,
        Duration::from_millis(30),
        Duration::from_millis(10),
        sampling,
    );
    Ok(fidelity::measure(&t, rounds)?)
}

/// The default latency sampling, measured here: the base rate from what timing one passage
/// costs, and that cost, with which each thread adapts the rate after its warm-up.
pub fn default_sampling() -> (u64, Option<f64>) {
    let cost = timed_passage_cost_ns();
    (auto_latency_sample(cost), Some(cost))
}

/// What one `fidelity` invocation measures.
pub struct FidelityPlan<'a> {
    pub entries: &'a [LockEntry],
    pub threads: &'a [usize],
    pub placement: &'a [usize],
    pub duration: Duration,
    pub warmup: Duration,
    pub sampling: (u64, Option<f64>),
    pub rounds: usize,
    pub oracle: OracleArg,
    /// How waiting threads wait in both loops.
    pub wait: WaitPolicy,
}

/// The load of the host over one fidelity point, saved beside the points (`fidelity-load.json`).
#[derive(serde::Serialize)]
struct PointLoad {
    lock: String,
    threads: usize,
    load: Load,
}

/// `noop` at one thread, then every lock at every thread count, harness against bare loop in
/// interleaved rounds; progress on stderr; the points saved in `store` as each finishes, with
/// the host's load over each (a busy host is warned about, before the first point and after
/// each point it disturbed). Beside each point: what kept the host busy while it ran (the
/// `noop` point: before it), or None.
pub fn measure_all(
    f: &FidelityPlan,
    store: &Store,
) -> Result<(Vec<FidelityPoint>, Vec<Option<String>>)> {
    let (placement, sampling) = (f.placement, f.sampling);
    let err = &mut crate::opts::io::stderr();
    let mut points = Vec::new();
    let mut loads: Vec<PointLoad> = Vec::new();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    // The load before anything runs: 100 ms of this process asleep.
    let before = LoadSample::take(true);
    std::thread::sleep(Duration::from_millis(100));
    let load = before.until(&LoadSample::take(false), 0, cpus);
    let busy_of = |l: &Load| l.busy.then(|| l.reasons.join(", "));
    let mut busy = vec![busy_of(&load)];
    if load.busy {
        let _ = writeln!(
            err,
            "warning: {}",
            crate::engine::summarize::busy_warning(&load)
        );
    }
    let noop = noop_overhead(placement, sampling, f.rounds)?;
    let _ = writeln!(
        err,
        "noop at 1 thread: the harness adds {} to an empty loop",
        crate::report::harness_adds(noop.added_ns_per_passage.unwrap_or(f64::NAN))
    );
    points.push(noop);
    'points: for &t in f.threads {
        for e in f.entries {
            let mut spec = fidelity_template(
                e.clone(),
                t,
                placement,
                f.wait,
                f.duration,
                f.warmup,
                sampling,
            );
            spec.oracle = oracle_for(f.oracle, e, spec.k);
            let before = LoadSample::take(true);
            let point = fidelity::measure(&spec, f.rounds);
            // A point cut short by SIGINT or SIGTERM is not a measurement.
            if crate::runner::interrupted().is_some() {
                break 'points;
            }
            let point = point?;
            let workers = if t > cpus { 0 } else { t };
            let load = before.until(&LoadSample::take(false), workers, cpus);
            let _ = writeln!(
                err,
                "{} t={t}: harness/bare {}{}",
                point.lock,
                crate::report::estimate(&point.ratio),
                if load.busy {
                    format!(" (host busy: {})", load.reasons.join(", "))
                } else {
                    String::new()
                }
            );
            busy.push(busy_of(&load));
            loads.push(PointLoad {
                lock: point.lock.clone(),
                threads: t,
                load,
            });
            points.push(point);
            store.save_json("fidelity.json", &points)?;
            store.save_json("fidelity-load.json", &loads)?;
        }
    }
    let busy_loads: Vec<Load> = loads
        .iter()
        .map(|l| l.load.clone())
        .filter(|l| l.busy)
        .collect();
    if let Some(w) = Load::worst(&busy_loads) {
        let _ = writeln!(
            err,
            "warning: {} of {} points were measured on a busy host (worst: {}); their loads are in fidelity-load.json",
            busy_loads.len(),
            loads.len(),
            w.reasons.join(", ")
        );
    }
    Ok((points, busy))
}

/// The plug-in boundary: one lock compiled in against the same lock built as a C plug-in, each
/// in a bare loop (`enter; exit`, nothing else) at one thread, in interleaved rounds.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct BoundaryPoint {
    /// The plug-in's lock.
    pub plugin: String,
    /// The built-in lock it is set against.
    pub compiled: String,
    /// Rounds (each runs both bare loops once, alternating which goes first).
    pub rounds: usize,
    /// The built-in's time per passage, ns (median over rounds).
    pub compiled_ns_per_passage: f64,
    /// The plug-in's time per passage, ns (median over rounds).
    pub plugin_ns_per_passage: f64,
    /// Plug-in minus built-in, ns per passage, paired within each round: median and interval.
    pub boundary_ns_per_passage: crate::metrics::stats::Estimate,
    /// The per-round differences, ns.
    pub per_round_ns: Vec<f64>,
    /// Largest minus smallest per-round difference, ns.
    pub range_ns: f64,
}

/// Measures `plugin` against `compiled` (see [`BoundaryPoint`]) for `rounds` rounds of
/// `duration` each, pinned by `placement`.
pub fn measure_boundary(
    compiled: &LockEntry,
    plugin: &LockEntry,
    placement: &[usize],
    (duration, warmup): (Duration, Duration),
    rounds: usize,
) -> Result<BoundaryPoint, RunFailure> {
    let spec = |e: &LockEntry| {
        fidelity_template(
            e.clone(),
            1,
            placement,
            WaitPolicy::Spin,
            duration,
            warmup,
            (1, None),
        )
    };
    let specs = [spec(compiled), spec(plugin)];
    let (mut ns, mut diffs) = ([vec![], vec![]], vec![]);
    for round in 0..rounds.max(1) {
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        let mut t = [0.0f64; 2];
        for i in order {
            let s = &specs[i];
            let rep = (s.lock.bench)(s, LoopKind::Bare)?;
            let name = s.lock.info.name;
            if let Some(why) = rep.stalled {
                return Err(RunFailure(format!("{name}: {why}")));
            }
            if rep.throughput_per_sec <= 0.0 {
                return Err(RunFailure(format!(
                    "{name}: no passage measured (lengthen the duration)"
                )));
            }
            t[i] = 1e9 / rep.throughput_per_sec;
        }
        ns[0].push(t[0]);
        ns[1].push(t[1]);
        diffs.push(t[1] - t[0]);
        if crate::runner::interrupted().is_some() {
            break;
        }
    }
    let med = |v: &[f64]| median_estimate(v).map_or(0.0, |e| e.median);
    let spread = Spread::of(&diffs);
    Ok(BoundaryPoint {
        plugin: plugin.info.name.to_string(),
        compiled: compiled.info.name.to_string(),
        rounds: diffs.len(),
        compiled_ns_per_passage: med(&ns[0]),
        plugin_ns_per_passage: med(&ns[1]),
        boundary_ns_per_passage: median_estimate(&diffs).expect("at least one round"),
        range_ns: spread.max - spread.min,
        per_round_ns: diffs,
    })
}
