//! A newcomer's smaller stumbles, through the binary: a mistyped lock, thin latency samples,
//! one physical core, the mutant table's columns and effort, the message-passing legend, a
//! report written over a directory, and paths printed on one line.

use std::fs;

mod common;
use common::lockbench;

#[test]
fn a_mistyped_lock_suggests_the_nearest_name() {
    let err = common::stderr_of_failure(
        lockbench().args(["run", "--lock", "tiket", "--threads", "1"]),
        2,
    );
    assert!(err.contains("did you mean `ticket`?"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    // Nothing near: no guess.
    let err = common::stderr_of_failure(
        lockbench().args(["run", "--lock", "zzzzzzzzzz", "--threads", "1"]),
        2,
    );
    assert!(!err.contains("did you mean"), "{err}");
}

#[test]
fn thin_latency_samples_name_the_remedy() {
    let tmp = tempfile::tempdir().unwrap();
    let out = lockbench()
        .args([
            "run",
            "--lock",
            "ticket",
            "--threads",
            "1",
            "--passages",
            "200",
        ])
        .args([
            "--repeat",
            "1",
            "--warmup",
            "1ms",
            "--latency-sample",
            "100",
        ])
        .args(["--format", "json", "--out"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = v.to_string();
    assert!(
        text.contains("--latency-sample 1") && text.contains("--duration"),
        "{text}"
    );
}

#[test]
fn one_physical_core_is_singular() {
    let mut pinned = std::process::Command::new("taskset");
    pinned
        .args(["-c", "0"])
        .arg(assert_cmd::cargo::cargo_bin("lockbench"))
        .args(["run", "--lock", "ticket", "--threads", "2"]);
    let err = common::stderr_of_failure(&mut assert_cmd::Command::from_std(pinned), 2);
    assert!(err.contains("only 1 physical core to place"), "{err}");
}

#[test]
fn the_mutant_table_aligns_long_names_and_says_how_hard_it_tried() {
    let out = lockbench()
        .args([
            "verify",
            "--mutants",
            "zehavi-kex-bounded",
            "--schedules",
            "20",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    // 20 schedules is a short budget: a mutant may survive it, and then the exit code says so.
    let survived = text.contains("SURVIVED");
    assert_eq!(out.status.code(), Some(i32::from(survived)), "{out:?}");
    let lines: Vec<&str> = text.lines().collect();
    let column = |line: &str, word: &str| line.find(word).map(|b| line[..b].chars().count());
    let at = column(lines[0], "result").unwrap();
    let rows: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| l.starts_with("zehavi-kex-bounded"))
        .collect();
    assert!(!rows.is_empty(), "{text}");
    for row in &rows {
        let verdict = ["killed", "equiv.", "SURVIVED"]
            .into_iter()
            .find_map(|w| column(row, w))
            .unwrap();
        assert_eq!(verdict, at, "misaligned:\n{text}");
    }
    assert!(
        lines[0].contains("seed") && lines[0].contains("depth"),
        "{text}"
    );
    // A row that was not killed shows what it explored, not a dash.
    for row in rows.iter().filter(|r| !r.contains("killed")) {
        // The schedules explored: the cell after the verdict (the line column has spaces).
        let cells: Vec<&str> = row.split_whitespace().collect();
        let verdict = cells
            .iter()
            .position(|c| ["equiv.", "SURVIVED"].contains(c))
            .unwrap();
        assert!(cells[verdict + 1].parse::<usize>().unwrap() > 0, "{row}");
    }
}

#[test]
fn the_message_passing_table_has_a_legend_with_units() {
    let out = lockbench()
        .args(["sim", "--algo", "token-gme", "--n", "3", "--requests", "5"])
        .args(["--seeds", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    for want in [
        "msg/req: messages",
        "wait: request → entry, simulated time units",
        "thrpt:",
    ] {
        assert!(text.contains(want), "{want}:\n{text}");
    }
    let legend = text.lines().skip_while(|l| !l.starts_with("n: processes"));
    assert!(legend.take(6).all(|l| l.chars().count() <= 110), "{text}");
}

#[test]
fn a_report_over_a_directory_is_bad_input_before_anything_is_read() {
    let tmp = tempfile::tempdir().unwrap();
    fs::copy(
        common::fixture_path("compare/a/results.json"),
        tmp.path().join("results.json"),
    )
    .unwrap();
    fs::create_dir(tmp.path().join("report.md")).unwrap();
    let err = common::stderr_of_failure(lockbench().arg("report").arg(tmp.path()), 2);
    assert!(err.contains("report.md"), "{err}");
    fs::remove_dir(tmp.path().join("report.md")).unwrap();
    // A file where a directory goes.
    fs::write(tmp.path().join("plots"), "").unwrap();
    let err = common::stderr_of_failure(lockbench().arg("report").arg(tmp.path()), 2);
    assert!(err.contains("plots"), "{err}");
    assert!(!tmp.path().join("report.html").exists());
}

#[test]
fn a_saved_in_line_prints_its_path_on_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("a\nb");
    let out = lockbench()
        .args([
            "run",
            "--lock",
            "ticket",
            "--threads",
            "1",
            "--passages",
            "200",
        ])
        .args(["--repeat", "1", "--warmup", "1ms", "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let saved = text
        .lines()
        .find(|l| l.starts_with("results saved in"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(saved.contains("a\\nb"), "{saved}");
}

#[test]
fn the_claims_table_fits_in_about_120_columns() {
    let out = lockbench()
        .args(["claims", "--paper", "002", "--quick"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let table: Vec<&str> = text
        .lines()
        .take_while(|l| !l.starts_with("claims, reasons"))
        .collect();
    assert!(table.len() > 3, "{text}");
    for line in table {
        assert!(
            line.chars().count() <= 120,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    // The whole text is still there, below the table.
    assert!(
        text.contains("claims, reasons, effort and checks:"),
        "{text}"
    );
}
