//! The papers' RMR bounds per passage, as formulas and evaluated at N.
//!
//! Upper bounds c·N + d are counted line by line from the figures, with the waiting-room
//! constants taken from the papers' own RMR arguments (cited per lock); a bound is given only
//! where the paper (or the reference lock's folklore analysis) claims one for the model.

use serde::Serialize;

use crate::mem::Model;

/// Which way a bound goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// No passage may cost more.
    Upper,
    /// The paper's worst-case schedule makes one passage cost at least this much.
    Lower,
}

/// A bound on RMRs per passage.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Bound {
    /// Upper (every passage) or lower (the paper's worst case).
    pub direction: Direction,
    /// The formula in N (processes).
    pub formula: String,
    /// Its value at this N.
    pub value: u64,
    /// The constant c of c·N (linear bounds), printed beside the check.
    pub c: Option<u64>,
    /// Where it comes from.
    pub source: String,
}

fn linear(c: u64, d: i64, n: usize, source: &str) -> Bound {
    let value = (c as i64 * n as i64 + d).max(0) as u64;
    let formula = match d {
        0 => format!("{c}N"),
        d if d > 0 => format!("{c}N + {d}"),
        d => format!("{c}N − {}", -d),
    };
    Bound {
        direction: Direction::Upper,
        formula,
        value,
        c: Some(c),
        source: source.into(),
    }
}

fn constant(v: u64, source: &str) -> Bound {
    Bound {
        direction: Direction::Upper,
        formula: v.to_string(),
        value: v,
        c: None,
        source: source.into(),
    }
}

/// The bound for `lock` at `n` processes under `model`, if its source claims one.
pub fn bound(lock: &str, model: Model, n: usize) -> Option<Bound> {
    let cc = model != Model::Dsm;
    match (lock, cc) {
        // Doorway N + 3 (lines 1–4), waiting ≤ 10 per other process (lines 5 and 6, as lines 8
        // and 9 of GLB in seed 000 §3: at most five each), exit 1.
        ("lamport-bakery", true) => Some(linear(
            11,
            -6,
            n,
            "seed 000 §3's GLB argument applied to seed 002 Fig. 1: doorway N+3, ≤ 10 per other process waiting, exit 1",
        )),
        // As Lamport's, plus line 3 (read X) and line 8 (write X).
        ("ub-bakery" | "b-bakery", true) => Some(linear(
            11,
            -4,
            n,
            "seed 000 §3's GLB argument applied to seed 002 Fig. 2: doorway N+4, ≤ 10 per other process waiting, X 1, exit 1",
        )),
        // Doorway N + 4 (lines 3–6), lines 8 and 9 at most five each per other process, exit 2.
        ("glb", true) => Some(linear(
            11,
            -4,
            n,
            "seed 000 §3: doorway N+4, lines 8 and 9 ≤ 5 each per other process, exit 2",
        )),
        // Doorway N + 3 (one read of every other process's token, colour and number in one
        // register), ≤ 10 per other process waiting (as BWBGME's lines 17–21, Theorem 9),
        // exit 3.
        ("bw-bakery", true) => Some(linear(
            11,
            -4,
            n,
            "seed 000 Fig. 3 with Theorem 9's waiting-room argument: doorway N+3, ≤ 10 per other process, exit 3",
        )),
        // Doorway N + 4 (lines 3–15), waiting ≤ 10 per other process (Theorem 9: line 17 ≤ 5,
        // line 19 1, lines 20–21 ≤ 2 plus GlobalColor amortised ≤ 2), exit N + 3
        // (OPPOSITECOLOR reads every token).
        ("bwb-gme", true) => Some(linear(
            12,
            -3,
            n,
            "seed 000 Theorem 9: doorway N+4, ≤ 10 per other process waiting, exit N+3 (OPPOSITECOLOR)",
        )),
        ("burns-lamport", true) => Some(Bound {
            direction: Direction::Lower,
            formula: "N(N−1)/2".into(),
            value: (n * (n.saturating_sub(1)) / 2) as u64,
            c: None,
            source: "seed 000 §4: P_N is blocked N(N−1)/2 times, each at least one RMR".into(),
        }),
        // Doorway ≤ 19n + 2 (lines 1–2: 2n writes; Label n+1; line 4 ≤ 13 per process; line 5;
        // Scan n; lines 7–8 2n), line 12 n writes, exit 3n + 1; the while loop of line 11 reads
        // only registers local to the reader in DSM (Lemma 7) and, in CC, at most five RMR reads
        // of each of its 6n registers (Lemma 7's cases).
        ("zehavi-kex", true) => Some(linear(
            53,
            3,
            n,
            "seed 001 Lemma 7: doorway ≤ 19n+2, while loop ≤ 5 reads per each of 6n registers, line 12 n, exit 3n+1",
        )),
        ("zehavi-kex", false) => Some(linear(
            23,
            3,
            n,
            "seed 001 Lemma 7: doorway ≤ 19n+2, while loop local in DSM, line 12 n, exit 3n+1",
        )),
        // As zehavi-kex with the bounded CTS's Label (line 3: 2n + 1 accesses of multi-word
        // registers, one own read, two collects of n − 1, two own writes) for the unbounded
        // one's n + 1; Scan (line 6) n reads as before: doorway ≤ 20n + 2.
        ("zehavi-kex-bounded", cc) => Some(linear(
            if cc { 54 } else { 24 },
            3,
            n,
            "seed 001 Lemma 7 over the bounded CTS: doorway ≤ 20n+2 (Label 2n+1), line 12 n, exit 3n+1, while loop as zehavi-kex",
        )),
        // Acquire: write next, swap tail, write locked, link, one re-read after the hand-off;
        // release: read next, CAS tail, one re-read of next, hand-off write.
        ("mcs", true) => Some(constant(
            9,
            "MCS 1991: acquire ≤ 5, release ≤ 4 (each spin re-reads once after its one write)",
        )),
        ("mcs", false) => Some(constant(
            4,
            "MCS 1991: swap, link, CAS, hand-off; spins on the spinner's own node",
        )),
        ("clh", true) => Some(constant(
            5,
            "CLH: raise own node, swap tail, two reads of the predecessor's node, lower own node",
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_evaluate_at_n() {
        let b = bound("glb", Model::Cc, 8).unwrap();
        assert_eq!(
            (b.formula.as_str(), b.value, b.c),
            ("11N − 4", 84, Some(11))
        );
        let b = bound("burns-lamport", Model::Cc, 32).unwrap();
        assert_eq!((b.value, b.direction), (496, Direction::Lower));
        assert!(
            bound("glb", Model::Dsm, 4).is_none(),
            "seed 000 claims nothing in DSM"
        );
        assert!(bound("tas", Model::Cc, 4).is_none());
        assert_eq!(bound("mcs", Model::Dsm, 4).unwrap().value, 4);
    }
}
