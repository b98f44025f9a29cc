//! The questionable cases of hostile input, as docs/commands.md decides them: a lock named
//! twice warns; options that would be ignored are refused; saved runs no lockbench could have
//! measured are refused by name; an empty sweep config warns; `report --calibration` is read
//! when given; SIGHUP keeps what finished.

use std::fs;
use std::process::{Command, Stdio};
use std::time::Duration;

mod common;
use common::lockbench;

fn one_line_refusal(args: &[&str], says: &str) {
    let err = common::stderr_of_failure(lockbench().args(args), 2);
    assert!(err.starts_with("error"), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    assert!(err.contains(says), "{args:?}: {err}");
}

#[test]
fn a_lock_named_twice_runs_once_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let out = lockbench()
        .args([
            "run",
            "--lock",
            "ticket,ticket",
            "--threads",
            "1",
            "--passages",
            "100",
        ])
        .args([
            "--repeat", "1", "--warmup", "1ms", "--format", "json", "--out",
        ])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--lock names ticket twice: it runs once"),
        "{err}"
    );
    let runs: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tickets = runs
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["lock"] == "ticket")
        .count();
    assert_eq!(tickets, 1);
}

#[test]
fn options_that_would_be_ignored_are_refused() {
    let paper = common::fixture_path("../../bench-configs/message-passing-paper.toml");
    let paper = paper.to_str().unwrap();
    one_line_refusal(&["sim", "--paper", paper, "--crash", "1@10"], "--crash");
    for (opt, v) in [("--topology", "ring"), ("--l", "1"), ("--k", "2")] {
        one_line_refusal(&["sim", "--algo", "token-gme", "--n", "3", opt, v], opt);
        one_line_refusal(&["mp-run", "--algo", "ra1", "--n", "3", opt, v], opt);
    }
    one_line_refusal(&["verify", "--lock", "ticket", "--k", "3"], "--k");
    // Where they bind, they are taken.
    lockbench()
        .args(["sim", "--algo", "lmutin", "--n", "4", "--requests", "3"])
        .args(["--topology", "ring", "--l", "1"])
        .assert()
        .success();
}

#[test]
fn saved_runs_no_lockbench_could_measure_are_refused_by_name() {
    let fixture = fs::read_to_string(common::fixture_path("compare/b/results.json")).unwrap();
    for (key, value) in [
        ("threads", serde_json::json!(0)),
        ("threads", serde_json::json!(1_000_000_000_000u64)),
        ("throughput_per_sec", serde_json::json!(-5.0)),
        ("schema_version", serde_json::json!(999)),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a");
        fs::create_dir(&dir).unwrap();
        let mut v: serde_json::Value = serde_json::from_str(&fixture).unwrap();
        v[0][key] = value.clone();
        fs::write(dir.join("results.json"), v.to_string()).unwrap();
        let d = dir.to_str().unwrap();
        let b = common::fixture_path("compare/b");
        let o = tmp.path().join("o");
        for args in [
            vec!["report", d, "--out", o.to_str().unwrap()],
            vec!["compare", d, b.to_str().unwrap()],
            vec!["correlate", d, "--no-svg"],
        ] {
            one_line_refusal(&args, "results.json is damaged");
        }
        assert!(!o.exists());
    }
}

#[test]
fn an_empty_sweep_config_warns_that_it_runs_the_defaults() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("empty.toml");
    fs::write(&config, "# nothing\n").unwrap();
    // The warning comes before anything is measured; the sweep is stopped there.
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("lockbench"))
        .arg("sweep")
        .arg(&config)
        .arg("--out")
        .arg(tmp.path().join("s"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut text = String::new();
    std::io::BufRead::read_line(&mut err, &mut text).unwrap();
    // SAFETY: kill sends a signal to the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    child.wait().unwrap();
    assert!(
        text.starts_with("warning: ") && text.contains("sets nothing"),
        "{text}"
    );
}

#[test]
fn report_reads_the_calibration_it_is_given() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("nosuch.json");
    one_line_refusal(
        &[
            "report",
            common::fixture_path("compare/a").to_str().unwrap(),
            "--out",
            tmp.path().join("o").to_str().unwrap(),
            "--calibration",
            missing.to_str().unwrap(),
        ],
        "nosuch.json",
    );
    assert!(!tmp.path().join("o").exists());
}

#[test]
fn sighup_keeps_what_finished() {
    let tmp = tempfile::tempdir().unwrap();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("lockbench"))
        .args([
            "run",
            "--lock",
            "ticket,tas",
            "--threads",
            "1",
            "--duration",
            "1s",
        ])
        .args(["--repeat", "3", "--out"])
        .arg(tmp.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait for the first result, then hang up.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let saved = loop {
        let found = fs::read_dir(tmp.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.path().join("results.json"))
            .find(|p| p.exists());
        if let Some(p) = found {
            break p;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no result within 60 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    // SAFETY: kill sends a signal to the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGHUP) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(129));
    let runs = common::read_json(&saved);
    assert!(!runs.as_array().unwrap().is_empty());
}
