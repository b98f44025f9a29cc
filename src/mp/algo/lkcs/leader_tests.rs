//! Seed 004's leader (Algorithms 6–7, `Rules::leader`): its handlers one message at a time,
//! and runs against the default (LK-14, no leader) that show what fails with it.

use super::leader::tightened;
use super::tests::{start, Case};
use super::*;
use crate::mp::metrics::MpResult;
use crate::mp::topo::{Graph, Topology};
use crate::mp::{Charge, Message, Observation, Path};

/// A runtime that records what one process sends.
struct Rec {
    me: Pid,
    sent: Vec<(Pid, LkMsg)>,
    exited: bool,
}

impl Runtime<LkMsg> for Rec {
    fn me(&self) -> Pid {
        self.me
    }
    fn n(&self) -> usize {
        3
    }
    fn now(&self) -> f64 {
        0.0
    }
    fn send(&mut self, to: Pid, msg: LkMsg) {
        self.sent.push((to, msg));
    }
    fn set_timer(&mut self, _after: f64, _tag: u64) {}
    fn enter(&mut self) {}
    fn exited(&mut self) {
        self.exited = true;
    }
    fn observe(&mut self, _obs: Observation) {}
}

fn rec(me: Pid) -> Rec {
    Rec {
        me,
        sent: Vec::new(),
        exited: false,
    }
}

/// Three processes, all neighbours (so all within distance 2 of P_LDR = p0), bounds (l, k),
/// `inside` in C0, and the leader on.
fn trio(me: Pid, l: usize, k: usize, inside: [bool; 3]) -> Local {
    let s = Setup {
        n: 3,
        m: 1,
        graph: Graph::complete(3),
        l: vec![l; 3],
        k: vec![k; 3],
        initial_in: inside.to_vec(),
        leader: 0,
    };
    let rules = Rules {
        leader: true,
        ..Rules::default()
    };
    Local::with_rules(me, &s, Variant::Lkcs, rules)
}

#[test]
fn the_leaders_messages_are_counted_by_kind_on_the_machinery_path() {
    let t = LkMsg::Trigger(MUTEX, 4);
    let r = LkMsg::RequestByTrigger(MUTIN, 4, 1);
    assert_eq!((t.kind(), t.size_ints()), ("TRIGGER", 2));
    assert_eq!((r.kind(), r.size_ints()), ("REQUEST_BY_TRIGGER", 3));
    assert_eq!((t.path(), r.path()), (Path::Machinery, Path::Machinery));
    assert_eq!((t.charge(), r.charge()), (Charge::Receiver, Charge::Sender));
}

#[test]
fn a_triggered_request_is_granted_whatever_cond_says() {
    // (0, 2) within distance 2 of the leader: L = 1, K = 1; p0 inside, so no grantor has
    // room for p1's entry (Cond_i): its Request is pending (LK-15 tells it Failed).
    let mut p1 = trio(1, 0, 2, [true, false, false]);
    let mut p2 = trio(2, 0, 2, [true, false, false]);
    let mut rt1 = rec(1);
    p1.on_request(&mut rt1, 0);
    let Some(&(_, LkMsg::Request(MUTEX, ts))) = rt1.sent.first() else {
        panic!("{:?}", rt1.sent);
    };
    let mut rt2 = rec(2);
    p2.on_message(&mut rt2, 1, LkMsg::Request(MUTEX, ts));
    assert!(
        !rt2.sent.iter().any(|m| matches!(m.1, LkMsg::Grant(..))),
        "{:?}",
        rt2.sent
    );
    rt2.sent.clear();
    // A Trigger naming another request is ignored (Algorithm 7: ts = ts_i).
    rt1.sent.clear();
    p1.on_message(&mut rt1, 0, LkMsg::Trigger(MUTEX, ts + 1));
    assert!(rt1.sent.is_empty(), "{:?}", rt1.sent);
    // Algorithm 7: RequestByTrigger to N_i ∪ {P_i}, each with a new generation (LK-14f).
    p1.on_message(&mut rt1, 0, LkMsg::Trigger(MUTEX, ts));
    let to: Vec<Pid> = rt1.sent.iter().map(|&(j, _)| j).collect();
    assert_eq!(to, [0, 1, 2]);
    let Some(&(_, LkMsg::RequestByTrigger(MUTEX, t, g))) = rt1.sent.get(2) else {
        panic!("{:?}", rt1.sent);
    };
    assert_eq!((t, g), (ts, 1));
    // The grantor gives a special grant past K = 1 and records it as (0, P_1).
    p2.on_message(&mut rt2, 1, LkMsg::RequestByTrigger(MUTEX, t, g));
    assert!(
        matches!(rt2.sent[..], [(1, LkMsg::Grant(MUTEX, t2, 1, None))] if t2 == ts),
        "{:?}",
        rt2.sent
    );
    assert_eq!(p2.granted_to[MUTEX].len(), 2);
    assert!(p2.granted_to[MUTEX].contains(&(0, 1)) && p2.pending[MUTEX].is_empty());
}

#[test]
fn the_leader_nominates_when_its_whole_neighbourhood_waits_and_waits_for_it_to_move() {
    // p0 leads, (0, 3): L = 1, K = 2. p0 and p1 inside wait to exit, p2 waits to enter:
    // Waiting_LDR = 3 = |N_LDR| + 1 and |grantedTo[MUTIN]| = 1 = |N_LDR| − L_LDR, so
    // Algorithm 6 nominates the oldest pending entry.
    let mut p0 = trio(0, 0, 3, [true, true, false]);
    p0.requesting = Some(MUTIN);
    p0.ts = 2;
    p0.pending[MUTIN] = [(2, 0), (2, 1)].into();
    p0.pending[MUTEX] = [(3, 2)].into();
    let mut rt = rec(0);
    p0.leader_step(&mut rt);
    assert!(
        matches!(rt.sent[..], [(2, LkMsg::Trigger(MUTEX, 3))]),
        "{:?}",
        rt.sent
    );
    assert!(p0.nominating && p0.pending[MUTEX].is_empty());
    // While Waiting_LDR stays at 3 the leader does not complete, even with every grant
    // (LK-14e), nor nominate again.
    p0.pending[MUTEX] = [(3, 2)].into();
    p0.n_grants[MUTIN] = [0, 1, 2].into();
    rt.sent.clear();
    p0.leader_step(&mut rt);
    assert!(!rt.exited && rt.sent.is_empty(), "{:?}", rt.sent);
    // Once a neighbour's request is gone, the loop ends and the exit completes.
    p0.pending[MUTIN].remove(&(2, 1));
    p0.leader_step(&mut rt);
    assert!(rt.exited && !p0.nominating);
}

#[test]
fn an_exit_nominee_is_named_by_its_exit_timestamp() {
    // LK-14b, LK-14c: |grantedTo[MUTEX]| = 1 = K_LDR − 1 and no pending exit; p1 holds a
    // MUTEX grant of ts 4 and a MUTIN grant of ts 5 (waiting to exit): Trigger(MUTIN, 5).
    let mut p0 = trio(0, 0, 3, [false, true, false]);
    p0.requesting = Some(MUTEX);
    p0.granted_to[MUTIN] = [(5, 1), (1, 0), (1, 2)].into();
    p0.granted_to[MUTEX] = [(4, 1)].into();
    p0.pending[MUTEX] = [(3, 0), (6, 2)].into();
    let mut rt = rec(0);
    p0.leader_step(&mut rt);
    assert!(
        matches!(rt.sent[..], [(1, LkMsg::Trigger(MUTIN, 5))]),
        "{:?}",
        rt.sent
    );
}

/// The runs of one case, seeds 1–4, 25 entries each: the default, the leader with LK-15 and
/// LK-16 (the rest of the default), and the seed's own rules (the leader without LK-15);
/// Algorithm 6's tests as printed, or at Cond's limits (LK-14g).
fn runs(
    topology: Topology,
    (n, l, k): (usize, usize, usize),
    tight: bool,
    at_capacity: bool,
) -> [Vec<MpResult>; 3] {
    let leader = Rules {
        leader: true,
        at_capacity,
        ..Rules::default()
    };
    let seeds_own = Rules {
        park: false,
        ..leader
    };
    [Rules::default(), leader, seeds_own].map(|rules| {
        (1..=4)
            .map(|seed| {
                let c = Case {
                    topology: topology.clone(),
                    n,
                    l,
                    k,
                    seed,
                    requests: 25,
                };
                // The default starts within l and k; the leader where it can, within L and K.
                let tight = tight && rules.leader;
                start(Variant::Lkcs, rules, c, tight).expect("a C0")
            })
            .collect()
    })
}

fn triggers(r: &MpResult) -> f64 {
    r.messages_by_kind
        .iter()
        .filter(|m| m.kind == "TRIGGER")
        .map(|m| m.per_request)
        .sum()
}

#[test]
fn with_the_seeds_leader_lk14_a_ring_deadlocks() {
    // Ring n = 9, (1, 2): within distance 2 of p0, L = 2 > K = 1, so no configuration is
    // within the leader's bounds, no grantor there grants anything ordinary, and Algorithm 6
    // never finds |grantedTo[MUTIN]| = |N| − L nor |grantedTo[MUTEX]| = K − 1: no Trigger.
    let g = Graph::build(&Topology::Ring, 9, 1);
    let (tl, tk) = tightened(&g, &[1; 9], &[2; 9], 0);
    assert!((0..9).any(|i| tl[i] > tk[i]));
    let [default, leader, seeds_own] = runs(Topology::Ring, (9, 1, 2), false, false);
    for r in &default {
        assert_eq!(r.safety_violations, 0, "{:?}", r.violations);
        assert!(r.liveness_failure.is_none(), "{:?}", r.liveness_failure);
    }
    for r in leader.iter().chain(&seeds_own) {
        assert_eq!(r.safety_violations, 0, "{:?}", r.violations);
        assert!(r.liveness_failure.is_some(), "seed {} live", r.seed);
        assert_eq!(triggers(r), 0.0);
    }
    // The seed's own rules stop for good within the first transitions: no event is left.
    for r in &seeds_own {
        let why = r.liveness_failure.as_deref().unwrap_or_default();
        assert!(why.starts_with("deadlock"), "seed {}: {why}", r.seed);
        assert!(r.requests < 20, "seed {}: {}", r.seed, r.requests);
    }
}

#[test]
fn with_the_seeds_leader_a_ring_with_room_still_sticks() {
    // Ring n = 9, (0, 3): L = 1 and K = 2 near p0 leave room, and each run starts within
    // them. Without LK-15 (the seed's own rules) every seed sticks, with it some do; the
    // default is live on all four.
    let [default, leader, seeds_own] = runs(Topology::Ring, (9, 0, 3), true, false);
    for r in &default {
        assert!(r.liveness_failure.is_none(), "{:?}", r.liveness_failure);
    }
    for r in leader.iter().chain(&seeds_own).chain(&default) {
        assert_eq!(r.safety_violations, 0, "{:?}", r.violations);
    }
    assert!(seeds_own.iter().all(|r| r.liveness_failure.is_some()));
    assert!(leader.iter().any(|r| r.liveness_failure.is_some()));
}

#[test]
fn the_seeds_leader_is_live_on_a_complete_graph() {
    // Complete n = 8, (2, 6): every process is the leader's neighbour, L = 3, K = 5 leave
    // room, and nothing waits on the configuration.
    let [default, leader, seeds_own] = runs(Topology::Complete, (8, 2, 6), true, false);
    for r in default.iter().chain(&leader).chain(&seeds_own) {
        assert_eq!(r.safety_violations, 0, "{:?}", r.violations);
        assert!(r.liveness_failure.is_none(), "{:?}", r.liveness_failure);
        assert!(r.requests >= 25 * 8, "{}", r.requests);
    }
}

#[test]
fn read_at_conds_limits_the_leaders_special_grants_break_k() {
    // LK-14g: Algorithm 6's tests at Cond's limits (|grantedTo[MUTIN]| = |N| − L + 1,
    // |grantedTo[MUTEX]| = K) let the leader nominate; complete n = 8, (0, 4), K = 3 leaves room
    // for one special entry, but the leader's wait ends when any neighbour moves and it
    // nominates again while earlier nominees still hold special grants: |CS_i| = 5 > k.
    let [default, leader, seeds_own] = runs(Topology::Complete, (8, 0, 4), true, true);
    for r in &default {
        assert_eq!(r.safety_violations, 0, "{:?}", r.violations);
        assert!(r.liveness_failure.is_none(), "{:?}", r.liveness_failure);
    }
    for r in leader.iter().chain(&seeds_own) {
        assert!(triggers(r) > 0.0, "seed {}", r.seed);
        // The leader's messages put their transitions on Lemma 6's machinery path only.
        for p in &r.lemma6.as_ref().expect("lemma6 kept").paths {
            let leaders = p
                .by_kind
                .iter()
                .filter(|k| k.kind == "TRIGGER" || k.kind == "REQUEST_BY_TRIGGER");
            let count: u64 = leaders.map(|k| k.messages).sum();
            assert_eq!(count > 0, p.path == "machinery", "{p:?}");
        }
        assert!(r.safety_violations > 0, "seed {} safe", r.seed);
        assert!(
            r.violations.iter().any(|v| v.contains("> k = 4")),
            "{:?}",
            r.violations
        );
    }
}
