//! The clock and how often to time a passage: nanoseconds per tick, the calibrated cost of
//! timing one passage, and the sampling rate that keeps timing within its budget (the default
//! rate, and how each thread thins it out after its warm-up).

use std::time::Instant;

use quanta::Clock;

use crate::runner::spec::Latencies;

/// Nanoseconds per raw tick of `clock`.
pub fn ns_per_tick(clock: &Clock) -> f64 {
    const SPAN: u64 = 1 << 32;
    clock.delta_as_nanos(0, SPAN) as f64 / SPAN as f64
}

/// The cost of timing one passage, ns: the five clock reads (request, inside, exit start, exit
/// end, and the next request that closes the whole passage) and three histogram records,
/// best of several rounds. [`auto_latency_sample`] turns it into a sampling rate.
pub fn timed_passage_cost_ns() -> f64 {
    let clock = Clock::new();
    let npt = ns_per_tick(&clock);
    let mut h = Latencies::new(npt);
    const ROUNDS: usize = 7;
    const ITERS: u64 = 20_000;
    let mut best = f64::MAX;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let mut prev = clock.raw();
        for _ in 0..ITERS {
            let t0 = clock.raw();
            let t1 = clock.raw();
            let t2 = clock.raw();
            let t3 = clock.raw();
            let next = clock.raw();
            h.passage
                .saturating_record(std::hint::black_box(next.wrapping_sub(prev).max(1)));
            h.entry.saturating_record(t1.wrapping_sub(t0).max(1));
            h.exit.saturating_record(t3.wrapping_sub(t2).max(1));
            prev = next;
        }
        best = best.min(start.elapsed().as_nanos() as f64 / ITERS as f64);
    }
    std::hint::black_box(&h);
    best
}

/// Time spent timing per passage that the default sampling allows, ns: the rest of the
/// harness's 2 ns budget goes to the oracle and the loop's bookkeeping.
pub const TIMING_BUDGET_NS: f64 = 0.5;

/// The most of a passage's own time that timing may take on average when the sampling rate is
/// the default, as a share of the calibrated cost of timing one passage: 0.25%. The
/// calibration ([`timed_passage_cost_ns`]) times passages back to back, its histogram lines
/// hot in the cache; in the passage loop a sparse timed passage finds them cold and costs
/// several times as much, so that in practice timing takes about 1% of the loop's time.
pub const TIMING_SHARE: f64 = 0.0025;

/// Timed passages a thread should still expect when its sampling thins out.
pub const MIN_SAMPLES: f64 = 2000.0;

/// The sampling rate of a thread whose passages took `passage_ns` each in the warm-up and that
/// expects to run `expected` measured passages, under the default rate `floor`: `floor`, or
/// sparser where timing one passage (`timing_cost_ns`) would take more than [`TIMING_SHARE`]
/// of the passage time — but never so sparse that fewer than [`MIN_SAMPLES`] passages would
/// be timed, and at most one in 65536.
pub fn adapted_latency_sample(
    floor: u64,
    timing_cost_ns: f64,
    passage_ns: f64,
    expected: f64,
) -> u64 {
    // A NaN or non-positive cost keeps the floor; a zero passage time gives infinity, the cap.
    let n = (timing_cost_ns / (TIMING_SHARE * passage_ns.max(0.0))).ceil();
    if timing_cost_ns > 0.0 && !n.is_nan() {
        let enough = (expected / MIN_SAMPLES).floor();
        let enough = if enough.is_nan() { 0.0 } else { enough };
        (n.min(65536.0).min(enough) as u64).max(floor)
    } else {
        floor
    }
}

/// The default sampling rate: one passage in `N` timed, with `N` such that timing costs at most
/// [`TIMING_BUDGET_NS`] per passage on average given what one timed passage costs
/// (`timed_cost_ns`), and between 16 and 4096.
pub fn auto_latency_sample(timed_cost_ns: f64) -> u64 {
    let n = (timed_cost_ns / TIMING_BUDGET_NS).ceil();
    if n.is_finite() {
        (n as u64).clamp(16, 4096)
    } else {
        4096
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampling_cost_is_measured_and_bounded() {
        let ns = timed_passage_cost_ns();
        assert!(ns > 0.0 && ns.is_finite());
        let n = auto_latency_sample(ns);
        assert!((16..=4096).contains(&n));
        assert_eq!(auto_latency_sample(40.0), 80);
        assert_eq!(auto_latency_sample(1.0), 16);
        assert_eq!(auto_latency_sample(1e9), 4096);
    }

    #[test]
    fn default_sampling_thins_out_where_timing_would_cost_over_one_percent() {
        // 60 ns to time a passage: a 3 ns passage may be timed once in 8000, a 6 µs one as
        // often as the floor allows; never more often than the floor, never rarer than 65536.
        let many = 1e12;
        assert_eq!(adapted_latency_sample(112, 60.0, 3.0, many), 8000);
        assert_eq!(adapted_latency_sample(112, 60.0, 6000.0, many), 112);
        assert_eq!(adapted_latency_sample(112, 60.0, 1e-6, many), 65536);
        assert_eq!(adapted_latency_sample(112, 60.0, 0.0, many), 65536);
        assert_eq!(adapted_latency_sample(112, f64::NAN, 3.0, many), 112);
        // ... and never so rarely that fewer than MIN_SAMPLES are expected (down to the floor).
        assert_eq!(adapted_latency_sample(112, 60.0, 3.0, 1e6), 500);
        assert_eq!(adapted_latency_sample(112, 60.0, 3.0, 400.0), 112);
        assert_eq!(adapted_latency_sample(112, 60.0, 3.0, f64::NAN), 112);
    }
}
