//! One execution under the scheduler: the lock built on the scheduled memory, every process
//! doing its passages as a shuttle task, the [`Monitor`] checking each event, the lock's
//! invariants checked after every write and its lemmas at every marked step, and for
//! crash-tolerant k-exclusion the processes frozen mid-protocol. A failed check panics with a
//! tagged message (see [`TAGS`]), which ends the schedule and names what broke.

use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use shuttle::rand::RngCore;

use crate::locks::{Builder, Claims, Lock, Params, Problem};
use crate::mem::scheduled::{
    process_done, record_event, set_mark_observer, set_observer, set_wait_observer, track_deadlocks,
};
use crate::mem::WaitPolicy;
use crate::verify::monitor::{Broken, Monitor};
use crate::verify::options::{SessionPlan, VerifyOptions};
use crate::verify::script::{note, Event};

/// The tags that open the panic message of each failed check.
pub(super) const TAGS: [&str; 5] = [
    "SAFETY VIOLATION: ",
    "INVARIANT BROKEN: ",
    "PROPERTY VIOLATION: ",
    "DEADLOCK: ",
    "WITNESS: ",
];

/// Counters shared by the executions of one exploration.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) completed: AtomicUsize,
    pub(super) crashes: AtomicUsize,
    pub(super) witnesses: Mutex<BTreeMap<&'static str, (usize, String)>>,
    /// Processes frozen in the current execution.
    pub(super) crashed: Mutex<Vec<usize>>,
    /// The largest token seen after any write of any execution ([`Lock::largest_token`]).
    pub(super) largest_token: Mutex<Option<i64>>,
    /// The most steps from being enabled (FIFE) to entering, over every execution.
    pub(super) fife_steps: Mutex<Option<u64>>,
}

/// Where a frozen process stops: in passage `passage`, in `phase` (0 entry, 1 inside, 2 exit),
/// after its `writes`-th write of that phase (entry: or on entering, if it writes less).
#[derive(Clone, Copy, Debug)]
struct CrashAt {
    passage: usize,
    phase: u8,
    writes: usize,
}

/// The state of one execution, shared by its tasks (one runs at a time: never contended).
struct Exec {
    monitor: Monitor,
    /// Shuttle task id → process.
    task_of: BTreeMap<usize, usize>,
    crash: Vec<Option<CrashAt>>,
    /// (passage, phase, writes in this phase) of each process.
    progress: Vec<(usize, u8, usize)>,
    freezers: Vec<Option<shuttle::sync::mpsc::Receiver<()>>>,
    /// The victims have been released: nothing more is checked.
    over: bool,
}

/// What each process does in one execution: passages, steps inside, sessions to choose from
/// (at least one), how it chooses them.
#[derive(Clone, Copy)]
struct Work {
    passages: usize,
    cs_steps: usize,
    sessions: usize,
    plan: SessionPlan,
}

fn broken_panic(b: Broken) -> ! {
    if b.property == "safety" {
        panic!("SAFETY VIOLATION: {}", b.what);
    } else if b.claimed {
        panic!("PROPERTY VIOLATION: {}: {}", b.property, b.what);
    } else {
        panic!("WITNESS: {}: {}", b.property, b.what);
    }
}

/// Stops process p for ever (until the execution's end releases it): a crash.
fn freeze(exec: &Arc<Mutex<Exec>>, tally: &Tally, p: usize) {
    record_event(p, || "crashes (frozen for ever)".into());
    let rx = {
        let mut ex = exec.lock().unwrap();
        ex.monitor.crash(p);
        ex.crash[p] = None;
        ex.freezers[p].take()
    };
    tally.crashed.lock().unwrap().push(p);
    process_done(p);
    if let Some(rx) = rx {
        let _ = rx.recv();
    }
}

/// One execution: every process does its passages; the monitor checks each event; the lock's
/// invariants are checked after every write.
pub(super) fn execution(
    build: &Builder,
    problem: Problem,
    fcfs: bool,
    opts: &VerifyOptions,
    tally: &Arc<Tally>,
) {
    let n = opts.threads;
    let params = Params::new(n, opts.k, WaitPolicy::Spin);
    let lock: Arc<dyn Lock> = Arc::from(build(&params));
    let claims = lock.claims();
    let crash = crash_plan(problem, claims, opts, tally);
    tally.crashed.lock().unwrap().clear();
    let mut releases = Vec::new();
    let mut freezers = Vec::new();
    for c in &crash {
        if c.is_some() {
            let (tx, rx) = shuttle::sync::mpsc::channel();
            releases.push(tx);
            freezers.push(Some(rx));
        } else {
            freezers.push(None);
        }
    }
    let exec = Arc::new(Mutex::new(Exec {
        monitor: Monitor::new(problem, n, opts.k, fcfs, claims, opts.witness),
        task_of: BTreeMap::new(),
        crash: crash.clone(),
        progress: vec![(0, 0, 0); n],
        freezers,
        over: false,
    }));
    observe(&lock, &exec, tally);
    track_deadlocks(Some(n));
    let work = Work {
        passages: opts.passages,
        cs_steps: opts.cs_steps,
        sessions: opts.sessions.max(1),
        plan: opts.plan,
    };
    let handles: Vec<_> = (0..n)
        .map(|p| {
            let (lock, exec, tally) = (lock.clone(), exec.clone(), tally.clone());
            shuttle::thread::spawn(move || process(p, problem, work, &lock, &exec, &tally))
        })
        .collect();
    let mut frozen_handles = Vec::new();
    for (p, h) in handles.into_iter().enumerate() {
        if crash[p].is_some() {
            frozen_handles.push(h);
        } else {
            h.join().unwrap();
        }
    }
    // Every process that did not crash has finished: that is the check. Release the frozen ones
    // (they finish their passages unobserved, with deadlock detection off).
    {
        let mut e = exec.lock().unwrap();
        e.over = true;
    }
    track_deadlocks(None);
    for tx in releases {
        let _ = tx.send(());
    }
    for h in frozen_handles {
        h.join().unwrap();
    }
    set_observer(None);
    set_wait_observer(None);
    set_mark_observer(None);
    let (found, fife) = {
        let mut e = exec.lock().unwrap();
        (
            std::mem::take(&mut e.monitor.witnesses),
            e.monitor.fife_steps,
        )
    };
    if let Some(f) = fife {
        let mut most = tally.fife_steps.lock().unwrap();
        *most = Some(most.map_or(f, |m| m.max(f)));
    }
    let mut all = tally.witnesses.lock().unwrap();
    for w in found {
        let entry = all.entry(w.property).or_insert((0, w.what));
        entry.0 += 1;
    }
    tally.completed.fetch_add(1, Ordering::Relaxed);
}

/// The crash plan: for crash-tolerant k-exclusion, half the schedules freeze k − 1 processes,
/// each at a point drawn from the schedule's randomness; no crash otherwise.
fn crash_plan(
    problem: Problem,
    claims: Claims,
    opts: &VerifyOptions,
    tally: &Tally,
) -> Vec<Option<CrashAt>> {
    let n = opts.threads;
    let mut rng = shuttle::rand::thread_rng();
    let mut crash = vec![None; n];
    let victims = opts.k.saturating_sub(1).min(n.saturating_sub(1));
    if claims.crash_tolerant
        && problem == Problem::KExclusion
        && victims > 0
        && rng.next_u64().is_multiple_of(2)
    {
        let mut chosen = 0;
        while chosen < victims {
            let p = (rng.next_u64() % n as u64) as usize;
            if crash[p].is_none() {
                crash[p] = Some(CrashAt {
                    passage: (rng.next_u64() % opts.passages as u64) as usize,
                    phase: (rng.next_u64() % 3) as u8,
                    writes: 1 + (rng.next_u64() % (3 * n as u64)) as usize,
                });
                chosen += 1;
            }
        }
        tally.crashes.fetch_add(1, Ordering::Relaxed);
    }
    crash
}

/// Installs the scheduled memory's observers for this execution: after every write, the
/// lock's invariants and the crash plan (a process reaching its crash point freezes); at every
/// marked step, the lock's lemmas; at every wait, the monitor.
fn observe(lock: &Arc<dyn Lock>, exec: &Arc<Mutex<Exec>>, tally: &Arc<Tally>) {
    let (observed, ex, t) = (lock.clone(), exec.clone(), tally.clone());
    set_observer(Some(Rc::new(move || {
        if let Some(v) = observed.largest_token() {
            let mut largest = t.largest_token.lock().unwrap();
            *largest = Some(largest.map_or(v, |l| l.max(v)));
        }
        if let Err(e) = observed.check_invariants(true) {
            panic!("INVARIANT BROKEN: {e}");
        }
        let me: usize = shuttle::current::me().into();
        let victim = {
            let mut e = ex.lock().unwrap();
            let Some(&p) = e.task_of.get(&me) else { return };
            if e.over {
                return;
            }
            e.progress[p].2 += 1;
            note(p, Event::Write);
            let (passage, phase, writes) = e.progress[p];
            match e.crash[p] {
                Some(c) if c.passage == passage && c.phase == phase && writes >= c.writes => {
                    Some(p)
                }
                _ => None,
            }
        };
        if let Some(p) = victim {
            freeze(&ex, &t, p);
        }
    })));
    let marked = lock.clone();
    set_mark_observer(Some(Rc::new(move |p, line, args| {
        if let Err(e) = marked.lemma_step(p, line, args) {
            panic!("INVARIANT BROKEN: {e}");
        }
    })));
    let ex = exec.clone();
    set_wait_observer(Some(Rc::new(move |p, outcome| {
        let mut e = ex.lock().unwrap();
        if e.over {
            return;
        }
        let result = match outcome {
            None => {
                e.monitor.wait_begin(p);
                Ok(())
            }
            Some(ok) => {
                if !ok {
                    record_event(p, || "waits: its condition is false".into());
                    note(p, Event::Wait);
                }
                e.monitor.wait_end(p, ok)
            }
        };
        drop(e);
        if let Err(b) = result {
            broken_panic(b);
        }
    })));
}

/// Process `p`'s task: its passages, each event told to the monitor, frozen where the crash
/// plan says.
fn process(
    p: usize,
    problem: Problem,
    work: Work,
    lock: &Arc<dyn Lock>,
    exec: &Arc<Mutex<Exec>>,
    tally: &Arc<Tally>,
) {
    let Work {
        passages,
        cs_steps,
        sessions,
        plan,
    } = work;
    let me: usize = shuttle::current::me().into();
    exec.lock().unwrap().task_of.insert(me, p);
    note(p, Event::Started(me));
    let mut rng = shuttle::rand::thread_rng();
    for c in 0..passages {
        let s = match (problem, plan) {
            (Problem::Gme, SessionPlan::Random) => (rng.next_u64() % sessions as u64) as usize,
            (Problem::Gme, SessionPlan::Fixed) => p % sessions,
            _ => p,
        };
        {
            let mut e = exec.lock().unwrap();
            e.progress[p] = (c, 0, 0);
            e.monitor.request(p, s);
        }
        record_event(p, || match problem {
            Problem::Gme => format!("requests session {s}"),
            _ => "requests".into(),
        });
        lock.enter_traced(p, s, &mut || {
            exec.lock().unwrap().monitor.doorway(p);
            note(p, Event::Doorway);
            record_event(p, || "doorway done".into());
        });
        record_event(p, || match problem {
            Problem::Gme => format!("enters CS (session {s})"),
            _ => "enters CS".into(),
        });
        let frozen_inside = {
            let mut e = exec.lock().unwrap();
            let mut steps = vec![0; e.progress.len()];
            for (&task, &q) in &e.task_of {
                steps[q] = crate::verify::steps::of_task(task);
            }
            e.monitor.steps(steps);
            let r = e.monitor.enter(p);
            note(p, Event::Enter);
            e.progress[p] = (c, 1, 0);
            let stop = matches!(e.crash[p], Some(k) if k.passage == c && k.phase <= 1);
            drop(e);
            if let Err(b) = r {
                broken_panic(b);
            }
            stop
        };
        if frozen_inside {
            freeze(exec, tally, p);
        }
        for _ in 0..cs_steps {
            shuttle::thread::yield_now();
        }
        {
            let mut e = exec.lock().unwrap();
            e.progress[p] = (c, 2, 0);
            e.monitor.exit_begin(p);
        }
        record_event(p, || "leaves CS, exit section".into());
        lock.exit(p, s);
        exec.lock().unwrap().monitor.exit_end(p);
        record_event(p, || "exit done".into());
    }
    process_done(p);
}
