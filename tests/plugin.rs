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
