//! The plots of `report`, read back from their SVG text: axis titles that say "log scale" only
//! on log axes, percentile curves that start at a measured percentile, error bars of different
//! locks side by side, zeros on a log axis marked and explained, one colour per lock across
//! reports, the GME reference label out of the data, and the plots that cannot mean anything
//! (fairness in `--passages` mode, processes inside together for `distinct`) left out with a
//! note.

use std::fs;
use std::path::Path;

use crate::report::hlog;
use crate::report::plots::{self, look, Axis, LineChart, Pt, Series};
use serde_json::{json, Value};

/// One `<text>`: where, its colour and its words.
#[derive(Debug)]
struct Text {
    x: f64,
    y: f64,
    fill: String,
    body: String,
}

/// One `<polyline>`: its colour, width and points.
#[derive(Debug)]
struct Line {
    stroke: String,
    width: f64,
    points: Vec<(f64, f64)>,
}

struct Svg {
    texts: Vec<Text>,
    lines: Vec<Line>,
}

fn num(n: &roxmltree::Node, a: &str) -> f64 {
    n.attribute(a).and_then(|v| v.parse().ok()).unwrap_or(0.0)
}

fn parse(text: &str) -> Svg {
    let doc = roxmltree::Document::parse(text).expect("the SVG is XML");
    let texts = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| Text {
            x: num(&n, "x"),
            y: num(&n, "y"),
            fill: n.attribute("fill").unwrap_or("").to_uppercase(),
            body: n.text().unwrap_or("").trim().to_string(),
        })
        .collect();
    let lines = doc
        .descendants()
        .filter(|n| n.has_tag_name("polyline"))
        .map(|n| Line {
            stroke: n.attribute("stroke").unwrap_or("").to_uppercase(),
            width: num(&n, "stroke-width"),
            points: n
                .attribute("points")
                .unwrap_or("")
                .split_whitespace()
                .filter_map(|p| {
                    let (a, b) = p.split_once(',')?;
                    Some((a.parse().ok()?, b.parse().ok()?))
                })
                .collect(),
        })
        .collect();
    Svg { texts, lines }
}

fn read(dir: &Path, name: &str) -> Svg {
    let p = dir.join("plots").join(name);
    parse(&fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
}

impl Svg {
    fn has_text(&self, pred: impl Fn(&str) -> bool) -> bool {
        self.texts.iter().any(|t| pred(&t.body))
    }

    /// The vertical error-bar strokes (1 px wide, two points on one x) of colour `hex`: their x.
    fn bar_xs(&self, hex: &str) -> Vec<f64> {
        self.lines
            .iter()
            .filter(|l| l.stroke == hex && l.width == 1.0 && l.points.len() == 2)
            .filter(|l| l.points[0].0 == l.points[1].0 && l.points[0].1 != l.points[1].1)
            .map(|l| l.points[0].0)
            .collect()
    }

    /// The colour of the legend line beside the legend entry `name`.
    fn legend_colour(&self, name: &str) -> String {
        let t = self
            .texts
            .iter()
            .find(|t| t.body == name)
            .unwrap_or_else(|| panic!("no legend entry {name}"));
        self.lines
            .iter()
            .find(|l| {
                l.width == 2.0
                    && l.points.iter().all(|p| p.1 == t.y)
                    && l.points.iter().all(|p| p.0 < t.x && p.0 > t.x - 60.0)
            })
            .unwrap_or_else(|| panic!("no legend line beside {name}"))
            .stroke
            .clone()
    }
}

/// A histogram of entry latencies in ns: `ones` below one clock tick (1 ns, the floor of the
/// conversion) and 1000 real values from 100 ns up (a span of 11: a linear axis).
fn histogram(ones: u64) -> String {
    let mut h = hlog::ns_histogram();
    h.record_n(1, ones).unwrap();
    for v in 0..1000u64 {
        h.record(100 + v).unwrap();
    }
    hlog::encode(&h).unwrap()
}

/// One saved result.
fn result(lock: &str, problem: &str, threads: usize, mix: &str, stop: &str, tput: f64) -> Value {
    let baseline = matches!(lock, "ticket" | "tas" | "condvar-gme");
    json!({
        "lock": lock, "problem": problem, "threads": threads, "mix": mix, "stop": stop,
        "source": if baseline { "baseline" } else { "seed 000 Fig. 1" },
        "repeat": 3, "passages": 1000, "k": 1,
        "throughput_per_sec": tput,
        "throughput_spread": {"min": tput * 0.8, "median": tput, "max": tput * 1.2, "relative": 0.4},
        "latency_ns": {"p50": 400.0, "p90": 800.0, "p99": 900.0, "p999": 1000.0, "max": 1099.0,
                       "mean": 500.0, "count": 1600},
        "latency_histogram": histogram(600),
        "per_thread": (0..threads).map(|i| json!({"thread": i, "passages": 500,
            "window_ns": 1e6, "rate_per_sec": 5e5})).collect::<Vec<_>>(),
        "fairness_jain": 1.0,
        "concurrency": if problem == "gme" { json!({"mean": 1.4, "max": 2}) } else { Value::Null },
    })
}

/// `lockbench report` of `results` into a fresh directory.
fn report(results: &[Value]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    fs::create_dir(&data).unwrap();
    fs::write(
        data.join("results.json"),
        serde_json::to_string(results).unwrap(),
    )
    .unwrap();
    crate::report::render::render(&data, dir.path(), None, None).unwrap();
    dir
}

const DUR: &str = "duration 100 ms";

/// ticket, glb and bwb-gme at 1 and 2 threads on `uniform:2`, over a duration; glb measured
/// nothing at 2 threads.
fn gme_set() -> Vec<Value> {
    let mut rs = Vec::new();
    for t in [1, 2] {
        rs.push(result("ticket", "mutex", t, "uniform:2", DUR, 2e7));
        rs.push(result("bwb-gme", "gme", t, "uniform:2", DUR, 1e6));
        let glb = if t == 2 { 0.0 } else { 3e5 };
        rs.push(result("glb", "gme", t, "uniform:2", DUR, glb));
    }
    rs
}

const THROUGHPUT: &str = "throughput_uniform-2_cs0_think0_k1.svg";

#[test]
fn error_bars_of_different_locks_sit_apart() {
    let dir = report(&gme_set());
    let svg = read(dir.path(), THROUGHPUT);
    let ticket = svg.bar_xs(&look("ticket").hex());
    let bwb = svg.bar_xs(&look("bwb-gme").hex());
    assert_eq!(ticket.len(), 2, "{ticket:?}");
    assert_eq!(bwb.len(), 2, "{bwb:?}");
    for (a, b) in ticket.iter().zip(&bwb) {
        assert!(
            (a - b).abs() >= 2.0,
            "bars at {a} and {b}: on top of each other"
        );
    }
}

#[test]
fn a_zero_on_a_log_axis_is_marked_on_the_bottom_edge_and_explained() {
    let dir = report(&gme_set());
    let svg = read(dir.path(), THROUGHPUT);
    assert!(
        svg.has_text(|t| t.contains("log scale")),
        "the span needs a log axis"
    );
    let glb = look("glb").hex();
    let zero = svg
        .texts
        .iter()
        .find(|t| t.body == "0" && t.fill == glb)
        .expect("a 0 in glb's colour");
    // On the bottom edge: below every other point's marker text and near the x axis.
    let axis_y = svg
        .lines
        .iter()
        .filter(|l| l.stroke == "#000000" && l.points.len() == 2)
        .filter(|l| l.points[0].1 == l.points[1].1)
        .map(|l| l.points[0].1)
        .fold(0.0, f64::max);
    assert!(
        (axis_y - zero.y).abs() < 30.0,
        "0 at y {} axis {axis_y}",
        zero.y
    );
    assert!(svg.has_text(|t| t.contains("a value of 0")));
    // Without a zero, no such note.
    let mut set = gme_set();
    set.retain(|r| r["throughput_per_sec"] != 0.0);
    let dir = report(&set);
    assert!(!read(dir.path(), THROUGHPUT).has_text(|t| t.contains("a value of 0")));
}

#[test]
fn a_lock_keeps_its_colour_in_every_report() {
    let one = report(&gme_set());
    let mut other = gme_set();
    other.retain(|r| r["lock"] != "bwb-gme");
    for t in [1, 2] {
        other.push(result("tas", "mutex", t, "uniform:2", DUR, 1e7));
        other.push(result("condvar-gme", "gme", t, "uniform:2", DUR, 4e6));
    }
    let two = report(&other);
    for lock in ["ticket", "glb"] {
        let a = read(one.path(), THROUGHPUT).legend_colour(lock);
        let b = read(two.path(), THROUGHPUT).legend_colour(lock);
        assert_eq!(a, b, "{lock}");
        assert_eq!(a, look(lock).hex(), "{lock}");
        // And in the latency plot of the same report.
        let l = read(one.path(), "latency_uniform-2_cs0_think0_k1_t1.svg");
        assert_eq!(l.legend_colour(lock), a, "{lock}");
    }
}

#[test]
fn percentile_curves_start_at_a_measured_percentile() {
    let dir = report(&gme_set());
    let svg = read(dir.path(), "latency_uniform-2_cs0_think0_k1_t1.svg");
    // 600 of 1600 latencies were below a clock tick: the curve starts past 0%.
    let zero_pct = svg.texts.iter().find(|t| t.body == "0%").expect("0% tick");
    let ticket = look("ticket").hex();
    let curve = svg
        .lines
        .iter()
        .filter(|l| l.stroke == ticket && l.width == 2.0 && l.points.len() > 2)
        .max_by_key(|l| l.points.len())
        .expect("ticket's curve");
    let start = curve.points[0].0;
    assert!(
        start > zero_pct.x + 20.0,
        "starts at x {start}, 0% at {}",
        zero_pct.x
    );
    // No tick at 1 ns: nothing is drawn that low.
    assert!(!svg.has_text(|t| t == "1 ns"));
    // Its y axis spans 100 ns to about 1.1 µs: a factor of 11, so linear, and titled so.
    let title = svg
        .texts
        .iter()
        .find(|t| t.body.starts_with("entry latency"))
        .unwrap();
    assert!(!title.body.contains("log"), "{}", title.body);
}

#[test]
fn axis_titles_say_log_scale_exactly_when_the_axis_is_one() {
    let chart = |ys: [f64; 2]| LineChart {
        title: "t".into(),
        subtitle: "s".into(),
        x: Axis::linear("threads", |v| format!("{v}")),
        y: Axis::log("entry latency (ns)", |v| format!("{v}")),
        series: vec![Series {
            name: "glb".into(),
            baseline: false,
            look: look("glb"),
            points: vec![Pt::new(1.0, ys[0], None), Pt::new(2.0, ys[1], None)],
        }],
        reference: None,
        note: String::new(),
    };
    let narrow = parse(&plots::line_chart(&chart([100.0, 300.0])).unwrap());
    assert!(narrow.has_text(|t| t == "entry latency (ns)"));
    assert!(!narrow.has_text(|t| t.contains("log scale")));
    let wide = parse(&plots::line_chart(&chart([100.0, 300_000.0])).unwrap());
    assert!(wide.has_text(|t| t == "entry latency (ns) — log scale"));
}

#[test]
fn the_gme_reference_label_stays_out_of_the_data() {
    let dir = report(&gme_set());
    let svg = read(dir.path(), "concurrency_uniform-2_cs0_think0_k1.svg");
    let label = svg
        .texts
        .iter()
        .find(|t| t.body.contains("1 = mutual exclusion"))
        .expect("the reference line is explained");
    // In the legend's margin (right of the plot area), not over the data.
    let plot_right = svg
        .lines
        .iter()
        .filter(|l| l.stroke == "#000000" && l.points.len() == 2)
        .filter(|l| l.points[0].1 == l.points[1].1)
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .fold(0.0, f64::max);
    assert!(
        label.x > plot_right,
        "label at x {} plot ends {plot_right}",
        label.x
    );
}

#[test]
fn passages_runs_have_no_fairness_plot_and_distinct_no_concurrency_plot() {
    let stop = "passages 2000 per thread";
    let mut rs = Vec::new();
    for t in [1, 2] {
        rs.push(result("ticket", "mutex", t, "distinct", stop, 2e7));
        rs.push(result("glb", "gme", t, "distinct", stop, 1e7));
        rs.push(result("glb", "gme", t, "uniform:2", stop, 1e7));
    }
    let dir = report(&rs);
    let names: Vec<String> = fs::read_dir(dir.path().join("plots"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().any(|n| n.starts_with("throughput_")),
        "{names:?}"
    );
    assert!(
        !names.iter().any(|n| n.starts_with("fairness_")),
        "{names:?}"
    );
    assert!(!names.contains(&"concurrency_distinct_cs0_think0_k1.svg".to_string()));
    assert!(names.contains(&"concurrency_uniform-2_cs0_think0_k1.svg".to_string()));
    let md = fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(md.contains("Per-thread fairness is not drawn"), "{md}");
    assert!(md.contains("not drawn for the `distinct` mix"), "{md}");
    // Over a duration the fairness plot is drawn.
    let dir = report(&gme_set());
    assert!(dir
        .path()
        .join("plots/fairness_uniform-2_cs0_think0_k1_t2.svg")
        .is_file());
}

#[test]
fn the_report_cites_the_papers_of_its_locks() {
    let dir = report(&gme_set());
    let md = fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(
        md.contains(
            "- bwb-gme, glb — seed 000: Y. He, K. Gopalakrishnan, E. Gafni, \
             \"Group mutual exclusion in linear time and space\""
        ),
        "{md}"
    );
}
