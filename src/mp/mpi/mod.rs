//! The MPI runtime: the message-passing algorithms across hosts, one MPI rank per algorithm
//! process (or `--procs-per-rank` of them), under `mpirun` (built with `--features mpi`).
//!
//! - **Messages** are MPI point-to-point sends, one tag per message kind ([`kind_tag`]), with a
//!   16-byte header (sender, receiver, the drawn channel delay) and the message as JSON
//!   ([`encode`] / [`decode`]). Sends are buffered (`MPI_Bsend`), so a rank never blocks on a
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

pub mod check;
#[cfg(feature = "mpi")]
mod runtime;

#[cfg(feature = "mpi")]
pub use runtime::{configs, mp_run, MpiConfig};

use serde::Serialize;

use super::metrics::MpResult;
use super::Pid;

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

/// The smallest tag of an algorithm message; tags below are the runtime's own.
pub const FIRST_KIND_TAG: i32 = 64;

/// The MPI tag of a message kind: a stable hash of its name (FNV-1a) folded into
/// [`FIRST_KIND_TAG`], `FIRST_KIND_TAG + 32000`), within the 32767 every MPI allows.
pub fn kind_tag(kind: &str) -> i32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in kind.bytes() {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    FIRST_KIND_TAG + (h % 32_000) as i32
}

/// Header bytes before the message: sender, receiver (u32 LE), drawn delay in ms (f64 LE).
pub const HEADER: usize = 16;

/// Writes one message (header and JSON) into `buf`, replacing its contents.
pub fn encode<M: Serialize>(buf: &mut Vec<u8>, from: Pid, to: Pid, delay_ms: f64, msg: &M) {
    buf.clear();
    buf.extend_from_slice(&(from as u32).to_le_bytes());
    buf.extend_from_slice(&(to as u32).to_le_bytes());
    buf.extend_from_slice(&delay_ms.to_le_bytes());
    serde_json::to_writer(&mut *buf, msg).expect("a message serializes");
}

/// Reads what [`encode`] wrote: sender, receiver, delay in ms, message.
pub fn decode<M: serde::de::DeserializeOwned>(bytes: &[u8]) -> anyhow::Result<(Pid, Pid, f64, M)> {
    anyhow::ensure!(
        bytes.len() >= HEADER,
        "a message of {} bytes is shorter than its header",
        bytes.len()
    );
    let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
    let delay = f64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes"));
    let msg = serde_json::from_slice(&bytes[HEADER..])?;
    Ok((u32_at(0) as Pid, u32_at(4) as Pid, delay, msg))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mp::algo::ra1::Ra1Msg;
    use crate::mp::Message;

    #[test]
    fn messages_round_trip_through_the_wire_format() {
        let mut buf = Vec::new();
        let msg = Ra1Msg::Request(7, 3);
        encode(&mut buf, 2, 9, 0.25, &msg);
        let (from, to, delay, back): (Pid, Pid, f64, Ra1Msg) = decode(&buf).unwrap();
        assert_eq!((from, to, delay), (2, 9, 0.25));
        assert_eq!(back.kind(), msg.kind());
        assert_eq!(format!("{back:?}"), format!("{msg:?}"));
        assert!(decode::<Ra1Msg>(&buf[..10]).is_err());
    }

    #[test]
    fn kind_tags_are_stable_distinct_and_in_range() {
        let kinds = [
            "DONE",
            "GRANT",
            "INVITE",
            "PREEMPT",
            "RELEASE",
            "RELINQUISH",
            "REPLY",
            "REQUEST",
            "REQUEST_BY_TRIGGER",
            "TOKEN",
            "TRIGGER",
        ];
        let tags: Vec<i32> = kinds.iter().map(|k| kind_tag(k)).collect();
        for (i, t) in tags.iter().enumerate() {
            assert!((FIRST_KIND_TAG..FIRST_KIND_TAG + 32_000).contains(t));
            assert!(!tags[..i].contains(t), "{} collides", kinds[i]);
        }
        assert_eq!(kind_tag("TOKEN"), kind_tag("TOKEN"));
    }
}
