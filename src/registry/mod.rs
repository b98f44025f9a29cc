//! Every lock lockbench knows, one line each, above the runner: an entry joins a lock's
//! description (the constant its algorithm file starts with) to the ways the same code runs —
//! built on native memory, timed through the monomorphised passage loop, on the scheduled
//! memory (`verify`) and on a counting memory (`rmr`).

pub mod plugin;
#[cfg(test)]
mod tests;

use crate::error::UsageError;
use crate::locks::baseline::{
    condvar, condvar::CondvarGme, condvar::Semaphore, external, external::ParkingLotMutex,
    external::ParkingLotRwLock, external::SpinTicket, external::StdMutex, noop, noop::Noop, ticket,
    ticket::TicketLock,
};
use crate::locks::paper::{
    burns_lamport, burns_lamport::BurnsLamport, bw_bakery, bw_bakery::BwBakery, bwb_gme,
    bwb_gme::BwbGme, bwb_gme::NaiveBwbGme, glb, glb::Glb, lamport_bakery,
    lamport_bakery::LamportBakery, ub_bakery, ub_bakery::BBakery, ub_bakery::UbBakery, zehavi,
    zehavi::ZehaviKex, zehavi::ZehaviKexBounded,
};
use crate::locks::reference::{clh, clh::Clh, mcs, mcs::Mcs, tas, tas::Tas, tas::Ttas};
use crate::locks::{Builder, CountingBuilder, LockInfo, Params};
use crate::runner::spec::{Bench, Subject};

/// One registry entry.
#[derive(Clone)]
pub struct LockEntry {
    /// Metadata.
    pub info: LockInfo,
    /// Builds the lock on native memory behind a dynamic interface (tests and tools that do
    /// not time it).
    pub native: Builder,
    /// Runs it on native memory, monomorphised (every timed run goes through this): the
    /// passage loop instantiated for the lock's concrete type by [`generic_entry!`] and
    /// [`native_entry!`] from [`crate::runner::exec::run_typed`].
    pub bench: Bench,
    /// Builds the same algorithm on the scheduled memory (for `verify`); `None` for locks not
    /// written over the register abstraction.
    pub scheduled: Option<Builder>,
    /// Builds the same algorithm on a counting memory (for `rmr` and `run --rmr`); `None` for
    /// locks not written over the register abstraction.
    pub counting: Option<CountingBuilder>,
}

impl LockEntry {
    /// What the runner needs of this lock: its description, its bench, its counting build.
    pub fn subject(&self) -> Subject {
        Subject {
            info: self.info.clone(),
            bench: self.bench.clone(),
            counting: self.counting.clone(),
        }
    }
}

/// Makes a [`LockEntry`] for an algorithm written over the register abstraction: a type
/// `$ty<M: Memory>` with `fn new(mem: M, params: &Params) -> Self` implementing [`Lock`].
#[macro_export]
macro_rules! generic_entry {
    ($info:expr, $ty:ident) => {
        $crate::registry::LockEntry {
            info: $info,
            native: ::std::sync::Arc::new(
                |p: &$crate::locks::Params| -> Box<dyn $crate::locks::Lock> {
                    Box::new($ty::new(p.native(), p))
                },
            ),
            bench: ::std::sync::Arc::new(|spec, kind| {
                $crate::runner::exec::run_typed(spec, kind, |p| $ty::new(p.native(), p))
            }),
            scheduled: Some(::std::sync::Arc::new(
                |p: &$crate::locks::Params| -> Box<dyn $crate::locks::Lock> {
                    Box::new($ty::new($crate::mem::ScheduledMemory, p))
                },
            )),
            counting: Some(::std::sync::Arc::new(
                |p: &$crate::locks::Params, m| -> Box<dyn $crate::locks::Lock> {
                    Box::new($ty::new(m, p))
                },
            )),
        }
    };
}

/// Makes a [`LockEntry`] for a lock that only runs on native memory: `$build` is a
/// non-capturing closure `|params: &Params| -> L` for a concrete `L: Lock`.
#[macro_export]
macro_rules! native_entry {
    ($info:expr, $build:expr) => {
        $crate::registry::LockEntry {
            info: $info,
            native: ::std::sync::Arc::new(
                |p: &$crate::locks::Params| -> Box<dyn $crate::locks::Lock> {
                    Box::new(($build)(p))
                },
            ),
            bench: ::std::sync::Arc::new(|spec, kind| {
                $crate::runner::exec::run_typed(spec, kind, $build)
            }),
            scheduled: None,
            counting: None,
        }
    };
}

/// Every lock lockbench knows, in listing order: the baselines, the reference locks, then the
/// paper algorithms (mutual exclusion, GME, k-exclusion).
pub fn registry() -> Vec<LockEntry> {
    vec![
        // baseline
        generic_entry!(ticket::INFO, TicketLock),
        native_entry!(external::SPIN_TICKET, |p: &Params| SpinTicket::new(p)),
        native_entry!(external::PARKING_LOT_MUTEX, |p: &Params| {
            ParkingLotMutex::new(p)
        }),
        native_entry!(external::STD_MUTEX, |p: &Params| StdMutex::new(p)),
        native_entry!(external::PARKING_LOT_RWLOCK, |p: &Params| {
            ParkingLotRwLock::new(p)
        }),
        native_entry!(condvar::CONDVAR_GME, |p: &Params| CondvarGme::new(p)),
        native_entry!(condvar::SEMAPHORE, |p: &Params| Semaphore::new(p)),
        native_entry!(noop::INFO, |_: &Params| Noop),
        // reference
        generic_entry!(mcs::INFO, Mcs),
        generic_entry!(clh::INFO, Clh),
        generic_entry!(tas::TAS, Tas),
        generic_entry!(tas::TTAS, Ttas),
        // paper
        generic_entry!(lamport_bakery::INFO, LamportBakery),
        generic_entry!(ub_bakery::UB_BAKERY, UbBakery),
        generic_entry!(ub_bakery::B_BAKERY, BBakery),
        generic_entry!(bw_bakery::INFO, BwBakery),
        generic_entry!(burns_lamport::INFO, BurnsLamport),
        generic_entry!(glb::INFO, Glb),
        generic_entry!(bwb_gme::INFO, BwbGme),
        generic_entry!(bwb_gme::NAIVE, NaiveBwbGme),
        generic_entry!(zehavi::INFO, ZehaviKex),
        generic_entry!(zehavi::INFO_BOUNDED, ZehaviKexBounded),
    ]
}

/// Looks up a lock by name.
pub fn find(name: &str) -> Option<LockEntry> {
    registry().into_iter().find(|e| e.info.name == name)
}

/// Looks a lock up, or says what to do.
pub fn lookup(name: &str) -> Result<LockEntry, UsageError> {
    if let Some(path) = name.strip_prefix(plugin::PREFIX) {
        return plugin::entry(path);
    }
    find(name).ok_or_else(|| {
        UsageError(format!(
            "unknown lock {name:?}: `lockbench list` shows the names"
        ))
    })
}
