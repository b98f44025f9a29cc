//! The watchdog of a repetition, on the thread that launched it: it moves the phase flag from
//! the warm-up to the measured phase and to the stop, checks the lock's register bounds while
//! the workers run, stops a run in which no passage completes for the stall timeout (or that a
//! signal interrupts), and collects what the workers hand back, naming those it cannot reach.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::locks::Lock;
use crate::runner::shared::{Shared, WorkerOut, MEASURE, STOP};
use crate::runner::spec::{LoopKind, StopRule};

/// How often the watchdog looks at progress (and at the phase's deadline).
pub const WATCHDOG_POLL: Duration = Duration::from_millis(20);

/// What the watchdog saw of a repetition.
pub(super) struct Watched {
    /// What the workers handed back, in the order they did.
    pub(super) outs: Vec<WorkerOut>,
    /// The measured phase as the watchdog set it (clock ticks): the window of a run in which
    /// no passage completed.
    pub(super) phase_window: (u64, u64),
    /// Whether every worker came back.
    pub(super) all_back: bool,
    /// Why the run was stopped early, when it stalled.
    pub(super) stalled: Option<String>,
    /// Failed register-invariant checks.
    pub(super) invariant_failures: u64,
    /// The first invariant failure.
    pub(super) invariant_example: Option<String>,
}

/// Watches the repetition whose workers were started on `shared` until it ends, then stops
/// them and collects what they hand back on `rx`; `abort` makes waiting workers give up.
pub(super) fn watch<L: Lock>(
    shared: &Shared<L>,
    kind: LoopKind,
    rx: &mpsc::Receiver<WorkerOut>,
    abort: &AtomicBool,
) -> Watched {
    let mut watched = poll(shared, kind, rx, abort);
    collect(shared, rx, abort, &mut watched);
    watched
}

/// Polls progress; a run with no passage completed for `stall_timeout` is aborted (waits in
/// the register abstraction give up) and reported as stalled. A bare loop reports no progress
/// until it ends, so it is only stopped at its duration. Returns once the phase is set to stop.
fn poll<L: Lock>(
    shared: &Shared<L>,
    kind: LoopKind,
    rx: &mpsc::Receiver<WorkerOut>,
    abort: &AtomicBool,
) -> Watched {
    let spec = &shared.spec;
    let n = spec.threads;
    let poll = WATCHDOG_POLL.min(spec.warmup.max(Duration::from_millis(1)));
    let started = Instant::now();
    let mut outs: Vec<WorkerOut> = Vec::with_capacity(n);
    let mut last_progress = 0u64;
    let mut last_change = Instant::now();
    let mut measure_at: Option<Instant> = None;
    let mut stalled = None;
    let mut invariant_failures = 0u64;
    let mut invariant_example = None;
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
    Watched {
        outs,
        phase_window,
        all_back: false,
        stalled,
        invariant_failures,
        invariant_example,
    }
}

/// Collects the rest. Threads blocked where the watchdog cannot reach them (inside a parked
/// mutex, say) are left behind and named.
fn collect<L>(
    shared: &Shared<L>,
    rx: &mpsc::Receiver<WorkerOut>,
    abort: &AtomicBool,
    watched: &mut Watched,
) {
    let spec = &shared.spec;
    let n = spec.threads;
    let outs = &mut watched.outs;
    let grace = Duration::from_secs(2).max(spec.cs * 4);
    let deadline = Instant::now() + grace;
    while outs.len() < n {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(out) => outs.push(out),
            Err(_) => break,
        }
    }
    watched.all_back = outs.len() == n;
    if !watched.all_back {
        let missing: Vec<usize> = (0..n).filter(|p| !outs.iter().any(|o| o.p == *p)).collect();
        let note = format!(
            "threads {missing:?} did not stop within {:.1} s (blocked inside the lock where the \
             watchdog cannot reach them); they were left behind",
            grace.as_secs_f64()
        );
        watched.stalled = Some(match watched.stalled.take() {
            Some(s) => format!("{s}; {note}"),
            None => note,
        });
        abort.store(true, Ordering::Relaxed);
    }
    if watched.stalled.is_none() && outs.iter().any(|o| o.aborted) {
        watched.stalled = Some("aborted".into());
    }
}
