//! The quick ledger catches what CI must catch: a representative mutant of each paper lock
//! (one line of its figure changed, as its file describes it) turns at least one of the quick
//! rows its checks reach from `holds`. `scripts/claims-mutants.sh` sweeps every mutant.

mod common;

use common::json_of;
use serde_json::Value;

/// The quick ledger of `paper` with every `verify` check of LOCK exploring mutant NAME: the
/// rows it reaches and their verdicts.
fn mutated(paper: &str, mutant: &str) -> Vec<(String, String)> {
    let v: Value = json_of(&[
        "claims", "--quick", "--paper", paper, "--mutant", mutant, "--format", "json",
    ]);
    v.as_array()
        .expect("the ledger is an array of rows")
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn turns(paper: &str, mutant: &str) {
    let rows = mutated(paper, mutant);
    assert!(!rows.is_empty(), "{mutant} reaches no row of seed {paper}");
    assert!(
        rows.iter().any(|(_, v)| v != "holds"),
        "{mutant} turns no quick row of seed {paper}: {rows:?}"
    );
}

#[test]
fn a_doorway_with_its_order_turned_round_turns_zehavis_quick_rows() {
    turns("001", "zehavi-kex/order-flipped");
}

#[test]
fn zehavis_k_plus_one_turns_the_quick_rows() {
    turns("001", "zehavi-kex/k-plus-one");
}

#[test]
fn glbs_dropped_choosing_wait_turns_the_quick_rows() {
    turns("000", "glb/no-choosing-wait");
}

/// Every id of the rows `mutant` turns in the quick ledger of `paper`.
fn turned(paper: &str, mutant: &str) -> Vec<String> {
    mutated(paper, mutant)
        .into_iter()
        .filter(|(_, v)| v != "holds")
        .map(|(id, _)| id)
        .collect()
}

#[test]
fn lkcs_with_one_grant_past_k_turns_the_row_where_k_binds() {
    // On a ring with (1, 3), k_i = |N_i| + 1: a grantor giving k_i + 1 MUTEX grants breaks
    // nothing there (004/thm3 catches it only on its random graphs); 004/lemma4-bind runs
    // topologies where k_i binds at every process.
    let t = turned("004", "lkcs/k-plus-one");
    assert!(t.contains(&"004/lemma4-bind".to_string()), "{t:?}");
}

#[test]
fn lkcs_and_lmutin_with_one_grant_past_l_turn_their_rows() {
    let t = turned("004", "lkcs/l-minus-one");
    assert!(t.contains(&"004/lemma4-bind".to_string()), "{t:?}");
    assert!(t.contains(&"004/thm3".to_string()), "{t:?}");
    let t = turned("004", "lmutin/l-minus-one");
    assert!(t.contains(&"004/thm1".to_string()), "{t:?}");
}

#[test]
fn zehavis_dropped_allow_turns_fife_in_o_n_steps() {
    // Line 12 dropped: a process enabled by a later entrant may still wait, so Lemma 5's row
    // (FIFE within O(n) steps, counted by the scheduler) does not hold.
    let t = turned("001", "zehavi-kex/no-allow");
    assert!(t.contains(&"001/lemma5".to_string()), "{t:?}");
}

/// Each of `ids` differs in the quick ledger of `paper` under `mutant`.
fn differs(paper: &str, mutant: &str, ids: &[&str]) {
    let rows = mutated(paper, mutant);
    for id in ids {
        assert!(
            rows.contains(&(id.to_string(), "differs".to_string())),
            "{id}: {rows:?}"
        );
    }
}

#[test]
fn bwbgme_without_the_number_guard_breaks_lemma_8() {
    // Line 28 dropped: a process with number 1 flips GlobalColor, which Lemma 8 rules out;
    // its critical-section steps do not matter.
    differs("000", "bwb-gme/no-number-guard", &["000/bwbgme-lemma8"]);
}

#[test]
fn bwbgme_with_its_flip_written_twice_breaks_the_rewrite_count() {
    // Lines 31/33's write repeated: a process waiting on line 23 can re-read GlobalColor
    // between the two writes and stay blocked twice for one exit, past N − 1 = 1 at N = 2.
    differs(
        "000",
        "bwb-gme/flip-written-twice",
        &["000/bwbgme-rewrites"],
    );
}

#[test]
fn ub_bakerys_dropped_choosing_wait_breaks_observations_2_and_3() {
    // Line 6 dropped: a process passes another parked between its lines 1 and 3, so it can
    // write X twice there (Observation 2) and change its token twice (Observation 3).
    differs(
        "002",
        "ub-bakery/no-choosing-wait",
        &["002/obs2", "002/obs3"],
    );
}

#[test]
fn lamports_bakery_mutants_turn_its_rows() {
    for m in ["no-gettoken", "no-choosing-wait", "token-le"] {
        let t = turned("002", &format!("lamport-bakery/{m}"));
        assert!(t.contains(&"002/lamport-me".to_string()), "{m}: {t:?}");
    }
}
