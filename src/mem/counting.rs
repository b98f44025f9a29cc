//! Counting memory: the same algorithm code, charged Remote Memory References (RMRs) per process,
//! per passage and per section, as the papers' models define them.
//!
//! - [`Model::Cc`], the cache-coherent model of seed 000 §1.1 and seed 001 §2 (write-through): a
//!   read is remote unless the reader holds a valid cached copy (it read or wrote the register and
//!   nobody else wrote it since); every write is remote and invalidates every other copy; a
//!   read-modify-write (fetch-and-add, swap, compare-and-swap, successful or not) is one remote
//!   access and leaves the accessor holding the only copy.
//! - [`Model::CcWb`], write-back (MESI-like): as `Cc`, except that a write or read-modify-write is
//!   local when the writer already holds the only valid copy (Exclusive/Modified).
//! - [`Model::Dsm`], distributed shared memory (seed 000 §1.1, seed 001 §2): a register lives in its
//!   [`Home`]; an access is remote unless the accessing process is the home. `Home::Shared` is
//!   remote to everyone.
//!
//! Every access takes the register's own small lock, so the value and the cache state change
//! together and counts are exact even on real threads. Waiting follows the [`WaitPolicy`] on real
//! threads; with a [`Gate`] every access is a scheduling point of a deterministic schedule
//! (`lockbench rmr`).
//!
//! Sections: the harness tells the memory where each process is — [`CountingMemory::begin_passage`]
//! (doorway), [`CountingMemory::set_section`] at the doorway's end (the lock's traced-entry hook),
//! on entry and before the exit, and [`CountingMemory::end_passage`] after it. Locks need not know.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use crossbeam_utils::CachePadded;
use serde::Serialize;

use super::cell::Cell;
use super::gate::Gate;
use super::tally::ProcStats;
use super::{Home, Memory, Register, WaitPolicy, WideRegister};

pub use super::cell::{Access, Model};
pub use super::tally::Section;

/// Most processes a counting memory tracks (cache state is a 64-bit mask per register).
///
/// # Examples
///
/// ```
/// use lockbench::mem::{CountingMemory, Model, WaitPolicy};
/// let mem = CountingMemory::new(Model::Dsm, 64, WaitPolicy::Spin, None); // the most it takes
/// assert_eq!(mem.model(), Model::Dsm);
/// ```
pub const MAX_PROCESSES: usize = 64;

pub(crate) struct Shared {
    pub(crate) model: Model,
    pub(crate) procs: Arc<[CachePadded<ProcStats>]>,
    next_id: AtomicUsize,
    pub(crate) gate: Option<Arc<Gate>>,
    policy: WaitPolicy,
    abort: Option<Arc<AtomicBool>>,
}

/// A memory that counts RMRs under a [`Model`].
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
/// use lockbench::mem::{CountingMemory, Model, WaitPolicy};
/// let mem = CountingMemory::new(Model::Cc, 1, WaitPolicy::Spin, None);
/// let lock = Tas::new(mem.clone());
/// mem.begin_passage(0);
/// lock.enter(0, 0);
/// lock.exit(0, 0);
/// assert_eq!(mem.end_passage(0), 2); // the swap and the releasing write
/// ```
#[derive(Clone)]
pub struct CountingMemory {
    sh: Arc<Shared>,
}

impl std::fmt::Debug for CountingMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CountingMemory({})", self.sh.model)
    }
}

/// What a counting memory measured, over every process's completed passages.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct RmrSummary {
    /// The model (`cc`, `cc-wb`, `dsm`).
    pub model: String,
    /// Completed passages counted.
    pub passages: u64,
    /// Mean RMRs per passage.
    pub per_passage_mean: f64,
    /// Largest RMRs of one passage.
    pub per_passage_max: u64,
    /// Mean RMRs per passage in each section: doorway, waiting, cs, exit.
    pub by_section: serde_json::Map<String, serde_json::Value>,
    /// Largest RMRs of one passage in each section.
    pub by_section_max: serde_json::Map<String, serde_json::Value>,
    /// Register accesses counted (all, local and remote).
    pub accesses: u64,
    /// RMRs counted (including passages not completed).
    pub rmrs: u64,
}

impl CountingMemory {
    /// A counting memory for `n` processes on real threads, waiting by `policy` and giving up
    /// when `abort` is set. `n` is at most 64 (cache state is a 64-bit mask
    /// per register).
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::{CountingMemory, Model, WaitPolicy};
    /// let mem = CountingMemory::new(Model::CcWb, 4, WaitPolicy::YIELD, None);
    /// assert_eq!(mem.registers(), 0);
    /// ```
    pub fn new(model: Model, n: usize, policy: WaitPolicy, abort: Option<Arc<AtomicBool>>) -> Self {
        Self::build(model, n, None, policy, abort)
    }

    /// A counting memory whose every access is a scheduling point of `gate`.
    pub(crate) fn gated(gate: Arc<Gate>) -> Self {
        let (n, model) = (gate.processes(), gate.model());
        let mem = Self::build(model, n, Some(gate.clone()), WaitPolicy::Spin, None);
        gate.attach(mem.sh.procs.clone());
        mem
    }

    fn build(
        model: Model,
        n: usize,
        gate: Option<Arc<Gate>>,
        policy: WaitPolicy,
        abort: Option<Arc<AtomicBool>>,
    ) -> Self {
        assert!(
            n <= MAX_PROCESSES,
            "counting memory tracks at most {MAX_PROCESSES} processes"
        );
        CountingMemory {
            sh: Arc::new(Shared {
                model,
                procs: (0..n)
                    .map(|_| CachePadded::new(ProcStats::default()))
                    .collect(),
                next_id: AtomicUsize::new(0),
                gate,
                policy,
                abort,
            }),
        }
    }

    /// Registers allocated so far (the shared space of the lock built on this memory).
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
    /// use lockbench::mem::{CountingMemory, Model, WaitPolicy};
    /// let mem = CountingMemory::new(Model::Cc, 1, WaitPolicy::Spin, None);
    /// let _lock = Tas::new(mem.clone());
    /// assert_eq!(mem.registers(), 1); // a test-and-set lock needs one word
    /// ```
    pub fn registers(&self) -> usize {
        self.sh.next_id.load(Ordering::Relaxed)
    }

    /// The model.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::{CountingMemory, Model, WaitPolicy};
    /// let mem = CountingMemory::new(Model::Cc, 1, WaitPolicy::Spin, None);
    /// assert_eq!(mem.model().name(), "cc");
    /// ```
    pub fn model(&self) -> Model {
        self.sh.model
    }

    /// Process `p` starts a passage (its doorway).
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
    /// use lockbench::mem::{CountingMemory, Model, WaitPolicy};
    /// let mem = CountingMemory::new(Model::Cc, 1, WaitPolicy::Spin, None);
    /// let lock = Tas::new(mem.clone());
    /// mem.begin_passage(0);
    /// lock.enter(0, 0);
    /// lock.exit(0, 0);
    /// mem.end_passage(0);
    /// assert_eq!(mem.summary().passages, 1);
    /// ```
    pub fn begin_passage(&self, p: usize) {
        self.sh.procs[p].begin_passage();
    }

    /// Process `p` enters section `sec` of its passage.
    pub(crate) fn set_section(&self, p: usize, sec: Section) {
        self.sh.procs[p].set_section(sec);
    }

    /// Forgets process `p`'s completed passages (the warm-up is over); cumulative counts stay.
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
    /// use lockbench::mem::{CountingMemory, Model, WaitPolicy};
    /// let mem = CountingMemory::new(Model::Cc, 1, WaitPolicy::Spin, None);
    /// let lock = Tas::new(mem.clone());
    /// mem.begin_passage(0);
    /// lock.enter(0, 0);
    /// lock.exit(0, 0);
    /// mem.end_passage(0); // a warm-up passage
    /// mem.reset_passages(0);
    /// assert_eq!(mem.summary().passages, 0);
    /// assert_eq!(mem.summary().rmrs, 2); // cumulative counts stay
    /// ```
    pub fn reset_passages(&self, p: usize) {
        self.sh.procs[p].reset_passages();
    }

    /// The lock did not report its doorway's end: the entry so far counts as waiting (the
    /// doorway is unobserved, as for locks that claim no FCFS).
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
    /// use lockbench::mem::{CountingMemory, Model, WaitPolicy};
    /// let mem = CountingMemory::new(Model::Cc, 1, WaitPolicy::Spin, None);
    /// let lock = Tas::new(mem.clone());
    /// mem.begin_passage(0);
    /// lock.enter(0, 0);
    /// mem.doorway_unobserved(0);
    /// assert_eq!(mem.rmrs_of(0), [0, 1, 0, 0]); // the swap counts as waiting, not doorway
    /// lock.exit(0, 0);
    /// ```
    pub fn doorway_unobserved(&self, p: usize) {
        self.sh.procs[p].doorway_unobserved();
    }

    /// Process `p` completed its passage; returns the passage's RMRs.
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
    /// use lockbench::mem::{CountingMemory, Model, WaitPolicy};
    /// let mem = CountingMemory::new(Model::Cc, 1, WaitPolicy::Spin, None);
    /// let lock = Tas::new(mem.clone());
    /// mem.begin_passage(0);
    /// lock.enter(0, 0);
    /// lock.exit(0, 0);
    /// assert_eq!(mem.end_passage(0), 2);
    /// ```
    pub fn end_passage(&self, p: usize) -> u64 {
        self.sh.procs[p].end_passage()
    }

    /// RMRs process `p` made so far, per section (cumulative).
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
    /// use lockbench::mem::{CountingMemory, Model, WaitPolicy};
    /// let mem = CountingMemory::new(Model::Cc, 1, WaitPolicy::Spin, None);
    /// let lock = Tas::new(mem.clone());
    /// lock.enter(0, 0);
    /// lock.exit(0, 0);
    /// assert_eq!(mem.rmrs_of(0).iter().sum::<u64>(), 2); // doorway, waiting, cs, exit
    /// ```
    pub fn rmrs_of(&self, p: usize) -> [u64; 4] {
        self.sh.procs[p].rmrs()
    }

    /// The summary over `procs` (None: all processes).
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::{CountingMemory, Home, Memory, Model, Register, WaitPolicy};
    /// let mem = CountingMemory::new(Model::Dsm, 2, WaitPolicy::Spin, None);
    /// let r = mem.register(Home::Process(0), 0);
    /// r.read(0); // local
    /// r.read(1); // remote
    /// assert_eq!(mem.summary_of(Some(&[0])).rmrs, 0);
    /// assert_eq!(mem.summary_of(Some(&[1])).rmrs, 1);
    /// ```
    pub fn summary_of(&self, procs: Option<&[usize]>) -> RmrSummary {
        let all: Vec<usize> = (0..self.sh.procs.len()).collect();
        let ids = procs.unwrap_or(&all);
        let mut sum = [0u64; 4];
        let mut max_sec = [0u64; 4];
        let (mut passages, mut max, mut accesses, mut rmrs) = (0u64, 0u64, 0u64, 0u64);
        for &p in ids {
            let s = &self.sh.procs[p];
            passages += s.passages.load(Ordering::Relaxed);
            max = max.max(s.max.load(Ordering::Relaxed));
            accesses += s.accesses.load(Ordering::Relaxed);
            for i in 0..4 {
                sum[i] += s.sum[i].load(Ordering::Relaxed);
                max_sec[i] = max_sec[i].max(s.max_section[i].load(Ordering::Relaxed));
                rmrs += s.rmr[i].load(Ordering::Relaxed);
            }
        }
        let mean = |x: u64| {
            if passages == 0 {
                0.0
            } else {
                x as f64 / passages as f64
            }
        };
        let mut by_section = serde_json::Map::new();
        let mut by_section_max = serde_json::Map::new();
        for sec in Section::ALL {
            let i = sec as usize;
            by_section.insert(sec.name().into(), serde_json::json!(mean(sum[i])));
            by_section_max.insert(sec.name().into(), serde_json::json!(max_sec[i]));
        }
        RmrSummary {
            model: self.sh.model.name().into(),
            passages,
            per_passage_mean: mean(sum.iter().sum()),
            per_passage_max: max,
            by_section,
            by_section_max,
            accesses,
            rmrs,
        }
    }

    /// The summary over every process.
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
    /// use lockbench::mem::{CountingMemory, Model, WaitPolicy};
    /// let mem = CountingMemory::new(Model::Cc, 1, WaitPolicy::Spin, None);
    /// let lock = Tas::new(mem.clone());
    /// for _ in 0..3 {
    ///     mem.begin_passage(0);
    ///     lock.enter(0, 0);
    ///     lock.exit(0, 0);
    ///     mem.end_passage(0);
    /// }
    /// let s = mem.summary();
    /// assert_eq!((s.model.as_str(), s.passages, s.per_passage_max), ("cc", 3, 2));
    /// ```
    pub fn summary(&self) -> RmrSummary {
        self.summary_of(None)
    }
}

/// What counting costs per access on this machine, in ns: one process alternating reads and
/// writes of one register, counted under `model` against native memory (best of five rounds).
pub fn counting_overhead_ns(model: Model) -> f64 {
    use super::NativeMemory;
    const ITERS: i64 = 100_000;
    fn time<M: Memory>(mem: &M) -> f64 {
        let r = mem.register(Home::Process(0), 0);
        let mut best = f64::MAX;
        for _ in 0..5 {
            let t = std::time::Instant::now();
            for i in 0..ITERS {
                std::hint::black_box(r.read(0));
                r.write(0, i);
            }
            best = best.min(t.elapsed().as_nanos() as f64 / (2 * ITERS) as f64);
        }
        best
    }
    let native = time(&NativeMemory::default());
    let counted = time(&CountingMemory::new(model, 1, WaitPolicy::Spin, None));
    (counted - native).max(0.0)
}

/// A counted register.
#[derive(Clone)]
pub struct CountingRegister {
    cell: Arc<Cell>,
    sh: Arc<Shared>,
}

impl std::fmt::Debug for CountingRegister {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CountingRegister({:?})", self.cell)
    }
}

impl CountingRegister {
    #[inline]
    fn access(&self, p: usize, a: Access, op: impl FnOnce(&mut i64) -> i64) -> i64 {
        if let Some(g) = &self.sh.gate {
            g.step(p, Some((self.cell.clone(), a)));
        }
        let (v, r) = self.cell.access(self.sh.model, p, a, op);
        self.sh.procs[p].charge(u64::from(r), 1);
        if let Some(g) = &self.sh.gate {
            g.after(p, &self.cell, a);
        }
        v
    }
}

impl Register for CountingRegister {
    fn read(&self, p: usize) -> i64 {
        self.access(p, Access::Read, |v| *v)
    }

    fn write(&self, p: usize, v: i64) {
        self.access(p, Access::Write, |x| {
            *x = v;
            v
        });
    }

    fn fetch_add(&self, p: usize, v: i64) -> i64 {
        self.access(p, Access::Rmw, |x| {
            let old = *x;
            *x += v;
            old
        })
    }

    fn swap(&self, p: usize, v: i64) -> i64 {
        self.access(p, Access::Rmw, |x| std::mem::replace(x, v))
    }

    fn compare_exchange(&self, p: usize, current: i64, new: i64) -> Result<i64, i64> {
        let mut ok = false;
        let old = self.access(p, Access::Rmw, |x| {
            let old = *x;
            if old == current {
                *x = new;
                ok = true;
            }
            old
        });
        if ok {
            Ok(old)
        } else {
            Err(old)
        }
    }

    fn peek(&self) -> i64 {
        self.cell.peek()
    }
}

/// A counted multi-word register: a counted register (its cell carries the charge, the cache
/// state and the write count) and the words, copied inside the cell's lock, so one wide access
/// is one charged access, atomic on real threads.
#[derive(Clone, Debug)]
pub struct CountingWide {
    reg: CountingRegister,
    words: Arc<parking_lot::Mutex<Vec<i64>>>,
}

impl WideRegister for CountingWide {
    fn words(&self) -> usize {
        self.words.lock().len()
    }

    fn read(&self, p: usize, out: &mut [i64]) {
        self.reg.access(p, Access::Read, |v| {
            out.copy_from_slice(&self.words.lock());
            *v
        });
    }

    fn write(&self, p: usize, new: &[i64]) {
        self.reg.access(p, Access::Write, |v| {
            self.words.lock().copy_from_slice(new);
            *v += 1;
            *v
        });
    }

    fn peek(&self, out: &mut [i64]) {
        out.copy_from_slice(&self.words.lock());
    }
}

impl Memory for CountingMemory {
    type Reg = CountingRegister;
    type Wide = CountingWide;

    fn wide(&self, home: Home, words: usize, init: i64) -> CountingWide {
        CountingWide {
            reg: self.register(home, 0),
            words: Arc::new(parking_lot::Mutex::new(vec![init; words])),
        }
    }

    fn register(&self, home: Home, init: i64) -> CountingRegister {
        let id = self.sh.next_id.fetch_add(1, Ordering::Relaxed);
        CountingRegister {
            cell: Arc::new(Cell::new(id, home, init)),
            sh: self.sh.clone(),
        }
    }

    fn wait_until(&self, p: usize, mut cond: impl FnMut() -> bool) {
        match &self.sh.gate {
            None => self.sh.policy.wait_until(self.sh.abort.as_deref(), cond),
            Some(g) => {
                g.begin_wait(p);
                loop {
                    g.begin_eval(p);
                    if cond() {
                        g.end_wait(p);
                        return;
                    }
                    g.park(p);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mem(model: Model, n: usize) -> CountingMemory {
        CountingMemory::new(model, n, WaitPolicy::YIELD, None)
    }

    fn total(m: &CountingMemory, p: usize) -> u64 {
        m.rmrs_of(p).iter().sum()
    }

    #[test]
    fn cc_reads_are_remote_until_cached_and_after_invalidation() {
        let m = mem(Model::Cc, 2);
        let r = m.register(Home::Shared, 0);
        r.read(0);
        assert_eq!(total(&m, 0), 1, "first read misses");
        r.read(0);
        r.read(0);
        assert_eq!(total(&m, 0), 1, "cached re-reads are local");
        r.write(1, 5);
        assert_eq!(total(&m, 1), 1, "every write is remote");
        assert_eq!(r.read(0), 5);
        assert_eq!(total(&m, 0), 2, "the write invalidated p0's copy");
        r.read(1);
        assert_eq!(total(&m, 1), 1, "the writer keeps a valid copy");
        r.write(1, 6);
        r.write(1, 7);
        assert_eq!(total(&m, 1), 3, "write-through: every write is remote");
    }

    #[test]
    fn cc_wb_writes_to_an_exclusive_line_are_local() {
        let m = mem(Model::CcWb, 2);
        let r = m.register(Home::Shared, 0);
        r.write(0, 1);
        assert_eq!(total(&m, 0), 1, "the first write fetches the line");
        r.write(0, 2);
        r.fetch_add(0, 1);
        assert_eq!(total(&m, 0), 1, "the writer holds the only copy");
        r.read(1);
        assert_eq!(total(&m, 1), 1);
        r.write(0, 4);
        assert_eq!(
            total(&m, 0),
            2,
            "p1 shares the line: the write is remote again"
        );
    }

    #[test]
    fn dsm_charges_by_home() {
        let m = mem(Model::Dsm, 2);
        let mine = m.register(Home::Process(0), 0);
        let shared = m.register(Home::Shared, 0);
        for _ in 0..3 {
            mine.read(0);
            mine.write(0, 1);
        }
        assert_eq!(total(&m, 0), 0, "local to its home");
        mine.read(1);
        shared.read(0);
        shared.swap(0, 3);
        assert_eq!(total(&m, 1), 1);
        assert_eq!(total(&m, 0), 2, "shared registers are remote to everyone");
    }

    #[test]
    fn rmw_counts_once_and_cas_reports_the_old_value() {
        let m = mem(Model::Cc, 2);
        let r = m.register(Home::Shared, 3);
        assert_eq!(r.compare_exchange(0, 3, 4), Ok(3));
        assert_eq!(r.compare_exchange(1, 3, 9), Err(4));
        assert_eq!(r.swap(1, 8), 4);
        assert_eq!(r.peek(), 8);
        assert_eq!(total(&m, 0), 1);
        assert_eq!(total(&m, 1), 2);
    }

    #[test]
    fn passages_split_by_section() {
        let m = mem(Model::Cc, 1);
        let r = m.register(Home::Shared, 0);
        for _ in 0..2 {
            m.begin_passage(0);
            r.write(0, 1); // doorway: 1
            m.set_section(0, Section::Waiting);
            r.read(0); // cached: 0
            m.set_section(0, Section::Cs);
            m.set_section(0, Section::Exit);
            r.write(0, 0); // exit: 1
            assert_eq!(m.end_passage(0), 2);
        }
        let s = m.summary();
        assert_eq!(s.passages, 2);
        assert_eq!(s.per_passage_max, 2);
        assert_eq!(s.per_passage_mean, 2.0);
        assert_eq!(s.by_section["doorway"], serde_json::json!(1.0));
        assert_eq!(s.by_section["waiting"], serde_json::json!(0.0));
        assert_eq!(s.by_section["exit"], serde_json::json!(1.0));
        assert_eq!(s.accesses, 6);
    }
}
