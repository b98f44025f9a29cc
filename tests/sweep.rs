//! A tiny sweep run as a child process, interrupted with real signals (SIGINT, then SIGTERM
//! while resumed), resumed to the end, and rendered.

use std::fs;
use std::path::Path;
use std::process::{Command as Process, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;
use serde_json::Value;

mod common;
use common::lockbench;

const SWEEP: &str = r#"# A tiny sweep: 2 locks at 8 points (threads × mix × cs), 2 rounds each.
lock = ["ticket", "tas"]
threads = [1, 2]
mix = ["distinct", "single"]
cs = ["0", "100ns"]
passages = 400
warmup = "1ms"
repeat = 2
"#;

fn done_points(dir: &Path) -> Vec<String> {
    fs::read_to_string(dir.join("points.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l.get("done").is_some())
        .map(|l| l["point"].as_str().unwrap().to_string())
        .collect()
}

/// The result lines of `points.jsonl`, by point.
fn result_lines(dir: &Path) -> Vec<(String, String)> {
    fs::read_to_string(dir.join("points.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let v: Value = serde_json::from_str(l).ok()?;
            v.get("result")?;
            Some((v["point"].as_str()?.to_string(), l.to_string()))
        })
        .collect()
}

#[test]
fn an_interrupted_sweep_resumes_and_renders() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("tiny.toml");
    fs::write(&config, SWEEP).unwrap();
    let dir = tmp.path().join("sweep");

    // Start it, wait for the first point to finish, then interrupt it as Ctrl-C would.
    let mut child = Process::cargo_bin("lockbench")
        .unwrap()
        .arg("sweep")
        .arg(&config)
        .arg("--out")
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while done_points(&dir).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no point finished in 2 minutes"
        );
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the sweep ended before it was interrupted: {status}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: kill(2) on the child's pid, which we own and have not reaped.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let status = child.wait().unwrap();
    assert!(!status.success(), "an interrupted sweep does not succeed");
    let before = done_points(&dir);
    assert!(
        !before.is_empty() && before.len() < 8,
        "interrupted after {} of 8 points",
        before.len()
    );
    let kept = result_lines(&dir);
    assert_eq!(
        kept.len(),
        2 * before.len(),
        "each finished point holds both locks"
    );

    // A changed config is refused, and nothing is run.
    let changed = tmp.path().join("changed.toml");
    fs::write(&changed, SWEEP.replace("repeat = 2", "repeat = 3")).unwrap();
    let out = lockbench()
        .arg("sweep")
        .arg(&changed)
        .arg("--resume")
        .arg(&dir)
        .assert()
        .code(2)
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("changed since the sweep"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert_eq!(done_points(&dir), before);

    // Resumed, and stopped again, this time as a service manager would (SIGTERM).
    let mut child = Process::cargo_bin("lockbench")
        .unwrap()
        .args(["sweep", "--resume"])
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while done_points(&dir).len() == before.len() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "no progress in 2 minutes"
        );
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the resumed sweep ended before it was interrupted: {status}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGTERM) }, 0);
    assert!(!child.wait().unwrap().success());
    let middle = done_points(&dir);
    assert!(
        middle.len() > before.len() && middle.len() < 8,
        "{middle:?}"
    );
    assert_eq!(middle[..before.len()], before[..]);

    // Resuming (the config may be left out) finishes it without redoing the points done.
    lockbench()
        .args(["sweep", "--resume"])
        .arg(&dir)
        .assert()
        .success();
    let after = done_points(&dir);
    assert_eq!(after.len(), 8, "{after:?}");
    assert_eq!(after[..middle.len()], middle[..]);
    let lines = result_lines(&dir);
    assert_eq!(
        lines[..kept.len()],
        kept[..],
        "finished points are kept as they were"
    );
    let results: Vec<Value> =
        serde_json::from_str(&fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(results.len(), 16);
    let manifest: Value =
        serde_json::from_str(&fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert!(manifest["config_hash"]
        .as_str()
        .unwrap()
        .starts_with("fnv1a64:"));
    assert_eq!(manifest["config"], SWEEP);
    assert!(manifest["host"]["logical_cpus"].as_u64().unwrap() >= 1);
    assert!(!dir.join("partial").exists());

    // The report names every point and its SVGs parse.
    lockbench().arg("report").arg(&dir).assert().success();
    let md = fs::read_to_string(dir.join("report.md")).unwrap();
    for r in &results {
        let cs = if r["cs_ns"] == 0 { "0 ns" } else { "100 ns" };
        let row = format!(
            "| {} | mutex | {} | {} | {cs} |",
            r["lock"].as_str().unwrap(),
            r["threads"],
            r["mix"].as_str().unwrap()
        );
        assert!(md.contains(&row), "{row} missing from report.md");
    }
    let mut svgs = 0;
    for e in fs::read_dir(dir.join("plots")).unwrap() {
        let p = e.unwrap().path();
        let text = fs::read_to_string(&p).unwrap();
        let doc = roxmltree::Document::parse(&text)
            .unwrap_or_else(|e| panic!("{} is not XML: {e}", p.display()));
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        svgs += 1;
    }
    // Per cs and mix: throughput, latency at 1 and 2 threads (no fairness plot: a run of a
    // number of passages gives every thread the same work, docs/reports.md).
    assert_eq!(svgs, 4 * 3, "{svgs} plots");
}

#[test]
fn sweep_bad_input_is_one_line_and_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("bad.toml");
    fs::write(&config, "lock = [\"no-such-lock\"]\nthreads = [1, 2]\n").unwrap();
    let out_dir = tmp.path().join("out");
    let out_arg = out_dir.to_str().unwrap().to_string();
    for args in [
        vec![
            config.to_str().unwrap().to_string(),
            "--out".into(),
            out_arg.clone(),
        ],
        vec!["--resume".into(), tmp.path().to_str().unwrap().to_string()],
        vec!["--out".into(), out_arg.clone()],
    ] {
        let out = lockbench()
            .arg("sweep")
            .args(&args)
            .assert()
            .code(2)
            .get_output()
            .clone();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
    assert!(
        !tmp.path().join("out").exists(),
        "nothing is written on bad input"
    );
}
