//! Reading saved results back for `report` and `compare`: the [`RunResult`]s of the
//! `results.json` a `run` or a `sweep` writes, and the point each one measured.
//!
//! A directory holding `results.json` is read from that file alone. A directory without one
//! (a suite's directory, holding one `run-*/` per invocation) is read from the `results.json`
//! of each subdirectory, in name order; when two invocations measured the same point, the later
//! one is kept.

use crate::opts::io::Visited;
use std::fs;
use std::path::{Path, PathBuf};

use super::RunResult;
use crate::error::UsageError;

/// What identifies one measured point across result sets: everything but the figures.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PointKey {
    /// Session mix.
    pub mix: String,
    /// Critical section, ns.
    pub cs_ns: u64,
    /// Think time, ns.
    pub think_ns: u64,
    /// k.
    pub k: usize,
    /// Shared lines in the CS.
    pub cs_lines: usize,
    /// RMR model the run counted under ("" for a native run).
    pub rmr: String,
    /// Threads.
    pub threads: usize,
    /// Processes the lock was built for (when more than the threads).
    pub slots: usize,
    /// Lock.
    pub lock: String,
}

/// Reading a saved result back: the point it measured.
impl RunResult {
    /// This result's point.
    pub fn key(&self) -> PointKey {
        PointKey {
            mix: self.mix.clone(),
            cs_ns: self.cs_ns,
            think_ns: self.think_ns,
            k: self.k,
            cs_lines: self.cs_lines,
            rmr: self.model_rmrs().map_or(String::new(), |r| r.model),
            threads: self.threads,
            slots: self.slots.max(self.threads),
            lock: self.lock.clone(),
        }
    }

    /// The throughput of every round (the median alone for results saved without rounds).
    pub fn round_throughputs(&self) -> Vec<f64> {
        let v: Vec<f64> = self
            .per_round
            .iter()
            .map(|r| r.throughput_per_sec)
            .filter(|t| t.is_finite())
            .collect();
        if v.is_empty() {
            vec![self.throughput_per_sec]
        } else {
            v
        }
    }

    /// Whether it is a baseline lock (std, parking_lot, ticket, ...), not a paper's algorithm.
    pub fn is_baseline(&self) -> bool {
        self.source == "baseline" || self.source.starts_with("reference")
    }
}

impl PointKey {
    /// The configuration without lock and threads: what one plot or table shares.
    pub fn scenario(&self) -> Scenario {
        Scenario {
            mix: self.mix.clone(),
            cs_ns: self.cs_ns,
            think_ns: self.think_ns,
            k: self.k,
            cs_lines: self.cs_lines,
            rmr: self.rmr.clone(),
            slots_extra: self.slots > self.threads,
        }
    }
}

/// A configuration shared by every lock and thread count of one plot.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Scenario {
    /// Session mix.
    pub mix: String,
    /// Critical section, ns.
    pub cs_ns: u64,
    /// Think time, ns.
    pub think_ns: u64,
    /// k.
    pub k: usize,
    /// Shared lines in the CS.
    pub cs_lines: usize,
    /// RMR model ("" for native runs).
    pub rmr: String,
    /// Locks were built for more processes than threads ran.
    pub slots_extra: bool,
}

impl Scenario {
    /// `mix uniform:4, cs 200 ns, think 0 ns` (k and the rest only when they matter).
    pub fn title(&self) -> String {
        let mut s = format!(
            "mix {}, cs {}, think {}",
            self.mix,
            super::nanos(self.cs_ns as f64),
            super::nanos(self.think_ns as f64)
        );
        if self.k > 1 {
            s.push_str(&format!(", k {}", self.k));
        }
        if self.cs_lines > 0 {
            s.push_str(&format!(", {} shared lines", self.cs_lines));
        }
        if !self.rmr.is_empty() {
            s.push_str(&format!(", counting memory ({})", self.rmr));
        }
        if self.slots_extra {
            s.push_str(", locks sized beyond the threads");
        }
        s
    }

    /// A file-name part: `uniform-4_cs0_think0_k1`.
    pub fn file_part(&self) -> String {
        let mut s = format!(
            "{}_cs{}_think{}_k{}",
            file_safe(&self.mix),
            self.cs_ns,
            self.think_ns,
            self.k
        );
        if self.cs_lines > 0 {
            s.push_str(&format!("_lines{}", self.cs_lines));
        }
        if !self.rmr.is_empty() {
            s.push_str(&format!("_rmr-{}", self.rmr));
        }
        if self.slots_extra {
            s.push_str("_slots");
        }
        s
    }
}

/// `hot:8:25,75` → `hot-8-25-75`.
pub fn file_safe(s: &str) -> String {
    let safe = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    crate::opts::io::bounded(safe, s)
}

/// Why a saved run cannot be a measurement of this lockbench, if it cannot: a thread count
/// of 0 or past any machine's, a throughput below zero, or a schema newer than this
/// build reads. Such a file is refused by name rather than drawn.
pub fn implausible(r: &RunResult) -> Option<String> {
    use crate::report::result::SCHEMA_VERSION;
    // Far above the harness's own bound (1024 processes): no machine runs more.
    const MOST_THREADS: usize = 1 << 20;
    if r.schema_version > SCHEMA_VERSION {
        return Some(format!(
            "{}: schema_version {} is newer than this lockbench reads ({SCHEMA_VERSION}); read it with the lockbench that wrote it",
            r.lock, r.schema_version
        ));
    }
    if r.threads == 0 || r.threads > MOST_THREADS {
        return Some(format!(
            "{}: {} threads, where a run has 1 to {MOST_THREADS}",
            r.lock, r.threads
        ));
    }
    if r.throughput_per_sec < 0.0 || r.throughput_per_sec.is_infinite() {
        return Some(format!(
            "{}: throughput {} per second",
            r.lock, r.throughput_per_sec
        ));
    }
    None
}

/// How deep below the directory given `results.json` files are looked for.
pub const SEARCH_DEPTH: usize = 8;

/// The `results.json` files of `dir`: its own, else those of its subdirectories at any depth
/// up to [`SEARCH_DEPTH`] (in path order). A directory holding one is not searched further
/// (a run's or sweep's own files, a sweep's unfinished `partial/`).
pub fn result_files(dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, depth: usize, seen: &mut Visited, out: &mut Vec<PathBuf>) {
        if !seen.enter(dir) {
            return;
        }
        let own = dir.join("results.json");
        if own.is_file() {
            out.push(own);
            return;
        }
        if depth == SEARCH_DEPTH {
            return;
        }
        let mut subs: Vec<PathBuf> = fs::read_dir(dir)
            .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        subs.sort();
        for p in subs.iter().filter(|p| p.is_dir()) {
            walk(p, depth + 1, seen, out);
        }
    }
    let mut out = Vec::new();
    walk(dir, 0, &mut Visited::default(), &mut out);
    out
}

/// Reads every result of `dir` (a `run` or `sweep` directory, or a directory of them), one per
/// point (the latest when several invocations measured it), in point order. A missing
/// directory, one without results or a malformed `results.json` is bad input.
pub fn load(dir: &Path) -> Result<Vec<RunResult>, UsageError> {
    if !dir.is_dir() {
        return Err(UsageError(format!(
            "{} is not a directory; give the directory `lockbench run` or `lockbench sweep` saved to (e.g. reports/run-...)",
            crate::opts::io::shown(dir)
        )));
    }
    let files = result_files(dir);
    if files.is_empty() {
        return Err(UsageError(format!(
            "no results.json in {} or its subdirectories ({SEARCH_DEPTH} levels down); give the directory `lockbench run` or `lockbench sweep` saved to",
            crate::opts::io::shown(dir)
        )));
    }
    let mut all: Vec<RunResult> = Vec::new();
    for f in &files {
        let text = crate::opts::io::read_text(f, crate::opts::io::RESULTS_CAP)
            .map_err(|e| UsageError(format!("cannot read {}: {e}", crate::opts::io::shown(f))))?;
        let runs: Vec<RunResult> = serde_json::from_str(&text).map_err(|e| {
            UsageError(format!(
                "{} is damaged or not a lockbench results file ({e}); measure it again, or move it out of the directory given",
                crate::opts::io::shown(f)
            ))
        })?;
        let runs: Vec<RunResult> = runs.into_iter().filter(|r| !r.lock.is_empty()).collect();
        if let Some(why) = runs.iter().find_map(implausible) {
            return Err(UsageError(format!(
                "{} is damaged or not a lockbench results file ({why}); measure it again, or move it out of the directory given",
                crate::opts::io::shown(f)
            )));
        }
        all.extend(runs);
    }
    // The latest of each point; stable order by point.
    all.sort_by(|a, b| a.key().cmp(&b.key()).then(a.timestamp.cmp(&b.timestamp)));
    let mut out: Vec<RunResult> = Vec::new();
    for r in all {
        match out.last_mut() {
            Some(last) if last.key() == r.key() => *last = r,
            _ => out.push(r),
        }
    }
    if out.is_empty() {
        return Err(UsageError(format!(
            "the results in {} hold no runs; run some first",
            crate::opts::io::shown(dir)
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerant_fields_and_keys() {
        let r: RunResult = serde_json::from_str(
            r#"{"lock": "mcs", "threads": 2, "mix": "uniform:4", "source": "baseline",
                "per_round": [{"round": 0, "throughput_per_sec": 5.0},
                              {"round": 1, "throughput_per_sec": 7.0}],
                "rmr": null, "unknown": [1, 2]}"#,
        )
        .unwrap();
        assert_eq!(r.round_throughputs(), vec![5.0, 7.0]);
        assert!(r.is_baseline());
        let k = r.key();
        assert_eq!((k.threads, k.slots, k.rmr.as_str()), (2, 2, ""));
        assert_eq!(k.scenario().file_part(), "uniform-4_cs0_think0_k0");
        let alone: RunResult =
            serde_json::from_str(r#"{"lock": "a", "throughput_per_sec": 3}"#).unwrap();
        assert_eq!(alone.round_throughputs(), vec![3.0]);
    }

    #[test]
    fn loads_a_suite_directory_keeping_the_latest_of_each_point() {
        let dir = tempfile::tempdir().unwrap();
        for (sub, ts, thr) in [("run-1", 1, 10.0), ("run-2", 2, 20.0)] {
            fs::create_dir(dir.path().join(sub)).unwrap();
            let text = format!(
                r#"[{{"lock": "a", "threads": 1, "timestamp": {ts}, "throughput_per_sec": {thr}}},
                    {{"lock": "b{ts}", "threads": 1}}]"#
            );
            fs::write(dir.path().join(sub).join("results.json"), text).unwrap();
        }
        let runs = load(dir.path()).unwrap();
        let locks: Vec<&str> = runs.iter().map(|r| r.lock.as_str()).collect();
        assert_eq!(locks, vec!["a", "b1", "b2"]);
        assert_eq!(runs[0].throughput_per_sec, 20.0);
        let empty = tempfile::tempdir().unwrap();
        assert!(load(empty.path())
            .unwrap_err()
            .0
            .contains("no results.json"));
        fs::write(empty.path().join("results.json"), "{oops").unwrap();
        assert!(load(empty.path())
            .unwrap_err()
            .0
            .contains("not a lockbench results file"));
    }
}
