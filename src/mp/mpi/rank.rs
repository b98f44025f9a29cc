//! One rank of the MPI runtime: the state its processes share (the held messages and timers,
//! the tally, the log it reports), each process's application state, and the [`Runtime`]
//! the handlers see: a send to a process of this rank is held here, one to another rank is a
//! buffered MPI send.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

use ::mpi::topology::SimpleCommunicator;
use ::mpi::traits::*;

use super::check::CsInterval;
use super::report::Report;
use super::wire::{encode, kind_tag};
use crate::mp::metrics::Tally;
use crate::mp::run_config::RunConfig;
use crate::mp::workload::Dist;
use crate::mp::{Group, Message, Observation, Pid, Runtime};
use crate::workload::rng::Rng;
use crate::workload::Sampler;

/// What one process's application is doing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Phase {
    Out,
    Waiting(Instant, Group),
    Inside(Group),
    Leaving(Instant, Group),
}

/// A message held until its delivery time.
pub(super) struct Held<M> {
    pub(super) at: Instant,
    pub(super) seq: u64,
    pub(super) from: Pid,
    pub(super) to: Pid,
    pub(super) msg: M,
}

impl<M> PartialEq for Held<M> {
    fn eq(&self, o: &Self) -> bool {
        self.seq == o.seq
    }
}
impl<M> Eq for Held<M> {}
impl<M> PartialOrd for Held<M> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<M> Ord for Held<M> {
    // Earliest first out of the max-heap; ties in arrival order (FIFO per link).
    fn cmp(&self, o: &Self) -> Ordering {
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}

/// Per local process: everything but the state machine.
pub(super) struct ProcState {
    pub(super) pid: Pid,
    pub(super) phase: Phase,
    pub(super) sampler: Sampler,
    pub(super) work_rng: Rng,
    pub(super) delay_rng: Rng,
    /// Last delivery time per link into (remote senders) or out of (local receivers) this
    /// process, by the other end's id.
    pub(super) link_in: Vec<Instant>,
    pub(super) link_out: Vec<Instant>,
    pub(super) app_at: Option<Instant>,
    pub(super) entries: u64,
    pub(super) open: Option<usize>,
}

/// The rank's state shared by its processes.
pub(super) struct Rank<'w, M> {
    pub(super) world: &'w SimpleCommunicator,
    pub(super) rank: usize,
    pub(super) ppr: usize,
    pub(super) n: usize,
    pub(super) epoch: Instant,
    pub(super) offset_ms: f64,
    pub(super) delay: Dist,
    pub(super) held: BinaryHeap<Held<M>>,
    pub(super) seq: u64,
    pub(super) timers: BinaryHeap<Reverse<(Instant, u64, usize)>>,
    pub(super) tally: Tally,
    pub(super) report: Report,
    pub(super) buf: Vec<u8>,
    pub(super) app_sent: u64,
    pub(super) app_recv: u64,
    pub(super) all_sent: u64,
    pub(super) all_recv: u64,
}

impl<M: Message> Rank<'_, M> {
    /// `t` in ms of the synchronised clock.
    pub(super) fn sync_ms(&self, t: Instant) -> f64 {
        t.duration_since(self.epoch).as_secs_f64() * 1e3 + self.offset_ms
    }

    pub(super) fn violation(&mut self, what: String) {
        self.report.violations += 1;
        if self.report.described.len() < 5 {
            self.report.described.push(what);
        }
    }

    /// A runtime control message (counted for the final drain).
    pub(super) fn control(&mut self, to: usize, tag: i32, words: &[u64]) {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.world
            .process_at_rank(to as i32)
            .buffered_send_with_tag(&bytes[..], tag);
        self.all_sent += 1;
    }
}

/// `x` milliseconds.
pub(super) fn ms(x: f64) -> Duration {
    Duration::from_secs_f64(x.max(0.0) / 1e3)
}

pub(super) struct Ctx<'a, 'w, M> {
    pub(super) me: Pid,
    pub(super) li: usize,
    pub(super) rk: &'a mut Rank<'w, M>,
    pub(super) st: &'a mut ProcState,
    pub(super) entered: bool,
    pub(super) exited: bool,
}

impl<M: Message> Runtime<M> for Ctx<'_, '_, M> {
    fn me(&self) -> Pid {
        self.me
    }
    fn n(&self) -> usize {
        self.rk.n
    }
    fn now(&self) -> f64 {
        self.rk.sync_ms(Instant::now())
    }
    fn send(&mut self, to: Pid, msg: M) {
        let rk = &mut *self.rk;
        rk.tally.sent(self.me, to, &msg);
        let delay = if to == self.me {
            0.0
        } else {
            rk.delay.sample(&mut self.st.delay_rng)
        };
        let dest = to / rk.ppr;
        if dest == rk.rank {
            let at = (Instant::now() + ms(delay)).max(self.st.link_out[to]);
            self.st.link_out[to] = at;
            rk.seq += 1;
            rk.held.push(Held {
                at,
                seq: rk.seq,
                from: self.me,
                to,
                msg,
            });
        } else {
            encode(&mut rk.buf, self.me, to, delay, &msg);
            rk.world
                .process_at_rank(dest as i32)
                .buffered_send_with_tag(&rk.buf[..], kind_tag(msg.kind()));
            rk.app_sent += 1;
            rk.all_sent += 1;
        }
    }
    fn set_timer(&mut self, after: f64, tag: u64) {
        self.rk
            .timers
            .push(Reverse((Instant::now() + ms(after), tag, self.li)));
    }
    fn enter(&mut self) {
        let now = Instant::now();
        match self.st.phase {
            Phase::Waiting(since, g) => {
                let t = self.rk.sync_ms(now);
                let w = now.duration_since(since).as_secs_f64() * 1e3;
                self.rk.report.waits.push((self.me, w));
                self.rk.tally.entered(self.me);
                self.st.open = Some(self.rk.report.intervals.len());
                self.rk.report.intervals.push(CsInterval {
                    p: self.me,
                    group: g,
                    enter: Some(t),
                    exit: None,
                });
                self.st.phase = Phase::Inside(g);
                self.entered = true;
            }
            _ => self
                .rk
                .violation(format!("p{} entered without asking", self.me)),
        }
    }
    fn exited(&mut self) {
        let now = Instant::now();
        match self.st.phase {
            Phase::Inside(_) | Phase::Leaving(..) => {
                let t = self.rk.sync_ms(now);
                if let Some(i) = self.st.open.take() {
                    self.rk.report.intervals[i].exit = Some(t);
                }
                if let Phase::Leaving(since, _) = self.st.phase {
                    let w = now.duration_since(since).as_secs_f64() * 1e3;
                    self.rk.report.waits.push((self.me, w));
                    self.rk.tally.entered(self.me);
                }
                self.st.phase = Phase::Out;
                self.exited = true;
            }
            _ => self
                .rk
                .violation(format!("p{} left while outside", self.me)),
        }
    }
    fn observe(&mut self, obs: Observation) {
        if let Observation::SessionsWaited(s) = obs {
            let m = self.rk.report.sessions_waited_max.get_or_insert(0);
            *m = (*m).max(s);
        }
    }
}

impl ProcState {
    /// The application's next step after a handler, as on the threaded runtime.
    pub(super) fn after(&mut self, entered: bool, exited: bool, run: &RunConfig) {
        let now = Instant::now();
        if entered {
            self.entries += 1;
            self.app_at = Some(now + ms(run.cs.sample(&mut self.work_rng)));
        }
        if exited && (self.entries < run.requests || run.local()) {
            self.app_at = Some(now + ms(run.ncs.sample(&mut self.work_rng)));
        }
    }
}
