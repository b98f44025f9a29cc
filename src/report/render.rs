//! The report's Markdown document: rendering a directory of results (what `run` or `sweep`
//! saved) as `report.md`, its sections in order (where the results come from, failures, one
//! section per scenario with its plots, the model against hardware, every point, the runs'
//! notes), with SVG plots beside it (`plots/`) and the latency histograms as HdrHistogram
//! interval logs (`hlog/`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Result;

pub use super::figures::Written;
use super::figures::{self, lock_order, md_cell, Page};
use super::quality_md::SweepState;
use super::saved::{self, Scenario};
use super::RunResult;
use super::{hlog, nanos};
use crate::runner::host::Host;

/// A section the caller adds to the report for results with model RMRs (the command passes
/// the hardware section, which lives above this layer).
pub type Section<'s> = &'s dyn Fn(&mut Page<'_>, &Path);

/// Renders the results of `dir` into `out`; `hardware` is written where some result has
/// model RMRs.
pub fn render(
    dir: &Path,
    out: &Path,
    sweep: Option<&SweepState>,
    hardware: Option<Section<'_>>,
) -> Result<Written> {
    let runs = saved::load(dir)?;
    crate::opts::io::create_dir_all(&out.join("plots"))?;
    crate::opts::io::create_dir_all(&out.join("hlog"))?;
    let mut page = Page {
        out,
        md: String::new(),
        written: Written::default(),
    };
    intro(&mut page.md, dir, &runs);
    super::quality_md::sweep_state(&mut page.md, dir, sweep);
    super::quality_md::settings(&mut page.md, &runs);
    failures(&mut page.md, &runs);
    // Every lock keeps one colour and marker across the plots.
    let all: Vec<&RunResult> = runs.iter().collect();
    let palette: Vec<&str> = lock_order(&all).iter().map(|(l, _)| *l).collect();
    let mut scenarios: BTreeMap<Scenario, Vec<&RunResult>> = BTreeMap::new();
    for r in &runs {
        scenarios.entry(r.key().scenario()).or_default().push(r);
    }
    for (scen, rs) in &scenarios {
        figures::scenario(&mut page, scen, rs, &palette)?;
    }
    // Model against hardware, and predicted against measured, where the runs allow.
    if let Some(section) = hardware.filter(|_| runs.iter().any(|r| r.rmr.is_some())) {
        section(&mut page, dir);
    }
    page.written.hlogs = hlog::write_run_logs(&runs, out)?;
    super::nodes::markdown(&mut page.md, &runs);
    every_point(&mut page.md, &runs);
    super::quality_md::flags(&mut page.md, &runs);
    notes(&mut page.md, &runs, &page.written.hlogs);
    let path = out.join("report.md");
    crate::opts::io::write_atomic(&path, page.md.as_bytes())?;
    page.written.markdown = path;
    super::html::write(out, &page.md)?;
    Ok(page.written)
}

/// The title, where the results come from and how they were measured.
fn intro(md: &mut String, dir: &Path, runs: &[RunResult]) {
    let _ = writeln!(md, "# lockbench report\n");
    let first = &runs[0];
    let _ = writeln!(
        md,
        "Results: `{}` — {} points, lockbench {}.  ",
        crate::opts::io::shown(dir),
        runs.len(),
        first.version
    );
    let _ = writeln!(md, "Host: {}.  ", host_line(&first.host));
    if !first.stop.is_empty() {
        let _ = writeln!(
            md,
            "Each point: {}, {} round{} (figures are medians over the rounds; error bars span min–max), wait {}.\n",
            first.stop,
            first.repeat,
            if first.repeat == 1 { "" } else { "s" },
            first.wait_policy
        );
    } else {
        md.push('\n');
    }
    let hosts: Vec<String> = {
        let mut v: Vec<String> = runs.iter().map(|r| host_line(&r.host)).collect();
        v.sort();
        v.dedup();
        v
    };
    if hosts.len() > 1 {
        let _ = writeln!(
            md,
            "**These results come from {} different hosts**: {}.\n",
            hosts.len(),
            hosts.join("; ")
        );
    }
}

/// The runs that failed a safety check or stalled.
fn failures(md: &mut String, runs: &[RunResult]) {
    let unsafe_runs: Vec<&RunResult> = runs
        .iter()
        .filter(|r| r.safety_violations > 0 || r.invariant_failures > 0 || r.stalled.is_some())
        .collect();
    if !unsafe_runs.is_empty() {
        let _ = writeln!(md, "## Failures\n");
        for r in &unsafe_runs {
            let _ = writeln!(
                md,
                "- **{}** ({} threads, {}): {} safety violations, {} register-bound failures{}",
                r.lock,
                r.threads,
                r.mix,
                r.safety_violations,
                r.invariant_failures,
                r.stalled
                    .as_ref()
                    .map(|s| format!(", stalled: {s}"))
                    .unwrap_or_default()
            );
        }
        md.push('\n');
    }
}

/// The table of every point.
fn every_point(md: &mut String, runs: &[RunResult]) {
    let _ = writeln!(md, "## Every point\n");
    let _ = writeln!(
        md,
        "Figures marked `!` rest on too little to be read as precise numbers: the flags column names why (see *Quality flags* below). range = (max − min) / median over the rounds; vs base = median of the ratios paired within each round, with its interval; `no diff` when the interval holds 1.\n"
    );
    let _ = writeln!(
        md,
        "| lock | problem | threads | mix | cs | think | k | throughput | range | vs base | p50 | p99 | p99.9 | max | samples | jain | inside | RMR/passage | safety | flags |"
    );
    let _ = writeln!(
        md,
        "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"
    );
    for r in runs {
        let cells: Vec<String> = point_row(r).iter().map(|c| md_cell(c)).collect();
        let _ = writeln!(md, "| {} |", cells.join(" | "));
    }
    md.push('\n');
}

/// One row of the table of every point: the table's cells where they are the same.
fn point_row(r: &RunResult) -> Vec<String> {
    let cols = super::columns(r);
    let cell = |name: &str| {
        cols.iter()
            .find(|c| c.0 == name)
            .map_or("–".to_string(), |c| c.1.clone())
    };
    vec![
        r.lock.clone(),
        r.problem.clone(),
        r.threads.to_string(),
        r.mix.clone(),
        nanos(r.cs_ns as f64),
        nanos(r.think_ns as f64),
        r.k.to_string(),
        cell("throughput"),
        cell("range"),
        cell("vs base"),
        cell("p50"),
        cell("p99"),
        cell("p99.9"),
        cell("max"),
        r.latency_ns.count.to_string(),
        cell("jain"),
        cell("inside"),
        r.model_rmrs().map_or("–".into(), |m| {
            format!("{:.1} ({})", m.per_passage_mean, m.model)
        }),
        cell("safety"),
        super::quality::assess(r).names(),
    ]
}

/// The runs' warnings, and where the interval logs are.
fn notes(md: &mut String, runs: &[RunResult], hlogs: &[PathBuf]) {
    let mut warnings: Vec<String> = runs
        .iter()
        .flat_map(|r| {
            r.warnings
                .iter()
                .map(move |w| format!("{} (t={}, {}): {w}", r.lock, r.threads, r.mix))
        })
        .collect();
    warnings.dedup();
    if !warnings.is_empty() {
        let _ = writeln!(md, "## Notes from the runs\n");
        for w in &warnings {
            let _ = writeln!(md, "- {}", md_cell(w));
        }
        md.push('\n');
    }
    if !hlogs.is_empty() {
        let _ = writeln!(
            md,
            "Entry-latency histograms of every point are in `hlog/` as HdrHistogram interval logs (values in ns), e.g. `{}`.",
            crate::opts::io::shown(&hlogs[0])
        );
    }
}

/// A host in one line: CPU, cores, kernel and the settings that move figures.
pub fn host_line(host: &Host) -> String {
    let mut parts = Vec::new();
    if let Some(m) = &host.cpu_model {
        parts.push(m.clone());
    }
    if host.logical_cpus > 0 {
        parts.push(format!(
            "{} core{} / {} CPU{}",
            host.physical_cores,
            if host.physical_cores == 1 { "" } else { "s" },
            host.logical_cpus,
            if host.logical_cpus == 1 { "" } else { "s" }
        ));
    }
    if let Some(k) = &host.kernel {
        parts.push(format!("Linux {k}"));
    }
    let env = &host.env;
    let on_off = |b: Option<bool>| b.map(|b| if b { "on" } else { "off" }.to_string());
    for (what, v) in [
        ("governor", env.governor.clone()),
        ("boost", on_off(env.boost)),
        ("SMT", env.smt_control.clone()),
        ("clocksource", env.clocksource.clone()),
        ("microcode", env.microcode.clone()),
        ("isolated", env.isolated_cpus.clone()),
    ] {
        match v {
            Some(v) if !v.is_empty() => parts.push(format!("{what} {v}")),
            _ => {}
        }
    }
    parts.join(", ")
}
