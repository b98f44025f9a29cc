//! Robustness of every command but `run`: bad input is one line and exit 2, before anything
//! runs or is written; never a panic, an abort, a hang or a NaN printed as a figure.

use std::path::Path;

mod common;
use common::lockbench;

/// Runs `args` and asserts exit 2, nothing on stdout, one line on stderr containing
/// `expect`, and no panic; returns stderr.
fn refused(args: &[&str], expect: &str) -> String {
    let out = lockbench()
        .args(args)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(err.contains(expect), "{args:?}: want {expect:?} in {err}");
    assert_eq!(
        err.trim().lines().count(),
        1,
        "one line for {args:?}: {err}"
    );
    err
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn sizes_that_crashed_are_refused() {
    refused(
        &[
            "rmr",
            "--lock",
            "ticket",
            "--threads",
            "2",
            "--cs-steps",
            "100000000",
        ],
        "scheduling steps: at most",
    );
    refused(
        &["calibrate", "--lines", "18446744073709551615"],
        "--lines 18446744073709551615: at most",
    );
    refused(&["calibrate", "--lines", "100000000000"], "--lines");
    for cmd in ["mp-run", "sim"] {
        refused(
            &[cmd, "--algo", "ra1", "--n", "3", "--cd", "const:1e308"],
            "--cd: draws up to 1e308",
        );
        refused(
            &[cmd, "--algo", "ra1", "--n", "3", "--ncs", "uniform:0,1e300"],
            "--ncs",
        );
    }
}

#[test]
fn sizes_without_a_limit_are_refused() {
    refused(
        &["verify", "--lock", "ticket", "--threads", "99999"],
        "--threads 99999: between 1 and 64",
    );
    refused(
        &[
            "verify",
            "--lock",
            "ticket",
            "--schedules",
            "100000000000000000",
        ],
        "--schedules",
    );
    refused(
        &[
            "rmr",
            "--lock",
            "ticket",
            "--passages",
            "18446744073709551615",
        ],
        "scheduling steps",
    );
    refused(&["rmr", "--search", "99999999"], "--search 99999999");
    refused(
        &["sim", "--algo", "ra1", "--requests", "18446744073709551615"],
        "--requests",
    );
    refused(
        &["mp-run", "--algo", "ra1", "--requests", "1000000000000"],
        "--requests",
    );
    refused(
        &[
            "sim",
            "--algo",
            "ra1",
            "--n",
            "10000",
            "--requests",
            "1000000",
        ],
        "critical sections: at most",
    );
    refused(
        &["mp-run", "--algo", "ra1", "--requests", "0"],
        "--requests 0",
    );
    refused(
        &["sim", "--algo", "ra1", "--watchdog", "nan"],
        "--watchdog NaN",
    );
    refused(
        &["mp-run", "--algo", "ra1", "--watchdog", "inf"],
        "--watchdog inf",
    );
}

#[test]
fn a_paper_suite_file_is_checked_like_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let suite = |requests: &str, seeds: &str, ncs: &str, values: &str| {
        format!(
            "requests = {requests}\nseeds = {seeds}\n[base]\nn = 4\nm = 3\nncs = {ncs}\ncs = 20.0\ncd = 10.0\nhot = [20.0, 80.0]\n\
             [[figure]]\nname = \"6f\"\nvary = \"n\"\nvalues = {values}\ncompare = [\"token-gme\", \"ra2\"]\npaper = \"x\"\n"
        )
    };
    for (text, expect) in [
        (suite("10", "2", "-50.0", "[3]"), "ncs = -50"),
        (suite("0", "0", "50.0", "[3]"), "requests = 0"),
        (suite("10", "0", "50.0", "[3]"), "seeds = 0"),
        (suite("10", "2", "nan", "[3]"), "ncs = NaN"),
        (suite("10", "2", "1e308", "[3]"), "ncs = 1e308"),
        (suite("10", "2", "50.0", "[3, 1e15]"), "n = 1e15"),
        (suite("10", "2", "50.0", "[]"), "values is empty"),
        (
            suite("1000000", "2", "50.0", "[9000]"),
            "critical sections in one run",
        ),
    ] {
        let path = write(dir.path(), "s.toml", &text);
        let err = refused(&["sim", "--paper", &path], expect);
        assert!(err.contains(&path), "names the file: {err}");
    }
    // The same suite with good values runs.
    let path = write(dir.path(), "s.toml", &suite("5", "1", "50.0", "[3]"));
    lockbench()
        .args(["sim", "--paper", &path, "--format", "json"])
        .assert()
        .success();
}

#[test]
fn calibrate_checks_its_out_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap().to_string();
    refused(&["calibrate", "--out", &d], "is a directory");
    let file = write(dir.path(), "f", "x");
    refused(
        &["calibrate", "--out", &format!("{file}/cal.json")],
        "is not a directory",
    );
    let long = dir.path().join("n".repeat(300)).join("cal.json");
    refused(
        &["calibrate", "--out", long.to_str().unwrap()],
        "longer than 255 bytes",
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// Starts `lockbench args`, waits for `ready` on its stderr, sends `signal`, and returns the
/// exit code, stdout and stderr.
fn interrupted(args: &[&str], ready: &str, signal: i32) -> (Option<i32>, String, String) {
    use std::io::{BufRead, BufReader, Read};
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("lockbench"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stderr.take().unwrap());
    let mut err = String::new();
    while !err.contains(ready) {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 {
            break;
        }
        err.push_str(&line);
    }
    assert!(err.contains(ready), "{args:?}: {err}");
    // SAFETY: signalling a child this test started.
    unsafe { libc::kill(child.id() as i32, signal) };
    reader.read_to_string(&mut err).unwrap();
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let status = child.wait().unwrap();
    (status.code(), out, err)
}

#[test]
fn fidelity_refuses_before_creating_and_keeps_what_finished_on_a_signal() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("o");
    let o = out.to_str().unwrap();
    refused(
        &["fidelity", "--latency-sample", "0", "--out", o],
        "--latency-sample 0",
    );
    refused(
        &["fidelity", "--duration", "100000s", "--out", o],
        "--duration",
    );
    refused(&["fidelity", "--rounds", "0", "--out", o], "--rounds 0");
    assert!(!out.exists(), "nothing written for bad input");
    let args = [
        "fidelity",
        "--lock",
        "ticket,std-mutex",
        "--threads",
        "1",
        "--duration",
        "300ms",
        "--warmup",
        "1ms",
        "--rounds",
        "3",
        "--out",
        o,
    ];
    // Before any point finished: exit 128 + SIGINT, and no directory.
    let (code, _, err) = interrupted(&args, "noop at 1 thread", libc::SIGINT);
    assert_eq!(code, Some(130), "{err}");
    assert!(err.contains("interrupted: 0 of 2 points"), "{err}");
    assert!(
        !out.exists() || std::fs::read_dir(&out).unwrap().count() == 0,
        "no directory for a run that measured nothing"
    );
    // After one: it is printed and saved, exit 128 + SIGTERM.
    let (code, stdout, err) = interrupted(&args, "ticket t=1", libc::SIGTERM);
    assert_eq!(code, Some(143), "{err}");
    assert!(err.contains("interrupted: 1 of 2 points saved in"), "{err}");
    assert!(stdout.contains("ticket"), "{stdout}");
    let runs: Vec<_> = std::fs::read_dir(&out).unwrap().flatten().collect();
    assert_eq!(runs.len(), 1);
    let saved = std::fs::read_to_string(runs[0].path().join("fidelity.json")).unwrap();
    assert!(
        saved.contains("\"ticket\"") && !saved.contains("std-mutex"),
        "{saved}"
    );
}

/// Copies the fixture directory `rel` into `to`.
fn copy_fixture(rel: &str, to: &Path) {
    let from = common::fixture_path(rel);
    for e in walk(&from) {
        let target = to.join(e.strip_prefix(&from).unwrap());
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(&e, &target).unwrap();
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn damaged_results_are_named_by_correlate_and_predict() {
    let cal = common::fixture_path("rmr-sample/calibration-vm.json");
    let cal = cal.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("pmu");
    copy_fixture("rmr-sample/pmu", &root);
    let r = root.to_str().unwrap();
    // Sound, both read it.
    lockbench()
        .args(["correlate", r, "--no-svg"])
        .assert()
        .success();
    lockbench()
        .args(["predict", r, "--calibration", cal])
        .assert()
        .success();
    // One results.json cut short: named, exit 2, for both.
    let victim = root.join("run-20261120-102000/results.json");
    let text = std::fs::read_to_string(&victim).unwrap();
    std::fs::write(&victim, &text[..text.len() / 2]).unwrap();
    refused(
        &["correlate", r, "--no-svg"],
        "run-20261120-102000/results.json is damaged",
    );
    refused(
        &["predict", r, "--calibration", cal],
        "run-20261120-102000/results.json is damaged",
    );
    // A calibration with an absurd cost is refused, not turned into inf.
    let mut c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(cal).unwrap()).unwrap();
    c["load_ns"][0][1] = serde_json::json!(1e308);
    let bad_cal = write(dir.path(), "cal.json", &c.to_string());
    std::fs::write(&victim, &text).unwrap();
    refused(
        &["predict", r, "--calibration", &bad_cal],
        "not a usable calibration",
    );
    // An --svg that cannot be a directory.
    let file = write(dir.path(), "f", "x");
    refused(&["correlate", r, "--svg", &file], "--svg");
    refused(
        &["correlate", r, "--svg", &format!("{file}/plots")],
        "is not a directory",
    );
}

#[test]
fn report_and_compare_find_results_at_any_depth_and_name_damaged_ones() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("all");
    copy_fixture("compare/a", &root.join("sweep-x"));
    copy_fixture("compare/b", &root.join("group/run-y"));
    // The deeper run measured a lock the sweep did not: it must reach the report.
    let deep = root.join("group/run-y/results.json");
    let text = std::fs::read_to_string(&deep).unwrap();
    std::fs::write(&deep, text.replace("\"tas\"", "\"mcs\"")).unwrap();
    let r = root.to_str().unwrap();
    let out = lockbench()
        .args([
            "report",
            r,
            "--out",
            dir.path().join("rep").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let md = std::fs::read_to_string(dir.path().join("rep/report.md")).unwrap();
    assert!(
        md.contains("mcs"),
        "the run two levels down is in the report"
    );
    assert!(
        md.contains("tas"),
        "the sweep one level down is in the report"
    );
    // An unusable --out: one line, exit 2.
    let file = write(dir.path(), "f", "x");
    refused(&["report", r, "--out", &file], "is not a directory");
    // A directory where the report writes a file: exit 2 before reading anything, never 74
    // after rendering.
    let taken = dir.path().join("taken");
    std::fs::create_dir_all(taken.join("report.md")).unwrap();
    let err = refused(
        &["report", r, "--out", taken.to_str().unwrap()],
        "report.md is a directory, where the report writes its report.md",
    );
    assert!(err.contains("give another --out"), "{err}");
    // Nothing found says how deep it looked; a damaged file is named.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    refused(&["report", empty.to_str().unwrap()], "8 levels down");
    std::fs::write(root.join("group/run-y/results.json"), "[{\"lock\"").unwrap();
    refused(&["report", r], "run-y/results.json is damaged");
    refused(
        &[
            "compare",
            root.join("sweep-x").to_str().unwrap(),
            root.join("group").to_str().unwrap(),
        ],
        "run-y/results.json is damaged",
    );
}

#[test]
fn messages_that_took_several_lines_take_one() {
    refused(&[], "give a command: list, run,");
    let dir = tempfile::tempdir().unwrap();
    let bad = write(dir.path(), "bad.toml", "threads = [1,\nduration = \"1s\"\n");
    refused(&["run", "--config", &bad], "malformed config");
    refused(&["sweep", &bad], "malformed sweep config");
    // A name too long for the file system, refused before anything is measured or made.
    let long = dir.path().join("n".repeat(300));
    refused(
        &[
            "run",
            "--lock",
            "ticket",
            "--passages",
            "10",
            "--out",
            long.to_str().unwrap(),
        ],
        "longer than 255 bytes",
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}
