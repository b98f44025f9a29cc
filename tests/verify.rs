//! Schedule exploration: the correct algorithms survive, the broken ones are caught, and a
//! failing schedule replays.

use lockbench::locks::{find, registry, Lock, LockEntry, LockInfo, Params, Problem};
use lockbench::mem::{Home, Memory, Register, ScheduledMemory};
use lockbench::verify::{verify, Outcome, SchedulerKind, VerifyOptions};

fn opts(threads: usize, schedules: usize) -> VerifyOptions {
    let mut o = VerifyOptions::new(threads);
    o.schedules = schedules;
    o
}

#[test]
fn correct_algorithms_are_safe_under_explored_schedules() {
    let mut checked = 0;
    for e in registry()
        .into_iter()
        .filter(|e| e.info.safe && e.scheduled.is_some())
    {
        for (n, s) in [(2, 300), (3, 600)] {
            let r = verify(&e, &opts(n, s), false).unwrap();
            assert_eq!(r.outcome, Outcome::Safe, "{} at {n}: {r}", e.info.name);
            assert_eq!(r.schedules_run, s);
        }
        checked += 1;
    }
    assert_eq!(
        checked, 13,
        "ticket, the four reference locks and the eight safe paper algorithms"
    );
}

#[test]
fn the_naive_generalization_is_caught_and_replays() {
    let e = find("naive-bwb-gme").unwrap();
    let r = verify(&e, &opts(3, 4000), false).unwrap();
    let Outcome::Violation { kind, schedule } = &r.outcome else {
        panic!("not caught: {r}")
    };
    assert!(
        kind.contains("SAFETY VIOLATION") && kind.contains("session"),
        "{kind}"
    );
    assert!(!schedule.is_empty());
    let mut again = opts(3, 1);
    again.replay = Some(schedule.clone());
    let replayed = verify(&e, &again, false).unwrap();
    assert_eq!(replayed.schedules_run, 1);
    assert_eq!(
        replayed.outcome, r.outcome,
        "the replay reproduces the same violation"
    );
    // The same scenario under PCT alone, at 4 processes too.
    let mut pct = opts(4, 2000);
    pct.scheduler = SchedulerKind::Pct;
    assert!(matches!(
        verify(&e, &pct, false).unwrap().outcome,
        Outcome::Violation { .. }
    ));
}

#[test]
fn exploration_is_deterministic_per_seed() {
    let e = find("naive-bwb-gme").unwrap();
    let a = verify(&e, &opts(3, 3000), false).unwrap();
    let b = verify(&e, &opts(3, 3000), false).unwrap();
    assert_eq!(a.schedules_run, b.schedules_run);
    assert_eq!(a.outcome, b.outcome);
}

/// Test-only broken lock: test a flag, then set it (the classic race).
struct TestAndSet<M: Memory> {
    mem: M,
    flag: M::Reg,
}

impl<M: Memory> TestAndSet<M> {
    fn new(mem: M, _p: &Params) -> Self {
        let flag = mem.register(Home::Shared, 0);
        TestAndSet { mem, flag }
    }
}

impl<M: Memory> Lock for TestAndSet<M> {
    fn enter(&self, p: usize, _s: usize) {
        self.mem.wait_until(p, || self.flag.read(p) == 0);
        self.flag.write(p, 1);
    }
    fn exit(&self, p: usize, _s: usize) {
        self.flag.write(p, 0);
    }
    fn check_invariants(&self, _exact: bool) -> Result<(), String> {
        match self.flag.peek() {
            0 | 1 => Ok(()),
            v => Err(format!("flag = {v}")),
        }
    }
}

/// Test-only lock whose invariant breaks once two passages have run.
struct BreaksItsBound<M: Memory> {
    inner: TestAndSet<M>,
    count: M::Reg,
}

impl<M: Memory> BreaksItsBound<M> {
    fn new(mem: M, p: &Params) -> Self {
        let count = mem.register(Home::Shared, 0);
        BreaksItsBound {
            inner: TestAndSet::new(mem, p),
            count,
        }
    }
}

impl<M: Memory> Lock for BreaksItsBound<M> {
    fn enter(&self, p: usize, s: usize) {
        self.inner.enter(p, s);
    }
    fn exit(&self, p: usize, s: usize) {
        self.count.write(p, self.count.read(p) + 1);
        self.inner.exit(p, s);
    }
    fn check_invariants(&self, _exact: bool) -> Result<(), String> {
        let c = self.count.peek();
        if c > 1 {
            Err(format!("count = {c} > 1"))
        } else {
            Ok(())
        }
    }
}

fn test_entry(name: &'static str, scheduled: lockbench::locks::Builder) -> LockEntry {
    LockEntry {
        info: LockInfo {
            name,
            problem: Problem::Mutex,
            source: "test",
            fcfs: false,
            bounded: true,
            rmr: "n/a",
            safe: false,
            notes: "",
        },
        native: scheduled,
        bench: |_, _| Err(lockbench::runner::exec::RunFailure("verify only".into())),
        scheduled: Some(scheduled),
        counting: None,
    }
}

#[test]
fn a_racy_lock_is_caught() {
    let e = test_entry("test-and-set", |p| {
        Box::new(TestAndSet::new(ScheduledMemory, p))
    });
    let r = verify(&e, &opts(2, 500), false).unwrap();
    match r.outcome {
        Outcome::Violation { kind, .. } => assert!(kind.contains("2 processes inside"), "{kind}"),
        Outcome::Safe => panic!("race not found: {r}"),
    }
}

#[test]
fn a_broken_invariant_is_caught_after_the_write() {
    let e = test_entry("breaks-bound", |p| {
        Box::new(BreaksItsBound::new(ScheduledMemory, p))
    });
    let mut o = opts(1, 5);
    o.passages = 3;
    let r = verify(&e, &o, false).unwrap();
    match r.outcome {
        Outcome::Violation { kind, .. } => {
            assert!(kind.contains("INVARIANT BROKEN: count = 2"), "{kind}")
        }
        Outcome::Safe => panic!("invariant not checked: {r}"),
    }
}

#[test]
fn locks_not_over_the_register_abstraction_are_refused() {
    let e = find("std-mutex").unwrap();
    let err = verify(&e, &opts(2, 10), false).unwrap_err();
    assert!(err.contains("register abstraction"), "{err}");
}

/// Test-only lock that waits for a flag nobody ever sets.
struct NeverOpens<M: Memory> {
    mem: M,
    flag: M::Reg,
}

impl<M: Memory> Lock for NeverOpens<M> {
    fn enter(&self, p: usize, _s: usize) {
        self.mem.wait_until(p, || self.flag.read(p) == 1);
    }
    fn exit(&self, _p: usize, _s: usize) {}
}

#[test]
fn a_deadlock_is_reported_as_such() {
    let e = test_entry("never-opens", |_| {
        let mem = ScheduledMemory;
        let flag = mem.register(Home::Shared, 0);
        Box::new(NeverOpens { mem, flag })
    });
    let r = verify(&e, &opts(2, 10), false).unwrap();
    match r.outcome {
        Outcome::Violation { kind, .. } => assert!(kind.starts_with("DEADLOCK"), "{kind}"),
        Outcome::Safe => panic!("deadlock not reported: {r}"),
    }
}
