//! `lockbench predict DIR`: passage time predicted from model RMRs and a calibration, set
//! against the clock.
//!
//! For a configuration run with T threads on CPUs P:
//!
//! ```text
//! predicted = local + Σ_sections RMRs(section) × cost(P)
//! ```
//!
//! Passage times come from the throughput (threads / throughput − think time: no clock is read
//! per passage, so the timer's own cost is not in them), or from the timed passages of runs
//! that carry no throughput. `local` is the uncontended cost: the mean passage time of the
//! same lock and workload at one thread (the lock's instructions, the critical section, the
//! harness), less what its own RMRs cost there, since with one thread every access hits the
//! thread's own cache:
//!
//! ```text
//! local = passage(1 thread) − RMRs(1 thread) × cost(1 thread)
//! ```
//!
//! `RMRs` are the model's per-passage means by section, and `cost(P)` the calibrated cost of
//! one access among the CPUs of P: the mean of load, store and RMW over the ordered pairs of
//! distinct CPUs, or the local access cost (the diagonal) for one thread. The error is
//! `(predicted − measured) / measured`. The 1-thread row is the base the others are built on:
//! its prediction equals its measurement by construction, and it is left out of the errors.
//!
//! The model counts one passage's RMRs; it does not know how long a waiter waits for the
//! passages of others. Locks whose waiting RMRs grow with the wait (spinning on a line every
//! release invalidates) are predicted closer than queue locks with O(1) RMRs per passage,
//! whose passage time under contention is mostly other threads' passages.

use std::fmt::Write as _;

use serde::Serialize;

use super::calibrate::Calibration;
use super::results::join;
use crate::report::result::ModelRmrs;
use crate::report::RunResult;

/// One configuration's prediction.
#[derive(Clone, Debug, Serialize)]
pub struct Prediction {
    /// Lock.
    pub lock: String,
    /// Mix.
    pub mix: String,
    /// Threads.
    pub threads: usize,
    /// RMR model.
    pub model: String,
    /// RMRs per passage (sum of the sections, or the total when no sections are given).
    pub rmr_per_passage: f64,
    /// Per section: (section, RMRs per passage, predicted ns).
    pub by_section: Vec<(String, f64, f64)>,
    /// Cost of one RMR for this placement, ns.
    pub cost_per_rmr_ns: f64,
    /// Which calibration entries gave the cost.
    pub cost_basis: String,
    /// Uncontended cost: the 1-thread passage time less its RMRs at local cost, ns.
    pub local_ns: Option<f64>,
    /// This is the 1-thread base row (predicted = measured by construction).
    pub base: bool,
    /// Predicted mean passage time, ns.
    pub predicted_ns: Option<f64>,
    /// Measured mean passage time, ns.
    pub measured_ns: Option<f64>,
    /// (predicted − measured) / measured × 100.
    pub error_pct: Option<f64>,
    /// The measured time comes from the counting-memory run itself (no native run beside it).
    pub measured_on_counting_memory: bool,
    /// Why a figure is missing.
    pub note: Option<String>,
}

/// Predictions and their summary.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// One per configuration with model RMRs.
    pub predictions: Vec<Prediction>,
    /// Mean absolute error per thread count: (threads, mean |error| %, configurations).
    pub mean_abs_error_pct: Vec<(usize, f64, usize)>,
    /// Mean absolute error over every prediction.
    pub overall_mean_abs_error_pct: Option<f64>,
    /// Calibration used: CPUs and host.
    pub calibration: String,
}

/// The uncontended cost of `run`'s configuration: its 1-thread passage time (a native run
/// preferred) less the 1-thread RMRs (of the same model) at the local cost of that thread's CPU.
/// Below zero when the RMRs at the calibrated cost take longer than the measured passage.
fn local_time(run: &RunResult, runs: &[RunResult], cal: &Calibration) -> Option<f64> {
    let mut key = run.config_key();
    key.5 = 1;
    let same = |r: &&RunResult| r.config_key() == key && r.passage_mean().is_some();
    let timed = runs
        .iter()
        .filter(|r| r.rmr.is_none())
        .find(same)
        .or_else(|| runs.iter().find(same))?;
    let model = run.model_rmrs().map(|m| m.model);
    let own_rmrs = runs
        .iter()
        .filter(|r| r.config_key() == key)
        .filter_map(RunResult::model_rmrs)
        .find(|m| Some(&m.model) == model.as_ref())
        .map_or(0.0, |m| total_rmrs(&m));
    let (local_cost, _) = cal.cost_for(&timed.cpus());
    Some(timed.passage_mean()? - own_rmrs * local_cost)
}

/// RMRs per passage: the sum of the sections, or the total when no sections are given.
fn total_rmrs(rmr: &ModelRmrs) -> f64 {
    let sections = rmr.sections();
    if sections.is_empty() {
        rmr.per_passage_mean
    } else {
        sections.iter().map(|(_, v)| v).sum()
    }
}

/// Predicts every configuration of `runs` that carries model RMRs.
pub fn predict(runs: &[RunResult], cal: &Calibration) -> Report {
    let mut predictions = Vec::new();
    for j in join(runs) {
        let rmr = j.rmr();
        let sections = rmr.sections();
        let total = total_rmrs(rmr);
        let (cost, basis) = cal.cost_for(&j.measured.cpus());
        let raw_local = local_time(j.model, runs, cal);
        // A passage shorter than its own RMRs at the calibrated cost: the uncontended time is
        // taken as 0, and the predictions built on it say so.
        let clamped = raw_local.is_some_and(|l| l < 0.0);
        let local = raw_local.map(|l| l.max(0.0));
        let measured = j.measured.passage_mean();
        let base = j.model.threads == 1;
        // The base row's prediction is its measurement, by construction.
        let predicted = if base && local.is_some() {
            measured
        } else {
            local.map(|l| l + total * cost)
        };
        let error = match (predicted, measured) {
            (Some(p), Some(m)) if m > 0.0 && !base => Some((p - m) / m * 100.0),
            _ => None,
        };
        let note = if local.is_none() {
            Some("no 1-thread run of this configuration in the directory for the local cost")
        } else if measured.is_none() {
            Some("no measured passage time")
        } else if clamped && !base {
            Some(
                "the 1-thread passage is shorter than its model RMRs at the calibrated local cost: \
                 the uncontended time is taken as 0, so this prediction is the RMRs' cost alone",
            )
        } else {
            None
        };
        predictions.push(Prediction {
            lock: j.model.lock.clone(),
            mix: j.model.mix.clone(),
            threads: j.model.threads,
            model: rmr.model.clone(),
            rmr_per_passage: total,
            by_section: sections
                .iter()
                .map(|(s, v)| (s.to_string(), *v, v * cost))
                .collect(),
            cost_per_rmr_ns: cost,
            cost_basis: basis,
            local_ns: local,
            base,
            predicted_ns: predicted,
            measured_ns: measured,
            error_pct: error,
            measured_on_counting_memory: j.measured_on_counting_memory(),
            note: note.map(str::to_string),
        });
    }
    predictions.sort_by(|a, b| {
        (&a.model, &a.mix, &a.lock, a.threads).cmp(&(&b.model, &b.mix, &b.lock, b.threads))
    });
    let mut threads: Vec<usize> = predictions.iter().map(|p| p.threads).collect();
    threads.sort_unstable();
    threads.dedup();
    let mean_abs = |errs: Vec<f64>| {
        (!errs.is_empty()).then(|| errs.iter().map(|e| e.abs()).sum::<f64>() / errs.len() as f64)
    };
    let mean_abs_error_pct = threads
        .into_iter()
        .filter_map(|t| {
            let errs: Vec<f64> = predictions
                .iter()
                .filter(|p| p.threads == t)
                .filter_map(|p| p.error_pct)
                .collect();
            let n = errs.len();
            mean_abs(errs).map(|m| (t, m, n))
        })
        .collect();
    let overall = mean_abs(predictions.iter().filter_map(|p| p.error_pct).collect());
    Report {
        predictions,
        mean_abs_error_pct,
        overall_mean_abs_error_pct: overall,
        calibration: format!(
            "cpus {} on {}",
            crate::runner::topology::format_cpu_list(&cal.cpus),
            cal.cpu_model.as_deref().unwrap_or("an unknown CPU")
        ),
    }
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".to_string(), |v| format!("{v:.digits$}"))
}

/// The report as text.
pub fn table(r: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "predicted passage time = 1-thread passage + Σ sections RMRs × transfer cost \
         (calibration: {})",
        r.calibration
    );
    let _ = writeln!(
        out,
        "{:<18} {:<10} {:>4} {:<6} {:>9} {:>9} {:>10} {:>11} {:>11} {:>8}",
        "lock",
        "mix",
        "thr",
        "model",
        "rmr/pass",
        "ns/rmr",
        "local ns",
        "predicted",
        "measured",
        "error"
    );
    for p in &r.predictions {
        let _ = writeln!(
            out,
            "{:<18} {:<10} {:>4} {:<6} {:>9.2} {:>9.1} {:>10} {:>11} {:>11} {:>8}",
            p.lock,
            p.mix,
            p.threads,
            p.model,
            p.rmr_per_passage,
            p.cost_per_rmr_ns,
            opt(p.local_ns, 1),
            opt(p.predicted_ns, 1),
            format!(
                "{}{}",
                opt(p.measured_ns, 1),
                if p.measured_on_counting_memory {
                    "*"
                } else {
                    ""
                }
            ),
            match p.error_pct {
                Some(e) => format!("{e:+.1}%"),
                None if p.base => "base".to_string(),
                None => "-".to_string(),
            }
        );
    }
    if r.predictions.iter().any(|p| p.base) {
        let _ = writeln!(
            out,
            "base: the 1-thread run gives the uncontended cost; its prediction is its measurement"
        );
    }
    if r.predictions.iter().any(|p| p.measured_on_counting_memory) {
        let _ = writeln!(
            out,
            "* measured on the counting memory (no native run of it in the directory)"
        );
    }
    for p in r.predictions.iter().filter(|p| p.note.is_some()) {
        let _ = writeln!(
            out,
            "note: {} t{}: {}",
            p.lock,
            p.threads,
            p.note.as_deref().unwrap_or_default()
        );
    }
    for (t, e, n) in &r.mean_abs_error_pct {
        let _ = writeln!(
            out,
            "mean |error| at {t} thread{}: {e:.1}% over {n} configuration{}",
            if *t == 1 { "" } else { "s" },
            if *n == 1 { "" } else { "s" }
        );
    }
    if let Some(e) = r.overall_mean_abs_error_pct {
        let _ = writeln!(out, "mean |error| overall: {e:.1}%");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cal() -> Calibration {
        Calibration {
            version: "0".into(),
            timestamp: 0,
            cpu_model: Some("test".into()),
            hostname: None,
            cpus: vec![0, 1],
            lines: 8,
            rounds: 3,
            load_ns: vec![vec![1.0, 100.0], vec![100.0, 1.0]],
            store_ns: vec![vec![1.0, 100.0], vec![100.0, 1.0]],
            rmw_ns: vec![vec![1.0, 100.0], vec![100.0, 1.0]],
            iqr_ns: vec![],
            notes: vec![],
        }
    }

    fn run(json: &str) -> RunResult {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn predicts_from_sections_local_time_and_cost() {
        let runs = vec![
            run(r#"{"lock": "t", "threads": 1, "passage_ns": {"mean": 50},
                    "per_thread": [{"cpu": 0}],
                    "rmr": {"model": "cc", "per_passage_mean": 2,
                            "by_section": {"doorway": 1, "exit": 1}}}"#),
            run(r#"{"lock": "t", "threads": 2, "passage_ns": {"mean": 900},
                    "per_thread": [{"cpu": 0}, {"cpu": 1}],
                    "rmr": {"model": "cc", "per_passage_mean": 6,
                            "by_section": {"doorway": 1, "waiting": 3, "exit": 1, "cs": 1}}}"#),
            // A native run of the 2-thread configuration: its time is the one measured.
            run(r#"{"lock": "t", "threads": 2, "passage_ns": {"mean": 500},
                    "per_thread": [{"cpu": 0}, {"cpu": 1}]}"#),
            run(r#"{"lock": "u", "threads": 2, "passage_ns": {"mean": 100},
                    "rmr": {"model": "cc", "per_passage_mean": 3}}"#),
        ];
        let r = predict(&runs, &cal());
        assert_eq!(r.predictions.len(), 3);
        let one = &r.predictions[0];
        // The base: 50 ns less its 2 RMRs at the local 1 ns = 48 uncontended, + 2 × 1 = 50.
        assert_eq!((one.lock.as_str(), one.threads), ("t", 1));
        assert_eq!(one.local_ns, Some(48.0));
        assert_eq!(one.predicted_ns, Some(50.0));
        assert_eq!(one.error_pct, None);
        assert!(one.base && one.measured_on_counting_memory);
        let two = &r.predictions[1];
        // 48 + 6 × 100 = 648 against the native 500: +29.6%.
        assert_eq!(two.predicted_ns, Some(648.0));
        assert_eq!(two.measured_ns, Some(500.0));
        assert!((two.error_pct.unwrap() - 29.6).abs() < 1e-9);
        assert!(!two.measured_on_counting_memory);
        assert_eq!(two.by_section[1], ("waiting".to_string(), 3.0, 300.0));
        // No 1-thread run of u: no prediction, and the note says why.
        let u = &r.predictions[2];
        assert_eq!(u.predicted_ns, None);
        assert!(u.note.as_deref().unwrap().contains("1-thread"));
        assert_eq!(r.mean_abs_error_pct.len(), 1);
        let (t, e, n) = r.mean_abs_error_pct[0];
        assert_eq!((t, n), (2, 1));
        assert!((e - 29.6).abs() < 1e-9);
        let text = table(&r);
        assert!(
            text.contains("+29.6%") && text.contains("base") && text.contains("overall: 29.6%"),
            "{text}"
        );
    }

    #[test]
    fn a_base_shorter_than_its_rmrs_is_predicted_as_measured_and_its_others_say_so() {
        // 2.1 ns at 1 thread against 4 RMRs at the local 1 ns: the raw uncontended time is
        // below zero.
        let runs = vec![
            run(r#"{"lock": "t", "threads": 1, "passage_ns": {"mean": 2.1},
                    "per_thread": [{"cpu": 0}],
                    "rmr": {"model": "cc", "per_passage_mean": 4}}"#),
            run(r#"{"lock": "t", "threads": 2, "passage_ns": {"mean": 300},
                    "per_thread": [{"cpu": 0}, {"cpu": 1}],
                    "rmr": {"model": "cc", "per_passage_mean": 2}}"#),
        ];
        let r = predict(&runs, &cal());
        let one = &r.predictions[0];
        assert!(one.base);
        assert_eq!(one.predicted_ns, one.measured_ns);
        assert_eq!(one.predicted_ns, Some(2.1));
        assert_eq!(one.local_ns, Some(0.0));
        let two = &r.predictions[1];
        // 0 + 2 × 100.
        assert_eq!(two.predicted_ns, Some(200.0));
        assert!(
            two.note.as_deref().unwrap().contains("taken as 0"),
            "{two:?}"
        );
        let text = table(&r);
        let base_row = text
            .lines()
            .find(|l| l.starts_with("t ") && l.contains("base"));
        assert!(
            base_row.is_some_and(|l| l.matches("2.1").count() == 2),
            "{text}"
        );
    }
}
