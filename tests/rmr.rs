//! The `rmr` command and `run --rmr`: JSON fields, exact counts, bad input.

use serde_json::Value;

mod common;
use common::{json_of, lockbench};

#[test]
fn rmr_json_has_one_object_per_lock_n_model_schedule() {
    let v = json_of(&[
        "rmr",
        "--lock",
        "glb,mcs",
        "--threads",
        "3,4",
        "--model",
        "cc,dsm",
        "--schedule",
        "round-robin,adversarial",
        "--format",
        "json",
    ]);
    let runs = v.as_array().unwrap();
    assert_eq!(runs.len(), 2 * 2 * 2 * 2);
    for r in runs {
        for field in [
            "lock",
            "threads",
            "model",
            "schedule",
            "max_rmr_per_passage",
            "mean_rmr_per_passage",
            "by_section",
            "bound",
            "within_bound",
        ] {
            assert!(r.get(field).is_some(), "{field} missing: {r}");
        }
        for s in ["doorway", "waiting", "cs", "exit"] {
            assert!(r["by_section"][s].is_number(), "{r}");
        }
        let max = r["max_rmr_per_passage"].as_u64().unwrap();
        assert!(max > 0);
        match (r["lock"].as_str().unwrap(), r["model"].as_str().unwrap()) {
            // seed 000 claims nothing for GLB in DSM.
            ("glb", "dsm") => assert!(r["bound"].is_null() && r["within_bound"].is_null()),
            _ => {
                assert_eq!(r["within_bound"], Value::Bool(true), "{r}");
                assert!(max <= r["bound"]["value"].as_u64().unwrap());
            }
        }
    }
}

#[test]
fn burns_lamport_adversary_prints_the_quadratic_curve() {
    let v = json_of(&[
        "rmr",
        "--lock",
        "burns-lamport",
        "--threads",
        "4,6,7",
        "--schedule",
        "adversarial",
        "--passages",
        "1",
        "--format",
        "json",
    ]);
    for r in v.as_array().unwrap() {
        let n = r["threads"].as_u64().unwrap();
        assert_eq!(r["bound"]["value"].as_u64().unwrap(), n * (n - 1) / 2);
        assert_eq!(r["victim"]["blocked"].as_u64().unwrap(), n * (n - 1) / 2);
        assert_eq!(r["within_bound"], Value::Bool(true));
    }
}

#[test]
fn rmr_table_prints_bounds_with_their_constant() {
    let out = lockbench()
        .args(["rmr", "--lock", "bwb-gme", "--threads", "5"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("≤ 12N − 3"), "{text}");
    assert!(text.contains("(c = 12)"), "{text}");
}

#[test]
fn rmr_bad_input_exits_2() {
    for args in [
        vec!["rmr", "--lock", "std-mutex"],
        vec!["rmr", "--lock", "nope"],
        vec!["rmr", "--threads", "0"],
        vec!["rmr", "--threads", "65"],
        vec!["rmr", "--passages", "0"],
    ] {
        let out = lockbench()
            .args(&args)
            .assert()
            .code(2)
            .get_output()
            .stderr
            .clone();
        let err = String::from_utf8(out).unwrap();
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
    lockbench()
        .args(["rmr", "--model", "numa"])
        .assert()
        .code(2);
}

#[test]
fn run_rmr_fills_the_rmr_field() {
    let dir = tempfile::tempdir().unwrap();
    let v = json_of(&[
        "run",
        "--lock",
        "mcs",
        "--threads",
        "1",
        "--passages",
        "500",
        "--warmup",
        "0",
        "--rmr",
        "dsm",
        "--format",
        "json",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    let runs = v.as_array().unwrap();
    assert_eq!(runs.len(), 2, "the baseline ticket and mcs");
    let mcs = runs.iter().find(|r| r["lock"] == "mcs").unwrap();
    let rmr = &mcs["rmr"];
    assert_eq!(rmr["model"], "dsm");
    // Alone, an MCS passage swaps the tail and CASes it back: two RMRs in DSM, every time.
    assert_eq!(rmr["per_passage_max"].as_u64().unwrap(), 2, "{rmr}");
    assert_eq!(rmr["per_passage_mean"].as_f64().unwrap(), 2.0);
    assert_eq!(rmr["by_section"]["doorway"].as_f64().unwrap(), 1.0);
    assert_eq!(rmr["by_section"]["exit"].as_f64().unwrap(), 1.0);
    assert!(rmr["counting_overhead_ns_per_access"].as_f64().is_some());
    assert!(mcs["warnings"]
        .to_string()
        .contains("slower than a plain run"));
}

#[test]
fn run_rmr_refuses_a_lock_it_cannot_count() {
    lockbench()
        .args([
            "run",
            "--lock",
            "std-mutex",
            "--rmr",
            "cc",
            "--passages",
            "10",
        ])
        .assert()
        .code(2);
}

#[test]
fn adversarial_reports_how_its_maximum_was_found() {
    let v = json_of(&[
        "rmr",
        "--lock",
        "bw-bakery,burns-lamport",
        "--threads",
        "4",
        "--schedule",
        "round-robin,random,pct,adversarial",
        "--search",
        "2",
        "--passages",
        "2",
        "--format",
        "json",
    ]);
    let runs = v.as_array().unwrap();
    let get = |lock: &str, s: &str| {
        runs.iter()
            .find(|r| r["lock"] == lock && r["schedule"] == s)
            .unwrap()
    };
    let adv = get("bw-bakery", "adversarial");
    assert_eq!(adv["worst"], "found", "{adv}");
    assert_eq!(adv["tried"].as_array().unwrap().len(), 6, "{adv}");
    for s in ["round-robin", "random", "pct"] {
        let r = get("bw-bakery", s);
        assert!(r["worst"].is_null(), "{r}");
        assert!(
            adv["max_rmr_per_passage"].as_u64().unwrap()
                >= r["max_rmr_per_passage"].as_u64().unwrap(),
            "{s}: {r}\nadversarial: {adv}"
        );
    }
    assert_eq!(get("bw-bakery", "random")["found_by"], "random seed 1");
    let bl = get("burns-lamport", "adversarial");
    assert_eq!(bl["worst"], "proven");
    assert_eq!(bl["found_by"], "scripted: seed 000 §4");
    let out = lockbench()
        .args([
            "rmr",
            "--lock",
            "glb",
            "--threads",
            "3",
            "--schedule",
            "adversarial",
            "--search",
            "0",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("worst") && text.contains("found ("), "{text}");
}

#[test]
fn run_rmr_puts_the_rmrs_in_a_column_and_notes_name_their_point() {
    let dir = tempfile::tempdir().unwrap();
    let out = lockbench()
        .args([
            "run",
            "--lock",
            "ticket",
            "--threads",
            "2",
            "--rmr",
            "cc",
            "--passages",
            "300",
            "--repeat",
            "1",
            "--out",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let header = text
        .lines()
        .find(|l| l.starts_with("lock "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(header.contains("rmr/passage"), "{text}");
    let row = text.lines().find(|l| l.starts_with("ticket ")).unwrap();
    assert!(row.contains(" cc (max "), "{text}");
    // Every note names its lock, thread count and mix.
    let notes: Vec<&str> = text.lines().filter(|l| l.starts_with("note: ")).collect();
    assert!(!notes.is_empty(), "{text}");
    for n in notes {
        assert!(n.starts_with("note: ticket t=2 distinct: "), "{n}");
    }
}
