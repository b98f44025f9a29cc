//! `lockbench calibrate`: Cache-line transfer costs.

pub use crate::hw::calibrate as exec;
pub use crate::hw::CalibrateArgs as Args;
