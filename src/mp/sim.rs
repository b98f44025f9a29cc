//! The deterministic, seeded discrete-event simulator. Each event (a message delivery, a
//! timer, a process asking to enter or to leave) runs one handler of one process's state
//! machine; the safety of the whole system is checked after every state change.
//!
//! Determinism: events run in (time, sequence number) order, one random stream per purpose and
//! process (workload, channel delays), no hashing of addresses. The queue is a heap of
//! bundles: the events one handler scheduled, sorted, keyed by their earliest (see
//! [`Bundle`]), which runs them in the same order as one heap of all events at a fraction of
//! the cost when handlers broadcast. A broadcast keeps its message once, for the copies
//! delivered as events and for those its receivers take passively (see [`Letter`]).

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Instant;

use super::algo::Setup;
use super::metrics::{MpResult, Tally};
use super::run_config::RunConfig;
use super::safety::Safety;
use super::workload::Dist;
use super::{Algorithm, Group, Observation, Pid, Problem, Runtime};
use crate::workload::rng::Rng;
use crate::workload::Sampler;

/// A simulated run: the run, and what only the simulator has.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// The run (times in simulated units).
    pub run: RunConfig,
    /// Topology name (for the result).
    pub topology: String,
    /// FIFO channels.
    pub fifo: bool,
    /// Print every event to stderr.
    pub trace: bool,
}

/// A message some receivers take passively (see [`Algorithm::passive`]), stored once for
/// all of them: a broadcast's copies or one unicast message.
struct Letter<M> {
    msg: Option<M>,
    from: u32,
    /// A broadcast's: the sequence number before its first copy's (see [`cast_seq`]); one
    /// message's: its own.
    base: u64,
    cast: bool,
    /// Receivers that have not applied it yet.
    refs: u32,
}

impl<M> Letter<M> {
    /// The sequence number of the copy to `to`.
    #[inline]
    fn seq(&self, to: Pid) -> u64 {
        if self.cast {
            cast_seq(self.base, self.from as Pid, to)
        } else {
            self.base
        }
    }
}

/// The sequence number of a broadcast's copy to `to`: the copies to 0, 1, ... (the sender
/// skipped) take the numbers after `base`, as one send each would.
#[inline]
fn cast_seq(base: u64, from: Pid, to: Pid) -> u64 {
    base + 1 + (to - usize::from(to > from)) as u64
}

/// Puts `x` in an empty slot of `slots` (one that `free` lists) or a new one; returns its
/// index.
fn place<T>(slots: &mut Vec<T>, free: &mut Vec<u32>, x: T) -> u32 {
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

/// A passive receipt not yet applied: delivered at time bits `t`, its message in
/// `Core::letters`.
#[derive(Clone, Copy)]
struct Lazy {
    t: u64,
    letter: u32,
}

/// Where a process's application is.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    /// Between critical sections (or done).
    Out,
    /// Asked to enter at this time, for this group.
    Waiting(f64, Group),
    /// Inside, in this group.
    Inside(Group),
    /// Asked to leave at this time (local CS only).
    Leaving(f64, Group),
}

/// Causal hop depths a message carries when hops are tracked: per process, (request epoch,
/// depth since that request), and last (sync epoch, depth since the exit that emptied the
/// system). Epoch 0: not causally after any.
type Hops = Option<Box<[(u32, u32)]>>;

/// Bundles of at most this many events are copied into a small vector of their own.
const SMALL_BUNDLE: usize = 4;

/// Hops are tracked (O(n) per message) up to this many processes.
pub const HOPS_MAX_N: usize = 64;

enum Kind<M> {
    Deliver {
        from: Pid,
        to: Pid,
        msg: M,
        hops: Hops,
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

/// One scheduled event.
struct Item<M> {
    t: u64,
    seq: u64,
    kind: Option<Kind<M>>,
}

/// Events queued together, so that the heap holds one entry per bundle, keyed by its next
/// event: a delivery costs a sift in a small heap rather than a push and a pop in a heap of
/// every message in flight. Merging sorted bundles by their heads runs the events in exactly
/// the (time, sequence) order of one global queue.
enum Bundle<M> {
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

/// A bundle's place in the heap: its next event's time and sequence number, and its slot.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Ev {
    t: u64,
    seq: u64,
    slot: u32,
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

/// The simulator's state apart from the processes (so a handler can borrow both).
struct Core<M> {
    now: f64,
    seq: u64,
    queue: BinaryHeap<Ev>,
    /// Bundles, indexed by `Ev::slot`; `free` lists the empty slots.
    slab: Vec<Bundle<M>>,
    free: Vec<u32>,
    /// What the running handler schedules (broadcasts apart), bundled when it returns.
    outbox: Vec<Item<M>>,
    /// Emptied bundle vectors, for reuse: large, and small, kept apart so that a small
    /// bundle does not hold a large one's allocation; and broadcasts' receiver lists.
    spare: Vec<Vec<Item<M>>>,
    spare_small: Vec<Vec<Item<M>>>,
    spare_dests: Vec<Vec<(u64, u32)>>,
    /// A broadcast is queued as one [`Bundle::Cast`] (else as one event per copy, as
    /// where hops are tracked).
    cast: bool,
    /// Passive receipts are deferred (see [`run`]); per process, those not yet applied,
    /// their messages in `letters` (`free_letters`: the empty slots).
    lazy: bool,
    inbox: Vec<Vec<Lazy>>,
    letters: Vec<Letter<M>>,
    free_letters: Vec<u32>,
    /// Inboxes that reached a power of two from 1024 on during the current event.
    full: Vec<Pid>,
    /// (since, p) for every start of a wait, oldest first; entries whose process has since
    /// moved on are dropped when met.
    waits: VecDeque<(f64, Pid)>,
    n: usize,
    delay: Dist,
    fifo: bool,
    link_last: Vec<f64>,
    delay_rng: Vec<Rng>,
    work_rng: Vec<Rng>,
    samplers: Vec<Sampler>,
    ncs: Dist,
    cs: Dist,
    requests: u64,
    keep_cycling: bool,
    phase: Vec<Phase>,
    entries: Vec<u64>,
    unfinished: usize,
    tally: Tally,
    problem: Problem,
    safety: Safety,
    empty_since: Option<f64>,
    waiting: usize,
    sessions_waited_max: Option<u64>,
    trace: bool,
    // Causal hops (when n ≤ HOPS_MAX_N): reach[q * (n + 1) + j] is, for source j (j = n: the
    // sync source), the (epoch, depth) of the longest chain from j's current request to q.
    hops_on: bool,
    reach: Vec<(u32, u32)>,
    epoch: Vec<u32>,
}

impl<M: super::Message> Core<M> {
    fn push(&mut self, t: f64, kind: Kind<M>) {
        self.seq += 1;
        self.outbox.push(Item {
            t: t.to_bits(),
            seq: self.seq,
            kind: Some(kind),
        });
    }

    /// Queues a bundle whose first event is at (t, seq).
    fn queue_bundle(&mut self, (t, seq): (u64, u64), bundle: Bundle<M>) {
        let slot = place(&mut self.slab, &mut self.free, bundle);
        self.queue.push(Ev { t, seq, slot });
    }

    /// Queues what the last handler scheduled as one bundle.
    fn flush(&mut self) {
        match self.outbox.len() {
            0 => {}
            1 => {
                let item = self.outbox.pop().expect("one event");
                self.queue_bundle((item.t, item.seq), Bundle::One(item));
            }
            len => {
                let mut items = if len <= SMALL_BUNDLE {
                    let mut items = self
                        .spare_small
                        .pop()
                        .unwrap_or_else(|| Vec::with_capacity(SMALL_BUNDLE));
                    items.append(&mut self.outbox);
                    items
                } else {
                    let mut items = self.spare.pop().unwrap_or_default();
                    std::mem::swap(&mut items, &mut self.outbox);
                    items
                };
                items.sort_unstable_by_key(|i| (i.t, i.seq));
                let head = (items[0].t, items[0].seq);
                self.queue_bundle(head, Bundle::Many { items, next: 0 });
            }
        }
    }

    /// The earliest event: its time, sequence number and payload.
    fn pop(&mut self) -> Option<(f64, u64, Kind<M>)> {
        let mut top = self.queue.peek_mut()?;
        let (t, seq, slot) = (top.t, top.seq, top.slot as usize);
        let following = match &mut self.slab[slot] {
            Bundle::One(_) => None,
            Bundle::Many { items, next } => {
                *next += 1;
                items.get(*next).map(|i| (i.t, i.seq))
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
                    .map(|&(t, to)| (t, cast_seq(*base, *from as Pid, to as Pid)))
            }
            Bundle::Free => unreachable!("a queued slot is in use"),
        };
        let kind = if let Some((t, seq)) = following {
            top.t = t;
            top.seq = seq;
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

    /// The time of the earliest event.
    fn peek_time(&self) -> Option<f64> {
        self.queue.peek().map(|e| f64::from_bits(e.t))
    }

    /// A letter for `refs` receivers.
    fn new_letter(&mut self, msg: M, from: Pid, base: u64, cast: bool, refs: u32) -> u32 {
        let letter = Letter {
            msg: Some(msg),
            from: from as u32,
            base,
            cast,
            refs,
        };
        place(&mut self.letters, &mut self.free_letters, letter)
    }

    /// Defers a passive receipt of `to`.
    fn defer(&mut self, to: Pid, l: Lazy) {
        let inbox = &mut self.inbox[to];
        inbox.push(l);
        // A process that stays idle (or is done) would gather every broadcast: its inbox
        // is applied up to now at each power of two from 1024 on.
        if inbox.len() >= 1024 && inbox.len().is_power_of_two() {
            self.full.push(to);
        }
    }

    /// Whether `to`'s deferred receipt `l` was delivered before the event `key`.
    #[inline]
    fn before(&self, l: Lazy, to: Pid, key: (u64, u64)) -> bool {
        l.t < key.0 || (l.t == key.0 && self.letters[l.letter as usize].seq(to) < key.1)
    }

    /// `to`'s copy of a letter: its sender and message (the last copy takes the letter's).
    fn open(&mut self, id: u32) -> (Pid, M) {
        let letter = &mut self.letters[id as usize];
        letter.refs -= 1;
        let msg = if letter.refs == 0 {
            self.free_letters.push(id);
            letter.msg.take()
        } else {
            letter.msg.clone()
        };
        (letter.from as Pid, msg.expect("a letter with readers"))
    }

    /// A deferred receipt of `to` made an event again, at its own (time, sequence number).
    fn undefer(&mut self, to: Pid, l: Lazy) {
        let seq = self.letters[l.letter as usize].seq(to);
        let (from, msg) = self.open(l.letter);
        self.outbox.push(Item {
            t: l.t,
            seq,
            kind: Some(Kind::Deliver {
                from,
                to,
                msg,
                hops: None,
            }),
        });
    }

    /// Applies `p`'s deferred receipts delivered before `key` (in any order: passive
    /// receipts commute); returns how many.
    fn absorb<A: Algorithm<Msg = M>>(&mut self, p: Pid, proc_: &mut A, key: (u64, u64)) -> u64 {
        if self.inbox[p].is_empty() {
            return 0;
        }
        let mut inbox = std::mem::take(&mut self.inbox[p]);
        let mut applied = 0;
        let mut i = 0;
        while i < inbox.len() {
            let l = inbox[i];
            if self.before(l, p, key) {
                inbox.swap_remove(i);
                let (from, msg) = self.open(l.letter);
                let mut rt = Quiet {
                    me: p,
                    n: self.n,
                    now: f64::from_bits(l.t),
                };
                proc_.on_message(&mut rt, from, msg);
                applied += 1;
            } else {
                i += 1;
            }
        }
        self.inbox[p] = inbox;
        applied
    }

    /// After an event of `p`: the deferred receipts `p` no longer takes passively become
    /// events, at their own (time, sequence number).
    fn spill<A: Algorithm<Msg = M>>(&mut self, p: Pid, proc_: &A) {
        if self.inbox[p].is_empty() {
            return;
        }
        let mut inbox = std::mem::take(&mut self.inbox[p]);
        let mut i = 0;
        while i < inbox.len() {
            let l = inbox[i];
            let msg = self.letters[l.letter as usize].msg.as_ref();
            if proc_.passive(msg.expect("a letter with readers")) {
                i += 1;
            } else {
                inbox.swap_remove(i);
                self.undefer(p, l);
            }
        }
        self.inbox[p] = inbox;
    }

    /// Stops deferring after the event `key`: the receipts delivered before it are applied
    /// (returns how many), the later ones become events.
    fn go_eager<A: Algorithm<Msg = M>>(&mut self, procs: &mut [A], key: (u64, u64)) -> u64 {
        self.lazy = false;
        let mut applied = 0;
        for (p, proc_) in procs.iter_mut().enumerate() {
            applied += self.absorb(p, proc_, key);
            for l in std::mem::take(&mut self.inbox[p]) {
                self.undefer(p, l);
            }
        }
        self.flush();
        applied
    }

    /// Deferred receipts delivered before `key`, not yet applied.
    fn due(&self, key: (u64, u64)) -> u64 {
        let mut due = 0;
        for (p, inbox) in self.inbox.iter().enumerate() {
            due += inbox.iter().filter(|&&l| self.before(l, p, key)).count() as u64;
        }
        due
    }

    /// The delivery time of a message `from` → `to` sent now: its delay drawn, after the
    /// link's last delivery on FIFO channels.
    #[inline]
    fn delivery(&mut self, from: Pid, to: Pid) -> f64 {
        let d = if from == to {
            0.0
        } else {
            self.delay.sample(&mut self.delay_rng[from])
        };
        let mut t = self.now + d;
        if self.fifo {
            let link = &mut self.link_last[from * self.n + to];
            t = t.max(*link);
            *link = t;
        }
        t
    }

    /// Whether a watchdog check at time `t`, with the processes where they are now, could
    /// report a request overdue: exactly when the oldest wait is (`overdue`'s test).
    fn may_be_overdue(&mut self, t: f64, bound: f64) -> bool {
        while let Some(&(since, p)) = self.waits.front() {
            match self.phase[p] {
                Phase::Waiting(s, _) | Phase::Leaving(s, _) if s == since => {
                    return t - since > bound
                }
                _ => {
                    self.waits.pop_front();
                }
            }
        }
        false
    }

    fn violation(&mut self, what: String) {
        if self.trace {
            eprintln!("{:.3} VIOLATION {what}", self.now);
        }
        self.safety.record(format!("t={:.3}: {what}", self.now));
    }

    /// Advances the concurrency integral to now.
    fn account_time(&mut self) {
        self.safety.tick(self.now);
    }

    fn schedule_want(&mut self, p: Pid) {
        if self.entries[p] < self.requests || self.keep_cycling {
            let d = self.ncs.sample(&mut self.work_rng[p]);
            self.push(self.now + d, Kind::Want { p });
        }
    }

    fn schedule_leave(&mut self, p: Pid) {
        let d = self.cs.sample(&mut self.work_rng[p]);
        self.push(self.now + d, Kind::Leave { p });
    }

    fn enter(&mut self, p: Pid) {
        if self.trace {
            let h = if self.hops_on { self.depth(p, p) } else { 0 };
            eprintln!(
                "{:.3} p{p} ENTERS {:?} after {h} hops",
                self.now, self.phase[p]
            );
        }
        let Phase::Waiting(since, g) = self.phase[p] else {
            self.violation(format!("p{p} entered without asking"));
            return;
        };
        self.account_time();
        self.waiting -= 1;
        self.tally.wait(p, self.now - since);
        self.tally.entered(p);
        self.record_wait_hops(p);
        if let Some(t0) = self.empty_since.take() {
            self.tally.sync(self.now - t0);
            if self.hops_on {
                let h = self.depth(p, self.n);
                self.tally.sync_hops(h);
            }
        }
        for v in self.safety.enter(p, g) {
            self.violation(v);
        }
        self.phase[p] = Phase::Inside(g);
        self.entries[p] += 1;
        if self.entries[p] == self.requests {
            self.unfinished -= 1;
        }
        self.schedule_leave(p);
    }

    fn exited(&mut self, p: Pid) {
        if self.trace {
            eprintln!("{:.3} p{p} EXITS", self.now);
        }
        let g = match self.phase[p] {
            Phase::Inside(g) | Phase::Leaving(_, g) => g,
            _ => {
                self.violation(format!("p{p} left while outside"));
                return;
            }
        };
        self.account_time();
        if let Phase::Leaving(since, _) = self.phase[p] {
            self.tally.wait(p, self.now - since);
            self.tally.entered(p);
            self.record_wait_hops(p);
            self.waiting -= 1;
        }
        self.tally.completed += 1;
        for v in self.safety.exit(p, g) {
            self.violation(v);
        }
        if self.safety.inside() == 0 && self.waiting > 0 && self.problem != Problem::LocalCs {
            self.empty_since = Some(self.now);
            self.new_source(p, self.n);
        }
        self.phase[p] = Phase::Out;
        self.schedule_want(p);
    }

    /// Starts a new causal source `j` (a request of process j, or j = n: the exit at `p` that
    /// emptied the system).
    fn new_source(&mut self, p: Pid, j: usize) {
        if self.hops_on {
            self.epoch[j] += 1;
            self.reach[p * (self.n + 1) + j] = (self.epoch[j], 0);
        }
    }

    /// The longest chain from source `j`'s current event to process `p` (0 if none).
    fn depth(&self, p: Pid, j: usize) -> u64 {
        let (e, d) = self.reach[p * (self.n + 1) + j];
        if e == self.epoch[j] {
            u64::from(d)
        } else {
            0
        }
    }

    fn record_wait_hops(&mut self, p: Pid) {
        if self.hops_on {
            let h = self.depth(p, p);
            self.tally.wait_hops(h);
        }
    }

    /// What a message from `from` carries: its sender's depths, one hop further.
    fn hops_of(&self, from: Pid, to: Pid) -> Hops {
        if !self.hops_on || from == to {
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
    fn receive_hops(&mut self, to: Pid, hops: &[(u32, u32)]) {
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

/// The runtime a process's handler sees; `before` and `after` are the other processes (for
/// [`Algorithm::passive`]).
struct Ctx<'a, M, A> {
    core: &'a mut Core<M>,
    me: Pid,
    before: &'a [A],
    after: &'a [A],
}

impl<M: super::Message, A: Algorithm<Msg = M>> Ctx<'_, M, A> {
    /// The process `to`, not the running one.
    #[inline]
    fn other(&self, to: Pid) -> &A {
        if to < self.me {
            &self.before[to]
        } else {
            &self.after[to - self.me - 1]
        }
    }

    /// A message to `to`, counted already: its delay, and its delivery (deferred when the
    /// receiver takes it passively).
    #[inline]
    fn schedule(&mut self, to: Pid, msg: M) {
        let from = self.me;
        let t = self.core.delivery(from, to);
        if self.core.lazy && from != to && self.other(to).passive(&msg) {
            let c = &mut *self.core;
            c.seq += 1;
            let letter = c.new_letter(msg, from, c.seq, false, 1);
            c.defer(
                to,
                Lazy {
                    t: t.to_bits(),
                    letter,
                },
            );
            return;
        }
        let hops = self.core.hops_of(from, to);
        self.core.push(
            t,
            Kind::Deliver {
                from,
                to,
                msg,
                hops,
            },
        );
    }

    /// A broadcast, counted already, as one [`Bundle::Cast`] of the copies delivered as
    /// events and one letter for the receivers that take it passively: the same delays,
    /// sequence numbers and deferrals as one [`Ctx::schedule`] per receiver.
    fn cast(&mut self, msg: M) {
        let (me, n) = (self.me, self.core.n);
        let base = self.core.seq;
        self.core.seq += n as u64 - 1;
        let mut dests = self.core.spare_dests.pop().unwrap_or_default();
        let mut letter = None;
        for to in (0..n).filter(|&to| to != me) {
            let t = self.core.delivery(me, to).to_bits();
            if self.core.lazy && self.other(to).passive(&msg) {
                let c = &mut *self.core;
                let id =
                    *letter.get_or_insert_with(|| c.new_letter(msg.clone(), me, base, true, 0));
                c.letters[id as usize].refs += 1;
                c.defer(to, Lazy { t, letter: id });
            } else {
                dests.push((t, to as u32));
            }
        }
        let c = &mut *self.core;
        if dests.is_empty() {
            c.spare_dests.push(dests);
            return;
        }
        dests.sort_unstable();
        let head = (dests[0].0, cast_seq(base, me, dests[0].1 as Pid));
        c.queue_bundle(
            head,
            Bundle::Cast {
                from: me as u32,
                base,
                msg,
                dests,
                next: 0,
            },
        );
    }
}

impl<M: super::Message, A: Algorithm<Msg = M>> Runtime<M> for Ctx<'_, M, A> {
    fn me(&self) -> Pid {
        self.me
    }
    fn n(&self) -> usize {
        self.core.n
    }
    fn now(&self) -> f64 {
        self.core.now
    }
    fn send(&mut self, to: Pid, msg: M) {
        self.core.tally.message(self.me, to, &msg);
        self.schedule(to, msg);
    }
    fn broadcast(&mut self, msg: M) {
        let (me, n) = (self.me, self.core.n);
        self.core.tally.broadcast(me, n, &msg);
        if self.core.cast && n > 1 {
            self.cast(msg);
            return;
        }
        for to in 0..n {
            if to != me {
                self.schedule(to, msg.clone());
            }
        }
    }
    fn set_timer(&mut self, after: f64, tag: u64) {
        let t = self.core.now + after.max(0.0);
        self.core.push(t, Kind::Timer { p: self.me, tag });
    }
    fn enter(&mut self) {
        self.core.enter(self.me);
    }
    fn exited(&mut self) {
        self.core.exited(self.me);
    }
    fn observe(&mut self, obs: Observation) {
        if let Observation::SessionsWaited(s) = obs {
            let m = self.core.sessions_waited_max.get_or_insert(0);
            *m = (*m).max(s);
        }
    }
}

/// The runtime of a passive receipt applied late: it knows who and when, and does nothing.
struct Quiet {
    me: Pid,
    n: usize,
    now: f64,
}

#[cold]
fn not_passive() -> ! {
    panic!("a receipt declared passive used the runtime: Algorithm::passive is wrong")
}

impl<M: super::Message> Runtime<M> for Quiet {
    fn me(&self) -> Pid {
        self.me
    }
    fn n(&self) -> usize {
        self.n
    }
    fn now(&self) -> f64 {
        self.now
    }
    fn send(&mut self, _to: Pid, _msg: M) {
        not_passive()
    }
    fn set_timer(&mut self, _after: f64, _tag: u64) {
        not_passive()
    }
    fn enter(&mut self) {
        not_passive()
    }
    fn exited(&mut self) {
        not_passive()
    }
    fn observe(&mut self, _obs: Observation) {
        not_passive()
    }
}

/// Runs one simulation of the algorithm built by `make` for every process.
pub fn run<A: Algorithm>(cfg: &SimConfig, make: impl Fn(Pid, &Setup) -> A) -> MpResult {
    run_with(cfg, make, true, true)
}

/// [`run`], deferring passive receipts where it may (`defer`) or never, and queueing a
/// broadcast as one bundle where it may (`cast`) or one event per copy: the four give the
/// same result, only faster.
fn run_with<A: Algorithm>(
    cfg: &SimConfig,
    make: impl Fn(Pid, &Setup) -> A,
    defer: bool,
    cast: bool,
) -> MpResult {
    let wall = Instant::now();
    let run = &cfg.run;
    let s = &run.setup;
    let n = s.n;
    let mut procs: Vec<A> = (0..n).map(|p| make(p, s)).collect();
    let mut core: Core<A::Msg> = Core {
        now: 0.0,
        seq: 0,
        queue: BinaryHeap::with_capacity(4 * n),
        slab: Vec::with_capacity(4 * n),
        free: Vec::new(),
        outbox: Vec::new(),
        spare: Vec::new(),
        spare_small: Vec::new(),
        spare_dests: Vec::new(),
        cast: cast && n > HOPS_MAX_N,
        lazy: false,
        inbox: (0..n).map(|_| Vec::new()).collect(),
        letters: Vec::new(),
        free_letters: Vec::new(),
        full: Vec::new(),
        waits: VecDeque::new(),
        n,
        delay: run.delay,
        fifo: cfg.fifo,
        link_last: if cfg.fifo {
            vec![0.0; n * n]
        } else {
            Vec::new()
        },
        delay_rng: (0..n)
            .map(|p| Rng::new(run.seed, 0xD1_0000 + p as u64))
            .collect(),
        work_rng: (0..n)
            .map(|p| Rng::new(run.seed, 0x3C_0000 + p as u64))
            .collect(),
        samplers: run.mix.samplers(n, run.seed),
        ncs: run.ncs,
        cs: run.cs,
        requests: run.requests,
        keep_cycling: run.local(),
        phase: vec![Phase::Out; n],
        entries: vec![0; n],
        unfinished: if run.requests == 0 { 0 } else { n },
        tally: Tally::new(n),
        problem: run.problem,
        safety: Safety::new(run),
        empty_since: None,
        waiting: 0,
        sessions_waited_max: None,
        trace: cfg.trace,
        hops_on: n <= HOPS_MAX_N,
        reach: if n <= HOPS_MAX_N {
            vec![(0, 0); n * (n + 1)]
        } else {
            Vec::new()
        },
        epoch: vec![0; n + 1],
    };
    // The initial configuration (seed 004) and the first requests.
    for (p, proc_) in procs.iter().enumerate() {
        if proc_.starts_inside() {
            core.phase[p] = Phase::Inside(0);
            core.safety.start_inside(p);
            core.schedule_leave(p);
        } else {
            core.schedule_want(p);
        }
    }
    for v in core.safety.initial_violations() {
        core.violation(v);
    }
    core.flush();
    let mut events = 0u64;
    let mut liveness = None;
    let trace = cfg.trace;
    // Deferred receipts (see below) where hops are not tracked and nothing is traced.
    core.lazy = defer && !trace && !core.hops_on;
    let mut key = (0, 0);
    while core.unfinished > 0 {
        let Some((t, seq, kind)) = core.pop() else {
            liveness = Some(format!(
                "deadlock at t={:.3}: no event pending; {}",
                core.now,
                stuck_state(&core, &procs)
            ));
            break;
        };
        core.now = t;
        events += 1;
        key = (t.to_bits(), seq);
        let p = match kind {
            Kind::Deliver { to, .. } => to,
            Kind::Timer { p, .. } | Kind::Want { p } | Kind::Leave { p } => p,
        };
        if core.lazy {
            events += core.absorb(p, &mut procs[p], key);
        }
        if trace {
            match &kind {
                Kind::Deliver { from, to, msg, .. } => {
                    eprintln!("{t:.3} p{to} <- p{from} {msg:?}")
                }
                Kind::Timer { p, tag } => eprintln!("{t:.3} p{p} timer {tag}"),
                Kind::Want { p } => eprintln!("{t:.3} p{p} wants"),
                Kind::Leave { p } => eprintln!("{t:.3} p{p} leaves"),
            }
        }
        match &kind {
            Kind::Deliver { to, hops, .. } => {
                if let Some(h) = hops {
                    core.receive_hops(*to, h);
                }
            }
            Kind::Timer { .. } => {}
            Kind::Want { p } => {
                let p = *p;
                core.phase[p] = Phase::Waiting(core.now, core.samplers[p].next());
                core.waits.push_back((core.now, p));
                core.waiting += 1;
                core.tally.start_cycle(p);
                core.new_source(p, p);
            }
            Kind::Leave { p } => {
                let p = *p;
                if let Phase::Inside(g) = core.phase[p] {
                    if run.local() {
                        core.phase[p] = Phase::Leaving(core.now, g);
                        core.waits.push_back((core.now, p));
                        core.waiting += 1;
                        core.tally.start_cycle(p);
                        core.new_source(p, p);
                    }
                }
            }
        }
        {
            let (before, rest) = procs.split_at_mut(p);
            let (proc_, after) = rest.split_first_mut().expect("a process of the run");
            let rt = &mut Ctx {
                core: &mut core,
                me: p,
                before,
                after,
            };
            match kind {
                Kind::Deliver { from, msg, .. } => proc_.on_message(rt, from, msg),
                Kind::Timer { tag, .. } => proc_.on_timer(rt, tag),
                Kind::Want { p } => {
                    let Phase::Waiting(_, g) = rt.core.phase[p] else {
                        unreachable!("just set")
                    };
                    proc_.on_request(rt, g);
                }
                Kind::Leave { .. } => proc_.on_exit(rt),
            }
        }
        for q in std::mem::take(&mut core.full) {
            events += core.absorb(q, &mut procs[q], key);
        }
        if core.lazy {
            core.spill(p, &procs[p]);
        }
        core.flush();
        // Deferred receipts are events too: they count, and the watchdog looks every 4096
        // events. Until the next event here, only deferred receipts run and nobody starts
        // or stops waiting; if no request can be overdue by then, no look in between
        // finds one, so the exact count is not needed until one could. From then on (or
        // when only deferred receipts remain), every receipt is an event again.
        if core.lazy
            && core
                .peek_time()
                .is_none_or(|h| core.may_be_overdue(h, run.watchdog))
        {
            events += core.go_eager(&mut procs, key);
        }
        if !core.lazy && events & 0xFFF == 0 {
            if let Some(msg) = overdue(&core, &procs, run.watchdog) {
                liveness = Some(msg);
                break;
            }
        }
    }
    if core.lazy {
        events += core.due(key);
    }
    core.account_time();
    core.tally.finish();
    let safety = &core.safety;
    core.tally.inside_integral = safety.inside_integral;
    core.tally.busy_time = safety.busy_time;
    core.tally.inside_max = safety.inside_max;
    let mut r = run.result("sim", cfg.topology.clone(), cfg.fifo);
    r.events = events;
    r.safety_violations = safety.violations;
    r.violations = safety.described.clone();
    r.liveness_failure = liveness;
    r.starvation_sessions_max = core.sessions_waited_max;
    r.figures(&core.tally, core.now, !run.local());
    r.wall_seconds = wall.elapsed().as_secs_f64();
    r
}

/// The oldest request unserved past `bound`, with the state of its process.
fn overdue<M, A: std::fmt::Debug>(core: &Core<M>, procs: &[A], bound: f64) -> Option<String> {
    for (p, ph) in core.phase.iter().enumerate() {
        if let Phase::Waiting(since, _) | Phase::Leaving(since, _) = *ph {
            if core.now - since > bound {
                return Some(format!(
                    "p{p} waiting since t={since:.3}, now t={:.3} (watchdog {bound}); {}",
                    core.now,
                    stuck_state(core, procs)
                ));
            }
        }
    }
    None
}

/// The state of the waiting processes, shortened.
fn stuck_state<M, A: std::fmt::Debug>(core: &Core<M>, procs: &[A]) -> String {
    let mut out = String::new();
    let mut shown = 0;
    for (p, ph) in core.phase.iter().enumerate() {
        if matches!(ph, Phase::Waiting(..) | Phase::Leaving(..)) && shown < 3 {
            shown += 1;
            let mut s = format!("{:?}", procs[p]);
            s.truncate(600);
            out.push_str(&format!("p{p} {ph:?}: {s}; "));
        }
    }
    let waiting = core
        .phase
        .iter()
        .filter(|ph| matches!(ph, Phase::Waiting(..) | Phase::Leaving(..)))
        .count();
    out.push_str(&format!(
        "{waiting} waiting, {} inside",
        core.safety.inside()
    ));
    if core.problem == Problem::LocalCs {
        let movable = core
            .safety
            .movable(|p| matches!(core.phase[p], Phase::Inside(_) | Phase::Leaving(..)));
        if movable.is_empty() {
            out.push_str("; frozen: no single process can enter or leave within [l, k]");
        } else {
            out.push_str(&format!("; could move alone: {movable:?}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mp::algo::ra1::Ra1Msg;
    use crate::mp::topo::Graph;

    /// Negative controls: an algorithm that lets everyone in at once, and one that never
    /// lets anyone in. The checks must catch both.
    #[derive(Debug)]
    struct Broken {
        grant: bool,
    }

    impl Algorithm for Broken {
        type Msg = Ra1Msg;
        fn on_request(&mut self, rt: &mut dyn Runtime<Ra1Msg>, _g: Group) {
            if self.grant {
                rt.enter();
            }
        }
        fn on_exit(&mut self, rt: &mut dyn Runtime<Ra1Msg>) {
            rt.exited();
        }
        fn on_message(&mut self, _rt: &mut dyn Runtime<Ra1Msg>, _f: Pid, _m: Ra1Msg) {}
    }

    fn cfg(problem: Problem) -> SimConfig {
        SimConfig {
            run: RunConfig {
                algo: "broken".into(),
                problem,
                setup: Setup {
                    n: 6,
                    m: 3,
                    graph: Graph::complete(6),
                    l: vec![0; 6],
                    k: vec![6; 6],
                    initial_in: vec![false; 6],
                    leader: 0,
                },
                requests: 20,
                seed: 1,
                ncs: Dist::Exp(5.0),
                cs: Dist::Const(10.0),
                delay: Dist::Exp(1.0),
                mix: "uniform:3".parse().unwrap(),
                watchdog: 1000.0,
            },
            topology: "complete".into(),
            fifo: true,
            trace: false,
        }
    }

    #[test]
    fn safety_checks_catch_a_broken_lock() {
        let r = run(&cfg(Problem::Mutex), |_, _| Broken { grant: true });
        assert!(r.safety_violations > 0);
        assert!(
            r.violations[0].contains("entered with"),
            "{:?}",
            r.violations
        );
        let r = run(&cfg(Problem::Gme), |_, _| Broken { grant: true });
        assert!(r.safety_violations > 0);
        assert!(r.concurrency_max > 1);
    }

    /// TokenGME above the hop-tracking limit, where receipts are deferred.
    fn token_gme_cfg(seed: u64, fifo: bool, delay: Dist, watchdog: f64) -> SimConfig {
        let n = HOPS_MAX_N + 16;
        let mut c = cfg(Problem::Gme);
        c.run.algo = "token-gme".into();
        c.run.setup = Setup {
            n,
            m: 5,
            graph: Graph::complete(n),
            l: vec![0; n],
            k: vec![n; n],
            initial_in: vec![false; n],
            leader: 0,
        };
        c.run.requests = 12;
        c.run.seed = seed;
        c.fifo = fifo;
        c.run.delay = delay;
        c.run.mix = "hot:5:20,80".parse().unwrap();
        c.run.watchdog = watchdog;
        c
    }

    fn without_wall(r: &MpResult) -> serde_json::Value {
        let mut v = serde_json::to_value(r).unwrap();
        v["wall_seconds"] = 0.into();
        v
    }

    #[test]
    fn deferred_receipts_change_nothing() {
        use crate::mp::algo::token_gme::{Selection, TokenGme};
        let mut fired = 0;
        for seed in 1..=3 {
            for (fifo, delay) in [(true, Dist::Exp(10.0)), (false, Dist::Const(4.0))] {
                // A generous watchdog, and one that fires mid-run (the count of events it
                // looks at must include the deferred receipts).
                for watchdog in [1e9, 150.0] {
                    let c = token_gme_cfg(seed, fifo, delay, watchdog);
                    let make = |p, s: &Setup| TokenGme::new(p, s, Selection::Priority);
                    let eager = run_with(&c, make, false, false);
                    for (defer, cast) in [(true, false), (false, true), (true, true)] {
                        let fast = run_with(&c, make, defer, cast);
                        assert_eq!(without_wall(&eager), without_wall(&fast), "{c:?}");
                    }
                    assert_eq!(eager.safety_violations, 0);
                    fired += usize::from(eager.liveness_failure.is_some());
                }
            }
        }
        assert!(fired > 0, "no run exercised the watchdog");
    }

    /// Claims every receipt passive, but answers a REQUEST.
    #[derive(Debug)]
    struct Liar;

    impl Algorithm for Liar {
        type Msg = Ra1Msg;
        fn on_request(&mut self, rt: &mut dyn Runtime<Ra1Msg>, _g: Group) {
            for j in 0..rt.n() {
                if j != rt.me() {
                    rt.send(j, Ra1Msg::Request(1, 0));
                }
            }
        }
        fn on_exit(&mut self, rt: &mut dyn Runtime<Ra1Msg>) {
            rt.exited();
        }
        fn on_message(&mut self, rt: &mut dyn Runtime<Ra1Msg>, f: Pid, _m: Ra1Msg) {
            rt.send(f, Ra1Msg::Reply);
        }
        fn passive(&self, _msg: &Ra1Msg) -> bool {
            true
        }
    }

    #[test]
    #[should_panic(expected = "Algorithm::passive is wrong")]
    fn a_false_passive_claim_is_caught() {
        let mut c = token_gme_cfg(1, true, Dist::Exp(1.0), 1e9);
        c.run.problem = Problem::Mutex;
        run(&c, |_, _| Liar);
    }

    #[test]
    fn a_request_never_served_is_reported_with_state() {
        let r = run(&cfg(Problem::Mutex), |_, _| Broken { grant: false });
        let l = r.liveness_failure.expect("reported");
        assert!(l.contains("deadlock") && l.contains("Broken"), "{l}");
    }
}
