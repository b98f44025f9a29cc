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

/// One long option of a subcommand, as `lockbench SUB --help` shows it.
pub struct HelpOption {
    /// Its long name, without the dashes.
    pub long: String,
    /// Whether it takes a value (`--name <VALUE>`) or is a flag.
    pub takes_value: bool,
    /// The values it accepts when it has a closed list of them (clap's "possible values").
    pub choices: Vec<String>,
}

/// The long options of `lockbench SUB --help` (`--help` and `--version` left out), in the
/// order the help lists them, read from the binary: what a user sees is what is tested.
pub fn help_options(sub: &str) -> Vec<HelpOption> {
    let out = lockbench().args([sub, "--help"]).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let mut options: Vec<HelpOption> = Vec::new();
    let mut in_choices = false;
    for line in text.lines() {
        let t = line.trim_start();
        let indent = line.len() - t.len();
        let head = t.strip_prefix("-").and_then(|r| {
            // `--name ...` or `-x, --name ...`
            let r = r
                .strip_prefix('-')
                .or_else(|| r.split_once(", --").map(|(_, n)| n))?;
            Some(r)
        });
        if let (Some(rest), true) = (head, indent <= 6) {
            let long = rest.split([' ', '=']).next().unwrap().to_string();
            in_choices = false;
            if long != "help" && long != "version" {
                options.push(HelpOption {
                    long,
                    takes_value: rest.contains(" <"),
                    choices: Vec::new(),
                });
            }
            continue;
        }
        let Some(last) = options.last_mut() else {
            continue;
        };
        if let Some(list) = t.strip_prefix("[possible values: ") {
            let list = list.trim_end_matches(']');
            last.choices = list.split(", ").map(str::to_string).collect();
        } else if t == "Possible values:" {
            in_choices = true;
        } else if in_choices {
            match t.strip_prefix("- ") {
                Some(v) => {
                    let name = v.split(':').next().unwrap().trim();
                    last.choices.push(name.to_string());
                }
                None => in_choices = false,
            }
        }
    }
    assert!(!options.is_empty(), "no options read from `{sub} --help`");
    options
}
