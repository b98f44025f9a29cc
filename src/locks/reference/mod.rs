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

use super::{LockEntry, LockInfo, Problem};

const fn reference(
    name: &'static str,
    fcfs: bool,
    rmr: &'static str,
    source: &'static str,
    notes: &'static str,
) -> LockInfo {
    LockInfo {
        name,
        problem: Problem::Mutex,
        source,
        fcfs,
        bounded: true,
        rmr,
        safe: true,
        notes,
    }
}

/// The reference entries, in listing order.
pub fn entries() -> Vec<LockEntry> {
    vec![
        crate::generic_entry!(
            reference(
                "mcs",
                true,
                "O(1) CC and DSM",
                "reference: Mellor-Crummey & Scott 1991 (MCS queue lock)",
                "queue of per-process nodes; each waiter spins on its own node (local in DSM)"
            ),
            Mcs
        ),
        crate::generic_entry!(
            reference(
                "clh",
                true,
                "O(1) CC; unbounded DSM",
                "reference: Craig 1993, Magnusson-Landin-Hagersten 1994 (CLH queue lock)",
                "implicit queue; a waiter spins on its predecessor's node, which migrates (remote in DSM)"
            ),
            Clh
        ),
        crate::generic_entry!(
            reference(
                "tas",
                false,
                "unbounded (CC and DSM)",
                "reference: test-and-set spin lock",
                "every attempt is a swap on the one lock word"
            ),
            Tas
        ),
        crate::generic_entry!(
            reference(
                "ttas",
                false,
                "unbounded (CC and DSM)",
                "reference: test-and-test-and-set spin lock",
                "spins reading its cached copy; swaps when the word looks free"
            ),
            Ttas
        ),
    ]
}

/// Test support: explores schedules of a registered lock and asserts it stays safe.
#[cfg(test)]
pub(crate) fn assert_safe(name: &str, threads: usize, schedules: usize) {
    crate::locks::paper::assert_safe_under_schedules(name, threads, schedules);
}
