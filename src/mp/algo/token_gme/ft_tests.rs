//! Crash recovery (seed 003 §5.3) on the simulator: crashes of a process holding nothing, of
//! the primary token's holder, of a process inside its critical section, of the coordinator
//! during a restart (and of a second process during one); safety throughout, every
//! operational process served, and each restart operation within n − 1 messages of each of
//! §5.3.4's five kinds, 5(n − 1) in all (counted in `mp/restarts.rs`).

use super::{Selection, TokenGme};
use crate::mp::algo::Setup;
use crate::mp::metrics::MpResult;
use crate::mp::run_config::RunConfig;
use crate::mp::sim::{run_crashing, run_logged, Crash, SimConfig};
use crate::mp::workload::Dist;
use crate::mp::Problem;

const N: usize = 6;
const REQUESTS: u64 = 30;
const CS: f64 = 20.0;

fn cfg(seed: u64) -> SimConfig {
    cfg_load(seed, 10.0)
}

/// `ncs`: the mean time outside the critical section (10: heavy load, 200: light).
fn cfg_load(seed: u64, ncs: f64) -> SimConfig {
    cfg_n(seed, ncs, N, REQUESTS)
}

/// [`cfg_load`] on `n` processes making `requests` requests each.
fn cfg_n(seed: u64, ncs: f64, n: usize, requests: u64) -> SimConfig {
    SimConfig {
        run: RunConfig {
            algo: "token-gme".into(),
            problem: Problem::Gme,
            setup: Setup::complete(n, 3),
            requests,
            seed,
            ncs: Dist::Exp(ncs),
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
    assert_eq!(rec.operation_bound, 5 * (N as u64 - 1));
    assert!(rec.failures().is_empty(), "{:?}", rec.failures());
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

/// What fails in a run with `crashes` crashes: a safety violation, a stall, an operational
/// process not served, or more recovery messages than 5(n − 1) per crash.
fn failure(r: &MpResult, crashes: u64) -> Option<String> {
    if r.safety_violations > 0 {
        return Some("safety".into());
    }
    if let Some(l) = &r.liveness_failure {
        return Some(format!("liveness: {l}"));
    }
    if r.requests < (N as u64 - crashes) * REQUESTS {
        return Some(format!("served {}", r.requests));
    }
    let rec = r.recovery.as_ref()?;
    let f = rec.failures();
    (!f.is_empty()).then(|| format!("bound: {}", f.join("; ")))
}

/// The four crash schedules (the primary holder, a process inside its critical section, the
/// coordinator during its restart, a random one) × 12 seeds × 2 loads, with step FT-`k` left
/// out or replaced (0: none): the failures, as (schedule, seed, ncs, what).
fn search(k: u8) -> (Vec<(usize, u64, f64, String)>, u64) {
    super::ft::WITHOUT.with(|w| w.set(k));
    super::ft::HITS.with(|h| h.set(0));
    let mut out = Vec::new();
    for ncs in [10.0, 200.0] {
        for seed in 1..=12u64 {
            let c = cfg_load(seed, ncs);
            let (_, log) = run_logged(&c, |p, s: &Setup| TokenGme::new(p, s, Selection::Priority));
            let (ip, it) = log[log.len() / 3];
            let p = (seed as usize * 7) % N;
            let q = (p + 1 + seed as usize % (N - 1)) % N;
            let t = 37.0 * seed as f64;
            let schedules = [
                vec![(0, 0.0)],
                vec![(ip, it + CS / 2.0)],
                vec![(5, 100.0), (0, inside_first_restart(&c))],
                vec![(p, t), (q, t + 13.0 * (seed % 4) as f64)],
            ];
            for (i, s) in schedules.iter().enumerate() {
                let crashes: Vec<Crash> = s.iter().map(|&(p, at)| Crash { p, at }).collect();
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    run_crashing(&c, &crashes, |p, s: &Setup| {
                        TokenGme::new(p, s, Selection::Priority)
                    })
                }));
                let f = match r {
                    Ok(r) => failure(&r, crashes.len() as u64),
                    Err(e) => Some(format!(
                        "panic: {}",
                        crate::error::panic_message(&*e).unwrap_or_default()
                    )),
                };
                if let Some(f) = f {
                    out.push((i, seed, ncs, f));
                }
            }
        }
    }
    super::ft::WITHOUT.with(|w| w.set(0));
    (out, super::ft::HITS.with(|h| h.get()))
}

/// A time inside the restart p5's crash at 100 causes: 0.01 after its coordinator p0 began
/// it (sent RESTART), in the variant under test (101 when none began). The look-ahead run's
/// hits are not counted.
fn inside_first_restart(c: &SimConfig) -> f64 {
    let hits = super::ft::HITS.with(|h| h.get());
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_cfg(c, &[(5, 100.0)])));
    super::ft::HITS.with(|h| h.set(hits));
    r.ok()
        .and_then(|r| r.recovery?.operations.iter().find(|o| o.id == 1)?.begun)
        .map_or(101.0, |t| t + 0.01)
}

/// The failures of `search(k)`, each (schedule, what) with `what` cut to its kind.
fn kinds(k: u8) -> (Vec<(usize, String)>, u64) {
    let (f, hits) = search(k);
    let kind = |w: &str| w.split(':').next().unwrap_or_default().to_string();
    (
        f.into_iter().map(|(i, _, _, w)| (i, kind(&w))).collect(),
        hits,
    )
}

#[test]
fn with_every_step_the_search_finds_no_failure() {
    assert_eq!(search(0), (Vec::new(), 0));
}

#[test]
fn ft1_without_instance_ids_a_token_of_an_aborted_instance_breaks_safety() {
    // A PRIMARY or SECONDARY of the aborted instance still in flight arrives in the new one:
    // two primaries, two sessions, a second token at one process.
    let (f, _) = kinds(1);
    assert!(f.iter().any(|(_, w)| w == "safety"), "{f:?}");
    assert!(f.iter().any(|(_, w)| w == "panic"), "{f:?}");
}

#[test]
fn ft2_with_p0_holding_the_new_primary_a_crash_of_p0_stalls() {
    // A0 as written gives the primary token to p0; once p0 has crashed nobody holds it.
    let (f, _) = kinds(2);
    assert!(f.iter().any(|(i, w)| *i == 0 && w == "liveness"), "{f:?}");
    assert!(f.iter().all(|(_, w)| w == "liveness"), "{f:?}");
}

/// FT-3 keeps the per-crash budget. A coordinator that restarts on its own detection (not
/// waiting for the NOTIFYs) is as safe and live: a RESTART carries the set, and a perfect
/// detector brings every process to it. But where the coordinator crashes inside its own
/// restart, its successor restarts the aborted instance at once and then again for the
/// coordinator's crash: three operations for two failures. Each operation stays within
/// 5(n − 1), and so do all the messages together, but more RESTARTs than (n − 1) per failure
/// are charged to the two crashes, which the simulator observes.
#[test]
fn ft3_restarting_without_waiting_for_the_notifies_sends_more_restarts_than_two_failures_allow() {
    let (f, hits) = search(3);
    assert!(hits > 0, "the wait was never needed");
    assert!(!f.is_empty(), "no run went over");
    for (i, _, _, w) in &f {
        assert_eq!(*i, 2, "{f:?}");
        assert!(
            // Only the per-crash count: no operation and not the whole run over its bound.
            w.starts_with("bound: the crashes up to p0's")
                && w.contains("RESTART 7")
                && !w.contains("restart operation")
                && !w.contains("(2n-1)r"),
            "{w}"
        );
    }
}

/// FT-4's order is a choice: each group holds one type and enters only once the previous one
/// has left, so any order of the types keeps one session at a time; decreasing type works too.
#[test]
fn ft4_old_requests_in_decreasing_type_is_a_choice() {
    let (f, hits) = kinds(4);
    assert!(hits > 0, "no schedule with two types");
    assert_eq!(f, Vec::new());
}

/// FT-5 is a choice: the A4 of an aborted instance only sends messages of that instance,
/// which a process that has restarted drops (FT-1) and one that has not takes only to abort
/// it soon after; running A4 first costs those messages and changes nothing else.
#[test]
fn ft5_a4_before_the_deferred_restart_is_a_choice() {
    let (f, hits) = kinds(5);
    assert!(hits > 0, "no RESTART was deferred");
    assert_eq!(f, Vec::new());
}

#[test]
fn ft6_a_request_made_while_suspended_breaks_safety() {
    // Made at once in the new instance, it meets the coordinator's primary token while the
    // old requests are inside: two types in their critical sections together.
    let (f, _) = kinds(6);
    assert!(f.iter().any(|(_, w)| w == "safety"), "{f:?}");
}

#[test]
fn ft7_an_old_request_dropped_by_a_repeated_restart_is_never_served() {
    // Only a crash during a restart makes a second one while old requests wait: the
    // coordinator's crash inside its own restart, and two crashes at random.
    let (f, _) = kinds(7);
    assert!(f.iter().any(|(i, _)| *i == 2), "{f:?}");
    assert!(
        f.iter()
            .all(|(i, w)| (*i == 2 || *i == 3) && w == "liveness"),
        "{f:?}"
    );
}

// Seed 003 §5.3.4 per restart operation: n − 1 of each of the five kinds, 5(n − 1) in all.

/// Runs `cfg` with `crashes` on the fault-tolerant TokenGME.
fn run_cfg(cfg: &SimConfig, crashes: &[(usize, f64)]) -> MpResult {
    let crashes: Vec<Crash> = crashes.iter().map(|&(p, at)| Crash { p, at }).collect();
    run_crashing(cfg, &crashes, |p, s: &Setup| {
        TokenGme::new(p, s, Selection::Priority)
    })
}

/// The operations as (id, coordinator, status).
fn ops(r: &MpResult) -> Vec<(u64, usize, &'static str)> {
    let rec = r.recovery.as_ref().expect("crashes reported");
    rec.operations
        .iter()
        .map(|o| (o.id, o.coordinator, o.status))
        .collect()
}

/// When restart operation 1 of a run with p5 crashing at 100 began (p0 coordinates).
fn first_restart_begun(cfg: &SimConfig) -> f64 {
    let r = run_cfg(cfg, &[(5, 100.0)]);
    recovered(&r, 1);
    assert_eq!(ops(&r), [(1, 0, "completed")]);
    r.recovery.unwrap().operations[0].begun.unwrap()
}

#[test]
fn the_coordinator_crashing_during_its_own_restart_aborts_it_and_p1_restarts_apart() {
    // The run is the same up to the second crash: p0 crashes just after sending RESTART.
    for ncs in [10.0, 200.0] {
        for seed in 1..=4 {
            let c = cfg_load(seed, ncs);
            let t = first_restart_begun(&c);
            let r = run_cfg(&c, &[(5, 100.0), (0, t + 0.01)]);
            recovered(&r, 2);
            assert_eq!(ops(&r), [(1, 0, "aborted"), (2, 1, "completed")], "{seed}");
            let o = &r.recovery.as_ref().unwrap().operations;
            // Each counted on its own: p0's RESTARTs are its operation's, p1's its own.
            assert_eq!((o[0].kinds.restart, o[1].kinds.restart), (4, 3));
            assert_eq!((o[0].kinds.resume, o[1].kinds.resume), (0, 3));
        }
    }
}

#[test]
fn a_second_crash_during_a_restart_aborts_it_and_the_coordinator_restarts_again() {
    // p3 crashes before the RESTART reaches it: p0 never hears its DONE, learns of the crash
    // and begins operation 2 on {3, 5}.
    for ncs in [10.0, 200.0] {
        for seed in 1..=4 {
            let c = cfg_load(seed, ncs);
            let t = first_restart_begun(&c);
            let r = run_cfg(&c, &[(5, 100.0), (3, t + 0.01)]);
            recovered(&r, 2);
            assert_eq!(ops(&r), [(1, 0, "aborted"), (2, 0, "completed")], "{seed}");
            let o = &r.recovery.as_ref().unwrap().operations;
            assert_eq!(
                (o[0].kinds.done, o[0].kinds.resume, o[1].kinds.restart),
                (3, 0, 3)
            );
        }
    }
}

/// A crash schedule drawn from `rng` for `n` processes: one to three crashes (at most n − 1),
/// the first in [0, 400), each next one either soon after (within 40: often during the
/// restart the previous one caused) or anywhere later.
fn random_schedule(rng: &mut crate::workload::rng::Rng, n: usize) -> Vec<(usize, f64)> {
    let f = 1 + rng.below(3.min(n as u64 - 1)) as usize;
    let mut procs: Vec<usize> = (0..n).collect();
    let mut t = 400.0 * rng.next_f64();
    let mut out = Vec::new();
    for _ in 0..f {
        let p = procs.swap_remove(rng.below(procs.len() as u64) as usize);
        out.push((p, t));
        t += if rng.chance(0.5) { 40.0 } else { 400.0 } * rng.next_f64();
    }
    out
}

#[test]
fn every_restart_operation_and_the_whole_run_within_the_bounds_over_random_schedules() {
    const R: u64 = 12;
    let mut rng = crate::workload::rng::Rng::new(3, 0x5_3_4);
    let (mut begun, mut aborted, mut worst) = (0, 0, Vec::new());
    for n in 3..=12 {
        let mut most = 0;
        for ncs in [10.0, 200.0] {
            for seed in 1..=3 {
                let crashes = random_schedule(&mut rng, n);
                let r = run_cfg(&cfg_n(seed, ncs, n, R), &crashes);
                let what = format!("n {n}, ncs {ncs}, seed {seed}, {crashes:?}");
                assert_eq!(r.safety_violations, 0, "{what}: {:?}", r.violations);
                assert!(r.liveness_failure.is_none(), "{what}");
                let f = crashes.len() as u64;
                assert!(r.requests >= (n as u64 - f) * R, "{what}");
                let rec = r.recovery.as_ref().unwrap();
                assert!(rec.failures().is_empty(), "{what}: {:?}", rec.failures());
                assert_eq!(rec.operation_bound, 5 * (n as u64 - 1));
                assert!(rec.run_messages <= rec.run_bound, "{what}");
                let b = rec.operations.iter().filter(|o| o.begun.is_some()).count();
                assert!((1..=f as usize).contains(&b), "{what}: {b} operations");
                begun += b;
                aborted += rec
                    .operations
                    .iter()
                    .filter(|o| o.status == "aborted")
                    .count();
                most = most.max(rec.operation_messages_max);
            }
        }
        worst.push((n, most));
    }
    // The schedules did nest: some operations were aborted by a crash during them.
    assert!(aborted > 0 && begun > 60, "{aborted} aborted of {begun}");
    // A one-crash restart at n processes sends about 5(n − 2): the bound is approached.
    assert!(
        worst.iter().any(|&(n, w)| w + 10 > 5 * (n as u64 - 1)),
        "{worst:?}"
    );
}

#[test]
fn a_restart_sent_twice_is_caught_per_operation_and_per_crash_and_not_by_the_pooled_check() {
    // The mutant: the coordinator sends each RESTART twice. With one crash at n = 6, five
    // live processes: 4 NOTIFY, 8 RESTART, 4 DONE, at most 4 START, 4 RESUME ≤ 24 ≤ 5(n − 1)
    // = 25 for the whole run, but 8 RESTART > n − 1 = 5 in the operation.
    super::ft::RESTART_TWICE.with(|m| m.set(true));
    for ncs in [10.0, 200.0] {
        for seed in 1..=4 {
            let r = run_cfg(&cfg_load(seed, ncs), &[((seed as usize * 5) % N, 60.0)]);
            assert_eq!(r.safety_violations, 0);
            assert!(r.liveness_failure.is_none());
            let rec = r.recovery.as_ref().unwrap();
            assert!(rec.recovery_messages <= rec.recovery_bound, "{rec:?}");
            assert_eq!(rec.operations_over_bound, 1, "{rec:?}");
            assert_eq!(rec.operations[0].kinds.restart, 8);
            // Caught twice: by the operation's own count, and by what the simulator saw
            // the one crash cause.
            let f = rec.failures();
            assert!(f.len() == 2, "{f:?}");
            assert!(
                f[0].starts_with("restart operation") && f[0].contains("RESTART 8"),
                "{f:?}"
            );
            assert!(
                f[1].contains("caused") && f[1].contains("RESTART 8"),
                "{f:?}"
            );
        }
    }
    super::ft::RESTART_TWICE.with(|m| m.set(false));
    // Without the mutant the same runs are within.
    let r = run_cfg(&cfg_load(1, 10.0), &[(5, 60.0)]);
    assert!(r.recovery.unwrap().failures().is_empty());
}
