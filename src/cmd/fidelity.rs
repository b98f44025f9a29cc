//! `lockbench fidelity`: The harness against a bare loop.

pub use crate::app::fidelity as exec;
pub use crate::cli::FidelityArgs as Args;
