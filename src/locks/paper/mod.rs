//! The shared-memory algorithms of the papers, each written once over the register
//! abstraction, faithful to its figure.

pub mod burns_lamport;
pub mod bw_bakery;
pub mod bwb_gme;
pub mod cts;
pub mod glb;
pub mod lamport_bakery;
pub mod ub_bakery;
pub mod zehavi;

use burns_lamport::BurnsLamport;
use bw_bakery::BwBakery;
use bwb_gme::{BwbGme, NaiveBwbGme};
use glb::Glb;
use lamport_bakery::LamportBakery;
use ub_bakery::{BBakery, UbBakery};
use zehavi::ZehaviKex;

use super::{LockEntry, LockInfo, Problem};

const fn paper(
    name: &'static str,
    problem: Problem,
    source: &'static str,
    fcfs: bool,
    bounded: bool,
    rmr: &'static str,
    notes: &'static str,
) -> LockInfo {
    LockInfo {
        name,
        problem,
        source,
        fcfs,
        bounded,
        rmr,
        safe: true,
        notes,
    }
}

/// The paper algorithms, in listing order: mutual exclusion, GME, k-exclusion.
pub fn entries() -> Vec<LockEntry> {
    vec![
        crate::generic_entry!(
            paper(
                "lamport-bakery",
                Problem::Mutex,
                "seed 002 Fig. 1 (Lamport's Bakery)",
                true,
                false,
                "O(N) CC (seed 000 §3's GLB argument; seed 002 claims none); DSM: no claim, waits spin on others' registers (unbounded)",
                "tokens grow without bound, and so can their range (seed 002 §3.1)"
            ),
            LamportBakery
        ),
        crate::generic_entry!(
            paper(
                "ub-bakery",
                Problem::Mutex,
                "seed 002 Fig. 2 (UB-Bakery)",
                true,
                false,
                "O(N) CC (seed 000 §3's GLB argument; seed 002 claims none); DSM: no claim, waits spin on others' registers (unbounded)",
                "register X clusters tokens: x ≤ token ≤ x+n (Theorem 1); still unbounded"
            ),
            UbBakery
        ),
        crate::generic_entry!(
            paper(
                "b-bakery",
                Problem::Mutex,
                "seed 002 Fig. 2 + §5 (B-Bakery)",
                true,
                true,
                "O(N) CC (seed 000 §3's GLB argument; seed 002 claims none); DSM: no claim, waits spin on others' registers (unbounded)",
                "tokens mod 2n−1 with the shifted max and ≺: tokens in {−1..2n−2}"
            ),
            BBakery
        ),
        crate::generic_entry!(
            paper(
                "bw-bakery",
                Problem::Mutex,
                "seed 000 Fig. 3 (Taubenfeld's Black-White Bakery)",
                true,
                true,
                "O(N) CC (seed 000 §5, Taubenfeld); DSM: no claim",
                "coloured tokens, numbers ≤ N; the figure's lost different-colour wait restored"
            ),
            BwBakery
        ),
        crate::generic_entry!(
            paper(
                "burns-lamport",
                Problem::Mutex,
                "seed 000 Fig. 2 (Burns–Lamport)",
                false,
                true,
                "Ω(N²) CC worst case (seed 000 §4); DSM: no claim",
                "one bit per process; deadlock-free, not starvation-free"
            ),
            BurnsLamport
        ),
        crate::generic_entry!(
            paper(
                "glb",
                Problem::Gme,
                "seed 000 Fig. 1 (Generalized Lamport Bakery)",
                true,
                false,
                "O(N) CC (seed 000 §3, Theorem 1); DSM: no claim",
                "P1–P5 with unbounded tokens"
            ),
            Glb
        ),
        crate::generic_entry!(
            paper(
                "bwb-gme",
                Problem::Gme,
                "seed 000 Figs. 4–6 (Black and White Bakery GME)",
                true,
                true,
                "O(N) CC (seed 000 Theorem 9); DSM: no claim",
                "P1–P5 with bounded tokens (numbers ≤ N+1)"
            ),
            BwbGme
        ),
        crate::generic_entry!(
            LockInfo {
                safe: false,
                ..paper(
                    "naive-bwb-gme",
                    Problem::Gme,
                    "seed 000 §6 (naive Black-White Bakery generalization)",
                    false,
                    true,
                    "O(N) CC",
                    "negative control: NOT safe (seed 000 §6 counter-example)"
                )
            },
            NaiveBwbGme
        ),
        crate::generic_entry!(
            paper(
                "zehavi-kex",
                Problem::KExclusion,
                "seed 001 Algorithm 1 (Zehavi k-exclusion)",
                false,
                false,
                "O(n) CC and DSM (Lemma 7)",
                "FIFE, not FCFS; over an unbounded 64-bit CTS (the paper's is bounded)"
            ),
            ZehaviKex
        ),
    ]
}

/// Test support: explores schedules of a registered lock and asserts it stays safe, on a seed
/// drawn per call (`LOCKBENCH_SEED` fixes it), printed on failure.
#[cfg(test)]
pub(crate) fn assert_safe_under_schedules(name: &str, threads: usize, schedules: usize) {
    let entry = super::find(name).expect("registered");
    let mut opts = crate::verify::VerifyOptions::new(threads);
    opts.schedules = schedules;
    opts.seed = std::env::var("LOCKBENCH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap();
            t.subsec_nanos() as u64 % 1_000_000
        });
    let r = crate::verify::verify(&entry, &opts, false).unwrap();
    assert_eq!(
        r.outcome,
        crate::verify::Outcome::Safe,
        "{name} at {threads}, seed {}: {r}",
        opts.seed
    );
}
