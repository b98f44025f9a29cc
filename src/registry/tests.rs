//! Every lock written over the register abstraction, explored on the scheduled memory: safe
//! under PCT and random schedules at 3 and 4 processes, with its register invariants and lemma
//! steps checked after every step (Theorem 1 of seed 002 for UB-Bakery, the register ranges for
//! B-Bakery, ...); and the negative control caught.

use super::find;
use crate::verify::{verify, Outcome, VerifyOptions};

/// Explores schedules of a registered lock and asserts it stays safe, on a seed drawn per call
/// (`LOCKBENCH_SEED` fixes it), printed on failure.
fn assert_safe_under_schedules(name: &str, threads: usize, schedules: usize) {
    let entry = find(name).expect("registered");
    let mut opts = VerifyOptions::new(threads);
    opts.schedules = schedules;
    opts.seed = std::env::var("LOCKBENCH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap();
            t.subsec_nanos() as u64 % 1_000_000
        });
    let r = verify(&entry, &opts, false).unwrap();
    assert_eq!(
        r.outcome,
        Outcome::Safe,
        "{name} at {threads}, seed {}: {r}",
        opts.seed
    );
}

/// One test per lock: 500 schedules at 3 processes, 200 at 4.
macro_rules! safe_under_explored_schedules {
    ($($test:ident: $name:literal),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                assert_safe_under_schedules($name, 3, 500);
                assert_safe_under_schedules($name, 4, 200);
            }
        )*
    };
}

safe_under_explored_schedules! {
    lamport_bakery: "lamport-bakery",
    ub_bakery: "ub-bakery",
    b_bakery: "b-bakery",
    bw_bakery: "bw-bakery",
    burns_lamport: "burns-lamport",
    glb: "glb",
    bwb_gme: "bwb-gme",
    zehavi_kex: "zehavi-kex",
    zehavi_kex_bounded: "zehavi-kex-bounded",
    mcs: "mcs",
    clh: "clh",
    tas: "tas",
    ttas: "ttas",
}

#[test]
fn the_naive_exit_breaks_group_mutual_exclusion() {
    let entry = find("naive-bwb-gme").unwrap();
    let mut opts = VerifyOptions::new(3);
    opts.schedules = 4000;
    let r = verify(&entry, &opts, false).unwrap();
    assert!(matches!(r.outcome, Outcome::Violation { .. }), "{r}");
}

/// Algorithm 1 over the bounded CTS with the unbounded CTS's label carried in every register:
/// one schedule drives both, every precedence a bounded Scan records is checked against the
/// unbounded labels, and CTS Properties 1 and 2 at every Scan; at k = 1 and k = 2.
#[test]
fn the_bounded_cts_runs_in_lockstep_with_the_unbounded_one() {
    use crate::locks::paper::bounded_cts::Lockstep;
    use crate::locks::paper::zehavi::{Zehavi, INFO_BOUNDED};
    use crate::locks::{Lock, Params};
    use crate::mem::ScheduledMemory;
    use std::sync::Arc;
    let entry = super::LockEntry {
        info: INFO_BOUNDED,
        native: Arc::new(|p: &Params| -> Box<dyn Lock> {
            Box::new(Zehavi::<_, Lockstep<_>>::new(p.native(), p))
        }),
        bench: Arc::new(|_, _| Err(crate::runner::spec::RunFailure("verify only".into()))),
        scheduled: Some(Arc::new(|p: &Params| -> Box<dyn Lock> {
            Box::new(Zehavi::<_, Lockstep<_>>::new(ScheduledMemory, p))
        })),
        counting: None,
    };
    for (n, k, schedules) in [(2, 1, 300), (3, 1, 300), (3, 2, 300), (4, 2, 150)] {
        let mut opts = VerifyOptions::new(n);
        opts.schedules = schedules;
        opts.k = k;
        opts.seed = 7 + n as u64;
        let r = verify(&entry, &opts, false).unwrap();
        assert_eq!(r.outcome, Outcome::Safe, "n = {n}, k = {k}: {r}");
    }
}

/// The bounded CTS's mutants that break Property 1 are caught by the CTS checks.
#[test]
fn the_bounded_cts_mutants_that_break_property_1_are_caught() {
    for name in ["keep-seq", "no-record"] {
        let m = crate::verify::mutants::select(&format!("zehavi-kex-bounded/{name}")).unwrap();
        let mut opts = VerifyOptions::new(3);
        opts.schedules = 500;
        let r = verify(&crate::verify::mutants::entry(&m[0]), &opts, false).unwrap();
        assert!(
            matches!(r.outcome, Outcome::Violation { .. }),
            "{name}: {r}"
        );
    }
}
