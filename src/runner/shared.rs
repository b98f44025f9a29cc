//! Where the thread that launches a repetition and its workers meet: the start gate, the phase
//! flag the watchdog moves, the progress counters it reads, the lock and the oracles every
//! worker uses ([`Shared`]), and what each worker hands back ([`WorkerOut`]).

use std::sync::atomic::{AtomicU32, AtomicU64};
use std::sync::{Condvar, Mutex};

use crossbeam_utils::CachePadded;
use quanta::Clock;

use crate::check::trace::TraceRecord;
use crate::metrics::counters::CounterSample;
use crate::runner::checkers::{CheckLocal, Guards};
use crate::runner::sampling::ns_per_tick;
use crate::runner::spec::{Latencies, RunSpec};
use crate::workload::{Delay, SharedLines};

/// The phase flag's values: warming up, measuring, stopping.
pub(super) const WARMUP: u32 = 0;
pub(super) const MEASURE: u32 = 1;
pub(super) const STOP: u32 = 2;

/// Where a repetition's workers wait to start together: a barrier the main thread opens once
/// all have arrived, or calls off (a thread could not be started) so that none is left
/// waiting.
pub(super) struct StartGate {
    workers: usize,
    /// Workers arrived; then whether to start (Some(true)) or go home (Some(false)).
    state: Mutex<(usize, Option<bool>)>,
    changed: Condvar,
}

impl StartGate {
    pub(super) fn new(workers: usize) -> Self {
        StartGate {
            workers,
            state: Mutex::new((0, None)),
            changed: Condvar::new(),
        }
    }

    /// A worker arrives and waits: true to start, false when the run was called off.
    pub(super) fn arrive(&self) -> bool {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.0 += 1;
        // Only the last arrival wakes anyone (the opener among them): waking every waiter at
        // each arrival would cost n² wake-ups to start n threads.
        if s.0 == self.workers {
            self.changed.notify_all();
        }
        loop {
            if let Some(go) = s.1 {
                return go;
            }
            s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Waits until every worker has arrived, then starts them all.
    pub(super) fn open(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while s.0 < self.workers {
            s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        s.1 = Some(true);
        self.changed.notify_all();
    }

    /// Sends every worker that arrives, or has, home.
    pub(super) fn call_off(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).1 = Some(false);
        self.changed.notify_all();
    }
}

/// State shared by the workers of one repetition.
pub(super) struct Shared<L> {
    pub(super) spec: RunSpec,
    /// On lines of its own: the lock's words must not share a line with anything the loop
    /// reads, or every passage of one thread would invalidate the others' copy.
    pub(super) lock: CachePadded<L>,
    pub(super) guards: Guards,
    pub(super) clock: Clock,
    pub(super) ns_per_tick: f64,
    pub(super) phase: CachePadded<AtomicU32>,
    pub(super) progress: Box<[CachePadded<AtomicU64>]>,
    pub(super) gate: StartGate,
    pub(super) cs: Delay,
    pub(super) think: Delay,
    pub(super) lines: SharedLines,
}

impl<L> Shared<L> {
    /// The state of a repetition of `spec` on `lock`, in the warm-up, no worker arrived yet.
    pub(super) fn new(spec: &RunSpec, lock: L) -> Self {
        let n = spec.threads;
        let clock = Clock::new();
        Shared {
            spec: spec.clone(),
            lock: CachePadded::new(lock),
            guards: Guards::new(spec.lock.info.problem, spec.k),
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
        }
    }
}

/// What a worker hands back.
pub(super) struct WorkerOut {
    pub(super) p: usize,
    pub(super) cpu: Option<usize>,
    pub(super) pin_error: Option<String>,
    pub(super) latency: Latencies,
    pub(super) passages: u64,
    pub(super) window: (u64, u64),
    pub(super) check: CheckLocal,
    pub(super) counters: Vec<CounterSample>,
    pub(super) trace: Vec<TraceRecord>,
    pub(super) trace_truncated: bool,
    /// A panic other than the watchdog's abort.
    pub(super) panic: Option<String>,
    pub(super) aborted: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

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
