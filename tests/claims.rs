//! `lockbench claims`: the ledger's rows come from real checks, a broken algorithm turns its
//! rows from `holds`, a saved ledger catches the regression, and bad input is refused.

mod common;

use common::{json_of, lockbench, stderr_of_failure};
use serde_json::Value;

fn rows(v: &Value) -> Vec<&Value> {
    v.as_array()
        .expect("the ledger is an array of rows")
        .iter()
        .collect()
}

fn verdict<'a>(v: &'a Value, id: &str) -> &'a str {
    rows(v)
        .into_iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no row {id}"))["verdict"]
        .as_str()
        .unwrap()
}

#[test]
fn the_bakery_ledger_holds_and_names_its_checks() {
    let v = json_of(&["claims", "--quick", "--paper", "002", "--format", "json"]);
    let r = rows(&v);
    assert!(r.len() >= 10, "{} rows", r.len());
    for row in &r {
        assert!(row["id"].as_str().unwrap().starts_with("002/"), "{row}");
        assert_eq!(row["paper_id"], "002");
        let checks = row["check"].as_array().unwrap();
        assert!(!checks.is_empty(), "every 002 row is checked: {row}");
        assert!(checks
            .iter()
            .all(|c| c.as_str().unwrap().starts_with("lockbench ")));
    }
    for id in ["002/thm1", "002/thm4-me", "002/sec5-lockstep", "002/sec3.1"] {
        assert_eq!(verdict(&v, id), "holds", "{v:#}");
    }
    // The §3.1 row is measured: Lamport's range after the quick level's 10 cycles.
    let s31 = rows(&v)
        .into_iter()
        .find(|r| r["id"] == "002/sec3.1")
        .unwrap();
    assert!(
        s31["ours"].as_str().unwrap().contains("after 10 cycles"),
        "{s31}"
    );
}

#[test]
fn a_mutant_turns_a_holding_claim_and_the_baseline_catches_it() {
    let dir = tempfile::tempdir().unwrap();
    let good = json_of(&["claims", "--quick", "--paper", "002", "--format", "json"]);
    assert_eq!(verdict(&good, "002/thm4-me"), "holds");
    let saved = dir.path().join("ledger.json");
    std::fs::write(&saved, serde_json::to_string(&good).unwrap()).unwrap();

    // B-Bakery without line 6's wait: its rows must stop holding.
    let broken = [
        "claims",
        "--quick",
        "--paper",
        "002",
        "--mutant",
        "b-bakery/no-choosing-wait",
    ];
    let v = json_of(&[&broken[..], &["--format", "json"]].concat());
    let b_rows: Vec<&Value> = rows(&v)
        .into_iter()
        .filter(|r| r["id"].as_str().unwrap().starts_with("002/thm4"))
        .collect();
    assert!(
        b_rows.iter().any(|r| r["verdict"] == "differs"),
        "{b_rows:#?}"
    );
    // UB-Bakery's rows are not the mutant's: its ledger leaves them out.
    assert!(rows(&v).iter().all(|r| r["id"] != "002/thm1"), "{v:#}");

    let out = lockbench()
        .args(broken)
        .arg("--baseline")
        .arg(&saved)
        .assert()
        .code(1)
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("held in") && err.contains("002/thm4"), "{err}");
    // The unbroken ledger against its own baseline: exit 0.
    lockbench()
        .args(["claims", "--quick", "--paper", "002", "--baseline"])
        .arg(&saved)
        .assert()
        .success();
}

#[test]
fn unchecked_and_unavailable_claims_say_why() {
    // `differs` is the mutant test's; here `open` (nothing checks it) and the hardware row,
    // `not checkable here` on a machine without a PMU, a measured verdict on one with it.
    let v = json_of(&[
        "claims", "--quick", "--paper", "000,003", "--format", "json",
    ]);
    let kinds: Vec<&str> = rows(&v)
        .into_iter()
        .map(|r| r["verdict"].as_str().unwrap())
        .collect();
    for k in ["holds", "open"] {
        assert!(kinds.contains(&k), "no {k} row: {kinds:?}");
    }
    let hw = rows(&v)
        .into_iter()
        .find(|r| r["id"] == "000/sec1.1")
        .unwrap();
    match hw["verdict"].as_str().unwrap() {
        "not checkable here" => assert!(hw["why"].as_str().unwrap().contains("PMU"), "{hw}"),
        _ => assert!(
            hw["ours"].as_str().unwrap().contains("cache misses"),
            "{hw}"
        ),
    }
    for r in rows(&v) {
        if r["verdict"] != "holds" {
            let why = r["why"].as_str().unwrap_or("");
            assert!(
                !why.is_empty(),
                "a {} row names its reason: {r}",
                r["verdict"]
            );
        }
    }
}

#[test]
fn table1_sets_the_papers_entries_beside_ours() {
    let v = json_of(&["claims", "--table1", "--quick", "--format", "json"]);
    let cells = rows(&v);
    assert_eq!(cells.len(), 9 * 7, "nine algorithms, seven columns");
    for id in [
        "This work (GLB)/RMR",
        "This work (BWBGME)/RMR",
        "This work (GLB)/P5",
    ] {
        assert_eq!(verdict(&v, id), "holds", "{v:#}");
    }
    assert_eq!(verdict(&v, "Joung [10]/RMR"), "open");
    let text = lockbench()
        .args(["claims", "--table1", "--quick"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(text).unwrap();
    assert!(
        text.contains("This work (BWBGME)") && text.contains("O(N) / O(N)"),
        "{text}"
    );
}

#[test]
fn bad_input_is_refused_in_one_line() {
    for (args, says) in [
        (vec!["claims", "--paper", "007"], "--paper 007"),
        (vec!["claims", "--mutant", "glb"], "LOCK/NAME"),
        (vec!["claims", "--mutant", "glb/none"], "no mutant"),
        (vec!["claims", "--format", "csv"], "--format csv"),
        (
            vec!["claims", "--baseline", "/nonexistent/ledger.json"],
            "--baseline",
        ),
    ] {
        let err = stderr_of_failure(lockbench().args(&args), 2);
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn the_paper_suites_travel_with_the_binary() {
    // `claims` runs `sim --paper bench-configs/claims-paper.toml`: from a directory without the
    // checkout the built-in copy gives the very same output, and says it is using it.
    let args = [
        "sim",
        "--paper",
        "bench-configs/claims-paper.toml",
        "--quick",
        "--format",
        "json",
    ];
    let here = lockbench()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .assert()
        .success()
        .get_output()
        .clone();
    let away = tempfile::tempdir().unwrap();
    let there = lockbench()
        .current_dir(away.path())
        .args(args)
        .assert()
        .success()
        .get_output()
        .clone();
    assert!(!here.stdout.is_empty());
    assert_eq!(here.stdout, there.stdout, "the same suite from anywhere");
    let note = String::from_utf8_lossy(&there.stderr);
    assert!(note.contains("copy built into lockbench"), "{note}");
    assert!(!String::from_utf8_lossy(&here.stderr).contains("built into"));
    // A path that is not a bundled suite is still refused with the path named.
    let err = stderr_of_failure(
        lockbench()
            .current_dir(away.path())
            .args(["sim", "--paper", "bench-configs/nope.toml"]),
        2,
    );
    assert!(err.contains("bench-configs/nope.toml"), "{err}");
}
