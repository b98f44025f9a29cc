//! Reference locks with well-known RMR behaviour: fixed points for setting counted RMRs beside
//! hardware coherence traffic, and real timing baselines. Each is written once over the register
//! abstraction (with its swap and compare-and-swap), so it is timed, counted and verified like
//! the paper algorithms.

pub mod clh;
pub mod mcs;
pub mod tas;

use clh::Clh;
use mcs::Mcs;
use tas::{Tas, Ttas};

use super::LockEntry;

/// The reference entries, in listing order.
pub fn entries() -> Vec<LockEntry> {
    vec![
        crate::generic_entry!(mcs::INFO, Mcs),
        crate::generic_entry!(clh::INFO, Clh),
        crate::generic_entry!(tas::TAS, Tas),
        crate::generic_entry!(tas::TTAS, Ttas),
    ]
}

/// Test support: explores schedules of a registered lock and asserts it stays safe.
#[cfg(test)]
pub(crate) fn assert_safe(name: &str, threads: usize, schedules: usize) {
    crate::locks::paper::assert_safe_under_schedules(name, threads, schedules);
}
