//! Run options layered: defaults, then a TOML config file, then the command line.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::cli::{OracleArg, RunArgs, WaitArg};
use crate::report::Format;
use crate::runner::exec::StopRule;
use crate::runner::topology::PinMode;
use crate::workload::{parse_duration, Mix};

/// Bad input: the user can act on it. Exits with code 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Shorthand for a usage error.
pub fn usage<T>(msg: impl Into<String>) -> Result<T, UsageError> {
    Err(UsageError(msg.into()))
}

/// One value or a list (`mix = "single"` or `mix = ["single", "uniform:4"]`).
#[derive(Deserialize, Debug, Clone)]
#[serde(untagged)]
pub enum OneOrMany<T> {
    /// A single value.
    One(T),
    /// A list.
    Many(Vec<T>),
}

impl<T> OneOrMany<T> {
    fn into_vec(self) -> Vec<T> {
        match self {
            OneOrMany::One(v) => vec![v],
            OneOrMany::Many(v) => v,
        }
    }
}

/// A config file: the options of `run`, all optional.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ConfigFile {
    /// Locks (`"all"` or names).
    pub lock: Option<OneOrMany<String>>,
    /// Thread counts.
    pub threads: Option<OneOrMany<usize>>,
    /// Mixes.
    pub mix: Option<OneOrMany<String>>,
    /// Lock size (processes) beyond the thread count.
    pub slots: Option<usize>,
    /// k.
    pub k: Option<usize>,
    /// CS duration.
    pub cs: Option<String>,
    /// Think duration.
    pub think: Option<String>,
    /// Shared lines in the CS.
    #[serde(alias = "cs_lines")]
    pub cs_lines: Option<usize>,
    /// Duration.
    pub duration: Option<String>,
    /// Passages per thread.
    pub passages: Option<u64>,
    /// Warm-up.
    pub warmup: Option<String>,
    /// Repetitions.
    pub repeat: Option<usize>,
    /// Baseline lock.
    pub baseline: Option<String>,
    /// Output format.
    pub format: Option<Format>,
    /// Results directory.
    pub out: Option<PathBuf>,
    /// Pinning.
    pub pin: Option<PinModeName>,
    /// SMT siblings.
    pub smt: Option<bool>,
    /// Oversubscription.
    pub oversubscribe: Option<bool>,
    /// Wait policy.
    pub wait: Option<WaitArg>,
    /// Safety oracle on (false: as `oracle = "none"`).
    pub check: Option<bool>,
    /// Which safety oracle.
    pub oracle: Option<OracleArg>,
    /// Tracing.
    pub trace: Option<bool>,
    /// Latency sampling (every N-th passage).
    pub latency_sample: Option<u64>,
    /// Counters.
    pub counters: Option<String>,
    /// Stall timeout.
    #[serde(alias = "stall_timeout")]
    pub stall_timeout: Option<String>,
    /// Seed.
    pub seed: Option<u64>,
    /// RMR model to count under (`run --rmr`).
    pub rmr: Option<crate::mem::Model>,
}

/// Pin mode as written in a config file.
#[derive(Deserialize, Debug, Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub enum PinModeName {
    /// Physical cores first.
    Physical,
    /// Logical CPUs in id order.
    Logical,
    /// No pinning.
    None,
}

impl From<PinModeName> for PinMode {
    fn from(p: PinModeName) -> PinMode {
        match p {
            PinModeName::Physical => PinMode::Physical,
            PinModeName::Logical => PinMode::Logical,
            PinModeName::None => PinMode::None,
        }
    }
}

impl ConfigFile {
    /// Reads and parses a config file.
    pub fn load(path: &Path) -> Result<ConfigFile, UsageError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| UsageError(format!("cannot read config {}: {e}", path.display())))?;
        toml::from_str(&text).map_err(|e| {
            let msg = e.message().to_string();
            let at = e
                .span()
                .map(|s| {
                    let line = text[..s.start].lines().count().max(1);
                    format!(" (line {line})")
                })
                .unwrap_or_default();
            UsageError(format!("malformed config {}{at}: {msg}", path.display()))
        })
    }
}

/// Measured time of each run in each round, by default.
pub const DEFAULT_DURATION: &str = "200ms";
/// Warm-up of each run, by default.
pub const DEFAULT_WARMUP: &str = "50ms";
/// Rounds, by default: enough for a 94% interval of each paired ratio.
pub const DEFAULT_ROUNDS: usize = 5;

/// The options of `run` after layering, parsed and validated.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Lock names as asked (`all` expanded later, per mix).
    pub locks: Vec<String>,
    /// Thread counts (None: the default, 1 and every physical core).
    pub threads: Option<Vec<usize>>,
    /// Mixes.
    pub mixes: Vec<Mix>,
    /// Processes each lock is built for, when more than the threads.
    pub slots: Option<usize>,
    /// k for k-exclusion.
    pub k: usize,
    /// k was given explicitly.
    pub k_given: bool,
    /// CS busy work.
    pub cs: Duration,
    /// Think busy work.
    pub think: Duration,
    /// Shared lines touched in the CS.
    pub cs_lines: usize,
    /// Stop rule.
    pub stop: StopRule,
    /// Warm-up.
    pub warmup: Duration,
    /// Repetitions.
    pub repeat: usize,
    /// Baseline.
    pub baseline: String,
    /// Output format.
    pub format: Format,
    /// Results root.
    pub out: PathBuf,
    /// Pinning.
    pub pin: PinMode,
    /// Use SMT siblings.
    pub smt: bool,
    /// Allow oversubscription.
    pub oversubscribe: bool,
    /// Wait policy, if given.
    pub wait: Option<WaitArg>,
    /// Run an oracle (false: `oracle` is `None`).
    pub check: bool,
    /// Which oracle.
    pub oracle: OracleArg,
    /// Trace passages.
    pub trace: bool,
    /// Time one passage in N at random (None: chosen for this machine).
    pub latency_sample: Option<u64>,
    /// Counter list as given (None: defaults).
    pub counters: Option<String>,
    /// Stall timeout.
    pub stall_timeout: Duration,
    /// Seed.
    pub seed: u64,
    /// Count RMRs under this model (runs on the counting memory).
    pub rmr: Option<crate::mem::Model>,
}

fn duration(what: &str, s: &str) -> Result<Duration, UsageError> {
    parse_duration(s).map_err(|e| UsageError(format!("--{what} {s:?}: {e}")))
}

impl RunOptions {
    /// Layers defaults, the config file named by `args.config` (if any) and `args`.
    pub fn resolve(args: &RunArgs) -> Result<RunOptions, UsageError> {
        let file = match &args.config {
            Some(path) => ConfigFile::load(path)?,
            None => ConfigFile::default(),
        };
        let locks = args
            .lock
            .clone()
            .or(file.lock.map(OneOrMany::into_vec))
            .unwrap_or_else(|| vec!["all".into()]);
        let locks: Vec<String> = locks
            .iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        if locks.is_empty() {
            return usage("--lock is empty: name locks (see `lockbench list`) or use all");
        }
        let threads = args
            .threads
            .clone()
            .or(file.threads.map(OneOrMany::into_vec));
        if let Some(t) = &threads {
            if t.is_empty() || t.contains(&0) {
                return usage("--threads must be at least 1 (e.g. --threads 1,2,4)");
            }
        }
        let mixes = args
            .mix
            .clone()
            .or(file.mix.map(OneOrMany::into_vec))
            .unwrap_or_else(|| vec!["distinct".into()]);
        let mixes = mixes
            .iter()
            .map(|m| {
                m.parse::<Mix>()
                    .map_err(|e| UsageError(format!("--mix {m:?}: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let k_given = args.k.or(file.k).is_some();
        let k = args.k.or(file.k).unwrap_or(1);
        if k == 0 {
            return usage("--k must be at least 1 (the number of processes a k-exclusion lock admits together)");
        }
        let cs = duration(
            "cs",
            args.cs.as_deref().or(file.cs.as_deref()).unwrap_or("0"),
        )?;
        let think = duration(
            "think",
            args.think
                .as_deref()
                .or(file.think.as_deref())
                .unwrap_or("0"),
        )?;
        let passages = args.passages.or(if args.duration.is_some() {
            None
        } else {
            file.passages
        });
        let stop = match (
            passages,
            args.duration.as_deref().or(file.duration.as_deref()),
        ) {
            (Some(0), _) => return usage("--passages must be at least 1"),
            (Some(n), _) => StopRule::Passages(n),
            (None, d) => {
                let d = duration("duration", d.unwrap_or(DEFAULT_DURATION))?;
                if d.is_zero() {
                    return usage("--duration must be longer than 0 (e.g. --duration 2s)");
                }
                StopRule::Duration(d)
            }
        };
        let warmup = duration(
            "warmup",
            args.warmup
                .as_deref()
                .or(file.warmup.as_deref())
                .unwrap_or(DEFAULT_WARMUP),
        )?;
        let repeat = args.repeat.or(file.repeat).unwrap_or(DEFAULT_ROUNDS);
        if repeat == 0 {
            return usage("--repeat must be at least 1");
        }
        let stall_timeout = duration(
            "stall-timeout",
            args.stall_timeout
                .as_deref()
                .or(file.stall_timeout.as_deref())
                .unwrap_or("10s"),
        )?;
        if stall_timeout.is_zero() {
            return usage("--stall-timeout must be longer than 0 (e.g. 10s)");
        }
        let latency_sample = args.latency_sample.or(file.latency_sample);
        if latency_sample == Some(0) {
            return usage(
                "--latency-sample 0: time one passage in N, N at least 1 (1 times every passage)",
            );
        }
        if file.check == Some(false) && matches!(file.oracle, Some(o) if o != OracleArg::None) {
            return usage(
                "the config sets check = false and an oracle: keep one of them (oracle = \"none\" is check = false)",
            );
        }
        // The command line wins over the file; `--no-check` is `--oracle none`.
        let oracle = match (args.no_check, args.oracle, file.oracle, file.check) {
            (true, _, _, _) => OracleArg::None,
            (false, Some(o), _, _) | (false, None, Some(o), _) => o,
            (false, None, None, Some(false)) => OracleArg::None,
            (false, None, None, _) => OracleArg::Auto,
        };
        let slots = args.slots.or(file.slots);
        if slots == Some(0) {
            return usage("--slots must be at least 1 (the processes a lock is built for)");
        }
        Ok(RunOptions {
            slots,
            locks,
            threads,
            mixes,
            k,
            k_given,
            cs,
            think,
            cs_lines: args.cs_lines.or(file.cs_lines).unwrap_or(0),
            stop,
            warmup,
            repeat,
            baseline: args
                .baseline
                .clone()
                .or(file.baseline)
                .unwrap_or_else(|| "ticket".into()),
            format: args.format.or(file.format).unwrap_or(Format::Table),
            out: args
                .out
                .clone()
                .or(file.out)
                .unwrap_or_else(|| PathBuf::from("reports")),
            pin: args
                .pin
                .or(file.pin.map(Into::into))
                .unwrap_or(PinMode::Physical),
            smt: args.smt || file.smt.unwrap_or(false),
            oversubscribe: args.oversubscribe || file.oversubscribe.unwrap_or(false),
            wait: args.wait.or(file.wait),
            check: oracle != OracleArg::None,
            oracle,
            trace: args.trace || file.trace.unwrap_or(false),
            latency_sample,
            counters: args.counters.clone().or(file.counters),
            stall_timeout,
            seed: args.seed.or(file.seed).unwrap_or(1),
            rmr: args.rmr.or(file.rmr),
        })
    }
}
