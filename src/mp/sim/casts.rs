//! Broadcasts' passive copies, kept by blocks of [`B`] broadcasts: per block the messages once
//! and a receiver-major table of delivery times, so that a broadcast writes one time per
//! receiver into lines its next seven broadcasts fill too, and a receiver reads its copies
//! of a block as one run of memory. (An inbox per receiver took a 16-byte record per copy,
//! written into as many scattered lines as receivers: the n = 500 point waited on those
//! stores.) A receiver's copies are applied when it absorbs (see `deferred`): those delivered
//! before the event, in any order; the others wait in its `pending` list.

use std::collections::VecDeque;

use super::queue::{cast_seq, Item, Kind};
use crate::mp::{prefetch_lines, Algorithm, Message, Pid};

/// Broadcasts per block.
pub(super) const B: usize = 64;
/// The time of a copy its receiver takes as an event (or the sender's own place).
pub(super) const NONE: u64 = u64::MAX;
/// A receiver whose copies go this many blocks back unapplied is absorbed up to now, as an
/// inbox of 1 024 receipts was: a process that stays idle (or is done) would hold every block.
const LAG: u64 = 16;
/// How many receipts ahead `absorb` hints at the state they touch.
const AHEAD: usize = 8;

/// One broadcast's message, once for all its passive copies.
struct Letter<M> {
    msg: M,
    from: u32,
    /// The sequence number before its first copy's (see [`cast_seq`]).
    base: u64,
}

struct Block<M> {
    letters: Vec<Letter<M>>,
    /// `times[r * B + k]`: the delivery time bits of broadcast k's copy to r, or [`NONE`].
    times: Vec<u64>,
    /// Passive copies neither applied nor made events yet.
    refs: u64,
}

/// A broadcast being written: its block and place in it.
#[derive(Clone, Copy)]
pub(super) struct Column {
    block: usize,
    k: usize,
}

impl Column {
    /// Its place in the block: its receiver `r`'s time is at `r * B + k`.
    #[inline]
    pub(super) fn k(self) -> usize {
        self.k
    }
}

/// Every broadcast's passive copies not yet applied.
pub(super) struct Casts<M> {
    n: usize,
    /// Blocks from number `first` on; `None` once all its copies are applied.
    blocks: VecDeque<Option<Block<M>>>,
    first: u64,
    /// The number of the next broadcast (block `next / B`, place `next % B`).
    next: u64,
    /// Per receiver: every broadcast before this one is applied or listed in `pending`.
    cursor: Vec<u64>,
    /// Per receiver: broadcasts scanned whose copy was not yet delivered, with the copy's
    /// time bits (so that a copy still not due is passed over without a look at its block).
    pending: Vec<Vec<(u64, u64)>>,
    spare: Vec<Block<M>>,
}

impl<M: Message> Casts<M> {
    pub(super) fn new(n: usize) -> Self {
        Casts {
            n,
            blocks: VecDeque::new(),
            first: 0,
            next: 0,
            cursor: vec![0; n],
            pending: vec![Vec::new(); n],
            spare: Vec::new(),
        }
    }

    /// Where the next broadcast's times go (a new block when the last is full); the receivers
    /// whose copies now lag [`LAG`] blocks are added to `lagging`.
    pub(super) fn column(&mut self, lagging: &mut Vec<Pid>) -> Column {
        let (b, k) = (self.next / B as u64, (self.next % B as u64) as usize);
        if b >= self.first + self.blocks.len() as u64 {
            let block = self.spare.pop().unwrap_or_else(|| Block {
                letters: Vec::with_capacity(B),
                times: vec![NONE; self.n * B],
                refs: 0,
            });
            self.blocks.push_back(Some(block));
            if b >= LAG {
                let old = (b - LAG) * B as u64;
                lagging.extend((0..self.n).filter(|&r| self.cursor[r] < old));
            }
        }
        Column {
            block: (b - self.first) as usize,
            k,
        }
    }

    /// The table of times `column` writes into: `to`'s copy at `to * B + k`.
    #[inline]
    pub(super) fn times(&mut self, c: Column) -> &mut [u64] {
        &mut self.blocks[c.block].as_mut().expect("an open block").times
    }

    /// Keeps the broadcast written into `c` (`readers` passive copies); with none, the
    /// column is left to the next broadcast.
    pub(super) fn commit(&mut self, c: Column, msg: M, from: Pid, base: u64, readers: u64) {
        if readers == 0 {
            return;
        }
        let block = self.blocks[c.block].as_mut().expect("an open block");
        debug_assert_eq!(block.letters.len(), c.k);
        block.letters.push(Letter {
            msg,
            from: from as u32,
            base,
        });
        block.refs += readers;
        self.next += 1;
    }

    /// Whether `p` may have copies not yet applied (broadcasts it has not gone over, or
    /// copies pending).
    #[inline]
    pub(super) fn has(&self, p: Pid) -> bool {
        self.cursor[p] < self.next || !self.pending[p].is_empty()
    }

    /// Passes over `p`'s copies while it takes none passively (`Algorithm::passive_now`
    /// false since its last event): that event's `undefer` made its copies not yet applied
    /// events, and every broadcast since wrote [`NONE`] in its place. So a process that takes
    /// every receipt as an event (a primary holder of TokenGME's token) does not walk the
    /// broadcasts between its events.
    #[inline]
    pub(super) fn pass(&mut self, p: Pid) {
        debug_assert!(
            self.pending[p].is_empty(),
            "copies pending for a process taking none"
        );
        debug_assert!(
            (self.cursor[p]..self.next).all(|g| {
                let (b, k) = locate(self.first, g);
                self.blocks[b]
                    .as_ref()
                    .is_none_or(|block| block.times[p * B + k] == NONE)
            }),
            "a copy written for a process taking none passively"
        );
        self.cursor[p] = self.next;
    }

    /// Applies `p`'s copies delivered before the event `key`; returns how many.
    pub(super) fn absorb<A: Algorithm<Msg = M>>(
        &mut self,
        p: Pid,
        proc_: &mut A,
        key: (u64, u64),
        apply: &mut impl FnMut(&mut A, Pid, &M, u64),
    ) -> u64 {
        let mut applied = self.take_pending(
            p,
            |t| t <= key.0,
            |l, t| {
                if !before(t, l, p, key) {
                    return false;
                }
                apply(proc_, l.from as Pid, &l.msg, t);
                true
            },
        );
        let mut pending = std::mem::take(&mut self.pending[p]);
        let mut freed = false;
        let mut g = self.cursor[p];
        // The state the receipts touch is asked for all at once, or AHEAD receipts early.
        let hinted = proc_.will_receive_many((self.next - g) as usize);
        while g < self.next {
            let (b, k0) = locate(self.first, g);
            let end = ((g / B as u64 + 1) * B as u64).min(self.next);
            let k1 = k0 + (end - g) as usize;
            // The next block's column is fetched while this one is read (and the first
            // block's, before).
            if g == self.cursor[p] {
                self.fetch(b, p);
            }
            self.fetch(b + 1, p);
            if let Some(block) = self.blocks[b].as_mut() {
                let mut taken = 0;
                // This pass's copies and their letters, cut once (no index checked per copy).
                let times = &block.times[p * B + k0..p * B + k1];
                let letters = &block.letters[k0..k1];
                let hint = |proc_: &A, (&t, l): (&u64, &Letter<M>)| {
                    if t != NONE {
                        proc_.will_receive(l.from as Pid, &l.msg);
                    }
                };
                let mut ahead = times.iter().zip(letters);
                if !hinted {
                    ahead.by_ref().take(AHEAD).for_each(|c| hint(proc_, c));
                }
                for (i, (&t, l)) in times.iter().zip(letters).enumerate() {
                    if !hinted {
                        if let Some(c) = ahead.next() {
                            hint(proc_, c);
                        }
                    }
                    if t == NONE {
                        continue;
                    }
                    if before(t, l, p, key) {
                        apply(proc_, l.from as Pid, &l.msg, t);
                        taken += 1;
                    } else {
                        pending.push((t, g + i as u64));
                    }
                }
                block.refs -= taken;
                freed |= block.refs == 0;
                applied += taken;
            }
            g = end;
        }
        self.cursor[p] = self.next;
        self.pending[p] = pending;
        if freed {
            self.free();
        }
        applied
    }

    /// Asks the cache for block `b`'s column of `p`, if it has one.
    #[inline]
    fn fetch(&self, b: usize, p: Pid) {
        if let Some(Some(block)) = self.blocks.get(b) {
            prefetch_lines(&block.times[p * B..(p + 1) * B], usize::MAX);
        }
    }

    /// Lists every copy of `p` not yet applied in `pending` (the blocks since its cursor
    /// scanned), for a pass over them all.
    fn scan(&mut self, p: Pid) {
        let mut g = self.cursor[p];
        while g < self.next {
            let (b, k) = locate(self.first, g);
            if let Some(block) = &self.blocks[b] {
                let t = block.times[p * B + k];
                if t != NONE {
                    self.pending[p].push((t, g));
                }
            }
            g += 1;
        }
        self.cursor[p] = self.next;
    }

    /// `p`'s copies not yet applied for which `keep` is false become events, at their own
    /// (time, sequence number), into `out`.
    pub(super) fn undefer(
        &mut self,
        p: Pid,
        out: &mut Vec<Item<M>>,
        mut keep: impl FnMut(&M) -> bool,
    ) {
        self.scan(p);
        self.take_pending(
            p,
            |_| true,
            |l, t| {
                if keep(&l.msg) {
                    return false;
                }
                out.push(Item {
                    t,
                    seq: cast_seq(l.base, l.from as Pid, p),
                    kind: Some(Kind::Deliver {
                        from: l.from as Pid,
                        to: p,
                        msg: l.msg.clone(),
                        hops: None,
                    }),
                });
                true
            },
        );
    }

    /// Goes over `p`'s pending copies: those `take` takes (given the letter and the copy's
    /// time bits) leave the list and their block's count; those whose time bits `may` refuses
    /// stay, their block not read. Returns how many it took.
    fn take_pending(
        &mut self,
        p: Pid,
        may: impl Fn(u64) -> bool,
        mut take: impl FnMut(&Letter<M>, u64) -> bool,
    ) -> u64 {
        let mut pending = std::mem::take(&mut self.pending[p]);
        let (mut taken, mut freed) = (0, false);
        let (first, blocks) = (self.first, &mut self.blocks);
        pending.retain(|&(t, g)| {
            if !may(t) {
                return true;
            }
            let (b, k) = locate(first, g);
            let block = blocks[b].as_mut().expect("a block with copies");
            if !take(&block.letters[k], t) {
                return true;
            }
            block.refs -= 1;
            freed |= block.refs == 0;
            taken += 1;
            false
        });
        self.pending[p] = pending;
        if freed {
            self.free();
        }
        taken
    }

    /// `p`'s copies delivered before `key`, not yet applied.
    pub(super) fn due(&self, p: Pid, key: (u64, u64)) -> u64 {
        let count = |g: u64| {
            let (b, k) = locate(self.first, g);
            self.blocks[b].as_ref().is_some_and(|block| {
                let t = block.times[p * B + k];
                t != NONE && before(t, &block.letters[k], p, key)
            })
        };
        let pending = self.pending[p].iter().filter(|&&(_, g)| count(g)).count();
        (pending + (self.cursor[p]..self.next).filter(|&g| count(g)).count()) as u64
    }

    /// Lets go of the blocks whose copies are all applied (the open one stays).
    fn free(&mut self) {
        let open = (self.next / B as u64).checked_sub(self.first);
        for (i, slot) in self.blocks.iter_mut().enumerate() {
            if slot.as_ref().is_some_and(|b| b.refs == 0) && Some(i as u64) != open {
                let mut block = slot.take().expect("just checked");
                block.letters.clear();
                self.spare.push(block);
            }
        }
        while self.blocks.len() > 1 && self.blocks.front().is_some_and(Option::is_none) {
            self.blocks.pop_front();
            self.first += 1;
        }
    }
}

/// Broadcast `g`'s block (counted from block number `first`) and place in it.
#[inline]
fn locate(first: u64, g: u64) -> (usize, usize) {
    ((g / B as u64 - first) as usize, (g % B as u64) as usize)
}

/// Whether the copy of `l` to `to`, delivered at time bits `t`, comes before the event `key`.
#[inline]
fn before<M>(t: u64, l: &Letter<M>, to: Pid, key: (u64, u64)) -> bool {
    t < key.0 || (t == key.0 && cast_seq(l.base, l.from as Pid, to) < key.1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mp::algo::ra1::Ra1Msg;
    use crate::mp::{Group, Runtime};

    #[derive(Debug)]
    struct Nobody;

    impl Algorithm for Nobody {
        type Msg = Ra1Msg;
        fn on_request(&mut self, _rt: &mut dyn Runtime<Ra1Msg>, _g: Group) {}
        fn on_exit(&mut self, _rt: &mut dyn Runtime<Ra1Msg>) {}
        fn on_message(&mut self, _rt: &mut dyn Runtime<Ra1Msg>, _f: Pid, _m: Ra1Msg) {}
    }

    fn num(m: &Ra1Msg) -> u64 {
        match m {
            Ra1Msg::Request(g, _) => *g,
            Ra1Msg::Reply => unreachable!("only requests are sent"),
        }
    }

    /// Records each copy applied, checking it was delivered before `key`.
    fn record(out: &mut Vec<u64>, key: u64) -> impl FnMut(&mut Nobody, Pid, &Ra1Msg, u64) + '_ {
        move |_, from, m, t| {
            assert_eq!(from, 0);
            assert!(t < key, "copy {} applied before its time", num(m));
            out.push(num(m));
        }
    }

    /// Process 0 broadcasts `(LAG + 3) · B` times, ten time units apart: process 1 takes its
    /// copy passively and absorbs at every broadcast, process 2 takes it as an event, and
    /// processes 0, 2 and 3 are absorbed only when their cursors lag. Every copy is applied once, in time,
    /// and the blocks are let go.
    #[test]
    fn copies_are_applied_once_when_due_and_blocks_let_go() {
        let mut c: Casts<Ra1Msg> = Casts::new(4);
        let casts = (LAG as usize + 3) * B;
        let (mut got1, mut got3, mut lagging_seen) = (Vec::new(), Vec::new(), Vec::new());
        let time = |g: usize, r: usize| ((g * 10 + r) as f64).to_bits();
        let mut held_most = 0;
        for g in 0..casts {
            let mut lagging = Vec::new();
            let col = c.column(&mut lagging);
            let t = c.times(col);
            let k = col.k();
            t[k] = NONE;
            t[B + k] = time(g, 1);
            t[2 * B + k] = NONE;
            t[3 * B + k] = time(g, 3);
            c.commit(col, Ra1Msg::Request(g as u64, 0), 0, 4 * g as u64, 2);
            let key = (((g * 10) as f64).to_bits(), 0);
            c.absorb(1, &mut Nobody, key, &mut record(&mut got1, key.0));
            for &r in &lagging {
                lagging_seen.push(r);
                if r == 3 {
                    c.absorb(3, &mut Nobody, key, &mut record(&mut got3, key.0));
                } else {
                    // The sender and process 2 have no copies.
                    assert_eq!(
                        c.absorb(r, &mut Nobody, key, &mut record(&mut vec![], 0)),
                        0
                    );
                }
            }
            held_most = held_most.max(c.blocks.iter().flatten().count());
        }
        // Process 1: every copy but the last, in order; the last is pending.
        assert_eq!(got1, (0..casts as u64 - 1).collect::<Vec<_>>());
        assert!(c.has(1));
        // Every process but 1 (which absorbs at each broadcast) lagged once, when block
        // LAG + 1 began and its cursor was still in block 0; process 3 then took every copy
        // before that broadcast.
        lagging_seen.sort();
        assert_eq!(lagging_seen, [0, 2, 3]);
        let first = (LAG as usize + 1) * B;
        assert_eq!(got3, (0..first as u64).collect::<Vec<_>>());
        assert!(held_most <= LAG as usize + 2, "{held_most} blocks held");
        // What is left: process 3's copies from its last absorb on, process 1's last.
        let end = (((casts * 10) as f64).to_bits(), 0);
        assert_eq!(c.due(3, end), (casts - got3.len()) as u64);
        assert_eq!(c.due(1, end), 1);
        // Made events: process 1's last copy, with its own time and sequence number.
        let mut out = Vec::new();
        c.undefer(1, &mut out, |_| false);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].t, time(casts - 1, 1));
        assert_eq!(out[0].seq, cast_seq(4 * (casts as u64 - 1), 0, 1));
        assert!(!c.has(1));
        // Kept: a copy its receiver still takes passively stays.
        c.undefer(3, &mut out, |_| true);
        assert_eq!(out.len(), 1);
        assert_eq!(c.due(3, end), (casts - got3.len()) as u64);
    }

    /// A copy delivered at the event's own time comes before it only with a lower sequence
    /// number.
    #[test]
    fn a_copy_at_the_events_time_is_ordered_by_sequence_number() {
        let mut c: Casts<Ra1Msg> = Casts::new(2);
        let col = c.column(&mut Vec::new());
        let t = 5f64.to_bits();
        c.times(col)[col.k()] = NONE;
        c.times(col)[B + col.k()] = t;
        c.commit(col, Ra1Msg::Request(7, 0), 0, 10, 1);
        let seq = cast_seq(10, 0, 1);
        let mut n = 0;
        let mut count = |_: &mut Nobody, _: Pid, _: &Ra1Msg, _: u64| n += 1;
        assert_eq!(c.absorb(1, &mut Nobody, (t, seq), &mut count), 0);
        assert_eq!(c.absorb(1, &mut Nobody, (t, seq + 1), &mut count), 1);
        assert_eq!(n, 1);
        assert!(!c.has(1));
    }
}
