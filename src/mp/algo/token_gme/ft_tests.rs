//! Crash recovery (seed 003 §5.3) on the simulator: crashes of a process holding nothing, of
//! the primary token's holder, of a process inside its critical section, of the coordinator
//! during a restart; safety throughout, every operational process served, and at most
//! 5(n − 1) recovery messages per crash.

use super::{Selection, TokenGme};
use crate::mp::algo::Setup;
use crate::mp::metrics::MpResult;
use crate::mp::run_config::RunConfig;
use crate::mp::sim::{run_crashing, run_logged, Crash, SimConfig};
use crate::mp::topo::Graph;
use crate::mp::workload::Dist;
use crate::mp::Problem;

const N: usize = 6;
const REQUESTS: u64 = 30;
const CS: f64 = 20.0;

fn cfg(seed: u64) -> SimConfig {
    SimConfig {
        run: RunConfig {
            algo: "token-gme".into(),
            problem: Problem::Gme,
            setup: Setup {
                n: N,
                m: 3,
                graph: Graph::complete(0),
                l: vec![0; N],
                k: vec![N; N],
                initial_in: vec![false; N],
                leader: 0,
            },
            requests: REQUESTS,
            seed,
            ncs: Dist::Exp(10.0),
            cs: Dist::Const(CS),
            delay: Dist::Exp(5.0),
            mix: "hot:3:20,80".parse().unwrap(),
            watchdog: 1e6,
        },
        topology: "complete".into(),
        fifo: true,
        trace: false,
    }
}

fn run(seed: u64, crashes: &[(usize, f64)]) -> MpResult {
    let crashes: Vec<Crash> = crashes.iter().map(|&(p, at)| Crash { p, at }).collect();
    run_crashing(&cfg(seed), &crashes, |p, s: &Setup| {
        TokenGme::new(p, s, Selection::Priority)
    })
}

/// Safe, live, every operational process served, the recovery within 5(n − 1) per crash.
fn recovered(r: &MpResult, crashes: u64) {
    assert_eq!(r.safety_violations, 0, "{:?}", r.violations);
    assert!(r.liveness_failure.is_none(), "{:?}", r.liveness_failure);
    assert!(
        r.requests >= (N as u64 - crashes) * REQUESTS,
        "{}",
        r.requests
    );
    let rec = r.recovery.as_ref().expect("crashes reported");
    assert_eq!(rec.crashes, crashes);
    assert!(rec.recovery_messages > 0);
    assert!(
        rec.recovery_messages <= rec.recovery_bound,
        "{} > {}",
        rec.recovery_messages,
        rec.recovery_bound
    );
    assert_eq!(rec.recovery_bound, 5 * (N as u64 - 1) * crashes);
}

#[test]
fn a_crash_of_a_process_holding_nothing() {
    // At time 0 only p0 holds a token (the primary).
    let r = run(1, &[(3, 0.0)]);
    recovered(&r, 1);
}

#[test]
fn a_crash_of_the_primary_holder_loses_the_token_and_recovery_regenerates_it() {
    // p0 holds the primary token at time 0; without recovery every request would wait for
    // ever. p1 coordinates and holds the new instance's primary token.
    let r = run(2, &[(0, 0.0)]);
    recovered(&r, 1);
}

#[test]
fn a_crash_inside_the_critical_section_and_of_its_token() {
    // Where the run without crashes has a process inside (it holds a token, primary or
    // secondary, there), crash it half-way through its critical section.
    for seed in 1..=3 {
        let (_, log) = run_logged(&cfg(seed), |p, s: &Setup| {
            TokenGme::new(p, s, Selection::Priority)
        });
        let (p, t) = log[log.len() / 3];
        let r = run(seed, &[(p, t + CS / 2.0)]);
        recovered(&r, 1);
        // The run is the same up to the crash: p entered as often as before it, the last
        // time being the critical section the crash cut short.
        let entered = log.iter().filter(|e| e.0 == p && e.1 <= t).count() as u64;
        let waits = r
            .waiting_by_process
            .iter()
            .find(|w| w.process == p)
            .unwrap();
        assert_eq!(waits.waits, entered);
    }
}

#[test]
fn the_coordinator_crashes_during_a_restart() {
    // p5 crashes; p0 coordinates and crashes before the restart can end; p1 takes over.
    for seed in 1..=3 {
        let r = run(seed, &[(5, 100.0), (0, 101.0)]);
        recovered(&r, 2);
    }
}

#[test]
fn crashes_anywhere_over_seeds_keep_safety_and_the_bound() {
    let mut old_requests = 0;
    for seed in 1..=12 {
        let p = (seed as usize * 7) % N;
        let q = (p + 1 + seed as usize % (N - 1)) % N;
        let t = 37.0 * seed as f64;
        let crashes = if seed % 2 == 0 {
            vec![(p, t)]
        } else {
            vec![(p, t), (q, t + 13.0 * (seed % 4) as f64)]
        };
        let r = run(seed, &crashes);
        recovered(&r, crashes.len() as u64);
        old_requests += r.recovery.unwrap().leave_messages;
    }
    // Some restarts found pending requests and served them as old requests.
    assert!(old_requests > 0);
}

#[test]
fn no_crash_no_recovery() {
    let r = run(1, &[]);
    assert!(r.recovery.is_none());
    assert!(!r.messages_by_kind.iter().any(|k| k.kind == "NOTIFY"));
}

#[test]
fn without_recovery_a_lost_primary_token_stalls_the_run() {
    // The negative control: the bounded variant ignores the failure detector (§5.3 is built
    // on the unbounded algorithm here), so the crash of the primary holder is never repaired.
    let crashes = [Crash { p: 0, at: 0.0 }];
    let r = run_crashing(&cfg(2), &crashes, |p, s: &Setup| {
        TokenGme::new_bounded(p, s, Selection::Priority, 8)
    });
    assert!(r.liveness_failure.is_some());
}
