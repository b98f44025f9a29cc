//! `lockbench report`: Render a results directory.

pub use crate::report::render::report as exec;
pub use crate::report::render::ReportArgs as Args;
