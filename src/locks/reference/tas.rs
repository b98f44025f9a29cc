//! `tas` and `ttas`: the test-and-set and test-and-test-and-set spin locks over one register.
//!
//! `tas` swaps 1 into the lock word until it reads back 0: every attempt is a read-modify-write,
//! so every attempt is an RMR (CC and DSM) and a waiter's RMRs grow with its waiting time.
//! `ttas` first waits until its (cached) copy reads 0 and only then swaps: in CC a waiter pays
//! once per release it sees, which still grows with the number of competing passages; in DSM
//! every re-read is remote. Neither is FCFS; both have an empty doorway.

use crate::locks::{Lock, LockInfo, Params, Problem};
use crate::mem::{Home, Memory, Register};

/// What the registry and `lockbench list` say of `tas`: its paper and figure, its claims.
pub const TAS: LockInfo = LockInfo {
    name: "tas",
    problem: Problem::Mutex,
    source: "reference: test-and-set spin lock",
    fcfs: false,
    bounded: true,
    rmr: "unbounded (CC and DSM)",
    safe: true,
    notes: "every attempt is a swap on the one lock word",
    bound: crate::locks::no_bound,
    mutants: crate::locks::no_mutants,
    worst_case: crate::locks::no_worst_case,
};

/// What the registry and `lockbench list` say of `ttas`: its paper and figure, its claims.
pub const TTAS: LockInfo = LockInfo {
    name: "ttas",
    problem: Problem::Mutex,
    source: "reference: test-and-test-and-set spin lock",
    fcfs: false,
    bounded: true,
    rmr: "unbounded (CC and DSM)",
    safe: true,
    notes: "spins reading its cached copy; swaps when the word looks free",
    bound: crate::locks::no_bound,
    mutants: crate::locks::no_mutants,
    worst_case: crate::locks::no_worst_case,
};

/// Test-and-set over memory `M`.
pub struct Tas<M: Memory> {
    mem: M,
    word: M::Reg,
}

impl<M: Memory> Tas<M> {
    /// A test-and-set lock (any number of processes).
    pub fn new(mem: M, _params: &Params) -> Self {
        Tas {
            word: mem.register(Home::Shared, 0),
            mem,
        }
    }
}

impl<M: Memory> Lock for Tas<M> {
    #[inline]
    fn enter(&self, p: usize, _session: usize) {
        self.mem.wait_until(p, || self.word.swap(p, 1) == 0);
    }

    fn enter_traced(&self, p: usize, session: usize, doorway_done: &mut dyn FnMut()) {
        // The doorway is empty.
        doorway_done();
        self.enter(p, session)
    }

    #[inline]
    fn exit(&self, p: usize, _session: usize) {
        self.word.write(p, 0);
    }
}

/// Test-and-test-and-set over memory `M`.
pub struct Ttas<M: Memory> {
    mem: M,
    word: M::Reg,
}

impl<M: Memory> Ttas<M> {
    /// A test-and-test-and-set lock (any number of processes).
    pub fn new(mem: M, _params: &Params) -> Self {
        Ttas {
            word: mem.register(Home::Shared, 0),
            mem,
        }
    }
}

impl<M: Memory> Lock for Ttas<M> {
    #[inline]
    fn enter(&self, p: usize, _session: usize) {
        loop {
            self.mem.wait_until(p, || self.word.read(p) == 0);
            if self.word.swap(p, 1) == 0 {
                return;
            }
        }
    }

    fn enter_traced(&self, p: usize, session: usize, doorway_done: &mut dyn FnMut()) {
        // The doorway is empty.
        doorway_done();
        self.enter(p, session)
    }

    #[inline]
    fn exit(&self, p: usize, _session: usize) {
        self.word.write(p, 0);
    }
}

#[cfg(test)]
mod tests {}
