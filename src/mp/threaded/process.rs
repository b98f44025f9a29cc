//! One process of the threaded runtime: its thread's loop over held messages, timers and the
//! application's next step, and the [`Runtime`] its handlers see. Channel delays are drawn as
//! in the simulator and honoured by holding a message in the receiver until its delivery
//! time (FIFO per link).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::monitor::Monitor;
use crate::mp::metrics::Tally;
use crate::mp::run_config::RunConfig;
use crate::mp::workload::Dist;
use crate::mp::{Algorithm, Group, Message, Pid, Runtime};
use crate::workload::rng::Rng;
use crate::workload::Sampler;

/// A message on its way: sender, delivery time, message.
pub(super) struct Envelope<M> {
    from: Pid,
    at: Instant,
    msg: M,
}

/// What every process thread shares.
pub(super) struct Shared<M> {
    pub(super) senders: Vec<Sender<Envelope<M>>>,
    pub(super) monitor: Mutex<Monitor>,
    pub(super) stop: AtomicBool,
    /// Processes that made their requests.
    pub(super) finished: AtomicUsize,
    /// Messages delivered.
    pub(super) delivered: AtomicUsize,
    pub(super) start: Instant,
}

/// What one process's application is doing.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    Out,
    Waiting(Instant, Group),
    Inside(Group),
    Leaving(Instant, Group),
}

/// `x` milliseconds.
pub(super) fn ms(x: f64) -> Duration {
    Duration::from_secs_f64(x.max(0.0) / 1e3)
}

struct Ctx<'a, M> {
    me: Pid,
    n: usize,
    // The clock and timers of the runtime interface, which no algorithm of the table uses yet.
    #[allow(dead_code)]
    start: Instant,
    senders: &'a [Sender<Envelope<M>>],
    delay: Dist,
    rng: &'a mut Rng,
    link_last: &'a mut [Instant],
    tally: &'a mut Tally,
    monitor: &'a Mutex<Monitor>,
    // The clock and timers of the runtime interface, which no algorithm of the table uses yet.
    #[allow(dead_code)]
    timers: &'a mut BinaryHeap<Reverse<(Instant, u64)>>,
    phase: &'a mut Phase,
    entered: bool,
    exited: bool,
}

impl<M: Message> Runtime<M> for Ctx<'_, M> {
    fn me(&self) -> Pid {
        self.me
    }
    fn n(&self) -> usize {
        self.n
    }
    fn now(&self) -> f64 {
        self.start.elapsed().as_secs_f64() * 1e3
    }
    fn send(&mut self, to: Pid, msg: M) {
        self.tally.sent(self.me, to, &msg);
        let now = Instant::now();
        let mut at = if to == self.me {
            now
        } else {
            now + ms(self.delay.sample(self.rng))
        };
        at = at.max(self.link_last[to]);
        self.link_last[to] = at;
        // A closed channel means the run is over; the message no longer matters.
        let _ = self.senders[to].send(Envelope {
            from: self.me,
            at,
            msg,
        });
    }
    fn set_timer(&mut self, after: f64, tag: u64) {
        self.timers.push(Reverse((Instant::now() + ms(after), tag)));
    }
    fn enter(&mut self) {
        let now = Instant::now();
        let mut m = self.monitor.lock().expect("monitor");
        match *self.phase {
            Phase::Waiting(since, g) => {
                m.enter(self.me, g, now);
                drop(m);
                self.tally
                    .wait(self.me, now.duration_since(since).as_secs_f64() * 1e3);
                self.tally.entered(self.me);
                *self.phase = Phase::Inside(g);
                self.entered = true;
            }
            _ => m.violation(format!("p{} entered without asking", self.me)),
        }
    }
    fn exited(&mut self) {
        let now = Instant::now();
        let mut m = self.monitor.lock().expect("monitor");
        match *self.phase {
            Phase::Inside(g) | Phase::Leaving(_, g) => {
                m.exit(self.me, g, now);
                drop(m);
                if let Phase::Leaving(since, _) = *self.phase {
                    self.tally
                        .wait(self.me, now.duration_since(since).as_secs_f64() * 1e3);
                    self.tally.entered(self.me);
                }
                *self.phase = Phase::Out;
                self.exited = true;
            }
            _ => m.violation(format!("p{} left while outside", self.me)),
        }
    }
}

/// One process: its state machine and everything its thread keeps.
pub(super) struct Process<'a, A: Algorithm> {
    me: Pid,
    alg: A,
    rx: Receiver<Envelope<A::Msg>>,
    sampler: Sampler,
    run: &'a RunConfig,
    shared: &'a Shared<A::Msg>,
    tally: Tally,
    delay_rng: Rng,
    work_rng: Rng,
    link_last: Vec<Instant>,
    timers: BinaryHeap<Reverse<(Instant, u64)>>,
    /// Held messages ordered by (delivery time, arrival order): FIFO per link is kept
    /// because a sender never gives a later message an earlier time.
    held: BinaryHeap<Reverse<(Instant, u64, usize)>>,
    slots: Vec<Option<Envelope<A::Msg>>>,
    free: Vec<usize>,
    arrival: u64,
    phase: Phase,
    entries: u64,
    counted_done: bool,
    /// When the application next asks to enter or to leave.
    app_at: Option<Instant>,
}

impl<'a, A: Algorithm> Process<'a, A> {
    /// Process `me` running `alg`, its inbox `rx`.
    pub(super) fn new(
        me: Pid,
        alg: A,
        rx: Receiver<Envelope<A::Msg>>,
        sampler: Sampler,
        run: &'a RunConfig,
        shared: &'a Shared<A::Msg>,
    ) -> Self {
        let n = run.setup.n;
        let mut work_rng = Rng::new(run.seed, 0x3C_0000 + me as u64);
        let phase = if alg.starts_inside() {
            Phase::Inside(0)
        } else {
            Phase::Out
        };
        let counted_done = run.requests == 0;
        if counted_done {
            shared.finished.fetch_add(1, Ordering::AcqRel);
        }
        let now0 = Instant::now();
        let app_at = Some(match phase {
            Phase::Inside(_) => now0 + ms(run.cs.sample(&mut work_rng)),
            _ => now0 + ms(run.ncs.sample(&mut work_rng)),
        });
        Process {
            me,
            alg,
            rx,
            sampler,
            run,
            shared,
            tally: Tally::new(n),
            delay_rng: Rng::new(run.seed, 0xD1_0000 + me as u64),
            work_rng,
            link_last: vec![shared.start; n],
            timers: BinaryHeap::new(),
            held: BinaryHeap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            arrival: 0,
            phase,
            entries: 0,
            counted_done,
            app_at,
        }
    }

    /// Runs until the run stops; the process's counts.
    pub(super) fn run(mut self) -> Tally {
        while !self.shared.stop.load(Ordering::Acquire) {
            let now = Instant::now();
            // Everything due now: held messages, timers, the application.
            if !self.step(now) {
                self.receive(now);
            }
        }
        self.tally.finish();
        self.tally
    }

    /// Runs one handler due at `now`, if any.
    fn step(&mut self, now: Instant) -> bool {
        if let Some(&Reverse((at, _, slot))) = self.held.peek() {
            if at <= now {
                self.held.pop();
                let env = self.slots[slot].take().expect("held message");
                self.free.push(slot);
                self.tally.received(env.from, self.me, &env.msg);
                self.shared.delivered.fetch_add(1, Ordering::Relaxed);
                self.handle(|alg, c| alg.on_message(c, env.from, env.msg));
                return true;
            }
        }
        if let Some(&Reverse((at, tag))) = self.timers.peek() {
            if at <= now {
                self.timers.pop();
                self.handle(|alg, c| alg.on_timer(c, tag));
                return true;
            }
        }
        match self.app_at {
            Some(at) if at <= now => {
                self.app_at = None;
                self.application(now);
                true
            }
            _ => false,
        }
    }

    /// The application asks to enter, or to leave.
    fn application(&mut self, now: Instant) {
        let monitor = &self.shared.monitor;
        match self.phase {
            Phase::Out => {
                let g = self.sampler.next();
                self.phase = Phase::Waiting(now, g);
                monitor.lock().expect("monitor").wait(self.me, now);
                self.tally.start_cycle(self.me);
                self.handle(|alg, c| alg.on_request(c, g));
            }
            Phase::Inside(g) => {
                if self.run.local() {
                    self.phase = Phase::Leaving(now, g);
                    monitor.lock().expect("monitor").wait(self.me, now);
                    self.tally.start_cycle(self.me);
                }
                self.handle(|alg, c| alg.on_exit(c));
            }
            _ => {}
        }
    }

    /// Runs one handler, then the application's next step.
    fn handle(&mut self, f: impl FnOnce(&mut A, &mut dyn Runtime<A::Msg>)) {
        let mut c = Ctx {
            me: self.me,
            n: self.run.setup.n,
            start: self.shared.start,
            senders: &self.shared.senders,
            delay: self.run.delay,
            rng: &mut self.delay_rng,
            link_last: &mut self.link_last,
            tally: &mut self.tally,
            monitor: &self.shared.monitor,
            timers: &mut self.timers,
            phase: &mut self.phase,
            entered: false,
            exited: false,
        };
        f(&mut self.alg, &mut c);
        let (entered, exited) = (c.entered, c.exited);
        self.after(entered, exited);
    }

    /// The application's next step after a handler: schedule leaving after an entry, the
    /// next request after an exit, and count the process finished at its quota.
    fn after(&mut self, entered: bool, exited: bool) {
        let run = self.run;
        let now = Instant::now();
        if entered {
            self.entries += 1;
            if self.entries >= run.requests && !self.counted_done {
                self.counted_done = true;
                self.shared.finished.fetch_add(1, Ordering::AcqRel);
            }
            self.app_at = Some(now + ms(run.cs.sample(&mut self.work_rng)));
        }
        if exited && (self.entries < run.requests || run.local()) {
            self.app_at = Some(now + ms(run.ncs.sample(&mut self.work_rng)));
        }
    }

    /// Sleeps until the next deadline or a message, and holds what arrived.
    fn receive(&mut self, now: Instant) {
        let mut next = now + Duration::from_millis(5);
        for t in [
            self.held.peek().map(|r| r.0 .0),
            self.timers.peek().map(|r| r.0 .0),
            self.app_at,
        ]
        .into_iter()
        .flatten()
        {
            next = next.min(t);
        }
        let wait = next.saturating_duration_since(now);
        let got = if wait.is_zero() {
            self.rx.try_recv().map_err(|_| RecvTimeoutError::Timeout)
        } else {
            self.rx.recv_timeout(wait)
        };
        let mut pending = got.ok();
        while let Some(env) = pending {
            self.arrival += 1;
            let slot = self.free.pop().unwrap_or_else(|| {
                self.slots.push(None);
                self.slots.len() - 1
            });
            self.held.push(Reverse((env.at, self.arrival, slot)));
            self.slots[slot] = Some(env);
            pending = self.rx.try_recv().ok();
        }
    }
}
