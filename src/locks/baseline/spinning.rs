//! Spinning baselines: the group lock (`spin-gme`) and the k-exclusion lock
//! (`spin-semaphore`) an engineer would write — one word changed by compare-and-swap — over the
//! register abstraction, so the same code is timed on native memory, counted and scheduled.
//!
//! They are the baselines of a run of GME locks only and of k-exclusion locks only: like the
//! paper algorithms they wait by spinning (then yielding, as the run's wait policy says), so the
//! ratios against them measure the algorithms and not the cost of sleeping, which
//! `condvar-gme` and `semaphore` add. Neither is FCFS or starvation-free: a session whose
//! members keep overlapping holds `spin-gme` for as long as they do, a waiter of
//! `spin-semaphore` can lose every race for a freed permit; the harness's starvation note says
//! so when it happens.

use crate::locks::{Lock, LockInfo, Params, Problem};
use crate::mem::{Home, Memory, Register};

/// What the registry and `lockbench list` say of `spin-gme`: its claims.
pub const SPIN_GME: LockInfo = LockInfo {
    name: "spin-gme",
    problem: Problem::Gme,
    source: "baseline",
    fcfs: false,
    bounded: true,
    rmr: "unbounded (CC: every waiter re-reads the word after each change)",
    safe: true,
    notes: "one word (session, count) changed by compare-and-swap; spins; not starvation-free",
    bound: crate::locks::no_bound,
    mutants: crate::locks::no_mutants,
    worst_case: crate::locks::no_worst_case,
};

/// What the registry and `lockbench list` say of `spin-semaphore`: its claims.
pub const SPIN_SEMAPHORE: LockInfo = LockInfo {
    name: "spin-semaphore",
    problem: Problem::KExclusion,
    source: "baseline",
    fcfs: false,
    bounded: true,
    rmr: "unbounded (CC: every waiter re-reads the count after each change)",
    safe: true,
    notes: "a count of free permits taken by compare-and-swap; spins; not starvation-free",
    bound: crate::locks::no_bound,
    mutants: crate::locks::no_mutants,
    worst_case: crate::locks::no_worst_case,
};

/// The word's high half holds the session inside plus one (0: nobody inside), its low half
/// how many are inside.
const COUNT_BITS: u32 = 32;
const ONE: i64 = 1;

/// The word for `count` processes of `session` inside.
fn word(session: usize, count: i64) -> i64 {
    (((session as i64) + 1) << COUNT_BITS) | count
}

/// The session a non-zero word holds.
fn session_of(w: i64) -> usize {
    ((w >> COUNT_BITS) - 1) as usize
}

/// `spin-gme`: a process enters when nobody is inside or its session is, by one
/// compare-and-swap of the shared word; the last to leave empties it.
pub struct SpinGme<M: Memory> {
    mem: M,
    state: M::Reg,
}

impl<M: Memory> SpinGme<M> {
    /// A group lock on `mem`; it works for any number of processes and sessions below 2³¹.
    pub fn new(mem: M, _params: &Params) -> Self {
        let state = mem.register(Home::Shared, 0);
        mem.label_one("state", &state);
        SpinGme { mem, state }
    }
}

impl<M: Memory> Lock for SpinGme<M> {
    #[inline]
    fn enter(&self, p: usize, session: usize) {
        loop {
            let w = self.state.read(p);
            let next = if w == 0 {
                word(session, ONE)
            } else if session_of(w) == session {
                w + ONE
            } else {
                // Another session is inside: wait until the word is empty or ours.
                self.mem.wait_until(p, || {
                    let w = self.state.read(p);
                    w == 0 || session_of(w) == session
                });
                continue;
            };
            // Compare-and-swap is sequentially consistent: the critical section's accesses
            // cannot move above it.
            if self.state.compare_exchange(p, w, next).is_ok() {
                return;
            }
        }
    }

    #[inline]
    fn exit(&self, p: usize, session: usize) {
        let mut w = self.state.read(p);
        loop {
            debug_assert_eq!(
                session_of(w),
                session,
                "spin-gme: left a session not inside"
            );
            let next = if w & ((1 << COUNT_BITS) - 1) == ONE {
                0
            } else {
                w - ONE
            };
            match self.state.compare_exchange(p, w, next) {
                Ok(_) => return,
                Err(now) => w = now,
            }
        }
    }
}

/// `spin-semaphore`: `k` permits in one register; a process takes one by compare-and-swap when
/// one is free and gives it back with fetch-and-add.
pub struct SpinSemaphore<M: Memory> {
    mem: M,
    free: M::Reg,
}

impl<M: Memory> SpinSemaphore<M> {
    /// A semaphore on `mem` with `params.k` permits.
    pub fn new(mem: M, params: &Params) -> Self {
        let free = mem.register(Home::Shared, params.k as i64);
        mem.label_one("free", &free);
        SpinSemaphore { mem, free }
    }
}

impl<M: Memory> Lock for SpinSemaphore<M> {
    #[inline]
    fn enter(&self, p: usize, _session: usize) {
        loop {
            let free = self.free.read(p);
            if free == 0 {
                self.mem.wait_until(p, || self.free.read(p) > 0);
                continue;
            }
            // Sequentially consistent: the critical section cannot move above it.
            if self.free.compare_exchange(p, free, free - 1).is_ok() {
                return;
            }
        }
    }

    #[inline]
    fn exit(&self, p: usize, _session: usize) {
        self.free.fetch_add(p, 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::{NativeMemory, WaitPolicy};

    fn params(k: usize) -> Params {
        Params::new(4, k, WaitPolicy::YIELD)
    }

    #[test]
    fn a_word_holds_its_session_and_count() {
        assert_eq!(session_of(word(0, 1)), 0);
        assert_eq!(session_of(word(7, 3)), 7);
        assert_eq!(word(7, 3) & 0xffff_ffff, 3);
        assert_ne!(
            word(0, 0),
            0,
            "an emptied word of session 0 is not the empty word"
        );
    }

    #[test]
    fn same_session_shares_and_the_last_to_leave_empties_the_word() {
        let lock = SpinGme::new(NativeMemory::default(), &params(1));
        lock.enter(0, 4);
        lock.enter(1, 4);
        assert_eq!(lock.state.peek(), word(4, 2));
        lock.exit(0, 4);
        assert_eq!(lock.state.peek(), word(4, 1));
        lock.exit(1, 4);
        assert_eq!(lock.state.peek(), 0);
        lock.enter(2, 5);
        assert_eq!(lock.state.peek(), word(5, 1));
    }

    #[test]
    fn permits_are_taken_and_given_back() {
        let lock = SpinSemaphore::new(NativeMemory::default(), &params(2));
        lock.enter(0, 0);
        lock.enter(1, 0);
        assert_eq!(lock.free.peek(), 0);
        lock.exit(0, 0);
        assert_eq!(lock.free.peek(), 1);
        lock.enter(2, 0);
        assert_eq!(lock.free.peek(), 0);
    }
}
