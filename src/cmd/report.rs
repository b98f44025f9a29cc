//! `lockbench report DIR`: renders a directory of results as `report.md` with SVG plots and
//! HdrHistogram interval logs, and as one self-contained `report.html`.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::engine::sweep::{finished, Manifest};
use crate::hw::section::section;
use crate::opts::{CalibrationOpt, OutOpt};
use crate::report::figures::Page;
use crate::report::quality_md::SweepState;
use crate::report::render;

/// Options of `report`.
#[derive(clap::Args, Debug)]
#[command(mut_arg("out", |a| a.help("Where report.md, plots/ and hlog/ go (default: DIR)")))]
pub struct Args {
    /// Directory of results: what `lockbench run` or `lockbench sweep` saved (a suite's
    /// directory of several runs works too).
    pub dir: PathBuf,
    /// Where report.md, plots/ and hlog/ go (default: DIR).
    #[command(flatten)]
    pub out: OutOpt,
    /// `--calibration`: for the predicted-vs-measured plot of `--rmr` runs (default:
    /// DIR/calibration.json, then reports/calibration.json, when present).
    #[command(flatten)]
    pub calibration: CalibrationOpt,
}

/// `lockbench report DIR`.
pub fn exec(args: &Args) -> Result<i32> {
    let out = args.out.out.clone().unwrap_or_else(|| args.dir.clone());
    crate::opts::out::check_dir(
        if args.out.out.is_some() {
            "--out"
        } else {
            "DIR"
        },
        &out,
    )?;
    // What the report writes: a directory there is bad input, found before anything is read.
    for file in ["report.md", "report.html"] {
        let path = out.join(file);
        if path.is_dir() {
            return Err(crate::error::UsageError(format!(
                "report: {} is a directory, where the report writes its {file}: move it away or \
                 give another --out",
                crate::opts::io::shown(&path)
            ))
            .into());
        }
        crate::opts::out::check_file("report", &path)?;
    }
    for dir in ["plots", "hlog"] {
        crate::opts::out::check_dir("report", &out.join(dir))?;
    }
    let sweep = sweep_state(&args.dir);
    let calibration = args.calibration.calibration.as_deref();
    if let Some(path) = calibration {
        // Given, it is read now: a wrong path is bad input even where no run uses it.
        crate::hw::read_calibration(path)?;
    }
    let hardware = |page: &mut Page<'_>, dir: &Path| section(page, dir, calibration);
    let w = render::render(&args.dir, &out, sweep.as_ref(), Some(&hardware))?;
    println!(
        "report: {} and {} ({} plots in {}, {} interval logs in {})",
        crate::opts::io::shown(&w.markdown),
        crate::opts::io::shown(&out.join("report.html")),
        w.plots.len(),
        crate::opts::io::shown(&out.join("plots")),
        w.hlogs.len(),
        crate::opts::io::shown(&out.join("hlog"))
    );
    Ok(0)
}

/// When `dir` is a sweep's directory: its points planned (manifest) and done (journal).
fn sweep_state(dir: &std::path::Path) -> Option<SweepState> {
    let m: Manifest =
        crate::opts::io::read_text(&dir.join("manifest.json"), crate::opts::io::RESULTS_CAP)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())?;
    let (done, _) = finished(dir);
    Some(SweepState {
        planned: m.points,
        done,
    })
}
