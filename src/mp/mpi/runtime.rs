//! `mp-run --runtime mpi`: every rank runs every algorithm in turn ([`event_loop`]), rank 0
//! prints the results (see the module above for the design).

use ::mpi::traits::*;

use super::config::MpiConfig;
use super::event_loop;
use crate::mp::algo;
use crate::mp::metrics::MpResult;
use crate::mp::output;
use crate::opts::Format;

/// The buffer `MPI_Bsend` copies into (allocated lazily by the OS as it is touched).
const BSEND_BUFFER: usize = 256 << 20;

/// `mpirun -n R lockbench mp-run --runtime mpi ...`: every rank runs every algorithm in turn;
/// rank 0 prints; every rank exits with rank 0's code. `prepare` gives the runs and the output
/// format from the number of ranks; bad input is reported by rank 0 alone.
pub fn mp_run(
    prepare: impl FnOnce(usize) -> anyhow::Result<(Vec<MpiConfig>, Format)>,
) -> anyhow::Result<i32> {
    let Some(mut universe) = ::mpi::initialize() else {
        anyhow::bail!("MPI was initialised twice");
    };
    universe.set_buffer_size(BSEND_BUFFER);
    // SAFETY: PR_SET_TIMERSLACK only changes this thread's timer slack (default 50 µs), so
    // that the short naps between probes end when asked; a failure leaves the default.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong);
    }
    let world = universe.world();
    let rank = world.rank();
    let size = world.size() as usize;
    let prepared = prepare(size);
    let (runs, format) = match prepared {
        Ok(runs) => runs,
        // One line from rank 0, the same exit code everywhere.
        Err(e) if rank == 0 => return Err(e),
        Err(_) => return Ok(2),
    };
    let mut results = Vec::new();
    for cfg in &runs {
        let info = algo::info(&cfg.run.algo).expect("a registered algorithm");
        let r = crate::with_algo!(info, |make| event_loop::run(&world, cfg, make))?;
        results.extend(r);
    }
    let mut code = 0i32;
    if rank == 0 {
        let bases: Vec<MpResult> = results.iter().map(|r| r.run.clone()).collect();
        if format == Format::Json {
            println!("{}", serde_json::to_string_pretty(&results)?);
        } else {
            print!("{}", output::render(&bases, format));
            for r in &results {
                println!(
                    "{}: {} ranks x {} process(es) on {}; clock sync error <= {:.4} ms",
                    r.run.algo,
                    r.ranks,
                    r.procs_per_rank,
                    hosts_line(&r.hosts),
                    r.clock_sync_error_ms
                );
            }
        }
        code = output::exit_code(&bases);
    }
    world.process_at_rank(0).broadcast_into(&mut code);
    Ok(code)
}

/// `host (ranks a-b), ...` for the table's footer.
fn hosts_line(hosts: &[String]) -> String {
    let mut parts: Vec<(String, usize, usize)> = Vec::new();
    for (r, h) in hosts.iter().enumerate() {
        match parts.last_mut() {
            Some(last) if last.0 == *h && last.2 + 1 == r => last.2 = r,
            _ => parts.push((h.clone(), r, r)),
        }
    }
    parts
        .iter()
        .map(|(h, a, b)| {
            if a == b {
                format!("{h} (rank {a})")
            } else {
                format!("{h} (ranks {a}-{b})")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_grouped_by_runs_of_ranks() {
        let h: Vec<String> = ["a", "a", "b", "b", "a"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(hosts_line(&h), "a (ranks 0-1), b (ranks 2-3), a (rank 4)");
    }
}
