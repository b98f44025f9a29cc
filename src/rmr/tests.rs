//! The papers' RMR claims, reproduced on exact schedules.

use super::search::candidates;
use super::*;
use crate::registry::find;

fn run(name: &str, n: usize, model: Model, schedule: ScheduleKind) -> RmrReport {
    let mut o = RmrOptions::new(n, model, schedule);
    o.passages = 2;
    run_one(&find(name).unwrap(), &o).unwrap()
}

#[test]
fn smoke_every_counted_lock_runs() {
    for e in crate::registry::registry() {
        if e.counting.is_none() || !e.info.safe {
            continue;
        }
        let r = run(e.info.name, 3, Model::Cc, ScheduleKind::RoundRobin);
        assert!(r.max_rmr_per_passage > 0, "{}", e.info.name);
    }
}

fn opts(n: usize, model: Model, schedule: ScheduleKind, passages: usize) -> RmrOptions {
    let mut o = RmrOptions::new(n, model, schedule);
    o.passages = passages;
    o
}

/// Seed 000 §4: under the scripted schedule P_N is blocked exactly N(N−1)/2 times in its one
/// passage, and every block costs it at least one RMR.
#[test]
fn burns_lamport_is_quadratic_under_the_section_4_schedule() {
    let e = find("burns-lamport").unwrap();
    let mut victims = Vec::new();
    for n in [4usize, 5, 8, 9] {
        let r = run_one(&e, &opts(n, Model::Cc, ScheduleKind::Adversarial, 1)).unwrap();
        let v = r.victim.clone().unwrap();
        let blocks = (n * (n - 1) / 2) as u64;
        assert_eq!(v.blocked, blocks, "N = {n}: P_N blocked N(N−1)/2 times");
        assert!(v.max_rmr_per_passage >= blocks, "N = {n}: {v:?}");
        assert_eq!(r.within_bound, Some(true), "N = {n}");
        victims.push((n, v.max_rmr_per_passage));
    }
    // Quadratic, not linear: doubling N (4 → 8, 5 → 9 ≈ doubling) more than triples the cost.
    assert!(victims[2].1 > 3 * victims[0].1, "{victims:?}");
    assert!(victims[3].1 > 3 * victims[1].1, "{victims:?}");
}

/// Seed 000 §3 and Theorem 9: GLB and BWBGME stay within c·N under the greedy adversary,
/// random and PCT schedules.
#[test]
fn glb_and_bwb_gme_stay_linear() {
    for name in ["glb", "bwb-gme"] {
        let e = find(name).unwrap();
        for n in [3usize, 4, 5, 6] {
            for (schedule, seed) in [
                (ScheduleKind::Adversarial, 1),
                (ScheduleKind::Random, 1),
                (ScheduleKind::Random, 2),
                (ScheduleKind::Pct, 3),
                (ScheduleKind::RoundRobin, 1),
            ] {
                let mut o = opts(n, Model::Cc, schedule, 3);
                o.seed = seed;
                let r = run_one(&e, &o).unwrap();
                let b = r.bound.clone().unwrap();
                assert_eq!(
                    r.within_bound,
                    Some(true),
                    "{name} N = {n} {schedule:?}: max {} > {} = {}",
                    r.max_rmr_per_passage,
                    b.formula,
                    b.value
                );
                assert!(r.max_rmr_per_passage >= n as u64, "reads every token");
            }
        }
    }
}

/// Seed 002 §3.1: the two-process schedule grows Lamport's token range by one per cycle, while
/// the same schedule keeps UB-Bakery's range within n (Theorem 1).
#[test]
fn lamport_token_range_grows_and_ub_bakery_stays_clustered() {
    for cycles in [3usize, 4, 7, 8] {
        let lamport = run_one(
            &find("lamport-bakery").unwrap(),
            &opts(2, Model::Cc, ScheduleKind::Adversarial, cycles + 1),
        )
        .unwrap();
        assert_eq!(
            lamport.token_range_max,
            Some(1 + cycles as i64),
            "range 1 after the first doorways, +1 per cycle"
        );
        let ub = run_one(
            &find("ub-bakery").unwrap(),
            &opts(2, Model::Cc, ScheduleKind::Adversarial, cycles + 1),
        )
        .unwrap();
        assert!(ub.token_range_max.unwrap() <= 2, "{:?}", ub.token_range_max);
    }
}

/// Seed 002 Theorem 1 beyond two processes: UB-Bakery's tokens stay within n of X, so their
/// range stays within n under every schedule.
#[test]
fn ub_bakery_range_stays_within_n() {
    let e = find("ub-bakery").unwrap();
    for n in [3usize, 4, 5, 6] {
        for (schedule, seed) in [(ScheduleKind::Random, 4), (ScheduleKind::Adversarial, 1)] {
            let mut o = opts(n, Model::Cc, schedule, 4);
            o.seed = seed;
            let r = run_one(&e, &o).unwrap();
            let range = r.token_range_max.unwrap();
            assert!(range <= n as i64, "N = {n} {schedule:?}: range {range}");
        }
    }
}

/// Seed 001 Lemma 7: O(n) RMRs per passage in CC and DSM; the waiting room's RMRs do not grow
/// with the time spent waiting (a longer critical section keeps waiters spinning longer).
#[test]
fn zehavi_is_linear_and_waiting_does_not_cost_more_with_time() {
    let e = find("zehavi-kex").unwrap();
    for model in [Model::Cc, Model::Dsm] {
        for n in [3usize, 4, 5, 6] {
            for k in [1usize, 2] {
                // Waits ten times longer: critical sections of 300 and of 3000 steps, during
                // which the waiters spin (one re-evaluation per round-robin round).
                let mut o = opts(n, model, ScheduleKind::RoundRobin, 2);
                o.k = k;
                o.cs_steps = 300;
                let short = run_one(&e, &o).unwrap();
                assert_eq!(short.within_bound, Some(true), "{model} N = {n} k = {k}");
                o.cs_steps = 3000;
                let long = run_one(&e, &o).unwrap();
                assert_eq!(long.within_bound, Some(true));
                assert_eq!(
                    short.by_section_max["waiting"], long.by_section_max["waiting"],
                    "{model} N = {n} k = {k}: waiting-room RMRs grew with the wait"
                );
                assert!(
                    long.virtual_spins > short.virtual_spins,
                    "waiters spun longer"
                );
            }
        }
    }
}

/// The control for the test above: Lamport's Bakery spins on other processes' registers, so in
/// DSM its waiting room costs grow with the wait (unbounded RMRs in DSM).
#[test]
fn bakery_waiting_grows_with_time_in_dsm() {
    let e = find("lamport-bakery").unwrap();
    let mut o = opts(3, Model::Dsm, ScheduleKind::RoundRobin, 2);
    o.cs_steps = 300;
    let short = run_one(&e, &o).unwrap();
    o.cs_steps = 3000;
    let long = run_one(&e, &o).unwrap();
    let w = |r: &RmrReport| r.by_section_max["waiting"].as_u64().unwrap();
    assert!(w(&long) > w(&short) + 500, "{} vs {}", w(&long), w(&short));
}

/// Reference locks: MCS O(1) in CC and DSM, CLH O(1) in CC but growing in DSM, TAS growing.
#[test]
fn reference_locks_have_their_known_classes() {
    for n in [3usize, 4, 5, 8] {
        for model in [Model::Cc, Model::CcWb, Model::Dsm] {
            let mut o = opts(n, model, ScheduleKind::Random, 3);
            o.cs_steps = 50;
            let r = run_one(&find("mcs").unwrap(), &o).unwrap();
            assert_eq!(
                r.within_bound,
                Some(true),
                "mcs {model} N = {n}: {}",
                r.max_rmr_per_passage
            );
        }
        let r = run_one(
            &find("clh").unwrap(),
            &opts(n, Model::Cc, ScheduleKind::Random, 3),
        )
        .unwrap();
        assert_eq!(r.within_bound, Some(true), "clh cc N = {n}");
    }
    let mut o = opts(4, Model::Dsm, ScheduleKind::RoundRobin, 3);
    o.cs_steps = 200;
    let clh = run_one(&find("clh").unwrap(), &o).unwrap();
    assert!(
        clh.max_rmr_per_passage > 20,
        "clh spins remotely in DSM: {}",
        clh.max_rmr_per_passage
    );
    let tas = run_one(&find("tas").unwrap(), &o).unwrap();
    assert!(
        tas.max_rmr_per_passage > 20,
        "tas: {}",
        tas.max_rmr_per_passage
    );
}

#[test]
fn counts_are_reproducible() {
    let e = find("bwb-gme").unwrap();
    let mut o = opts(4, Model::Cc, ScheduleKind::Random, 3);
    o.seed = 9;
    let a = run_one(&e, &o).unwrap();
    let b = run_one(&e, &o).unwrap();
    assert_eq!(a.max_rmr_per_passage, b.max_rmr_per_passage);
    assert_eq!(a.accesses, b.accesses);
    assert_eq!(a.by_section, b.by_section);
}

/// The adversarial figure is never below round-robin, random or PCT at the same options: they
/// are among the schedules the search tries.
#[test]
fn adversarial_never_loses_to_the_other_schedules() {
    for (name, n, model, seed) in [
        ("bw-bakery", 4, Model::Cc, 1),
        ("bw-bakery", 4, Model::Dsm, 5),
        ("glb", 4, Model::Dsm, 1),
        ("glb", 5, Model::Cc, 3),
        ("zehavi-kex", 3, Model::Cc, 1),
        ("zehavi-kex", 4, Model::Cc, 2),
        ("ticket", 4, Model::Dsm, 1),
    ] {
        let e = find(name).unwrap();
        let mut o = opts(n, model, ScheduleKind::Adversarial, 3);
        o.seed = seed;
        let adv = run_one(&e, &o).unwrap();
        assert_eq!(adv.worst, Some(Worst::Found), "{name}");
        assert_eq!(adv.tried.len(), 4 + o.search, "{name}: {:?}", adv.tried);
        for schedule in [
            ScheduleKind::RoundRobin,
            ScheduleKind::Random,
            ScheduleKind::Pct,
        ] {
            o.schedule = schedule;
            let r = run_one(&e, &o).unwrap();
            assert!(
                adv.max_rmr_per_passage >= r.max_rmr_per_passage,
                "{name} N = {n} {model} seed {seed}: adversarial {} ({}) < {} {}",
                adv.max_rmr_per_passage,
                adv.found_by,
                schedule.name(),
                r.max_rmr_per_passage
            );
        }
        let best = adv.tried.iter().map(|t| t.max_rmr_per_passage).max();
        assert_eq!(best, Some(adv.max_rmr_per_passage));
        let winner = adv
            .tried
            .iter()
            .find(|t| t.schedule == adv.found_by)
            .unwrap();
        assert_eq!(winner.max_rmr_per_passage, adv.max_rmr_per_passage);
        assert!(adv.victim.unwrap().max_rmr_per_passage <= adv.max_rmr_per_passage);
    }
}

/// The search is reproducible and `worst` is the adversarial schedule whatever the options say.
#[test]
fn worst_is_reproducible_and_ignores_the_schedule_option() {
    let e = find("bwb-gme").unwrap();
    let a = worst(&e, &opts(4, Model::Cc, ScheduleKind::RoundRobin, 2)).unwrap();
    let b = run_one(&e, &opts(4, Model::Cc, ScheduleKind::Adversarial, 2)).unwrap();
    assert_eq!(a.schedule, "adversarial");
    assert_eq!(
        (a.max_rmr_per_passage, &a.found_by, &a.tried),
        (b.max_rmr_per_passage, &b.found_by, &b.tried)
    );
}

/// The scripted worst cases are `proven` and run alone.
#[test]
fn scripted_worst_cases_are_proven() {
    for (name, n) in [
        ("burns-lamport", 5usize),
        ("lamport-bakery", 2),
        ("ub-bakery", 2),
    ] {
        let r = run_one(
            &find(name).unwrap(),
            &opts(n, Model::Cc, ScheduleKind::Adversarial, 2),
        )
        .unwrap();
        assert_eq!(r.worst, Some(Worst::Proven), "{name}");
        assert!(
            r.found_by.starts_with("scripted: seed 00"),
            "{}",
            r.found_by
        );
        assert_eq!(r.tried.len(), 1);
    }
}

#[test]
fn candidates_start_with_the_fixed_four_and_stay_distinct() {
    let c = candidates(8, 5, 6);
    assert_eq!(
        c[..4],
        [
            Candidate::Greedy(7),
            Candidate::RoundRobin,
            Candidate::Random(5),
            Candidate::Pct(5)
        ]
    );
    assert_eq!(c.len(), 10);
    for (i, x) in c.iter().enumerate() {
        assert!(!c[..i].contains(x), "{x:?} twice");
    }
    // One process: every greedy adversary is the same one; the search still ends.
    assert!(candidates(1, 1, 20).len() <= 24);
}

#[test]
fn a_victim_is_named_as_a_process_not_as_a_property() {
    // "P3" would read as property P3 (bounded exit).
    assert_eq!(Candidate::Greedy(3).label(), "greedy against process 3");
    assert_eq!(Candidate::Spinning(0).label(), "greedy spinning process 0");
}
