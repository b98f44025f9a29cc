//! The report's hardware section, for results with model RMRs: the model against hardware
//! counts (what `correlate` computes, its scatter plots beside the report) and, with a
//! calibration, predicted against measured passage times (what `predict` computes). The
//! `report` command hands it to [`crate::report::render::render`], which knows nothing of `hw`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::hw::{self, correlate, predict, results, svg};
use crate::report::figures::Page;
use crate::report::saved;
use crate::report::RunResult;

/// The hardware section of the results of `dir`, as Markdown added to `page` (plots written
/// beside it); `calibration` as `report --calibration` gives it.
pub fn section(page: &mut Page<'_>, dir: &Path, calibration: Option<&Path>) {
    page.md.push_str("## Model against hardware\n\n");
    // The same files the report read (a sweep's unfinished point is left out).
    let mut runs: Vec<RunResult> = Vec::new();
    for f in saved::result_files(dir) {
        let parsed = crate::opts::io::read_text(&f, crate::opts::io::RESULTS_CAP)
            .ok()
            .and_then(|t| results::runs_of(&t));
        match parsed {
            Some(rs) => runs.extend(rs),
            None => {
                let _ = writeln!(
                    page.md,
                    "Not drawn: {} could not be read.\n",
                    crate::opts::io::shown(&f)
                );
                return;
            }
        }
    }
    correlations(page, dir, &runs);
    page.md.push('\n');
    predictions(page, dir, calibration, &runs);
}

/// The coefficients of each model against each event, with their scatter plots.
fn correlations(page: &mut Page<'_>, dir: &Path, runs: &[RunResult]) {
    let out = page.out;
    let md = &mut page.md;
    let rep = match correlate::correlate(dir, runs, Some(&out.join("plots"))) {
        Ok(rep) => rep,
        Err(e) => {
            let _ = writeln!(md, "- correlation not computed: {e:#}");
            return;
        }
    };
    for c in &rep.correlations {
        let coeff = |v: Option<f64>| v.map_or("undefined".into(), |v| format!("{v:.3}"));
        let _ = writeln!(
            md,
            "- {} RMRs against {}: Pearson {}, Spearman {} over {} configurations",
            c.model,
            c.event,
            coeff(c.pearson),
            coeff(c.spearman),
            c.n
        );
        if let Some(p) = &c.plot {
            if let Ok(rel) = p.strip_prefix(out) {
                let _ = writeln!(md, "\n  ![{} vs {}]({})\n", c.model, c.event, rel.display());
                page.written.plots.push(rel.to_path_buf());
            }
        }
    }
    if !rep.pmu.available {
        if let Some(why) = &rep.pmu.reason {
            let _ = writeln!(md, "- hardware counters: unavailable ({why})");
        }
    }
    for n in &rep.notes {
        let _ = writeln!(md, "- {n}");
    }
}

/// Predicted against measured passage times, when a calibration is at hand.
fn predictions(page: &mut Page<'_>, dir: &Path, calibration: Option<&Path>, runs: &[RunResult]) {
    let candidates: Vec<PathBuf> = match calibration {
        Some(p) => vec![p.to_path_buf()],
        None => vec![
            dir.join("calibration.json"),
            PathBuf::from(hw::DEFAULT_CALIBRATION),
        ],
    };
    let Some(cal_path) = candidates.iter().find(|p| p.is_file()) else {
        let _ = writeln!(
            page.md,
            "Predicted against measured: no calibration (run `lockbench calibrate`, or give --calibration).\n"
        );
        return;
    };
    let cal = match hw::read_calibration(cal_path) {
        Ok(c) => c,
        Err(e) => {
            let _ = writeln!(page.md, "Predicted against measured: {e}.\n");
            return;
        }
    };
    let rep = predict::predict(runs, &cal);
    let points: Vec<svg::Point> = rep
        .predictions
        .iter()
        .filter_map(|p| {
            Some(svg::Point {
                x: p.measured_ns?,
                y: p.predicted_ns?,
                series: p.lock.clone(),
                label: format!("t{}", p.threads),
            })
        })
        .collect();
    if points.len() >= 2 {
        let scatter = svg::Scatter {
            title: "Predicted against measured passage time".into(),
            subtitle: format!(
                "RMRs × calibrated transfer cost + uncontended cost; line: predicted = measured; {}",
                rep.calibration
            ),
            x_label: "measured mean passage (ns)".into(),
            y_label: "predicted mean passage (ns)".into(),
            points,
            fit: Some((0.0, 1.0)),
        };
        let name = "predicted_vs_measured.svg";
        if page.write_svg(name, &svg::render(&scatter)).is_ok() {
            let _ = writeln!(page.md, "![predicted against measured](plots/{name})\n");
        }
    }
    if let Some(e) = rep.overall_mean_abs_error_pct {
        let _ = writeln!(
            page.md,
            "Mean absolute prediction error: {e:.1}% (calibration {}).\n",
            crate::opts::io::shown(cal_path)
        );
    }
}
