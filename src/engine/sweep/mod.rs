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
//! measuring; `--resume DIR` skips the points done and refuses a config that changed, except
//! one that only drops locks (a lock that crashed the process is left out of the points to go).

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

/// Every point's run options and repetitions, validated as `run` validates them, over the
/// shared config `base` (the text of the sweep file `path`, which messages name).
fn validate(sweep: &Sweep, base: &str, path: &Path, limits: &Limits) -> Result<Vec<PointPlan>> {
    let mut plans = Vec::new();
    for p in &sweep.points {
        let at = |e: UsageError| UsageError(format!("sweep point {}: {e}", p.id()));
        let mut opts = p.run_args(base, path).map_err(at)?;
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
    let (sweep, plans, limits, _lock) = prepare(&start)?;
    measure(&start.dir, &sweep, &plans, &limits)
}

/// Takes the sweep directory's lock (an exclusive `flock` on `DIR/.lock`, released when the
/// file is closed, also when the process dies): a second sweep or resume of the same directory
/// is refused at once instead of mixing its results with this one's.
fn lock(dir: &Path) -> Result<fs::File> {
    use std::os::fd::AsRawFd as _;
    let path = dir.join(".lock");
    let f = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", crate::opts::io::shown(&path)))?;
    // SAFETY: flock on a descriptor this function owns.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        return Err(UsageError(format!(
            "{} is in use by another `lockbench sweep` (or --resume) still running: wait for it to end, or give another --out",
            crate::opts::io::shown(dir)
        ))
        .into());
    }
    Ok(f)
}

/// Parses the config, checks it against a resumed sweep's manifest, validates every point
/// (as `run` validates its options) before anything is written, then makes the directory,
/// locks it, and writes the shared run config and (for a new sweep) the manifest.
fn prepare(start: &Start) -> Result<(Sweep, Vec<PointPlan>, Limits, fs::File)> {
    let (dir, text, path, manifest) = (&start.dir, &start.text, &start.path, &start.manifest);
    let mut topo = Topology::detect().context("reading the CPU topology")?;
    // `cpus = "LIST"` limits every point, so "cores" and "cpus" count what it leaves.
    if let Some(list) = text
        .parse::<toml::Table>()
        .ok()
        .and_then(|t| t.get("cpus").and_then(|v| v.as_str().map(str::to_string)))
    {
        topo = crate::engine::plan::restrict_to(
            &topo,
            &list,
            &format!("`cpus` in {}", path.display()),
        )?;
    }
    let machine = Machine {
        cores: topo.physical_cores(),
        cpus: topo.logical_cpus(),
    };
    let sweep = Sweep::parse(text, path, machine)?;
    let dropped = manifest
        .as_ref()
        .is_some_and(|m| m.config_hash != sweep.hash && config::drops_locks_only(&m.config, text));
    if let Some(m) = &manifest {
        if m.config_hash != sweep.hash && !dropped {
            return Err(UsageError(format!(
                "{} changed since the sweep in {} started ({} ≠ {}): resume with the config it started with (or leave CONFIG out), or start a new sweep with --out",
                crate::opts::io::shown(path),
                crate::opts::io::shown(dir),
                sweep.hash,
                m.config_hash
            ))
            .into());
        }
    }
    // The shared run config (the sweep's without its lists): every point is validated over
    // it, and its repetitions counted, before anything is written.
    let base_text = toml::to_string(&sweep.base)?;
    let limits = Limits::detect();
    let plans = validate(&sweep, &base_text, path, &limits)?;
    crate::opts::out::check_dir("--out", dir)?;
    check_places(dir)?;
    crate::opts::io::create_dir_all(dir)?;
    let held = lock(dir)?;
    if manifest.is_none() && dir.join("manifest.json").exists() {
        return Err(UsageError(format!(
            "{} already holds a sweep: finish it with --resume {0}, or choose another --out",
            crate::opts::io::shown(dir)
        ))
        .into());
    }
    write_atomic(&dir.join("run-config.toml"), base_text.as_bytes())?;

    if let (true, Some(m)) = (dropped, manifest) {
        // Resumed without some of its locks: the manifest takes the config that drops them.
        let m = Manifest {
            config: text.clone(),
            config_path: path.display().to_string(),
            config_hash: sweep.hash.clone(),
            ..m.clone()
        };
        write_atomic(
            &dir.join("manifest.json"),
            serde_json::to_string_pretty(&m)?.as_bytes(),
        )?;
    }
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
    Ok((sweep, plans, limits, held))
}

/// Every place in `dir` a sweep writes must be of the kind it writes there (checked before
/// anything is measured): its files not directories, `partial` a directory or absent.
fn check_places(dir: &Path) -> Result<(), UsageError> {
    let shown = crate::opts::io::shown;
    for name in [
        "manifest.json",
        "run-config.toml",
        "points.jsonl",
        "results.json",
        ".lock",
    ] {
        let p = dir.join(name);
        if fs::metadata(&p).is_ok_and(|m| !m.is_file()) {
            return Err(UsageError(format!(
                "{} is not a regular file: a sweep writes it; move it away, or give another --out",
                shown(&p)
            )));
        }
    }
    let partial = dir.join("partial");
    if fs::symlink_metadata(&partial).is_ok_and(|m| !m.is_dir()) {
        return Err(UsageError(format!(
            "{} is not a directory: a sweep measures its unfinished point there; move it away and run again",
            shown(&partial)
        )));
    }
    Ok(())
}

/// Rewrites `results.json` from the journal: every result of every point done.
fn rebuild(dir: &Path, journal: &journal::Journal) -> Result<()> {
    write_atomic(
        &dir.join("results.json"),
        serde_json::to_string_pretty(&journal.results())?.as_bytes(),
    )
}

/// Measures every point not done yet, saving each as it finishes; returns the exit code.
fn measure(dir: &Path, sweep: &Sweep, plans: &[PointPlan], limits: &Limits) -> Result<i32> {
    let err = &mut crate::opts::io::stderr();
    let ids: std::collections::BTreeSet<String> = sweep.points.iter().map(Point::id).collect();
    let mut journal = journal::read(dir, &ids)?;
    for why in &journal.dropped {
        let _ = writeln!(
            err,
            "warning: {}: {why}",
            crate::opts::io::shown(&dir.join("points.jsonl"))
        );
    }
    // results.json is what the journal says, whatever became of it since.
    rebuild(dir, &journal)?;
    let done = journal.done();
    let todo: Vec<&PointPlan> = plans
        .iter()
        .filter(|(p, _, _, _)| !done.contains(&p.id()))
        .collect();
    let total: usize = todo.iter().map(|(_, _, _, r)| r).sum();
    let _ = writeln!(
        err,
        "sweep: {} points ({} done before), {total} runs to go, results in {}",
        sweep.points.len(),
        sweep.points.len() - todo.len(),
        crate::opts::io::shown(dir)
    );
    let lines = !std::io::stderr().is_terminal();
    let bar = if lines {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::new(total as u64);
        b.set_style(
            ProgressStyle::with_template(
                "{bar:30} {pos}/{len} runs, ETA {eta} ({elapsed} so far)\n{msg}",
            )
            .expect("valid template"),
        );
        b.enable_steady_tick(Duration::from_millis(500));
        b
    };
    let partial = dir.join("partial");
    let mut calibration = None;
    let mut code = 0;
    let mut before = 0;
    let started = std::time::Instant::now();
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
        );
        let outcome = match outcome {
            Ok(o) => o,
            Err(e) => {
                let _ = fs::remove_dir_all(&partial);
                return Err(e);
            }
        };
        before += reps;
        calibration = Some(outcome.calibration);
        if !outcome.complete {
            let _ = fs::remove_dir_all(&partial);
            bar.abandon_with_message(format!("{head}: stopped before its last round; not saved"));
            let _ = writeln!(
                err,
                "sweep: stopped during point {id}; `lockbench sweep --resume {}` finishes it",
                crate::opts::io::shown(dir)
            );
            // Interrupted (130 / 143, as `run`), or a run of the point failed to finish.
            return Ok(crate::runner::interrupted().map_or(1, |sig| 128 + sig));
        }
        append_point(dir, &id, &outcome.results)?;
        journal.points.push((
            id.clone(),
            outcome
                .results
                .iter()
                .map(serde_json::to_value)
                .collect::<Result<_, _>>()?,
        ));
        rebuild(dir, &journal)?;
        let _ = fs::remove_dir_all(&partial);
        if lines {
            let _ = writeln!(
                err,
                "{}",
                progress_line(n + 1, todo.len(), &id, started.elapsed(), before, total)
            );
        }
        report_failures(&bar, dir, p, &id, (&outcome.results, outcome.code));
        code = code.max(outcome.code);
    }
    bar.finish_and_clear();
    println!(
        "sweep: {}/{} points done, {} results in {dir}; `lockbench report {dir}` renders them",
        journal.points.len(),
        sweep.points.len(),
        journal.results().len(),
        dir = crate::opts::io::shown(dir)
    );
    Ok(code)
}

/// One line per point finished (stderr not a terminal): where the sweep is, and the time
/// left at the pace of the runs measured so far.
fn progress_line(
    n: usize,
    of: usize,
    id: &str,
    elapsed: Duration,
    runs_done: usize,
    runs: usize,
) -> String {
    let left = if runs_done == 0 {
        "unknown".to_string()
    } else {
        let secs = elapsed.as_secs_f64() / runs_done as f64 * (runs - runs_done) as f64;
        crate::workload::format_duration(Duration::from_secs(secs.round() as u64))
    };
    format!(
        "sweep: point {n}/{of} done ({id}); {runs_done}/{runs} runs in {}, about {left} left",
        crate::workload::format_duration(Duration::from_secs(elapsed.as_secs()))
    )
}

/// Says which runs of a point failed or were flagged.
fn report_failures(
    bar: &ProgressBar,
    dir: &Path,
    p: &Point,
    id: &str,
    (results, code): (&[crate::report::RunResult], i32),
) {
    let flag = |r: &crate::report::RunResult| {
        r.safety_violations > 0 || r.invariant_failures > 0 || r.stalled.is_some()
    };
    for r in results.iter().filter(|r| flag(r)) {
        bar.suspend(|| {
            crate::opts::io::errln!(
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
    if code != 0 && !results.iter().any(flag) {
        bar.suspend(|| {
            crate::opts::io::errln!(
                "error: point {id}: a run failed and is missing from the results; `lockbench run --config {} {}` shows why",
                crate::opts::io::shown(&dir.join("run-config.toml")),
                p.cli_flags()
            )
        });
    }
}
