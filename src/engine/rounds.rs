//! The run engine behind `run` and `sweep`: calibrate, plan each run's settings, measure every
//! run once per round in a shuffled order (so drift of a shared machine hits every lock alike),
//! save each result as soon as it has a round, and report.

use std::io::Write as _;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::engine::fidelity::{
    default_sampling, fidelity_template, noop_overhead, FIDELITY_REFERENCE,
};
use crate::engine::options::{Limits, RunArgs};
use crate::engine::plan::{check_out, checked_plan, oracle_for, Plan};
use crate::engine::summarize::{busy_warning, exit_summary, summarize, Common, PointAcc};
use crate::error::UsageError;
use crate::mem::WaitPolicy;
use crate::metrics::counters::{self, CounterSpec};
use crate::registry::lookup;
use crate::report::store::Store;
use crate::report::{rate, Format, RunResult};
use crate::runner::exec::{run_once, RunSpec};
use crate::runner::fidelity::{self, FidelityPoint};
use crate::runner::host::{Host, Load, LoadSample};
use crate::runner::topology::Topology;
use crate::workload::rng::Rng;

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
            .map_err(|e| match &self.fixed {
                Some(dir) => UsageError(format!("{}: {e:#}", crate::opts::io::shown(dir))),
                None => UsageError(format!(
                    "{} {}: {e:#}",
                    self.what,
                    crate::opts::io::shown(&self.root)
                )),
            })?;
            self.store = Some(s);
        }
        Ok(self.store.as_mut().expect("just made"))
    }

    fn dir(&self) -> Option<&std::path::Path> {
        self.store.as_ref().map(|s| s.dir())
    }

    /// Removes the directory this invocation created (a sweep's own directory is kept).
    fn discard(&mut self) {
        if self.fixed.is_none() {
            if let Some(s) = self.store.take() {
                let _ = std::fs::remove_dir_all(s.dir());
            }
        }
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
    /// Where the results were saved (null: nothing was).
    pub dir: Option<std::path::PathBuf>,
}

/// The run engine behind `run` and `sweep`: `opts` already layered and validated (with the
/// warnings validation gave).
pub fn run_with(
    opts: &RunArgs,
    mut early_warnings: Vec<String>,
    limits: &Limits,
    mut hooks: Hooks,
) -> Result<Outcome> {
    let counter_specs = counter_specs(opts)?;
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

    let err = &mut crate::opts::io::stderr();
    for w in &plan.warnings {
        let _ = writeln!(err, "warning: {w}");
    }
    let before = LoadSample::take(true);
    let calibration = calibrate(opts, &plan, hooks.calibration.take(), err)?;
    let host_load = before.until(&LoadSample::take(false), 0, host.logical_cpus);
    if host_load.busy {
        let _ = writeln!(err, "warning: {}", busy_warning(&host_load));
    }
    let quiet_err = &mut std::io::sink();
    let err: &mut dyn std::io::Write = if hooks.quiet { quiet_err } else { err };
    let counting_overhead = print_header(opts, &plan, &calibration, err);
    let ctx = Common {
        opts,
        host: &host,
        overhead: calibration.overhead,
        fidelity: calibration.fidelity.clone(),
        counting_overhead,
    };
    let specs = run_specs(opts, limits, &plan, &calibration, &counter_specs);
    let mut points = Points {
        plan: &plan,
        base_of: baselines(&plan),
        accs: plan.runs.iter().map(|_| PointAcc::new()).collect(),
        specs,
        ctx,
    };
    let (done, total) = points.measure(opts, &mut store, &mut hooks, err)?;
    points.finish(opts, &mut store, &hooks, err, done == total, calibration)
}

/// The counters `--counters` names (default: the default set; `none` or empty: none).
fn counter_specs(opts: &RunArgs) -> Result<Vec<CounterSpec>, UsageError> {
    Ok(match opts.counters.as_deref().map(str::trim) {
        None => counters::default_specs(),
        Some("none") | Some("") => Vec::new(),
        Some(list) => counters::parse_list(list)
            .map_err(|e| UsageError(format!("{}: {e}", opts.name("counters"))))?,
    })
}

/// Calibrations, before anything is measured (or carried over from an earlier invocation):
/// what timing one passage costs (which sets the sampling rate), what the harness adds to an
/// empty loop, and the harness/bare ratio of a reference lock. Warnings go to `err`.
fn calibrate(
    opts: &RunArgs,
    plan: &Plan,
    carried: Option<Calibration>,
    err: &mut dyn std::io::Write,
) -> Result<Calibration> {
    let (latency_sample, timing_cost_ns) = match (opts.harness.latency_sample, &carried) {
        (Some(n), _) => (n, None),
        (None, Some(c)) => (c.latency_sample, c.timing_cost_ns),
        (None, None) => default_sampling(),
    };
    if opts.trace.trace && opts.harness.latency_sample.is_some_and(|n| n != 1) {
        let _ = writeln!(
            err,
            "warning: {} is ignored with --trace, which times every passage",
            opts.name("latency-sample")
        );
    }
    let (latency_sample, timing_cost_ns) = if opts.trace.trace {
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
    Ok(Calibration {
        latency_sample,
        timing_cost_ns,
        overhead,
        fidelity,
    })
}

/// The header: what runs, how latencies are sampled, what the harness adds, the fidelity
/// figure, and what counting costs with `--rmr` (returned, ns per register access).
fn print_header(
    opts: &RunArgs,
    plan: &Plan,
    cal: &Calibration,
    err: &mut dyn std::io::Write,
) -> Option<f64> {
    let rounds = opts.rounds();
    let (latency_sample, timing_cost_ns, overhead) =
        (cal.latency_sample, cal.timing_cost_ns, cal.overhead);
    let _ = writeln!(
        err,
        "lockbench: {} runs × {rounds} round{} (each round runs every one once, shuffled){}, results under {}",
        plan.runs.len(),
        if rounds == 1 { "" } else { "s" },
        if opts.check() { "" } else { ", oracle off" },
        crate::opts::io::shown(&opts.out())
    );
    let _ = writeln!(
        err,
        "lockbench: latency from 1 passage in {latency_sample}{} at random; harness adds {}{}",
        if timing_cost_ns.is_some() {
            " or fewer (timing about 1% of a thread's passage time at most)"
        } else {
            ""
        },
        crate::report::harness_adds(overhead),
        cal.fidelity
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
    counting_overhead
}

/// The run of each planned point, with whether its threads oversubscribe.
fn run_specs(
    opts: &RunArgs,
    limits: &Limits,
    plan: &Plan,
    cal: &Calibration,
    counter_specs: &[CounterSpec],
) -> Vec<(RunSpec, bool)> {
    plan.runs
        .iter()
        .map(|p| {
            let tp = &plan.threads[p.at];
            let spec = RunSpec {
                slots: opts.slots.unwrap_or(p.threads).max(p.threads),
                k: opts.k(),
                mix: p.mix.clone(),
                cs: opts.cs(),
                think: opts.think(),
                cs_lines: opts.cs_lines(),
                warmup: opts.warmup(),
                oracle: oracle_for(opts.oracle(), &p.entry, opts.k()),
                trace: opts.trace.trace,
                trace_capacity: limits.trace_capacity(p.threads),
                latency_sample: cal.latency_sample,
                timing_cost_ns: cal.timing_cost_ns,
                cpus: (0..p.threads)
                    .map(|t| crate::runner::topology::cpu_for(&plan.placement, t))
                    .collect(),
                policy: tp.policy,
                counters: counter_specs.to_vec(),
                stall_timeout: opts.stall_timeout(),
                seed: opts.seed(),
                rmr: opts.rmr,
                mem: crate::engine::plan::mem_plan(opts, plan, p.threads),
                ..RunSpec::new(p.entry.subject(), p.threads, opts.stop())
            };
            (spec, tp.oversubscribed)
        })
        .collect()
}

/// The baseline run of each run's configuration (threads, mix).
fn baselines(plan: &Plan) -> Vec<Option<usize>> {
    plan.runs
        .iter()
        .map(|p| {
            if p.is_baseline {
                return None;
            }
            plan.runs
                .iter()
                .position(|b| b.is_baseline && b.threads == p.threads && b.mix == p.mix)
        })
        .collect()
}

/// Every planned run's settings and what its repetitions have gathered so far.
struct Points<'a> {
    plan: &'a Plan,
    specs: Vec<(RunSpec, bool)>,
    base_of: Vec<Option<usize>>,
    accs: Vec<PointAcc>,
    ctx: Common<'a>,
}

impl Points<'_> {
    /// The result of run `i` from what it has gathered, paired with its baseline's rounds.
    fn result(&self, i: usize) -> RunResult {
        let p = &self.plan.runs[i];
        let base = self.base_of[i].map(|b| (self.plan.runs[b].entry.info.name, &self.accs[b]));
        let mut result = summarize(
            p,
            &self.specs[i].0,
            &self.accs[i],
            &self.ctx,
            self.plan.threads[p.at].warnings.clone(),
            base.filter(|(_, b)| !b.reps.is_empty()),
            self.specs[i].1,
        );
        crate::engine::plan::annotate(&mut result.per_thread, &self.plan.places);
        let placed = self.accs[i].reps.iter().find_map(|(_, r)| r.placed.clone());
        result.mem_pages = placed.as_ref().map(|p| crate::report::result::MemPages {
            bound: p.pages,
            misplaced: p.misplaced,
            mixed: p.mixed,
            error: p.error.clone(),
        });
        result
            .warnings
            .extend(crate::engine::plan::placed_warning(placed));
        result
    }

    /// Every run once per round, shuffled; returns (repetitions attempted, planned).
    fn measure(
        &mut self,
        opts: &RunArgs,
        store: &mut LazyStore,
        hooks: &mut Hooks,
        err: &mut dyn std::io::Write,
    ) -> Result<(usize, usize)> {
        let (plan, rounds) = (self.plan, opts.rounds());
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
                if self.accs[i].failed.is_some() || self.accs[i].stalled() {
                    continue;
                }
                let before = LoadSample::take(true);
                match run_once(&self.specs[i].0) {
                    // A repetition cut short by a signal is not a measurement.
                    Ok(_) if crate::runner::interrupted().is_some() => break 'rounds,
                    Ok(r) => {
                        let workers = if self.specs[i].1 { 0 } else { p.threads };
                        let cpus = self.ctx.host.logical_cpus;
                        let load = before.until(&LoadSample::take(false), workers, cpus);
                        self.accs[i].loads.push(load);
                        self.accs[i].push(round, r)
                    }
                    Err(e) => {
                        let _ = writeln!(
                            err,
                            "[{done}/{total}] {} t={} {} failed: {e}",
                            p.entry.info.name, p.threads, p.mix
                        );
                        self.accs[i].failed = Some(e.to_string());
                        continue;
                    }
                }
                // Saved now, so nothing measured is lost; rewritten as later rounds add to it.
                let result = self.result(i);
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
                let last = &self.accs[i].reps.last().expect("just pushed").1;
                let load = self.accs[i].loads.last().filter(|l| l.busy);
                let _ = writeln!(
                    err,
                    "[{done}/{total}] round {}: {} t={} {}: {}{}{}{} -> {}",
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
                    load.map_or(String::new(), |l| format!(
                        ", host busy ({})",
                        l.reasons.join(", ")
                    )),
                    crate::opts::io::shown(&path)
                );
            }
        }
        Ok((done, total))
    }

    /// The final figures (every ratio paired over all rounds), saved and printed; the exit code.
    fn finish(
        &self,
        opts: &RunArgs,
        store: &mut LazyStore,
        hooks: &Hooks,
        err: &mut dyn std::io::Write,
        complete: bool,
        calibration: Calibration,
    ) -> Result<Outcome> {
        let plan = self.plan;
        let mut results = Vec::new();
        for i in 0..plan.runs.len() {
            if self.accs[i].reps.is_empty() {
                continue;
            }
            let r = self.result(i);
            store.get()?.save_slot(i, &r)?;
            results.push(r);
        }
        let failures: Vec<&String> = self.accs.iter().filter_map(|a| a.failed.as_ref()).collect();
        if failures.is_empty() && results.iter().all(|r| r.nothing_measured && r.is_clean()) {
            // Measured nothing: a directory of empty results would pass for a measurement.
            store.discard();
        }

        let format = opts.format();
        let out = format.exporter().export(&results);
        use crate::opts::io::stdout_failed;
        let mut stdout = std::io::stdout().lock();
        if !hooks.quiet {
            stdout.write_all(out.as_bytes()).map_err(stdout_failed)?;
        }
        if format == Format::Table && !hooks.quiet {
            for r in &results {
                for w in r.warnings.iter().filter(|w| !plan.warnings.contains(w)) {
                    writeln!(stdout, "note: {} t={} {}: {w}", r.lock, r.threads, r.mix)
                        .map_err(stdout_failed)?;
                }
            }
            if let Some(dir) = store.dir() {
                writeln!(stdout, "results saved in {}", crate::opts::io::shown(dir))
                    .map_err(stdout_failed)?;
            }
        }
        stdout.flush().map_err(stdout_failed)?;
        warn_busy(&results);

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
                    .map_or("no directory (nothing finished)".into(), |d| {
                        crate::opts::io::shown(d)
                    })
            );
            return Ok(Outcome {
                code: 128 + sig,
                results,
                complete: false,
                calibration,
                dir: store.dir().map(|d| d.to_path_buf()),
            });
        }
        Ok(Outcome {
            code: exit_summary(&results, !failures.is_empty(), err),
            results,
            complete,
            calibration,
            dir: store.dir().map(|d| d.to_path_buf()),
        })
    }
}

/// After the table, on stderr (a sweep's too): how many results were measured on a busy host.
fn warn_busy(results: &[RunResult]) {
    let loads: Vec<Load> = results
        .iter()
        .filter_map(|r| r.host.load.clone().filter(|l| l.busy))
        .collect();
    if let Some(worst) = Load::worst(&loads) {
        crate::opts::io::errln!(
            "warning: {} of {} results were measured on a busy host (worst: {}): their figures carry the busy-host flag",
            loads.len(),
            results.len(),
            worst.reasons.join(", ")
        );
    }
}

/// Shuffles `v` (Fisher–Yates) with the generator of round `round` of `seed`.
fn shuffle(v: &mut [usize], seed: u64, round: u64) {
    let mut rng = Rng::new(seed ^ 0x0DD5_EED5, round);
    for i in (1..v.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        v.swap(i, j);
    }
}
