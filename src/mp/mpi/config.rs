//! One run on the MPI runtime: the run and how many processes each rank runs, built from a
//! model for the number of ranks `mpirun` started.

use crate::error::UsageError;
use crate::mp::model::Model;
use crate::mp::run_config::RunConfig;

/// One run on the MPI runtime: the run (times in ms, the watchdog in seconds; the channel
/// delay is added to the network's own), and how many processes each rank runs.
#[derive(Clone, Debug)]
pub struct MpiConfig {
    /// The run.
    pub run: RunConfig,
    /// Processes per rank.
    pub procs_per_rank: usize,
}

/// The processes of an MPI run: `--n` when given, else every rank's processes (`ranks` ×
/// `procs_per_rank`, default 1): a user who starts 4 ranks means 4 processes.
pub fn processes(n: Option<usize>, ranks: usize, procs_per_rank: Option<usize>) -> usize {
    n.unwrap_or(ranks * procs_per_rank.unwrap_or(1).max(1))
}

/// One run per algorithm of `model` on `ranks` ranks of `procs_per_rank` processes each
/// (default 1): `--n` must be their product.
pub fn configs(
    model: &Model,
    ranks: usize,
    procs_per_rank: Option<usize>,
    watchdog: f64,
) -> anyhow::Result<Vec<MpiConfig>> {
    let usage = |m: String| -> anyhow::Error { UsageError(m).into() };
    let ppr = procs_per_rank.unwrap_or(1);
    if ppr == 0 {
        return Err(usage("--procs-per-rank must be at least 1".into()));
    }
    if model.n != ranks * ppr {
        return Err(usage(format!(
            "--n {} does not match {ranks} MPI ranks x {ppr} process{} per rank: give --n {} or start {} ranks (mpirun -n {})",
            model.n,
            if ppr == 1 { "" } else { "es" },
            ranks * ppr,
            model.n.div_ceil(ppr),
            model.n.div_ceil(ppr)
        )));
    }
    model
        .algos
        .iter()
        .map(|info| {
            Ok(MpiConfig {
                run: model.run_config(info, model.seed, watchdog)?,
                procs_per_rank: ppr,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn n_defaults_to_the_ranks_times_processes_per_rank() {
        assert_eq!(processes(None, 4, None), 4);
        assert_eq!(processes(None, 4, Some(3)), 12);
        assert_eq!(processes(Some(8), 4, Some(2)), 8);
        // A bad --procs-per-rank 0 is refused by `configs`, not turned into 0 processes here.
        assert_eq!(processes(None, 4, Some(0)), 4);
    }
}
