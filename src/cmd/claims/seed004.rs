//! Seed 004: Kamei and Kakugawa, the generalized local critical section (l_i-LMUTIN,
//! Algorithm 2; LKCS, Algorithms 3–7; Lemma 6's message counts).

use serde_json::Value;

use super::checks::{args, num, runs, Level};
use super::ledger::{Judged, Spec, Verdict};

fn sim(l: &Level, algo: &str, topology: &str) -> Vec<String> {
    let (requests, seeds) = if l.quick { (100, 2) } else { (300, 5) };
    args(&format!(
        "sim --algo {algo} --topology {topology} --n 9 --l 1 --k 3 --requests {requests} --seeds {seeds}"
    ))
}

fn effort(o: &[Value]) -> String {
    let r = runs(o);
    let topologies: Vec<&str> = r.iter().filter_map(|x| x["topology"].as_str()).collect();
    let mut t = topologies.clone();
    t.dedup();
    format!("simulator: {} runs on {}", r.len(), t.join(", "))
}

/// The claims of seed 004.
pub fn specs(l: &Level) -> Vec<Spec> {
    let mut v = Vec::new();
    let lkcs = vec![sim(l, "lkcs", "ring"), sim(l, "lkcs", "random:4")];
    for (id, place, algo, claim) in [
        (
            "004/thm1",
            "Lemmas 1–2, Theorem 1",
            "lmutin",
            "l_i-LMUTIN: at least l_i of each closed neighbourhood inside",
        ),
        (
            "004/thm3",
            "Lemmas 4–5, Theorem 3",
            "lkcs",
            "LKCS: l_i ≤ |CS_i| ≤ k_i over every closed neighbourhood, and live",
        ),
    ] {
        let checks = if algo == "lkcs" {
            lkcs.clone()
        } else {
            vec![sim(l, algo, "ring"), sim(l, algo, "random:4")]
        };
        v.push(Spec::new(id, place, claim, "holds (proved)", checks, |o| {
            let r = runs(o);
            let bad: f64 = r.iter().map(|x| num(x, "safety_violations")).sum();
            let stuck: Vec<&str> = r
                .iter()
                .filter_map(|x| x["liveness_failure"].as_str())
                .collect();
            Ok(Judged::check(
                format!("{bad} safety violations, {} runs stuck", stuck.len()),
                effort(o),
                bad == 0.0 && stuck.is_empty(),
                || match stuck.first() {
                    Some(s) => format!("liveness: {s}"),
                    None => format!("{bad} safety violations"),
                },
            ))
        }));
    }
    for (id, path, factor) in [
        ("004/lemma6-plain", "no_preemption", 3),
        ("004/lemma6-preempt", "preemption", 6),
    ] {
        v.push(Spec::new(
            id,
            "Lemma 6",
            &format!(
                "messages per entry or exit, {} path",
                path.replace('_', "-")
            ),
            &format!("≤ {factor}(|N_i|+1)"),
            lkcs.clone(),
            move |o| Ok(lemma6(o, path, factor)),
        ));
    }
    v.push(Spec::new(
        "004/lemma6-all",
        "Lemma 6",
        "every entry or exit within the lemma's larger bound",
        "≤ 6(|N_i|+1)",
        lkcs,
        |o| Ok(machinery(o)),
    ));
    v
}

/// The per-path figures of every run on `path` (`no_preemption`, `preemption`, `machinery`).
fn paths<'a>(o: &'a [Value], path: &str) -> Vec<&'a Value> {
    runs(o)
        .into_iter()
        .flat_map(|x| x["lemma6"]["paths"].as_array().into_iter().flatten())
        .filter(|p| p["path"] == path)
        .collect()
}

/// Lemma 6 on one of its paths: every transition on it within its own process's bound.
fn lemma6(o: &[Value], path: &str, factor: u64) -> Judged {
    let p = paths(o, path);
    if p.is_empty() {
        return Judged {
            ours: "-".into(),
            effort: effort(o),
            verdict: Verdict::Open(format!(
                "the simulator reported no {path} transitions to set against {factor}(|N_i|+1)"
            )),
        };
    }
    let transitions: f64 = p.iter().map(|x| num(x, "transitions")).sum();
    let over: f64 = p.iter().map(|x| num(x, "over_bound")).sum();
    let max = p.iter().map(|x| num(x, "messages_max")).fold(0.0, f64::max);
    let mean = p
        .iter()
        .map(|x| num(x, "messages_mean") * num(x, "transitions"))
        .sum::<f64>()
        / transitions.max(1.0);
    let bound_max = p.iter().map(|x| num(x, "bound_max")).fold(0.0, f64::max);
    Judged::check(
        format!("{transitions} transitions: max {max}, mean {mean:.1} (bound up to {bound_max}); {over} over"),
        effort(o),
        over == 0.0,
        || format!("{over} of {transitions} transitions exceed {factor}(|N_i|+1) of their process"),
    )
}

/// All transitions, the machinery path included: the lemma counts only its two paths, so
/// what our inferred rules (LK-15 parking, LK-11's repeated preemption) add shows here.
fn machinery(o: &[Value]) -> Judged {
    let m = paths(o, "machinery");
    let all: f64 = ["no_preemption", "preemption", "machinery"]
        .iter()
        .flat_map(|p| paths(o, p))
        .map(|x| num(x, "transitions"))
        .sum();
    let mt: f64 = m.iter().map(|x| num(x, "transitions")).sum();
    let max = m.iter().map(|x| num(x, "messages_max")).fold(0.0, f64::max);
    let mean = m
        .iter()
        .map(|x| num(x, "messages_mean") * num(x, "transitions"))
        .sum::<f64>()
        / mt.max(1.0);
    Judged::check(
        format!("{mt} of {all} transitions used the machinery: max {max}, mean {mean:.1} messages"),
        effort(o),
        mt == 0.0,
        || {
            format!(
            "transitions that also used our inferred rules (LK-15 parking, LK-11 repeated preemption) send up to {max} messages; the lemma counts only its two paths, on which nothing exceeds its bound"
        )
        },
    )
}
