//! The baselines: the locks people actually use, run through the same interface.

pub mod condvar;
pub mod external;
pub mod ticket;

use condvar::{CondvarGme, Semaphore};
use external::{ParkingLotMutex, ParkingLotRwLock, SpinTicket, StdMutex};
use ticket::TicketLock;

use super::{Lock, LockEntry, LockInfo, Problem};

/// `noop`: admits everyone at once. Not a lock: it measures the harness's own cost per passage
/// (run it at one thread). Excluded from `all`; at more than one thread the oracle flags it.
pub struct Noop;

impl Lock for Noop {
    #[inline]
    fn enter(&self, _p: usize, _session: usize) {}
    #[inline]
    fn exit(&self, _p: usize, _session: usize) {}
}

const fn baseline(
    name: &'static str,
    problem: Problem,
    fcfs: bool,
    notes: &'static str,
) -> LockInfo {
    LockInfo {
        name,
        problem,
        source: "baseline",
        fcfs,
        bounded: true,
        rmr: "n/a",
        safe: true,
        notes,
    }
}

/// The baseline entries, in listing order.
pub fn entries() -> Vec<LockEntry> {
    fn external(info: LockInfo, native: super::Builder) -> LockEntry {
        LockEntry {
            info,
            native,
            scheduled: None,
            counting: None,
        }
    }
    vec![
        crate::generic_entry!(
            LockInfo {
                rmr: "unbounded (CC: O(waiters) invalidations per release)",
                ..baseline("ticket", Problem::Mutex, true, "ticket lock over the register abstraction, cache-padded")
            },
            TicketLock
        ),
        external(
            baseline("spin-ticket", Problem::Mutex, true, "spin crate TicketMutex: the external reference for ticket"),
            |p| Box::new(SpinTicket::new(p)),
        ),
        external(
            baseline("parking-lot-mutex", Problem::Mutex, false, "parking_lot::RawMutex: spin briefly, then park"),
            |p| Box::new(ParkingLotMutex::new(p)),
        ),
        external(
            baseline("std-mutex", Problem::Mutex, false, "std::sync::Mutex (futex based)"),
            |p| Box::new(StdMutex::new(p)),
        ),
        external(
            baseline("parking-lot-rwlock", Problem::Gme, false, "session 0 shared (read), every other session exclusive (write)"),
            |p| Box::new(ParkingLotRwLock::new(p)),
        ),
        external(
            baseline("condvar-gme", Problem::Gme, true, "mutex + condvar group lock, FCFS between conflicting sessions"),
            |p| Box::new(CondvarGme::new(p)),
        ),
        external(
            baseline("semaphore", Problem::KExclusion, false, "counting semaphore (mutex + condvar) with k permits"),
            |p| Box::new(Semaphore::new(p)),
        ),
        external(
            LockInfo {
                safe: false,
                ..baseline("noop", Problem::Mutex, false, "calibration, not a lock: admits everyone; measures harness overhead at 1 thread")
            },
            |_| Box::new(Noop),
        ),
    ]
}
