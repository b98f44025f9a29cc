//! Seed 003 Section 5's extensions on the simulator: multi-type requests (§5.1), bounded
//! sequence numbers (§5.2), crash recovery (§5.3).

use serde_json::Value;

use super::super::checks::{num, runs, Level};
use super::super::ledger::{Judged, Spec, Verdict};
use super::{at_most, seeds_effort, sim_algo, HEAVY_CONST, HEAVY_EXP, LIGHT_EXP, MEDIUM_EXP};
use crate::mp::algo::table::TOKEN_GME_SMAX;

/// Section 5's extensions.
pub(super) fn section5(l: &Level) -> Vec<Spec> {
    let mut v = Vec::new();
    let loads = vec![
        sim_algo(l, "token-gme-bounded", 10, HEAVY_CONST),
        sim_algo(l, "token-gme-bounded", 10, HEAVY_EXP),
        sim_algo(l, "token-gme-bounded", 10, LIGHT_EXP),
    ];
    v.push(Spec::new(
        "003/sec5.2",
        "§5.2.3",
        "bounded sequence numbers: every request, fulfilled and session number within [0, smax]",
        "≤ smax (totalNoOfTokensIssued ≤ n·smax)",
        loads,
        sec52,
    ));
    v.push(sec51(l));
    v.push(sec53(l));
    v
}

/// §5.2 from the channels: no number a message carries exceeds n·smax (the largest number of
/// §5.2, totalNoOfTokensIssued; request and session numbers stay within smax, process ids and
/// types below n); group mutual exclusion beside it.
pub(super) fn sec52(o: &[Value]) -> Result<Judged, String> {
    // What the channels carry: no number a message holds exceeds n·smax (the largest
    // number of §5.2, totalNoOfTokensIssued; request and session numbers stay within
    // smax, process ids and types below n). Group mutual exclusion is checked beside
    // it (safety violations, which also count the domain check the variant reports).
    let r = runs(o);
    if let Some(x) = r.iter().find(|x| x["message_int_observed_max"].is_null()) {
        return Err(format!(
            "seed {} observed no message's numbers",
            num(x, "seed")
        ));
    }
    let smax = TOKEN_GME_SMAX as f64;
    let largest = r
        .iter()
        .map(|x| num(x, "message_int_observed_max"))
        .fold(0.0, f64::max);
    let cap = r
        .iter()
        .map(|x| num(x, "n") * smax)
        .fold(f64::MAX, f64::min);
    let mut j = at_most(o, "safety_violations", |_| 0.0, "safety violations");
    let over: Vec<String> = r
        .iter()
        .filter(|x| num(x, "message_int_observed_max") > num(x, "n") * smax)
        .map(|x| {
            format!(
                "seed {} ({}, ncs {}): a message carried {}",
                num(x, "seed"),
                x["delay"].as_str().unwrap_or(""),
                x["ncs"].as_str().unwrap_or(""),
                num(x, "message_int_observed_max")
            )
        })
        .collect();
    j.ours = format!(
        "largest number a message carried {largest} (n·smax = {cap}); {}",
        j.ours
    );
    if !over.is_empty() {
        let before = match &j.verdict {
            Verdict::Differs(w) => format!("{w}; "),
            _ => String::new(),
        };
        j.verdict = Verdict::Differs(format!("{before}over n·smax: {}", over.join("; ")));
    }
    j.effort = format!(
            "{}; smax = {smax}, resets happen in these runs; every message's numbers read as it is serialized; the lockstep with unreset numbers (same entries, same messages) is a test: cargo test lockstep",
            j.effort
        );
    Ok(j)
}

/// The TokenGME family whose runs check §5.1.
const SEC51_ALGOS: &str = "token-gme,token-gme-fifo,token-gme-bounded";

/// §5.1's multi-type loads (G types per request, m = 5; heavy and medium) and its two-hop
/// scenario: G = m = 3 (every request names every type, so none ever conflicts with a
/// session) with a constant channel delay, heavy and medium.
const SEC51_MULTI: [&str; 5] = [
    "--m 5 --ncs const:0 --cd exp:10 --types-per-request 2",
    "--m 5 --ncs exp:50 --cd exp:10 --types-per-request 2",
    "--m 5 --ncs exp:50 --cd exp:10 --types-per-request 4",
    "--m 3 --ncs const:0 --cd const:10 --types-per-request 3",
    "--m 3 --ncs exp:50 --cd const:10 --types-per-request 3",
];

/// §5.1: the simulator counts, after every event, the states in which the primary holder keeps
/// a request compatible with its token's type queued with no conflicting request queued
/// (single-type and multi-type requests), and judges the two-hop property on the two-hop
/// scenario (`sim::TwoHop`).
fn sec51(l: &Level) -> Spec {
    let loads = [HEAVY_EXP, MEDIUM_EXP]
        .iter()
        .chain(SEC51_MULTI.iter())
        .map(|load| sim_algo(l, SEC51_ALGOS, 10, load))
        .collect();
    Spec::new(
        "003/sec5.1",
        "§5.1",
        "multi-type requests: no unnecessary blocking, and every request enters within two message hops when none conflicts",
        "holds (argued); two hops",
        loads,
        |o| {
            let r = runs(o);
            if let Some(x) = r.iter().find(|x| x["unnecessary_blocking"].is_null()) {
                return Err(format!("{} reported no §5.1 check", x["algo"]));
            }
            let desc = |x: &Value| {
                format!(
                    "{} seed {} (G {}, cd {}, ncs {})",
                    x["algo"].as_str().unwrap_or(""),
                    num(x, "seed"),
                    num(&x["multi_type"], "types_per_request").max(1.0),
                    x["delay"].as_str().unwrap_or(""),
                    x["ncs"].as_str().unwrap_or("")
                )
            };
            // The algorithm's own check (its primary holder's queue read after every event) is
            // shown, not judged: the verdict rests on what the simulator observes, the hops
            // and time from each request to its entry when no request conflicts.
            let events: f64 = r.iter().map(|x| num(x, "unnecessary_blocking")).sum();
            let mut bad: Vec<String> = Vec::new();
            let multi = r.iter().filter(|x| !x["multi_type"].is_null()).count();
            let two: Vec<&Value> = r
                .iter()
                .map(|x| &x["multi_type"]["two_hop"])
                .filter(|t| t["judged"].as_bool() == Some(true))
                .collect();
            if multi == 0 || two.is_empty() {
                return Err("no run made multi-type requests in a judged two-hop scenario".into());
            }
            for x in &r {
                let t = &x["multi_type"]["two_hop"];
                if t["judged"].as_bool() == Some(true)
                    && (num(t, "over_two") > 0.0 || num(t, "unserved") > 0.0)
                {
                    bad.push(format!(
                        "over two hops: {}: {} over, {} unserved, first {}",
                        desc(x),
                        num(t, "over_two"),
                        num(t, "unserved"),
                        t["first_over"].as_str().unwrap_or("-")
                    ));
                }
            }
            let requests: f64 = two.iter().map(|t| num(t, "requests")).sum();
            let hops = two.iter().map(|t| num(t, "hops_max")).fold(0.0, f64::max);
            let wait = two.iter().map(|t| num(t, "wait_max")).fold(0.0, f64::max);
            let two_d = two
                .iter()
                .map(|t| 2.0 * num(t, "channel_delay"))
                .fold(0.0, f64::max);
            let mut j = Judged::check(
                format!(
                    "two-hop scenario (observed from requests, entries and the path each waited for): {requests} requests, at most {hops} hops and {wait:.2} time units (2·D = {two_d}); the algorithm's own check of its queue (not judged): {events} events with a request blocked unnecessarily (G = 1, 2, 4)"
                ),
                seeds_effort(o),
                bad.is_empty(),
                || bad.join("; "),
            );
            j.effort = format!(
                "{}; {multi} multi-type runs; two hops judged on {} runs where every request names every type, with a constant channel delay; a holder reading only the first type of a set is caught by it (cargo test multi_tests)",
                j.effort,
                two.len()
            );
            Ok(j)
        },
    )
}

/// §5.3's crash schedules on n = 10: a process holding nothing at time 0, the primary holder
/// at time 0, a process mid-run; then two nested ones: p7 crashes, and p0 (the coordinator)
/// or p4 crashes at 400, inside the restart p7's crash caused (it begins at 321–380 and ends
/// at 430 or later in the 24 runs measured, seeds 1–12 of both loads).
const CRASHES: [&str; 5] = [
    "--crash 3@0",
    "--crash 0@0",
    "--crash 4@500",
    "--crash 7@300 --crash 0@400",
    "--crash 7@300 --crash 4@400",
];

/// §5.3: safety and liveness through crashes; the recovery messages each injected crash
/// caused against n − 1 of each kind, 5(n − 1) in all, and all messages against
/// (2n − 1) r + 5(n − 1) f (§5.3.4), every figure observed by the simulator.
fn sec53(l: &Level) -> Spec {
    let mut checks = Vec::new();
    for c in CRASHES {
        for load in [HEAVY_EXP, MEDIUM_EXP] {
            checks.push(sim_algo(l, &format!("token-gme {c}"), 10, load));
        }
    }
    Spec::new(
        "003/sec5.3",
        "§5.3.4",
        "crash recovery: safe and live, at most 5(n−1) messages per restart",
        "≤ 5(n−1) per restart operation (n−1 of each kind); ≤ (2n−1)r + 5(n−1)f",
        checks,
        sec53_judge,
    )
}

/// §5.3's judgement of the crash runs: per crash the simulator injected, the recovery
/// messages it caused (`recovery.observed`); the run's messages against (2n − 1) r + 5(n − 1) f
/// with r the requests made and f the crashes injected; safety, liveness and entries after
/// the last crash. The per-operation figures read from the messages' instance ids are shown
/// beside them, not judged.
pub(super) fn sec53_judge(o: &[Value]) -> Result<Judged, String> {
    let r = runs(o);
    let mut bad = Vec::new();
    let (mut worst, mut bound, mut crashes, mut nested) = (0.0, f64::MAX, 0, 0);
    let (mut share, mut labelled): (f64, f64) = (0.0, 0.0);
    for x in &r {
        let rec = &x["recovery"];
        let obs = &rec["observed"];
        let per_crash = obs["crashes"].as_array().map_or(&[][..], |v| v);
        if !rec.is_null() && obs.is_null() {
            return Err(format!(
                "seed {} observed no crash's recovery (the simulator follows causality up to n = 64)",
                num(x, "seed")
            ));
        }
        crashes += per_crash.len();
        nested += per_crash.iter().filter(|c| c["nested"] == true).count();
        if num(obs, "messages_max") >= worst {
            worst = num(obs, "messages_max");
            bound = num(rec, "operation_bound");
        }
        labelled = labelled.max(num(rec, "operation_messages_max"));
        share = share.max(num(rec, "run_messages") / num(rec, "run_bound").max(1.0));
        let why = if rec.is_null() || per_crash.is_empty() {
            "no crash happened".to_string()
        } else if per_crash.iter().all(|c| num(c, "total") == 0.0) {
            "no crash caused a recovery message".to_string()
        } else if num(x, "safety_violations") > 0.0 {
            "safety violated".to_string()
        } else if !x["liveness_failure"].is_null() {
            "a request went unserved".to_string()
        } else if per_crash
            .last()
            .is_some_and(|c| num(c, "entries_after") == 0.0)
        {
            "no critical section entered after the last crash".to_string()
        } else if let Some(c) = per_crash.iter().find(|c| c["within"] != true) {
            format!(
                "the crashes up to p{}'s at {} caused more than 5(n−1) or n−1 of a kind per crash; this one {} (NOTIFY {}, RESTART {}, DONE {}, START {}, RESUME {}; 5(n−1) = {})",
                num(c, "process"),
                num(c, "at"),
                num(c, "total"),
                num(c, "notify"),
                num(c, "restart"),
                num(c, "done"),
                num(c, "start"),
                num(c, "resume"),
                num(rec, "operation_bound")
            )
        } else if num(obs, "uncaused") > 0.0 {
            format!(
                "{} recovery messages with no crash in their sender's causal past",
                num(obs, "uncaused")
            )
        } else if num(rec, "run_messages") > num(rec, "run_bound") {
            "messages over (2n−1)r + 5(n−1)f".to_string()
        } else {
            continue;
        };
        bad.push(format!(
            "{why}: seed {}, cd {}, ncs {}",
            num(x, "seed"),
            x["delay"].as_str().unwrap_or(""),
            x["ncs"].as_str().unwrap_or("")
        ));
    }
    if nested == 0 {
        bad.push("no crash came during the previous one's recovery (after its first recovery message, before its RESUME): the nested schedules missed".into());
    }
    let mut j = Judged::check(
        format!(
            "most recovery messages charged to one crash {worst} (5(n−1) = {bound}; judged cumulatively: the first j crashes within 5(n−1) j, (n−1) j a kind); {crashes} crashes injected, {nested} during the previous one's recovery; all messages ≤ {:.0}% of (2n−1)r + 5(n−1)f; safe and live; per restart operation by the messages' own instance ids (not judged): at most {labelled}",
            100.0 * share
        ),
        seeds_effort(o),
        bad.is_empty(),
        || bad.join("; "),
    );
    j.effort = format!(
        "{}; crash-stop, crashes {}; each recovery message (by its kind) charged to the latest crash the simulator injected in its sender's causal past",
        j.effort,
        CRASHES.join(", ")
    );
    Ok(j)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::claims::ledger::Verdict;
    use crate::mp::algo::token_gme::{set_restart_twice, Selection, TokenGme};
    use crate::mp::algo::Setup;
    use crate::mp::run_config::RunConfig;
    use crate::mp::sim::{run_crashing, Crash, SimConfig};
    use crate::mp::workload::Dist;
    use crate::mp::Problem;

    /// §5.3's row over a one-crash and a nested schedule (p7 at 300, then the coordinator
    /// p0 at 400) on n = 10, heavy load, seeds 1 and 2.
    fn judged() -> Judged {
        let cfg = |seed| SimConfig {
            run: RunConfig {
                algo: "token-gme".into(),
                problem: Problem::Gme,
                setup: Setup::complete(10, 3),
                requests: 60,
                seed,
                ncs: Dist::Const(0.0),
                cs: Dist::Uniform(0.0, 40.0),
                delay: Dist::Exp(10.0),
                mix: "uniform:3".parse().unwrap(),
                watchdog: 1e9,
            },
            topology: "complete".into(),
            fifo: true,
            trace: false,
        };
        let crash = |p, at| Crash { p, at };
        let mut rs = Vec::new();
        for crashes in [
            vec![crash(4, 500.0)],
            vec![crash(7, 300.0), crash(0, 400.0)],
        ] {
            for seed in 1..=2 {
                rs.push(run_crashing(&cfg(seed), &crashes, |p, s: &Setup| {
                    TokenGme::new(p, s, Selection::Priority)
                }));
            }
        }
        sec53_judge(&[serde_json::to_value(&rs).unwrap()]).unwrap()
    }

    #[test]
    fn a_coordinator_sending_restart_twice_turns_section_5_3_on_what_the_simulator_observes() {
        let j = judged();
        assert_eq!(j.verdict, Verdict::Holds, "{}", j.ours);
        set_restart_twice(true);
        let j = judged();
        set_restart_twice(false);
        // Caught on the crashes the simulator injected: twice n − 2 RESTARTs charged to one.
        let why = j.verdict.why();
        assert!(
            why.contains("caused") && why.contains("RESTART 16"),
            "{why}"
        );
    }
}
