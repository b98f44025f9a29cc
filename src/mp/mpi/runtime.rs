//! The MPI event loop of one rank, the clock synchronisation, the shutdown protocol, and
//! `mp-run --runtime mpi` (see the module above for the design).

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

use ::mpi::collective::SystemOperation;
use ::mpi::topology::SimpleCommunicator;
use ::mpi::traits::*;
use serde::{Deserialize, Serialize};

use super::check::{self, CsInterval, Spec, WaitStart};
use super::{decode, encode, kind_tag, MpiResult, FIRST_KIND_TAG};
use crate::error::UsageError;
use crate::mp::algo::{self, Setup};
use crate::mp::metrics::{MpResult, Tally};
use crate::mp::model::Model;
use crate::mp::output;
use crate::mp::run_config::RunConfig;
use crate::mp::workload::Dist;
use crate::mp::{Algorithm, Group, Message, Observation, Pid, Problem, Runtime};
use crate::opts::Format;
use crate::workload::rng::Rng;
use crate::workload::Sampler;

const TAG_PING: i32 = 1;
const TAG_PONG: i32 = 2;
const TAG_DONE: i32 = 3;
const TAG_QUIESCE: i32 = 4;
const TAG_PROBE: i32 = 5;
const TAG_COUNTS: i32 = 6;
const TAG_STOP: i32 = 7;
const TAG_STUCK: i32 = 8;
const TAG_REPORT: i32 = 9;

/// Ping-pong exchanges with rank 0 per rank.
const SYNC_EXCHANGES: usize = 32;
/// The buffer `MPI_Bsend` copies into (allocated lazily by the OS as it is touched).
const BSEND_BUFFER: usize = 256 << 20;
/// Busy-poll (yielding) this long after the last activity before napping between probes;
/// `LOCKBENCH_MPI_SPIN_US` overrides it. MPI cannot wake a rank on a message, so a napping rank
/// sees one only when its nap ends; but a rank that spins on cores shared with other ranks or
/// work holds the core its peer needs and is itself descheduled for whole time slices. On the
/// loaded 2-core host of the README's figures, napping at once beat spinning for 50 µs, 200 µs
/// and 5 ms at 4 ranks (2–5x less time per message); on dedicated cores, spin.
const SPIN_FOR: Duration = Duration::ZERO;
/// The longest nap between probes when idle (timer slack is set to 1 µs, so it is kept);
/// `LOCKBENCH_MPI_NAP_US` overrides it.
const NAP: Duration = Duration::from_micros(20);

/// A duration in µs from the environment variable `var`, else `default`.
fn env_us(var: &str, default: Duration) -> Duration {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(default, Duration::from_micros)
}
/// Time between two waves of counts.
const WAVE_GAP: Duration = Duration::from_millis(1);

/// One run on the MPI runtime: the run (times in ms, the watchdog in seconds; the channel
/// delay is added to the network's own), and how many processes each rank runs.
#[derive(Clone, Debug)]
pub struct MpiConfig {
    /// The run.
    pub run: RunConfig,
    /// Processes per rank.
    pub procs_per_rank: usize,
}

/// What a rank sends rank 0 at the end of a run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Report {
    host: String,
    clock_error_ms: f64,
    kinds: Vec<(String, u64, u64)>,
    messages: u64,
    self_messages: u64,
    ints: u64,
    per_request_max: u64,
    per_request_max_with_self: u64,
    requests: u64,
    /// (process, waiting time in ms of its own clock).
    waits: Vec<(Pid, f64)>,
    intervals: Vec<CsInterval>,
    asks: Vec<WaitStart>,
    delivered: u64,
    violations: u64,
    described: Vec<String>,
    liveness: Option<String>,
    sessions_waited_max: Option<u64>,
}

/// What one process's application is doing.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Phase {
    Out,
    Waiting(Instant, Group),
    Inside(Group),
    Leaving(Instant, Group),
}

/// A message held until its delivery time.
struct Held<M> {
    at: Instant,
    seq: u64,
    from: Pid,
    to: Pid,
    msg: M,
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
struct ProcState {
    pid: Pid,
    phase: Phase,
    sampler: Sampler,
    work_rng: Rng,
    delay_rng: Rng,
    /// Last delivery time per link into (remote senders) or out of (local receivers) this
    /// process, by the other end's id.
    link_in: Vec<Instant>,
    link_out: Vec<Instant>,
    app_at: Option<Instant>,
    entries: u64,
    open: Option<usize>,
}

/// The rank's state shared by its processes.
struct Rank<'w, M> {
    world: &'w SimpleCommunicator,
    rank: usize,
    ppr: usize,
    n: usize,
    epoch: Instant,
    offset_ms: f64,
    delay: Dist,
    held: BinaryHeap<Held<M>>,
    seq: u64,
    timers: BinaryHeap<Reverse<(Instant, u64, usize)>>,
    tally: Tally,
    report: Report,
    buf: Vec<u8>,
    app_sent: u64,
    app_recv: u64,
    all_sent: u64,
    all_recv: u64,
}

impl<M: Message> Rank<'_, M> {
    /// `t` in ms of the synchronised clock.
    fn sync_ms(&self, t: Instant) -> f64 {
        t.duration_since(self.epoch).as_secs_f64() * 1e3 + self.offset_ms
    }

    fn violation(&mut self, what: String) {
        self.report.violations += 1;
        if self.report.described.len() < 5 {
            self.report.described.push(what);
        }
    }

    /// A runtime control message (counted for the final drain).
    fn control(&mut self, to: usize, tag: i32, words: &[u64]) {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.world
            .process_at_rank(to as i32)
            .buffered_send_with_tag(&bytes[..], tag);
        self.all_sent += 1;
    }
}

fn words(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect()
}

fn ms(x: f64) -> Duration {
    Duration::from_secs_f64(x.max(0.0) / 1e3)
}

struct Ctx<'a, 'w, M> {
    me: Pid,
    li: usize,
    rk: &'a mut Rank<'w, M>,
    st: &'a mut ProcState,
    entered: bool,
    exited: bool,
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

/// Receives the next message with `tag` from `peer`, yielding the core between probes (MPI's
/// own blocking receive spins, which on a shared core delays the very peer it waits for).
fn receive_yielding(peer: &::mpi::topology::Process<'_>, tag: i32) -> Vec<u8> {
    loop {
        if let Some(m) = peer.immediate_matched_probe_with_tag(tag) {
            return m.matched_receive_vec::<u8>().0;
        }
        std::thread::yield_now();
    }
}

/// Estimates this rank's clock offset to rank 0 (ms to add to a local reading) and its error
/// bound (ms), by ping-pong; rank 0 serves every other rank in turn, and a rank waits for its
/// turn napping, not spinning, so that the two in the exchange have the cores.
fn sync_clock(world: &SimpleCommunicator, epoch: Instant) -> (f64, f64) {
    let rank = world.rank();
    let local = || epoch.elapsed().as_secs_f64() * 1e3;
    if rank == 0 {
        for r in 1..world.size() {
            let peer = world.process_at_rank(r);
            peer.send_with_tag(&[0u8][..], TAG_PONG);
            for _ in 0..SYNC_EXCHANGES {
                let _ = receive_yielding(&peer, TAG_PING);
                let t = local().to_le_bytes();
                peer.send_with_tag(&t[..], TAG_PONG);
            }
            // The rank's last word: it is done, and naps again.
            let _ = peer.receive_vec_with_tag::<u8>(TAG_PING);
        }
        return (0.0, 0.0);
    }
    let zero = world.process_at_rank(0);
    // Our turn.
    loop {
        if let Some(m) = zero.immediate_matched_probe_with_tag(TAG_PONG) {
            let _ = m.matched_receive_vec::<u8>();
            break;
        }
        std::thread::sleep(NAP);
    }
    let (mut best_rtt, mut offset) = (f64::INFINITY, 0.0);
    for _ in 0..SYNC_EXCHANGES {
        let t1 = local();
        zero.send_with_tag(&[0u8][..], TAG_PING);
        let pong = receive_yielding(&zero, TAG_PONG);
        let t2 = local();
        let t0 = f64::from_le_bytes(pong[..8].try_into().expect("a time"));
        if t2 - t1 < best_rtt {
            best_rtt = t2 - t1;
            offset = t0 - (t1 + t2) / 2.0;
        }
    }
    zero.send_with_tag(&[0u8][..], TAG_PING);
    (offset, best_rtt / 2.0)
}

/// Rank 0's side of the shutdown protocol.
#[derive(Default)]
struct Coordinator {
    done: usize,
    quiesced: bool,
    wave: u64,
    replies: usize,
    sums: (u64, u64),
    busy: bool,
    previous: Option<(u64, u64)>,
    next_wave: Option<Instant>,
    stopped: bool,
    liveness: Option<String>,
    end: Option<Instant>,
    quiesced_at: Option<Instant>,
}

/// Runs the algorithm built by `make` on this rank's processes; rank 0 gets the result.
pub fn run<A: Algorithm>(
    world: &SimpleCommunicator,
    cfg: &MpiConfig,
    make: impl Fn(Pid, &Setup) -> A,
) -> anyhow::Result<Option<MpiResult>> {
    let s = &cfg.run.setup;
    let n = s.n;
    let size = world.size() as usize;
    let rank = world.rank() as usize;
    let ppr = cfg.procs_per_rank;
    let local_cs = cfg.run.problem == Problem::LocalCs;
    world.barrier();
    let epoch = Instant::now();
    let (offset_ms, clock_error_ms) = sync_clock(world, epoch);
    world.barrier();
    let start = Instant::now();
    let mut rk: Rank<A::Msg> = Rank {
        world,
        rank,
        ppr,
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
    let pids: Vec<Pid> = (rank * ppr..(rank + 1) * ppr).collect();
    let samplers = cfg
        .run
        .mix
        .samplers(n, cfg.run.seed)
        .into_iter()
        .skip(rank * ppr);
    let mut algs: Vec<A> = pids.iter().map(|&p| make(p, s)).collect();
    let mut procs: Vec<ProcState> = pids
        .iter()
        .zip(&algs)
        .zip(samplers)
        .map(|((&p, a), sampler)| {
            let mut work_rng = Rng::new(cfg.run.seed, 0x3C_0000 + p as u64);
            let inside = a.starts_inside();
            let first = if inside { cfg.run.cs } else { cfg.run.ncs }.sample(&mut work_rng);
            ProcState {
                pid: p,
                phase: if inside { Phase::Inside(0) } else { Phase::Out },
                sampler,
                work_rng,
                delay_rng: Rng::new(cfg.run.seed, 0xD1_0000 + p as u64),
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
    let mut coord = Coordinator::default();
    let mut told_done = false;
    let mut quiescing = false;
    let mut stuck_told = false;
    let mut last_activity = Instant::now();
    let mut stop = false;
    let spin_for = env_us("LOCKBENCH_MPI_SPIN_US", SPIN_FOR);
    let nap_max = env_us("LOCKBENCH_MPI_NAP_US", NAP);
    while !stop {
        let mut active = false;
        // The inbox, without blocking.
        while let Some(probed) = world.any_process().immediate_matched_probe() {
            let (bytes, status) = probed.matched_receive_vec::<u8>();
            rk.all_recv += 1;
            active = true;
            let tag = status.tag();
            let from_rank = status.source_rank() as usize;
            if tag >= FIRST_KIND_TAG {
                rk.app_recv += 1;
                let (from, to, delay, msg): (Pid, Pid, f64, A::Msg) = decode(&bytes)?;
                let li = to - rank * ppr;
                let st = &mut procs[li];
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
                TAG_QUIESCE => quiescing = true,
                TAG_STOP => stop = true,
                TAG_PROBE => {
                    let w = words(&bytes)[0];
                    let busy = !rk.held.is_empty() || !rk.timers.is_empty();
                    let (s, r) = (rk.app_sent, rk.app_recv);
                    rk.control(0, TAG_COUNTS, &[w, s, r, busy as u64]);
                }
                TAG_DONE => coord.done += 1,
                TAG_COUNTS => {
                    let c = words(&bytes);
                    if c[0] == coord.wave {
                        coord.replies += 1;
                        coord.sums.0 += c[1];
                        coord.sums.1 += c[2];
                        coord.busy |= c[3] != 0;
                    }
                }
                TAG_STUCK => {
                    if coord.liveness.is_none() {
                        coord.liveness = Some(String::from_utf8_lossy(&bytes).into_owned());
                    }
                }
                _ => anyhow::bail!("rank {rank}: unexpected tag {tag} from rank {from_rank}"),
            }
        }
        let now = Instant::now();
        // Rank 0: the shutdown protocol.
        if rank == 0 && !coord.stopped {
            if coord
                .quiesced_at
                .is_some_and(|t| now.duration_since(t).as_secs_f64() > cfg.run.watchdog)
            {
                coord.liveness = Some(format!(
                    "messages still moving {} s after the last request (watchdog): the processes never fell quiet",
                    cfg.run.watchdog
                ));
            }
            if coord.liveness.is_some() {
                coord.stopped = true;
                coord.end = Some(now);
                for r in 0..size {
                    rk.control(r, TAG_STOP, &[0]);
                }
            } else if coord.done == size && !coord.quiesced {
                coord.quiesced = true;
                coord.quiesced_at = Some(now);
                for r in 0..size {
                    rk.control(r, TAG_QUIESCE, &[0]);
                }
                coord.next_wave = Some(now);
            } else if coord.quiesced && coord.replies == size {
                let sums = coord.sums;
                let settled = !coord.busy && sums.0 == sums.1;
                if settled && coord.previous == Some(sums) {
                    coord.stopped = true;
                    coord.end = Some(now);
                    for r in 0..size {
                        rk.control(r, TAG_STOP, &[0]);
                    }
                } else {
                    coord.previous = settled.then_some(sums);
                    coord.next_wave = Some(now + WAVE_GAP);
                    coord.replies = 0;
                }
            }
            if let Some(at) = coord.next_wave {
                if at <= now && !coord.stopped {
                    coord.next_wave = None;
                    coord.wave += 1;
                    coord.replies = 0;
                    coord.sums = (0, 0);
                    coord.busy = false;
                    for r in 0..size {
                        rk.control(r, TAG_PROBE, &[coord.wave]);
                    }
                }
            }
        }
        if stop {
            break;
        }
        // Due deliveries.
        while rk.held.peek().is_some_and(|h| h.at <= now) {
            let h = rk.held.pop().expect("peeked");
            let li = h.to - rank * ppr;
            rk.tally.received(h.from, h.to, &h.msg);
            rk.report.delivered += 1;
            let mut c = Ctx {
                me: h.to,
                li,
                rk: &mut rk,
                st: &mut procs[li],
                entered: false,
                exited: false,
            };
            algs[li].on_message(&mut c, h.from, h.msg);
            let (en, ex) = (c.entered, c.exited);
            after(&mut procs[li], en, ex, cfg, local_cs);
            active = true;
        }
        // Due timers.
        while rk.timers.peek().is_some_and(|t| t.0 .0 <= now) {
            let Reverse((_, tag, li)) = rk.timers.pop().expect("peeked");
            let mut c = Ctx {
                me: procs[li].pid,
                li,
                rk: &mut rk,
                st: &mut procs[li],
                entered: false,
                exited: false,
            };
            algs[li].on_timer(&mut c, tag);
            let (en, ex) = (c.entered, c.exited);
            after(&mut procs[li], en, ex, cfg, local_cs);
            active = true;
        }
        // The application: ask to enter, or to leave. Once quiescing, nothing new starts.
        if !quiescing {
            for li in 0..procs.len() {
                let Some(at) = procs[li].app_at else { continue };
                if at > now {
                    continue;
                }
                procs[li].app_at = None;
                active = true;
                let p = procs[li].pid;
                match procs[li].phase {
                    Phase::Out => {
                        let g = procs[li].sampler.next();
                        procs[li].phase = Phase::Waiting(now, g);
                        let t = rk.sync_ms(now);
                        rk.report.asks.push(WaitStart { p, at: t });
                        rk.tally.start_cycle(p);
                        let mut c = Ctx {
                            me: p,
                            li,
                            rk: &mut rk,
                            st: &mut procs[li],
                            entered: false,
                            exited: false,
                        };
                        algs[li].on_request(&mut c, g);
                        let (en, ex) = (c.entered, c.exited);
                        after(&mut procs[li], en, ex, cfg, local_cs);
                    }
                    Phase::Inside(g) => {
                        if local_cs {
                            procs[li].phase = Phase::Leaving(now, g);
                            let t = rk.sync_ms(now);
                            rk.report.asks.push(WaitStart { p, at: t });
                            rk.tally.start_cycle(p);
                        }
                        let mut c = Ctx {
                            me: p,
                            li,
                            rk: &mut rk,
                            st: &mut procs[li],
                            entered: false,
                            exited: false,
                        };
                        algs[li].on_exit(&mut c);
                        let (en, ex) = (c.entered, c.exited);
                        after(&mut procs[li], en, ex, cfg, local_cs);
                    }
                    _ => {}
                }
            }
        }
        // Done with the quota: every process has made its requests (and, but for local
        // critical sections, is out again).
        if !told_done
            && procs
                .iter()
                .all(|st| st.entries >= cfg.run.requests && (local_cs || st.phase == Phase::Out))
        {
            told_done = true;
            rk.control(0, TAG_DONE, &[0]);
        }
        // The watchdog.
        if !quiescing && !stuck_told {
            for st in &procs {
                if let Phase::Waiting(since, _) | Phase::Leaving(since, _) = st.phase {
                    let waited = now.duration_since(since).as_secs_f64();
                    if waited > cfg.run.watchdog {
                        stuck_told = true;
                        let what = format!(
                            "p{} (rank {rank}) waiting {} for {waited:.1} s (watchdog {} s)",
                            st.pid,
                            if matches!(st.phase, Phase::Leaving(..)) {
                                "to leave"
                            } else {
                                "to enter"
                            },
                            cfg.run.watchdog
                        );
                        let bytes = what.into_bytes();
                        world
                            .process_at_rank(0)
                            .buffered_send_with_tag(&bytes[..], TAG_STUCK);
                        rk.all_sent += 1;
                        break;
                    }
                }
            }
        }
        // Nothing to do now: spin (yielding) for a while after activity, then nap until the
        // next deadline or for a short while, to probe the inbox again.
        if active {
            last_activity = Instant::now();
        } else {
            let now = Instant::now();
            if now.duration_since(last_activity) < spin_for {
                std::thread::yield_now();
            } else {
                let mut nap = nap_max;
                for t in [
                    rk.held.peek().map(|h| h.at),
                    rk.timers.peek().map(|t| t.0 .0),
                ]
                .into_iter()
                .flatten()
                .chain(procs.iter().filter_map(|st| st.app_at))
                {
                    nap = nap.min(t.saturating_duration_since(now));
                }
                if !nap.is_zero() {
                    std::thread::sleep(nap);
                }
            }
        }
    }
    let end_ms = rk.sync_ms(coord.end.unwrap_or_else(Instant::now));
    // Drain whatever a stop left in flight, until the counts agree everywhere.
    loop {
        while let Some(probed) = world.any_process().immediate_matched_probe() {
            let _ = probed.matched_receive_vec::<u8>();
            rk.all_recv += 1;
        }
        let local = rk.all_sent as i64 - rk.all_recv as i64;
        let mut total = 0i64;
        world.all_reduce_into(&local, &mut total, SystemOperation::sum());
        if total == 0 {
            break;
        }
    }
    rk.tally.finish();
    let t = &rk.tally;
    rk.report.kinds = t
        .kinds
        .iter()
        .map(|k| (k.0.to_string(), k.1, k.2))
        .collect();
    rk.report.messages = t.messages;
    rk.report.self_messages = t.self_messages;
    rk.report.ints = t.ints;
    rk.report.per_request_max = t.per_request_max;
    rk.report.per_request_max_with_self = t.per_request_max_with_self;
    rk.report.requests = t.requests;
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
        coord.liveness,
        start_ms,
        end_ms,
        wall,
    )))
}

/// The application's next step after a handler, as on the threaded runtime.
fn after(st: &mut ProcState, entered: bool, exited: bool, cfg: &MpiConfig, local_cs: bool) {
    let now = Instant::now();
    if entered {
        st.entries += 1;
        st.app_at = Some(now + ms(cfg.run.cs.sample(&mut st.work_rng)));
    }
    if exited && (st.entries < cfg.run.requests || local_cs) {
        st.app_at = Some(now + ms(cfg.run.ncs.sample(&mut st.work_rng)));
    }
}

/// Rank 0: the run's result from every rank's report.
fn assemble(
    cfg: &MpiConfig,
    reports: Vec<Report>,
    liveness: Option<String>,
    start_ms: f64,
    end_ms: f64,
    wall: f64,
) -> MpiResult {
    let s = &cfg.run.setup;
    let n = s.n;
    let ranks = reports.len();
    let local_cs = cfg.run.problem == Problem::LocalCs;
    let mut tally = Tally::new(n);
    let mut intervals = Vec::new();
    let mut asks = Vec::new();
    let (mut delivered, mut violations, mut described) = (0u64, 0u64, Vec::new());
    let mut sessions_waited_max: Option<u64> = None;
    let shift = |t: f64| t - start_ms;
    for rp in &reports {
        let mut part = Tally::new(n);
        // Kind names outlive the run in the tally; a run has a handful of kinds.
        part.kinds = rp
            .kinds
            .iter()
            .map(|(k, c, i)| (&*Box::leak(k.clone().into_boxed_str()), *c, *i))
            .collect();
        part.messages = rp.messages;
        part.self_messages = rp.self_messages;
        part.ints = rp.ints;
        part.per_request_max = rp.per_request_max;
        part.per_request_max_with_self = rp.per_request_max_with_self;
        part.requests = rp.requests;
        tally.absorb(&part);
        for &(p, w) in &rp.waits {
            tally.wait(p, w);
        }
        intervals.extend(rp.intervals.iter().map(|iv| CsInterval {
            enter: iv.enter.map(shift),
            exit: iv.exit.map(shift),
            ..iv.clone()
        }));
        asks.extend(rp.asks.iter().map(|w| WaitStart {
            p: w.p,
            at: shift(w.at),
        }));
        delivered += rp.delivered;
        violations += rp.violations;
        described.extend(rp.described.iter().cloned());
        if let Some(m) = rp.sessions_waited_max {
            sessions_waited_max = Some(sessions_waited_max.unwrap_or(0).max(m));
        }
    }
    let end = shift(end_ms);
    let spec = Spec {
        problem: cfg.run.problem,
        closed: cfg.run.closed_neighbourhoods(),
        l: s.l.clone(),
        k: s.k.clone(),
        clock_of: (0..n).map(|p| p / cfg.procs_per_rank).collect(),
        error_of_clock: reports.iter().map(|r| r.clock_error_ms).collect(),
    };
    let verdict = check::check(&spec, &intervals, end);
    violations += verdict.count;
    described.extend(verdict.described);
    described.truncate(5);
    let sh = check::shared(cfg.run.problem, n, &intervals, &asks, end);
    tally.sync_sum = sh.sync_sum;
    tally.sync_count = sh.sync_count;
    tally.sync_max = sh.sync_max;
    tally.completed = sh.completed;
    tally.inside_integral = sh.inside_integral;
    tally.busy_time = sh.busy_time;
    tally.inside_max = sh.inside_max;
    let mut r = cfg.run.result("mpi", cfg.run.topology_name(), true);
    r.events = delivered;
    r.wall_seconds = wall;
    r.safety_violations = violations;
    r.violations = described;
    r.liveness_failure = liveness;
    r.starvation_sessions_max = sessions_waited_max;
    r.figures(&tally, end, !local_cs);
    let errors: Vec<f64> = reports.iter().map(|r| r.clock_error_ms).collect();
    MpiResult {
        run: r,
        ranks,
        procs_per_rank: cfg.procs_per_rank,
        hosts: reports.iter().map(|r| r.host.clone()).collect(),
        clock_sync_error_ms: errors.iter().cloned().fold(0.0, f64::max),
        clock_sync_error_by_rank_ms: errors,
        clock_sync_exchanges: SYNC_EXCHANGES,
    }
}

/// `mpirun -n R lockbench mp-run --runtime mpi ...`: every rank runs every algorithm in turn;
/// rank 0 prints; every rank exits with rank 0's code. `prepare` gives the runs and the output
/// format from the number of ranks; bad input is reported by rank 0 alone.
pub fn mp_run(
    prepare: impl FnOnce(usize) -> anyhow::Result<(Vec<MpiConfig>, Format)>,
) -> anyhow::Result<i32> {
    let Some(mut universe) = ::mpi::initialize() else {
        anyhow::bail!("MPI was initialised twice");
    };
    universe.set_buffer_size(BSEND_BUFFER);
    // SAFETY: PR_SET_TIMERSLACK only changes this thread's timer slack (default 50 µs), so
    // that the short naps between probes end when asked; a failure leaves the default.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong);
    }
    let world = universe.world();
    let rank = world.rank();
    let size = world.size() as usize;
    let prepared = prepare(size);
    let (runs, format) = match prepared {
        Ok(runs) => runs,
        // One line from rank 0, the same exit code everywhere.
        Err(e) if rank == 0 => return Err(e),
        Err(_) => return Ok(2),
    };
    let mut results = Vec::new();
    for cfg in &runs {
        let info = algo::info(&cfg.run.algo).expect("a registered algorithm");
        let r = crate::with_algo!(info, |make| run(&world, cfg, make))?;
        results.extend(r);
    }
    let mut code = 0i32;
    if rank == 0 {
        let bases: Vec<MpResult> = results.iter().map(|r| r.run.clone()).collect();
        if format == Format::Json {
            println!("{}", serde_json::to_string_pretty(&results)?);
        } else {
            print!("{}", output::render(&bases, format));
            for r in &results {
                println!(
                    "{}: {} ranks x {} process(es) on {}; clock sync error <= {:.4} ms",
                    r.run.algo,
                    r.ranks,
                    r.procs_per_rank,
                    hosts_line(&r.hosts),
                    r.clock_sync_error_ms
                );
            }
        }
        code = output::exit_code(&bases);
    }
    world.process_at_rank(0).broadcast_into(&mut code);
    Ok(code)
}

/// `host (ranks a-b), ...` for the table's footer.
fn hosts_line(hosts: &[String]) -> String {
    let mut parts: Vec<(String, usize, usize)> = Vec::new();
    for (r, h) in hosts.iter().enumerate() {
        match parts.last_mut() {
            Some(last) if last.0 == *h && last.2 + 1 == r => last.2 = r,
            _ => parts.push((h.clone(), r, r)),
        }
    }
    parts
        .iter()
        .map(|(h, a, b)| {
            if a == b {
                format!("{h} (rank {a})")
            } else {
                format!("{h} (ranks {a}-{b})")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// One run per algorithm of `model` on `ranks` ranks of `procs_per_rank` processes each
/// (default 1): `--n` must be their product.
pub fn configs(
    model: &Model,
    ranks: usize,
    procs_per_rank: Option<usize>,
    watchdog: f64,
) -> anyhow::Result<Vec<MpiConfig>> {
    let usage = |m: String| -> anyhow::Error { UsageError(m).into() };
    let ppr = procs_per_rank.unwrap_or(1);
    if ppr == 0 {
        return Err(usage("--procs-per-rank must be at least 1".into()));
    }
    if model.n != ranks * ppr {
        return Err(usage(format!(
            "--n {} does not match {ranks} MPI ranks x {ppr} process{} per rank: give --n {} or start {} ranks (mpirun -n {})",
            model.n,
            if ppr == 1 { "" } else { "es" },
            ranks * ppr,
            model.n.div_ceil(ppr),
            model.n.div_ceil(ppr)
        )));
    }
    model
        .algos
        .iter()
        .map(|info| {
            Ok(MpiConfig {
                run: model.run_config(info, model.seed, watchdog)?,
                procs_per_rank: ppr,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_grouped_by_runs_of_ranks() {
        let h: Vec<String> = ["a", "a", "b", "b", "a"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(hosts_line(&h), "a (ranks 0-1), b (ranks 2-3), a (rank 4)");
    }
}
