//! Every lock written over the register abstraction, explored on the scheduled memory: safe
//! under PCT and random schedules at 3 and 4 processes, with its register invariants and lemma
//! steps checked after every step (Theorem 1 of seed 002 for UB-Bakery, the register ranges for
//! B-Bakery, ...); and the negative control caught.

use super::{find, registry, LockEntry, Registry};
use crate::locks::{Direction, Problem};
use crate::mem::Model;
use crate::verify::{verify, Outcome, VerifyOptions};

/// Explores schedules of a registered lock and asserts it stays safe, at a fixed seed
/// (`LOCKBENCH_SEED` chooses another), printed on failure.
fn assert_safe_under_schedules(entry: &LockEntry, threads: usize, schedules: usize) {
    let mut opts = VerifyOptions::new(threads);
    opts.schedules = schedules;
    opts.seed = std::env::var("LOCKBENCH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_301);
    let r = verify(entry, &opts, false).unwrap();
    assert_eq!(
        r.outcome,
        Outcome::Safe,
        "{} at {threads}, seed {}: {r}",
        entry.info.name,
        opts.seed
    );
}

/// Every safe lock of the registry written over the register abstraction and solving
/// `problem`: 500 schedules at 3 processes, 200 at 4. Returns how many it explored.
fn every_lock_of(problem: Problem) -> usize {
    let locks: Vec<LockEntry> = registry()
        .into_iter()
        .filter(|e| e.info.safe && e.scheduled.is_some() && e.info.problem == problem)
        .collect();
    for e in &locks {
        assert_safe_under_schedules(e, 3, 500);
        assert_safe_under_schedules(e, 4, 200);
    }
    locks.len()
}

#[test]
fn every_mutual_exclusion_lock_is_safe_under_explored_schedules() {
    assert!(every_lock_of(Problem::Mutex) >= 1);
}

#[test]
fn every_gme_lock_is_safe_under_explored_schedules() {
    assert!(every_lock_of(Problem::Gme) >= 1);
}

#[test]
fn every_k_exclusion_lock_is_safe_under_explored_schedules() {
    assert!(every_lock_of(Problem::KExclusion) >= 1);
}

/// A lock's bound comes from its own file, evaluated at N.
#[test]
fn bounds_evaluate_at_n() {
    let bound = |name: &str, model: Model, n: usize| (find(name).unwrap().info.bound)(model, n);
    let b = bound("glb", Model::Cc, 8).unwrap();
    assert_eq!(
        (b.formula.as_str(), b.value, b.c),
        ("11N − 4", 84, Some(11))
    );
    let b = bound("burns-lamport", Model::Cc, 32).unwrap();
    assert_eq!((b.value, b.direction), (496, Direction::Lower));
    assert!(
        bound("glb", Model::Dsm, 4).is_none(),
        "seed 000 claims nothing in DSM"
    );
    assert!(bound("tas", Model::Cc, 4).is_none());
    assert_eq!(bound("mcs", Model::Dsm, 4).unwrap().value, 4);
}

/// Names are unique, and the registry refuses a second lock of a taken name.
#[test]
fn names_are_unique_and_a_taken_one_is_refused() {
    let all = registry();
    let mut names: Vec<&str> = all.iter().map(|e| e.info.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), all.len());
    let mut reg = Registry::builtin();
    let err = reg.add(find("mcs").unwrap()).err().unwrap();
    assert!(err.0.contains("already taken"), "{err}");
    let mut renamed = find("mcs").unwrap();
    renamed.info.name = "all";
    assert!(reg.add(renamed).is_err());
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
        assert_eq!(m.len(), 1);
        let mut opts = VerifyOptions::new(3);
        opts.schedules = 500;
        let r = verify(&crate::verify::mutants::entry(&m[0]), &opts, false).unwrap();
        assert!(
            matches!(r.outcome, Outcome::Violation { .. }),
            "{name}: {r}"
        );
    }
}

#[test]
fn every_paper_lock_of_the_registry_cites_a_seed() {
    for e in registry() {
        let s = e.info.source;
        if s.contains("seed ") {
            assert!(
                crate::locks::sources::cite_source(s).is_some(),
                "{}: {s}",
                e.info.name
            );
        }
    }
}
