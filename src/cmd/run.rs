//! `lockbench run`: Run locks under a workload.

pub use crate::engine::options::RunArgs as Args;

use anyhow::Result;

use crate::engine::options::Limits;
use crate::engine::rounds::{run_with, Hooks};

/// `lockbench run`: returns the process exit code (0 ok; 1 a safety failure, stall or FCFS
/// overtaking; 2 bad input; 3 nothing measured; 128 + signal when interrupted).
pub fn exec(args: &Args) -> Result<i32> {
    let mut opts = args.layered()?;
    let limits = Limits::detect();
    let warnings = opts.validate(&limits)?;
    crate::opts::out::check_dir(&opts.name("out"), &opts.out())?;
    Ok(run_with(&opts, warnings, &limits, Hooks::default())?.code)
}
