//! The built-in locks, one line each, in listing order. Adding a lock: its file under
//! `src/locks/` (its code and its `LockInfo`, with its bound and mutants) and one line here.

use super::LockEntry;
use crate::generic_entry;
use crate::locks::baseline::{condvar, external, noop, spinning, ticket};
use crate::locks::paper::{
    burns_lamport, bw_bakery, bwb_gme, glb, lamport_bakery, ub_bakery, zehavi,
};
use crate::locks::reference::{clh, mcs, tas};

/// Every built-in lock: the baselines, the reference locks, then the paper algorithms (mutual
/// exclusion, GME, k-exclusion).
pub(super) fn entries() -> Vec<LockEntry> {
    vec![
        // baseline
        generic_entry!(ticket::INFO, ticket::TicketLock),
        LockEntry::native_only(external::SPIN_TICKET, external::SpinTicket::new),
        LockEntry::raw_mutex::<parking_lot::RawMutex>(external::PARKING_LOT_MUTEX),
        LockEntry::native_only(external::STD_MUTEX, external::StdMutex::new),
        LockEntry::raw_rwlock::<parking_lot::RawRwLock>(external::PARKING_LOT_RWLOCK),
        generic_entry!(spinning::SPIN_GME, spinning::SpinGme),
        LockEntry::native_only(condvar::CONDVAR_GME, condvar::CondvarGme::new),
        LockEntry::native_only(condvar::SEMAPHORE, condvar::Semaphore::new),
        generic_entry!(spinning::SPIN_SEMAPHORE, spinning::SpinSemaphore),
        LockEntry::native_only(noop::INFO, |_| noop::Noop),
        // reference
        generic_entry!(mcs::INFO, mcs::Mcs),
        generic_entry!(clh::INFO, clh::Clh),
        generic_entry!(tas::TAS, tas::Tas),
        generic_entry!(tas::TTAS, tas::Ttas),
        // paper
        generic_entry!(lamport_bakery::INFO, lamport_bakery::LamportBakery),
        generic_entry!(ub_bakery::UB_BAKERY, ub_bakery::UbBakery),
        generic_entry!(ub_bakery::B_BAKERY, ub_bakery::BBakery),
        generic_entry!(bw_bakery::INFO, bw_bakery::BwBakery),
        generic_entry!(burns_lamport::INFO, burns_lamport::BurnsLamport),
        generic_entry!(glb::INFO, glb::Glb),
        generic_entry!(bwb_gme::INFO, bwb_gme::BwbGme),
        generic_entry!(bwb_gme::NAIVE, bwb_gme::NaiveBwbGme),
        generic_entry!(zehavi::INFO, zehavi::ZehaviKex),
        generic_entry!(zehavi::INFO_BOUNDED, zehavi::ZehaviKexBounded),
    ]
}
