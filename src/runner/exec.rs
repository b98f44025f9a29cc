//! One measured run of one lock: threads pinned and started together, a warm-up, the
//! passage loop (think → enter(session) → critical section → exit), the oracle and a watchdog.
//!
//! The passage loop is generic over the lock's concrete type (the registry's
//! [`Bench`] function instantiates [`run_typed`] per lock), over the
//! safety checker and over tracing, so each combination compiles to its own loop with the
//! lock's fast path inlined and nothing in it that the run did not ask for. Per passage, a
//! default run adds a relaxed load of the phase flag, a session draw, the self-checking
//! critical section (a plain load and store of one shared word, and a load to read it back), a countdown to
//! the next timed passage and a store of the progress counter. One passage in
//! `latency_sample` (at random) is timed: entry, exit and whole-passage latency.
//!
//! [`LoopKind::Bare`] runs the same lock in a loop with nothing else — no clock, no check, no
//! bookkeeping, the count kept in a register and written once at the end — the reference that
//! `lockbench fidelity` holds the harness against.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use quanta::Clock;

use crate::check::trace::TraceRecord;
use crate::check::{Entry, Oracle, OracleKind, SelfCheck};
use crate::locks::{Lock, Params};
use crate::mem::{Aborted, CountingMemory, Section};
use crate::metrics::counters::{CounterSample, ThreadCounters};
use crate::metrics::latency::SampleGaps;
pub use crate::runner::spec::{
    Bench, Latencies, LoopKind, Repetition, RunFailure, RunSpec, StopRule, Subject, ThreadOutcome,
};
use crate::runner::topology::pin_current_thread;
use crate::workload::rng::Rng;
use crate::workload::{Delay, Sampler, SharedLines};

/// How often the watchdog looks at progress (and at the phase's deadline).
pub const WATCHDOG_POLL: Duration = Duration::from_millis(20);

const WARMUP: u32 = 0;
const MEASURE: u32 = 1;
const STOP: u32 = 2;

/// The checkers' shared state: both oracles (each run uses one of them).
struct Guards {
    counting: Oracle,
    self_check: SelfCheck,
}

/// Where a repetition's workers wait to start together: a barrier the main thread opens once
/// all have arrived, or calls off (a thread could not be started) so that none is left
/// waiting.
struct StartGate {
    workers: usize,
    /// Workers arrived; then whether to start (Some(true)) or go home (Some(false)).
    state: Mutex<(usize, Option<bool>)>,
    changed: Condvar,
}

impl StartGate {
    fn new(workers: usize) -> Self {
        StartGate {
            workers,
            state: Mutex::new((0, None)),
            changed: Condvar::new(),
        }
    }

    /// A worker arrives and waits: true to start, false when the run was called off.
    fn arrive(&self) -> bool {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.0 += 1;
        self.changed.notify_all();
        loop {
            if let Some(go) = s.1 {
                return go;
            }
            s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Waits until every worker has arrived, then starts them all.
    fn open(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while s.0 < self.workers {
            s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        s.1 = Some(true);
        self.changed.notify_all();
    }

    /// Sends every worker that arrives, or has, home.
    fn call_off(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).1 = Some(false);
        self.changed.notify_all();
    }
}

/// State shared by the workers of one repetition.
struct Shared<L> {
    spec: RunSpec,
    /// On lines of its own: the lock's words must not share a line with anything the loop
    /// reads, or every passage of one thread would invalidate the others' copy.
    lock: CachePadded<L>,
    guards: Guards,
    clock: Clock,
    ns_per_tick: f64,
    phase: CachePadded<AtomicU32>,
    progress: Box<[CachePadded<AtomicU64>]>,
    gate: StartGate,
    cs: Delay,
    think: Delay,
    lines: SharedLines,
}

/// A worker's own checking state.
#[derive(Clone, Copy, Debug, Default)]
struct CheckLocal {
    /// Processes inside at each measured entry, summed (counting oracle).
    inside_sum: u64,
    /// The most inside at one measured entry (counting oracle).
    inside_max: u64,
    /// Read-backs of the self-check that found another tag, over the whole run.
    violations: u64,
    /// Passages that added this process's tag to the self-check's sum, over the whole run.
    checked: u64,
}

/// What a worker hands back.
struct WorkerOut {
    p: usize,
    cpu: Option<usize>,
    pin_error: Option<String>,
    latency: Latencies,
    passages: u64,
    window: (u64, u64),
    check: CheckLocal,
    counters: Vec<CounterSample>,
    trace: Vec<TraceRecord>,
    trace_truncated: bool,
    /// A panic other than the watchdog's abort.
    panic: Option<String>,
    aborted: bool,
}

/// Nanoseconds per raw tick of `clock`.
pub fn ns_per_tick(clock: &Clock) -> f64 {
    const SPAN: u64 = 1 << 32;
    clock.delta_as_nanos(0, SPAN) as f64 / SPAN as f64
}

/// Runs one repetition of `spec` through its lock's monomorphised loop, or, with `spec.rmr`,
/// on a counting memory that charges each access under the model (slower: every access is
/// counted; the result carries the RMRs).
pub fn run_once(spec: &RunSpec) -> Result<Repetition, RunFailure> {
    let Some(model) = spec.rmr else {
        return (spec.lock.bench)(spec, LoopKind::Harness);
    };
    let Some(build) = spec.lock.counting else {
        return Err(RunFailure(format!(
            "{} is not written over the register abstraction: its RMRs cannot be counted",
            spec.lock.info.name
        )));
    };
    let made = std::sync::OnceLock::new();
    let mut rep = run_typed(spec, LoopKind::Harness, |params| {
        let mem = CountingMemory::new(model, params.n, spec.policy, Some(params.abort.clone()));
        let _ = made.set(mem.clone());
        Counted {
            lock: build(params, mem.clone()),
            mem,
        }
    })?;
    rep.rmr = made.get().map(|m| m.summary());
    Ok(rep)
}

/// A lock on a counting memory, telling the memory which section each access belongs to:
/// the doorway until the lock reports its end, then the waiting room, the critical section
/// once inside, the exit section. The passage loop sees an ordinary lock.
struct Counted {
    lock: Box<dyn Lock>,
    mem: CountingMemory,
}

impl Counted {
    fn acquire(&self, p: usize, session: usize, doorway_done: &mut dyn FnMut()) {
        self.mem.begin_passage(p);
        let mut seen = false;
        self.lock.enter_traced(p, session, &mut || {
            seen = true;
            self.mem.set_section(p, Section::Waiting);
            doorway_done();
        });
        if !seen {
            self.mem.doorway_unobserved(p);
        }
        self.mem.set_section(p, Section::Cs);
    }
}

impl Lock for Counted {
    fn enter(&self, p: usize, session: usize) {
        self.acquire(p, session, &mut || {});
    }

    fn enter_traced(&self, p: usize, session: usize, doorway_done: &mut dyn FnMut()) {
        self.acquire(p, session, doorway_done);
    }

    fn exit(&self, p: usize, session: usize) {
        self.mem.set_section(p, Section::Exit);
        self.lock.exit(p, session);
        self.mem.end_passage(p);
    }

    fn check_invariants(&self, exact: bool) -> Result<(), String> {
        self.lock.check_invariants(exact)
    }

    fn token_range(&self) -> Option<i64> {
        self.lock.token_range()
    }

    fn measurement_starts(&self, p: usize) {
        self.mem.reset_passages(p);
    }
}

/// Runs one repetition of `spec` with the lock `build` makes: the body of every registry
/// entry's [`Bench`] function, instantiated once per lock type.
pub fn run_typed<L, B>(spec: &RunSpec, kind: LoopKind, build: B) -> Result<Repetition, RunFailure>
where
    L: Lock + 'static,
    B: Fn(&Params) -> L,
{
    crate::runner::install_quiet_abort_hook();
    if kind == LoopKind::Bare && !matches!(spec.stop, StopRule::Duration(_)) {
        return Err(RunFailure("a bare loop runs for a duration".into()));
    }
    let n = spec.threads;
    let params = Params::new(spec.slots.max(n), spec.k, spec.policy);
    let abort = params.abort.clone();
    let lock = build(&params);
    let clock = Clock::new();
    let shared = Arc::new(Shared {
        spec: spec.clone(),
        lock: CachePadded::new(lock),
        guards: Guards {
            counting: Oracle::new(spec.lock.info.problem, spec.k),
            self_check: SelfCheck::new(spec.lock.info.problem),
        },
        ns_per_tick: ns_per_tick(&clock),
        clock,
        phase: CachePadded::new(AtomicU32::new(WARMUP)),
        progress: (0..n)
            .map(|_| CachePadded::new(AtomicU64::new(0)))
            .collect(),
        gate: StartGate::new(n),
        cs: Delay::new(spec.cs),
        think: Delay::new(spec.think),
        lines: SharedLines::new(spec.cs_lines),
    });
    let (tx, rx) = mpsc::channel::<WorkerOut>();
    // One sampler per process, built here so that every process shares one Zipf table.
    for (p, sampler) in spec.mix.samplers(n, spec.seed).into_iter().enumerate() {
        let mine = shared.clone();
        let tx = tx.clone();
        let started = std::thread::Builder::new()
            .name(format!("lockbench-{p}"))
            .spawn(move || {
                let out = worker(&mine, p, sampler, kind);
                let _ = tx.send(out);
            });
        if let Err(e) = started {
            // The threads already started wait at the gate: send them home.
            shared.gate.call_off();
            return Err(RunFailure(format!("cannot start thread {p}: {e}")));
        }
    }
    drop(tx);
    shared.gate.open();

    // The watchdog: poll progress; a run with no passage completed for `stall_timeout` is
    // aborted (waits in the register abstraction give up) and reported as stalled. A bare
    // loop reports no progress until it ends, so it is only stopped at its duration.
    let poll = WATCHDOG_POLL.min(spec.warmup.max(Duration::from_millis(1)));
    let started = Instant::now();
    let mut outs: Vec<WorkerOut> = Vec::with_capacity(n);
    let mut last_progress = 0u64;
    let mut last_change = Instant::now();
    let mut measure_at: Option<Instant> = None;
    let mut stalled = None;
    let mut invariant_failures = 0u64;
    let mut invariant_example = None;
    // The measured phase as the watchdog set it (clock ticks): the window of a run in which no
    // passage completed.
    let mut phase_window = (0u64, 0u64);
    loop {
        while let Ok(out) = rx.try_recv() {
            outs.push(out);
        }
        if kind == LoopKind::Harness {
            if let Err(msg) = shared.lock.check_invariants(false) {
                invariant_failures += 1;
                invariant_example.get_or_insert(msg);
            }
        }
        let now = Instant::now();
        match measure_at {
            None if now - started >= spec.warmup => {
                phase_window.0 = shared.clock.raw();
                shared.phase.store(MEASURE, Ordering::Relaxed);
                measure_at = Some(now);
            }
            Some(at) => {
                let done = match spec.stop {
                    StopRule::Duration(d) => now - at >= d,
                    StopRule::Passages(_) => outs.len() == n,
                };
                if done || outs.len() == n {
                    break;
                }
            }
            None => {}
        }
        // A first SIGINT or SIGTERM ends the repetition (the caller discards it).
        if crate::runner::interrupted().is_some() {
            break;
        }
        let progress: u64 = shared
            .progress
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .sum();
        if progress != last_progress || kind == LoopKind::Bare {
            last_progress = progress;
            last_change = now;
        } else if now - last_change >= spec.stall_timeout {
            stalled = Some(format!(
                "no passage completed for {:.1} s (stall timeout); {} of {} threads had finished",
                spec.stall_timeout.as_secs_f64(),
                outs.len(),
                n
            ));
            abort.store(true, Ordering::Relaxed);
            break;
        }
        let left = match (measure_at, spec.stop) {
            (None, _) => spec.warmup.saturating_sub(now - started),
            (Some(at), StopRule::Duration(d)) => d.saturating_sub(now - at),
            (Some(_), StopRule::Passages(_)) => poll,
        };
        std::thread::sleep(poll.min(left.max(Duration::from_micros(100))));
    }
    phase_window.1 = shared.clock.raw();
    if phase_window.0 == 0 {
        phase_window.0 = phase_window.1;
    }
    shared.phase.store(STOP, Ordering::Relaxed);

    // Collect the rest. Threads blocked where the watchdog cannot reach them (inside a parked
    // mutex, say) are left behind and named.
    let grace = Duration::from_secs(2).max(spec.cs * 4);
    let deadline = Instant::now() + grace;
    while outs.len() < n {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(out) => outs.push(out),
            Err(_) => break,
        }
    }
    let all_back = outs.len() == n;
    if !all_back {
        let missing: Vec<usize> = (0..n).filter(|p| !outs.iter().any(|o| o.p == *p)).collect();
        let note = format!(
            "threads {missing:?} did not stop within {:.1} s (blocked inside the lock where the \
             watchdog cannot reach them); they were left behind",
            grace.as_secs_f64()
        );
        stalled = Some(match stalled {
            Some(s) => format!("{s}; {note}"),
            None => note,
        });
        abort.store(true, Ordering::Relaxed);
    }
    if let Some(msg) = outs.iter().find_map(|o| o.panic.clone()) {
        return Err(RunFailure(format!(
            "{}: a worker panicked: {msg}",
            spec.lock.info.name
        )));
    }
    if stalled.is_none() && outs.iter().any(|o| o.aborted) {
        stalled = Some("aborted".into());
    }
    outs.sort_by_key(|o| o.p);
    Ok(assemble(
        &shared,
        kind,
        outs,
        phase_window,
        all_back,
        stalled,
        invariant_failures,
        invariant_example,
    ))
}

#[allow(clippy::too_many_arguments)]
fn assemble<L>(
    shared: &Shared<L>,
    kind: LoopKind,
    mut outs: Vec<WorkerOut>,
    phase_window: (u64, u64),
    all_back: bool,
    stalled: Option<String>,
    invariant_failures: u64,
    invariant_example: Option<String>,
) -> Repetition {
    let spec = &shared.spec;
    let npt = shared.ns_per_tick;
    let oracle = match kind {
        LoopKind::Harness => spec.effective_oracle(),
        LoopKind::Bare => OracleKind::None,
    };
    let mut latency = Latencies::new(npt);
    let mut threads = Vec::with_capacity(outs.len());
    let mut trace = Vec::new();
    let mut truncated = false;
    let (mut inside_sum, mut inside_max) = (0u64, 0u64);
    let (mut private_sum, mut read_back_failures) = (0u64, 0u64);
    let (mut first, mut last) = (u64::MAX, 0u64);
    let mut counters = Vec::with_capacity(outs.len());
    // A thread that never began measuring (it was inside one long passage the whole measured
    // phase) measured nothing over the phase's window, not over the clock's epoch.
    for o in &mut outs {
        if o.window.0 == 0 {
            o.window = (phase_window.0, phase_window.1.max(phase_window.0));
        }
    }
    // A thread that the watchdog aborted unwound without handing back its checking state, so
    // the sums can only be compared when none was.
    let sums_complete = all_back && !outs.iter().any(|o| o.aborted);
    for o in outs {
        latency.add(&o.latency);
        inside_sum += o.check.inside_sum;
        inside_max = inside_max.max(o.check.inside_max);
        // Every checked passage added the process's tag once, warm-up included.
        private_sum = private_sum.wrapping_add(SelfCheck::private_sum(o.p, o.check.checked));
        read_back_failures += o.check.violations;
        if o.passages > 0 {
            first = first.min(o.window.0);
            last = last.max(o.window.1);
        }
        threads.push(ThreadOutcome {
            cpu: o.cpu,
            pin_error: o.pin_error,
            passages: o.passages,
            window_ns: shared.clock.delta_as_nanos(o.window.0, o.window.1) as f64,
            window: o.window,
        });
        trace.extend(o.trace);
        truncated |= o.trace_truncated;
        counters.push(o.counters);
    }
    let passages: u64 = threads.iter().map(|t| t.passages).sum();
    let window_ns = if first < last {
        shared.clock.delta_as_nanos(first, last) as f64
    } else {
        // Nothing measured: the window is the measured phase the watchdog ran.
        shared.clock.delta_as_nanos(phase_window.0, phase_window.1) as f64
    };
    let violations = match oracle {
        OracleKind::None => 0,
        OracleKind::Counting => shared.guards.counting.violations(),
        // A lost update of the shared sum is at least one overlap more than the read-backs
        // may have seen. The sum is only complete when every thread came back.
        OracleKind::SelfCheck | OracleKind::Sampled => {
            read_back_failures
                + u64::from(sums_complete && !shared.guards.self_check.sum_matches(private_sum))
        }
    };
    Repetition {
        kind,
        threads,
        latency: Some(latency),
        passages,
        window_ns,
        throughput_per_sec: if window_ns > 0.0 {
            passages as f64 * 1e9 / window_ns
        } else {
            0.0
        },
        oracle,
        inside: (oracle == OracleKind::Counting && passages > 0)
            .then(|| (inside_sum as f64 / passages as f64, inside_max)),
        violations,
        invariant_failures,
        invariant_example,
        counters,
        stalled,
        trace: (spec.trace && kind == LoopKind::Harness).then_some((trace, truncated)),
        ns_per_tick: npt,
        rmr: None, // filled by `run_once` from the counting memory it made
    }
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".into()
    }
}

fn worker<L: Lock>(
    shared: &Shared<L>,
    p: usize,
    mut sampler: Sampler,
    kind: LoopKind,
) -> WorkerOut {
    let spec = &shared.spec;
    let cpu = spec.cpus.get(p).copied().flatten();
    let pin_error = cpu.and_then(|c| pin_current_thread(c).err().map(|e| format!("cpu {c}: {e}")));
    let mut counters = ThreadCounters::open(match kind {
        LoopKind::Harness => &spec.counters,
        LoopKind::Bare => &[],
    });
    let mut out = WorkerOut {
        p,
        cpu,
        pin_error,
        latency: Latencies::new(shared.ns_per_tick),
        passages: 0,
        window: (0, 0),
        check: CheckLocal::default(),
        counters: Vec::new(),
        trace: Vec::new(),
        trace_truncated: false,
        panic: None,
        aborted: false,
    };
    if !shared.gate.arrive() {
        return out;
    }
    let s = &mut sampler;
    let (o, c) = (&mut out, &mut counters);
    let result = catch_unwind(AssertUnwindSafe(|| {
        match (kind, spec.effective_oracle(), spec.trace) {
            (LoopKind::Bare, _, _) => bare(shared, p, s.next(), o),
            (_, OracleKind::None, false) => passages::<L, NoCheck>(shared, p, s, o, c),
            (_, OracleKind::Sampled, false) => passages::<L, Sampled>(shared, p, s, o, c),
            (_, OracleKind::SelfCheck, false) => passages::<L, SelfChecking>(shared, p, s, o, c),
            (_, OracleKind::Counting, false) => passages::<L, Counting>(shared, p, s, o, c),
            (_, OracleKind::None, true) => traced_passages::<L, NoCheck>(shared, p, s, o, c),
            (_, _, true) => traced_passages::<L, Counting>(shared, p, s, o, c),
        }
    }));
    counters.disable();
    out.counters = counters.read();
    if let Err(payload) = result {
        if payload.downcast_ref::<Aborted>().is_some() {
            out.aborted = true;
        } else {
            out.panic = Some(panic_message(payload.as_ref()));
        }
        if out.window.1 == 0 {
            out.window.1 = shared.clock.raw();
        }
    }
    out
}

/// A timestamp ordered with the memory accesses around it, for traces: a full fence makes
/// earlier stores visible and `lfence` keeps the TSC read from running early.
#[inline(always)]
fn fenced_now(clock: &Clock) -> u64 {
    std::sync::atomic::fence(Ordering::SeqCst);
    #[cfg(target_arch = "x86_64")]
    // SAFETY: lfence has no preconditions on x86_64.
    unsafe {
        std::arch::x86_64::_mm_lfence()
    };
    let t = clock.raw();
    #[cfg(target_arch = "x86_64")]
    // SAFETY: as above.
    unsafe {
        std::arch::x86_64::_mm_lfence()
    };
    t
}

/// What the passage loop does to check safety inside the critical section; one type per
/// oracle, so the loop is compiled once per oracle with nothing of the others in it.
trait Checker {
    /// What `enter` hands to `exit`.
    type Token: Copy;
    /// The checker of the untimed passages between two sampled ones (`Self` for every oracle
    /// but the sampled self-check).
    type Light: Checker;
    /// Whether the loop runs extra checked passages between timed ones (out of line, about
    /// one in [`CHECK_GAP_MEAN`]) because `Light` checks less than `Self`.
    const SPARSE: bool = false;
    /// Right after the lock let process `p` in.
    fn enter(g: &Guards, p: usize, session: usize, local: &mut CheckLocal) -> Self::Token;
    /// Right before the lock's exit section.
    fn exit(g: &Guards, token: Self::Token, local: &mut CheckLocal);
    /// Processes inside at this entry, for traces (0 when unknown).
    fn inside(token: Self::Token) -> u32;
}

/// No check (`--no-check`).
struct NoCheck;

impl Checker for NoCheck {
    type Token = ();
    type Light = NoCheck;
    #[inline(always)]
    fn enter(_: &Guards, _: usize, _: usize, _: &mut CheckLocal) {}
    #[inline(always)]
    fn exit(_: &Guards, _: (), _: &mut CheckLocal) {}
    fn inside(_: ()) -> u32 {
        0
    }
}

/// The self-checking critical section ([`SelfCheck`]).
struct SelfChecking;

impl Checker for SelfChecking {
    type Token = u64;
    type Light = SelfChecking;
    #[inline(always)]
    fn enter(g: &Guards, p: usize, session: usize, local: &mut CheckLocal) -> u64 {
        local.checked += 1;
        g.self_check.enter(p, session)
    }
    #[inline(always)]
    fn exit(g: &Guards, tag: u64, local: &mut CheckLocal) {
        if !g.self_check.exit(tag) {
            local.violations += 1;
        }
    }
    fn inside(_: u64) -> u32 {
        0
    }
}

/// The sampled self-check ([`OracleKind::Sampled`]): the whole check on the passages the loop
/// runs out of line (the timed ones, the ones that close a timed passage, and about one in
/// [`CHECK_GAP_MEAN`] others), a [`Peek`] on every other.
struct Sampled;

impl Checker for Sampled {
    /// The process, what it wrote, and whether it entered alone.
    type Token = (usize, u64, bool);
    type Light = Peek;
    const SPARSE: bool = true;
    #[inline(always)]
    fn enter(g: &Guards, p: usize, _: usize, local: &mut CheckLocal) -> Self::Token {
        local.checked += 1;
        let (wrote, alone) = g.self_check.sampled_enter(p);
        (p, wrote, alone)
    }
    #[inline(always)]
    fn exit(g: &Guards, (p, wrote, alone): Self::Token, local: &mut CheckLocal) {
        if !(g.self_check.sampled_exit(p, wrote) && alone) {
            local.violations += 1;
        }
    }
    fn inside(_: Self::Token) -> u32 {
        0
    }
}

/// An unsampled passage of the sampled self-check: one plain load of the owner word.
struct Peek;

impl Checker for Peek {
    type Token = ();
    type Light = Peek;
    #[inline(always)]
    fn enter(g: &Guards, _: usize, _: usize, local: &mut CheckLocal) {
        if !g.self_check.peek() {
            local.violations += 1;
        }
    }
    #[inline(always)]
    fn exit(_: &Guards, _: (), _: &mut CheckLocal) {}
    fn inside(_: ()) -> u32 {
        0
    }
}

/// The exact counting oracle ([`Oracle`]).
struct Counting;

impl Checker for Counting {
    type Token = Entry;
    type Light = Counting;
    #[inline(always)]
    fn enter(g: &Guards, _p: usize, session: usize, local: &mut CheckLocal) -> Entry {
        let e = g.counting.enter(session);
        local.inside_sum += e.inside;
        local.inside_max = local.inside_max.max(e.inside);
        e
    }
    #[inline(always)]
    fn exit(g: &Guards, e: Entry, _local: &mut CheckLocal) {
        g.counting.exit(e);
    }
    fn inside(e: Entry) -> u32 {
        e.inside as u32
    }
}

/// The bare loop: `enter; exit` until the phase changes, the count in a register, written
/// once at the end. The warm-up runs the same loop and is not counted.
#[inline(never)]
fn bare<L: Lock>(shared: &Shared<L>, p: usize, session: usize, out: &mut WorkerOut) {
    let lock = &*shared.lock;
    let phase = &*shared.phase;
    while phase.load(Ordering::Relaxed) == WARMUP {
        lock.enter(p, session);
        lock.exit(p, session);
    }
    let start = shared.clock.raw();
    let mut count = 0u64;
    while phase.load(Ordering::Relaxed) == MEASURE {
        lock.enter(p, session);
        lock.exit(p, session);
        count += 1;
    }
    out.window = (start, shared.clock.raw());
    out.passages = count;
    shared.progress[p].store(count, Ordering::Relaxed);
}

/// What a passage loop keeps at hand: the loop invariants, read once.
struct Ctx<'a, L> {
    clock: &'a Clock,
    lock: &'a L,
    guards: &'a Guards,
    /// Think time, critical-section time, shared lines touched inside.
    work: (Delay, Delay, &'a SharedLines),
    flag: &'a AtomicU32,
    progress: &'a AtomicU64,
    /// Measured passages after which to stop (`u64::MAX` for a duration).
    quota: u64,
    p: usize,
}

impl<'a, L> Ctx<'a, L> {
    fn new(shared: &'a Shared<L>, p: usize) -> Self {
        Ctx {
            clock: &shared.clock,
            lock: &shared.lock,
            guards: &shared.guards,
            work: (shared.think, shared.cs, &shared.lines),
            flag: &shared.phase,
            progress: &shared.progress[p],
            quota: match shared.spec.stop {
                StopRule::Passages(q) => q,
                StopRule::Duration(_) => u64::MAX,
            },
            p,
        }
    }
}

/// Clock reads of a passage: none, at the request only, or at all four points.
const UNTIMED: u8 = 0;
const REQUEST: u8 = 1;
const TIMED: u8 = 2;

/// One passage: think, draw a session, enter, the checked critical section, exit; with the
/// clock read at the request, on entry, before and after the exit section as `CLOCKS` says
/// (zeros where it is not read).
#[inline(always)]
fn passage<L: Lock, C: Checker, const CLOCKS: u8>(
    cx: &Ctx<L>,
    sampler: &mut Sampler,
    check: &mut CheckLocal,
) -> [u64; 4] {
    let (think, cs, lines) = cx.work;
    let read = |on: bool| if on { cx.clock.raw() } else { 0 };
    think.run();
    let session = sampler.next();
    let t0 = read(CLOCKS >= REQUEST);
    cx.lock.enter(cx.p, session);
    let t1 = read(CLOCKS == TIMED);
    let token = C::enter(cx.guards, cx.p, session, check);
    cs.run();
    lines.touch();
    C::exit(cx.guards, token, check);
    let t2 = read(CLOCKS == TIMED);
    cx.lock.exit(cx.p, session);
    let t3 = read(CLOCKS == TIMED);
    [t0, t1, t2, t3]
}

/// The untimed passages from `total` until `end`, or until the phase flag leaves `phase`;
/// returns the new total. `PLAIN` when the run has no think time, no critical-section time,
/// no shared lines and one constant session (`session`): the loop is then the bare loop's
/// `enter; exit` with the light check between, and not even a test of the workload is left.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn untimed<L: Lock, C: Checker, const PLAIN: bool>(
    cx: &Ctx<L>,
    sampler: &mut Sampler,
    check: &mut CheckLocal,
    session: usize,
    mut total: u64,
    end: u64,
    phase: u32,
) -> u64 {
    while total < end && cx.flag.load(Ordering::Relaxed) == phase {
        if PLAIN {
            cx.lock.enter(cx.p, session);
            let token = C::enter(cx.guards, cx.p, session, check);
            C::exit(cx.guards, token, check);
            cx.lock.exit(cx.p, session);
        } else {
            passage::<L, C, UNTIMED>(cx, sampler, check);
        }
        total += 1;
    }
    total
}

/// One timed passage: entry and exit latency recorded, and the whole passage that `prev` (the
/// previous timed request, if it still waits) started closed at this request. Returns this
/// request's time. Out of line: the untimed loop stays small.
#[inline(never)]
fn timed_passage<L: Lock, C: Checker>(
    cx: &Ctx<L>,
    sampler: &mut Sampler,
    check: &mut CheckLocal,
    prev: Option<u64>,
    latency: &mut Latencies,
) -> u64 {
    let [t0, t1, t2, t3] = passage::<L, C, TIMED>(cx, sampler, check);
    latency.entry.saturating_record(t1.wrapping_sub(t0).max(1));
    latency.exit.saturating_record(t3.wrapping_sub(t2).max(1));
    if let Some(prev) = prev {
        latency
            .passage
            .saturating_record(t0.wrapping_sub(prev).max(1));
    }
    t0
}

/// An untimed passage with the whole check, between timed ones (see [`Checker::SPARSE`]). Out
/// of line: the untimed loop stays small.
#[inline(never)]
fn checked_passage<L: Lock, C: Checker>(
    cx: &Ctx<L>,
    sampler: &mut Sampler,
    check: &mut CheckLocal,
) {
    passage::<L, C, UNTIMED>(cx, sampler, check);
}

/// Untimed passages between two checked ones, on average, where the loop's light check is
/// not the whole check ([`Checker::SPARSE`]).
pub const CHECK_GAP_MEAN: u64 = 256;

/// The next gap between checked passages: uniform in `0..2 * CHECK_GAP_MEAN`, so the checked
/// passages fall at random phases (no aliasing with periodic hand-offs) for one step of the
/// generator, not a logarithm.
#[inline]
fn next_check_gap(rng: &mut Rng) -> u64 {
    rng.next_u64() & (2 * CHECK_GAP_MEAN - 1)
}

/// An untimed passage that reads the clock at its request, to close the whole passage of the
/// timed request at `prev`.
#[inline(never)]
fn closing_passage<L: Lock, C: Checker>(
    cx: &Ctx<L>,
    sampler: &mut Sampler,
    check: &mut CheckLocal,
    prev: u64,
    latency: &mut Latencies,
) {
    let [t0, ..] = passage::<L, C, REQUEST>(cx, sampler, check);
    latency
        .passage
        .saturating_record(t0.wrapping_sub(prev).max(1));
}

/// Where a worker is in the run: warm-up or measuring, and the passage count (over the whole
/// run) at which measuring started and at which it must stop.
struct Progress {
    phase: u32,
    start: u64,
    limit: u64,
}

impl Progress {
    fn new() -> Self {
        Progress {
            phase: WARMUP,
            start: 0,
            limit: u64::MAX,
        }
    }

    /// The phase flag moved, or `total` reached the limit: false to stop; true when
    /// measuring has just begun (the caller resets what it measured so far).
    #[cold]
    fn advance(&mut self, flag: u32, total: u64, quota: u64) -> bool {
        if flag == STOP || self.phase == MEASURE {
            return false;
        }
        self.phase = MEASURE;
        self.start = total;
        self.limit = total.saturating_add(quota);
        true
    }

    fn measured(&self, total: u64) -> u64 {
        if self.phase == MEASURE {
            total - self.start
        } else {
            0
        }
    }
}

/// The warm-up is over: forget what was measured so far and start the window and counters.
/// (The self-check's sums and read-back failures cover the whole run: a violation in the
/// warm-up is one.)
#[cold]
fn begin_measuring<L: Lock>(
    cx: &Ctx<L>,
    out: &mut WorkerOut,
    check: &mut CheckLocal,
    counters: &mut ThreadCounters,
) {
    cx.lock.measurement_starts(cx.p);
    out.latency.reset();
    out.trace.clear();
    out.trace_truncated = false;
    check.inside_sum = 0;
    check.inside_max = 0;
    counters.reset();
    counters.enable();
    out.window.0 = cx.clock.raw();
}

/// The passage loop, monomorphised over the lock and the checker. Untimed passages run in a
/// tight inner loop that reads no clock and keeps its count in a register; the random gaps
/// between timed passages say how many run before the next timed one.
#[inline(never)]
fn passages<L: Lock, C: Checker>(
    shared: &Shared<L>,
    p: usize,
    sampler: &mut Sampler,
    out: &mut WorkerOut,
    counters: &mut ThreadCounters,
) {
    let cx = Ctx::new(shared, p);
    let mut check = CheckLocal::default();
    let mut gaps = SampleGaps::new(shared.spec.latency_sample, shared.spec.seed, p as u64);
    let mut state = Progress::new();
    let mut total = 0u64;
    // The last timed request, while its whole passage waits for the next request.
    let mut prev: Option<u64> = None;
    let mut gap = gaps.next_gap();
    let mut checks = Rng::new(shared.spec.seed ^ 0xC4EC_4ED0_5A3B_1E77, p as u64);
    let mut cgap = if C::SPARSE {
        next_check_gap(&mut checks)
    } else {
        u64::MAX
    };
    let started = cx.clock.raw();
    // The one session of a run whose untimed passages are only `enter; exit`.
    let (think, cs, lines) = cx.work;
    let plain = (think.is_zero() && cs.is_zero() && lines.is_empty())
        .then(|| sampler.constant())
        .flatten();
    loop {
        let now = cx.flag.load(Ordering::Relaxed);
        if now != state.phase || total >= state.limit {
            if !state.advance(now, total, cx.quota) {
                break;
            }
            begin_measuring(&cx, out, &mut check, counters);
            prev = None; // the first whole passage starts at the first request
            if let (Some(cost), true) = (shared.spec.timing_cost_ns, total > 0) {
                // The warm-up's time per passage says how sparse the timing must be.
                let ns = cx.clock.delta_as_nanos(started, out.window.0) as f64 / total as f64;
                let expected = match shared.spec.stop {
                    StopRule::Passages(q) => q as f64,
                    StopRule::Duration(d) => d.as_nanos() as f64 / ns,
                };
                let mean = adapted_latency_sample(shared.spec.latency_sample, cost, ns, expected);
                gaps = SampleGaps::new(mean, shared.spec.seed, p as u64);
                gap = gaps.next_gap();
            }
            continue;
        }
        if gap == 0 {
            prev = Some(timed_passage::<L, C>(
                &cx,
                sampler,
                &mut check,
                prev,
                &mut out.latency,
            ));
            total += 1;
            cx.progress.store(total, Ordering::Relaxed);
            gap = gaps.next_gap();
            continue;
        }
        if let Some(t) = prev.take() {
            closing_passage::<L, C>(&cx, sampler, &mut check, t, &mut out.latency);
            total += 1;
            cx.progress.store(total, Ordering::Relaxed);
            gap -= 1;
            continue;
        }
        if C::SPARSE && cgap == 0 {
            checked_passage::<L, C>(&cx, sampler, &mut check);
            total += 1;
            cx.progress.store(total, Ordering::Relaxed);
            gap -= 1;
            cgap = next_check_gap(&mut checks);
            continue;
        }
        // The hot loop: up to 64 of the `gap` untimed passages, unless the phase moves or the
        // quota is met; then the watchdog's progress counter is stored (a store per passage
        // would be one more store the next locked instruction waits to drain).
        let end = state.limit.min(total.saturating_add(gap.min(cgap).min(64)));
        let before = total;
        let (check, phase) = (&mut check, state.phase);
        total = match plain {
            Some(s) => untimed::<L, C::Light, true>(&cx, sampler, check, s, total, end, phase),
            None => untimed::<L, C::Light, false>(&cx, sampler, check, 0, total, end, phase),
        };
        cx.progress.store(total, Ordering::Relaxed);
        gap -= total - before;
        if C::SPARSE {
            cgap -= total - before;
        }
    }
    out.window.1 = cx.clock.raw();
    out.passages = state.measured(total);
    out.check = check;
    if state.phase != MEASURE {
        out.latency.reset();
    }
}

/// The traced loop: every passage timed with fenced clock reads and recorded (doorway start
/// and end, critical section entry and exit), for the property checks of `--trace`.
#[inline(never)]
fn traced_passages<L: Lock, C: Checker>(
    shared: &Shared<L>,
    p: usize,
    sampler: &mut Sampler,
    out: &mut WorkerOut,
    counters: &mut ThreadCounters,
) {
    let spec = &shared.spec;
    let cx = Ctx::new(shared, p);
    let (clock, lock, guards) = (cx.clock, cx.lock, cx.guards);
    let mut check = CheckLocal::default();
    let mut state = Progress::new();
    let mut total = 0u64;
    let mut prev: Option<u64> = None;
    out.trace.reserve(spec.trace_capacity.min(1 << 16));
    loop {
        let now = cx.flag.load(Ordering::Relaxed);
        if now != state.phase || total >= state.limit {
            if !state.advance(now, total, cx.quota) {
                break;
            }
            begin_measuring(&cx, out, &mut check, counters);
            prev = None;
            continue;
        }
        shared.think.run();
        let session = sampler.next();
        let t0 = fenced_now(clock);
        let mut doorway = 0u64;
        lock.enter_traced(p, session, &mut || doorway = fenced_now(clock));
        let t1 = fenced_now(clock);
        let token = C::enter(guards, p, session, &mut check);
        shared.cs.run();
        shared.lines.touch();
        C::exit(guards, token, &mut check);
        let t2 = fenced_now(clock);
        lock.exit(p, session);
        let t3 = clock.raw();
        if out.trace.len() < spec.trace_capacity {
            out.trace.push(TraceRecord {
                process: p as u32,
                session: session as u32,
                doorway_start: t0,
                // 0: the lock does not report its doorway; order is then taken from the
                // request.
                doorway_end: if doorway == 0 { t0 } else { doorway },
                doorway_observed: doorway != 0,
                cs_enter: t1,
                cs_exit: t2,
                inside: C::inside(token),
            });
        } else {
            out.trace_truncated = true;
        }
        let lat = &mut out.latency;
        lat.entry.saturating_record(t1.wrapping_sub(t0).max(1));
        lat.exit.saturating_record(t3.wrapping_sub(t2).max(1));
        if let Some(prev) = prev {
            lat.passage.saturating_record(t0.wrapping_sub(prev).max(1));
        }
        prev = Some(t0);
        total += 1;
        cx.progress.store(total, Ordering::Relaxed);
    }
    out.window.1 = clock.raw();
    out.passages = state.measured(total);
    out.check = check;
    if state.phase != MEASURE {
        out.latency.reset();
        out.trace.clear();
    }
}

/// The cost of timing one passage, ns: the five clock reads (request, inside, exit start, exit
/// end, and the next request that closes the whole passage) and three histogram records,
/// best of several rounds. [`auto_latency_sample`] turns it into a sampling rate.
pub fn timed_passage_cost_ns() -> f64 {
    let clock = Clock::new();
    let npt = ns_per_tick(&clock);
    let mut h = Latencies::new(npt);
    const ROUNDS: usize = 7;
    const ITERS: u64 = 20_000;
    let mut best = f64::MAX;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let mut prev = clock.raw();
        for _ in 0..ITERS {
            let t0 = clock.raw();
            let t1 = clock.raw();
            let t2 = clock.raw();
            let t3 = clock.raw();
            let next = clock.raw();
            h.passage
                .saturating_record(std::hint::black_box(next.wrapping_sub(prev).max(1)));
            h.entry.saturating_record(t1.wrapping_sub(t0).max(1));
            h.exit.saturating_record(t3.wrapping_sub(t2).max(1));
            prev = next;
        }
        best = best.min(start.elapsed().as_nanos() as f64 / ITERS as f64);
    }
    std::hint::black_box(&h);
    best
}

/// Time spent timing per passage that the default sampling allows, ns: the rest of the
/// harness's 2 ns budget goes to the oracle and the loop's bookkeeping.
pub const TIMING_BUDGET_NS: f64 = 0.5;

/// The most of a passage's own time that timing may take on average when the sampling rate is
/// the default, as a share of the calibrated cost of timing one passage: 0.25%. The
/// calibration ([`timed_passage_cost_ns`]) times passages back to back, its histogram lines
/// hot in the cache; in the passage loop a sparse timed passage finds them cold and costs
/// several times as much, so that in practice timing takes about 1% of the loop's time.
pub const TIMING_SHARE: f64 = 0.0025;

/// Timed passages a thread should still expect when its sampling thins out.
pub const MIN_SAMPLES: f64 = 2000.0;

/// The sampling rate of a thread whose passages took `passage_ns` each in the warm-up and that
/// expects to run `expected` measured passages, under the default rate `floor`: `floor`, or
/// sparser where timing one passage (`timing_cost_ns`) would take more than [`TIMING_SHARE`]
/// of the passage time — but never so sparse that fewer than [`MIN_SAMPLES`] passages would
/// be timed, and at most one in 65536.
pub fn adapted_latency_sample(
    floor: u64,
    timing_cost_ns: f64,
    passage_ns: f64,
    expected: f64,
) -> u64 {
    // A NaN or non-positive cost keeps the floor; a zero passage time gives infinity, the cap.
    let n = (timing_cost_ns / (TIMING_SHARE * passage_ns.max(0.0))).ceil();
    if timing_cost_ns > 0.0 && !n.is_nan() {
        let enough = (expected / MIN_SAMPLES).floor();
        let enough = if enough.is_nan() { 0.0 } else { enough };
        (n.min(65536.0).min(enough) as u64).max(floor)
    } else {
        floor
    }
}

/// The default sampling rate: one passage in `N` timed, with `N` such that timing costs at most
/// [`TIMING_BUDGET_NS`] per passage on average given what one timed passage costs
/// (`timed_cost_ns`), and between 16 and 4096.
pub fn auto_latency_sample(timed_cost_ns: f64) -> u64 {
    let n = (timed_cost_ns / TIMING_BUDGET_NS).ceil();
    if n.is_finite() {
        (n as u64).clamp(16, 4096)
    } else {
        4096
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locks::{LockInfo, Problem};
    use crate::mem::{Home, Memory, NativeMemory, Register};

    fn info(name: &'static str, problem: Problem) -> LockInfo {
        LockInfo {
            name,
            problem,
            source: "test",
            fcfs: false,
            bounded: true,
            rmr: "n/a",
            safe: false,
            notes: "",
        }
    }

    fn spec(lock: Subject, threads: usize, stop: StopRule) -> RunSpec {
        RunSpec {
            cs: Duration::from_micros(2),
            oracle: OracleKind::Counting,
            stall_timeout: Duration::from_millis(300),
            ..RunSpec::new(lock, threads, stop)
        }
    }

    /// Admits everyone: the oracle must catch it.
    struct AdmitAll;
    impl Lock for AdmitAll {
        fn enter(&self, _p: usize, _s: usize) {}
        fn exit(&self, _p: usize, _s: usize) {}
    }

    /// Never admits anyone: waits through the register abstraction forever.
    struct NeverAdmits(NativeMemory, <NativeMemory as Memory>::Reg);
    impl Lock for NeverAdmits {
        fn enter(&self, p: usize, _s: usize) {
            self.0.wait_until(p, || self.1.read(p) == 1);
        }
        fn exit(&self, _p: usize, _s: usize) {}
    }

    /// Blocks where the watchdog cannot reach (a park that is never unparked).
    struct ParksForever;
    impl Lock for ParksForever {
        fn enter(&self, _p: usize, _s: usize) {
            loop {
                std::thread::park();
            }
        }
        fn exit(&self, _p: usize, _s: usize) {}
    }

    fn admit_all(problem: Problem) -> Subject {
        Subject {
            info: info("admit-all", problem),
            bench: |s, kind| run_typed(s, kind, |_| AdmitAll),
            counting: None,
        }
    }

    /// Runs the lock that admits everyone with `threads` threads and the given oracle until the
    /// oracle reports a violation, at most 10 times (overlaps need the threads running at once,
    /// which a loaded machine may deny a single short run); the last run.
    fn caught(
        problem: Problem,
        threads: usize,
        k: usize,
        mix: &str,
        oracle: OracleKind,
        cs: Duration,
    ) -> Repetition {
        let mut r = broken(problem, threads, k, mix, oracle, cs);
        for _ in 0..9 {
            if r.violations > 0 {
                break;
            }
            r = broken(problem, threads, k, mix, oracle, cs);
        }
        r
    }

    /// Runs the lock that admits everyone with `threads` threads and the given oracle.
    fn broken(
        problem: Problem,
        threads: usize,
        k: usize,
        mix: &str,
        oracle: OracleKind,
        cs: Duration,
    ) -> Repetition {
        let mut s = spec(
            admit_all(problem),
            threads,
            StopRule::Duration(Duration::from_millis(400)),
        );
        s.k = k;
        s.mix = mix.parse().unwrap();
        s.oracle = oracle;
        s.cs = cs;
        // The default sampling, which times the fewest passages (and so, sampled, checks the
        // fewest): a made-up timing cost that pushes the rate to its sparsest.
        s.latency_sample = 64;
        s.timing_cost_ns = Some(1e6);
        let r = run_once(&s).unwrap();
        assert_eq!(r.oracle, s.effective_oracle());
        r
    }

    #[test]
    fn counting_oracle_catches_a_lock_that_admits_everyone() {
        let r = caught(
            Problem::Mutex,
            2,
            1,
            "distinct",
            OracleKind::Counting,
            Duration::from_micros(2),
        );
        assert!(
            r.violations > 0,
            "two threads in 2 µs critical sections for 400 ms overlapped"
        );
        assert_eq!(r.inside.unwrap().1, 2);
    }

    #[test]
    fn default_oracles_catch_a_lock_that_admits_everyone_in_all_three_problems() {
        // Mutual exclusion, the sampled self-check (the default) and the every-passage one,
        // even with an empty critical section: the read-backs, the owner word's peeks and the
        // shared sum see the overlaps.
        assert_eq!(
            OracleKind::default_for(Problem::Mutex, 1),
            OracleKind::Sampled
        );
        for o in [OracleKind::Sampled, OracleKind::SelfCheck] {
            for cs in [Duration::ZERO, Duration::from_micros(2)] {
                let r = caught(Problem::Mutex, 2, 1, "distinct", o, cs);
                assert!(r.violations > 0, "mutex, {o:?}, cs {cs:?}");
                assert!(r.inside.is_none(), "the self-check does not count");
            }
        }
        // GME: two sessions (the counting default, and the session-tag self-check).
        for o in [
            OracleKind::default_for(Problem::Gme, 1),
            OracleKind::SelfCheck,
        ] {
            let r = caught(Problem::Gme, 2, 1, "distinct", o, Duration::from_micros(2));
            assert!(r.violations > 0, "GME, {o:?}");
        }
        // ... but one session shares legitimately: no violation.
        let r = broken(
            Problem::Gme,
            2,
            1,
            "single",
            OracleKind::SelfCheck,
            Duration::from_micros(2),
        );
        assert_eq!(r.violations, 0, "one session shares the critical section");
        // k-exclusion: k = 1 with the self-check; k = 2 with three threads and the counting
        // oracle (a thread preempted inside counts as inside, so 2 cores suffice).
        let r = caught(
            Problem::KExclusion,
            2,
            1,
            "single",
            OracleKind::default_for(Problem::KExclusion, 1),
            Duration::ZERO,
        );
        assert!(r.violations > 0, "k-exclusion, k = 1");
        let r = caught(
            Problem::KExclusion,
            3,
            2,
            "single",
            OracleKind::default_for(Problem::KExclusion, 2),
            Duration::from_micros(20),
        );
        assert_eq!(r.oracle, OracleKind::Counting);
        assert!(r.violations > 0, "k-exclusion, k = 2, three inside");
        assert_eq!(r.inside.unwrap().1, 3);
    }

    #[test]
    fn self_check_passes_a_correct_lock() {
        let entry = crate::registry::find("ticket").unwrap().subject();
        let mut s = spec(entry, 2, StopRule::Passages(20_000));
        s.oracle = OracleKind::SelfCheck;
        s.cs = Duration::ZERO;
        let r = run_once(&s).unwrap();
        assert_eq!(r.violations, 0);
        assert_eq!(r.oracle, OracleKind::SelfCheck);
        assert_eq!(r.passages, 40_000);
    }

    #[test]
    fn bare_loop_counts_and_checks_nothing() {
        let entry = crate::registry::find("ticket").unwrap().subject();
        let mut s = spec(entry, 2, StopRule::Duration(Duration::from_millis(100)));
        s.warmup = Duration::from_millis(20);
        let r = (s.lock.bench)(&s, LoopKind::Bare).unwrap();
        assert_eq!(r.kind, LoopKind::Bare);
        assert_eq!(r.oracle, OracleKind::None);
        assert!(r.passages > 0 && r.throughput_per_sec > 0.0);
        assert!(r.latency.unwrap().entry.is_empty(), "nothing timed");
        assert!(r.threads.iter().all(|t| t.window.1 > t.window.0));
        s.stop = StopRule::Passages(10);
        assert!((s.lock.bench)(&s, LoopKind::Bare).is_err());
    }

    #[test]
    fn watchdog_stops_a_lock_that_never_admits() {
        fn never(p: &Params) -> NeverAdmits {
            let mem = p.native();
            let reg = mem.register(Home::Shared, 0);
            NeverAdmits(mem, reg)
        }
        let entry = Subject {
            info: info("never", Problem::Mutex),
            bench: |s, kind| run_typed(s, kind, never),
            counting: None,
        };
        let started = Instant::now();
        let r = run_once(&spec(entry, 2, StopRule::Duration(Duration::from_secs(60)))).unwrap();
        assert!(
            r.stalled
                .as_deref()
                .unwrap()
                .contains("no passage completed"),
            "{:?}",
            r.stalled
        );
        assert_eq!(r.passages, 0);
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the watchdog stopped it early"
        );
    }

    #[test]
    fn watchdog_leaves_behind_threads_it_cannot_reach() {
        let entry = Subject {
            info: info("parks", Problem::Mutex),
            bench: |s, kind| run_typed(s, kind, |_| ParksForever),
            counting: None,
        };
        let r = run_once(&spec(entry, 1, StopRule::Duration(Duration::from_secs(60)))).unwrap();
        let why = r.stalled.unwrap();
        assert!(why.contains("left behind"), "{why}");
    }

    #[test]
    fn passages_rule_counts_exactly() {
        let entry = crate::registry::find("ticket").unwrap().subject();
        let r = run_once(&spec(entry, 2, StopRule::Passages(700))).unwrap();
        assert_eq!(r.passages, 1400);
        assert_eq!(r.violations, 0);
        let lat = r.latency.unwrap();
        assert_eq!(lat.entry.len(), 1400);
        assert_eq!(
            lat.exit.len(),
            1400,
            "every timed passage has an exit latency"
        );
        assert!(r.throughput_per_sec > 0.0);
        assert!(r.threads.iter().all(|t| t.passages == 700));
    }

    #[test]
    fn trace_records_every_measured_passage_in_order() {
        let entry = crate::registry::find("ticket").unwrap().subject();
        let mut s = spec(entry, 2, StopRule::Passages(300));
        s.trace = true;
        s.trace_capacity = 1000;
        let r = run_once(&s).unwrap();
        let (trace, truncated) = r.trace.unwrap();
        assert!(!truncated);
        assert_eq!(trace.len(), 600);
        for t in &trace {
            assert!(t.doorway_observed, "ticket reports its doorway");
            assert!(t.doorway_start <= t.doorway_end && t.doorway_end <= t.cs_enter);
            assert!(t.cs_enter <= t.cs_exit);
        }
        let report = crate::check::trace::analyze(&trace, Problem::Mutex, 1, r.ns_per_tick, false);
        assert_eq!(report.fcfs_violations, 0, "{:?}", report.fcfs_example);
    }

    #[test]
    fn sampled_latency_times_one_passage_in_n_at_random() {
        let entry = crate::registry::find("ticket").unwrap().subject();
        let mut s = spec(entry, 2, StopRule::Passages(8000));
        s.latency_sample = 8;
        let r = run_once(&s).unwrap();
        assert_eq!(r.passages, 16_000);
        let lat = r.latency.unwrap();
        // 16 000 passages timed with probability 1/8 each: 2000 ± 42 (one sd).
        let n = lat.entry.len();
        assert!((1800..=2200).contains(&n), "{n} timed passages");
        assert_eq!(lat.exit.len(), n);
        // Every timed request but each thread's last closes one whole passage.
        assert!(
            lat.passage.len() + 2 >= n && lat.passage.len() <= n,
            "{} whole passages for {n} timed requests",
            lat.passage.len()
        );
    }

    #[test]
    fn sampling_cost_is_measured_and_bounded() {
        let ns = timed_passage_cost_ns();
        assert!(ns > 0.0 && ns.is_finite());
        let n = auto_latency_sample(ns);
        assert!((16..=4096).contains(&n));
        assert_eq!(auto_latency_sample(40.0), 80);
        assert_eq!(auto_latency_sample(1.0), 16);
        assert_eq!(auto_latency_sample(1e9), 4096);
    }

    #[test]
    fn default_sampling_thins_out_where_timing_would_cost_over_one_percent() {
        // 60 ns to time a passage: a 3 ns passage may be timed once in 8000, a 6 µs one as
        // often as the floor allows; never more often than the floor, never rarer than 65536.
        let many = 1e12;
        assert_eq!(adapted_latency_sample(112, 60.0, 3.0, many), 8000);
        assert_eq!(adapted_latency_sample(112, 60.0, 6000.0, many), 112);
        assert_eq!(adapted_latency_sample(112, 60.0, 1e-6, many), 65536);
        assert_eq!(adapted_latency_sample(112, 60.0, 0.0, many), 65536);
        assert_eq!(adapted_latency_sample(112, f64::NAN, 3.0, many), 112);
        // ... and never so rarely that fewer than MIN_SAMPLES are expected (down to the floor).
        assert_eq!(adapted_latency_sample(112, 60.0, 3.0, 1e6), 500);
        assert_eq!(adapted_latency_sample(112, 60.0, 3.0, 400.0), 112);
        assert_eq!(adapted_latency_sample(112, 60.0, 3.0, f64::NAN), 112);
    }

    #[test]
    fn default_sampling_adapts_after_the_warm_up_and_a_given_rate_does_not() {
        let entry = crate::registry::find("ticket").unwrap().subject();
        let mut s = spec(entry, 1, StopRule::Passages(4_000_000));
        s.cs = Duration::ZERO;
        s.warmup = Duration::from_millis(20);
        s.latency_sample = 16;
        let timed = |s: &RunSpec| {
            let r = run_once(s).unwrap();
            (r.passages, r.latency.unwrap().entry.len())
        };
        // Asked for: one in 16 (± a lot; the test asserts the order of magnitude).
        let (passages, n) = timed(&s);
        assert!(n * 32 > passages, "{n} timed of {passages}");
        // The default, with timing made to look expensive (1 ms): as sparse as the 2000
        // samples that 4 million passages must still give allow, one in 2000.
        s.timing_cost_ns = Some(1e6);
        let (passages, n) = timed(&s);
        assert!(n > 1000 && n * 500 < passages, "{n} timed of {passages}");
    }

    #[test]
    fn sampled_self_check_passes_a_correct_lock_and_keeps_its_sum() {
        for threads in [1, 2] {
            let entry = crate::registry::find("ticket").unwrap().subject();
            let mut s = spec(entry, threads, StopRule::Passages(50_000));
            s.oracle = OracleKind::Sampled;
            s.latency_sample = 8;
            let r = run_once(&s).unwrap();
            assert_eq!(r.oracle, OracleKind::Sampled);
            assert_eq!(r.violations, 0, "{threads} threads");
        }
    }

    #[test]
    fn the_start_gate_starts_all_together_or_sends_them_home() {
        for go in [true, false] {
            let gate = Arc::new(StartGate::new(3));
            let arrived: Vec<_> = (0..3)
                .map(|_| {
                    let gate = gate.clone();
                    std::thread::spawn(move || gate.arrive())
                })
                .collect();
            if go {
                gate.open();
            } else {
                // Called off before all (or any) have arrived: none is left waiting.
                gate.call_off();
            }
            for t in arrived {
                assert_eq!(t.join().unwrap(), go);
            }
        }
    }
}
