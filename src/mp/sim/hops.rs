//! Causal hop counts of the simulator (up to [`HOPS_MAX_N`] processes): how many message
//! hops the longest causal chain from a request (or from the exit that emptied the system)
//! to its entry has. Each message carries its sender's depths; its receiver keeps the
//! deeper of its own and the message's, one hop further.

use crate::mp::Pid;

/// Hops are tracked (O(n) per message) up to this many processes.
pub const HOPS_MAX_N: usize = 64;

/// Causal hop depths a message carries when hops are tracked: per process, (request epoch,
/// depth since that request), and last (sync epoch, depth since the exit that emptied the
/// system). Epoch 0: not causally after any.
pub(super) type HopDepths = Option<Box<[(u32, u32)]>>;

/// Every process's depths.
pub(super) struct Hops {
    /// Whether hops are tracked (n ≤ [`HOPS_MAX_N`]).
    pub(super) on: bool,
    n: usize,
    /// reach[q * (n + 1) + j] is, for source j (j = n: the sync source), the (epoch, depth)
    /// of the longest chain from j's current request to q.
    reach: Vec<(u32, u32)>,
    epoch: Vec<u32>,
}

impl Hops {
    /// Tracked for `n` processes if `n` ≤ [`HOPS_MAX_N`].
    pub(super) fn new(n: usize) -> Self {
        let on = n <= HOPS_MAX_N;
        Hops {
            on,
            n,
            reach: if on {
                vec![(0, 0); n * (n + 1)]
            } else {
                Vec::new()
            },
            epoch: vec![0; n + 1],
        }
    }

    /// Starts a new causal source `j` (a request of process j, or j = n: the exit at `p` that
    /// emptied the system).
    pub(super) fn new_source(&mut self, p: Pid, j: usize) {
        if self.on {
            self.epoch[j] += 1;
            self.reach[p * (self.n + 1) + j] = (self.epoch[j], 0);
        }
    }

    /// The longest chain from source `j`'s current event to process `p` (0 if none).
    pub(super) fn depth(&self, p: Pid, j: usize) -> u64 {
        let (e, d) = self.reach[p * (self.n + 1) + j];
        if e == self.epoch[j] {
            u64::from(d)
        } else {
            0
        }
    }

    /// What a message from `from` carries: its sender's depths, one hop further.
    pub(super) fn of(&self, from: Pid, to: Pid) -> HopDepths {
        if !self.on || from == to {
            return None;
        }
        let w = self.n + 1;
        Some(
            self.reach[from * w..(from + 1) * w]
                .iter()
                .map(|&(e, d)| if e == 0 { (0, 0) } else { (e, d + 1) })
                .collect(),
        )
    }

    /// Merges a delivered message's depths into its receiver's.
    pub(super) fn receive(&mut self, to: Pid, hops: &[(u32, u32)]) {
        let w = self.n + 1;
        for (j, &(e, d)) in hops.iter().enumerate() {
            if e != 0 && e == self.epoch[j] {
                let mine = &mut self.reach[to * w + j];
                if mine.0 != e || mine.1 < d {
                    *mine = (e, d);
                }
            }
        }
    }
}
