//! `burns-lamport`: the one-bit mutual exclusion algorithm of Burns and of Lamport, as stated in
//! seed 000 (He, Gopalakrishnan, Gafni), Fig. 2.
//!
//! Each process owns one bit. It raises it and yields to any lower-numbered process whose bit is
//! up (lowering its own and starting over, lines 1–8), then waits for every higher-numbered bit
//! to fall (lines 9–11). Mutual exclusion and deadlock freedom with N bits, but no FCFS and no
//! starvation freedom (a low-numbered process can overtake forever), and Section 4 of seed 000
//! gives a schedule costing Ω(N²) RMRs in the CC model. The figure shows the entry only; the exit
//! lowers the bit (the bit is "true while competing or inside").

use crate::locks::{Bound, Claims, Lock, LockInfo, Mutant, Params, Problem, WorstCase};
use crate::mem::schedule::{Goal, Script};
use crate::mem::{Memory, Model, Register, ScheduledMemory};

/// What the registry and `lockbench list` say of `burns-lamport`: its paper and figure, its claims.
pub const INFO: LockInfo = LockInfo {
    name: "burns-lamport",
    problem: Problem::Mutex,
    source: "seed 000 Fig. 2 (Burns–Lamport)",
    fcfs: false,
    bounded: true,
    rmr: "Ω(N²) CC worst case (seed 000 §4); DSM: no claim",
    safe: true,
    notes: "one bit per process; deadlock-free, not starvation-free",
    bound: rmr_bound,
    mutants,
    worst_case,
};

/// CC: a lower bound, the worst case of seed 000 §4. DSM: no claim.
fn rmr_bound(model: Model, n: usize) -> Option<Bound> {
    (model != Model::Dsm).then(|| {
        Bound::lower(
            "N(N−1)/2",
            (n * (n.saturating_sub(1)) / 2) as u64,
            "seed 000 §4: P_N is blocked N(N−1)/2 times, each at least one RMR",
        )
    })
}

/// Seed 000 §4's worst case, at two processes or more: the victim is P_N.
fn worst_case(n: usize, _passages: usize) -> Option<WorstCase> {
    (n >= 2).then(|| WorstCase {
        script: Script::new(script(n)),
        detail: "scripted: seed 000 §4 (P_N blocked by every lower process in turn)",
        found_by: "scripted: seed 000 §4",
    })
}

/// Seed 000 §4: P_N raises its bit; each lower process in turn raises its own just after, blocks
/// the one above it, and makes P_N retry and block on it; the lowest then enters and leaves, and
/// the round repeats with one process fewer. P_N is blocked N(N−1)/2 times.
fn script(n: usize) -> Vec<Goal> {
    let hi = n - 1;
    let mut goals = Vec::new();
    for lo in 0..hi {
        goals.push(Goal::UntilWrite(hi));
        for m in (lo..hi).rev() {
            goals.push(Goal::UntilWrite(m));
            goals.push(Goal::UntilParked(m + 1));
            if m + 1 != hi {
                goals.push(Goal::UntilParked(hi));
            }
        }
        goals.push(Goal::UntilDone(lo));
    }
    goals.push(Goal::UntilDone(hi));
    goals
}

/// The seeded mutants of the one-bit algorithm (`verify --mutants burns-lamport`).
fn mutants() -> Vec<Mutant> {
    type S = ScheduledMemory;
    use mutant::*;
    vec![
        Mutant::new(
            "keep-bit",
            "4",
            "Competing[i] := false dropped",
            BurnsLamportLock::<S, KEEP_BIT>::new,
        ),
        Mutant::new(
            "no-higher-wait",
            "9–11",
            "wait for higher-numbered bits dropped",
            BurnsLamportLock::<S, NO_HIGHER_WAIT>::new,
        ),
        Mutant::new(
            "no-raise",
            "1",
            "Competing[i] := true skipped",
            BurnsLamportLock::<S, NO_RAISE>::new,
        ),
    ]
}

/// Seeded mutants for `verify --mutants`, each one line of Fig. 2 changed; 0 is the algorithm.
/// `MUT` is a compile-time constant, so the native build (`MUT = 0`) folds every branch away.
pub mod mutant {
    /// Line 4 dropped: a process yielding to a lower one keeps its own bit up.
    pub const KEEP_BIT: u8 = 1;
    /// Lines 9–11 dropped: no wait for higher-numbered processes.
    pub const NO_HIGHER_WAIT: u8 = 2;
    /// Line 1 skipped: the bit is never raised.
    pub const NO_RAISE: u8 = 3;
}

/// `burns-lamport`.
pub type BurnsLamport<M> = BurnsLamportLock<M, 0>;

/// Burns–Lamport over memory `M`, mutant `MUT` (0: the algorithm).
pub struct BurnsLamportLock<M: Memory, const MUT: u8> {
    mem: M,
    n: usize,
    competing: Box<[M::Reg]>,
}

impl<M: Memory, const MUT: u8> BurnsLamportLock<M, MUT> {
    /// The algorithm for `params.n` processes.
    pub fn new(mem: M, params: &Params) -> Self {
        BurnsLamportLock {
            competing: mem.per_process(params.n, 0),
            mem,
            n: params.n,
        }
    }
}

impl<M: Memory, const MUT: u8> Lock for BurnsLamportLock<M, MUT> {
    fn enter(&self, i: usize, _session: usize) {
        'l: loop {
            // 1: L: Competing[i] := true
            if MUT != mutant::NO_RAISE {
                self.competing[i].write(i, 1);
            }
            // 2–8: for j := 1 to i − 1
            for j in 0..i {
                // 3: if Competing[j] then
                if self.competing[j].read(i) != 0 {
                    // 4: Competing[i] := false
                    if MUT != mutant::KEEP_BIT {
                        self.competing[i].write(i, 0);
                    }
                    // 5: wait until not Competing[j]
                    self.mem.wait_until(i, || self.competing[j].read(i) == 0);
                    // 6: goto L
                    continue 'l;
                }
            }
            break;
        }
        // 9–11: for j := i + 1 to N: wait until not Competing[j]
        for j in i + 1..self.n {
            if MUT != mutant::NO_HIGHER_WAIT {
                self.mem.wait_until(i, || self.competing[j].read(i) == 0);
            }
        }
    }

    fn exit(&self, i: usize, _session: usize) {
        self.competing[i].write(i, 0);
    }

    fn check_invariants(&self, _exact: bool) -> Result<(), String> {
        for (j, r) in self.competing.iter().enumerate() {
            let v = r.peek();
            if v != 0 && v != 1 {
                return Err(format!("burns-lamport: bit of process {j} = {v}"));
            }
        }
        Ok(())
    }

    fn claims(&self) -> Claims {
        Claims::BOUNDED_EXIT
    }
}

#[cfg(test)]
mod tests {}
