//! The options of `run`, defined once: [`RunArgs`] is both the command line (clap derive) and
//! the TOML config file (serde derive, keys spelled as the long options, `-` or `_`). Layering
//! (defaults, then the file, then the command line) is [`RunArgs::layered`]; every value then
//! passes one validation ([`RunArgs::validate`]) against one table of limits ([`Limits`]),
//! before anything runs or is written.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use clap::{Args, ValueEnum};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::cli::{OracleArg, WaitArg};
use crate::error::{usage, UsageError};
use crate::report::Format;
use crate::runner::exec::{StopRule, WATCHDOG_POLL};
use crate::runner::topology::PinMode;
use crate::workload::{format_duration, parse_duration, Mix};

/// Measured time of each run in each round, by default.
pub const DEFAULT_DURATION: &str = "200ms";
/// Warm-up of each run, by default.
pub const DEFAULT_WARMUP: &str = "50ms";
/// Rounds, by default: enough for a 94% interval of each paired ratio.
pub const DEFAULT_ROUNDS: usize = 5;
/// Stall timeout, by default.
pub const DEFAULT_STALL_TIMEOUT: &str = "10s";

/// A duration as typed (`0`, `200ns`, `1.5ms`, `2s`): parsed on the command line and in a
/// config file alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Dur(pub Duration);

impl FromStr for Dur {
    type Err = String;
    fn from_str(s: &str) -> Result<Dur, String> {
        parse_duration(s).map(Dur)
    }
}

impl std::fmt::Display for Dur {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&format_duration(self.0))
    }
}

impl Serialize for Dur {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Dur, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Dur;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a duration as a string with its unit")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Dur, E> {
                s.parse().map_err(E::custom)
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Dur, E> {
                if v == 0 {
                    Ok(Dur(Duration::ZERO))
                } else {
                    Err(E::custom(format!(
                        "the number {v} has no unit (write it as a string: \"{v}ms\")"
                    )))
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// Serde helpers: one value or a list, and enums written by their command-line names.
mod de {
    use super::*;

    /// A list, or one value standing for a list of one; strings of names are split at commas
    /// when `split` (as `--lock a,b`).
    fn list<'de, D, T>(
        d: D,
        what: &'static str,
        split: bool,
        numbers: bool,
    ) -> Result<Option<Vec<T>>, D::Error>
    where
        D: Deserializer<'de>,
        T: Deserialize<'de> + FromStr,
        T::Err: std::fmt::Display,
    {
        struct V<T> {
            what: &'static str,
            split: bool,
            numbers: bool,
            _t: std::marker::PhantomData<T>,
        }
        impl<'de, T> serde::de::Visitor<'de> for V<T>
        where
            T: Deserialize<'de> + FromStr,
            T::Err: std::fmt::Display,
        {
            type Value = Vec<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(self.what)
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Vec<T>, E> {
                let parts: Vec<&str> = if self.split {
                    s.split(',').collect()
                } else {
                    vec![s]
                };
                parts
                    .into_iter()
                    .map(|p| {
                        p.trim().parse::<T>().map_err(|e| {
                            if self.numbers {
                                E::custom(format!(
                                    "`{p}` is not a whole number; expected {}",
                                    self.what
                                ))
                            } else {
                                E::custom(e)
                            }
                        })
                    })
                    .collect()
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Vec<T>, E> {
                if !self.numbers {
                    return Err(E::custom(format!(
                        "expected {}, found the number {v}",
                        self.what
                    )));
                }
                self.visit_str(&v.to_string())
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Vec<T>, E> {
                if !self.numbers {
                    return Err(E::custom(format!(
                        "expected {}, found the number {v}",
                        self.what
                    )));
                }
                self.visit_str(&v.to_string())
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Vec<T>, A::Error> {
                let mut v = Vec::new();
                while let Some(x) = a.next_element::<T>()? {
                    v.push(x);
                }
                Ok(v)
            }
        }
        d.deserialize_any(V {
            what,
            split,
            numbers,
            _t: std::marker::PhantomData,
        })
        .map(Some)
    }

    pub fn names<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
        list(d, "a name or a list of names (strings)", true, false)
    }

    pub fn counts<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<usize>>, D::Error> {
        list(
            d,
            "a whole number at least 1 or a list of them",
            false,
            true,
        )
    }

    pub fn mixes<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<Mix>>, D::Error> {
        list(d, "a mix or a list of mixes (strings)", false, false)
    }

    /// An enum by its command-line name (`--pin physical`).
    pub fn choice<S: Serializer, T: ValueEnum>(v: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
        match v.as_ref().and_then(|v| v.to_possible_value()) {
            Some(p) => s.serialize_str(p.get_name()),
            None => s.serialize_none(),
        }
    }
}

/// Where each option's value came from, so messages name what the user wrote: `--cs-lines`,
/// or `cs-lines in FILE`.
#[derive(Clone, Debug, Default)]
pub struct Origin {
    /// The config file, if any.
    pub file: Option<PathBuf>,
    /// Keys whose value came from the file.
    pub from_file: BTreeSet<String>,
}

/// Options of `run`, all optional here (the defaults are applied by the accessors), on the
/// command line as `--key value` and in a config file (`--config FILE.toml`) as `key = value`;
/// the command line wins. This struct is the only definition of a run option: add one here,
/// with its doc (the `--help` text), its example ([`example`]) and its limit ([`Limits`]).
#[derive(Args, Serialize, Deserialize, Debug, Default, Clone)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RunArgs {
    /// Locks to run: comma-separated names, or `all` (every safe lock fitting the mix).
    #[arg(long, value_delimiter = ',')]
    #[serde(default, deserialize_with = "de::names")]
    pub lock: Option<Vec<String>>,
    /// Thread counts to run, comma-separated (default: 1 and every physical core).
    #[arg(long, value_delimiter = ',')]
    #[serde(default, deserialize_with = "de::counts")]
    pub threads: Option<Vec<usize>>,
    /// Session mix; repeat the flag for several: single, distinct, uniform:M, hot:M:A,B,
    /// zipf:M:S, fixed:M, rw:P (default distinct: every thread its own session).
    #[arg(long)]
    #[serde(default, deserialize_with = "de::mixes")]
    pub mix: Option<Vec<Mix>>,
    /// Build every lock for this many processes even when fewer threads run (the others stay
    /// idle): the cost of a lock's size on an uncontended passage (default: the thread count).
    #[arg(long)]
    pub slots: Option<usize>,
    /// Capacity of k-exclusion locks (default 1).
    #[arg(long)]
    pub k: Option<usize>,
    /// Busy work inside the critical section, e.g. 0, 200ns, 1us (default 0).
    #[arg(long)]
    pub cs: Option<Dur>,
    /// Busy work between passages (default 0).
    #[arg(long)]
    pub think: Option<Dur>,
    /// Shared cache lines read and written in each critical section (default 0).
    #[arg(long)]
    pub cs_lines: Option<usize>,
    /// Measure for this long per run and round, e.g. 2s (default 200ms).
    #[arg(long, conflicts_with = "passages")]
    pub duration: Option<Dur>,
    /// Instead of a duration, measure this many passages per thread.
    #[arg(long)]
    pub passages: Option<u64>,
    /// Warm-up before measuring (default 50ms).
    #[arg(long)]
    pub warmup: Option<Dur>,
    /// Rounds: every (lock, configuration) runs once per round, in a shuffled order, so drift
    /// of a shared machine hits every lock alike; ratios to the baseline are paired within a
    /// round and reported as a median with a confidence interval (default 5).
    #[arg(long, visible_alias = "rounds")]
    #[serde(alias = "rounds")]
    pub repeat: Option<usize>,
    /// Lock every other is compared with (default ticket).
    #[arg(long)]
    pub baseline: Option<String>,
    /// Output format (default table).
    #[arg(long, value_enum)]
    #[serde(serialize_with = "de::choice")]
    pub format: Option<Format>,
    /// Directory results are saved under (default reports/).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// TOML file of options: the long options as keys (see bench-configs/).
    #[arg(long)]
    #[serde(skip)]
    pub config: Option<PathBuf>,
    /// Thread placement: physical cores first, logical CPUs in id order, or no pinning
    /// (default physical).
    #[arg(long, value_enum)]
    #[serde(serialize_with = "de::choice")]
    pub pin: Option<PinMode>,
    /// Also place threads on SMT siblings (after every physical core is used).
    #[arg(long)]
    #[serde(default)]
    pub smt: bool,
    /// Allow more threads than CPUs (the wait policy then defaults to yield).
    #[arg(long)]
    #[serde(default)]
    pub oversubscribe: bool,
    /// How waiting threads wait (default spin; yield when oversubscribed).
    #[arg(long, value_enum)]
    #[serde(serialize_with = "de::choice")]
    pub wait: Option<WaitArg>,
    /// Remove the safety oracle from timed runs (as --oracle none).
    #[arg(long, conflicts_with = "oracle")]
    #[serde(default)]
    pub no_check: bool,
    /// Safety oracle: auto (the sampled self-check for mutual exclusion, counting for GME and
    /// k-exclusion), sampled, self-check, counting or none (default auto).
    #[arg(long, value_enum)]
    #[serde(serialize_with = "de::choice")]
    pub oracle: Option<OracleArg>,
    /// Time one passage in N, chosen at random (geometric gaps, so no aliasing with periodic
    /// hand-offs); 1 times every passage. Default: N such that timing costs at most 0.5 ns per
    /// passage on average on this machine. Throughput is unaffected.
    #[arg(long)]
    pub latency_sample: Option<u64>,
    /// Trace every passage and check FCFS, concurrent entry and FIFE from the trace.
    #[arg(long)]
    #[serde(default)]
    pub trace: bool,
    /// Counters to read: names (cycles, instructions, cache-misses, l1d-read-misses,
    /// context-switches, task-clock, ...) or raw codes (r0443); `none` for no counters.
    #[arg(long)]
    pub counters: Option<String>,
    /// Stop a run with no progress for this long and report it stalled (default 10s).
    #[arg(long)]
    pub stall_timeout: Option<Dur>,
    /// Seed of the session samplers (default 1).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Run every lock on a counting memory under this RMR model (cc, cc-wb, dsm) and fill
    /// `rmr` in every result. Slower: every access takes its register's lock; the output says
    /// by how much.
    #[arg(long, value_enum)]
    #[serde(serialize_with = "de::choice")]
    pub rmr: Option<crate::mem::Model>,
    /// Where each value came from (not an option).
    #[arg(skip)]
    #[serde(skip)]
    pub origin: Origin,
}

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
    let file = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| {
        UsageError(format!(
            "cannot read config {file}: {e} (give a TOML file, e.g. bench-configs/smoke.toml)"
        ))
    })?;
    let table: toml::Table = toml::from_str(&text).map_err(|e| {
        let at = e
            .span()
            .map(|s| format!(" (line {})", text[..s.start].lines().count().max(1)))
            .unwrap_or_default();
        UsageError(format!(
            "malformed config {file}{at}: {}",
            e.message().trim_end()
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
        let file = load_file(path)?;
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
        merged.config = Some(path.clone());
        merged.origin = Origin {
            file: Some(path.clone()),
            from_file,
        };
        Ok(merged)
    }

    /// How to name option `key` to the user: `--key`, or `key in FILE` when the value came
    /// from the config file.
    pub fn name(&self, key: &str) -> String {
        match &self.origin.file {
            Some(f) if self.origin.from_file.contains(key) => {
                format!("`{key}` in {}", f.display())
            }
            _ => format!("--{key}"),
        }
    }

    /// Lock names as asked (`all` expanded later, per mix).
    pub fn locks(&self) -> Vec<String> {
        self.lock
            .clone()
            .unwrap_or_else(|| vec!["all".into()])
            .iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    }

    /// Mixes (default distinct).
    pub fn mixes(&self) -> Vec<Mix> {
        self.mix.clone().unwrap_or_else(|| vec![Mix::Distinct])
    }

    /// k for k-exclusion (default 1).
    pub fn k(&self) -> usize {
        self.k.unwrap_or(1)
    }

    /// Critical-section busy work.
    pub fn cs(&self) -> Duration {
        self.cs.map_or(Duration::ZERO, |d| d.0)
    }

    /// Think-time busy work.
    pub fn think(&self) -> Duration {
        self.think.map_or(Duration::ZERO, |d| d.0)
    }

    /// Shared lines touched in the critical section.
    pub fn cs_lines(&self) -> usize {
        self.cs_lines.unwrap_or(0)
    }

    /// The stop rule: a number of passages per thread, or a duration (default 200 ms).
    pub fn stop(&self) -> StopRule {
        match (self.passages, self.duration) {
            (Some(n), _) => StopRule::Passages(n),
            (None, Some(d)) => StopRule::Duration(d.0),
            (None, None) => StopRule::Duration(parse_duration(DEFAULT_DURATION).expect("valid")),
        }
    }

    /// Warm-up.
    pub fn warmup(&self) -> Duration {
        self.warmup
            .map_or_else(|| parse_duration(DEFAULT_WARMUP).expect("valid"), |d| d.0)
    }

    /// Rounds.
    pub fn rounds(&self) -> usize {
        self.repeat.unwrap_or(DEFAULT_ROUNDS)
    }

    /// Baseline lock.
    pub fn baseline(&self) -> String {
        self.baseline.clone().unwrap_or_else(|| "ticket".into())
    }

    /// Output format.
    pub fn format(&self) -> Format {
        self.format.unwrap_or(Format::Table)
    }

    /// Results root.
    pub fn out(&self) -> PathBuf {
        self.out.clone().unwrap_or_else(|| PathBuf::from("reports"))
    }

    /// Pinning.
    pub fn pin(&self) -> PinMode {
        self.pin.unwrap_or(PinMode::Physical)
    }

    /// Which oracle (`--no-check` is `--oracle none`).
    pub fn oracle(&self) -> OracleArg {
        if self.no_check {
            OracleArg::None
        } else {
            self.oracle.unwrap_or(OracleArg::Auto)
        }
    }

    /// Whether an oracle runs.
    pub fn check(&self) -> bool {
        self.oracle() != OracleArg::None
    }

    /// Stall timeout.
    pub fn stall_timeout(&self) -> Duration {
        self.stall_timeout.map_or_else(
            || parse_duration(DEFAULT_STALL_TIMEOUT).expect("valid"),
            |d| d.0,
        )
    }

    /// Seed.
    pub fn seed(&self) -> u64 {
        self.seed.unwrap_or(1)
    }

    /// Checks every value against [`Limits`], before anything runs or is written: an error
    /// names the option as the user wrote it. Returns warnings for values taken otherwise
    /// than written. Duplicate thread counts and mixes are dropped (with a warning).
    pub fn validate(&mut self, limits: &Limits) -> Result<Vec<String>, UsageError> {
        let mut warnings = Vec::new();
        let name = |k: &str| self.name(k);
        if self.locks().is_empty() {
            return usage(format!(
                "{} is empty: name locks (see `lockbench list`) or use all",
                name("lock")
            ));
        }
        if let Some(t) = &self.threads {
            if t.is_empty() || t.contains(&0) {
                return usage(format!(
                    "{} must be at least 1 (e.g. 1,2,4)",
                    name("threads")
                ));
            }
            if let Some(&big) = t.iter().find(|&&t| t > limits.threads) {
                return usage(format!(
                    "{} {big}: at most {} threads ({}); run fewer threads",
                    name("threads"),
                    limits.threads,
                    limits.threads_why
                ));
            }
        }
        if let Some(s) = self.slots {
            if s == 0 || s > limits.threads {
                return usage(format!(
                    "{} {s}: between 1 and {} (the processes a lock is built for; {})",
                    name("slots"),
                    limits.threads,
                    limits.threads_why
                ));
            }
        }
        if let Some(k) = self.k {
            if k == 0 || k > limits.threads {
                return usage(format!(
                    "{} {k}: between 1 and {} (the number of processes a k-exclusion lock admits together)",
                    name("k"),
                    limits.threads
                ));
            }
        }
        for m in self.mixes() {
            let sessions = match m {
                Mix::Uniform { sessions }
                | Mix::Hot { sessions, .. }
                | Mix::Zipf { sessions, .. }
                | Mix::Fixed { sessions } => sessions,
                _ => 1,
            };
            let most = match m {
                // The Zipf mix keeps a cumulative table of one f64 per session.
                Mix::Zipf { .. } => limits.sessions.min(limits.memory_bytes / 8),
                _ => limits.sessions,
            };
            if sessions > most {
                return usage(format!(
                    "{} {m}: at most {most} sessions ({}); use fewer sessions",
                    name("mix"),
                    if most < limits.sessions {
                        "its table of one number per session must fit in the memory available"
                    } else {
                        "session ids are 32-bit in traces"
                    }
                ));
            }
        }
        let lines = self.cs_lines();
        if lines > limits.cs_lines() {
            return usage(format!(
                "{} {lines}: at most {} ({} bytes per line must fit in half the memory available, {:.1} GiB here); use fewer lines",
                name("cs-lines"),
                limits.cs_lines(),
                LINE_BYTES,
                limits.memory_bytes as f64 / (1u64 << 30) as f64
            ));
        }
        for (key, value, most) in [
            ("cs", self.cs(), limits.cs),
            ("think", self.think(), limits.cs),
            ("warmup", self.warmup(), limits.warmup),
            ("stall-timeout", self.stall_timeout(), limits.duration),
        ] {
            if value > most {
                return usage(format!(
                    "{} {}: at most {}",
                    name(key),
                    format_duration(value),
                    format_duration(most)
                ));
            }
        }
        match self.stop() {
            StopRule::Passages(0) => {
                return usage(format!("{} must be at least 1", name("passages")));
            }
            StopRule::Passages(n) if n > limits.passages => {
                return usage(format!(
                    "{} {n}: at most {} per thread",
                    name("passages"),
                    limits.passages
                ));
            }
            StopRule::Duration(d) if d.is_zero() => {
                return usage(format!(
                    "{} must be longer than 0 (e.g. --duration 2s)",
                    name("duration")
                ));
            }
            StopRule::Duration(d) if d > limits.duration => {
                return usage(format!(
                    "{} {}: at most {} per run and round",
                    name("duration"),
                    format_duration(d),
                    format_duration(limits.duration)
                ));
            }
            _ => {}
        }
        let rounds = self.rounds();
        if rounds == 0 || rounds > limits.rounds {
            return usage(format!(
                "{} {rounds}: between 1 and {}",
                name("repeat"),
                limits.rounds
            ));
        }
        if self.stall_timeout().is_zero() {
            return usage(format!(
                "{} must be longer than 0 (e.g. 10s)",
                name("stall-timeout")
            ));
        }
        if self.stall_timeout() < WATCHDOG_POLL * 2 {
            warnings.push(format!(
                "{} {} is below twice the watchdog's poll interval ({}): a run may be called stalled between two polls",
                name("stall-timeout"),
                format_duration(self.stall_timeout()),
                format_duration(WATCHDOG_POLL)
            ));
        }
        match self.latency_sample {
            Some(0) => {
                return usage(format!(
                    "{} 0: time one passage in N, N at least 1 (1 times every passage)",
                    name("latency-sample")
                ));
            }
            Some(n) if n > limits.latency_sample => {
                return usage(format!(
                    "{} {n}: at most {} (one passage in N is timed)",
                    name("latency-sample"),
                    limits.latency_sample
                ));
            }
            Some(n) => {
                if let StopRule::Passages(p) = self.stop() {
                    if p / n < 10 {
                        warnings.push(format!(
                            "{} {n} with {p} passages per thread: about {} timed passages per thread, too few for percentiles",
                            name("latency-sample"),
                            p / n
                        ));
                    }
                }
            }
            None => {}
        }
        if matches!(&self.counters, Some(c) if c.trim().is_empty()) {
            warnings.push(format!(
                "{} is empty: no counters are read (write `none` to say so)",
                name("counters")
            ));
        }
        if let Some(t) = &mut self.threads {
            let mut seen = Vec::new();
            t.retain(|x| {
                let dup = seen.contains(x);
                seen.push(*x);
                !dup
            });
            if t.len() < seen.len() {
                warnings.push(format!(
                    "{} names a thread count twice: each runs once",
                    self.name("threads")
                ));
            }
        }
        if let Some(m) = &mut self.mix {
            let mut seen: Vec<Mix> = Vec::new();
            m.retain(|x| {
                let dup = seen.contains(x);
                seen.push(x.clone());
                !dup
            });
            if m.len() < seen.len() {
                warnings.push(format!(
                    "{} names a mix twice: each runs once",
                    self.name("mix")
                ));
            }
        }
        Ok(warnings)
    }
}

/// Bytes one shared line of `--cs-lines` takes (a padded cache line).
pub const LINE_BYTES: usize = std::mem::size_of::<crossbeam_utils::CachePadded<u64>>();
/// Bytes one trace record takes.
pub const TRACE_RECORD_BYTES: usize = std::mem::size_of::<crate::check::trace::TraceRecord>();
/// Most passages traced per thread, when memory allows.
pub const TRACE_CAPACITY: usize = 1 << 20;

/// The limits of every size and duration a user can type: one table, from what the machine
/// has where that is the real bound.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Most threads (and slots, and k): the harness's own bound, lowered by the machine's
    /// thread limits.
    pub threads: usize,
    /// Why that bound.
    pub threads_why: String,
    /// Memory a run may allocate for its sizes (half of what is available), bytes.
    pub memory_bytes: usize,
    /// Most sessions a mix may have.
    pub sessions: usize,
    /// Longest busy work in or between critical sections.
    pub cs: Duration,
    /// Longest duration per run and round (and stall timeout).
    pub duration: Duration,
    /// Longest warm-up.
    pub warmup: Duration,
    /// Most passages per thread.
    pub passages: u64,
    /// Most rounds.
    pub rounds: usize,
    /// Largest N of `--latency-sample`.
    pub latency_sample: u64,
}

/// The harness's own bound on processes: locks keep per-process arrays (Zehavi's k-exclusion
/// n² registers) and bakery doorways scan all n.
pub const MAX_PROCESSES: usize = 1024;

fn read_number(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

impl Limits {
    /// The limits of this machine.
    pub fn detect() -> Limits {
        let mut threads = MAX_PROCESSES;
        let mut why = format!("the harness's bound of {MAX_PROCESSES} processes");
        let mut lower = |bound: u64, what: &str| {
            // Leave half of a system-wide or per-user bound to everything else.
            let b = (bound / 2).max(1) as usize;
            if b < threads {
                threads = b;
                why = format!("half of {what} {bound}");
            }
        };
        if let Some(n) = read_number("/proc/sys/kernel/threads-max") {
            lower(n, "the kernel's threads-max");
        }
        let mut rl = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the struct it is given.
        if unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut rl) } == 0
            && rl.rlim_cur != libc::RLIM_INFINITY
        {
            lower(rl.rlim_cur, "RLIMIT_NPROC");
        }
        // A container's process limit (cgroup v2, then v1); `max` is none.
        for path in ["/sys/fs/cgroup/pids.max", "/sys/fs/cgroup/pids/pids.max"] {
            if let Some(n) = read_number(path) {
                lower(n, "the cgroup's pids.max");
                break;
            }
        }
        let memory = mem_available().unwrap_or(1 << 30) / 2;
        Limits {
            threads,
            threads_why: why,
            memory_bytes: usize::try_from(memory).unwrap_or(usize::MAX),
            sessions: u32::MAX as usize,
            cs: Duration::from_secs(10),
            duration: Duration::from_secs(24 * 3600),
            warmup: Duration::from_secs(3600),
            passages: 1 << 40,
            rounds: 1000,
            latency_sample: 1 << 32,
        }
    }

    /// Most shared lines in a critical section: they must fit in the memory budget.
    pub fn cs_lines(&self) -> usize {
        self.memory_bytes / LINE_BYTES
    }

    /// Passages traced per thread at `threads` threads: [`TRACE_CAPACITY`], or fewer so
    /// that the traces fit in the memory budget.
    pub fn trace_capacity(&self, threads: usize) -> usize {
        TRACE_CAPACITY.min(self.memory_bytes / (TRACE_RECORD_BYTES * threads.max(1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        let mut l = Limits::detect();
        l.threads = 64;
        l.memory_bytes = 1 << 30;
        l
    }

    #[test]
    fn every_option_has_an_example() {
        for n in option_names() {
            if n != "config" {
                assert!(!example(&n).is_empty(), "no example for {n}");
                assert!(example(&n).starts_with(&format!("{n} = ")), "{n}");
            }
        }
    }

    #[test]
    fn examples_parse_as_config_values() {
        for n in option_names() {
            if n == "config" {
                continue;
            }
            let t: toml::Table = toml::from_str(example(&n)).unwrap();
            RunArgs::deserialize(toml::Value::Table(t)).unwrap_or_else(|e| panic!("{n}: {e}"));
        }
    }

    #[test]
    fn limits_refuse_huge_sizes() {
        let l = limits();
        let mut a = RunArgs {
            cs_lines: Some(100_000_000),
            ..Default::default()
        };
        let e = a.validate(&l).unwrap_err();
        assert!(e.0.starts_with("--cs-lines 100000000: at most"), "{e}");
        let mut a = RunArgs {
            threads: Some(vec![100_000]),
            ..Default::default()
        };
        assert!(a.validate(&l).unwrap_err().0.contains("at most 64"));
        let mut a = RunArgs {
            mix: Some(vec!["zipf:1000000000:1".parse().unwrap()]),
            ..Default::default()
        };
        assert!(a.validate(&l).unwrap_err().0.contains("memory"));
        let mut a = RunArgs::default();
        assert!(a.validate(&l).unwrap().is_empty());
    }

    #[test]
    fn duplicates_run_once_with_a_warning() {
        let mut a = RunArgs {
            threads: Some(vec![1, 2, 1]),
            mix: Some(vec![Mix::Single, Mix::Single]),
            ..Default::default()
        };
        let w = a.validate(&limits()).unwrap();
        assert_eq!(a.threads, Some(vec![1, 2]));
        assert_eq!(a.mix, Some(vec![Mix::Single]));
        assert_eq!(w.len(), 2, "{w:?}");
    }

    #[test]
    fn a_stall_timeout_below_the_watchdog_poll_warns() {
        let mut a = RunArgs {
            stall_timeout: Some("10ms".parse().unwrap()),
            ..Default::default()
        };
        let w = a.validate(&limits()).unwrap();
        assert!(w[0].starts_with("--stall-timeout 10 ms is below"), "{w:?}");
    }

    #[test]
    fn layering_names_the_file_and_lets_the_command_line_win() {
        let dir = std::env::temp_dir().join(format!("lockbench-layer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.toml");
        std::fs::write(&path, "passages = 10\nk = 2\ncs_lines = 3\n").unwrap();
        let cli = RunArgs {
            config: Some(path.clone()),
            duration: Some("5ms".parse().unwrap()),
            k: Some(3),
            ..Default::default()
        };
        let l = cli.layered().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(l.stop(), StopRule::Duration(Duration::from_millis(5)));
        assert_eq!(l.k(), 3);
        assert_eq!(l.cs_lines(), 3);
        assert_eq!(l.name("k"), "--k");
        assert_eq!(
            l.name("cs-lines"),
            format!("`cs-lines` in {}", path.display())
        );
    }

    #[test]
    fn trace_capacity_fits_memory() {
        let mut l = limits();
        assert_eq!(l.trace_capacity(1), TRACE_CAPACITY);
        l.memory_bytes = TRACE_RECORD_BYTES * 1000;
        assert_eq!(l.trace_capacity(10), 100);
    }

    #[test]
    fn closest_name() {
        let names = option_names();
        assert_eq!(closest("thread", &names), Some("threads"));
        assert_eq!(closest("zzz", &names), None);
    }
}
