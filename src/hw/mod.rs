//! The hardware side: what cache-line transfers cost on this machine (`calibrate`), how the
//! model's RMRs line up with hardware coherence counts (`correlate`), and how well RMRs times
//! transfer cost predict passage time (`predict`).
//!
//! `correlate` and `predict` read results saved by `lockbench run` (with `--rmr` for the model
//! side, `--counters coherence` for the hardware side); see [`results`] for what they read.

pub mod calibrate;
pub mod correlate;
pub mod predict;
pub mod results;
pub mod stats;
pub mod svg;

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;

use crate::cli::ListFormat;
use crate::error::UsageError;
use crate::runner::topology::Topology;

/// Where `calibrate` saves and `predict` reads the calibration by default.
pub const DEFAULT_CALIBRATION: &str = "reports/calibration.json";

/// Options of `calibrate`.
#[derive(Args, Debug)]
pub struct CalibrateArgs {
    /// CPUs to measure between, e.g. 0-3,8 (default: one CPU per physical core this process
    /// may use).
    #[arg(long)]
    pub cpus: Option<String>,
    /// Cache lines per timed batch.
    #[arg(long, default_value_t = 64)]
    pub lines: usize,
    /// Timed batches per operation and CPU pair; the median is kept.
    #[arg(long, default_value_t = 201)]
    pub rounds: usize,
    /// Where to save the calibration (JSON).
    #[arg(long, default_value = DEFAULT_CALIBRATION)]
    pub out: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: ListFormat,
}

/// Options of `correlate`.
#[derive(Args, Debug)]
pub struct CorrelateArgs {
    /// Directory of results (`lockbench run` output, with `--rmr` runs).
    pub dir: PathBuf,
    /// Directory the scatter plots (SVG) are written to (default: DIR).
    #[arg(long)]
    pub svg: Option<PathBuf>,
    /// Write no plots.
    #[arg(long)]
    pub no_svg: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: ListFormat,
}

/// Options of `predict`.
#[derive(Args, Debug)]
pub struct PredictArgs {
    /// Directory of results (`lockbench run` output, with `--rmr` runs and a 1-thread run of
    /// each configuration).
    pub dir: PathBuf,
    /// Calibration saved by `lockbench calibrate`.
    #[arg(long, default_value = DEFAULT_CALIBRATION)]
    pub calibration: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: ListFormat,
}

/// The 1-minute load average, when readable.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// `lockbench calibrate`: returns the exit code.
pub fn calibrate(args: &CalibrateArgs) -> Result<i32> {
    if args.lines < 2 {
        return Err(UsageError("--lines must be at least 2".into()).into());
    }
    if args.rounds == 0 {
        return Err(UsageError("--rounds must be at least 1".into()).into());
    }
    let topo = Topology::detect().context("reading the CPU topology")?;
    let cpus = calibrate::choose_cpus(args.cpus.as_deref(), &topo)?;
    let pairs = cpus.len() * (cpus.len() - 1);
    eprintln!(
        "lockbench calibrate: {} CPUs, {pairs} ordered pairs, {} lines × {} rounds per operation",
        cpus.len(),
        args.lines,
        args.rounds
    );
    let cal = calibrate::measure(&calibrate::Settings {
        cpus,
        lines: args.lines,
        rounds: args.rounds,
    })?;
    if let Some(parent) = args.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    std::fs::write(&args.out, serde_json::to_string_pretty(&cal)? + "\n")
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    let mut stdout = std::io::stdout();
    match args.format {
        ListFormat::Table => write!(stdout, "{}", calibrate::table(&cal))?,
        ListFormat::Json => writeln!(stdout, "{}", serde_json::to_string_pretty(&cal)?)?,
    }
    eprintln!("calibration saved to {}", args.out.display());
    Ok(0)
}

/// `lockbench correlate DIR`: returns the exit code.
pub fn correlate(args: &CorrelateArgs) -> Result<i32> {
    let loaded = results::load(&args.dir)?;
    if loaded.runs.iter().all(|r| r.rmr.is_none()) {
        return Err(UsageError(format!(
            "no run in {} carries model RMRs (every rmr is null); run with --rmr cc|cc-wb|dsm",
            args.dir.display()
        ))
        .into());
    }
    let svg_dir: Option<&Path> = if args.no_svg {
        None
    } else {
        Some(args.svg.as_deref().unwrap_or(&args.dir))
    };
    let report = correlate::correlate(&args.dir, &loaded.runs, svg_dir)?;
    let mut stdout = std::io::stdout();
    match args.format {
        ListFormat::Table => write!(stdout, "{}", correlate::table(&report))?,
        ListFormat::Json => writeln!(stdout, "{}", serde_json::to_string_pretty(&report)?)?,
    }
    Ok(0)
}

/// Reads a calibration file; a missing or malformed one is bad input.
pub fn read_calibration(path: &Path) -> Result<calibrate::Calibration, UsageError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        UsageError(format!(
            "cannot read the calibration {} ({e}); run `lockbench calibrate` first or give \
             --calibration FILE",
            path.display()
        ))
    })?;
    let cal: calibrate::Calibration = serde_json::from_str(&text).map_err(|e| {
        UsageError(format!(
            "{} is not a lockbench calibration ({e}); run `lockbench calibrate` to make one",
            path.display()
        ))
    })?;
    cal.validate().map_err(|e| {
        UsageError(format!(
            "{} is not a usable calibration: {e}; run `lockbench calibrate` again",
            path.display()
        ))
    })?;
    Ok(cal)
}

/// `lockbench predict DIR`: returns the exit code.
pub fn predict(args: &PredictArgs) -> Result<i32> {
    let cal = read_calibration(&args.calibration)?;
    let loaded = results::load(&args.dir)?;
    if loaded.runs.iter().all(|r| r.rmr.is_none()) {
        return Err(UsageError(format!(
            "no run in {} carries model RMRs (every rmr is null); run with --rmr cc|cc-wb|dsm",
            args.dir.display()
        ))
        .into());
    }
    let report = predict::predict(&loaded.runs, &cal);
    let mut stdout = std::io::stdout();
    match args.format {
        ListFormat::Table => write!(stdout, "{}", predict::table(&report))?,
        ListFormat::Json => writeln!(stdout, "{}", serde_json::to_string_pretty(&report)?)?,
    }
    Ok(0)
}
