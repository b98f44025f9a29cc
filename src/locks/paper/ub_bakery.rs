//! `ub-bakery` and `b-bakery`: seed 002 (Jayanti, Tan, Friedland, Katz, "Bounding Lamport's
//! Bakery Algorithm"), Fig. 2, written once and instantiated with two arithmetics.
//!
//! UB-Bakery adds to Lamport's Bakery a register X holding the token of the latest process to
//! enter the CS (line 8) and takes it into the new token (lines 3–4): tokens then cluster
//! around X (Theorems 1–3), still unbounded. B-Bakery is the same text with `+`, `max` and `<`
//! replaced by ⊕ (addition modulo 2n−1), the shifted max and the shifted ≺ of Section 5, so
//! tokens stay in {−1, 0, …, 2n−2} and X in {0, …, 2n−2}. Both: mutual exclusion, starvation
//! freedom, doorway FIFO (FCFS).

use std::marker::PhantomData;
use std::sync::Mutex;

use crate::locks::paper::lamport_bakery::bakery_scenario;
use crate::locks::{Bound, Claims, Lock, LockInfo, Mutant, Params, Problem, WorstCase};
use crate::mem::{Home, Memory, Model, Register, ScheduledMemory};

/// What the registry and `lockbench list` say of `ub-bakery`: its paper and figure, its claims.
pub const UB_BAKERY: LockInfo = LockInfo {
    name: "ub-bakery",
    problem: Problem::Mutex,
    source: "seed 002 Fig. 2 (UB-Bakery)",
    fcfs: true,
    bounded: false,
    rmr: "O(N) CC (seed 000 §3's GLB argument; seed 002 claims none); DSM: no claim, waits spin on others' registers (unbounded)",
    safe: true,
    notes: "register X clusters tokens: x ≤ token ≤ x+n (Theorem 1); still unbounded",
    bound: rmr_bound,
    mutants: ub_mutants,
    worst_case,
};

/// What the registry and `lockbench list` say of `b-bakery`: its paper and figure, its claims.
pub const B_BAKERY: LockInfo = LockInfo {
    name: "b-bakery",
    problem: Problem::Mutex,
    source: "seed 002 Fig. 2 + §5 (B-Bakery)",
    fcfs: true,
    bounded: true,
    rmr: "O(N) CC (seed 000 §3's GLB argument; seed 002 claims none); DSM: no claim, waits spin on others' registers (unbounded)",
    safe: true,
    notes: "tokens mod 2n−1 with the shifted max and ≺: tokens in {−1..2n−2}",
    bound: rmr_bound,
    mutants: b_mutants,
    worst_case: crate::locks::no_worst_case,
};

/// CC, both bakeries: as Lamport's, plus line 3 (read X) and line 8 (write X). DSM: no claim.
fn rmr_bound(model: Model, n: usize) -> Option<Bound> {
    (model != Model::Dsm).then(|| {
        Bound::linear(
            11,
            -4,
            n,
            "seed 000 §3's GLB argument applied to seed 002 Fig. 2: doorway N+4, ≤ 10 per other process waiting, X 1, exit 1",
        )
    })
}

/// Seed 002 §3.1's schedule at two processes, as for Lamport's Bakery (Fig. 2 writes twice from
/// line 6 through its exit: X, then its token).
fn worst_case(n: usize, passages: usize) -> Option<WorstCase> {
    (n == 2).then(|| WorstCase {
        script: bakery_scenario(passages.saturating_sub(1), 2),
        detail: "scripted: seed 002 §3.1 (Lamport's token range grows one per cycle)",
        found_by: "scripted: seed 002 §3.1",
    })
}

/// The seeded mutants of Fig. 2 with unbounded tokens (`verify --mutants ub-bakery`).
fn ub_mutants() -> Vec<Mutant> {
    type S = ScheduledMemory;
    use mutant::*;
    vec![
        Mutant::new(
            "no-x-write",
            "8",
            "X := token_i dropped",
            Fig2Bakery::<S, Unbounded, NO_X_WRITE>::new,
        ),
        Mutant::new(
            "no-choosing-wait",
            "6",
            "wait till gettoken_j = false dropped",
            Fig2Bakery::<S, Unbounded, NO_CHOOSING_WAIT>::new,
        ),
        Mutant::new(
            "no-increment",
            "4",
            "max(S ∪ {x}) + 1 becomes max(S ∪ {x})",
            Fig2Bakery::<S, Unbounded, NO_INCREMENT>::new,
        ),
        Mutant::new(
            "no-reset",
            "10",
            "token_i := −1 dropped",
            Fig2Bakery::<S, Unbounded, NO_RESET>::new,
        ),
    ]
}

/// The seeded mutants of B-Bakery (`verify --mutants b-bakery`): Fig. 2's, and a modulus too
/// small.
fn b_mutants() -> Vec<Mutant> {
    type S = ScheduledMemory;
    use mutant::*;
    vec![
        Mutant::new(
            "no-x-write",
            "8",
            "X := token_i dropped",
            Fig2Bakery::<S, Bounded, NO_X_WRITE>::new,
        ),
        Mutant::new(
            "no-choosing-wait",
            "6",
            "wait till gettoken_j = false dropped",
            Fig2Bakery::<S, Bounded, NO_CHOOSING_WAIT>::new,
        ),
        Mutant::new(
            "no-increment",
            "4",
            "shifted max ⊕ 1 becomes the shifted max",
            Fig2Bakery::<S, Bounded, NO_INCREMENT>::new,
        ),
        Mutant::new(
            "no-reset",
            "10",
            "token_i := −1 dropped",
            Fig2Bakery::<S, Bounded, NO_RESET>::new,
        ),
        Mutant::new(
            "modulus-2n-2",
            "§5",
            "tokens modulo 2n−2 instead of 2n−1",
            Fig2Bakery::<S, BoundedBy<2>, 0>::new,
        ),
    ]
}

/// The arithmetic a bakery of Fig. 2 runs with.
pub trait TokenArith: Send + Sync + 'static {
    /// Name of the lock.
    const NAME: &'static str;
    /// Tokens are bounded (in {−1, …, 2n−2}).
    const BOUNDED: bool;
    /// Line 4: the new token from the tokens read on line 2 (−1 = none) and X read on line 3.
    fn next_token(n: usize, tokens: &[i64], x: i64) -> i64;
    /// Line 7: [v_i, i] before [v_j, j].
    fn precedes(n: usize, vi: i64, i: usize, vj: i64, j: usize) -> bool;
}

/// Unbounded integers: `max(S ∪ {x}) + 1` and the lexicographic `<`.
pub struct Unbounded;

impl TokenArith for Unbounded {
    const NAME: &'static str = "ub-bakery";
    const BOUNDED: bool = false;

    fn next_token(_n: usize, tokens: &[i64], x: i64) -> i64 {
        tokens.iter().copied().fold(x, i64::max) + 1
    }

    fn precedes(_n: usize, vi: i64, i: usize, vj: i64, j: usize) -> bool {
        (vi, i) < (vj, j)
    }
}

/// Tokens modulo 2n−1 (Section 5).
pub type Bounded = BoundedBy<1>;

/// Tokens modulo 2n−`D`: `D = 1` is Section 5's B-Bakery; a larger `D` is the same algorithm
/// with a smaller modulus, which `verify` runs to show that 2n−1 is needed (Lemma 1 needs
/// the 2n−1 values of [x−(n−1), x+(n−1)] to stay distinct).
pub struct BoundedBy<const D: i64>;

impl<const D: i64> BoundedBy<D> {
    fn modulus(n: usize) -> i64 {
        (2 * n as i64 - D).max(1)
    }

    /// a ⊕ b = (a + b) mod (2n−1), always in 0..2n−1.
    pub fn plus(n: usize, a: i64, b: i64) -> i64 {
        (a + b).rem_euclid(Self::modulus(n))
    }

    /// a ⊖ b = (a − b) mod (2n−1).
    pub fn minus(n: usize, a: i64, b: i64) -> i64 {
        (a - b).rem_euclid(Self::modulus(n))
    }

    /// The shifted max: max({v ⊕ (n−1−x) | v ∈ T}) ⊖ (n−1−x), T = S ∪ {x} − {−1}.
    pub fn shifted_max(n: usize, tokens: &[i64], x: i64) -> i64 {
        let shift = n as i64 - 1 - x;
        let top = tokens
            .iter()
            .copied()
            .filter(|&v| v != -1)
            .chain(std::iter::once(x))
            .map(|v| Self::plus(n, v, shift))
            .max()
            .expect("x is in T");
        Self::minus(n, top, shift)
    }
}

impl<const D: i64> TokenArith for BoundedBy<D> {
    const NAME: &'static str = "b-bakery";
    const BOUNDED: bool = true;

    fn next_token(n: usize, tokens: &[i64], x: i64) -> i64 {
        Self::plus(n, Self::shifted_max(n, tokens, x), 1)
    }

    /// [v_i, i] ≺ [v_j, j] iff [v_i ⊕ (n−1−v_i), i] < [v_j ⊕ (n−1−v_i), j].
    fn precedes(n: usize, vi: i64, i: usize, vj: i64, j: usize) -> bool {
        let shift = n as i64 - 1 - vi;
        (Self::plus(n, vi, shift), i) < (Self::plus(n, vj, shift), j)
    }
}

/// Seeded mutants for `verify --mutants`, each one line of Fig. 2 changed; 0 is the algorithm.
/// `MUT` is a compile-time constant, so the native build (`MUT = 0`) folds every branch away.
pub mod mutant {
    /// Line 8 dropped: X is never written.
    pub const NO_X_WRITE: u8 = 1;
    /// Line 6 dropped: no wait for j to finish choosing.
    pub const NO_CHOOSING_WAIT: u8 = 2;
    /// Line 4 without `+ 1` (⊕ 1): the new token is the max itself.
    pub const NO_INCREMENT: u8 = 3;
    /// Line 10 dropped: token_i is never reset to −1.
    pub const NO_RESET: u8 = 4;
}

/// The bakery of Fig. 2 with arithmetic `A`, mutant `MUT` (0: the algorithm).
pub struct Fig2Bakery<M: Memory, A: TokenArith, const MUT: u8 = 0> {
    mem: M,
    n: usize,
    /// `gettoken_i` (1 = true).
    gettoken: Box<[M::Reg]>,
    /// `token_i`, −1 = none.
    token: Box<[M::Reg]>,
    /// X: the token of the latest process to enter the CS.
    x: M::Reg,
    /// Ghost state of the lemma invariants, fed only by marks (scheduled memory).
    ghost: Mutex<Ghost>,
    arith: PhantomData<A>,
}

/// The lines marked for the lemma invariants ([`Memory::mark`]).
mod line {
    /// 1: gettoken_i := true written (t_1 of Observations 2 and 3).
    pub const GETTOKEN: u32 = 1;
    /// 2: token_j read; args (j, value).
    pub const READ_TOKEN: u32 = 2;
    /// 3: X read; args (x, 0).
    pub const READ_X: u32 = 3;
    /// 4: token_i written; args (token_i, 0).
    pub const WRITE_TOKEN: u32 = 4;
    /// 7: token_j read in the wait; args (value, token_i).
    pub const WAIT_TOKEN: u32 = 7;
    /// 8: X written; args (token_i, 0).
    pub const WRITE_X: u32 = 8;
    /// 10: token_i := −1 written.
    pub const RESET: u32 = 10;
}

/// What the lemma invariants remember: X as last written, the tokens each process read on
/// line 2 of its current doorway, each token as last written (lines 4 and 10), the writes of X
/// each process made (line 8), and, for a process between its lines 1 and 3, the tokens and
/// those counts at its line 1.
#[derive(Debug, Default)]
struct Ghost {
    x: i64,
    read: Vec<Vec<(usize, i64)>>,
    token: Vec<i64>,
    x_writes: Vec<u64>,
    at_line_1: Vec<Option<(Vec<i64>, Vec<u64>)>>,
}

/// `ub-bakery`.
pub type UbBakery<M> = Fig2Bakery<M, Unbounded, 0>;
/// `b-bakery`.
pub type BBakery<M> = Fig2Bakery<M, Bounded, 0>;

impl<M: Memory, A: TokenArith, const MUT: u8> Fig2Bakery<M, A, MUT> {
    /// A bakery for `params.n` processes.
    pub fn new(mem: M, params: &Params) -> Self {
        let n = params.n;
        Fig2Bakery {
            gettoken: mem.per_process(n, 0),
            token: mem.per_process(n, -1),
            x: mem.register(Home::Shared, 0),
            ghost: Mutex::new(Ghost {
                x: 0,
                read: vec![Vec::new(); n],
                token: vec![-1; n],
                x_writes: vec![0; n],
                at_line_1: vec![None; n],
            }),
            mem,
            n,
            arith: PhantomData,
        }
    }

    #[inline(always)]
    fn acquire(&self, i: usize, mut doorway_done: impl FnMut()) {
        // 1: gettoken_i := true
        self.gettoken[i].write(i, 1);
        self.mem.mark(i, line::GETTOKEN, [0, 0]);
        // 2: S := {token_j | 1 ≤ j ≤ n}. A small stack buffer keeps allocation off the path.
        let mut buf = [0i64; 64];
        let mut heap = Vec::new();
        let s: &mut [i64] = if self.n <= buf.len() {
            &mut buf[..self.n]
        } else {
            heap.resize(self.n, 0);
            &mut heap
        };
        for (j, v) in s.iter_mut().enumerate() {
            *v = self.token[j].read(i);
            self.mem.mark(i, line::READ_TOKEN, [j as i64, *v]);
        }
        // 3: x := X
        let x = self.x.read(i);
        self.mem.mark(i, line::READ_X, [x, 0]);
        // 4: token_i := max(S ∪ {x}) + 1   (B-Bakery: the shifted max, ⊕ 1)
        let mine = if MUT == mutant::NO_INCREMENT {
            A::next_token(self.n, s, x) - 1
        } else {
            A::next_token(self.n, s, x)
        };
        self.token[i].write(i, mine);
        self.mem.mark(i, line::WRITE_TOKEN, [mine, 0]);
        // 5: gettoken_i := false
        self.gettoken[i].write(i, 0);
        doorway_done();
        for j in (0..self.n).filter(|&j| j != i) {
            // 6: wait till gettoken_j = false
            if MUT != mutant::NO_CHOOSING_WAIT {
                self.mem.wait_until(i, || self.gettoken[j].read(i) == 0);
            }
            // 7: wait till (token_j = −1) ∨ ([token_i, i] < [token_j, j])   (B-Bakery: ≺)
            self.mem.wait_until(i, || {
                let t = self.token[j].read(i);
                self.mem.mark(i, line::WAIT_TOKEN, [t, mine]);
                t == -1 || A::precedes(self.n, mine, i, t, j)
            });
        }
        // 8: X := token_i
        if MUT != mutant::NO_X_WRITE {
            self.x.write(i, mine);
            self.mem.mark(i, line::WRITE_X, [mine, 0]);
        }
        // 9: CS
    }
}

impl<M: Memory, A: TokenArith, const MUT: u8> Lock for Fig2Bakery<M, A, MUT> {
    fn enter(&self, p: usize, _session: usize) {
        self.acquire(p, || {})
    }

    fn enter_traced(&self, p: usize, _session: usize, doorway_done: &mut dyn FnMut()) {
        self.acquire(p, doorway_done)
    }

    fn exit(&self, p: usize, _session: usize) {
        // 10: token_i := −1
        if MUT != mutant::NO_RESET {
            self.token[p].write(p, -1);
            self.mem.mark(p, line::RESET, [-1, 0]);
        }
    }

    fn claims(&self) -> Claims {
        Claims::BOUNDED_EXIT
    }

    /// UB-Bakery: Observation 1 (X never decreases), Observation 2 (between P_i's lines 1 and
    /// 3, any P_j writes X on line 8 at most once), Observation 3 (a token_j ≠ −1 that P_i
    /// reads on line 2 is token_j's value at P_i's line 1 or at its line 3) and Theorems 2–3
    /// (the tokens read on line 2 lie within n − 1 of the X read on line 3; those read on line
    /// 7 within n − 1 of token_i). B-Bakery's values are residues: its lemmas are the lockstep
    /// with UB-Bakery ([`Lockstep`]).
    fn lemma_step(&self, i: usize, at: u32, args: [i64; 2]) -> Result<(), String> {
        if A::BOUNDED {
            return Ok(());
        }
        let near = self.n as i64 - 1;
        let mut g = self.ghost.lock().unwrap_or_else(|e| e.into_inner());
        match at {
            line::GETTOKEN => {
                let at_1 = (g.token.clone(), g.x_writes.clone());
                g.at_line_1[i] = Some(at_1);
            }
            line::WRITE_TOKEN | line::RESET => g.token[i] = args[0],
            line::READ_TOKEN => {
                if args[0] == 0 {
                    g.read[i].clear();
                }
                if args[1] != -1 {
                    g.read[i].push((args[0] as usize, args[1]));
                }
            }
            line::READ_X => {
                // Observation 3, at t_2: each token_j ≠ −1 read on line 2 against token_j at
                // t_1 (the line 1 of this doorway) and now.
                if let Some((v1, _)) = g.at_line_1[i].take() {
                    let now = &g.token;
                    if let Some(&(j, v)) =
                        g.read[i].iter().find(|&&(j, v)| v != v1[j] && v != now[j])
                    {
                        return Err(format!(
                            "{}: Observation 3 broken: process {i} read token_{j} = {v} on line 2, neither its value at {i}'s line 1 ({}) nor at its line 3 ({})",
                            A::NAME,
                            v1[j],
                            now[j]
                        ));
                    }
                }
                let x = args[0];
                if let Some(&(j, v)) = g.read[i].iter().find(|(_, v)| (v - x).abs() > near) {
                    return Err(format!(
                        "{}: Theorem 2 broken: process {i} read token_{j} = {v} on line 2 and X = {x} on line 3 (n = {})",
                        A::NAME,
                        self.n
                    ));
                }
            }
            line::WAIT_TOKEN => {
                let (t, mine) = (args[0], args[1]);
                if t != -1 && (t - mine).abs() > near {
                    return Err(format!(
                        "{}: Theorem 3 broken: process {i}, token {mine}, read a token {t} on line 7 (n = {})",
                        A::NAME,
                        self.n
                    ));
                }
            }
            line::WRITE_X => {
                if args[0] < g.x {
                    return Err(format!(
                        "{}: Observation 1 broken: process {i} wrote X = {} over {}",
                        A::NAME,
                        args[0],
                        g.x
                    ));
                }
                g.x = args[0];
                // Observation 2: no process writes X twice between another's lines 1 and 3.
                g.x_writes[i] += 1;
                let wrote = g.x_writes[i];
                let twice = (0..self.n).find_map(|q| {
                    let (_, w) = g.at_line_1[q].as_ref()?;
                    let times = wrote - w[i];
                    (times > 1).then_some((q, times))
                });
                if let Some((q, times)) = twice {
                    return Err(format!(
                        "{}: Observation 2 broken: process {i} wrote X on line 8 {times} times between process {q}'s line 1 and its line 3",
                        A::NAME
                    ));
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn token_range(&self) -> Option<i64> {
        // Tokens modulo 2n−1 have no meaningful spread; UB-Bakery's are integers.
        if A::BOUNDED {
            None
        } else {
            crate::locks::paper::lamport_bakery::token_range(&self.token)
        }
    }

    fn check_invariants(&self, exact: bool) -> Result<(), String> {
        let x = self.x.peek();
        let bounded = A::BOUNDED;
        let top = 2 * self.n as i64 - 2;
        if bounded && !(0..=top).contains(&x) {
            return Err(format!("{}: X = {x} outside {{0, …, {top}}}", A::NAME));
        }
        for (j, t) in self.token.iter().enumerate() {
            let v = t.peek();
            if bounded && !(-1..=top).contains(&v) {
                return Err(format!(
                    "{}: token of process {j} = {v} outside {{−1, 0, …, {top}}}",
                    A::NAME
                ));
            }
            // A token is max(S ∪ {x}) + 1 with x ≥ 0: −1 or at least 1.
            if !bounded && v != -1 && v < 1 {
                return Err(format!(
                    "{}: token of process {j} = {v}, neither −1 nor ≥ 1",
                    A::NAME
                ));
            }
            // Theorem 1: if v ≠ −1 then x ≤ v ≤ x + n; for B-Bakery the image of that range
            // modulo 2n−1, i.e. v ⊖ x ≤ n. It spans registers: snapshots only.
            let n = self.n as i64;
            let within = if bounded {
                Bounded::minus(self.n, v, x) <= n
            } else {
                x <= v && v <= x + n
            };
            if exact && v != -1 && !within {
                return Err(format!(
                    "{}: Theorem 1 broken: token of process {j} = {v}, X = {x}, n = {n}",
                    A::NAME
                ));
            }
        }
        Ok(())
    }
}

/// UB-Bakery and B-Bakery run in lockstep under one schedule (seed 002 §5): every register holds
/// the pair (UB value, B value), so each access of one algorithm is the same access of the other
/// in the same step, and the run follows UB-Bakery's decisions. Section 5's claim is that the
/// runs are analogous: the B state is the UB state mod 2n−1 at every step (checked after every
/// write) and every comparison on line 7 comes out the same (checked at each, as a lemma). Not
/// in the registry: `verify` runs it from the tests.
pub struct Lockstep<M: Memory> {
    mem: M,
    n: usize,
    gettoken: Box<[M::Reg]>,
    token: Box<[M::Reg]>,
    x: M::Reg,
}

/// A pair (UB, B) in one register: UB + 1 above bit 16, B + 1 below (both ≥ −1, B < 2n−1).
fn pair(ub: i64, b: i64) -> i64 {
    ((ub + 1) << 16) | (b + 1)
}

fn unpair(v: i64) -> (i64, i64) {
    ((v >> 16) - 1, (v & 0xffff) - 1)
}

/// Line 7's comparison differed between the two runs; args (UB's, B's).
const DIVERGED: u32 = 7;

impl<M: Memory> Lockstep<M> {
    /// Both bakeries for `params.n` processes (at most 16 000, for the packing).
    pub fn new(mem: M, params: &Params) -> Self {
        let n = params.n;
        Lockstep {
            gettoken: mem.per_process(n, 0),
            token: mem.per_process(n, pair(-1, -1)),
            x: mem.register(Home::Shared, pair(0, 0)),
            mem,
            n,
        }
    }
}

impl<M: Memory> Lock for Lockstep<M> {
    fn enter(&self, i: usize, _session: usize) {
        let n = self.n;
        // 1
        self.gettoken[i].write(i, 1);
        // 2
        let (su, sb): (Vec<i64>, Vec<i64>) = (0..n).map(|j| unpair(self.token[j].read(i))).unzip();
        // 3
        let (xu, xb) = unpair(self.x.read(i));
        // 4
        let (mu, mb) = (
            Unbounded::next_token(n, &su, xu),
            Bounded::next_token(n, &sb, xb),
        );
        self.token[i].write(i, pair(mu, mb));
        // 5
        self.gettoken[i].write(i, 0);
        for j in (0..n).filter(|&j| j != i) {
            // 6
            self.mem.wait_until(i, || self.gettoken[j].read(i) == 0);
            // 7
            self.mem.wait_until(i, || {
                let (tu, tb) = unpair(self.token[j].read(i));
                let ub = tu == -1 || Unbounded::precedes(n, mu, i, tu, j);
                let b = tb == -1 || Bounded::precedes(n, mb, i, tb, j);
                if ub != b {
                    self.mem.mark(i, DIVERGED, [i64::from(ub), i64::from(b)]);
                }
                ub
            });
        }
        // 8
        self.x.write(i, pair(mu, mb));
    }

    fn exit(&self, i: usize, _session: usize) {
        // 10
        self.token[i].write(i, pair(-1, -1));
    }

    fn lemma_step(&self, i: usize, at: u32, args: [i64; 2]) -> Result<(), String> {
        if at == DIVERGED {
            return Err(format!(
                "b-bakery left its lockstep with ub-bakery: process {i}'s line 7 comparison is {} under UB and {} under B",
                args[0] != 0,
                args[1] != 0
            ));
        }
        Ok(())
    }

    fn check_invariants(&self, _exact: bool) -> Result<(), String> {
        let congruent = |(u, b): (i64, i64)| {
            if u == -1 {
                b == -1
            } else {
                b == u.rem_euclid(2 * self.n as i64 - 1)
            }
        };
        let x = unpair(self.x.peek());
        if !congruent(x) {
            return Err(format!(
                "b-bakery left its lockstep with ub-bakery: X = {} under UB, {} under B",
                x.0, x.1
            ));
        }
        for (j, t) in self.token.iter().enumerate() {
            let v = unpair(t.peek());
            if !congruent(v) {
                return Err(format!(
                    "b-bakery left its lockstep with ub-bakery: token_{j} = {} under UB, {} under B",
                    v.0, v.1
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ub(n: usize) -> UbBakery<crate::mem::ScheduledMemory> {
        let params = Params::new(n, 1, crate::mem::WaitPolicy::Spin);
        UbBakery::new(crate::mem::ScheduledMemory, &params)
    }

    #[test]
    fn the_lemmas_catch_what_they_forbid() {
        // Observation 1: X never decreases.
        let l = ub(3);
        l.lemma_step(0, line::WRITE_X, [4, 0]).unwrap();
        l.lemma_step(1, line::WRITE_X, [4, 0]).unwrap();
        let e = l.lemma_step(2, line::WRITE_X, [3, 0]).unwrap_err();
        assert!(e.contains("Observation 1"), "{e}");
        // Theorem 2: line 2's tokens within n − 1 = 2 of line 3's X.
        let l = ub(3);
        for (j, v) in [(0, -1), (1, 5), (2, 7)] {
            l.lemma_step(0, line::READ_TOKEN, [j, v]).unwrap();
        }
        l.lemma_step(0, line::READ_X, [5, 0]).unwrap();
        let e = l.lemma_step(0, line::READ_X, [4, 0]).unwrap_err();
        assert!(e.contains("Theorem 2") && e.contains("token_2 = 7"), "{e}");
        // A new doorway forgets the old reads.
        l.lemma_step(0, line::READ_TOKEN, [0, -1]).unwrap();
        l.lemma_step(0, line::READ_X, [0, 0]).unwrap();
        // Theorem 3: line 7's tokens within n − 1 of token_i.
        l.lemma_step(0, line::WAIT_TOKEN, [-1, 9]).unwrap();
        l.lemma_step(0, line::WAIT_TOKEN, [7, 9]).unwrap();
        let e = l.lemma_step(0, line::WAIT_TOKEN, [6, 9]).unwrap_err();
        assert!(e.contains("Theorem 3"), "{e}");
        // B-Bakery's residues are checked by the lockstep instead.
        let params = Params::new(3, 1, crate::mem::WaitPolicy::Spin);
        let b = BBakery::new(crate::mem::ScheduledMemory, &params);
        b.lemma_step(0, line::WRITE_X, [4, 0]).unwrap();
        b.lemma_step(0, line::WRITE_X, [0, 0]).unwrap();
    }

    #[test]
    fn observations_2_and_3_catch_what_they_forbid() {
        // Observation 2: P_1 writes X once between P_0's lines 1 and 3, not twice.
        let l = ub(3);
        l.lemma_step(1, line::WRITE_X, [1, 0]).unwrap();
        l.lemma_step(0, line::GETTOKEN, [0, 0]).unwrap();
        l.lemma_step(1, line::WRITE_X, [2, 0]).unwrap();
        let e = l.lemma_step(1, line::WRITE_X, [3, 0]).unwrap_err();
        assert!(
            e.contains("Observation 2") && e.contains("2 times between process 0's line 1"),
            "{e}"
        );
        // Once P_0 has read X on line 3, its window is closed.
        let l = ub(3);
        l.lemma_step(0, line::GETTOKEN, [0, 0]).unwrap();
        l.lemma_step(1, line::WRITE_X, [1, 0]).unwrap();
        l.lemma_step(0, line::READ_X, [1, 0]).unwrap();
        l.lemma_step(1, line::WRITE_X, [2, 0]).unwrap();
        // Observation 3: token_1 read on line 2 is its value at P_0's line 1 (2) or line 3.
        let l = ub(3);
        l.lemma_step(1, line::WRITE_TOKEN, [2, 0]).unwrap();
        l.lemma_step(0, line::GETTOKEN, [0, 0]).unwrap();
        l.lemma_step(0, line::READ_TOKEN, [0, -1]).unwrap();
        l.lemma_step(0, line::READ_TOKEN, [1, 2]).unwrap();
        l.lemma_step(1, line::RESET, [-1, 0]).unwrap();
        l.lemma_step(1, line::WRITE_TOKEN, [3, 0]).unwrap();
        l.lemma_step(0, line::READ_TOKEN, [2, -1]).unwrap();
        l.lemma_step(0, line::READ_X, [2, 0]).unwrap();
        // A value token_1 held only in between: broken.
        l.lemma_step(0, line::GETTOKEN, [0, 0]).unwrap();
        l.lemma_step(1, line::RESET, [-1, 0]).unwrap();
        l.lemma_step(1, line::WRITE_TOKEN, [4, 0]).unwrap();
        l.lemma_step(0, line::READ_TOKEN, [0, -1]).unwrap();
        l.lemma_step(0, line::READ_TOKEN, [1, 4]).unwrap();
        l.lemma_step(1, line::RESET, [-1, 0]).unwrap();
        l.lemma_step(1, line::WRITE_TOKEN, [5, 0]).unwrap();
        let e = l.lemma_step(0, line::READ_X, [4, 0]).unwrap_err();
        assert!(
            e.contains("Observation 3") && e.contains("token_1 = 4") && e.contains("(3)"),
            "{e}"
        );
    }

    #[test]
    fn the_lockstep_catches_states_that_are_not_congruent() {
        let params = Params::new(3, 1, crate::mem::WaitPolicy::Spin);
        let l = Lockstep::new(
            crate::mem::NativeMemory::new(crate::mem::WaitPolicy::Spin),
            &params,
        );
        assert_eq!(unpair(pair(-1, -1)), (-1, -1));
        assert_eq!(unpair(pair(123_456, 4)), (123_456, 4));
        l.check_invariants(true).unwrap();
        // Modulus 5: 7 ≡ 2.
        l.token[1].write(1, pair(7, 2));
        l.check_invariants(true).unwrap();
        l.token[1].write(1, pair(7, 3));
        let e = l.check_invariants(true).unwrap_err();
        assert!(e.contains("token_1 = 7 under UB, 3 under B"), "{e}");
        l.token[1].write(1, pair(-1, -1));
        l.x.write(0, pair(5, 1));
        assert!(l.check_invariants(true).is_err());
        let e = l.lemma_step(2, DIVERGED, [1, 0]).unwrap_err();
        assert!(e.contains("true under UB and false under B"), "{e}");
    }

    #[test]
    fn modular_operators() {
        // n = 3: modulus 5.
        assert_eq!(Bounded::plus(3, 4, 1), 0);
        assert_eq!(Bounded::minus(3, 0, 1), 4);
        // Tokens around X = 4 (wrapping): 3, 4, 0 ≡ 5, 1 ≡ 6 in the unbounded run; max is 1.
        assert_eq!(Bounded::shifted_max(3, &[3, -1, 0], 4), 0);
        assert_eq!(Bounded::shifted_max(3, &[-1, -1, 1], 4), 1);
        assert_eq!(Bounded::shifted_max(3, &[-1, -1, -1], 2), 2);
        assert_eq!(Bounded::next_token(3, &[3, -1, 0], 4), 1);
        // ≺ agrees with < on the unbounded values v and v ± (n−1), through the wrap.
        for vi in 0..20i64 {
            for d in -2..=2i64 {
                let vj = vi + d;
                if vj < 0 {
                    continue;
                }
                for (i, j) in [(0, 1), (1, 0)] {
                    assert_eq!(
                        Bounded::precedes(3, vi % 5, i, vj % 5, j),
                        (vi, i) < (vj, j),
                        "vi={vi} vj={vj} i={i} j={j}"
                    );
                }
            }
        }
    }

    #[test]
    fn shifted_max_maps_the_unbounded_max() {
        // Lemma 1: with tokens within n−1 of x, the bounded max is the unbounded max mod 2n−1.
        let n = 4usize;
        let m = 2 * n as i64 - 1;
        for x in 0..30i64 {
            for a in (x - 3).max(0)..=x + 3 {
                for b in (x - 3).max(0)..=x + 3 {
                    let ub = Unbounded::next_token(n, &[a, -1, b], x);
                    let bb = Bounded::next_token(n, &[a % m, -1, b % m], x % m);
                    assert_eq!(bb, ub % m, "x={x} a={a} b={b}");
                }
            }
        }
    }
}
