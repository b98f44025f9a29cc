//! The options of `run` (and of every point of a sweep), defined once: [`RunArgs`] is both the command line (clap derive) and
//! the TOML config file (serde derive, keys spelled as the long options, `-` or `_`). Layering
//! (defaults, then the file, then the command line) is [`RunArgs::layered`]; every value then
//! passes one validation ([`RunArgs::validate`]) against one table of limits ([`Limits`]),
//! before anything runs or is written.

mod file;
mod limits;
mod validate;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::opts::de;
pub use crate::opts::de::Dur;
pub use file::one_line;
pub use limits::{Limits, LINE_BYTES, TRACE_CAPACITY};

use crate::opts::{
    Format, FormatOpt, KOpt, LockOpt, LoopOpt, MixOpt, OutOpt, PassagesOpt, SeedOpt, ThreadsOpt,
    TraceOpt, WindowOpt,
};
pub use crate::opts::{OracleArg, WaitArg};
use crate::runner::exec::StopRule;
use crate::runner::topology::PinMode;
use crate::workload::{parse_duration, Mix};

/// Measured time of each run in each round, by default.
pub const DEFAULT_DURATION: &str = "200ms";
/// Warm-up of each run, by default.
pub const DEFAULT_WARMUP: &str = "50ms";
/// Rounds, by default: enough for a 94% interval of each paired ratio.
pub const DEFAULT_ROUNDS: usize = 5;
/// Stall timeout, by default.
pub const DEFAULT_STALL_TIMEOUT: &str = "10s";

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
#[command(group(clap::ArgGroup::new("stop-rule").args(["duration", "passages"])))]
// Unknown keys of a config file are refused by name before serde sees them
// (`file::load_file`), so `deny_unknown_fields`, which flattened groups cannot take, is not needed.
#[serde(rename_all = "kebab-case")]
#[command(mut_arg("lock", |a| a.help("Locks to run: comma-separated names, or `all` (every safe lock fitting the mix).")))]
#[command(mut_arg("threads", |a| a.help("Thread counts to run, comma-separated (default: 1 and every physical core).")))]
#[command(mut_arg("mix", |a| a.help("Session mix; repeat the flag for several: single, distinct, uniform:M, hot:M:A,B, zipf:M:S, fixed:M, rw:P (default distinct: every thread its own session).")))]
#[command(mut_arg("k", |a| a.help("Capacity of k-exclusion locks (default 1).")))]
#[command(mut_arg("duration", |a| a.help("Measure for this long per run and round, e.g. 2s (default 200ms).")))]
#[command(mut_arg("passages", |a| a.help("Instead of a duration, measure this many passages per thread.")))]
#[command(mut_arg("warmup", |a| a.help("Warm-up before measuring (default 50ms).")))]
#[command(mut_arg("format", |a| a.help("Output format (default table).")))]
#[command(mut_arg("out", |a| a.help("Directory results are saved under (default reports/).")))]
#[command(mut_arg("oracle", |a| a.help("Safety oracle: auto (the sampled self-check for mutual exclusion, counting for GME and k-exclusion), sampled, self-check, counting or none (default auto).")))]
#[command(mut_arg("latency_sample", |a| a.help("Time one passage in N, chosen at random (geometric gaps, so no aliasing with periodic hand-offs); 1 times every passage. Default: N such that timing costs at most 0.5 ns per passage on average on this machine. Throughput is unaffected.")))]
#[command(mut_arg("trace", |a| a.help("Trace every passage and check FCFS, concurrent entry and FIFE from the trace.")))]
#[command(mut_arg("seed", |a| a.help("Seed of the session samplers (default 1).")))]
pub struct RunArgs {
    /// `--lock`: the locks to run (default all: every safe lock fitting the mix).
    #[command(flatten)]
    #[serde(flatten)]
    pub lock: LockOpt,
    /// `--threads`: the thread counts to run (default: 1 and every physical core).
    #[command(flatten)]
    #[serde(flatten)]
    pub threads: ThreadsOpt,
    /// `--mix`: the session mixes; repeat the flag for several (default distinct).
    #[command(flatten)]
    #[serde(flatten)]
    pub mix: MixOpt,
    /// Build every lock for this many processes even when fewer threads run (the others stay
    /// idle): the cost of a lock's size on an uncontended passage (default: the thread count).
    #[arg(long)]
    pub slots: Option<usize>,
    /// `--k`: the capacity of k-exclusion locks (default 1).
    #[command(flatten)]
    #[serde(flatten)]
    pub k: KOpt,
    /// Busy work inside the critical section, e.g. 0, 200ns, 1us (default 0).
    #[arg(long)]
    pub cs: Option<Dur>,
    /// Busy work between passages (default 0).
    #[arg(long)]
    pub think: Option<Dur>,
    /// Shared cache lines read and written in each critical section (default 0).
    #[arg(long)]
    pub cs_lines: Option<usize>,
    /// `--duration` (default 200ms) and `--warmup` (default 50ms).
    #[command(flatten)]
    #[serde(flatten)]
    pub window: WindowOpt,
    /// `--passages`: instead of a duration, measure this many passages per thread.
    #[command(flatten)]
    #[serde(flatten)]
    pub passages: PassagesOpt,
    /// Rounds: every (lock, configuration) runs once per round, in a shuffled order, so drift
    /// of a shared machine hits every lock alike; ratios to the baseline are paired within a
    /// round and reported as a median with a confidence interval (default 5).
    #[arg(long, visible_alias = "rounds")]
    #[serde(alias = "rounds")]
    pub repeat: Option<usize>,
    /// Lock every other is compared with (default ticket; spin-gme when every lock asked
    /// for is a GME lock, spin-semaphore when every one is a k-exclusion lock).
    #[arg(long)]
    pub baseline: Option<String>,
    /// `--format`: table (default), json, csv or md.
    #[command(flatten)]
    #[serde(flatten)]
    pub format: FormatOpt,
    /// `--out`: the directory results are saved under (default reports/).
    #[command(flatten)]
    #[serde(flatten)]
    pub out: OutOpt,
    /// TOML file of options: the long options as keys (see bench-configs/).
    #[arg(long)]
    #[serde(skip)]
    pub config: Option<PathBuf>,
    /// Thread placement: physical cores first, compact (fill a NUMA node, then the next),
    /// scatter (round-robin over nodes and sockets), logical CPUs in id order, or no pinning
    /// (default physical).
    #[arg(long, value_enum)]
    #[serde(serialize_with = "de::choice")]
    pub pin: Option<PinMode>,
    /// Also place threads on SMT siblings (after every physical core is used; compact: after
    /// each node's physical cores).
    #[arg(long)]
    #[serde(default)]
    pub smt: bool,
    /// Use only these CPUs, e.g. 0-15,32-47 (default: every CPU this process may use); the
    /// placement policy orders them.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Where the lock's registers live: local (each process's registers on the node of the
    /// CPU it runs on, shared ones on the first thread's), interleave (pages spread over the
    /// nodes used), or node:N (all on node N). Default: the kernel's first touch, no binding.
    #[arg(long, value_name = "POLICY")]
    pub mem_policy: Option<crate::mem::placement::MemPolicy>,
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
    /// `--oracle` (default auto) and `--latency-sample` (default: chosen from what timing one
    /// passage costs here).
    #[command(flatten)]
    #[serde(flatten)]
    pub harness: LoopOpt,
    /// `--trace`: trace every passage and check FCFS, concurrent entry and FIFE from the trace.
    #[command(flatten)]
    #[serde(flatten)]
    pub trace: TraceOpt,
    /// Counters to read: names (cycles, instructions, cache-misses, l1d-read-misses,
    /// context-switches, task-clock, ...) or raw codes (r0443); `none` for no counters.
    #[arg(long)]
    pub counters: Option<String>,
    /// Stop a run with no progress for this long and report it stalled (default 10s).
    #[arg(long)]
    pub stall_timeout: Option<Dur>,
    /// `--seed`: of the session samplers (default 1).
    #[command(flatten)]
    #[serde(flatten)]
    pub seed: SeedOpt,
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

impl RunArgs {
    /// How to name option `key` to the user: `--key`, or `key in FILE` when the value came
    /// from the config file.
    pub fn name(&self, key: &str) -> String {
        match &self.origin.file {
            Some(f) if self.origin.from_file.contains(key) => {
                format!("`{key}` in {}", crate::opts::io::shown(f))
            }
            _ => format!("--{key}"),
        }
    }

    /// Lock names as asked (`all` expanded later, per mix).
    pub fn locks(&self) -> Vec<String> {
        self.lock.names_or(&["all"])
    }

    /// Mixes (default distinct).
    pub fn mixes(&self) -> Vec<Mix> {
        self.mix.mix.clone().unwrap_or_else(|| vec![Mix::Distinct])
    }

    /// k for k-exclusion (default 1).
    pub fn k(&self) -> usize {
        self.k
            .k
            .as_ref()
            .and_then(|k| k.first().copied())
            .unwrap_or(1)
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
        match (self.passages.passages, self.window.duration) {
            (Some(n), _) => StopRule::Passages(n),
            (None, Some(d)) => StopRule::Duration(d.0),
            (None, None) => StopRule::Duration(parse_duration(DEFAULT_DURATION).expect("valid")),
        }
    }

    /// Warm-up.
    pub fn warmup(&self) -> Duration {
        self.window
            .warmup
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
        self.format.format.unwrap_or(Format::Table)
    }

    /// Results root.
    pub fn out(&self) -> PathBuf {
        self.out
            .out
            .clone()
            .unwrap_or_else(|| PathBuf::from("reports"))
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
            self.harness.oracle.unwrap_or(OracleArg::Auto)
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
        self.seed.get(1)
    }
}

#[cfg(test)]
mod tests {
    use super::file::{example, option_names};
    use super::limits::TRACE_RECORD_BYTES;
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
            let a =
                RunArgs::deserialize(toml::Value::Table(t)).unwrap_or_else(|e| panic!("{n}: {e}"));
            // A key a flattened group spells otherwise would be dropped without a word.
            let back = serde_json::to_value(&a).unwrap();
            assert!(
                !back[n.as_str()].is_null(),
                "{n}: the example's value is lost on the way in"
            );
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
            threads: ThreadsOpt {
                threads: Some(vec![100_000]),
            },
            ..Default::default()
        };
        assert!(a.validate(&l).unwrap_err().0.contains("at most 64"));
        let mut a = RunArgs {
            mix: MixOpt {
                mix: Some(vec!["zipf:1000000000:1".parse().unwrap()]),
            },
            ..Default::default()
        };
        assert!(a.validate(&l).unwrap_err().0.contains("memory"));
        let mut a = RunArgs::default();
        assert!(a.validate(&l).unwrap().is_empty());
    }

    #[test]
    fn duplicates_run_once_with_a_warning() {
        let mut a = RunArgs {
            threads: ThreadsOpt {
                threads: Some(vec![1, 2, 1]),
            },
            mix: MixOpt {
                mix: Some(vec![Mix::Single, Mix::Single]),
            },
            ..Default::default()
        };
        let w = a.validate(&limits()).unwrap();
        assert_eq!(a.threads.threads, Some(vec![1, 2]));
        assert_eq!(a.mix.mix, Some(vec![Mix::Single]));
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
            window: WindowOpt {
                duration: Some("5ms".parse().unwrap()),
                warmup: None,
            },
            k: KOpt { k: Some(vec![3]) },
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
}
