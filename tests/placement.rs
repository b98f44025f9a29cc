//! Placement through the binary: `--cpus`, each thread's recorded place, `--mem-policy` and a
//! sweep's `cpus` key. (Each policy's CPU list on the server fixtures is asserted inside the crate,
//! `src/runner/placement_tests.rs`.)

mod common;
use common::{json_of, refused_with_out};

#[test]
fn run_records_each_threads_cpu_core_node_and_socket() {
    let v = json_of(&[
        "run",
        "--lock",
        "ticket",
        "--threads",
        "2",
        "--passages",
        "200",
        "--repeat",
        "1",
        "--warmup",
        "0s",
        "--pin",
        "compact",
        "--cpus",
        "0-1",
        "--mem-policy",
        "node:0",
        "--no-check",
        "--format",
        "json",
        "--out",
        tempfile::tempdir().unwrap().path().to_str().unwrap(),
    ]);
    let r = &v[0];
    assert_eq!(r["pin"], "compact");
    assert_eq!(r["cpus"], "0-1");
    assert_eq!(r["mem_policy"], "node:0");
    let pages = &r["mem_pages"];
    assert!(pages["bound"].as_u64().unwrap() >= 1, "{pages}");
    assert_eq!(pages["misplaced"], 0, "{pages}");
    assert!(pages["error"].is_null(), "{pages}");
    let threads = r["per_thread"].as_array().unwrap();
    assert_eq!(threads.len(), 2);
    for (i, t) in threads.iter().enumerate() {
        assert_eq!(t["cpu"], i, "{t}");
        assert!(t["core"].is_u64() && t["socket"].is_u64(), "{t}");
        assert!(t.get("node").is_some(), "{t}");
    }
}

#[test]
fn bad_cpus_and_memory_policies_are_one_line_refusals() {
    for (args, says) in [
        (vec!["--cpus", "0-99999"], "not one this process may use"),
        (vec!["--cpus", "3-1"], "--cpus"),
        (vec!["--mem-policy", "node:x"], "node:N"),
    ] {
        let mut all = vec![
            "run",
            "--lock",
            "ticket",
            "--threads",
            "1",
            "--passages",
            "10",
        ];
        all.extend(args);
        let err = refused_with_out(&all);
        assert!(err.contains(says), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}

#[test]
fn a_node_that_is_not_there_is_refused() {
    let err = refused_with_out(&[
        "run",
        "--lock",
        "ticket",
        "--threads",
        "1",
        "--passages",
        "10",
        "--mem-policy",
        "node:4095",
    ]);
    assert!(err.contains("no NUMA node 4095"), "{err}");
}

#[test]
fn a_sweep_takes_cpus_as_a_key_and_counts_cores_within_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("s.toml");
    std::fs::write(
        &config,
        "lock = [\"ticket\"]\nthreads = [\"cores\"]\ncpus = \"1\"\npin = \"scatter\"\npassages = 50\nwarmup = \"0s\"\nrepeat = 1\n",
    )
    .unwrap();
    let out = dir.path().join("sweep");
    common::lockbench()
        .args([
            "sweep",
            config.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .assert()
        .success();
    let mut seen = 0;
    for e in walk(&out) {
        if e.file_name().is_some_and(|n| n == "results.json") {
            for r in common::results(e.parent().unwrap()) {
                assert_eq!(r["threads"], 1, "\"cores\" within cpus = \"1\" is one core");
                assert_eq!(r["per_thread"][0]["cpu"], 1);
                assert_eq!(r["cpus"], "1");
                seen += 1;
            }
        }
    }
    assert!(seen > 0, "no results under {}", out.display());
}

#[test]
fn sweep_takes_cpus_on_the_command_line_over_the_config_and_refuses_as_run_does() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("s.toml");
    std::fs::write(
        &config,
        "# the file's own\nlock = [\"ticket\"]\nthreads = [\"cores\"]\ncpus = \"0\"\npin = \"compact\"\npassages = 50\nwarmup = \"0s\"\nrepeat = 1\n",
    )
    .unwrap();
    let out = dir.path().join("sweep");
    let (c, o) = (config.to_str().unwrap(), out.to_str().unwrap());
    common::lockbench()
        .args(["sweep", c, "--out", o, "--cpus", "1"])
        .assert()
        .success();
    let results = common::results(&out);
    assert!(!results.is_empty());
    for r in &results {
        assert_eq!(r["cpus"], "1", "--cpus wins over the file's cpus = \"0\"");
        assert_eq!(r["threads"], 1);
        assert_eq!(r["per_thread"][0]["cpu"], 1);
    }
    // The manifest keeps it, so a resume (nothing left to do here) runs where the start did.
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let kept: toml::Table = m["config"].as_str().unwrap().parse().unwrap();
    assert_eq!(kept["cpus"].as_str(), Some("1"));
    for (list, says) in [
        ("0-99999", "--cpus: CPU"),
        ("3-1", "--cpus"),
        ("", "--cpus"),
    ] {
        let fresh = dir.path().join(format!("refused-{}", list.len()));
        let assert = common::lockbench()
            .args(["sweep", c, "--out", fresh.to_str().unwrap(), "--cpus", list])
            .assert()
            .code(2);
        let err = String::from_utf8_lossy(&assert.get_output().stderr).into_owned();
        assert!(err.contains(says), "{list:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(!fresh.exists(), "a refused sweep wrote {}", fresh.display());
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
