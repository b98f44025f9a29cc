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

const TINY: &str =
    "lock = [\"ticket\"]\nthreads = [1, 2]\npassages = 50\nwarmup = \"1ms\"\nrepeat = 1\n";

/// A finished two-point sweep of [`TINY`] in a fresh directory: (tempdir, config, sweep dir).
fn finished_sweep() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("tiny.toml");
    fs::write(&config, TINY).unwrap();
    let dir = tmp.path().join("sweep");
    lockbench()
        .arg("sweep")
        .arg(&config)
        .arg("--out")
        .arg(&dir)
        .assert()
        .success();
    assert_eq!(done_points(&dir).len(), 2);
    (tmp, config, dir)
}

/// `sweep --resume DIR`: exit code and stderr.
fn resume(dir: &Path) -> (Option<i32>, String) {
    let out = lockbench()
        .args(["sweep", "--resume"])
        .arg(dir)
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!err.contains("panicked"), "{err}");
    (out.status.code(), err)
}

/// The results.json of `dir`, its lock and thread count per result.
fn saved(dir: &Path) -> Vec<(String, u64)> {
    let v: Value =
        serde_json::from_str(&fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    let mut r: Vec<(String, u64)> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["lock"].as_str().unwrap().into(),
                r["threads"].as_u64().unwrap(),
            )
        })
        .collect();
    r.sort();
    r
}

#[test]
fn a_damaged_journal_is_re_measured_where_damaged_and_never_mixed() {
    let want = vec![("ticket".to_string(), 1), ("ticket".to_string(), 2)];
    // Each damage of points.jsonl: the damaged point is measured again, once.
    type Damage = fn(&str) -> String;
    let damages: [(&str, Damage); 3] = [
        ("cut off", |t| t[..t.len() - 7].to_string()),
        ("readable lines", |t| {
            let mut l: Vec<&str> = t.lines().collect();
            let last_result = l.len() - 2;
            l[last_result] = "{\"point\":\"t=2\",\"result\":{\"lo";
            l.join("\n") + "\n"
        }),
        ("readable lines", |t| {
            // A done line without its results.
            let l: Vec<&str> = t
                .lines()
                .filter(|l| !l.contains("\"result\"") || l.contains("t=1"))
                .collect();
            l.join("\n") + "\n"
        }),
    ];
    for (what, damage) in damages {
        let (_tmp, _, dir) = finished_sweep();
        let journal = dir.join("points.jsonl");
        let text = fs::read_to_string(&journal).unwrap();
        fs::write(&journal, damage(&text)).unwrap();
        let (code, err) = resume(&dir);
        assert_eq!(code, Some(0), "{what}: {err}");
        assert!(
            err.contains("warning:") && err.contains(what),
            "{what}: {err}"
        );
        assert!(err.contains("1 done before"), "{what}: {err}");
        assert_eq!(done_points(&dir), ["t=1", "t=2"], "{what}");
        assert_eq!(saved(&dir), want, "{what}");
        assert_eq!(result_lines(&dir).len(), 2, "{what}: one result per point");
    }
}

#[test]
fn results_json_is_rebuilt_and_foreign_points_and_bad_manifests_are_refused() {
    let (_tmp, _, dir) = finished_sweep();
    let want = saved(&dir);
    for damage in ["", "[{\"lock\""] {
        fs::write(dir.join("results.json"), damage).unwrap();
        let (code, err) = resume(&dir);
        assert_eq!(code, Some(0), "{err}");
        assert_eq!(saved(&dir), want);
    }
    fs::remove_file(dir.join("results.json")).unwrap();
    assert_eq!(resume(&dir).0, Some(0));
    assert_eq!(saved(&dir), want);

    // A point the config does not have.
    let journal = dir.join("points.jsonl");
    let text = fs::read_to_string(&journal).unwrap();
    fs::write(&journal, format!("{text}{}", text.replace("t=2", "t=9"))).unwrap();
    let (code, err) = resume(&dir);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("t=9, which the sweep's config does not have"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    fs::write(&journal, text).unwrap();

    // A garbage manifest is damaged, not missing.
    fs::write(dir.join("manifest.json"), [0xff, 0xfe, 0x00]).unwrap();
    let (code, err) = resume(&dir);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("manifest.json is damaged"), "{err}");
}

#[test]
fn a_second_sweep_on_a_directory_in_use_is_refused_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("slow.toml");
    fs::write(
        &config,
        "lock = [\"ticket\"]\nthreads = [1, 2]\nduration = \"400ms\"\nwarmup = \"1ms\"\nrepeat = 2\n",
    )
    .unwrap();
    let dir = tmp.path().join("sweep");
    let mut first = Process::cargo_bin("lockbench")
        .unwrap()
        .arg("sweep")
        .arg(&config)
        .arg("--out")
        .arg(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = std::io::BufReader::new(first.stderr.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut reader, &mut line).unwrap();
    assert!(line.starts_with("sweep: 2 points"), "{line}");
    let started = Instant::now();
    let (code, err) = resume(&dir);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("is in use by another `lockbench sweep`"),
        "{err}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "refused at once"
    );
    // The same for a new sweep given the directory.
    let out = lockbench()
        .arg("sweep")
        .arg(&config)
        .arg("--out")
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(first.wait().unwrap().success());
    assert_eq!(done_points(&dir), ["t=1", "t=2"]);
    assert_eq!(saved(&dir).len(), 2, "no result twice");
}

#[test]
fn sweep_messages_name_the_users_file_and_progress_is_one_line_per_point() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("out");
    let o = out_dir.to_str().unwrap();
    for (text, expect) in [
        ("lock = [\"ticket\"]\nthreads = []\n", "`threads` = [] in"),
        ("lock = [\"ticket\"]\nmix = []\n", "`mix` = [] in"),
        ("lock = [\"ticket\"]\ncs = []\n", "`cs` = [] in"),
        (
            "lock = [\"ticket\"]\nthreads = [1,2,3,4,5,6,7,8,9,10]\nk = [1,2,3,4,5,6,7,8,9,10]\ncs-lines = [1,2,3,4,5,6,7,8,9,10]\nthink = [\"1ns\",\"2ns\",\"3ns\",\"4ns\",\"5ns\",\"6ns\",\"7ns\",\"8ns\",\"9ns\",\"10ns\",\"11ns\"]\n",
            "11000 points, at most 10000",
        ),
        ("lock = [\"ticket\"]\nthreads = [1]\nduration = \"2 fortnights\"\n", "user-sweep.toml: key `duration`"),
    ] {
        let config = tmp.path().join("user-sweep.toml");
        fs::write(&config, text).unwrap();
        let out = lockbench()
            .arg("sweep")
            .arg(&config)
            .args(["--out", o])
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{text}: {err}");
        assert!(err.contains(expect), "{text}: {err}");
        assert!(!err.contains("lockbench-sweep-"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!out_dir.exists(), "nothing written for {text}");
    }
    // An --out that cannot be a directory: exit 2, one line.
    let file = tmp.path().join("a-file");
    fs::write(&file, "x").unwrap();
    let config = tmp.path().join("tiny.toml");
    fs::write(&config, TINY).unwrap();
    let out = lockbench()
        .arg("sweep")
        .arg(&config)
        .arg("--out")
        .arg(file.join("sub"))
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("is not a directory"), "{err}");
    // Progress, stderr being a pipe: one line per point, with the time left.
    let out = lockbench()
        .arg("sweep")
        .arg(&config)
        .args(["--out", o])
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("done (t=")).collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].contains("point 1/2") && lines[0].contains("left"),
        "{err}"
    );
    assert!(!out_dir.join("partial").exists());
}
