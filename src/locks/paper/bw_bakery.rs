//! `bw-bakery`: Taubenfeld's Black-White Bakery algorithm as stated in seed 000 (He,
//! Gopalakrishnan, Gafni), Fig. 3.
//!
//! Tokens are coloured: a process takes the colour of the shared bit GlobalColor and a number one
//! above the numbers of the processes holding that colour (lines 3–6). Between equal colours the
//! smaller (number, id) goes first; between different colours, the token whose colour differs
//! from GlobalColor goes first. On exit a process flips GlobalColor to the opposite of its own
//! colour (lines 17–21), so numbers restart and stay bounded by N (seed 000 §5: "the token
//! numbers used can only grow up to N"). Mutual exclusion, FCFS, starvation freedom, bounded
//! registers, O(N) RMRs in the CC model.
//!
//! The token is one register. Fig. 3 names one variable `Token[i]` with two components, as
//! Fig. 4 does for BWBGME, whose Section 6 says it is read and written atomically. Here it is
//! packed as `number · 2 + colour`, so each `Token[j]` of the figure is one read and colour and
//! number always come from the same token. Kept as two registers (read colour, then number),
//! numbers pass N: a process reads the colour j held in an earlier passage (or its initial
//! one), j then takes the other colour and a number, and the process counts that number as one
//! of its own colour. Exhaustive search of all interleavings finds N + 1 at N = 2 and N + 2 at
//! N = 3 with two registers, and never more than N with one (N = 2 up to eight passages, N = 3
//! up to three; `docs/verify.md`).
//!
//! Deviations from the extracted figure:
//! - its waiting room shows only the same-colour wait (lines 9–14); the different-colour wait
//!   was lost in extraction. The text beside the figure ("if two tokens have different colors,
//!   the token whose color is different from the GlobalColor is smaller") and Taubenfeld's
//!   original require it, and Fig. 5 (the GME generalization) has it as lines 22–24: here it is
//!   the `else` branch, `wait until (Token[j].number = 0) ∨ (GlobalColor ≠ mycolor) ∨
//!   (Token[j].color = mycolor)`. Without it two processes of different colours would never
//!   wait on each other.
//! - the waiting room skips j = i (see line 7 below).

use crate::locks::{Bound, Claims, Lock, LockInfo, Mutant, Params, Problem};
use crate::mem::{Home, Memory, Model, Register, ScheduledMemory};

/// What the registry and `lockbench list` say of `bw-bakery`: its paper and figure, its claims.
pub const INFO: LockInfo = LockInfo {
    name: "bw-bakery",
    problem: Problem::Mutex,
    source: "seed 000 Fig. 3 (Taubenfeld's Black-White Bakery)",
    fcfs: true,
    bounded: true,
    rmr: "O(N) CC (seed 000 §5, Taubenfeld); DSM: no claim",
    safe: true,
    notes: "coloured tokens, numbers ≤ N; the figure's lost different-colour wait restored",
    bound: rmr_bound,
    mutants,
    worst_case: crate::locks::no_worst_case,
};

/// CC: doorway N + 3 (one read of every other process's token, colour and number in one
/// register), ≤ 10 per other process waiting (as BWBGME's lines 17–21, Theorem 9), exit 3.
/// DSM: no claim.
fn rmr_bound(model: Model, n: usize) -> Option<Bound> {
    (model != Model::Dsm).then(|| {
        Bound::linear(
            11,
            -4,
            n,
            "seed 000 Fig. 3 with Theorem 9's waiting-room argument: doorway N+3, ≤ 10 per other process, exit 3",
        )
    })
}

/// The seeded mutants of Fig. 3 (`verify --mutants bw-bakery`).
fn mutants() -> Vec<Mutant> {
    type S = ScheduledMemory;
    use mutant::*;
    vec![
        Mutant::new(
            "no-color-wait",
            "(lost)",
            "the different-colour wait dropped",
            BwBakeryLock::<S, NO_COLOR_WAIT>::new,
        ),
        Mutant::new(
            "no-choosing-wait",
            "8",
            "wait until Choosing[j] = false dropped",
            BwBakeryLock::<S, NO_CHOOSING_WAIT>::new,
        ),
        Mutant::new(
            "no-flip",
            "17–21",
            "GlobalColor never flipped",
            BwBakeryLock::<S, NO_FLIP>::new,
        ),
        Mutant::new(
            "no-reset",
            "22",
            "Token[i].number := 0 dropped",
            BwBakeryLock::<S, NO_RESET>::new,
        ),
    ]
}

const BLACK: i64 = 0;
const WHITE: i64 = 1;

/// `Token[i]` = (color, number) packed in one register: `number · 2 + color`.
fn pack(color: i64, number: i64) -> i64 {
    number * 2 + color
}

/// (color, number) of a packed token.
fn unpack(token: i64) -> (i64, i64) {
    (token & 1, token >> 1)
}

/// Seeded mutants for `verify --mutants`, each one line of Fig. 3 changed; 0 is the algorithm.
/// `MUT` is a compile-time constant, so the native build (`MUT = 0`) folds every branch away.
pub mod mutant {
    /// The different-colour wait (the `else` branch) dropped.
    pub const NO_COLOR_WAIT: u8 = 1;
    /// Line 8 dropped: no wait for j to finish choosing.
    pub const NO_CHOOSING_WAIT: u8 = 2;
    /// Lines 17–21 dropped: GlobalColor never flips.
    pub const NO_FLIP: u8 = 3;
    /// Line 22 dropped: the number is never reset to 0.
    pub const NO_RESET: u8 = 4;
    /// Line 5 reads `Token[j]` twice, the colour from the first read and the number from the
    /// second, as if colour and number were two registers: numbers pass N. Not in `verify
    /// --mutants`, whose two passages per process are too few for it (it needs three at two
    /// processes); `tests/verify.rs` runs it.
    pub const SPLIT_TOKEN: u8 = 5;
}

/// `bw-bakery`.
pub type BwBakery<M> = BwBakeryLock<M, 0>;

/// The Black-White Bakery over memory `M`, mutant `MUT` (0: the algorithm).
pub struct BwBakeryLock<M: Memory, const MUT: u8> {
    mem: M,
    n: usize,
    choosing: Box<[M::Reg]>,
    /// Token[i] = (color, number), packed (number 0: no token).
    token: Box<[M::Reg]>,
    global_color: M::Reg,
}

impl<M: Memory, const MUT: u8> BwBakeryLock<M, MUT> {
    /// A Black-White Bakery for `params.n` processes; GlobalColor and every token colour start
    /// black (the figure leaves them arbitrary), every number 0.
    pub fn new(mem: M, params: &Params) -> Self {
        let n = params.n;
        BwBakeryLock {
            choosing: mem.per_process(n, 0),
            token: mem.per_process(n, pack(BLACK, 0)),
            global_color: mem.register(Home::Shared, BLACK),
            mem,
            n,
        }
    }

    /// (color, number) of Token[j], read by process i in one step.
    #[inline(always)]
    fn read_token(&self, i: usize, j: usize) -> (i64, i64) {
        unpack(self.token[j].read(i))
    }

    #[inline(always)]
    fn acquire(&self, i: usize, mut doorway_done: impl FnMut()) -> i64 {
        // 3: Choosing[i] := true
        self.choosing[i].write(i, 1);
        // 4: Token[i].color := GlobalColor (Token[i].number is 0 here: initially and by line 22)
        let mycolor = self.global_color.read(i);
        self.token[i].write(i, pack(mycolor, 0));
        // 5: Token[i].number := 1 + max({Token[j].number | Token[i].color = Token[j].color}),
        // one read of Token[j] for both components
        let max = (0..self.n)
            .filter(|&j| j != i)
            .filter_map(|j| {
                let (color, number) = self.read_token(i, j);
                if MUT == mutant::SPLIT_TOKEN {
                    return (color == mycolor).then(|| self.read_token(i, j).1);
                }
                (color == mycolor).then_some(number)
            })
            .max()
            .unwrap_or(0);
        let mine = max + 1;
        self.token[i].write(i, pack(mycolor, mine));
        // 6: Choosing[i] := false
        self.choosing[i].write(i, 0);
        doorway_done();
        // 7: for j := 1 to N, skipping j = i. Taken literally the loop includes i itself, and
        // then line 9 holds (its colour is its own) while none of lines 11–13 can ever hold
        // ((n_i, i) < (n_i, i) is false, its colour equals itself, its number is not 0): a
        // process would wait on itself for ever. Taubenfeld's original, like Lamport's
        // Bakery, means the others. (Line 5's max above skips i too, which changes nothing:
        // i's own number is 0 there.)
        for j in (0..self.n).filter(|&j| j != i) {
            // 8: wait until Choosing[j] = false
            if MUT != mutant::NO_CHOOSING_WAIT {
                self.mem.wait_until(i, || self.choosing[j].read(i) == 0);
            }
            if self.read_token(i, j).0 == mycolor {
                // 9–13: wait until ((number_i, i) < (number_j, j)) ∨ (color_j ≠ mycolor)
                //        ∨ (number_j = 0)
                self.mem.wait_until(i, || {
                    let (cj, nj) = self.read_token(i, j);
                    nj == 0 || cj != mycolor || (mine, i) < (nj, j)
                });
            } else if MUT != mutant::NO_COLOR_WAIT {
                // (lost in extraction; see the module doc) wait until (number_j = 0)
                //        ∨ (GlobalColor ≠ mycolor) ∨ (color_j = mycolor)
                self.mem.wait_until(i, || {
                    let (cj, nj) = self.read_token(i, j);
                    nj == 0 || cj == mycolor || self.global_color.read(i) != mycolor
                });
            }
        }
        // 16: CS
        mycolor
    }
}

impl<M: Memory, const MUT: u8> Lock for BwBakeryLock<M, MUT> {
    fn enter(&self, p: usize, _session: usize) {
        self.acquire(p, || {});
    }

    fn enter_traced(&self, p: usize, _session: usize, doorway_done: &mut dyn FnMut()) {
        self.acquire(p, doorway_done);
    }

    fn exit(&self, p: usize, _session: usize) {
        // 17–21: GlobalColor := the opposite of Token[i].color
        let (mine, _) = self.read_token(p, p);
        if MUT != mutant::NO_FLIP {
            self.global_color
                .write(p, if mine == BLACK { WHITE } else { BLACK });
        }
        // 22: Token[i].number := 0 (the colour stays)
        if MUT != mutant::NO_RESET {
            self.token[p].write(p, pack(mine, 0));
        }
    }

    fn claims(&self) -> Claims {
        Claims::BOUNDED_EXIT
    }

    /// Numbers in {0, …, N} (seed 000 §5), colours and GlobalColor black or white.
    fn check_invariants(&self, _exact: bool) -> Result<(), String> {
        let n = self.n as i64;
        let gc = self.global_color.peek();
        if gc != BLACK && gc != WHITE {
            return Err(format!("bw-bakery: GlobalColor = {gc}"));
        }
        for (j, r) in self.token.iter().enumerate() {
            let (_, v) = unpack(r.peek());
            if !(0..=n).contains(&v) {
                return Err(format!(
                    "bw-bakery: number of process {j} = {v} outside {{0, …, N = {n}}}"
                ));
            }
        }
        Ok(())
    }

    fn largest_token(&self) -> Option<i64> {
        self.token.iter().map(|r| unpack(r.peek()).1).max()
    }
}
