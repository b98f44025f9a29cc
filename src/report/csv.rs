//! The CSV export: one row per run, figures in plain units (ns, per second), and a column set
//! that holds still. Every run has the same columns whatever it measured: the counters are one
//! column per named event (empty where not measured, with or without `--counters`), raw and
//! preset events in one `other_counters_per_passage` cell (`name=value;...`); a run without a
//! trace or a baseline has empty cells there.
//!
//! Column names are snake_case with their unit: `_ns` for times, `_per_sec` for rates,
//! `_per_passage` for counts per passage (`task_clock_ns_per_passage` in ns). `passages` is the
//! median round's count (the round the latency and fairness figures come from),
//! `passages_total` every round's together. Each row names its host, the time it finished
//! (`timestamp`, seconds since the Unix epoch) and the build that measured it.
//!
//! Placement: `pin`, `cpus` (the `--cpus` list; empty: every CPU), `mem_policy` and the pages
//! it bound and found misplaced (empty without a policy), and each thread's place in four
//! cells, `thread_cpus`, `thread_cores`, `thread_nodes` and `thread_sockets`: one entry per
//! thread in thread order, `;`-separated, an entry empty where it is unknown (unpinned).

use super::{Exporter, RunResult};

/// The named counters, each with a fixed `<name>_per_passage` column.
pub const COUNTER_COLUMNS: [&str; 12] = [
    "cycles",
    "instructions",
    "cache-references",
    "cache-misses",
    "branches",
    "branch-misses",
    "l1d-read-misses",
    "llc-read-misses",
    "context-switches",
    "cpu-migrations",
    "page-faults",
    "task-clock",
];

/// The header, without the counters' columns.
const HEADER: &str = "lock,problem,source,threads,sessions,k,mix,passages,throughput_per_sec,\
     throughput_rel_spread,baseline,throughput_vs_baseline,throughput_vs_baseline_low,\
     throughput_vs_baseline_high,p50_ns,p90_ns,p99_ns,p999_ns,max_ns,mean_ns,fairness_jain,\
     inside_mean,inside_max,safety_checked,safety_violations,invariant_failures,stalled,\
     slots,nothing_measured,latency_samples,starved_threads,oracle,\
     pin,cpus,mem_policy,mem_pages_bound,mem_pages_misplaced,\
     thread_cpus,thread_cores,thread_nodes,thread_sockets,smt,oversubscribed,wait_policy,cs_ns,think_ns,cs_lines,stop,warmup_ns,rounds,latency_sample,\
     trace_passages,fcfs_violations,unconflicted_passages,unconflicted_wait_p50_ns,unconflicted_wait_max_ns,fife_violations,trace_truncated,\
     host_busy,quality,schema_version,passages_total,exit_p50_ns,exit_p99_ns,exit_max_ns,\
     hostname,cpu_model,kernel,timestamp,version,commit,dirty,rustc,profile";

/// A counter's column: its name in snake_case, with its unit (`task_clock_ns_per_passage`).
pub fn counter_column(name: &str) -> String {
    let unit = if name == "task-clock" { "_ns" } else { "" };
    format!("{}{unit}_per_passage", name.replace('-', "_"))
}

/// The whole header line (no newline).
pub fn header() -> String {
    let mut h = HEADER.to_string();
    for n in COUNTER_COLUMNS {
        h.push(',');
        h.push_str(&counter_column(n));
    }
    h.push_str(",other_counters_per_passage");
    h
}

/// CSV, one row per run.
pub struct Csv;

impl Exporter for Csv {
    fn export(&self, results: &[RunResult]) -> String {
        let mut out = header();
        out.push('\n');
        for r in results {
            out.push_str(&row(r).join(","));
            out.push('\n');
        }
        out
    }
}

fn opt(v: Option<f64>) -> String {
    v.map_or(String::new(), |x| format!("{x}"))
}

/// One run's cells, in the header's order.
fn row(r: &RunResult) -> Vec<String> {
    let t = r.trace.as_ref();
    let interval = r.throughput_vs_baseline_interval;
    let quality = super::quality::assess(r);
    let mut fields = vec![
        csv_field(&r.lock),
        r.problem.clone(),
        csv_field(&r.source),
        r.threads.to_string(),
        r.sessions.to_string(),
        r.k.to_string(),
        csv_field(&r.mix),
        r.passages.to_string(),
        format!("{:.1}", r.throughput_per_sec),
        if quality.affects("throughput_spread") && r.repeat < 2 {
            String::new()
        } else {
            format!("{:.4}", r.throughput_spread.relative)
        },
        r.baseline.clone().unwrap_or_default(),
        opt(r.throughput_vs_baseline),
        opt(interval.map(|i| i.low)),
        opt(interval.map(|i| i.high)),
        format!("{:.1}", r.latency_ns.p50),
        format!("{:.1}", r.latency_ns.p90),
        format!("{:.1}", r.latency_ns.p99),
        format!("{:.1}", r.latency_ns.p999),
        format!("{:.1}", r.latency_ns.max),
        format!("{:.1}", r.latency_ns.mean),
        format!("{:.4}", r.fairness_jain),
        opt(r.concurrency.map(|c| c.mean)),
        r.concurrency.map_or(String::new(), |c| c.max.to_string()),
        r.safety_checked.to_string(),
        r.safety_violations.to_string(),
        r.invariant_failures.to_string(),
        r.stalled.is_some().to_string(),
        r.slots.to_string(),
        r.nothing_measured.to_string(),
        r.latency_ns.count.to_string(),
        r.starved_threads
            .iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(";"),
        r.oracle.clone(),
        r.pin.clone(),
        csv_field(r.cpus.as_deref().unwrap_or("")),
        r.mem_policy.clone().unwrap_or_default(),
        r.mem_pages
            .as_ref()
            .map_or(String::new(), |m| m.bound.to_string()),
        r.mem_pages
            .as_ref()
            .map_or(String::new(), |m| m.misplaced.to_string()),
        each_thread(r, |t| t.cpu),
        each_thread(r, |t| t.core),
        each_thread(r, |t| t.node),
        each_thread(r, |t| t.socket),
        r.smt.to_string(),
        r.oversubscribed.to_string(),
        r.wait_policy.clone(),
        r.cs_ns.to_string(),
        r.think_ns.to_string(),
        r.cs_lines.to_string(),
        csv_field(&r.stop),
        r.warmup_ns.to_string(),
        r.repeat.to_string(),
        r.latency_sample.to_string(),
        t.map_or(String::new(), |t| t.passages.to_string()),
        t.map_or(String::new(), |t| t.fcfs_violations.to_string()),
        t.map_or(String::new(), |t| t.unconflicted_passages.to_string()),
        opt(t.and_then(|t| t.unconflicted_wait_p50_ns)),
        opt(t.and_then(|t| t.unconflicted_wait_max_ns)),
        t.and_then(|t| t.fife_violations)
            .map_or(String::new(), |v| v.to_string()),
        t.map_or(String::new(), |t| t.truncated.to_string()),
        r.host
            .load
            .as_ref()
            .map_or(String::new(), |l| l.busy.to_string()),
        quality.names(),
        super::result::SCHEMA_VERSION.to_string(),
        if !r.per_round.is_empty() && r.per_round.iter().all(|f| f.passages.is_some()) {
            let total: u64 = r.per_round.iter().filter_map(|f| f.passages).sum();
            total.to_string()
        } else {
            String::new()
        },
        format!("{:.1}", r.exit_ns.p50),
        format!("{:.1}", r.exit_ns.p99),
        format!("{:.1}", r.exit_ns.max),
        csv_field(r.host.hostname.as_deref().unwrap_or("")),
        csv_field(r.host.cpu_model.as_deref().unwrap_or("")),
        csv_field(r.host.kernel.as_deref().unwrap_or("")),
        r.timestamp.to_string(),
        csv_field(&r.version),
        csv_field(&r.build.commit),
        csv_field(&r.build.dirty),
        csv_field(&r.build.rustc),
        csv_field(&r.build.profile),
    ];
    for n in COUNTER_COLUMNS {
        fields.push(opt(r
            .counters
            .iter()
            .find(|c| c.name == n)
            .and_then(|c| c.per_passage)));
    }
    let others: Vec<String> = r
        .counters
        .iter()
        .filter(|c| !COUNTER_COLUMNS.contains(&c.name.as_str()))
        .filter_map(|c| c.per_passage.map(|v| format!("{}={v}", c.name)))
        .collect();
    fields.push(csv_field(&others.join(";")));
    fields
}

/// One place figure of every thread, in thread order, `;`-separated (empty where unknown).
fn each_thread(
    r: &RunResult,
    of: impl Fn(&super::result::ThreadResult) -> Option<usize>,
) -> String {
    r.per_thread
        .iter()
        .map(|t| of(t).map_or(String::new(), |v| v.to_string()))
        .collect::<Vec<_>>()
        .join(";")
}

/// A CSV cell: quoted when it holds a comma, a quote or a newline.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(csv_field("hot:8:25,75"), "\"hot:8:25,75\"");
        assert_eq!(csv_field("single"), "single");
    }

    #[test]
    fn every_row_has_the_header_columns_whatever_it_counted() {
        let bare = RunResult {
            lock: "a".into(),
            repeat: 1,
            ..RunResult::default()
        };
        let counted: RunResult = serde_json::from_value(serde_json::json!({
            "lock": "b", "mix": "hot:8:20,80", "repeat": 3,
            "counters": [{"name": "cycles", "per_passage": 12.5},
                         {"name": "r0443", "per_passage": 2.0},
                         {"name": "cache-misses", "per_passage": null, "unavailable": "no pmu"}],
        }))
        .unwrap();
        let text = Csv.export(&[bare.clone(), counted]);
        let columns = header().split(',').count();
        let mut lines = text.lines();
        assert_eq!(lines.next().unwrap(), header());
        let mut reader_rows = 0;
        for line in lines {
            // Quoted cells hold commas: count outside quotes.
            let mut n = 1;
            let mut quoted = false;
            for ch in line.chars() {
                match ch {
                    '"' => quoted = !quoted,
                    ',' if !quoted => n += 1,
                    _ => {}
                }
            }
            assert_eq!(n, columns, "{line}");
            reader_rows += 1;
        }
        assert_eq!(reader_rows, 2);
        assert!(text.contains("r0443=2"));
        // One separator in names, units on the counters.
        let h = header();
        assert!(!h.contains('-'), "{h}");
        assert!(
            h.contains(",cache_misses_per_passage,") && h.contains(",task_clock_ns_per_passage,")
        );
        for c in [
            "passages_total",
            "exit_p99_ns",
            "hostname",
            "timestamp",
            "commit",
            "dirty",
            "rustc",
            "profile",
        ] {
            assert!(h.split(',').any(|x| x == c), "{c} missing: {h}");
        }
        assert_eq!(Csv.export(&[bare]).lines().next().unwrap(), header());
    }

    /// The cell of `column` in the first row of `text` (no quoted cells before it).
    fn cell(text: &str, column: &str) -> String {
        let i = header().split(',').position(|c| c == column).unwrap();
        text.lines()
            .nth(1)
            .unwrap()
            .split(',')
            .nth(i)
            .unwrap()
            .to_string()
    }

    #[test]
    fn placement_columns_hold_each_threads_place_and_the_policies() {
        let placed: RunResult = serde_json::from_value(serde_json::json!({
            "lock": "mcs", "repeat": 1, "pin": "scatter", "cpus": "0-15",
            "mem_policy": "local", "mem_pages": {"bound": 3, "misplaced": 1, "mixed": 0},
            "per_thread": [
                {"thread": 0, "cpu": 0, "core": 0, "node": 0, "socket": 0, "passages": 5},
                {"thread": 1, "cpu": 8, "core": 8, "node": 2, "socket": 1, "passages": 5},
                {"thread": 2, "cpu": null, "core": null, "node": null, "socket": null}
            ],
        }))
        .unwrap();
        let text = Csv.export(&[placed]);
        assert_eq!(cell(&text, "pin"), "scatter");
        assert_eq!(cell(&text, "cpus"), "0-15");
        assert_eq!(cell(&text, "thread_cpus"), "0;8;");
        assert_eq!(cell(&text, "thread_cores"), "0;8;");
        assert_eq!(cell(&text, "thread_nodes"), "0;2;");
        assert_eq!(cell(&text, "thread_sockets"), "0;1;");
        assert_eq!(cell(&text, "mem_policy"), "local");
        assert_eq!(cell(&text, "mem_pages_bound"), "3");
        assert_eq!(cell(&text, "mem_pages_misplaced"), "1");
        let unplaced = Csv.export(&[RunResult {
            lock: "a".into(),
            repeat: 1,
            ..RunResult::default()
        }]);
        for c in ["cpus", "mem_policy", "mem_pages_bound", "thread_nodes"] {
            assert_eq!(cell(&unplaced, c), "", "{c}");
        }
    }
}
