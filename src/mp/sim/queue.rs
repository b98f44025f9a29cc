//! The simulator's event queue: a heap of bundles (the events one handler scheduled, sorted,
//! keyed by their earliest; or the copies of one broadcast with the message kept once) in a
//! slab, which runs the events in exactly the (time, sequence number) order of one heap of
//! every event, at a fraction of the cost when handlers broadcast.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::hops::HopDepths;
use crate::mp::Pid;

/// Bundles of at most this many events are copied into a small vector of their own.
const SMALL_BUNDLE: usize = 4;

/// The sequence number of a broadcast's copy to `to`: the copies to 0, 1, ... (the sender
/// skipped) take the numbers after `base`, as one send each would.
#[inline]
pub(super) fn cast_seq(base: u64, from: Pid, to: Pid) -> u64 {
    base + 1 + (to - usize::from(to > from)) as u64
}

/// Puts `x` in an empty slot of `slots` (one that `free` lists) or a new one; returns its
/// index.
pub(super) fn place<T>(slots: &mut Vec<T>, free: &mut Vec<u32>, x: T) -> u32 {
    match free.pop() {
        Some(i) => {
            slots[i as usize] = x;
            i
        }
        None => {
            slots.push(x);
            (slots.len() - 1) as u32
        }
    }
}

/// Sorts a broadcast's copies, (time bits, receiver) listed in receiver order, into (time,
/// receiver) order: a stable radix sort on the times, byte by byte from the lowest, over the
/// bytes in which they differ (a broadcast's delays span a few of them). `buf` is scratch.
pub(super) fn sort_copies(copies: &mut Vec<(u64, u32)>, buf: &mut Vec<(u64, u32)>) {
    debug_assert!(
        copies.windows(2).all(|w| w[0].1 < w[1].1),
        "in receiver order"
    );
    if copies.len() < 64 {
        copies.sort_unstable();
        return;
    }
    let (lo, hi) = copies
        .iter()
        .fold((u64::MAX, 0), |(lo, hi), &(t, _)| (lo.min(t), hi.max(t)));
    let span = hi - lo;
    // Each pass writes every place of `buf`, then takes it as the list.
    buf.clear();
    buf.resize(copies.len(), (0, 0));
    let mut shift = 0;
    while shift < 64 && span >> shift != 0 {
        let mut at = [0usize; 256];
        for &(t, _) in copies.iter() {
            at[((t - lo) >> shift) as usize & 0xff] += 1;
        }
        let mut sum = 0;
        for a in at.iter_mut() {
            (*a, sum) = (sum, sum + *a);
        }
        for &c in copies.iter() {
            let d = ((c.0 - lo) >> shift) as usize & 0xff;
            buf[at[d]] = c;
            at[d] += 1;
        }
        std::mem::swap(copies, buf);
        shift += 8;
    }
}

/// What an event does.
pub(super) enum Kind<M> {
    Deliver {
        from: Pid,
        to: Pid,
        msg: M,
        hops: HopDepths,
    },
    Timer {
        p: Pid,
        tag: u64,
    },
    Want {
        p: Pid,
    },
    Leave {
        p: Pid,
    },
}

impl<M> Kind<M> {
    /// The process whose handler the event runs.
    #[inline]
    pub(super) fn process(&self) -> Pid {
        match self {
            Kind::Deliver { to, .. } => *to,
            Kind::Timer { p, .. } | Kind::Want { p } | Kind::Leave { p } => *p,
        }
    }
}

/// One scheduled event.
pub(super) struct Item<M> {
    pub(super) t: u64,
    pub(super) seq: u64,
    pub(super) kind: Option<Kind<M>>,
}

impl<M> Item<M> {
    /// The process whose handler it runs.
    #[inline]
    fn process(&self) -> Pid {
        self.kind.as_ref().expect("a queued event").process()
    }
}

/// Events queued together, so that the heap holds one entry per bundle, keyed by its next
/// event: a delivery costs a sift in a small heap rather than a push and a pop in a heap of
/// every message in flight. Merging sorted bundles by their heads runs the events in exactly
/// the (time, sequence) order of one global queue.
pub(super) enum Bundle<M> {
    /// An emptied slot.
    Free,
    /// One event (a reply, say), stored in place.
    One(Item<M>),
    /// The events one handler scheduled, sorted by (time, sequence number); `next` is the
    /// first not yet run.
    Many { items: Vec<Item<M>>, next: usize },
    /// The copies of one broadcast delivered as events: the message once, and (time bits,
    /// receiver) sorted, which is (time, sequence) order since a broadcast numbers its
    /// copies in receiver order (see [`cast_seq`]).
    Cast {
        from: u32,
        base: u64,
        msg: M,
        dests: Vec<(u64, u32)>,
        next: usize,
    },
}

/// A bundle's place in the heap: its next event's time and sequence number, its slot, and
/// the process its next event runs for (so that its state can be asked of the cache before
/// the bundle is read).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Ev {
    t: u64,
    seq: u64,
    slot: u32,
    to: u32,
}

impl PartialOrd for Ev {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Ev {
    // Reversed: BinaryHeap is a max-heap and the earliest event must come first. Times are
    // finite and non-negative, so their bit patterns order like the numbers.
    fn cmp(&self, o: &Self) -> Ordering {
        (o.t, o.seq).cmp(&(self.t, self.seq))
    }
}

/// The queue of events not yet run.
pub(super) struct Queue<M> {
    /// The last sequence number given.
    pub(super) seq: u64,
    heap: BinaryHeap<Ev>,
    /// Bundles, indexed by `Ev::slot`; `free` lists the empty slots.
    slab: Vec<Bundle<M>>,
    free: Vec<u32>,
    /// What the running handler schedules (broadcasts apart), bundled when it returns.
    pub(super) outbox: Vec<Item<M>>,
    /// Emptied bundle vectors, for reuse: large, and small, kept apart so that a small
    /// bundle does not hold a large one's allocation; and broadcasts' receiver lists.
    spare: Vec<Vec<Item<M>>>,
    spare_small: Vec<Vec<Item<M>>>,
    pub(super) spare_dests: Vec<Vec<(u64, u32)>>,
    /// The other half of [`sort_copies`]'s passes.
    pub(super) sort_buf: Vec<(u64, u32)>,
    /// The outbox's (time bits, sequence number, index), sorted by [`Queue::sorted_outbox`].
    outbox_keys: Vec<(u64, u64, u32)>,
}

impl<M: Clone> Queue<M> {
    /// An empty queue with room for `cap` bundles.
    pub(super) fn with_capacity(cap: usize) -> Self {
        Queue {
            seq: 0,
            heap: BinaryHeap::with_capacity(cap),
            slab: Vec::with_capacity(cap),
            free: Vec::new(),
            outbox: Vec::new(),
            spare: Vec::new(),
            spare_small: Vec::new(),
            spare_dests: Vec::new(),
            sort_buf: Vec::new(),
            outbox_keys: Vec::new(),
        }
    }

    /// Schedules an event at `t` with the next sequence number (in the outbox).
    pub(super) fn push(&mut self, t: f64, kind: Kind<M>) {
        self.seq += 1;
        self.outbox.push(Item {
            t: t.to_bits(),
            seq: self.seq,
            kind: Some(kind),
        });
    }

    /// Queues a bundle whose first event is at (t, seq), for process `to`.
    pub(super) fn queue_bundle(&mut self, (t, seq): (u64, u64), to: Pid, bundle: Bundle<M>) {
        let slot = place(&mut self.slab, &mut self.free, bundle);
        let to = to as u32;
        self.heap.push(Ev { t, seq, slot, to });
    }

    /// The outbox's events in (time, sequence number) order, in a spare vector; the outbox is
    /// left empty. Their keys are sorted, not the events (a delivery is several times the
    /// size of its key), and each event is then moved once. (The outbox is not in sequence
    /// order: receipts deferred earlier are put back in it with their own numbers.)
    fn sorted_outbox(&mut self) -> Vec<Item<M>> {
        let keys = &mut self.outbox_keys;
        keys.clear();
        keys.extend(
            self.outbox
                .iter()
                .enumerate()
                .map(|(i, e)| (e.t, e.seq, i as u32)),
        );
        keys.sort_unstable();
        let mut items = self.spare.pop().unwrap_or_default();
        items.extend(keys.iter().map(|&(t, seq, i)| Item {
            t,
            seq,
            kind: self.outbox[i as usize].kind.take(),
        }));
        self.outbox.clear();
        items
    }

    /// Queues what the last handler scheduled as one bundle.
    pub(super) fn flush(&mut self) {
        match self.outbox.len() {
            0 => {}
            1 => {
                let item = self.outbox.pop().expect("one event");
                let to = item.process();
                self.queue_bundle((item.t, item.seq), to, Bundle::One(item));
            }
            len => {
                let items = if len <= SMALL_BUNDLE {
                    let mut items = self
                        .spare_small
                        .pop()
                        .unwrap_or_else(|| Vec::with_capacity(SMALL_BUNDLE));
                    items.append(&mut self.outbox);
                    items.sort_unstable_by_key(|i| (i.t, i.seq));
                    items
                } else {
                    self.sorted_outbox()
                };
                let (head, to) = ((items[0].t, items[0].seq), items[0].process());
                self.queue_bundle(head, to, Bundle::Many { items, next: 0 });
            }
        }
    }

    /// The earliest event: its time, sequence number and payload.
    #[inline]
    pub(super) fn pop(&mut self) -> Option<(f64, u64, Kind<M>)> {
        let mut top = self.heap.peek_mut()?;
        let (t, seq, slot) = (top.t, top.seq, top.slot as usize);
        let following = match &mut self.slab[slot] {
            Bundle::One(_) => None,
            Bundle::Many { items, next } => {
                *next += 1;
                items.get(*next).map(|i| (i.t, i.seq, i.process() as u32))
            }
            Bundle::Cast {
                from,
                base,
                dests,
                next,
                ..
            } => {
                *next += 1;
                dests
                    .get(*next)
                    .map(|&(t, to)| (t, cast_seq(*base, *from as Pid, to as Pid), to))
            }
            Bundle::Free => unreachable!("a queued slot is in use"),
        };
        let kind = if let Some((t, seq, to)) = following {
            top.t = t;
            top.seq = seq;
            top.to = to;
            drop(top);
            match &mut self.slab[slot] {
                Bundle::Many { items, next } => items[*next - 1].kind.take(),
                Bundle::Cast {
                    from,
                    msg,
                    dests,
                    next,
                    ..
                } => Some(Kind::Deliver {
                    from: *from as Pid,
                    to: dests[*next - 1].1 as Pid,
                    msg: msg.clone(),
                    hops: None,
                }),
                _ => unreachable!("a bundle with a next event"),
            }
        } else {
            std::collections::binary_heap::PeekMut::pop(top);
            self.free.push(slot as u32);
            match std::mem::replace(&mut self.slab[slot], Bundle::Free) {
                Bundle::One(item) => item.kind,
                Bundle::Many { mut items, next } => {
                    let kind = items[next - 1].kind.take();
                    items.clear();
                    if items.capacity() <= SMALL_BUNDLE {
                        self.spare_small.push(items);
                    } else {
                        self.spare.push(items);
                    }
                    kind
                }
                Bundle::Cast {
                    from,
                    msg,
                    mut dests,
                    next,
                    ..
                } => {
                    let to = dests[next - 1].1 as Pid;
                    dests.clear();
                    self.spare_dests.push(dests);
                    Some(Kind::Deliver {
                        from: from as Pid,
                        to,
                        msg,
                        hops: None,
                    })
                }
                Bundle::Free => unreachable!("a queued slot is in use"),
            }
        };
        Some((f64::from_bits(t), seq, kind.expect("queued event")))
    }

    /// The earliest event, if it is a delivery: its sender, receiver and message.
    #[inline]
    pub(super) fn peek_delivery(&self) -> Option<(Pid, Pid, &M)> {
        let top = self.heap.peek()?;
        let item = match &self.slab[top.slot as usize] {
            Bundle::One(item) => item,
            Bundle::Many { items, next } => &items[*next],
            Bundle::Cast {
                from,
                msg,
                dests,
                next,
                ..
            } => {
                // The hints trust the entry's receiver; a wrong one would change no output.
                debug_assert_eq!(top.to, dests[*next].1, "the heap entry's receiver");
                return Some((*from as Pid, top.to as Pid, msg));
            }
            Bundle::Free => unreachable!("a queued slot is in use"),
        };
        debug_assert_eq!(top.to as Pid, item.process(), "the heap entry's process");
        match &item.kind {
            Some(Kind::Deliver { from, to, msg, .. }) => Some((*from, *to, msg)),
            _ => None,
        }
    }

    /// Asks the cache for the bundles at the heap's second level, and gives `wake` the process
    /// each one's next event runs for: once the next event has run, the earliest is most
    /// often one of them (or the next event's own bundle), and [`Queue::peek_delivery`] then
    /// finds the first line of its bundle fetched (and the hint it gives, the receiver's
    /// state).
    #[inline]
    pub(super) fn prefetch_after_next(&self, mut wake: impl FnMut(Pid)) {
        for e in self.heap.as_slice().iter().skip(1).take(2) {
            crate::mp::prefetch_at(self.slab.as_ptr().wrapping_add(e.slot as usize));
            wake(e.to as Pid);
        }
    }

    /// The time of the earliest event.
    pub(super) fn peek_time(&self) -> Option<f64> {
        self.heap.peek().map(|e| f64::from_bits(e.t))
    }
}

#[cfg(test)]
mod tests {
    use super::sort_copies;
    use crate::workload::rng::Rng;

    /// Copies in receiver order with times from `time`: sorted as `sort_unstable` would.
    fn agrees(n: usize, mut time: impl FnMut(usize) -> f64) {
        let copies: Vec<(u64, u32)> = (0..n).map(|to| (time(to).to_bits(), to as u32)).collect();
        let mut want = copies.clone();
        want.sort_unstable();
        let (mut got, mut buf) = (copies, Vec::new());
        sort_copies(&mut got, &mut buf);
        assert_eq!(got, want, "n = {n}");
    }

    #[test]
    fn a_broadcasts_copies_sort_as_a_comparison_sort_would() {
        let mut rng = Rng::new(3, 0);
        for n in [1, 2, 63, 64, 65, 499, 1000] {
            // Exponential delays after a time far from zero, as the simulator draws them.
            let now = 1000.0 * rng.next_f64();
            agrees(n, |_| now - 10.0 * (1.0 - rng.next_f64()).ln());
            // Ties in time, broken by receiver.
            agrees(n, |to| (to % 7) as f64);
            // One time for all, and times spanning every byte.
            agrees(n, |_| 5.0);
            agrees(n, |_| {
                f64::from_bits((rng.next_f64() * 2f64.powi(62)) as u64)
            });
        }
    }
}
