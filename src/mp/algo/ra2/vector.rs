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
//!
//! Values are requests' sequence numbers, so they are kept in 16 bits each, in vectors and
//! snapshots, until one exceeds 65 535: that vector (and a receiver of its snapshots) then
//! widens to 32 bits for good. A merge reads half as many bytes while the values fit.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::mp::Pid;

/// The changed entries of a vector a message carries (RA2-R7): those of the sender's vector
/// whose tick is above `since`.
#[derive(Clone, Debug, Default)]
pub struct Changed {
    /// The sender's vector when sent.
    snap: Snap,
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
        let s = &self.snap;
        let mut out: Vec<(u32, u32, u32)> = (0..s.n())
            .filter(|&k| s.tick(k) > self.since)
            .map(|k| (s.tick(k), k as u32, s.val(k)))
            .collect();
        out.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        out.into_iter().map(|(_, k, v)| (k, v)).collect()
    }

    /// The number of entries carried.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether its snapshot's values take 32 bits each.
    #[cfg(test)]
    pub(super) fn is_wide(&self) -> bool {
        matches!(self.snap, Snap::Wide(_))
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
        let mut vals = Vals::new(n);
        let mut ticks = vec![0u32; n];
        for &(k, v) in &pairs {
            vals.set(k as usize, vals.get(k as usize).max(v));
            ticks[k as usize] = 1;
        }
        // Its snapshot holds only the entries carried (the others are 0), so it merges the
        // same with or without the ticks: every received message is in order.
        Ok(Changed {
            snap: Snap::of(&vals, &ticks),
            since: 0,
            upto: 0,
            len: pairs.len() as u32,
        })
    }
}

/// A vector's values: 16 bits each while every one fits, 32 from the first that does not.
#[derive(Debug)]
enum Vals {
    Narrow(Vec<u16>),
    Wide(Vec<u32>),
}

impl Vals {
    fn new(n: usize) -> Self {
        Vals::Narrow(vec![0; n])
    }

    fn len(&self) -> usize {
        match self {
            Vals::Narrow(v) => v.len(),
            Vals::Wide(v) => v.len(),
        }
    }

    #[inline]
    fn get(&self, k: usize) -> u32 {
        match self {
            Vals::Narrow(v) => u32::from(v[k]),
            Vals::Wide(v) => v[k],
        }
    }

    /// Sets entry `k` to `v`, widening first if `v` does not fit.
    fn set(&mut self, k: usize, v: u32) {
        match self {
            Vals::Narrow(n) => match u16::try_from(v) {
                Ok(v) => n[k] = v,
                Err(_) => {
                    self.widen();
                    self.set(k, v);
                }
            },
            Vals::Wide(w) => w[k] = v,
        }
    }

    fn widen(&mut self) {
        if let Vals::Narrow(n) = self {
            *self = Vals::Wide(n.iter().map(|&v| u32::from(v)).collect());
        }
    }
}

/// A vector as a message carries it: its values, then the ticks of their last changes.
#[derive(Clone, Debug)]
enum Snap {
    /// n values, then the n ticks' low halves, then their high halves.
    Narrow(Arc<[u16]>),
    /// n values, then the n ticks.
    Wide(Arc<[u32]>),
}

impl Default for Snap {
    fn default() -> Self {
        Snap::Narrow(Arc::default())
    }
}

impl Snap {
    /// Values `vals`, changed last at `ticks`, as a message carries them.
    fn of(vals: &Vals, ticks: &[u32]) -> Self {
        match vals {
            Vals::Narrow(v) => {
                let mut s = Vec::with_capacity(3 * v.len());
                s.extend_from_slice(v);
                s.extend(ticks.iter().map(|&t| t as u16));
                s.extend(ticks.iter().map(|&t| (t >> 16) as u16));
                Snap::Narrow(s.into())
            }
            Vals::Wide(v) => {
                let mut s = Vec::with_capacity(2 * v.len());
                s.extend_from_slice(v);
                s.extend_from_slice(ticks);
                Snap::Wide(s.into())
            }
        }
    }

    fn n(&self) -> usize {
        match self {
            Snap::Narrow(s) => s.len() / 3,
            Snap::Wide(s) => s.len() / 2,
        }
    }

    fn val(&self, k: usize) -> u32 {
        match self {
            Snap::Narrow(s) => u32::from(s[k]),
            Snap::Wide(s) => s[k],
        }
    }

    fn tick(&self, k: usize) -> u32 {
        match self {
            Snap::Narrow(s) => halves(s, self.n())(k),
            Snap::Wide(s) => s[self.n() + k],
        }
    }
}

/// The ticks of the first `n` entries of the narrow snapshot `s`, from their two halves.
#[inline(always)]
fn halves(s: &[u16], n: usize) -> impl Fn(usize) -> u32 + '_ {
    let m = s.len() / 3;
    let (lo, hi) = (&s[m..m + n], &s[2 * m..2 * m + n]);
    move |k| u32::from(lo[k]) | u32::from(hi[k]) << 16
}

/// A vector of size n sent with the changed-entries scheme, either to one receiver at a time
/// ([`Vector::for_one`]) or to all ([`Vector::for_all`]), never both.
#[derive(Debug)]
pub(super) struct Vector {
    val: Vals,
    changed_at: Vec<u32>,
    tick: u32,
    /// Tick of the last send to each receiver ([`Vector::for_one`]).
    sent: Vec<u32>,
    /// Tick of the last broadcast ([`Vector::for_all`]).
    sent_all: u32,
    /// The latest snapshot and the tick it was taken at.
    snap: Option<(u32, Snap)>,
    /// Per sender, the `upto` of its latest message merged here after every earlier one.
    merged_upto: Vec<u32>,
    /// Counts of entries changed since a tick, `(since, count)`, taken while the vector
    /// stays at `counted_at`: while it does not change, its messages to different receivers
    /// count since the few ticks it was sent at (see [`Vector::count_since`]).
    counts: Vec<(u32, u32)>,
    counted_at: u32,
}

/// How many counts [`Vector::count_since`] keeps.
const COUNTS: usize = 8;

/// Entries a merge looks at before it writes: only runs with an entry raised are written.
const RUN: usize = 16;

impl Vector {
    pub(super) fn new(n: usize) -> Self {
        Vector {
            val: Vals::new(n),
            changed_at: vec![0; n],
            tick: 0,
            sent: vec![0; n],
            sent_all: 0,
            snap: None,
            merged_upto: vec![0; n],
            counts: Vec::with_capacity(COUNTS),
            counted_at: 0,
        }
    }

    /// Entry `k`.
    #[inline]
    pub(super) fn get(&self, k: usize) -> u32 {
        self.val.get(k)
    }

    /// Every entry.
    #[cfg(test)]
    pub(super) fn values(&self) -> Vec<u32> {
        (0..self.val.len()).map(|k| self.val.get(k)).collect()
    }

    /// A vector holding `vals`, none of them changed since any send.
    #[cfg(test)]
    pub(super) fn with_values(vals: &[u32]) -> Self {
        let mut v = Vector::new(vals.len());
        for (k, &x) in vals.iter().enumerate() {
            v.val.set(k, x);
        }
        v
    }

    /// A new vector whose ticks go on from `tick`, as after that many changes.
    #[cfg(test)]
    pub(super) fn starting_at(n: usize, tick: u32) -> Self {
        Vector {
            tick,
            ..Vector::new(n)
        }
    }

    /// Whether the values take 32 bits each.
    #[cfg(test)]
    pub(super) fn is_wide(&self) -> bool {
        matches!(self.val, Vals::Wide(_))
    }

    fn next_tick(&self) -> u32 {
        self.tick
            .checked_add(1)
            .expect("fewer than 2^32 changes of a vector")
    }

    /// Raises entry `k` to `v`; returns whether it changed.
    pub(super) fn raise(&mut self, k: usize, v: u32) -> bool {
        if v <= self.val.get(k) {
            return false;
        }
        self.tick = self.next_tick();
        self.val.set(k, v);
        self.changed_at[k] = self.tick;
        true
    }

    /// The number of entries changed after tick `since`. A vector sent to one receiver at a
    /// time is sent at the ticks it stood at, and stands still for long (VF changes only
    /// while its process requests), so its messages to different receivers count since the
    /// same few ticks: the counts at the vector's current tick are kept, and a count kept is
    /// not taken again over every entry.
    fn count_since(&mut self, since: u32) -> u32 {
        if self.counted_at != self.tick {
            self.counted_at = self.tick;
            self.counts.clear();
        }
        if let Some(&(_, c)) = self.counts.iter().find(|&&(s, _)| s == since) {
            return c;
        }
        let c = self.changed_at.iter().map(|&t| u32::from(t > since)).sum();
        if self.counts.len() == COUNTS {
            self.counts.remove(0);
        }
        self.counts.push((since, c));
        c
    }

    /// The vector as it is now, shared with earlier messages if it has not changed since.
    fn snapshot(&mut self) -> Snap {
        match &self.snap {
            Some((t, s)) if *t == self.tick => s.clone(),
            _ => {
                let s = Snap::of(&self.val, &self.changed_at);
                self.snap = Some((self.tick, s.clone()));
                s
            }
        }
    }

    fn changed(&mut self, since: u32) -> Changed {
        // The latest change has the vector's tick: none since a send at that tick.
        let len = if self.tick == since {
            0
        } else {
            self.count_since(since)
        };
        Changed {
            snap: if len == 0 {
                Snap::default()
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
        match &self.val {
            Vals::Narrow(v) => crate::mp::prefetch_lines(v, 2),
            Vals::Wide(v) => crate::mp::prefetch_lines(v, 2),
        }
        match &c.snap {
            Snap::Narrow(s) => crate::mp::prefetch_lines(&s[..c.snap.n()], 2),
            Snap::Wide(s) => crate::mp::prefetch_lines(&s[..c.snap.n()], 2),
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
        if let (Vals::Narrow(_), Snap::Wide(_)) = (&self.val, &c.snap) {
            self.val.widen();
        }
        let n = c.snap.n().min(self.val.len());
        let (t, since) = (self.next_tick(), c.since);
        let at = &mut self.changed_at[..n];
        let added = match (&mut self.val, &c.snap) {
            (Vals::Narrow(val), Snap::Narrow(s)) => {
                let tick = halves(s, n);
                merge_into(&mut val[..n], at, &s[..n], t, in_order, |k| tick(k) > since)
            }
            (Vals::Wide(val), Snap::Narrow(s)) => {
                let tick = halves(s, n);
                merge_into(&mut val[..n], at, &s[..n], t, in_order, |k| tick(k) > since)
            }
            (Vals::Wide(val), Snap::Wide(s)) => {
                let ticks = &s[s.len() / 2..][..n];
                merge_into(&mut val[..n], at, &s[..n], t, in_order, |k| {
                    ticks[k] > since
                })
            }
            (Vals::Narrow(_), Snap::Wide(_)) => unreachable!("widened above"),
        };
        if added > 0 {
            self.tick = t;
        }
        added
    }
}

/// A vector's entry: 16 or 32 bits.
trait Entry: Copy + Ord + Default + Into<u64> + std::ops::BitOr<Output = Self> {
    /// How far `self` is above `v`; 0 if it is not.
    fn excess(self, v: Self) -> Self;
}

impl Entry for u16 {
    #[inline(always)]
    fn excess(self, v: Self) -> Self {
        self.saturating_sub(v)
    }
}

impl Entry for u32 {
    #[inline(always)]
    fn excess(self, v: Self) -> Self {
        self.saturating_sub(v)
    }
}

/// [`raise_runs`] over every entry when the merge is in order, else over those `carried`.
#[inline(always)]
fn merge_into<R: Entry + From<S>, S: Copy>(
    val: &mut [R],
    at: &mut [u32],
    vals: &[S],
    t: u32,
    in_order: bool,
    carried: impl Fn(usize) -> bool,
) -> u64 {
    if in_order {
        raise_runs(val, at, vals, t, |_| true)
    } else {
        raise_runs(val, at, vals, t, carried)
    }
}

/// Raises `val[k]` to `vals[k]` (and stamps `at[k]` with `t`) where `vals[k]` is higher and
/// `carried(k)`; returns the sum of the raises. Runs of [`RUN`] entries, of a length fixed
/// so that the compiler vectorizes each pass over one whole: a run is first compared, and
/// written (every entry, to itself where nothing is raised) only if something in it is raised.
#[inline(always)]
fn raise_runs<R: Entry + From<S>, S: Copy>(
    val: &mut [R],
    at: &mut [u32],
    vals: &[S],
    t: u32,
    carried: impl Fn(usize) -> bool,
) -> u64 {
    let (vals, at) = (&vals[..val.len()], &mut at[..val.len()]);
    let mut added = 0u64;
    let full = val.len() / RUN * RUN;
    let (runs, rest) = val.split_at_mut(full);
    let (ats, rest_at) = at.split_at_mut(full);
    for (i, (run, ats)) in runs
        .chunks_exact_mut(RUN)
        .zip(ats.chunks_exact_mut(RUN))
        .enumerate()
    {
        let start = i * RUN;
        let new: &[S; RUN] = vals[start..start + RUN].try_into().expect("a run");
        let run: &mut [R; RUN] = run.try_into().expect("a run");
        // The entries' excesses over the run, ORed: nonzero iff one is above (one pass of
        // unsigned saturating subtractions, where a comparison needs a sign flip).
        let mut above = R::default();
        for k in 0..RUN {
            let x = R::from(new[k]).excess(run[k]);
            above = above | if carried(start + k) { x } else { R::default() };
        }
        if above != R::default() {
            for k in 0..RUN {
                let (x, v) = (R::from(new[k]), run[k]);
                let up = carried(start + k) & (x > v);
                added += if up { x.into() - v.into() } else { 0 };
                run[k] = if up { x } else { v };
                ats[k] = if up { t } else { ats[k] };
            }
        }
    }
    for (k, (v, at)) in rest.iter_mut().zip(rest_at).enumerate() {
        let x = R::from(vals[full + k]);
        if carried(full + k) && x > *v {
            added += x.into() - (*v).into();
            *v = x;
            *at = t;
        }
    }
    added
}
