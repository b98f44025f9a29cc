//! The examples of a lock of one's own, built from outside `src/` and run through the commands:
//! `anderson` (a lock written over the register abstraction, with its bound and a mutant, added
//! by its file and one registry line) and `fair_mutex` (a `lock_api` lock in one line).

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

/// Builds example `name` (into this build's target directory) and returns its path.
fn example(name: &str) -> PathBuf {
    let status = Command::new(env!("CARGO"))
        .args(["build", "--quiet", "--example", name])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("cargo runs");
    assert!(status.success(), "cargo build --example {name}");
    // This test runs from <target>/debug/deps; the example lands in <target>/debug/examples.
    let exe = std::env::current_exe().unwrap();
    exe.parent()
        .and_then(|deps| deps.parent())
        .unwrap()
        .join("examples")
        .join(name)
}

/// Runs `exe args`, asserts exit `code`, returns stdout.
fn run(exe: &PathBuf, args: &[&str], code: i32) -> String {
    let out = Command::new(exe).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

fn json(exe: &PathBuf, args: &[&str]) -> Value {
    serde_json::from_str(&run(exe, args, 0)).unwrap()
}

#[test]
fn a_lock_over_memory_gets_every_command_with_its_bound_and_mutant() {
    let exe = example("anderson");
    let list = json(&exe, &["list", "--format", "json"]);
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names.last(),
        Some(&"anderson"),
        "added after the built-in locks"
    );
    assert!(names.contains(&"ticket"));
    // list shows its bound and its mutant, from its file.
    let own = list.as_array().unwrap().last().unwrap();
    assert_eq!(own["bounds"][0]["model"], "cc", "{own}");
    assert_eq!(own["mutants"][0]["name"], "no-reset", "{own}");
    let detail = run(&exe, &["list", "--lock", "anderson"], 0);
    assert!(
        detail.contains("bound:") && detail.contains("no-reset"),
        "{detail}"
    );

    // Its mutant, described in its file, is run and killed.
    let mutants = json(
        &exe,
        &["verify", "--mutants", "anderson", "--format", "json"],
    );
    let mutants = mutants.as_array().unwrap();
    assert_eq!(mutants.len(), 1);
    assert_eq!(mutants[0]["mutant"], "no-reset");
    assert_eq!(mutants[0]["killed"], true);
    // The correct lock is not.
    run(
        &exe,
        &[
            "verify",
            "--lock",
            "anderson",
            "--threads",
            "3",
            "--schedules",
            "300",
        ],
        0,
    );

    // Its bound, from its file, is checked by rmr (CC) and absent where it claims none (DSM).
    let rmr = json(
        &exe,
        &[
            "rmr",
            "--lock",
            "anderson",
            "--threads",
            "3",
            "--model",
            "cc,dsm",
            "--format",
            "json",
        ],
    );
    let rmr = rmr.as_array().unwrap();
    assert_eq!(rmr[0]["bound"]["value"], 7, "{}", rmr[0]);
    assert_eq!(rmr[0]["within_bound"], true);
    assert!(rmr[1]["bound"].is_null(), "{}", rmr[1]);

    // Timed runs, saved, compared, swept and reported.
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for out in [&a, &b] {
        let runs = json(
            &exe,
            &[
                "run",
                "--lock",
                "anderson,ticket",
                "--threads",
                "2",
                "--passages",
                "300",
                "--rounds",
                "2",
                "--out",
                out.to_str().unwrap(),
                "--format",
                "json",
            ],
        );
        let runs = runs.as_array().unwrap();
        assert!(runs.iter().any(|r| r["lock"] == "anderson"));
        assert!(runs.iter().all(|r| r["safety_violations"] == 0));
    }
    let cmp = json(
        &exe,
        &[
            "compare",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--format",
            "json",
        ],
    );
    assert!(cmp["points"]
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p.to_string().contains("anderson")));
    let fid = json(
        &exe,
        &[
            "fidelity",
            "--lock",
            "anderson",
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
        ],
    );
    assert!(fid
        .as_array()
        .unwrap()
        .iter()
        .any(|p| p["lock"] == "anderson"));
    let config = dir.path().join("sweep.toml");
    std::fs::write(
        &config,
        "lock = [\"anderson\", \"ticket\"]\nthreads = [2]\npassages = 300\nwarmup = \"5ms\"\nrepeat = 2\n",
    )
    .unwrap();
    let swept = dir.path().join("swept");
    run(
        &exe,
        &[
            "sweep",
            config.to_str().unwrap(),
            "--out",
            swept.to_str().unwrap(),
        ],
        0,
    );
    run(&exe, &["report", swept.to_str().unwrap()], 0);
    let report = std::fs::read_to_string(swept.join("report.md")).unwrap();
    assert!(report.contains("anderson"));
}

#[test]
fn a_lock_api_mutex_joins_in_one_line() {
    let exe = example("fair_mutex");
    let runs = json(
        &exe,
        &[
            "run",
            "--lock",
            "fair-mutex",
            "--threads",
            "2",
            "--passages",
            "300",
            "--format",
            "json",
        ],
    );
    let fair: Vec<&Value> = runs
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["lock"] == "fair-mutex")
        .collect();
    assert_eq!(fair.len(), 1, "{runs}");
    assert_eq!(fair[0]["safety_violations"], 0);
    // Not written over the register abstraction: verify says so, exit 2.
    let out = Command::new(&exe)
        .args(["verify", "--lock", "fair-mutex"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
