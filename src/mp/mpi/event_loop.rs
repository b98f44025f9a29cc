//! The event loop of one rank: it probes its inbox without blocking between its due
//! deliveries, timers and the application's steps, takes part in the shutdown protocol
//! (rank 0 runs it), drains what a stop left in flight, and sends rank 0 its report.

use std::collections::BinaryHeap;
use std::time::Instant;

use ::mpi::collective::SystemOperation;
use ::mpi::topology::SimpleCommunicator;
use ::mpi::traits::*;

use super::check::{CsInterval, WaitStart};
use super::clock::{env_us, sync_clock, NAP, SPIN_FOR};
use super::config::MpiConfig;
use super::rank::{ms, Ctx, Held, Phase, ProcState, Rank};
use super::report::{assemble, Report};
use super::result::MpiResult;
use super::shutdown::Coordinator;
use super::wire::{
    decode, words, FIRST_KIND_TAG, TAG_COUNTS, TAG_DONE, TAG_PROBE, TAG_QUIESCE, TAG_REPORT,
    TAG_STOP, TAG_STUCK,
};
use crate::mp::algo::Setup;
use crate::mp::metrics::Tally;
use crate::mp::{Algorithm, Pid, Runtime};
use crate::workload::rng::Rng;

/// One rank running its processes.
struct Loop<'a, 'w, A: Algorithm> {
    cfg: &'a MpiConfig,
    rk: Rank<'w, A::Msg>,
    algs: Vec<A>,
    procs: Vec<ProcState>,
    coord: Coordinator,
    size: usize,
    told_done: bool,
    quiescing: bool,
    stuck_told: bool,
    stop: bool,
}

/// Runs the algorithm built by `make` on this rank's processes; rank 0 gets the result.
pub(super) fn run<A: Algorithm>(
    world: &SimpleCommunicator,
    cfg: &MpiConfig,
    make: impl Fn(Pid, &Setup) -> A,
) -> anyhow::Result<Option<MpiResult>> {
    let n = cfg.run.setup.n;
    let size = world.size() as usize;
    let rank = world.rank() as usize;
    world.barrier();
    let epoch = Instant::now();
    let (offset_ms, clock_error_ms) = sync_clock(world, epoch);
    world.barrier();
    let start = Instant::now();
    let rk: Rank<A::Msg> = Rank {
        world,
        rank,
        ppr: cfg.procs_per_rank,
        n,
        epoch,
        offset_ms,
        delay: cfg.run.delay,
        held: BinaryHeap::new(),
        seq: 0,
        timers: BinaryHeap::new(),
        tally: Tally::new(n),
        report: Report {
            host: ::mpi::environment::processor_name().unwrap_or_else(|_| "?".into()),
            clock_error_ms,
            ..Report::default()
        },
        buf: Vec::new(),
        app_sent: 0,
        app_recv: 0,
        all_sent: 0,
        all_recv: 0,
    };
    let start_ms = rk.sync_ms(start);
    let mut lp = Loop::new(cfg, rk, size, start, make);
    lp.run()?;
    let end_ms = lp.rk.sync_ms(lp.coord.end.unwrap_or_else(Instant::now));
    lp.drain();
    lp.rk.tally.finish();
    let mut rk = lp.rk;
    let tally = std::mem::replace(&mut rk.tally, Tally::new(0));
    rk.report.counts_from(&tally);
    let root = world.process_at_rank(0);
    if rank != 0 {
        let bytes = serde_json::to_vec(&rk.report)?;
        root.send_with_tag(&bytes[..], TAG_REPORT);
        return Ok(None);
    }
    let mut reports = vec![std::mem::take(&mut rk.report)];
    for r in 1..size {
        let (bytes, _) = world
            .process_at_rank(r as i32)
            .receive_vec_with_tag::<u8>(TAG_REPORT);
        reports.push(serde_json::from_slice(&bytes)?);
    }
    let wall = start.elapsed().as_secs_f64();
    Ok(Some(assemble(
        cfg,
        reports,
        lp.coord.liveness,
        start_ms,
        end_ms,
        wall,
    )))
}

impl<'a, 'w, A: Algorithm> Loop<'a, 'w, A> {
    /// This rank's processes, built by `make`, at `start`.
    fn new(
        cfg: &'a MpiConfig,
        mut rk: Rank<'w, A::Msg>,
        size: usize,
        start: Instant,
        make: impl Fn(Pid, &Setup) -> A,
    ) -> Self {
        let run = &cfg.run;
        let (n, ppr, rank) = (run.setup.n, rk.ppr, rk.rank);
        let pids: Vec<Pid> = (rank * ppr..(rank + 1) * ppr).collect();
        let samplers = run.mix.samplers(n, run.seed).into_iter().skip(rank * ppr);
        let algs: Vec<A> = pids.iter().map(|&p| make(p, &run.setup)).collect();
        let mut procs: Vec<ProcState> = pids
            .iter()
            .zip(&algs)
            .zip(samplers)
            .map(|((&p, a), sampler)| {
                let mut work_rng = Rng::new(run.seed, 0x3C_0000 + p as u64);
                let inside = a.starts_inside();
                let first = if inside { run.cs } else { run.ncs }.sample(&mut work_rng);
                ProcState {
                    pid: p,
                    phase: if inside { Phase::Inside(0) } else { Phase::Out },
                    sampler,
                    work_rng,
                    delay_rng: Rng::new(run.seed, 0xD1_0000 + p as u64),
                    link_in: vec![start; n],
                    link_out: vec![start; n],
                    app_at: Some(start + ms(first)),
                    entries: 0,
                    open: None,
                }
            })
            .collect();
        for st in procs.iter_mut() {
            if st.phase == Phase::Inside(0) {
                st.open = Some(rk.report.intervals.len());
                rk.report.intervals.push(CsInterval {
                    p: st.pid,
                    group: 0,
                    enter: None,
                    exit: None,
                });
            }
        }
        Loop {
            cfg,
            rk,
            algs,
            procs,
            coord: Coordinator::default(),
            size,
            told_done: false,
            quiescing: false,
            stuck_told: false,
            stop: false,
        }
    }

    /// Runs until rank 0 says stop.
    fn run(&mut self) -> anyhow::Result<()> {
        let mut last_activity = Instant::now();
        let spin_for = env_us("LOCKBENCH_MPI_SPIN_US", SPIN_FOR);
        let nap_max = env_us("LOCKBENCH_MPI_NAP_US", NAP);
        while !self.stop {
            let mut active = self.inbox()?;
            let now = Instant::now();
            if self.rk.rank == 0 {
                let watchdog = self.cfg.run.watchdog;
                self.coord.step(&mut self.rk, now, self.size, watchdog);
            }
            if self.stop {
                break;
            }
            active |= self.deliver_due(now);
            active |= self.fire_timers(now);
            // The application: ask to enter, or to leave. Once quiescing, nothing new starts.
            if !self.quiescing {
                active |= self.application(now);
            }
            self.tell_done();
            if !self.quiescing && !self.stuck_told {
                self.watchdog(now);
            }
            // Nothing to do now: spin (yielding) for a while after activity, then nap until
            // the next deadline or for a short while, to probe the inbox again.
            if active {
                last_activity = Instant::now();
            } else {
                let now = Instant::now();
                if now.duration_since(last_activity) < spin_for {
                    std::thread::yield_now();
                } else {
                    self.nap(now, nap_max);
                }
            }
        }
        Ok(())
    }

    /// Takes everything in the inbox, without blocking; whether there was anything.
    fn inbox(&mut self) -> anyhow::Result<bool> {
        let rk = &mut self.rk;
        let (rank, ppr) = (rk.rank, rk.ppr);
        let mut active = false;
        while let Some(probed) = rk.world.any_process().immediate_matched_probe() {
            let (bytes, status) = probed.matched_receive_vec::<u8>();
            rk.all_recv += 1;
            active = true;
            let tag = status.tag();
            let from_rank = status.source_rank() as usize;
            if tag >= FIRST_KIND_TAG {
                rk.app_recv += 1;
                let (from, to, delay, msg) = decode(&bytes)?;
                let st = &mut self.procs[to - rank * ppr];
                let at = (Instant::now() + ms(delay)).max(st.link_in[from]);
                st.link_in[from] = at;
                rk.seq += 1;
                rk.held.push(Held {
                    at,
                    seq: rk.seq,
                    from,
                    to,
                    msg,
                });
                continue;
            }
            match tag {
                TAG_QUIESCE => self.quiescing = true,
                TAG_STOP => self.stop = true,
                TAG_PROBE => {
                    let w = words(&bytes)[0];
                    let busy = !rk.held.is_empty() || !rk.timers.is_empty();
                    let (s, r) = (rk.app_sent, rk.app_recv);
                    rk.control(0, TAG_COUNTS, &[w, s, r, busy as u64]);
                }
                _ if self.coord.receive(tag, &bytes) => {}
                _ => anyhow::bail!("rank {rank}: unexpected tag {tag} from rank {from_rank}"),
            }
        }
        Ok(active)
    }

    /// Runs the handler of process `li` that `f` calls, then the application's next step.
    fn handle(&mut self, li: usize, f: impl FnOnce(&mut A, &mut dyn Runtime<A::Msg>)) {
        let mut c = Ctx {
            me: self.procs[li].pid,
            li,
            rk: &mut self.rk,
            st: &mut self.procs[li],
            entered: false,
            exited: false,
        };
        f(&mut self.algs[li], &mut c);
        let (en, ex) = (c.entered, c.exited);
        self.procs[li].after(en, ex, &self.cfg.run);
    }

    /// Delivers the held messages due at `now`; whether there were any.
    fn deliver_due(&mut self, now: Instant) -> bool {
        let mut active = false;
        while self.rk.held.peek().is_some_and(|h| h.at <= now) {
            let h = self.rk.held.pop().expect("peeked");
            let li = h.to - self.rk.rank * self.rk.ppr;
            self.rk.tally.received(h.from, h.to, &h.msg);
            self.rk.report.delivered += 1;
            self.handle(li, |alg, c| alg.on_message(c, h.from, h.msg));
            active = true;
        }
        active
    }

    /// Fires the timers due at `now`; whether there were any.
    fn fire_timers(&mut self, now: Instant) -> bool {
        let mut active = false;
        while self.rk.timers.peek().is_some_and(|t| t.0 .0 <= now) {
            let std::cmp::Reverse((_, tag, li)) = self.rk.timers.pop().expect("peeked");
            self.handle(li, |alg, c| alg.on_timer(c, tag));
            active = true;
        }
        active
    }

    /// The application's steps due at `now`: ask to enter, or to leave; whether any was.
    fn application(&mut self, now: Instant) -> bool {
        let mut active = false;
        let local_cs = self.cfg.run.local();
        for li in 0..self.procs.len() {
            let Some(at) = self.procs[li].app_at else {
                continue;
            };
            if at > now {
                continue;
            }
            self.procs[li].app_at = None;
            active = true;
            let p = self.procs[li].pid;
            match self.procs[li].phase {
                Phase::Out => {
                    let g = self.procs[li].sampler.next();
                    self.procs[li].phase = Phase::Waiting(now, g);
                    self.ask(p, now);
                    self.handle(li, |alg, c| alg.on_request(c, g));
                }
                Phase::Inside(g) => {
                    if local_cs {
                        self.procs[li].phase = Phase::Leaving(now, g);
                        self.ask(p, now);
                    }
                    self.handle(li, |alg, c| alg.on_exit(c));
                }
                _ => {}
            }
        }
        active
    }

    /// Logs that `p` starts waiting at `now`.
    fn ask(&mut self, p: Pid, now: Instant) {
        let t = self.rk.sync_ms(now);
        self.rk.report.asks.push(WaitStart { p, at: t });
        self.rk.tally.start_cycle(p);
    }

    /// Tells rank 0 once every process has made its requests (and, but for local critical
    /// sections, is out again).
    fn tell_done(&mut self) {
        let (requests, local_cs) = (self.cfg.run.requests, self.cfg.run.local());
        if !self.told_done
            && self
                .procs
                .iter()
                .all(|st| st.entries >= requests && (local_cs || st.phase == Phase::Out))
        {
            self.told_done = true;
            self.rk.control(0, TAG_DONE, &[0]);
        }
    }

    /// The watchdog: tells rank 0 of the first process waiting past it.
    fn watchdog(&mut self, now: Instant) {
        let (rank, watchdog) = (self.rk.rank, self.cfg.run.watchdog);
        for st in &self.procs {
            if let Phase::Waiting(since, _) | Phase::Leaving(since, _) = st.phase {
                let waited = now.duration_since(since).as_secs_f64();
                if waited > watchdog {
                    self.stuck_told = true;
                    let what = format!(
                        "p{} (rank {rank}) waiting {} for {waited:.1} s (watchdog {} s)",
                        st.pid,
                        if matches!(st.phase, Phase::Leaving(..)) {
                            "to leave"
                        } else {
                            "to enter"
                        },
                        watchdog
                    );
                    let bytes = what.into_bytes();
                    self.rk
                        .world
                        .process_at_rank(0)
                        .buffered_send_with_tag(&bytes[..], TAG_STUCK);
                    self.rk.all_sent += 1;
                    break;
                }
            }
        }
    }

    /// Naps until the next deadline, for at most `nap_max`.
    fn nap(&self, now: Instant, nap_max: std::time::Duration) {
        let mut nap = nap_max;
        for t in [
            self.rk.held.peek().map(|h| h.at),
            self.rk.timers.peek().map(|t| t.0 .0),
        ]
        .into_iter()
        .flatten()
        .chain(self.procs.iter().filter_map(|st| st.app_at))
        {
            nap = nap.min(t.saturating_duration_since(now));
        }
        if !nap.is_zero() {
            std::thread::sleep(nap);
        }
    }

    /// Drains whatever a stop left in flight, until the counts agree everywhere.
    fn drain(&mut self) {
        let world = self.rk.world;
        loop {
            while let Some(probed) = world.any_process().immediate_matched_probe() {
                let _ = probed.matched_receive_vec::<u8>();
                self.rk.all_recv += 1;
            }
            let local = self.rk.all_sent as i64 - self.rk.all_recv as i64;
            let mut total = 0i64;
            world.all_reduce_into(&local, &mut total, SystemOperation::sum());
            if total == 0 {
                break;
            }
        }
    }
}
