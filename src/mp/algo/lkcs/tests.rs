//! LKCS on the simulator: liveness and safety on sparse graphs, the parking of LK-15, and
//! runs that fail with one of our rules switched off.

use super::leader::tightened_c0;
use super::*;
use crate::mp::metrics::MpResult;
use crate::mp::run_config::RunConfig;
use crate::mp::sim::{run, SimConfig};
use crate::mp::topo::{Graph, Topology};
use crate::mp::workload::Dist;
use crate::mp::Problem;

/// One simulated LKCS run with the CLI's defaults (ncs exp:50, cs uniform:0,40, channel
/// delay exp:10), every process entering `requests` times; a request waiting 20 000 time
/// units (some 300 critical sections) is reported as a liveness failure.
fn lkcs(topology: Topology, n: usize, l: usize, k: usize, seed: u64) -> MpResult {
    with(
        Variant::Lkcs,
        Rules::default(),
        Case {
            topology,
            n,
            l,
            k,
            seed,
            requests: 25,
        },
    )
}

/// One run's shape.
pub(super) struct Case {
    pub(super) topology: Topology,
    pub(super) n: usize,
    pub(super) l: usize,
    pub(super) k: usize,
    pub(super) seed: u64,
    pub(super) requests: u64,
}

/// [`lkcs`] for either variant, with some of our rules switched off.
pub(super) fn with(variant: Variant, rules: Rules, c: Case) -> MpResult {
    start(variant, rules, c, false).expect("a C0 within l_i and k_i")
}

/// One run; with `tight`, from a C0 within the leader's tightened bounds (Err when none is
/// found).
pub(super) fn start(
    variant: Variant,
    rules: Rules,
    c: Case,
    tight: bool,
) -> Result<MpResult, String> {
    let Case {
        topology,
        n,
        l,
        k,
        seed,
        requests,
    } = c;
    let graph = Graph::build(&topology, n, seed);
    let mut initial_in = graph
        .initial_configuration(&vec![l; n], &vec![k; n], seed)
        .unwrap_or_else(|e| panic!("{topology} n = {n} seed {seed}: {e}"));
    if tight {
        let bounds = (&vec![l; n][..], &vec![k; n][..]);
        initial_in = tightened_c0(&graph, &initial_in, bounds, 0, seed)
            .ok_or_else(|| "no C0 within L_i, K_i reached from C0".to_string())?;
    }
    let (l, k) = (vec![l; n], vec![k; n]);
    let run_config = RunConfig {
        algo: "lkcs".into(),
        problem: Problem::LocalCs,
        setup: Setup {
            n,
            m: 1,
            graph,
            l,
            k,
            initial_in,
            leader: 0,
        },
        requests,
        seed,
        ncs: Dist::Exp(50.0),
        cs: Dist::Uniform(0.0, 40.0),
        delay: Dist::Exp(10.0),
        mix: "single".parse().unwrap(),
        watchdog: 20_000.0,
    };
    let cfg = SimConfig {
        run: run_config,
        topology: topology.to_string(),
        fifo: true,
        trace: false,
    };
    Ok(run(&cfg, |p, s| Local::with_rules(p, s, variant, rules)))
}

#[test]
fn live_and_safe_on_sparse_graphs_with_both_bounds_active() {
    // Each of these was stuck (no process served for good) before LK-14 / LK-15.
    let cases = [
        (Topology::Ring, 9, 1, 2),
        (Topology::Ring, 16, 1, 2),
        (Topology::Grid, 9, 1, 3),
        (Topology::Grid, 16, 1, 2),
        (Topology::Grid, 16, 1, 3),
        (Topology::Random(3.0), 16, 1, 2),
        (Topology::Random(4.0), 16, 1, 3),
    ];
    for (t, n, l, k) in cases {
        for seed in 1..=3 {
            let r = lkcs(t.clone(), n, l, k, seed);
            let what = format!("{t} n = {n} ({l}, {k}) seed {seed}");
            assert_eq!(r.safety_violations, 0, "{what}: {:?}", r.violations);
            assert!(
                r.liveness_failure.is_none(),
                "{what}: {:?}",
                r.liveness_failure
            );
            assert!(r.requests >= 25 * n as u64, "{what}: {}", r.requests);
        }
    }
}

#[test]
fn a_blocked_transition_parks_and_resumes() {
    // Ring of 9 with (1, 2): transitions wait on the configuration, so LK-15 runs.
    let r = lkcs(Topology::Ring, 9, 1, 2, 1);
    assert!(r.liveness_failure.is_none(), "{:?}", r.liveness_failure);
    let count = |kind: &str| {
        r.messages_by_kind
            .iter()
            .find(|m| m.kind == kind)
            .map_or(0.0, |m| m.per_request)
    };
    assert!(count("FAILED") > 0.0 && count("PARK") > 0.0, "{r:?}");
    assert!(count("RESUME") > 0.0, "{r:?}");
}

/// The figure of one path of Lemma 6 in a run.
fn path<'a>(r: &'a MpResult, name: &str) -> &'a crate::mp::paths::PathFigure {
    let l = r.lemma6.as_ref().expect("lemma6 kept for local CS");
    l.paths
        .iter()
        .find(|p| p.path == name)
        .expect("every path listed")
}

#[test]
fn every_message_is_charged_to_one_transition() {
    for (t, n, l, k) in [(Topology::Ring, 9, 1, 2), (Topology::Complete, 8, 1, 3)] {
        let r = lkcs(t, n, l, k, 2);
        let lemma = r.lemma6.as_ref().unwrap();
        let by_path: f64 = lemma
            .paths
            .iter()
            .map(|p| p.messages_mean * p.transitions as f64)
            .sum();
        let total =
            (r.messages_per_request_mean + r.self_messages_per_request_mean) * r.requests as f64;
        assert!(
            (by_path - total).abs() < 1e-6 * total,
            "{by_path} vs {total}"
        );
        let transitions: u64 = lemma.paths.iter().map(|p| p.transitions).sum();
        assert_eq!(transitions, r.requests);
    }
}

#[test]
fn the_paths_the_lemma_speaks_of_keep_its_bounds() {
    // Ring (|N_i| = 2: 9 and 18) and a complete graph of 8 (24 and 48), both bounds active.
    for (t, n, l, k) in [(Topology::Ring, 9, 1, 2), (Topology::Complete, 8, 1, 3)] {
        for seed in 1..=3 {
            let r = lkcs(t.clone(), n, l, k, seed);
            for name in ["no_preemption", "preemption"] {
                let p = path(&r, name);
                assert_eq!(p.over_bound, Some(0), "{t} seed {seed} {name}: {p:?}");
            }
        }
    }
}

#[test]
fn without_parking_lk15_a_ring_deadlocks() {
    // Ring of 9 with (1, 2): the seed's rules without a leader (LK-14) leave an older
    // request that a bound blocks at one grantor holding its places at the others.
    let mut stuck = 0;
    for seed in 1..=3 {
        let c = || Case {
            topology: Topology::Ring,
            n: 9,
            l: 1,
            k: 2,
            seed,
            requests: 25,
        };
        let off = Rules {
            park: false,
            ..Rules::default()
        };
        let r = with(Variant::Lkcs, off, c());
        assert_eq!(r.safety_violations, 0, "{:?}", r.violations);
        stuck += usize::from(r.liveness_failure.is_some());
        let on = with(Variant::Lkcs, Rules::default(), c());
        assert!(on.liveness_failure.is_none(), "{:?}", on.liveness_failure);
    }
    assert_eq!(stuck, 3, "without LK-15 every seed should stick");
}

#[test]
fn without_the_logical_clock_lk16_a_preemption_exceeds_lemma_6() {
    // Complete graph of 8, (1, 3), 200 entries each, seed 2. With ts_i a counter of the
    // process's own exits, p0's first transition (ts 1, the lowest id) preempts at every
    // grantor and costs 52 messages on the lemma's preemption path, above 6(|N_i| + 1) = 48;
    // with the clock no transition of that path exceeds it (max 34).
    let c = || Case {
        topology: Topology::Complete,
        n: 8,
        l: 1,
        k: 3,
        seed: 2,
        requests: 200,
    };
    let off = Rules {
        clock: false,
        ..Rules::default()
    };
    let r = with(Variant::Lkcs, off, c());
    let p = path(&r, "preemption");
    assert!(p.over_bound.unwrap() > 0, "{p:?}");
    assert!(p.messages_max > 48, "{p:?}");
    let r = with(Variant::Lkcs, Rules::default(), c());
    let p = path(&r, "preemption");
    assert_eq!(p.over_bound, Some(0), "{p:?}");
}
