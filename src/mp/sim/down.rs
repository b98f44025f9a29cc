//! Who is down in a run with crashes (seed 003 §5.3's crash-stop model), and the failure
//! detector's random streams: the state the simulator's core keeps; the crash events and the
//! recovery figures are in `crash.rs`.

use crate::mp::Pid;
use crate::workload::rng::Rng;

/// Who is down, and the failure detector's random streams.
pub(super) struct Crashes {
    /// Crashes are scheduled in this run.
    pub(super) on: bool,
    pub(super) down: Vec<bool>,
    pub(super) count: u64,
    pub(super) rng: Vec<Rng>,
}

impl Crashes {
    pub(super) fn new(n: usize, seed: u64) -> Self {
        Crashes {
            on: false,
            down: vec![false; n],
            count: 0,
            rng: (0..n)
                .map(|p| Rng::new(seed, 0xFD_0000 + p as u64))
                .collect(),
        }
    }

    /// Whether `p` is down.
    #[inline]
    pub(super) fn is_down(&self, p: Pid) -> bool {
        self.on && self.down[p]
    }
}
