//! The commands: `list`, `run`, `verify`, `fidelity`.

use std::io::Write as _;

use anyhow::{Context, Result};

use std::time::Duration;

use crate::check::trace::{analyze, TraceReport};
use crate::check::OracleKind;
use crate::cmd::fidelity::Args as FidelityArgs;
use crate::engine::options::Limits;
use crate::engine::options::{OracleArg, RunArgs, WaitArg};
use crate::error::{usage, UsageError};
use crate::locks::Problem;
use crate::mem::WaitPolicy;
use crate::metrics::counters::{self, merge};
use crate::metrics::fairness::Fairness;
use crate::metrics::latency::{ticks_histogram, LatencySummary};
use crate::metrics::stats::median_estimate;
use crate::registry::{lookup, registry, LockEntry};
use crate::report::result::{Concurrency, RoundFigure, Spread, ThreadResult};
use crate::report::store::{now_secs, Store};
use crate::report::{rate, Format, RunResult};
use crate::runner::exec::{
    auto_latency_sample, run_once, timed_passage_cost_ns, Latencies, Repetition, RunSpec, StopRule,
};
use crate::runner::fidelity::{self, FidelityPoint};
use crate::runner::host::Host;
use crate::runner::topology::{PinMode, Topology};
use crate::workload::rng::Rng;
use crate::workload::{format_duration, parse_duration, Mix};

/// Can `entry` serve `mix` at `n` threads? A k-exclusion lock ignores sessions, so it serves
/// no mix that can put two requests in one session and two in different ones; at 1 thread the
/// mix is judged as at 2, so `--lock all` holds the same locks at every thread count.
fn fits(entry: &LockEntry, mix: &Mix, n: usize) -> bool {
    entry.info.problem != Problem::KExclusion || !mix.needs_groups(n.max(2))
}

/// One planned run.
struct Planned {
    entry: LockEntry,
    threads: usize,
    mix: Mix,
    is_baseline: bool,
}

/// The whole plan of an invocation, validated before anything runs or is written.
struct Plan {
    runs: Vec<Planned>,
    thread_counts: Vec<usize>,
    placement: Vec<usize>,
    warnings: Vec<String>,
    /// Per thread count: wait policy and whether threads outnumber CPUs.
    policy_for: Vec<(usize, WaitPolicy, bool)>,
}

fn plan(opts: &RunArgs, topo: &Topology) -> Result<Plan, UsageError> {
    let names = opts.locks();
    let explicit: Option<Vec<LockEntry>> = if names.iter().any(|l| l == "all") {
        if names.len() > 1 {
            return usage(format!(
                "{}: all cannot be combined with names",
                opts.name("lock")
            ));
        }
        None
    } else {
        Some(
            names
                .iter()
                .map(|n| {
                    lookup(n).map_err(|e| UsageError(format!("{}: {}", opts.name("lock"), e.0)))
                })
                .collect::<Result<_, _>>()?,
        )
    };
    if let (Some(model), Some(locks)) = (opts.rmr, &explicit) {
        if let Some(e) = locks.iter().find(|e| e.counting.is_none()) {
            return usage(format!(
                "--rmr {model}: {} is not written over the register abstraction, so its RMRs cannot be counted (drop it, or run without --rmr)",
                e.info.name
            ));
        }
    }
    let baseline = lookup(&opts.baseline()).map_err(|_| {
        UsageError(format!(
            "unknown baseline {:?} ({}): `lockbench list` shows the names",
            opts.baseline(),
            opts.name("baseline")
        ))
    })?;
    let mut warnings = Vec::new();
    if let Some(list) = &explicit {
        if !list.iter().any(|e| e.info.name == baseline.info.name) {
            warnings.push(format!(
                "baseline {} is not among the locks asked for: it runs too, in every configuration it fits, so the others have a ratio",
                baseline.info.name
            ));
        }
    }
    if opts.smt && !topo.smt() {
        warnings.push("--smt on a machine without SMT siblings: nothing changes".into());
    }

    let placement = topo.placement(opts.pin(), opts.smt);
    let cpus_available = match opts.pin() {
        PinMode::None => topo.logical_cpus(),
        _ => placement.len(),
    };
    let thread_counts = opts.threads.threads.clone().unwrap_or_else(|| {
        let all = if opts.smt {
            cpus_available
        } else {
            topo.physical_cores()
        }
        .max(1);
        if all > 1 {
            vec![1, all]
        } else {
            vec![1]
        }
    });
    let mut policy_for = Vec::new();
    for &t in &thread_counts {
        let over = t > cpus_available;
        if over && !opts.oversubscribe {
            let what = match opts.pin() {
                PinMode::Physical if !opts.smt => "physical cores",
                _ => "CPUs",
            };
            return usage(format!(
                "{t} threads but only {cpus_available} {what} to place them on: pass --oversubscribe \
                 (threads then share cores and wait with spin-then-yield){} or fewer --threads",
                if opts.pin() == PinMode::Physical && !opts.smt && topo.smt() { ", --smt" } else { "" }
            ));
        }
        let policy = match (opts.wait, over) {
            (Some(WaitArg::Spin), _) => WaitPolicy::Spin,
            (Some(WaitArg::Yield), _) | (None, true) => WaitPolicy::YIELD,
            (None, false) => WaitPolicy::Spin,
        };
        if over {
            warnings.push(format!(
                "{t} threads on {cpus_available} CPUs: oversubscribed, waiting with {}{}",
                policy.name(),
                if opts.wait.is_none() {
                    " (the default when oversubscribed)"
                } else {
                    ""
                }
            ));
            if policy == WaitPolicy::Spin {
                warnings.push("pure spinning while oversubscribed: FIFO locks may collapse (a waiter can hold the core its predecessor needs)".into());
            }
        }
        if opts.k.is_some() && opts.k() >= t {
            warnings.push(format!(
                "k = {} ≥ {t} threads: a k-exclusion lock never makes anyone wait at {t} threads",
                opts.k()
            ));
        }
        if let Some(s) = opts.slots.filter(|&s| s < t) {
            warnings.push(format!(
                "{} {s} is below {t} threads: at {t} threads locks are built for {t} processes",
                opts.name("slots")
            ));
        }
        policy_for.push((t, policy, over));
    }

    let mut runs = Vec::new();
    for &t in &thread_counts {
        for mix in &opts.mixes() {
            let mut locks: Vec<LockEntry> = match &explicit {
                Some(list) => {
                    for e in list {
                        if !fits(e, mix, t) {
                            return usage(format!(
                                "{} is a k-exclusion lock and ignores sessions; it cannot serve the GME mix {mix}: use --mix single or distinct, or leave it out",
                                e.info.name
                            ));
                        }
                    }
                    list.clone()
                }
                None => {
                    let (fit, left): (Vec<LockEntry>, Vec<LockEntry>) = registry()
                        .into_iter()
                        .filter(|e| e.info.safe)
                        .partition(|e| fits(e, mix, t));
                    if !left.is_empty() {
                        let names: Vec<&str> = left.iter().map(|e| e.info.name).collect();
                        let note = format!(
                            "{} left out of mix {mix}: k-exclusion locks ignore sessions",
                            names.join(", ")
                        );
                        if !warnings.contains(&note) {
                            warnings.push(note);
                        }
                    }
                    fit
                }
            };
            let base_fits = fits(&baseline, mix, t);
            locks.retain(|e| e.info.name != baseline.info.name);
            if base_fits {
                runs.push(Planned {
                    entry: baseline.clone(),
                    threads: t,
                    mix: mix.clone(),
                    is_baseline: true,
                });
            }
            for e in locks {
                runs.push(Planned {
                    entry: e,
                    threads: t,
                    mix: mix.clone(),
                    is_baseline: false,
                });
            }
        }
    }
    Ok(Plan {
        runs,
        thread_counts,
        placement,
        warnings,
        policy_for,
    })
}

/// What one planned run has gathered so far: its repetitions (with the round each ran in) and
/// their sampled latencies, merged as they come so repetitions stay small.
struct PointAcc {
    reps: Vec<(usize, Repetition)>,
    latency: Option<Latencies>,
    failed: Option<String>,
}

impl PointAcc {
    fn new() -> Self {
        PointAcc {
            reps: Vec::new(),
            latency: None,
            failed: None,
        }
    }

    fn stalled(&self) -> bool {
        self.reps.iter().any(|(_, r)| r.stalled.is_some())
    }

    fn push(&mut self, round: usize, mut rep: Repetition) {
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
struct Common<'a> {
    opts: &'a RunArgs,
    host: &'a Host,
    overhead: f64,
    fidelity: Option<FidelityPoint>,
    /// With `--rmr`: what counting costs per register access, ns.
    counting_overhead: Option<f64>,
}

/// Aggregates the repetitions of one planned run into its result; `base` is the baseline's
/// repetitions in the same configuration, paired round by round.
fn summarize(
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
        })
        .collect();
    let windows: Vec<f64> = per_thread.iter().map(|t| t.window_ns).collect();
    let wmax = windows.iter().cloned().fold(0.0, f64::max);
    let wmin = windows.iter().cloned().fold(f64::MAX, f64::min);
    let windows_uneven = wmax > 0.0 && (wmax - wmin) / wmax > 0.05;
    let rates: Vec<f64> = per_thread.iter().map(|t| t.rate_per_sec).collect();
    let fairness = Fairness::of(&rates);
    let busiest = rates.iter().cloned().fold(0.0, f64::max);
    let starved_threads: Vec<usize> = if rates.len() > 1 {
        (0..rates.len())
            .filter(|&i| rates[i] < busiest * crate::report::result::STARVED_BELOW)
            .collect()
    } else {
        Vec::new()
    };
    let nothing_measured = reps.iter().all(|r| r.passages == 0);
    let mut warnings = warnings;
    if !starved_threads.is_empty() {
        warnings.push(format!(
            "threads {starved_threads:?} starved: below half the busiest thread's rate (passages per thread {:?})",
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
                "latency percentiles rest on {count} timed passage{}: lower --latency-sample or measure longer",
                if count == 1 { "" } else { "s" }
            ));
        }
    }
    for t in &med.threads {
        if let Some(e) = &t.pin_error {
            warnings.push(format!("pinning failed ({e}); that thread ran unpinned"));
        }
    }
    if windows_uneven {
        warnings.push(format!(
            "threads ran for different windows ({} to {}): rates of threads that finished early are inflated",
            crate::report::nanos(wmin),
            crate::report::nanos(wmax)
        ));
    }
    let trace = merge_traces(&reps, p.entry.info.problem, spec.k);
    if let Some(t) = &trace {
        if p.entry.info.fcfs && t.doorway_observed && t.fcfs_violations > 0 {
            warnings.push(format!(
                "{} claims FCFS but the trace shows {} violations",
                p.entry.info.name, t.fcfs_violations
            ));
        }
    }
    if let (Some(r), Some(ns)) = (&med.rmr, counting_overhead) {
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
    // Paired ratios: this lock's throughput over the baseline's in the same round.
    let per_round: Vec<RoundFigure> = acc
        .reps
        .iter()
        .map(|(round, r)| RoundFigure {
            round: *round,
            throughput_per_sec: r.throughput_per_sec,
            vs_baseline: base.and_then(|(_, b)| {
                let (_, br) = b.reps.iter().find(|(br, _)| br == round)?;
                (br.throughput_per_sec > 0.0).then(|| r.throughput_per_sec / br.throughput_per_sec)
            }),
        })
        .collect();
    let ratios: Vec<f64> = per_round.iter().filter_map(|f| f.vs_baseline).collect();
    let vs_base = median_estimate(&ratios);
    let stalled = reps.iter().find_map(|r| r.stalled.clone());
    let invariant_example = reps.iter().find_map(|r| r.invariant_example.clone());
    RunResult {
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
        per_thread_passages: per_thread.iter().map(|t| t.passages).collect(),
        per_thread,
        starved_threads,
        windows_uneven,
        fairness_jain: fairness.jain,
        fairness,
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
        host: ctx.host.clone(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        timestamp: now_secs(),
    }
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

/// The oracle a run of `entry` uses under `choice`.
fn oracle_for(choice: OracleArg, entry: &LockEntry, k: usize) -> OracleKind {
    let problem = entry.info.problem;
    match choice {
        OracleArg::Auto => OracleKind::default_for(problem, k),
        OracleArg::Sampled => OracleKind::Sampled.for_lock(problem, k),
        OracleArg::SelfCheck => OracleKind::SelfCheck.for_lock(problem, k),
        OracleArg::Counting => OracleKind::Counting,
        OracleArg::None => OracleKind::None,
    }
}

/// A run of `entry` at `threads` threads with the defaults of a timing run (no think time,
/// empty critical section, default oracle), pinned by `placement`: the template that
/// `fidelity` and the header's fidelity figure measure.
fn fidelity_template(
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
fn noop_overhead(
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
fn default_sampling() -> (u64, Option<f64>) {
    let cost = timed_passage_cost_ns();
    (auto_latency_sample(cost), Some(cost))
}

/// The lock whose fidelity every `run` reports in its header: the fastest uncontended lock of
/// the common baselines, so the figure is the harshest one.
const FIDELITY_REFERENCE: &str = "parking-lot-mutex";

/// Checks, without creating anything, that results can be saved under `out`: it is a
/// writable directory, or can be created in one.
fn check_out(opts: &RunArgs) -> Result<(), UsageError> {
    let out = opts.out();
    let what = opts.name("out");
    // Writing is tried, not inferred from permissions (root passes `access` everywhere,
    // and /proc or a read-only mount refuse anyway); the probe file is removed at once.
    let writable = |p: &std::path::Path| {
        let probe = p.join(format!(".lockbench-probe-{}", std::process::id()));
        let ok = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&probe)
            .is_ok();
        if ok {
            let _ = std::fs::remove_file(&probe);
        }
        ok
    };
    let mut probe = out.as_path();
    loop {
        if probe.as_os_str().is_empty() {
            probe = std::path::Path::new(".");
        }
        match std::fs::metadata(probe) {
            Ok(m) if !m.is_dir() => {
                return usage(format!(
                    "{what} {}: {} is not a directory; choose a directory for the results",
                    out.display(),
                    probe.display()
                ));
            }
            Ok(_) if !writable(probe) => {
                return usage(format!(
                    "{what} {}: cannot write in {}; choose a directory you can write",
                    out.display(),
                    probe.display()
                ));
            }
            Ok(_) => return Ok(()),
            Err(_) => match probe.parent() {
                Some(parent) => probe = parent,
                None => {
                    return usage(format!(
                        "{what} {}: no such place; choose a directory you can write",
                        out.display()
                    ))
                }
            },
        }
    }
}

/// The results directory of one invocation, made when the first result is saved: an
/// invocation that saves nothing leaves nothing behind.
struct LazyStore {
    root: std::path::PathBuf,
    what: String,
    /// Save into this directory instead of a new `run-<UTC time>/` under `root` (a sweep's).
    fixed: Option<std::path::PathBuf>,
    store: Option<Store>,
}

impl LazyStore {
    fn get(&mut self) -> Result<&mut Store, UsageError> {
        if self.store.is_none() {
            let s = match &self.fixed {
                Some(dir) => Store::at(dir),
                None => Store::create(&self.root),
            }
            .map_err(|e| UsageError(format!("{} {}: {e:#}", self.what, self.root.display())))?;
            self.store = Some(s);
        }
        Ok(self.store.as_mut().expect("just made"))
    }

    fn dir(&self) -> Option<&std::path::Path> {
        self.store.as_ref().map(|s| s.dir())
    }
}

/// A progress callback: (repetitions done, repetitions planned, what just ran).
pub type Progress<'a> = dyn FnMut(usize, usize, &str) + 'a;

/// What a caller of the run engine ([`run_with`]) adds to a plain `run`: where results go,
/// silence, a progress callback, calibrations carried over from an earlier invocation.
#[derive(Default)]
pub struct Hooks<'a> {
    /// Save into this directory (created when missing) instead of a new `run-<UTC time>/`
    /// under `--out`.
    pub dir: Option<std::path::PathBuf>,
    /// Print warnings only: no progress lines, no table.
    pub quiet: bool,
    /// Called after each repetition with (repetitions done, repetitions planned, what ran).
    pub progress: Option<&'a mut Progress<'a>>,
    /// Calibrations to reuse instead of measuring them again.
    pub calibration: Option<Calibration>,
}

/// What every `run` measures before its runs: the latency sampling rate, the harness's cost
/// per passage and the harness fidelity of a reference lock.
#[derive(Clone, Debug)]
pub struct Calibration {
    /// One passage in this many is timed (at least; see [`RunSpec::timing_cost_ns`]).
    pub latency_sample: u64,
    /// What timing one passage costs, ns, when the rate is the default and adapts.
    pub timing_cost_ns: Option<f64>,
    /// ns the harness adds per passage.
    pub overhead: f64,
    /// Harness/bare throughput of the reference lock.
    pub fidelity: Option<FidelityPoint>,
}

/// What [`run_with`] returns.
pub struct Outcome {
    /// The exit code `run` would return.
    pub code: i32,
    /// The final results.
    pub results: Vec<RunResult>,
    /// Every planned repetition was attempted (false: stopped early).
    pub complete: bool,
    /// The calibrations used, for the next invocation to reuse.
    pub calibration: Calibration,
}

/// Repetitions `run` would make with `opts` (runs × rounds): `opts` layered and validated as
/// `run` validates them, so a sweep checks every point before measuring any.
pub fn planned_repetitions(opts: &RunArgs, limits: &Limits) -> Result<usize> {
    let topo = Topology::detect().context("reading the CPU topology")?;
    Ok(checked_plan(opts, &topo, limits)?.runs.len() * opts.rounds())
}

/// The plan of `opts` with the checks that need it (the counting memory's process limit, the
/// traces' memory) and what they change (`--rmr` leaves out locks it cannot count): what
/// `run` measures, and what a sweep validates each point against before measuring any.
fn checked_plan(opts: &RunArgs, topo: &Topology, limits: &Limits) -> Result<Plan, UsageError> {
    let mut plan = plan(opts, topo)?;
    let most = crate::mem::counting::MAX_PROCESSES;
    if opts.rmr.is_some()
        && opts
            .slots
            .unwrap_or(0)
            .max(*plan.thread_counts.iter().max().unwrap_or(&0))
            > most
    {
        return Err(UsageError(format!(
            "{} counts at most {most} processes: lower the thread count and slots, or run without it",
            opts.name("rmr")
        )));
    }
    if opts.rmr.is_some() {
        let before = plan.runs.len();
        plan.runs.retain(|r| r.entry.counting.is_some());
        if plan.runs.len() < before {
            plan.warnings.push(
                "--rmr: locks not written over the register abstraction (std, parking_lot, spin, condvar baselines) are left out".into(),
            );
        }
    }
    if opts.trace {
        for &t in &plan.thread_counts {
            let cap = limits.trace_capacity(t);
            if cap < 1000 {
                return usage(format!(
                    "--trace at {t} threads: the traces would not fit in the memory available; trace fewer threads"
                ));
            }
            if cap < crate::engine::options::TRACE_CAPACITY {
                plan.warnings.push(format!(
                    "{t} threads: traces keep {cap} passages per thread (what fits in the memory available); later passages are not traced"
                ));
            }
        }
    }
    Ok(plan)
}

/// `lockbench run`: returns the process exit code (0 ok; 1 a safety failure, stall or FCFS
/// overtaking; 2 bad input; 3 nothing measured; 128 + signal when interrupted).
pub fn run(args: &RunArgs) -> Result<i32> {
    let mut opts = args.layered()?;
    let limits = Limits::detect();
    let warnings = opts.validate(&limits)?;
    Ok(run_with(&opts, warnings, &limits, Hooks::default())?.code)
}

/// The run engine behind `run` and `sweep`: `opts` already layered and validated (with the
/// warnings validation gave).
pub fn run_with(
    opts: &RunArgs,
    mut early_warnings: Vec<String>,
    limits: &Limits,
    mut hooks: Hooks,
) -> Result<Outcome> {
    let counter_specs = match opts.counters.as_deref().map(str::trim) {
        None => counters::default_specs(),
        Some("none") | Some("") => Vec::new(),
        Some(list) => counters::parse_list(list)
            .map_err(|e| UsageError(format!("{}: {e}", opts.name("counters"))))?,
    };
    let topo = Topology::detect().context("reading the CPU topology")?;
    let host = Host::detect(&topo);
    let mut plan = checked_plan(opts, &topo, limits)?;
    if hooks.dir.is_none() {
        check_out(opts)?;
    }
    early_warnings.append(&mut plan.warnings);
    plan.warnings = early_warnings;
    let mut store = LazyStore {
        root: opts.out(),
        what: opts.name("out"),
        fixed: hooks.dir.clone(),
        store: None,
    };
    crate::runner::catch_interrupts();

    let err = &mut std::io::stderr();
    for w in &plan.warnings {
        let _ = writeln!(err, "warning: {w}");
    }
    // Calibrations, before anything is measured: what timing one passage costs (which sets
    // the sampling rate), what the harness adds to an empty loop, and the harness/bare ratio
    // of a reference lock.
    let carried = hooks.calibration.take();
    let (latency_sample, timing_cost_ns) = match (opts.latency_sample, &carried) {
        (Some(n), _) => (n, None),
        (None, Some(c)) => (c.latency_sample, c.timing_cost_ns),
        (None, None) => default_sampling(),
    };
    if opts.trace && opts.latency_sample.is_some_and(|n| n != 1) {
        let _ = writeln!(
            err,
            "warning: {} is ignored with --trace, which times every passage",
            opts.name("latency-sample")
        );
    }
    let (latency_sample, timing_cost_ns) = if opts.trace {
        (1, None)
    } else {
        (latency_sample, timing_cost_ns)
    };
    let sampling = (latency_sample, timing_cost_ns);
    let overhead = match &carried {
        Some(c) => c.overhead,
        None => match noop_overhead(&plan.placement, sampling, 5) {
            Ok(f) => f.added_ns_per_passage.unwrap_or(f64::NAN),
            Err(e) => {
                let _ = writeln!(err, "warning: harness overhead not measured: {e}");
                f64::NAN
            }
        },
    };
    let fidelity = if let Some(c) = &carried {
        c.fidelity.clone()
    } else {
        let t = fidelity_template(
            lookup(FIDELITY_REFERENCE)?,
            1,
            &plan.placement,
            WaitPolicy::Spin,
            Duration::from_millis(60),
            Duration::from_millis(20),
            sampling,
        );
        match fidelity::measure(&t, 3) {
            Ok(f) => Some(f),
            Err(e) => {
                let _ = writeln!(err, "warning: harness fidelity not measured: {e}");
                None
            }
        }
    };
    let calibration = Calibration {
        latency_sample,
        timing_cost_ns,
        overhead,
        fidelity: fidelity.clone(),
    };
    let rounds = opts.rounds();
    let quiet_err = &mut std::io::sink();
    let err: &mut dyn std::io::Write = if hooks.quiet { quiet_err } else { err };
    let _ = writeln!(
        err,
        "lockbench: {} runs × {rounds} round{} (each round runs every one once, shuffled){}, results under {}",
        plan.runs.len(),
        if rounds == 1 { "" } else { "s" },
        if opts.check() { "" } else { ", oracle off" },
        opts.out().display()
    );
    let _ = writeln!(
        err,
        "lockbench: latency from 1 passage in {latency_sample}{} at random; harness adds {overhead:.1} ns per passage{}",
        if timing_cost_ns.is_some() {
            " or fewer (timing about 1% of a thread's passage time at most)"
        } else {
            ""
        },
        fidelity
            .as_ref()
            .map(|f| format!(
                "; fidelity ({} at 1 thread, harness/bare) {}",
                f.lock,
                crate::report::estimate(&f.ratio)
            ))
            .unwrap_or_default()
    );
    let counting_overhead = opts.rmr.map(crate::mem::counting::counting_overhead_ns);
    if let (Some(m), Some(ns)) = (opts.rmr, counting_overhead) {
        let _ = writeln!(
            err,
            "lockbench: --rmr {m}: every lock runs on the counting memory (+{ns:.1} ns per register access measured here); throughput and latency are not comparable with a plain run"
        );
    }
    let ctx = Common {
        opts,
        host: &host,
        overhead,
        fidelity,
        counting_overhead,
    };

    let specs: Vec<(RunSpec, bool)> = plan
        .runs
        .iter()
        .map(|p| {
            let (_, policy, oversubscribed) = plan
                .policy_for
                .iter()
                .copied()
                .find(|(t, _, _)| *t == p.threads)
                .expect("every thread count has a policy");
            let spec = RunSpec {
                slots: opts.slots.unwrap_or(p.threads).max(p.threads),
                k: opts.k(),
                mix: p.mix.clone(),
                cs: opts.cs(),
                think: opts.think(),
                cs_lines: opts.cs_lines(),
                warmup: opts.warmup(),
                oracle: oracle_for(opts.oracle(), &p.entry, opts.k()),
                trace: opts.trace,
                trace_capacity: limits.trace_capacity(p.threads),
                latency_sample,
                timing_cost_ns,
                cpus: (0..p.threads)
                    .map(|t| crate::runner::topology::cpu_for(&plan.placement, t))
                    .collect(),
                policy,
                counters: counter_specs.clone(),
                stall_timeout: opts.stall_timeout(),
                seed: opts.seed(),
                rmr: opts.rmr,
                ..RunSpec::new(p.entry.subject(), p.threads, opts.stop())
            };
            (spec, oversubscribed)
        })
        .collect();
    // The baseline run of each run's configuration (threads, mix).
    let base_of: Vec<Option<usize>> = plan
        .runs
        .iter()
        .map(|p| {
            if p.is_baseline {
                return None;
            }
            plan.runs
                .iter()
                .position(|b| b.is_baseline && b.threads == p.threads && b.mix == p.mix)
        })
        .collect();
    let warnings_of = |p: &Planned| -> Vec<String> {
        plan.warnings
            .iter()
            .filter(|w| w.starts_with(&format!("{} threads", p.threads)))
            .cloned()
            .collect()
    };
    let mut accs: Vec<PointAcc> = plan.runs.iter().map(|_| PointAcc::new()).collect();
    let result_of = |i: usize, accs: &[PointAcc]| -> RunResult {
        let p = &plan.runs[i];
        let base = base_of[i].map(|b| (plan.runs[b].entry.info.name, &accs[b]));
        summarize(
            p,
            &specs[i].0,
            &accs[i],
            &ctx,
            warnings_of(p),
            base.filter(|(_, b)| !b.reps.is_empty()),
            specs[i].1,
        )
    };
    let total = plan.runs.len() * rounds;
    let mut done = 0;
    'rounds: for round in 0..rounds {
        let mut order: Vec<usize> = (0..plan.runs.len()).collect();
        shuffle(&mut order, opts.seed(), round as u64);
        for i in order {
            if crate::runner::interrupted().is_some() {
                break 'rounds;
            }
            done += 1;
            let p = &plan.runs[i];
            if accs[i].failed.is_some() || accs[i].stalled() {
                continue;
            }
            match run_once(&specs[i].0) {
                // A repetition cut short by a signal is not a measurement.
                Ok(_) if crate::runner::interrupted().is_some() => break 'rounds,
                Ok(r) => accs[i].push(round, r),
                Err(e) => {
                    let _ = writeln!(
                        err,
                        "[{done}/{total}] {} t={} {} failed: {e}",
                        p.entry.info.name, p.threads, p.mix
                    );
                    accs[i].failed = Some(e.to_string());
                    continue;
                }
            }
            // Saved now, so nothing measured is lost; rewritten as later rounds add to it.
            let result = result_of(i, &accs);
            let path = store.get()?.save_slot(i, &result)?;
            if let Some(progress) = hooks.progress.as_mut() {
                progress(
                    done,
                    total,
                    &format!(
                        "{} t={} {} round {}",
                        result.lock,
                        result.threads,
                        result.mix,
                        round + 1
                    ),
                );
            }
            let last = &accs[i].reps.last().expect("just pushed").1;
            let _ = writeln!(
                err,
                "[{done}/{total}] round {}: {} t={} {}: {}{}{} -> {}",
                round + 1,
                result.lock,
                result.threads,
                result.mix,
                rate(last.throughput_per_sec),
                if last.violations > 0 {
                    format!(", {} SAFETY VIOLATIONS", last.violations)
                } else {
                    String::new()
                },
                if last.stalled.is_some() {
                    ", STALLED"
                } else {
                    ""
                },
                path.display()
            );
        }
    }
    // Final figures: every ratio paired over all rounds.
    let mut results = Vec::new();
    for i in 0..plan.runs.len() {
        if accs[i].reps.is_empty() {
            continue;
        }
        let r = result_of(i, &accs);
        store.get()?.save_slot(i, &r)?;
        results.push(r);
    }
    let failures: Vec<&String> = accs.iter().filter_map(|a| a.failed.as_ref()).collect();

    let format = opts.format();
    let out = format.exporter().export(&results);
    let mut stdout = std::io::stdout().lock();
    if !hooks.quiet {
        stdout.write_all(out.as_bytes())?;
    }
    if format == Format::Table && !hooks.quiet {
        for r in &results {
            for w in r.warnings.iter().filter(|w| !plan.warnings.contains(w)) {
                writeln!(stdout, "note: {}: {w}", r.lock)?;
            }
        }
        if let Some(dir) = store.dir() {
            writeln!(stdout, "results saved in {}", dir.display())?;
        }
    }
    stdout.flush()?;

    if let Some(sig) = crate::runner::interrupted() {
        // What finished is still reported (a violation found before the signal included);
        // the exit code says the run was cut short.
        let _ = exit_summary(&results, !failures.is_empty(), err);
        let _ = writeln!(
            err,
            "interrupted: {} of {} results saved in {}",
            results.len(),
            plan.runs.len(),
            store
                .dir()
                .map_or("no directory (nothing finished)".into(), |d| d
                    .display()
                    .to_string())
        );
        return Ok(Outcome {
            code: 128 + sig,
            results,
            complete: false,
            calibration,
        });
    }
    Ok(Outcome {
        code: exit_summary(&results, !failures.is_empty(), err),
        results,
        complete: done == total,
        calibration,
    })
}

/// Says on stderr what went wrong or deserves a look, and returns the exit code: 1 for a
/// safety violation, register-bound failure, stall, FCFS overtaking or failed run; else 3
/// when a run measured nothing; else 0.
fn exit_summary(results: &[RunResult], failed: bool, err: &mut dyn std::io::Write) -> i32 {
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

/// Shuffles `v` (Fisher–Yates) with the generator of round `round` of `seed`.
fn shuffle(v: &mut [usize], seed: u64, round: u64) {
    let mut rng = Rng::new(seed ^ 0x0DD5_EED5, round);
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
}

/// The locks `fidelity` measures by default: the common baselines.
pub const FIDELITY_LOCKS: [&str; 4] = ["parking-lot-mutex", "spin-ticket", "std-mutex", "ticket"];

/// `lockbench fidelity`: harness against bare loop, interleaved, per lock and thread count.
pub fn fidelity(args: &FidelityArgs) -> Result<i32> {
    let duration = parse_duration(&args.duration)
        .map_err(|e| UsageError(format!("--duration {:?}: {e}", args.duration)))?;
    let warmup = parse_duration(&args.warmup)
        .map_err(|e| UsageError(format!("--warmup {:?}: {e}", args.warmup)))?;
    if duration.is_zero() {
        return Err(UsageError("--duration must be longer than 0 (e.g. 200ms)".into()).into());
    }
    if args.rounds == 0 {
        return Err(UsageError("--rounds must be at least 1".into()).into());
    }
    let format = args
        .format
        .pick("fidelity", &[Format::Table, Format::Json], Format::Table)?;
    let out_dir = args
        .out
        .out
        .clone()
        .unwrap_or_else(|| std::path::PathBuf::from("reports"));
    let names: Vec<String> = args.lock.names_or(&FIDELITY_LOCKS);
    let entries = names
        .iter()
        .map(|n| lookup(n.trim()))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(e) = entries.iter().find(|e| e.info.problem != Problem::Mutex) {
        return Err(UsageError(format!(
            "{} is not a mutual-exclusion lock: fidelity runs every thread in its own session, which only a mutex serves",
            e.info.name
        ))
        .into());
    }
    let topo = Topology::detect().context("reading the CPU topology")?;
    let placement = topo.placement(PinMode::Physical, false);
    let cores = placement.len().max(1);
    let threads = args.threads.threads.clone().unwrap_or_else(|| {
        if cores > 1 {
            vec![1, cores]
        } else {
            vec![1]
        }
    });
    if threads.is_empty() || threads.contains(&0) {
        return Err(UsageError("--threads must be at least 1 (e.g. --threads 1,2)".into()).into());
    }
    if let Some(t) = threads.iter().find(|&&t| t > cores) {
        return Err(UsageError(format!(
            "{t} threads but {cores} physical cores: fidelity measures pinned threads, one per core"
        ))
        .into());
    }
    let store = Store::create(&out_dir)
        .map_err(|e| UsageError(format!("--out {}: {e:#}", out_dir.display())))?;
    if args.latency_sample == Some(0) {
        return Err(UsageError("--latency-sample must be at least 1 (e.g. 100)".into()).into());
    }
    let sampling = args
        .latency_sample
        .map_or_else(default_sampling, |n| (n, None));
    let latency_sample = sampling.0;
    let err = &mut std::io::stderr();
    let mut points = Vec::new();
    let noop = noop_overhead(&placement, sampling, args.rounds)?;
    let _ = writeln!(
        err,
        "noop at 1 thread: the harness adds {:.2} ns per passage to an empty loop",
        noop.added_ns_per_passage.unwrap_or(0.0)
    );
    points.push(noop);
    for &t in &threads {
        for e in &entries {
            let mut spec = fidelity_template(
                e.clone(),
                t,
                &placement,
                WaitPolicy::Spin,
                duration,
                warmup,
                sampling,
            );
            spec.oracle = oracle_for(args.oracle, e, spec.k);
            let f = fidelity::measure(&spec, args.rounds)?;
            let _ = writeln!(
                err,
                "{} t={t}: harness/bare {}",
                f.lock,
                crate::report::estimate(&f.ratio)
            );
            points.push(f);
            store.save_json("fidelity.json", &points)?;
        }
    }
    let mut out = String::new();
    if format == Format::Json {
        out = serde_json::to_string_pretty(&points)? + "\n";
    } else {
        out.push_str(&format!(
            "harness = the default passage loop (oracle, 1 passage in {latency_sample}{} timed, counters) against a bare loop of the same lock (enter; exit); {} interleaved rounds of {} each; ratio = harness / bare throughput, median [interval, level]; spread = half the range over the rounds, relative to the median\n",
            if sampling.1.is_some() { " or fewer" } else { "" },
            args.rounds,
            format_duration(duration)
        ));
        let header = format!(
            "{:<18} {:>3}  {:<10}  {:>12}  {:>6}  {:>12}  {:<30} {:>6}  {:>13}",
            "lock",
            "thr",
            "oracle",
            "bare",
            "spread",
            "harness",
            "harness/bare",
            "spread",
            "added ns/pass"
        );
        out.push_str(&header);
        out.push('\n');
        out.push_str(&"-".repeat(header.chars().count()));
        out.push('\n');
        for f in &points {
            out.push_str(&format!(
                "{:<18} {:>3}  {:<10}  {:>12}  {:>6}  {:>12}  {:<30} {:>6}  {:>13}\n",
                f.lock,
                f.threads,
                f.oracle,
                rate(f.bare_per_sec),
                format!("±{:.0}%", 100.0 * f.bare_spread),
                rate(f.harness_per_sec),
                crate::report::estimate(&f.ratio),
                format!("±{:.0}%", 100.0 * f.ratio_spread),
                f.added_ns_per_passage
                    .map_or("-".to_string(), |ns| format!("{ns:.2}")),
            ));
        }
        out.push_str(&format!("results saved in {}\n", store.dir().display()));
    }
    print!("{out}");
    Ok(0)
}
