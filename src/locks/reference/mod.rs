//! Reference locks with well-known RMR behaviour: fixed points for setting counted RMRs beside
//! hardware coherence traffic, and real timing baselines. Each is written once over the register
//! abstraction (with its swap and compare-and-swap), so it is timed, counted and verified like
//! the paper algorithms.

pub mod clh;
pub mod mcs;
pub mod tas;
