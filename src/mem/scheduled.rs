//! Scheduled memory: every register access is a scheduling point of the shuttle scheduler, so
//! the same algorithm code runs under randomized and PCT exploration of interleavings.
//!
//! Registers of this memory may only be touched from inside a shuttle execution
//! (`shuttle::check_random`, `shuttle::check_pct`, `shuttle::replay`).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
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

/// The id of a register allocated outside a recording: its accesses record nothing.
const UNTRACED: u32 = u32::MAX;

/// One entry of a recorded execution ([`start_recording`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Recorded {
    /// A shared-memory step: process `p` did `op` on register `reg` (its id; see
    /// [`Recording::names`]), seeing or leaving `value`, at figure line `line` when the
    /// algorithm tags its lines ([`Memory::line`]).
    Step {
        /// The process.
        p: usize,
        /// `read`, `write`, `fetch-add`, `swap` or `cas`.
        op: &'static str,
        /// The register's id.
        reg: u32,
        /// The value read or written (for a read-modify-write, old → new).
        value: String,
        /// The figure line the process was at.
        line: Option<u32>,
    },
    /// Something the verifier saw process `p` do (request, doorway done, entry, exit).
    Event {
        /// The process.
        p: usize,
        /// What it did.
        what: String,
    },
}

/// A recorded execution: its entries in order, and the names the lock gave its registers.
#[derive(Clone, Debug, Default)]
pub struct Recording {
    /// Steps and events, in the order they happened.
    pub entries: Vec<Recorded>,
    /// Register id → name (`number[2]`), for the registers the lock labelled.
    pub names: HashMap<u32, String>,
}

#[derive(Default)]
struct Recorder {
    recording: Recording,
    next_id: u32,
    /// The figure line each process is at.
    line: Vec<Option<u32>>,
}

thread_local! {
    /// A recording is under way on this thread: registers allocated now are traced.
    static RECORDING: Cell<bool> = const { Cell::new(false) };
    static RECORDER: RefCell<Option<Recorder>> = const { RefCell::new(None) };
}

fn with_recorder(f: impl FnOnce(&mut Recorder)) {
    RECORDER.with(|r| {
        if let Some(r) = r.borrow_mut().as_mut() {
            f(r)
        }
    });
}

/// Starts recording this thread's scheduled executions: every register allocated from now on
/// records each access (for replaying one schedule, never while exploring).
pub fn start_recording() {
    RECORDER.with(|r| *r.borrow_mut() = Some(Recorder::default()));
    RECORDING.set(true);
}

/// Stops recording and returns what was recorded.
pub fn stop_recording() -> Recording {
    RECORDING.set(false);
    RECORDER
        .with(|r| r.borrow_mut().take())
        .map(|r| r.recording)
        .unwrap_or_default()
}

/// Records an event of process `p` when recording (`what` is only evaluated then).
pub fn record_event(p: usize, what: impl FnOnce() -> String) {
    if RECORDING.get() {
        with_recorder(|r| {
            r.recording
                .entries
                .push(Recorded::Event { p, what: what() })
        });
    }
}

fn record_step(p: usize, op: &'static str, reg: u32, value: impl FnOnce() -> String) {
    with_recorder(|r| {
        let line = r.line.get(p).copied().flatten();
        r.recording.entries.push(Recorded::Step {
            p,
            op,
            reg,
            value: value(),
            line,
        })
    });
}

fn next_id() -> u32 {
    if !RECORDING.get() {
        return UNTRACED;
    }
    let mut id = UNTRACED;
    with_recorder(|r| {
        id = r.next_id;
        r.next_id += 1;
    });
    id
}

fn name_register(id: u32, name: impl FnOnce() -> String) {
    if id != UNTRACED {
        with_recorder(|r| {
            r.recording.names.insert(id, name());
        });
    }
}

/// Memory whose accesses are shuttle scheduling points.
///
/// # Examples
///
/// ```
/// # use lockbench::locks::Lock;
/// # use lockbench::mem::{Home, Memory, Register};
/// # struct Tas<M: Memory> { mem: M, word: M::Reg }
/// # impl<M: Memory> Tas<M> {
/// #     fn new(mem: M) -> Self { let word = mem.register(Home::Shared, 0); Tas { mem, word } }
/// # }
/// # impl<M: Memory> Lock for Tas<M> {
/// #     fn enter(&self, p: usize, _session: usize) {
/// #         while self.word.swap(p, 1) != 0 {
/// #             self.mem.wait_until(p, || self.word.read(p) == 0);
/// #         }
/// #     }
/// #     fn exit(&self, p: usize, _session: usize) { self.word.write(p, 0); }
/// # }
/// use lockbench::locks::{Mutant, Params};
/// use lockbench::mem::ScheduledMemory;
/// // `verify` builds a lock (or a mutant of it) on the scheduled memory and explores its
/// // interleavings; off the scheduler its registers are not to be touched.
/// let m = Mutant::new("same-code", "1", "nothing changed", |mem: ScheduledMemory, _: &Params| {
///     Tas::new(mem)
/// });
/// assert_eq!(m.name, "same-code");
/// ```
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
pub struct ScheduledRegister {
    value: AtomicI64,
    /// Its id in the recording it was allocated under ([`start_recording`]), or [`UNTRACED`]:
    /// exploration allocates untraced registers, whose accesses record nothing.
    id: u32,
}

/// One scheduling point: the scheduler may run any other process here.
#[inline]
fn step() {
    // Shuttle models no time: `sleep` is exactly a context switch (unlike `yield_now`, it
    // does not ask PCT to deprioritise the caller).
    shuttle::thread::sleep(std::time::Duration::ZERO);
}

impl Register for ScheduledRegister {
    fn read(&self, p: usize) -> i64 {
        step();
        let v = self.value.load(Ordering::SeqCst);
        if self.id != UNTRACED {
            record_step(p, "read", self.id, || v.to_string());
        }
        v
    }

    fn write(&self, p: usize, v: i64) {
        step();
        self.value.store(v, Ordering::SeqCst);
        if self.id != UNTRACED {
            record_step(p, "write", self.id, || v.to_string());
        }
        observe();
    }

    fn fetch_add(&self, p: usize, v: i64) -> i64 {
        step();
        let old = self.value.fetch_add(v, Ordering::SeqCst);
        if self.id != UNTRACED {
            record_step(p, "fetch-add", self.id, || format!("{old} → {}", old + v));
        }
        observe();
        old
    }

    fn swap(&self, p: usize, v: i64) -> i64 {
        step();
        let old = self.value.swap(v, Ordering::SeqCst);
        if self.id != UNTRACED {
            record_step(p, "swap", self.id, || format!("{old} → {v}"));
        }
        observe();
        old
    }

    fn compare_exchange(&self, p: usize, current: i64, new: i64) -> Result<i64, i64> {
        step();
        let r = self
            .value
            .compare_exchange(current, new, Ordering::SeqCst, Ordering::SeqCst);
        if self.id != UNTRACED {
            record_step(p, "cas", self.id, || match r {
                Ok(_) => format!("{current} → {new}"),
                Err(seen) => format!("{seen} (≠ {current}, failed)"),
            });
        }
        if r.is_ok() {
            observe();
        }
        r
    }

    fn peek(&self) -> i64 {
        // Not a scheduling point, so observing never changes the schedule being explored.
        self.value.load(Ordering::Relaxed)
    }
}

/// A multi-word register of the scheduled memory: one scheduling point before each access,
/// then the whole copy, with nothing yielding in between (so it is one atomic step). Shuttle
/// runs every task on one OS thread, so the lock is never contended.
#[derive(Debug)]
pub struct ScheduledWide {
    words: std::sync::Mutex<Vec<i64>>,
    /// As [`ScheduledRegister`]'s.
    id: u32,
}

impl ScheduledWide {
    fn words(&self) -> std::sync::MutexGuard<'_, Vec<i64>> {
        self.words.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl WideRegister for ScheduledWide {
    fn words(&self) -> usize {
        self.words().len()
    }

    fn read(&self, p: usize, out: &mut [i64]) {
        step();
        out.copy_from_slice(&self.words());
        if self.id != UNTRACED {
            record_step(p, "read", self.id, || format!("{out:?}"));
        }
    }

    fn write(&self, p: usize, v: &[i64]) {
        step();
        self.words().copy_from_slice(v);
        if self.id != UNTRACED {
            record_step(p, "write", self.id, || format!("{v:?}"));
        }
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
        ScheduledRegister {
            value: AtomicI64::new(init),
            id: next_id(),
        }
    }

    fn wide(&self, _home: Home, words: usize, init: i64) -> ScheduledWide {
        ScheduledWide {
            words: std::sync::Mutex::new(vec![init; words]),
            id: next_id(),
        }
    }

    fn label(&self, name: &'static str, regs: &[ScheduledRegister]) {
        for (i, r) in regs.iter().enumerate() {
            name_register(r.id, || format!("{name}[{i}]"));
        }
    }

    fn label_one(&self, name: &'static str, reg: &ScheduledRegister) {
        name_register(reg.id, || name.to_string());
    }

    fn line(&self, p: usize, line: u32) {
        // Outside a recording this is one thread-local flag test per tagged figure line.
        if RECORDING.get() {
            with_recorder(|r| {
                if r.line.len() <= p {
                    r.line.resize(p + 1, None);
                }
                r.line[p] = Some(line);
            });
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recording_numbers_accesses_of_named_registers_and_exploration_records_nothing() {
        let untraced = ScheduledMemory.register(Home::Shared, 0);
        assert_eq!(untraced.id, UNTRACED);
        start_recording();
        shuttle::check_random(
            || {
                let mem = ScheduledMemory;
                let a = mem.per_process(2, 0);
                let flag = mem.register(Home::Shared, 5);
                let other = mem.register(Home::Shared, 7);
                mem.label("number", &a);
                mem.label_one("flag", &flag);
                mem.line(1, 4);
                a[1].write(1, 3);
                record_event(1, || "doorway done".into());
                assert_eq!(flag.read(0), 5);
                assert_eq!(other.swap(0, 9), 7);
            },
            1,
        );
        let rec = stop_recording();
        assert_eq!(
            rec.entries,
            vec![
                Recorded::Step {
                    p: 1,
                    op: "write",
                    reg: 1,
                    value: "3".into(),
                    line: Some(4)
                },
                Recorded::Event {
                    p: 1,
                    what: "doorway done".into()
                },
                Recorded::Step {
                    p: 0,
                    op: "read",
                    reg: 2,
                    value: "5".into(),
                    line: None
                },
                Recorded::Step {
                    p: 0,
                    op: "swap",
                    reg: 3,
                    value: "7 → 9".into(),
                    line: None
                },
            ]
        );
        assert_eq!(rec.names.get(&1).map(String::as_str), Some("number[1]"));
        assert_eq!(rec.names.get(&2).map(String::as_str), Some("flag"));
        assert_eq!(rec.names.get(&3), None, "unlabelled");
        // After the recording, registers are untraced and accesses record nothing.
        shuttle::check_random(
            || {
                let r = ScheduledMemory.register(Home::Shared, 0);
                assert_eq!(r.id, UNTRACED);
                r.write(0, 1);
                record_event(0, || unreachable!("not recording"));
            },
            1,
        );
        assert!(stop_recording().entries.is_empty());
    }
}
