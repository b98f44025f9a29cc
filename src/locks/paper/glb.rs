//! `glb`: the Generalized Lamport Bakery algorithm for group mutual exclusion, seed 000 (He,
//! Gopalakrishnan, Gafni, "Group mutual exclusion in linear time and space"), Fig. 1.
//!
//! Lamport's Bakery where a process waits only on processes of a *conflicting* session: lines 8
//! and 9 pass any process whose Session is 0 (idle) or the same as ours. Mutual exclusion
//! (no two sessions inside together), starvation freedom, bounded exit, concurrent entry and FCFS
//! (P1–P5), O(N) RMRs in the CC model, O(N) space, unbounded tokens (Theorem 1).
//!
//! Sessions: the figure's sessions are positive integers with 0 meaning "none"; lockbench's
//! session s is stored as s + 1.

use crate::locks::paper::IDS_DIFFER;
use crate::locks::{
    Bound, Claims, CounterExample, Lock, LockInfo, Mutant, Params, Problem, SectionCost, Step,
};
use crate::mem::{Memory, Model, Register, ScheduledMemory};

/// What the registry and `lockbench list` say of `glb`: its paper and figure, its claims.
pub const INFO: LockInfo = LockInfo {
    name: "glb",
    problem: Problem::Gme,
    source: "seed 000 Fig. 1 (Generalized Lamport Bakery)",
    fcfs: true,
    bounded: false,
    rmr: "O(N) CC (seed 000 §3, Theorem 1); DSM: no claim",
    safe: true,
    notes: "P1–P5 with unbounded tokens",
    bound: rmr_bound,
    mutants,
    worst_case: crate::locks::no_worst_case,
};

/// CC: doorway N + 4 (lines 3–6), lines 8 and 9 at most five each per other process, exit 2.
/// DSM: seed 000 claims nothing.
fn rmr_bound(model: Model, n: usize) -> Option<Bound> {
    (model != Model::Dsm).then(|| {
        Bound::linear(
            11,
            -4,
            n,
            "seed 000 §3: doorway N+4, lines 8 and 9 ≤ 5 each per other process, exit 2",
        )
    })
}

/// Seed 000 §3 by section, in CC: the doorway (lines 3–6) at most N + 4, the exit (lines
/// 12–13) exactly 2, its two writes.
const SECTIONS: [SectionCost; 2] = [
    SectionCost::at_most("exit", "12–13", "2", |_| 2).exactly(),
    SectionCost::at_most("doorway", "3–6", "N + 4", |n| n as u64 + 4),
];

/// The seeded mutants of Fig. 1 (`verify --mutants glb`).
fn mutants() -> Vec<Mutant> {
    type S = ScheduledMemory;
    use mutant::*;
    vec![
        Mutant::new("no-choosing-wait", "8", "wait until Choosing[j] = false ∨ … dropped", GlbLock::<S, NO_CHOOSING_WAIT>::new),
        Mutant::new("token-wait-ignores-session", "9", "the Session[j] ∈ {0, mysession} clause dropped", GlbLock::<S, TOKEN_WAIT_IGNORES_SESSION>::new),
        Mutant::new("no-token-reset", "12", "Token[i] := 0 dropped", GlbLock::<S, NO_TOKEN_RESET>::new)
            .equivalent("line 13 still resets Session[i] to 0, which alone lets every wait on i pass; a stale token only delays waiters until i's next line 5 writes a larger one, which it reads above theirs"),
        Mutant::new("session-after-token", "4", "Session[i] := mysession moved after line 5", GlbLock::<S, SESSION_AFTER_TOKEN>::new),
        Mutant::new("pair-le", "9", "(Token[i], i) < (Token[j], j) becomes ≤", GlbLock::<S, PAIR_LE>::new).equivalent(IDS_DIFFER),
    ]
}

/// Seeded mutants for `verify --mutants`, each one line of Fig. 1 changed; 0 is the algorithm.
/// `MUT` is a compile-time constant, so the native build (`MUT = 0`) folds every branch away.
pub mod mutant {
    /// Line 8 dropped: no wait for j to finish choosing.
    pub const NO_CHOOSING_WAIT: u8 = 1;
    /// Line 9 without its session clause: waits on compatible processes too.
    pub const TOKEN_WAIT_IGNORES_SESSION: u8 = 2;
    /// Line 12 dropped: the token is never reset.
    pub const NO_TOKEN_RESET: u8 = 3;
    /// Line 4 after line 5 (write reordered): the session is published after the token.
    pub const SESSION_AFTER_TOKEN: u8 = 4;
    /// Line 9 `<` turned into `≤` on (token, id) pairs: equivalent, ids differ so pairs never
    /// tie.
    pub const PAIR_LE: u8 = 5;
}

/// `glb`.
pub type Glb<M> = GlbLock<M, 0>;

/// The Generalized Lamport Bakery over memory `M`, mutant `MUT` (0: the algorithm).
pub struct GlbLock<M: Memory, const MUT: u8> {
    mem: M,
    n: usize,
    session: Box<[M::Reg]>,
    token: Box<[M::Reg]>,
    choosing: Box<[M::Reg]>,
}

impl<M: Memory, const MUT: u8> GlbLock<M, MUT> {
    /// GLB for `params.n` processes: Session and Token all 0, Choosing all false.
    pub fn new(mem: M, params: &Params) -> Self {
        let n = params.n;
        let lock = GlbLock {
            session: mem.per_process(n, 0),
            token: mem.per_process(n, 0),
            choosing: mem.per_process(n, 0),
            mem,
            n,
        };
        lock.mem.label("Session", &lock.session);
        lock.mem.label("Token", &lock.token);
        lock.mem.label("Choosing", &lock.choosing);
        lock
    }

    #[inline(always)]
    fn acquire(&self, i: usize, s: usize, mut doorway_done: impl FnMut()) {
        let mysession = s as i64 + 1;
        // 3: Choosing[i] := true
        self.mem.line(i, 3);
        self.choosing[i].write(i, 1);
        // 4: Session[i] := mysession
        self.mem.line(i, 4);
        if MUT != mutant::SESSION_AFTER_TOKEN {
            self.session[i].write(i, mysession);
        }
        // 5: Token[i] := 1 + max({Token[j] | 1 ≤ j ≤ n})
        self.mem.line(i, 5);
        let max = (0..self.n)
            .map(|j| self.token[j].read(i))
            .max()
            .unwrap_or(0);
        let mine = max + 1;
        self.token[i].write(i, mine);
        if MUT == mutant::SESSION_AFTER_TOKEN {
            self.mem.line(i, 4);
            self.session[i].write(i, mysession);
        }
        // 6: Choosing[i] := false
        self.mem.line(i, 6);
        self.choosing[i].write(i, 0);
        doorway_done();
        let compatible = |j: usize| {
            let sj = self.session[j].read(i);
            sj == 0 || sj == mysession
        };
        // 7: for j := 1 to N (j = i passes both waits: Session[i] = mysession)
        for j in (0..self.n).filter(|&j| j != i) {
            // 8: wait until (Choosing[j] = false) ∨ (Session[j] ∈ {0, mysession})
            self.mem.line(i, 8);
            if MUT != mutant::NO_CHOOSING_WAIT {
                self.mem
                    .wait_until(i, || self.choosing[j].read(i) == 0 || compatible(j));
            }
            // 9: wait until ((Token[i], i) < (Token[j], j)) ∨ (Token[j] = 0)
            //               ∨ (Session[j] ∈ {0, mysession})
            self.mem.line(i, 9);
            self.mem.wait_until(i, || {
                let tj = self.token[j].read(i);
                match MUT {
                    mutant::TOKEN_WAIT_IGNORES_SESSION => tj == 0 || (mine, i) < (tj, j),
                    mutant::PAIR_LE => tj == 0 || (mine, i) <= (tj, j) || compatible(j),
                    _ => tj == 0 || (mine, i) < (tj, j) || compatible(j),
                }
            });
        }
        // 11: CRITICAL SECTION
    }
}

impl<M: Memory, const MUT: u8> Lock for GlbLock<M, MUT> {
    fn enter(&self, p: usize, session: usize) {
        self.acquire(p, session, || {})
    }

    fn enter_traced(&self, p: usize, session: usize, doorway_done: &mut dyn FnMut()) {
        self.acquire(p, session, doorway_done)
    }

    fn exit(&self, p: usize, _session: usize) {
        // 12: Token[i] := 0
        self.mem.line(p, 12);
        if MUT != mutant::NO_TOKEN_RESET {
            self.token[p].write(p, 0);
        }
        // 13: Session[i] := 0
        self.mem.line(p, 13);
        self.session[p].write(p, 0);
    }

    fn check_invariants(&self, _exact: bool) -> Result<(), String> {
        for (j, r) in self.token.iter().enumerate() {
            let v = r.peek();
            if v < 0 {
                return Err(format!("glb: token of process {j} = {v} < 0"));
            }
        }
        Ok(())
    }

    /// GLB's tokens are unbounded (seed 000 Table 1): the largest held, so `verify` shows them
    /// growing past any bound in N.
    fn largest_token(&self) -> Option<i64> {
        self.token.iter().map(|r| r.peek()).max()
    }

    fn claims(&self) -> Claims {
        Claims {
            concurrent_entry: true,
            ..Claims::BOUNDED_EXIT
        }
    }

    fn counter_example(&self) -> Option<CounterExample> {
        Some(FIFE_COUNTER_EXAMPLE)
    }

    fn section_costs(&self) -> &'static [SectionCost] {
        &SECTIONS
    }
}

/// Seed 000 §8: GLB does not satisfy P7 FIFE. P0 (session 0) ends its doorway; P2 (session 0,
/// doorway-preceded by P0) passes the idle P1 and enters; P1 (session 1) raises Choosing and
/// writes its Session (lines 3–4) and stops; P0's line 8 now waits on P1, past P2 that entered.
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
mod tests {}
