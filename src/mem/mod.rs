//! The register abstraction: every shared-memory algorithm is written once over [`Memory`] and
//! runs unchanged on native memory (for timing), on a counting memory (RMRs under the papers'
//! CC and DSM models) and on a scheduled memory (interleavings explored by a scheduler).
//!
//! Each access names the process that makes it (`reg.read(p)`, `reg.write(p, v)`), so a counting
//! memory attributes every access exactly without thread-locals.
//!
//! Registers hold `i64`: the papers' registers hold small integers, booleans, colours and tokens
//! that may be −1 (the bounded bakery's "not interested").

pub(crate) mod cell;
pub(crate) mod counting;
pub(crate) mod gate;
pub(crate) mod native;
pub(crate) mod paged;
pub(crate) mod placement;
pub(crate) mod schedule;
pub(crate) mod scheduled;
pub(crate) mod tally;
pub(crate) mod wide;

pub(crate) use counting::Section;
pub use counting::{CountingMemory, Model};
pub use native::{Aborted, NativeMemory, WaitPolicy};
pub use schedule::{Expand, Goal, Script};
pub use scheduled::ScheduledMemory;
pub use wide::WideRegister;

/// Where a register lives. Under the DSM model an access is local only when the accessing
/// process is the register's home; under CC the home does not matter.
///
/// # Examples
///
/// ```
/// use lockbench::mem::{CountingMemory, Home, Memory, Model, Register, WaitPolicy};
/// let mem = CountingMemory::new(Model::Dsm, 2, WaitPolicy::Spin, None);
/// let mine = mem.register(Home::Process(0), 0);
/// let shared = mem.register(Home::Shared, 0);
/// mine.read(0); // local under DSM: process 0 is its home
/// shared.read(0); // remote
/// assert_eq!(mem.summary().rmrs, 1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Home {
    /// The register belongs to process `p` (it is in `p`'s memory module).
    Process(usize),
    /// A register shared by everyone (remote to all under DSM).
    Shared,
}

/// One atomic, sequentially consistent read/write register.
///
/// `p` is the id (0..n) of the process making the access.
///
/// # Examples
///
/// ```
/// use lockbench::mem::{Home, Memory, NativeMemory, Register};
/// let mem = NativeMemory::default();
/// let r = mem.register(Home::Shared, 0);
/// r.write(0, 5);
/// assert_eq!(r.fetch_add(1, 1), 5);
/// assert_eq!(r.read(0), 6);
/// ```
pub trait Register: Send + Sync {
    /// Atomic read by process `p`.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::{Home, Memory, NativeMemory, Register};
    /// let mem = NativeMemory::default();
    /// let r = mem.register(Home::Process(1), 3);
    /// assert_eq!(r.read(1), 3);
    /// ```
    fn read(&self, p: usize) -> i64;
    /// Atomic write by process `p`.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::{Home, Memory, NativeMemory, Register};
    /// let mem = NativeMemory::default();
    /// let r = mem.register(Home::Process(1), 0);
    /// r.write(1, -1);
    /// assert_eq!(r.read(0), -1);
    /// ```
    fn write(&self, p: usize, v: i64);
    /// A write that needs only release ordering: everything the writer did before it is
    /// visible to whoever reads the value, but a later read of another register may be ordered
    /// before it. Only for algorithms whose correctness argument says so in a comment (a lock's
    /// hand-off store); the papers' algorithms use [`Register::write`]. Defaults to `write`.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::{Home, Memory, NativeMemory, Register};
    /// let mem = NativeMemory::default();
    /// let r = mem.register(Home::Shared, 1);
    /// r.write_release(0, 0); // a hand-off store
    /// assert_eq!(r.read(1), 0);
    /// ```
    fn write_release(&self, p: usize, v: i64) {
        self.write(p, v)
    }

    /// Atomic fetch-and-add by process `p` (for baselines such as the ticket lock; the papers'
    /// algorithms use only reads and writes). Returns the previous value.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::{Home, Memory, NativeMemory, Register};
    /// let mem = NativeMemory::default();
    /// let next_ticket = mem.register(Home::Shared, 0);
    /// assert_eq!(next_ticket.fetch_add(0, 1), 0);
    /// assert_eq!(next_ticket.fetch_add(1, 1), 1);
    /// ```
    fn fetch_add(&self, p: usize, v: i64) -> i64;
    /// Atomic swap by process `p`: writes `v`, returns the previous value (for the reference
    /// queue locks, MCS and CLH, and test-and-set).
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::{Home, Memory, NativeMemory, Register};
    /// let mem = NativeMemory::default();
    /// let word = mem.register(Home::Shared, 0);
    /// assert_eq!(word.swap(0, 1), 0); // process 0 takes it
    /// assert_eq!(word.swap(1, 1), 1); // process 1 finds it taken
    /// ```
    fn swap(&self, p: usize, v: i64) -> i64;
    /// Atomic compare-and-swap by process `p`: if the value is `current`, writes `new` and
    /// returns `Ok(current)`; otherwise returns `Err(value)` and writes nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::{Home, Memory, NativeMemory, Register};
    /// let mem = NativeMemory::default();
    /// let tail = mem.register(Home::Shared, -1);
    /// assert_eq!(tail.compare_exchange(0, -1, 0), Ok(-1));
    /// assert_eq!(tail.compare_exchange(1, -1, 1), Err(0));
    /// ```
    fn compare_exchange(&self, p: usize, current: i64, new: i64) -> Result<i64, i64>;
    /// Reads the value without counting, scheduling or ordering guarantees: for observers
    /// (invariant checks, reports), never for the algorithm itself.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::{CountingMemory, Home, Memory, Model, Register, WaitPolicy};
    /// let mem = CountingMemory::new(Model::Cc, 1, WaitPolicy::Spin, None);
    /// let r = mem.register(Home::Shared, 4);
    /// assert_eq!(r.peek(), 4);
    /// assert_eq!(mem.summary().accesses, 0); // a peek is not counted
    /// ```
    fn peek(&self) -> i64;
}

/// A memory: a factory of registers plus the way a process waits on them.
///
/// # Examples
///
/// ```
/// # use lockbench::locks::Lock;
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
/// use lockbench::mem::{CountingMemory, Home, Memory, Model, NativeMemory, Register, WaitPolicy};
/// // The same lock on native memory, for timing ...
/// let timed = Tas::new(NativeMemory::default());
/// timed.enter(0, 0);
/// timed.exit(0, 0);
/// // ... and on a counting memory, for its RMRs.
/// let mem = CountingMemory::new(Model::Cc, 1, WaitPolicy::Spin, None);
/// let counted = Tas::new(mem.clone());
/// counted.enter(0, 0);
/// counted.exit(0, 0);
/// assert_eq!(mem.summary().accesses, 2); // one swap, one write
/// ```
pub trait Memory: Clone + Send + Sync + 'static {
    /// The register type of this memory.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::{Home, Memory, NativeMemory, Register};
    /// fn flag<M: Memory>(mem: &M) -> M::Reg {
    ///     mem.register(Home::Shared, 0)
    /// }
    /// assert_eq!(flag(&NativeMemory::default()).read(0), 0);
    /// ```
    type Reg: Register;
    /// The multi-word register type of this memory (one atomic register of several `i64` words).
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::{Home, Memory, NativeMemory, WideRegister};
    /// fn label<M: Memory>(mem: &M, n: usize) -> M::Wide {
    ///     mem.wide(Home::Process(0), n, -1)
    /// }
    /// assert_eq!(label(&NativeMemory::default(), 4).words(), 4);
    /// ```
    type Wide: WideRegister;

    /// Allocates one register with initial value `init`. Native registers are each padded to
    /// their own cache line pair, so registers of different processes never share a line.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::{Home, Memory, NativeMemory, Register};
    /// let mem = NativeMemory::default();
    /// let flag = mem.register(Home::Process(0), 0);
    /// assert_eq!(flag.read(0), 0);
    /// ```
    fn register(&self, home: Home, init: i64) -> Self::Reg;

    /// Allocates one multi-word register of `words` words, each `init`, written only by its
    /// home process. One read or write of it is one access (one step, at most one RMR).
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::{Home, Memory, NativeMemory, WideRegister};
    /// let label = NativeMemory::default().wide(Home::Process(0), 3, 0);
    /// label.write(0, &[1, 2, 3]);
    /// let mut out = [0; 3];
    /// label.read(1, &mut out);
    /// assert_eq!(out, [1, 2, 3]);
    /// ```
    fn wide(&self, home: Home, words: usize, init: i64) -> Self::Wide;

    /// Allocates `len` registers, the `i`-th at `home(i)`.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::{Home, Memory, NativeMemory, Register};
    /// let mem = NativeMemory::default();
    /// let slots = mem.array(4, |_| Home::Shared, 0);
    /// assert_eq!(slots.len(), 4);
    /// ```
    fn array(&self, len: usize, home: impl Fn(usize) -> Home, init: i64) -> Box<[Self::Reg]> {
        (0..len).map(|i| self.register(home(i), init)).collect()
    }

    /// Allocates one register per process, register `i` homed at process `i`.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::{Home, Memory, NativeMemory, Register};
    /// let mem = NativeMemory::default();
    /// let choosing = mem.per_process(3, 0);
    /// choosing[2].write(2, 1);
    /// assert_eq!(choosing[2].read(0), 1);
    /// ```
    fn per_process(&self, n: usize, init: i64) -> Box<[Self::Reg]> {
        self.array(n, Home::Process, init)
    }

    /// Busy-waits, as process `p`, until `cond` holds. `cond` re-reads registers on every call.
    /// Native memory spins with a spin-loop hint (and yields under
    /// [`WaitPolicy::SpinThenYield`]); a scheduled memory yields to its scheduler between tries.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::{Home, Memory, NativeMemory, Register};
    /// let mem = NativeMemory::default();
    /// let go = mem.register(Home::Process(1), 0);
    /// std::thread::scope(|s| {
    ///     s.spawn(|| go.write(0, 1));
    ///     mem.wait_until(1, || go.read(1) == 1);
    /// });
    /// ```
    fn wait_until(&self, p: usize, cond: impl FnMut() -> bool);

    /// Marks a step of process `p` that a proof refers to but that writes no register ("after
    /// P_i executes line 5", the value P_i read on line 8): `line` is the figure's line, `args`
    /// what the step saw. The scheduled memory hands it to the verifier, which checks the
    /// lock's lemma invariants ([`crate::locks::Lock::lemma_step`]) at that very step; every
    /// other memory ignores it, and this empty default inlines away, so timing runs pay
    /// nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::{Home, Memory, NativeMemory, Register};
    /// let mem = NativeMemory::default();
    /// let number = mem.register(Home::Process(0), 0);
    /// let seen = number.read(0);
    /// mem.mark(0, 8, [seen, 0]); // "the value P_0 read on line 8"; ignored off the scheduler
    /// ```
    #[inline(always)]
    fn mark(&self, p: usize, line: u32, args: [i64; 2]) {
        let _ = (p, line, args);
    }

    /// Names the registers of an array as the figure does (`token` labels `token[0]`,
    /// `token[1]`, …), for the step trace of a counter-example. Called once at construction;
    /// only the scheduled memory keeps the names, and only while recording.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::{Home, Memory, NativeMemory, Register};
    /// let mem = NativeMemory::default();
    /// let token = mem.per_process(3, 0);
    /// mem.label("token", &token); // traces then show token[0], token[1], token[2]
    /// ```
    #[inline(always)]
    fn label(&self, name: &'static str, regs: &[Self::Reg]) {
        let _ = (name, regs);
    }

    /// Names one register as the figure does (`global_color`); see [`Memory::label`].
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::{Home, Memory, NativeMemory, Register};
    /// let mem = NativeMemory::default();
    /// let global_color = mem.register(Home::Shared, 0);
    /// mem.label_one("global_color", &global_color);
    /// ```
    #[inline(always)]
    fn label_one(&self, name: &'static str, reg: &Self::Reg) {
        let _ = (name, reg);
    }

    /// Process `p` is now at line `line` of the figure: the step trace of a counter-example
    /// shows it beside p's accesses until p's next tag. Only the scheduled memory keeps it, and
    /// only while recording; this empty default inlines away.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::{Home, Memory, NativeMemory, Register};
    /// let mem = NativeMemory::default();
    /// let flag = mem.register(Home::Process(0), 0);
    /// mem.line(0, 2); // process 0 is at line 2 of the figure
    /// flag.write(0, 1);
    /// ```
    #[inline(always)]
    fn line(&self, p: usize, line: u32) {
        let _ = (p, line);
    }
}
