//! The plots of one scenario of a report (every lock and thread count of one configuration):
//! throughput against threads, entry-latency percentile spectra, per-thread fairness,
//! processes inside together (GME) and RMRs per passage, each written as an SVG under
//! `plots/` and linked from the Markdown, with the scenario's throughput table.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::hlog;
use super::plots::{self, Axis, LineChart, Pt, Row, Series};
use super::saved::Scenario;
use super::RunResult;
use super::{nanos, rate};
use crate::locks::sources::{cite_source, Citation};

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

/// The report being written: its Markdown so far and the files beside it.
pub struct Page<'a> {
    /// The output directory.
    pub out: &'a Path,
    /// report.md so far.
    pub md: String,
    /// The files written.
    pub written: Written,
}

impl Page<'_> {
    /// Writes `svg` as `plots/<name>` and records it.
    pub fn write_svg(&mut self, name: &str, svg: &str) -> Result<()> {
        let rel = PathBuf::from("plots").join(name);
        crate::opts::io::write_atomic(&self.out.join(&rel), svg.as_bytes())?;
        self.written.plots.push(rel);
        Ok(())
    }

    /// Writes `svg` as `plots/<name>` and links it from the Markdown with `alt`.
    fn plot(&mut self, name: &str, svg: &str, alt: &str) -> Result<()> {
        self.write_svg(name, svg)?;
        let _ = writeln!(self.md, "![{alt}](plots/{name})\n");
        Ok(())
    }
}

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

/// Locks in plotting order: the papers' algorithms by name, then baselines by name.
pub fn lock_order<'a>(runs: &[&'a RunResult]) -> Vec<(&'a str, bool)> {
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
/// when saved, else from its percentiles. It starts at the first real percentile: a histogram's
/// values of 1 ns are passages shorter than one clock tick (the conversion to nanoseconds
/// floors them at 1 ns, the histogram's lowest value), not latencies, so the curve starts past
/// them; without a histogram it starts at the median, the lowest percentile saved.
fn spectrum(r: &RunResult) -> Vec<(f64, f64)> {
    if let Some(h) = r.latency_histogram.as_deref().and_then(hlog::decode) {
        if !h.is_empty() {
            let top = (h.len() as f64).log10();
            let mut pts = Vec::new();
            let mut x = 0.0;
            while x < top {
                let q = 1.0 - 10f64.powf(-x);
                let v = h.value_at_quantile(q) as f64;
                if v > 1.0 {
                    pts.push((x, v));
                }
                x += 0.05;
            }
            if h.max() > 1 {
                pts.push((top.max(x.min(top)), h.max() as f64));
            }
            return pts;
        }
    }
    let l = &r.latency_ns;
    if l.count == 0 {
        return Vec::new();
    }
    let mut pts = vec![(2f64.log10(), l.p50), (1.0, l.p90)];
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

/// A Markdown table cell: pipes escaped.
pub fn md_cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// One scenario's results as its plots see them.
struct View<'a> {
    scen: &'a Scenario,
    runs: &'a [&'a RunResult],
    locks: Vec<(&'a str, bool)>,
    threads: Vec<usize>,
}

impl View<'_> {
    fn find(&self, lock: &str, t: usize) -> Option<&RunResult> {
        self.runs
            .iter()
            .copied()
            .find(|r| r.lock == lock && r.threads == t)
    }

    /// The results at `t` threads.
    fn at(&self, t: usize) -> Vec<&RunResult> {
        self.runs
            .iter()
            .copied()
            .filter(|r| r.threads == t)
            .collect()
    }

    /// One series per lock over the thread counts: a point for each result `point` takes.
    fn over_threads(&self, point: &dyn Fn(&RunResult) -> Option<Pt>) -> Vec<Series> {
        self.locks
            .iter()
            .map(|(l, base)| Series {
                name: l.to_string(),
                baseline: *base,
                look: plots::look(l),
                points: self
                    .threads
                    .iter()
                    .filter_map(|&t| self.find(l, t))
                    .filter_map(point)
                    .collect(),
            })
            .collect()
    }
}

/// The section of one scenario: its plots and its throughput table. Each lock's colour and
/// marker come from its name ([`plots::look`]), the same in every report; `_palette`, the
/// report's locks, is no longer needed for that.
pub fn scenario(
    page: &mut Page<'_>,
    scen: &Scenario,
    runs: &[&RunResult],
    _palette: &[&str],
) -> Result<()> {
    let _ = writeln!(page.md, "## {}\n", scen.title());
    let mut threads: Vec<usize> = runs.iter().map(|r| r.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    let v = View {
        scen,
        runs,
        locks: lock_order(runs),
        threads,
    };
    // Counting-memory runs are slowed by the counting: their timings say little about the lock.
    let native = scen.rmr.is_empty();
    if native {
        throughput(page, &v)?;
    }
    throughput_table(&mut page.md, &v);
    papers(&mut page.md, &v);
    let timed: &[usize] = if native { &v.threads } else { &[] };
    for &t in timed {
        latency(page, &v, t)?;
    }
    if passages_mode(runs) {
        let _ = writeln!(page.md, "{FAIRNESS_IN_PASSAGES_MODE}\n");
    } else {
        for &t in timed.iter().filter(|&&t| t > 1) {
            fairness(page, &v, t)?;
        }
    }
    if scen.mix == "distinct" {
        let _ = writeln!(page.md, "{CONCURRENCY_IN_DISTINCT}\n");
    } else {
        concurrency(page, &v)?;
    }
    if !native {
        rmrs(page, &v)?;
    }
    Ok(())
}

/// Why `passages` runs have no fairness plot.
pub const FAIRNESS_IN_PASSAGES_MODE: &str = "Per-thread fairness is not drawn: these runs stop \
after a number of passages per thread, so every thread does the same work by construction. \
A thread's rate over its own window then says when it ran, not what share it got (a thread \
that runs its passages alone finishes in a short window at a high rate, and Jain's index \
of such rates reads about 1/threads for equal work). Run with a duration to measure fairness.";

/// Why the `distinct` mix has no GME concurrency plot.
pub const CONCURRENCY_IN_DISTINCT: &str = "Processes inside together is not drawn for the \
`distinct` mix: every process asks for a session of its own, so at most one can be inside.";

/// Whether the runs stopped after a number of passages per thread (rather than a duration).
fn passages_mode(runs: &[&RunResult]) -> bool {
    !runs.is_empty() && runs.iter().all(|r| r.stop.starts_with("passages"))
}

/// Throughput against threads (native runs).
fn throughput(page: &mut Page<'_>, v: &View<'_>) -> Result<()> {
    let rounds = v.runs.iter().map(|r| r.repeat).max().unwrap_or(1).max(1);
    let series = v.over_threads(&|r| {
        Some(Pt::new(
            r.threads as f64,
            r.throughput_per_sec,
            (r.repeat > 1).then_some((r.throughput_spread.min, r.throughput_spread.max)),
        ))
    });
    let chart = LineChart {
        title: format!("Throughput vs threads — {}", v.scen.mix),
        subtitle: format!("{}; median of {rounds} round(s)", v.scen.title()),
        x: threads_axis(&v.threads),
        y: Axis::log("throughput (passages/s)", axis_rate),
        series,
        reference: None,
        note: "bars: min–max over the rounds\ndashed, hollow: baselines".into(),
    };
    let name = format!("throughput_{}.svg", v.scen.file_part());
    let alt = format!("throughput vs threads, {}", v.scen.mix);
    page.plot(&name, &plots::line_chart(&chart)?, &alt)
}

/// Throughput table: lock × threads.
fn throughput_table(md: &mut String, v: &View<'_>) {
    let _ = write!(md, "| lock |");
    for t in &v.threads {
        let _ = write!(md, " {t} thr |");
    }
    let _ = writeln!(md, "\n|---|{}", "---:|".repeat(v.threads.len()));
    // "(baseline)" marks the lock the ratios are to, not every lock without a paper.
    let against: Vec<&str> = v
        .runs
        .iter()
        .filter_map(|r| r.baseline.as_deref())
        .collect();
    for (l, _) in &v.locks {
        let base = against.contains(l);
        let _ = write!(md, "| {}{} |", l, if base { " (baseline)" } else { "" });
        for &t in &v.threads {
            let cell = v.find(l, t).map_or("–".to_string(), |r| {
                let q = super::quality::assess(r);
                let bang = |f: &str| if q.affects(f) { "!" } else { "" };
                let mut c = format!(
                    "{}{}",
                    rate(r.throughput_per_sec),
                    bang("throughput_per_sec")
                );
                if let Some(x) = r.throughput_vs_baseline {
                    let _ = write!(
                        c,
                        " ({}{})",
                        super::vs_base(x, r.throughput_vs_baseline_interval),
                        bang("throughput_vs_baseline")
                    );
                }
                c
            });
            let _ = write!(md, " {} |", md_cell(&cell));
        }
        md.push('\n');
    }
    md.push('\n');
}

/// The papers the scenario's locks follow, each cited once with the locks that follow it.
fn papers(md: &mut String, v: &View<'_>) {
    let mut cited: Vec<(&Citation, Vec<&str>)> = Vec::new();
    for (l, _) in &v.locks {
        let source = v
            .runs
            .iter()
            .find(|r| r.lock == *l)
            .map(|r| r.source.as_str());
        let Some(c) = source.and_then(cite_source) else {
            continue;
        };
        match cited.iter_mut().find(|(x, _)| x.seed == c.seed) {
            Some((_, locks)) => locks.push(l),
            None => cited.push((c, vec![l])),
        }
    }
    if cited.is_empty() {
        return;
    }
    let _ = writeln!(md, "Papers:\n");
    for (c, locks) in cited {
        let _ = writeln!(
            md,
            "- {} — seed {}: {}",
            md_cell(&locks.join(", ")),
            c.seed,
            md_cell(&c.line())
        );
    }
    md.push('\n');
}

/// The entry-latency percentile spectra at `t` threads, one series per lock.
fn latency(page: &mut Page<'_>, v: &View<'_>, t: usize) -> Result<()> {
    let at = v.at(t);
    let series: Vec<Series> = lock_order(&at)
        .iter()
        .filter_map(|(l, base)| {
            let r = at.iter().find(|r| r.lock == *l)?;
            let pts = spectrum(r);
            (!pts.is_empty()).then(|| Series {
                name: l.to_string(),
                baseline: *base,
                look: plots::look(l),
                points: pts
                    .iter()
                    .enumerate()
                    .map(|(i, &(x, y))| Pt {
                        // Markers at the first point, the percentiles of the table and
                        // the max.
                        mark: i == 0
                            || i + 1 == pts.len()
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
        return Ok(());
    }
    let top = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.x))
        .fold(1.0f64, f64::max)
        .ceil()
        .min(7.0) as i32;
    let chart = LineChart {
        title: format!("Entry latency by percentile — {}, {t} threads", v.scen.mix),
        subtitle: format!(
            "{}; request → inside, sampled passages of all rounds",
            v.scen.title()
        ),
        x: Axis {
            ticks: Some((0..=top).map(f64::from).collect()),
            ..Axis::linear("percentile (log scale of 1/(1−q))", percentile_label)
        },
        y: Axis::log("entry latency (ns)", nanos),
        series,
        reference: None,
        note: "dashed, hollow: baselines\nleftmost point: the first\npercentile above 1 ns\nrightmost point: the max".into(),
    };
    let name = format!("latency_{}_t{t}.svg", v.scen.file_part());
    let alt = format!("entry latency, {t} threads");
    page.plot(&name, &plots::line_chart(&chart)?, &alt)
}

/// Per-thread fairness at `t` threads: each thread's rate over the mean.
fn fairness(page: &mut Page<'_>, v: &View<'_>, t: usize) -> Result<()> {
    let at = v.at(t);
    let rows: Vec<Row> = lock_order(&at)
        .iter()
        .filter_map(|(l, base)| {
            let r = at.iter().find(|r| r.lock == *l)?;
            let rates: Vec<f64> = r.per_thread.iter().map(|p| p.rate_per_sec).collect();
            let mean = rates.iter().sum::<f64>() / rates.len().max(1) as f64;
            (mean > 0.0).then(|| Row {
                label: format!("{l} (Jain {:.3})", r.fairness_jain),
                baseline: *base,
                look: plots::look(l),
                values: rates.iter().map(|x| x / mean).collect(),
            })
        })
        .collect();
    if rows.is_empty() {
        return Ok(());
    }
    let svg = plots::dot_rows(
        &format!("Per-thread fairness — {}, {t} threads", v.scen.mix),
        &format!(
            "{}; one dot per thread: its passage rate over the mean (1 = fair share)",
            v.scen.title()
        ),
        &Axis {
            from_zero: true,
            ..Axis::linear("thread rate / mean thread rate (1 = fair share)", plain)
        },
        &rows,
        1.0,
    )?;
    let name = format!("fairness_{}_t{t}.svg", v.scen.file_part());
    page.plot(&name, &svg, &format!("per-thread fairness, {t} threads"))
}

/// GME: processes inside together, as the oracle counted them at each entry.
fn concurrency(page: &mut Page<'_>, v: &View<'_>) -> Result<()> {
    let gme: Vec<&RunResult> = v
        .runs
        .iter()
        .copied()
        .filter(|r| r.problem == "gme" && r.concurrency.is_some())
        .collect();
    if gme.is_empty() {
        return Ok(());
    }
    let series: Vec<Series> = lock_order(&gme)
        .iter()
        .map(|(l, base)| Series {
            name: l.to_string(),
            baseline: *base,
            look: plots::look(l),
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
        title: format!("GME: processes inside together — {}", v.scen.mix),
        subtitle: format!("{}; counted by the oracle at each entry", v.scen.title()),
        x: threads_axis(&v.threads),
        y: Axis::linear("processes inside (mean; bar up to the max)", plain),
        series,
        reference: Some((1.0, "1 = mutual exclusion".into())),
        note: "line: mean at entry\nbar: up to the max seen\ndashed, hollow: baselines".into(),
    };
    let name = format!("concurrency_{}.svg", v.scen.file_part());
    let alt = format!("processes inside, {}", v.scen.mix);
    page.plot(&name, &plots::line_chart(&chart)?, &alt)
}

/// RMRs per passage against threads (runs with `--rmr`).
fn rmrs(page: &mut Page<'_>, v: &View<'_>) -> Result<()> {
    let series: Vec<Series> = v
        .over_threads(&|r| {
            let m = r.model_rmrs()?;
            Some(Pt::new(r.threads as f64, m.per_passage_mean, None))
        })
        .into_iter()
        .filter(|s| !s.points.is_empty())
        .collect();
    if series.is_empty() {
        return Ok(());
    }
    let model = &v.scen.rmr;
    let chart = LineChart {
        title: format!("RMRs per passage vs threads — {model} model"),
        subtitle: v.scen.title(),
        x: threads_axis(&v.threads),
        y: Axis::linear(format!("RMRs per passage ({model} model, mean)"), plain),
        series,
        reference: None,
        note: "counted on the counting memory\ndashed, hollow: baselines".into(),
    };
    let name = format!("rmr_{}.svg", v.scen.file_part());
    page.plot(&name, &plots::line_chart(&chart)?, "RMRs per passage")
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
        // The median first: nothing is made up below it.
        assert_eq!(s.first().unwrap(), &(2f64.log10(), 10.0));
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
