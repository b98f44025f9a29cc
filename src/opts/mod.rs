//! The options several commands share, each declared once: `--lock`, `--threads`, `--seed`,
//! `--format` and `--out`, and the one output-format type. A command flattens the groups it
//! takes (`#[command(flatten)]`) and gives each its own default and meaning in its help; the
//! run options ([`crate::engine::options::RunArgs`]) flatten them too, so a config file's keys
//! are the same names.
//!
//! These sit at the bottom of the house, beside [`crate::error`], because every command and the
//! engine read them and they import nothing above them.

pub mod de;

use std::path::PathBuf;

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::error::UsageError;

/// Output formats: one type for every command; each command says which ones it writes and
/// refuses the others ([`FormatOpt::pick`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// Aligned table (or readable text) with units.
    #[value(alias = "text")]
    Table,
    /// JSON (the machine-readable contract).
    Json,
    /// One CSV row per result.
    Csv,
    /// Markdown table.
    Md,
}

impl Format {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::Table => "table",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Md => "md",
        }
    }
}

/// `--lock`.
#[derive(Args, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockOpt {
    /// Locks: comma-separated names (`lockbench list` shows them), or `all` (each command's
    /// help says which locks `all` means and what it runs when none is given).
    #[arg(long, value_delimiter = ',')]
    #[serde(default, deserialize_with = "de::names")]
    pub lock: Option<Vec<String>>,
}

impl LockOpt {
    /// The names given (trimmed), or `default`.
    pub fn names_or(&self, default: &[&str]) -> Vec<String> {
        match &self.lock {
            Some(v) => v.iter().map(|s| s.trim().to_string()).collect(),
            None => default.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// The one name a command that takes a single lock was given, if any; several are a usage
    /// error.
    pub fn one(&self, command: &str) -> Result<Option<String>, UsageError> {
        match self.lock.as_deref() {
            None => Ok(None),
            Some([one]) => Ok(Some(one.trim().to_string())),
            Some(_) => Err(UsageError(format!(
                "`{command}` takes one --lock: give one name"
            ))),
        }
    }
}

/// `--threads`.
#[derive(Args, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadsOpt {
    /// Thread (process) counts, comma-separated (each command's help gives its default).
    #[arg(long, value_delimiter = ',')]
    #[serde(default, deserialize_with = "de::counts")]
    pub threads: Option<Vec<usize>>,
}

impl ThreadsOpt {
    /// The counts given, or `default`.
    pub fn counts_or(&self, default: &[usize]) -> Vec<usize> {
        self.threads.clone().unwrap_or_else(|| default.to_vec())
    }

    /// The one count a command that runs a single process count was given, if any; several
    /// are a usage error.
    pub fn one(&self, command: &str) -> Result<Option<usize>, UsageError> {
        match self.threads.as_deref() {
            None => Ok(None),
            Some([one]) => Ok(Some(*one)),
            Some(_) => Err(UsageError(format!(
                "`{command}` takes one --threads count: give one number"
            ))),
        }
    }
}

/// `--format`.
#[derive(Args, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FormatOpt {
    /// Output format: table, json, csv or md (each command's help says which it writes;
    /// default table).
    #[arg(long, value_enum)]
    #[serde(default)]
    pub format: Option<Format>,
}

impl FormatOpt {
    /// The format asked for, or `default`; a format `command` does not write is a usage error
    /// that names the ones it does.
    pub fn pick(
        &self,
        command: &str,
        writes: &[Format],
        default: Format,
    ) -> Result<Format, UsageError> {
        let f = self.format.unwrap_or(default);
        if writes.contains(&f) {
            return Ok(f);
        }
        let names: Vec<&str> = writes.iter().map(|w| w.name()).collect();
        Err(UsageError(format!(
            "`{command}` does not write --format {}: use {}",
            f.name(),
            names.join(" or ")
        )))
    }
}

/// `--out`.
#[derive(Args, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutOpt {
    /// Where results are written (a directory unless the command's help says otherwise).
    #[arg(long)]
    #[serde(default)]
    pub out: Option<PathBuf>,
}

/// `--seed`.
#[derive(Args, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeedOpt {
    /// Seed of everything random the command does (its default is in the command's help
    /// text, 1 where not said).
    #[arg(long)]
    #[serde(default)]
    pub seed: Option<u64>,
}

impl SeedOpt {
    /// The seed given, or `default`.
    pub fn get(&self, default: u64) -> u64 {
        self.seed.unwrap_or(default)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pick_refuses_a_format_the_command_does_not_write() {
        let f = FormatOpt {
            format: Some(Format::Csv),
        };
        let e = f
            .pick("list", &[Format::Table, Format::Json], Format::Table)
            .unwrap_err();
        assert_eq!(e.0, "`list` does not write --format csv: use table or json");
        assert_eq!(
            FormatOpt::default()
                .pick("list", &[Format::Table, Format::Json], Format::Json)
                .unwrap(),
            Format::Json
        );
    }
}
