//! The runtime a process's handler sees on the simulator: sends become queued deliveries
//! (or deferred receipts, when the receiver takes them passively), a broadcast one bundle,
//! and entries and exits go through the core's checks.

use super::casts::{B, NONE};
use super::core::Core;
use super::deferred::Lazy;
use super::queue::{cast_seq, sort_copies, Bundle, Kind};
use crate::mp::{Algorithm, Message, Observation, Pid, Runtime};

/// The runtime a process's handler sees; `before` and `after` are the other processes (for
/// [`Algorithm::passive`]).
pub(super) struct Ctx<'a, M, A> {
    pub(super) core: &'a mut Core<M>,
    pub(super) me: Pid,
    pub(super) before: &'a [A],
    pub(super) after: &'a [A],
}

/// Process `to` of the processes around `me` (`before` it and `after` it).
#[inline]
fn other_of<'a, A>(before: &'a [A], after: &'a [A], me: Pid, to: Pid) -> &'a A {
    if to < me {
        &before[to]
    } else {
        &after[to - me - 1]
    }
}

impl<M: Message, A: Algorithm<Msg = M>> Ctx<'_, M, A> {
    /// The process `to`, not the running one.
    #[inline]
    fn other(&self, to: Pid) -> &A {
        other_of(self.before, self.after, self.me, to)
    }

    /// A message to `to`, counted already: its delay, and its delivery (deferred when the
    /// receiver takes it passively).
    #[inline]
    fn schedule(&mut self, to: Pid, msg: M) {
        let from = self.me;
        debug_assert!(
            A::PASSIVE || from == to || !self.other(to).passive(&msg),
            "Algorithm::passive answered true where Algorithm::PASSIVE is false"
        );
        let t = self.core.delivery(from, to);
        if self.core.deferred.lazy && from != to && self.other(to).passive(&msg) {
            let c = &mut *self.core;
            c.q.seq += 1;
            let letter = c.deferred.new_letter(msg, from, c.q.seq);
            c.deferred.defer(
                to,
                Lazy {
                    t: t.to_bits(),
                    letter,
                },
            );
            return;
        }
        let now = self.core.now;
        let hops = self.core.hops.of(from, to, msg.kind(), now);
        self.core.q.push(
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
    /// events and one column of a block of `casts` for the receivers that take it passively:
    /// the same delays, sequence numbers and deferrals as one [`Ctx::schedule`] per receiver.
    fn cast(&mut self, msg: M) {
        let (me, n) = (self.me, self.core.n);
        let base = self.core.q.seq;
        self.core.q.seq += n as u64 - 1;
        let mut dests = self.core.q.spare_dests.pop().unwrap_or_default();
        let mut times = std::mem::take(&mut self.core.cast_buf);
        self.core.cast_times(me, &mut times);
        if self.core.deferred.lazy {
            // Every receiver's place in the block's column is written: its delivery time when
            // it takes the copy passively, else NONE (and the copy is an event). Those whose
            // state may take a receipt passively take this one as the first of them does
            // (`Algorithm::passive_now`): one receiver's state is read, not every one's.
            let first = (0..n).find(|&to| to != me && self.core.deferred.takers[to]);
            let passive = first.is_some_and(|to| self.other(to).passive(&msg));
            let core = &mut *self.core;
            let col = core.deferred.casts.column(&mut core.deferred.full);
            let table = core.deferred.casts.times(col);
            let k = col.k();
            let takers = &core.deferred.takers;
            for (i, &t) in times.iter().enumerate() {
                let to = i + usize::from(i >= me);
                debug_assert_eq!(
                    passive && takers[to],
                    other_of(self.before, self.after, me, to).passive(&msg),
                    "Algorithm::passive_now is wrong, or passive depends on more than the message"
                );
                if passive && takers[to] {
                    table[to * B + k] = t;
                } else {
                    table[to * B + k] = NONE;
                    dests.push((t, to as u32));
                }
            }
            table[me * B + k] = NONE;
            let readers = (n - 1 - dests.len()) as u64;
            if readers > 0 {
                core.deferred
                    .casts
                    .commit(col, msg.clone(), me, base, readers);
            }
        } else {
            for (i, &t) in times.iter().enumerate() {
                dests.push((t, (i + usize::from(i >= me)) as u32));
            }
        }
        let c = &mut *self.core;
        c.cast_buf = times;
        if dests.is_empty() {
            c.q.spare_dests.push(dests);
            return;
        }
        sort_copies(&mut dests, &mut c.q.sort_buf);
        let head = (dests[0].0, cast_seq(base, me, dests[0].1 as Pid));
        c.q.queue_bundle(
            head,
            dests[0].1 as Pid,
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

impl<M: Message, A: Algorithm<Msg = M>> Runtime<M> for Ctx<'_, M, A> {
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
            debug_assert!(
                A::PASSIVE || (0..n).all(|to| to == me || !self.other(to).passive(&msg)),
                "Algorithm::passive answered true where Algorithm::PASSIVE is false"
            );
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
        self.core.q.push(t, Kind::Timer { p: self.me, tag });
    }
    fn enter(&mut self) {
        self.core.enter(self.me);
    }
    fn enter_as(&mut self, g: crate::mp::Group) {
        self.core.enter_as(self.me, g);
    }
    fn exited(&mut self) {
        self.core.exited(self.me);
    }
    fn observe(&mut self, obs: Observation) {
        self.core.tally.observe(self.me, self.core.now, obs);
        if let (Observation::SessionStarted, Some(t)) = (obs, self.core.two_hop.as_mut()) {
            t.session_started();
        }
        if let Observation::SessionsWaited(s) = obs {
            let m = self.core.sessions_waited_max.get_or_insert(0);
            *m = (*m).max(s);
        }
    }
}
