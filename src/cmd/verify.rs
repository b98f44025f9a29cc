//! `lockbench verify`: Explore interleavings of a lock.

pub use crate::app::verify as exec;
pub use crate::cli::VerifyArgs as Args;
