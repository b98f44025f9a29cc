//! What every runtime (the simulator, threads, MPI) is told about a run, and what it derives
//! from it the same way: the closed neighbourhoods the local checks count in, the number of
//! groups, and the description at the head of a result.

use super::algo::{self, Setup};
use super::metrics::MpResult;
use super::workload::Dist;
use super::{Pid, Problem};
use crate::workload::Mix;

/// One run of one algorithm, whatever the runtime. Times are in the runtime's unit:
/// simulated time units, or milliseconds on threads and MPI.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// Algorithm name (for the result, and the properties its table entry claims).
    pub algo: String,
    /// The problem, which chooses the safety check.
    pub problem: Problem,
    /// Processes, graph, bounds and initial configuration.
    pub setup: Setup,
    /// Critical sections each process enters.
    pub requests: u64,
    /// Seed.
    pub seed: u64,
    /// Inter-request time.
    pub ncs: Dist,
    /// Critical-section time.
    pub cs: Dist,
    /// Channel delay (on MPI: added to the network's own).
    pub delay: Dist,
    /// Group selection.
    pub mix: Mix,
    /// A request unserved for longer than this is a liveness failure (simulated time units
    /// on the simulator, seconds on threads and MPI).
    pub watchdog: f64,
}

impl RunConfig {
    /// Whether the problem is seed 004's local critical sections.
    pub fn local(&self) -> bool {
        self.problem == Problem::LocalCs
    }

    /// The per-path tally of Lemma 6 for a local critical-section run (None for the others):
    /// each process's closed neighbourhood |N_i| + 1 sets its bounds.
    pub fn path_tally(&self) -> Option<super::paths::PathTally> {
        self.local().then(|| {
            super::paths::PathTally::new(
                (0..self.setup.n)
                    .map(|p| self.setup.graph.neighbours(p).len() + 1)
                    .collect(),
            )
        })
    }

    /// Per process, its closed neighbourhood (its neighbours and itself) for local critical
    /// sections; empty ones otherwise.
    pub fn closed_neighbourhoods(&self) -> Vec<Vec<Pid>> {
        let s = &self.setup;
        if !self.local() {
            return vec![Vec::new(); s.n];
        }
        (0..s.n)
            .map(|p| {
                let mut c = s.graph.neighbours(p).to_vec();
                c.push(p);
                c
            })
            .collect()
    }

    /// How many groups requests can name.
    pub fn groups(&self) -> usize {
        self.mix.sessions(self.setup.n).max(self.setup.m).max(1)
    }

    /// A result of this run on `runtime` over `topology` with only the run's description
    /// filled: the runtime adds what it measured.
    pub fn result(&self, runtime: &str, topology: String, fifo: bool) -> MpResult {
        let (n, m) = (self.setup.n, self.setup.m);
        MpResult {
            algo: self.algo.clone(),
            runtime: runtime.into(),
            n,
            m,
            requests_per_process: self.requests,
            seed: self.seed,
            topology,
            delay: self.delay.to_string(),
            ncs: self.ncs.to_string(),
            cs: self.cs.to_string(),
            mix: self.mix.to_string(),
            fifo,
            starvation_bound: algo::info(&self.algo).and_then(|a| a.sessions_bound(n, m)),
            ..MpResult::default()
        }
    }

    /// The topology a real runtime reports: `graph` for local critical sections (whatever
    /// graph the set-up has), else `complete`.
    pub fn topology_name(&self) -> String {
        if self.local() { "graph" } else { "complete" }.into()
    }
}
