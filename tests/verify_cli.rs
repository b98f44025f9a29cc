//! `lockbench verify` from the outside: replay strings carry their context, verdicts are never
//! empty, mutants report killed or survived.

use serde_json::Value;

mod common;
use common::lockbench;

fn naive_replay() -> String {
    let out = lockbench()
        .args([
            "verify",
            "--lock",
            "naive-bwb-gme",
            "--threads",
            "3",
            "--schedules",
            "4000",
            "--format",
            "json",
        ])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    v["outcome"]["schedule"].as_str().unwrap().to_string()
}

#[test]
fn a_replay_string_replays_alone_and_refuses_other_settings() {
    let replay = naive_replay();
    lockbench()
        .args(["verify", "--replay", &replay])
        .assert()
        .code(1);
    for extra in [
        vec!["--lock", "bwb-gme"],
        vec!["--threads", "4"],
        vec!["--passages", "3"],
        vec!["--scheduler", "random"],
    ] {
        let mut args = vec!["verify", "--replay", &replay];
        args.extend(extra.iter().copied());
        let out = lockbench()
            .args(&args)
            .assert()
            .code(2)
            .get_output()
            .clone();
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains("contradicts the replay string"),
            "{extra:?}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    }
    // The right lock named in the string, with a schedule that cannot run on it.
    let other = replay.replace("lock=naive-bwb-gme", "lock=bwb-gme");
    let out = lockbench()
        .args(["verify", "--replay", &other])
        .assert()
        .code(2)
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("does not replay"), "{err}");
}

#[test]
fn a_verify_that_completes_no_schedule_is_inconclusive() {
    let out = lockbench()
        .args([
            "verify",
            "--lock",
            "glb",
            "--threads",
            "6",
            "--schedules",
            "2",
            "--max-steps",
            "40",
        ])
        .assert()
        .code(3)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("INCONCLUSIVE"), "{text}");
    lockbench()
        .args(["verify", "--lock", "glb", "--passages", "0"])
        .assert()
        .code(2);
}

#[test]
fn k_at_least_threads_warns_that_the_check_is_vacuous() {
    let out = lockbench()
        .args([
            "verify",
            "--lock",
            "zehavi-kex",
            "--threads",
            "2",
            "--k",
            "2",
            "--schedules",
            "20",
        ])
        .assert()
        .success()
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("vacuous"), "{err}");
}

#[test]
fn mutants_report_one_json_object_each() {
    let out = lockbench()
        .args([
            "verify",
            "--mutants",
            "lamport-bakery",
            "--schedules",
            "500",
            "--format",
            "json",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let rows = v.as_array().unwrap();
    assert!(rows.len() >= 3);
    for r in rows {
        for key in [
            "lock",
            "mutant",
            "line",
            "killed",
            "equivalent",
            "schedules_to_kill",
        ] {
            assert!(r.get(key).is_some(), "{key} missing: {r}");
        }
        assert!(
            r["killed"].as_bool().unwrap() || r["equivalent"].as_bool().unwrap(),
            "{r}"
        );
    }
    // A killing schedule replays to the same violation.
    let killed = rows.iter().find(|r| r["killed"] == true).unwrap();
    lockbench()
        .args(["verify", "--replay", killed["replay"].as_str().unwrap()])
        .assert()
        .code(1);
    lockbench()
        .args(["verify", "--mutants", "nosuch"])
        .assert()
        .code(2);
}

#[test]
fn the_json_report_carries_the_largest_token() {
    let v = common::json_of(&[
        "verify",
        "--lock",
        "bw-bakery",
        "--threads",
        "2",
        "--schedules",
        "50",
        "--json",
    ]);
    let t = v["largest_token"].as_i64().expect("a number for bw-bakery");
    assert!((1..=2).contains(&t), "{v}");
    let v = common::json_of(&[
        "verify",
        "--lock",
        "ticket",
        "--threads",
        "2",
        "--schedules",
        "50",
        "--json",
    ]);
    assert!(v["largest_token"].is_null(), "{v}");
}

#[test]
fn a_witness_is_printed_with_its_tag_once() {
    // Seed 000 §8: GLB lacks strong concurrent entry (P8); --witness stops at the first.
    let out = lockbench()
        .args(["verify", "--lock", "glb", "--witness", "--seed", "1"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("WITNESS: "))
        .unwrap_or_else(|| panic!("no witness line in:\n{text}"));
    assert!(!line.contains("WITNESS: WITNESS"), "{line}");
    assert_eq!(line.matches("WITNESS").count(), 1, "{line}");
}
