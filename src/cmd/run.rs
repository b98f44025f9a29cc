//! `lockbench run`: Run locks under a workload.

pub use crate::app::run as exec;
pub use crate::cli::RunArgs as Args;
