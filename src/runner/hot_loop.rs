//! The passage loops, the code a timed run spends its time in (`scripts/hot-loop-asm.sh` shows
//! their machine code).
//!
//! Each loop is generic over the lock's concrete type (the registry's
//! [`Bench`](crate::runner::spec::Bench) function instantiates
//! [`run_typed`](crate::runner::exec::run_typed) per lock), over the safety [`Checker`] and over
//! tracing, so each combination compiles to its own loop with the lock's fast path inlined and
//! nothing in it that the run did not ask for. Per passage, a default run adds a relaxed load
//! of the phase flag, a session draw, the self-checking critical section (a plain load and
//! store of one shared word, and a load to read it back), a countdown to the next timed
//! passage and a store of the progress counter. One passage in `latency_sample` (at random) is
//! timed: entry, exit and whole-passage latency.
//!
//! [`bare`] runs the same lock in a loop with nothing else — no clock, no check, no
//! bookkeeping, the count kept in a register and written once at the end — the reference that
//! `lockbench fidelity` holds the harness against.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use quanta::Clock;

use crate::check::trace::TraceRecord;
use crate::locks::Lock;
use crate::metrics::counters::ThreadCounters;
use crate::metrics::latency::SampleGaps;
use crate::runner::checkers::{CheckLocal, Checker, Guards};
use crate::runner::sampling::adapted_latency_sample;
use crate::runner::shared::{Shared, WorkerOut, MEASURE, STOP, WARMUP};
use crate::runner::spec::{Latencies, StopRule};
use crate::workload::rng::Rng;
use crate::workload::{Delay, Sampler, SharedLines};

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

/// The bare loop: `enter; exit` until the phase changes, the count in a register, written
/// once at the end. The warm-up runs the same loop and is not counted.
#[inline(never)]
pub(super) fn bare<L: Lock>(shared: &Shared<L>, p: usize, session: usize, out: &mut WorkerOut) {
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
/// not the whole check (`Checker::SPARSE`).
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
pub(super) fn passages<L: Lock, C: Checker>(
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
pub(super) fn traced_passages<L: Lock, C: Checker>(
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
