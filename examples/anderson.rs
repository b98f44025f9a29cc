//! A lock of your own, with no line of lockbench changed: Anderson's array-based queue lock
//! written once over lockbench's register abstraction ([`Memory`]), with its RMR bound and a
//! seeded mutant beside the code, added to the built-in locks in one line. Every command then
//! knows it:
//!
//! ```text
//! cargo run --example anderson -- list --lock anderson
//! cargo run --example anderson -- run --lock anderson,ticket --threads 2
//! cargo run --example anderson -- verify --lock anderson --threads 3
//! cargo run --example anderson -- verify --mutants anderson
//! cargo run --example anderson -- rmr --lock anderson --threads 2,4 --model cc,dsm
//! cargo run --example anderson -- fidelity --lock anderson --threads 1
//! ```

use lockbench::locks::{Bound, Claims, Lock, LockInfo, Mutant, Params, Problem};
use lockbench::mem::{Home, Memory, Model, Register, ScheduledMemory};
use lockbench::registry::{Algorithm, LockEntry, Registry};

/// What `lockbench list` says of `anderson`, its RMR bound and its mutants.
const INFO: LockInfo = LockInfo::paper(
    "anderson",
    Problem::Mutex,
    "Anderson 1990, array-based queue lock (an example of a lock of your own)",
    "O(1) CC; DSM: no claim",
    "each waiter spins on its own slot of an array of N flags",
)
.with_fcfs(true)
.with_bounded(false)
.with_bound(rmr_bound)
.with_mutants(mutants);

/// CC: the ticket's fetch-and-add and the write of `mine` (2), at most two reads of the own
/// slot (the first, and one after the predecessor's hand-off: the slot's reset happened before
/// the wait began, since the slot's previous holder reset it before this ticket was taken), the
/// reset (1), then at exit the read of `mine` and the hand-off write (2). DSM: the slot a
/// process spins on changes with every ticket, so no claim.
fn rmr_bound(model: Model, _n: usize) -> Option<Bound> {
    (model != Model::Dsm).then(|| {
        Bound::constant(
            7,
            "Anderson 1990: fetch-and-add, own slot read at most twice, reset, hand-off",
        )
    })
}

/// The seeded mutants: one line changed each, behind the const generic `MUT`.
fn mutants() -> Vec<Mutant> {
    vec![Mutant::new(
        "no-reset",
        "3",
        "flags[slot] := false dropped",
        Anderson::<ScheduledMemory, NO_RESET>::new,
    )]
}

/// Mutant: the slot is not reset on entry, so a ticket that comes round to it later passes at
/// once.
const NO_RESET: u8 = 1;

/// Anderson's lock over memory `M`, mutant `MUT` (0: the algorithm).
struct Anderson<M: Memory, const MUT: u8 = 0> {
    mem: M,
    n: i64,
    /// The next ticket.
    tail: M::Reg,
    /// flags[s]: the holder of a ticket ≡ s (mod N) may enter.
    flags: Box<[M::Reg]>,
    /// mine[p]: the slot process p holds, from entry to exit.
    mine: Box<[M::Reg]>,
}

impl<M: Memory, const MUT: u8> Anderson<M, MUT> {
    fn new(mem: M, params: &Params) -> Self {
        let n = params.n.max(1);
        // Slot 0 starts open: the first ticket passes.
        let flags = (0..n)
            .map(|s| mem.register(Home::Shared, i64::from(s == 0)))
            .collect();
        let tail = mem.register(Home::Shared, 0);
        let mine = mem.per_process(n, 0);
        Anderson {
            mem,
            n: n as i64,
            tail,
            flags,
            mine,
        }
    }

    fn acquire(&self, p: usize, mut doorway_done: impl FnMut()) {
        // 1: take a ticket; its slot is the ticket mod N.
        let slot = self.tail.fetch_add(p, 1).rem_euclid(self.n);
        self.mine[p].write(p, slot);
        doorway_done();
        // 2: wait on the own slot.
        let flag = &self.flags[slot as usize];
        self.mem.wait_until(p, || flag.read(p) != 0);
        // 3: reset it for the ticket N later.
        if MUT != NO_RESET {
            flag.write(p, 0);
        }
    }
}

impl<M: Memory, const MUT: u8> Lock for Anderson<M, MUT> {
    fn enter(&self, p: usize, _session: usize) {
        self.acquire(p, || {})
    }

    fn enter_traced(&self, p: usize, _session: usize, doorway_done: &mut dyn FnMut()) {
        self.acquire(p, doorway_done)
    }

    fn exit(&self, p: usize, _session: usize) {
        // 4: hand the lock to the next slot.
        let next = (self.mine[p].read(p) + 1).rem_euclid(self.n);
        self.flags[next as usize].write(p, 1);
    }

    fn claims(&self) -> Claims {
        Claims::BOUNDED_EXIT
    }
}

/// The algorithm for every memory: native (timed), scheduled (`verify`), counting (`rmr`).
struct AndersonLock;

impl Algorithm for AndersonLock {
    type On<M: Memory> = Anderson<M>;
    fn new<M: Memory>(mem: M, params: &Params) -> Anderson<M> {
        Anderson::new(mem, params)
    }
}

fn main() {
    lockbench::main_with(Registry::builtin().with(LockEntry::over_memory::<AndersonLock>(INFO)))
}
