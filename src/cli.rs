//! The command line: the command enum (clap derive). Each command's options and entry point
//! live in its own file under [`crate::cmd`]; the groups several commands share, in
//! [`crate::opts`].

use clap::{Parser, Subcommand};

/// Measures lock algorithms against their theory: speed, fairness, safety.
#[derive(Parser, Debug)]
#[command(name = "lockbench", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// List the locks with their problem, source and claimed properties.
    List(crate::cmd::list::Args),
    /// Run locks under a workload and report throughput, latency, fairness and safety.
    Run(Box<crate::cmd::run::Args>),
    /// Explore interleavings of a lock on a scheduled memory and check its safety property
    /// after every step.
    Verify(Box<crate::cmd::verify::Args>),
    /// Measure the observer effect: the harness's default loop against a bare loop of the same
    /// lock, in interleaved rounds, at 1 thread and at every physical core.
    Fidelity(crate::cmd::fidelity::Args),
    /// Measure the cost of moving a cache line between each pair of CPUs (load, store, atomic
    /// RMW) and save the matrix for `predict`.
    Calibrate(crate::cmd::calibrate::Args),
    /// Set model RMRs against hardware coherence counts in a directory of results: Pearson and
    /// Spearman per event and model, with scatter plots (SVG).
    Correlate(crate::cmd::correlate::Args),
    /// Predict passage times from model RMRs and a calibration, against the measured ones.
    Predict(crate::cmd::predict::Args),
    /// Simulate message-passing algorithms (deterministic discrete events) and report their
    /// messages, waiting time, synchronization delay, throughput, concurrency and safety.
    Sim(Box<crate::cmd::sim::Args>),
    /// Run message-passing algorithms for real: one thread per process, channels, real time.
    MpRun(Box<crate::cmd::mp_run::Args>),
    /// Count RMRs per passage under the papers' models (cc, cc-wb, dsm) on a deterministic
    /// schedule, beside the paper's bound.
    Rmr(crate::cmd::rmr::Args),
    /// Every checkable claim of the five papers as one ledger: the paper's figure, the command
    /// that reproduces ours, our figure and a verdict (holds, differs, open, not checkable
    /// here); --table1 prints seed 000's Table 1 beside ours.
    Claims(crate::cmd::claims::Args),
    /// Render a directory of results as report.md with SVG plots and HdrHistogram interval
    /// logs.
    Report(crate::cmd::report::Args),
    /// Compare two result sets point by point: B/A throughput with its interval, differences
    /// beyond the noise flagged; --fail-above X% exits 1 on a regression (for CI).
    Compare(crate::cmd::compare::Args),
    /// Run an unmodified program with its pthread mutexes and rwlocks on each lock (LD_PRELOAD
    /// interposition), in interleaved rounds: its speed relative to pthread, what the
    /// interposer saw, and the interposer's own cost.
    App(crate::cmd::app::Args),
    /// Run a config with lists (threads, mix, cs, think, k, cs-lines) as a matrix of points,
    /// with a progress bar; each finished point is saved at once and --resume DIR finishes an
    /// interrupted sweep.
    Sweep(crate::cmd::sweep::Args),
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    #[test]
    fn every_command_is_well_formed() {
        // Every option group a command flattens, every help it overrides and every argument
        // group it names must exist: clap checks them all here rather than at a user's --help.
        super::Cli::command().debug_assert();
    }
}
