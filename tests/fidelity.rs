//! The harness measured against itself: interleaved rounds with paired ratios, the figures
//! every run carries about its own observer effect, and `lockbench fidelity`.

use serde_json::Value;

mod common;
use common::lockbench;

#[test]
fn every_point_runs_once_per_round_and_ratios_are_paired_within_rounds() {
    let dir = tempfile::tempdir().unwrap();
    let out = lockbench()
        .args([
            "run",
            "--lock",
            "ticket,std-mutex,spin-ticket",
            "--threads",
            "1,2",
            // A passage count, not a duration: a FIFO lock on a loaded machine can go a whole
            // short window without a passage, and the test is about pairing, not speed.
            "--passages",
            "2000",
            "--warmup",
            "5ms",
            "--repeat",
            "4",
            "--format",
            "json",
            "--out",
        ])
        .arg(dir.path())
        .assert()
        .success()
        .get_output()
        .clone();
    let runs: Vec<Value> = serde_json::from_slice::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(runs.len(), 6);
    // The progress lines name each point once per round, in an order that changes.
    let err = String::from_utf8(out.stderr).unwrap();
    let mut orders: Vec<Vec<String>> = vec![Vec::new(); 4];
    for line in err.lines().filter(|l| l.starts_with('[')) {
        let round: usize = line
            .split(" round ")
            .nth(1)
            .and_then(|r| r.split(':').next())
            .and_then(|r| r.parse().ok())
            .unwrap_or_else(|| panic!("progress line {line:?}"));
        let point = line.split(": ").nth(1).unwrap().to_string();
        orders[round - 1].push(point);
    }
    for order in &orders {
        let mut sorted = order.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), 6, "each point once per round: {order:?}");
    }
    assert!(
        orders.windows(2).any(|w| w[0] != w[1]),
        "rounds are shuffled: {orders:?}"
    );
    for threads in [1, 2] {
        let at = |lock: &str| {
            runs.iter()
                .find(|r| r["lock"] == lock && r["threads"] == threads)
                .unwrap()
        };
        let base = at("ticket");
        assert!(base["throughput_vs_baseline"].is_null());
        let base_rounds = base["per_round"].as_array().unwrap();
        for lock in ["std-mutex", "spin-ticket"] {
            let r = at(lock);
            assert_eq!(r["repeat"], 4);
            let rounds = r["per_round"].as_array().unwrap();
            assert_eq!(rounds.len(), 4);
            let mut ratios = Vec::new();
            for (i, f) in rounds.iter().enumerate() {
                assert_eq!(f["round"], i);
                let b = base_rounds.iter().find(|b| b["round"] == i).unwrap();
                let want = f["throughput_per_sec"].as_f64().unwrap()
                    / b["throughput_per_sec"].as_f64().unwrap();
                let got = f["vs_baseline"].as_f64().unwrap();
                assert!((got - want).abs() <= 1e-9 * want, "{lock}: {got} vs {want}");
                ratios.push(got);
            }
            ratios.sort_by(|a, b| a.total_cmp(b));
            let median = (ratios[1] + ratios[2]) / 2.0;
            let reported = r["throughput_vs_baseline"].as_f64().unwrap();
            assert!((reported - median).abs() <= 1e-9 * median);
            // Four rounds: the interval is the range, at 87.5%.
            let i = &r["throughput_vs_baseline_interval"];
            assert_eq!(i["low"].as_f64().unwrap(), ratios[0]);
            assert_eq!(i["high"].as_f64().unwrap(), ratios[3]);
            assert!((i["level"].as_f64().unwrap() - 0.875).abs() < 1e-12);
            let differs = r["throughput_vs_baseline_differs"].as_bool().unwrap();
            assert_eq!(differs, !(ratios[0] <= 1.0 && 1.0 <= ratios[3]));
        }
    }
}

#[test]
fn every_run_reports_its_oracle_sampling_exit_latency_and_fidelity() {
    let dir = tempfile::tempdir().unwrap();
    let out = lockbench()
        .args([
            "run",
            "--lock",
            "ticket,glb",
            "--threads",
            "2",
            "--mix",
            "uniform:2",
            "--duration",
            "30ms",
            "--warmup",
            "5ms",
            "--repeat",
            "2",
            "--format",
            "json",
            "--out",
        ])
        .arg(dir.path())
        .assert()
        .success()
        .get_output()
        .clone();
    let runs: Value = serde_json::from_slice(&out.stdout).unwrap();
    for r in runs.as_array().unwrap() {
        let oracle = if r["problem"] == "gme" {
            "counting"
        } else {
            "sampled"
        };
        assert_eq!(r["oracle"], oracle, "{}", r["lock"]);
        assert_eq!(r["concurrency"].is_null(), oracle == "sampled");
        let sample = r["latency_sample"].as_u64().unwrap();
        assert!(sample >= 16, "sampled by default: 1 in {sample}");
        assert_eq!(
            r["latency_sample_adaptive"], true,
            "the default rate adapts"
        );
        let n = r["latency_ns"]["count"].as_u64().unwrap();
        assert!(n > 0);
        assert_eq!(
            r["exit_ns"]["count"], n,
            "exit latency shaped like entry latency"
        );
        assert!(r["exit_ns"]["p50"].as_f64().unwrap() > 0.0);
        let f = &r["harness_fidelity"];
        assert_eq!(f["lock"], "parking-lot-mutex");
        assert_eq!(f["threads"], 1);
        assert!(f["ratio"]["median"].as_f64().unwrap() > 0.0);
        assert!(r["harness_overhead_ns"].as_f64().unwrap().is_finite());
    }
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("fidelity (parking-lot-mutex at 1 thread"),
        "{err}"
    );
    // `--latency-sample 1` times every passage.
    let out = lockbench()
        .args([
            "run",
            "--lock",
            "ticket",
            "--threads",
            "1",
            "--passages",
            "3000",
            "--repeat",
            "1",
            "--latency-sample",
            "1",
            "--format",
            "json",
            "--out",
        ])
        .arg(dir.path())
        .assert()
        .success()
        .get_output()
        .clone();
    let runs: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(runs[0]["latency_ns"]["count"], 3000);
    assert_eq!(runs[0]["exit_ns"]["count"], 3000);
}

#[test]
fn fidelity_command_measures_harness_against_bare_loop() {
    let dir = tempfile::tempdir().unwrap();
    let out = lockbench()
        .args([
            "fidelity",
            "--lock",
            "ticket",
            "--threads",
            "1",
            "--rounds",
            "2",
            "--duration",
            "20ms",
            "--warmup",
            "5ms",
            "--format",
            "json",
            "--out",
        ])
        .arg(dir.path())
        .assert()
        .success()
        .get_output()
        .clone();
    let points: Value = serde_json::from_slice(&out.stdout).unwrap();
    let points = points.as_array().unwrap();
    assert_eq!(points.len(), 2, "noop, then ticket");
    assert_eq!(points[0]["lock"], "noop");
    assert!(points[0]["added_ns_per_passage"].as_f64().is_some());
    let t = &points[1];
    assert_eq!(
        (t["lock"].as_str(), t["threads"].as_u64()),
        (Some("ticket"), Some(1))
    );
    assert_eq!(t["ratios"].as_array().unwrap().len(), 2);
    assert!(t["bare_per_sec"].as_f64().unwrap() > 0.0);
    assert!(t["harness_per_sec"].as_f64().unwrap() > 0.0);
    assert_eq!(t["oracle"], "sampled");
    // Saved as measured.
    let run_dir = std::fs::read_dir(dir.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("fidelity.json")).unwrap())
            .unwrap();
    assert_eq!(saved.as_array().unwrap().len(), 2);
}

#[test]
fn fidelity_rejects_what_it_cannot_measure() {
    for (args, expect) in [
        (vec!["--lock", "glb"], "not a mutual-exclusion lock"),
        (vec!["--lock", "nosuch"], "unknown lock"),
        (vec!["--rounds", "0"], "at least 1"),
        (vec!["--threads", "64"], "physical cores"),
        (vec!["--duration", "0"], "longer than 0"),
    ] {
        let out = lockbench()
            .arg("fidelity")
            .args(&args)
            .assert()
            .code(2)
            .get_output()
            .clone();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(expect), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}
