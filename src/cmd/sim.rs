//! `lockbench sim`: Message passing on the simulator.

pub use crate::mp::cli::sim as exec;
pub use crate::mp::cli::SimArgs as Args;
