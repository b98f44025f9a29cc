//! The commands: `list`, `run`, `verify`.

use std::io::Write as _;

use anyhow::{Context, Result};

use crate::check::trace::{analyze, TraceReport};
use crate::cli::{ListFormat, RunArgs, WaitArg};
use crate::config::{usage, RunOptions, UsageError};
use crate::locks::{registry, LockEntry, Problem};
use crate::mem::WaitPolicy;
use crate::metrics::counters::{self, merge};
use crate::metrics::fairness::Fairness;
use crate::metrics::latency::{ticks_histogram, LatencySummary};
use crate::report::result::{Concurrency, Spread, ThreadResult};
use crate::report::store::{now_secs, Store};
use crate::report::{rate, Format, RunResult};
use crate::runner::exec::{run_once, timing_overhead_ns, Repetition, RunSpec, StopRule};
use crate::runner::host::Host;
use crate::runner::topology::{PinMode, Topology};
use crate::workload::{format_duration, Mix};

/// `lockbench list`.
pub fn list(format: ListFormat) -> Result<String> {
    let infos: Vec<_> = registry().into_iter().map(|e| e.info).collect();
    if format == ListFormat::Json {
        return Ok(serde_json::to_string_pretty(&infos)? + "\n");
    }
    let rows: Vec<[String; 7]> = infos
        .iter()
        .map(|i| {
            [
                i.name.to_string(),
                i.problem.name().to_string(),
                if i.fcfs { "yes" } else { "no" }.to_string(),
                if i.bounded { "yes" } else { "no" }.to_string(),
                i.rmr.to_string(),
                i.source.to_string(),
                if i.safe {
                    i.notes.to_string()
                } else {
                    format!("[not in `all`] {}", i.notes)
                },
            ]
        })
        .collect();
    let headers = [
        "lock", "problem", "fcfs", "bounded", "rmr", "source", "notes",
    ];
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for r in &rows {
        for (i, c) in r.iter().enumerate().take(6) {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &[String]| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i < 6 {
                s.push_str(&format!("{c:<w$}  ", w = widths[i]));
            } else {
                s.push_str(c);
            }
        }
        out.push_str(s.trim_end());
        out.push('\n');
    };
    line(&headers.map(String::from));
    for r in &rows {
        line(r);
    }
    Ok(out)
}

/// Looks a lock up, or says what to do.
fn lookup(name: &str) -> Result<LockEntry, UsageError> {
    registry()
        .into_iter()
        .find(|e| e.info.name == name)
        .ok_or_else(|| {
            UsageError(format!(
                "unknown lock {name:?}: `lockbench list` shows the names"
            ))
        })
}

/// Can `entry` serve `mix` at `n` threads?
fn fits(entry: &LockEntry, mix: &Mix, n: usize) -> bool {
    entry.info.problem != Problem::KExclusion || !mix.needs_groups(n)
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

fn plan(opts: &RunOptions, topo: &Topology) -> Result<Plan, UsageError> {
    let explicit: Option<Vec<LockEntry>> = if opts.locks.iter().any(|l| l == "all") {
        if opts.locks.len() > 1 {
            return usage("--lock all cannot be combined with names");
        }
        None
    } else {
        Some(
            opts.locks
                .iter()
                .map(|n| lookup(n))
                .collect::<Result<_, _>>()?,
        )
    };
    let baseline = lookup(&opts.baseline).map_err(|_| {
        UsageError(format!(
            "unknown baseline {:?}: `lockbench list` shows the names",
            opts.baseline
        ))
    })?;

    let placement = topo.placement(opts.pin, opts.smt);
    let cpus_available = match opts.pin {
        PinMode::None => topo.logical_cpus(),
        _ => placement.len(),
    };
    let thread_counts = opts.threads.clone().unwrap_or_else(|| {
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
    let mut warnings = Vec::new();
    let mut policy_for = Vec::new();
    for &t in &thread_counts {
        let over = t > cpus_available;
        if over && !opts.oversubscribe {
            let what = match opts.pin {
                PinMode::Physical if !opts.smt => "physical cores",
                _ => "CPUs",
            };
            return usage(format!(
                "{t} threads but only {cpus_available} {what} to place them on: pass --oversubscribe \
                 (threads then share cores and wait with spin-then-yield){} or fewer --threads",
                if opts.pin == PinMode::Physical && !opts.smt && topo.smt() { ", --smt" } else { "" }
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
        if opts.k_given && opts.k >= t {
            warnings.push(format!(
                "k = {} ≥ {t} threads: a k-exclusion lock never makes anyone wait at {t} threads",
                opts.k
            ));
        }
        policy_for.push((t, policy, over));
    }

    let mut runs = Vec::new();
    for &t in &thread_counts {
        for mix in &opts.mixes {
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

/// Aggregates the repetitions of one planned run into its result.
#[allow(clippy::too_many_arguments)]
fn summarize(
    p: &Planned,
    spec: &RunSpec,
    reps: &[Repetition],
    opts: &RunOptions,
    host: &Host,
    overhead: f64,
    warnings: Vec<String>,
    baseline: Option<(&str, f64)>,
    oversubscribed: bool,
) -> RunResult {
    let throughputs: Vec<f64> = reps.iter().map(|r| r.throughput_per_sec).collect();
    let spread = Spread::of(&throughputs);
    // The repetition whose throughput is the median (lower median for an even count).
    let mut order: Vec<usize> = (0..reps.len()).collect();
    order.sort_by(|&a, &b| throughputs[a].total_cmp(&throughputs[b]));
    let med = &reps[order[(reps.len() - 1) / 2]];
    let npt = med.ns_per_tick;
    let mut entry = ticks_histogram(npt);
    let mut passage = ticks_histogram(npt);
    for r in reps {
        entry.add(&r.entry).expect("same bounds");
        passage.add(&r.passage).expect("same bounds");
    }
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
    let mut warnings = warnings;
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
    let trace = merge_traces(reps, p.entry.info.problem, spec.k);
    if let Some(t) = &trace {
        if p.entry.info.fcfs && t.doorway_observed && t.fcfs_violations > 0 {
            warnings.push(format!(
                "{} claims FCFS but the trace shows {} violations",
                p.entry.info.name, t.fcfs_violations
            ));
        }
    }
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
        throughput_per_sec: spread.median,
        spread_wide: reps.len() > 1 && spread.relative > 0.10,
        throughput_spread: spread,
        repeat: reps.len(),
        latency_ns: LatencySummary::of(&entry, npt),
        passage_ns: LatencySummary::of(&passage, npt),
        per_thread_passages: per_thread.iter().map(|t| t.passages).collect(),
        per_thread,
        windows_uneven,
        fairness_jain: fairness.jain,
        fairness,
        concurrency: med.inside.map(|(mean, max)| Concurrency { mean, max }),
        safety_checked: opts.check,
        safety_violations: reps.iter().map(|r| r.violations).sum(),
        invariant_failures: reps.iter().map(|r| r.invariant_failures).sum(),
        invariant_example,
        counters: merge(&med.counters, med.passages),
        rmr: None,
        trace,
        stalled,
        baseline: baseline.map(|b| b.0.to_string()),
        throughput_vs_baseline: baseline.and_then(|(_, b)| (b > 0.0).then(|| spread.median / b)),
        pin: format!("{:?}", opts.pin).to_lowercase(),
        smt: opts.smt,
        oversubscribed,
        wait_policy: spec.policy.name().to_string(),
        cs_ns: opts.cs.as_nanos() as u64,
        think_ns: opts.think.as_nanos() as u64,
        cs_lines: opts.cs_lines,
        stop: match opts.stop {
            StopRule::Duration(d) => format!("duration {}", format_duration(d)),
            StopRule::Passages(n) => format!("passages {n} per thread"),
        },
        warmup_ns: opts.warmup.as_nanos() as u64,
        harness_overhead_ns: overhead,
        latency_sample: spec.latency_sample,
        ns_per_tick: npt,
        warnings,
        host: host.clone(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        timestamp: now_secs(),
    }
}

fn merge_traces(reps: &[Repetition], problem: Problem, k: usize) -> Option<TraceReport> {
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

/// `lockbench run`: returns the process exit code.
pub fn run(args: &RunArgs) -> Result<i32> {
    let opts = RunOptions::resolve(args)?;
    let counter_specs = match opts.counters.as_deref() {
        None => counters::default_specs(),
        Some("none") | Some("") => Vec::new(),
        Some(list) => {
            counters::parse_list(list).map_err(|e| UsageError(format!("--counters: {e}")))?
        }
    };
    let topo = Topology::detect().context("reading the CPU topology")?;
    let host = Host::detect(&topo);
    let plan = plan(&opts, &topo)?;
    let mut store = Store::create(&opts.out)?;

    let err = &mut std::io::stderr();
    for w in &plan.warnings {
        let _ = writeln!(err, "warning: {w}");
    }
    let overhead = timing_overhead_ns(opts.latency_sample);
    let _ = writeln!(
        err,
        "lockbench: {} runs ({} thread count{}), oracle {}, results in {}",
        plan.runs.len(),
        plan.thread_counts.len(),
        if plan.thread_counts.len() == 1 {
            ""
        } else {
            "s"
        },
        if opts.check { "on" } else { "off" },
        store.dir().display()
    );
    let mut results: Vec<RunResult> = Vec::new();
    let mut failures: Vec<String> = Vec::new();
    let mut baseline_tp: Option<(String, f64)> = None;
    for (i, p) in plan.runs.iter().enumerate() {
        let (_, policy, oversubscribed) = plan
            .policy_for
            .iter()
            .copied()
            .find(|(t, _, _)| *t == p.threads)
            .expect("every thread count has a policy");
        let cpus: Vec<Option<usize>> = (0..p.threads)
            .map(|t| crate::runner::topology::cpu_for(&plan.placement, t))
            .collect();
        let spec = RunSpec {
            entry: p.entry.clone(),
            threads: p.threads,
            slots: opts.slots.unwrap_or(p.threads).max(p.threads),
            k: opts.k,
            mix: p.mix.clone(),
            cs: opts.cs,
            think: opts.think,
            cs_lines: opts.cs_lines,
            stop: opts.stop,
            warmup: opts.warmup,
            check: opts.check,
            trace: opts.trace,
            trace_capacity: 1 << 20,
            latency_sample: if opts.trace { 1 } else { opts.latency_sample },
            cpus,
            policy,
            counters: counter_specs.clone(),
            stall_timeout: opts.stall_timeout,
            seed: opts.seed,
        };
        let mut reps = Vec::with_capacity(opts.repeat);
        let mut failed = None;
        for _ in 0..opts.repeat {
            match run_once(&spec) {
                Ok(r) => {
                    let stalled = r.stalled.is_some();
                    reps.push(r);
                    if stalled {
                        break;
                    }
                }
                Err(e) => {
                    failed = Some(e.to_string());
                    break;
                }
            }
        }
        if let Some(e) = failed {
            let _ = writeln!(
                err,
                "[{}/{}] {} failed: {e}",
                i + 1,
                plan.runs.len(),
                p.entry.info.name
            );
            failures.push(e);
            if reps.is_empty() {
                continue;
            }
        }
        let warnings: Vec<String> = plan
            .warnings
            .iter()
            .filter(|w| w.starts_with(&format!("{} threads", p.threads)))
            .cloned()
            .collect();
        let base = if p.is_baseline {
            None
        } else {
            baseline_tp.as_ref().map(|(n, v)| (n.as_str(), *v))
        };
        let result = summarize(
            p,
            &spec,
            &reps,
            &opts,
            &host,
            overhead,
            warnings,
            base,
            oversubscribed,
        );
        if p.is_baseline {
            baseline_tp = Some((result.lock.clone(), result.throughput_per_sec));
        }
        let path = store.save(&result)?;
        let _ = writeln!(
            err,
            "[{}/{}] {} t={} {}: {}{}{} -> {}",
            i + 1,
            plan.runs.len(),
            result.lock,
            result.threads,
            result.mix,
            rate(result.throughput_per_sec),
            if result.safety_violations > 0 {
                format!(", {} SAFETY VIOLATIONS", result.safety_violations)
            } else {
                String::new()
            },
            if result.stalled.is_some() {
                ", STALLED"
            } else {
                ""
            },
            path.display()
        );
        results.push(result);
    }

    let out = opts.format.exporter().export(&results);
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(out.as_bytes())?;
    if opts.format == Format::Table {
        for r in &results {
            for w in r.warnings.iter().filter(|w| !plan.warnings.contains(w)) {
                writeln!(stdout, "note: {}: {w}", r.lock)?;
            }
        }
        writeln!(stdout, "results saved in {}", store.dir().display())?;
    }
    stdout.flush()?;

    let mut code = 0;
    for r in &results {
        if r.safety_violations > 0 || r.invariant_failures > 0 {
            let _ =
                writeln!(
                err,
                "error: {} ({} threads, {}): {} safety violations, {} register-bound failures{}",
                r.lock,
                r.threads,
                r.mix,
                r.safety_violations,
                r.invariant_failures,
                r.invariant_example.as_ref().map(|e| format!(" (first: {e})")).unwrap_or_default()
            );
            code = 1;
        }
        if let Some(s) = &r.stalled {
            let _ = writeln!(
                err,
                "error: {} ({} threads, {}) stalled: {s}",
                r.lock, r.threads, r.mix
            );
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
    }
    if !failures.is_empty() {
        code = 1;
    }
    Ok(code)
}

/// `lockbench verify`: exit code 0 when no violation (or a witness found with `--witness`), 1
/// on a violation (or a surviving non-equivalent mutant), 2 on bad input, 3 when inconclusive
/// (no schedule completed).
pub fn verify(args: &crate::cli::VerifyArgs) -> Result<i32> {
    use crate::cli::VerifyFormat;
    use crate::verify::replay::ReplayContext;
    use crate::verify::{mutants, verify, SchedulerKind, SessionPlan, VerifyOptions};
    let json = args.json || args.format == VerifyFormat::Json;
    let ctx = match &args.replay {
        Some(text) => Some(ReplayContext::decode(text).map_err(UsageError)?),
        None => None,
    };
    if ctx.is_some() && args.mutants.is_some() {
        return usage(
            "--replay and --mutants exclude each other: a replay string names its mutant",
        )?;
    }
    // An option given beside --replay must agree with the value the string carries.
    fn agree<T: PartialEq + std::fmt::Debug>(
        flag: &str,
        given: Option<T>,
        carried: Option<T>,
    ) -> Result<Option<T>, UsageError> {
        match (given, carried) {
            (Some(g), Some(c)) if g != c => usage(format!(
                "--{flag} {g:?} contradicts the replay string, recorded with {c:?}: drop --{flag} or replay with the settings it carries"
            )),
            (g, c) => Ok(g.or(c)),
        }
    }
    let c = ctx.as_ref();
    let lock = agree("lock", args.lock.clone(), c.map(|c| c.lock.clone()))?;
    let threads = agree("threads", args.threads, c.map(|c| c.threads))?.unwrap_or(3);
    let passages = agree("passages", args.passages, c.map(|c| c.passages))?;
    let k = agree("k", args.k, c.map(|c| c.k))?;
    let sessions = agree("sessions", args.sessions, c.map(|c| c.sessions))?;
    let plan_name = agree(
        "plan",
        args.plan.map(|p| format!("{p:?}").to_lowercase()),
        c.map(|c| c.plan.clone()),
    )?;
    let cs_steps = agree("cs-steps", args.cs_steps, c.map(|c| c.cs_steps))?;
    let max_steps = agree("max-steps", args.max_steps, c.map(|c| c.max_steps))?;
    let scheduler = args.scheduler.map(|s| format!("{s:?}").to_lowercase());
    if let (Some(s), Some(c)) = (&scheduler, c) {
        if s != "both" && *s != c.scheduler {
            return usage(format!(
                "--scheduler {s} contradicts the replay string, found by {}: drop --scheduler",
                c.scheduler
            ))?;
        }
    }
    if let Some(c) = c {
        if args.witness != c.witness && args.witness {
            return usage("--witness contradicts the replay string, recorded without it")?;
        }
    }
    let mut opts = VerifyOptions::new(threads);
    if let Some(v) = args.schedules {
        opts.schedules = v;
    } else if args.mutants.is_some() {
        opts.schedules = 2000;
    }
    opts.seed = args.seed.unwrap_or(1);
    opts.scheduler = args.scheduler.unwrap_or(SchedulerKind::Both);
    if let Some(v) = passages {
        opts.passages = v;
    }
    if let Some(v) = k {
        if v == 0 {
            return usage("--k must be at least 1")?;
        }
        opts.k = v;
    }
    if let Some(v) = sessions {
        opts.sessions = v;
    }
    opts.plan = match plan_name.as_deref() {
        None | Some("random") => SessionPlan::Random,
        Some("fixed") => SessionPlan::Fixed,
        Some(other) => return usage(format!("malformed --replay: unknown plan {other:?}"))?,
    };
    if let Some(v) = cs_steps {
        opts.cs_steps = v;
    }
    if let Some(v) = args.pct_depth {
        if v == 0 {
            return usage("--pct-depth must be at least 1")?;
        }
        opts.pct_depth = v;
    }
    if let Some(v) = max_steps {
        opts.max_steps = v;
    }
    opts.witness = args.witness || c.is_some_and(|c| c.witness);
    opts.mutant = c.and_then(|c| c.mutant.clone());
    opts.replay = args.replay.clone();

    if let Some(sel) = &args.mutants {
        let chosen = mutants::select(sel).map_err(UsageError)?;
        let mut results = Vec::new();
        for m in &chosen {
            results.push(mutants::run(m, &opts, !args.loud).map_err(UsageError)?);
        }
        if json {
            println!("{}", serde_json::to_string_pretty(&results)?);
        } else {
            print!("{}", mutants::table(&results));
        }
        let gaps = results.iter().any(|r| !r.killed && !r.equivalent);
        return Ok(i32::from(gaps));
    }

    let Some(lock) = lock else {
        return usage("give --lock NAME (or --replay with a replay string, or --mutants)")?;
    };
    let entry = match &opts.mutant {
        Some(name) => {
            let m = mutants::select(&format!("{lock}/{name}"))
                .map_err(|_| UsageError(format!("malformed --replay: no mutant {lock}/{name}")))?;
            mutants::entry(&m[0])
        }
        None => lookup(&lock)?,
    };
    if entry.info.problem == Problem::KExclusion && opts.k >= opts.threads {
        eprintln!(
            "warning: k = {} ≥ {} processes: k-exclusion can never be violated, so the safety check is vacuous",
            opts.k, opts.threads
        );
    }
    let report = verify(&entry, &opts, !args.loud).map_err(UsageError)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{report}");
    }
    Ok(report.exit_code())
}
