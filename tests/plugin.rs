//! C plug-ins (`--lock plugin:PATH`): the examples built by scripts/build-c-examples.sh run
//! through the oracle and every figure of `run`; the broken one is caught; every bad plug-in
//! is refused in one line, exit 2, before anything runs; `list --plugin`; `verify` and `rmr`
//! say what they need.

use std::path::PathBuf;
use std::process::Command as Process;
use std::sync::OnceLock;

mod common;
use common::{lockbench, refused_with_out, results, stderr_of_failure, stdout_json};

/// Builds the examples and the bad plug-ins (once per test binary) and returns
/// `plugin:…/lib<name>.so`.
fn plugin(name: &str) -> String {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let out = Process::new("bash")
            .arg(root.join("scripts/build-c-examples.sh"))
            .arg("--tests")
            .output()
            .expect("bash runs");
        assert!(
            out.status.success(),
            "build-c-examples.sh failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        root.join(String::from_utf8(out.stdout).unwrap().trim())
    });
    format!("plugin:{}", dir.join(format!("lib{name}.so")).display())
}

#[test]
fn the_c_mcs_lock_runs_through_the_oracle_and_every_figure_and_is_saved() {
    let dir = tempfile::tempdir().unwrap();
    let lock = plugin("mcs");
    let runs = stdout_json(lockbench().args([
        "run",
        "--lock",
        &lock,
        "--threads",
        "1,2",
        "--passages",
        "3000",
        "--oracle",
        "self-check",
        "--rounds",
        "2",
        "--format",
        "json",
        "--out",
        dir.path().to_str().unwrap(),
    ]));
    let runs = runs.as_array().unwrap();
    let mcs: Vec<_> = runs.iter().filter(|r| r["lock"] == "c-mcs").collect();
    assert_eq!(mcs.len(), 2, "{runs:?}");
    for r in &mcs {
        assert_eq!(r["problem"], "mutex");
        assert_eq!(r["safety_violations"], 0, "{r}");
        assert_eq!(r["safety_checked"], true, "{r}");
        let t = r["threads"].as_u64().unwrap() as usize;
        let per: Vec<u64> = r["per_thread_passages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!(
            per,
            vec![3000; t],
            "every thread's passages (the median round)"
        );
        assert!(r["throughput_per_sec"].as_f64().unwrap() > 0.0);
        assert!(r["latency_ns"]["p50"].is_number(), "{r}");
        assert!(r["fairness_jain"].as_f64().unwrap() > 0.0);
        // The baseline ran beside it, so it has a ratio paired by round.
        assert_eq!(r["baseline"], "ticket", "{r}");
        assert!(r["throughput_vs_baseline"].as_f64().unwrap() > 0.0, "{r}");
        assert_eq!(r["per_round"].as_array().unwrap().len(), 2, "{r}");
    }
    let store = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("results.json").exists())
        .expect("a saved run");
    let saved = results(&store);
    assert!(saved.iter().any(|r| r["lock"] == "c-mcs"));
}

#[test]
fn the_broken_c_lock_is_caught_by_the_oracle() {
    let dir = tempfile::tempdir().unwrap();
    let out = lockbench()
        .args(["run", "--lock", &plugin("broken_tas"), "--threads", "2"])
        .args([
            "--passages",
            "20000",
            "--oracle",
            "self-check",
            "--rounds",
            "2",
        ])
        .args(["--out", dir.path().to_str().unwrap()])
        .assert()
        .code(1)
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    let line = err
        .lines()
        .find(|l| l.starts_with("error: c-broken-tas"))
        .unwrap_or_else(|| panic!("no error line naming the lock: {err}"));
    assert!(line.contains("safety violations"), "{line}");
    assert!(!err.contains("panicked"), "{err}");
}

/// A refusal: exit 2, one line, naming the file and the fault.
fn refused(lock: &str, fault: &str) {
    let err = refused_with_out(&["run", "--lock", lock, "--threads", "1", "--passages", "10"]);
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    let path = lock.strip_prefix("plugin:").unwrap();
    assert!(err.contains(path), "names the file: {err}");
    assert!(err.contains(fault), "says {fault:?}: {err}");
}

#[test]
fn a_file_that_is_not_a_shared_object_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("libnotes.so");
    std::fs::write(&text, "not an ELF file\n").unwrap();
    refused(
        &format!("plugin:{}", text.display()),
        "not a loadable shared object",
    );
    refused(
        &format!("plugin:{}", dir.path().join("libmissing.so").display()),
        "no such file",
    );
}

#[test]
fn a_missing_symbol_is_refused() {
    refused(&plugin("bad_symbol"), "no symbol `lockbench_plugin`");
}

#[test]
fn a_wrong_abi_version_is_refused() {
    refused(&plugin("bad_version"), "built for ABI version 99");
}

#[test]
fn an_unknown_problem_kind_is_refused() {
    refused(&plugin("bad_problem"), "unknown problem kind 7");
}

#[test]
fn a_name_clashing_with_a_built_in_lock_is_refused() {
    refused(
        &plugin("bad_clash"),
        "\"ticket\", the name of a built-in lock",
    );
}

#[test]
fn an_init_that_fails_is_refused_with_its_reason() {
    refused(&plugin("bad_init"), "needs a NUMA node per process");
}

#[test]
fn init_refusing_a_run_size_fails_that_run_with_its_reason() {
    // c-small-tas takes at most 2 processes: 1 thread runs, 3 are refused by its init.
    let dir = tempfile::tempdir().unwrap();
    let out = lockbench()
        .args(["run", "--lock", &plugin("small_tas"), "--threads", "1,3"])
        .args(["--passages", "200", "--oversubscribe", "--rounds", "1"])
        .args(["--out", dir.path().to_str().unwrap()])
        .assert()
        .code(1)
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("at most 2 processes, not 3"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn verify_and_rmr_say_a_plug_in_needs_the_register_abstraction() {
    let lock = plugin("mcs");
    for args in [
        vec!["verify", "--lock", &lock, "--threads", "2"],
        vec!["rmr", "--lock", &lock],
    ] {
        let err = stderr_of_failure(lockbench().args(&args), 2);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains("register abstraction"), "{err}");
    }
}

#[test]
fn list_plugin_shows_what_it_offers() {
    let path = plugin("mcs");
    let path = path.strip_prefix("plugin:").unwrap();
    let out = lockbench()
        .args(["list", "--plugin", path])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("c-mcs (mutex)"), "{text}");
    assert!(
        text.contains("FCFS yes") && text.contains("ABI version 1"),
        "{text}"
    );
    let json = stdout_json(lockbench().args(["list", "--plugin", path, "--format", "json"]));
    assert_eq!(json[0]["name"], "c-mcs");
    assert_eq!(json[0]["safe"], true);
    let bad = plugin("bad_version");
    let err = stderr_of_failure(
        lockbench().args(["list", "--plugin", bad.strip_prefix("plugin:").unwrap()]),
        2,
    );
    assert!(err.contains("ABI version 99"), "{err}");
}

#[test]
fn fidelity_sets_each_plug_in_beside_its_compiled_twin() {
    let dir = tempfile::tempdir().unwrap();
    let pairs = format!("{}=ticket,{}=noop", plugin("ticket"), plugin("noop"));
    let points = stdout_json(lockbench().args([
        "fidelity",
        "--boundary",
        &pairs,
        "--rounds",
        "3",
        "--duration",
        "20ms",
        "--warmup",
        "5ms",
        "--format",
        "json",
        "--out",
        dir.path().to_str().unwrap(),
    ]));
    let points = points.as_array().unwrap();
    let names: Vec<(&str, &str)> = points
        .iter()
        .map(|p| {
            (
                p["plugin"].as_str().unwrap(),
                p["compiled"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(names, [("c-ticket", "ticket"), ("c-noop", "noop")]);
    for p in points {
        assert_eq!(p["rounds"], 3);
        let rounds: Vec<f64> = p["per_round_ns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(rounds.len(), 3);
        let (c, g) = (
            p["compiled_ns_per_passage"].as_f64().unwrap(),
            p["plugin_ns_per_passage"].as_f64().unwrap(),
        );
        assert!(c > 0.0 && g > 0.0, "{p}");
        // The boundary is the paired difference of the two loops' times.
        let median = p["boundary_ns_per_passage"]["median"].as_f64().unwrap();
        let (lo, hi) = rounds
            .iter()
            .fold((f64::MAX, f64::MIN), |(l, h), &x| (l.min(x), h.max(x)));
        assert!(lo <= median && median <= hi, "{p}");
        assert!(
            (p["range_ns"].as_f64().unwrap() - (hi - lo)).abs() < 1e-9,
            "{p}"
        );
    }
    let saved = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path().join("boundary.json"))
        .find(|p| p.exists())
        .expect("boundary.json saved");
    assert_eq!(common::read_json(&saved).as_array().unwrap().len(), 2);
}

#[test]
fn fidelity_boundary_refuses_a_pair_that_is_not_plug_in_and_built_in() {
    let err = refused_with_out(&["fidelity", "--boundary", "ticket=ticket"]);
    assert!(err.contains("--boundary ticket=ticket"), "{err}");
    let bad = format!("{}=ticket", plugin("bad_version"));
    let err = refused_with_out(&["fidelity", "--boundary", &bad]);
    assert!(err.contains("ABI version 99"), "{err}");
}

/// The `point` of every line of `points.jsonl` in `dir` that marks a point done.
fn done_points(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("points.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|l| l.get("done").is_some())
        .map(|l| l["point"].as_str().unwrap().to_string())
        .collect()
}

/// (lock, threads) of every result in `dir`'s results.json, sorted.
fn result_keys(dir: &std::path::Path) -> Vec<(String, u64)> {
    let mut keys: Vec<(String, u64)> = results(dir)
        .iter()
        .map(|r| {
            (
                r["lock"].as_str().unwrap().to_string(),
                r["threads"].as_u64().unwrap(),
            )
        })
        .collect();
    keys.sort();
    keys
}

fn sweep_config(locks: &[&str]) -> String {
    let locks: Vec<String> = locks.iter().map(|l| format!("{l:?}")).collect();
    format!(
        "lock = [{}]\nthreads = [1, 2]\npassages = 300\nwarmup = \"1ms\"\nrepeat = 1\noversubscribe = true\n",
        locks.join(", ")
    )
}

#[test]
fn a_sweep_report_compare_and_saved_baseline_take_a_plug_in() {
    let tmp = tempfile::tempdir().unwrap();
    let mcs = plugin("mcs");
    let config = tmp.path().join("mcs.toml");
    std::fs::write(&config, sweep_config(&["ticket", &mcs])).unwrap();
    let dir = tmp.path().join("sweep");
    lockbench()
        .current_dir(tmp.path())
        .arg("sweep")
        .arg(&config)
        .arg("--out")
        .arg(&dir)
        .assert()
        .success();
    let want: Vec<(String, u64)> = [("c-mcs", 1), ("c-mcs", 2), ("ticket", 1), ("ticket", 2)]
        .iter()
        .map(|(l, t)| (l.to_string(), *t))
        .collect();
    assert_eq!(result_keys(&dir), want);
    lockbench()
        .current_dir(tmp.path())
        .arg("report")
        .arg(&dir)
        .assert()
        .success();
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    assert!(md.contains("c-mcs"), "the report shows the plug-in");
    // A saved baseline of the plug-in, compared with the sweep.
    lockbench()
        .current_dir(tmp.path())
        .args([
            "run",
            "--lock",
            &mcs,
            "--threads",
            "1,2",
            "--passages",
            "300",
        ])
        .args([
            "--rounds",
            "1",
            "--oversubscribe",
            "--save-as",
            "c-mcs-base",
        ])
        .assert()
        .success();
    let out = lockbench()
        .current_dir(tmp.path())
        .args(["compare", "c-mcs-base"])
        .arg(&dir)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("c-mcs"), "{text}");
}

#[test]
fn a_lock_that_crashes_in_enter_keeps_the_finished_points_and_the_sweep_resumes_without_it() {
    let tmp = tempfile::tempdir().unwrap();
    let crash = plugin("crash");
    let config = tmp.path().join("crash.toml");
    std::fs::write(&config, sweep_config(&["ticket", &crash])).unwrap();
    let dir = tmp.path().join("sweep");
    // c-crash works at 1 thread and dereferences NULL in enter at 2: the process dies at the
    // second point (the working directory is the temporary one, for any core file).
    let out = lockbench()
        .current_dir(tmp.path())
        .arg("sweep")
        .arg(&config)
        .arg("--out")
        .arg(&dir)
        .assert()
        .failure()
        .get_output()
        .clone();
    assert_eq!(out.status.code(), None, "killed by a signal: {out:?}");
    assert_eq!(done_points(&dir), ["t=1"]);
    let at_one: Vec<(String, u64)> = vec![("c-crash".into(), 1), ("ticket".into(), 1)];
    assert_eq!(result_keys(&dir), at_one, "the finished point is kept");
    // Resumed with the config that drops the crashing lock: the points to go run without it.
    let without = tmp.path().join("without.toml");
    std::fs::write(&without, sweep_config(&["ticket"])).unwrap();
    lockbench()
        .current_dir(tmp.path())
        .arg("sweep")
        .arg(&without)
        .arg("--resume")
        .arg(&dir)
        .assert()
        .success();
    assert_eq!(done_points(&dir), ["t=1", "t=2"]);
    let all: Vec<(String, u64)> = vec![
        ("c-crash".into(), 1),
        ("ticket".into(), 1),
        ("ticket".into(), 2),
    ];
    assert_eq!(result_keys(&dir), all);
    // A config that changes more than its locks is still refused.
    let other = tmp.path().join("other.toml");
    std::fs::write(&other, sweep_config(&["ticket"]).replace("300", "400")).unwrap();
    let err = stderr_of_failure(
        lockbench()
            .current_dir(tmp.path())
            .arg("sweep")
            .arg(&other)
            .arg("--resume")
            .arg(&dir),
        2,
    );
    assert!(err.contains("changed since the sweep"), "{err}");
}

#[test]
fn a_plug_in_that_never_lets_go_is_stopped_by_the_watchdog_through_its_abort_flag() {
    // c-stuck's exit forgets to release: the second entry waits until the watchdog raises
    // the abort flag, then gives up, and the run is reported stalled (exit 1), not hung.
    let dir = tempfile::tempdir().unwrap();
    let out = lockbench()
        .args(["run", "--lock", &plugin("stuck"), "--threads", "1"])
        .args([
            "--passages",
            "100",
            "--stall-timeout",
            "300ms",
            "--rounds",
            "1",
        ])
        .args(["--out", dir.path().to_str().unwrap()])
        .timeout(std::time::Duration::from_secs(120))
        .assert()
        .code(1)
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.lines()
            .any(|l| l.starts_with("error: c-stuck") && l.contains("stalled")),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_plug_in_s_problem_kind_reaches_the_oracle_and_the_results() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    for (name, lock, args, problem) in [
        ("gme_mutex", "c-gme-mutex", ["--mix", "uniform:2"], "gme"),
        ("kex_mutex", "c-kex-mutex", ["--k", "1"], "k-exclusion"),
    ] {
        let runs = stdout_json(
            lockbench()
                .args(["run", "--lock", &plugin(name), "--threads", "2"])
                .args(args)
                .args(["--passages", "500", "--rounds", "1", "--format", "json"])
                .args(["--out", out]),
        );
        let r = runs
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["lock"] == lock)
            .unwrap_or_else(|| panic!("{lock} in {runs}"))
            .clone();
        assert_eq!(r["problem"], problem, "{r}");
        assert_eq!(r["safety_violations"], 0, "{r}");
        assert_eq!(r["safety_checked"], true, "{r}");
    }
}
