//! `report` and `compare` on two small recorded result sets (tests/fixtures/compare/).

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

mod common;
use common::{fixture_path, lockbench, results};

/// One of the two recorded result sets, `a` or `b`.
fn fixture(side: &str) -> PathBuf {
    fixture_path(&format!("compare/{side}"))
}

/// Every SVG under `dir` parses as XML, has an `<svg>` root and some text; returns the texts.
pub fn check_svgs(dir: &Path) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "svg") {
            let text = fs::read_to_string(&p).unwrap();
            let doc = roxmltree::Document::parse(&text)
                .unwrap_or_else(|e| panic!("{} is not XML: {e}", p.display()));
            assert_eq!(
                doc.root_element().tag_name().name(),
                "svg",
                "{}",
                p.display()
            );
            let texts: Vec<String> = doc
                .descendants()
                .filter(|n| n.has_tag_name("text"))
                .filter_map(|n| n.text().map(|t| t.trim().to_string()))
                .collect();
            assert!(!texts.is_empty(), "{} has no text", p.display());
            out.push((p.file_name().unwrap().to_string_lossy().into_owned(), texts));
        }
    }
    out.sort();
    out
}

#[test]
fn report_renders_markdown_plots_and_interval_logs() {
    let out = tempfile::tempdir().unwrap();
    lockbench()
        .args(["report"])
        .arg(fixture("a"))
        .arg("--out")
        .arg(out.path())
        .assert()
        .success();
    let md = fs::read_to_string(out.path().join("report.md")).unwrap();
    let runs = results(&fixture("a"));
    assert_eq!(runs.len(), 6);
    // The table of every point names each (lock, threads, mix).
    for r in &runs {
        let row = format!(
            "| {} | {} | {} | {} |",
            r["lock"].as_str().unwrap(),
            r["problem"].as_str().unwrap(),
            r["threads"],
            r["mix"].as_str().unwrap()
        );
        assert!(md.contains(&row), "{row} missing from report.md");
    }
    // The throughput table: ratios with their interval and its level, "(baseline)" only on
    // the lock the ratios are to.
    assert!(md.contains("(1.13x [1.06–1.14] 75%)"), "{md}");
    assert!(md.contains("(no diff [0.89–3.68] 75%)"), "{md}");
    assert!(md.contains("| ticket (baseline) |") && !md.contains("tas (baseline)"));
    let svgs = check_svgs(&out.path().join("plots"));
    let names: Vec<&str> = svgs.iter().map(|(n, _)| n.as_str()).collect();
    for want in [
        "throughput_distinct_cs0_think0_k1.svg",
        "latency_distinct_cs0_think0_k1_t1.svg",
        "latency_distinct_cs0_think0_k1_t2.svg",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
        assert!(md.contains(&format!("(plots/{want})")), "{want} not linked");
    }
    // A `passages` run on `distinct`: no fairness plot, no GME concurrency plot (tests/plots.rs).
    assert!(!names
        .iter()
        .any(|n| n.starts_with("fairness_") || n.starts_with("concurrency_")));
    // Axis titles with units, and a legend entry per lock.
    let (_, throughput) = &svgs[names
        .iter()
        .position(|n| n.starts_with("throughput"))
        .unwrap()];
    for t in [
        "threads",
        "throughput (passages/s) — log scale",
        "ticket",
        "tas",
        "glb",
    ] {
        assert!(
            throughput.iter().any(|x| x == t),
            "{t} not in {throughput:?}"
        );
    }
    // One interval log per point, each readable back.
    let hlogs: Vec<PathBuf> = fs::read_dir(out.path().join("hlog"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(hlogs.len(), 6);
    for h in &hlogs {
        let bytes = fs::read(h).unwrap();
        let n = hdrhistogram::serialization::interval_log::IntervalLogIterator::new(&bytes)
            .filter(|e| {
                matches!(
                    e,
                    Ok(hdrhistogram::serialization::interval_log::LogEntry::Interval(_))
                )
            })
            .count();
        assert_eq!(n, 1, "{}", h.display());
    }
}

#[test]
fn report_refuses_a_directory_without_results() {
    let empty = tempfile::tempdir().unwrap();
    let out = lockbench()
        .arg("report")
        .arg(empty.path())
        .assert()
        .code(2)
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("no results.json"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn compare_two_recorded_sets_names_every_common_point() {
    let out = lockbench()
        .args(["compare", "--format", "json"])
        .arg(fixture("a"))
        .arg(fixture("b"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let doc: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(doc["schema_version"], 2);
    let cmp = doc["points"].as_array().unwrap();
    assert_eq!(cmp.len(), 6);
    for p in cmp {
        let ratio = p["ratio"].as_f64().unwrap();
        let i = &p["interval"];
        assert!(i["low"].as_f64().unwrap() <= ratio && ratio <= i["high"].as_f64().unwrap());
        // Three rounds a side, less the near-empty ones, which are left out and flagged.
        let rounds = (
            p["rounds"][0].as_u64().unwrap(),
            p["rounds"][1].as_u64().unwrap(),
        );
        assert!(rounds.0 <= 3 && rounds.1 <= 3, "{p}");
        if rounds != (3, 3) {
            let flags = p["flags"].to_string();
            assert!(flags.contains("near-empty"), "{p}");
        }
        assert_eq!(
            p["differs"].as_bool().unwrap(),
            !(i["low"].as_f64().unwrap() <= 1.0 && 1.0 <= i["high"].as_f64().unwrap())
        );
    }
    // A set against itself: every ratio 1, nothing flagged, even with a tight gate.
    let out = lockbench()
        .args(["compare", "--fail-above", "0.1%"])
        .arg(fixture("a"))
        .arg(fixture("a"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("6 points compared: 0 slower, 0 faster"),
        "{text}"
    );
}

/// A copy of fixture `a` with every throughput multiplied by `factor`.
fn scaled(factor: f64) -> tempfile::TempDir {
    scaled_on(factor, false)
}

/// A copy of fixture `a` with every throughput multiplied by `factor`, its host marked busy
/// when `busy`.
fn scaled_on(factor: f64, busy: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut runs = results(&fixture("a"));
    for r in &mut runs {
        if busy {
            r["host"]["load"] = serde_json::json!({
                "seconds": 0.05, "busy": true, "others_cpu": 1.9,
                "reasons": ["1.9 CPUs of other work"],
            });
        }
        let t = r["throughput_per_sec"].as_f64().unwrap();
        r["throughput_per_sec"] = (t * factor).into();
        for round in r["per_round"].as_array_mut().unwrap() {
            let t = round["throughput_per_sec"].as_f64().unwrap();
            round["throughput_per_sec"] = (t * factor).into();
        }
    }
    fs::write(
        dir.path().join("results.json"),
        serde_json::to_string(&runs).unwrap(),
    )
    .unwrap();
    dir
}

#[test]
fn fail_above_gates_on_a_regression_beyond_the_noise() {
    // A hundred times slower is beyond the noise of every point.
    let slow = scaled(0.01);
    let out = lockbench()
        .args(["compare", "--fail-above", "10%"])
        .arg(fixture("a"))
        .arg(slow.path())
        .assert()
        .code(1)
        .get_output()
        .clone();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("6 points compared: 6 slower"), "{text}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("6 point(s) slower by more than 10.0%"),
        "{err}"
    );
    // Half as fast: the 1-thread points are slower beyond their noise (their rounds agree),
    // the noisier 2-thread points are not; none regresses by more than 60%.
    let half = scaled(0.5);
    let out = lockbench()
        .args(["compare", "--fail-above", "60%", "--format", "json"])
        .arg(fixture("a"))
        .arg(half.path())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let doc: Value = serde_json::from_slice(&out).unwrap();
    for p in doc["points"].as_array().unwrap() {
        assert!((p["ratio"].as_f64().unwrap() - 0.5).abs() < 1e-9);
        assert_eq!(p["regressed"], false);
        if p["threads"] == 1 {
            assert_eq!(p["differs"], true, "{p}");
        }
    }
    // Faster never fails.
    lockbench()
        .args(["compare", "--fail-above", "10%"])
        .arg(slow.path())
        .arg(fixture("a"))
        .assert()
        .success();
}

#[test]
fn an_a_a_comparison_never_fails_the_gate() {
    // `a` and `b` are one command run twice on a loaded 2-CPU VM: at any threshold, either way
    // round, no point fails; the one whose interval excludes 1 (from 2 rounds) is inconclusive.
    for (x, y) in [("a", "b"), ("b", "a")] {
        for gate in ["0%", "0.1%", "1%", "10%"] {
            let out = lockbench()
                .args(["compare", "--fail-above", gate])
                .arg(fixture(x))
                .arg(fixture(y))
                .assert()
                .success()
                .get_output()
                .stdout
                .clone();
            let text = String::from_utf8(out).unwrap();
            assert!(!text.contains("SLOWER !  "), "{x} {y} {gate}: {text}");
            assert!(text.contains("1 inconclusive"), "{x} {y} {gate}: {text}");
            assert!(text.contains("inconclusive: too few rounds"), "{text}");
        }
    }
    // Half as fast on a busy host: the data cannot decide, so the gate holds...
    let busy = scaled_on(0.5, true);
    let out = lockbench()
        .args(["compare", "--fail-above", "5%", "--format", "json"])
        .arg(fixture("a"))
        .arg(busy.path())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let doc: Value = serde_json::from_slice(&out).unwrap();
    for p in doc["points"].as_array().unwrap() {
        assert_eq!(p["regressed"], false, "{p}");
        assert_eq!(p["inconclusive"], "busy host (B)", "{p}");
    }
    // ...and the same figures on a quiet host fail it where the shift is wider than the
    // rounds' own spread (the 1-thread points, whose rounds agree within 31%), not where one
    // side's rounds span a factor of 2 or more (the 2-thread points).
    let quiet = scaled_on(0.5, false);
    let out = lockbench()
        .args(["compare", "--fail-above", "5%", "--format", "json"])
        .arg(fixture("a"))
        .arg(quiet.path())
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let doc: Value = serde_json::from_slice(&out).unwrap();
    for p in doc["points"].as_array().unwrap() {
        let one = p["threads"] == 1;
        assert_eq!(p["regressed"], one, "{p}");
        assert_eq!(p["inconclusive"].is_null(), one, "{p}");
    }
}

#[test]
fn compare_tells_two_revisions_apart() {
    let with_commit = |commit: &str, dirty: &str| {
        let dir = tempfile::tempdir().unwrap();
        let mut runs = results(&fixture("a"));
        for (i, r) in runs.iter_mut().enumerate() {
            // The default sampling rate adapts per run: not a setting that differs.
            r["latency_sample_adaptive"] = true.into();
            r["latency_sample"] = (290 + i + commit.as_bytes()[0] as usize % 5).into();
            r["build"] = serde_json::json!({
                "version": "0.1.0", "commit": commit, "dirty": dirty,
                "rustc": "rustc 1.90.0 (1159e78c4 2025-09-14)", "profile": "release",
            });
        }
        fs::write(
            dir.path().join("results.json"),
            serde_json::to_string(&runs).unwrap(),
        )
        .unwrap();
        dir
    };
    let (a, b) = (
        with_commit("a8a4dad0000", "false"),
        with_commit("77a4355ffff", "true"),
    );
    let out = lockbench()
        .arg("compare")
        .arg(a.path())
        .arg(b.path())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("differ in lockbench build: A 0.1.0 a8a4dad, release, rustc 1.90.0; B 0.1.0 77a4355 (dirty), release"),
        "{text}"
    );
    assert!(!text.contains("latency sampling"), "{text}");
    // The same build on both sides: no such warning.
    let out = lockbench()
        .arg("compare")
        .arg(a.path())
        .arg(a.path())
        .output()
        .unwrap();
    assert!(!String::from_utf8(out.stdout)
        .unwrap()
        .contains("lockbench build"));
}

#[test]
fn compare_bad_input_is_one_line_and_exit_2() {
    for args in [vec!["--fail-above", "lots"], vec!["--format", "table"]] {
        let mut cmd = lockbench();
        cmd.arg("compare").arg(fixture("a"));
        if args[0] == "--format" {
            cmd.arg("/nonexistent/results");
        } else {
            cmd.arg(fixture("b"));
        }
        let out = cmd.args(&args).assert().code(2).get_output().clone();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    // compare writes table, md and json: csv is refused, naming those.
    let out = lockbench()
        .arg("compare")
        .arg(fixture("a"))
        .arg(fixture("b"))
        .args(["--format", "csv"])
        .assert()
        .code(2)
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("use table or md or json"), "{err}");
}

#[test]
fn report_draws_rmrs_and_model_against_hardware_when_present() {
    let out = tempfile::tempdir().unwrap();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rmr-sample");
    lockbench()
        .arg("report")
        .arg(dir.join("pmu"))
        .arg("--out")
        .arg(out.path())
        .arg("--calibration")
        .arg(dir.join("calibration-server.json"))
        .assert()
        .success();
    let svgs = check_svgs(&out.path().join("plots"));
    let names: Vec<&str> = svgs.iter().map(|(n, _)| n.as_str()).collect();
    for want in [
        "rmr_distinct_cs0_think0_k1_rmr-cc.svg",
        "rmr_distinct_cs0_think0_k1_rmr-dsm.svg",
        "correlate-cc-passage-ns.svg",
        "predicted_vs_measured.svg",
        "throughput_distinct_cs0_think0_k1.svg",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    // Timings on the counting memory are not plotted as if they were the lock's.
    assert!(!names
        .iter()
        .any(|n| n.starts_with("latency") && n.contains("rmr")));
    let md = fs::read_to_string(out.path().join("report.md")).unwrap();
    assert!(md.contains("## Model against hardware"), "{md}");
    assert!(md.contains("(plots/predicted_vs_measured.svg)"));
}

#[test]
fn compare_leaves_a_near_zero_round_out_and_flags_it() {
    // B = A, but one round of B measured 5 passages at a near-zero rate.
    let dir = tempfile::tempdir().unwrap();
    let mut runs = results(&fixture("a"));
    for r in &mut runs {
        for (i, round) in r["per_round"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .enumerate()
        {
            round["passages"] = 50_000.into();
            if i == 0 {
                round["throughput_per_sec"] = 10.0.into();
                round["passages"] = 5.into();
            }
        }
    }
    fs::write(
        dir.path().join("results.json"),
        serde_json::to_string(&runs).unwrap(),
    )
    .unwrap();
    let doc: Value = serde_json::from_slice(
        &lockbench()
            .args(["compare", "--format", "json", "--fail-above", "5%"])
            .arg(fixture("a"))
            .arg(dir.path())
            .assert()
            .success()
            .get_output()
            .stdout
            .clone(),
    )
    .unwrap();
    for p in doc["points"].as_array().unwrap() {
        // The estimate rests on B's two other rounds, equal to A's: near 1, not near 0.
        let ratio = p["ratio"].as_f64().unwrap();
        assert!(ratio > 0.1, "{p}");
        assert_eq!(p["rounds"][1], 2, "{p}");
        assert!(p["flags"].to_string().contains("near-empty"), "{p}");
        assert_eq!(p["regressed"], false);
    }
    // The table marks the ratio and says why.
    let text = String::from_utf8(
        lockbench()
            .arg("compare")
            .arg(fixture("a"))
            .arg(dir.path())
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(text.contains("%]!"), "{text}");
    assert!(text.contains("B: 1 of 3 rounds near-empty"), "{text}");
}

#[test]
fn report_says_an_incomplete_sweep_and_writes_one_html_page() {
    let dir = tempfile::tempdir().unwrap();
    fs::copy(
        fixture("a").join("results.json"),
        dir.path().join("results.json"),
    )
    .unwrap();
    fs::write(
        dir.path().join("manifest.json"),
        r#"{"config": "", "config_path": "x.toml", "config_hash": "0", "lockbench_version": "0",
            "host": null, "created": 0, "points": ["t1 distinct", "t2 distinct"]}"#,
    )
    .unwrap();
    fs::write(
        dir.path().join("points.jsonl"),
        "{\"point\": \"t1 distinct\", \"result\": {}}\n{\"point\": \"t1 distinct\", \"done\": 1}\n",
    )
    .unwrap();
    lockbench().arg("report").arg(dir.path()).assert().success();
    let md = fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(
        md.contains("This sweep is incomplete: 1 of 2 points measured"),
        "{md}"
    );
    assert!(md.contains("`t2 distinct`") && md.contains("--resume"));
    // Intervals, no diff or a flagged ratio, samples and flags in the table of every point.
    assert!(md.contains("| samples |") && md.contains("| flags |"));
    let html = fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.contains("This sweep is incomplete"));
    assert_eq!(
        html.matches("<svg").count(),
        fs::read_dir(dir.path().join("plots")).unwrap().count()
    );
}
