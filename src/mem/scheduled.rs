//! Scheduled memory: every register access is a scheduling point of the shuttle scheduler, so
//! the same algorithm code runs under randomized and PCT exploration of interleavings.
//!
//! Registers of this memory may only be touched from inside a shuttle execution
//! (`shuttle::check_random`, `shuttle::check_pct`, `shuttle::replay`).

use std::cell::RefCell;
use std::rc::Rc;

use shuttle::sync::atomic::{AtomicI64, Ordering};

use super::{Home, Memory, Register};

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

fn observe() {
    let hook = OBSERVER.with(|o| o.borrow().clone());
    if let Some(hook) = hook {
        hook();
    }
}

/// Memory whose accesses are shuttle scheduling points.
#[derive(Clone, Copy, Debug, Default)]
pub struct ScheduledMemory;

/// A register whose every access yields to the shuttle scheduler.
#[derive(Debug)]
pub struct ScheduledRegister(AtomicI64);

impl Register for ScheduledRegister {
    fn read(&self, _p: usize) -> i64 {
        self.0.load(Ordering::SeqCst)
    }

    fn write(&self, _p: usize, v: i64) {
        self.0.store(v, Ordering::SeqCst);
        observe();
    }

    fn fetch_add(&self, _p: usize, v: i64) -> i64 {
        let old = self.0.fetch_add(v, Ordering::SeqCst);
        observe();
        old
    }

    fn peek(&self) -> i64 {
        // SAFETY: the value is an i64 and every writer stores whole values; an observer may
        // read a stale one, which is all `peek` promises. `raw_load` is not a scheduling
        // point, so observing never changes the schedule being explored.
        unsafe { self.0.raw_load() }
    }
}

impl Memory for ScheduledMemory {
    type Reg = ScheduledRegister;

    fn register(&self, _home: Home, init: i64) -> ScheduledRegister {
        ScheduledRegister(AtomicI64::new(init))
    }

    fn wait_until(&self, _p: usize, mut cond: impl FnMut() -> bool) {
        while !cond() {
            shuttle::thread::yield_now();
        }
    }
}
