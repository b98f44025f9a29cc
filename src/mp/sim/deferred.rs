//! Passive receipts, deferred: a message its receiver takes passively (see
//! [`Algorithm::passive`]) is not queued as an event but kept: a broadcast's copies in
//! [`Casts`], a message sent alone as a [`Letter`] noted in its receiver's inbox. The receipt
//! is applied just before the receiver's next other event, with the same outcome, or made an
//! event again when the receiver stops taking it passively.

use super::casts::Casts;
use super::queue::{place, Item, Kind, Queue};
use crate::mp::{Algorithm, Message, Observation, Pid, Runtime};

/// A message its receiver takes passively (see [`Algorithm::passive`]), sent alone (a
/// broadcast's copies go to [`Casts`]).
pub(super) struct Letter<M> {
    msg: Option<M>,
    from: u32,
    /// Its sequence number.
    seq: u64,
}

/// A passive receipt not yet applied: delivered at time bits `t`, its message in
/// [`Deferred`].
#[derive(Clone, Copy)]
pub(super) struct Lazy {
    pub(super) t: u64,
    pub(super) letter: u32,
}

/// The deferred receipts of every process and the letters they read.
pub(super) struct Deferred<M> {
    /// Whether receipts are deferred now (see `sim::run`).
    pub(super) lazy: bool,
    n: usize,
    /// Per process, its receipts not yet applied.
    inbox: Vec<Vec<Lazy>>,
    /// The messages, and the empty slots.
    letters: Vec<Letter<M>>,
    free_letters: Vec<u32>,
    /// Processes to absorb up to now after the current event: their inbox reached a power of
    /// two from 1024 on, or their broadcasts' copies lag (see [`Casts::column`]).
    pub(super) full: Vec<Pid>,
    /// Broadcasts' passive copies (unicast ones go through the inboxes).
    pub(super) casts: Casts<M>,
    /// Per process, its `Algorithm::passive_now` after its last event.
    pub(super) takers: Vec<bool>,
}

impl<M: Message> Deferred<M> {
    /// Nothing deferred, for `n` processes.
    pub(super) fn new(n: usize) -> Self {
        Deferred {
            lazy: false,
            n,
            inbox: (0..n).map(|_| Vec::new()).collect(),
            letters: Vec::new(),
            free_letters: Vec::new(),
            full: Vec::new(),
            casts: Casts::new(n),
            takers: vec![false; n],
        }
    }

    /// A letter for one receiver.
    pub(super) fn new_letter(&mut self, msg: M, from: Pid, seq: u64) -> u32 {
        let letter = Letter {
            msg: Some(msg),
            from: from as u32,
            seq,
        };
        place(&mut self.letters, &mut self.free_letters, letter)
    }

    /// Defers a passive receipt of `to`.
    pub(super) fn defer(&mut self, to: Pid, l: Lazy) {
        let inbox = &mut self.inbox[to];
        inbox.push(l);
        // A process that stays idle (or is done) would gather every message sent to it: its
        // inbox is applied up to now at each power of two from 1024 on.
        if inbox.len() >= 1024 && inbox.len().is_power_of_two() {
            self.full.push(to);
        }
    }

    /// Whether the deferred receipt `l` was delivered before the event `key`.
    #[inline]
    pub(super) fn before(&self, l: Lazy, key: (u64, u64)) -> bool {
        l.t < key.0 || (l.t == key.0 && self.letters[l.letter as usize].seq < key.1)
    }

    /// Letter `id`'s sender, sequence number and message; the letter is let go.
    fn open(&mut self, id: u32) -> (Pid, u64, M) {
        let letter = &mut self.letters[id as usize];
        self.free_letters.push(id);
        let msg = letter.msg.take().expect("a letter not yet read");
        (letter.from as Pid, letter.seq, msg)
    }

    /// A deferred receipt of `to` made an event again, at its own (time, sequence number).
    fn undefer(&mut self, q: &mut Queue<M>, to: Pid, l: Lazy) {
        let (from, seq, msg) = self.open(l.letter);
        q.outbox.push(Item {
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
    pub(super) fn absorb<A: Algorithm<Msg = M>>(
        &mut self,
        p: Pid,
        proc_: &mut A,
        key: (u64, u64),
    ) -> u64 {
        let mut applied = 0;
        if self.casts.has(p) {
            if !self.takers[p] {
                self.casts.pass(p);
            } else {
                let n = self.n;
                applied = self
                    .casts
                    .absorb(p, proc_, key, &mut |proc_, from, msg, t| {
                        let mut rt = Quiet {
                            me: p,
                            n,
                            now: f64::from_bits(t),
                        };
                        proc_.on_passive(&mut rt, from, msg);
                    });
            }
        }
        if self.inbox[p].is_empty() {
            return applied;
        }
        let mut inbox = std::mem::take(&mut self.inbox[p]);
        let mut i = 0;
        while i < inbox.len() {
            let l = inbox[i];
            if self.before(l, key) {
                inbox.swap_remove(i);
                let mut rt = Quiet {
                    me: p,
                    n: self.n,
                    now: f64::from_bits(l.t),
                };
                // Applied with the letter's message lent, then the letter let go.
                let letter = &mut self.letters[l.letter as usize];
                let msg = letter.msg.as_ref().expect("a letter not yet read");
                proc_.on_passive(&mut rt, letter.from as Pid, msg);
                letter.msg = None;
                self.free_letters.push(l.letter);
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
    pub(super) fn spill<A: Algorithm<Msg = M>>(&mut self, q: &mut Queue<M>, p: Pid, proc_: &A) {
        self.takers[p] = proc_.passive_now();
        if self.casts.has(p) {
            self.casts.undefer(p, &mut q.outbox, |m| proc_.passive(m));
        }
        if self.inbox[p].is_empty() {
            return;
        }
        let mut inbox = std::mem::take(&mut self.inbox[p]);
        let mut i = 0;
        while i < inbox.len() {
            let l = inbox[i];
            let msg = self.letters[l.letter as usize].msg.as_ref();
            if proc_.passive(msg.expect("a letter not yet read")) {
                i += 1;
            } else {
                inbox.swap_remove(i);
                self.undefer(q, p, l);
            }
        }
        self.inbox[p] = inbox;
    }

    /// Stops deferring after the event `key`: the receipts delivered before it are applied
    /// (returns how many), the later ones become events.
    pub(super) fn go_eager<A: Algorithm<Msg = M>>(
        &mut self,
        q: &mut Queue<M>,
        procs: &mut [A],
        key: (u64, u64),
    ) -> u64 {
        self.lazy = false;
        let mut applied = 0;
        for (p, proc_) in procs.iter_mut().enumerate() {
            applied += self.absorb(p, proc_, key);
            self.casts.undefer(p, &mut q.outbox, |_| false);
            for l in std::mem::take(&mut self.inbox[p]) {
                self.undefer(q, p, l);
            }
        }
        q.flush();
        applied
    }

    /// Deferred receipts delivered before `key`, not yet applied.
    pub(super) fn due(&self, key: (u64, u64)) -> u64 {
        let mut due = 0;
        for (p, inbox) in self.inbox.iter().enumerate() {
            due += inbox.iter().filter(|&&l| self.before(l, key)).count() as u64;
            due += self.casts.due(p, key);
        }
        due
    }
}

/// The runtime of a passive receipt applied late: it knows who and when, and does nothing.
struct Quiet {
    me: Pid,
    n: usize,
    // The clock and timers of the runtime interface, which no algorithm of the table uses yet.
    #[allow(dead_code)]
    now: f64,
}

#[cold]
fn not_passive() -> ! {
    panic!("a receipt declared passive used the runtime: Algorithm::passive is wrong")
}

impl<M: Message> Runtime<M> for Quiet {
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
