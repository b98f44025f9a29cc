//! Seed 003 §5.3.4 through the binary: `sim --crash` counts the messages of every restart
//! operation on its own against 5(n − 1) (n − 1 of each kind), reports an operation cut
//! short by a crash as aborted, and checks the whole run against (2n − 1)r + 5(n − 1)f.

use serde_json::Value;

mod common;
use common::lockbench;

/// `sim` on TokenGME at n = 8 with `crashes`: its exit code, stdout and the JSON runs.
fn sim(crashes: &[&str], format: &str) -> (Option<i32>, String) {
    let out = lockbench()
        .arg("sim")
        .args([
            "--algo",
            "token-gme",
            "--n",
            "8",
            "--m",
            "3",
            "--requests",
            "30",
            "--seeds",
            "2",
            "--ncs",
            "exp:20",
            "--format",
            format,
        ])
        .args(crashes)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn json(crashes: &[&str]) -> Vec<Value> {
    let (code, out) = sim(crashes, "json");
    assert_eq!(code, Some(0), "{out}");
    serde_json::from_str::<Value>(&out)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn f(v: &Value, k: &str) -> f64 {
    v[k].as_f64()
        .unwrap_or_else(|| panic!("{k} missing in {v}"))
}

/// The operations of a run as (id, coordinator, status).
fn ops(r: &Value) -> Vec<(u64, u64, String)> {
    r["recovery"]["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                f(o, "id") as u64,
                f(o, "coordinator") as u64,
                o["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn every_restart_operation_is_counted_against_five_n_minus_one() {
    for r in json(&["--crash", "5@100"]) {
        let rec = &r["recovery"];
        assert_eq!(ops(&r), [(1, 0, "completed".to_string())], "{r}");
        assert_eq!(f(rec, "operation_bound"), 35.0);
        let o = &rec["operations"][0];
        assert_eq!(o["within"], true, "{o}");
        let kinds = ["notify", "restart", "done", "start", "resume"];
        let sum: f64 = kinds.iter().map(|k| f(o, k)).sum();
        assert_eq!(sum, f(o, "total"));
        // Six live processes besides the coordinator: six of each but START (one per old
        // request of the first group).
        for k in ["notify", "restart", "done", "resume"] {
            assert_eq!(f(o, k), 6.0, "{k}: {o}");
        }
        assert!(f(o, "begun") < f(o, "ended"));
        assert_eq!(f(rec, "operation_messages_max"), f(o, "total"));
        assert_eq!(f(rec, "operations_over_bound"), 0.0);
        // The whole run: 15 per request and 35 per crash.
        assert_eq!(
            f(rec, "run_bound"),
            15.0 * f(rec, "requests") + 35.0 * f(rec, "crashes")
        );
        assert!(f(rec, "run_messages") <= f(rec, "run_bound"), "{rec}");
        assert_eq!(f(rec, "requests"), f(&r, "requests"));
    }
}

#[test]
fn a_coordinator_crashing_during_its_restart_leaves_an_aborted_operation() {
    // Where operation 1 began, crash its coordinator p0 just after: p1 begins operation 2.
    let first = json(&["--crash", "5@100"]);
    let begun = f(&first[0]["recovery"]["operations"][0], "begun");
    let at = format!("0@{}", begun + 0.01);
    let r = &json(&["--crash", "5@100", "--crash", &at])[0];
    assert_eq!(
        ops(r),
        [
            (1, 0, "aborted".to_string()),
            (2, 1, "completed".to_string())
        ],
        "{r}"
    );
    for o in r["recovery"]["operations"].as_array().unwrap() {
        assert_eq!(o["within"], true, "{o}");
    }
    let (code, table) = sim(&["--crash", "5@100", "--crash", &at], "table");
    assert_eq!(code, Some(0));
    assert!(table.contains("restart operations begun: 2"), "{table}");
    assert!(table.contains("aborted"), "{table}");
    assert!(table.contains("whole run:"), "{table}");
}
