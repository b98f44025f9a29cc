//! `bwb-gme` and `naive-bwb-gme`: the Black and White Bakery GME algorithm of seed 000 (He,
//! Gopalakrishnan, Gafni), Figs. 4–6, and the naive generalization Section 6 shows unsafe.
//!
//! BWBGME generalises Taubenfeld's Black-White Bakery (Fig. 3) to groups. A token is
//! (session, colour, number), read and written atomically (packed into one register, as the
//! paper suggests). The doorway (lines 3–15) takes GlobalColor and a number above those of
//! *conflicting* processes of that colour; the waiting room (lines 16–26) waits only on
//! conflicting processes, with the Black-White priority. The exit (lines 28–37) flips
//! GlobalColor only when the number is not 1 and no active process holds the opposite colour
//! (OPPOSITECOLOR, Fig. 6), which keeps Invariant 1 (GlobalColor cannot flip twice while a
//! process holds its colour). P1–P5, O(N) RMRs (CC), O(N) space, bounded registers: numbers stay
//! at most N + 1.
//!
//! `naive-bwb-gme` is the naive generalization Section 6 describes: the Black-White Bakery "with
//! an additional check to see whether the other process is a conflicting process in all
//! busy-wait loops" and nothing else changed — Fig. 3's number rule (one above every token of my
//! colour) and Fig. 3's exit (always flip GlobalColor to the opposite of one's colour), in
//! Fig. 5's layout (the token carries the session, cleared to (0, ⊥, 0) on exit; the reset to ⊥
//! changes nothing here, since every wait passes an idle process by its session 0). The paper's counter-example, with three
//! processes: GlobalColor white; P0 and P2 (session S) take white and are inside together; P0
//! leaves and flips GlobalColor to black; P0 asks for S again, takes black and enters (concurrent
//! entry); P1 asks for a conflicting S′, takes black and a larger number, and waits for P0 (same
//! colour) and for P2 (different colour while GlobalColor is black); P0 leaves again and flips
//! GlobalColor to white; now P1 stops waiting for P2 (GlobalColor ≠ its colour) and enters
//! while P2, of session S, is still inside. It is a negative control: listed as unsafe and left
//! out of `all`.
//!
//! Under `verify`, `bwb-gme` also checks Lemmas 7–10 of Section 7 at every step they speak
//! of ([`Lock::lemma_step`], from marks that only the scheduled memory delivers): a number of 2
//! or more is one above a conflicting process of my colour that leaves its critical section
//! before I enter mine (7); whoever changes GlobalColor read, while choosing its number, a
//! conflicting process of its colour with a smaller number, and both read GlobalColor on line 5
//! since its last change (8); GlobalColor changes at most once between my line 5 and the end of
//! my exit (9); and I do not enter before a conflicting process whose doorway ended before my
//! line 4 has finished its critical section (10). From Theorem 9's proof it also counts the
//! reads of GlobalColor on line 23 that a rewrite of it made me repeat while it still held my
//! colour: at most N − 1 a passage.
//!
//! Sessions: the figure's sessions are positive with 0 meaning none; lockbench's s is s + 1.

use std::sync::Mutex;

use crate::locks::paper::IDS_DIFFER;
use crate::locks::{
    Bound, Claims, CounterExample, Lock, LockInfo, Mutant, Params, Problem, SectionCost, Step,
};
use crate::mem::{Home, Memory, Model, Register, ScheduledMemory};

/// What the registry and `lockbench list` say of `bwb-gme`: its paper and figure, its claims.
pub const INFO: LockInfo = LockInfo {
    name: "bwb-gme",
    problem: Problem::Gme,
    source: "seed 000 Figs. 4–6 (Black and White Bakery GME)",
    fcfs: true,
    bounded: true,
    rmr: "O(N) CC (seed 000 Theorem 9); DSM: no claim",
    safe: true,
    notes: "P1–P5 with bounded tokens (numbers ≤ N+1)",
    bound: rmr_bound,
    mutants,
    worst_case: crate::locks::no_worst_case,
};

/// What the registry and `lockbench list` say of `naive-bwb-gme`: its paper and figure, its claims.
pub const NAIVE: LockInfo = LockInfo {
    name: "naive-bwb-gme",
    problem: Problem::Gme,
    source: "seed 000 §6 (naive Black-White Bakery generalization)",
    fcfs: false,
    bounded: true,
    rmr: "O(N) CC",
    safe: false,
    notes: "negative control: NOT safe (seed 000 §6 counter-example)",
    bound: crate::locks::no_bound,
    mutants: crate::locks::no_mutants,
    worst_case: crate::locks::no_worst_case,
};

/// CC: doorway N + 4 (lines 3–15), waiting ≤ 10 per other process (Theorem 9: line 17 ≤ 5,
/// line 19 1, lines 20–21 ≤ 2 plus GlobalColor amortised ≤ 2), exit N + 3 (OPPOSITECOLOR
/// reads every token). DSM: no claim.
fn rmr_bound(model: Model, n: usize) -> Option<Bound> {
    (model != Model::Dsm).then(|| {
        Bound::linear(
            12,
            -3,
            n,
            "seed 000 Theorem 9: doorway N+4, ≤ 10 per other process waiting, exit N+3 (OPPOSITECOLOR)",
        )
    })
}

/// Theorem 9 by section, in CC, counted from Fig. 5: the doorway (lines 3–15: the writes of
/// lines 3, 4, 14 and 15, GlobalColor on line 5, the N − 1 other tokens on line 8) at most
/// N + 4; the waiting room (lines 16–26) at most 10 per other process (lines 17–18 ≤ 5, line
/// 19 1, lines 20–21 or 23–24 ≤ 2, one branch running, and GlobalColor on line 23 ≤ 2
/// amortised over its rewrites; the proof's "lines 17, 19, 21" and "16–23" are these),
/// summed over the N − 1 others, since `rmr` counts a section and not the process waited on;
/// the exit (lines 28–37: its own token, OPPOSITECOLOR's N tokens of Fig. 6, the writes of
/// lines 31/33 and 37) at most N + 3.
const SECTIONS: [SectionCost; 3] = [
    SectionCost::at_most("doorway", "3–15", "N + 4", |n| n as u64 + 4),
    SectionCost::at_most("waiting", "16–26", "10(N − 1)", |n| 10 * (n as u64 - 1)),
    SectionCost::at_most("exit", "28–37", "N + 3", |n| n as u64 + 3),
];

/// Why `bwb-gme` without line 29 is equivalent.
const NO_OPPOSITE_CHECK_EQUIVALENT: &str = "Lemma 9 holds without it, and it is all the safety, FCFS and bound proofs take from line 29. Let t2 be the first time GlobalColor changes a second time (c to c̄ at t1, back to c at t2) inside some P_i's window (its line 5, reading c, to the end of its exit). The flipper U has colour c̄ and, by the kept line 28 guard, a number ≥ 2; by Lemma 7 it read a conflicting V of colour c̄ with a smaller number and enters only after V's critical section. U and V read c̄ on line 5 after t1 (earlier would put two changes inside their own windows before t2). P_i conflicts with U or V; that one waits on line 17 until P_i has written colour c, then on line 23 until GlobalColor ≠ c̄, that is until t2. So U enters its critical section after t2, yet flips at t2 on leaving it: a contradiction";

/// The seeded mutants of Fig. 2 (`verify --mutants bwb-gme`).
fn mutants() -> Vec<Mutant> {
    type S = ScheduledMemory;
    type G = Generalized;
    use mutant::*;
    vec![
        Mutant::new(
            "no-number-guard",
            "28",
            "mynumber ≠ 1 guard dropped",
            BwbGmeLock::<S, G, NO_NUMBER_GUARD>::new,
        ),
        Mutant::new(
            "no-bottom-reset",
            "3",
            "Token[i] := (mysession, ⊥, 0) dropped",
            BwbGmeLock::<S, G, NO_BOTTOM_RESET>::new,
        ),
        Mutant::new(
            "no-opposite-check",
            "29",
            "not OPPOSITECOLOR(mycolor) dropped",
            BwbGmeLock::<S, G, NO_OPPOSITE_CHECK>::new,
        )
        .equivalent(NO_OPPOSITE_CHECK_EQUIVALENT),
        Mutant::new(
            "no-choosing-wait",
            "17–18",
            "wait until Choosing[j] = false ∨ … dropped",
            BwbGmeLock::<S, G, NO_CHOOSING_WAIT>::new,
        ),
        Mutant::new(
            "number-over-all",
            "9",
            "the session ∉ {0, mysession} clause dropped",
            BwbGmeLock::<S, G, NUMBER_OVER_ALL>::new,
        ),
        Mutant::new(
            "flip-written-twice",
            "31/33",
            "GlobalColor written a second time with the same colour",
            BwbGmeLock::<S, G, FLIP_WRITTEN_TWICE>::new,
        )
        .at_least(3, 0)
        .from_threads(2),
        Mutant::new(
            "pair-le",
            "20",
            "(mynumber, i) < (Token[j].number, j) becomes ≤",
            BwbGmeLock::<S, G, PAIR_LE>::new,
        )
        .equivalent(IDS_DIFFER),
    ]
}

const NONE: i64 = 0; // ⊥
const BLACK: i64 = 1;
const WHITE: i64 = 2;

fn color_name(c: i64) -> &'static str {
    match c {
        BLACK => "black",
        WHITE => "white",
        _ => "⊥",
    }
}

fn opposite(c: i64) -> i64 {
    if c == BLACK {
        WHITE
    } else {
        BLACK
    }
}

/// A token (session, colour, number) packed in one register: session in bits 24.., colour in
/// bits 20..24, number in bits 0..20 (numbers are at most N + 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Token {
    session: i64,
    color: i64,
    number: i64,
}

impl Token {
    const EMPTY: Token = Token {
        session: 0,
        color: NONE,
        number: 0,
    };

    fn pack(self) -> i64 {
        (self.session << 24) | (self.color << 20) | self.number
    }

    fn unpack(v: i64) -> Token {
        Token {
            session: v >> 24,
            color: (v >> 20) & 0xf,
            number: v & 0xf_ffff,
        }
    }
}

/// Which of the two algorithms runs: they differ in exactly two steps.
pub trait Variant: Send + Sync + 'static {
    /// Name of the lock.
    const NAME: &'static str;
    /// Fig. 5: the number is one above the numbers of *conflicting* processes of my colour
    /// (line 9), and the exit flips GlobalColor only when guarded (lines 28–36). Otherwise the
    /// Black-White Bakery's own rules (Fig. 3): one above every token of my colour (line 5),
    /// and always flip on exit (lines 17–21).
    const GENERALIZED: bool;
}

/// `bwb-gme`: Figs. 4–6.
pub struct Generalized;

impl Variant for Generalized {
    const NAME: &'static str = "bwb-gme";
    const GENERALIZED: bool = true;
}

/// `naive-bwb-gme`: the Black-White Bakery with the conflict check added to every wait and
/// nothing else changed (Section 6).
pub struct Naive;

impl Variant for Naive {
    const NAME: &'static str = "naive-bwb-gme";
    const GENERALIZED: bool = false;
}

/// Seeded mutants of `bwb-gme` for `verify --mutants`, each one line of Fig. 5 changed; 0 is
/// the algorithm. `MUT` is a compile-time constant, so the native build (`MUT = 0`) folds every
/// branch away.
pub mod mutant {
    /// Line 28 dropped: the exit flips even with number 1 (seed 000 §6 says the guard is
    /// necessary).
    pub const NO_NUMBER_GUARD: u8 = 1;
    /// Line 3 dropped: the token is not reset to (mysession, ⊥, 0) before GlobalColor is read.
    pub const NO_BOTTOM_RESET: u8 = 2;
    /// Line 29 dropped: the exit flips without looking for the opposite colour. Equivalent:
    /// with line 28 and Lemma 7, Lemma 9 still holds (the argument is in
    /// `verify::mutants`).
    pub const NO_OPPOSITE_CHECK: u8 = 3;
    /// Lines 17–18 dropped: no wait for j to finish choosing.
    pub const NO_CHOOSING_WAIT: u8 = 4;
    /// Line 9 counts every active process of my colour, not only conflicting ones (Fig. 3's
    /// rule).
    pub const NUMBER_OVER_ALL: u8 = 5;
    /// Line 20 `<` turned into `≤` on (number, id) pairs: equivalent, ids differ so pairs never
    /// tie.
    pub const PAIR_LE: u8 = 6;
    /// Line 14 as two writes, (mysession, mycolor, 0) and then the number: as safe as one
    /// (a conflicting process waits on lines 17–18 while Choosing[i] is still true), but one
    /// write more in the doorway, N + 5 RMRs in CC. A mutant of the cost, not of a property,
    /// so not in `verify --mutants`: the ledger's tests run `rmr` on it.
    pub const TOKEN_IN_TWO_WRITES: u8 = 7;
    /// Lines 31/33 write GlobalColor twice, the second write repeating the first: as safe,
    /// no change of colour more, but a rewrite that a process waiting on line 23 may re-read
    /// in between, so a process can block it twice, past §7's N − 1 at N = 2 (two processes,
    /// three passages: `verify --mutants` tries it there).
    pub const FLIP_WRITTEN_TWICE: u8 = 8;
}

/// The Black and White Bakery GME over memory `M`, with exit rule `E`, mutant `MUT` (0: the
/// algorithm).
pub struct BwbGmeLock<M: Memory, E: Variant, const MUT: u8 = 0> {
    mem: M,
    n: usize,
    global_color: M::Reg,
    token: Box<[M::Reg]>,
    choosing: Box<[M::Reg]>,
    /// Ghost state of the lemma invariants, fed only by marks (scheduled memory).
    ghost: Mutex<Ghost>,
    rule: std::marker::PhantomData<E>,
}

/// The lines marked for the lemma invariants ([`Memory::mark`]).
mod line {
    /// 4: `Choosing[i] := true` written; args (mysession, 0).
    pub const CHOOSING: u32 = 4;
    /// 5: `mycolor := GlobalColor` read; args (mycolor, mysession).
    pub const READ_COLOR: u32 = 5;
    /// 8: `other := Token[j]` read; args (j, the packed token).
    pub const READ_TOKEN: u32 = 8;
    /// 13: `mynumber` chosen; args (mynumber, 0).
    pub const NUMBER: u32 = 13;
    /// 15: `Choosing[i] := false` written: the doorway ends.
    pub const DOORWAY: u32 = 15;
    /// 23: GlobalColor read in the wait of lines 23–24; args (the colour read, j).
    pub const WAIT_COLOR: u32 = 23;
    /// 27: the critical section entered.
    pub const CS: u32 = 27;
    /// 28: the critical section left, the exit begins.
    pub const EXIT: u32 = 28;
    /// 31/33: GlobalColor written; args (the colour written, 0).
    pub const FLIP: u32 = 31;
    /// 37: the token reset, the exit ends.
    pub const DONE: u32 = 37;
}

/// What the lemma invariants remember of one process.
#[derive(Clone, Debug, Default)]
struct GhostProc {
    /// Between line 5 and the end of line 37 (Lemma 9's window).
    window: bool,
    /// GlobalColor changes seen in the window.
    flips: u32,
    /// The colour read on line 5 and the session asked.
    color: i64,
    session: i64,
    /// Conflicting processes of my colour read on line 8: (j, number, j's finished critical
    /// sections then, j already past its critical section then, GlobalColor's changes when j
    /// read it on line 5).
    seen: Vec<(usize, i64, u64, bool, u64)>,
    /// GlobalColor's changes so far when I read it on line 5 (Lemma 8's interval).
    epoch: u64,
    /// The number I chose on line 13.
    number: i64,
    /// Past line 15 and not yet out of the critical section (Lemma 10).
    doorway_done: bool,
    /// Lemma 10: conflicting processes whose doorway had ended when I wrote line 4, and their
    /// finished critical sections then: each must finish one more before I enter.
    before_me: Vec<(usize, u64)>,
    /// Lemma 7: processes with a smaller number of my colour, and their finished critical
    /// sections when read, that must finish theirs before I enter.
    after: Vec<(usize, u64)>,
    /// Critical sections finished.
    cs_done: u64,
    /// Past its critical section in the current passage.
    past_cs: bool,
    /// GlobalColor's writes so far when I last read it (line 5 or line 23).
    read_at: u64,
    /// Reads of GlobalColor on line 23 in this passage that came after a write of it and
    /// still found my colour: waits a rewrite made me repeat (§7, Theorem 9's proof).
    rewrites: u64,
}

/// Ghost state: GlobalColor as last written and how often it changed, and each process's.
#[derive(Debug, Default)]
struct Ghost {
    global_color: i64,
    changes: u64,
    /// GlobalColor's writes, changes and rewrites of the same colour alike.
    writes: u64,
    procs: Vec<GhostProc>,
}

/// `bwb-gme`.
pub type BwbGme<M> = BwbGmeLock<M, Generalized, 0>;
/// `naive-bwb-gme`.
pub type NaiveBwbGme<M> = BwbGmeLock<M, Naive, 0>;

impl<M: Memory, E: Variant, const MUT: u8> BwbGmeLock<M, E, MUT> {
    /// The lock for `params.n` processes; GlobalColor starts white, tokens (0, ⊥, 0).
    pub fn new(mem: M, params: &Params) -> Self {
        let n = params.n;
        BwbGmeLock {
            global_color: mem.register(Home::Shared, WHITE),
            token: mem.per_process(n, Token::EMPTY.pack()),
            choosing: mem.per_process(n, 0),
            ghost: Mutex::new(Ghost {
                global_color: WHITE,
                changes: 0,
                writes: 0,
                procs: vec![GhostProc::default(); n],
            }),
            mem,
            n,
            rule: std::marker::PhantomData,
        }
    }

    fn read_token(&self, i: usize, j: usize) -> Token {
        Token::unpack(self.token[j].read(i))
    }

    #[inline(always)]
    fn acquire(&self, i: usize, s: usize, mut doorway_done: impl FnMut()) {
        let mysession = s as i64 + 1;
        // 3: Token[i] := (mysession, ⊥, 0)
        if MUT != mutant::NO_BOTTOM_RESET {
            self.token[i].write(
                i,
                Token {
                    session: mysession,
                    color: NONE,
                    number: 0,
                }
                .pack(),
            );
        }
        // 4: Choosing[i] := true
        self.choosing[i].write(i, 1);
        self.mem.mark(i, line::CHOOSING, [mysession, 0]);
        // 5: mycolor := GlobalColor
        let mycolor = self.global_color.read(i);
        self.mem.mark(i, line::READ_COLOR, [mycolor, mysession]);
        // 6: mynumber := 0
        let mut mynumber = 0;
        // 7–12: the largest number among conflicting processes of my colour
        for j in (0..self.n).filter(|&j| j != i) {
            let other = self.read_token(i, j);
            self.mem.mark(i, line::READ_TOKEN, [j as i64, other.pack()]);
            // 9: (other.color = mycolor) ∧ (other.session ∉ {0, mysession}); the naive
            // version keeps Fig. 3 line 5: every token of my colour.
            let counts = if E::GENERALIZED && MUT != mutant::NUMBER_OVER_ALL {
                other.session != 0 && other.session != mysession
            } else {
                other.session != 0
            };
            if other.color == mycolor && counts {
                mynumber = mynumber.max(other.number);
            }
        }
        // 13: mynumber := mynumber + 1
        mynumber += 1;
        self.mem.mark(i, line::NUMBER, [mynumber, 0]);
        // 14: Token[i] := (mysession, mycolor, mynumber)
        if MUT == mutant::TOKEN_IN_TWO_WRITES {
            let partial = Token {
                session: mysession,
                color: mycolor,
                number: 0,
            };
            self.token[i].write(i, partial.pack());
        }
        self.token[i].write(
            i,
            Token {
                session: mysession,
                color: mycolor,
                number: mynumber,
            }
            .pack(),
        );
        // 15: Choosing[i] := false
        self.choosing[i].write(i, 0);
        self.mem.mark(i, line::DOORWAY, [0, 0]);
        doorway_done();
        let compatible = |t: Token| t.session == 0 || t.session == mysession;
        for j in (0..self.n).filter(|&j| j != i) {
            // 17–18: wait until (Choosing[j] = false) ∨ (Token[j].session ∈ {0, mysession})
            if MUT != mutant::NO_CHOOSING_WAIT {
                self.mem.wait_until(i, || {
                    self.choosing[j].read(i) == 0 || compatible(self.read_token(i, j))
                });
            }
            // 19: if Token[j].color = mycolor
            if self.read_token(i, j).color == mycolor {
                // 20–21: wait until ((mynumber, i) < (Token[j].number, j))
                //        ∨ (Token[j].color ≠ mycolor) ∨ (Token[j].session ∈ {0, mysession})
                self.mem.wait_until(i, || {
                    let t = self.read_token(i, j);
                    let before = if MUT == mutant::PAIR_LE {
                        (mynumber, i) <= (t.number, j)
                    } else {
                        (mynumber, i) < (t.number, j)
                    };
                    before || t.color != mycolor || compatible(t)
                });
            } else {
                // 23–24: wait until (GlobalColor ≠ mycolor) ∨ (Token[j].color = mycolor)
                //        ∨ (Token[j].session ∈ {0, mysession})
                self.mem.wait_until(i, || {
                    let t = self.read_token(i, j);
                    t.color == mycolor || compatible(t) || {
                        let color = self.global_color.read(i);
                        self.mem.mark(i, line::WAIT_COLOR, [color, j as i64]);
                        color != mycolor
                    }
                });
            }
        }
        // 27: CRITICAL SECTION
        self.mem.mark(i, line::CS, [0, 0]);
    }

    /// Fig. 6: OPPOSITECOLOR(color): some active process holds the opposite colour.
    fn opposite_color(&self, i: usize, color: i64) -> bool {
        (0..self.n).any(|j| {
            let other = self.read_token(i, j);
            other.session != 0 && other.color == opposite(color)
        })
    }
}

impl<M: Memory, E: Variant, const MUT: u8> Lock for BwbGmeLock<M, E, MUT> {
    fn enter(&self, p: usize, session: usize) {
        self.acquire(p, session, || {})
    }

    fn enter_traced(&self, p: usize, session: usize, doorway_done: &mut dyn FnMut()) {
        self.acquire(p, session, doorway_done)
    }

    fn exit(&self, i: usize, _session: usize) {
        self.mem.mark(i, line::EXIT, [0, 0]);
        let me = self.read_token(i, i);
        if E::GENERALIZED {
            // 28: if mynumber ≠ 1 then 29: if not OPPOSITECOLOR(mycolor) then 30–34: flip
            let guard = MUT == mutant::NO_NUMBER_GUARD || me.number != 1;
            let alone = MUT == mutant::NO_OPPOSITE_CHECK || !self.opposite_color(i, me.color);
            if guard && alone {
                self.global_color.write(i, opposite(me.color));
                self.mem.mark(i, line::FLIP, [opposite(me.color), 0]);
                if MUT == mutant::FLIP_WRITTEN_TWICE {
                    self.global_color.write(i, opposite(me.color));
                    self.mem.mark(i, line::FLIP, [opposite(me.color), 0]);
                }
            }
        } else {
            // The naive exit (Fig. 3 lines 17–21): always flip.
            self.global_color.write(i, opposite(me.color));
        }
        // 37: Token[i] := (0, ⊥, 0)
        self.token[i].write(i, Token::EMPTY.pack());
        self.mem.mark(i, line::DONE, [0, 0]);
    }

    /// Lemma 7 (a number of 2 or more was taken above a conflicting process of my colour with
    /// a smaller number, and I do not enter before it has finished its critical section),
    /// Lemma 8 (whoever changes GlobalColor took its number above such a process, and both
    /// read GlobalColor on line 5 since its last change), Lemma 9 (after my line 5,
    /// GlobalColor changes at most once before my exit ends) and Lemma 10 (a conflicting
    /// process whose doorway ended before my line 4 finishes its critical section before I
    /// enter); and the count of Theorem 9's proof (GlobalColor's rewrites make me re-read it
    /// on line 23 and stay blocked at most N − 1 times a passage). Only `bwb-gme` and its
    /// mutants claim them; the naive version is a negative control of safety.
    fn lemma_step(&self, i: usize, at: u32, args: [i64; 2]) -> Result<(), String> {
        if !E::GENERALIZED {
            return Ok(());
        }
        let mut g = self.ghost.lock().unwrap_or_else(|e| e.into_inner());
        let g = &mut *g;
        if at == line::FLIP {
            g.writes += 1;
        }
        match at {
            line::CHOOSING => {
                let mysession = args[0];
                let before: Vec<(usize, u64)> = (0..g.procs.len())
                    .filter(|&j| j != i)
                    .filter(|&j| g.procs[j].doorway_done && g.procs[j].session != mysession)
                    .map(|j| (j, g.procs[j].cs_done))
                    .collect();
                g.procs[i].before_me = before;
            }
            line::READ_COLOR => {
                let (changes, writes) = (g.changes, g.writes);
                let me = &mut g.procs[i];
                me.read_at = writes;
                me.rewrites = 0;
                me.window = true;
                me.flips = 0;
                me.color = args[0];
                me.session = args[1];
                me.epoch = changes;
                me.seen.clear();
                me.after.clear();
                me.past_cs = false;
            }
            line::READ_TOKEN => {
                let j = args[0] as usize;
                let t = Token::unpack(args[1]);
                let (done, past, epoch) =
                    (g.procs[j].cs_done, g.procs[j].past_cs, g.procs[j].epoch);
                let me = &mut g.procs[i];
                if t.color == me.color && t.session != 0 && t.session != me.session {
                    me.seen.push((j, t.number, done, past, epoch));
                }
            }
            line::DOORWAY => g.procs[i].doorway_done = true,
            line::WAIT_COLOR => {
                let writes = g.writes;
                let me = &mut g.procs[i];
                if writes > me.read_at && args[0] == me.color {
                    me.rewrites += 1;
                    let most = self.n as u64 - 1;
                    if me.rewrites > most {
                        return Err(format!(
                            "{}: GlobalColor rewrites blocked process {i} on line 23 {} times in one passage, more than N − 1 = {most}: each time GlobalColor had been written since its last read and still held its colour {} (waiting on process {})",
                            E::NAME,
                            me.rewrites,
                            color_name(args[0]),
                            args[1]
                        ));
                    }
                }
                me.read_at = writes;
            }
            line::NUMBER => {
                let mynumber = args[0];
                let me = &mut g.procs[i];
                me.number = mynumber;
                if mynumber >= 2 {
                    let smaller: Vec<_> =
                        me.seen.iter().filter(|s| s.1 < mynumber).copied().collect();
                    if smaller.is_empty() {
                        return Err(format!(
                            "{}: Lemma 7 broken: process {i} took number {mynumber} but read no conflicting process of its colour with a smaller number (read: {:?})",
                            E::NAME,
                            me.seen
                        ));
                    }
                    me.after = smaller
                        .iter()
                        .filter(|s| !s.3)
                        .map(|s| (s.0, s.2))
                        .collect();
                }
            }
            line::CS => {
                for &(j, done) in &g.procs[i].before_me {
                    if g.procs[j].cs_done == done {
                        return Err(format!(
                            "{}: Lemma 10 broken: process {i} entered its critical section before process {j}, conflicting, whose doorway ended before {i} wrote line 4, finished its own",
                            E::NAME
                        ));
                    }
                }
                for &(j, done) in &g.procs[i].after {
                    if g.procs[j].cs_done == done {
                        return Err(format!(
                            "{}: Lemma 7 broken: process {i} entered its critical section before process {j}, conflicting, of its colour and with a smaller number, finished its own",
                            E::NAME
                        ));
                    }
                }
            }
            line::EXIT => {
                let me = &mut g.procs[i];
                me.cs_done += 1;
                me.past_cs = true;
                me.doorway_done = false;
            }
            line::FLIP if args[0] != g.global_color => {
                let me = &g.procs[i];
                let witness = me.seen.iter().find(|s| s.1 < me.number && s.4 == g.changes);
                if witness.is_none() || me.epoch != g.changes {
                    return Err(format!(
                        "{}: Lemma 8 broken: process {i} (number {}) changed GlobalColor to {} but {}",
                        E::NAME,
                        me.number,
                        color_name(args[0]),
                        if me.epoch != g.changes {
                            format!(
                                "read it on line 5 before its last change ({} changes then, {} now)",
                                me.epoch, g.changes
                            )
                        } else {
                            format!(
                                "read no conflicting process of its colour with a smaller number that read GlobalColor since its last change (read: {:?})",
                                me.seen
                            )
                        }
                    ));
                }
                g.changes += 1;
                g.global_color = args[0];
                for (q, pq) in g.procs.iter_mut().enumerate() {
                    if pq.window {
                        pq.flips += 1;
                        if pq.flips > 1 {
                            return Err(format!(
                                "{}: Lemma 9 broken: GlobalColor changed twice (now {}) after process {q} read it on line 5 and before its exit ended; the second change by process {i}",
                                E::NAME,
                                color_name(args[0])
                            ));
                        }
                    }
                }
            }
            line::DONE => g.procs[i].window = false,
            _ => {}
        }
        Ok(())
    }

    fn check_invariants(&self, _exact: bool) -> Result<(), String> {
        let gc = self.global_color.peek();
        if gc != BLACK && gc != WHITE {
            return Err(format!("{}: GlobalColor = {gc}", E::NAME));
        }
        let bound = self.n as i64 + 1;
        for (j, r) in self.token.iter().enumerate() {
            let t = Token::unpack(r.peek());
            if !(0..=bound).contains(&t.number) {
                return Err(format!(
                    "{}: token number of process {j} = {} outside {{0, …, N + 1 = {bound}}}",
                    E::NAME,
                    t.number
                ));
            }
        }
        Ok(())
    }

    fn largest_token(&self) -> Option<i64> {
        self.token
            .iter()
            .map(|r| Token::unpack(r.peek()).number)
            .max()
    }

    fn claims(&self) -> Claims {
        Claims {
            concurrent_entry: true,
            ..Claims::BOUNDED_EXIT
        }
    }

    fn counter_example(&self) -> Option<CounterExample> {
        E::GENERALIZED.then_some(FIFE_COUNTER_EXAMPLE)
    }

    fn section_costs(&self) -> &'static [SectionCost] {
        if E::GENERALIZED {
            &SECTIONS
        } else {
            &[]
        }
    }
}

/// Seed 000 §8: BWBGME does not satisfy P7 FIFE. P0 (session 0) ends its doorway; P2 (session
/// 0, doorway-preceded by P0) passes the idle P1 and enters; P1 (session 1) writes its token
/// (session 1, ⊥, 0) and raises Choosing (lines 3–4) and stops; P0's lines 17–18 now wait on
/// P1, past P2 that entered.
pub const FIFE_COUNTER_EXAMPLE: CounterExample = CounterExample {
    property: "P7 FIFE",
    source: "seed 000 §8",
    threads: 3,
    sessions: 2,
    steps: &[
        Step::Doorway(0, 1),
        Step::Enter(2, 1),
        Step::Writes(1, 2),
        Step::Waits(0, 2),
    ],
};

#[cfg(test)]
mod tests {
    use super::*;

    /// Section 6's scenario, step by step on real threads: P_i and P_j (session S) inside
    /// white; P_i leaves; P_k (S) enters black; P_l (S′) takes black and waits; P_k leaves.
    /// Returns whether P_l got in while P_j was still inside.
    fn section6<L: Lock + 'static>(lock: L) -> bool {
        use std::sync::mpsc;
        use std::time::Duration;
        let (s, s2) = (0, 1);
        let lock = std::sync::Arc::new(lock);
        lock.enter(0, s); // P_i
        lock.enter(1, s); // P_j: same session, concurrent entry
        lock.exit(0, s); // P_i leaves (the naive exit flips GlobalColor to black)
        lock.enter(2, s); // P_k: same session, enters
        let (doorway_tx, doorway_rx) = mpsc::channel();
        let (inside_tx, inside_rx) = mpsc::channel();
        let l = lock.clone();
        let p_l = std::thread::spawn(move || {
            l.enter_traced(3, s2, &mut || doorway_tx.send(()).unwrap());
            inside_tx.send(()).unwrap();
            l.exit(3, s2);
        });
        doorway_rx.recv().unwrap(); // P_l has its token and waits
        lock.exit(2, s); // P_k leaves (the naive exit flips GlobalColor back)
        let overlapped = inside_rx.recv_timeout(Duration::from_secs(1)).is_ok();
        lock.exit(1, s); // P_j leaves: now P_l may enter in any case
        if !overlapped {
            inside_rx.recv().unwrap();
        }
        p_l.join().unwrap();
        overlapped
    }

    #[test]
    fn section6_scenario_breaks_the_naive_version_only() {
        use crate::mem::{NativeMemory, WaitPolicy};
        let params = Params::new(4, 1, WaitPolicy::YIELD);
        let mem = NativeMemory::new(WaitPolicy::YIELD);
        assert!(
            section6(NaiveBwbGme::new(mem.clone(), &params)),
            "naive: P_l joins P_j"
        );
        assert!(
            !section6(BwbGme::new(mem, &params)),
            "bwb-gme: P_l waits for P_j"
        );
    }

    /// Seed 000 §6's reason for line 28, as a scripted schedule on the step-gated memory with
    /// three processes: Z (session S, two passages), P_i (S), P_j (a conflicting S′). Z enters
    /// with number 1; P_i reads GlobalColor (white) on line 5 and stops; Z leaves, flips it to
    /// black, re-enters with number 1 past P_i (same session), leaves again and, seeing no white
    /// token (P_i's colour is still ⊥), is about to flip it back to white; P_i finishes its
    /// doorway with white; P_j takes black and number 2; P_i passes P_j (GlobalColor is black,
    /// P_j's colour) and enters; Z flips to white; P_j passes P_i (GlobalColor is no longer its
    /// colour) and enters beside P_i. Returns whether two conflicting processes were inside
    /// together.
    fn line_28_scenario<const MUT: u8>() -> bool {
        use crate::mem::gate::{Cut, Gate};
        use crate::mem::schedule::{Goal, Script};
        use crate::mem::{CountingMemory, Model};
        use std::sync::atomic::AtomicBool;
        let (z, pj, pi) = (0, 1, 2);
        let w = Goal::UntilWrite;
        let mut goals = vec![w(z), w(z), w(z), w(z), Goal::BeforeWrite(z)];
        goals.extend([w(pi), w(pi), Goal::Steps(pi, 1)]);
        goals.extend([w(z), w(z), w(z), w(z), w(z), w(z), Goal::BeforeWrite(z)]);
        goals.extend([w(pi), w(pi)]);
        goals.extend([w(pj), w(pj), w(pj), w(pj)]);
        goals.push(Goal::Steps(pi, 10));
        goals.extend([w(z), w(z)]);
        goals.push(Goal::Steps(pj, 10));
        let gate = Gate::new(3, Model::Cc, Box::new(Script::new(goals)), 100_000);
        let mem = CountingMemory::gated(gate.clone());
        let params = Params::new(3, 1, crate::mem::WaitPolicy::Spin);
        let lock = BwbGmeLock::<CountingMemory, Generalized, MUT>::new(mem, &params);
        let inside: Mutex<Vec<Option<usize>>> = Mutex::new(vec![None; 3]);
        let overlap = AtomicBool::new(false);
        let plans: [&[usize]; 3] = [&[0, 0], &[1], &[0]];
        std::thread::scope(|sc| {
            for (p, plan) in plans.iter().enumerate() {
                let (gate, lock, inside, overlap) = (&gate, &lock, &inside, &overlap);
                sc.spawn(move || {
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        gate.arrive(p);
                        for &s in *plan {
                            lock.enter(p, s);
                            {
                                let mut inside = inside.lock().unwrap();
                                if inside.iter().flatten().any(|&t| t != s) {
                                    overlap.store(true, std::sync::atomic::Ordering::Relaxed);
                                }
                                inside[p] = Some(s);
                            }
                            for _ in 0..50 {
                                gate.step(p, None);
                            }
                            inside.lock().unwrap()[p] = None;
                            lock.exit(p, s);
                        }
                        gate.finish(p);
                    }));
                    if let Err(e) = r {
                        assert!(e.downcast_ref::<Cut>().is_some(), "process {p} failed");
                    }
                });
            }
        });
        assert_eq!(gate.error(), None);
        overlap.load(std::sync::atomic::Ordering::Relaxed)
    }

    #[test]
    fn without_the_line_28_guard_conflicting_processes_meet_in_the_cs() {
        assert!(line_28_scenario::<{ mutant::NO_NUMBER_GUARD }>());
        assert!(!line_28_scenario::<0>(), "bwb-gme keeps them apart");
    }

    fn token(session: i64, color: i64, number: i64) -> i64 {
        Token {
            session,
            color,
            number,
        }
        .pack()
    }

    fn scheduled(n: usize) -> BwbGme<crate::mem::ScheduledMemory> {
        let params = Params::new(n, 1, crate::mem::WaitPolicy::Spin);
        BwbGme::new(crate::mem::ScheduledMemory, &params)
    }

    /// Makes `p` (session 8) a flipper Lemma 8 accepts: it reads `color` on line 5 and, while
    /// choosing number 2, process 3 (session 9, which read `color` just before) with number 1.
    fn ready_to_flip(l: &BwbGme<crate::mem::ScheduledMemory>, p: usize, color: i64) {
        l.lemma_step(3, line::READ_COLOR, [color, 9]).unwrap();
        l.lemma_step(p, line::READ_COLOR, [color, 8]).unwrap();
        l.lemma_step(p, line::READ_TOKEN, [3, token(9, color, 1)])
            .unwrap();
        l.lemma_step(p, line::NUMBER, [2, 0]).unwrap();
    }

    #[test]
    fn lemma_9_counts_changes_of_global_color_inside_a_window() {
        let l = scheduled(4);
        l.lemma_step(0, line::READ_COLOR, [WHITE, 1]).unwrap();
        ready_to_flip(&l, 1, WHITE);
        l.lemma_step(1, line::FLIP, [BLACK, 0]).unwrap();
        l.lemma_step(1, line::DONE, [0, 0]).unwrap();
        // Writing the colour it already has changes nothing.
        l.lemma_step(2, line::FLIP, [BLACK, 0]).unwrap();
        ready_to_flip(&l, 2, BLACK);
        let e = l.lemma_step(2, line::FLIP, [WHITE, 0]).unwrap_err();
        assert!(e.contains("Lemma 9") && e.contains("process 0"), "{e}");
        // A window closed by the end of the exit sees no more changes.
        let l = scheduled(4);
        l.lemma_step(0, line::READ_COLOR, [WHITE, 1]).unwrap();
        ready_to_flip(&l, 1, WHITE);
        l.lemma_step(1, line::FLIP, [BLACK, 0]).unwrap();
        l.lemma_step(1, line::DONE, [0, 0]).unwrap();
        l.lemma_step(0, line::DONE, [0, 0]).unwrap();
        ready_to_flip(&l, 2, BLACK);
        l.lemma_step(2, line::FLIP, [WHITE, 0]).unwrap();
    }

    #[test]
    fn lemma_8_wants_the_flipper_and_its_smaller_number_read_since_the_last_change() {
        // Number 1 (no smaller conflicting number read): broken, as without line 28.
        let l = scheduled(4);
        l.lemma_step(1, line::READ_COLOR, [WHITE, 1]).unwrap();
        l.lemma_step(1, line::NUMBER, [1, 0]).unwrap();
        let e = l.lemma_step(1, line::FLIP, [BLACK, 0]).unwrap_err();
        assert!(e.contains("Lemma 8") && e.contains("number 1"), "{e}");
        // The smaller number read on line 5 before the last change: broken.
        let l = scheduled(4);
        ready_to_flip(&l, 1, WHITE);
        l.lemma_step(1, line::FLIP, [BLACK, 0]).unwrap();
        l.lemma_step(1, line::DONE, [0, 0]).unwrap();
        // Process 3 read GlobalColor before process 1 changed it.
        l.lemma_step(2, line::READ_COLOR, [BLACK, 8]).unwrap();
        l.lemma_step(2, line::READ_TOKEN, [3, token(9, BLACK, 1)])
            .unwrap();
        l.lemma_step(2, line::NUMBER, [2, 0]).unwrap();
        let e = l.lemma_step(2, line::FLIP, [WHITE, 0]).unwrap_err();
        assert!(
            e.contains("Lemma 8") && e.contains("since its last change"),
            "{e}"
        );
        // Both since the last change: fine.
        let l = scheduled(4);
        ready_to_flip(&l, 1, WHITE);
        l.lemma_step(1, line::FLIP, [BLACK, 0]).unwrap();
        l.lemma_step(1, line::DONE, [0, 0]).unwrap();
        ready_to_flip(&l, 2, BLACK);
        l.lemma_step(2, line::FLIP, [WHITE, 0]).unwrap();
    }

    #[test]
    fn rewrites_of_global_color_block_a_line_23_wait_at_most_n_minus_1_times() {
        let l = scheduled(3);
        l.lemma_step(0, line::READ_COLOR, [WHITE, 1]).unwrap();
        // A read with no write since the last one is not a re-read a rewrite caused.
        l.lemma_step(0, line::WAIT_COLOR, [WHITE, 1]).unwrap();
        l.lemma_step(0, line::WAIT_COLOR, [WHITE, 1]).unwrap();
        for _ in 0..2 {
            l.lemma_step(1, line::FLIP, [WHITE, 0]).unwrap();
            l.lemma_step(0, line::WAIT_COLOR, [WHITE, 1]).unwrap();
        }
        l.lemma_step(2, line::FLIP, [WHITE, 0]).unwrap();
        let e = l.lemma_step(0, line::WAIT_COLOR, [WHITE, 2]).unwrap_err();
        assert!(
            e.contains("GlobalColor rewrites") && e.contains("3 times"),
            "{e}"
        );
        // A new passage (line 5) starts the count again.
        l.lemma_step(0, line::READ_COLOR, [WHITE, 1]).unwrap();
        l.lemma_step(1, line::FLIP, [WHITE, 0]).unwrap();
        l.lemma_step(0, line::WAIT_COLOR, [WHITE, 1]).unwrap();
    }

    #[test]
    fn lemma_10_wants_a_conflicting_doorway_ended_before_my_line_4_to_finish_first() {
        let l = scheduled(3);
        l.lemma_step(0, line::READ_COLOR, [WHITE, 1]).unwrap();
        l.lemma_step(0, line::DOORWAY, [0, 0]).unwrap();
        // Process 2 (same session) is not held back; process 1 (conflicting) is.
        l.lemma_step(2, line::CHOOSING, [1, 0]).unwrap();
        l.lemma_step(2, line::CS, [0, 0]).unwrap();
        l.lemma_step(1, line::CHOOSING, [2, 0]).unwrap();
        let e = l.lemma_step(1, line::CS, [0, 0]).unwrap_err();
        assert!(e.contains("Lemma 10") && e.contains("process 0"), "{e}");
        // Once process 0 has left its critical section, process 1 may enter.
        let l = scheduled(3);
        l.lemma_step(0, line::READ_COLOR, [WHITE, 1]).unwrap();
        l.lemma_step(0, line::DOORWAY, [0, 0]).unwrap();
        l.lemma_step(1, line::CHOOSING, [2, 0]).unwrap();
        l.lemma_step(0, line::EXIT, [0, 0]).unwrap();
        l.lemma_step(1, line::CS, [0, 0]).unwrap();
    }

    #[test]
    fn lemma_7_wants_a_smaller_conflicting_number_of_my_colour_to_finish_first() {
        // A number of 2 above a process of my own session only: broken.
        let l = scheduled(3);
        l.lemma_step(0, line::READ_COLOR, [WHITE, 1]).unwrap();
        l.lemma_step(0, line::READ_TOKEN, [1, token(1, WHITE, 1)])
            .unwrap();
        l.lemma_step(0, line::READ_TOKEN, [2, token(2, BLACK, 1)])
            .unwrap();
        let e = l.lemma_step(0, line::NUMBER, [2, 0]).unwrap_err();
        assert!(e.contains("Lemma 7"), "{e}");
        // Above a conflicting one of my colour: fine, but only once it has left its CS.
        let l = scheduled(3);
        l.lemma_step(1, line::READ_COLOR, [WHITE, 2]).unwrap();
        l.lemma_step(0, line::READ_COLOR, [WHITE, 1]).unwrap();
        l.lemma_step(0, line::READ_TOKEN, [1, token(2, WHITE, 1)])
            .unwrap();
        l.lemma_step(0, line::NUMBER, [2, 0]).unwrap();
        let e = l.lemma_step(0, line::CS, [0, 0]).unwrap_err();
        assert!(e.contains("before process 1"), "{e}");
        l.lemma_step(1, line::EXIT, [0, 0]).unwrap();
        l.lemma_step(0, line::CS, [0, 0]).unwrap();
        // Read while it was already leaving: nothing to wait for.
        let l = scheduled(3);
        l.lemma_step(1, line::READ_COLOR, [WHITE, 2]).unwrap();
        l.lemma_step(1, line::EXIT, [0, 0]).unwrap();
        l.lemma_step(0, line::READ_COLOR, [WHITE, 1]).unwrap();
        l.lemma_step(0, line::READ_TOKEN, [1, token(2, WHITE, 1)])
            .unwrap();
        l.lemma_step(0, line::NUMBER, [2, 0]).unwrap();
        l.lemma_step(0, line::CS, [0, 0]).unwrap();
    }

    #[test]
    fn the_naive_version_claims_no_lemma() {
        let params = Params::new(3, 1, crate::mem::WaitPolicy::Spin);
        let l = NaiveBwbGme::new(crate::mem::ScheduledMemory, &params);
        l.lemma_step(0, line::READ_COLOR, [WHITE, 1]).unwrap();
        l.lemma_step(0, line::NUMBER, [2, 0]).unwrap();
        l.lemma_step(1, line::FLIP, [BLACK, 0]).unwrap();
        l.lemma_step(1, line::DONE, [0, 0]).unwrap();
        l.lemma_step(1, line::FLIP, [WHITE, 0]).unwrap();
    }

    #[test]
    fn tokens_pack_and_unpack() {
        for t in [
            Token::EMPTY,
            Token {
                session: 7,
                color: BLACK,
                number: 3,
            },
            Token {
                session: 1 << 20,
                color: WHITE,
                number: 0xf_ffff,
            },
        ] {
            assert_eq!(Token::unpack(t.pack()), t);
        }
        assert_eq!(opposite(BLACK), WHITE);
        assert_eq!(opposite(WHITE), BLACK);
    }
}
