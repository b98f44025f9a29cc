//! The interposer's statistics file, read back: one JSON line per process that loaded the
//! library and took a lock (the format is documented in docs/apps.md, "The statistics file";
//! `interpose/src/stats.rs` writes it). A run's lines are added up into one record.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// A latency histogram as the interposer writes it (ns; buckets are [lower bound, count]).
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
    /// Non-empty buckets: [lower bound ns, count].
    pub buckets: Vec<[u64; 2]>,
}

impl Hist {
    /// Adds `other`'s samples and recomputes the quantiles.
    pub fn add(&mut self, other: &Hist) {
        let mut all = std::collections::BTreeMap::new();
        for [low, n] in self.buckets.iter().chain(&other.buckets) {
            *all.entry(*low).or_insert(0u64) += n;
        }
        self.buckets = all.into_iter().map(|(l, n)| [l, n]).collect();
        self.samples = self.buckets.iter().map(|b| b[1]).sum();
        let q = |q: f64| -> u64 {
            let rank = ((q * self.samples as f64).ceil() as u64).max(1);
            let mut seen = 0;
            for [low, n] in &self.buckets {
                seen += n;
                if seen >= rank {
                    return *low;
                }
            }
            0
        };
        self.p50 = q(0.5);
        self.p90 = q(0.9);
        self.p99 = q(0.99);
        self.max = self.buckets.last().map_or(0, |b| b[0]);
    }
}

/// What the interposer saw in one run (every process's line added up).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Seen {
    /// Processes that wrote a line.
    pub processes: u64,
    /// The lock they ran on.
    pub lock: String,
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

impl Seen {
    /// The share of acquisitions that were contended.
    pub fn contended_share(&self) -> f64 {
        if self.acquisitions == 0 {
            0.0
        } else {
            self.contended as f64 / self.acquisitions as f64
        }
    }

    fn add(&mut self, o: &Seen) {
        self.processes += 1;
        if self.lock.is_empty() {
            self.lock.clone_from(&o.lock);
        }
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

    /// Adds up the lines of a statistics file; `None` when there is no file or no line (the
    /// program took no lock, or died before its exit handlers ran).
    pub fn read(path: &Path) -> anyhow::Result<Option<Seen>> {
        let Ok(text) = std::fs::read_to_string(path) else {
            return Ok(None);
        };
        let mut total = Seen::default();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let one: Seen = serde_json::from_str(line).map_err(|e| {
                anyhow::anyhow!(
                    "the interposer's statistics {} are unreadable: {e}",
                    path.display()
                )
            })?;
            total.add(&one);
        }
        Ok((total.processes > 0).then_some(total))
    }

    /// Several runs' records added up (a lock's rounds).
    pub fn sum<'a>(runs: impl IntoIterator<Item = &'a Seen>) -> Option<Seen> {
        let mut total: Option<Seen> = None;
        for s in runs {
            match &mut total {
                None => total = Some(s.clone()),
                Some(t) => {
                    let processes = t.processes + s.processes;
                    t.add(s);
                    t.processes = processes;
                }
            }
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_add_up() {
        let dir = std::env::temp_dir().join(format!("lockbench-seen-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.jsonl");
        std::fs::write(
            &path,
            concat!(
                r#"{"lock":"ticket","procs":8,"ids_peak":3,"acquisitions":10,"contended":5,"violations":0,"wait_ns":{"buckets":[[100,3],[200,1]]}}"#,
                "\n",
                r#"{"lock":"ticket","procs":8,"ids_peak":2,"acquisitions":30,"contended":5,"violations":2,"wait_ns":{"buckets":[[200,4]]}}"#,
                "\n"
            ),
        )
        .unwrap();
        let s = Seen::read(&path).unwrap().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!((s.processes, s.ids_peak, s.acquisitions), (2, 3, 40));
        assert_eq!(s.violations, 2);
        assert_eq!(s.contended_share(), 0.25);
        assert_eq!(s.wait_ns.samples, 8);
        assert_eq!((s.wait_ns.p50, s.wait_ns.max), (200, 200));
        assert_eq!(Seen::read(&dir.join("missing")).unwrap(), None);
    }
}
