//! `lamport-bakery`: Lamport's Bakery algorithm as stated in seed 002 (Jayanti, Tan, Friedland,
//! Katz, "Bounding Lamport's Bakery Algorithm"), Fig. 1; the same algorithm is stated in seed 001.
//!
//! A process takes a token larger than every token it sees (the doorway, lines 1–4), then waits
//! for every process with a smaller (token, id) to leave (lines 5–6). Mutual exclusion, FCFS
//! (doorway FIFO), starvation freedom; tokens grow without bound (Section 3.1 of seed 002 shows
//! even their range is unbounded). `token = −1` means "no token", as in the figure.

use crate::locks::paper::IDS_DIFFER;
use crate::locks::{Bound, Claims, Lock, LockInfo, Mutant, Params, Problem, WorstCase};
use crate::mem::schedule::{Goal, Script};
use crate::mem::{Memory, Model, Register, ScheduledMemory};

/// What the registry and `lockbench list` say of `lamport-bakery`: its paper and figure, its claims.
pub const INFO: LockInfo = LockInfo {
    name: "lamport-bakery",
    problem: Problem::Mutex,
    source: "seed 002 Fig. 1 (Lamport's Bakery)",
    fcfs: true,
    bounded: false,
    rmr: "O(N) CC (seed 000 §3's GLB argument; seed 002 claims none); DSM: no claim, waits spin on others' registers (unbounded)",
    safe: true,
    notes: "tokens grow without bound, and so can their range (seed 002 §3.1)",
    bound: rmr_bound,
    mutants,
    worst_case,
};

/// CC: doorway N + 3 (lines 1–4), waiting ≤ 10 per other process (lines 5 and 6, as lines 8
/// and 9 of GLB in seed 000 §3: at most five each), exit 1. DSM: no claim.
fn rmr_bound(model: Model, n: usize) -> Option<Bound> {
    (model != Model::Dsm).then(|| {
        Bound::linear(
            11,
            -6,
            n,
            "seed 000 §3's GLB argument applied to seed 002 Fig. 1: doorway N+3, ≤ 10 per other process waiting, exit 1",
        )
    })
}

/// Seed 002 §3.1's schedule at two processes: the token range grows by one per cycle (Fig. 1
/// writes once from line 6 through its exit).
fn worst_case(n: usize, passages: usize) -> Option<WorstCase> {
    (n == 2).then(|| WorstCase {
        script: bakery_scenario(passages.saturating_sub(1), 1),
        detail: "scripted: seed 002 §3.1 (Lamport's token range grows one per cycle)",
        found_by: "scripted: seed 002 §3.1",
    })
}

/// Seed 002 §3.1 at two processes: both finish the doorway; then, each cycle, both pass line 5;
/// the one with the smaller token (`first`) enters, leaves, and stops its next doorway just
/// before writing its token; the other enters, leaves and completes a doorway (reading −1); the
/// first then writes its token. `writes_to_exit` is the number of writes from line 6 through
/// the exit (1 for Fig. 1, 2 for Fig. 2, which also writes X), `doorway_writes` the writes of
/// the doorway (3 for both).
pub(crate) fn bakery_scenario(cycles: usize, writes_to_exit: usize) -> Script {
    let mut goals = Vec::new();
    for p in 0..2 {
        goals.extend(std::iter::repeat_n(Goal::UntilWrite(p), 3));
    }
    for _ in 0..cycles {
        // Line 5, both: gettoken of the other is false. Then the race decides who is first.
        goals.push(Goal::Steps(0, 1));
        goals.push(Goal::Steps(1, 1));
        goals.push(Goal::Race(0, 1));
    }
    Script::new(goals).with_expand(Box::new(move |first, second| {
        let mut g = Vec::new();
        // first: line 6, CS, exit, then its new doorway up to (not including) the token write.
        g.extend(std::iter::repeat_n(
            Goal::UntilWrite(first),
            writes_to_exit + 1,
        ));
        g.push(Goal::BeforeWrite(first));
        // second: line 6 (token of first is −1), CS, exit, and a whole doorway.
        g.extend(std::iter::repeat_n(
            Goal::UntilWrite(second),
            writes_to_exit + 3,
        ));
        // first: writes its token and gettoken := false.
        g.extend(std::iter::repeat_n(Goal::UntilWrite(first), 2));
        g
    }))
}

/// The seeded mutants of Fig. 1 (`verify --mutants lamport-bakery`).
fn mutants() -> Vec<Mutant> {
    type S = ScheduledMemory;
    use mutant::*;
    vec![
        Mutant::new(
            "no-gettoken",
            "1",
            "gettoken_i := true skipped",
            LamportBakeryLock::<S, NO_GETTOKEN>::new,
        ),
        Mutant::new(
            "no-choosing-wait",
            "5",
            "wait till gettoken_j = false dropped",
            LamportBakeryLock::<S, NO_CHOOSING_WAIT>::new,
        ),
        Mutant::new(
            "token-le",
            "6",
            "[token_i, i] < [token_j, j] becomes token_i ≤ token_j",
            LamportBakeryLock::<S, TOKEN_LE>::new,
        ),
        Mutant::new(
            "pair-le",
            "6",
            "[token_i, i] < [token_j, j] becomes ≤",
            LamportBakeryLock::<S, PAIR_LE>::new,
        )
        .equivalent(IDS_DIFFER),
    ]
}

/// Seeded mutants for `verify --mutants`, each one line of Fig. 1 changed; 0 is the algorithm.
/// `MUT` is a compile-time constant, so the native build (`MUT = 0`) folds every branch away.
pub mod mutant {
    /// Line 1 skipped: gettoken_i is never raised.
    pub const NO_GETTOKEN: u8 = 1;
    /// Line 5 dropped: no wait for j to finish choosing.
    pub const NO_CHOOSING_WAIT: u8 = 2;
    /// Line 6 compares tokens alone with `≤` (the id tie-break lost).
    pub const TOKEN_LE: u8 = 3;
    /// Line 6 `<` turned into `≤` on the pairs: equivalent, ids differ so pairs never tie.
    pub const PAIR_LE: u8 = 4;
}

/// `lamport-bakery`.
pub type LamportBakery<M> = LamportBakeryLock<M, 0>;

/// Lamport's Bakery over memory `M`, mutant `MUT` (0: the algorithm).
pub struct LamportBakeryLock<M: Memory, const MUT: u8> {
    mem: M,
    n: usize,
    /// `gettoken_i`: P_i is choosing its token (1) or not (0).
    gettoken: Box<[M::Reg]>,
    /// `token_i`: P_i's token, −1 when it has none.
    token: Box<[M::Reg]>,
}

impl<M: Memory, const MUT: u8> LamportBakeryLock<M, MUT> {
    /// A bakery for `params.n` processes.
    pub fn new(mem: M, params: &Params) -> Self {
        let n = params.n;
        let lock = LamportBakeryLock {
            gettoken: mem.per_process(n, 0),
            token: mem.per_process(n, -1),
            mem,
            n,
        };
        lock.mem.label("gettoken", &lock.gettoken);
        lock.mem.label("token", &lock.token);
        lock
    }

    #[inline(always)]
    fn acquire(&self, i: usize, mut doorway_done: impl FnMut()) {
        // 1: gettoken_i := true
        self.mem.line(i, 1);
        if MUT != mutant::NO_GETTOKEN {
            self.gettoken[i].write(i, 1);
        }
        // 2: S := {token_j | 1 ≤ j ≤ n}
        self.mem.line(i, 2);
        let max = (0..self.n)
            .map(|j| self.token[j].read(i))
            .max()
            .unwrap_or(-1);
        // 3: token_i := max(S) + 1
        let mine = max + 1;
        self.mem.line(i, 3);
        self.token[i].write(i, mine);
        // 4: gettoken_i := false
        self.mem.line(i, 4);
        self.gettoken[i].write(i, 0);
        doorway_done();
        for j in (0..self.n).filter(|&j| j != i) {
            // 5: wait till gettoken_j = false
            self.mem.line(i, 5);
            if MUT != mutant::NO_CHOOSING_WAIT {
                self.mem.wait_until(i, || self.gettoken[j].read(i) == 0);
            }
            // 6: wait till (token_j = −1) ∨ ([token_i, i] < [token_j, j])
            self.mem.line(i, 6);
            self.mem.wait_until(i, || {
                let t = self.token[j].read(i);
                t == -1
                    || match MUT {
                        mutant::TOKEN_LE => mine <= t,
                        mutant::PAIR_LE => (mine, i) <= (t, j),
                        _ => (mine, i) < (t, j),
                    }
            });
        }
        // 7: CS
    }
}

impl<M: Memory, const MUT: u8> Lock for LamportBakeryLock<M, MUT> {
    fn enter(&self, p: usize, _session: usize) {
        self.acquire(p, || {})
    }

    fn enter_traced(&self, p: usize, _session: usize, doorway_done: &mut dyn FnMut()) {
        self.acquire(p, doorway_done)
    }

    fn exit(&self, p: usize, _session: usize) {
        // 8: token_i := −1
        self.mem.line(p, 8);
        self.token[p].write(p, -1);
    }

    fn token_range(&self) -> Option<i64> {
        token_range(&self.token)
    }

    fn check_invariants(&self, _exact: bool) -> Result<(), String> {
        for (j, t) in self.token.iter().enumerate() {
            let v = t.peek();
            if v < -1 {
                return Err(format!("lamport-bakery: token of process {j} is {v} < −1"));
            }
        }
        Ok(())
    }

    fn claims(&self) -> Claims {
        Claims::BOUNDED_EXIT
    }
}

/// range_t of seed 002 §3: the largest minus the smallest non-negative token (None: no token).
pub(crate) fn token_range<R: Register>(tokens: &[R]) -> Option<i64> {
    let held = tokens.iter().map(|t| t.peek()).filter(|&v| v >= 0);
    let (lo, hi) = held.fold((i64::MAX, i64::MIN), |(lo, hi), v| (lo.min(v), hi.max(v)));
    (lo <= hi).then(|| hi - lo)
}

#[cfg(test)]
mod tests {}
