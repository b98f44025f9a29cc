//! `lockbench run`: Run locks under a workload.

use anyhow::Result;

use crate::engine::options::Limits;
pub use crate::engine::options::RunArgs;
use crate::engine::rounds::{run_with, Hooks};
use crate::report::baselines;

/// Options of `run`: the run's, and where to keep a copy of its results as a named baseline.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The run.
    #[command(flatten)]
    pub run: RunArgs,
    /// Also keep the results as the baseline NAME (in `<out>/baselines/NAME/`, replacing an
    /// earlier one), for `lockbench compare NAME DIR`.
    #[arg(long, value_name = "NAME")]
    pub save_as: Option<String>,
}

/// `lockbench run`: returns the process exit code (0 ok; 1 a safety failure, stall or FCFS
/// overtaking; 2 bad input; 3 nothing measured; 128 + signal when interrupted).
pub fn exec(args: &Args) -> Result<i32> {
    if let Some(name) = &args.save_as {
        baselines::check_name(name)?;
    }
    let mut opts = args.run.layered()?;
    let limits = Limits::detect();
    let warnings = opts.validate(&limits)?;
    if let Some(name) = &args.save_as {
        // Where the baseline will go, checked before anything is measured.
        let dest = opts.out().join(baselines::DIR).join(name);
        crate::opts::out::check_dir("--save-as", &dest)?;
    }
    let outcome = run_with(&opts, warnings, &limits, Hooks::default())?;
    save_baseline(args, &opts, outcome.dir.as_deref())?;
    Ok(outcome.code)
}

/// With `--save-as NAME`: the run's results copied to `<out>/baselines/NAME/`.
fn save_baseline(args: &Args, opts: &RunArgs, dir: Option<&std::path::Path>) -> Result<()> {
    let (Some(name), Some(dir)) = (&args.save_as, dir) else {
        return Ok(());
    };
    let dest = baselines::save(dir, &opts.out(), name)?;
    crate::opts::io::errln!(
        "baseline {name} saved in {} (compare with: lockbench compare {name} DIR)",
        crate::opts::io::shown(&dest)
    );
    Ok(())
}
