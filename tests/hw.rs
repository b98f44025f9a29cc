//! The hardware side through the binary: `calibrate`, `correlate`, `predict`, and
//! `--counters coherence`. `correlate` and `predict` run on the hand-written sample results in
//! tests/fixtures/rmr-sample (see its README: not measurements).

use std::path::{Path, PathBuf};

use serde_json::Value;

mod common;
use common::{fixture_path, lockbench, results, stderr_of_failure, stdout_json};

/// A part of the hand-written sample (`pmu`, `no-pmu`, `calibration-server.json`, ...).
fn sample(part: &str) -> PathBuf {
    fixture_path(&format!("rmr-sample/{part}"))
}

/// Every run object in the sample's `results.json` files.
fn sample_runs(part: &str) -> Vec<Value> {
    let mut runs = Vec::new();
    for dir in std::fs::read_dir(sample(part)).unwrap() {
        runs.extend(results(&dir.unwrap().path()));
    }
    runs
}

/// Pearson's r, written out here independently of the crate's.
fn pearson(pairs: &[(f64, f64)]) -> f64 {
    let n = pairs.len() as f64;
    let (sx, sy) = pairs
        .iter()
        .fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
    let (mx, my) = (sx / n, sy / n);
    let cov: f64 = pairs.iter().map(|(x, y)| (x - mx) * (y - my)).sum();
    let vx: f64 = pairs.iter().map(|(x, _)| (x - mx).powi(2)).sum();
    let vy: f64 = pairs.iter().map(|(_, y)| (y - my).powi(2)).sum();
    cov / (vx * vy).sqrt()
}

fn same_config(a: &Value, b: &Value) -> bool {
    a["lock"] == b["lock"] && a["threads"] == b["threads"] && a["mix"] == b["mix"]
}

#[test]
fn correlate_with_a_pmu_gives_coefficients_per_event_and_model_and_plots() {
    let svg = tempfile::tempdir().unwrap();
    let report = stdout_json(lockbench().args([
        "correlate",
        sample("pmu").to_str().unwrap(),
        "--svg",
        svg.path().to_str().unwrap(),
        "--format",
        "json",
    ]));
    assert_eq!(report["pmu"]["available"], true);
    let correlations = report["correlations"].as_array().unwrap();
    // Each model has the clock plus the four Zen 3 coherence events.
    for model in ["cc", "dsm"] {
        let events: Vec<&str> = correlations
            .iter()
            .filter(|c| c["model"] == model)
            .map(|c| c["event"].as_str().unwrap())
            .collect();
        assert_eq!(events.len(), 5, "{model}: {events:?}");
        assert!(events.contains(&"passage-ns"));
        assert!(events.contains(&"l2_request_g1.change_to_x"));
        assert!(
            !events.contains(&"task-clock"),
            "software counters are not coherence events"
        );
    }
    // Pearson for cc × int_cache, recomputed from the sample: x from the --rmr run, y from the
    // native run of the same configuration.
    let runs = sample_runs("pmu");
    let pairs: Vec<(f64, f64)> = runs
        .iter()
        .filter(|r| r["rmr"]["model"] == "cc")
        .map(|m| {
            let native = runs
                .iter()
                .find(|n| n["rmr"].is_null() && same_config(m, n))
                .unwrap();
            let y = native["counters"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["name"] == "ls_dmnd_fills_from_sys.int_cache")
                .unwrap()["per_passage"]
                .as_f64()
                .unwrap();
            (m["rmr"]["per_passage_mean"].as_f64().unwrap(), y)
        })
        .collect();
    assert_eq!(pairs.len(), 20);
    let c = correlations
        .iter()
        .find(|c| c["model"] == "cc" && c["event"] == "ls_dmnd_fills_from_sys.int_cache")
        .unwrap();
    assert_eq!(c["n"], 20);
    assert_eq!(c["encoding"], "r0243");
    let r = c["pearson"].as_f64().unwrap();
    assert!(
        (r - pearson(&pairs)).abs() < 1e-9,
        "{r} vs {}",
        pearson(&pairs)
    );
    let rho = c["spearman"].as_f64().unwrap();
    assert!((-1.0..=1.0).contains(&rho));
    // A constant event has no coefficient, not 0.
    let constant = correlations
        .iter()
        .find(|c| c["model"] == "cc" && c["event"] == "ls_dmnd_fills_from_sys.ext_cache_remote")
        .unwrap();
    assert!(constant["pearson"].is_null() && constant["spearman"].is_null());
    // One SVG per (model, event), each with a point per configuration.
    let plot = PathBuf::from(c["plot"].as_str().unwrap());
    assert!(plot.starts_with(svg.path()));
    let text = std::fs::read_to_string(&plot).unwrap();
    assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
    assert_eq!(text.matches("<title>").count(), 20);
    assert_eq!(std::fs::read_dir(svg.path()).unwrap().count(), 10);
}

#[test]
fn correlate_without_a_pmu_says_so_and_shows_the_model_side() {
    let out = lockbench()
        .args(["correlate", sample("no-pmu").to_str().unwrap(), "--no-svg"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("hardware coherence counts: none") && first.contains("no hardware PMU"),
        "{first}"
    );
    assert!(text.contains("model side"), "{text}");
    for lock in ["mcs", "ticket", "tas", "lamport-bakery", "burns-lamport"] {
        assert!(
            text.lines().any(|l| l.starts_with(lock)),
            "{lock} missing:\n{text}"
        );
    }
    // Only the clock is correlated; no unavailable event gets a coefficient.
    let report = stdout_json(lockbench().args([
        "correlate",
        sample("no-pmu").to_str().unwrap(),
        "--no-svg",
        "--format",
        "json",
    ]));
    let events: Vec<&str> = report["correlations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["event"].as_str().unwrap())
        .collect();
    assert_eq!(events, vec!["passage-ns"]);
    assert_eq!(report["model_side"].as_array().unwrap().len(), 10);
    assert_eq!(
        report["model_side"][0]["measured_on_counting_memory"],
        false
    );
}

#[test]
fn predict_sets_rmrs_times_cost_against_the_clock() {
    let report = stdout_json(lockbench().args([
        "predict",
        sample("no-pmu").to_str().unwrap(),
        "--calibration",
        sample("calibration-vm.json").to_str().unwrap(),
        "--format",
        "json",
    ]));
    let predictions = report["predictions"].as_array().unwrap();
    assert_eq!(predictions.len(), 10);
    // Recompute one 2-thread prediction from the sample: the VM calibration's transfer cost
    // between CPUs 0 and 1 is (40 + 37 + 44) / 3, its local cost 2 ns.
    let runs = sample_runs("no-pmu");
    let find = |threads: u64, model: bool| {
        runs.iter()
            .find(|r| {
                r["lock"] == "ticket" && r["threads"] == threads && r["rmr"].is_null() != model
            })
            .unwrap()
    };
    let rmrs = |r: &Value| -> f64 {
        r["rmr"]["by_section"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_f64().unwrap())
            .sum()
    };
    // A run's passage time is each thread's time from one request to the next (threads over
    // the throughput), less the think time.
    let mean = |r: &Value| {
        r["threads"].as_f64().unwrap() * 1e9 / r["throughput_per_sec"].as_f64().unwrap()
            - r["think_ns"].as_f64().unwrap_or(0.0)
    };
    let local = mean(find(1, false)) - rmrs(find(1, true)) * 2.0;
    let predicted = local + rmrs(find(2, true)) * (40.0 + 37.0 + 44.0) / 3.0;
    let measured = mean(find(2, false));
    let p = predictions
        .iter()
        .find(|p| p["lock"] == "ticket" && p["threads"] == 2)
        .unwrap();
    assert!(
        (p["predicted_ns"].as_f64().unwrap() - predicted).abs() < 1e-6,
        "{p}"
    );
    assert!(
        (p["measured_ns"].as_f64().unwrap() - measured).abs() < 1e-6,
        "{p}"
    );
    let error = (predicted - measured) / measured * 100.0;
    assert!(
        (p["error_pct"].as_f64().unwrap() - error).abs() < 1e-6,
        "{p}"
    );
    // 1-thread rows are the base: no error of their own.
    for p in predictions.iter().filter(|p| p["threads"] == 1) {
        assert_eq!(p["base"], true);
        assert!(p["error_pct"].is_null());
        assert_eq!(p["predicted_ns"], p["measured_ns"]);
    }
    assert_eq!(report["mean_abs_error_pct"].as_array().unwrap().len(), 1);

    // The table prints every error and the mean.
    let out = lockbench()
        .args([
            "predict",
            sample("pmu").to_str().unwrap(),
            "--calibration",
            sample("calibration-server.json").to_str().unwrap(),
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("mean |error| at 8 threads"), "{text}");
    assert_eq!(text.matches('%').count(), 30 + 4, "{text}");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let empty = tempfile::tempdir().unwrap();
    let err = stderr_of_failure(
        lockbench().args(["correlate", empty.path().to_str().unwrap()]),
        2,
    );
    assert!(
        err.contains("no lockbench results") && err.lines().count() == 1,
        "{err}"
    );
    let err = stderr_of_failure(lockbench().args(["correlate", "/no/such/dir"]), 2);
    assert!(err.contains("not a directory"), "{err}");
    // Results without RMRs: say what to run.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("results.json"),
        r#"[{"lock": "ticket", "threads": 2, "rmr": null}]"#,
    )
    .unwrap();
    for cmd in ["correlate", "predict"] {
        let mut c = lockbench();
        c.args([cmd, dir.path().to_str().unwrap()]);
        if cmd == "predict" {
            c.args([
                "--calibration",
                sample("calibration-vm.json").to_str().unwrap(),
            ]);
        }
        let err = stderr_of_failure(&mut c, 2);
        assert!(err.contains("--rmr"), "{err}");
    }
    let err = stderr_of_failure(
        lockbench().args([
            "predict",
            sample("no-pmu").to_str().unwrap(),
            "--calibration",
            "/no/such/calibration.json",
        ]),
        2,
    );
    assert!(
        err.contains("lockbench calibrate") && err.lines().count() == 1,
        "{err}"
    );
    // A results file is not a calibration.
    let err = stderr_of_failure(
        lockbench().args([
            "predict",
            sample("no-pmu").to_str().unwrap(),
            "--calibration",
            dir.path().join("results.json").to_str().unwrap(),
        ]),
        2,
    );
    assert!(err.contains("not a lockbench calibration"), "{err}");
}

#[test]
fn calibrate_with_one_cpu_needs_two() {
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("cal.json");
    let err = stderr_of_failure(
        lockbench().args(["calibrate", "--cpus", "0", "--out", file.to_str().unwrap()]),
        2,
    );
    assert!(err.contains("needs two CPUs"), "{err}");
    assert!(!file.exists());
    // Restricted to one CPU by affinity, the default choice has one CPU too.
    if Path::new("/usr/bin/taskset").exists() {
        let out = std::process::Command::new("/usr/bin/taskset")
            .args(["-c", "0"])
            .arg(assert_cmd::cargo::cargo_bin("lockbench"))
            .args(["calibrate", "--out", file.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains("needs two CPUs") && err.contains("CPU 0"),
            "{err}"
        );
    }
}

#[test]
fn calibrate_saves_a_matrix_predict_can_read() {
    let allowed = std::thread::available_parallelism().map_or(1, |n| n.get());
    if allowed < 2 {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("cal.json");
    let printed = stdout_json(lockbench().args([
        "calibrate",
        "--lines",
        "8",
        "--rounds",
        "5",
        "--out",
        file.to_str().unwrap(),
        "--format",
        "json",
    ]));
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(printed, saved);
    let n = saved["cpus"].as_array().unwrap().len();
    assert!(n >= 2);
    for m in ["load_ns", "store_ns", "rmw_ns"] {
        let rows = saved[m].as_array().unwrap();
        assert_eq!(rows.len(), n);
        for row in rows {
            let row = row.as_array().unwrap();
            assert_eq!(row.len(), n);
            assert!(
                row.iter().all(|v| v.as_f64().unwrap() > 0.0),
                "{m}: {row:?}"
            );
        }
    }
    // predict accepts what calibrate saved.
    lockbench()
        .args([
            "predict",
            sample("no-pmu").to_str().unwrap(),
            "--calibration",
            file.to_str().unwrap(),
        ])
        .assert()
        .success();
}

#[test]
fn coherence_counters_record_their_raw_codes() {
    let out = tempfile::tempdir().unwrap();
    let results = stdout_json(lockbench().args([
        "run",
        "--lock",
        "ticket",
        "--threads",
        "1",
        "--passages",
        "200",
        "--warmup",
        "0",
        "--counters",
        "coherence,task-clock",
        "--format",
        "json",
        "--out",
        out.path().to_str().unwrap(),
    ]));
    let counters = results[0]["counters"].as_array().unwrap();
    let coherence: Vec<&Value> = counters
        .iter()
        .filter(|c| c["name"] != "task-clock")
        .collect();
    assert!(!coherence.is_empty());
    for c in &coherence {
        // Either the preset's raw code with its preset, or the generic cache-misses.
        if c["name"] == "cache-misses" {
            assert!(c["event"].is_null());
        } else {
            let event = c["event"].as_str().unwrap();
            assert!(event.starts_with('r'), "{c}");
            assert!(c["preset"].as_str().is_some(), "{c}");
        }
        // A value, or null with the reason: never a silent 0 for an unavailable event.
        match c["unavailable"].as_str() {
            Some(reason) => {
                assert!(c["per_passage"].is_null() && !reason.is_empty(), "{c}");
            }
            None => assert!(c["per_passage"].is_number(), "{c}"),
        }
    }
}
