//! The shared-memory algorithms of the papers, each written once over the register
//! abstraction, faithful to its figure.

pub mod burns_lamport;
pub mod bw_bakery;
pub mod bwb_gme;
pub mod cts;
pub mod glb;
pub mod lamport_bakery;
pub mod ub_bakery;
pub mod zehavi;

use burns_lamport::BurnsLamport;
use bw_bakery::BwBakery;
use bwb_gme::{BwbGme, NaiveBwbGme};
use glb::Glb;
use lamport_bakery::LamportBakery;
use ub_bakery::{BBakery, UbBakery};
use zehavi::ZehaviKex;

use super::LockEntry;

/// The paper algorithms, in listing order: mutual exclusion, GME, k-exclusion.
pub fn entries() -> Vec<LockEntry> {
    vec![
        crate::generic_entry!(lamport_bakery::INFO, LamportBakery),
        crate::generic_entry!(ub_bakery::UB_BAKERY, UbBakery),
        crate::generic_entry!(ub_bakery::B_BAKERY, BBakery),
        crate::generic_entry!(bw_bakery::INFO, BwBakery),
        crate::generic_entry!(burns_lamport::INFO, BurnsLamport),
        crate::generic_entry!(glb::INFO, Glb),
        crate::generic_entry!(bwb_gme::INFO, BwbGme),
        crate::generic_entry!(bwb_gme::NAIVE, NaiveBwbGme),
        crate::generic_entry!(zehavi::INFO, ZehaviKex),
    ]
}

/// Test support: explores schedules of a registered lock and asserts it stays safe, on a seed
/// drawn per call (`LOCKBENCH_SEED` fixes it), printed on failure.
#[cfg(test)]
pub(crate) fn assert_safe_under_schedules(name: &str, threads: usize, schedules: usize) {
    let entry = super::find(name).expect("registered");
    let mut opts = crate::verify::VerifyOptions::new(threads);
    opts.schedules = schedules;
    opts.seed = std::env::var("LOCKBENCH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap();
            t.subsec_nanos() as u64 % 1_000_000
        });
    let r = crate::verify::verify(&entry, &opts, false).unwrap();
    assert_eq!(
        r.outcome,
        crate::verify::Outcome::Safe,
        "{name} at {threads}, seed {}: {r}",
        opts.seed
    );
}
