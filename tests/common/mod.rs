//! What the integration tests share: running the `lockbench` binary, reading what it printed
//! (JSON on stdout, the message of a refusal on stderr), the fixtures under `tests/fixtures`,
//! and the `results.json` a run leaves behind.
//!
//! Every test file includes this module and uses part of it; the rest is unused there, hence
//! the `dead_code` allowance.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

/// The `lockbench` binary of this build, ready for arguments.
pub fn lockbench() -> Command {
    Command::cargo_bin("lockbench").unwrap()
}

/// A file or directory under `tests/fixtures` (`compare/a`, `rmr-sample/pmu`, `sysfs/vm`).
pub fn fixture_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// Runs `cmd`, asserts that it succeeded, and parses its stdout as JSON.
pub fn stdout_json(cmd: &mut Command) -> Value {
    let out = cmd.assert().success().get_output().stdout.clone();
    serde_json::from_slice(&out).unwrap()
}

/// `lockbench args`, which must succeed, its stdout parsed as JSON.
pub fn json_of(args: &[&str]) -> Value {
    stdout_json(lockbench().args(args))
}

/// The runs of `lockbench sim args --format json`, which must succeed.
pub fn sim_runs(args: &[&str]) -> Vec<Value> {
    let mut all = vec!["sim"];
    all.extend_from_slice(args);
    all.extend(["--format", "json"]);
    json_of(&all).as_array().expect("a JSON array").clone()
}

/// Runs `cmd`, asserts exit `code` with nothing on stdout, and returns stderr.
pub fn stderr_of_failure(cmd: &mut Command, code: i32) -> String {
    let out = cmd.assert().code(code).get_output().clone();
    assert!(out.stdout.is_empty(), "nothing on stdout on bad input");
    String::from_utf8(out.stderr).unwrap()
}

/// Runs `lockbench args --out DIR`, DIR inside a fresh temporary directory, and asserts exit 2,
/// no panic and nothing written to DIR; returns stderr (the refusal's message).
pub fn refused_with_out(args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let out = lockbench()
        .args(args)
        .arg("--out")
        .arg(&out_dir)
        .assert()
        .code(2)
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!err.contains("panicked"), "{err}");
    assert!(!out_dir.exists(), "nothing written for bad input {args:?}");
    err
}

/// A JSON file, parsed.
pub fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// The run objects of the `results.json` in `dir`.
pub fn results(dir: &Path) -> Vec<Value> {
    serde_json::from_value(read_json(&dir.join("results.json"))).unwrap()
}
