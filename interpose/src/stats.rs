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

/// The statistics file's line, defined once with the reader's (`lockbench app`) side: the
/// same source file compiled into both crates (why not a crate of its own: that file's doc).
#[path = "../../src/engine/app/record.rs"]
#[allow(dead_code)] // the reader's half (`Record::from_lines`) runs here in the tests only
mod record;

pub use record::{Hist as Latency, Record as Report};

/// A histogram's summary from its bucket counts (index = bucket).
fn latency(counts: &[u64]) -> Latency {
    Latency::of(counts.iter().enumerate().map(|(b, &c)| [bucket_low(b), c]))
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
        r.wait_ns = latency(&merged(&|c| &c.wait));
        r.hold_ns = latency(&merged(&|c| &c.hold));
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
        let l = latency(&counts);
        assert_eq!(l.samples, 100);
        assert_eq!(l.p50, bucket_low(bucket(100)));
        assert_eq!(l.p99, bucket_low(bucket(10_000)));
        assert_eq!(l.max, bucket_low(bucket(10_000)));
    }

    /// A file written as the interposer writes it (`Stats::fill`, one JSON line per process)
    /// reads back through `lockbench app`'s reader (`Record::from_lines`) with every field.
    #[test]
    fn a_written_line_reads_back_in_lockbench() {
        let stats = Stats::new(2);
        bump(&stats.per_id[0].acquisitions);
        bump(&stats.per_id[1].acquisitions);
        bump(&stats.per_id[1].contended);
        bump(&stats.per_id[0].violations);
        bump(&stats.per_id[1].wait[bucket(100)]);
        bump(&stats.per_id[0].hold[bucket(5000)]);
        let line = |pid: u32| {
            let mut r = Report {
                processes: 1,
                pid,
                program: "prog".into(),
                lock: "ticket".into(),
                problem: "mutex".into(),
                procs: 8,
                ids_peak: 2,
                mutexes: 3,
                ..Report::default()
            };
            stats.fill(&mut r);
            serde_json::to_string(&r).unwrap() + "\n"
        };
        let text = line(41) + &line(42);
        let seen = record::Record::from_lines(&text).unwrap().unwrap();
        assert_eq!(
            (seen.processes, seen.pid, seen.lock.as_str()),
            (2, 41, "ticket")
        );
        assert_eq!(
            (seen.program.as_str(), seen.problem.as_str()),
            ("prog", "mutex")
        );
        assert_eq!((seen.procs, seen.ids_peak, seen.mutexes), (8, 2, 6));
        assert_eq!(
            (seen.acquisitions, seen.contended, seen.violations),
            (4, 2, 2)
        );
        assert_eq!(seen.wait_ns.samples, 2);
        assert_eq!(seen.wait_ns.p50, bucket_low(bucket(100)));
        assert_eq!(seen.hold_ns.max, bucket_low(bucket(5000)));
        // A line from before `processes` was written counts as one process.
        let old = record::Record::from_lines(r#"{"lock":"ticket","acquisitions":1}"#).unwrap();
        assert_eq!(old.map(|r| r.processes), Some(1));
    }
}
