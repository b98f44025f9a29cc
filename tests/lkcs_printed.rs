//! `sim --lkcs-rules`: seed 004's LKCS as printed (its leader, no parking) against our rules,
//! on the command line.

mod common;

use common::lockbench;
use serde_json::Value;

/// `sim --algo lkcs` on `topology` with n, (l, k), seeds 1–4, 25 entries each, under `rules`:
/// the exit code and the runs.
fn sim(topology: &str, n: usize, (l, k): (usize, usize), rules: &str) -> (i32, Vec<Value>) {
    let out = lockbench()
        .args(["sim", "--algo", "lkcs", "--topology", topology])
        .args(["--n", &n.to_string(), "--l", &l.to_string()])
        .args(["--k", &k.to_string(), "--requests", "25", "--seeds", "4"])
        .args([
            "--watchdog",
            "20000",
            "--lkcs-rules",
            rules,
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let runs: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    for r in &runs {
        assert_eq!(r["lkcs_rules"], rules, "{r}");
        assert_eq!(r["safety_violations"], 0, "{}", r["violations"]);
    }
    (out.status.code().unwrap(), runs)
}

fn stuck(runs: &[Value]) -> Vec<&str> {
    runs.iter()
        .filter_map(|r| r["liveness_failure"].as_str())
        .collect()
}

#[test]
fn as_printed_a_ring_with_room_sticks_where_ours_is_live() {
    // Ring n = 9, (0, 3): L_i = 1, K_i = 2 near p0 leave room and each run starts within
    // them, yet P_LDR waits for good (Algorithm 4's wait, LK-14e) in every seed.
    let (code, printed) = sim("ring", 9, (0, 3), "printed");
    assert_eq!(code, 1, "a failed run exits 1");
    assert_eq!(stuck(&printed).len(), 4, "{:?}", stuck(&printed));
    let (code, ours) = sim("ring", 9, (0, 3), "ours");
    assert_eq!(code, 0, "{:?}", stuck(&ours));
    assert!(stuck(&ours).is_empty());
    assert!(ours.iter().all(|r| r["requests"].as_u64() >= Some(25 * 9)));
}

#[test]
fn as_printed_a_grid_deadlocks_where_ours_is_live() {
    let (code, printed) = sim("grid", 16, (1, 3), "printed");
    assert_eq!(code, 1);
    let why = stuck(&printed);
    assert_eq!(why.len(), 4, "{why:?}");
    assert!(why.iter().all(|w| w.starts_with("deadlock")), "{why:?}");
    let (code, ours) = sim("grid", 16, (1, 3), "ours");
    assert_eq!(code, 0, "{:?}", stuck(&ours));
}

#[test]
fn ours_is_the_default_and_says_so() {
    let out = lockbench()
        .args([
            "sim",
            "--algo",
            "lkcs,ricart-agrawala",
            "--topology",
            "ring",
        ])
        .args(["--n", "9", "--l", "1", "--k", "2", "--requests", "10"])
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let runs: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(runs[0]["lkcs_rules"], "ours");
    assert!(runs[1].get("lkcs_rules").is_none(), "{}", runs[1]);
}

#[test]
fn the_rules_are_refused_in_one_line_where_they_do_not_apply() {
    let ring_1_2 = "--algo lkcs --topology ring --n 9 --l 1 --k 2 --lkcs-rules printed";
    for (args, says) in [
        // k − l = 1: L_i = 2 > K_i = 1 within distance 2 of p0, no start for the leader.
        (ring_1_2, "L_i = 2 > K_i = 1"),
        (
            "--algo lkcs --topology ring --n 9 --l 1 --k 2 --lkcs-rules printed-at-capacity",
            "L_i = 2 > K_i = 1",
        ),
        (
            "--algo ricart-agrawala --lkcs-rules printed",
            "ricart-agrawala",
        ),
        ("--algo all --lkcs-rules ours", "--algo lkcs or lmutin"),
        ("--algo lkcs --lkcs-rules leader", "possible values"),
    ] {
        let out = lockbench()
            .arg("sim")
            .args(args.split(' '))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args}: {err}");
        assert!(err.contains(says), "{args}: {err}");
        assert!(out.stdout.is_empty(), "{args}");
    }
    // mp-run has no such option.
    let out = lockbench()
        .args(["mp-run", "--algo", "lkcs", "--lkcs-rules", "printed"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim().lines().count(),
        1
    );
    // Ours on the same ring is live.
    let out = lockbench()
        .arg("sim")
        .args(ring_1_2.replace("printed", "ours").split(' '))
        .args(["--requests", "25", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}
