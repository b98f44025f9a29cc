//! `lockbench compare`: Compare two result sets.

pub use crate::compare::run as exec;
pub use crate::compare::CompareArgs as Args;
