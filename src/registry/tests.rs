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
