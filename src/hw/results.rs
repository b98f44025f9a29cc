//! Reading saved results back for `correlate` and `predict`: the [`RunResult`]s of a directory
//! of `lockbench run` output (an object counts as a run when it names its lock and threads).
//!
//! A directory holding `results.json` (every run of one invocation) is read from that file
//! alone; any other `*.json` holding a run object or an array of them is read too, so single
//! saved runs and hand-assembled files work. Files that are not results (a calibration, say)
//! are skipped and counted.

use crate::opts::io::Visited;
use std::fs;
use std::path::{Path, PathBuf};

use crate::error::UsageError;
// The one import between siblings that runs both ways (`report` draws its hardware section
// with `hw`): the result record lives with the reports that write it, and hw reads it back
// rather than keep a second reader of the same JSON.
use crate::report::result::ModelRmrs;
use crate::report::RunResult;

/// Reading a saved run back: what the hardware commands need of it.
impl RunResult {
    /// Identifies one configuration across invocations (the thread count included).
    pub fn config_key(&self) -> (String, String, u64, u64, usize, usize) {
        (
            self.lock.clone(),
            self.mix.clone(),
            self.cs_ns,
            self.think_ns,
            self.cs_lines,
            self.threads,
        )
    }

    /// Mean passage time, ns: from the throughput when the run has one (each thread's mean
    /// time from one request to the next, less the think time; no clock is read per passage,
    /// so neither the timer's own cost nor the sampling enters it), else the mean of the timed
    /// passages (none when the run saved neither).
    pub fn passage_mean(&self) -> Option<f64> {
        let t = self.throughput_per_sec;
        if t.is_finite() && t > 0.0 {
            let cycle = self.threads as f64 * 1e9 / t;
            return Some((cycle - self.think_ns as f64).max(0.0));
        }
        let p = &self.passage_ns;
        (p.count > 0 || p.mean != 0.0)
            .then_some(p.mean)
            .filter(|m| m.is_finite())
    }

    /// The CPUs of its threads (`None` for unpinned ones).
    pub fn cpus(&self) -> Vec<Option<usize>> {
        if self.per_thread.is_empty() {
            vec![None; self.threads]
        } else {
            self.per_thread.iter().map(|t| t.cpu).collect()
        }
    }
}

/// Runs read from a directory, with what was skipped.
#[derive(Debug, Default)]
pub struct Loaded {
    /// The runs.
    pub runs: Vec<RunResult>,
    /// JSON files that held no results.
    pub skipped: Vec<PathBuf>,
}

fn json_files(dir: &Path, seen: &mut Visited, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    if !seen.enter(dir) {
        return Ok(());
    }
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    if entries
        .iter()
        .any(|p| p.file_name() == Some("results.json".as_ref()))
    {
        out.push(dir.join("results.json"));
        // A sweep keeps the point it is measuring in `partial/` until the point is done (and
        // then in its own results.json): an unfinished point is not a result.
        let sweep = dir.join("manifest.json").is_file();
        for p in entries.iter().filter(|p| p.is_dir()) {
            if sweep && p.file_name() == Some("partial".as_ref()) {
                continue;
            }
            json_files(p, seen, out)?;
        }
        return Ok(());
    }
    for p in entries {
        if p.is_dir() {
            json_files(&p, seen, out)?;
        } else if p.extension().is_some_and(|e| e == "json") {
            out.push(p);
        }
    }
    Ok(())
}

/// One saved run: an object naming its lock and threads.
fn run_of(v: serde_json::Value) -> Option<RunResult> {
    let named = v.get("lock").is_some_and(serde_json::Value::is_string)
        && v.get("threads").is_some_and(serde_json::Value::is_u64);
    named.then(|| serde_json::from_value(v).ok()).flatten()
}

/// The runs of one results file: a run, or an array of runs (`None` when it is neither).
pub fn runs_of(text: &str) -> Option<Vec<RunResult>> {
    runs_of_value(serde_json::from_str::<serde_json::Value>(text).ok()?)
}

/// The runs of one parsed results file, as [`runs_of`].
fn runs_of_value(v: serde_json::Value) -> Option<Vec<RunResult>> {
    match v {
        serde_json::Value::Array(items) => items.into_iter().map(run_of).collect(),
        v @ serde_json::Value::Object(_) => run_of(v).map(|r| vec![r]),
        _ => None,
    }
}

/// Reads every run under `dir`. A missing directory, or one with no results, is bad input.
pub fn load(dir: &Path) -> Result<Loaded, UsageError> {
    if !dir.is_dir() {
        return Err(UsageError(format!(
            "{} is not a directory of results; give the directory `lockbench run` saved to \
             (e.g. reports/run-...)",
            crate::opts::io::shown(dir)
        )));
    }
    let mut files = Vec::new();
    json_files(dir, &mut Visited::default(), &mut files)
        .map_err(|e| UsageError(format!("cannot read {}: {e}", crate::opts::io::shown(dir))))?;
    let mut loaded = Loaded::default();
    for file in files {
        let text = crate::opts::io::read(&file, crate::opts::io::RESULTS_CAP).map_err(|e| {
            UsageError(format!(
                "cannot read {}: {e}; check its permissions, or move it out of {}",
                crate::opts::io::shown(&file),
                crate::opts::io::shown(dir)
            ))
        })?;
        // A file that is not JSON, or a results.json that is not a list of runs, is damaged
        // (cut short, overwritten): refused by name, never skipped, since the figures would
        // change without it. Other JSON (a calibration, a manifest) is not a result.
        let damaged = |why: String| {
            UsageError(format!(
                "{} is damaged ({why}): measure it again, or move it out of {}",
                crate::opts::io::shown(&file),
                crate::opts::io::shown(dir)
            ))
        };
        let value: serde_json::Value =
            serde_json::from_slice(&text).map_err(|e| damaged(e.to_string()))?;
        let is_results = file.file_name() == Some("results.json".as_ref());
        match runs_of_value(value) {
            Some(runs) if !runs.is_empty() => {
                if let Some(why) = runs.iter().find_map(crate::report::saved::implausible) {
                    return Err(damaged(why));
                }
                loaded.runs.extend(runs)
            }
            Some(_) if is_results => {}
            None if is_results => return Err(damaged("not a list of runs".into())),
            _ => loaded.skipped.push(file),
        }
    }
    if loaded.runs.is_empty() {
        return Err(UsageError(format!(
            "no lockbench results in {}; give the directory `lockbench run` saved to",
            crate::opts::io::shown(dir)
        )));
    }
    Ok(loaded)
}

/// Reads every run under `dir`, as [`load`] does, and requires some run to carry model RMRs
/// (what `correlate` and `predict` work on).
pub fn load_modelled(dir: &Path) -> Result<Loaded, UsageError> {
    let loaded = load(dir)?;
    if loaded.runs.iter().all(|r| r.rmr.is_none()) {
        return Err(UsageError(format!(
            "no run in {} carries model RMRs (every rmr is null); run with --rmr cc|cc-wb|dsm",
            crate::opts::io::shown(dir)
        )));
    }
    Ok(loaded)
}

/// A configuration's model side joined with its measured side.
#[derive(Clone, Debug)]
pub struct Joined<'a> {
    /// The run carrying the model RMRs.
    pub model: &'a RunResult,
    /// Its model RMRs.
    pub rmrs: ModelRmrs,
    /// The run whose clock and counters are used: a run of the same configuration on native
    /// memory when the directory holds one (the counting memory slows every access and adds
    /// traffic of its own), else the model run itself.
    pub measured: &'a RunResult,
}

impl Joined<'_> {
    /// Whether time and counters come from the counting-memory run itself.
    pub fn measured_on_counting_memory(&self) -> bool {
        std::ptr::eq(self.model, self.measured)
    }

    /// The model's RMRs.
    pub fn rmr(&self) -> &ModelRmrs {
        &self.rmrs
    }
}

/// Every run with model RMRs, each joined with a native run of the same configuration when
/// there is one (the first found).
pub fn join(runs: &[RunResult]) -> Vec<Joined<'_>> {
    runs.iter()
        .filter_map(|model| {
            let rmrs = model.model_rmrs()?;
            let measured = runs
                .iter()
                .find(|n| n.rmr.is_none() && n.config_key() == model.config_key())
                .unwrap_or(model);
            Some(Joined {
                model,
                rmrs,
                measured,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(json: &str) -> RunResult {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn tolerates_missing_fields_and_null_rmr() {
        let r = run(r#"{"lock": "ticket", "threads": 2, "rmr": null, "extra": 1}"#);
        assert!(r.rmr.is_none());
        assert_eq!(r.passage_mean(), None);
        assert_eq!(r.cpus(), vec![None, None]);
        let r = run(
            r#"{"lock": "mcs", "threads": 2, "passage_ns": {"mean": 120.5, "p50": 1},
                "per_thread": [{"cpu": 0}, {"cpu": 1}],
                "rmr": {"model": "cc", "per_passage_mean": 4.5, "per_passage_max": 9,
                        "by_section": {"exit": 1.0, "doorway": 2.0, "waiting": {"mean": 1.5},
                                       "cs": 0}}}"#,
        );
        assert_eq!(r.passage_mean(), Some(120.5));
        assert_eq!(r.cpus(), vec![Some(0), Some(1)]);
        let rmr = r.model_rmrs().unwrap();
        assert_eq!(
            rmr.sections(),
            vec![
                ("doorway", 2.0),
                ("waiting", 1.5),
                ("cs", 0.0),
                ("exit", 1.0)
            ]
        );

        // The throughput wins over the timed samples: 2 threads at 10 M/s take 200 ns a cycle,
        // 50 of them thinking.
        let r = run(
            r#"{"lock": "mcs", "threads": 2, "passage_ns": {"mean": 900},
                "throughput_per_sec": 1e7, "think_ns": 50}"#,
        );
        assert_eq!(r.passage_mean(), Some(150.0));
        let r = run(r#"{"lock": "mcs", "threads": 2, "throughput_per_sec": 0}"#);
        assert_eq!(r.passage_mean(), None);
    }

    #[test]
    fn join_prefers_a_native_run_of_the_same_configuration() {
        let runs = vec![
            run(r#"{"lock": "a", "threads": 2, "rmr": {"model": "cc", "per_passage_mean": 3}}"#),
            run(r#"{"lock": "a", "threads": 1, "passage_ns": {"mean": 5}}"#),
            run(r#"{"lock": "a", "threads": 2, "passage_ns": {"mean": 50}}"#),
            run(r#"{"lock": "b", "threads": 2, "rmr": {"model": "cc", "per_passage_mean": 3}}"#),
        ];
        let joined = join(&runs);
        assert_eq!(joined.len(), 2);
        assert_eq!(joined[0].measured.passage_mean(), Some(50.0));
        assert!(!joined[0].measured_on_counting_memory());
        assert!(joined[1].measured_on_counting_memory());
    }

    #[test]
    fn loading_reads_results_json_once_and_skips_other_files() {
        let dir = tempfile::tempdir().unwrap();
        let inv = dir.path().join("run-1");
        fs::create_dir(&inv).unwrap();
        let one = r#"{"lock": "a", "threads": 1}"#;
        fs::write(inv.join("001-a-t1-distinct.json"), one).unwrap();
        fs::write(inv.join("results.json"), format!("[{one}]")).unwrap();
        fs::write(dir.path().join("calibration.json"), r#"{"cpus": [0, 1]}"#).unwrap();
        fs::write(
            dir.path().join("loose.json"),
            r#"{"lock": "b", "threads": 2}"#,
        )
        .unwrap();
        let loaded = load(dir.path()).unwrap();
        let locks: Vec<&str> = loaded.runs.iter().map(|r| r.lock.as_str()).collect();
        assert_eq!(locks, vec!["b", "a"]);
        assert_eq!(loaded.skipped.len(), 1);

        // A sweep's unfinished point (`partial/` beside its manifest) is left out.
        let sweep = tempfile::tempdir().unwrap();
        fs::write(sweep.path().join("manifest.json"), "{}").unwrap();
        fs::write(sweep.path().join("results.json"), format!("[{one}]")).unwrap();
        let partial = sweep.path().join("partial");
        fs::create_dir(&partial).unwrap();
        fs::write(
            partial.join("results.json"),
            r#"[{"lock": "c", "threads": 2}]"#,
        )
        .unwrap();
        let loaded = load(sweep.path()).unwrap();
        let locks: Vec<&str> = loaded.runs.iter().map(|r| r.lock.as_str()).collect();
        assert_eq!(locks, vec!["a"]);

        let empty = tempfile::tempdir().unwrap();
        let err = load(empty.path()).unwrap_err().0;
        assert!(err.contains("no lockbench results"), "{err}");
        let err = load(&empty.path().join("nope")).unwrap_err().0;
        assert!(err.contains("not a directory"), "{err}");
    }

    #[test]
    fn a_damaged_results_file_is_named_not_skipped() {
        let one = r#"{"lock": "a", "threads": 1}"#;
        for (name, text) in [
            ("results.json", format!("[{one}, {{\"lock\"")),
            ("results.json", r#"{"not": "runs"}"#.to_string()),
            ("001-a-t1-distinct.json", one[..10].to_string()),
        ] {
            let dir = tempfile::tempdir().unwrap();
            fs::write(dir.path().join("loose.json"), one).unwrap();
            let sub = dir.path().join("run-1");
            fs::create_dir(&sub).unwrap();
            fs::write(sub.join(name), &text).unwrap();
            let err = load(dir.path()).unwrap_err().0;
            assert!(err.contains(name) && err.contains("is damaged"), "{err}");
        }
    }
}
