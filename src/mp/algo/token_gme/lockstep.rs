//! Lockstep tests of the bounded variant (seed 003 §5.2): same seed and workload, the same
//! entries (process, time) and the same message counts.

use super::{Selection, TokenGme};
use crate::mp::algo::Setup;
use crate::mp::metrics::MpResult;
use crate::mp::run_config::RunConfig;
use crate::mp::sim::{run_logged, SimConfig};
use crate::mp::topo::Graph;
use crate::mp::workload::Dist;
use crate::mp::{Pid, Problem};

fn cfg(n: usize, seed: u64, heavy: bool, fifo: bool) -> SimConfig {
    SimConfig {
        run: RunConfig {
            algo: "token-gme-bounded".into(),
            problem: Problem::Gme,
            setup: Setup {
                n,
                m: 3,
                graph: Graph::complete(n),
                l: vec![0; n],
                k: vec![n; n],
                initial_in: vec![false; n],
                leader: 0,
            },
            requests: 60,
            seed,
            // Heavy: a new request right after each exit; light: long pauses between.
            ncs: Dist::Exp(if heavy { 1.0 } else { 400.0 }),
            cs: Dist::Uniform(0.0, 20.0),
            delay: Dist::Exp(10.0),
            mix: "hot:3:20,80".parse().unwrap(),
            watchdog: 1e9,
        },
        topology: "complete".into(),
        fifo,
        trace: false,
    }
}

/// Messages of each kind, in the run's order of kinds.
fn counts(r: &MpResult) -> Vec<(String, u64)> {
    let reqs = r.requests as f64;
    r.messages_by_kind
        .iter()
        .map(|k| (k.kind.clone(), (k.per_request * reqs).round() as u64))
        .collect()
}

/// Messages per request: mean, most, most with local copies.
fn total(r: &MpResult) -> (f64, u64, u64) {
    (
        r.messages_per_request_mean,
        r.messages_per_request_max,
        r.messages_per_request_max_with_self,
    )
}

fn run(c: &SimConfig, make: impl Fn(Pid, &Setup) -> TokenGme) -> (MpResult, Vec<(Pid, f64)>) {
    let (r, log) = run_logged(c, make);
    assert_eq!(r.safety_violations, 0, "{:?}", r.violations);
    assert!(r.liveness_failure.is_none(), "{:?}", r.liveness_failure);
    assert_eq!(log.len() as u64, c.run.setup.n as u64 * c.run.requests);
    (r, log)
}

/// The cases: n = 3…10, light and heavy load, FIFO and not, four seeds.
fn cases() -> impl Iterator<Item = SimConfig> {
    (3..=10).flat_map(|n| {
        [(false, true), (true, true), (true, false)]
            .into_iter()
            .flat_map(move |(heavy, fifo)| (1..=4).map(move |seed| cfg(n, seed, heavy, fifo)))
    })
}

/// With resets every smax requests (sessions), the bounded variant (numbers back to 0) and
/// the same exchanges with numbers left to grow decide alike: the bound changes no
/// decision. Both keep the sequence numbers in their domain only if bounded.
#[test]
fn bounded_numbers_decide_as_unbounded_ones() {
    let mut resets = 0;
    for smax in [2, 3, 5] {
        for c in cases() {
            let sel = Selection::Priority;
            let (b, b_log) = run(&c, |p, s| TokenGme::with_resets(p, s, sel, smax, true));
            let (u, u_log) = run(&c, |p, s| TokenGme::with_resets(p, s, sel, smax, false));
            let first = b_log.iter().zip(&u_log).position(|(x, y)| x != y);
            assert_eq!(
                first, None,
                "smax {smax}: entries differ from #{first:?}, {:?}",
                c.run
            );
            assert_eq!(b_log.len(), u_log.len());
            assert_eq!(total(&b), total(&u), "smax {smax}, {:?}", c.run);
            assert_eq!(counts(&b), counts(&u), "smax {smax}, {:?}", c.run);
            resets += counts(&b)
                .iter()
                .filter(|(k, _)| k.starts_with("RESET"))
                .map(|(_, v)| v)
                .sum::<u64>();
        }
    }
    assert!(resets > 0, "the runs reset their numbers");
}

/// With an smax no run reaches, the bounded variant is TokenGME itself: same entries, same
/// messages of every kind, no reset.
#[test]
fn bounded_variant_without_resets_is_token_gme() {
    for c in cases() {
        let sel = Selection::Priority;
        let (b, b_log) = run(&c, |p, s| TokenGme::new_bounded(p, s, sel, 1 << 20));
        let (u, u_log) = run(&c, |p, s| TokenGme::new(p, s, sel));
        assert_eq!(b_log, u_log, "{:?}", c.run);
        assert_eq!(total(&b), total(&u), "{:?}", c.run);
        assert_eq!(counts(&b), counts(&u), "{:?}", c.run);
    }
}

/// A number outside 0..=smax is reported.
#[test]
fn a_number_past_smax_is_reported() {
    let c = cfg(3, 1, false, true);
    let mut p = TokenGme::new_bounded(0, &c.run.setup, Selection::Priority, 4);
    assert!(p.domain_violation().is_none());
    p.request[2] = (5, 0);
    assert!(p.domain_violation().unwrap().contains("request[2] = 5"));
    p.request[2] = (4, 0);
    p.session = 5;
    assert!(p.domain_violation().unwrap().contains("session = 5"));
    p.session = 0;
    p.token.as_mut().unwrap().fulfilled[1] = 9;
    assert!(p.domain_violation().unwrap().contains("fulfilled[1] = 9"));
}
