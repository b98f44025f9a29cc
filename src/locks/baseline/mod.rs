//! The baselines: the locks people actually use, run through the same interface.

pub mod condvar;
pub mod external;
pub mod noop;
pub mod ticket;

use condvar::{CondvarGme, Semaphore};
use external::{ParkingLotMutex, ParkingLotRwLock, SpinTicket, StdMutex};
use noop::Noop;
use ticket::TicketLock;

use super::LockEntry;

/// The baseline entries, in listing order.
pub fn entries() -> Vec<LockEntry> {
    vec![
        crate::generic_entry!(ticket::INFO, TicketLock),
        crate::native_entry!(external::SPIN_TICKET, |p: &crate::locks::Params| {
            SpinTicket::new(p)
        }),
        crate::native_entry!(external::PARKING_LOT_MUTEX, |p: &crate::locks::Params| {
            ParkingLotMutex::new(p)
        }),
        crate::native_entry!(external::STD_MUTEX, |p: &crate::locks::Params| {
            StdMutex::new(p)
        }),
        crate::native_entry!(external::PARKING_LOT_RWLOCK, |p: &crate::locks::Params| {
            ParkingLotRwLock::new(p)
        }),
        crate::native_entry!(condvar::CONDVAR_GME, |p: &crate::locks::Params| {
            CondvarGme::new(p)
        }),
        crate::native_entry!(condvar::SEMAPHORE, |p: &crate::locks::Params| {
            Semaphore::new(p)
        }),
        crate::native_entry!(noop::INFO, |_: &crate::locks::Params| Noop),
    ]
}
