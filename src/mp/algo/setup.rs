//! What an algorithm's processes are built from: the number of processes and groups, the
//! communication graph, and seed 004's bounds, initial configuration and leader.

use crate::mp::topo::Graph;

/// Everything a process's state machine is built from.
#[derive(Clone, Debug)]
pub struct Setup {
    /// Processes.
    pub n: usize,
    /// Groups (types) requests are drawn from.
    pub m: usize,
    /// The communication graph (complete for every algorithm but LKCS / LMUTIN).
    pub graph: Graph,
    /// Seed 004: lower bound l_i per process.
    pub l: Vec<usize>,
    /// Seed 004: upper bound k_i per process.
    pub k: Vec<usize>,
    /// Seed 004: which processes are inside in the initial configuration C0.
    pub initial_in: Vec<bool>,
    /// Seed 004: the leader P_LDR.
    pub leader: usize,
}

impl Setup {
    /// The set-up of a mutual-exclusion or GME algorithm: `n` processes, `m` groups, the
    /// complete graph, and none of seed 004's bounds (l_i = 0, k_i = n, nobody inside, p0).
    pub fn complete(n: usize, m: usize) -> Setup {
        Setup {
            n,
            m,
            graph: Graph::complete(0),
            l: vec![0; n],
            k: vec![n; n],
            initial_in: vec![false; n],
            leader: 0,
        }
    }
}
