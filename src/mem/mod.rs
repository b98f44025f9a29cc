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
pub(crate) mod placement;
pub(crate) mod schedule;
pub(crate) mod scheduled;
pub(crate) mod tally;
pub(crate) mod wide;

pub(crate) use counting::Section;
pub use counting::{CountingMemory, Model};
pub use native::{Aborted, NativeMemory, WaitPolicy};
pub use schedule::Script;
pub use scheduled::ScheduledMemory;
pub use wide::WideRegister;

/// Where a register lives. Under the DSM model an access is local only when the accessing
/// process is the register's home; under CC the home does not matter.
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
pub trait Register: Send + Sync {
    /// Atomic read by process `p`.
    fn read(&self, p: usize) -> i64;
    /// Atomic write by process `p`.
    fn write(&self, p: usize, v: i64);
    /// A write that needs only release ordering: everything the writer did before it is
    /// visible to whoever reads the value, but a later read of another register may be ordered
    /// before it. Only for algorithms whose correctness argument says so in a comment (a lock's
    /// hand-off store); the papers' algorithms use [`Register::write`]. Defaults to `write`.
    fn write_release(&self, p: usize, v: i64) {
        self.write(p, v)
    }

    /// Atomic fetch-and-add by process `p` (for baselines such as the ticket lock; the papers'
    /// algorithms use only reads and writes). Returns the previous value.
    fn fetch_add(&self, p: usize, v: i64) -> i64;
    /// Atomic swap by process `p`: writes `v`, returns the previous value (for the reference
    /// queue locks, MCS and CLH, and test-and-set).
    fn swap(&self, p: usize, v: i64) -> i64;
    /// Atomic compare-and-swap by process `p`: if the value is `current`, writes `new` and
    /// returns `Ok(current)`; otherwise returns `Err(value)` and writes nothing.
    fn compare_exchange(&self, p: usize, current: i64, new: i64) -> Result<i64, i64>;
    /// Reads the value without counting, scheduling or ordering guarantees: for observers
    /// (invariant checks, reports), never for the algorithm itself.
    fn peek(&self) -> i64;
}

/// A memory: a factory of registers plus the way a process waits on them.
pub trait Memory: Clone + Send + Sync + 'static {
    /// The register type of this memory.
    type Reg: Register;
    /// The multi-word register type of this memory ([`wide`]).
    type Wide: WideRegister;

    /// Allocates one register with initial value `init`. Native registers are each padded to
    /// their own cache line pair, so registers of different processes never share a line.
    fn register(&self, home: Home, init: i64) -> Self::Reg;

    /// Allocates one multi-word register of `words` words, each `init`, written only by its
    /// home process. One read or write of it is one access (one step, at most one RMR).
    fn wide(&self, home: Home, words: usize, init: i64) -> Self::Wide;

    /// Allocates `len` registers, the `i`-th at `home(i)`.
    fn array(&self, len: usize, home: impl Fn(usize) -> Home, init: i64) -> Box<[Self::Reg]> {
        (0..len).map(|i| self.register(home(i), init)).collect()
    }

    /// Allocates one register per process, register `i` homed at process `i`.
    fn per_process(&self, n: usize, init: i64) -> Box<[Self::Reg]> {
        self.array(n, Home::Process, init)
    }

    /// Busy-waits, as process `p`, until `cond` holds. `cond` re-reads registers on every call.
    /// Native memory spins with a spin-loop hint (and yields under
    /// [`WaitPolicy::SpinThenYield`]); a scheduled memory yields to its scheduler between tries.
    fn wait_until(&self, p: usize, cond: impl FnMut() -> bool);

    /// Marks a step of process `p` that a proof refers to but that writes no register ("after
    /// P_i executes line 5", the value P_i read on line 8): `line` is the figure's line, `args`
    /// what the step saw. The scheduled memory hands it to the verifier, which checks the
    /// lock's lemma invariants ([`crate::locks::Lock::lemma_step`]) at that very step; every
    /// other memory ignores it, and this empty default inlines away, so timing runs pay
    /// nothing.
    #[inline(always)]
    fn mark(&self, p: usize, line: u32, args: [i64; 2]) {
        let _ = (p, line, args);
    }

    /// Names the registers of an array as the figure does (`token` labels `token[0]`,
    /// `token[1]`, …), for the step trace of a counter-example. Called once at construction;
    /// only the scheduled memory keeps the names, and only while recording.
    #[inline(always)]
    fn label(&self, name: &'static str, regs: &[Self::Reg]) {
        let _ = (name, regs);
    }

    /// Names one register as the figure does (`global_color`); see [`Memory::label`].
    #[inline(always)]
    fn label_one(&self, name: &'static str, reg: &Self::Reg) {
        let _ = (name, reg);
    }

    /// Process `p` is now at line `line` of the figure: the step trace of a counter-example
    /// shows it beside p's accesses until p's next tag. Only the scheduled memory keeps it, and
    /// only while recording; this empty default inlines away.
    #[inline(always)]
    fn line(&self, p: usize, line: u32) {
        let _ = (p, line);
    }
}
