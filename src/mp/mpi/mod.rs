//! The MPI runtime: the message-passing algorithms across hosts, one MPI rank per algorithm
//! process (or `--procs-per-rank` of them), under `mpirun` (built with `--features mpi`).
//!
//! - **Messages** are MPI point-to-point sends, one tag per message kind ([`wire::kind_tag`]), with a
//!   16-byte header (sender, receiver, the drawn channel delay) and the message as JSON
//!   ([`wire`]). Sends are buffered (`MPI_Bsend`), so a rank never blocks on a
//!   peer. Messages between processes of one rank stay in the rank.
//! - **Delays**: `--cd` adds a drawn delay on top of the network's own, applied at the
//!   receiver (held until arrival + delay, FIFO per link as MPI keeps it); `--cd 0` leaves the
//!   network alone.
//! - **Polling**: each rank runs one loop over its processes that probes its inbox without
//!   blocking (`MPI_Improbe`) between its due deliveries, timers and the application's steps.
//! - **Shutdown**: a rank tells rank 0 when its processes have made their requests; when every
//!   rank has, rank 0 tells them to start no more requests and runs waves of counts (messages
//!   sent and received over MPI, anything still held) until two waves in a row agree and show
//!   every sent message received, and then stops every rank. A last allreduce of the counts
//!   drains anything a stop left in flight (a stuck run).
//! - **Safety from clocks and logs** ([`check`]): after a barrier, each rank estimates its
//!   clock's offset to rank 0's by ping-pong; the best exchange's half round trip is the error
//!   bound. Ranks log their critical sections and waits in that clock; rank 0 gathers the logs,
//!   replays them for the shared figures and checks mutual exclusion, GME or the l–k bounds
//!   with the error bounds as slack.

// The MPI runtime's pieces that need no MPI are compiled without the feature too, for their
// unit tests; only the runtime uses them.
#[cfg(any(feature = "mpi", test))]
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) mod check;
#[cfg(feature = "mpi")]
mod clock;
#[cfg(any(feature = "mpi", test))]
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) mod config;
#[cfg(feature = "mpi")]
mod event_loop;
#[cfg(feature = "mpi")]
mod rank;
#[cfg(feature = "mpi")]
mod report;
#[cfg(any(feature = "mpi", test))]
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) mod result;
#[cfg(feature = "mpi")]
mod runtime;
#[cfg(feature = "mpi")]
mod shutdown;
#[cfg(any(feature = "mpi", test))]
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) mod wire;

#[cfg(feature = "mpi")]
pub(crate) use config::{configs, processes};
#[cfg(feature = "mpi")]
pub use runtime::mp_run;
