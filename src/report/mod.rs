//! Results and their exports: an aligned table for people, JSON (the machine-readable
//! contract), CSV and Markdown. Every export is one [`Exporter`].

pub mod baselines;
pub mod build;
pub mod compare;
pub mod compare_doc;
mod csv;
pub mod figures;
pub mod hlog;
mod html;
pub mod nodes;
pub mod plots;
pub mod quality;
pub mod quality_md;
pub mod render;
pub mod result;
pub mod saved;
pub mod store;

use std::fmt::Write as _;

pub use csv::Csv;
pub use result::RunResult;

pub use crate::opts::Format;
use crate::table::{self, Align};

/// Serialises results in one format.
pub trait Exporter {
    /// The whole document for `results`.
    fn export(&self, results: &[RunResult]) -> String;
}

impl Format {
    /// The exporter of this format.
    pub fn exporter(self) -> Box<dyn Exporter> {
        match self {
            Format::Table => Box::new(Table),
            Format::Json => Box::new(Json),
            Format::Csv => Box::new(Csv),
            Format::Md => Box::new(Markdown),
        }
    }
}

/// A rate with a unit: `12.3 Mop/s`.
/// What the harness adds to each passage, in words: `12.3 ns per passage`, or that it is
/// unknown when its pre-run completed no passage (never `NaN ns`).
pub fn harness_adds(overhead_ns: f64) -> String {
    if overhead_ns.is_finite() {
        format!("{overhead_ns:.1} ns per passage")
    } else {
        "an unknown cost per passage (its pre-run completed no passage)".into()
    }
}

pub fn rate(per_sec: f64) -> String {
    let (v, unit) = if per_sec >= 1e9 {
        (per_sec / 1e9, "Gop/s")
    } else if per_sec >= 1e6 {
        (per_sec / 1e6, "Mop/s")
    } else if per_sec >= 1e3 {
        (per_sec / 1e3, "kop/s")
    } else {
        (per_sec, "op/s")
    };
    format!("{v:.2} {unit}")
}

/// A duration in ns with a unit: `850 ns`, `12.4 µs`.
pub fn nanos(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e4 {
        format!("{:.1} µs", ns / 1e3)
    } else if ns >= 1e3 {
        format!("{:.2} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

/// The columns shared by the table and Markdown exports: (header, cell). A figure a quality
/// flag touches ([`quality`]) is marked `!`; the reasons follow the table.
pub(crate) fn columns(r: &RunResult) -> Vec<(&'static str, String)> {
    let q = quality::assess(r);
    let bang = |figure: &str| if q.affects(figure) { "!" } else { "" };
    let ratio = match (r.throughput_vs_baseline, r.throughput_vs_baseline_interval) {
        (None, _) if r.baseline.is_some() && q.affects("throughput_vs_baseline") => "?!".into(),
        (None, _) => "-".to_string(),
        (Some(x), i) => format!("{}{}", vs_base(x, i), bang("throughput_vs_baseline")),
    };
    let inside = r
        .concurrency
        .map_or("-".into(), |c| format!("{:.2}/{}", c.mean, c.max));
    let safety = if !r.safety_checked {
        "off".to_string()
    } else if r.safety_violations == 0 && r.invariant_failures == 0 {
        "ok".to_string()
    } else {
        format!("{} VIOL", r.safety_violations + r.invariant_failures)
    };
    // The spread is the range over rounds, (max − min) / median, everywhere (JSON `relative`,
    // CSV `throughput_rel_spread`); undefined with one round or a median of 0.
    let spread = if r.repeat < 2 {
        "-".into()
    } else if r.throughput_spread.median <= 0.0 {
        "?!".into()
    } else {
        format!(
            "{:.0}%{}",
            r.throughput_spread.relative * 100.0,
            bang("throughput_spread")
        )
    };
    // A run that measured nothing has no figures: dashes, not zeros.
    let figure = |s: String, field: &str| {
        if r.nothing_measured {
            "-".to_string()
        } else {
            format!("{s}{}", bang(field))
        }
    };
    vec![
        ("lock", r.lock.clone()),
        ("problem", r.problem.clone()),
        ("thr", r.threads.to_string()),
        ("mix", r.mix.clone()),
        (
            "throughput",
            figure(rate(r.throughput_per_sec), "throughput_per_sec"),
        ),
        ("range", spread),
        ("vs base", ratio),
        ("p50", figure(nanos(r.latency_ns.p50), "latency_ns.p50")),
        ("p99", figure(nanos(r.latency_ns.p99), "latency_ns.p99")),
        ("p99.9", figure(nanos(r.latency_ns.p999), "latency_ns.p999")),
        ("max", figure(nanos(r.latency_ns.max), "latency_ns.max")),
        ("exit p99", figure(nanos(r.exit_ns.p99), "exit_ns.p99")),
        ("samples", r.latency_ns.count.to_string()),
        (
            "jain",
            figure(format!("{:.3}", r.fairness_jain), "fairness_jain"),
        ),
        ("inside", inside),
        ("safety", safety),
        ("note", note(r)),
    ]
}

/// A ratio to the baseline with its interval and the interval's level: `1.13x [1.06–1.14] 75%`,
/// `no diff [0.89–3.68] 75%` when the interval holds 1, `1.13x` with no interval.
pub(crate) fn vs_base(x: f64, i: Option<crate::metrics::stats::Interval>) -> String {
    match i {
        None => format!("{x:.2}x"),
        Some(i) if i.contains(1.0) => format!(
            "no diff [{:.2}–{:.2}] {:.0}%",
            i.low,
            i.high,
            i.level * 100.0
        ),
        Some(i) => format!(
            "{x:.2}x [{:.2}–{:.2}] {:.0}%",
            i.low,
            i.high,
            i.level * 100.0
        ),
    }
}

/// The reasons behind every `!` of a table: one line per flagged result, `lock t=N mix: ...`,
/// and one line for the results measured on a busy host.
pub fn quality_notes(results: &[RunResult]) -> Vec<String> {
    let mut lines: Vec<String> = results
        .iter()
        .filter_map(|r| {
            let mut q = quality::assess(r);
            q.flags.retain(|f| f.name != "busy-host");
            (!q.flags.is_empty())
                .then(|| format!("{} t={} {}: {}", r.lock, r.threads, r.mix, q.reasons()))
        })
        .collect();
    let busy: Vec<crate::runner::host::Load> = results
        .iter()
        .filter_map(|r| r.host.load.clone().filter(|l| l.busy))
        .collect();
    if let Some(w) = crate::runner::host::Load::worst(&busy) {
        lines.push(format!(
            "busy host during {} of {} results (worst: {}): every figure of those is flagged",
            busy.len(),
            results.len(),
            w.reasons.join(", ")
        ));
    }
    lines
}

/// The settings every result of a set shares, in one line: how latency is sampled, the
/// window, rounds, oracle, wait policy, baseline and what spread means.
pub fn settings_line(results: &[RunResult]) -> String {
    let first = &results[0];
    let baselines: Vec<&str> = {
        let mut v: Vec<&str> = results
            .iter()
            .filter_map(|r| r.baseline.as_deref())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    format!(
        "latency = entry (request → inside), from 1 passage in {}{} timed at random (samples); throughput over the measured window; cs {}, think {}, {} × {} round{}; oracle {}; wait {}{}; baseline {}; range = (max − min) / median over the rounds",
        first.latency_sample,
        if first.latency_sample_adaptive { " or fewer" } else { "" },
        nanos(first.cs_ns as f64),
        nanos(first.think_ns as f64),
        first.stop,
        first.repeat,
        if first.repeat == 1 { "" } else { "s" },
        oracle_summary(results),
        first.wait_policy,
        if first.slots > first.threads { format!("; locks built for {} processes", first.slots) } else { String::new() },
        if baselines.is_empty() {
            "none".to_string()
        } else {
            baselines
                .iter()
                .map(|b| format!("{b} ({})", how_it_waits(results, b)))
                .collect::<Vec<_>>()
                .join(", ")
        },
    )
}

/// Voluntary context switches per passage at which a lock counts as sleeping while it waits
/// (a spinning lock makes a few per round at most, from the harness's own threads).
pub const SLEEPS_PER_PASSAGE: f64 = 0.01;

/// How the lock `name` waited in `results`, as measured: `sleeps` or `spins`, with its
/// voluntary context switches per passage (the most of its multi-thread results).
pub fn how_it_waits(results: &[RunResult], name: &str) -> String {
    let per_passage = results
        .iter()
        .filter(|r| r.lock == name && r.threads > 1 && r.throughput_per_sec > 0.0)
        .filter_map(|r| {
            let s = r.host.load.as_ref()?.sleeps_per_sec?;
            Some(s / r.throughput_per_sec)
        })
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
    match per_passage {
        None => "how it waits not measured".into(),
        Some(x) if x >= SLEEPS_PER_PASSAGE => {
            let problem = results
                .iter()
                .find(|r| r.lock == name)
                .map(|r| r.problem.as_str());
            format!(
                "sleeps while waiting: {x:.2} context switches per passage, so a spinning lock's \
                 ratio to it counts the sleeps too; {} compares with a spinning one",
                match problem {
                    Some("gme") => "--baseline spin-gme",
                    Some("k-exclusion") => "--baseline spin-semaphore",
                    _ => "--baseline ticket",
                }
            )
        }
        Some(x) => format!("spins while waiting: {x:.3} context switches per passage"),
    }
}

fn note(r: &RunResult) -> String {
    let mut notes = Vec::new();
    if r.stalled.is_some() {
        notes.push("STALLED".to_string());
    }
    if r.nothing_measured {
        notes.push("NOTHING MEASURED".to_string());
    }
    if !r.starved_threads.is_empty() {
        notes.push(format!("starved {}/{}", r.starved_threads.len(), r.threads));
    }
    if r.windows_uneven {
        notes.push("uneven windows".to_string());
    }
    if r.oversubscribed {
        notes.push("oversubscribed".to_string());
    }
    if r.host.load.as_ref().is_some_and(|l| l.busy) {
        notes.push("busy host".to_string());
    }
    notes.join(", ")
}

/// `0.97 [0.95–0.99]`: a median and its interval.
pub fn estimate(e: &crate::metrics::stats::Estimate) -> String {
    match e.interval {
        Some(i) => format!(
            "{:.3} [{:.3}–{:.3}, {:.0}%]",
            e.median,
            i.low,
            i.high,
            i.level * 100.0
        ),
        None => format!("{:.3}", e.median),
    }
}

/// The oracles of a set of results: `self-check (mutex), counting (gme)`.
fn oracle_summary(results: &[RunResult]) -> String {
    let mut seen: Vec<(String, Vec<String>)> = Vec::new();
    for r in results {
        match seen.iter_mut().find(|(o, _)| *o == r.oracle) {
            Some((_, problems)) => {
                if !problems.contains(&r.problem) {
                    problems.push(r.problem.clone());
                }
            }
            None => seen.push((r.oracle.clone(), vec![r.problem.clone()])),
        }
    }
    if seen.len() == 1 {
        return seen.remove(0).0;
    }
    seen.iter()
        .map(|(o, p)| format!("{o} ({})", p.join(", ")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// RMRs per passage of a counting-memory run: `2.0 cc (max 3)`, `-` for a native run.
fn rmr_cell(r: &RunResult) -> String {
    let Some(v) = &r.rmr else {
        return "-".into();
    };
    let mean = v["per_passage_mean"].as_f64().unwrap_or(0.0);
    let model = v["model"].as_str().unwrap_or("?");
    match v["per_passage_max"].as_f64() {
        Some(max) => format!("{mean:.1} {model} (max {max:.0})"),
        None => format!("{mean:.1} {model}"),
    }
}

/// Aligned plain-text table.
pub struct Table;

impl Exporter for Table {
    fn export(&self, results: &[RunResult]) -> String {
        if results.is_empty() {
            return "no runs\n".into();
        }
        let mut rows: Vec<Vec<(&str, String)>> = results.iter().map(columns).collect();
        // `run --rmr MODEL`: the RMRs per passage in a column of their own, after `vs base`.
        if results.iter().any(|r| r.rmr.is_some()) {
            for (r, row) in results.iter().zip(rows.iter_mut()) {
                let at = row
                    .iter()
                    .position(|c| c.0 == "vs base")
                    .map_or(0, |i| i + 1);
                row.insert(at, ("rmr/passage", rmr_cell(r)));
            }
        }
        let headers: Vec<&str> = rows[0].iter().map(|c| c.0).collect();
        // Text columns left-aligned, figures right-aligned.
        let mut table = table::Table::new(|i| match headers[i] {
            "lock" | "problem" | "mix" | "note" | "rmr/passage" => Align::Left,
            _ => Align::Right,
        });
        table.row(headers.iter().copied()).rule();
        let mut last_group = None;
        for (r, row) in results.iter().zip(&rows) {
            let group = (r.threads, r.mix.clone());
            if last_group.as_ref().is_some_and(|g| *g != group) {
                table.gap();
            }
            last_group = Some(group);
            table.row(row.iter().map(|c| c.1.as_str()));
        }
        let mut out = String::new();
        let first = &results[0];
        let _ = writeln!(out, "{}", settings_line(results));
        if let Some(f) = &first.harness_fidelity {
            let _ = writeln!(
                out,
                "harness fidelity: {} at {} thread, harness/bare throughput {}; harness adds {} (noop against an empty loop)",
                f.lock,
                f.threads,
                estimate(&f.ratio),
                harness_adds(first.harness_overhead_ns),
            );
        }
        out.push_str(&table.render());
        let notes = quality_notes(results);
        if !notes.is_empty() {
            let _ = writeln!(
                out,
                "! = a figure resting on too little to be read as a precise number (docs/measurement.md, Quality flags):"
            );
            for n in notes {
                let _ = writeln!(out, "  ! {n}");
            }
        }
        out.push_str(&counters_section(results));
        out.push_str(&trace_section(results));
        out.push_str(&nodes::table_section(results));
        out
    }
}

/// The counters per passage of every run (counters that counted somewhere), and one line per
/// counter that was unavailable everywhere, with the reason.
fn counters_section(results: &[RunResult]) -> String {
    let mut names: Vec<String> = Vec::new();
    let mut unavailable: Vec<(String, String)> = Vec::new();
    for r in results {
        for c in &r.counters {
            if c.per_passage.is_some() {
                if !names.contains(&c.name) {
                    names.push(c.name.clone());
                }
            } else if let Some(why) = &c.unavailable {
                if !unavailable.iter().any(|(n, _)| *n == c.name) {
                    unavailable.push((c.name.clone(), why.clone()));
                }
            }
        }
    }
    unavailable.retain(|(n, _)| !names.contains(n));
    let mut out = String::new();
    if !names.is_empty() {
        let _ = writeln!(
            out,
            "\ncounters per passage (over all threads' measured windows):"
        );
        let mut header = vec!["lock".to_string(), "thr".to_string(), "mix".to_string()];
        header.extend(names.iter().map(|n| {
            if n == "task-clock" {
                "task-clock ns".to_string()
            } else {
                n.clone()
            }
        }));
        let mut rows = vec![header];
        for r in results {
            let mut row = vec![r.lock.clone(), r.threads.to_string(), r.mix.clone()];
            for n in &names {
                let cell = r
                    .counters
                    .iter()
                    .find(|c| &c.name == n)
                    .map_or("-".to_string(), |c| match c.per_passage {
                        Some(v) if v >= 100.0 => {
                            format!("{v:.0}{}", if c.multiplexed { "*" } else { "" })
                        }
                        Some(v) if v > 0.0 && v < 0.01 => {
                            format!("{v:.1e}{}", if c.multiplexed { "*" } else { "" })
                        }
                        Some(v) => format!("{v:.3}{}", if c.multiplexed { "*" } else { "" }),
                        None => "n/a".into(),
                    });
                row.push(cell);
            }
            rows.push(row);
        }
        let mut table = table::Table::new(|i| {
            if i == 0 || i == 2 {
                Align::Left
            } else {
                Align::Right
            }
        });
        for row in rows {
            table.row(row);
        }
        out.push_str(&table.render());
        if results
            .iter()
            .any(|r| r.counters.iter().any(|c| c.multiplexed))
        {
            let _ = writeln!(out, "* multiplexed: scaled estimate");
        }
    }
    for (n, why) in unavailable {
        let _ = writeln!(out, "counter {n}: unavailable: {why}");
    }
    out
}

/// The trace summary of every traced run (`--trace`): header and one row each; empty when
/// no run was traced.
fn trace_rows(results: &[RunResult]) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for r in results {
        let Some(t) = &r.trace else { continue };
        if rows.is_empty() {
            rows.push(
                [
                    "lock",
                    "thr",
                    "mix",
                    "traced",
                    "fcfs viol",
                    "unconflicted",
                    "their wait p50",
                    "max",
                    "fife viol",
                    "note",
                ]
                .map(String::from)
                .to_vec(),
            );
        }
        let mut note = Vec::new();
        if !t.doorway_observed {
            note.push("fcfs by request order (doorway not reported)");
        }
        if t.truncated {
            note.push("truncated");
        }
        if r.fcfs_claimed && t.doorway_observed && t.fcfs_violations > 0 {
            note.push("CLAIMS FCFS");
        }
        let ns = |v: Option<f64>| v.map_or("-".to_string(), nanos);
        rows.push(vec![
            r.lock.clone(),
            r.threads.to_string(),
            r.mix.clone(),
            t.passages.to_string(),
            t.fcfs_violations.to_string(),
            t.unconflicted_passages.to_string(),
            ns(t.unconflicted_wait_p50_ns),
            ns(t.unconflicted_wait_max_ns),
            t.fife_violations.map_or("-".to_string(), |v| v.to_string()),
            note.join(", "),
        ]);
    }
    rows
}

/// The trace summary as aligned text, after the table.
fn trace_section(results: &[RunResult]) -> String {
    let rows = trace_rows(results);
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\ntrace (every passage): FCFS violations (P5), passages whose wait met no conflicting request (concurrent entry, P4) and their wait, FIFE violations (k-exclusion):\n",
    );
    let mut table = table::Table::new(|i| {
        if matches!(i, 0 | 2 | 9) {
            Align::Left
        } else {
            Align::Right
        }
    });
    for row in rows {
        table.row(row);
    }
    out.push_str(&table.render());
    out
}

/// JSON array of [`RunResult`] objects.
pub struct Json;

impl Exporter for Json {
    fn export(&self, results: &[RunResult]) -> String {
        serde_json::to_string_pretty(results).expect("results serialise") + "\n"
    }
}

/// Markdown table.
pub struct Markdown;

impl Exporter for Markdown {
    fn export(&self, results: &[RunResult]) -> String {
        let mut out = String::new();
        if let Some(first) = results.first() {
            let _ = writeln!(out, "{}\n", settings_line(results));
            let _ = writeln!(
                out,
                "Host: {}; lockbench {}.\n",
                render::host_line(&first.host),
                first.version
            );
        }
        for (i, r) in results.iter().enumerate() {
            let cols = columns(r);
            if i == 0 {
                let h: Vec<&str> = cols.iter().map(|c| c.0).collect();
                let _ = writeln!(out, "| {} |", h.join(" | "));
                let _ = writeln!(out, "|{}", "---|".repeat(h.len()));
            }
            let cells: Vec<String> = cols.iter().map(|c| c.1.replace('|', "\\|")).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        let notes = quality_notes(results);
        if !notes.is_empty() {
            let _ = writeln!(
                out,
                "\n`!` marks a figure resting on too little to be read as a precise number:\n"
            );
            for n in notes {
                let _ = writeln!(out, "- {}", n.replace('|', "\\|"));
            }
        }
        let trace = trace_rows(results);
        for (i, row) in trace.iter().enumerate() {
            if i == 0 {
                let _ = writeln!(out, "\nTrace (every passage):\n");
            }
            let cells: Vec<String> = row.iter().map(|c| c.replace('|', "\\|")).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
            if i == 0 {
                let _ = writeln!(out, "|{}", "---|".repeat(row.len()));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(rate(12_345_678.0), "12.35 Mop/s");
        assert_eq!(rate(999.0), "999.00 op/s");
        assert_eq!(nanos(850.0), "850 ns");
        assert_eq!(nanos(1_500.0), "1.50 µs");
        assert_eq!(nanos(25_000.0), "25.0 µs");
        assert_eq!(nanos(3.2e6), "3.20 ms");
    }

    #[test]
    fn an_unknown_harness_cost_is_said_in_words_in_the_table() {
        let r: RunResult = serde_json::from_value(serde_json::json!({
            "lock": "ticket", "threads": 1, "mix": "distinct", "repeat": 1,
            "harness_overhead_ns": null,
            "harness_fidelity": {"lock": "ticket", "threads": 1}
        }))
        .unwrap();
        assert!(r.harness_overhead_ns.is_nan());
        let out = Table.export(&[r]);
        assert!(
            out.contains("harness adds an unknown cost per passage"),
            "{out}"
        );
        assert!(!out.contains("NaN"), "{out}");
    }

    #[test]
    fn spread() {
        let s = crate::metrics::stats::Spread::of(&[3.0, 1.0, 2.0]);
        assert_eq!((s.min, s.median, s.max), (1.0, 2.0, 3.0));
        assert!((s.relative - 1.0).abs() < 1e-12);
        assert_eq!(
            crate::metrics::stats::median_sorted(&[1.0, 2.0, 3.0, 10.0]),
            2.5
        );
    }

    #[test]
    fn a_baseline_that_switches_out_while_it_waits_sleeps() {
        let result = |lock: &str, threads: usize, tput: f64, sleeps: Option<f64>| -> RunResult {
            let problem = if lock.ends_with("gme") {
                "gme"
            } else {
                "mutex"
            };
            serde_json::from_value(serde_json::json!({
                "lock": lock, "problem": problem, "threads": threads, "throughput_per_sec": tput,
                "host": {"load": {"seconds": 0.1, "busy": false, "sleeps_per_sec": sleeps}},
            }))
            .unwrap()
        };
        let runs = [
            result("condvar-gme", 1, 1e7, Some(5.0)),
            result("condvar-gme", 2, 1e5, Some(3e4)),
            result("ticket", 2, 1e7, Some(200.0)),
            result("semaphore", 2, 1e5, None),
        ];
        assert_eq!(
            how_it_waits(&runs, "condvar-gme"),
            "sleeps while waiting: 0.30 context switches per passage, so a spinning lock's \
             ratio to it counts the sleeps too; --baseline spin-gme compares with a spinning one"
        );
        assert_eq!(
            how_it_waits(&runs, "ticket"),
            "spins while waiting: 0.000 context switches per passage"
        );
        assert_eq!(
            how_it_waits(&runs, "semaphore"),
            "how it waits not measured"
        );
    }
}
