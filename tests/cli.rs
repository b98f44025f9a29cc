//! The command-line contract: listing, the JSON results, saved files, bad input.

use std::path::Path;

use serde_json::Value;

mod common;
use common::{lockbench, refused_with_out, stdout_json};

const PAPER_LOCKS: [&str; 9] = [
    "lamport-bakery",
    "ub-bakery",
    "b-bakery",
    "bw-bakery",
    "burns-lamport",
    "glb",
    "bwb-gme",
    "naive-bwb-gme",
    "zehavi-kex",
];

const BASELINES: [&str; 9] = [
    "ticket",
    "spin-ticket",
    "parking-lot-mutex",
    "std-mutex",
    "parking-lot-rwlock",
    "spin-gme",
    "condvar-gme",
    "semaphore",
    "spin-semaphore",
];

#[test]
fn list_shows_every_lock() {
    let out = lockbench()
        .arg("list")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    for name in PAPER_LOCKS.iter().chain(&BASELINES) {
        assert!(
            text.lines().any(|l| l.starts_with(name)),
            "{name} missing from:\n{text}"
        );
    }
}

#[test]
fn list_json_has_metadata() {
    let out = lockbench()
        .args(["list", "--format", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let arr = v.as_array().unwrap();
    for name in PAPER_LOCKS.iter().chain(&BASELINES) {
        let e = arr
            .iter()
            .find(|e| e["name"] == *name)
            .unwrap_or_else(|| panic!("{name}"));
        for field in ["problem", "source", "fcfs", "bounded", "rmr", "safe"] {
            assert!(!e[field].is_null(), "{name} lacks {field}");
        }
    }
    let naive = arr.iter().find(|e| e["name"] == "naive-bwb-gme").unwrap();
    assert_eq!(naive["safe"], false);
    let rw = arr
        .iter()
        .find(|e| e["name"] == "parking-lot-rwlock")
        .unwrap();
    assert_eq!(rw["problem"], "gme");
}

fn run_json(dir: &Path, args: &[&str]) -> Vec<Value> {
    let v = stdout_json(
        lockbench()
            .args(["run", "--format", "json", "--out"])
            .arg(dir)
            .args(args),
    );
    v.as_array().unwrap().clone()
}

#[test]
fn json_contract() {
    let dir = tempfile::tempdir().unwrap();
    let runs = run_json(
        dir.path(),
        &[
            "--lock",
            "ticket,std-mutex",
            "--threads",
            "1,2",
            "--duration",
            "50ms",
            "--warmup",
            "10ms",
        ],
    );
    assert_eq!(runs.len(), 4, "2 locks x 2 thread counts");
    for r in &runs {
        for field in [
            "lock",
            "problem",
            "threads",
            "sessions",
            "k",
            "mix",
            "passages",
            "throughput_per_sec",
            "per_thread_passages",
            "fairness_jain",
            "safety_violations",
            "host",
        ] {
            assert!(!r[field].is_null(), "missing {field} in {r}");
        }
        assert!(
            r.get("rmr").is_some(),
            "rmr field present (null when not measured)"
        );
        for q in ["p50", "p90", "p99", "p999", "max", "mean"] {
            assert!(r["latency_ns"][q].as_f64().unwrap() > 0.0, "latency_ns.{q}");
        }
        assert!(r["passages"].as_u64().unwrap() > 0);
        assert_eq!(r["safety_violations"], 0);
        let threads = r["threads"].as_u64().unwrap() as usize;
        assert_eq!(r["per_thread_passages"].as_array().unwrap().len(), threads);
        assert_eq!(r["mix"], "distinct");
        // Counters: a figure per passage, or null with the reason it is unavailable.
        let counters = r["counters"].as_array().unwrap();
        assert!(!counters.is_empty());
        for c in counters {
            let has_value = !c["per_passage"].is_null();
            let has_reason = c["unavailable"].as_str().is_some_and(|s| !s.is_empty());
            assert!(
                has_value != has_reason,
                "counter {c}: a value or a reason, not both"
            );
        }
        let tc = counters
            .iter()
            .find(|c| c["name"] == "task-clock")
            .expect("task-clock counted");
        assert!(
            tc["per_passage"].as_f64().unwrap() > 0.0,
            "software counters work here"
        );
        assert!(r["host"]["logical_cpus"].as_u64().unwrap() >= 1);
    }
    let ticket2 = runs
        .iter()
        .find(|r| r["lock"] == "ticket" && r["threads"] == 2)
        .unwrap();
    assert!(
        ticket2["throughput_vs_baseline"].is_null(),
        "the baseline has no ratio to itself"
    );
    let std2 = runs
        .iter()
        .find(|r| r["lock"] == "std-mutex" && r["threads"] == 2)
        .unwrap();
    assert!(std2["throughput_vs_baseline"].as_f64().unwrap() > 0.0);
    // Saved as each run finished, plus the whole array.
    let saved: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(saved.len(), 1, "one directory per invocation");
    let run_dir = saved[0].as_ref().unwrap().path();
    let files: Vec<_> = std::fs::read_dir(&run_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(files.len(), 5, "4 runs and results.json: {files:?}");
    let all: Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("results.json")).unwrap())
            .unwrap();
    assert_eq!(all.as_array().unwrap().len(), 4);
}

#[test]
fn table_is_readable() {
    let dir = tempfile::tempdir().unwrap();
    let out = lockbench()
        .args([
            "run",
            "--lock",
            "ticket,parking-lot-mutex",
            "--threads",
            "2",
            "--passages",
            "2000",
            "--out",
        ])
        .arg(dir.path())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("throughput"), "{text}");
    assert!(text.contains("op/s"), "{text}");
    assert!(text.contains("parking-lot-mutex"), "{text}");
    assert!(text.contains("x"), "ratio column: {text}");
}

#[test]
fn oracle_catches_a_lock_that_admits_everyone() {
    let dir = tempfile::tempdir().unwrap();
    let out = lockbench()
        .args([
            "run",
            "--lock",
            "noop",
            "--threads",
            "2",
            "--duration",
            "300ms",
            "--cs",
            "1us",
            "--format",
            "json",
            "--out",
        ])
        .arg(dir.path())
        .assert()
        .code(1)
        .get_output()
        .clone();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let runs = v.as_array().unwrap();
    let noop = runs.iter().find(|r| r["lock"] == "noop").unwrap();
    assert!(noop["safety_violations"].as_u64().unwrap() > 0);
    let ticket = runs
        .iter()
        .find(|r| r["lock"] == "ticket")
        .expect("the baseline runs beside it");
    assert_eq!(ticket["safety_violations"], 0);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("noop") && err.contains("safety violations"),
        "{err}"
    );
}

#[test]
fn config_file_with_command_line_override() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.toml");
    std::fs::write(
        &cfg,
        "lock = [\"ticket\"]\nthreads = [1]\nmix = \"single\"\npassages = 500\nformat = \"csv\"\n",
    )
    .unwrap();
    let out = lockbench()
        .args(["run", "--config"])
        .arg(&cfg)
        .args(["--threads", "2", "--out"])
        .arg(dir.path().join("o"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let rows: Vec<&str> = text.lines().collect();
    assert_eq!(rows.len(), 2, "header and one run: {text}");
    assert!(
        rows[1].starts_with("ticket,mutex,baseline,2,1,1,single,"),
        "{text}"
    );
}

fn bad(args: &[&str], expect: &str) {
    let err = refused_with_out(args);
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(!lines.is_empty(), "no message for {args:?}");
    assert!(
        err.to_lowercase().contains(&expect.to_lowercase()),
        "{args:?}: {err}"
    );
}

#[test]
fn bad_input_is_one_clear_line_and_exit_2() {
    bad(&["run", "--lock", "nosuch"], "unknown lock");
    bad(&["run", "--lock", "ticket", "--threads", "0"], "--threads");
    bad(&["run", "--lock", "semaphore", "--k", "0"], "--k");
    bad(&["run", "--lock", "glb", "--mix", "uniform:0"], "zero");
    bad(&["run", "--lock", "glb", "--mix", "hot:4"], "--mix");
    bad(
        &["run", "--lock", "ticket", "--duration", "fast"],
        "--duration",
    );
    bad(&["run", "--lock", "ticket", "--cs=-5us"], "--cs");
    bad(
        &[
            "run",
            "--lock",
            "ticket",
            "--config",
            "/nonexistent/lockbench.toml",
        ],
        "cannot read config",
    );
    bad(
        &["run", "--lock", "semaphore", "--mix", "uniform:4"],
        "k-exclusion",
    );
    bad(
        &["run", "--lock", "ticket", "--baseline", "nosuch"],
        "unknown baseline",
    );
    bad(
        &["run", "--lock", "ticket", "--latency-sample", "0"],
        "at least 1",
    );
    bad(
        &["run", "--lock", "ticket", "--counters", "cycles,bogus"],
        "bogus",
    );
    bad(
        &["run", "--lock", "ticket", "--threads", "512"],
        "--oversubscribe",
    );
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("bad.toml");
    std::fs::write(&cfg, "threads = [1,\nlock = 3\n").unwrap();
    bad(
        &["run", "--config", cfg.to_str().unwrap()],
        "malformed config",
    );
    std::fs::write(&cfg, "thread = [1]\n").unwrap();
    bad(
        &["run", "--config", cfg.to_str().unwrap()],
        "malformed config",
    );
}

#[test]
fn k_at_least_threads_warns_but_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = lockbench()
        .args([
            "run",
            "--lock",
            "semaphore",
            "--threads",
            "2",
            "--k",
            "2",
            "--passages",
            "200",
            "--out",
        ])
        .arg(dir.path())
        .assert()
        .success()
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("warning: k = 2"), "{err}");
}

#[test]
fn oversubscribed_runs_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = lockbench()
        .args([
            "run",
            "--lock",
            "ticket",
            "--threads",
            "4",
            "--oversubscribe",
            "--passages",
            "300",
            "--format",
            "json",
            "--out",
        ])
        .arg(dir.path())
        .assert()
        .success()
        .get_output()
        .clone();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["oversubscribed"], true);
    assert_eq!(v[0]["wait_policy"], "spin-then-yield");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("oversubscribed"), "{err}");
}

/// Traces `locks` at 2 threads and asserts each observed its doorway on every passage and shows
/// no FCFS violation.
fn assert_fcfs_in_traces(locks: &str, passages: u64) {
    let dir = tempfile::tempdir().unwrap();
    let per_thread = passages.to_string();
    let args = [
        "--lock",
        locks,
        "--threads",
        "2",
        "--mix",
        "uniform:3",
        "--trace",
        "--passages",
        &per_thread,
        "--repeat",
        "1",
    ];
    for r in &run_json(dir.path(), &args) {
        let t = &r["trace"];
        assert_eq!(t["passages"], 2 * passages, "{}", r["lock"]);
        assert_eq!(t["doorway_observed"], true, "{}", r["lock"]);
        assert_eq!(
            t["fcfs_violations"], 0,
            "{}: {}",
            r["lock"], t["fcfs_example"]
        );
        assert_eq!(r["safety_violations"], 0, "{}", r["lock"]);
    }
}

#[test]
fn fcfs_locks_show_no_fcfs_violation_in_traces() {
    assert_fcfs_in_traces("ticket,condvar-gme", 20000);
}

#[test]
fn paper_fcfs_algorithms_show_no_fcfs_violation() {
    assert_fcfs_in_traces(
        "lamport-bakery,ub-bakery,b-bakery,bw-bakery,glb,bwb-gme",
        5000,
    );
}

#[test]
fn verify_finds_nothing_in_a_correct_lock_and_exits_0() {
    let out = lockbench()
        .args([
            "verify",
            "--lock",
            "bwb-gme",
            "--threads",
            "3",
            "--schedules",
            "300",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("300 schedules") && text.contains("no violation found"),
        "{text}"
    );
}

#[test]
fn verify_catches_the_naive_generalization_with_a_replayable_schedule() {
    let out = lockbench()
        .args([
            "verify",
            "--lock",
            "naive-bwb-gme",
            "--threads",
            "3",
            "--schedules",
            "4000",
            "--json",
        ])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["outcome"]["result"], "violation");
    let schedule = v["outcome"]["schedule"].as_str().unwrap().to_string();
    let out = lockbench()
        .args([
            "verify",
            "--lock",
            "naive-bwb-gme",
            "--threads",
            "3",
            "--replay",
            &schedule,
        ])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("VIOLATION") && text.contains("--replay"),
        "{text}"
    );
}

#[test]
fn verify_bad_input_exits_2() {
    for (args, expect) in [
        (vec!["verify", "--lock", "nosuch"], "unknown lock"),
        (
            vec!["verify", "--lock", "std-mutex"],
            "register abstraction",
        ),
        (
            vec!["verify", "--lock", "ticket", "--threads", "0"],
            "--threads",
        ),
        (
            vec!["verify", "--lock", "ticket", "--replay", "not-a-schedule"],
            "malformed --replay",
        ),
    ] {
        let out = lockbench()
            .args(&args)
            .assert()
            .code(2)
            .get_output()
            .stderr
            .clone();
        let err = String::from_utf8(out).unwrap();
        assert!(err.contains(expect), "{args:?}: {err}");
    }
}
