//! Summarising: the repetitions of one planned run, gathered round by round, become its result
//! (the median repetition's figures, the spread over rounds, ratios to the baseline paired
//! within each round, the warnings its figures deserve); and the exit code of an invocation.

use crate::check::trace::{analyze, TraceReport};
use crate::check::OracleKind;
use crate::engine::options::RunArgs;
use crate::engine::plan::Planned;
use crate::locks::Problem;
use crate::metrics::counters::merge;
use crate::metrics::fairness::Fairness;
use crate::metrics::latency::{ticks_histogram, LatencySummary};
use crate::metrics::stats::median_estimate;
use crate::report::quality::MIN_ROUND_PASSAGES;
use crate::report::result::{Concurrency, RoundFigure, Spread, ThreadResult};
use crate::report::store::now_secs;
use crate::report::RunResult;
use crate::runner::exec::{Latencies, Repetition, RunSpec, StopRule};
use crate::runner::fidelity::FidelityPoint;
use crate::runner::host::{Host, Load};
use crate::workload::format_duration;

/// What one planned run has gathered so far: its repetitions (with the round each ran in) and
/// their sampled latencies, merged as they come so repetitions stay small.
pub(crate) struct PointAcc {
    pub reps: Vec<(usize, Repetition)>,
    pub latency: Option<Latencies>,
    pub failed: Option<String>,
    /// The machine's load over each repetition.
    pub loads: Vec<Load>,
}

impl PointAcc {
    pub fn new() -> Self {
        PointAcc {
            reps: Vec::new(),
            latency: None,
            failed: None,
            loads: Vec::new(),
        }
    }

    pub fn stalled(&self) -> bool {
        self.reps.iter().any(|(_, r)| r.stalled.is_some())
    }

    pub fn push(&mut self, round: usize, mut rep: Repetition) {
        if let Some(lat) = rep.latency.take() {
            match &mut self.latency {
                Some(acc) => acc.add(&lat),
                None => self.latency = Some(lat),
            }
        }
        self.reps.push((round, rep));
    }
}

/// Everything a result carries that is the same for every run of one invocation.
pub(crate) struct Common<'a> {
    pub opts: &'a RunArgs,
    pub host: &'a Host,
    pub overhead: f64,
    pub fidelity: Option<FidelityPoint>,
    /// With `--rmr`: what counting costs per register access, ns.
    pub counting_overhead: Option<f64>,
}

/// Aggregates the repetitions of one planned run into its result; `base` is the baseline's
/// repetitions in the same configuration, paired round by round.
pub(crate) fn summarize(
    p: &Planned,
    spec: &RunSpec,
    acc: &PointAcc,
    ctx: &Common,
    warnings: Vec<String>,
    base: Option<(&str, &PointAcc)>,
    oversubscribed: bool,
) -> RunResult {
    let opts = ctx.opts;
    let counting_overhead = ctx.counting_overhead;
    let reps: Vec<&Repetition> = acc.reps.iter().map(|(_, r)| r).collect();
    let throughputs: Vec<f64> = reps.iter().map(|r| r.throughput_per_sec).collect();
    let spread = Spread::of(&throughputs);
    // The repetition whose throughput is the median (lower median for an even count).
    let mut order: Vec<usize> = (0..reps.len()).collect();
    order.sort_by(|&a, &b| throughputs[a].total_cmp(&throughputs[b]));
    let med = reps[order[(reps.len() - 1) / 2]];
    let npt = med.ns_per_tick;
    let empty = ticks_histogram(npt);
    let lat = |f: fn(&Latencies) -> &hdrhistogram::Histogram<u64>| {
        LatencySummary::of(acc.latency.as_ref().map_or(&empty, f), npt)
    };
    let threads = ThreadFigures::of(med);
    let nothing_measured = reps.iter().all(|r| r.passages == 0);
    let trace = merge_traces(&reps, p.entry.info.problem, spec.k);
    let warnings = point_warnings(
        warnings,
        &threads,
        med,
        acc,
        ctx,
        p,
        trace.as_ref(),
        nothing_measured,
    );
    let per_round = per_round(acc, base);
    let ratios: Vec<f64> = per_round.iter().filter_map(|f| f.vs_baseline).collect();
    let vs_base = median_estimate(&ratios);
    let stalled = reps.iter().find_map(|r| r.stalled.clone());
    let invariant_example = reps.iter().find_map(|r| r.invariant_example.clone());
    let mut result = RunResult {
        schema_version: crate::report::result::SCHEMA_VERSION,
        lock: p.entry.info.name.to_string(),
        problem: p.entry.info.problem.name().to_string(),
        source: p.entry.info.source.to_string(),
        fcfs_claimed: p.entry.info.fcfs,
        threads: p.threads,
        slots: spec.slots,
        sessions: p.mix.sessions(p.threads),
        k: spec.k,
        mix: p.mix.to_string(),
        passages: med.passages,
        nothing_measured,
        throughput_per_sec: spread.median,
        spread_wide: reps.len() > 1 && spread.wide(),
        throughput_spread: spread,
        per_round,
        repeat: reps.len(),
        latency_ns: lat(|l| &l.entry),
        latency_histogram: acc
            .latency
            .as_ref()
            .filter(|l| !l.entry.is_empty())
            .and_then(|l| {
                crate::report::hlog::encode(&crate::report::hlog::ticks_to_ns(&l.entry, npt))
            }),
        passage_ns: lat(|l| &l.passage),
        exit_ns: lat(|l| &l.exit),
        per_thread_passages: threads.per_thread.iter().map(|t| t.passages).collect(),
        per_thread: threads.per_thread,
        starved_threads: threads.starved,
        windows_uneven: threads.uneven,
        fairness_jain: threads.fairness.jain,
        fairness: threads.fairness,
        concurrency: med.inside.map(|(mean, max)| Concurrency { mean, max }),
        safety_checked: med.oracle != OracleKind::None,
        oracle: med.oracle.name().to_string(),
        safety_violations: reps.iter().map(|r| r.violations).sum(),
        invariant_failures: reps.iter().map(|r| r.invariant_failures).sum(),
        invariant_example,
        counters: merge(&med.counters, med.passages),
        rmr: med.rmr.as_ref().map(|s| rmr_json(s, counting_overhead)),
        trace,
        stalled,
        baseline: base.map(|b| b.0.to_string()),
        throughput_vs_baseline: vs_base.map(|e| e.median),
        throughput_vs_baseline_interval: vs_base.and_then(|e| e.interval),
        throughput_vs_baseline_differs: vs_base.and_then(|e| e.interval).map(|i| !i.contains(1.0)),
        pin: format!("{:?}", opts.pin()).to_lowercase(),
        smt: opts.smt,
        cpus: opts.cpus.clone(),
        mem_policy: opts.mem_policy.map(|m| m.to_string()),
        mem_pages: None,
        oversubscribed,
        wait_policy: spec.policy.name().to_string(),
        cs_ns: opts.cs().as_nanos() as u64,
        think_ns: opts.think().as_nanos() as u64,
        cs_lines: opts.cs_lines(),
        stop: match opts.stop() {
            StopRule::Duration(d) => format!("duration {}", format_duration(d)),
            StopRule::Passages(n) => format!("passages {n} per thread"),
        },
        warmup_ns: opts.warmup().as_nanos() as u64,
        harness_overhead_ns: ctx.overhead,
        harness_fidelity: ctx.fidelity.clone(),
        latency_sample: spec.latency_sample,
        latency_sample_adaptive: spec.timing_cost_ns.is_some(),
        ns_per_tick: npt,
        warnings,
        quality: Default::default(),
        host: Host {
            load: Load::worst(&acc.loads),
            ..ctx.host.clone()
        },
        version: env!("CARGO_PKG_VERSION").to_string(),
        build: crate::report::build::Build::this(),
        timestamp: now_secs(),
    };
    result.quality = crate::report::quality::assess(&result);
    result
}

/// What the median repetition's threads did: each one's passages and rate over its own window,
/// whether the windows differ, fairness and the starved.
struct ThreadFigures {
    per_thread: Vec<ThreadResult>,
    uneven: bool,
    wmin: f64,
    wmax: f64,
    fairness: Fairness,
    starved: Vec<usize>,
}

impl ThreadFigures {
    fn of(med: &Repetition) -> ThreadFigures {
        let per_thread: Vec<ThreadResult> = med
            .threads
            .iter()
            .enumerate()
            .map(|(i, t)| ThreadResult {
                thread: i,
                cpu: t.cpu,
                passages: t.passages,
                window_ns: t.window_ns,
                rate_per_sec: if t.window_ns > 0.0 {
                    t.passages as f64 * 1e9 / t.window_ns
                } else {
                    0.0
                },
                ..ThreadResult::default()
            })
            .collect();
        let windows: Vec<f64> = per_thread.iter().map(|t| t.window_ns).collect();
        let wmax = windows.iter().cloned().fold(0.0, f64::max);
        let wmin = windows.iter().cloned().fold(f64::MAX, f64::min);
        let uneven = wmax > 0.0 && (wmax - wmin) / wmax > 0.05;
        let rates: Vec<f64> = per_thread.iter().map(|t| t.rate_per_sec).collect();
        let fairness = Fairness::of(&rates);
        let busiest = rates.iter().cloned().fold(0.0, f64::max);
        let starved: Vec<usize> = if rates.len() > 1 {
            (0..rates.len())
                .filter(|&i| rates[i] < busiest * crate::report::result::STARVED_BELOW)
                .collect()
        } else {
            Vec::new()
        };
        ThreadFigures {
            per_thread,
            uneven,
            wmin,
            wmax,
            fairness,
            starved,
        }
    }
}

/// The warnings one result carries: its thread count's (`given`), then what its figures show.
#[allow(clippy::too_many_arguments)]
fn point_warnings(
    given: Vec<String>,
    threads: &ThreadFigures,
    med: &Repetition,
    acc: &PointAcc,
    ctx: &Common,
    p: &Planned,
    trace: Option<&TraceReport>,
    nothing_measured: bool,
) -> Vec<String> {
    let opts = ctx.opts;
    let mut warnings = given;
    if !threads.starved.is_empty() {
        warnings.push(format!(
            "threads {:?} starved: below half the busiest thread's rate (passages per thread {:?})",
            threads.starved,
            med.threads.iter().map(|t| t.passages).collect::<Vec<_>>()
        ));
    }
    if nothing_measured {
        warnings.push(format!(
            "nothing measured: no passage completed in the measured window of any round (cs {}, think {}, {})",
            format_duration(opts.cs()),
            format_duration(opts.think()),
            match opts.stop() {
                StopRule::Duration(d) => format!("duration {}", format_duration(d)),
                StopRule::Passages(n) => format!("passages {n} per thread"),
            }
        ));
    } else {
        let count = acc.latency.as_ref().map_or(0, |l| l.entry.len());
        if count < 10 {
            warnings.push(format!(
                "latency percentiles rest on {count} timed passage{}: time more with --latency-sample 1 or a longer --duration",
                if count == 1 { "" } else { "s" }
            ));
        }
    }
    for t in &med.threads {
        if let Some(e) = &t.pin_error {
            warnings.push(format!("pinning failed ({e}); that thread ran unpinned"));
        }
    }
    if threads.uneven {
        warnings.push(format!(
            "threads ran for different windows ({} to {}): rates of threads that finished early are inflated",
            crate::report::nanos(threads.wmin),
            crate::report::nanos(threads.wmax)
        ));
    }
    if let Some(t) = trace {
        if p.entry.info.fcfs && t.doorway_observed && t.fcfs_violations > 0 {
            warnings.push(format!(
                "{} claims FCFS but the trace shows {} violations",
                p.entry.info.name, t.fcfs_violations
            ));
        }
    }
    if let (Some(r), Some(ns)) = (&med.rmr, ctx.counting_overhead) {
        let per_passage = if r.passages > 0 {
            r.accesses as f64 / r.passages as f64
        } else {
            0.0
        };
        warnings.push(format!(
            "rmr ({}): {:.1} RMRs per passage (max {}); counted on the counting memory, so timing is slower than a plain run: +{ns:.1} ns per access × {per_passage:.1} accesses per passage ≈ +{} per passage",
            r.model,
            r.per_passage_mean,
            r.per_passage_max,
            crate::report::nanos(ns * per_passage)
        ));
    }
    warnings
}

/// Paired ratios: this lock's throughput over the baseline's in the same round. A round in
/// which either measured fewer than [`MIN_ROUND_PASSAGES`] passages is not paired: a ratio to
/// (or of) a handful of passages is noise, and the `few-paired-rounds` flag says what is left.
fn per_round(acc: &PointAcc, base: Option<(&str, &PointAcc)>) -> Vec<RoundFigure> {
    acc.reps
        .iter()
        .map(|(round, r)| RoundFigure {
            round: *round,
            throughput_per_sec: r.throughput_per_sec,
            vs_baseline: base.and_then(|(_, b)| {
                let (_, br) = b.reps.iter().find(|(br, _)| br == round)?;
                (br.throughput_per_sec > 0.0
                    && br.passages >= MIN_ROUND_PASSAGES
                    && r.passages >= MIN_ROUND_PASSAGES)
                    .then(|| r.throughput_per_sec / br.throughput_per_sec)
            }),
            passages: Some(r.passages),
        })
        .collect()
}

fn merge_traces(reps: &[&Repetition], problem: Problem, k: usize) -> Option<TraceReport> {
    let mut merged: Option<TraceReport> = None;
    for r in reps {
        let Some((records, truncated)) = &r.trace else {
            continue;
        };
        let t = analyze(records, problem, k, r.ns_per_tick, *truncated);
        merged = Some(match merged {
            None => t,
            Some(mut m) => {
                m.passages += t.passages;
                m.doorway_observed &= t.doorway_observed;
                m.fcfs_violations += t.fcfs_violations;
                m.fcfs_example = m.fcfs_example.or(t.fcfs_example);
                m.unconflicted_passages += t.unconflicted_passages;
                m.unconflicted_wait_p50_ns =
                    m.unconflicted_wait_p50_ns.or(t.unconflicted_wait_p50_ns);
                m.unconflicted_wait_max_ns =
                    match (m.unconflicted_wait_max_ns, t.unconflicted_wait_max_ns) {
                        (Some(a), Some(b)) => Some(a.max(b)),
                        (a, b) => a.or(b),
                    };
                m.fife_violations = match (m.fife_violations, t.fife_violations) {
                    (Some(a), Some(b)) => Some(a + b),
                    (a, b) => a.or(b),
                };
                m.truncated |= t.truncated;
                m
            }
        });
    }
    merged
}

/// The `rmr` field of a result: `{model, per_passage_mean, per_passage_max, by_section, ...}`.
fn rmr_json(s: &crate::mem::counting::RmrSummary, overhead: Option<f64>) -> serde_json::Value {
    serde_json::json!({
        "model": s.model,
        "per_passage_mean": s.per_passage_mean,
        "per_passage_max": s.per_passage_max,
        "by_section": s.by_section,
        "by_section_max": s.by_section_max,
        "passages": s.passages,
        "accesses_per_passage": if s.passages > 0 { s.accesses as f64 / s.passages as f64 } else { 0.0 },
        "counting_overhead_ns_per_access": overhead,
    })
}

/// Says on stderr what went wrong or deserves a look, and returns the exit code: 1 for a
/// safety violation, register-bound failure, stall, FCFS overtaking or failed run; else 3
/// when a run measured nothing; else 0.
pub(crate) fn exit_summary(
    results: &[RunResult],
    failed: bool,
    err: &mut dyn std::io::Write,
) -> i32 {
    let mut code = 0;
    let mut empty = false;
    for r in results {
        let what = format!("{} ({} threads, {})", r.lock, r.threads, r.mix);
        if r.safety_violations > 0 || r.invariant_failures > 0 {
            let _ = writeln!(
                err,
                "error: {what}: {} safety violations, {} register-bound failures{}",
                r.safety_violations,
                r.invariant_failures,
                r.invariant_example
                    .as_ref()
                    .map(|e| format!(" (first: {e})"))
                    .unwrap_or_default()
            );
            code = 1;
        }
        if let Some(s) = &r.stalled {
            let _ = writeln!(err, "error: {what} stalled: {s}");
            code = 1;
        }
        if let Some(t) = &r.trace {
            if r.fcfs_claimed && t.doorway_observed && t.fcfs_violations > 0 {
                let _ = writeln!(
                    err,
                    "error: {} claims FCFS; trace shows {} violations",
                    r.lock, t.fcfs_violations
                );
                code = 1;
            }
        }
        if r.nothing_measured {
            let _ = writeln!(
                err,
                "error: {what}: nothing measured (no passage completed in the measured window): measure longer or shorten --cs/--think"
            );
            empty = true;
        }
        if !r.starved_threads.is_empty() {
            let _ = writeln!(
                err,
                "note: {what}: threads {:?} starved (below half the busiest thread's rate; passages {:?})",
                r.starved_threads, r.per_thread_passages
            );
        }
    }
    if failed {
        code = 1;
    }
    if code == 0 && empty {
        code = 3;
    }
    code
}

/// The warning of a busy host, as hyperfine warns of outliers.
pub(crate) fn busy_warning(load: &Load) -> String {
    format!(
        "the host is busy ({}): figures measured now are disturbed by other work and their spreads are wide; measure on an idle machine (scripts/check-server.sh says what else runs)",
        load.reasons.join(", ")
    )
}
