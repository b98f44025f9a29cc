//! `lockbench predict`: Passage times predicted from RMRs.

pub use crate::hw::predict as exec;
pub use crate::hw::PredictArgs as Args;
