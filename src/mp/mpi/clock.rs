//! Time on the MPI runtime: each rank's clock offset to rank 0's, by ping-pong (the best
//! exchange's half round trip is its error bound), and the pacing of a rank's loop (how long
//! it spins and naps between probes of its inbox).

use std::time::{Duration, Instant};

use ::mpi::topology::SimpleCommunicator;
use ::mpi::traits::*;

use super::wire::{TAG_PING, TAG_PONG};

/// Ping-pong exchanges with rank 0 per rank.
pub(super) const SYNC_EXCHANGES: usize = 32;
/// Busy-poll (yielding) this long after the last activity before napping between probes;
/// `LOCKBENCH_MPI_SPIN_US` overrides it. MPI cannot wake a rank on a message, so a napping rank
/// sees one only when its nap ends; but a rank that spins on cores shared with other ranks or
/// work holds the core its peer needs and is itself descheduled for whole time slices. On the
/// loaded 2-core host of the figures in docs/mpi.md, napping at once beat spinning for 50 µs, 200 µs
/// and 5 ms at 4 ranks (2–5x less time per message); on dedicated cores, spin.
pub(super) const SPIN_FOR: Duration = Duration::ZERO;
/// The longest nap between probes when idle (timer slack is set to 1 µs, so it is kept);
/// `LOCKBENCH_MPI_NAP_US` overrides it.
pub(super) const NAP: Duration = Duration::from_micros(20);

/// A duration in µs from the environment variable `var`, else `default`.
pub(super) fn env_us(var: &str, default: Duration) -> Duration {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(default, Duration::from_micros)
}
/// Receives the next message with `tag` from `peer`, yielding the core between probes (MPI's
/// own blocking receive spins, which on a shared core delays the very peer it waits for).
fn receive_yielding(peer: &::mpi::topology::Process<'_>, tag: i32) -> Vec<u8> {
    loop {
        if let Some(m) = peer.immediate_matched_probe_with_tag(tag) {
            return m.matched_receive_vec::<u8>().0;
        }
        std::thread::yield_now();
    }
}

/// Estimates this rank's clock offset to rank 0 (ms to add to a local reading) and its error
/// bound (ms), by ping-pong; rank 0 serves every other rank in turn, and a rank waits for its
/// turn napping, not spinning, so that the two in the exchange have the cores.
pub(super) fn sync_clock(world: &SimpleCommunicator, epoch: Instant) -> (f64, f64) {
    let rank = world.rank();
    let local = || epoch.elapsed().as_secs_f64() * 1e3;
    if rank == 0 {
        for r in 1..world.size() {
            let peer = world.process_at_rank(r);
            peer.send_with_tag(&[0u8][..], TAG_PONG);
            for _ in 0..SYNC_EXCHANGES {
                let _ = receive_yielding(&peer, TAG_PING);
                let t = local().to_le_bytes();
                peer.send_with_tag(&t[..], TAG_PONG);
            }
            // The rank's last word: it is done, and naps again.
            let _ = peer.receive_vec_with_tag::<u8>(TAG_PING);
        }
        return (0.0, 0.0);
    }
    let zero = world.process_at_rank(0);
    // Our turn.
    loop {
        if let Some(m) = zero.immediate_matched_probe_with_tag(TAG_PONG) {
            let _ = m.matched_receive_vec::<u8>();
            break;
        }
        std::thread::sleep(NAP);
    }
    let (mut best_rtt, mut offset) = (f64::INFINITY, 0.0);
    for _ in 0..SYNC_EXCHANGES {
        let t1 = local();
        zero.send_with_tag(&[0u8][..], TAG_PING);
        let pong = receive_yielding(&zero, TAG_PONG);
        let t2 = local();
        let t0 = f64::from_le_bytes(pong[..8].try_into().expect("a time"));
        if t2 - t1 < best_rtt {
            best_rtt = t2 - t1;
            offset = t0 - (t1 + t2) / 2.0;
        }
    }
    zero.send_with_tag(&[0u8][..], TAG_PING);
    (offset, best_rtt / 2.0)
}
