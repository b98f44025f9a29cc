//! `lockbench rmr`: RMRs per passage under the papers' models.

pub use crate::app::rmr as exec;
pub use crate::cli::RmrArgs as Args;
