//! One line of the interposer's statistics file: what one process saw (docs/apps.md, "The
//! statistics file"). Defined once, here, for both sides: the interposer
//! (`interpose/src/stats.rs`) writes it, one JSON line per process; `lockbench app`
//! (`stats.rs` beside this file) reads the lines and adds them up with [`Record::from_lines`].
//!
//! The interposer compiles this very file with `#[path = ...]` rather than through a crate of
//! its own: it is one file that needs nothing but serde, and a third workspace crate (its own
//! manifest, version and publication) would be more than the record it holds. Keep it so:
//! no `crate::` path and no dependency beyond serde and serde_json, or the interposer stops building.

use serde::{Deserialize, Serialize};

/// A latency histogram (ns; buckets are [lower bound, count]) and its quantiles.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Hist {
    /// Sampled acquisitions it rests on.
    pub samples: u64,
    /// Median, ns (a bucket's lower bound: within 25% below the true value).
    pub p50: u64,
    /// 90th percentile, ns.
    pub p90: u64,
    /// 99th percentile, ns.
    pub p99: u64,
    /// Largest bucket seen, ns.
    pub max: u64,
    /// Non-empty buckets: [lower bound ns, count], by lower bound.
    pub buckets: Vec<[u64; 2]>,
}

impl Hist {
    /// The histogram of `buckets` ([lower bound, count], in any order, a bound possibly more
    /// than once): counts of equal bounds added, quantiles computed.
    pub fn of(buckets: impl IntoIterator<Item = [u64; 2]>) -> Hist {
        let mut all = std::collections::BTreeMap::new();
        for [low, n] in buckets {
            if n > 0 {
                *all.entry(low).or_insert(0u64) += n;
            }
        }
        let buckets: Vec<[u64; 2]> = all.into_iter().map(|(l, n)| [l, n]).collect();
        let samples = buckets.iter().map(|b| b[1]).sum();
        let q = |q: f64| -> u64 {
            let rank = ((q * samples as f64).ceil() as u64).max(1);
            let mut seen = 0;
            for [low, n] in &buckets {
                seen += n;
                if seen >= rank {
                    return *low;
                }
            }
            0
        };
        Hist {
            samples,
            p50: q(0.5),
            p90: q(0.9),
            p99: q(0.99),
            max: buckets.last().map_or(0, |b| b[0]),
            buckets,
        }
    }

    /// Adds `other`'s samples and recomputes the quantiles.
    pub fn add(&mut self, other: &Hist) {
        *self = Hist::of(self.buckets.iter().chain(&other.buckets).copied());
    }
}

/// What the interposer saw in one process (one line of the file), or in several added up.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Record {
    /// Processes whose lines it adds up (1 on each line the interposer writes).
    #[serde(default = "one")]
    pub processes: u64,
    /// The writing process's id (the first one's, once added up).
    pub pid: u32,
    /// The writing process's name, from /proc/self/comm (the first one's, once added up).
    pub program: String,
    /// The lock they ran on.
    pub lock: String,
    /// The lock's problem (`mutex`, `gme`, `k-exclusion`).
    pub problem: String,
    /// The id space (LOCKBENCH_PROCS).
    pub procs: usize,
    /// Most ids held at once (threads that took locks), largest over the processes.
    pub ids_peak: usize,
    /// Ids not given back (a thread locking after its exit destructor ran).
    pub ids_leaked: usize,
    /// Normal mutexes run on the lock.
    pub mutexes: u64,
    /// Rwlocks run on the lock.
    pub rwlocks: u64,
    /// Recursive, error-checking, robust or process-shared mutexes passed to the C library.
    pub passthrough_mutexes: u64,
    /// Acquisitions (lock, trylock, timed, read and write).
    pub acquisitions: u64,
    /// Acquisitions that found the lock held or wanted by another thread.
    pub contended: u64,
    /// Read (shared) acquisitions.
    pub shared_acquisitions: u64,
    /// Trylocks that failed.
    pub trylock_failures: u64,
    /// Calls passed to the C library untouched.
    pub passthrough_ops: u64,
    /// Condition-variable waits.
    pub cond_waits: u64,
    /// Times the oracle saw two threads inside together.
    pub violations: u64,
    /// Sampled wait (call → acquired).
    pub wait_ns: Hist,
    /// Sampled hold (acquired → release).
    pub hold_ns: Hist,
}

impl Record {
    /// Adds `o` (another process's line, or several added up) to this record.
    pub fn add(&mut self, o: &Record) {
        if self.processes == 0 {
            self.pid = o.pid;
            self.program.clone_from(&o.program);
            self.lock.clone_from(&o.lock);
            self.problem.clone_from(&o.problem);
        }
        self.processes += o.processes;
        self.procs = self.procs.max(o.procs);
        self.ids_peak = self.ids_peak.max(o.ids_peak);
        self.ids_leaked += o.ids_leaked;
        self.mutexes += o.mutexes;
        self.rwlocks += o.rwlocks;
        self.passthrough_mutexes += o.passthrough_mutexes;
        self.acquisitions += o.acquisitions;
        self.contended += o.contended;
        self.shared_acquisitions += o.shared_acquisitions;
        self.trylock_failures += o.trylock_failures;
        self.passthrough_ops += o.passthrough_ops;
        self.cond_waits += o.cond_waits;
        self.violations += o.violations;
        self.wait_ns.add(&o.wait_ns);
        self.hold_ns.add(&o.hold_ns);
    }

    /// The lines of a statistics file added up; `None` when there is none (blank lines are
    /// skipped).
    pub fn from_lines(text: &str) -> Result<Option<Record>, serde_json::Error> {
        let mut total = Record {
            processes: 0,
            ..Record::default()
        };
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            total.add(&serde_json::from_str(line)?);
        }
        Ok((total.processes > 0).then_some(total))
    }
}

/// A line without `processes` (written before the field existed) is one process's.
fn one() -> u64 {
    1
}
