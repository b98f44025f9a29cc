//! The harness at high thread counts, oversubscribed on whatever this machine has: 128 and
//! 1024 threads waiting with spin-then-yield on tiny workloads start together, stop, and hand
//! back every result (each thread's passages, no violation, no stall).

use std::time::Duration;

use crate::check::OracleKind;
use crate::mem::WaitPolicy;
use crate::registry::lookup;
use crate::runner::exec::{run_once, Repetition, RunSpec, StopRule};

fn spec(lock: &str, threads: usize, stop: StopRule, oracle: OracleKind) -> RunSpec {
    RunSpec {
        oracle,
        policy: WaitPolicy::YIELD,
        stall_timeout: Duration::from_secs(60),
        seed: 3,
        ..RunSpec::new(lookup(lock).unwrap().subject(), threads, stop)
    }
}

/// Every thread came back with `each` passages (when given), nothing stalled or was unsafe.
fn complete(r: &Repetition, threads: usize, each: Option<u64>) {
    assert!(r.stalled.is_none(), "stalled: {:?}", r.stalled);
    assert_eq!(r.violations, 0);
    assert_eq!(r.threads.len(), threads, "a thread's result was lost");
    let sum: u64 = r.threads.iter().map(|t| t.passages).sum();
    assert_eq!(sum, r.passages);
    for (p, t) in r.threads.iter().enumerate() {
        if let Some(n) = each {
            assert_eq!(t.passages, n, "thread {p}");
        }
        assert!(t.pin_error.is_none(), "thread {p}: {:?}", t.pin_error);
        assert!(
            t.passages == 0 || t.window_ns > 0.0,
            "thread {p}: {} passages in a window of {} ns",
            t.passages,
            t.window_ns
        );
    }
}

#[test]
fn a_fifo_lock_at_128_threads_counts_every_passage() {
    // The ticket lock hands over in FIFO order, so every hand-off needs its one successor
    // scheduled: the hardest case for oversubscription. The counting oracle's shared line is
    // touched by every entry.
    let r = run_once(&spec(
        "ticket",
        128,
        StopRule::Passages(20),
        OracleKind::Counting,
    ))
    .unwrap();
    complete(&r, 128, Some(20));
    assert_eq!(r.passages, 128 * 20);
    let (_, max_inside) = r.inside.unwrap();
    assert_eq!(max_inside, 1);
}

#[test]
fn a_sleeping_lock_at_1024_threads_counts_every_passage() {
    let r = run_once(&spec(
        "std-mutex",
        1024,
        StopRule::Passages(5),
        OracleKind::SelfCheck,
    ))
    .unwrap();
    complete(&r, 1024, Some(5));
    assert_eq!(r.passages, 1024 * 5);
}

#[test]
fn a_timed_run_at_1024_threads_stops_and_hands_everything_back() {
    // Under a duration, the phase flag stops all 1024 threads; each one's outcome comes back
    // even though most of them spent the window waiting.
    let r = run_once(&spec(
        "std-mutex",
        1024,
        StopRule::Duration(Duration::from_millis(300)),
        OracleKind::Sampled,
    ))
    .unwrap();
    complete(&r, 1024, None);
    assert!(r.passages > 0);
}
