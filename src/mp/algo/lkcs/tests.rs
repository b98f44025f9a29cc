//! LKCS on the simulator: liveness and safety on sparse graphs, the parking of LK-15, and
//! runs that fail with one of our rules switched off.

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
    let graph = Graph::build(&topology, n, seed);
    let (l, k) = (vec![l; n], vec![k; n]);
    let initial_in = graph
        .initial_configuration(&l, &k, seed)
        .unwrap_or_else(|e| panic!("{topology} n = {n} seed {seed}: {e}"));
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
        requests: 25,
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
    run(&cfg, |p, s| Local::new(p, s, Variant::Lkcs))
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
