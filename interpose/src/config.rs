//! What the environment asks for, read once at the first pthread call (or at load time).
//!
//! | variable | meaning | default |
//! | --- | --- | --- |
//! | `LOCKBENCH_LOCK` | a lock of `lockbench list` (or `plugin:PATH`), or `pthread` | `pthread` |
//! | `LOCKBENCH_PROCS` | process ids of the paper locks: threads holding an id at once | 32 |
//! | `LOCKBENCH_STATS` | file the statistics are written to at exit (JSON) | none |
//! | `LOCKBENCH_SAMPLE` | one acquisition in this many is timed (a power of two) | 64 |
//! | `LOCKBENCH_MAX_LOCKS` | distinct mutex and rwlock addresses the table holds | 65536 |

use std::path::PathBuf;

/// The settings of this process.
#[derive(Clone, Debug)]
pub struct Config {
    /// The lock's name (`pthread`: the C library's own, through the same bookkeeping).
    pub lock: String,
    /// Size of the id space (the paper locks' n).
    pub procs: usize,
    /// Where to write the statistics at exit.
    pub stats: Option<PathBuf>,
    /// Acquisitions timed: those whose random draw has its low `sample_bits` bits zero.
    pub sample_bits: u32,
    /// Capacity of the address → lock table.
    pub max_locks: usize,
}

/// The largest id space accepted (the paper locks' registers grow with it).
pub const MAX_PROCS: usize = 4096;

impl Config {
    /// Reads the environment; `Err` is one line saying which variable is wrong and what to
    /// give instead.
    pub fn from_env() -> Result<Config, String> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let number = |name: &str, default: usize, max: usize| -> Result<usize, String> {
            match var(name) {
                None => Ok(default),
                Some(v) => match v.parse::<usize>() {
                    Ok(x) if (1..=max).contains(&x) => Ok(x),
                    _ => Err(format!("{name}={v:?} is not a whole number in 1..={max}")),
                },
            }
        };
        let sample = number("LOCKBENCH_SAMPLE", 64, 1 << 20)?;
        if !sample.is_power_of_two() {
            return Err(format!(
                "LOCKBENCH_SAMPLE={sample} is not a power of two: give 1, 2, 4, … 1048576"
            ));
        }
        Ok(Config {
            lock: var("LOCKBENCH_LOCK").unwrap_or_else(|| "pthread".into()),
            procs: number("LOCKBENCH_PROCS", 32, MAX_PROCS)?,
            stats: var("LOCKBENCH_STATS").map(PathBuf::from),
            sample_bits: sample.trailing_zeros(),
            max_locks: number("LOCKBENCH_MAX_LOCKS", 1 << 16, 1 << 26)?,
        })
    }
}
