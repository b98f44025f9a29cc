//! Sampled timing: one acquisition in `LOCKBENCH_SAMPLE`, drawn at random per thread (so the
//! sample never aliases with a program's periodic pattern), has its wait and its hold timed.

use std::cell::Cell;

use crate::state::State;
use crate::stats::{bucket, bump};

thread_local! {
    /// The thread's xorshift state (0: not seeded yet).
    static RNG: Cell<u64> = const { Cell::new(0) };
    /// The sampled acquisition being held: (address, acquired at ns), address 0 for none.
    static HOLD: Cell<(usize, u64)> = const { Cell::new((0, 0)) };
}

/// Monotonic nanoseconds.
pub fn now_ns() -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Whether this acquisition is timed; if so, its start time.
#[inline]
pub fn draw(s: &State, p: usize) -> Option<u64> {
    let mut x = RNG.get();
    if x == 0 {
        // Seeded by the id: a run's sample pattern depends on no clock.
        x = (p as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    }
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    RNG.set(x);
    let mask = (1u64 << s.config.sample_bits) - 1;
    (x >> 20 & mask == 0).then(now_ns)
}

/// Records an acquisition of `addr` by `p` (counted, and timed when `start` is set).
#[inline]
pub fn acquired(s: &State, p: usize, addr: usize, start: Option<u64>, contended: bool) {
    let c = &s.stats.per_id[p];
    bump(&c.acquisitions);
    if contended {
        bump(&c.contended);
    }
    if let Some(t0) = start {
        let t1 = now_ns();
        bump(&c.wait[bucket(t1.saturating_sub(t0))]);
        HOLD.set((addr, t1));
    }
}

/// Records the release of `addr` by `p` (its hold timed if its acquisition was sampled).
#[inline]
pub fn releasing(s: &State, p: usize, addr: usize) {
    let (held, t1) = HOLD.get();
    if held == addr {
        HOLD.set((0, 0));
        let c = &s.stats.per_id[p];
        bump(&c.hold[bucket(now_ns().saturating_sub(t1))]);
    }
}
