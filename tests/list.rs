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

/// docs/locks.md's table of every lock says what `lockbench list` says: the same locks in the
/// same order, each with its problem, FCFS and bounded claims, RMR class and notes.
#[test]
fn the_table_of_locks_in_the_docs_is_what_list_says() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/locks.md")).unwrap();
    let start = doc.find("## Every lock").unwrap();
    let end = start + doc[start..].find("\n## ").unwrap();
    let rows: Vec<Vec<String>> = doc[start..end]
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect();
    let list = json_of(&["list", "--format", "json"]);
    let locks = list.as_array().unwrap();
    let names = |v: &[String]| v.to_vec();
    assert_eq!(
        names(
            &rows
                .iter()
                .map(|r| r[0].trim_matches('`').to_string())
                .collect::<Vec<_>>()
        ),
        locks
            .iter()
            .map(|l| l["name"].as_str().unwrap().to_string())
            .collect::<Vec<_>>(),
        "docs/locks.md lists every lock of `lockbench list`, in its order"
    );
    let yes = |b: &serde_json::Value| if b == true { "yes" } else { "no" };
    for (row, lock) in rows.iter().zip(locks) {
        let name = lock["name"].as_str().unwrap();
        assert_eq!(row.len(), 8, "{name}: {row:?}");
        assert_eq!(row[1], lock["problem"].as_str().unwrap(), "{name}: problem");
        assert_eq!(row[4], yes(&lock["fcfs"]), "{name}: FCFS");
        assert_eq!(row[5], yes(&lock["bounded"]), "{name}: bounded");
        assert_eq!(row[6], lock["rmr"].as_str().unwrap(), "{name}: RMRs");
        assert_eq!(row[7], lock["notes"].as_str().unwrap(), "{name}: notes");
    }
}
