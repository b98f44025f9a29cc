//! A sweep's config: a run config whose lists (threads, mix, cs, think, k, cs-lines, rmr) make a
//! matrix of points, with symbolic thread counts; its manifest.

use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::engine::options::{Dur, RunArgs};
use crate::error::UsageError;

/// The keys a sweep accepts as lists, besides `lock` (the locks of every point).
const LISTS: [&str; 7] = ["threads", "mix", "cs", "think", "k", "cs-lines", "rmr"];

/// The machine's size, for the symbolic thread counts.
#[derive(Clone, Copy, Debug)]
pub struct Machine {
    /// Physical cores.
    pub cores: usize,
    /// Logical CPUs.
    pub cpus: usize,
}

/// What `manifest.json` records.
#[derive(Clone, Serialize, Deserialize, Debug)]
pub struct Manifest {
    /// The config file's text, as given.
    pub config: String,
    /// Where it was read from.
    pub config_path: String,
    /// FNV-1a 64 of the parsed config (comments and layout do not count).
    pub config_hash: String,
    /// lockbench version that started the sweep.
    pub lockbench_version: String,
    /// The host it started on.
    pub host: serde_json::Value,
    /// Unix seconds when it started.
    pub created: u64,
    /// The points, in the order they run.
    pub points: Vec<String>,
}

/// One point of the matrix: the values of the list keys.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Thread count (None: the run default, 1 and every physical core).
    pub threads: Option<usize>,
    /// Mix.
    pub mix: Option<String>,
    /// Critical section.
    pub cs: Option<String>,
    /// Think time.
    pub think: Option<String>,
    /// k.
    pub k: Option<usize>,
    /// Shared lines in the CS.
    pub cs_lines: Option<usize>,
    /// RMR model to count under (None: native memory).
    pub rmr: Option<crate::mem::Model>,
}

impl Point {
    /// A stable id: `t2 uniform:4 cs=200ns think=0 k=1 lines=0` (unset values left out).
    pub fn id(&self) -> String {
        let mut parts = vec![self
            .threads
            .map_or("t=default".to_string(), |t| format!("t={t}"))];
        if let Some(m) = &self.mix {
            parts.push(format!("mix={m}"));
        }
        if let Some(c) = &self.cs {
            parts.push(format!("cs={c}"));
        }
        if let Some(c) = &self.think {
            parts.push(format!("think={c}"));
        }
        if let Some(k) = self.k {
            parts.push(format!("k={k}"));
        }
        if let Some(l) = self.cs_lines {
            parts.push(format!("cs-lines={l}"));
        }
        if let Some(m) = self.rmr {
            parts.push(format!("rmr={m}"));
        }
        parts.join(" ")
    }

    /// The `run` flags that select this point.
    pub fn cli_flags(&self) -> String {
        let mut f = Vec::new();
        if let Some(t) = self.threads {
            f.push(format!("--threads {t}"));
        }
        if let Some(m) = &self.mix {
            f.push(format!("--mix {m}"));
        }
        if let Some(c) = &self.cs {
            f.push(format!("--cs {c}"));
        }
        if let Some(c) = &self.think {
            f.push(format!("--think {c}"));
        }
        if let Some(k) = self.k {
            f.push(format!("--k {k}"));
        }
        if let Some(l) = self.cs_lines {
            f.push(format!("--cs-lines {l}"));
        }
        if let Some(m) = self.rmr {
            f.push(format!("--rmr {m}"));
        }
        f.join(" ")
    }

    /// The point's options over the shared config `base` (text of the sweep file `path`).
    pub(super) fn run_args(&self, base: &str, path: &Path) -> Result<RunArgs, UsageError> {
        let dur = |key: &str, v: &Option<String>| -> Result<Option<Dur>, UsageError> {
            v.as_deref()
                .map(|s| {
                    s.parse::<Dur>().map_err(|e| {
                        // The parse error carries an example of its own.
                        UsageError(format!("`{key}` = \"{s}\" in the sweep: {e}"))
                    })
                })
                .transpose()
        };
        let mix = match &self.mix {
            Some(m) => Some(vec![m.parse().map_err(|e| {
                UsageError(format!("`mix` = \"{m}\" in the sweep: {e}"))
            })?]),
            None => None,
        };
        RunArgs {
            threads: crate::opts::ThreadsOpt {
                threads: self.threads.map(|t| vec![t]),
            },
            mix: crate::opts::MixOpt { mix },
            cs: dur("cs", &self.cs)?,
            think: dur("think", &self.think)?,
            k: crate::opts::KOpt {
                k: self.k.map(|k| vec![k]),
            },
            cs_lines: self.cs_lines,
            rmr: self.rmr,
            ..RunArgs::default()
        }
        .layered_text(base, path)
    }
}

/// Whether the config `new` is `old` with some of its locks dropped (at least one kept, no
/// other key changed): a sweep whose lock crashed the process resumes without it.
pub fn drops_locks_only(old: &str, new: &str) -> bool {
    let (Ok(mut old), Ok(mut new)) = (
        toml::from_str::<toml::Table>(old),
        toml::from_str::<toml::Table>(new),
    ) else {
        return false;
    };
    let names = |t: &mut toml::Table| -> Vec<String> {
        match t.remove("lock") {
            Some(toml::Value::String(s)) => s.split(',').map(|n| n.trim().to_string()).collect(),
            Some(toml::Value::Array(a)) => a
                .iter()
                .filter_map(|v| v.as_str().map(|n| n.trim().to_string()))
                .collect(),
            _ => Vec::new(),
        }
    };
    let (was, now) = (names(&mut old), names(&mut new));
    old == new && !now.is_empty() && now.len() < was.len() && now.iter().all(|n| was.contains(n))
}

/// FNV-1a, 64 bits.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A parsed sweep: the config without its list keys, and the points of the matrix.
#[derive(Debug)]
pub struct Sweep {
    /// The run config every point shares (list keys removed).
    pub base: toml::Table,
    /// The points, in run order.
    pub points: Vec<Point>,
    /// Hash of the parsed config.
    pub hash: String,
}

fn values(v: Option<toml::Value>) -> Vec<Option<toml::Value>> {
    match v {
        None => vec![None],
        Some(toml::Value::Array(a)) => a.into_iter().map(Some).collect(),
        Some(v) => vec![Some(v)],
    }
}

fn as_text(key: &str, v: &toml::Value) -> Result<String, UsageError> {
    match v {
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(i) => Ok(i.to_string()),
        toml::Value::Float(f) => Ok(f.to_string()),
        _ => Err(UsageError(format!(
            "{key} = {v}: give a string (e.g. \"200ns\") or a list of them"
        ))),
    }
}

/// Thread counts: numbers, or `powers-of-two`, `cores`, `cpus` expanded for `machine`;
/// repeated counts (`cores` is also a power of two) are kept once.
fn thread_counts(
    v: Option<toml::Value>,
    machine: Machine,
) -> Result<Vec<Option<usize>>, UsageError> {
    let mut out: Vec<Option<usize>> = Vec::new();
    for item in values(v) {
        let counts: Vec<usize> = match &item {
            None => {
                out.push(None);
                continue;
            }
            Some(toml::Value::String(s)) => match s.as_str() {
                "powers-of-two" => {
                    let mut c: Vec<usize> = std::iter::successors(Some(1usize), |x| Some(x * 2))
                        .take_while(|x| *x <= machine.cores)
                        .collect();
                    c.push(machine.cores.max(1));
                    c
                }
                "cores" => vec![machine.cores.max(1)],
                "cpus" => vec![machine.cpus.max(1)],
                other => {
                    return Err(UsageError(format!(
                    "threads = {other:?}: give counts, or \"powers-of-two\", \"cores\" or \"cpus\""
                )))
                }
            },
            Some(v) => vec![as_count("threads", v)?],
        };
        for c in counts {
            if !out.contains(&Some(c)) {
                out.push(Some(c));
            }
        }
    }
    Ok(out)
}

fn as_model(v: &toml::Value) -> Result<Option<crate::mem::Model>, UsageError> {
    use clap::ValueEnum as _;
    match v {
        toml::Value::String(s) if s == "none" => Ok(None),
        toml::Value::Boolean(false) => Ok(None),
        toml::Value::String(s) => crate::mem::Model::from_str(s, true).map(Some).map_err(|_| {
            UsageError(format!(
                "rmr = {s:?}: give none, cc, cc-wb or dsm (or a list of them)"
            ))
        }),
        _ => Err(UsageError(format!(
            "rmr = {v}: give none, cc, cc-wb or dsm (or a list of them)"
        ))),
    }
}

fn as_count(key: &str, v: &toml::Value) -> Result<usize, UsageError> {
    v.as_integer()
        .and_then(|i| usize::try_from(i).ok())
        .ok_or_else(|| {
            UsageError(format!(
                "{key} = {v}: give a whole number or a list of them"
            ))
        })
}

/// Most points one sweep may have (the product of its lists' lengths).
pub const MAX_POINTS: usize = 10_000;

impl Sweep {
    /// Parses a sweep config's text; symbolic thread counts are expanded for `machine`.
    pub fn parse(text: &str, path: &Path, machine: Machine) -> Result<Sweep, UsageError> {
        let mut table: toml::Table = toml::from_str(text).map_err(|e| {
            UsageError(format!(
                "malformed sweep config {}: {}",
                crate::opts::io::shown(path),
                crate::engine::options::one_line(e.message())
            ))
        })?;
        let hash = format!(
            "fnv1a64:{:016x}",
            fnv1a(serde_json::to_string(&table).unwrap_or_default().as_bytes())
        );
        if let Some(v) = table.remove("cs_lines") {
            table.insert("cs-lines".into(), v);
        }
        let empty = |key: &str, v: &Option<toml::Value>| {
            match v {
            Some(toml::Value::Array(a)) if a.is_empty() => Err(UsageError(format!(
                "`{key}` = [] in {}: an empty list makes no points; give at least one value, or leave `{key}` out",
                crate::opts::io::shown(path)
            ))),
            _ => Ok(()),
        }
        };
        let threads = table.remove("threads");
        empty("threads", &threads)?;
        let threads_list = thread_counts(threads, machine)?;
        let mut lists: Vec<Vec<Option<toml::Value>>> = Vec::new();
        let mut count = threads_list.len() as u128;
        for key in LISTS {
            let v = table.remove(key);
            empty(key, &v)?;
            lists.push(values(v));
            count *= lists.last().map_or(1, Vec::len) as u128;
        }
        if count > MAX_POINTS as u128 {
            return Err(UsageError(format!(
                "sweep config {}: its lists make {count} points, at most {MAX_POINTS}; shorten the lists or split the sweep",
                crate::opts::io::shown(path)
            )));
        }
        let mut points = Vec::new();
        // Outermost the model, cs, think, k, lines; then mix; then threads, in the order given.
        for rmr in &lists[6] {
            for cs in &lists[2] {
                for think in &lists[3] {
                    for k in &lists[4] {
                        for lines in &lists[5] {
                            for mix in &lists[1] {
                                for threads in &threads_list {
                                    let text = |key, v: &Option<toml::Value>| {
                                        v.as_ref().map(|v| as_text(key, v)).transpose()
                                    };
                                    let count = |key, v: &Option<toml::Value>| {
                                        v.as_ref().map(|v| as_count(key, v)).transpose()
                                    };
                                    points.push(Point {
                                        threads: *threads,
                                        rmr: rmr.as_ref().map(as_model).transpose()?.flatten(),
                                        mix: text("mix", mix)?,
                                        cs: text("cs", cs)?,
                                        think: text("think", think)?,
                                        k: count("k", k)?,
                                        cs_lines: count("cs-lines", lines)?,
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
        let mut seen = BTreeSet::new();
        if let Some(p) = points.iter().find(|p| !seen.insert(p.id())) {
            return Err(UsageError(format!(
                "sweep config {} lists the point {} twice: remove the repeated value",
                crate::opts::io::shown(path),
                p.id()
            )));
        }
        Ok(Sweep {
            base: table,
            points,
            hash,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::super::validate;
    use super::*;
    use crate::engine::options::Limits;
    use crate::runner::topology::Topology;

    const M: Machine = Machine { cores: 6, cpus: 12 };

    #[test]
    fn a_config_that_only_drops_locks_is_told_apart_from_any_other_change() {
        let old = "lock = [\"ticket\", \"plugin:x.so\"]\nthreads = [1, 2]\n";
        assert!(drops_locks_only(
            old,
            "threads = [1, 2]\nlock = [\"ticket\"]\n"
        ));
        assert!(drops_locks_only("lock = \"a,b\"\n", "lock = \"b\"\n"));
        for other in [
            old,
            "lock = []\nthreads = [1, 2]\n",
            "lock = [\"tas\"]\nthreads = [1, 2]\n",
            "lock = [\"ticket\"]\nthreads = [1]\n",
            "lock = [\"ticket\"]\nthreads = [1, 2]\nrepeat = 3\n",
            "not toml [",
        ] {
            assert!(!drops_locks_only(old, other), "{other}");
        }
    }

    #[test]
    fn symbolic_thread_counts_and_models() {
        let s = Sweep::parse(
            "threads = [\"powers-of-two\", \"cores\", \"cpus\", 2]\nrmr = [\"none\", \"cc\"]",
            Path::new("s.toml"),
            M,
        )
        .unwrap();
        let t: Vec<Option<usize>> = s.points.iter().map(|p| p.threads).collect();
        let want = [1, 2, 4, 6, 12].map(Some);
        assert_eq!(t[..5], want);
        assert_eq!(t[5..], want);
        assert_eq!(s.points[0].rmr, None);
        assert_eq!(s.points[5].rmr, Some(crate::mem::Model::Cc));
        assert_eq!(s.points[5].id(), "t=1 rmr=cc");
        let e = Sweep::parse("threads = \"all\"", Path::new("s.toml"), M)
            .unwrap_err()
            .0;
        assert!(e.contains("powers-of-two"), "{e}");
        let e = Sweep::parse("rmr = \"x\"", Path::new("s.toml"), M)
            .unwrap_err()
            .0;
        assert!(e.contains("cc-wb"), "{e}");
    }

    #[test]
    fn the_matrix_of_a_config_with_lists() {
        let text = r#"
            # comment
            lock = ["ticket", "tas"]
            threads = [1, 2]
            mix = ["distinct", "uniform:2"]
            cs = ["0", "200ns"]
            k = 2
            repeat = 2
        "#;
        let s = Sweep::parse(text, Path::new("s.toml"), M).unwrap();
        assert_eq!(s.points.len(), 8);
        assert_eq!(s.points[0].id(), "t=1 mix=distinct cs=0 k=2");
        assert_eq!(s.points[1].id(), "t=2 mix=distinct cs=0 k=2");
        assert_eq!(s.points[7].id(), "t=2 mix=uniform:2 cs=200ns k=2");
        assert!(s.base.get("cs").is_none() && s.base.get("threads").is_none());
        assert_eq!(s.base["repeat"].as_integer(), Some(2));
        // Comments and layout do not change the hash; values do.
        let same = Sweep::parse(&text.replace("# comment", ""), Path::new("s.toml"), M).unwrap();
        assert_eq!(same.hash, s.hash);
        let other = Sweep::parse(
            &text.replace("repeat = 2", "repeat = 3"),
            Path::new("s.toml"),
            M,
        )
        .unwrap();
        assert_ne!(other.hash, s.hash);
        // No lists: one point, the run defaults.
        let one = Sweep::parse("lock = \"all\"", Path::new("s.toml"), M).unwrap();
        assert_eq!(one.points.len(), 1);
        assert_eq!(one.points[0].id(), "t=default");
    }

    #[test]
    fn bad_sweeps_say_what_to_fix() {
        let e = Sweep::parse("mix = [\"single\", \"single\"]", Path::new("s.toml"), M)
            .unwrap_err()
            .0;
        assert!(e.contains("twice"), "{e}");
        let e = Sweep::parse("k = [\"x\"]", Path::new("s.toml"), M)
            .unwrap_err()
            .0;
        assert!(e.contains("whole number"), "{e}");
        let e = Sweep::parse("threads = [", Path::new("s.toml"), M)
            .unwrap_err()
            .0;
        assert!(e.contains("malformed sweep config"), "{e}");
        for key in ["threads", "mix", "cs", "k"] {
            let e = Sweep::parse(&format!("{key} = []"), Path::new("s.toml"), M)
                .unwrap_err()
                .0;
            assert!(e.contains("an empty list makes no points"), "{e}");
        }
        let e = Sweep::parse(
            "threads = [1,2,3,4,5,6,7,8,9,10]\nk = [1,2,3,4,5,6,7,8,9,10]\ncs-lines = [1,2,3,4,5,6,7,8,9,10]\ncs = [\"1ns\",\"2ns\",\"3ns\",\"4ns\",\"5ns\",\"6ns\",\"7ns\",\"8ns\",\"9ns\",\"10ns\",\"11ns\"]",
            Path::new("s.toml"),
            M,
        )
        .unwrap_err()
        .0;
        assert!(e.contains("11000 points, at most 10000"), "{e}");
    }

    #[test]
    fn every_point_is_checked_as_run_checks_it_before_any_runs() {
        // The fourth point counts RMRs of more processes than the counting memory holds: the
        // sweep is refused before its first point, not when it reaches the fourth.
        let text = r#"
            lock = ["ticket"]
            threads = [1, 100]
            rmr = ["none", "cc"]
            oversubscribe = true
            passages = 100
        "#;
        let sweep = Sweep::parse(text, Path::new("s.toml"), M).unwrap();
        let base = toml::to_string(&sweep.base).unwrap();
        let e = validate(&sweep, &base, Path::new("s.toml"), &Limits::detect())
            .expect_err("refused")
            .to_string();
        assert!(
            e.contains("t=100 rmr=cc") && e.contains("at most 64"),
            "{e}"
        );
    }

    #[test]
    fn every_run_suite_is_a_valid_sweep_here() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench-configs");
        let topo = Topology::detect().unwrap();
        let machine = Machine {
            cores: topo.physical_cores(),
            cpus: topo.logical_cpus(),
        };
        let mut checked = Vec::new();
        for e in fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            let text = fs::read_to_string(&path).unwrap();
            assert!(
                text.starts_with("# "),
                "{} has no header comment",
                crate::opts::io::shown(&path)
            );
            if text.contains("[[figure]]") {
                continue; // a simulator suite (lockbench sim --paper)
            }
            let sweep = Sweep::parse(&text, &path, machine)
                .unwrap_or_else(|e| panic!("{}: {e}", crate::opts::io::shown(&path)));
            let base = toml::to_string(&sweep.base).unwrap();
            let plans = validate(&sweep, &base, &path, &Limits::detect())
                .unwrap_or_else(|e| panic!("{}: {e:#}", crate::opts::io::shown(&path)));
            assert!(
                plans.iter().all(|(_, _, _, reps)| *reps > 0),
                "{}",
                crate::opts::io::shown(&path)
            );
            checked.push(path.file_stem().unwrap().to_string_lossy().into_owned());
        }
        checked.sort();
        for suite in [
            "gme-mixes",
            "k-exclusion",
            "mutex-family",
            "quick",
            "rmr-correlation",
            "scaling",
        ] {
            assert!(
                checked.iter().any(|c| c == suite),
                "{suite} not checked: {checked:?}"
            );
        }
    }
}
