//! The shared-memory algorithms of the papers, each written once over the register
//! abstraction, faithful to its figure.

pub mod gme;
pub mod kex;
pub mod mutex;

use super::LockEntry;

/// The paper algorithms, in listing order: mutual exclusion, GME, k-exclusion.
pub fn entries() -> Vec<LockEntry> {
    let mut all = mutex::entries();
    all.extend(gme::entries());
    all.extend(kex::entries());
    all
}
