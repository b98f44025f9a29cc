//! Seed 004: Kamei and Kakugawa, the generalized local critical section (l_i-LMUTIN,
//! Algorithm 2; LKCS, Algorithms 3–7; Lemma 6's message counts).

use serde_json::Value;

use super::checks::{args, items, num, runs, Level};
use super::ledger::{Judged, Spec, Verdict};

/// Seed 004's mutants for `claims --mutant ALGO/NAME`: the algorithm, the mutant's name and
/// the `sim --lkcs-rules` that runs it (Cond_i off by one, `src/mp/algo/lkcs/mod.rs`).
pub const MUTANTS: [(&str, &str, &str); 3] = [
    ("lkcs", "k-plus-one", "mutant-k-plus-one"),
    ("lkcs", "l-minus-one", "mutant-l-minus-one"),
    ("lmutin", "l-minus-one", "mutant-l-minus-one"),
];

/// The (algorithm, name) of seed 004's mutant `m` (`ALGO/NAME`), if it is one.
pub fn mutant(m: &str) -> Option<(&'static str, &'static str)> {
    MUTANTS
        .iter()
        .find(|(a, n, _)| format!("{a}/{n}") == m)
        .map(|&(a, n, _)| (a, n))
}

/// ` --lkcs-rules mutant-…` when the level runs a mutant of `algo`, else nothing.
fn rules(l: &Level, algo: &str) -> String {
    let Some((a, n)) = &l.mutant else {
        return String::new();
    };
    MUTANTS
        .iter()
        .find(|x| x.0 == algo && x.0 == a && x.1 == n)
        .map(|x| format!(" --lkcs-rules {}", x.2))
        .unwrap_or_default()
}

fn sim(l: &Level, algo: &str, topology: &str) -> Vec<String> {
    sim_at(l, algo, topology, 9, (1, 3))
}

/// `sim` of `algo` on `n` processes of `topology` with (l_i, k_i) = `bounds`.
fn sim_at(l: &Level, algo: &str, topology: &str, n: usize, bounds: (usize, usize)) -> Vec<String> {
    let (requests, seeds) = if l.quick { (100, 2) } else { (300, 5) };
    let (lo, hi) = bounds;
    args(&format!(
        "sim --algo {algo} --topology {topology} --n {n} --l {lo} --k {hi} --requests {requests} --seeds {seeds}{}",
        rules(l, algo)
    ))
}

/// The cases of `004/lemma4-bind`: topology, n, (l_i, k_i), each with 0 < l_i and
/// k_i < |N_i| + 1 at every process, so both bounds of Cond_i bind.
const BINDING: [(&str, usize, (usize, usize)); 2] = [("ring", 9, (1, 2)), ("complete", 8, (1, 3))];

fn effort(o: &[Value]) -> String {
    let r = runs(o);
    let topologies: Vec<&str> = r.iter().filter_map(|x| x["topology"].as_str()).collect();
    let mut t = topologies.clone();
    t.dedup();
    let mut rules: Vec<&str> = r
        .iter()
        .filter_map(|x| x["lkcs_rules"].as_str())
        .filter(|&x| x != "ours")
        .collect();
    rules.dedup();
    let under = if rules.is_empty() {
        String::new()
    } else {
        format!(" under rules {}", rules.join(", "))
    };
    format!("simulator: {} runs on {}{under}", r.len(), t.join(", "))
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
            Ok(safe_and_live(o))
        }));
    }
    v.push(Spec::new(
        "004/lemma4-bind",
        "Lemmas 4–5, Theorem 3",
        "LKCS where both bounds bind (0 < l_i, k_i < |N_i|+1): ring n = 9 (1, 2), |N_i| = 2; complete n = 8 (1, 3), |N_i| = 7",
        "holds (proved)",
        BINDING
            .iter()
            .map(|&(t, n, b)| sim_at(l, "lkcs", t, n, b))
            .collect(),
        |o| Ok(safe_and_live(o)),
    ));
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
    v.push(printed_live());
    v
}

/// Theorems 1 and 3: no run broke a bound of any closed neighbourhood (the simulator counts
/// |CS_i| from the entries and exits it delivered) and none stopped.
fn safe_and_live(o: &[Value]) -> Judged {
    let r = runs(o);
    let bad: f64 = r.iter().map(|x| num(x, "safety_violations")).sum();
    let stuck: Vec<&str> = r
        .iter()
        .filter_map(|x| x["liveness_failure"].as_str())
        .collect();
    let first = r
        .iter()
        .flat_map(|x| x["violations"].as_array().into_iter().flatten())
        .find_map(Value::as_str)
        .map(|v| format!(" (first: {v})"))
        .unwrap_or_default();
    Judged::check(
        format!("{bad} safety violations, {} runs stuck", stuck.len()),
        effort(o),
        bad == 0.0 && stuck.is_empty(),
        || match stuck.first() {
            Some(s) if bad == 0.0 => format!("liveness: {s}"),
            _ => format!("{bad} safety violations{first}"),
        },
    )
}

/// The cases `004/printed-live` runs: topology, n, l, k (each within the claim's range and
/// with a start within the leader's bounds; ring n = 9 with (1, 2) has none).
const PRINTED_CASES: [(&str, usize, usize, usize); 3] =
    [("ring", 9, 0, 3), ("grid", 16, 1, 3), ("complete", 8, 1, 3)];

/// Theorem 3 for the algorithm as printed (`sim --lkcs-rules printed`: the seed's leader,
/// Algorithms 6–7, and no parking), where `004/thm3` runs our rules.
fn printed_live() -> Spec {
    let checks = PRINTED_CASES
        .iter()
        .map(|(t, n, l, k)| {
            args(&format!(
                "sim --algo lkcs --lkcs-rules printed --topology {t} --n {n} --l {l} --k {k} --requests 25 --seeds 4 --watchdog 20000"
            ))
        })
        .collect();
    Spec::new(
        "004/printed-live",
        "Theorem 3, Algorithms 3–7",
        "the algorithm as printed (Algorithms 3–7, with its leader) is live for 0 ≤ l_i < k_i ≤ |N_i|+1",
        "holds (proved)",
        checks,
        judge_printed,
    )
}

/// `004/printed-live`: which cases stop (deadlocked: no event left; stuck: a request past the
/// watchdog), and the leader's Triggers.
fn judge_printed(o: &[Value]) -> Result<Judged, String> {
    let mut cases = Vec::new();
    let (mut stopped, mut bad, mut triggers) = (0, 0.0, 0.0);
    for (out, (t, n, l, k)) in o.iter().zip(PRINTED_CASES) {
        let r = items(out);
        if let Some(x) = r.iter().find(|x| x["lkcs_rules"] != "printed") {
            return Err(format!(
                "a run under rules {} (want printed)",
                x["lkcs_rules"]
            ));
        }
        let why: Vec<&str> = r
            .iter()
            .filter_map(|x| x["liveness_failure"].as_str())
            .collect();
        let dead = why.iter().filter(|w| w.starts_with("deadlock")).count();
        bad += r.iter().map(|x| num(x, "safety_violations")).sum::<f64>();
        triggers += r
            .iter()
            .flat_map(|x| x["messages_by_kind"].as_array().into_iter().flatten())
            .filter(|m| m["kind"] == "TRIGGER")
            .map(|m| num(m, "per_request"))
            .sum::<f64>();
        stopped += why.len();
        cases.push(format!(
            "{t} n = {n} ({l}, {k}): {} of {} stop ({dead} deadlocked, {} stuck)",
            why.len(),
            r.len(),
            why.len() - dead
        ));
    }
    let runs = runs(o).len();
    let ours = format!(
        "{stopped} of {runs} runs stop; {bad} safety violations; {} Triggers",
        if triggers > 0.0 { "some" } else { "no" }
    );
    let cases = cases.join("; ");
    Ok(Judged::check(
        ours,
        effort(o),
        stopped == 0 && bad == 0.0,
        || {
            format!(
            "{cases}. As printed, Algorithm 6's tests cannot hold when TriggerNomination() is called, so the leader sends no Trigger: it only tightens the bounds near it and, once its whole neighbourhood waits, waits too; without parking (LK-15) a request a bound blocks at one grantor keeps its grants at the others (docs/message-passing.md, LK-14); where k_i - l_i = 1 near the leader (ring n = 9, (1, 2)) L_i > K_i and no configuration is within them. 004/thm3 holds with our rules"
        )
        },
    ))
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(why: Option<&str>) -> Value {
        json!({"lkcs_rules": "printed", "liveness_failure": why, "safety_violations": 0,
               "messages_by_kind": [{"kind": "TRIGGER", "per_request": 0.0}]})
    }

    #[test]
    fn a_mutant_runs_only_in_its_own_algorithms_checks() {
        let l = Level {
            quick: true,
            mutant: Some(("lkcs".into(), "k-plus-one".into())),
        };
        let c = sim_at(&l, "lkcs", "ring", 9, (1, 2));
        assert!(c.ends_with(&["--lkcs-rules".into(), "mutant-k-plus-one".into()]));
        assert!(!sim(&l, "lmutin", "ring").contains(&"--lkcs-rules".to_string()));
        assert_eq!(
            mutant("lmutin/l-minus-one"),
            Some(("lmutin", "l-minus-one"))
        );
        assert_eq!(mutant("lmutin/k-plus-one"), None);
        let plain = Level {
            quick: true,
            mutant: None,
        };
        assert!(!sim(&plain, "lkcs", "ring").contains(&"--lkcs-rules".to_string()));
    }

    #[test]
    fn a_broken_bound_is_quoted() {
        let o = vec![json!([{"safety_violations": 3, "liveness_failure": null,
                             "violations": ["t=1: |CS_7| = 3 > k = 2"], "topology": "ring"}])];
        let j = safe_and_live(&o);
        assert!(
            j.verdict.why().contains("|CS_7| = 3 > k = 2"),
            "{:?}",
            j.verdict
        );
        let ok =
            vec![json!([{"safety_violations": 0, "liveness_failure": null, "violations": []}])];
        assert_eq!(safe_and_live(&ok).verdict, Verdict::Holds);
    }

    #[test]
    fn the_printed_row_quotes_the_cases_that_stop() {
        let live = vec![json!([run(None), run(None)]); 3];
        let j = judge_printed(&live).unwrap();
        assert_eq!(j.verdict, Verdict::Holds, "{}", j.ours);
        let mut o = live.clone();
        o[1] = json!([run(Some("deadlock at t=5")), run(None)]);
        o[2] = json!([run(Some("p0 waiting since t=1")), run(None)]);
        let j = judge_printed(&o).unwrap();
        let why = j.verdict.why();
        assert!(
            why.contains("grid n = 16 (1, 3): 1 of 2 stop (1 deadlocked, 0 stuck)"),
            "{why}"
        );
        assert!(
            why.contains("complete n = 8 (1, 3): 1 of 2 stop (0 deadlocked, 1 stuck)"),
            "{why}"
        );
        assert!(why.starts_with("ring n = 9 (0, 3): 0 of 2 stop"), "{why}");
        assert!(j.ours.starts_with("2 of 6 runs stop"), "{}", j.ours);
        // Runs under other rules are not this row's.
        let mut o = live;
        o[0] = json!([{"lkcs_rules": "ours"}]);
        assert!(judge_printed(&o).is_err());
    }
}
