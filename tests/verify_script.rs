//! `verify --scheduler script`: a lock's scripted counter-example (the failure its paper states
//! in words) runs as one schedule and shows that failure, the same at every seed; settings the
//! script does not assume, or a lock with no script, are refused in one line.

mod common;

use common::{json_of, lockbench, stderr_of_failure};

fn scripted(lock: &str, seed: &str) -> serde_json::Value {
    json_of(&[
        "verify",
        "--lock",
        lock,
        "--threads",
        "3",
        "--sessions",
        "2",
        "--plan",
        "fixed",
        "--scheduler",
        "script",
        "--seed",
        seed,
        "--format",
        "json",
    ])
}

#[test]
fn the_fife_counter_example_of_seed_000_fails_fife_in_one_schedule_at_every_seed() {
    for lock in ["glb", "bwb-gme"] {
        for seed in ["1", "476888"] {
            let r = scripted(lock, seed);
            assert_eq!(r["schedules_run"], 1, "{lock}: {r:#}");
            assert_eq!(r["schedules_completed"], 1, "{lock}: {r:#}");
            assert!(
                r["scheduler"].as_str().unwrap().contains("seed 000 §8"),
                "{lock}: {r:#}"
            );
            let w = r["witnesses"].as_array().unwrap();
            assert!(
                w.iter().any(|w| w["property"] == "P7 FIFE"),
                "{lock} at seed {seed}: no FIFE witness: {r:#}"
            );
            assert_eq!(r["outcome"]["result"], "safe", "{lock}: {r:#}");
        }
    }
}

#[test]
fn a_witness_run_stops_at_the_scripts_first_failure_with_a_replay_that_reproduces_it() {
    let r = json_of(&[
        "verify",
        "--lock",
        "glb",
        "--threads",
        "3",
        "--sessions",
        "2",
        "--plan",
        "fixed",
        "--scheduler",
        "script",
        "--witness",
        "--format",
        "json",
    ]);
    // P0's first wait, on P1 whose request came after P0's doorway, is already a failure of
    // P8 (strong concurrent entry), which GLB does not claim either: a strict run stops there.
    assert_eq!(r["outcome"]["result"], "witness", "{r:#}");
    let kind = r["outcome"]["kind"].as_str().unwrap();
    assert!(kind.contains("P8 strong concurrent entry"), "{kind}");
    let replay = r["outcome"]["schedule"].as_str().unwrap();
    let again = json_of(&["verify", "--replay", replay, "--format", "json"]);
    assert_eq!(
        again["outcome"]["kind"].as_str().unwrap(),
        kind,
        "{again:#}"
    );
}

#[test]
fn settings_the_script_does_not_assume_and_locks_without_one_are_refused() {
    let err = stderr_of_failure(
        lockbench().args([
            "verify",
            "--lock",
            "glb",
            "--threads",
            "4",
            "--scheduler",
            "script",
        ]),
        2,
    );
    assert!(
        err.contains("--threads 3 --sessions 2 --plan fixed"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let err = stderr_of_failure(
        lockbench().args([
            "verify",
            "--lock",
            "lamport-bakery",
            "--scheduler",
            "script",
        ]),
        2,
    );
    assert!(err.contains("scripts no counter-example"), "{err}");
}
