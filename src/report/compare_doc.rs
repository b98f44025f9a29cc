//! What `compare` adds around its table: the settings A and B did not share (a warning each),
//! the JSON document, and, with `--out DIR`, `compare.md` with A-vs-B overlays (throughput per
//! lock against threads, entry-latency percentiles) drawn as SVG under `DIR/plots/`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::compare::PointComparison;
use super::plots::{self, Axis, LineChart, Pt, Series};
use super::render::host_line;
use super::saved::Scenario;
use super::{nanos, rate, RunResult};

/// The settings of a result set that change what its figures mean, each as one short text.
fn settings(runs: &[RunResult]) -> BTreeMap<&'static str, String> {
    let set = |f: &dyn Fn(&RunResult) -> String| {
        let mut v: Vec<String> = runs.iter().map(f).collect();
        v.sort();
        v.dedup();
        v.join(", ")
    };
    BTreeMap::from([
        ("oracle", set(&|r| r.oracle.clone())),
        (
            "latency sampling",
            // The default rate adapts to each lock's passage time (1 in 292 here, 1 in 290
            // there): the same setting, not a difference to warn of.
            set(&|r| {
                if r.latency_sample_adaptive {
                    "the default (adaptive)".to_string()
                } else {
                    format!("1 in {}", r.latency_sample)
                }
            }),
        ),
        ("stop", set(&|r| r.stop.clone())),
        ("warm-up", set(&|r| nanos(r.warmup_ns as f64))),
        ("wait", set(&|r| r.wait_policy.clone())),
        (
            "pinning",
            set(&|r| format!("{}{}", r.pin, if r.smt { " smt" } else { "" })),
        ),
        ("rounds", set(&|r| r.repeat.to_string())),
        ("host", set(&|r| host_line(&r.host))),
        (
            "lockbench build",
            set(&|r| {
                if r.build.commit.is_empty() {
                    r.version.clone()
                } else {
                    r.build.line()
                }
            }),
        ),
    ])
}

/// One warning per setting A and B do not share, and one per side measured on a busy host.
pub fn warnings(a: &[RunResult], b: &[RunResult]) -> Vec<String> {
    let (sa, sb) = (settings(a), settings(b));
    let mut out: Vec<String> = sa
        .iter()
        .filter(|(k, v)| sb.get(*k) != Some(*v))
        .map(|(k, v)| {
            format!(
                "A and B differ in {k}: A {v}; B {}: a ratio also measures that difference",
                sb.get(k).map_or("-", |s| s.as_str())
            )
        })
        .collect();
    for (side, runs) in [("A", a), ("B", b)] {
        let busy = runs
            .iter()
            .filter(|r| r.host.load.as_ref().is_some_and(|l| l.busy))
            .count();
        if busy > 0 {
            out.push(format!(
                "{side}: {busy} of {} results were measured on a busy host",
                runs.len()
            ));
        }
    }
    out
}

/// `compare.md` and its overlays in `out`: `table` is the comparison as Markdown. Returns the
/// Markdown's path.
pub fn write(
    out: &Path,
    table: &str,
    a: &[RunResult],
    b: &[RunResult],
    points: &[PointComparison],
) -> Result<PathBuf> {
    crate::opts::io::create_dir_all(&out.join("plots"))?;
    let mut md = String::from("# lockbench compare\n\n");
    md.push_str(table);
    md.push('\n');
    let compared = |r: &&RunResult| {
        points
            .iter()
            .any(|p| p.lock == r.lock && p.threads == r.threads && p.mix == r.mix)
    };
    let mut scenarios: BTreeMap<Scenario, (Vec<&RunResult>, Vec<&RunResult>)> = BTreeMap::new();
    for r in a.iter().filter(compared) {
        scenarios.entry(r.key().scenario()).or_default().0.push(r);
    }
    for r in b.iter().filter(compared) {
        scenarios.entry(r.key().scenario()).or_default().1.push(r);
    }
    for (scen, (ra, rb)) in &scenarios {
        let _ = writeln!(md, "## {}\n", scen.title());
        let name = format!("compare_throughput_{}.svg", scen.file_part());
        crate::opts::io::write_atomic(
            &out.join("plots").join(&name),
            throughput(scen, ra, rb)?.as_bytes(),
        )?;
        let _ = writeln!(md, "![throughput, A against B](plots/{name})\n");
        let mut threads: Vec<usize> = ra.iter().map(|r| r.threads).collect();
        threads.sort_unstable();
        threads.dedup();
        for t in threads {
            let name = format!("compare_latency_{}_t{t}.svg", scen.file_part());
            crate::opts::io::write_atomic(
                &out.join("plots").join(&name),
                latency(scen, t, ra, rb)?.as_bytes(),
            )?;
            let _ = writeln!(
                md,
                "![entry latency, A against B, {t} threads](plots/{name})\n"
            );
        }
    }
    let path = out.join("compare.md");
    crate::opts::io::write_atomic(&path, md.as_bytes())?;
    Ok(path)
}

/// The locks of both sides, in name order: a lock keeps its colour in A and B.
fn locks<'a>(ra: &[&'a RunResult], rb: &[&'a RunResult]) -> Vec<&'a str> {
    let mut v: Vec<&str> = ra.iter().chain(rb).map(|r| r.lock.as_str()).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Throughput against threads, each lock as A (dashed, hollow) and B (solid).
fn throughput(scen: &Scenario, ra: &[&RunResult], rb: &[&RunResult]) -> Result<String> {
    let mut series = Vec::new();
    for lock in locks(ra, rb) {
        for (side, runs) in [("A", ra), ("B", rb)] {
            let mut pts: Vec<Pt> = runs
                .iter()
                .filter(|r| r.lock == lock)
                .map(|r| {
                    Pt::new(
                        r.threads as f64,
                        r.throughput_per_sec,
                        (r.repeat > 1)
                            .then_some((r.throughput_spread.min, r.throughput_spread.max)),
                    )
                })
                .collect();
            pts.sort_by(|p, q| p.x.total_cmp(&q.x));
            series.push(Series {
                name: format!("{lock} ({side})"),
                baseline: side == "A",
                look: plots::look(lock),
                points: pts,
            });
        }
    }
    let chart = LineChart {
        title: format!("Throughput, A against B — {}", scen.mix),
        subtitle: scen.title(),
        x: Axis {
            ticks: Some({
                let mut t: Vec<f64> = ra.iter().chain(rb).map(|r| r.threads as f64).collect();
                t.sort_by(f64::total_cmp);
                t.dedup();
                t
            }),
            from_zero: false,
            ..Axis::linear("threads", |v| format!("{v:.0}"))
        },
        y: Axis::log("throughput (passages/s)", rate),
        series,
        reference: None,
        note: "dashed, hollow: A\nsolid: B\nbars: min–max over the rounds".into(),
    };
    plots::line_chart(&chart)
}

/// Entry-latency percentiles (p50, p90, p99, p99.9) at `t` threads, A against B.
fn latency(scen: &Scenario, t: usize, ra: &[&RunResult], rb: &[&RunResult]) -> Result<String> {
    let mut series = Vec::new();
    for lock in locks(ra, rb) {
        for (side, runs) in [("A", ra), ("B", rb)] {
            let Some(r) = runs.iter().find(|r| r.lock == lock && r.threads == t) else {
                continue;
            };
            let l = &r.latency_ns;
            if l.count == 0 {
                continue;
            }
            // x: log10(1 / (1 − q)); only the percentiles the samples can carry.
            let pts: Vec<Pt> = super::quality::PERCENTILES
                .iter()
                .zip([l.p50, l.p90, l.p99, l.p999])
                .filter(|((_, _, q), _)| l.count >= super::quality::samples_needed(*q))
                .map(|((_, _, q), v)| Pt::new((1.0 / (1.0 - q)).log10(), v, None))
                .collect();
            series.push(Series {
                name: format!("{lock} ({side})"),
                baseline: side == "A",
                look: plots::look(lock),
                points: pts,
            });
        }
    }
    let chart = LineChart {
        title: format!("Entry latency, A against B — {}, {t} threads", scen.mix),
        subtitle: format!(
            "{}; percentiles resting on enough samples only (10 beyond each)",
            scen.title()
        ),
        x: Axis {
            ticks: Some(vec![2f64.log10(), 1.0, 2.0, 3.0]),
            ..Axis::linear("percentile (p50, p90, p99, p99.9)", |x| {
                match (x * 10.0).round() as i64 {
                    3 => "p50".into(),
                    10 => "p90".into(),
                    20 => "p99".into(),
                    30 => "p99.9".into(),
                    _ => String::new(),
                }
            })
        },
        y: Axis::log("entry latency (ns)", nanos),
        series,
        reference: None,
        note: "dashed, hollow: A\nsolid: B".into(),
    };
    plots::line_chart(&chart)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differing_settings_are_named() {
        let a = RunResult {
            lock: "x".into(),
            oracle: "self-check".into(),
            latency_sample: 8,
            ..RunResult::default()
        };
        let b = RunResult {
            oracle: "counting".into(),
            ..a.clone()
        };
        let w = warnings(std::slice::from_ref(&a), std::slice::from_ref(&b));
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].contains("oracle") && w[0].contains("counting"),
            "{w:?}"
        );
        assert!(warnings(std::slice::from_ref(&a), std::slice::from_ref(&a)).is_empty());
    }
}
