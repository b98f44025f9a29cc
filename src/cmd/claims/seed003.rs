//! Seed 003: Mittal and Mohan, priority-based token GME (TokenGME; Theorems 1 and 6–12 on
//! the simulator; Section 5's extensions).

use serde_json::Value;

use super::checks::{args, items, num, runs, Level};
use super::growth;
use super::ledger::{Judged, Spec, Verdict};

/// A simulation of TokenGME under one load, over seeds.
fn sim(l: &Level, n: usize, load: &str) -> Vec<String> {
    sim_algo(l, "token-gme", n, load)
}

/// A simulation of `algo` under one load, over seeds.
fn sim_algo(l: &Level, algo: &str, n: usize, load: &str) -> Vec<String> {
    let (requests, seeds) = if l.quick { (100, 2) } else { (300, 5) };
    args(&format!(
        "sim --algo {algo} --n {n} --requests {requests} --seeds {seeds} {load}"
    ))
}

/// Heavily loaded (no think time), lightly loaded (think time 10⁶ × the channel delay).
const HEAVY_CONST: &str = "--m 3 --ncs const:0 --cd const:10";
const HEAVY_EXP: &str = "--m 3 --ncs const:0 --cd exp:10";
const LIGHT_CONST: &str = "--m 3 --ncs exp:10000000 --cd const:10";
const LIGHT_EXP: &str = "--m 3 --ncs exp:10000000 --cd exp:10";
/// Between the two: think time 5 × the channel delay.
const MEDIUM_EXP: &str = "--m 3 --ncs exp:50 --cd exp:10";

fn seeds_effort(o: &[Value]) -> String {
    let r = runs(o);
    let requests: f64 = r.iter().map(|x| num(x, "requests")).sum();
    format!(
        "simulator: {} runs (seeds × loads), {requests} requests",
        r.len()
    )
}

/// The largest of `key` over every run, against `limit(n)`.
fn at_most(o: &[Value], key: &str, limit: impl Fn(f64) -> f64, what: &str) -> Judged {
    let r = runs(o);
    let worst = r.iter().map(|x| num(x, key)).fold(0.0, f64::max);
    let over: Vec<String> = r
        .iter()
        .filter(|x| num(x, key) > limit(num(x, "n")))
        .map(|x| {
            format!(
                "{} at n = {}, seed {} ({}, ncs {})",
                num(x, key),
                num(x, "n"),
                num(x, "seed"),
                x["delay"].as_str().unwrap_or(""),
                x["ncs"].as_str().unwrap_or("")
            )
        })
        .collect();
    let ns: Vec<String> = {
        let mut v: Vec<u64> = r.iter().map(|x| num(x, "n") as u64).collect();
        v.dedup();
        v.iter().map(u64::to_string).collect()
    };
    Judged::check(
        format!("largest {what} {worst} (n = {})", ns.join(", ")),
        seeds_effort(o),
        over.is_empty(),
        || format!("over the bound (cause not traced yet): {}", over.join("; ")),
    )
}

/// The claims of seed 003.
pub fn specs(l: &Level) -> Vec<Spec> {
    let mut v = Vec::new();
    let all = vec![
        sim(l, 10, HEAVY_CONST),
        sim(l, 10, HEAVY_EXP),
        sim(l, 10, LIGHT_CONST),
        sim(l, 10, LIGHT_EXP),
    ];
    v.push(Spec::new(
        "003/thm1",
        "Theorem 1",
        "group mutual exclusion: no two sessions of different types at once",
        "holds (proved)",
        all.clone(),
        |o| {
            Ok(at_most(
                o,
                "safety_violations",
                |_| 0.0,
                "safety violations",
            ))
        },
    ));
    v.push(Spec::new(
        "003/thm6",
        "Theorem 6",
        "starvation freedom: at most m(n+1)−1 sessions before a pending request's type",
        "≤ m(n+1)−1 sessions",
        all.clone(),
        |o| {
            let r = runs(o);
            let bound = r
                .iter()
                .map(|x| num(x, "starvation_bound"))
                .fold(f64::MAX, f64::min);
            let mut j = at_most(
                o,
                "starvation_sessions_max",
                |_| bound,
                "sessions passed over",
            );
            j.ours = format!("{} (bound {bound})", j.ours);
            if r.iter().any(|x| !x["liveness_failure"].is_null()) {
                j.verdict = Verdict::Differs("a request went unserved past the watchdog".into());
            }
            Ok(j)
        },
    ));
    v.push(Spec::new(
        "003/thm8",
        "Theorem 8",
        "at most 2n−1 messages per request",
        "2n − 1",
        all.clone(),
        |o| {
            Ok(at_most(
                o,
                "messages_per_request_max",
                |n| 2.0 * n - 1.0,
                "messages per request",
            ))
        },
    ));
    v.push(Spec::new(
        "003/thm10",
        "Theorem 10",
        "synchronization delay one message hop (heavy load)",
        "1 hop",
        vec![sim(l, 10, HEAVY_CONST), sim(l, 10, HEAVY_EXP)],
        |o| {
            Ok(at_most(
                o,
                "sync_delay_hops_max",
                |_| 1.0,
                "synchronization delay (hops)",
            ))
        },
    ));
    v.extend(light_load_and_concurrency(l));
    v.push(message_size(l));
    v.extend(figures(l));
    v.extend(section5(l));
    v
}

/// Theorems 11 and 12: waiting time under light load, and concurrency when one type is asked.
fn light_load_and_concurrency(l: &Level) -> Vec<Spec> {
    let mut v = Vec::new();
    v.push(Spec::new(
        "003/thm11",
        "Theorem 11",
        "waiting time two message hops (light load)",
        "2 hops",
        vec![sim(l, 10, LIGHT_CONST), sim(l, 10, LIGHT_EXP)],
        |o| {
            let mut j = at_most(o, "waiting_time_hops_max", |_| 2.0, "waiting time (hops)");
            if let Verdict::Differs(over) = &j.verdict {
                // Traced (sim --trace, n = 3, seed 1, exponential delays): the request meets
                // an idle session of another type whose secondary holder kept its token.
                j.verdict = Verdict::Differs(format!(
                    "{}; a request of another type than an idle open session waits for that session's secondary holders: REQUEST → holder's RELEASE → primary's TOKEN is 3 hops, more when RELEASEs and the primary token chain. Holders keep idle tokens for free re-entry (action A4 as reconstructed in TOKEN_GME_NOTES.md); Theorem 11's argument counts only the request reaching an idle primary holder",
                    over.trim_start_matches("over the bound (cause not traced yet): ")
                ));
            }
            Ok(j)
        },
    ));
    v.push(Spec::new(
        "003/thm12",
        "Theorem 12",
        "maximum concurrency n (one type requested)",
        "n",
        vec![sim(l, 10, "--m 1 --ncs const:0 --cd const:10")],
        |o| {
            let r = runs(o);
            let least = r
                .iter()
                .map(|x| num(x, "concurrency_max"))
                .fold(f64::MAX, f64::min);
            let n = r.first().map_or(0.0, |x| num(x, "n"));
            Ok(Judged::check(
                format!("{least} processes inside at once (n = {n})"),
                seeds_effort(o),
                least >= n,
                || format!("at most {least} of {n} inside together"),
            ))
        },
    ));
    v
}

/// Theorem 9: the mean message size does not grow with n.
fn message_size(l: &Level) -> Spec {
    let ns: Vec<Vec<String>> = [5, 10, 20, 40]
        .iter()
        .map(|&n| sim(l, n, HEAVY_EXP))
        .collect();
    Spec::new(
        "003/thm9",
        "Theorem 9",
        "amortized message size O(1) integers",
        "O(1)",
        ns,
        |o| {
            let pts: Vec<(usize, u64)> = o
                .iter()
                .filter_map(|v| items(v).first().copied())
                .map(|r| {
                    (
                        num(r, "n") as usize,
                        (num(r, "message_size_mean") * 1000.0) as u64,
                    )
                })
                .collect();
            let at: Vec<String> = pts
                .iter()
                .map(|(n, s)| format!("n={n}: {:.2}", *s as f64 / 1000.0))
                .collect();
            let class = growth::class(&pts);
            Ok(Judged::check(
                format!("mean integers per message, {class}: {}", at.join(", ")),
                seeds_effort(o),
                class == "constant",
                || format!("the mean message size grows {class}"),
            ))
        },
    )
}

/// Section 5's extensions.
fn section5(l: &Level) -> Vec<Spec> {
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
        |o| {
            // The simulator checks the domain after every event and reports a number outside
            // it as a safety violation; group mutual exclusion is checked beside it.
            let mut j = at_most(o, "safety_violations", |_| 0.0, "violations (bounds and safety)");
            j.effort = format!(
                "{}; smax = 8, resets happen in these runs; the lockstep with unreset numbers (same entries, same messages) is a test: cargo test lockstep",
                j.effort
            );
            Ok(j)
        },
    ));
    v.push(sec51(l));
    v.push(sec53(l));
    v
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
            let events: f64 = r.iter().map(|x| num(x, "unnecessary_blocking")).sum();
            let mut bad: Vec<String> = r
                .iter()
                .filter(|x| num(x, "unnecessary_blocking") > 0.0)
                .map(|x| {
                    format!(
                        "blocked unnecessarily: {}: {}",
                        desc(x),
                        x["unnecessary_blocking_first"].as_str().unwrap_or("")
                    )
                })
                .collect();
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
                    "{events} events with a request blocked unnecessarily (G = 1, 2, 4); two-hop scenario: {requests} requests, at most {hops} hops and {wait:.2} time units (2·D = {two_d})"
                ),
                seeds_effort(o),
                bad.is_empty(),
                || bad.join("; "),
            );
            j.effort = format!(
                "{}; {multi} multi-type runs; blocking checked after every event; two hops judged on {} runs where every request names every type, with a constant channel delay; a holder reading only the first type of a set is caught by both (cargo test multi_tests)",
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

/// §5.3: safety and liveness through crashes; the messages of each restart operation against
/// n − 1 of each kind, 5(n − 1) in all, and all messages against (2n − 1) r + 5(n − 1) f
/// (§5.3.4).
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
        |o| {
            let r = runs(o);
            let mut bad = Vec::new();
            let (mut worst, mut bound, mut begun, mut aborted) = (0.0, f64::MAX, 0, 0);
            let mut share: f64 = 0.0;
            for x in &r {
                let rec = &x["recovery"];
                let ops = rec["operations"].as_array().map_or(&[][..], |v| v);
                begun += ops.iter().filter(|o| !o["begun"].is_null()).count();
                aborted += ops.iter().filter(|o| o["status"] == "aborted").count();
                if num(rec, "operation_messages_max") >= worst {
                    worst = num(rec, "operation_messages_max");
                    bound = num(rec, "operation_bound");
                }
                share = share.max(num(rec, "run_messages") / num(rec, "run_bound").max(1.0));
                let why = if rec.is_null() || num(rec, "crashes") == 0.0 {
                    "no crash happened".to_string()
                } else if ops.iter().all(|o| o["begun"].is_null()) {
                    "no restart operation began".to_string()
                } else if num(x, "safety_violations") > 0.0 {
                    "safety violated".to_string()
                } else if !x["liveness_failure"].is_null() {
                    "a request went unserved".to_string()
                } else if let Some(o) = ops.iter().find(|o| o["within"] != true) {
                    format!(
                        "restart operation {} sent {} messages (bound {}, n−1 of a kind)",
                        num(o, "id"),
                        num(o, "total"),
                        num(rec, "operation_bound")
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
            if aborted == 0 {
                bad.push("no restart was cut short: the nested schedules missed".into());
            }
            let mut j = Judged::check(
                format!(
                    "largest restart operation {worst} messages (5(n−1) = {bound}); {begun} operations, {aborted} aborted by a crash during them; all messages ≤ {:.0}% of (2n−1)r + 5(n−1)f; safe and live",
                    100.0 * share
                ),
                seeds_effort(o),
                bad.is_empty(),
                || bad.join("; "),
            );
            j.effort = format!(
                "{}; crash-stop, crashes {}; every restart operation counted on its own",
                j.effort,
                CRASHES.join(", ")
            );
            Ok(j)
        },
    )
}

/// The quoted figure points of Fig. 6 and 7: (row, figure, at, metric, what, the paper's
/// figure as its text puts it; the verdict uses the value bench-configs/claims-paper.toml
/// quotes).
type Quote = (
    &'static str,
    &'static str,
    Option<f64>,
    &'static str,
    &'static str,
    &'static str,
);
#[rustfmt::skip]
const QUOTES: [Quote; 9] = [
    ("003/fig6a-size", "6a", None, "message_size", "TokenGME/RA2 message size", "≈ 0.05"),
    ("003/fig6a-wait", "6a", Some(2.0), "waiting_time", "m = 2: RA2 ~10% lower waiting time", "1.11"),
    ("003/fig6a-thru", "6a", Some(2.0), "throughput", "m = 2: RA2 ~5% higher throughput", "0.952"),
    ("003/fig6b-thru", "6b", Some(4000.0), "throughput", "throughput ratio tends to 1 at light load", "→ 1"),
    ("003/fig6f-size", "6f", Some(5.0), "message_size", "n = 5: message-size ratio", "2.22"),
    ("003/fig7a-wait", "7a", Some(500.0), "waiting_time", "priority/FIFO waiting time, n = 500: up to 24% lower", "0.76"),
    ("003/fig7a-thru", "7a", Some(500.0), "throughput", "priority/FIFO throughput, n = 500: up to 22% higher", "1.22"),
    ("003/fig7b-wait", "7b", Some(10.0), "waiting_time", "priority/FIFO waiting time, (10, 90): up to 18% lower", "0.82"),
    ("003/fig7b-thru", "7b", Some(10.0), "throughput", "priority/FIFO throughput, (10, 90): up to 14% higher", "1.14"),
];

/// Fig. 6 and 7 at the points the paper's text quotes a number for, each ratio a median over
/// seed pairs with its distribution-free interval (`sim --paper`), the paper's value inside it
/// or not.
fn figures(l: &Level) -> Vec<Spec> {
    let seeds = if l.quick { 2 } else { 5 };
    let check = args(&format!(
        "sim --paper bench-configs/claims-paper.toml --seeds {seeds}"
    ));
    let mut v = Vec::new();
    for (id, fig, at, metric, claim, paper) in QUOTES {
        v.push(Spec::new(
            id,
            &format!("§4, Fig. {fig}"),
            claim,
            paper,
            vec![check.clone()],
            move |o| quote(&o[0], fig, at, metric),
        ));
    }
    // RA2 with its vectors at n = 500 costs about a minute of CPU a seed at 100 requests, so
    // only the full level runs it.
    let (id, place, claim, paper) = (
        "003/fig6f-size500",
        "§4, Fig. 6f",
        "n = 500: message-size ratio 0.01",
        "0.01",
    );
    v.push(if l.quick {
        Spec::unchecked(
            id,
            place,
            claim,
            paper,
            Verdict::Open(
                "runs at the full level only (`lockbench claims`, about 2 min at n = 500): RA2 with its vectors takes about a minute of CPU a seed there".into(),
            ),
        )
    } else {
        Spec::new(
            id,
            place,
            claim,
            paper,
            vec![args("sim --paper bench-configs/claims-paper-n500.toml --seeds 3")],
            |o| quote(&o[0], "6f", Some(500.0), "message_size"),
        )
    });
    v
}

/// The rows of `sim --paper` JSON for figure `fig` at `at` (every point when None) and `metric`.
fn quote(v: &Value, fig: &str, at: Option<f64>, metric: &str) -> Result<Judged, String> {
    let pts: Vec<&Value> = items(v)
        .into_iter()
        .filter(|p| p["figure"] == fig && p["metric"] == metric)
        .filter(|p| at.is_none_or(|a| num(p, "value") == a))
        .filter(|p| !p["paper"].is_null())
        .collect();
    let first = pts.first().ok_or("the paper run has no such point")?;
    let paper = num(first, "paper");
    let mut ours = Vec::new();
    let mut outside = Vec::new();
    for p in &pts {
        let r = &p["ratio"];
        let (m, lo, hi) = (num(r, "median"), num(r, "lo"), num(r, "hi"));
        let at = format!(
            "{} = {}",
            p["param"].as_str().unwrap_or("x"),
            num(p, "value")
        );
        ours.push(format!("{m:.3} [{lo:.3}–{hi:.3}] at {at}"));
        if p["paper_inside"] != true {
            let off = if paper < lo {
                lo / paper - 1.0
            } else {
                1.0 - hi / paper
            };
            outside.push(format!("{at}: {:.0}% off", 100.0 * off.abs()));
        }
    }
    let r = &first["ratio"];
    let effort = format!(
        "sim --paper: n = {}, {} requests per process (the paper: 500), {} seeds a side, interval level {:.0}%",
        num(first, "n"),
        num(first, "requests"),
        num(r, "seeds"),
        100.0 * num(r, "level")
    );
    let size = metric == "message_size";
    Ok(Judged::check(
        ours.join("; "),
        effort,
        outside.is_empty(),
        || {
            let why = if size {
                "RA2's messages are reconstructed (R1–R7, docs/message-passing.md): which message carries which vector is our choice, so the paper's RA2 sizes are not known; the gap's cause is not established"
            } else {
                "outside our interval; cause not established (the paper's value is read from its text, and we run 100 requests per process where it ran 500)"
            };
            format!("{}; {why}", outside.join(", "))
        },
    ))
}
