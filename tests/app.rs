//! `lockbench app`: a program under several locks in rounds, results in `run`'s contract, a
//! failure under one lock kept to that lock, bad input refused in one line; and the real
//! programs of scripts/install-apps.sh at tiny sizes (each skips, saying so, when missing).

mod common;
#[path = "interposer/mod.rs"]
mod interposer;

use std::path::{Path, PathBuf};

use common::lockbench;
use interposer::{fresh, interposer as so, locks_program, scratch};
use serde_json::Value;

/// `lockbench app ARGS -- PROGRAM…` with results under a fresh directory; (exit code, stdout,
/// stderr).
fn app(args: &[&str], program: &[&str]) -> (Option<i32>, String, String) {
    so();
    let out = fresh("app");
    let o = lockbench()
        .arg("app")
        .args(args)
        .arg("--out")
        .arg(&out)
        .arg("--")
        .args(program)
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn by_lock<'a>(runs: &'a Value, lock: &str) -> &'a Value {
    runs.as_array()
        .unwrap()
        .iter()
        .find(|r| r["lock"] == lock)
        .unwrap_or_else(|| panic!("no result for {lock}"))
}

/// An executable shell script `name` in the scratch directory.
fn executable(name: &str, text: &str) -> PathBuf {
    let script = scratch().join(name);
    std::fs::write(&script, text).unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    script
}

/// `program` under `locks`, one round each: it exits 0, and under every lock it was safe and
/// measured something (`what` names the program in a failure).
fn runs_safely_under(locks: &str, program: &[&str], what: &str) {
    let (code, out, err) = app(
        &[
            "--lock",
            locks,
            "--repeat",
            "1",
            "--format",
            "json",
            "--timeout",
            "120s",
        ],
        program,
    );
    assert_eq!(code, Some(0), "{what}: {err}");
    let runs: Value = serde_json::from_str(&out).unwrap();
    for r in runs.as_array().unwrap() {
        assert_eq!(r["safety_violations"], 0, "{what}: {}", r["lock"]);
        assert!(
            !r["nothing_measured"].as_bool().unwrap(),
            "{what}: {}: {err}",
            r["lock"]
        );
    }
}

#[test]
fn a_program_runs_under_each_lock_with_ratios_to_pthread() {
    let Some(prog) = locks_program() else { return };
    let p = prog.to_str().unwrap();
    let (code, out, err) = app(
        &[
            "--lock",
            "ticket,glb,noop",
            "--repeat",
            "3",
            "--format",
            "json",
        ],
        // Threads meet at the lock on every passage (tests/c/locks.c), so the negative
        // control below is caught however the threads are scheduled.
        &[p, "overlap", "4", "300"],
    );
    assert_eq!(code, Some(0), "{err}");
    let runs: Value = serde_json::from_str(&out).unwrap();
    let names: Vec<&str> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["lock"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["uninterposed", "pthread", "ticket", "glb", "noop"]);
    for lock in ["ticket", "glb"] {
        let r = by_lock(&runs, lock);
        assert_eq!(r["safety_violations"], 0, "{lock}");
        assert_eq!(r["baseline"], "pthread");
        assert_eq!(r["repeat"], 3);
        assert_eq!(r["mix"], "app:locks");
        assert_eq!(r["passages"], 1200, "{lock}: acquisitions per run");
        let ratio = r["throughput_vs_baseline"].as_f64().unwrap();
        let iv = &r["throughput_vs_baseline_interval"];
        assert!(iv["low"].as_f64().unwrap() <= ratio && ratio <= iv["high"].as_f64().unwrap());
        assert_eq!(r["per_round"].as_array().unwrap().len(), 3);
    }
    // The negative control: counted, and not a failure of the invocation.
    assert!(
        by_lock(&runs, "noop")["safety_violations"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert_eq!(by_lock(&runs, "uninterposed")["oracle"], "none");
}

#[test]
fn results_are_saved_for_report_and_compare() {
    let Some(prog) = locks_program() else { return };
    let (code, _, err) = app(
        &["--lock", "mcs", "--repeat", "2"],
        &[prog.to_str().unwrap(), "cond", "3", "2000"],
    );
    assert_eq!(code, Some(0), "{err}");
    let dir = err
        .lines()
        .find_map(|l| l.strip_prefix("results saved in "))
        .map(PathBuf::from)
        .expect("the saved directory is named");
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    assert_eq!(saved.as_array().unwrap().len(), 3);
    let details: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("app.json")).unwrap()).unwrap();
    let mcs = details["configs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "mcs")
        .unwrap();
    assert!(mcs["seen"]["cond_waits"].as_u64().unwrap() > 0);
    assert_eq!(mcs["runs"].as_array().unwrap().len(), 2);
    lockbench().arg("report").arg(&dir).assert().success();
}

#[test]
fn a_failure_under_one_lock_is_that_locks_alone() {
    // A script that fails under mcs only: the others' results are kept.
    let script = executable(
        "fails-under-mcs.sh",
        "#!/bin/sh\ntest \"$LOCKBENCH_LOCK\" != mcs\n",
    );
    let (code, out, err) = app(
        &["--lock", "ticket,mcs", "--repeat", "2", "--format", "json"],
        &[script.to_str().unwrap()],
    );
    assert_eq!(code, Some(1), "{err}");
    let runs: Value = serde_json::from_str(&out).unwrap();
    let mcs = by_lock(&runs, "mcs");
    assert!(mcs["nothing_measured"].as_bool().unwrap());
    assert!(mcs["stalled"].as_str().unwrap().contains("exit 1"));
    let ticket = by_lock(&runs, "ticket");
    assert!(ticket["throughput_per_sec"].as_f64().unwrap() > 0.0);
    assert!(err.contains("mcs: exit 1"), "{err}");
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let cases: Vec<(Vec<String>, Vec<String>, &str)> = vec![
        (vec![], vec!["/no/such/program".into()], "not found"),
        (vec![], vec!["false".into()], "fails under pthread itself"),
        (
            vec!["--lock".into(), "semaphore".into()],
            vec!["true".into()],
            "k-exclusion",
        ),
        (
            vec!["--lock".into(), "nope".into()],
            vec!["true".into()],
            "lockbench list",
        ),
        (vec![], vec![], "after `--`"),
        (
            vec![
                "--lock".into(),
                "ticket".into(),
                "--metric".into(),
                "ops (".into(),
            ],
            vec!["true".into()],
            "not a regular expression",
        ),
    ];
    for (extra, program, says) in cases {
        let mut args: Vec<&str> = vec!["--lock", "ticket"];
        if !extra.is_empty() {
            args = extra.iter().map(String::as_str).collect();
        }
        let prog: Vec<&str> = program.iter().map(String::as_str).collect();
        let (code, _, err) = app(&args, &prog);
        assert_eq!(code, Some(2), "{says}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(says), "{says}: {err}");
    }
}

#[test]
fn a_statically_linked_program_is_refused() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/locks.c");
    let exe = scratch().join("locks-static");
    let built = std::process::Command::new("cc")
        .args(["-O2", "-static", "-pthread", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .is_ok_and(|s| s.success());
    if !built {
        eprintln!("skipped: cc cannot link statically here (no static C library)");
        return;
    }
    let (code, _, err) = app(&["--lock", "ticket"], &[exe.to_str().unwrap(), "mutex"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("statically linked"), "{err}");
}

/// The path of an installed program, or None with a printed reason.
fn installed(name: &str) -> Option<String> {
    let found = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        eprintln!("skipped: {name} is not installed (scripts/install-apps.sh installs it)");
    }
    found.map(|p| p.to_string_lossy().into_owned())
}

/// Every mutual-exclusion lock that claims safety (the registry's own list, minus the
/// k-exclusion and GME ones), for the real programs.
fn mutex_locks() -> Vec<String> {
    let out = lockbench()
        .args(["list", "--format", "json"])
        .output()
        .unwrap();
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    list.as_array()
        .unwrap()
        .iter()
        .filter(|l| l["problem"] == "mutex" && l["safe"] == true)
        .map(|l| l["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn sysbench_mutex_and_threads_run_on_every_mutual_exclusion_lock() {
    let Some(sysbench) = installed("sysbench") else {
        return;
    };
    let locks = mutex_locks().join(",");
    for test in [
        vec![
            "mutex",
            "--threads=2",
            "--mutex-num=64",
            "--mutex-locks=2000",
            "--mutex-loops=100",
            "run",
        ],
        vec![
            "threads",
            "--threads=2",
            "--thread-locks=4",
            "--events=300",
            "--time=0",
            "run",
        ],
    ] {
        let mut program = vec![sysbench.as_str()];
        program.extend(test.iter().copied());
        runs_safely_under(&locks, &program, &format!("sysbench {}", test[0]));
    }
}

#[test]
fn pigz_output_decompresses_to_its_input_on_every_mutual_exclusion_lock() {
    let Some(pigz) = installed("pigz") else {
        return;
    };
    let dir = scratch().join("pigz");
    std::fs::create_dir_all(&dir).unwrap();
    // 4 MiB of compressible, deterministic text.
    let input = dir.join("input.txt");
    let text: String = (0..200_000u32)
        .map(|i| format!("{} {}\n", i % 977, i.wrapping_mul(2_654_435_761) % 10_007))
        .collect();
    std::fs::write(&input, text).unwrap();
    let script = executable(
        "pigz-roundtrip.sh",
        &format!(
            "#!/bin/sh\nset -e\n{pigz} -p 2 -b 128 -c {i} > {i}.$$.gz\n{pigz} -d -c {i}.$$.gz | cmp - {i}\nrm {i}.$$.gz\n",
            i = input.display()
        ),
    );
    runs_safely_under(
        &mutex_locks().join(","),
        &[script.to_str().unwrap()],
        "pigz",
    );
}

#[test]
fn memcached_serves_memcslap_over_loopback_on_every_mutual_exclusion_lock() {
    let (Some(memcached), Some(slap)) = (installed("memcached"), installed("memcslap")) else {
        return;
    };
    // A port of its own per test process; memcached listens on loopback only.
    let port = 20000 + std::process::id() % 20000;
    let script = executable(
        "memcached.sh",
        &format!(
            "#!/bin/sh\n{memcached} -u root -l 127.0.0.1 -p {port} -U 0 -t 2 -m 64 &\npid=$!\n\
             for i in 1 2 3 4 5 6 7 8 9 10; do env -u LD_PRELOAD {slap} --servers=127.0.0.1:{port} --concurrency=2 \
             --execute-number=200 >/dev/null 2>&1 && break; sleep 0.2; done\n\
             env -u LD_PRELOAD {slap} --servers=127.0.0.1:{port} --concurrency=4 --execute-number=2000; rc=$?\n\
             kill $pid; wait $pid\nexit $rc\n"
        ),
    );
    runs_safely_under(
        &mutex_locks().join(","),
        &[script.to_str().unwrap()],
        "memcached",
    );
}

#[test]
fn the_rwlock_program_runs_on_the_gme_locks() {
    let Some(prog) = locks_program() else { return };
    let (code, out, err) = app(
        &[
            "--lock",
            "glb,bwb-gme,parking-lot-rwlock,condvar-gme",
            "--repeat",
            "1",
            "--format",
            "json",
        ],
        &[prog.to_str().unwrap(), "rwlock", "4", "3000"],
    );
    assert_eq!(code, Some(0), "{err}");
    let runs: Value = serde_json::from_str(&out).unwrap();
    for lock in ["glb", "bwb-gme", "parking-lot-rwlock", "condvar-gme"] {
        let r = by_lock(&runs, lock);
        assert_eq!(r["problem"], "gme");
        assert_eq!(r["safety_violations"], 0, "{lock}");
        assert!(!r["nothing_measured"].as_bool().unwrap(), "{lock}");
    }
}

#[test]
fn rocksdb_db_bench_fills_and_reads_on_a_few_locks() {
    let Some(db_bench) = installed("db_bench") else {
        return;
    };
    let db = scratch().join("rocksdb");
    let db_arg = format!("--db={}", db.display());
    runs_safely_under(
        "ticket,mcs,b-bakery",
        &[
            &db_bench,
            "--benchmarks=fillrandom,readrandom",
            "--num=2000",
            "--threads=2",
            &db_arg,
        ],
        "db_bench",
    );
}
