//! Seed 003: Mittal and Mohan, priority-based token GME (TokenGME; Theorems 1 and 6–12 on
//! the simulator; Section 5's extensions).

use serde_json::Value;

use super::checks::{args, items, num, runs, Level};
use super::growth;
use super::ledger::{Judged, Spec, Verdict};

mod figures;
mod sec5;
mod trends;

/// A simulation of TokenGME under one load, over seeds.
fn sim(l: &Level, n: usize, load: &str) -> Vec<String> {
    sim_algo(l, "token-gme", n, load)
}

/// A simulation of `algo` under one load, over seeds.
pub(super) fn sim_algo(l: &Level, algo: &str, n: usize, load: &str) -> Vec<String> {
    let (requests, seeds) = if l.quick { (100, 2) } else { (300, 5) };
    args(&format!(
        "sim --algo {algo} --n {n} --requests {requests} --seeds {seeds} {load}"
    ))
}

/// Heavy load on a skewed mix: one type of three draws 1% of the requests, so a request of it
/// waits behind the two busy types unless its age raises its priority (Theorem 6's case).
pub(super) const SKEWED: &str = "--m 3 --ncs const:0 --cd exp:10 --mix hot:3:67,99";
/// Heavily loaded (no think time), lightly loaded (think time 10⁶ × the channel delay).
pub(super) const HEAVY_CONST: &str = "--m 3 --ncs const:0 --cd const:10";
pub(super) const HEAVY_EXP: &str = "--m 3 --ncs const:0 --cd exp:10";
pub(super) const LIGHT_CONST: &str = "--m 3 --ncs exp:10000000 --cd const:10";
pub(super) const LIGHT_EXP: &str = "--m 3 --ncs exp:10000000 --cd exp:10";
/// Between the two: think time 5 × the channel delay.
pub(super) const MEDIUM_EXP: &str = "--m 3 --ncs exp:50 --cd exp:10";

pub(super) fn seeds_effort(o: &[Value]) -> String {
    let r = runs(o);
    let requests: f64 = r.iter().map(|x| num(x, "requests")).sum();
    format!(
        "simulator: {} runs (seeds × loads), {requests} requests",
        r.len()
    )
}

/// The largest of `key` over every run, against `limit(n)`.
pub(super) fn at_most(o: &[Value], key: &str, limit: impl Fn(f64) -> f64, what: &str) -> Judged {
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
    let mut starving = all.clone();
    starving.push(sim(l, 10, SKEWED));
    v.push(Spec::new(
        "003/thm6",
        "Theorem 6",
        "starvation freedom: at most m(n+1)−1 sessions before a pending request's type",
        "≤ m(n+1)−1 sessions",
        starving,
        thm6,
    ));
    v.push(Spec::new(
        "003/thm8",
        "Theorem 8",
        "at most 2n−1 messages per request",
        "2n − 1",
        all.clone(),
        thm8,
    ));
    v.push(Spec::new(
        "003/thm10",
        "Theorem 10",
        "synchronization delay one message hop (heavy load)",
        "1 hop",
        vec![sim(l, 10, HEAVY_CONST), sim(l, 10, HEAVY_EXP)],
        |o| Ok(path_hops(o, Path::Sync, 1.0)),
    ));
    v.push(Spec::new(
        "003/thm7",
        "Theorem 7",
        "concurrent entry: with every request of one type, no request waits for another process's critical section",
        "holds (proved)",
        vec![
            sim(l, 10, "--m 1 --ncs const:0 --cd exp:10"),
            sim(l, 10, "--m 1 --ncs exp:50 --cd exp:10"),
        ],
        thm7,
    ));
    v.extend(light_load_and_concurrency(l));
    v.push(message_size(l));
    v.extend(figures::figures(l));
    v.extend(trends::trends(l));
    v.extend(sec5::section5(l));
    v
}

/// Theorem 6 from the entries: the most sessions of other types that began while one request
/// waited (`sessions_passed_max`, runs of entries of one type), never the algorithm's own age.
fn thm6(o: &[Value]) -> Result<Judged, String> {
    let r = runs(o);
    if let Some(x) = r.iter().find(|x| x["sessions_passed_max"].is_null()) {
        return Err(format!(
            "{} seed {} reported no sessions passed over",
            x["algo"],
            num(x, "seed")
        ));
    }
    let bound = r
        .iter()
        .map(|x| num(x, "starvation_bound"))
        .fold(f64::MAX, f64::min);
    let worst = r
        .iter()
        .max_by(|a, b| num(a, "sessions_passed_max").total_cmp(&num(b, "sessions_passed_max")))
        .ok_or("no run")?;
    let most = num(worst, "sessions_passed_max");
    let stuck: Vec<String> = r
        .iter()
        .filter_map(|x| x["liveness_failure"].as_str())
        .map(|s| format!("a request went unserved past the watchdog: {s}"))
        .collect();
    let over = most > bound;
    Ok(Judged::check(
        format!("most sessions of other types begun while one request waited: {most} (bound {bound})"),
        format!(
            "{}; sessions observed from the entries' types, not read from the algorithm; a skewed mix (hot:3:67,99) where a rare type needs its age to be chosen",
            seeds_effort(o)
        ),
        !over && stuck.is_empty(),
        || {
            let mut why = stuck.clone();
            if over {
                why.insert(0, format!(
                    "{} seed {} ({}): {}",
                    worst["algo"].as_str().unwrap_or(""),
                    num(worst, "seed"),
                    worst["mix"].as_str().unwrap_or(""),
                    worst["sessions_passed_worst"].as_str().unwrap_or("")
                ));
            }
            why.join("; ")
        },
    ))
}

/// Theorem 8 from the channels: every message between distinct processes the simulator
/// delivered, over the requests made, against 2n − 1. A message's charge to a request is the
/// algorithm's word (REQUEST and RELEASE to the sender's, TOKEN to the receiver's), so the
/// largest count per request it gives is shown, not judged.
fn thm8(o: &[Value]) -> Result<Judged, String> {
    let r = runs(o);
    let mut j = at_most(
        o,
        "messages_per_request_mean",
        |n| 2.0 * n - 1.0,
        "messages per request made (all messages observed over all requests)",
    );
    let charged = r
        .iter()
        .map(|x| num(x, "messages_per_request_max"))
        .fold(0.0, f64::max);
    j.ours = format!(
        "{}; per request as the algorithm charges its messages (not judged): at most {charged}",
        j.ours
    );
    j.effort = format!(
        "{}; the worst single request is not observable without the algorithm's charge of each message, so the bound is judged over every message of the run",
        j.effort
    );
    Ok(j)
}

/// Which hops: waiting time (from the request) or synchronization delay (from the exit that
/// emptied the system).
#[derive(Clone, Copy, PartialEq)]
enum Path {
    Wait,
    Sync,
}

/// Hops on the paths entries waited for (seed 003 §2.2.1, as Theorems 10 and 11 count them),
/// against `limit`; the longest causal chain beside them; the reason computed from the longest
/// path measured.
fn path_hops(o: &[Value], which: Path, limit: f64) -> Judged {
    let (key, chain, longest, elsewhere, what) = match which {
        Path::Wait => (
            "waiting_time_path_hops_max",
            "waiting_time_hops_max",
            "waiting_time_path_longest",
            "waiting_path_elsewhere",
            "waiting time",
        ),
        Path::Sync => (
            "sync_delay_path_hops_max",
            "sync_delay_hops_max",
            "sync_delay_path_longest",
            "sync_path_elsewhere",
            "synchronization delay",
        ),
    };
    let r = runs(o);
    if r.iter().any(|x| x[key].is_null()) {
        return Judged {
            ours: "-".into(),
            effort: seeds_effort(o),
            verdict: Verdict::Open(format!(
                "a run measured no {what} path (hops are tracked up to n = 64)"
            )),
        };
    }
    let most = r.iter().map(|x| num(x, key)).fold(0.0, f64::max);
    let chain_most = r.iter().map(|x| num(x, chain)).fold(0.0, f64::max);
    let other: f64 = r.iter().map(|x| num(x, elsewhere)).sum();
    let over: Vec<&&serde_json::Value> = r.iter().filter(|x| num(x, key) > limit).collect();
    let desc = |x: &serde_json::Value| {
        format!(
            "seed {} ({}, ncs {}): {}",
            num(x, "seed"),
            x["delay"].as_str().unwrap_or(""),
            x["ncs"].as_str().unwrap_or(""),
            x[longest].as_str().unwrap_or("")
        )
    };
    let other = match which {
        Path::Wait => format!("{other} entries waited for another process's event too"),
        Path::Sync => format!(
            "{other} entries waited for a path begun before the exit (only its messages sent from the exit on count)"
        ),
    };
    let ours = format!(
        "{what} on the path waited for: at most {most} hops; longest causal chain {chain_most} hops (it counts messages that arrived before the one waited for); {other}"
    );
    let effort = format!(
        "{}; each message linked to the event that ran its sender's handler, followed back from the entry",
        seeds_effort(o)
    );
    Judged::check(ours, effort, over.is_empty(), || {
        let worst = over
            .iter()
            .max_by(|a, b| num(a, key).total_cmp(&num(b, key)))
            .expect("over the limit");
        format!(
            "{} of {} runs over {limit} hops; the longest path, {} hops: {}",
            over.len(),
            r.len(),
            num(worst, key),
            desc(worst)
        )
    })
}

/// Theorem 7 on runs where every request is of one type: no entry's path waited for begins
/// at another process's exit (no entry waited for another critical section to end). Paths
/// that begin at another process's request (a token that went to an earlier requester and on
/// from there) are counted beside it: they wait for no critical section.
fn thm7(o: &[Value]) -> Result<Judged, String> {
    let r = runs(o);
    if r.iter().any(|x| x["waiting_path_after_exit"].is_null()) {
        return Err("a run measured no waiting path (hops are tracked up to n = 64)".into());
    }
    let after_exit: f64 = r.iter().map(|x| num(x, "waiting_path_after_exit")).sum();
    let other: f64 = r
        .iter()
        .map(|x| num(x, "waiting_path_elsewhere"))
        .sum::<f64>()
        - after_exit;
    let entries: f64 = r.iter().map(|x| num(x, "requests")).sum();
    let most = r
        .iter()
        .map(|x| num(x, "waiting_time_path_hops_max"))
        .fold(0.0, f64::max);
    let via = r
        .iter()
        .find(|x| num(x, "waiting_path_elsewhere") > num(x, "waiting_path_after_exit"))
        .map_or(String::new(), |x| {
            format!(
                " (first: {})",
                x["waiting_path_elsewhere_first"].as_str().unwrap_or("")
            )
        });
    Ok(Judged::check(
        format!(
            "{after_exit} of {entries} entries waited for another process's exit; {other} waited for a token that went to another requester first{via}; the rest within {most} hops of asking"
        ),
        format!(
            "{}; one type (m = 1), heavy and medium load; each entry's path followed back to the event it began at",
            seeds_effort(o)
        ),
        after_exit == 0.0,
        || {
            let x = r
                .iter()
                .find(|x| num(x, "waiting_path_after_exit") > 0.0)
                .expect("one");
            format!(
                "seed {} (ncs {}): {}",
                num(x, "seed"),
                x["ncs"].as_str().unwrap_or(""),
                x["waiting_path_after_exit_first"].as_str().unwrap_or("")
            )
        },
    ))
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
        |o| Ok(path_hops(o, Path::Wait, 2.0)),
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
            let first: Vec<&Value> = o.iter().filter_map(|v| items(v).first().copied()).collect();
            if let Some(x) = first
                .iter()
                .find(|x| x["message_size_observed_mean"].is_null())
            {
                return Err(format!("no message size observed at n = {}", num(x, "n")));
            }
            let pts: Vec<(usize, u64)> = first
                .iter()
                .map(|r| {
                    (
                        num(r, "n") as usize,
                        (num(r, "message_size_observed_mean") * 1000.0) as u64,
                    )
                })
                .collect();
            let at: Vec<String> = pts
                .iter()
                .map(|(n, s)| format!("n={n}: {:.2}", *s as f64 / 1000.0))
                .collect();
            let own: Vec<String> = first
                .iter()
                .map(|r| format!("{:.2}", num(r, "message_size_mean")))
                .collect();
            let class = growth::class(&pts);
            Ok(Judged::check(
                format!(
                    "mean integers per message as serialized, {class}: {} (the messages' own size: {})",
                    at.join(", "),
                    own.join(", ")
                ),
                format!(
                    "{}; the numbers in each message as it is serialized counted, not its own size",
                    seeds_effort(o)
                ),
                class == "constant",
                || format!("the mean message size grows {class}"),
            ))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mp::algo::token_gme::{Selection, TokenGme};
    use crate::mp::algo::Setup;
    use crate::mp::run_config::RunConfig;
    use crate::mp::sim::{run, SimConfig};
    use crate::mp::workload::Dist;
    use crate::mp::Problem;

    /// `sim --algo token-gme --n 10 --requests 100 --m M --ncs NCS --cd exp:10 --mix MIX`.
    fn cfg(m: usize, seed: u64, ncs: Dist, mix: &str) -> SimConfig {
        SimConfig {
            run: RunConfig {
                algo: "token-gme".into(),
                problem: Problem::Gme,
                setup: Setup::complete(10, m),
                requests: 100,
                seed,
                ncs,
                cs: Dist::Uniform(0.0, 40.0),
                delay: Dist::Exp(10.0),
                mix: mix.parse().unwrap(),
                watchdog: 1e9,
            },
            topology: "complete".into(),
            fifo: true,
            trace: false,
        }
    }

    /// The row's judgement of the runs of `make` on seeds 1 and 2, as the ledger reads them.
    fn judge(
        c: impl Fn(u64) -> SimConfig,
        make: impl Fn(usize, &Setup) -> TokenGme + Copy,
        row: fn(&[Value]) -> Result<Judged, String>,
    ) -> (Judged, Vec<crate::mp::metrics::MpResult>) {
        let rs: Vec<_> = (1..=2).map(|seed| run(&c(seed), make)).collect();
        let o = [serde_json::to_value(&rs).unwrap()];
        (row(&o).unwrap(), rs)
    }

    #[test]
    fn a_token_gme_that_never_ages_a_request_turns_theorem_6() {
        let skewed = |seed| cfg(3, seed, Dist::Const(0.0), "hot:3:67,99");
        let good = |p, s: &Setup| TokenGme::new(p, s, Selection::Priority);
        let (j, _) = judge(skewed, good, thm6);
        assert_eq!(j.verdict, Verdict::Holds, "{}", j.ours);
        let broken = |p, s: &Setup| TokenGme::new(p, s, Selection::Priority).without_ageing();
        let (j, rs) = judge(skewed, broken, thm6);
        assert!(matches!(j.verdict, Verdict::Differs(_)), "{}", j.ours);
        // What it says of itself (the age it never raises) stays within the bound.
        for r in &rs {
            assert!(r.starvation_sessions_max.unwrap() <= r.starvation_bound.unwrap());
        }
    }

    #[test]
    fn a_token_gme_without_secondaries_turns_theorem_7() {
        let one = |seed| cfg(1, seed, Dist::Const(0.0), "uniform:1");
        let good = |p, s: &Setup| TokenGme::new(p, s, Selection::Priority);
        let (j, _) = judge(one, good, thm7);
        assert_eq!(j.verdict, Verdict::Holds, "{}", j.ours);
        let broken = |p, s: &Setup| TokenGme::new(p, s, Selection::Priority).without_secondaries();
        let (j, _) = judge(one, broken, thm7);
        assert!(matches!(j.verdict, Verdict::Differs(_)), "{}", j.ours);
    }

    fn thm10(o: &[Value]) -> Result<Judged, String> {
        Ok(path_hops(o, Path::Sync, 1.0))
    }

    fn thm11(o: &[Value]) -> Result<Judged, String> {
        Ok(path_hops(o, Path::Wait, 2.0))
    }

    #[test]
    fn a_token_gme_that_waits_for_releases_before_a6_turns_theorem_10() {
        let heavy = |seed| cfg(3, seed, Dist::Const(0.0), "hot:3:20,80");
        let broken = |p, s: &Setup| TokenGme::new(p, s, Selection::Priority).holding_for_releases();
        let (j, rs) = judge(heavy, broken, thm10);
        assert!(matches!(j.verdict, Verdict::Differs(_)), "{}", j.ours);
        // Safe and live: the row turns on the hops alone.
        for r in &rs {
            assert_eq!(r.safety_violations, 0);
            assert!(r.liveness_failure.is_none());
            assert_eq!(r.sync_delay_path_hops_max, Some(2));
        }
        assert!(j.verdict.why().contains("RELEASE"), "{:?}", j.verdict);
    }

    #[test]
    fn a_token_gme_whose_primary_takes_a_detour_turns_theorem_11() {
        let light = |seed| cfg(3, seed, Dist::Exp(1e7), "hot:3:20,80");
        let broken = |p, s: &Setup| TokenGme::new(p, s, Selection::Priority).with_detour();
        let (j, rs) = judge(light, broken, thm11);
        assert!(matches!(j.verdict, Verdict::Differs(_)), "{}", j.ours);
        for r in &rs {
            assert_eq!(r.safety_violations, 0);
            assert!(r.liveness_failure.is_none());
        }
        assert!(rs.iter().any(|r| r.waiting_time_path_hops_max == Some(3)));
    }

    #[test]
    fn a_token_gme_that_requests_twice_turns_theorem_8() {
        let heavy = |seed| cfg(3, seed, Dist::Const(0.0), "hot:3:20,80");
        let good = |p, s: &Setup| TokenGme::new(p, s, Selection::Priority);
        let (j, rs) = judge(heavy, good, thm8);
        assert_eq!(j.verdict, Verdict::Holds, "{}", j.ours);
        assert!(rs.iter().all(|r| r.messages_per_request_max <= 19));
        let broken = |p, s: &Setup| TokenGme::new(p, s, Selection::Priority).requesting_twice();
        let (j, rs) = judge(heavy, broken, thm8);
        assert!(matches!(j.verdict, Verdict::Differs(_)), "{}", j.ours);
        assert!(rs.iter().all(|r| r.safety_violations == 0));
    }

    #[test]
    fn an_unbounded_token_gme_turns_section_5_2() {
        use crate::mp::algo::table::TOKEN_GME_SMAX;
        let heavy = |seed| cfg(3, seed, Dist::Const(0.0), "hot:3:20,80");
        let bounded =
            |p, s: &Setup| TokenGme::new_bounded(p, s, Selection::Priority, TOKEN_GME_SMAX);
        let (j, rs) = judge(heavy, bounded, sec5::sec52);
        assert_eq!(j.verdict, Verdict::Holds, "{}", j.ours);
        assert!(rs.iter().all(|r| r.message_int_observed_max.unwrap() > 0));
        let unbounded = |p, s: &Setup| TokenGme::new(p, s, Selection::Priority);
        let (j, _) = judge(heavy, unbounded, sec5::sec52);
        assert!(j.verdict.why().contains("over n·smax"), "{:?}", j.verdict);
    }

    #[test]
    fn hops_count_the_path_waited_for() {
        let good = |p, s: &Setup| TokenGme::new(p, s, Selection::Priority);
        // Light load, random delays: the longest causal chain is longer than two hops, the
        // path waited for is not (REQUEST, then TOKEN).
        let light = |seed| cfg(3, seed, Dist::Exp(1e7), "hot:3:20,80");
        let (j, rs) = judge(light, good, thm11);
        assert_eq!(j.verdict, Verdict::Holds, "{}", j.ours);
        assert!(rs.iter().any(|r| r.waiting_time_hops_max > Some(2)));
        assert!(rs[0]
            .waiting_time_path_longest
            .as_ref()
            .unwrap()
            .contains("REQUEST"));
        // Heavy load: one hop from the exit that emptied the system.
        let heavy = |seed| cfg(3, seed, Dist::Const(0.0), "hot:3:20,80");
        let (j, rs) = judge(heavy, good, thm10);
        assert_eq!(j.verdict, Verdict::Holds, "{}", j.ours);
        assert_eq!(rs[0].sync_delay_path_hops_max, Some(1));
        // A limit the paths exceed: the reason is the longest path, message by message.
        let j = path_hops(&[serde_json::to_value(&rs).unwrap()], Path::Sync, 0.0);
        assert!(j.verdict.why().contains("leaves at t="), "{:?}", j.verdict);
    }
}
