//! `lockbench correlate`: Model RMRs against hardware counts.

pub use crate::hw::correlate as exec;
pub use crate::hw::CorrelateArgs as Args;
