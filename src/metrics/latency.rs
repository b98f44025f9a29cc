//! Latency histograms: one HdrHistogram per thread, in clock ticks, merged after join and
//! converted to nanoseconds only when summarised.

use hdrhistogram::Histogram;
use serde::Serialize;

/// A histogram of clock ticks able to hold any latency up to ten minutes at 3 significant
/// figures (about 0.1% resolution).
pub fn ticks_histogram(ns_per_tick: f64) -> Histogram<u64> {
    let max_ticks = (600e9 / ns_per_tick.max(1e-3)) as u64;
    Histogram::new_with_bounds(1, max_ticks.max(2), 3).expect("valid histogram bounds")
}

/// Latency percentiles in nanoseconds.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
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
