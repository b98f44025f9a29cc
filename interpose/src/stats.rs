//! What the interposer saw, counted per process id (each id is used by one thread at a time,
//! so its counters are plain loads and stores on its own cache lines) and written as JSON at
//! exit to `LOCKBENCH_STATS`, where `lockbench app` reads it (docs/apps.md, "The statistics
//! file").
//!
//! Wait (call → acquired) and hold (acquired → release called) times are sampled: one
//! acquisition in `LOCKBENCH_SAMPLE`, chosen by a per-thread random draw, is timed with
//! `CLOCK_MONOTONIC`, into log-linear histograms (4 buckets per power of two: within 25%).

use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_utils::CachePadded;
use serde::Serialize;

/// Histogram buckets: values 0..4 exactly, then 4 per power of two up to 2^64.
pub const BUCKETS: usize = 4 + 62 * 4;

/// The bucket of `v`.
pub fn bucket(v: u64) -> usize {
    if v < 4 {
        return v as usize;
    }
    let e = 63 - v.leading_zeros() as usize; // ≥ 2
    let sub = ((v >> (e - 2)) & 3) as usize;
    4 + (e - 2) * 4 + sub
}

/// The smallest value of bucket `b`.
pub fn bucket_low(b: usize) -> u64 {
    if b < 4 {
        return b as u64;
    }
    let e = (b - 4) / 4 + 2;
    let sub = ((b - 4) % 4) as u64;
    (4 | sub) << (e - 2)
}

/// One id's counters.
pub struct Counters {
    pub acquisitions: AtomicU64,
    pub contended: AtomicU64,
    pub shared: AtomicU64,
    pub trylock_failures: AtomicU64,
    pub passthrough: AtomicU64,
    pub cond_waits: AtomicU64,
    pub violations: AtomicU64,
    pub wait: Box<[AtomicU64]>,
    pub hold: Box<[AtomicU64]>,
}

/// Adds one, as the only writer (a load and a store, no locked instruction).
#[inline]
pub fn bump(c: &AtomicU64) {
    c.store(c.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
}

impl Counters {
    fn new() -> Counters {
        let hist = || (0..BUCKETS).map(|_| AtomicU64::new(0)).collect();
        Counters {
            acquisitions: AtomicU64::new(0),
            contended: AtomicU64::new(0),
            shared: AtomicU64::new(0),
            trylock_failures: AtomicU64::new(0),
            passthrough: AtomicU64::new(0),
            cond_waits: AtomicU64::new(0),
            violations: AtomicU64::new(0),
            wait: hist(),
            hold: hist(),
        }
    }
}

/// Every id's counters.
pub struct Stats {
    pub per_id: Box<[CachePadded<Counters>]>,
}

/// A histogram's summary in the file (ns, each a bucket's lower bound).
#[derive(Serialize, Default)]
pub struct Latency {
    pub samples: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub max: u64,
    /// Non-empty buckets as [lower bound ns, count].
    pub buckets: Vec<[u64; 2]>,
}

impl Latency {
    fn of(counts: &[u64]) -> Latency {
        let samples: u64 = counts.iter().sum();
        let quantile = |q: f64| -> u64 {
            let rank = ((q * samples as f64).ceil() as u64).max(1);
            let mut seen = 0;
            for (b, &c) in counts.iter().enumerate() {
                seen += c;
                if seen >= rank {
                    return bucket_low(b);
                }
            }
            0
        };
        Latency {
            samples,
            p50: quantile(0.5),
            p90: quantile(0.9),
            p99: quantile(0.99),
            max: counts.iter().rposition(|&c| c > 0).map_or(0, bucket_low),
            buckets: counts
                .iter()
                .enumerate()
                .filter(|(_, &c)| c > 0)
                .map(|(b, &c)| [bucket_low(b), c])
                .collect(),
        }
    }
}

/// The statistics file: one JSON object.
#[derive(Serialize, Default)]
pub struct Report {
    pub pid: u32,
    pub program: String,
    pub lock: String,
    pub problem: String,
    pub procs: usize,
    pub ids_peak: usize,
    pub ids_leaked: usize,
    pub mutexes: u64,
    pub rwlocks: u64,
    pub passthrough_mutexes: u64,
    pub acquisitions: u64,
    pub contended: u64,
    pub shared_acquisitions: u64,
    pub trylock_failures: u64,
    pub passthrough_ops: u64,
    pub cond_waits: u64,
    pub violations: u64,
    pub wait_ns: Latency,
    pub hold_ns: Latency,
}

impl Stats {
    /// Counters for `n` ids.
    pub fn new(n: usize) -> Stats {
        Stats {
            per_id: (0..n).map(|_| CachePadded::new(Counters::new())).collect(),
        }
    }

    /// Every counter back to zero (a forked child).
    pub fn reset(&self) {
        for c in self.per_id.iter() {
            for a in [
                &c.acquisitions,
                &c.contended,
                &c.shared,
                &c.trylock_failures,
                &c.passthrough,
                &c.cond_waits,
                &c.violations,
            ] {
                a.store(0, Ordering::Relaxed);
            }
            for a in c.wait.iter().chain(c.hold.iter()) {
                a.store(0, Ordering::Relaxed);
            }
        }
    }

    /// The sums over every id, into `r`.
    pub fn fill(&self, r: &mut Report) {
        let sum = |f: &dyn Fn(&Counters) -> &AtomicU64| -> u64 {
            self.per_id
                .iter()
                .map(|c| f(c).load(Ordering::Relaxed))
                .sum()
        };
        r.acquisitions = sum(&|c| &c.acquisitions);
        r.contended = sum(&|c| &c.contended);
        r.shared_acquisitions = sum(&|c| &c.shared);
        r.trylock_failures = sum(&|c| &c.trylock_failures);
        r.passthrough_ops = sum(&|c| &c.passthrough);
        r.cond_waits = sum(&|c| &c.cond_waits);
        r.violations = sum(&|c| &c.violations);
        let merged = |f: &dyn Fn(&Counters) -> &[AtomicU64]| -> Vec<u64> {
            (0..BUCKETS)
                .map(|b| {
                    self.per_id
                        .iter()
                        .map(|c| f(c)[b].load(Ordering::Relaxed))
                        .sum()
                })
                .collect()
        };
        r.wait_ns = Latency::of(&merged(&|c| &c.wait));
        r.hold_ns = Latency::of(&merged(&|c| &c.hold));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_ordered_and_tight() {
        for v in [0u64, 1, 3, 4, 5, 7, 8, 100, 1000, 123_456_789, u64::MAX] {
            let b = bucket(v);
            assert!(b < BUCKETS);
            assert!(bucket_low(b) <= v, "{v}");
            assert!(v - bucket_low(b) <= v / 4 + 1, "{v} within 25%");
            if b + 1 < BUCKETS {
                assert!(bucket_low(b + 1) > v, "{v}");
            }
        }
    }

    #[test]
    fn quantiles_from_counts() {
        let mut counts = vec![0u64; BUCKETS];
        counts[bucket(100)] = 98;
        counts[bucket(10_000)] = 2;
        let l = Latency::of(&counts);
        assert_eq!(l.samples, 100);
        assert_eq!(l.p50, bucket_low(bucket(100)));
        assert_eq!(l.p99, bucket_low(bucket(10_000)));
        assert_eq!(l.max, bucket_low(bucket(10_000)));
    }
}
