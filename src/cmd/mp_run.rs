//! `lockbench mp-run`: message passing on threads or MPI.

use super::mp_model::{
    check_size, ModelArgs, WatchdogOpt, MAX_THREADED_MS, MAX_THREADED_TOTAL, WRITES,
};
use crate::error::UsageError;
use crate::mp::{batch, output};
use crate::opts::Format;

/// Options of `mp-run`.
#[derive(clap::Args, Debug, Clone)]
#[command(mut_arg("watchdog", |a| a.help("A request unserved for this many seconds is a liveness failure; default 10.")))]
pub struct Args {
    /// The model (times are in milliseconds here).
    #[command(flatten)]
    pub model: ModelArgs,
    /// Thread placement: pin each process thread to a CPU in turn (default), or not.
    #[arg(long)]
    pub no_pin: bool,
    /// `--watchdog`: in seconds (default 10).
    #[command(flatten)]
    pub watchdog: WatchdogOpt,
    /// Where the processes run: `threaded` (one thread each on this host) or `mpi` (one MPI
    /// rank each, started by `mpirun -n N`; needs a build with `--features mpi`).
    #[arg(long, value_enum, default_value = "threaded")]
    pub runtime: RuntimeKind,
    /// --runtime mpi: algorithm processes per rank (default 1); without --n, the processes are
    /// the ranks × this.
    #[arg(long)]
    pub procs_per_rank: Option<usize>,
}

/// The runtimes `mp-run` can use.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuntimeKind {
    /// One OS thread per process, channels between them.
    Threaded,
    /// One MPI rank per process (or `--procs-per-rank`), under `mpirun`.
    Mpi,
}

/// `lockbench mp-run`.
pub fn exec(args: &Args) -> anyhow::Result<i32> {
    if args.runtime == RuntimeKind::Mpi {
        return mpi_run(args);
    }
    if args.procs_per_rank.is_some() {
        return Err(UsageError("--procs-per-rank applies to --runtime mpi only".into()).into());
    }
    let model = args.model.model()?;
    check_size(&model, MAX_THREADED_MS, "ms", MAX_THREADED_TOTAL)?;
    args.watchdog.check()?;
    let format = args.model.format.pick("mp-run", WRITES, Format::Table)?;
    let results = batch::run_threaded(&model, !args.no_pin, args.watchdog.get(10.0))?;
    print!("{}", output::render(&results, format));
    Ok(output::exit_code(&results))
}

#[cfg(feature = "mpi")]
fn mpi_run(args: &Args) -> anyhow::Result<i32> {
    crate::mp::mpi::mp_run(|ranks| {
        let model = mpi_model(args, ranks)?;
        check_size(&model, MAX_THREADED_MS, "ms", MAX_THREADED_TOTAL)?;
        args.watchdog.check()?;
        let format = args.model.format.pick("mp-run", WRITES, Format::Table)?;
        let runs =
            crate::mp::mpi::configs(&model, ranks, args.procs_per_rank, args.watchdog.get(10.0))?;
        Ok((runs, format))
    })
}

/// The model of an MPI run of `ranks` ranks: without `--n`, every rank's processes.
#[cfg(feature = "mpi")]
fn mpi_model(args: &Args, ranks: usize) -> anyhow::Result<crate::mp::model::Model> {
    let n = crate::mp::mpi::processes(args.model.n, ranks, args.procs_per_rank);
    args.model.model_of(n)
}

#[cfg(not(feature = "mpi"))]
fn mpi_run(_: &Args) -> anyhow::Result<i32> {
    // Started by mpirun all the same: one line from the first rank, exit 2 everywhere.
    let rank = ["PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"]
        .iter()
        .find_map(|v| std::env::var(v).ok());
    if rank.is_some_and(|r| r != "0") {
        return Ok(2);
    }
    Err(UsageError(
        "--runtime mpi needs a build with MPI: scripts/install-mpi.sh, then cargo build --release --features mpi, then mpirun -n N target/release/lockbench mp-run --runtime mpi ...".into(),
    )
    .into())
}
