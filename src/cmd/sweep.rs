//! `lockbench sweep`: A config with lists as a matrix of points.

pub use crate::sweep::run as exec;
pub use crate::sweep::SweepArgs as Args;
