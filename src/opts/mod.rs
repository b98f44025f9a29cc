//! The options several commands share, each declared once (`--lock`, `--threads`, `--seed`,
//! `--format`, `--out`, `--k`, `--mix`, `--passages`, `--duration`, …), and the one output-format
//! type. A command flattens the groups it takes (`#[command(flatten)]`) and says in its help
//! what each means there and its default (`#[command(mut_arg(..))]`); the
//! run options (`RunArgs`, in `src/engine/options/`) flatten them too, so a config file's keys
//! are the same names.
//!
//! These sit at the bottom of the house, beside [`crate::error`], because every command and the
//! engine read them and they import nothing above them.

pub mod de;
pub mod io;
pub mod out;

use std::path::PathBuf;

use clap::Args;
use serde::{Deserialize, Serialize};

pub use de::Dur;

use crate::error::UsageError;
use crate::workload::Mix;

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

/// The one value of a list option that a command takes once: none when the option was not
/// given, the value when it was given once, else the usage error `why` says.
pub fn only_one<T: Clone>(
    given: Option<&[T]>,
    why: impl FnOnce() -> String,
) -> Result<Option<T>, UsageError> {
    match given {
        None => Ok(None),
        Some([one]) => Ok(Some(one.clone())),
        Some(_) => Err(UsageError(why())),
    }
}

/// `--lock`.
#[derive(Args, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
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
        let one = only_one(self.lock.as_deref(), || {
            format!("`{command}` takes one --lock: give one name")
        })?;
        Ok(one.map(|s| s.trim().to_string()))
    }
}

/// `--threads`.
#[derive(Args, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
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
        only_one(self.threads.as_deref(), || {
            format!("`{command}` takes one --threads count: give one number")
        })
    }
}

/// `--k`.
#[derive(Args, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct KOpt {
    /// Capacity: how many processes may be inside together. Of a k-exclusion lock for `run`,
    /// `verify` and `rmr` (one value); of each closed neighbourhood for lkcs in `sim` and
    /// `mp-run` (one value, or one per process, comma-separated).
    #[arg(long, value_delimiter = ',')]
    #[serde(default, deserialize_with = "de::counts")]
    pub k: Option<Vec<usize>>,
}

impl KOpt {
    /// The one capacity a command that takes a single one was given, if any; several are a
    /// usage error naming the option as `name`.
    pub fn one(&self, name: &str) -> Result<Option<usize>, UsageError> {
        only_one(self.k.as_deref(), || {
            format!("{name} takes one capacity (a sweep's `k` may be a list)")
        })
    }
}

/// `--mix`.
#[derive(Args, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct MixOpt {
    /// Session mix: which group (session) each request asks for: single, distinct, uniform:M,
    /// hot:M:A,B, zipf:M:S, fixed:M, rw:P. `run` takes several (repeat the flag; default
    /// distinct: every thread its own session); `sim` and `mp-run` one (default: their --hot).
    #[arg(long)]
    #[serde(default, deserialize_with = "de::mixes")]
    pub mix: Option<Vec<Mix>>,
}

/// `--passages`.
#[derive(Args, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct PassagesOpt {
    /// Passages per thread (process); each command's help says what else it stops on.
    #[arg(long)]
    #[serde(default)]
    pub passages: Option<u64>,
}

/// `--cs-steps`.
#[derive(Args, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct CsStepsOpt {
    /// Scheduling steps each process spends inside the critical section (default 2).
    #[arg(long)]
    #[serde(default)]
    pub cs_steps: Option<usize>,
}

impl CsStepsOpt {
    /// The steps given, or 2.
    pub fn get(&self) -> usize {
        self.cs_steps.unwrap_or(2)
    }
}

/// `--duration` and `--warmup`: the measured window of each run in each round, and the
/// warm-up before it.
#[derive(Args, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct WindowOpt {
    /// Measure for this long per run (or loop) and round, e.g. 2s (default 200ms).
    #[arg(long)]
    #[serde(default)]
    pub duration: Option<Dur>,
    /// Warm-up before measuring (default 50ms).
    #[arg(long)]
    #[serde(default)]
    pub warmup: Option<Dur>,
}

/// `--oracle` and `--latency-sample`: how the harness's passage loop checks and times.
#[derive(Args, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct LoopOpt {
    /// Safety oracle: auto (the sampled self-check for mutual exclusion, counting for GME and
    /// k-exclusion), sampled, self-check, counting or none (default auto).
    #[arg(long, value_enum)]
    #[serde(default, serialize_with = "de::choice")]
    pub oracle: Option<OracleArg>,
    /// Time one passage in N, chosen at random (geometric gaps, so no aliasing with periodic
    /// hand-offs); 1 times every passage. Default: N such that timing costs at most 0.5 ns per
    /// passage on average on this machine. Throughput is unaffected.
    #[arg(long)]
    #[serde(default)]
    pub latency_sample: Option<u64>,
}

/// `--rounds`.
#[derive(Args, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct RoundsOpt {
    /// Rounds (each command's help says what one round measures and its default).
    #[arg(long)]
    #[serde(default)]
    pub rounds: Option<usize>,
}

impl RoundsOpt {
    /// The rounds given, or `default`.
    pub fn get(&self, default: usize) -> usize {
        self.rounds.unwrap_or(default)
    }
}

/// `--calibration`.
#[derive(Args, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct CalibrationOpt {
    /// A calibration saved by `lockbench calibrate` (each command's help gives its default).
    #[arg(long)]
    #[serde(default)]
    pub calibration: Option<PathBuf>,
}

/// `--trace`.
#[derive(Args, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct TraceOpt {
    /// Trace every passage or event: `run` checks FCFS, concurrent entry and FIFE from the
    /// trace of every passage; `sim` prints every simulated event to stderr (for small runs).
    #[arg(long)]
    #[serde(default)]
    pub trace: bool,
}

/// `--format`.
#[derive(Args, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
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
#[serde(rename_all = "kebab-case")]
pub struct OutOpt {
    /// Where results are written (a directory unless the command's help says otherwise).
    #[arg(long)]
    #[serde(default)]
    pub out: Option<PathBuf>,
}

/// `--seed`.
#[derive(Args, Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
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

/// How waiting threads wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WaitArg {
    /// Spin with a spin-loop hint (right when each thread has its own core).
    Spin,
    /// Spin a little, then yield the CPU between tries (right when oversubscribed).
    Yield,
}

/// Which safety oracle runs check with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OracleArg {
    /// The sampled self-check for mutual exclusion (and k = 1), the counting oracle for GME
    /// and k-exclusion.
    Auto,
    /// The self-check on sampled passages (the timed ones and about one other in 256), and one
    /// plain load of its owner word on every other: sees a passage entering while a sampled one
    /// is inside, for almost nothing per passage. Mutual exclusion and k = 1 (GME: self-check).
    Sampled,
    /// Plain loads and stores in every critical section: an id (GME: the session) written on
    /// entry and read back before exit, and a shared checksum compared at the end.
    SelfCheck,
    /// Atomic counts of who is inside, on a line of the oracle's own: exact, and the source of
    /// the concurrency figures, at the cost of two atomic read-modify-writes per passage.
    Counting,
    /// No check (as --no-check).
    None,
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
