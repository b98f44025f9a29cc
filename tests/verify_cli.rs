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

fn naive_json(extra: &[&str]) -> Value {
    let mut args = vec![
        "verify",
        "--lock",
        "naive-bwb-gme",
        "--threads",
        "3",
        "--schedules",
        "2000",
        "--format",
        "json",
    ];
    args.extend(extra);
    let out = lockbench()
        .args(&args)
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).unwrap()
}

/// The numbered steps of a JSON trace.
fn steps(trace: &Value) -> Vec<u64> {
    trace
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["step"].as_u64())
        .collect()
}

#[test]
fn a_violation_prints_a_numbered_trace_ending_with_two_sessions_inside() {
    let out = lockbench()
        .args([
            "verify",
            "--lock",
            "naive-bwb-gme",
            "--threads",
            "3",
            "--schedules",
            "2000",
        ])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("trace: the last 60 of "), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    let replay = lines
        .iter()
        .position(|l| l.contains("replay: lockbench verify --replay"))
        .expect("a replay line");
    let fails = lines[replay - 1].trim();
    assert!(fails.starts_with("✗ SAFETY VIOLATION: process "), "{fails}");
    // "process a (session x) inside with process b (session y)"
    let words: Vec<&str> = fails
        .split([' ', '(', ')'])
        .filter(|w| !w.is_empty())
        .collect();
    let (a, x, b, y) = (words[4], words[6], words[10], words[12]);
    assert_ne!(x, y, "{fails}");
    // The trace's lines say so: each process's last CS event is its entry, with its session.
    let trace = &lines[..replay - 1];
    for (p, s) in [(a, x), (b, y)] {
        let last = trace
            .iter()
            .rev()
            .find(|l| l.contains(&format!("p{p}    · ")) && l.contains(" CS"))
            .unwrap_or_else(|| panic!("no CS event of p{p}: {text}"));
        assert!(
            last.ends_with(&format!("enters CS (session {s})")),
            "{last}"
        );
    }
    // Numbered steps, one per line: number, process, op, register, value, figure line.
    let numbered: Vec<Vec<&str>> = trace
        .iter()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.len() == 6 && w[0].parse::<u64>().is_ok())
        .collect();
    assert!(numbered.len() >= 10, "{text}");
    for w in numbered.windows(2) {
        let (s0, s1) = (
            w[0][0].parse::<u64>().unwrap(),
            w[1][0].parse::<u64>().unwrap(),
        );
        assert_eq!(s1, s0 + 1);
    }
    assert!(numbered
        .iter()
        .all(|w| w[1].starts_with('p') && ["read", "write"].contains(&w[2])));
}

#[test]
fn the_json_trace_parses_and_a_replay_reproduces_it() {
    let v = naive_json(&[]);
    let trace = &v["trace"];
    let total = v["trace_steps"].as_u64().unwrap();
    let numbers = steps(trace);
    assert_eq!(numbers.len(), 60.min(total as usize));
    assert_eq!(*numbers.last().unwrap(), total);
    let last = trace.as_array().unwrap().last().unwrap();
    assert_eq!(last["op"], "fails");
    assert_eq!(last["event"], v["outcome"]["kind"]);
    for l in trace.as_array().unwrap() {
        if l["step"].is_u64() {
            assert!(l["process"].as_u64().unwrap() < 3, "{l}");
            assert!(l["register"].is_string() && l["value"].is_string(), "{l}");
        }
    }
    // The replay string still replays, to the same trace; --trace-all shows every step.
    let replay = v["outcome"]["schedule"].as_str().unwrap();
    let out = lockbench()
        .args([
            "verify",
            "--replay",
            replay,
            "--trace-all",
            "--format",
            "json",
        ])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let again: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(again["outcome"], v["outcome"]);
    assert_eq!(steps(&again["trace"]), (1..=total).collect::<Vec<_>>());
    let all = again["trace"].as_array().unwrap();
    assert_eq!(
        &all[all.len() - trace.as_array().unwrap().len()..],
        trace.as_array().unwrap().as_slice()
    );
    // --trace 0: no trace at all.
    let none = naive_json(&["--trace", "0"]);
    assert!(none.get("trace").is_none(), "{none}");
}

#[test]
fn lamport_bakery_names_its_registers_and_figure_lines_in_the_trace() {
    let out = lockbench()
        .args([
            "verify",
            "--lock",
            "lamport-bakery",
            "--mutant",
            "no-choosing-wait",
            "--schedules",
            "4000",
            "--trace",
            "8",
            "--format",
            "json",
        ])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let trace = v["trace"].as_array().unwrap();
    assert_eq!(steps(&v["trace"]).len(), 8);
    for l in trace.iter().filter(|l| l["step"].is_u64()) {
        let reg = l["register"].as_str().unwrap();
        assert!(
            reg.starts_with("token[") || reg.starts_with("gettoken["),
            "{l}"
        );
        assert!((1..=8).contains(&l["line"].as_u64().unwrap()), "{l}");
    }
}
