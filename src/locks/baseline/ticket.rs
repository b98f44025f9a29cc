//! `ticket`: the classic ticket lock, written over the register abstraction so the same code
//! is timed on native memory, counted and scheduled.

use crate::locks::{Claims, Lock, LockInfo, Params, Problem};
use crate::mem::{Home, Memory, Register};

/// What the registry and `lockbench list` say of `ticket`: its paper and figure, its claims.
pub const INFO: LockInfo = LockInfo {
    name: "ticket",
    problem: Problem::Mutex,
    source: "baseline",
    fcfs: true,
    bounded: true,
    rmr: "unbounded (CC: O(waiters) invalidations per release)",
    safe: true,
    notes: "ticket lock over the register abstraction, cache-padded",
    bound: crate::locks::no_bound,
    mutants: crate::locks::no_mutants,
    worst_case: crate::locks::no_worst_case,
};

/// Ticket lock: take a ticket with fetch-and-add, wait until it is served. FCFS by ticket
/// order. `next` and `serving` sit on separate cache lines (every native register is padded), so
/// arrivals do not disturb the line the waiters spin on until the holder leaves.
pub struct TicketLock<M: Memory> {
    mem: M,
    next: M::Reg,
    serving: M::Reg,
}

impl<M: Memory> TicketLock<M> {
    /// A ticket lock on `mem`; it works for any number of processes.
    pub fn new(mem: M, _params: &Params) -> Self {
        let next = mem.register(Home::Shared, 0);
        let serving = mem.register(Home::Shared, 0);
        TicketLock { mem, next, serving }
    }
}

impl<M: Memory> TicketLock<M> {
    #[inline(always)]
    fn acquire(&self, p: usize, mut doorway_done: impl FnMut()) {
        // Doorway: take a ticket.
        let ticket = self.next.fetch_add(p, 1);
        doorway_done();
        self.mem.wait_until(p, || self.serving.read(p) == ticket);
    }
}

impl<M: Memory> Lock for TicketLock<M> {
    #[inline]
    fn enter(&self, p: usize, _session: usize) {
        self.acquire(p, || {})
    }

    fn enter_traced(&self, p: usize, _session: usize, doorway_done: &mut dyn FnMut()) {
        self.acquire(p, doorway_done)
    }

    #[inline]
    fn exit(&self, p: usize, _session: usize) {
        // Only the holder writes `serving`, so a read followed by a write is enough. Release
        // suffices for the hand-off: the next holder's acquiring load of `serving` sees every
        // write of this critical section, and nothing after the store here needs ordering (the
        // doorway's fetch_add is a full barrier on its own). On x86 this makes the exit a plain
        // store instead of an `xchg`.
        let served = self.serving.read(p);
        self.serving.write_release(p, served + 1);
    }

    fn claims(&self) -> Claims {
        Claims::BOUNDED_EXIT
    }
}
