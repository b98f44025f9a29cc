//! What a run on the MPI runtime gives: the figures of every runtime, then where it ran and
//! how well the clocks agreed.

use serde::Serialize;

use crate::mp::metrics::MpResult;

/// One run on the MPI runtime: the fields of every runtime, then where it ran and how well the
/// clocks agreed.
#[derive(Clone, Debug, Serialize)]
pub struct MpiResult {
    /// The figures every runtime reports (`runtime` is `mpi`, times in ms).
    #[serde(flatten)]
    pub run: MpResult,
    /// MPI ranks.
    pub ranks: usize,
    /// Algorithm processes per rank (process p runs on rank p / procs_per_rank).
    pub procs_per_rank: usize,
    /// Rank → host (MPI processor name).
    pub hosts: Vec<String>,
    /// The largest clock-synchronisation error bound over the ranks, ms (the slack of the
    /// safety checks between ranks).
    pub clock_sync_error_ms: f64,
    /// Per rank: half the round trip of its best ping-pong with rank 0, ms (rank 0: 0).
    pub clock_sync_error_by_rank_ms: Vec<f64>,
    /// Ping-pong exchanges each rank made with rank 0.
    pub clock_sync_exchanges: usize,
}
