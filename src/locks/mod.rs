//! The lock interface: one trait for the three problems, a lock's parameters, its claims and
//! its description (`LockInfo`, the constant each algorithm file starts with). Which locks exist
//! is the registry's business (`src/registry/`).
//!
//! One trait, [`Lock`], covers the three problems: a process enters with a session (the group
//! it asks for); mutual-exclusion and k-exclusion locks ignore the session, a group
//! mutual-exclusion (GME) lock admits together only requests of the same session.
//!
//! Processes are numbered `0..n`. A process id is used by one thread at a time, and `exit(p, s)`
//! follows `enter(p, s)` from the same thread: that is the papers' model, and some adapters
//! (`std-mutex`) rely on it.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use serde::Serialize;

/// The problem a lock solves: mutual exclusion, group mutual exclusion (GME) or k-exclusion.
///
/// # Examples
///
/// ```
/// use lockbench::locks::Problem;
/// assert_eq!(Problem::KExclusion.name(), "k-exclusion");
/// ```
pub use crate::check::Problem;
use crate::mem::{CountingMemory, NativeMemory, WaitPolicy};
pub use facts::{
    no_bound, no_mutants, no_worst_case, Bound, BoundFn, CounterExample, Direction, Mutant,
    SectionCost, Step, WorstCase, WorstCaseFn,
};

pub(crate) mod baseline;
mod facts;
pub(crate) mod paper;
pub(crate) mod reference;
pub(crate) mod sources;

/// A lock for `n` processes.
///
/// # Examples
///
/// ```
/// use lockbench::locks::Lock;
/// use lockbench::mem::{Home, Memory, NativeMemory, Register};
///
/// /// A test-and-set lock, written once over any memory.
/// struct Tas<M: Memory> {
///     mem: M,
///     word: M::Reg,
/// }
///
/// impl<M: Memory> Tas<M> {
///     fn new(mem: M) -> Self {
///         let word = mem.register(Home::Shared, 0);
///         Tas { mem, word }
///     }
/// }
///
/// impl<M: Memory> Lock for Tas<M> {
///     fn enter(&self, p: usize, _session: usize) {
///         while self.word.swap(p, 1) != 0 {
///             self.mem.wait_until(p, || self.word.read(p) == 0);
///         }
///     }
///     fn exit(&self, p: usize, _session: usize) {
///         self.word.write(p, 0);
///     }
/// }
///
/// let lock = Tas::new(NativeMemory::default());
/// std::thread::scope(|s| {
///     for p in 0..2 {
///         let lock = &lock;
///         s.spawn(move || {
///             lock.enter(p, 0);
///             // critical section
///             lock.exit(p, 0);
///         });
///     }
/// });
/// ```
pub trait Lock: Send + Sync {
    /// Process `p` (in `0..n`) enters, asking for `session`; returns once inside.
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
    /// # use lockbench::mem::NativeMemory;
    /// let lock = Tas::new(NativeMemory::default());
    /// lock.enter(0, 0);
    /// assert_eq!(lock.word.peek(), 1);
    /// lock.exit(0, 0);
    /// ```
    fn enter(&self, p: usize, session: usize);

    /// Process `p` leaves the critical section it entered with `session`.
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
    /// # use lockbench::mem::NativeMemory;
    /// let lock = Tas::new(NativeMemory::default());
    /// lock.enter(1, 0);
    /// lock.exit(1, 0);
    /// assert_eq!(lock.word.peek(), 0);
    /// ```
    fn exit(&self, p: usize, session: usize);

    /// As [`Lock::enter`], calling `doorway_done` once, at the end of the doorway (the bounded
    /// prefix of the entry code that fixes the request's place: taking the ticket or the bakery
    /// number). Traces use it to check first-come-first-served (P5).
    ///
    /// Every lock that claims FCFS implements it; algorithms write their entry once as a
    /// generic `fn acquire<F: FnMut()>(&self, p, s, doorway_done: F)` called by both `enter`
    /// (with a no-op, so timing runs pay nothing) and `enter_traced`. The default, for locks
    /// whose doorway cannot be observed, never calls `doorway_done`: traces then measure order
    /// from the request and say so.
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
    /// # use lockbench::mem::NativeMemory;
    /// let lock = Tas::new(NativeMemory::default());
    /// let mut doorways = 0;
    /// lock.enter_traced(0, 0, &mut || doorways += 1);
    /// lock.exit(0, 0);
    /// assert_eq!(doorways, 0); // the default: a doorway that cannot be observed
    /// ```
    fn enter_traced(&self, p: usize, session: usize, doorway_done: &mut dyn FnMut()) {
        let _ = doorway_done;
        self.enter(p, session);
    }

    /// Called once per process when the measured window starts (after the warm-up), from the
    /// thread acting as `p`: a lock that accumulates statistics of its own (a counting memory's
    /// RMRs) forgets the warm-up's. Most locks ignore it.
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
    /// # use lockbench::mem::NativeMemory;
    /// let lock = Tas::new(NativeMemory::default());
    /// lock.measurement_starts(0); // the default does nothing
    /// ```
    fn measurement_starts(&self, p: usize) {
        let _ = p;
    }

    /// Checks the lock's register invariants (the bounds its paper proves) by peeking at its
    /// registers; `Err` says which one broke and with what values. Locks that claim none return
    /// `Ok`.
    ///
    /// `exact` is true when the caller has stopped the world (the scheduled memory runs one
    /// process at a time, so a peek of all registers is a consistent snapshot): relations
    /// between registers may then be checked. When false, the lock is running on real threads
    /// and only single-register bounds may be checked, since peeks are not a snapshot.
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
    /// # use lockbench::mem::NativeMemory;
    /// let lock = Tas::new(NativeMemory::default());
    /// lock.enter(0, 0);
    /// assert_eq!(lock.check_invariants(false), Ok(())); // the default claims none
    /// lock.exit(0, 0);
    /// ```
    fn check_invariants(&self, exact: bool) -> Result<(), String> {
        let _ = exact;
        Ok(())
    }

    /// Checks the lock's lemma invariants at a step its algorithm marked with
    /// [`crate::mem::Memory::mark`] (`line` of its figure, `args` what the step saw), against
    /// ghost state the lock keeps from earlier marks; `Err` names the lemma and how it broke.
    /// Only the scheduled memory delivers marks (one process runs at a time there, so the
    /// ghost state is exact). Default: no lemma checked.
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
    /// # use lockbench::mem::NativeMemory;
    /// let lock = Tas::new(NativeMemory::default());
    /// assert_eq!(lock.lemma_step(0, 3, [0, 0]), Ok(()));
    /// ```
    fn lemma_step(&self, p: usize, line: u32, args: [i64; 2]) -> Result<(), String> {
        let _ = (p, line, args);
        Ok(())
    }

    /// The spread of the tokens currently held (largest minus smallest non-negative token, by
    /// peeking), for bakeries whose papers bound or refute it (seed 002 §3.1, Theorem 1); None
    /// for other locks or when fewer than one token is held.
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
    /// # use lockbench::mem::NativeMemory;
    /// assert_eq!(Tas::new(NativeMemory::default()).token_range(), None);
    /// ```
    fn token_range(&self) -> Option<i64> {
        None
    }

    /// The largest token number held right now (by peeking), for locks whose papers bound
    /// their tokens (`bw-bakery`: ≤ N, `bwb-gme`: ≤ N + 1) or say they are unbounded (`glb`);
    /// `verify` keeps the maximum over every write of every schedule (its report's
    /// `largest_token`). None for the other locks.
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
    /// # use lockbench::mem::NativeMemory;
    /// assert_eq!(Tas::new(NativeMemory::default()).largest_token(), None);
    /// ```
    fn largest_token(&self) -> Option<i64> {
        None
    }

    /// The progress properties the lock claims beyond its safety property, deadlock freedom
    /// and FCFS (which [`LockInfo::fcfs`] declares). `verify` checks each claimed one exactly
    /// under the scheduler; a failure of an unclaimed one is only a witness. Default: none.
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
    /// # use lockbench::mem::NativeMemory;
    /// use lockbench::locks::Claims;
    /// assert_eq!(Tas::new(NativeMemory::default()).claims(), Claims::default());
    /// ```
    fn claims(&self) -> Claims {
        Claims::default()
    }

    /// A failure its paper states in words (a property it does not have), scripted for
    /// `verify --scheduler script`, so the failure shows in one schedule at every level.
    /// Default: none.
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
    /// # use lockbench::mem::NativeMemory;
    /// assert!(Tas::new(NativeMemory::default()).counter_example().is_none());
    /// ```
    fn counter_example(&self) -> Option<CounterExample> {
        None
    }

    /// What its paper says sections of a passage cost in RMRs under the CC model, section by
    /// section (the figure's lines and the bound): `lockbench claims` judges `rmr`'s
    /// per-section counts against them. Default: none.
    ///
    /// ```
    /// # use lockbench::locks::Lock;
    /// struct Never;
    /// impl Lock for Never {
    ///     fn enter(&self, _: usize, _: usize) {}
    ///     fn exit(&self, _: usize, _: usize) {}
    /// }
    /// assert!(Never.section_costs().is_empty());
    /// ```
    fn section_costs(&self) -> &'static [SectionCost] {
        &[]
    }
}

/// Progress properties a lock may claim (seed 000 §1: P3, P4, P7, P8; seed 001: starvation
/// freedom with fewer than k crashes). Safety, deadlock freedom and FCFS are declared
/// elsewhere: safety by the problem, FCFS by [`LockInfo::fcfs`].
///
/// # Examples
///
/// Built from [`Claims::NONE`] or [`Claims::BOUNDED_EXIT`] and the `with_*` methods (the
/// struct is `#[non_exhaustive]`: a property added later does not break a lock's crate).
///
/// ```
/// use lockbench::locks::Claims;
/// let gme = Claims::BOUNDED_EXIT.with_concurrent_entry(true).with_fife(true);
/// assert!(gme.bounded_exit && !gme.strong_concurrent_entry);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Claims {
    /// P3 bounded exit: the exit section never waits.
    pub bounded_exit: bool,
    /// P4 concurrent entry (GME): a process never waits while no conflicting process is
    /// active.
    pub concurrent_entry: bool,
    /// P8 strong concurrent entry (GME): a process past its doorway never waits while it
    /// doorway-precedes every active conflicting process.
    pub strong_concurrent_entry: bool,
    /// P7 FIFE (GME, k-exclusion): once a process doorway-preceded by p with the same session
    /// has entered, p waits no more.
    pub fife: bool,
    /// Starvation freedom while fewer than k processes crash (k-exclusion).
    pub crash_tolerant: bool,
}

impl Claims {
    /// No progress property claimed (as [`Claims::default`], in a constant).
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::locks::Claims;
    /// assert_eq!(Claims::NONE, Claims::default());
    /// ```
    pub const NONE: Claims = Claims {
        bounded_exit: false,
        concurrent_entry: false,
        strong_concurrent_entry: false,
        fife: false,
        crash_tolerant: false,
    };

    /// Bounded exit only: the claim of every mutual-exclusion algorithm here.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::locks::Claims;
    /// assert!(Claims::BOUNDED_EXIT.bounded_exit);
    /// assert!(!Claims::BOUNDED_EXIT.fife);
    /// ```
    pub const BOUNDED_EXIT: Claims = Claims {
        bounded_exit: true,
        concurrent_entry: false,
        strong_concurrent_entry: false,
        fife: false,
        crash_tolerant: false,
    };

    /// These claims, P3 bounded exit claimed or not.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::locks::Claims;
    /// assert_eq!(Claims::NONE.with_bounded_exit(true), Claims::BOUNDED_EXIT);
    /// ```
    pub const fn with_bounded_exit(mut self, claimed: bool) -> Claims {
        self.bounded_exit = claimed;
        self
    }

    /// These claims, P4 concurrent entry claimed or not.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::locks::Claims;
    /// assert!(Claims::NONE.with_concurrent_entry(true).concurrent_entry);
    /// ```
    pub const fn with_concurrent_entry(mut self, claimed: bool) -> Claims {
        self.concurrent_entry = claimed;
        self
    }

    /// These claims, P8 strong concurrent entry claimed or not.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::locks::Claims;
    /// assert!(Claims::NONE.with_strong_concurrent_entry(true).strong_concurrent_entry);
    /// ```
    pub const fn with_strong_concurrent_entry(mut self, claimed: bool) -> Claims {
        self.strong_concurrent_entry = claimed;
        self
    }

    /// These claims, P7 FIFE claimed or not.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::locks::Claims;
    /// assert!(Claims::BOUNDED_EXIT.with_fife(true).fife);
    /// ```
    pub const fn with_fife(mut self, claimed: bool) -> Claims {
        self.fife = claimed;
        self
    }

    /// These claims, starvation freedom with fewer than k crashes claimed or not.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::locks::Claims;
    /// assert!(Claims::BOUNDED_EXIT.with_crash_tolerant(true).crash_tolerant);
    /// ```
    pub const fn with_crash_tolerant(mut self, claimed: bool) -> Claims {
        self.crash_tolerant = claimed;
        self
    }
}

/// What a lock is built for. `#[non_exhaustive]`: made by [`Params::new`].
///
/// # Examples
///
/// ```
/// use lockbench::locks::Params;
/// use lockbench::mem::WaitPolicy;
/// let params = Params::new(4, 2, WaitPolicy::YIELD);
/// assert_eq!((params.n, params.k), (4, 2));
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Params {
    /// Number of processes (ids `0..n`).
    pub n: usize,
    /// Capacity of a k-exclusion lock (ignored by the other problems).
    pub k: usize,
    /// How waiting processes wait (native memory only).
    pub policy: WaitPolicy,
    /// Set by the runner's watchdog to make waiting processes give up (see
    /// [`WaitPolicy::wait_until`](crate::mem::WaitPolicy::wait_until)).
    pub abort: Arc<AtomicBool>,
}

impl Params {
    /// Parameters with a fresh abort flag.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::locks::Params;
    /// use lockbench::mem::WaitPolicy;
    /// let params = Params::new(2, 1, WaitPolicy::Spin);
    /// assert!(!params.abort.load(std::sync::atomic::Ordering::Relaxed));
    /// ```
    pub fn new(n: usize, k: usize, policy: WaitPolicy) -> Self {
        Params {
            n,
            k,
            policy,
            abort: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The native memory these parameters describe.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::locks::Params;
    /// use lockbench::mem::{Home, Memory, Register, WaitPolicy};
    /// let mem = Params::new(2, 1, WaitPolicy::Spin).native();
    /// let r = mem.register(Home::Shared, 7);
    /// assert_eq!(r.read(0), 7);
    /// ```
    pub fn native(&self) -> NativeMemory {
        NativeMemory::with_abort(self.policy, self.abort.clone())
    }
}

/// What the registry says of a lock.
///
/// The struct is `#[non_exhaustive]` (what lockbench knows of a lock may grow without breaking
/// a lock's crate): a lock outside this crate makes its description with
/// [`LockInfo::paper`] or [`LockInfo::baseline`] and the `const` `with_*` builders, in a
/// constant.
///
/// # Examples
///
/// ```
/// use lockbench::locks::{Bound, LockInfo, Problem};
/// use lockbench::mem::Model;
/// fn bound(_model: Model, _n: usize) -> Option<Bound> {
///     Some(Bound::constant(3, "my paper, Lemma 2"))
/// }
/// const TAS: LockInfo = LockInfo::paper(
///     "my-tas",
///     Problem::Mutex,
///     "Rudolph and Segall 1984",
///     "O(1) CC",
///     "swap on one shared word",
/// )
/// .with_bound(bound);
/// assert!((TAS.mutants)().is_empty() && TAS.safe && !TAS.fcfs);
/// assert_eq!((TAS.bound)(Model::Cc, 4).unwrap().value, 3);
/// ```
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct LockInfo {
    /// Name used on the command line.
    pub name: &'static str,
    /// The problem it solves.
    pub problem: Problem,
    /// Paper and figure, or "baseline".
    pub source: &'static str,
    /// Claims first-come-first-served (P5) between conflicting requests.
    pub fcfs: bool,
    /// Claims bounded registers.
    pub bounded: bool,
    /// RMR complexity class claimed by its source (per passage), or "n/a".
    pub rmr: &'static str,
    /// False for negative controls and calibration entries: they are excluded from `all` and
    /// expected to show violations.
    pub safe: bool,
    /// One line of further explanation.
    pub notes: &'static str,
    /// The RMR bound per passage its source claims, per model, at N processes (`rmr` checks
    /// it); [`no_bound`] when it claims none.
    #[serde(skip)]
    pub bound: BoundFn,
    /// Its seeded mutants, each one line of its figure changed where the file implements it
    /// (`verify --mutants` runs them); [`no_mutants`] when it has none.
    #[serde(skip)]
    pub mutants: fn() -> Vec<Mutant>,
    /// The worst-case schedule its paper scripts, where there is one (`rmr --schedule
    /// adversarial` runs it); [`no_worst_case`] otherwise.
    #[serde(skip)]
    pub worst_case: WorstCaseFn,
}

impl LockInfo {
    /// A baseline: a lock people use, with no paper, bounded registers and no RMR claim.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::locks::{LockInfo, Problem};
    /// const MINE: LockInfo = LockInfo::baseline("my-mutex", Problem::Mutex, false, "a wrapped mutex");
    /// assert_eq!((MINE.source, MINE.rmr, MINE.safe), ("baseline", "n/a", true));
    /// ```
    pub const fn baseline(
        name: &'static str,
        problem: Problem,
        fcfs: bool,
        notes: &'static str,
    ) -> LockInfo {
        LockInfo {
            name,
            problem,
            source: "baseline",
            fcfs,
            bounded: true,
            rmr: "n/a",
            safe: true,
            notes,
            bound: no_bound,
            mutants: no_mutants,
            worst_case: no_worst_case,
        }
    }

    /// A lock from a paper: its source (paper and figure), the RMR complexity it claims and a
    /// line of notes; safe, with bounded registers, no FCFS claim, and no bound, mutants or
    /// worst case until the `with_*` builders give them.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::locks::{LockInfo, Problem};
    /// const MINE: LockInfo = LockInfo::paper("my-lock", Problem::Mutex, "my paper, Fig. 1", "O(1) CC", "");
    /// assert_eq!((MINE.source, MINE.fcfs, MINE.bounded), ("my paper, Fig. 1", false, true));
    /// ```
    pub const fn paper(
        name: &'static str,
        problem: Problem,
        source: &'static str,
        rmr: &'static str,
        notes: &'static str,
    ) -> LockInfo {
        LockInfo {
            name,
            problem,
            source,
            fcfs: false,
            bounded: true,
            rmr,
            safe: true,
            notes,
            bound: no_bound,
            mutants: no_mutants,
            worst_case: no_worst_case,
        }
    }

    /// This description, claiming first-come-first-served (P5) or not.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::locks::{LockInfo, Problem};
    /// const FIFO: LockInfo = LockInfo::paper("fifo", Problem::Mutex, "me", "O(1)", "").with_fcfs(true);
    /// assert!(FIFO.fcfs);
    /// ```
    pub const fn with_fcfs(mut self, fcfs: bool) -> LockInfo {
        self.fcfs = fcfs;
        self
    }

    /// This description, claiming bounded registers or not.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::locks::{LockInfo, Problem};
    /// const BAKERY: LockInfo =
    ///     LockInfo::paper("my-bakery", Problem::Mutex, "me", "O(N)", "").with_bounded(false);
    /// assert!(!BAKERY.bounded);
    /// ```
    pub const fn with_bounded(mut self, bounded: bool) -> LockInfo {
        self.bounded = bounded;
        self
    }

    /// This description, safe or not: an unsafe lock (a negative control) is left out of
    /// `all` and expected to show violations.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::locks::{LockInfo, Problem};
    /// const BROKEN: LockInfo = LockInfo::baseline("broken", Problem::Mutex, false, "").with_safe(false);
    /// assert!(!BROKEN.safe);
    /// ```
    pub const fn with_safe(mut self, safe: bool) -> LockInfo {
        self.safe = safe;
        self
    }

    /// This description with the RMR bound per model its source claims (`rmr` checks it).
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::locks::{Bound, LockInfo, Problem};
    /// use lockbench::mem::Model;
    /// fn linear(_: Model, n: usize) -> Option<Bound> {
    ///     Some(Bound::linear(2, 1, n, "me"))
    /// }
    /// const L: LockInfo = LockInfo::paper("l", Problem::Mutex, "me", "O(N)", "").with_bound(linear);
    /// assert_eq!((L.bound)(Model::Dsm, 3).unwrap().value, 7);
    /// ```
    pub const fn with_bound(mut self, bound: BoundFn) -> LockInfo {
        self.bound = bound;
        self
    }

    /// This description with its seeded mutants (`verify --mutants` runs them).
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::locks::{Lock, LockInfo, Mutant, Params, Problem};
    /// use lockbench::mem::ScheduledMemory;
    /// struct Open;
    /// impl Lock for Open {
    ///     fn enter(&self, _: usize, _: usize) {}
    ///     fn exit(&self, _: usize, _: usize) {}
    /// }
    /// fn mutants() -> Vec<Mutant> {
    ///     vec![Mutant::new("open", "2", "the wait dropped", |_: ScheduledMemory, _: &Params| Open)]
    /// }
    /// const M: LockInfo = LockInfo::paper("m", Problem::Mutex, "me", "O(1)", "").with_mutants(mutants);
    /// assert_eq!((M.mutants)()[0].name, "open");
    /// ```
    pub const fn with_mutants(mut self, mutants: fn() -> Vec<Mutant>) -> LockInfo {
        self.mutants = mutants;
        self
    }

    /// This description with the worst-case schedule its paper scripts (`rmr --schedule
    /// adversarial` runs it).
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::locks::{LockInfo, Problem, WorstCase};
    /// use lockbench::mem::Script;
    /// fn worst(_n: usize, _passages: usize) -> Option<WorstCase> {
    ///     Some(WorstCase::new(Script::new(std::iter::empty()), "nothing at all", "script"))
    /// }
    /// const W: LockInfo = LockInfo::paper("w", Problem::Mutex, "me", "O(1)", "").with_worst_case(worst);
    /// assert!((W.worst_case)(2, 1).is_some());
    /// ```
    pub const fn with_worst_case(mut self, worst_case: WorstCaseFn) -> LockInfo {
        self.worst_case = worst_case;
        self
    }
}

/// Builds a lock from its parameters. A shared closure rather than a function pointer, so an
/// entry made at run time (a plug-in loaded from a file) can carry what it loaded.
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
/// use std::sync::Arc;
/// use lockbench::locks::{Builder, Params};
/// use lockbench::mem::WaitPolicy;
/// let build: Builder = Arc::new(|p: &Params| Box::new(Tas::new(p.native())));
/// let lock = build(&Params::new(2, 1, WaitPolicy::Spin));
/// lock.enter(0, 0);
/// lock.exit(0, 0);
/// ```
pub type Builder = Arc<dyn Fn(&Params) -> Box<dyn Lock> + Send + Sync>;

/// Builds a lock on a given counting memory (RMRs under a model).
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
/// use std::sync::Arc;
/// use lockbench::locks::{CountingBuilder, Params};
/// use lockbench::mem::{CountingMemory, Model, WaitPolicy};
/// let build: CountingBuilder = Arc::new(|_: &Params, mem| Box::new(Tas::new(mem)));
/// let mem = CountingMemory::new(Model::Cc, 1, WaitPolicy::Spin, None);
/// let lock = build(&Params::new(1, 1, WaitPolicy::Spin), mem.clone());
/// lock.enter(0, 0);
/// lock.exit(0, 0);
/// assert_eq!(mem.registers(), 1);
/// ```
pub type CountingBuilder = Arc<dyn Fn(&Params, CountingMemory) -> Box<dyn Lock> + Send + Sync>;
