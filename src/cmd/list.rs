//! `lockbench list`: the locks with their problem, source and claims.

pub use crate::app::list as exec;
