//! The shared-memory algorithms of the papers, each written once over the register
//! abstraction, faithful to its figure.

pub mod bounded_cts;
pub mod burns_lamport;
pub mod bw_bakery;
pub mod bwb_gme;
pub mod cts;
pub mod glb;
pub mod lamport_bakery;
pub mod ub_bakery;
pub mod zehavi;

/// Why a mutant turning `<` into `≤` on (value, id) pairs is equivalent.
pub(crate) const IDS_DIFFER: &str =
    "pairs (value, id) of two different processes never tie, so ≤ and < agree";
