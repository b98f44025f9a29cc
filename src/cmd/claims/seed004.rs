//! Seed 004: Kamei and Kakugawa, the generalized local critical section (l_i-LMUTIN,
//! Algorithm 2; LKCS, Algorithms 3–7; Lemma 6's message counts).

use serde_json::Value;

use super::checks::{args, items, num, Level};
use super::ledger::{Judged, Spec, Verdict};

fn sim(l: &Level, algo: &str, topology: &str) -> Vec<String> {
    let (requests, seeds) = if l.quick { (100, 2) } else { (300, 5) };
    args(&format!(
        "sim --algo {algo} --topology {topology} --n 9 --l 1 --k 3 --requests {requests} --seeds {seeds}"
    ))
}

fn runs(o: &[Value]) -> Vec<&Value> {
    o.iter().flat_map(items).collect()
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
        ("004/lemma6-plain", "no-preemption", 3),
        ("004/lemma6-preempt", "preemption", 6),
    ] {
        v.push(Spec::new(
            id,
            "Lemma 6",
            &format!("messages per entry or exit, {path} path: {factor}(|N_i|+1)"),
            &format!("≤ {factor}(|N_i|+1)"),
            lkcs.clone(),
            move |o| Ok(lemma6(o, path, factor)),
        ));
    }
    v
}

/// Lemma 6 on one path: from the per-path summary of each run when the simulator gives one,
/// else from the largest transition of any kind (which the lemma does not bound).
fn lemma6(o: &[Value], path: &str, factor: u64) -> Judged {
    let r = runs(o);
    let paths: Vec<&Value> = r
        .iter()
        .filter_map(|x| x.get("lemma6"))
        .flat_map(items)
        .filter(|p| p["path"] == path)
        .collect();
    if paths.is_empty() {
        let worst = r
            .iter()
            .map(|x| num(x, "messages_per_request_max_with_self"))
            .fold(0.0, f64::max);
        return Judged {
            ours: format!("largest transition {worst} messages (all paths together)"),
            effort: effort(o),
            verdict: Verdict::Open(format!(
                "the simulator does not split transitions by path, so the {path} path ({factor}(|N_i|+1) on a ring = {}) is not isolated",
                factor * 3
            )),
        };
    }
    let transitions: f64 = paths.iter().map(|p| num(p, "transitions")).sum();
    let over: f64 = paths.iter().map(|p| num(p, "over_bound")).sum();
    let max = paths.iter().map(|p| num(p, "max")).fold(0.0, f64::max);
    let mean = paths
        .iter()
        .map(|p| num(p, "mean") * num(p, "transitions"))
        .sum::<f64>()
        / transitions.max(1.0);
    Judged::check(
        format!("{transitions} transitions: max {max}, mean {mean:.1} messages; {over} over their own bound"),
        effort(o),
        over == 0.0,
        || format!("{over} of {transitions} transitions exceed {factor}(|N_i|+1)"),
    )
}
