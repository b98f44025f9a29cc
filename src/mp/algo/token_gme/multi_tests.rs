//! Tests of multi-type requests (seed 003 §5.1, [`super::multi`]): safe and live, never blocked
//! unnecessarily, two hops in a two-hop scenario; a holder that reads only the first type of a
//! set is caught by both checks; A6's choice over subsets.

use std::collections::VecDeque;

use super::{multi, Selection, Token, TokenGme};
use crate::mp::algo::Setup;
use crate::mp::metrics::MpResult;
use crate::mp::run_config::RunConfig;
use crate::mp::sim::{run_typed, SimConfig};
use crate::mp::workload::Dist;
use crate::mp::{Algorithm, Group, Pid, Problem, Runtime};

fn cfg(n: usize, m: usize, seed: u64, ncs: Dist, delay: Dist) -> SimConfig {
    SimConfig {
        run: RunConfig {
            algo: "token-gme".into(),
            problem: Problem::Gme,
            setup: Setup::complete(n, m),
            requests: 40,
            seed,
            ncs,
            cs: Dist::Uniform(0.0, 20.0),
            delay,
            mix: format!("hot:{m}:20,80").parse().unwrap(),
            watchdog: 1e9,
        },
        topology: "complete".into(),
        fifo: true,
        trace: false,
    }
}

/// The three members of the family that share the code path.
fn make(variant: usize, p: Pid, s: &Setup) -> TokenGme {
    match variant {
        0 => TokenGme::new(p, s, Selection::Priority),
        1 => TokenGme::new(p, s, Selection::Fifo),
        _ => TokenGme::new_bounded(p, s, Selection::Priority, 5),
    }
}

fn ok(r: &MpResult, what: &str) {
    assert_eq!(r.safety_violations, 0, "{what}: {:?}", r.violations);
    assert!(
        r.liveness_failure.is_none(),
        "{what}: {:?}",
        r.liveness_failure
    );
    assert_eq!(
        r.unnecessary_blocking,
        Some(0),
        "{what}: {:?}",
        r.unnecessary_blocking_first
    );
    let bound = 3 * (r.n as u64 + 1) - 1;
    assert!(r.starvation_sessions_max.unwrap_or(0) <= bound, "{what}");
}

#[test]
fn multi_type_requests_are_safe_live_and_never_blocked_unnecessarily() {
    for variant in 0..3 {
        for (m, g) in [(3, 2), (5, 2), (5, 4)] {
            for seed in 1..=3 {
                for ncs in [Dist::Const(0.0), Dist::Exp(30.0)] {
                    let c = cfg(7, m, seed, ncs, Dist::Exp(10.0));
                    let r = run_typed(&c, &[], g, |p, s| make(variant, p, s));
                    ok(&r, &format!("variant {variant}, m {m}, G {g}, seed {seed}"));
                    let x = r.multi_type.as_ref().expect("multi-type figures");
                    assert_eq!(x.types_per_request, g);
                }
            }
        }
    }
}

/// A runtime that records what a process sends and whether it entered.
#[derive(Default)]
struct Mock {
    sent: Vec<(Pid, super::TgMsg)>,
    cast: Vec<super::TgMsg>,
    entered: Option<Group>,
}

impl Runtime<super::TgMsg> for Mock {
    fn me(&self) -> Pid {
        1
    }
    fn n(&self) -> usize {
        8
    }
    fn now(&self) -> f64 {
        0.0
    }
    fn send(&mut self, to: Pid, msg: super::TgMsg) {
        self.sent.push((to, msg));
    }
    fn broadcast(&mut self, msg: super::TgMsg) {
        self.cast.push(msg);
    }
    fn set_timer(&mut self, _: f64, _: u64) {}
    fn enter(&mut self) {
        panic!("TokenGME says which type it enters");
    }
    fn enter_as(&mut self, g: Group) {
        self.entered = Some(g);
    }
    fn exited(&mut self) {}
}

/// Process 1 holding the primary token of type 2 in session 1, inside its critical section
/// (so no A6 runs), with `queue` as (types, age).
fn primary_inside(queue: &[(&[Group], u64)]) -> TokenGme {
    let (mut p, t) = holder(Selection::Priority, queue);
    p.queued_conflicts = t.queue.iter().filter(|q| !q.has(2)).count();
    for q in &t.queue {
        p.queued[q.pid] = true;
    }
    p.token = Some(Box::new(Token { ty: 2, ..t }));
    p.inside = true;
    p
}

fn tokens_to(rt: &Mock, j: Pid) -> usize {
    rt.sent
        .iter()
        .filter(|(to, m)| *to == j && matches!(m, super::TgMsg::Token(_)))
        .count()
}

#[test]
fn a_request_naming_the_tokens_type_anywhere_in_its_set_gets_a_secondary() {
    let mut p = primary_inside(&[]);
    let mut rt = Mock::default();
    p.on_message(&mut rt, 5, super::TgMsg::RequestAny(1, vec![0, 2, 4]));
    assert_eq!(tokens_to(&rt, 5), 1);
    assert!(p.token.as_ref().unwrap().queue.is_empty());
    // A set without the token's type conflicts: queued, with its set (MT-4).
    p.on_message(&mut rt, 6, super::TgMsg::RequestAny(1, vec![0, 3]));
    assert_eq!(tokens_to(&rt, 6), 0);
    let q = &p.token.as_ref().unwrap().queue[0];
    assert_eq!((q.pid, q.types().collect::<Vec<_>>()), (6, vec![0, 3]));
    // Now a conflicting request is queued: a compatible one waits behind it (§5.1).
    p.on_message(&mut rt, 7, super::TgMsg::RequestAny(1, vec![2, 3]));
    assert_eq!(tokens_to(&rt, 7), 0);
    assert_eq!(p.token.as_ref().unwrap().queue.len(), 2);
    assert!(p.blocked_request().is_none(), "a conflict is queued");
}

#[test]
fn the_broken_holder_queues_a_compatible_request_and_the_checker_sees_it() {
    let mut p = primary_inside(&[]).reading_first_types_only();
    let mut rt = Mock::default();
    p.on_message(&mut rt, 5, super::TgMsg::RequestAny(1, vec![0, 2]));
    assert_eq!(tokens_to(&rt, 5), 0);
    let why = p.blocked_request().expect("blocked unnecessarily");
    assert!(why.contains("p5's request 1 for [0, 2]"), "{why}");
}

#[test]
fn a_holder_of_a_type_in_its_set_enters_for_it_without_asking() {
    let mut p = primary_inside(&[]);
    p.inside = false;
    let mut rt = Mock::default();
    p.on_request_any(&mut rt, &[4, 2]);
    assert_eq!(rt.entered, Some(2));
    assert!(rt.cast.is_empty() && rt.sent.is_empty());
    // A set without its token's type: it asks everyone, naming the set (MT-1, TG-2).
    p.inside = false;
    let mut rt = Mock::default();
    p.on_request_any(&mut rt, &[4, 0]);
    assert_eq!(rt.entered, None);
    assert!(matches!(&rt.cast[..], [super::TgMsg::RequestAny(_, t)] if t == &vec![4, 0]));
}

#[test]
fn every_request_enters_within_two_hops_when_none_conflicts() {
    // G = m: every request names every type, so none ever conflicts with a session.
    for variant in 0..3 {
        for (m, ncs) in [
            (2, Dist::Const(0.0)),
            (3, Dist::Exp(20.0)),
            (4, Dist::Exp(200.0)),
        ] {
            for seed in 1..=3 {
                let c = cfg(12, m, seed, ncs, Dist::Const(10.0));
                let r = run_typed(&c, &[], m, |p, s| make(variant, p, s));
                ok(&r, &format!("variant {variant}, m = G = {m}, seed {seed}"));
                let t = &r.multi_type.as_ref().unwrap().two_hop;
                assert!(t.scenario && t.judged, "{t:?}");
                assert!(t.requests > 0 && !t.failed(), "{t:?}");
                assert_eq!(t.hops_max, Some(2), "{t:?}");
            }
        }
    }
}

#[test]
fn a_holder_reading_only_first_types_is_caught_by_both_checks() {
    let (mut blocked, mut over) = (0, 0);
    for seed in 1..=3 {
        let c = cfg(8, 3, seed, Dist::Const(0.0), Dist::Const(10.0));
        let r = run_typed(&c, &[], 3, |p, s| {
            TokenGme::new(p, s, Selection::Priority).reading_first_types_only()
        });
        // Safe, but a session started for a request it could have admitted; its
        // secondary holders, knowing no conflict, keep their tokens, so the run may stall.
        assert_eq!(r.safety_violations, 0, "{:?}", r.violations);
        blocked += r.unnecessary_blocking.unwrap();
        let t = &r.multi_type.as_ref().unwrap().two_hop;
        assert!(t.judged, "{t:?}");
        over += u64::from(t.failed());
    }
    assert!(blocked > 0, "the blocking check missed it");
    assert_eq!(over, 3, "the two-hop check missed it");
}

/// Enters a type its request did not name.
#[derive(Debug)]
struct WrongType;

impl Algorithm for WrongType {
    type Msg = super::TgMsg;
    fn on_request(&mut self, rt: &mut dyn Runtime<super::TgMsg>, g: Group) {
        rt.enter_as(g);
    }
    fn on_request_any(&mut self, rt: &mut dyn Runtime<super::TgMsg>, types: &[Group]) {
        let other = (0..5).find(|t| !types.contains(t)).unwrap();
        rt.enter_as(other);
    }
    fn on_exit(&mut self, rt: &mut dyn Runtime<super::TgMsg>) {
        rt.exited();
    }
    fn on_message(&mut self, _: &mut dyn Runtime<super::TgMsg>, _: Pid, _: super::TgMsg) {}
}

#[test]
fn an_entry_for_a_type_not_named_is_a_violation() {
    let mut c = cfg(1, 5, 1, Dist::Exp(5.0), Dist::Const(1.0));
    c.run.requests = 3;
    let r = run_typed(&c, &[], 2, |_, _| WrongType);
    assert_eq!(r.safety_violations, 3, "{:?}", r.violations);
    assert!(
        r.violations[0].contains("did not name"),
        "{:?}",
        r.violations
    );
    // With one type per request, the type asked is the type entered.
    let r = run_typed(&c, &[], 1, |_, _| WrongType);
    assert_eq!(r.safety_violations, 0, "{:?}", r.violations);
}

/// A primary token of type 9 holding `queue` as (types, age).
fn holder(selection: Selection, queue: &[(&[Group], u64)]) -> (TokenGme, Token) {
    let c = cfg(8, 10, 1, Dist::Const(0.0), Dist::Const(1.0));
    let p = TokenGme::new(1, &c.run.setup, selection);
    let t = Token {
        primary: true,
        ty: 9,
        session: 1,
        fulfilled: vec![0; 8],
        old_no_of_tokens: 0,
        no_of_tokens_issued: 0,
        queue: queue
            .iter()
            .enumerate()
            .map(|(j, (types, age))| {
                let mut q = multi::queued(j, 1, types[0], types[1..].to_vec());
                q.age = *age;
                q
            })
            .collect::<VecDeque<_>>(),
        total_issued: None,
        epochs: None,
    };
    (p, t)
}

#[test]
fn a6_places_a_request_in_the_subset_of_each_of_its_types() {
    // Subsets: 0 → {r0}, 1 → {r0, r1, r2}, 2 → {r1}, 3 → {r2}: type 1 wins (priority 3).
    let (p, t) = holder(
        Selection::Priority,
        &[(&[0, 1], 0), (&[2, 1], 0), (&[3, 1], 0)],
    );
    assert_eq!(p.choose(&t), 1);
    // Ages count (§3.2.1): type 2's one request aged 4 outweighs type 1's two.
    let (p, t) = holder(Selection::Priority, &[(&[0, 1], 0), (&[2], 4), (&[1], 0)]);
    assert_eq!(p.choose(&t), 2);
    // MT-5: a tie goes to the type met first (request order, then the set's order).
    let (p, t) = holder(Selection::Priority, &[(&[3, 0], 0), (&[0, 3], 0)]);
    assert_eq!(p.choose(&t), 3);
    // MT-6: FIFO takes the first request's type with the largest subset.
    let (p, t) = holder(Selection::Fifo, &[(&[0, 1], 0), (&[1], 0), (&[2], 5)]);
    assert_eq!(p.choose(&t), 1);
    let (p, t) = holder(Selection::Fifo, &[(&[4], 0), (&[1], 0)]);
    assert_eq!(p.choose(&t), 4);
}

#[test]
fn compatibility_is_membership_in_the_set() {
    let c = cfg(4, 5, 1, Dist::Const(0.0), Dist::Const(1.0));
    let mut p = TokenGme::new(0, &c.run.setup, Selection::Priority);
    p.request[2] = (1, 3);
    assert!(p.compatible(2, 3) && !p.compatible(2, 1));
    p.record_also(2, &[1, 4]);
    assert!(p.compatible(2, 1) && p.compatible(2, 4) && !p.compatible(2, 0));
    // The broken variant reads the first type only.
    let p = p.reading_first_types_only();
    assert!(p.admits(2, 3) && !p.admits(2, 1));
    assert!(p.compatible(2, 1));
}
