//! `clh`: the CLH queue lock (T. Craig, "Building FIFO and priority-queuing spin locks from
//! atomic swap", 1993; Magnusson, Landin and Hagersten, 1994), over the register abstraction.
//!
//! There are n + 1 nodes, each one `locked` register; process p starts owning node p and node n
//! is the initial tail. To enter, p raises its node's flag, swaps it into `tail` and spins on the
//! predecessor's node; to leave, it lowers its own node's flag and takes the predecessor's node
//! for its next passage. O(1) RMRs per passage in CC. In DSM a node lives in one module (node i
//! at process i, node n shared) but is recycled to other processes, so a waiter spins on a
//! register homed elsewhere: unbounded RMRs in DSM. FCFS by swap order.
//!
//! Which node a process owns and which it waits on are private variables, kept outside the
//! shared memory (not counted).

use std::sync::atomic::{AtomicUsize, Ordering};

use crossbeam_utils::CachePadded;

use crate::locks::{no_mutants, Bound, Lock, LockInfo, Params, Problem};
use crate::mem::{Home, Memory, Model, Register};

/// What the registry and `lockbench list` say of `clh`: its paper and figure, its claims.
pub const INFO: LockInfo = LockInfo {
    name: "clh",
    problem: Problem::Mutex,
    source: "reference: Craig 1993, Magnusson-Landin-Hagersten 1994 (CLH queue lock)",
    fcfs: true,
    bounded: true,
    rmr: "O(1) CC; unbounded DSM",
    safe: true,
    notes:
        "implicit queue; a waiter spins on its predecessor's node, which migrates (remote in DSM)",
    bound: rmr_bound,
    mutants: no_mutants,
    worst_case: crate::locks::no_worst_case,
};

/// CC: raise own node, swap tail, two reads of the predecessor's node, lower own node. DSM: no
/// claim (the waiter spins on its predecessor's node).
fn rmr_bound(model: Model, _n: usize) -> Option<Bound> {
    (model != Model::Dsm).then(|| {
        Bound::constant(
            5,
            "CLH: raise own node, swap tail, two reads of the predecessor's node, lower own node",
        )
    })
}

/// The CLH lock over memory `M`.
pub struct Clh<M: Memory> {
    mem: M,
    tail: M::Reg,
    /// `locked` flag of each node (1: its owner holds or waits for the lock).
    node: Box<[M::Reg]>,
    /// Private: the node process p owns.
    mine: Box<[CachePadded<AtomicUsize>]>,
    /// Private: the node process p waited on in its current passage.
    pred: Box<[CachePadded<AtomicUsize>]>,
}

impl<M: Memory> Clh<M> {
    /// A CLH lock for `params.n` processes.
    pub fn new(mem: M, params: &Params) -> Self {
        let n = params.n;
        Clh {
            tail: mem.register(Home::Shared, n as i64),
            node: mem.array(
                n + 1,
                |i| {
                    if i < n {
                        Home::Process(i)
                    } else {
                        Home::Shared
                    }
                },
                0,
            ),
            mine: (0..n)
                .map(|p| CachePadded::new(AtomicUsize::new(p)))
                .collect(),
            pred: (0..n)
                .map(|_| CachePadded::new(AtomicUsize::new(n)))
                .collect(),
            mem,
        }
    }

    #[inline(always)]
    fn acquire(&self, p: usize, mut doorway_done: impl FnMut()) {
        let i = self.mine[p].load(Ordering::Relaxed);
        // I->locked := true
        self.node[i].write(p, 1);
        // pred := fetch_and_store(tail, I)
        let pred = self.tail.swap(p, i as i64) as usize;
        doorway_done();
        self.pred[p].store(pred, Ordering::Relaxed);
        // repeat while pred->locked
        self.mem.wait_until(p, || self.node[pred].read(p) == 0);
    }
}

impl<M: Memory> Lock for Clh<M> {
    #[inline]
    fn enter(&self, p: usize, _session: usize) {
        self.acquire(p, || {})
    }

    fn enter_traced(&self, p: usize, _session: usize, doorway_done: &mut dyn FnMut()) {
        self.acquire(p, doorway_done)
    }

    #[inline]
    fn exit(&self, p: usize, _session: usize) {
        let i = self.mine[p].load(Ordering::Relaxed);
        // I->locked := false; I := pred
        self.node[i].write(p, 0);
        self.mine[p].store(self.pred[p].load(Ordering::Relaxed), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {}
