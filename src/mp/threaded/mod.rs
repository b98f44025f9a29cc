//! The threaded runtime: one OS thread per process (pinned to the allowed CPUs in turn, with
//! the shared-memory runner's helpers), unbounded channels between them, real time in
//! milliseconds. Each process thread runs its own loop (`process`); a monitor under a mutex
//! sees every entry and exit in causal order (`monitor`), so the safety check is exact.

mod monitor;
mod process;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::channel;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use self::monitor::Monitor;
use self::process::{Envelope, Process, Shared};
use super::algo::Setup;
use super::metrics::{MpResult, Tally};
use super::run_config::RunConfig;
use super::{Algorithm, Pid};
use crate::runner::topology::{allowed_cpus, pin_current_thread};

/// A threaded run: the run (times in ms, the watchdog in seconds), and thread placement.
#[derive(Clone, Debug)]
pub struct ThreadConfig {
    /// The run.
    pub run: RunConfig,
    /// Pin each process thread to a CPU in turn.
    pub pin: bool,
}

/// Runs the algorithm built by `make` on one thread per process.
pub fn run<A: Algorithm + 'static>(
    cfg: &ThreadConfig,
    make: impl Fn(Pid, &Setup) -> A,
) -> anyhow::Result<MpResult> {
    let run = &cfg.run;
    let s = &run.setup;
    let n = s.n;
    let procs: Vec<A> = (0..n).map(|p| make(p, s)).collect();
    let start = Instant::now();
    let mut mon = Monitor::new(run, start);
    for (p, a) in procs.iter().enumerate() {
        if a.starts_inside() {
            mon.safety.start_inside(p);
        }
    }
    let (senders, receivers): (Vec<_>, Vec<_>) =
        (0..n).map(|_| channel::<Envelope<A::Msg>>()).unzip();
    let shared = Shared {
        senders,
        monitor: Mutex::new(mon),
        stop: AtomicBool::new(false),
        finished: AtomicUsize::new(0),
        delivered: AtomicUsize::new(0),
        start,
    };
    let cpus = if cfg.pin {
        allowed_cpus().unwrap_or_default()
    } else {
        Vec::new()
    };
    let samplers = run.mix.samplers(n, run.seed);
    let (liveness, tallies) = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for ((p, (alg, rx)), sampler) in procs.into_iter().zip(receivers).enumerate().zip(samplers)
        {
            let cpu = (!cpus.is_empty()).then(|| cpus[p % cpus.len()]);
            let shared = &shared;
            handles.push(scope.spawn(move || {
                if let Some(c) = cpu {
                    // Pinning is best effort: an unpinned process still runs correctly.
                    let _ = pin_current_thread(c);
                }
                Process::new(p, alg, rx, sampler, run, shared).run()
            }));
        }
        let liveness = watch(&shared, n, run.watchdog);
        shared.stop.store(true, Ordering::Release);
        let tallies: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
        (liveness, tallies)
    });
    let mut tally = Tally::new(n);
    for t in tallies {
        let t = t.map_err(|_| anyhow::anyhow!("a process thread panicked"))?;
        tally.absorb(&t);
    }
    let elapsed = start.elapsed();
    let mut m = shared.monitor.lock().expect("monitor");
    m.tick(Instant::now());
    m.figures_into(&mut tally);
    let mut r = run.result("threaded", run.topology_name(), true);
    r.events = shared.delivered.load(Ordering::Relaxed) as u64;
    r.wall_seconds = elapsed.as_secs_f64();
    r.safety_violations = m.safety.violations;
    r.violations = m.safety.described.clone();
    r.liveness_failure = liveness;
    r.figures(&tally, elapsed.as_secs_f64() * 1e3, !run.local());
    Ok(r)
}

/// The watchdog: until every process has made its requests, looks every 20 ms for a request
/// waiting longer than `watchdog` seconds; the first found, described.
fn watch<M>(shared: &Shared<M>, n: usize, watchdog: f64) -> Option<String> {
    while shared.finished.load(Ordering::Acquire) < n {
        std::thread::sleep(Duration::from_millis(20));
        let m = shared.monitor.lock().expect("monitor");
        if let Some(stuck) = m.overdue(Instant::now(), watchdog) {
            return Some(stuck);
        }
    }
    None
}
