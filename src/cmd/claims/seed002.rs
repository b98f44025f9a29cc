//! Seed 002: Jayanti, Tan, Friedland and Katz, bounding Lamport's Bakery (UB-Bakery and
//! B-Bakery, Fig. 2; Theorems 1–4; the §3.1 scenario; the §5 lockstep).

use serde_json::Value;

use super::checks::{args, holds, items, num, Explored, Level, Said};
use super::ledger::{Judged, Spec};

/// The claims of seed 002.
pub fn specs(l: &Level) -> Vec<Spec> {
    let mut v = Vec::new();
    let ub = l.verify("ub-bakery", &[2, 3, 4], "--passages 3");
    for (id, place, claim, key) in [
        (
            "002/obs1",
            "Observation 1",
            "UB-Bakery: the value of X never decreases (each write of X checked against the last)",
            "Observation 1",
        ),
        (
            "002/thm1",
            "Theorem 1",
            "UB-Bakery: every token within [X, X + n] at all times",
            "Theorem 1",
        ),
        (
            "002/thm2",
            "Theorem 2",
            "UB-Bakery: tokens read on line 2 within X ± (n−1)",
            "Theorem 2",
        ),
        (
            "002/thm3",
            "Theorem 3",
            "UB-Bakery: tokens read on line 7 within token_i ± (n−1)",
            "Theorem 3",
        ),
    ] {
        v.push(Spec::new(
            id,
            place,
            claim,
            "holds at every step (proved)",
            ub.clone(),
            move |o| Ok(Explored::of(o).property(key)),
        ));
    }
    // Observations 2 and 3 speak of P_i's doorway between lines 1 and 3, which another process
    // crosses twice most easily with no steps inside the critical section: under PCT (a
    // process parked there while another runs on) and under random schedules.
    for (id, claim, key, scheduler) in [
        (
            "002/obs2",
            "UB-Bakery: between P_i's lines 1 and 3, any P_j writes X (line 8) at most once",
            "Observation 2",
            "pct",
        ),
        (
            "002/obs3",
            "UB-Bakery: a token_j ≠ −1 that P_i reads on line 2 is token_j's value at P_i's line 1 or at its line 3",
            "Observation 3",
            "random",
        ),
    ] {
        let mut checks = l.verify(
            "ub-bakery",
            &[2, 3, 4],
            &format!("--passages 3 --cs-steps 0 --scheduler {scheduler}"),
        );
        checks.extend(ub.iter().cloned());
        v.push(Spec::new(
            id,
            key,
            claim,
            "holds at every step (proved)",
            checks,
            move |o| Ok(Explored::of(o).property(key)),
        ));
    }
    v.extend(lamport(l));
    let b = l.verify("b-bakery", &[2, 3, 4], "--passages 3");
    // What B-Bakery's file claims (safe, FCFS, bounded registers), not this ledger.
    let said = Said::of("b-bakery");
    for (id, claim, key, claimed) in [
        (
            "002/thm4-me",
            "B-Bakery: mutual exclusion",
            "safety",
            said.info.safe,
        ),
        (
            "002/thm4-sf",
            "B-Bakery: starvation freedom",
            "deadlock|starv",
            true,
        ),
        (
            "002/thm4-fifo",
            "B-Bakery: doorway FIFO",
            "FCFS",
            said.info.fcfs,
        ),
        (
            "002/thm4-bounded",
            "B-Bakery: registers bounded, tokens in {−1, …, 2n−2}",
            "invariant|token",
            said.info.bounded,
        ),
    ] {
        v.push(Spec::new(
            id,
            "Theorem 4",
            claim,
            holds(claimed),
            b.clone(),
            move |o| Ok(Explored::of(o).claimed(key, claimed)),
        ));
    }
    let mut modulus = b.clone();
    let small = l.verify(
        "b-bakery",
        &[2, 3],
        &format!("--passages 3 --mutant {}", said.mutant("modulus-2n-2")),
    );
    modulus.extend(small.iter().cloned());
    let split = b.len();
    v.push(Spec::new(
        "002/sec5-modulus",
        "§5, Lemma 1",
        "B-Bakery: tokens modulo 2n−1 suffice (and is 2n−2 enough?)",
        "2n−1 (tightness not stated)",
        modulus,
        move |o| {
            let ok = Explored::of(&o[..split]);
            let small = Explored::of(&o[split..]);
            let mut j = ok.property("safety|FCFS|invariant");
            j.ours = match &small.violation {
                Some((kind, _)) => {
                    let parts: Vec<&str> = kind.split(": ").collect();
                    let what = match parts.as_slice() {
                        ["PROPERTY VIOLATION", p, ..] => p,
                        [first, ..] => first,
                        [] => "",
                    };
                    format!("2n−1: {}; 2n−2 breaks {what}", j.ours)
                }
                None => format!(
                    "2n−1: {}; 2n−2 not broken in {} schedules",
                    j.ours, small.run
                ),
            };
            Ok(j)
        },
    ));
    let lockstep = l.verify("b-bakery", &[2, 3], "--passages 3 --lockstep");
    v.push(Spec::new(
        "002/sec5-lockstep",
        "§5, Lemmas 1–2",
        "B-Bakery runs analogously to UB-Bakery: B state = UB state mod 2n−1, same line-7 decisions",
        "analogous at every step (proved)",
        lockstep,
        |o| Ok(Explored::of(o).property("lockstep|safety|invariant")),
    ));
    let cycles = if l.quick { 10 } else { 50 };
    // Whether Lamport's Bakery claims bounded registers is its file's to say.
    let lamport = if Said::of("lamport-bakery").info.bounded {
        "bounded"
    } else {
        "unbounded"
    };
    v.push(Spec::new(
        "002/sec3.1",
        "§3.1",
        "Lamport's Bakery: the token range grows without bound (one per cycle); UB-Bakery's stays within n",
        &format!("Lamport: {lamport}; UB: ≤ n"),
        vec![
            args(&format!(
                "rmr --lock lamport-bakery,ub-bakery --threads 2 --schedule adversarial --passages {}",
                cycles + 1
            )),
            args(&format!(
                "rmr --lock lamport-bakery,ub-bakery --threads 2 --schedule adversarial --passages {}",
                2 * cycles + 1
            )),
        ],
        move |o| scenario(&o[0], &o[1], cycles),
    ));
    v
}

/// §1: "The algorithm satisfies all of the above properties" — Lamport's Bakery (Fig. 1), the
/// baseline B-Bakery bounds (and seed 000's GLB generalises): mutual exclusion, starvation
/// freedom, wait-free exit, doorway FIFO; each as its file claims it.
fn lamport(l: &Level) -> Vec<Spec> {
    let checks = l.verify("lamport-bakery", &[2, 3], "--passages 3");
    let said = Said::of("lamport-bakery");
    [
        ("me", "mutual exclusion", "safety", said.info.safe),
        ("sf", "starvation freedom", "deadlock|starv", true),
        (
            "exit",
            "wait-free exit",
            "bounded exit",
            said.claims.bounded_exit,
        ),
        ("fifo", "doorway FIFO", "FCFS", said.info.fcfs),
    ]
    .into_iter()
    .map(|(id, prop, key, claimed)| {
        Spec::new(
            &format!("002/lamport-{id}"),
            "§1, Fig. 1",
            &super::seed000::claim("Lamport's Bakery", prop, claimed),
            holds(claimed),
            checks.clone(),
            move |o| Ok(Explored::of(o).claimed(key, claimed)),
        )
    })
    .collect()
}

fn range(v: &Value, lock: &str) -> Option<i64> {
    items(v)
        .into_iter()
        .find(|r| r["lock"] == lock)
        .and_then(|r| r["token_range_max"].as_i64())
}

/// §3.1 at two processes: Lamport's range after `c` and `2c` cycles grows with the cycles,
/// UB-Bakery's stays within n = 2.
fn scenario(a: &Value, b: &Value, c: usize) -> Result<Judged, String> {
    let (la, lb) = (range(a, "lamport-bakery"), range(b, "lamport-bakery"));
    let (ua, ub) = (range(a, "ub-bakery"), range(b, "ub-bakery"));
    let (Some(la), Some(lb), Some(ua), Some(ub)) = (la, lb, ua, ub) else {
        return Err("rmr reported no token range".into());
    };
    let n = items(a).first().map_or(2.0, |r| num(r, "threads")) as i64;
    let grows = lb > la && lb as usize >= 2 * c;
    let bounded = ua.max(ub) <= n;
    let j = Judged::check(
        format!(
            "Lamport range {la} after {c} cycles, {lb} after {}; UB-Bakery {ua}, {ub}",
            2 * c
        ),
        "proven: the paper's scripted §3.1 schedule, run step by step".into(),
        grows && bounded,
        || match (grows, bounded) {
            (false, _) => "Lamport's range does not grow one per cycle".into(),
            _ => format!("UB-Bakery's range exceeds n = {n}"),
        },
    );
    Ok(j)
}
