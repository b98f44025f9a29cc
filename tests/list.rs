//! `lockbench list`: a table that fits 100 columns and cites the papers, one lock in full with
//! `--lock`, every field in CSV, JSON and Markdown, and a bad lock name as bad input.

mod common;
use common::{json_of, lockbench, stderr_of_failure};

fn stdout(args: &[&str]) -> String {
    let out = lockbench()
        .args(args)
        .assert()
        .success()
        .get_output()
        .clone();
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_table_fits_100_columns_and_cites_every_seed() {
    let text = stdout(&["list"]);
    for l in text.lines() {
        assert!(
            l.chars().count() <= 100,
            "{} columns: {l}",
            l.chars().count()
        );
    }
    for title in [
        "Group mutual exclusion in linear time and space",
        "Bounding Lamport's Bakery Algorithm",
        "group mutual exclusion algorithm when",
        "generalized local critical section problem",
    ] {
        // A title may wrap: compare with the line breaks taken out.
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains(title), "{title} not cited");
    }
}

#[test]
fn one_lock_in_full() {
    let text = stdout(&["list", "--lock", "zehavi-kex"]);
    assert!(text.starts_with("zehavi-kex (k-exclusion)"), "{text}");
    assert!(text.contains("Zehavi") && text.contains("notes:"), "{text}");
    let err = stderr_of_failure(lockbench().args(["list", "--lock", "no-such-lock"]), 2);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("no-such-lock"), "{err}");
}

#[test]
fn csv_json_and_md_carry_every_lock_and_its_paper() {
    let csv = stdout(&["list", "--format", "csv"]);
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "name,problem,fcfs,bounded,rmr,safe,source,citation,notes"
    );
    assert!(lines.any(|l| l.starts_with("glb,gme,true,false,")), "{csv}");
    let json = json_of(&["list", "--format", "json"]);
    let glb = json
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "glb")
        .unwrap();
    assert_eq!(glb["citation"]["seed"], "000");
    assert_eq!(
        glb["citation"]["authors"],
        "Y. He, K. Gopalakrishnan, E. Gafni"
    );
    let ticket = json
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "ticket")
        .unwrap();
    assert!(ticket["citation"].is_null());
    let md = stdout(&["list", "--format", "md"]);
    assert!(md.starts_with("| lock | problem |"), "{md}");
    assert!(md.contains("| `glb` | gme |"), "{md}");
    assert!(md.contains("- seed 004: S. Kamei, H. Kakugawa"), "{md}");
}
