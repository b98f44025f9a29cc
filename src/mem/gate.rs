//! The gate: deterministic, step-gated execution of processes on a counting memory.
//!
//! Only the process holding the turn runs: every register access is a scheduling point at which
//! the process announces its next access and a [`Schedule`] picks who goes next, seeing every
//! process's pending access (register, kind, whether it would be remote now, whose cached copies
//! a write would invalidate). A schedule is therefore exact and reproducible: the same schedule
//! gives the same RMR counts.
//!
//! [`Gate::run`] runs the processes as coroutines on the calling thread: a process that is not
//! picked suspends, and the driver resumes the one that is, so a step costs a stack switch, not a
//! hand-off between threads through the kernel. The gate also works with one thread per process
//! (each calls [`Gate::arrive`] on its own thread): a process not picked then parks its thread,
//! and the gate unparks the next. The decisions are the same either way.
//!
//! Waits: a process whose wait condition is false *parks* with the registers it read. Picking a
//! parked process re-evaluates its condition (a spin). When nothing it read has been written since
//! and its last two evaluations read the same registers, a spin is known in advance: it changes
//! nothing and costs the remote reads of that evaluation (none under CC, whose copies are valid;
//! the registers homed elsewhere under DSM). Such a spin is charged without running the process,
//! so schedules that spin waiters (round-robin, random) stay fast and exact.
//!
//! The schedules themselves, and the view of a process they pick by, are in
//! [`super::schedule`]; they are re-exported here.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::Thread;

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, Yielder};
use crossbeam_utils::CachePadded;

use super::cell::{Access, Cell, Model};
use super::tally::ProcStats;
use super::Home;

pub use super::schedule::{Greedy, Kind, Pct, ProcView, Random, RoundRobin, Schedule, SplitMix};

const NONE: usize = usize::MAX;

/// Stack of each process's coroutine in [`Gate::run`]: 2 MiB, what a spawned thread gets by
/// default, on which the processes ran before. The locks' own frames are shallow, even in a
/// debug build, but a lock that asserts runs the panic hook on this stack, and printing a
/// backtrace (`RUST_BACKTRACE=1`) takes far more. An overflow hits the guard page and kills the
/// program without Rust's "stack overflow" message, so the size errs on the large side: only
/// the pages a process touches are backed by memory.
const STACK_BYTES: usize = 2 << 20;

thread_local! {
    /// The yielder of the coroutine of [`Gate::run`] running on this thread, null elsewhere.
    /// Set by the coroutine when it starts and whenever it is resumed, cleared by the driver
    /// whenever the coroutine suspends or returns.
    static YIELDER: std::cell::Cell<*const Yielder<(), ()>> =
        const { std::cell::Cell::new(std::ptr::null()) };
}

/// The panic payload of a process stopped because the execution was cut (step bound, deadlock
/// or another process's failure).
#[derive(Clone, Copy, Debug)]
pub struct Cut;

enum PState {
    Pending(Option<(Arc<Cell>, Access)>),
    Parked {
        reads: Vec<(Arc<Cell>, u64)>,
        stable: bool,
        remote: u64,
    },
    Done,
}

struct GateState {
    procs: Vec<PState>,
    threads: Vec<Option<Thread>>,
    arrived: usize,
    sched: Box<dyn Schedule>,
    /// The schedule's view of every process, refilled at each decision.
    views: Vec<ProcView>,
    evals: Vec<Vec<(Arc<Cell>, u64)>>,
    /// The current evaluation wrote (a test-and-set spin): its spins are never virtual.
    eval_wrote: Vec<bool>,
    waiting: Vec<bool>,
    blocked: Vec<bool>,
    prev: Vec<Option<Vec<usize>>>,
    stats: Option<Arc<[CachePadded<ProcStats>]>>,
    steps: u64,
    max_steps: u64,
    blocks: Vec<u64>,
    spins: u64,
    observer: Option<Box<dyn FnMut() + Send>>,
    error: Option<String>,
}

/// A step gate for `n` processes.
pub struct Gate {
    n: usize,
    model: Model,
    st: Mutex<GateState>,
    turn: AtomicUsize,
    failed: AtomicBool,
}

/// What the gate saw of one execution.
#[derive(Clone, Debug, Default)]
pub struct GateStats {
    /// Scheduling decisions (real steps and spins).
    pub steps: u64,
    /// Spins charged without running the waiting process.
    pub virtual_spins: u64,
    /// Per process: waits whose condition was false at least once (times it was blocked).
    pub blocks: Vec<u64>,
}

impl Gate {
    /// A gate for `n` processes under `model`, scheduled by `sched`, cut after `max_steps`.
    pub fn new(n: usize, model: Model, sched: Box<dyn Schedule>, max_steps: u64) -> Arc<Gate> {
        Arc::new(Gate {
            n,
            model,
            st: Mutex::new(GateState {
                procs: (0..n).map(|_| PState::Pending(None)).collect(),
                threads: vec![None; n],
                arrived: 0,
                sched,
                views: Vec::new(),
                evals: vec![Vec::new(); n],
                eval_wrote: vec![false; n],
                waiting: vec![false; n],
                blocked: vec![false; n],
                prev: vec![None; n],
                stats: None,
                steps: 0,
                max_steps,
                blocks: vec![0; n],
                spins: 0,
                observer: None,
                error: None,
            }),
            turn: AtomicUsize::new(NONE),
            failed: AtomicBool::new(false),
        })
    }

    /// Processes.
    pub fn processes(&self) -> usize {
        self.n
    }

    /// The model the gate's memory counts by.
    pub fn model(&self) -> Model {
        self.model
    }

    fn lock(&self) -> MutexGuard<'_, GateState> {
        self.st.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn attach(&self, stats: Arc<[CachePadded<ProcStats>]>) {
        self.lock().stats = Some(stats);
    }

    /// Calls `f` before every scheduling decision (one process at a time runs, so peeks of the
    /// lock's registers are a consistent snapshot).
    pub fn set_observer(&self, f: Box<dyn FnMut() + Send>) {
        self.lock().observer = Some(f);
    }

    /// Why the execution was cut, if it was.
    pub fn error(&self) -> Option<String> {
        self.lock().error.clone()
    }

    /// Counts of the execution so far.
    pub fn stats(&self) -> GateStats {
        let st = self.lock();
        GateStats {
            steps: st.steps,
            virtual_spins: st.spins,
            blocks: st.blocks.clone(),
        }
    }

    /// Stops the execution: every process still waiting for its turn unwinds with [`Cut`].
    pub fn fail(&self, why: String) {
        let mut st = self.lock();
        st.error.get_or_insert(why);
        self.failed.store(true, Ordering::SeqCst);
        for t in st.threads.iter().flatten() {
            t.unpark();
        }
    }

    fn fail_locked(&self, st: &mut GateState, why: String) {
        st.error.get_or_insert(why);
        self.failed.store(true, Ordering::SeqCst);
        for t in st.threads.iter().flatten() {
            t.unpark();
        }
    }

    /// The schedule's view of every process, refilled in `out` (its vectors reused: the view
    /// is rebuilt at every step a process runs).
    fn fill_views(&self, procs: &[PState], out: &mut Vec<ProcView>) {
        out.resize_with(procs.len(), || ProcView {
            kind: Kind::Done,
            access: None,
            reg: None,
            remote: false,
            invalidates: 0,
            woken: false,
            watching: Vec::new(),
        });
        for (p, (s, v)) in procs.iter().zip(out.iter_mut()).enumerate() {
            v.watching.clear();
            v.access = None;
            v.reg = None;
            v.remote = false;
            v.invalidates = 0;
            v.woken = false;
            match s {
                PState::Pending(a) => {
                    v.kind = Kind::Pending;
                    if let Some((c, a)) = a {
                        v.access = Some(*a);
                        v.reg = Some(c.id());
                        v.remote = c.would_be_remote(self.model, p, *a);
                        if a.writes() {
                            v.invalidates = c.valid_mask() & !(1u64 << p);
                        }
                    }
                }
                PState::Parked { reads, .. } => {
                    v.kind = Kind::Parked;
                    v.woken = reads.iter().any(|(c, ver)| c.version() != *ver);
                    v.watching.extend(reads.iter().map(|(c, _)| c.id()));
                }
                PState::Done => v.kind = Kind::Done,
            }
        }
    }

    /// Picks the next process and hands it the turn (the caller holds the state lock).
    fn advance(&self, st: &mut GateState) {
        if let Some(o) = st.observer.as_mut() {
            o();
        }
        if st.error.is_some() {
            return;
        }
        if st.procs.iter().all(|s| matches!(s, PState::Done)) {
            self.turn.store(NONE, Ordering::SeqCst);
            return;
        }
        let mut views = std::mem::take(&mut st.views);
        self.fill_views(&st.procs, &mut views);
        self.pick(st, &views);
        st.views = views;
    }

    /// [`Gate::advance`]'s decision over `views`. A spin charged without running its process
    /// changes no process and no register, so the views (and whether everyone is stuck) stay
    /// as they are until a process runs.
    fn pick(&self, st: &mut GateState, views: &[ProcView]) {
        let stuck = views.iter().zip(&st.procs).all(|(v, s)| match s {
            PState::Done => true,
            PState::Parked { stable, .. } => *stable && !v.woken,
            PState::Pending(_) => false,
        });
        loop {
            st.steps += 1;
            if st.steps > st.max_steps {
                let why = format!("cut after {} scheduling steps", st.max_steps);
                self.fail_locked(st, why);
                return;
            }
            if stuck {
                self.fail_locked(
                    st,
                    "deadlock: every process waits on registers no one will write".into(),
                );
                return;
            }
            let q = st.sched.pick(views);
            assert!(
                q < self.n && views[q].kind != Kind::Done,
                "schedule picked a finished process"
            );
            if let PState::Parked {
                stable: true,
                remote,
                reads,
            } = &st.procs[q]
            {
                if !views[q].woken {
                    // A spin that can change nothing: charge it without running the process.
                    if let Some(stats) = &st.stats {
                        stats[q].charge(*remote, reads.len() as u64);
                    }
                    st.spins += 1;
                    continue;
                }
            }
            self.turn.store(q, Ordering::SeqCst);
            if let Some(t) = &st.threads[q] {
                t.unpark();
            }
            return;
        }
    }

    fn wait_turn(&self, p: usize) {
        loop {
            if self.failed.load(Ordering::SeqCst) {
                // Unwinds without the panic hook: a cut is how an execution ends, not a bug,
                // and must print nothing (the caller reports why it was cut).
                std::panic::resume_unwind(Box::new(Cut));
            }
            if self.turn.load(Ordering::SeqCst) == p {
                return;
            }
            let y = YIELDER.get();
            if y.is_null() {
                std::thread::park();
            } else {
                // SAFETY: a non-null YIELDER is the yielder of the coroutine running this code
                // (see YIELDER), alive as long as the coroutine is.
                unsafe { (*y).suspend(()) };
                YIELDER.set(y);
            }
        }
    }

    /// Process `p` joins (in its coroutine of [`Gate::run`], or on its own thread); returns when
    /// it first has the turn. The first decision is made once all processes have arrived.
    pub fn arrive(&self, p: usize) {
        {
            let mut st = self.lock();
            if YIELDER.get().is_null() {
                st.threads[p] = Some(std::thread::current());
            }
            st.arrived += 1;
            if st.arrived == self.n {
                self.advance(&mut st);
            }
        }
        self.wait_turn(p);
    }

    /// Runs the execution on the calling thread: `body(p)` for every process `p`, each as a
    /// coroutine (see [`STACK_BYTES`]). A body calls [`Gate::arrive`] first and [`Gate::finish`]
    /// last; between them, each scheduling point of a process not picked suspends it, and this
    /// resumes the one the schedule picks. A body that panics fails the execution with its
    /// message, as `process p: ...` (the panic hook has printed it, as on a thread); when the
    /// execution fails or is cut, every process still waiting is resumed once to unwind with
    /// [`Cut`], so each stack is unwound before this returns. [`Gate::error`] says why.
    pub fn run(&self, body: impl Fn(usize)) {
        let body = &body;
        let mut procs: Vec<Coroutine<(), (), (), DefaultStack>> = (0..self.n)
            .map(|p| {
                let stack = DefaultStack::new(STACK_BYTES).expect("a coroutine's stack");
                let f = move |y: &Yielder<(), ()>, ()| {
                    YIELDER.set(y);
                    self.process(p, || body(p));
                };
                // SAFETY: `f` borrows `self` and `body`, which outlive `procs`: every coroutine
                // is dropped (unwound first if suspended) before `run` returns.
                unsafe { Coroutine::with_stack_unchecked(stack, f) }
            })
            .collect();
        /// Runs a process until it suspends or returns.
        fn resume(c: &mut Coroutine<(), (), (), DefaultStack>) {
            c.resume(());
            YIELDER.set(std::ptr::null());
        }
        // Every process runs to its arrival; the last to arrive makes the first decision.
        for c in &mut procs {
            resume(c);
        }
        while !self.failed.load(Ordering::SeqCst) {
            let q = self.turn.load(Ordering::SeqCst);
            if q == NONE {
                // Every process has finished, or one never arrived.
                if !self.lock().procs.iter().all(|s| matches!(s, PState::Done)) {
                    self.fail("a process returned without arriving".into());
                }
                break;
            }
            if procs[q].done() {
                self.fail(format!("process {q} returned without finishing"));
                break;
            }
            resume(&mut procs[q]);
        }
        // Cut: each process still waiting unwinds when it resumes.
        for c in &mut procs {
            while !c.done() {
                resume(c);
            }
        }
    }

    /// Runs process `p`'s `body`, on its coroutine or its own thread: a panic other than a
    /// [`Cut`] fails the execution with its message, as `process p: ...` (the panic hook has
    /// printed it); a cut ends the process quietly.
    pub(crate) fn process(&self, p: usize, body: impl FnOnce()) {
        if let Err(payload) = catch_unwind(AssertUnwindSafe(body)) {
            if payload.downcast_ref::<Cut>().is_none() {
                let msg = crate::error::panic_message(&*payload).unwrap_or("a process panicked");
                self.fail(format!("process {p}: {msg}"));
            }
        }
    }

    /// A scheduling point of process `p` before `pending` (None: a local step, no access).
    pub fn step(&self, p: usize, pending: Option<(Arc<Cell>, Access)>) {
        {
            let mut st = self.lock();
            st.procs[p] = PState::Pending(pending);
            self.advance(&mut st);
        }
        self.wait_turn(p);
    }

    /// Process `p` has finished.
    pub fn finish(&self, p: usize) {
        let mut st = self.lock();
        st.procs[p] = PState::Done;
        if self.turn.load(Ordering::SeqCst) == p {
            self.advance(&mut st);
        }
    }

    pub(crate) fn after(&self, p: usize, cell: &Arc<Cell>, a: Access) {
        let mut st = self.lock();
        if st.waiting[p] {
            st.evals[p].push((cell.clone(), cell.version()));
            st.eval_wrote[p] |= a.writes();
        }
    }

    pub(crate) fn begin_wait(&self, p: usize) {
        let mut st = self.lock();
        st.waiting[p] = true;
        st.blocked[p] = false;
        st.prev[p] = None;
    }

    pub(crate) fn begin_eval(&self, p: usize) {
        let mut st = self.lock();
        st.evals[p].clear();
        st.eval_wrote[p] = false;
    }

    pub(crate) fn end_wait(&self, p: usize) {
        let mut st = self.lock();
        st.waiting[p] = false;
        st.prev[p] = None;
        st.evals[p].clear();
    }

    pub(crate) fn park(&self, p: usize) {
        {
            let mut st = self.lock();
            let reads = std::mem::take(&mut st.evals[p]);
            let ids: Vec<usize> = reads.iter().map(|(c, _)| c.id()).collect();
            // A read-only evaluation that read what the previous one read: re-running it with
            // nothing changed reads the same registers again.
            let stable = !st.eval_wrote[p] && st.prev[p].as_ref() == Some(&ids);
            let remote = match self.model {
                Model::Dsm => reads
                    .iter()
                    .filter(|(c, _)| c.home() != Home::Process(p))
                    .count() as u64,
                Model::Cc | Model::CcWb => 0,
            };
            st.prev[p] = Some(ids);
            if !st.blocked[p] {
                st.blocked[p] = true;
                st.blocks[p] += 1;
            }
            st.procs[p] = PState::Parked {
                reads,
                stable,
                remote,
            };
            self.advance(&mut st);
        }
        self.wait_turn(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::{CountingMemory, Home, Memory, Register};
    use std::sync::atomic::AtomicU64;

    /// Runs `body` with one thread per process, each parked while it waits for its turn (the
    /// gate's other way of running), a panic reported as [`Gate::run`] reports it.
    fn on_threads(gate: &Gate, body: impl Fn(usize) + Sync) {
        std::thread::scope(|s| {
            for p in 0..gate.processes() {
                let body = &body;
                s.spawn(move || gate.process(p, || body(p)));
            }
        });
    }

    /// A test-and-test-and-set lock taken twice by each of `n` processes under a random
    /// schedule, on coroutines or on threads: the gate's figures, every process's RMRs, and the
    /// error if any. Process `panics` (if any) panics in its first critical section; each
    /// process's stack that unwinds or ends counts one in `unwound`.
    fn tas_run(
        n: usize,
        max_steps: u64,
        panics: Option<usize>,
        threads: bool,
        unwound: &AtomicU64,
    ) -> (u64, u64, Vec<u64>, Vec<[u64; 4]>, Option<String>) {
        struct Unwound<'a>(&'a AtomicU64);
        impl Drop for Unwound<'_> {
            fn drop(&mut self) {
                self.0.fetch_add(1, Ordering::Relaxed);
            }
        }
        let gate = Gate::new(n, Model::Dsm, Box::new(Random(SplitMix::new(7))), max_steps);
        let mem = CountingMemory::gated(gate.clone());
        let held = mem.register(Home::Process(0), 0);
        let body = |p: usize| {
            let _guard = Unwound(unwound);
            gate.arrive(p);
            for _ in 0..2 {
                mem.wait_until(p, || held.read(p) == 0 && held.swap(p, 1) == 0);
                if panics == Some(p) {
                    panic!("broken lock");
                }
                gate.step(p, None);
                held.write(p, 0);
            }
            gate.finish(p);
        };
        if threads {
            on_threads(&gate, body);
        } else {
            gate.run(body);
        }
        let gs = gate.stats();
        let rmrs = (0..n).map(|p| mem.rmrs_of(p)).collect();
        (gs.steps, gs.virtual_spins, gs.blocks, rmrs, gate.error())
    }

    #[test]
    fn coroutines_and_threads_run_the_same_execution() {
        let unwound = AtomicU64::new(0);
        let on_coroutines = tas_run(4, 100_000, None, false, &unwound);
        assert_eq!(on_coroutines, tas_run(4, 100_000, None, true, &unwound));
        let (steps, spins, blocks, _, error) = on_coroutines;
        assert_eq!(error, None);
        assert!(
            spins > 0 && steps > spins,
            "{steps} steps, {spins} charged spins"
        );
        assert!(blocks.iter().sum::<u64>() > 0, "nobody waited: {blocks:?}");
        assert_eq!(unwound.load(Ordering::Relaxed), 8);
    }

    #[test]
    fn a_process_that_panics_fails_the_run_and_every_stack_unwinds() {
        for threads in [false, true] {
            let unwound = AtomicU64::new(0);
            let (.., error) = tas_run(3, 100_000, Some(1), threads, &unwound);
            assert_eq!(error.as_deref(), Some("process 1: broken lock"));
            assert_eq!(unwound.load(Ordering::Relaxed), 3, "threads: {threads}");
        }
    }

    #[test]
    fn a_cut_stops_every_process() {
        let unwound = AtomicU64::new(0);
        let cut = tas_run(3, 20, None, false, &unwound);
        assert_eq!(cut.4.as_deref(), Some("cut after 20 scheduling steps"));
        assert_eq!(unwound.load(Ordering::Relaxed), 3);
        assert_eq!(cut, tas_run(3, 20, None, true, &unwound));
    }
}
