//! `lockbench mp-run`: Message passing on threads or MPI.

pub use crate::mp::cli::mp_run as exec;
pub use crate::mp::cli::MpRunArgs as Args;
