//! Latency histograms: one HdrHistogram per thread, in clock ticks, merged after join and
//! converted to nanoseconds only when summarised.

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::workload::rng::Rng;

/// Chooses which passages are timed: after each timed passage, the number of untimed ones
/// before the next is drawn from a geometric distribution, so each passage is timed with
/// probability `1 / mean`, independently of every other. A fixed stride (every N-th passage)
/// aliases with periodic lock behaviour — two threads alternating on a FIFO lock would have
/// every sample land on the same phase — random gaps cannot.
#[derive(Clone, Debug)]
pub struct SampleGaps {
    rng: Rng,
    /// `1 / ln(1 − 1/mean)` (negative), or 0 when every passage is timed.
    scale: f64,
}

impl SampleGaps {
    /// Gaps with mean `mean − 1`, i.e. one passage in `mean` timed on average (`mean` ≤ 1: every
    /// passage), drawn from stream `stream` of `seed`.
    pub fn new(mean: u64, seed: u64, stream: u64) -> Self {
        let scale = if mean <= 1 {
            0.0
        } else {
            1.0 / (1.0 - 1.0 / mean as f64).ln()
        };
        SampleGaps {
            rng: Rng::new(seed ^ 0x5A3C_96E1_0F87_D2B4, stream),
            scale,
        }
    }

    /// Untimed passages before the next timed one: `floor(ln(u) / ln(1 − 1/mean))` for `u`
    /// uniform in (0, 1], the inverse of the geometric distribution's CDF.
    #[inline]
    pub fn next_gap(&mut self) -> u64 {
        if self.scale == 0.0 {
            return 0;
        }
        let u = 1.0 - self.rng.next_f64(); // in (0, 1]
        (u.ln() * self.scale) as u64
    }
}

/// A histogram of clock ticks able to hold any latency up to ten minutes at 3 significant
/// figures (about 0.1% resolution).
pub fn ticks_histogram(ns_per_tick: f64) -> Histogram<u64> {
    let max_ticks = (600e9 / ns_per_tick.max(1e-3)) as u64;
    Histogram::new_with_bounds(1, max_ticks.max(2), 3).expect("valid histogram bounds")
}

/// Latency percentiles in nanoseconds.
#[derive(Clone, Copy, Debug, Default, Serialize, serde::Deserialize, PartialEq)]
#[serde(default)]
pub struct LatencySummary {
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p999: f64,
    /// Largest recorded.
    pub max: f64,
    /// Mean.
    pub mean: f64,
    /// Samples recorded.
    pub count: u64,
}

impl LatencySummary {
    /// Summarises a histogram of ticks.
    pub fn of(h: &Histogram<u64>, ns_per_tick: f64) -> Self {
        if h.is_empty() {
            return LatencySummary::default();
        }
        let q = |q: f64| h.value_at_quantile(q) as f64 * ns_per_tick;
        LatencySummary {
            p50: q(0.5),
            p90: q(0.9),
            p99: q(0.99),
            p999: q(0.999),
            max: h.max() as f64 * ns_per_tick,
            mean: h.mean() * ns_per_tick,
            count: h.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Which of `passages` passages a sampler times.
    fn timed(mean: u64, seed: u64, passages: usize) -> Vec<bool> {
        let mut g = SampleGaps::new(mean, seed, 0);
        let mut out = vec![false; passages];
        let mut countdown = g.next_gap();
        for slot in out.iter_mut() {
            if countdown == 0 {
                *slot = true;
                countdown = g.next_gap();
            } else {
                countdown -= 1;
            }
        }
        out
    }

    #[test]
    fn sampling_rate_is_one_in_mean() {
        for mean in [1u64, 2, 7, 64, 1000] {
            let n = 2_000_000;
            let hits = timed(mean, 11, n).iter().filter(|&&t| t).count() as f64;
            let expected = n as f64 / mean as f64;
            // Binomial standard deviation; 5 sigma plus a hair.
            let sd = (n as f64 * (1.0 / mean as f64) * (1.0 - 1.0 / mean as f64)).sqrt();
            assert!(
                (hits - expected).abs() <= 5.0 * sd + 1.0,
                "mean {mean}: {hits} timed of {n}, expected {expected:.0} ± {sd:.0}"
            );
        }
        assert!(
            timed(1, 3, 1000).iter().all(|&t| t),
            "mean 1 times every passage"
        );
    }

    #[test]
    fn sampling_does_not_alias_with_a_periodic_sequence() {
        // A strictly periodic sequence (period 2: two threads alternating on a FIFO lock; or
        // period 64) sampled at a mean equal to, or a multiple of, its period: a fixed stride
        // would put every sample on one phase. Random gaps spread them evenly over the phases.
        for (period, mean) in [(2usize, 2u64), (2, 64), (4, 8), (64, 64), (3, 6)] {
            let marks = timed(mean, 5, 3_000_000);
            let mut per_phase = vec![0f64; period];
            for (i, _) in marks.iter().enumerate().filter(|(_, &t)| t) {
                per_phase[i % period] += 1.0;
            }
            let total: f64 = per_phase.iter().sum();
            let even = total / period as f64;
            // Each phase's count is binomial around `even`: within 5 standard deviations.
            let sd = (total * (1.0 / period as f64) * (1.0 - 1.0 / period as f64)).sqrt();
            for (phase, &c) in per_phase.iter().enumerate() {
                assert!(
                    (c - even).abs() < 5.0 * sd,
                    "period {period}, mean {mean}: phase {phase} got {c} of {total} samples"
                );
            }
        }
    }

    #[test]
    fn gaps_are_geometric() {
        // P(gap = 0) = 1/mean, P(gap = 1) = (1 − 1/mean)/mean.
        let mean = 4u64;
        let mut g = SampleGaps::new(mean, 9, 1);
        let n = 400_000;
        let mut zero = 0usize;
        let mut one = 0usize;
        for _ in 0..n {
            match g.next_gap() {
                0 => zero += 1,
                1 => one += 1,
                _ => {}
            }
        }
        let p0 = zero as f64 / n as f64;
        let p1 = one as f64 / n as f64;
        assert!((p0 - 0.25).abs() < 0.005, "P(0) = {p0}");
        assert!((p1 - 0.1875).abs() < 0.005, "P(1) = {p1}");
    }

    #[test]
    fn summary_scales_ticks_to_ns() {
        let mut h = ticks_histogram(0.5);
        for v in 1..=1000u64 {
            h.record(v).unwrap();
        }
        let s = LatencySummary::of(&h, 0.5);
        assert_eq!(s.count, 1000);
        assert!((s.p50 - 250.0).abs() < 1.0, "{s:?}");
        assert!((s.max - 500.0).abs() < 1.0, "{s:?}");
        assert!((s.mean - 250.25).abs() < 0.5, "{s:?}");
        assert_eq!(
            LatencySummary::of(&ticks_histogram(1.0), 1.0),
            LatencySummary::default()
        );
    }
}
