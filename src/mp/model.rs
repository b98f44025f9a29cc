//! The model of a message-passing run, validated: which algorithms, how many processes and
//! groups, the workload and the topology; and the set-up each algorithm's processes are built
//! from under it (graph, l–k bounds, initial configuration).

use super::algo::{AlgoInfo, Setup};
use super::run_config::RunConfig;
use super::topo::{Graph, Topology};
use super::workload::Dist;
use super::Problem;
use crate::error::UsageError;
use crate::workload::Mix;

/// The most processes a model may have.
pub const MAX_N: usize = 10_000;
/// The most groups a model may have.
pub const MAX_M: usize = 1_000_000;
/// The most seeds one `sim` runs.
pub const MAX_SEEDS: u64 = 100_000;

/// A validated model, for every algorithm it names.
#[derive(Clone, Debug)]
pub struct Model {
    /// The algorithms, in the order they run.
    pub algos: Vec<&'static AlgoInfo>,
    /// Processes.
    pub n: usize,
    /// Groups.
    pub m: usize,
    /// Critical sections each process enters.
    pub requests: u64,
    /// The first seed.
    pub seed: u64,
    /// Inter-request time.
    pub ncs: Dist,
    /// CS time.
    pub cs: Dist,
    /// Channel delay.
    pub cd: Dist,
    /// Group selection.
    pub mix: Mix,
    /// Topology (of the local critical-section algorithms).
    pub topology: Topology,
    /// Local CS: lower bounds l_i, one value or one per process (default 1).
    pub l: Option<Vec<usize>>,
    /// Local CS: upper bounds k_i, one value or one per process (default 2).
    pub k: Option<Vec<usize>>,
}

impl Model {
    /// The run of `info` under this model with `seed`, on a runtime whose watchdog is
    /// `watchdog`.
    pub fn run_config(
        &self,
        info: &AlgoInfo,
        seed: u64,
        watchdog: f64,
    ) -> Result<RunConfig, UsageError> {
        Ok(RunConfig {
            algo: info.name.to_string(),
            problem: info.problem,
            setup: self.setup(info, seed)?,
            requests: self.requests,
            seed,
            ncs: self.ncs,
            cs: self.cs,
            delay: self.cd,
            mix: self.mix.clone(),
            watchdog,
        })
    }

    /// The set-up of `info` under this model with `seed` (which draws a random topology and
    /// the initial configuration).
    pub fn setup(&self, info: &AlgoInfo, seed: u64) -> Result<Setup, UsageError> {
        let n = self.n;
        let usage = |m: String| UsageError(m);
        let local = info.problem == Problem::LocalCs;
        let graph = if local {
            Graph::build(&self.topology, n, seed)
        } else {
            Graph::complete(0)
        };
        let per = |v: &Option<Vec<usize>>, what: &str, default: usize| match v {
            None => Ok(vec![default; n]),
            Some(v) if v.len() == 1 => Ok(vec![v[0]; n]),
            Some(v) if v.len() == n => Ok(v.clone()),
            Some(v) => Err(usage(format!(
                "--{what} takes one value or {n} (one per process), got {}",
                v.len()
            ))),
        };
        let (mut l, mut k, mut initial_in) = (vec![0; n], vec![n; n], vec![false; n]);
        if local {
            l = per(&self.l, "l", 1)?;
            k = per(&self.k, "k", 2)?;
            for i in 0..n {
                let deg = graph.neighbours(i).len();
                if info.k_is_degree {
                    k[i] = deg + 1;
                }
                if !(l[i] < k[i] && k[i] <= deg + 1) {
                    return Err(usage(format!(
                        "{}: process {i} needs 0 <= l < k <= |N_i| + 1 = {}, got l = {}, k = {}",
                        info.name,
                        deg + 1,
                        l[i],
                        k[i]
                    )));
                }
            }
            initial_in = graph.initial_configuration(&l, &k, seed).map_err(|why| {
                usage(format!(
                    "{}: {why} on {} with n = {n}; choose other --l / --k or --topology",
                    info.name, self.topology
                ))
            })?;
        }
        Ok(Setup {
            n,
            m: self.m,
            graph,
            l,
            k,
            initial_in,
            leader: 0,
        })
    }
}

/// Most critical sections each process enters (`--requests`).
pub const MAX_REQUESTS: u64 = 1_000_000;
/// Most critical sections of a run in all (`--n` × `--requests`) on the simulator.
pub const MAX_SIM_TOTAL: u64 = 100_000_000;
/// Most critical sections of a run in all on threads (each one real time).
pub const MAX_THREADED_TOTAL: u64 = 10_000_000;
/// Largest value a delay distribution may take on the simulator (time units): sums of many
/// draws stay finite and exact enough.
pub const MAX_SIM_TIME: f64 = 1e9;
/// Largest value a delay distribution may take on threads (milliseconds: a minute).
pub const MAX_THREADED_MS: f64 = 60_000.0;
/// Largest watchdog, in either unit.
pub const MAX_WATCHDOG: f64 = 1e12;
