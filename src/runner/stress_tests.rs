//! Every safe lock under the oracle: 2 threads pinned, then 4–8 threads oversubscribed with
//! spin-then-yield; no violation, no register-bound failure, no stall.

use std::time::Duration;

use crate::check::OracleKind;
use crate::locks::Problem;
use crate::mem::WaitPolicy;
use crate::metrics::counters::CounterSpec;
use crate::registry::{registry, LockEntry};
use crate::runner::exec::{run_once, RunSpec, StopRule};
use crate::runner::topology::{cpu_for, PinMode, Topology};
use crate::workload::Mix;

fn spec(
    entry: LockEntry,
    threads: usize,
    k: usize,
    mix: &str,
    passages: u64,
    pinned: bool,
) -> RunSpec {
    let topo = Topology::detect().unwrap();
    let placement = topo.placement(PinMode::Physical, false);
    RunSpec {
        k,
        mix: mix.parse::<Mix>().unwrap(),
        cs_lines: 1,
        oracle: OracleKind::Counting,
        cpus: (0..threads)
            .map(|t| if pinned { cpu_for(&placement, t) } else { None })
            .collect(),
        policy: if pinned && threads <= placement.len() {
            WaitPolicy::Spin
        } else {
            WaitPolicy::YIELD
        },
        counters: vec![CounterSpec::TaskClock],
        stall_timeout: Duration::from_secs(20),
        seed: 7,
        ..RunSpec::new(entry.subject(), threads, StopRule::Passages(passages))
    }
}

/// The mixes a lock is stressed under: every request its own session, and for GME a mix with
/// both sharing and conflicts.
fn mixes(e: &LockEntry) -> Vec<&'static str> {
    match e.info.problem {
        Problem::Gme => vec!["distinct", "uniform:2", "rw:0.7"],
        Problem::Mutex => vec!["distinct"],
        Problem::KExclusion => vec!["single"],
    }
}

fn stress(threads: usize, passages: u64, pinned: bool) {
    let mut checked = 0;
    for e in registry().into_iter().filter(|e| e.info.safe) {
        let ks: Vec<usize> = if e.info.problem == Problem::KExclusion {
            vec![1, 2.min(threads)]
        } else {
            vec![1]
        };
        for k in ks {
            for mix in mixes(&e) {
                let r = run_once(&spec(e.clone(), threads, k, mix, passages, pinned))
                    .unwrap_or_else(|f| panic!("{}: {f}", e.info.name));
                let what = format!("{} threads={threads} k={k} mix={mix}", e.info.name);
                assert!(r.stalled.is_none(), "{what}: stalled: {:?}", r.stalled);
                assert_eq!(r.violations, 0, "{what}: safety violations");
                assert_eq!(r.invariant_failures, 0, "{what}: {:?}", r.invariant_example);
                assert_eq!(r.passages, passages * threads as u64, "{what}: passages");
                if let Some((_, max)) = r.inside {
                    match e.info.problem {
                        Problem::Mutex => assert_eq!(max, 1, "{what}"),
                        Problem::KExclusion => assert!(max as usize <= k, "{what}"),
                        Problem::Gme => assert!(max as usize <= threads, "{what}"),
                    }
                }
                checked += 1;
            }
        }
    }
    assert!(
        checked >= 14,
        "every safe lock was stressed ({checked} runs)"
    );
}

#[test]
fn every_lock_two_threads_pinned() {
    stress(2, 3000, true);
}

#[test]
fn every_lock_oversubscribed_with_spin_then_yield() {
    stress(4, 400, false);
    stress(7, 150, false);
}
