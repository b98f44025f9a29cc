//! `zehavi-kex`: Zehavi's bounded-space k-exclusion with O(n) RMRs using reads and writes only,
//! seed 001, Algorithm 1 (lines 1–15), over a concurrent timestamp system behind
//! [`Timestamps`].
//!
//! A process labels itself in a CTS and scans the order (the doorway, lines 1–10), tells every
//! other process what it read of their relative order (`Order<`), and then, instead of scanning
//! again, waits for others to tell it that processes ahead of it have left, been overtaken
//! (relevant `Order<` information, trusted only when `Discover` says it is newer than its own
//! scan and `Ignore` is off), or that it may enter (`Allow`), until fewer than k processes are
//! ahead (line 11). Entering, it allows those ahead of it in (line 12: FIFE). Guarantees:
//! k-exclusion, starvation freedom with fewer than k crashed processes, FIFE, bounded exit,
//! O(n) RMRs in both CC and DSM (Lemma 7).
//!
//! `zehavi-kex` runs over [`UnboundedCts`] (unbounded 64-bit labels), so it is **not
//! bounded-space**; `zehavi-kex-bounded` runs the same code over [`BoundedCts`], whose every
//! register lies in a finite domain (see its module for the construction, which is ours, not
//! the paper's reference \[19\]). Every other register is a boolean. The DSM placement
//! follows the paper: `Compete[i][p]`, `Ignore[i][p]`, `Order<[i][p]`, `Allow[i][p]`,
//! `Reveal[p]` and `Discover[i][p][·]` are local to p.

use std::sync::Mutex;

use crate::locks::paper::bounded_cts::BoundedCts;
use crate::locks::paper::cts::{mark, Timestamps, UnboundedCts};
use crate::locks::{Bound, Claims, Lock, LockInfo, Mutant, Params, Problem};
use crate::mem::{Home, Memory, Model, Register, ScheduledMemory};

/// What the registry and `lockbench list` say of `zehavi-kex`: its paper and figure, its claims.
pub const INFO: LockInfo = LockInfo {
    name: "zehavi-kex",
    problem: Problem::KExclusion,
    source: "seed 001 Algorithm 1 (Zehavi k-exclusion)",
    fcfs: false,
    bounded: false,
    rmr: "O(n) CC and DSM (Lemma 7)",
    safe: true,
    notes: "FIFE, not FCFS; over an unbounded 64-bit CTS (the paper's is bounded)",
    bound: rmr_bound,
    mutants,
    worst_case: crate::locks::no_worst_case,
};

/// `zehavi-kex-bounded`: the same Algorithm 1 over the bounded CTS.
pub const INFO_BOUNDED: LockInfo = LockInfo {
    name: "zehavi-kex-bounded",
    problem: Problem::KExclusion,
    // What we know of it, in the column `list` always shows: the CTS is ours and breaks
    // Property 2, on which the paper's proof of k-exclusion rests.
    source: "seed 001 Algorithm 1 (Zehavi k-exclusion) over a bounded CTS of our own: bounded space yes; CTS Property 2 broken; k-exclusion checked by exploration, not proven; its RMR bound counts a (2n+1)-word register as one access",
    fcfs: false,
    bounded: true,
    rmr: "O(n) CC and DSM (Lemma 7)",
    safe: true,
    notes: "FIFE; bounded space: CTS labels in {0..2n-1}, records in {-1..2n-1}, registers of 2n+1 words (not ref. [19]'s CTS, and it breaks CTS Property 2)",
    bound: bounded_rmr_bound,
    mutants: bounded_mutants,
    worst_case: crate::locks::no_worst_case,
};

/// Doorway ≤ 19n + 2 (lines 1–2: 2n writes; Label n+1; line 4 ≤ 13 per process; line 5; Scan
/// n; lines 7–8 2n), line 12 n writes, exit 3n + 1; the while loop of line 11 reads only
/// registers local to the reader in DSM (Lemma 7) and, in CC, at most five RMR reads of each of
/// its 6n registers (Lemma 7's cases).
fn rmr_bound(model: Model, n: usize) -> Option<Bound> {
    Some(match model {
        Model::Dsm => Bound::linear(
            23,
            3,
            n,
            "seed 001 Lemma 7: doorway ≤ 19n+2, while loop local in DSM, line 12 n, exit 3n+1",
        ),
        _ => Bound::linear(
            53,
            3,
            n,
            "seed 001 Lemma 7: doorway ≤ 19n+2, while loop ≤ 5 reads per each of 6n registers, line 12 n, exit 3n+1",
        ),
    })
}

/// As `zehavi-kex` with the bounded CTS's Label (line 3: 2n + 1 accesses of multi-word
/// registers, one own read, two collects of n − 1, two own writes) for the unbounded one's
/// n + 1; Scan (line 6) n reads as before: doorway ≤ 20n + 2.
fn bounded_rmr_bound(model: Model, n: usize) -> Option<Bound> {
    Some(Bound::linear(
        if model == Model::Dsm { 24 } else { 54 },
        3,
        n,
        "seed 001 Lemma 7 over the bounded CTS: doorway ≤ 20n+2 (Label 2n+1), line 12 n, exit 3n+1, while loop as zehavi-kex",
    ))
}

/// The seeded mutants of Algorithm 1 (`verify --mutants zehavi-kex`).
fn mutants() -> Vec<Mutant> {
    type S = ScheduledMemory;
    type U = UnboundedCts<S>;
    use mutant::*;
    vec![
        Mutant::new(
            "no-allow",
            "12",
            "Allow[p][i] ← True dropped",
            Zehavi::<S, U, NO_ALLOW>::new,
        ),
        Mutant::new(
            "k-plus-one",
            "11",
            "|precede| ≥ k becomes |precede| > k",
            Zehavi::<S, U, K_PLUS_ONE>::new,
        ),
        Mutant::new(
            "no-reveal",
            "5",
            "Reveal[p] ← True dropped",
            Zehavi::<S, U, NO_REVEAL>::new,
        ),
        Mutant::new(
            "no-ignore-clear",
            "8",
            "Ignore[p][i] ← False dropped",
            Zehavi::<S, U, NO_IGNORE_CLEAR>::new,
        ),
        Mutant::new(
            "order-flipped",
            "7",
            "Order<[p][i] ← (order.p < order.i) becomes (order.p > order.i): the doorway tells every process the opposite of what it read",
            Zehavi::<S, U, ORDER_FLIPPED>::new,
        ),
        Mutant::new(
            "no-compete-delete",
            "11.a.i",
            "deleting processes with !Compete[i][p] dropped",
            Zehavi::<S, U, NO_COMPETE_DELETE>::new,
        ),
    ]
}

/// Passages and PCT depth for the bounded CTS's traceable-use mutants (killed then by the
/// traceable-use invariant, which the construction keeps at the same settings). A process's
/// labels take the smallest value free of its own and of what others hold of it, so with
/// nothing held its first two labels are 0 and 1 and a value can only come back at its third
/// Label: with the default 2 passages both mutants are equivalent to the construction.
/// `no-trace` needs a process to relabel to a value another still records (three Labels);
/// `no-recheck` needs a process to label twice while another sits between its collect and its
/// announce, after a first label (three Labels, a fourth passage for the window to fall after
/// the first), a schedule of many preemptions: at 3 processes and 1500 schedules PCT found it
/// for 8 seeds of 8 at depth 10, 2 of 8 at the default depth 3; seed 476888 needs more change
/// points (9000 schedules at depth 10 missed it; depth 20 kills it at schedule 1636), so the
/// mutants run at depth 20.
const CTS_REUSE: (usize, usize) = (4, 20);

/// The seeded mutants of the bounded CTS under Algorithm 1 (`verify --mutants
/// zehavi-kex-bounded`), each one step of its Label changed.
fn bounded_mutants() -> Vec<Mutant> {
    use crate::locks::paper::bounded_cts::mutant::*;
    type S = ScheduledMemory;
    let (passages, depth) = CTS_REUSE;
    vec![
        Mutant::new(
            "no-recheck",
            "3 (Label step 3)",
            "the re-collect dropped: records trusted from the first collect",
            Zehavi::<S, BoundedCts<S, NO_RECHECK>>::new,
        )
        .at_least(passages, depth),
        Mutant::new(
            "keep-seq",
            "3 (Label step 4)",
            "the new seq is the old one",
            Zehavi::<S, BoundedCts<S, KEEP_SEQ>>::new,
        ),
        Mutant::new(
            "no-trace",
            "3 (Label step 4)",
            "values others record or announce of p no longer excluded",
            Zehavi::<S, BoundedCts<S, NO_TRACE>>::new,
        )
        .at_least(passages, depth),
        Mutant::new(
            "no-record",
            "3 (Label step 5)",
            "rec_p[q] ← −1 for every q",
            Zehavi::<S, BoundedCts<S, NO_RECORD>>::new,
        ),
    ]
}

/// An n × n array of boolean registers, element [i][p] homed at p.
struct Matrix<M: Memory> {
    n: usize,
    regs: Box<[M::Reg]>,
}

impl<M: Memory> Matrix<M> {
    fn new(mem: &M, n: usize) -> Self {
        Matrix {
            n,
            regs: mem.array(n * n, |k| Home::Process(k % n), 0),
        }
    }

    #[inline]
    fn at(&self, i: usize, p: usize) -> &M::Reg {
        &self.regs[i * self.n + p]
    }
}

/// Seeded mutants for `verify --mutants`, each one line of Algorithm 1 changed; 0 is the
/// algorithm. `MUT` is a compile-time constant, so the native build (`MUT = 0`) folds every
/// branch away.
pub mod mutant {
    /// Line 12 dropped: an entering process allows nobody.
    pub const NO_ALLOW: u8 = 1;
    /// Line 11 `|precede| ≥ k` turned into `> k`.
    pub const K_PLUS_ONE: u8 = 2;
    /// Line 5 dropped: Reveal\[p\] is never raised.
    pub const NO_REVEAL: u8 = 3;
    /// Line 8 dropped: Ignore\[p\]\[i\] stays true, so order information is never trusted.
    pub const NO_IGNORE_CLEAR: u8 = 4;
    /// Line 11.a.i dropped: a process that stopped competing is not deleted from precede.
    pub const NO_COMPETE_DELETE: u8 = 5;
    /// Line 7 with the comparison turned round: `Order<[p][i] ← (order.p > order.i)`.
    pub const ORDER_FLIPPED: u8 = 6;
}

/// Zehavi's k-exclusion over memory `M` and CTS `C`, mutant `MUT` (0: the algorithm).
pub struct Zehavi<M: Memory, C: Timestamps<M> = UnboundedCts<M>, const MUT: u8 = 0> {
    mem: M,
    n: usize,
    k: usize,
    cts: C,
    compete: Matrix<M>,
    ignore: Matrix<M>,
    order_lt: Matrix<M>,
    allow: Matrix<M>,
    reveal: Box<[M::Reg]>,
    /// Discover[i][p][0] and Discover[i][p][1].
    discover: [Matrix<M>; 2],
    /// Where each process is, for Observations 1–3, fed only by marks (scheduled memory).
    ghost: Mutex<Vec<Position>>,
}

/// The lines marked for Observations 1–3 ([`Memory::mark`]); args (i, 0) where a line is per i.
mod line {
    /// 1: Compete[p][i] ← True done for i.
    pub const COMPETE: u32 = 1;
    /// 2: Ignore[p][i] ← True done for i.
    pub const IGNORE: u32 = 2;
    /// 5: Reveal[p] ← True done.
    pub const REVEAL: u32 = 5;
    /// 8: Ignore[p][i] ← False done for i.
    pub const HEED: u32 = 8;
    /// 13: Reveal[p] ← False done.
    pub const HIDE: u32 = 13;
    /// 15: Compete[p][i] ← False done for i.
    pub const LEAVE: u32 = 15;
}

/// Where a process is in its passage, as Observations 1–3 of Section V read it.
#[derive(Clone, Debug)]
struct Position {
    /// After line 1 for i and before line 15 for i (Observation 1: Compete[p][i]).
    compete: Vec<bool>,
    /// After line 2 for i and before line 8 for i (Observation 2: Ignore[p][i]).
    ignore: Vec<bool>,
    /// After line 5 and before line 13 (Observation 3: Reveal[p]).
    reveal: bool,
}

/// `zehavi-kex` with the unbounded CTS.
pub type ZehaviKex<M> = Zehavi<M, UnboundedCts<M>, 0>;

/// `zehavi-kex-bounded`: the bounded CTS.
pub type ZehaviKexBounded<M> = Zehavi<M, BoundedCts<M>, 0>;

const T: i64 = 1;
const F: i64 = 0;

impl<M: Memory, C: Timestamps<M>, const MUT: u8> Zehavi<M, C, MUT> {
    /// Zehavi's algorithm for `params.n` processes, at most `params.k` inside.
    pub fn new(mem: M, params: &Params) -> Self {
        let n = params.n;
        Zehavi {
            cts: C::new(&mem, n),
            compete: Matrix::new(&mem, n),
            ignore: Matrix::new(&mem, n),
            order_lt: Matrix::new(&mem, n),
            allow: Matrix::new(&mem, n),
            reveal: mem.per_process(n, F),
            discover: [Matrix::new(&mem, n), Matrix::new(&mem, n)],
            ghost: Mutex::new(vec![
                Position {
                    compete: vec![false; n],
                    ignore: vec![false; n],
                    reveal: false,
                };
                n
            ]),
            k: params.k.max(1),
            mem,
            n,
        }
    }

    fn discovered(&self, p: usize, i: usize, j: usize) -> bool {
        self.discover[0].at(i, j).read(p) == T && self.discover[1].at(i, j).read(p) == T
    }

    #[inline(always)]
    fn acquire(&self, p: usize, mut doorway_done: impl FnMut()) {
        let n = self.n;
        // 1: Foreach i: Compete[p][i] ← True
        for i in 0..n {
            self.compete.at(p, i).write(p, T);
            self.mem.mark(p, line::COMPETE, [i as i64, 0]);
        }
        // 2: Foreach i: Ignore[p][i] ← True
        for i in 0..n {
            self.ignore.at(p, i).write(p, T);
            self.mem.mark(p, line::IGNORE, [i as i64, 0]);
        }
        // 3: Label_p
        self.cts.label(p);
        // 4: Foreach i s.t. !Discover[p][i][0] ∨ !Discover[p][i][1]:
        for i in 0..n {
            if self.discovered(p, p, i) {
                continue;
            }
            // a, b, c
            self.discover[0].at(p, i).write(p, F);
            self.discover[1].at(p, i).write(p, F);
            self.allow.at(p, i).write(p, F);
            // d, e: each reads Reveal[i]
            if self.reveal[i].read(p) == T {
                self.discover[0].at(p, i).write(p, T);
            }
            if self.reveal[i].read(p) == T {
                self.discover[1].at(p, i).write(p, T);
            }
            // f
            if !self.discovered(p, p, i) {
                self.discover[0].at(p, i).write(p, F);
                self.discover[1].at(p, i).write(p, F);
            }
        }
        // 5: Reveal[p] ← True
        if MUT != mutant::NO_REVEAL {
            self.reveal[p].write(p, T);
        }
        self.mem.mark(p, line::REVEAL, [0, 0]);
        // 6: order ← Scan_p
        let order = self.cts.scan(p);
        // 7: Foreach i: Order<[p][i] ← (order.p < order.i)
        for i in 0..n {
            self.order_lt.at(p, i).write(
                p,
                i64::from(if MUT == mutant::ORDER_FLIPPED {
                    order[p] > order[i]
                } else {
                    order[p] < order[i]
                }),
            );
        }
        // 8: Foreach i: Ignore[p][i] ← False
        for i in 0..n {
            if MUT != mutant::NO_IGNORE_CLEAR {
                self.ignore.at(p, i).write(p, F);
            }
            self.mem.mark(p, line::HEED, [i as i64, 0]);
        }
        // 9–10: precede ← {i : order.i < order.p}
        let mut precede: Vec<usize> = (0..n).filter(|&i| order[i] < order[p]).collect();
        doorway_done();
        // 11: While |precede| ≥ k
        let k = if MUT == mutant::K_PLUS_ONE {
            self.k + 1
        } else {
            self.k
        };
        self.mem.wait_until(p, || {
            if precede.len() < k {
                return true;
            }
            // a: Foreach i ∈ precede
            precede.retain(|&i| {
                // i: If !Compete[i][p]: delete
                if MUT != mutant::NO_COMPETE_DELETE && self.compete.at(i, p).read(p) == F {
                    return false;
                }
                // ii: If Discover[i][p][0] ∧ Discover[i][p][1] ∧ !Ignore[i][p] ∧ !Order<[i][p]
                !(self.discovered(p, i, p)
                    && self.ignore.at(i, p).read(p) == F
                    && self.order_lt.at(i, p).read(p) == F)
            });
            // b: Foreach i s.t. Discover[i][p][0] ∧ Discover[i][p][1]: If Allow[i][p]: ∅
            if (0..n).any(|i| self.discovered(p, i, p) && self.allow.at(i, p).read(p) == T) {
                precede.clear();
            }
            precede.len() < k
        });
        // 12: Foreach i s.t. order.i < order.p: Allow[p][i] ← True
        if MUT != mutant::NO_ALLOW {
            for i in (0..n).filter(|&i| order[i] < order[p]) {
                self.allow.at(p, i).write(p, T);
            }
        }
    }
}

impl<M: Memory, C: Timestamps<M>, const MUT: u8> Lock for Zehavi<M, C, MUT> {
    fn enter(&self, p: usize, _session: usize) {
        self.acquire(p, || {})
    }

    fn enter_traced(&self, p: usize, _session: usize, doorway_done: &mut dyn FnMut()) {
        self.acquire(p, doorway_done)
    }

    fn exit(&self, p: usize, _session: usize) {
        // 13: Reveal[p] ← False
        self.reveal[p].write(p, F);
        self.mem.mark(p, line::HIDE, [0, 0]);
        // 14: Foreach i: Discover[i][p][0] ← False, Discover[i][p][1] ← False
        for i in 0..self.n {
            self.discover[0].at(i, p).write(p, F);
            self.discover[1].at(i, p).write(p, F);
        }
        // 15: Foreach i: Compete[p][i] ← False
        for i in 0..self.n {
            self.compete.at(p, i).write(p, F);
            self.mem.mark(p, line::LEAVE, [i as i64, 0]);
        }
    }

    /// Observations 1–3 of Section V: Compete[p][i], Ignore[p][i] and Reveal[p] are True
    /// exactly while p is between the lines that raise and lower them. Checked at each of p's
    /// marks, on p's own registers (p is their only writer, and a process frozen mid-protocol
    /// makes no marks, so its registers are left as they are).
    fn lemma_step(&self, p: usize, at: u32, args: [i64; 2]) -> Result<(), String> {
        // Lines 3 and 6: the CTS's Properties 1 and 2 (and its lockstep, when it runs one).
        if mark::is_cts(at) {
            return self.cts.lemma_step(p, at, args);
        }
        let mut g = self.ghost.lock().unwrap_or_else(|e| e.into_inner());
        let me = &mut g[p];
        let i = args[0] as usize;
        match at {
            line::COMPETE => me.compete[i] = true,
            line::LEAVE => me.compete[i] = false,
            line::IGNORE => me.ignore[i] = true,
            line::HEED => me.ignore[i] = false,
            line::REVEAL => me.reveal = true,
            line::HIDE => me.reveal = false,
            _ => return Ok(()),
        }
        let holds = |reg: &M::Reg, at: bool| (reg.peek() == T) == at;
        for i in 0..self.n {
            if !holds(self.compete.at(p, i), me.compete[i]) {
                return Err(format!(
                    "zehavi-kex: Observation 1 broken: Compete[{p}][{i}] = {} while process {p} is {} line 1 for {i} and line 15",
                    self.compete.at(p, i).peek(),
                    if me.compete[i] { "between" } else { "outside" }
                ));
            }
            if !holds(self.ignore.at(p, i), me.ignore[i]) {
                return Err(format!(
                    "zehavi-kex: Observation 2 broken: Ignore[{p}][{i}] = {} while process {p} is {} line 2 for {i} and line 8",
                    self.ignore.at(p, i).peek(),
                    if me.ignore[i] { "between" } else { "outside" }
                ));
            }
        }
        if !holds(&self.reveal[p], me.reveal) {
            return Err(format!(
                "zehavi-kex: Observation 3 broken: Reveal[{p}] = {} while process {p} is {} lines 5 and 13",
                self.reveal[p].peek(),
                if me.reveal { "between" } else { "outside" }
            ));
        }
        Ok(())
    }

    fn check_invariants(&self, _exact: bool) -> Result<(), String> {
        let matrices = [
            ("Compete", &self.compete),
            ("Ignore", &self.ignore),
            ("Order<", &self.order_lt),
            ("Allow", &self.allow),
            ("Discover[0]", &self.discover[0]),
            ("Discover[1]", &self.discover[1]),
        ];
        for (name, m) in matrices {
            if let Some((k, v)) = m
                .regs
                .iter()
                .map(|r| r.peek())
                .enumerate()
                .find(|(_, v)| *v != T && *v != F)
            {
                return Err(format!(
                    "zehavi-kex: {name}[{}][{}] = {v}, not a boolean",
                    k / self.n,
                    k % self.n
                ));
            }
        }
        self.cts.check()
    }

    fn claims(&self) -> Claims {
        Claims {
            fife: true,
            crash_tolerant: true,
            ..Claims::BOUNDED_EXIT
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::{NativeMemory, WaitPolicy};

    #[test]
    fn observations_1_to_3_tie_the_flags_to_where_the_process_is() {
        let params = Params::new(2, 1, WaitPolicy::Spin);
        let l = ZehaviKex::new(NativeMemory::new(WaitPolicy::Spin), &params);
        // Line 1 for 0 done, but Compete[0][0] never raised.
        let e = l.lemma_step(0, line::COMPETE, [0, 0]).unwrap_err();
        assert!(
            e.contains("Observation 1") && e.contains("Compete[0][0]"),
            "{e}"
        );
        l.compete.at(0, 0).write(0, T);
        l.lemma_step(0, line::COMPETE, [0, 0]).unwrap();
        // Another process's flags are not p's to answer for.
        l.ignore.at(1, 1).write(1, T);
        l.lemma_step(0, line::COMPETE, [0, 0]).unwrap();
        l.ignore.at(0, 1).write(0, T);
        let e = l.lemma_step(0, line::COMPETE, [0, 0]).unwrap_err();
        assert!(e.contains("Observation 2") && e.contains("outside"), "{e}");
        l.lemma_step(0, line::IGNORE, [1, 0]).unwrap();
        let e = l.lemma_step(0, line::REVEAL, [0, 0]).unwrap_err();
        assert!(e.contains("Observation 3") && e.contains("between"), "{e}");
        l.reveal[0].write(0, T);
        l.lemma_step(0, line::REVEAL, [0, 0]).unwrap();
        l.ignore.at(0, 1).write(0, F);
        l.lemma_step(0, line::HEED, [1, 0]).unwrap();
    }
}
