//! The deterministic, seeded discrete-event simulator. Each event (a message delivery, a
//! timer, a process asking to enter or to leave) runs one handler of one process's state
//! machine; the safety of the whole system is checked after every state change.
//!
//! Determinism: events run in (time, sequence number) order, one random stream per purpose and
//! process (workload, channel delays), no hashing of addresses. The queue is a heap of
//! bundles: the events one handler scheduled, sorted, keyed by their earliest (see
//! `queue`), which runs them in the same order as one heap of all events at a fraction of
//! the cost when handlers broadcast. A broadcast keeps its message once, for the copies
//! delivered as events and for those its receivers take passively (see `deferred`).
//!
//! This file holds a run's loop and its result; `core` the state every handler changes,
//! `ctx` the runtime handlers see, `hops` the causal hop counts.

mod casts;
mod core;
mod crash;
mod ctx;
mod deferred;
mod down;
mod hops;
mod passed;
mod queue;

use std::time::Instant;

use self::core::{Core, Phase};
use self::ctx::Ctx;
use self::queue::Kind;
use super::algo::Setup;
use super::metrics::MpResult;
use super::run_config::RunConfig;
use super::{Algorithm, Pid, Problem};

pub use self::crash::{check_crashes, Crash};
pub use self::hops::MultiType;

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

/// Runs one simulation of the algorithm built by `make` for every process.
pub fn run<A: Algorithm>(cfg: &SimConfig, make: impl Fn(Pid, &Setup) -> A) -> MpResult {
    run_with(cfg, make, true, true)
}

#[cfg(test)]
/// [`run`] with processes crashing as `crashes` says (seed 003 §5.3; see `crash`).
pub fn run_crashing<A: Algorithm>(
    cfg: &SimConfig,
    crashes: &[Crash],
    make: impl Fn(Pid, &Setup) -> A,
) -> MpResult {
    run_inner(cfg, make, true, true, None, crashes, 1)
}

/// [`run_crashing`] with requests naming `types` types each (seed 003 §5.1, multi-type
/// requests; 1 is [`run_crashing`]).
pub fn run_typed<A: Algorithm>(
    cfg: &SimConfig,
    crashes: &[Crash],
    types: usize,
    make: impl Fn(Pid, &Setup) -> A,
) -> MpResult {
    run_inner(cfg, make, true, true, None, crashes, types)
}

#[cfg(test)]
/// [`run`], also giving every entry as (process, time) in the order they happened: two
/// algorithms that make the same decisions give the same list.
pub fn run_logged<A: Algorithm>(
    cfg: &SimConfig,
    make: impl Fn(Pid, &Setup) -> A,
) -> (MpResult, Vec<(Pid, f64)>) {
    let mut log = Vec::new();
    let r = run_inner(cfg, make, true, true, Some(&mut log), &[], 1);
    (r, log)
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
    run_inner(cfg, make, defer, cast, None, &[], 1)
}

/// [`run_with`], filling `log` with the entries if given, crashing processes as `crashes`
/// says, each request naming `types` types.
fn run_inner<A: Algorithm>(
    cfg: &SimConfig,
    make: impl Fn(Pid, &Setup) -> A,
    defer: bool,
    cast: bool,
    log: Option<&mut Vec<(Pid, f64)>>,
    crashes: &[Crash],
    types: usize,
) -> MpResult {
    let wall = Instant::now();
    let s = &cfg.run.setup;
    let mut procs: Vec<A> = (0..s.n).map(|p| make(p, s)).collect();
    let mut core: Core<A::Msg> = Core::new(&cfg.run, cfg.fifo, cfg.trace, cast);
    core.tally.paths = cfg.run.path_tally();
    core.set_types_per_request(types);
    core.schedule_crashes(crashes);
    start(&mut core, &procs);
    // Deferred receipts (see below) for an algorithm that takes some passively, where hops
    // are not tracked, nothing is traced and nobody crashes (a crashed process takes
    // nothing, passively or not).
    core.deferred.lazy = A::PASSIVE && defer && !cfg.trace && !core.hops.on && crashes.is_empty();
    core.deferred.takers = procs.iter().map(Algorithm::passive_now).collect();
    core.entry_log = log.is_some().then(Vec::new);
    let (events, liveness) = event_loop(&mut core, &mut procs, cfg.run.watchdog);
    if let Some(log) = log {
        *log = core.entry_log.take().unwrap_or_default();
    }
    let mut r = result(cfg, core, events, liveness);
    r.wall_seconds = wall.elapsed().as_secs_f64();
    r.events_per_sec = Some(r.events as f64 / r.wall_seconds.max(1e-9));
    r
}

/// The initial configuration (seed 004) and the first requests.
fn start<A: Algorithm>(core: &mut Core<A::Msg>, procs: &[A]) {
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
    core.q.flush();
}

/// Runs events until every process has made its requests, or none is left (a deadlock), or
/// the watchdog finds a request overdue; the number of events (deferred receipts included)
/// and the liveness failure, if any.
fn event_loop<A: Algorithm>(
    core: &mut Core<A::Msg>,
    procs: &mut [A],
    watchdog: f64,
) -> (u64, Option<String>) {
    let mut events = 0u64;
    let mut liveness = None;
    let mut key = (0, 0);
    while core.unfinished > 0 {
        let Some((t, seq, kind)) = core.q.pop() else {
            liveness = Some(format!(
                "deadlock at t={:.3}: no event pending; {}",
                core.now,
                stuck_state(core, procs)
            ));
            break;
        };
        core.now = t;
        events += 1;
        key = (t.to_bits(), seq);
        let p = kind.process();
        if core.crash.is_down(p) {
            // Crash-stop: lost.
            continue;
        }
        // The event after this one is most likely the queue's next now (this handler's
        // events seldom come before it): its receiver is asked to fetch what it will touch
        // while this handler runs, and the link of its likely answer too.
        if let Some((from, to, msg)) = core.q.peek_delivery() {
            procs[to].will_receive(from, msg);
            core.will_send(to, from);
        }
        // The bundles of the events likely after it, and their receivers' state.
        core.q.prefetch_after_next(|to| procs[to].will_run());
        if core.deferred.lazy {
            events += core.deferred.absorb(p, &mut procs[p], key);
        }
        if core.trace {
            trace(t, &kind);
        }
        before_handler(core, &kind);
        handle(core, procs, p, kind);
        for q in std::mem::take(&mut core.deferred.full) {
            events += core.deferred.absorb(q, &mut procs[q], key);
        }
        if core.deferred.lazy {
            core.deferred.spill(&mut core.q, p, &procs[p]);
        }
        core.q.flush();
        // Deferred receipts are events too: they count, and the watchdog looks every 4096
        // events. Until the next event here, only deferred receipts run and nobody starts
        // or stops waiting; if no request can be overdue by then, no look in between
        // finds one, so the exact count is not needed until one could. From then on (or
        // when only deferred receipts remain), every receipt is an event again.
        if core.deferred.lazy
            && core
                .q
                .peek_time()
                .is_none_or(|h| core.may_be_overdue(h, watchdog))
        {
            events += core.deferred.go_eager(&mut core.q, procs, key);
        }
        if !core.deferred.lazy && events & 0xFFF == 0 {
            if let Some(msg) = overdue(core, procs, watchdog) {
                liveness = Some(msg);
                break;
            }
        }
    }
    if core.deferred.lazy {
        events += core.deferred.due(key);
    }
    (events, liveness)
}

/// Prints an event (`--trace`).
fn trace<M: std::fmt::Debug>(t: f64, kind: &Kind<M>) {
    match kind {
        Kind::Deliver { from, to, msg, .. } => {
            crate::opts::io::errln!("{t:.3} p{to} <- p{from} {msg:?}")
        }
        Kind::Timer { p, tag } => crate::opts::io::errln!("{t:.3} p{p} timer {tag}"),
        Kind::Want { p } => crate::opts::io::errln!("{t:.3} p{p} wants"),
        Kind::Leave { p } => crate::opts::io::errln!("{t:.3} p{p} leaves"),
    }
}

/// What an event changes before its handler runs: a delivery's hops, the start of a wait.
#[inline]
fn before_handler<M: crate::mp::Message>(core: &mut Core<M>, kind: &Kind<M>) {
    match kind {
        Kind::Deliver { to, hops, .. } => {
            if let Some(h) = hops {
                core.hops.receive(*to, h);
            }
        }
        Kind::Timer { p, tag } => core.hops.timer(*p, crash::detected(*tag), core.now),
        Kind::Want { p } => {
            let p = *p;
            core.hops.local(p, "asks", core.now);
            let g = core.draw_request(p);
            core.start_wait(p, Phase::Waiting(core.now, g));
        }
        Kind::Leave { p } => {
            let p = *p;
            core.hops.local(p, "leaves", core.now);
            if let Phase::Inside(g) = core.phase[p] {
                if core.problem == Problem::LocalCs {
                    core.start_wait(p, Phase::Leaving(core.now, g));
                }
            }
        }
    }
}

/// Runs process `p`'s handler of the event.
#[inline]
fn handle<A: Algorithm>(core: &mut Core<A::Msg>, procs: &mut [A], p: Pid, kind: Kind<A::Msg>) {
    let (before, rest) = procs.split_at_mut(p);
    let (proc_, after) = rest.split_first_mut().expect("a process of the run");
    let rt = &mut Ctx {
        core,
        me: p,
        before,
        after,
    };
    match kind {
        Kind::Deliver { from, msg, .. } => proc_.on_message(rt, from, msg),
        Kind::Timer {
            tag: crash::CRASH_TAG,
            ..
        } => {
            rt.core.crash_now(p);
            return;
        }
        Kind::Timer { tag, .. } => match crash::detected(tag) {
            Some(c) => proc_.on_crash_detected(rt, c),
            None => proc_.on_timer(rt, tag),
        },
        Kind::Want { p } => {
            let Phase::Waiting(_, g) = rt.core.phase[p] else {
                unreachable!("just set")
            };
            if rt.core.types_per_request > 1 {
                let set = rt.core.want_types[p].clone();
                proc_.on_request_any(rt, &set);
            } else {
                proc_.on_request(rt, g);
            }
        }
        Kind::Leave { .. } => proc_.on_exit(rt),
    }
    if let Some(v) = proc_.out_of_domain() {
        core.violation(v);
    }
    if let Some(b) = proc_.unnecessary_blocking() {
        core.blocking.0 += 1;
        if core.blocking.1.is_none() {
            core.blocking.1 = Some(format!("t={:.3}: {b}", core.now));
        }
    }
}

/// The run's result from the state it ended in.
fn result<M>(cfg: &SimConfig, mut core: Core<M>, events: u64, liveness: Option<String>) -> MpResult
where
    M: crate::mp::Message,
{
    let run = &cfg.run;
    core.account_time();
    core.tally.finish();
    if let Some(d) = core.tally.paths.as_mut() {
        d.finish(core.now);
    }
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
    if run.problem == crate::mp::Problem::Gme {
        r.sessions_passed_max = core.passed.max;
        r.sessions_passed_worst = core.passed.worst.take();
    }
    // Seed 003 §5.1, checked after every event of the TokenGME family.
    if run.algo.starts_with("token-gme") {
        r.unnecessary_blocking = Some(core.blocking.0);
        r.unnecessary_blocking_first = core.blocking.1.take();
    }
    r.recovery = core.recovery();
    if let Some(t) = core.two_hop.take() {
        r.multi_type = Some(MultiType {
            types_per_request: core.types_per_request,
            two_hop: t.finish(),
        });
    }
    r.figures(&core.tally, core.now, !run.local());
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
    use super::hops::HOPS_MAX_N;
    use super::*;
    use crate::mp::algo::ra1::Ra1Msg;
    use crate::mp::topo::Graph;
    use crate::mp::workload::Dist;
    use crate::mp::{Group, Runtime};

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
        v["events_per_sec"] = 0.into();
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

    /// Claims every receipt passive, but answers a REQUEST; `DECLARED`: whether it says so in
    /// [`Algorithm::PASSIVE`].
    #[derive(Debug)]
    struct Liar<const DECLARED: bool>;

    impl<const DECLARED: bool> Algorithm for Liar<DECLARED> {
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
        const PASSIVE: bool = DECLARED;
    }

    /// A run of [`Liar`]s, which panics.
    fn run_liars<const DECLARED: bool>() {
        let mut c = token_gme_cfg(1, true, Dist::Exp(1.0), 1e9);
        c.run.problem = Problem::Mutex;
        run(&c, |_, _| Liar::<DECLARED>);
    }

    #[test]
    #[should_panic(expected = "Algorithm::passive is wrong")]
    fn a_false_passive_claim_is_caught() {
        run_liars::<true>();
    }

    #[test]
    #[should_panic(expected = "Algorithm::PASSIVE is false")]
    fn a_passive_answer_not_declared_is_caught() {
        run_liars::<false>();
    }

    /// Broadcasts its REQUEST, which even processes take passively and odd ones do not,
    /// while its `passive_now` says every process's state may.
    #[derive(Debug)]
    struct Uneven(Pid);

    impl Algorithm for Uneven {
        type Msg = Ra1Msg;
        fn on_request(&mut self, rt: &mut dyn Runtime<Ra1Msg>, _g: Group) {
            rt.broadcast(Ra1Msg::Request(1, 0));
        }
        fn on_exit(&mut self, rt: &mut dyn Runtime<Ra1Msg>) {
            rt.exited();
        }
        fn on_message(&mut self, _rt: &mut dyn Runtime<Ra1Msg>, _f: Pid, _m: Ra1Msg) {}
        fn passive(&self, m: &Ra1Msg) -> bool {
            self.0.is_multiple_of(2) && matches!(m, Ra1Msg::Request(..))
        }
        fn passive_now(&self) -> bool {
            true
        }
        const PASSIVE: bool = true;
    }

    #[test]
    #[should_panic(expected = "Algorithm::passive_now is wrong")]
    fn a_passive_answer_beyond_passive_now_is_caught() {
        let mut c = token_gme_cfg(1, true, Dist::Exp(1.0), 1e9);
        c.run.problem = Problem::Mutex;
        run(&c, |p, _| Uneven(p));
    }

    #[test]
    fn a_request_never_served_is_reported_with_state() {
        let r = run(&cfg(Problem::Mutex), |_, _| Broken { grant: false });
        let l = r.liveness_failure.expect("reported");
        assert!(l.contains("deadlock") && l.contains("Broken"), "{l}");
    }
}
