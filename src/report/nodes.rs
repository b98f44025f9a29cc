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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::result::ThreadResult;

    fn run(nodes: &[Option<usize>]) -> RunResult {
        RunResult {
            lock: "ticket".into(),
            threads: nodes.len(),
            mix: "distinct".into(),
            per_thread: nodes
                .iter()
                .enumerate()
                .map(|(i, &node)| ThreadResult {
                    thread: i,
                    node,
                    rate_per_sec: 1000.0 * (i + 1) as f64,
                    ..ThreadResult::default()
                })
                .collect(),
            ..RunResult::default()
        }
    }

    #[test]
    fn a_run_on_one_node_has_no_breakdown_and_two_nodes_do() {
        assert!(table_section(&[run(&[Some(0), Some(0)])]).is_empty());
        assert!(table_section(&[run(&[None, None])]).is_empty());
        let s = table_section(&[run(&[Some(0), Some(1), Some(1)])]);
        assert!(s.contains("ticket t=3 distinct: node 0 1 thread "), "{s}");
        assert!(s.contains("node 1 2 threads"), "{s}");
        let mut md = String::new();
        markdown(&mut md, &[run(&[Some(0), Some(1)])]);
        assert!(md.starts_with("## Throughput per NUMA node"), "{md}");
    }
}
