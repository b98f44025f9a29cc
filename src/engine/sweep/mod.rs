//! `lockbench sweep CONFIG.toml [--out DIR] [--resume DIR]`: a run config whose `threads`,
//! `mix`, `cs`, `think`, `k`, `cs-lines` and `rmr` may be lists, run as a matrix of points, each
//! point one configuration (thread count, mix, cs, think, k, lines, RMR model) with every lock
//! of the config, measured by the run engine in its interleaved rounds (so ratios stay paired).
//!
//! `threads` may name counts relative to the machine, so one suite serves every server:
//! `"powers-of-two"` (1, 2, 4, … up to the physical cores, and the core count itself),
//! `"cores"` (every physical core) and `"cpus"` (every logical CPU: SMT siblings too, with
//! `smt = true`). `rmr = ["none", "cc"]` measures each point natively and on the counting
//! memory, the pair `correlate` and the report's model-against-hardware plots need.
//!
//! The sweep directory holds `manifest.json` (the config, its hash, the lockbench version and
//! the host), `points.jsonl` (each finished point's results appended in one write, then a line
//! marking the point done) and `results.json` (every finished result, rewritten after each
//! point, what `report` and `compare` read). An interrupted sweep loses only the point it was
//! measuring; `--resume DIR` skips the points done and refuses a config that changed.

mod config;
mod journal;

use std::fs;
use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};

pub use config::{Machine, Manifest, Point, Sweep};
pub use journal::finished;
use journal::{append_point, write_atomic};

use crate::engine::options::{Limits, RunArgs};
use crate::engine::plan::planned_repetitions;
use crate::engine::rounds::{run_with, Hooks};
use crate::error::UsageError;
use crate::report::store::now_secs;
use crate::runner::host::Host;
use crate::runner::topology::Topology;

/// Where a sweep runs: its directory, its config (text and path), and its manifest when it
/// is resumed.
pub struct Start {
    pub dir: PathBuf,
    pub text: String,
    pub path: PathBuf,
    pub manifest: Option<Manifest>,
}

/// A point's run options (layered over the sweep's shared config and validated as `run`
/// validates them), the warnings validation gave, and its repetitions.
type PointPlan = (Point, RunArgs, Vec<String>, usize);

/// Every point's run options and repetitions, validated as `run` validates them.
fn validate(sweep: &Sweep, base: &Path, limits: &Limits) -> Result<Vec<PointPlan>> {
    let mut plans = Vec::new();
    for p in &sweep.points {
        let at = |e: UsageError| UsageError(format!("sweep point {}: {e}", p.id()));
        let mut opts = p.run_args(base).and_then(|a| a.layered()).map_err(at)?;
        let warnings = opts.validate(limits).map_err(at)?;
        let reps =
            planned_repetitions(&opts, limits).map_err(|e| match e.downcast::<UsageError>() {
                Ok(u) => anyhow::Error::new(at(u)),
                Err(e) => e,
            })?;
        plans.push((p.clone(), opts, warnings, reps));
    }
    Ok(plans)
}

/// Runs a sweep: every point validated before any is measured, each saved as it finishes.
pub fn run(start: Start) -> Result<i32> {
    let (sweep, plans, limits) = prepare(&start)?;
    measure(&start.dir, &sweep, &plans, &limits)
}

/// Parses the config, checks it against a resumed sweep's manifest, validates every point
/// (as `run` validates its options) before anything is written, then makes the directory and
/// writes the shared run config and (for a new sweep) the manifest.
fn prepare(start: &Start) -> Result<(Sweep, Vec<PointPlan>, Limits)> {
    let (dir, text, path, manifest) = (&start.dir, &start.text, &start.path, &start.manifest);
    let topo = Topology::detect().context("reading the CPU topology")?;
    let machine = Machine {
        cores: topo.physical_cores(),
        cpus: topo.logical_cpus(),
    };
    let sweep = Sweep::parse(text, path, machine)?;
    if let Some(m) = &manifest {
        if m.config_hash != sweep.hash {
            return Err(UsageError(format!(
                "{} changed since the sweep in {} started ({} ≠ {}): resume with the config it started with (or leave CONFIG out), or start a new sweep with --out",
                path.display(),
                dir.display(),
                sweep.hash,
                m.config_hash
            ))
            .into());
        }
    }
    // The shared run config (the sweep's without its lists), first in a scratch file: every
    // point is validated, and its repetitions counted, before anything is written.
    let base_text = toml::to_string(&sweep.base)?;
    let base = std::env::temp_dir().join(format!("lockbench-sweep-{}.toml", std::process::id()));
    fs::write(&base, &base_text).with_context(|| format!("cannot write {}", base.display()))?;
    let limits = Limits::detect();
    let plans = validate(&sweep, &base, &limits);
    let _ = fs::remove_file(&base);
    let plans = plans?;
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    write_atomic(&dir.join("run-config.toml"), base_text.as_bytes())?;

    if manifest.is_none() {
        let m = Manifest {
            config: text.clone(),
            config_path: path.display().to_string(),
            config_hash: sweep.hash.clone(),
            lockbench_version: env!("CARGO_PKG_VERSION").to_string(),
            host: serde_json::to_value(Host::detect(&topo))?,
            created: now_secs(),
            points: sweep.points.iter().map(Point::id).collect(),
        };
        write_atomic(
            &dir.join("manifest.json"),
            serde_json::to_string_pretty(&m)?.as_bytes(),
        )?;
    }
    Ok((sweep, plans, limits))
}

/// Measures every point not done yet, saving each as it finishes; returns the exit code.
fn measure(dir: &Path, sweep: &Sweep, plans: &[PointPlan], limits: &Limits) -> Result<i32> {
    let (done, _) = finished(dir);
    let todo: Vec<&PointPlan> = plans
        .iter()
        .filter(|(p, _, _, _)| !done.contains(&p.id()))
        .collect();
    let total: usize = todo.iter().map(|(_, _, _, r)| r).sum();
    let err = &mut std::io::stderr();
    let _ = writeln!(
        err,
        "sweep: {} points ({} done before), {total} runs to go, results in {}",
        sweep.points.len(),
        sweep.points.len() - todo.len(),
        dir.display()
    );
    let bar = if std::io::stdout().is_terminal() {
        let b = ProgressBar::new(total as u64);
        b.set_style(
            ProgressStyle::with_template(
                "{bar:30} {pos}/{len} runs, ETA {eta} ({elapsed} so far)\n{msg}",
            )
            .expect("valid template"),
        );
        b.enable_steady_tick(Duration::from_millis(500));
        b
    } else {
        ProgressBar::hidden()
    };
    let partial = dir.join("partial");
    let mut calibration = None;
    let mut code = 0;
    let mut before = 0;
    for (n, (p, opts, warnings, reps)) in todo.iter().enumerate() {
        let _ = fs::remove_dir_all(&partial);
        let id = p.id();
        let head = format!("point {}/{}: {id}", n + 1, todo.len());
        bar.set_message(head.clone());
        let mut progress = |d: usize, _: usize, what: &str| {
            bar.set_position((before + d) as u64);
            bar.set_message(format!("{head} — {what}"));
        };
        let outcome = run_with(
            opts,
            warnings.clone(),
            limits,
            Hooks {
                dir: Some(partial.clone()),
                quiet: true,
                progress: Some(&mut progress),
                calibration: calibration.take(),
            },
        )?;
        before += reps;
        calibration = Some(outcome.calibration);
        if !outcome.complete {
            bar.abandon_with_message(format!("{head}: stopped before its last round; not saved"));
            let _ = writeln!(
                err,
                "sweep: stopped during point {id}; `lockbench sweep --resume {}` finishes it",
                dir.display()
            );
            // Interrupted (130 / 143, as `run`), or a run of the point failed to finish.
            return Ok(crate::runner::interrupted().map_or(1, |sig| 128 + sig));
        }
        append_point(dir, &id, &outcome.results)?;
        let (_, all) = finished(dir);
        write_atomic(
            &dir.join("results.json"),
            serde_json::to_string_pretty(&all)?.as_bytes(),
        )?;
        let _ = fs::remove_dir_all(&partial);
        for r in &outcome.results {
            if r.safety_violations > 0 || r.invariant_failures > 0 || r.stalled.is_some() {
                bar.suspend(|| {
                    eprintln!(
                        "error: {} ({} threads, {}) at point {id}: {} safety violations, {} register-bound failures{}",
                        r.lock,
                        r.threads,
                        r.mix,
                        r.safety_violations,
                        r.invariant_failures,
                        if r.stalled.is_some() { ", stalled" } else { "" }
                    )
                });
            }
        }
        let flagged = outcome
            .results
            .iter()
            .any(|r| r.safety_violations > 0 || r.invariant_failures > 0 || r.stalled.is_some());
        if outcome.code != 0 && !flagged {
            bar.suspend(|| {
                eprintln!(
                    "error: point {id}: a run failed and is missing from the results; `lockbench run --config {} {}` shows why",
                    dir.join("run-config.toml").display(),
                    p.cli_flags()
                )
            });
        }
        code = code.max(outcome.code);
    }
    bar.finish_and_clear();
    let (done, all) = finished(dir);
    println!(
        "sweep: {}/{} points done, {} results in {dir}; `lockbench report {dir}` renders them",
        done.len(),
        sweep.points.len(),
        all.len(),
        dir = dir.display()
    );
    Ok(code)
}
