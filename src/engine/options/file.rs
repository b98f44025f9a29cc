//! The config file under the command line: reading a TOML file of run options (every message
//! names the file, the key, what is expected and an example) and layering it beneath the options
//! given on the command line.

use std::collections::BTreeSet;
use std::path::Path;

use clap::Args as _;
use serde::Deserialize as _;

use super::{Origin, RunArgs};
use crate::error::{usage, UsageError};

/// An example of each key, as a config file writes it: quoted in messages about that key.
pub fn example(key: &str) -> &'static str {
    match key {
        "lock" => "lock = [\"ticket\", \"bwb-gme\"]",
        "threads" => "threads = [1, 2, 4]",
        "mix" => "mix = [\"single\", \"uniform:4\"]",
        "slots" => "slots = 16",
        "k" => "k = 2",
        "cs" => "cs = \"200ns\"",
        "think" => "think = \"1us\"",
        "cs-lines" => "cs-lines = 4",
        "duration" => "duration = \"2s\"",
        "passages" => "passages = 10000",
        "warmup" => "warmup = \"50ms\"",
        "repeat" => "repeat = 5",
        "baseline" => "baseline = \"ticket\"",
        "format" => "format = \"csv\"",
        "out" => "out = \"reports\"",
        "pin" => "pin = \"physical\"",
        "smt" => "smt = true",
        "cpus" => "cpus = \"0-15,32-47\"",
        "mem-policy" => "mem-policy = \"local\"",
        "oversubscribe" => "oversubscribe = true",
        "wait" => "wait = \"yield\"",
        "no-check" => "no-check = true",
        "oracle" => "oracle = \"counting\"",
        "latency-sample" => "latency-sample = 100",
        "trace" => "trace = true",
        "counters" => "counters = \"cycles,instructions\"",
        "stall-timeout" => "stall-timeout = \"10s\"",
        "seed" => "seed = 7",
        "rmr" => "rmr = \"cc\"",
        _ => "",
    }
}

/// Options that exclude each other: a config file may set one of each group, and one given on
/// the command line replaces the file's choice.
const EXCLUSIVE: [[&str; 2]; 2] = [["duration", "passages"], ["oracle", "no-check"]];

/// The long names of the run options, from clap's definition.
pub fn option_names() -> Vec<String> {
    RunArgs::augment_args(clap::Command::new("run"))
        .get_arguments()
        .filter_map(|a| a.get_long().map(str::to_string))
        .filter(|l| l != "help")
        .collect()
}

fn closest<'a>(key: &str, names: &'a [String]) -> Option<&'a str> {
    // The name with the longest common prefix, if it shares at least half of `key`.
    names
        .iter()
        .map(|n| {
            (
                n.chars()
                    .zip(key.chars())
                    .take_while(|(a, b)| a == b)
                    .count(),
                n,
            )
        })
        .filter(|(common, _)| *common * 2 >= key.len().max(2))
        .max_by_key(|(common, _)| *common)
        .map(|(_, n)| n.as_str())
}

/// Reads a config file into options; every message names the file, the key, what is expected
/// and an example.
fn load_file(path: &Path) -> Result<RunArgs, UsageError> {
    let text = crate::opts::io::read_text(path, crate::opts::io::CONFIG_CAP).map_err(|e| {
        UsageError(format!(
            "cannot read config {}: {e} (give a TOML file, e.g. bench-configs/smoke.toml)",
            path.display()
        ))
    })?;
    load_text(&text, path)
}

/// A parser's message on one line (TOML's may span several).
pub fn one_line(msg: &str) -> String {
    msg.split('\n')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// Reads config text into options; messages name `path`, where the text came from.
fn load_text(text: &str, path: &Path) -> Result<RunArgs, UsageError> {
    let file = path.display();
    let table: toml::Table = toml::from_str(text).map_err(|e| {
        let at = e
            .span()
            .map(|s| format!(" (line {})", text[..s.start].lines().count().max(1)))
            .unwrap_or_default();
        UsageError(format!(
            "malformed config {file}{at}: {}",
            one_line(e.message())
        ))
    })?;
    let names = option_names();
    let mut normalized = toml::Table::new();
    for (key, value) in table {
        let k = key.replace('_', "-");
        let k = if k == "rounds" {
            "repeat".to_string()
        } else {
            k
        };
        if k == "config" {
            return usage(format!(
                "malformed config {file}: key `config`: a config file cannot name another"
            ));
        }
        if !names.contains(&k) {
            let hint = closest(&k, &names)
                .map(|n| format!(" (did you mean `{n}`?)"))
                .unwrap_or_default();
            return usage(format!(
                "malformed config {file}: unknown key `{key}`{hint}; the keys are the long options of `lockbench run --help`"
            ));
        }
        // One key at a time, so a wrong value is reported with its key.
        let mut one = toml::Table::new();
        one.insert(k.clone(), value.clone());
        if let Err(e) = RunArgs::deserialize(toml::Value::Table(one)) {
            return usage(format!(
                "malformed config {file}: key `{k}`: {}; e.g. {}",
                e.message().trim_end().trim_end_matches(';'),
                example(&k)
            ));
        }
        if normalized.insert(k.clone(), value).is_some() {
            return usage(format!(
                "malformed config {file}: key `{k}` is set twice (as `{key}` and another spelling): keep one"
            ));
        }
    }
    for [a, b] in EXCLUSIVE {
        if normalized.contains_key(a) && normalized.contains_key(b) {
            return usage(format!(
                "malformed config {file}: it sets both `{a}` and `{b}`, which exclude each other: keep one"
            ));
        }
    }
    RunArgs::deserialize(toml::Value::Table(normalized))
        .map_err(|e| UsageError(format!("malformed config {file}: {}", e.message().trim())))
}

/// The options given, as a map of the keys set (unset options and false flags left out).
fn given(args: &RunArgs) -> serde_json::Map<String, serde_json::Value> {
    let mut map = match serde_json::to_value(args).expect("options serialise") {
        serde_json::Value::Object(m) => m,
        _ => unreachable!("options serialise as a map"),
    };
    map.retain(|_, v| !v.is_null() && *v != serde_json::Value::Bool(false));
    map
}

impl RunArgs {
    /// Layers the config file named by `--config` (if any) under the command line: a value on
    /// the command line replaces the file's, and an option of an exclusive pair (`--duration`
    /// / `--passages`, `--oracle` / `--no-check`) replaces the file's choice of either.
    pub fn layered(&self) -> Result<RunArgs, UsageError> {
        let Some(path) = &self.config else {
            return Ok(self.clone());
        };
        self.layered_over(load_file(path)?, path)
    }

    /// As [`RunArgs::layered`], with the config's text given (a sweep's shared config, read
    /// from the sweep file `path` that messages name): no file is written or read.
    pub fn layered_text(&self, text: &str, path: &Path) -> Result<RunArgs, UsageError> {
        self.layered_over(load_text(text, path)?, path)
    }

    fn layered_over(&self, file: RunArgs, path: &Path) -> Result<RunArgs, UsageError> {
        let mut map = given(&file);
        let cli = given(self);
        for group in EXCLUSIVE {
            if group.iter().any(|k| cli.contains_key(*k)) {
                for k in group {
                    map.remove(k);
                }
            }
        }
        let mut from_file: BTreeSet<String> = map.keys().cloned().collect();
        for (k, v) in cli {
            from_file.remove(&k);
            map.insert(k, v);
        }
        let mut merged: RunArgs = serde_json::from_value(serde_json::Value::Object(map))
            .map_err(|e| UsageError(format!("config {}: {e}", path.display())))?;
        merged.config = Some(path.to_path_buf());
        merged.origin = Origin {
            file: Some(path.to_path_buf()),
            from_file,
        };
        Ok(merged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_name() {
        let names = option_names();
        assert_eq!(closest("thread", &names), Some("threads"));
        assert_eq!(closest("zzz", &names), None);
    }
}
