//! Safety checking: the oracle that watches every passage of a run, and property checks of
//! traces (FCFS, concurrent entry, FIFE).

pub mod trace;

use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_utils::CachePadded;

use crate::locks::Problem;

/// The safety oracle: called right after a process is inside and right before it leaves, so
/// its window is inside the lock's; any overlap it sees is a real overlap of critical sections.
///
/// * mutual exclusion: a count of processes inside; more than one is a violation;
/// * k-exclusion: the same count; more than `k` is a violation;
/// * GME: one word packing (session, count); entering while another session's count is
///   non-zero is a violation.
///
/// A process that enters in violation is not added to the packed word (it is an intruder): the
/// oracle may then miss later overlaps with it, but it never reports an overlap that did not
/// happen. One violation fails the run anyway.
#[derive(Debug)]
pub struct Oracle {
    problem: Problem,
    k: u64,
    state: CachePadded<AtomicU64>,
    violations: CachePadded<AtomicU64>,
}

/// What the oracle saw at one entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Processes inside together, this one included (for GME, those of its session).
    pub inside: u64,
    /// The entry broke the lock's safety property.
    pub violation: bool,
}

const COUNT_BITS: u32 = 32;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;

impl Oracle {
    /// An oracle for `problem`, with capacity `k` for k-exclusion.
    pub fn new(problem: Problem, k: usize) -> Self {
        Oracle {
            problem,
            k: k as u64,
            state: CachePadded::new(AtomicU64::new(0)),
            violations: CachePadded::new(AtomicU64::new(0)),
        }
    }

    /// Process entering with `session`, right after the lock let it in.
    #[inline]
    pub fn enter(&self, session: usize) -> Entry {
        let entry = match self.problem {
            Problem::Mutex => {
                let inside = self.state.fetch_add(1, Ordering::SeqCst) + 1;
                Entry {
                    inside,
                    violation: inside > 1,
                }
            }
            Problem::KExclusion => {
                let inside = self.state.fetch_add(1, Ordering::SeqCst) + 1;
                Entry {
                    inside,
                    violation: inside > self.k,
                }
            }
            Problem::Gme => self.enter_group(session as u64 & COUNT_MASK),
        };
        if entry.violation {
            self.violations.fetch_add(1, Ordering::Relaxed);
        }
        entry
    }

    fn enter_group(&self, session: u64) -> Entry {
        let mut cur = self.state.load(Ordering::SeqCst);
        loop {
            let (s, count) = (cur >> COUNT_BITS, cur & COUNT_MASK);
            if count > 0 && s != session {
                return Entry {
                    inside: count + 1,
                    violation: true,
                };
            }
            let next = (session << COUNT_BITS) | (count + 1);
            match self
                .state
                .compare_exchange_weak(cur, next, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => {
                    return Entry {
                        inside: count + 1,
                        violation: false,
                    }
                }
                Err(seen) => cur = seen,
            }
        }
    }

    /// Process leaving, right before the lock's exit; `entry` is what [`Oracle::enter`] said.
    #[inline]
    pub fn exit(&self, entry: Entry) {
        match self.problem {
            Problem::Mutex | Problem::KExclusion => {
                self.state.fetch_sub(1, Ordering::SeqCst);
            }
            Problem::Gme if entry.violation => {} // an intruder was never counted
            Problem::Gme => {
                self.state.fetch_sub(1, Ordering::SeqCst);
            }
        }
    }

    /// Violations seen so far.
    pub fn violations(&self) -> u64 {
        self.violations.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutex_counts_overlap() {
        let o = Oracle::new(Problem::Mutex, 1);
        let a = o.enter(0);
        assert_eq!(
            a,
            Entry {
                inside: 1,
                violation: false
            }
        );
        let b = o.enter(0);
        assert!(b.violation);
        o.exit(b);
        o.exit(a);
        assert!(!o.enter(3).violation);
        assert_eq!(o.violations(), 1);
    }

    #[test]
    fn k_exclusion_allows_k() {
        let o = Oracle::new(Problem::KExclusion, 2);
        let a = o.enter(0);
        let b = o.enter(1);
        assert!(!a.violation && !b.violation);
        assert!(o.enter(2).violation);
    }

    #[test]
    fn gme_shares_one_session_only() {
        let o = Oracle::new(Problem::Gme, 1);
        let a = o.enter(4);
        let b = o.enter(4);
        assert_eq!(
            b,
            Entry {
                inside: 2,
                violation: false
            }
        );
        let c = o.enter(5);
        assert!(c.violation, "session 5 entered while session 4 was inside");
        o.exit(c);
        o.exit(a);
        o.exit(b);
        let d = o.enter(5);
        assert_eq!(
            d,
            Entry {
                inside: 1,
                violation: false
            }
        );
        assert_eq!(o.violations(), 1);
    }
}
