//! Rendering a directory of results (what `run` or `sweep` saved) as `report.md` with SVG plots
//! beside it (`plots/`) and the latency histograms as HdrHistogram interval logs (`hlog/`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};

use super::hlog;
use super::plots::{self, Axis, LineChart, Pt, Row, Series};
use super::saved::{self, file_safe, Scenario};
use super::RunResult;
use super::{nanos, rate};
use crate::runner::host::Host;

fn int(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        String::new()
    }
}

fn plain(v: f64) -> String {
    if v.abs() >= 100.0 || v == 0.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A percentile axis position (`log10(1 / (1 − q))`) written as a percentile: 0 → `0%`,
/// 2 → `99%`.
fn percentile_label(x: f64) -> String {
    let n = x.round() as i32;
    if n <= 0 {
        "0%".into()
    } else {
        let q = 100.0 * (1.0 - 10f64.powi(-n));
        format!("{q:.*}%", (n - 2).max(0) as usize)
    }
}

/// What the report wrote.
#[derive(Debug, Default)]
pub struct Written {
    /// report.md.
    pub markdown: PathBuf,
    /// Plots (relative to the output directory).
    pub plots: Vec<PathBuf>,
    /// Interval logs (relative to the output directory).
    pub hlogs: Vec<PathBuf>,
}

/// Locks in plotting order: the papers' algorithms by name, then baselines by name.
fn lock_order<'a>(runs: &[&'a RunResult]) -> Vec<(&'a str, bool)> {
    let mut locks: Vec<(&str, bool)> = Vec::new();
    for r in runs {
        if !locks.iter().any(|(l, _)| *l == r.lock) {
            locks.push((&r.lock, r.is_baseline()));
        }
    }
    locks.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(b.0)));
    locks
}

/// Thread counts on a log-2 scale when they span more than a factor of 20, ticks at the
/// counts measured.
fn threads_axis(threads: &[usize]) -> Axis {
    Axis {
        base2: true,
        log: true,
        from_zero: false,
        ticks: Some(threads.iter().map(|&t| t as f64).collect()),
        ..Axis::linear("threads", int)
    }
}

/// A rate for an axis: `10 Mop/s`, `2.5 Mop/s`.
fn axis_rate(v: f64) -> String {
    let s = rate(v);
    let (num, unit) = s.split_once(' ').unwrap_or((&s, ""));
    let num = num.trim_end_matches('0').trim_end_matches('.');
    format!("{num} {unit}")
}

/// The percentile spectrum of one result: (log10(1/(1−q)), latency ns), from its histogram
/// when saved, else from its percentiles.
fn spectrum(r: &RunResult) -> Vec<(f64, f64)> {
    if let Some(h) = r.latency_histogram.as_deref().and_then(hlog::decode) {
        if !h.is_empty() {
            let top = (h.len() as f64).log10();
            let mut pts = Vec::new();
            let mut x = 0.0;
            while x < top {
                let q = 1.0 - 10f64.powf(-x);
                pts.push((x, h.value_at_quantile(q) as f64));
                x += 0.05;
            }
            pts.push((top.max(x.min(top)), h.max() as f64));
            return pts;
        }
    }
    let l = &r.latency_ns;
    if l.count == 0 {
        return Vec::new();
    }
    let mut pts = vec![
        (0.0, l.p50.min(l.mean)),
        (2f64.log10(), l.p50),
        (1.0, l.p90),
    ];
    let top = (l.count as f64).log10();
    if top > 2.0 {
        pts.push((2.0, l.p99));
    }
    if top > 3.0 {
        pts.push((3.0, l.p999));
    }
    pts.push((top.max(1.0), l.max));
    pts
}

fn write_svg(out: &Path, name: &str, svg: &str, written: &mut Written) -> Result<()> {
    let rel = PathBuf::from("plots").join(name);
    fs::write(out.join(&rel), svg).with_context(|| format!("cannot write {}", rel.display()))?;
    written.plots.push(rel);
    Ok(())
}

/// A host in one line: CPU, cores, kernel and the settings that move figures.
pub fn host_line(host: &Host) -> String {
    let mut parts = Vec::new();
    if let Some(m) = &host.cpu_model {
        parts.push(m.clone());
    }
    if host.logical_cpus > 0 {
        parts.push(format!(
            "{} cores / {} CPUs",
            host.physical_cores, host.logical_cpus
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

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// Renders the results of `dir` into `out`.
pub fn render(dir: &Path, out: &Path, calibration: Option<&Path>) -> Result<Written> {
    let runs = saved::load(dir)?;
    fs::create_dir_all(out.join("plots"))
        .with_context(|| format!("cannot create {}/plots", out.display()))?;
    fs::create_dir_all(out.join("hlog"))
        .with_context(|| format!("cannot create {}/hlog", out.display()))?;
    let mut written = Written::default();
    // Every lock keeps one colour and marker across the plots.
    let all: Vec<&RunResult> = runs.iter().collect();
    let palette: Vec<&str> = lock_order(&all).iter().map(|(l, _)| *l).collect();
    let style = |l: &str| palette.iter().position(|p| *p == l).unwrap_or(0);
    let mut scenarios: BTreeMap<Scenario, Vec<&RunResult>> = BTreeMap::new();
    for r in &runs {
        scenarios.entry(r.key().scenario()).or_default().push(r);
    }
    let mut md = String::new();
    let _ = writeln!(md, "# lockbench report\n");
    let first = &runs[0];
    let _ = writeln!(
        md,
        "Results: `{}` — {} points, lockbench {}.  ",
        dir.display(),
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

    for (scen, rs) in &scenarios {
        let part = scen.file_part();
        let _ = writeln!(md, "## {}\n", scen.title());
        let locks = lock_order(rs);
        let mut threads: Vec<usize> = rs.iter().map(|r| r.threads).collect();
        threads.sort_unstable();
        threads.dedup();
        let find = |lock: &str, t: usize| rs.iter().find(|r| r.lock == lock && r.threads == t);
        let rounds = rs.iter().map(|r| r.repeat).max().unwrap_or(1).max(1);
        // One series per lock over the thread counts: a point for each result `point` takes.
        let over_threads = |point: &dyn Fn(&RunResult) -> Option<Pt>| -> Vec<Series> {
            locks
                .iter()
                .map(|(l, base)| Series {
                    name: l.to_string(),
                    baseline: *base,
                    style: style(l),
                    points: threads
                        .iter()
                        .filter_map(|&t| find(l, t))
                        .filter_map(|r| point(r))
                        .collect(),
                })
                .collect()
        };

        // Throughput (native runs: counting-memory runs are slowed by the counting).
        if scen.rmr.is_empty() {
            let series = over_threads(&|r| {
                Some(Pt::new(
                    r.threads as f64,
                    r.throughput_per_sec,
                    (r.repeat > 1).then_some((r.throughput_spread.min, r.throughput_spread.max)),
                ))
            });
            let chart = LineChart {
                title: format!("Throughput vs threads — {}", scen.mix),
                subtitle: format!("{}; median of {rounds} round(s)", scen.title()),
                x: threads_axis(&threads),
                y: Axis::log("throughput (passages/s)", axis_rate),
                series,
                reference: None,
                note: "bars: min–max over the rounds\ndashed, hollow: baselines".into(),
            };
            let name = format!("throughput_{part}.svg");
            write_svg(out, &name, &plots::line_chart(&chart)?, &mut written)?;
            let _ = writeln!(md, "![throughput vs threads, {}](plots/{name})\n", scen.mix);
        }

        // Throughput table: lock × threads.
        let _ = write!(md, "| lock |");
        for t in &threads {
            let _ = write!(md, " {t} thr |");
        }
        let _ = writeln!(md, "\n|---|{}", "---:|".repeat(threads.len()));
        for (l, base) in &locks {
            let _ = write!(md, "| {}{} |", l, if *base { " (baseline)" } else { "" });
            for &t in &threads {
                let cell = find(l, t).map_or("–".to_string(), |r| {
                    let mut c = rate(r.throughput_per_sec);
                    if let Some(x) = r.throughput_vs_baseline {
                        let _ = write!(c, " ({x:.2}x)");
                    }
                    c
                });
                let _ = write!(md, " {} |", md_cell(&cell));
            }
            md.push('\n');
        }
        md.push('\n');

        // Latency percentile spectra, one plot per thread count (native runs: the counting
        // memory slows every access, so its timings say little about the lock).
        let timed: &[usize] = if scen.rmr.is_empty() { &threads } else { &[] };
        for &t in timed {
            let at: Vec<&RunResult> = rs.iter().copied().filter(|r| r.threads == t).collect();
            let series: Vec<Series> = lock_order(&at)
                .iter()
                .filter_map(|(l, base)| {
                    let r = at.iter().find(|r| r.lock == *l)?;
                    let pts = spectrum(r);
                    (!pts.is_empty()).then(|| Series {
                        name: l.to_string(),
                        baseline: *base,
                        style: style(l),
                        points: pts
                            .iter()
                            .enumerate()
                            .map(|(i, &(x, y))| Pt {
                                // Markers at the percentiles of the table and at the max.
                                mark: i + 1 == pts.len()
                                    || [0.0, 2f64.log10(), 1.0, 2.0, 3.0, 4.0, 5.0]
                                        .iter()
                                        .any(|m| (x - m).abs() < 0.024),
                                ..Pt::new(x, y, None)
                            })
                            .collect(),
                    })
                })
                .collect();
            if series.is_empty() {
                continue;
            }
            let top = series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.x))
                .fold(1.0f64, f64::max)
                .ceil()
                .min(7.0) as i32;
            let chart = LineChart {
                title: format!("Entry latency by percentile — {}, {t} threads", scen.mix),
                subtitle: format!(
                    "{}; request → inside, sampled passages of all rounds",
                    scen.title()
                ),
                x: Axis {
                    ticks: Some((0..=top).map(f64::from).collect()),
                    ..Axis::linear("percentile (log scale of 1/(1−q))", percentile_label)
                },
                y: Axis::log("entry latency (ns, log scale)", nanos),
                series,
                reference: None,
                note: "dashed, hollow: baselines\nrightmost point: the max".into(),
            };
            let name = format!("latency_{part}_t{t}.svg");
            write_svg(out, &name, &plots::line_chart(&chart)?, &mut written)?;
            let _ = writeln!(md, "![entry latency, {t} threads](plots/{name})\n");
        }

        // Per-thread fairness at each contended thread count (native runs).
        for &t in timed.iter().filter(|&&t| t > 1) {
            let at: Vec<&RunResult> = rs.iter().copied().filter(|r| r.threads == t).collect();
            let rows: Vec<Row> = lock_order(&at)
                .iter()
                .filter_map(|(l, base)| {
                    let r = at.iter().find(|r| r.lock == *l)?;
                    let rates: Vec<f64> = r.per_thread.iter().map(|p| p.rate_per_sec).collect();
                    let mean = rates.iter().sum::<f64>() / rates.len().max(1) as f64;
                    (mean > 0.0).then(|| Row {
                        label: format!("{l} (Jain {:.3})", r.fairness_jain),
                        baseline: *base,
                        style: style(l),
                        values: rates.iter().map(|x| x / mean).collect(),
                    })
                })
                .collect();
            if rows.is_empty() {
                continue;
            }
            let svg = plots::dot_rows(
                &format!("Per-thread fairness — {}, {t} threads", scen.mix),
                &format!(
                    "{}; one dot per thread: its passage rate over the mean (1 = fair share)",
                    scen.title()
                ),
                &Axis {
                    from_zero: true,
                    ..Axis::linear("thread rate / mean thread rate (1 = fair share)", plain)
                },
                &rows,
                1.0,
            )?;
            let name = format!("fairness_{part}_t{t}.svg");
            write_svg(out, &name, &svg, &mut written)?;
            let _ = writeln!(md, "![per-thread fairness, {t} threads](plots/{name})\n");
        }

        // GME: processes inside together.
        let gme: Vec<&RunResult> = rs
            .iter()
            .copied()
            .filter(|r| r.problem == "gme" && r.concurrency.is_some())
            .collect();
        if !gme.is_empty() {
            let series: Vec<Series> = lock_order(&gme)
                .iter()
                .map(|(l, base)| Series {
                    name: l.to_string(),
                    baseline: *base,
                    style: style(l),
                    points: gme
                        .iter()
                        .filter(|r| r.lock == *l)
                        .map(|r| {
                            let c = r.concurrency.unwrap_or_default();
                            Pt::new(r.threads as f64, c.mean, Some((c.mean, c.max as f64)))
                        })
                        .collect(),
                })
                .collect();
            let chart = LineChart {
                title: format!("GME: processes inside together — {}", scen.mix),
                subtitle: format!("{}; counted by the oracle at each entry", scen.title()),
                x: threads_axis(&threads),
                y: Axis::linear("processes inside (mean; bar up to the max)", plain),
                series,
                reference: Some((1.0, "1 = mutual exclusion".into())),
                note: "line: mean at entry\nbar: up to the max seen\ndashed, hollow: baselines"
                    .into(),
            };
            let name = format!("concurrency_{part}.svg");
            write_svg(out, &name, &plots::line_chart(&chart)?, &mut written)?;
            let _ = writeln!(md, "![processes inside, {}](plots/{name})\n", scen.mix);
        }

        // RMRs per passage (runs with --rmr).
        if !scen.rmr.is_empty() {
            let series: Vec<Series> = over_threads(&|r| {
                let m = r.model_rmrs()?;
                Some(Pt::new(r.threads as f64, m.per_passage_mean, None))
            })
            .into_iter()
            .filter(|s| !s.points.is_empty())
            .collect();
            if !series.is_empty() {
                let chart = LineChart {
                    title: format!("RMRs per passage vs threads — {} model", scen.rmr),
                    subtitle: scen.title(),
                    x: threads_axis(&threads),
                    y: Axis::linear(
                        format!("RMRs per passage ({} model, mean)", scen.rmr),
                        plain,
                    ),
                    series,
                    reference: None,
                    note: "counted on the counting memory\ndashed, hollow: baselines".into(),
                };
                let name = format!("rmr_{part}.svg");
                write_svg(out, &name, &plots::line_chart(&chart)?, &mut written)?;
                let _ = writeln!(md, "![RMRs per passage](plots/{name})\n");
            }
        }
    }

    // Model against hardware, and predicted against measured, where the runs allow.
    if runs.iter().any(|r| r.rmr.is_some()) {
        md.push_str(&hardware_section(dir, out, calibration, &mut written));
    }

    // Interval logs.
    for r in &runs {
        let Some(h) = r.latency_histogram.as_deref().and_then(hlog::decode) else {
            continue;
        };
        let k = r.key();
        let name = format!(
            "{}_t{}_{}.hlog",
            file_safe(&r.lock),
            r.threads,
            k.scenario().file_part()
        );
        let length = r
            .stop
            .strip_prefix("duration ")
            .and_then(|d| crate::workload::parse_duration(d).ok())
            .map_or(Duration::ZERO, |d| d * r.repeat.max(1) as u32);
        let start = Duration::from_secs(r.timestamp).saturating_sub(length);
        let bytes = hlog::interval_log(
            &[format!(
                "lockbench {}: {} at {} threads, {}; entry latency over {} round(s)",
                r.version,
                r.lock,
                r.threads,
                k.scenario().title(),
                r.repeat
            )],
            &[hlog::Interval {
                tag: format!("{}/t{}/{}", r.lock, r.threads, r.mix),
                histogram: &h,
                start,
                length,
            }],
        )?;
        let rel = PathBuf::from("hlog").join(name);
        fs::write(out.join(&rel), bytes)
            .with_context(|| format!("cannot write {}", rel.display()))?;
        written.hlogs.push(rel);
    }

    // Every point.
    let _ = writeln!(md, "## Every point\n");
    let _ = writeln!(
        md,
        "| lock | problem | threads | mix | cs | think | k | throughput | spread | vs base | p50 | p99 | p99.9 | max | jain | inside | RMR/passage | safety |"
    );
    let _ = writeln!(
        md,
        "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    );
    for r in &runs {
        let spread = if r.throughput_spread.median > 0.0 && r.repeat > 1 {
            format!(
                "±{:.0}%",
                (r.throughput_spread.max - r.throughput_spread.min) / r.throughput_spread.median
                    * 50.0
            )
        } else {
            "–".into()
        };
        let safety = if !r.safety_checked {
            "off".to_string()
        } else if r.safety_violations + r.invariant_failures == 0 {
            "ok".to_string()
        } else {
            format!("{} VIOL", r.safety_violations + r.invariant_failures)
        };
        let cells = [
            r.lock.clone(),
            r.problem.clone(),
            r.threads.to_string(),
            r.mix.clone(),
            nanos(r.cs_ns as f64),
            nanos(r.think_ns as f64),
            r.k.to_string(),
            rate(r.throughput_per_sec),
            spread,
            r.throughput_vs_baseline
                .map_or("–".into(), |x| format!("{x:.2}x")),
            nanos(r.latency_ns.p50),
            nanos(r.latency_ns.p99),
            nanos(r.latency_ns.p999),
            nanos(r.latency_ns.max),
            format!("{:.3}", r.fairness_jain),
            r.concurrency
                .map_or("–".into(), |c| format!("{:.2}/{}", c.mean, c.max)),
            r.model_rmrs().map_or("–".into(), |m| {
                format!("{:.1} ({})", m.per_passage_mean, m.model)
            }),
            safety,
        ];
        let cells: Vec<String> = cells.iter().map(|c| md_cell(c)).collect();
        let _ = writeln!(md, "| {} |", cells.join(" | "));
    }
    md.push('\n');
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
    if !written.hlogs.is_empty() {
        let _ = writeln!(
            md,
            "Entry-latency histograms of every point are in `hlog/` as HdrHistogram interval logs (values in ns), e.g. `{}`.",
            written.hlogs[0].display()
        );
    }
    let path = out.join("report.md");
    fs::write(&path, md).with_context(|| format!("cannot write {}", path.display()))?;
    written.markdown = path;
    Ok(written)
}

/// The model-against-hardware scatter plots (`correlate`) and, with a calibration, predicted
/// against measured passage times (`predict`), as a Markdown section.
fn hardware_section(
    dir: &Path,
    out: &Path,
    calibration: Option<&Path>,
    written: &mut Written,
) -> String {
    let mut md = String::from("## Model against hardware\n\n");
    // The same files the report read (a sweep's unfinished point is left out).
    let mut runs: Vec<RunResult> = Vec::new();
    for f in saved::result_files(dir) {
        let parsed = fs::read_to_string(&f)
            .ok()
            .and_then(|t| crate::hw::results::runs_of(&t));
        match parsed {
            Some(rs) => runs.extend(rs),
            None => {
                let _ = writeln!(md, "Not drawn: {} could not be read.\n", f.display());
                return md;
            }
        }
    }
    let loaded = crate::hw::results::Loaded {
        runs,
        skipped: Vec::new(),
    };
    let plots_dir = out.join("plots");
    match crate::hw::correlate::correlate(dir, &loaded.runs, Some(&plots_dir)) {
        Ok(rep) => {
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
                        let _ =
                            writeln!(md, "\n  ![{} vs {}]({})\n", c.model, c.event, rel.display());
                        written.plots.push(rel.to_path_buf());
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
        Err(e) => {
            let _ = writeln!(md, "- correlation not computed: {e:#}");
        }
    }
    md.push('\n');
    let candidates: Vec<PathBuf> = match calibration {
        Some(p) => vec![p.to_path_buf()],
        None => vec![
            dir.join("calibration.json"),
            PathBuf::from(crate::hw::DEFAULT_CALIBRATION),
        ],
    };
    let Some(cal_path) = candidates.iter().find(|p| p.is_file()) else {
        let _ = writeln!(
            md,
            "Predicted against measured: no calibration (run `lockbench calibrate`, or give --calibration).\n"
        );
        return md;
    };
    let cal = match crate::hw::read_calibration(cal_path) {
        Ok(c) => c,
        Err(e) => {
            let _ = writeln!(md, "Predicted against measured: {e}.\n");
            return md;
        }
    };
    let rep = crate::hw::predict::predict(&loaded.runs, &cal);
    let points: Vec<crate::hw::svg::Point> = rep
        .predictions
        .iter()
        .filter_map(|p| {
            Some(crate::hw::svg::Point {
                x: p.measured_ns?,
                y: p.predicted_ns?,
                series: p.lock.clone(),
                label: format!("t{}", p.threads),
            })
        })
        .collect();
    if points.len() >= 2 {
        let scatter = crate::hw::svg::Scatter {
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
        if write_svg(out, name, &crate::hw::svg::render(&scatter), written).is_ok() {
            let _ = writeln!(md, "![predicted against measured](plots/{name})\n");
        }
    }
    if let Some(e) = rep.overall_mean_abs_error_pct {
        let _ = writeln!(
            md,
            "Mean absolute prediction error: {e:.1}% (calibration {}).\n",
            cal_path.display()
        );
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_labels() {
        assert_eq!(percentile_label(0.0), "0%");
        assert_eq!(percentile_label(1.0), "90%");
        assert_eq!(percentile_label(2.0), "99%");
        assert_eq!(percentile_label(3.0), "99.9%");
        assert_eq!(percentile_label(4.0), "99.99%");
    }

    #[test]
    fn spectrum_from_percentiles_when_no_histogram() {
        let r: RunResult = serde_json::from_str(
            r#"{"lock": "a", "latency_ns": {"p50": 10, "p90": 20, "p99": 40, "p999": 80,
                "max": 500, "mean": 12, "count": 5000}}"#,
        )
        .unwrap();
        let s = spectrum(&r);
        assert_eq!(s.first().unwrap().1, 10.0);
        assert_eq!(s.last().unwrap(), &(5000f64.log10(), 500.0));
        assert!(s.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
    }

    #[test]
    fn spectrum_from_a_saved_histogram_is_monotone_and_ends_at_the_max() {
        let mut h = hlog::ns_histogram();
        for v in 1..=10_000u64 {
            h.record(v).unwrap();
        }
        let r = RunResult {
            lock: "a".into(),
            latency_histogram: hlog::encode(&h),
            ..RunResult::default()
        };
        let s = spectrum(&r);
        assert!(s.len() > 50);
        assert!(s.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
        assert_eq!(s.last().unwrap().1, h.max() as f64);
        // The median sits at x = log10(2).
        let near = s.iter().find(|p| (p.0 - 0.3).abs() < 0.03).unwrap();
        assert!((near.1 - 5_000.0).abs() < 300.0, "{near:?}");
    }
}
