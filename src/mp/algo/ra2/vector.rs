//! RA2-R7's vectors: a vector of size n sent with Singhal and Kshemkalyani's changed-entries
//! scheme, and the changed entries a message carries.
//!
//! Each entry remembers the local tick of its last change, and the vector the tick of its last
//! send to each receiver: the entries a message to j carries are those changed after that
//! send. A message keeps them as a snapshot of the sender's vector (values and ticks, shared by
//! every message sent while the vector stays the same) and the tick of the previous send, so
//! that neither the sender nor the receiver walks a list of pairs: the sender counts the
//! entries (the size), the receiver takes the entry-wise maximum over those entries in one
//! pass the compiler vectorizes. The result is the pairs' merge exactly, on any links; on the
//! wire (and in [`Changed::pairs`]) the message is the list of (index, value) pairs.
//!
//! A receiver that has merged every earlier message of a sender's vector (always, on FIFO
//! links) merges the snapshot's values without their ticks: an entry not carried last
//! changed at or before the previous send, so an earlier message carried it at the value it
//! still has, and the receiver holds at least that value already; its maximum with the
//! receiver's is the receiver's. Either way only the runs of entries where something is
//! raised are written: a merge raises few.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::mp::Pid;

/// The changed entries of a vector a message carries (RA2-R7): those of the sender's vector
/// whose tick is above `since`.
#[derive(Clone, Debug, Default)]
pub struct Changed {
    /// The sender's vector when sent: n values, then the n ticks of their last changes.
    snap: Arc<[u32]>,
    /// The tick of the sender's previous send of this vector to this receiver.
    since: u32,
    /// The sender's tick at this send: the next message's `since`.
    upto: u32,
    /// How many entries changed since: the pairs on the wire.
    len: u32,
}

impl Changed {
    /// The entries carried, as (index, value) pairs, the most recently changed first.
    pub fn pairs(&self) -> Vec<(u32, u32)> {
        let (vals, ticks) = self.snap.split_at(self.snap.len() / 2);
        let mut out: Vec<(u32, u32, u32)> = (0..vals.len())
            .filter(|&k| ticks[k] > self.since)
            .map(|k| (ticks[k], k as u32, vals[k]))
            .collect();
        out.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        out.into_iter().map(|(_, k, v)| (k, v)).collect()
    }

    /// The number of entries carried.
    pub fn len(&self) -> usize {
        self.len as usize
    }
}

impl Serialize for Changed {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.pairs().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Changed {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let pairs = Vec::<(u32, u32)>::deserialize(d)?;
        let n = pairs
            .iter()
            .map(|&(k, _)| k as usize + 1)
            .max()
            .unwrap_or(0);
        let mut snap = vec![0u32; 2 * n];
        for &(k, v) in &pairs {
            snap[k as usize] = snap[k as usize].max(v);
            snap[n + k as usize] = 1;
        }
        // Its snapshot holds only the entries carried (the others are 0), so it merges the
        // same with or without the ticks: every received message is in order.
        Ok(Changed {
            snap: snap.into(),
            since: 0,
            upto: 0,
            len: pairs.len() as u32,
        })
    }
}

/// A vector of size n sent with the changed-entries scheme, either to one receiver at a time
/// ([`Vector::for_one`]) or to all ([`Vector::for_all`]), never both.
#[derive(Debug)]
pub(super) struct Vector {
    pub(super) val: Vec<u32>,
    changed_at: Vec<u32>,
    tick: u32,
    /// Tick of the last send to each receiver ([`Vector::for_one`]).
    sent: Vec<u32>,
    /// Tick of the last broadcast ([`Vector::for_all`]).
    sent_all: u32,
    /// The latest snapshot and the tick it was taken at.
    snap: Option<(u32, Arc<[u32]>)>,
    /// Per sender, the `upto` of its latest message merged here after every earlier one.
    merged_upto: Vec<u32>,
}

/// Entries a merge looks at before it writes: only runs with an entry raised are written.
const RUN: usize = 16;

impl Vector {
    pub(super) fn new(n: usize) -> Self {
        Vector {
            val: vec![0; n],
            changed_at: vec![0; n],
            tick: 0,
            sent: vec![0; n],
            sent_all: 0,
            snap: None,
            merged_upto: vec![0; n],
        }
    }

    fn next_tick(&self) -> u32 {
        self.tick
            .checked_add(1)
            .expect("fewer than 2^32 changes of a vector")
    }

    /// Raises entry `k` to `v`; returns whether it changed.
    pub(super) fn raise(&mut self, k: usize, v: u32) -> bool {
        if v <= self.val[k] {
            return false;
        }
        self.tick = self.next_tick();
        self.val[k] = v;
        self.changed_at[k] = self.tick;
        true
    }

    /// The number of entries changed after tick `since`.
    fn count_since(&self, since: u32) -> u32 {
        self.changed_at.iter().map(|&t| u32::from(t > since)).sum()
    }

    /// The vector as it is now, shared with earlier messages if it has not changed since.
    fn snapshot(&mut self) -> Arc<[u32]> {
        match &self.snap {
            Some((t, s)) if *t == self.tick => s.clone(),
            _ => {
                let mut v = Vec::with_capacity(2 * self.val.len());
                v.extend_from_slice(&self.val);
                v.extend_from_slice(&self.changed_at);
                let s: Arc<[u32]> = v.into();
                self.snap = Some((self.tick, s.clone()));
                s
            }
        }
    }

    fn changed(&mut self, since: u32) -> Changed {
        let len = self.count_since(since);
        Changed {
            snap: if len == 0 {
                Arc::default()
            } else {
                self.snapshot()
            },
            since,
            upto: self.tick,
            len,
        }
    }

    /// What a message to `to` carries; remembers that it was sent.
    pub(super) fn for_one(&mut self, to: Pid) -> Changed {
        let c = self.changed(self.sent[to]);
        self.sent[to] = self.tick;
        c
    }

    /// What a broadcast carries to every other process; remembers it.
    pub(super) fn for_all(&mut self) -> Changed {
        let c = self.changed(self.sent_all);
        self.sent_all = self.tick;
        c
    }

    /// Whether every message of this vector `from` sent before `c` has been merged here: a
    /// chain of sends, each `since` the previous one's `upto` (a message lost or overtaken
    /// breaks it for good, and the merges take the ticks from then on).
    pub(super) fn in_order(&self, from: Pid, c: &Changed) -> bool {
        c.since == self.merged_upto[from]
    }

    /// A merge of `c` from `from` will come soon: the first lines of what it reads are asked
    /// of the cache (the hardware follows the runs from there).
    pub(super) fn will_merge(&self, from: Pid, c: &Changed) {
        crate::mp::prefetch(&self.merged_upto[from]);
        if c.len == 0 {
            return;
        }
        let half = c.snap.len() / 2;
        for k in (0..half.min(self.val.len())).step_by(16).take(2) {
            crate::mp::prefetch(&self.val[k]);
            crate::mp::prefetch(&c.snap[k]);
        }
    }

    /// Entry-wise maximum with what a message from `from` carried; returns the sum of the
    /// raises. The entries raised all take the same new tick, which orders them after every
    /// earlier change and before every later one, all that a count since a send asks.
    pub(super) fn merge(&mut self, from: Pid, c: &Changed) -> u64 {
        let in_order = self.in_order(from, c);
        if in_order {
            self.merged_upto[from] = c.upto;
        }
        if c.len == 0 {
            return 0;
        }
        let (vals, ticks) = c.snap.split_at(c.snap.len() / 2);
        let n = vals.len().min(self.val.len());
        let t = self.next_tick();
        let (val, at) = (&mut self.val[..n], &mut self.changed_at[..n]);
        let added = if in_order {
            raise_runs(val, at, &vals[..n], t, |_| true)
        } else {
            let (ticks, since) = (&ticks[..n], c.since);
            raise_runs(val, at, &vals[..n], t, |k| ticks[k] > since)
        };
        if added > 0 {
            self.tick = t;
        }
        added
    }
}

/// Raises `val[k]` to `vals[k]` (and stamps `at[k]` with `t`) where `vals[k]` is higher and
/// `carried(k)`; returns the sum of the raises. Each run of [`RUN`] entries is first compared
/// in a branch-free pass the compiler vectorizes, and written only if something in it is raised.
#[inline(always)]
fn raise_runs(
    val: &mut [u32],
    at: &mut [u32],
    vals: &[u32],
    t: u32,
    carried: impl Fn(usize) -> bool,
) -> u64 {
    let mut added = 0u64;
    let mut start = 0;
    while start < val.len() {
        let end = (start + RUN).min(val.len());
        let mut any = false;
        for k in start..end {
            any |= carried(k) & (vals[k] > val[k]);
        }
        if any {
            for k in start..end {
                if carried(k) && vals[k] > val[k] {
                    added += u64::from(vals[k] - val[k]);
                    val[k] = vals[k];
                    at[k] = t;
                }
            }
        }
        start = end;
    }
    added
}
