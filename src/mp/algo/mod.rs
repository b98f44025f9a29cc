//! The algorithms, one file each, what they are built from ([`Setup`]), and the one table of
//! them ([`table`]).

pub mod lkcs;
pub mod ra1;
pub mod ra2;
pub mod ricart_agrawala;
pub mod suzuki_kasami;
pub mod table;
pub mod token_gme;

use super::topo::Graph;

pub use table::{info, names, AlgoInfo, Make, ALGOS};

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
