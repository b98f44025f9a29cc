//! Safety checking: the oracles that watch every passage of a run, and property checks of
//! traces (FCFS, concurrent entry, FIFE).
//!
//! Two oracles, chosen per run ([`OracleKind`]):
//! * [`SelfCheck`]: a self-checking critical section of plain loads and stores on one shared
//!   line, as the bakery-family test harnesses do it. It costs what any critical section costs
//!   that touches one line of protected data. The default for mutual exclusion runs it on the
//!   sampled passages only ([`OracleKind::Sampled`]) and has every other passage load the
//!   line's owner word once; `--oracle self-check` runs it on every passage.
//! * [`Oracle`], the exact counting oracle: atomic read-modify-writes on a line of its own,
//!   counting who is inside. The default for GME (it measures how many share the critical
//!   section) and k-exclusion (only a count can tell k from k + 1), and `--oracle counting`
//!   everywhere.

pub mod trace;

use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_utils::CachePadded;
use serde::Serialize;

/// The problem a lock solves, which fixes the safety property the oracle checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Problem {
    /// At most one process inside.
    Mutex,
    /// Processes inside together all asked for the same session.
    Gme,
    /// At most k processes inside.
    KExclusion,
}

impl Problem {
    /// The name used in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Problem::Mutex => "mutex",
            Problem::Gme => "gme",
            Problem::KExclusion => "k-exclusion",
        }
    }
}

/// Which safety oracle a run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OracleKind {
    /// No safety check (`--no-check`).
    None,
    /// The self-checking critical section on sampled passages, and a plain load of its owner
    /// word on every other passage ([`SelfCheck::sampled_enter`], [`SelfCheck::peek`]).
    Sampled,
    /// The self-checking critical section on every passage ([`SelfCheck`]).
    SelfCheck,
    /// The exact counting oracle ([`Oracle`]).
    Counting,
}

impl OracleKind {
    /// The name used in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            OracleKind::None => "none",
            OracleKind::Sampled => "sampled",
            OracleKind::SelfCheck => "self-check",
            OracleKind::Counting => "counting",
        }
    }

    /// The oracle a run of a `problem` lock with capacity `k` uses when none is asked for:
    /// the sampled self-check where one owner suffices (mutual exclusion, and k-exclusion with
    /// k = 1), the counting oracle where the semantics need a count (GME's concurrency
    /// figures, k-exclusion with k > 1).
    pub fn default_for(problem: Problem, k: usize) -> OracleKind {
        match problem {
            Problem::Mutex => OracleKind::Sampled,
            Problem::KExclusion if k <= 1 => OracleKind::Sampled,
            Problem::KExclusion | Problem::Gme => OracleKind::Counting,
        }
    }

    /// `self` for a `problem` lock with capacity `k`, or the nearest oracle that can express
    /// the property: the counting oracle for k-exclusion with k > 1 (one cell cannot tell k
    /// processes inside from k + 1), and the every-passage self-check for a sampled GME run
    /// (a session's passages legitimately overlap, so one owner word cannot stand for them).
    pub fn for_lock(self, problem: Problem, k: usize) -> OracleKind {
        match (self, problem) {
            (OracleKind::SelfCheck | OracleKind::Sampled, Problem::KExclusion) if k > 1 => {
                OracleKind::Counting
            }
            (OracleKind::Sampled, Problem::Gme) => OracleKind::SelfCheck,
            _ => self,
        }
    }
}

/// The self-checking critical section: plain (relaxed) loads and stores of one shared line, the
/// way a real critical section reads and updates its protected data.
///
/// * Mutual exclusion: on entry a process reads the shared `sum` and writes back `sum + tag`
///   (its tag is its id + 1); right before its exit section it reads `sum` again, which must
///   still be what it wrote. At the end the shared `sum` must equal the sum of the processes'
///   private sums (tag × checked passages).
///   An intruder that updated `sum` meanwhile changes what the owner reads back; two updates
///   that interleave (both read, then both write) lose one, which the final comparison sees.
/// * GME: requests of one session legitimately overlap, so a process writes its session + 1
///   and reads it back before exit: another value means a conflicting session entered.
/// * Sampled (mutual exclusion): only sampled passages update `sum` as above, and they also
///   write their tag to `owner` on entry and clear it before exit ([`SelfCheck::sampled_enter`],
///   [`SelfCheck::sampled_exit`]). Every other passage loads `owner` once on entry
///   ([`SelfCheck::peek`]): a non-zero owner means a sampled passage is inside with it. The
///   line is written only by sampled passages, so between them it stays in every cache.
///
/// What it can miss (the counting oracle cannot): an overlap so short or so late that neither
/// read-back observes the other's write and no update is lost — e.g. an intruder whose store
/// still sits in its store buffer when the owner reads back and whose own read saw the owner's
/// update. Sampled, it also misses every overlap of two unsampled passages, and one where the
/// unsampled passage entered first: it sees an overlap when a passage enters while a sampled
/// one (every timed passage, and about one other in 256) is inside. A lock that
/// admits everyone is still caught within milliseconds (see the tests), but a rare overlap
/// may go unseen; `--oracle self-check` or `counting` checks every passage.
#[derive(Debug)]
pub struct SelfCheck {
    group: bool,
    cell: CachePadded<Cell>,
}

/// The self-check's one line: the checksum and the owner of a sampled passage.
#[derive(Debug, Default)]
struct Cell {
    sum: AtomicU64,
    owner: AtomicU64,
}

impl SelfCheck {
    /// A self-check for `problem` (GME checks session tags; the others process ids and sums).
    pub fn new(problem: Problem) -> Self {
        SelfCheck {
            group: problem == Problem::Gme,
            cell: CachePadded::new(Cell::default()),
        }
    }

    /// Process `p` just entered with `session`; returns what it wrote, for
    /// [`SelfCheck::exit`].
    #[inline(always)]
    pub fn enter(&self, p: usize, session: usize) -> u64 {
        // Relaxed on purpose: these are the critical section's plain data accesses, ordered
        // (in a correct run) by the lock's own acquire and release, like any protected data.
        let sum = &self.cell.sum;
        let wrote = if self.group {
            session as u64 + 1
        } else {
            sum.load(Ordering::Relaxed).wrapping_add(p as u64 + 1)
        };
        sum.store(wrote, Ordering::Relaxed);
        wrote
    }

    /// The process that wrote `wrote` is about to leave: true when the word still holds it.
    #[inline(always)]
    pub fn exit(&self, wrote: u64) -> bool {
        self.cell.sum.load(Ordering::Relaxed) == wrote
    }

    /// A sampled passage of process `p` just entered (mutual exclusion): [`SelfCheck::enter`],
    /// and its tag in the owner word. Returns what it wrote, for [`SelfCheck::sampled_exit`],
    /// and whether the owner word was clear (false: another sampled passage is inside).
    #[inline(always)]
    pub fn sampled_enter(&self, p: usize) -> (u64, bool) {
        // Relaxed, as in `enter`; `peek` relies on the lock's acquire and release alone.
        let alone = self.cell.owner.load(Ordering::Relaxed) == 0;
        self.cell.owner.store(p as u64 + 1, Ordering::Relaxed);
        (self.enter(p, 0), alone)
    }

    /// The sampled passage that wrote `wrote` is about to leave: true when neither the sum nor
    /// the owner word changed; the owner word is cleared either way.
    #[inline(always)]
    pub fn sampled_exit(&self, p: usize, wrote: u64) -> bool {
        let owner = self.cell.owner.load(Ordering::Relaxed);
        let ok = self.exit(wrote) && owner == p as u64 + 1;
        self.cell.owner.store(0, Ordering::Relaxed);
        ok
    }

    /// An unsampled passage just entered: true when no sampled passage is inside.
    #[inline(always)]
    pub fn peek(&self) -> bool {
        self.cell.owner.load(Ordering::Relaxed) == 0
    }

    /// What process `p` added to the shared sum in `passages` checked passages.
    pub fn private_sum(p: usize, passages: u64) -> u64 {
        (p as u64 + 1).wrapping_mul(passages)
    }

    /// After every thread has stopped: whether the shared sum equals `private_total`, the sum
    /// of the processes' private sums (always true for GME, which keeps no sum).
    pub fn sum_matches(&self, private_total: u64) -> bool {
        self.group || self.cell.sum.load(Ordering::SeqCst) == private_total
    }
}

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
    fn self_check_sees_an_intruder_and_a_lost_update() {
        let c = SelfCheck::new(Problem::Mutex);
        let sums = |a: u64, b: u64| SelfCheck::private_sum(0, a) + SelfCheck::private_sum(1, b);
        let ta = c.enter(0, 0);
        assert!(c.exit(ta), "alone");
        assert!(c.sum_matches(sums(1, 0)));
        // A second process enters while the first is inside: the first one's read-back fails.
        let ta = c.enter(0, 0);
        let tb = c.enter(1, 0);
        assert!(!c.exit(ta));
        assert!(c.exit(tb));
        assert!(
            c.sum_matches(sums(2, 1)),
            "these updates did not interleave"
        );
        // Two read-then-write updates that interleave lose one: the sums disagree.
        let v = c.cell.sum.load(Ordering::Relaxed);
        c.enter(1, 0);
        c.cell.sum.store(v.wrapping_add(1), Ordering::Relaxed); // process 0's stale update
        assert!(!c.sum_matches(sums(3, 2)));
    }

    #[test]
    fn sampled_self_check_sees_overlaps_with_a_sampled_passage() {
        let c = SelfCheck::new(Problem::Mutex);
        // Alone: clean, and the owner word is clear again afterwards.
        let (w, alone) = c.sampled_enter(0);
        assert!(alone && c.sampled_exit(0, w));
        assert!(c.peek());
        // An unsampled passage entering while a sampled one is inside sees its owner.
        let (w, _) = c.sampled_enter(0);
        assert!(!c.peek());
        assert!(c.sampled_exit(0, w), "a peek writes nothing");
        // A sampled passage inside while another sampled one enters: the first one's
        // read-back fails, the second sees the owner word taken.
        let (wa, _) = c.sampled_enter(0);
        let (wb, alone) = c.sampled_enter(1);
        assert!(!alone);
        assert!(!c.sampled_exit(0, wa));
        // The first one cleared the owner word on its way out; the second one's owner
        // read-back fails too.
        assert!(!c.sampled_exit(1, wb));
        // Four checked passages, none lost: the sums agree.
        let sums = SelfCheck::private_sum(0, 3) + SelfCheck::private_sum(1, 1);
        assert!(c.sum_matches(sums));
    }

    #[test]
    fn self_check_for_groups_lets_one_session_share() {
        let c = SelfCheck::new(Problem::Gme);
        let a = c.enter(0, 3);
        let b = c.enter(1, 3);
        assert!(c.exit(a) && c.exit(b), "same session");
        let a = c.enter(0, 3);
        c.enter(1, 4);
        assert!(!c.exit(a), "another session entered");
        assert!(c.sum_matches(12345), "GME keeps no sum");
    }

    #[test]
    fn default_oracles() {
        assert_eq!(
            OracleKind::default_for(Problem::Mutex, 1),
            OracleKind::Sampled
        );
        assert_eq!(
            OracleKind::default_for(Problem::KExclusion, 1),
            OracleKind::Sampled
        );
        assert_eq!(
            OracleKind::Sampled.for_lock(Problem::Gme, 2),
            OracleKind::SelfCheck,
            "one owner word cannot stand for a session"
        );
        assert_eq!(
            OracleKind::Sampled.for_lock(Problem::KExclusion, 2),
            OracleKind::Counting
        );
        assert_eq!(
            OracleKind::default_for(Problem::Gme, 1),
            OracleKind::Counting
        );
        assert_eq!(
            OracleKind::default_for(Problem::KExclusion, 2),
            OracleKind::Counting
        );
        assert_eq!(
            OracleKind::SelfCheck.for_lock(Problem::KExclusion, 3),
            OracleKind::Counting
        );
        assert_eq!(
            OracleKind::SelfCheck.for_lock(Problem::Gme, 3),
            OracleKind::SelfCheck
        );
    }

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
