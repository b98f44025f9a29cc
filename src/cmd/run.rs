//! `lockbench run`: Run locks under a workload.

pub use crate::app::run as exec;
pub use crate::engine::options::RunArgs as Args;
