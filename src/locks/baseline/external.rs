//! The locks people actually use: parking_lot (through `lock_api`, in one registry line each:
//! `LockEntry::raw_mutex`, `LockEntry::raw_rwlock`), std and spin, adapted here.

use std::cell::UnsafeCell;
use std::sync::{Mutex, MutexGuard};

use crossbeam_utils::CachePadded;

use crate::locks::{Lock, LockInfo, Params, Problem};

/// What the registry and `lockbench list` say of `spin-ticket`: its paper and figure, its claims.
pub const SPIN_TICKET: LockInfo = LockInfo::baseline(
    "spin-ticket",
    Problem::Mutex,
    true,
    "spin crate TicketMutex: the external reference for ticket",
);

/// What the registry and `lockbench list` say of `parking-lot-mutex`: its paper and figure, its claims.
pub const PARKING_LOT_MUTEX: LockInfo = LockInfo::baseline(
    "parking-lot-mutex",
    Problem::Mutex,
    false,
    "parking_lot::RawMutex: spin briefly, then park",
);

/// What the registry and `lockbench list` say of `std-mutex`: its paper and figure, its claims.
pub const STD_MUTEX: LockInfo = LockInfo::baseline(
    "std-mutex",
    Problem::Mutex,
    false,
    "std::sync::Mutex (futex based)",
);

/// What the registry and `lockbench list` say of `parking-lot-rwlock`: its paper and figure, its claims.
pub const PARKING_LOT_RWLOCK: LockInfo = LockInfo::baseline(
    "parking-lot-rwlock",
    Problem::Gme,
    false,
    "session 0 shared (read), every other session exclusive (write)",
);

/// `spin-ticket`: the spin crate's `TicketMutex`, the external reference for `ticket`.
pub struct SpinTicket {
    lock: spin::mutex::TicketMutex<()>,
}

impl SpinTicket {
    /// A new unlocked ticket mutex.
    pub fn new(_params: &Params) -> Self {
        SpinTicket {
            lock: spin::mutex::TicketMutex::new(()),
        }
    }
}

impl Lock for SpinTicket {
    #[inline]
    fn enter(&self, _p: usize, _session: usize) {
        std::mem::forget(self.lock.lock());
    }

    #[inline]
    fn exit(&self, _p: usize, _session: usize) {
        // SAFETY: the caller holds the lock (it entered and forgot the guard).
        unsafe { self.lock.force_unlock() }
    }
}

/// Where process `p` keeps its guard while inside.
type GuardSlot = CachePadded<UnsafeCell<Option<MutexGuard<'static, ()>>>>;

/// `std-mutex`: `std::sync::Mutex<()>`. std has no raw unlock, so each process parks its guard
/// in its own slot between `enter` and `exit`.
pub struct StdMutex {
    // Declared before `mutex`, so guards are dropped before the mutex they borrow.
    slots: Box<[GuardSlot]>,
    mutex: Box<Mutex<()>>,
}

// SAFETY: slot `p` is touched only by the thread acting as process `p`, between its own `enter`
// and `exit` (the `Lock` contract), so guards never cross threads and slots are never shared.
unsafe impl Sync for StdMutex {}
// SAFETY: as above; a StdMutex moved to another thread holds no guards (no process is inside).
unsafe impl Send for StdMutex {}

impl StdMutex {
    /// A new unlocked mutex for `params.n` processes.
    pub fn new(params: &Params) -> Self {
        let slots = (0..params.n)
            .map(|_| CachePadded::new(UnsafeCell::new(None)))
            .collect();
        StdMutex {
            slots,
            mutex: Box::new(Mutex::new(())),
        }
    }
}

impl Lock for StdMutex {
    #[inline]
    fn enter(&self, p: usize, _session: usize) {
        let guard = self.mutex.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: the mutex is boxed and outlives every guard (field order above), so extending
        // the borrow to 'static never lets a guard outlive it.
        let guard: MutexGuard<'static, ()> = unsafe { std::mem::transmute(guard) };
        // SAFETY: only process p touches slot p (see the Sync impl).
        unsafe { *self.slots[p].get() = Some(guard) };
    }

    #[inline]
    fn exit(&self, p: usize, _session: usize) {
        // SAFETY: only process p touches slot p (see the Sync impl).
        unsafe { *self.slots[p].get() = None };
    }
}
