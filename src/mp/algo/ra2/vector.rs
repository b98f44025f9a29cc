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
        Ok(Changed {
            snap: snap.into(),
            since: 0,
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
}

impl Vector {
    pub(super) fn new(n: usize) -> Self {
        Vector {
            val: vec![0; n],
            changed_at: vec![0; n],
            tick: 0,
            sent: vec![0; n],
            sent_all: 0,
            snap: None,
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
        if len == 0 {
            return Changed::default();
        }
        Changed {
            snap: self.snapshot(),
            since,
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

    /// Entry-wise maximum with what a message carried; returns the sum of the raises. The
    /// entries raised all take the same new tick, which orders them after every earlier
    /// change and before every later one, all that a count since a send asks.
    pub(super) fn merge(&mut self, c: &Changed) -> u64 {
        if c.len == 0 {
            return 0;
        }
        let (vals, ticks) = c.snap.split_at(c.snap.len() / 2);
        let n = vals.len().min(self.val.len());
        let (since, t) = (c.since, self.next_tick());
        let (val, at) = (&mut self.val[..n], &mut self.changed_at[..n]);
        let (vals, ticks) = (&vals[..n], &ticks[..n]);
        let mut added = 0u64;
        // Branch-free, so that it is vectorized: `d` is the raise, 0 for an entry not carried
        // or not lower here.
        for k in 0..n {
            let (a, b) = (val[k], vals[k]);
            let up = (ticks[k] > since) & (b > a);
            let mask = 0u32.wrapping_sub(u32::from(up));
            let d = b.wrapping_sub(a) & mask;
            val[k] = a.wrapping_add(d);
            at[k] = (at[k] & !mask) | (t & mask);
            added += u64::from(d);
        }
        if added > 0 {
            self.tick = t;
        }
        added
    }
}
