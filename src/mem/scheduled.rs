//! Scheduled memory: every register access is a scheduling point of the shuttle scheduler, so
//! the same algorithm code runs under randomized and PCT exploration of interleavings.
//!
//! Registers of this memory may only be touched from inside a shuttle execution
//! (`shuttle::check_random`, `shuttle::check_pct`, `shuttle::replay`).

use std::cell::RefCell;
use std::rc::Rc;

use std::sync::atomic::{AtomicI64, Ordering};

use super::{Home, Memory, Register, WideRegister};

thread_local! {
    /// Called after every write: the verifier checks the lock's invariants here, so they are
    /// checked after every step that can change them. Shuttle runs every task of an execution
    /// on the calling OS thread, so a thread-local reaches all of them.
    static OBSERVER: RefCell<Option<Rc<dyn Fn()>>> = const { RefCell::new(None) };
}

/// Installs (or with `None` removes) the observer called after every write of this thread's
/// scheduled executions.
pub fn set_observer(observer: Option<Rc<dyn Fn()>>) {
    OBSERVER.with(|o| *o.borrow_mut() = observer);
}

/// An observer of wait evaluations: `(p, None)` before one, `(p, Some(satisfied))` after it.
pub type WaitObserver = Rc<dyn Fn(usize, Option<bool>)>;

thread_local! {
    /// Called around every evaluation of a wait condition: `(p, None)` before it, `(p,
    /// Some(satisfied))` after it. The verifier checks progress properties here (concurrent
    /// entry, FIFE, bounded exit): a failed evaluation is a step in which `p` waited.
    static WAIT_OBSERVER: RefCell<Option<WaitObserver>> = const { RefCell::new(None) };
}

/// Installs (or with `None` removes) the observer of wait evaluations of this thread's
/// scheduled executions.
pub fn set_wait_observer(observer: Option<WaitObserver>) {
    WAIT_OBSERVER.with(|o| *o.borrow_mut() = observer);
}

/// An observer of marked proof steps ([`Memory::mark`]): `(p, line, args)`.
pub type MarkObserver = Rc<dyn Fn(usize, u32, [i64; 2])>;

thread_local! {
    /// Called at every marked step: the verifier checks the lock's lemma invariants here.
    static MARK_OBSERVER: RefCell<Option<MarkObserver>> = const { RefCell::new(None) };
}

/// Installs (or with `None` removes) the observer of marked steps of this thread's scheduled
/// executions.
pub fn set_mark_observer(observer: Option<MarkObserver>) {
    MARK_OBSERVER.with(|o| *o.borrow_mut() = observer);
}

fn observe_wait(p: usize, outcome: Option<bool>) {
    let hook = WAIT_OBSERVER.with(|o| o.borrow().clone());
    if let Some(hook) = hook {
        hook(p, outcome);
    }
}

fn observe() {
    WAITS.with(|w| {
        if let Some(w) = w.borrow_mut().as_mut() {
            w.writes += 1;
        }
    });
    let hook = OBSERVER.with(|o| o.borrow().clone());
    if let Some(hook) = hook {
        hook();
    }
}

/// What the deadlock detector knows of one execution: which processes are still running, and
/// for each waiting process the number of writes when its condition was last found false.
struct Waits {
    writes: u64,
    running: Vec<bool>,
    waiting: Vec<Option<u64>>,
}

thread_local! {
    static WAITS: RefCell<Option<Waits>> = const { RefCell::new(None) };
}

/// Starts (with `Some(n)`) or ends (`None`) deadlock detection for an execution of n processes.
/// While on, a wait panics with "DEADLOCK" when every running process has found its wait
/// condition false since the last write to any register: nothing can change any more. (Wait
/// conditions depend only on the registers they read, as in every algorithm here.)
pub fn track_deadlocks(n: Option<usize>) {
    WAITS.with(|w| {
        *w.borrow_mut() = n.map(|n| Waits {
            writes: 0,
            running: vec![true; n],
            waiting: vec![None; n],
        })
    });
}

/// Process `p` has finished its work in this execution (it will wait no more).
pub fn process_done(p: usize) {
    WAITS.with(|w| {
        if let Some(w) = w.borrow_mut().as_mut() {
            if let Some(r) = w.running.get_mut(p) {
                *r = false;
            }
        }
    });
}

/// Writes so far in this execution (0 when not tracking).
fn writes() -> u64 {
    WAITS.with(|w| w.borrow().as_ref().map_or(0, |w| w.writes))
}

/// Records the outcome of one evaluation of p's wait condition, begun when `writes_before`
/// writes had happened (reads inside the condition are scheduling points, so a write may land
/// during the evaluation: then the evaluation proves nothing). True when all is stuck.
fn note_wait(p: usize, satisfied: bool, writes_before: u64) -> bool {
    WAITS.with(|w| {
        let mut w = w.borrow_mut();
        let Some(w) = w.as_mut() else { return false };
        if p >= w.waiting.len() {
            return false;
        }
        w.waiting[p] = (!satisfied).then_some(writes_before);
        !satisfied
            && w.running
                .iter()
                .zip(&w.waiting)
                .all(|(&running, &seen)| !running || seen == Some(w.writes))
    })
}

/// Memory whose accesses are shuttle scheduling points.
#[derive(Clone, Copy, Debug, Default)]
pub struct ScheduledMemory;

/// A register whose every access yields to the shuttle scheduler.
///
/// The scheduling point comes *before* the access, and nothing yields between the access and
/// the return to the algorithm: so the observer after a write, and a mark after a read
/// ([`Memory::mark`]), run in the same atomic step as the access itself and see the world as
/// the access left it. (Shuttle's own atomics also yield after each access, which would let
/// other processes run between a read and the mark that records it.) Shuttle runs every task
/// of an execution on one OS thread, one at a time, so the plain atomic below is sequentially
/// consistent whatever its ordering.
#[derive(Debug)]
pub struct ScheduledRegister(AtomicI64);

/// One scheduling point: the scheduler may run any other process here.
#[inline]
fn step() {
    // Shuttle models no time: `sleep` is exactly a context switch (unlike `yield_now`, it
    // does not ask PCT to deprioritise the caller).
    shuttle::thread::sleep(std::time::Duration::ZERO);
}

impl Register for ScheduledRegister {
    fn read(&self, _p: usize) -> i64 {
        step();
        self.0.load(Ordering::SeqCst)
    }

    fn write(&self, _p: usize, v: i64) {
        step();
        self.0.store(v, Ordering::SeqCst);
        observe();
    }

    fn fetch_add(&self, _p: usize, v: i64) -> i64 {
        step();
        let old = self.0.fetch_add(v, Ordering::SeqCst);
        observe();
        old
    }

    fn swap(&self, _p: usize, v: i64) -> i64 {
        step();
        let old = self.0.swap(v, Ordering::SeqCst);
        observe();
        old
    }

    fn compare_exchange(&self, _p: usize, current: i64, new: i64) -> Result<i64, i64> {
        step();
        let r = self
            .0
            .compare_exchange(current, new, Ordering::SeqCst, Ordering::SeqCst);
        if r.is_ok() {
            observe();
        }
        r
    }

    fn peek(&self) -> i64 {
        // Not a scheduling point, so observing never changes the schedule being explored.
        self.0.load(Ordering::Relaxed)
    }
}

/// A multi-word register of the scheduled memory: one scheduling point before each access,
/// then the whole copy, with nothing yielding in between (so it is one atomic step). Shuttle
/// runs every task on one OS thread, so the lock is never contended.
#[derive(Debug)]
pub struct ScheduledWide(std::sync::Mutex<Vec<i64>>);

impl ScheduledWide {
    fn words(&self) -> std::sync::MutexGuard<'_, Vec<i64>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl WideRegister for ScheduledWide {
    fn words(&self) -> usize {
        self.words().len()
    }

    fn read(&self, _p: usize, out: &mut [i64]) {
        step();
        out.copy_from_slice(&self.words());
    }

    fn write(&self, _p: usize, v: &[i64]) {
        step();
        self.words().copy_from_slice(v);
        observe();
    }

    fn peek(&self, out: &mut [i64]) {
        out.copy_from_slice(&self.words());
    }
}

impl Memory for ScheduledMemory {
    type Reg = ScheduledRegister;
    type Wide = ScheduledWide;

    fn register(&self, _home: Home, init: i64) -> ScheduledRegister {
        ScheduledRegister(AtomicI64::new(init))
    }

    fn wide(&self, _home: Home, words: usize, init: i64) -> ScheduledWide {
        ScheduledWide(std::sync::Mutex::new(vec![init; words]))
    }

    fn mark(&self, p: usize, line: u32, args: [i64; 2]) {
        // Not a scheduling point: the mark belongs to the step just taken.
        let hook = MARK_OBSERVER.with(|o| o.borrow().clone());
        if let Some(hook) = hook {
            hook(p, line, args);
        }
    }

    fn wait_until(&self, p: usize, mut cond: impl FnMut() -> bool) {
        loop {
            let before = writes();
            observe_wait(p, None);
            let ok = cond();
            observe_wait(p, Some(ok));
            if note_wait(p, ok, before) {
                panic!("DEADLOCK: every running process waits on a condition no write can change");
            }
            if ok {
                return;
            }
            shuttle::thread::yield_now();
        }
    }
}
