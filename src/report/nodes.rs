//! Throughput per NUMA node: for each run whose threads span more than one node, the threads
//! and passages per second of each node (the sum of its threads' rates), in the run table and
//! the report.

use std::fmt::Write as _;

use super::result::RunResult;
use crate::runner::placement::per_node;

/// One line per run that used more than one node: `ticket t=16 distinct: node 0 8 threads
/// 1.20 M/s · node 1 8 threads 0.93 M/s`.
pub fn lines(results: &[RunResult]) -> Vec<String> {
    results
        .iter()
        .filter_map(|r| {
            let nodes = per_node(r.per_thread.iter().map(|t| (t.node, t.rate_per_sec)));
            if nodes.is_empty() {
                return None;
            }
            let parts: Vec<String> = nodes
                .iter()
                .map(|(n, t, rate)| {
                    format!(
                        "node {n} {t} thread{} {}/s",
                        if *t == 1 { "" } else { "s" },
                        super::rate(*rate)
                    )
                })
                .collect();
            Some(format!(
                "{} t={} {}: {}",
                r.lock,
                r.threads,
                r.mix,
                parts.join(" · ")
            ))
        })
        .collect()
}

/// The run table's section: empty when no run used more than one node.
pub fn table_section(results: &[RunResult]) -> String {
    let lines = lines(results);
    let mut out = String::new();
    if !lines.is_empty() {
        out.push_str("throughput per NUMA node (each thread's passages over its own window):\n");
        for l in lines {
            let _ = writeln!(out, "  {l}");
        }
    }
    out
}

/// The report's section: empty when no run used more than one node.
pub fn markdown(md: &mut String, results: &[RunResult]) {
    let lines = lines(results);
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(
        md,
        "## Throughput per NUMA node\n\nEach node's threads and the sum of their rates (passages per second over each thread's own window).\n"
    );
    for l in lines {
        let _ = writeln!(md, "- {}", super::figures::md_cell(&l));
    }
    md.push('\n');
}
