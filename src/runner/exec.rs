//! One measured run of one lock: threads pinned and started on a barrier, a warm-up, the timed
//! passage loop (think → enter(session) → critical section → exit), the oracle and a watchdog.

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Barrier};
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use hdrhistogram::Histogram;
use quanta::Clock;

use crate::check::trace::TraceRecord;
use crate::check::Oracle;
use crate::locks::{Lock, LockEntry, Params};
use crate::mem::counting::RmrSummary;
use crate::mem::{Aborted, CountingMemory, Model, Section, WaitPolicy};
use crate::metrics::counters::{CounterSample, CounterSpec, ThreadCounters};
use crate::metrics::latency::ticks_histogram;
use crate::runner::topology::pin_current_thread;
use crate::workload::{Delay, Mix, Sampler, SharedLines};

/// When a run stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopRule {
    /// After this long (after the warm-up).
    Duration(Duration),
    /// After each thread completed this many measured passages.
    Passages(u64),
}

/// Everything one run needs.
#[derive(Clone)]
pub struct RunSpec {
    /// The lock.
    pub entry: LockEntry,
    /// Number of threads; they act as processes 0..threads.
    pub threads: usize,
    /// Processes the lock is built for (at least `threads`): with more slots than threads, the
    /// extra processes stay idle, which shows what a lock's size costs an uncontended passage.
    pub slots: usize,
    /// Capacity for k-exclusion locks.
    pub k: usize,
    /// Which session each request asks for.
    pub mix: Mix,
    /// Busy work inside the critical section.
    pub cs: Duration,
    /// Busy work between passages.
    pub think: Duration,
    /// Shared cache lines read and written in every critical section.
    pub cs_lines: usize,
    /// When to stop.
    pub stop: StopRule,
    /// Warm-up before measuring (excluded from every figure).
    pub warmup: Duration,
    /// Run the safety oracle.
    pub check: bool,
    /// Record a trace of every passage (doorway start/end, CS enter/exit).
    pub trace: bool,
    /// Time every passage (1) or every N-th (a power of two): fewer clock reads per passage
    /// when the harness's own cost matters; throughput is unaffected. Traces time every passage.
    pub latency_sample: u64,
    /// Most passages traced per thread.
    pub trace_capacity: usize,
    /// CPU of each thread (`None`: not pinned).
    pub cpus: Vec<Option<usize>>,
    /// How waiting threads wait.
    pub policy: WaitPolicy,
    /// Counters to read in every worker.
    pub counters: Vec<CounterSpec>,
    /// A run with no passage completed for this long is stopped as stalled.
    pub stall_timeout: Duration,
    /// Seed of the session samplers.
    pub seed: u64,
    /// Run on a counting memory under this RMR model (slower; fills `Repetition::rmr`).
    pub rmr: Option<Model>,
}

/// One thread's share of a repetition.
#[derive(Clone, Debug)]
pub struct ThreadOutcome {
    /// CPU it was pinned to, if any.
    pub cpu: Option<usize>,
    /// Why pinning failed, if it did.
    pub pin_error: Option<String>,
    /// Measured passages.
    pub passages: u64,
    /// Measured window, ns.
    pub window_ns: f64,
    /// Window start and end (clock ticks).
    pub window: (u64, u64),
}

/// The raw outcome of one repetition.
pub struct Repetition {
    /// Per thread.
    pub threads: Vec<ThreadOutcome>,
    /// Entry latency (request → inside), ticks, merged over threads.
    pub entry: Histogram<u64>,
    /// Whole passage (request to next request), ticks, merged over threads.
    pub passage: Histogram<u64>,
    /// Measured passages of all threads.
    pub passages: u64,
    /// Wall-clock measured window: first thread's start to last thread's end, ns.
    pub window_ns: f64,
    /// Passages per second over that window.
    pub throughput_per_sec: f64,
    /// Mean and max processes inside together as the oracle saw them at entries (None without
    /// the oracle).
    pub inside: Option<(f64, u64)>,
    /// Safety violations the oracle saw.
    pub violations: u64,
    /// Failed register-invariant checks (the lock's own bounds) and the first message.
    pub invariant_failures: u64,
    /// The first invariant failure.
    pub invariant_example: Option<String>,
    /// Counter samples, one vector per thread.
    pub counters: Vec<Vec<CounterSample>>,
    /// Why the run was stopped early, when it stalled.
    pub stalled: Option<String>,
    /// Trace records of all threads, and whether a buffer filled.
    pub trace: Option<(Vec<TraceRecord>, bool)>,
    /// Nanoseconds per clock tick.
    pub ns_per_tick: f64,
    /// RMRs of the measured passages (`rmr` set in the spec).
    pub rmr: Option<RmrSummary>,
}

/// A run that could not be carried out.
#[derive(Debug)]
pub struct RunFailure(pub String);

impl std::fmt::Display for RunFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RunFailure {}

const WARMUP: u32 = 0;
const MEASURE: u32 = 1;
const STOP: u32 = 2;

/// State shared by the workers of one repetition.
struct Shared {
    spec: RunSpec,
    lock: Box<dyn Lock>,
    oracle: Oracle,
    clock: Clock,
    ns_per_tick: f64,
    phase: CachePadded<AtomicU32>,
    progress: Box<[CachePadded<AtomicU64>]>,
    barrier: Barrier,
    cs: Delay,
    think: Delay,
    lines: SharedLines,
    /// The counting memory the lock runs on (`RunSpec::rmr`).
    counting: Option<CountingMemory>,
}

/// What a worker hands back.
struct WorkerOut {
    p: usize,
    cpu: Option<usize>,
    pin_error: Option<String>,
    entry: Histogram<u64>,
    passage: Histogram<u64>,
    passages: u64,
    window: (u64, u64),
    inside_sum: u64,
    inside_max: u64,
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

/// Runs one repetition of `spec`.
pub fn run_once(spec: &RunSpec) -> Result<Repetition, RunFailure> {
    crate::runner::install_quiet_abort_hook();
    let n = spec.threads;
    let params = Params::new(spec.slots.max(n), spec.k, spec.policy);
    let abort = params.abort.clone();
    let counting = spec
        .rmr
        .map(|m| CountingMemory::new(m, params.n, spec.policy, Some(abort.clone())));
    let lock = match (&counting, spec.entry.counting) {
        (None, _) => (spec.entry.native)(&params),
        (Some(m), Some(build)) => build(&params, m.clone()),
        (Some(_), None) => {
            return Err(RunFailure(format!(
                "{} is not written over the register abstraction: its RMRs cannot be counted",
                spec.entry.info.name
            )))
        }
    };
    let clock = Clock::new();
    let shared = Arc::new(Shared {
        spec: spec.clone(),
        lock,
        oracle: Oracle::new(spec.entry.info.problem, spec.k),
        ns_per_tick: ns_per_tick(&clock),
        clock,
        phase: CachePadded::new(AtomicU32::new(WARMUP)),
        progress: (0..n)
            .map(|_| CachePadded::new(AtomicU64::new(0)))
            .collect(),
        barrier: Barrier::new(n + 1),
        cs: Delay::new(spec.cs),
        think: Delay::new(spec.think),
        lines: SharedLines::new(spec.cs_lines),
        counting,
    });
    let (tx, rx) = mpsc::channel::<WorkerOut>();
    // One sampler per process, built here so that every process shares one Zipf table.
    for (p, sampler) in spec.mix.samplers(n, spec.seed).into_iter().enumerate() {
        let shared = shared.clone();
        let tx = tx.clone();
        std::thread::Builder::new()
            .name(format!("lockbench-{p}"))
            .spawn(move || {
                let out = worker(&shared, p, sampler);
                let _ = tx.send(out);
            })
            .map_err(|e| RunFailure(format!("cannot start thread {p}: {e}")))?;
    }
    drop(tx);
    shared.barrier.wait();

    // The watchdog: poll progress; a run with no passage completed for `stall_timeout` is
    // aborted (waits in the register abstraction give up) and reported as stalled.
    let poll = Duration::from_millis(20);
    let started = Instant::now();
    let mut outs: Vec<WorkerOut> = Vec::with_capacity(n);
    let mut last_progress = 0u64;
    let mut last_change = Instant::now();
    let mut measure_at: Option<Instant> = None;
    let mut stalled = None;
    let mut invariant_failures = 0u64;
    let mut invariant_example = None;
    loop {
        while let Ok(out) = rx.try_recv() {
            outs.push(out);
        }
        if let Err(msg) = shared.lock.check_invariants(false) {
            invariant_failures += 1;
            invariant_example.get_or_insert(msg);
        }
        let now = Instant::now();
        match measure_at {
            None if now - started >= spec.warmup => {
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
        let progress: u64 = shared
            .progress
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .sum();
        if progress != last_progress {
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
        std::thread::sleep(poll);
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
    if outs.len() < n {
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
            spec.entry.info.name
        )));
    }
    if stalled.is_none() && outs.iter().any(|o| o.aborted) {
        stalled = Some("aborted".into());
    }
    outs.sort_by_key(|o| o.p);
    Ok(assemble(
        &shared,
        outs,
        stalled,
        invariant_failures,
        invariant_example,
    ))
}

fn assemble(
    shared: &Shared,
    outs: Vec<WorkerOut>,
    stalled: Option<String>,
    invariant_failures: u64,
    invariant_example: Option<String>,
) -> Repetition {
    let spec = &shared.spec;
    let npt = shared.ns_per_tick;
    let mut entry = ticks_histogram(npt);
    let mut passage = ticks_histogram(npt);
    let mut threads = Vec::with_capacity(outs.len());
    let mut trace = Vec::new();
    let mut truncated = false;
    let (mut inside_sum, mut inside_max) = (0u64, 0u64);
    let (mut first, mut last) = (u64::MAX, 0u64);
    let mut counters = Vec::with_capacity(outs.len());
    for o in outs {
        entry.add(&o.entry).expect("same bounds");
        passage.add(&o.passage).expect("same bounds");
        inside_sum += o.inside_sum;
        inside_max = inside_max.max(o.inside_max);
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
        0.0
    };
    Repetition {
        threads,
        entry,
        passage,
        passages,
        window_ns,
        throughput_per_sec: if window_ns > 0.0 {
            passages as f64 * 1e9 / window_ns
        } else {
            0.0
        },
        inside: (spec.check && passages > 0)
            .then(|| (inside_sum as f64 / passages as f64, inside_max)),
        violations: shared.oracle.violations(),
        invariant_failures,
        invariant_example,
        counters,
        stalled,
        trace: spec.trace.then_some((trace, truncated)),
        ns_per_tick: npt,
        rmr: shared.counting.as_ref().map(|m| m.summary()),
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

fn worker(shared: &Shared, p: usize, mut sampler: Sampler) -> WorkerOut {
    let spec = &shared.spec;
    let cpu = spec.cpus.get(p).copied().flatten();
    let pin_error = cpu.and_then(|c| pin_current_thread(c).err().map(|e| format!("cpu {c}: {e}")));
    let mut counters = ThreadCounters::open(&spec.counters);
    let mut out = WorkerOut {
        p,
        cpu,
        pin_error,
        entry: ticks_histogram(shared.ns_per_tick),
        passage: ticks_histogram(shared.ns_per_tick),
        passages: 0,
        window: (0, 0),
        inside_sum: 0,
        inside_max: 0,
        counters: Vec::new(),
        trace: Vec::new(),
        trace_truncated: false,
        panic: None,
        aborted: false,
    };
    shared.barrier.wait();
    let result = catch_unwind(AssertUnwindSafe(|| match (spec.check, spec.trace) {
        (false, false) => {
            passages::<false, false>(shared, p, &mut sampler, &mut out, &mut counters)
        }
        (true, false) => passages::<true, false>(shared, p, &mut sampler, &mut out, &mut counters),
        (false, true) => passages::<false, true>(shared, p, &mut sampler, &mut out, &mut counters),
        (true, true) => passages::<true, true>(shared, p, &mut sampler, &mut out, &mut counters),
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

/// The passage loop, monomorphised over the oracle and tracing so a timing run pays for
/// neither.
fn passages<const CHECK: bool, const TRACE: bool>(
    shared: &Shared,
    p: usize,
    sampler: &mut Sampler,
    out: &mut WorkerOut,
    counters: &mut ThreadCounters,
) {
    let spec = &shared.spec;
    let clock = &shared.clock;
    let lock = &*shared.lock;
    let quota = match spec.stop {
        StopRule::Passages(q) => q,
        StopRule::Duration(_) => u64::MAX,
    };
    let mut measuring = false;
    let mut count = 0u64;
    let mut total = 0u64;
    let mut prev = clock.raw();
    // Latency sampling: time every passage (mask 0), or every 2^k-th. `pending` says the last
    // timed request (`prev`) still waits for the next request to close its whole-passage time.
    let mask = if TRACE {
        0
    } else {
        spec.latency_sample.max(1).next_power_of_two() - 1
    };
    let mut pending = true;
    if TRACE {
        out.trace.reserve(spec.trace_capacity.min(1 << 16));
    }
    loop {
        let phase = shared.phase.load(Ordering::Relaxed);
        if phase != WARMUP {
            if !measuring {
                if phase == STOP {
                    break;
                }
                // Warm-up is over: start measuring from here.
                measuring = true;
                out.entry.reset();
                out.passage.reset();
                out.trace.clear();
                out.trace_truncated = false;
                out.inside_sum = 0;
                out.inside_max = 0;
                count = 0;
                counters.reset();
                counters.enable();
                if let Some(m) = &shared.counting {
                    m.reset_passages(p);
                }
                prev = clock.raw();
                // The first whole passage starts at the first request, not here.
                pending = false;
                out.window.0 = prev;
            } else if phase == STOP || count >= quota {
                break;
            }
        }
        shared.think.run();
        let session = sampler.next();
        let timed = count & mask == 0;
        let t0;
        let mut doorway = 0u64;
        if let Some(m) = &shared.counting {
            // `run --rmr`: the counting memory is told each section; the lock marks the doorway.
            t0 = if TRACE {
                fenced_now(clock)
            } else {
                clock.raw()
            };
            m.begin_passage(p);
            let mut seen = false;
            lock.enter_traced(p, session, &mut || {
                seen = true;
                m.set_section(p, Section::Waiting);
                if TRACE {
                    doorway = fenced_now(clock);
                }
            });
            if !seen {
                m.doorway_unobserved(p);
            }
            m.set_section(p, Section::Cs);
        } else if TRACE {
            t0 = fenced_now(clock);
            lock.enter_traced(p, session, &mut || doorway = fenced_now(clock));
        } else {
            t0 = if timed || pending { clock.raw() } else { 0 };
            lock.enter(p, session);
        }
        let t1 = if TRACE {
            fenced_now(clock)
        } else if timed {
            clock.raw()
        } else {
            0
        };
        let seen = if CHECK {
            Some(shared.oracle.enter(session))
        } else {
            None
        };
        shared.cs.run();
        shared.lines.touch();
        if let Some(e) = seen {
            out.inside_sum += e.inside;
            out.inside_max = out.inside_max.max(e.inside);
            shared.oracle.exit(e);
        }
        if let Some(m) = &shared.counting {
            m.set_section(p, Section::Exit);
        }
        if TRACE {
            let t2 = fenced_now(clock);
            lock.exit(p, session);
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
                    inside: seen.map_or(0, |e| e.inside as u32),
                });
            } else {
                out.trace_truncated = true;
            }
        } else {
            lock.exit(p, session);
        }
        if let Some(m) = &shared.counting {
            m.end_passage(p);
        }
        if pending {
            out.passage.saturating_record(t0.wrapping_sub(prev).max(1));
            pending = false;
        }
        if timed {
            out.entry.saturating_record(t1.wrapping_sub(t0).max(1));
            prev = t0;
            pending = true;
        }
        count += 1;
        total += 1;
        shared.progress[p].store(total, Ordering::Relaxed);
    }
    out.window.1 = clock.raw();
    out.passages = if measuring { count } else { 0 };
    if !measuring {
        out.entry.reset();
        out.passage.reset();
        out.trace.clear();
    }
}

/// The harness's own cost per passage: the clock reads, histogram records and bookkeeping of
/// the passage loop around a lock that does nothing, timing every `latency_sample`-th passage,
/// best of several rounds, in ns.
pub fn timing_overhead_ns(latency_sample: u64) -> f64 {
    let clock = Clock::new();
    let npt = ns_per_tick(&clock);
    let phase = AtomicU32::new(WARMUP);
    let progress = AtomicU64::new(0);
    let mut a = ticks_histogram(npt);
    let mut b = ticks_histogram(npt);
    let mask = latency_sample.max(1).next_power_of_two() - 1;
    const ROUNDS: usize = 5;
    const ITERS: u64 = 20_000;
    let mut best = f64::MAX;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let mut prev = clock.raw();
        let mut pending = false;
        for i in 0..ITERS {
            if std::hint::black_box(phase.load(Ordering::Relaxed)) == STOP {
                break;
            }
            let timed = i & mask == 0;
            let t0 = if timed || pending { clock.raw() } else { 0 };
            let t1 = if timed { clock.raw() } else { 0 };
            if pending {
                b.saturating_record(t0.wrapping_sub(prev).max(1));
                pending = false;
            }
            if timed {
                a.saturating_record(t1.wrapping_sub(t0).max(1));
                prev = t0;
                pending = true;
            }
            progress.store(i, Ordering::Relaxed);
        }
        best = best.min(start.elapsed().as_nanos() as f64 / ITERS as f64);
    }
    std::hint::black_box((&a, &b));
    best
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

    fn spec(entry: LockEntry, threads: usize, stop: StopRule) -> RunSpec {
        RunSpec {
            entry,
            threads,
            slots: threads,
            k: 1,
            mix: "distinct".parse().unwrap(),
            cs: Duration::from_micros(2),
            think: Duration::ZERO,
            cs_lines: 0,
            stop,
            warmup: Duration::ZERO,
            check: true,
            trace: false,
            trace_capacity: 0,
            latency_sample: 1,
            cpus: vec![None; threads],
            policy: WaitPolicy::YIELD,
            counters: Vec::new(),
            stall_timeout: Duration::from_millis(300),
            seed: 1,
            rmr: None,
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

    #[test]
    fn oracle_catches_a_lock_that_admits_everyone() {
        let entry = LockEntry {
            info: info("admit-all", Problem::Mutex),
            native: |_| Box::new(AdmitAll),
            scheduled: None,
            counting: None,
        };
        let r = run_once(&spec(
            entry,
            2,
            StopRule::Duration(Duration::from_millis(300)),
        ))
        .unwrap();
        assert!(
            r.violations > 0,
            "two threads in 2 µs critical sections for 300 ms overlapped"
        );
        assert_eq!(r.inside.unwrap().1, 2);
    }

    #[test]
    fn watchdog_stops_a_lock_that_never_admits() {
        let entry = LockEntry {
            info: info("never", Problem::Mutex),
            native: |p| {
                let mem = p.native();
                let reg = mem.register(Home::Shared, 0);
                Box::new(NeverAdmits(mem, reg))
            },
            scheduled: None,
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
        let entry = LockEntry {
            info: info("parks", Problem::Mutex),
            native: |_| Box::new(ParksForever),
            scheduled: None,
            counting: None,
        };
        let r = run_once(&spec(entry, 1, StopRule::Duration(Duration::from_secs(60)))).unwrap();
        let why = r.stalled.unwrap();
        assert!(why.contains("left behind"), "{why}");
    }

    #[test]
    fn passages_rule_counts_exactly() {
        let entry = crate::locks::find("ticket").unwrap();
        let r = run_once(&spec(entry, 2, StopRule::Passages(700))).unwrap();
        assert_eq!(r.passages, 1400);
        assert_eq!(r.violations, 0);
        assert_eq!(r.entry.len(), 1400);
        assert!(r.throughput_per_sec > 0.0);
        assert!(r.threads.iter().all(|t| t.passages == 700));
    }

    #[test]
    fn trace_records_every_measured_passage_in_order() {
        let entry = crate::locks::find("ticket").unwrap();
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
    fn sampled_latency_times_every_nth_passage() {
        let entry = crate::locks::find("ticket").unwrap();
        let mut s = spec(entry, 2, StopRule::Passages(800));
        s.latency_sample = 8;
        let r = run_once(&s).unwrap();
        assert_eq!(r.passages, 1600);
        assert_eq!(r.entry.len(), 200, "one entry latency in 8 per thread");
        assert_eq!(
            r.passage.len(),
            200,
            "every timed request closes one whole passage"
        );
        assert!(r.throughput_per_sec > 0.0);
    }

    #[test]
    fn overhead_is_measured() {
        let ns = timing_overhead_ns(1);
        assert!(timing_overhead_ns(16) > 0.0);
        assert!(ns > 0.0 && ns.is_finite());
    }
}
