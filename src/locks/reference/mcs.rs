//! `mcs`: the MCS queue lock (J. Mellor-Crummey and M. Scott, "Algorithms for scalable
//! synchronization on shared-memory multiprocessors", ACM TOCS 1991, Fig. 5 `acquire_lock` and
//! `release_lock`), over the register abstraction.
//!
//! Process p owns queue node p (registers `next[p]` and `locked[p]`, both homed at p); `tail`
//! holds the last node's number + 1 (0 = nil). A process appends its node with one swap and spins
//! on its own `locked` flag, which its predecessor clears: O(1) RMRs per passage in CC and in
//! DSM (the spin is on a register in the spinner's own module). FCFS by swap order.

use crate::locks::{no_mutants, Bound, Lock, LockInfo, Params, Problem};
use crate::mem::{Home, Memory, Model, Register};

/// What the registry and `lockbench list` say of `mcs`: its paper and figure, its claims.
pub const INFO: LockInfo = LockInfo {
    name: "mcs",
    problem: Problem::Mutex,
    source: "reference: Mellor-Crummey & Scott 1991 (MCS queue lock)",
    fcfs: true,
    bounded: true,
    rmr: "O(1) CC and DSM",
    safe: true,
    notes: "queue of per-process nodes; each waiter spins on its own node (local in DSM)",
    bound: rmr_bound,
    mutants: no_mutants,
    worst_case: crate::locks::no_worst_case,
};

/// Acquire: write next, swap tail, write locked, link, one re-read after the hand-off; release:
/// read next, CAS tail, one re-read of next, hand-off write (CC). DSM: swap, link, CAS,
/// hand-off, each waiter spinning on its own node.
fn rmr_bound(model: Model, _n: usize) -> Option<Bound> {
    Some(match model {
        Model::Dsm => Bound::constant(
            4,
            "MCS 1991: swap, link, CAS, hand-off; spins on the spinner's own node",
        ),
        _ => Bound::constant(
            9,
            "MCS 1991: acquire ≤ 5, release ≤ 4 (each spin re-reads once after its one write)",
        ),
    })
}

const NIL: i64 = 0;

/// The MCS lock over memory `M`.
pub struct Mcs<M: Memory> {
    mem: M,
    tail: M::Reg,
    next: Box<[M::Reg]>,
    locked: Box<[M::Reg]>,
}

impl<M: Memory> Mcs<M> {
    /// An MCS lock for `params.n` processes.
    pub fn new(mem: M, params: &Params) -> Self {
        Mcs {
            tail: mem.register(Home::Shared, NIL),
            next: mem.per_process(params.n, NIL),
            locked: mem.per_process(params.n, 0),
            mem,
        }
    }

    #[inline(always)]
    fn acquire(&self, p: usize, mut doorway_done: impl FnMut()) {
        let me = p as i64 + 1;
        // I->next := nil
        self.next[p].write(p, NIL);
        // predecessor := fetch_and_store(L, I)
        let pred = self.tail.swap(p, me);
        doorway_done();
        if pred != NIL {
            // I->locked := true
            self.locked[p].write(p, 1);
            // predecessor->next := I
            self.next[(pred - 1) as usize].write(p, me);
            // repeat while I->locked
            self.mem.wait_until(p, || self.locked[p].read(p) == 0);
        }
    }
}

impl<M: Memory> Lock for Mcs<M> {
    #[inline]
    fn enter(&self, p: usize, _session: usize) {
        self.acquire(p, || {})
    }

    fn enter_traced(&self, p: usize, _session: usize, doorway_done: &mut dyn FnMut()) {
        self.acquire(p, doorway_done)
    }

    #[inline]
    fn exit(&self, p: usize, _session: usize) {
        let me = p as i64 + 1;
        // if I->next = nil
        let mut succ = self.next[p].read(p);
        if succ == NIL {
            // if compare_and_swap(L, I, nil) return
            if self.tail.compare_exchange(p, me, NIL).is_ok() {
                return;
            }
            // repeat while I->next = nil
            self.mem.wait_until(p, || {
                succ = self.next[p].read(p);
                succ != NIL
            });
        }
        // I->next->locked := false
        self.locked[(succ - 1) as usize].write(p, 0);
    }
}

#[cfg(test)]
mod tests {}
