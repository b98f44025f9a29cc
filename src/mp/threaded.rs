//! The threaded runtime: one OS thread per process (pinned to the allowed CPUs in turn, with
//! the shared-memory runner's helpers), unbounded channels between them, real time in
//! milliseconds. Channel delays are drawn as in the simulator and honoured by holding a message
//! in the receiver until its delivery time (FIFO per link). A monitor under a mutex sees every
//! entry and exit in causal order (an exit is recorded before the messages it enables are
//! sent), so the safety check is exact.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::algo::Setup;
use super::metrics::{MpResult, Tally};
use super::workload::Dist;
use super::{Algorithm, Group, Message, Pid, Problem, Runtime};
use crate::runner::topology::{allowed_cpus, pin_current_thread};
use crate::workload::rng::Rng;
use crate::workload::Mix;

/// A threaded run.
#[derive(Clone, Debug)]
pub struct ThreadConfig {
    /// Algorithm name.
    pub algo: String,
    /// The problem (safety check).
    pub problem: Problem,
    /// Processes, graph, bounds.
    pub setup: Setup,
    /// Critical sections per process.
    pub requests: u64,
    /// Seed.
    pub seed: u64,
    /// Inter-request time, ms.
    pub ncs: Dist,
    /// CS time, ms.
    pub cs: Dist,
    /// Channel delay, ms.
    pub delay: Dist,
    /// Group selection.
    pub mix: Mix,
    /// Pin threads.
    pub pin: bool,
    /// Seconds a request may wait before the run is declared stuck.
    pub watchdog: f64,
}

struct Envelope<M> {
    from: Pid,
    at: Instant,
    msg: M,
}

/// The global view: who is inside, for the checks and the shared figures.
struct Monitor {
    problem: Problem,
    inside: usize,
    by_group: Vec<usize>,
    groups_inside: usize,
    closed: Vec<Vec<Pid>>,
    count_in: Vec<usize>,
    l: Vec<usize>,
    k: Vec<usize>,
    waiting_since: Vec<Option<Instant>>,
    waiting: usize,
    empty_since: Option<Instant>,
    sync_sum: f64,
    sync_count: u64,
    sync_max: f64,
    last_change: Instant,
    integral: f64,
    busy: f64,
    inside_max: usize,
    completed: u64,
    violations: u64,
    described: Vec<String>,
}

impl Monitor {
    fn tick(&mut self, now: Instant) {
        let dt = now.duration_since(self.last_change).as_secs_f64() * 1e3;
        if self.inside > 0 {
            self.integral += dt * self.inside as f64;
            self.busy += dt;
        }
        self.last_change = now;
    }

    fn violation(&mut self, what: String) {
        self.violations += 1;
        if self.described.len() < 5 {
            self.described.push(what);
        }
    }

    fn local(&mut self, p: Pid, entering: bool) {
        for i in 0..self.closed[p].len() {
            let u = self.closed[p][i];
            if entering {
                self.count_in[u] += 1;
                if self.count_in[u] > self.k[u] {
                    let c = self.count_in[u];
                    self.violation(format!("|CS_{u}| = {c} > k"));
                }
            } else {
                self.count_in[u] -= 1;
                if self.count_in[u] < self.l[u] {
                    let c = self.count_in[u];
                    self.violation(format!("|CS_{u}| = {c} < l"));
                }
            }
        }
    }

    fn enter(&mut self, p: Pid, g: Group, now: Instant) {
        self.tick(now);
        if self.waiting_since[p].take().is_some() {
            self.waiting -= 1;
        }
        if let Some(t0) = self.empty_since.take() {
            let d = now.duration_since(t0).as_secs_f64() * 1e3;
            self.sync_sum += d;
            self.sync_count += 1;
            self.sync_max = self.sync_max.max(d);
        }
        match self.problem {
            Problem::Mutex if self.inside > 0 => {
                self.violation(format!("p{p} entered with {} inside", self.inside))
            }
            Problem::Gme => {
                if self.groups_inside > 0 && self.by_group[g] == 0 {
                    self.violation(format!("p{p} entered group {g} beside another group"));
                }
                if self.by_group[g] == 0 {
                    self.groups_inside += 1;
                }
                self.by_group[g] += 1;
            }
            Problem::LocalCs => self.local(p, true),
            _ => {}
        }
        self.inside += 1;
        self.inside_max = self.inside_max.max(self.inside);
    }

    fn exit(&mut self, p: Pid, g: Group, now: Instant) {
        self.tick(now);
        if self.waiting_since[p].take().is_some() {
            self.waiting -= 1;
        }
        self.inside -= 1;
        self.completed += 1;
        match self.problem {
            Problem::Gme => {
                self.by_group[g] -= 1;
                if self.by_group[g] == 0 {
                    self.groups_inside -= 1;
                }
            }
            Problem::LocalCs => self.local(p, false),
            Problem::Mutex => {}
        }
        if self.inside == 0 && self.waiting > 0 && self.problem != Problem::LocalCs {
            self.empty_since = Some(now);
        }
    }

    fn wait(&mut self, p: Pid, now: Instant) {
        if self.waiting_since[p].is_none() {
            self.waiting += 1;
        }
        self.waiting_since[p] = Some(now);
    }
}

/// What one process's application is doing.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    Out,
    Waiting(Instant, Group),
    Inside(Group),
    Leaving(Instant, Group),
}

struct Ctx<'a, M> {
    me: Pid,
    n: usize,
    start: Instant,
    senders: &'a [Sender<Envelope<M>>],
    delay: Dist,
    rng: &'a mut Rng,
    link_last: &'a mut [Instant],
    tally: &'a mut Tally,
    monitor: &'a Mutex<Monitor>,
    timers: &'a mut BinaryHeap<Reverse<(Instant, u64)>>,
    phase: &'a mut Phase,
    entered: bool,
    exited: bool,
}

fn ms(x: f64) -> Duration {
    Duration::from_secs_f64(x.max(0.0) / 1e3)
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

/// Runs the algorithm built by `make` on one thread per process.
pub fn run<A: Algorithm + 'static>(
    cfg: &ThreadConfig,
    make: impl Fn(Pid, &Setup) -> A,
) -> anyhow::Result<MpResult> {
    let s = &cfg.setup;
    let n = s.n;
    let procs: Vec<A> = (0..n).map(|p| make(p, s)).collect();
    let local = cfg.problem == Problem::LocalCs;
    let closed: Vec<Vec<Pid>> = if local {
        (0..n)
            .map(|p| {
                let mut c = s.graph.neighbours(p).to_vec();
                c.push(p);
                c
            })
            .collect()
    } else {
        Vec::new()
    };
    let start = Instant::now();
    let mut mon = Monitor {
        problem: cfg.problem,
        inside: 0,
        by_group: vec![0; cfg.mix.sessions(n).max(s.m)],
        groups_inside: 0,
        count_in: vec![0; n],
        closed,
        l: s.l.clone(),
        k: s.k.clone(),
        waiting_since: vec![None; n],
        waiting: 0,
        empty_since: None,
        sync_sum: 0.0,
        sync_count: 0,
        sync_max: 0.0,
        last_change: start,
        integral: 0.0,
        busy: 0.0,
        inside_max: 0,
        completed: 0,
        violations: 0,
        described: Vec::new(),
    };
    for (p, a) in procs.iter().enumerate() {
        if a.starts_inside() {
            mon.inside += 1;
            if local {
                for i in 0..mon.closed[p].len() {
                    let u = mon.closed[p][i];
                    mon.count_in[u] += 1;
                }
            }
        }
    }
    let monitor = Arc::new(Mutex::new(mon));
    let stop = Arc::new(AtomicBool::new(false));
    let finished = Arc::new(AtomicUsize::new(0));
    let (senders, receivers): (Vec<_>, Vec<_>) =
        (0..n).map(|_| channel::<Envelope<A::Msg>>()).unzip();
    let senders = Arc::new(senders);
    let cpus = if cfg.pin {
        allowed_cpus().unwrap_or_default()
    } else {
        Vec::new()
    };
    let samplers = cfg.mix.samplers(n, cfg.seed);
    let delivered = Arc::new(AtomicUsize::new(0));
    let mut handles = Vec::new();
    for ((p, (alg, rx)), sampler) in procs.into_iter().zip(receivers).enumerate().zip(samplers) {
        let cfg = cfg.clone();
        let senders = Arc::clone(&senders);
        let monitor = Arc::clone(&monitor);
        let stop = Arc::clone(&stop);
        let finished = Arc::clone(&finished);
        let delivered = Arc::clone(&delivered);
        let cpu = (!cpus.is_empty()).then(|| cpus[p % cpus.len()]);
        handles.push(std::thread::spawn(move || {
            if let Some(c) = cpu {
                // Pinning is best effort: an unpinned process still runs correctly.
                let _ = pin_current_thread(c);
            }
            process_loop(
                p, alg, rx, sampler, &cfg, &senders, &monitor, &stop, &finished, &delivered, start,
            )
        }));
    }
    // Watchdog.
    let mut liveness = None;
    while finished.load(Ordering::Acquire) < n {
        std::thread::sleep(Duration::from_millis(20));
        let m = monitor.lock().expect("monitor");
        let now = Instant::now();
        if let Some((p, since)) = m
            .waiting_since
            .iter()
            .enumerate()
            .filter_map(|(p, w)| w.map(|w| (p, w)))
            .find(|(_, w)| now.duration_since(*w).as_secs_f64() > cfg.watchdog)
        {
            liveness = Some(format!(
                "p{p} waiting for {:.1} s (watchdog {} s); {} waiting, {} inside",
                now.duration_since(since).as_secs_f64(),
                cfg.watchdog,
                m.waiting,
                m.inside
            ));
            break;
        }
    }
    stop.store(true, Ordering::Release);
    let mut tally = Tally::new(n);
    for h in handles {
        let t = h
            .join()
            .map_err(|_| anyhow::anyhow!("a process thread panicked"))?;
        tally.absorb(&t);
    }
    let elapsed = start.elapsed();
    let mut m = monitor.lock().expect("monitor");
    m.tick(Instant::now());
    tally.sync_sum = m.sync_sum;
    tally.sync_count = m.sync_count;
    tally.sync_max = m.sync_max;
    tally.completed = m.completed;
    tally.inside_integral = m.integral;
    tally.busy_time = m.busy;
    tally.inside_max = m.inside_max;
    let mut r = MpResult {
        algo: cfg.algo.clone(),
        runtime: "threaded".into(),
        n,
        m: s.m,
        requests_per_process: cfg.requests,
        seed: cfg.seed,
        topology: if local {
            "graph".into()
        } else {
            "complete".into()
        },
        delay: cfg.delay.to_string(),
        ncs: cfg.ncs.to_string(),
        cs: cfg.cs.to_string(),
        mix: cfg.mix.to_string(),
        fifo: true,
        events: delivered.load(Ordering::Relaxed) as u64,
        wall_seconds: elapsed.as_secs_f64(),
        safety_violations: m.violations,
        violations: m.described.clone(),
        liveness_failure: liveness,
        starvation_sessions_max: None,
        // The figures: filled by `figures` below.
        ..MpResult::default()
    };
    r.figures(&tally, elapsed.as_secs_f64() * 1e3, !local);
    Ok(r)
}

#[allow(clippy::too_many_arguments)]
fn process_loop<A: Algorithm>(
    me: Pid,
    mut alg: A,
    rx: Receiver<Envelope<A::Msg>>,
    mut sampler: crate::workload::Sampler,
    cfg: &ThreadConfig,
    senders: &[Sender<Envelope<A::Msg>>],
    monitor: &Mutex<Monitor>,
    stop: &AtomicBool,
    finished: &AtomicUsize,
    delivered: &AtomicUsize,
    start: Instant,
) -> Tally {
    let n = cfg.setup.n;
    let local = cfg.problem == Problem::LocalCs;
    let mut tally = Tally::new(n);
    let mut delay_rng = Rng::new(cfg.seed, 0xD1_0000 + me as u64);
    let mut work_rng = Rng::new(cfg.seed, 0x3C_0000 + me as u64);
    let mut link_last = vec![start; n];
    let mut timers: BinaryHeap<Reverse<(Instant, u64)>> = BinaryHeap::new();
    // Held messages ordered by (delivery time, arrival order): FIFO per link is kept because a
    // sender never gives a later message an earlier time.
    let mut held: BinaryHeap<Reverse<(Instant, u64, usize)>> = BinaryHeap::new();
    let mut slots: Vec<Option<Envelope<A::Msg>>> = Vec::new();
    let mut free: Vec<usize> = Vec::new();
    let mut arrival = 0u64;
    let mut phase = if alg.starts_inside() {
        Phase::Inside(0)
    } else {
        Phase::Out
    };
    let mut entries = 0u64;
    let mut counted_done = cfg.requests == 0;
    if counted_done {
        finished.fetch_add(1, Ordering::AcqRel);
    }
    let now0 = Instant::now();
    let mut app_at: Option<Instant> = Some(match phase {
        Phase::Inside(_) => now0 + ms(cfg.cs.sample(&mut work_rng)),
        _ => now0 + ms(cfg.ncs.sample(&mut work_rng)),
    });
    macro_rules! ctx {
        () => {
            Ctx {
                me,
                n,
                start,
                senders,
                delay: cfg.delay,
                rng: &mut delay_rng,
                link_last: &mut link_last,
                tally: &mut tally,
                monitor,
                timers: &mut timers,
                phase: &mut phase,
                entered: false,
                exited: false,
            }
        };
    }
    while !stop.load(Ordering::Acquire) {
        let now = Instant::now();
        // Everything due now: held messages, timers, the application.
        if let Some(&Reverse((at, _, slot))) = held.peek() {
            if at <= now {
                held.pop();
                let env = slots[slot].take().expect("held message");
                free.push(slot);
                tally.received(env.from, me, &env.msg);
                delivered.fetch_add(1, Ordering::Relaxed);
                let mut c = ctx!();
                alg.on_message(&mut c, env.from, env.msg);
                let (en, ex) = (c.entered, c.exited);
                after(
                    en,
                    ex,
                    &mut app_at,
                    &mut entries,
                    &mut counted_done,
                    cfg,
                    &mut work_rng,
                    finished,
                    local,
                );
                continue;
            }
        }
        if let Some(&Reverse((at, tag))) = timers.peek() {
            if at <= now {
                timers.pop();
                let mut c = ctx!();
                alg.on_timer(&mut c, tag);
                let (en, ex) = (c.entered, c.exited);
                after(
                    en,
                    ex,
                    &mut app_at,
                    &mut entries,
                    &mut counted_done,
                    cfg,
                    &mut work_rng,
                    finished,
                    local,
                );
                continue;
            }
        }
        if let Some(at) = app_at {
            if at <= now {
                app_at = None;
                match phase {
                    Phase::Out => {
                        let g = sampler.next();
                        phase = Phase::Waiting(now, g);
                        monitor.lock().expect("monitor").wait(me, now);
                        tally.start_cycle(me);
                        let mut c = ctx!();
                        alg.on_request(&mut c, g);
                        let (en, ex) = (c.entered, c.exited);
                        after(
                            en,
                            ex,
                            &mut app_at,
                            &mut entries,
                            &mut counted_done,
                            cfg,
                            &mut work_rng,
                            finished,
                            local,
                        );
                    }
                    Phase::Inside(g) => {
                        if local {
                            phase = Phase::Leaving(now, g);
                            monitor.lock().expect("monitor").wait(me, now);
                            tally.start_cycle(me);
                        }
                        let mut c = ctx!();
                        alg.on_exit(&mut c);
                        let (en, ex) = (c.entered, c.exited);
                        after(
                            en,
                            ex,
                            &mut app_at,
                            &mut entries,
                            &mut counted_done,
                            cfg,
                            &mut work_rng,
                            finished,
                            local,
                        );
                    }
                    _ => {}
                }
                continue;
            }
        }
        // Sleep until the next deadline or a message.
        let mut next = now + Duration::from_millis(5);
        for t in [
            held.peek().map(|r| r.0 .0),
            timers.peek().map(|r| r.0 .0),
            app_at,
        ]
        .into_iter()
        .flatten()
        {
            next = next.min(t);
        }
        let wait = next.saturating_duration_since(now);
        let got = if wait.is_zero() {
            rx.try_recv().map_err(|_| RecvTimeoutError::Timeout)
        } else {
            rx.recv_timeout(wait)
        };
        if let Ok(env) = got {
            let mut pending = Some(env);
            while let Some(env) = pending {
                arrival += 1;
                let slot = free.pop().unwrap_or_else(|| {
                    slots.push(None);
                    slots.len() - 1
                });
                held.push(Reverse((env.at, arrival, slot)));
                slots[slot] = Some(env);
                pending = rx.try_recv().ok();
            }
        }
    }
    tally.finish();
    tally
}

/// The application's next step after a handler: schedule leaving after an entry, the next
/// request after an exit, and count the process finished at its quota.
#[allow(clippy::too_many_arguments)]
fn after(
    entered: bool,
    exited: bool,
    app_at: &mut Option<Instant>,
    entries: &mut u64,
    counted_done: &mut bool,
    cfg: &ThreadConfig,
    rng: &mut Rng,
    finished: &AtomicUsize,
    local: bool,
) {
    let now = Instant::now();
    if entered {
        *entries += 1;
        if *entries >= cfg.requests && !*counted_done {
            *counted_done = true;
            finished.fetch_add(1, Ordering::AcqRel);
        }
        *app_at = Some(now + ms(cfg.cs.sample(rng)));
    }
    if exited && (*entries < cfg.requests || local) {
        *app_at = Some(now + ms(cfg.ncs.sample(rng)));
    }
}
