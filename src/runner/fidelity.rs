//! The observer effect, measured: the harness's passage loop against a bare loop of the same
//! lock (`enter; exit`, nothing timed, nothing checked, the count written once at the end), in
//! interleaved rounds so that drift of a shared machine hits both alike.

use serde::Serialize;

use crate::metrics::stats::Spread;
use crate::metrics::stats::{median_estimate, Estimate};
use crate::runner::exec::{LoopKind, RunFailure, RunSpec};

/// Harness against bare loop for one lock at one thread count.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize, PartialEq)]
#[serde(default)]
pub struct FidelityPoint {
    /// The lock.
    pub lock: String,
    /// Threads.
    pub threads: usize,
    /// Rounds (each runs the bare loop and the harness once, in alternating order).
    pub rounds: usize,
    /// The oracle the harness ran with.
    pub oracle: String,
    /// How waiting threads waited in both loops (`spin` or `spin-then-yield`).
    pub wait: String,
    /// One passage in this many was timed in the harness.
    pub latency_sample: u64,
    /// Bare-loop throughput, passages per second (median over rounds).
    pub bare_per_sec: f64,
    /// Harness throughput, passages per second (median over rounds).
    pub harness_per_sec: f64,
    /// Harness / bare throughput, paired within each round: median and interval. 1 means the
    /// harness is invisible; below 1, it slows the lock down.
    pub ratio: Estimate,
    /// The per-round ratios.
    pub ratios: Vec<f64>,
    /// The min–max range of the bare loop's throughput over the rounds, relative to its median
    /// (the one spread of every table, JSON and CSV): how far unpaired measurements of the lock
    /// stray on this machine.
    pub bare_spread: f64,
    /// The same for the paired per-round ratios: how far one paired ratio may stray.
    pub ratio_spread: f64,
    /// At one thread: what the harness adds to each passage, ns (median over rounds of
    /// 1/harness − 1/bare). Null at more threads, where time per passage is not additive.
    pub added_ns_per_passage: Option<f64>,
}

/// Runs `template` (its lock, threads, workload and settings; the stop rule must be a
/// duration) `rounds` times in both loops, alternating which goes first.
pub fn measure(template: &RunSpec, rounds: usize) -> Result<FidelityPoint, RunFailure> {
    let name = template.lock.info.name;
    let (mut bare, mut harness, mut ratios, mut added) = (vec![], vec![], vec![], vec![]);
    for round in 0..rounds.max(1) {
        let order = if round % 2 == 0 {
            [LoopKind::Bare, LoopKind::Harness]
        } else {
            [LoopKind::Harness, LoopKind::Bare]
        };
        let mut tp = [0.0f64; 2];
        for kind in order {
            let rep = (template.lock.bench)(template, kind)?;
            if let Some(why) = rep.stalled {
                return Err(RunFailure(format!("{name}: {why}")));
            }
            if rep.violations > 0 {
                return Err(RunFailure(format!(
                    "{name}: {} safety violations in the harness loop",
                    rep.violations
                )));
            }
            if rep.throughput_per_sec <= 0.0 {
                return Err(RunFailure(format!(
                    "{name}: no passage measured (lengthen the duration)"
                )));
            }
            tp[usize::from(kind == LoopKind::Harness)] = rep.throughput_per_sec;
        }
        bare.push(tp[0]);
        harness.push(tp[1]);
        ratios.push(tp[1] / tp[0]);
        added.push(1e9 / tp[1] - 1e9 / tp[0]);
    }
    let med = |v: &[f64]| median_estimate(v).map_or(0.0, |e| e.median);
    Ok(FidelityPoint {
        lock: name.to_string(),
        threads: template.threads,
        rounds: ratios.len(),
        oracle: template.effective_oracle().name().to_string(),
        wait: template.policy.name().to_string(),
        latency_sample: template.latency_sample,
        bare_per_sec: med(&bare),
        harness_per_sec: med(&harness),
        ratio: median_estimate(&ratios).expect("at least one round"),
        added_ns_per_passage: (template.threads == 1).then(|| med(&added)),
        bare_spread: Spread::of(&bare).relative,
        ratio_spread: Spread::of(&ratios).relative,
        ratios,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::OracleKind;
    use crate::mem::WaitPolicy;
    use crate::runner::exec::StopRule;
    use std::time::Duration;

    #[test]
    fn measures_both_loops_in_every_round() {
        let spec = RunSpec {
            warmup: Duration::from_millis(5),
            oracle: OracleKind::SelfCheck,
            latency_sample: 64,
            policy: WaitPolicy::Spin,
            // 200 ms, not 30: a loop only counts when its thread ran inside the window, and
            // with the other tests' threads spinning on two cores a 30 ms window sometimes
            // passed with the thread never scheduled ("no passage measured").
            ..RunSpec::new(
                crate::runner::ticket(),
                1,
                StopRule::Duration(Duration::from_millis(200)),
            )
        };
        let f = measure(&spec, 3).unwrap();
        assert_eq!((f.lock.as_str(), f.threads, f.rounds), ("ticket", 1, 3));
        assert_eq!(f.ratios.len(), 3);
        assert!(f.bare_per_sec > 0.0 && f.harness_per_sec > 0.0);
        assert!(f.ratios.iter().all(|r| r.is_finite() && *r > 0.0));
        assert!(f.ratio.interval.is_some());
        assert!(f.bare_spread >= 0.0 && f.ratio_spread >= 0.0);
        assert!(f.added_ns_per_passage.is_some());
        assert_eq!(f.oracle, "self-check");
        assert_eq!(f.wait, "spin");
    }
}
