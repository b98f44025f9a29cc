//! Seed 001: Zehavi, bounded-space k-exclusion with O(n) RMRs from reads and writes
//! (Algorithm 1; Theorem 1; Lemma 7).

use serde_json::Value;

use crate::mem::Model;

use super::checks::{args, holds, items, num, Explored, Level, Said};
use super::growth;
use super::ledger::{Judged, Spec, Verdict};

/// The claims of seed 001.
pub fn specs(l: &Level) -> Vec<Spec> {
    let mut v = Vec::new();
    let mut kex = l.verify("zehavi-kex", &[3, 4], "--passages 2");
    // k = 1 (mutual exclusion), with a third passage: where an error that lets one process
    // too many in shows with two processes, at the quick level too.
    kex.extend(l.verify("zehavi-kex", &[2, 3], "--k 1 --passages 3"));
    // What Algorithm 1's file claims (safe, FIFE, bounded exit, crash tolerance), not this
    // ledger.
    let said = Said::of("zehavi-kex");
    for (id, claim, key, claimed) in [
        (
            "001/thm1-kex",
            "k-exclusion: never more than k inside",
            "safety",
            said.info.safe,
        ),
        (
            "001/thm1-fife",
            "FIFE (first in, first enabled)",
            "FIFE",
            said.claims.fife,
        ),
        (
            "001/lemma2-exit",
            "bounded exit: the exit section (lines 13–15) never waits",
            "bounded exit",
            said.claims.bounded_exit,
        ),
    ] {
        v.push(Spec::new(
            id,
            if id.contains("lemma2") {
                "Lemma 2"
            } else {
                "Theorem 1"
            },
            claim,
            holds(claimed),
            kex.clone(),
            move |o| Ok(Explored::of(o).claimed(key, claimed)),
        ));
    }
    v.push(lemma5(l, said.claims.fife));
    v.push(Spec::new(
        "001/obs1-3",
        "Observations 1–3",
        "Compete[p][i], Ignore[p][i] and Reveal[p] are true exactly between the lines that raise and lower them",
        "holds at every step (proved)",
        kex.clone(),
        |o| Ok(Explored::of(o).property("Observation")),
    ));
    let tolerant = said.claims.crash_tolerant;
    v.push(Spec::new(
        "001/thm1-sf",
        "Theorem 1",
        "starvation freedom while fewer than k processes crash",
        holds(tolerant),
        kex,
        move |o| {
            let e = Explored::of(o);
            let mut j = e.claimed("starv|deadlock|crash", tolerant);
            if tolerant && e.crashes == 0 && j.verdict == Verdict::Holds {
                j.verdict = Verdict::Open(
                    "no schedule froze a process mid-protocol: nothing crashed".into(),
                );
            } else {
                j.ours = format!(
                    "{}, {} of them with k − 1 processes frozen",
                    j.ours, e.crashes
                );
            }
            Ok(j)
        },
    ));
    for (model, m) in [("cc", Model::Cc), ("dsm", Model::Dsm)] {
        // The order and the formula Algorithm 1's file claims per model (`N` is the paper's n).
        let (order, class) = said.order(m);
        let order = order.replace('N', "n");
        v.push(Spec::new(
            &format!("001/lemma7-{model}"),
            "Lemma 7, Theorem 1",
            &format!("{order} RMRs per passage in {}", model.to_uppercase()),
            &format!(
                "{order}; counted from the figure ≤ {}",
                said.bound(m).replace('N', "n")
            ),
            vec![growth::command(l, "zehavi-kex", model, "")],
            move |o| growth::judge(&o[0], class),
        ));
    }
    let wait = |model: &str, cs: usize| {
        args(&format!(
            "rmr --lock zehavi-kex --threads 4 --model {model} --schedule round-robin --passages 3 --cs-steps {cs}"
        ))
    };
    v.push(Spec::new(
        "001/lemma7-wait",
        "Lemma 7",
        "waiting RMRs do not grow with the length of the wait (local spinning)",
        "independent of wait length",
        vec![
            wait("dsm", 2),
            wait("dsm", 2000),
            wait("cc", 2),
            wait("cc", 2000),
        ],
        |o| {
            let w = |v: &Value| {
                items(v)
                    .first()
                    .map_or(0.0, |r| num(&r["by_section_max"], "waiting"))
            };
            let (d2, d2k, c2, c2k) = (w(&o[0]), w(&o[1]), w(&o[2]), w(&o[3]));
            Ok(Judged::check(
                format!(
                    "largest waiting RMRs, CS 2 → 2000 steps: DSM {d2} → {d2k}, CC {c2} → {c2k}"
                ),
                "round-robin, 4 processes, 3 passages; a CS 1000× longer makes the others wait 1000× longer".into(),
                d2k <= d2 * 1.1 + 1.0 && c2k <= c2 * 1.1 + 1.0,
                || "a longer wait costs more RMRs".into(),
            ))
        },
    ));
    v.push(Spec::new(
        "001/space",
        "Lemma 1 (its space count)",
        "space: a bounded CTS, O(n²) booleans and O(n) variables of O(n log n) bits",
        "O(n²) registers in all",
        vec![args(&format!(
            "rmr --lock zehavi-kex-bounded --threads {} --model cc --schedule round-robin --passages 1",
            l.ns()
        ))],
        |o| {
            let mut j = growth::space_grows(&o[0], "quadratic")?;
            j.effort = "registers the lock allocates on the counting memory, each counted once whatever its width: the n × n boolean arrays dominate; the widths of the O(n) label registers are not measured".into();
            Ok(j)
        },
    ));
    v.push(Spec::new(
        "001/thm1-bounded",
        "Theorem 1, title",
        "bounded space: labels of a bounded concurrent timestamp system ([19])",
        "bounded",
        {
            let mut c = vec![args("list")];
            c.extend(l.verify("zehavi-kex-bounded", &[3, 4], "--passages 2"));
            // The schedule the full level's exploration found (4 processes, one frozen inside
            // its Label), replayed at every level so the quick ledger cannot miss it.
            c.push(args(&format!("verify --replay {CTS_PROPERTY_2_WITNESS}")));
            c
        },
        |o| bounded(&o[0], &o[1..]),
    ));
    v
}

/// A schedule under which the bounded CTS breaks Property 2 (processes 0 and 2 each scan
/// themselves first with no Label between: their two labels never recorded each other, and the
/// Scan's tie-break follows a third process's records; see `bounded_cts.rs`).
const CTS_PROPERTY_2_WITNESS: &str = "lock=zehavi-kex-bounded;mutant=-;threads=4;passages=2;k=2;sessions=3;plan=random;cs-steps=2;max-steps=100000;witness=0;scheduler=random;schedule=9103c30287c7c4de9180b08f11f0410840c8080d08114d08914c0c4dcc4c90080d055108518c0c8d90d0504cc4c410510809450c05cd50c48810099150c488500849cccc909008cdd0108d080591848404910445c8d0d0d08810519010859010cd10458c8c8ccc04494c884c444cd008c90c518c44cc080911898c0c09851089c4104d040dc990cc90c40411c9d0ccd048cc10c908d1d00889d0480805118550d050d008d14808d148d0c808050000";

/// Whether the registry has a bounded build of Algorithm 1, and whether `verify` (labels
/// checked inside their domain after every write, CTS Properties 1–2 at every step) finds it
/// safe.
fn bounded(list: &Value, explored: &[Value]) -> Result<Judged, String> {
    let locks = items(list);
    let find = |name: &str| locks.iter().find(|e| e["name"] == name).copied();
    let Some(b) = find("zehavi-kex-bounded").filter(|b| b["bounded"] == true) else {
        return Ok(Judged {
            ours: "zehavi-kex only: Label is 1 + the largest label read".into(),
            effort: "the registry's own statement of the lock".into(),
            verdict: Verdict::Differs(
                "64-bit labels that grow without bound; no bounded CTS is built".into(),
            ),
        });
    };
    let e = Explored::of(explored);
    let mut j = e.property("label|domain|property|invariant|safety");
    j.ours = format!(
        "zehavi-kex-bounded ({}): {}",
        b["notes"].as_str().unwrap_or("bounded"),
        j.ours
    );
    j.effort = format!(
        "{}; the CTS is our own traceable-use construction, not the paper's [19]: checked, not proven",
        j.effort
    );
    Ok(j)
}

/// Lemma 5: FIFE in O(n) steps. Once a process q that p doorway-preceded has entered, p
/// enters within O(n) of its own steps. The steps are counted by the scheduler (each shared
/// access, each yield of a failed wait, is one), from q's entry to p's, the most over every
/// explored schedule, at n = 3, 4, 6, 8 with k = 2 (at k = 1 no process is ever enabled: that is
/// FCFS); the row holds when no schedule broke FIFE and the most steps grow at most linearly in
/// n. An exploration finds a lower bound of the worst case, so the growth it shows is the
/// growth of what the schedules reached.
fn lemma5(l: &Level, claimed: bool) -> Spec {
    let (seeds, schedules) = if l.quick { (1, 300) } else { (3, 2000) };
    let checks = l.verify_with(
        "zehavi-kex",
        &[3, 4, 6, 8],
        "--k 2 --passages 3",
        seeds,
        schedules,
    );
    Spec::new(
        "001/lemma5",
        "Lemma 5",
        "FIFE in O(n) steps: once a process it doorway-preceded has entered, a process enters within O(n) of its own steps",
        if claimed { "O(n) steps" } else { "no FIFE claimed" },
        checks,
        move |o| Ok(fife_steps(&Explored::of(o), claimed)),
    )
}

/// The most steps from enabled to entering per n, judged linear at most (see [`lemma5`]).
pub(super) fn fife_steps(e: &Explored, claimed: bool) -> Judged {
    let mut j = e.claimed("FIFE|safety", claimed);
    if !claimed || j.verdict != Verdict::Holds {
        return j;
    }
    let mut pts: Vec<(usize, u64)> = e
        .fife_steps_by_n
        .iter()
        .map(|&(n, s)| (n as usize, s))
        .collect();
    pts.sort_unstable();
    if pts.len() < 2 {
        j.verdict = Verdict::Open(format!(
            "a process was enabled (a process it doorway-preceded entered first) at {} process count(s) only: no growth to judge",
            pts.len()
        ));
        return j;
    }
    let at: Vec<String> = pts
        .iter()
        .map(|(n, s)| format!("n={n}: {s} ({:.1}/n)", *s as f64 / *n as f64))
        .collect();
    let mut got = growth::class(&pts);
    let per_n = |&(n, s): &(usize, u64)| s as f64 / n as f64;
    // Steps per n still rising by half from the smallest n to the largest: faster than linear.
    if got == "linear" && per_n(&pts[pts.len() - 1]) > 1.5 * per_n(&pts[0]) {
        got = "faster than linear";
    }
    Judged::check(
        format!(
            "most steps from enabled to entering: {}; {}",
            growth::describe(&pts),
            at.join(", ")
        ),
        format!(
            "{}; steps counted by the scheduler from the entry of a process it doorway-preceded to its own",
            e.effort()
        ),
        got == "constant" || got == "linear",
        || format!("the steps grow {got}, the paper says O(n)"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn explored(steps: &[(u64, u64)]) -> Explored {
        let reports: Vec<Value> = steps
            .iter()
            .map(|&(n, s)| {
                json!({"schedules_run": 10, "schedules_completed": 10, "passages": 3,
                       "threads": n, "outcome": {"result": "safe"}, "fife_steps_max": s})
            })
            .collect();
        Explored::of(&reports)
    }

    #[test]
    fn fife_steps_growing_faster_than_n_differ() {
        let linear = explored(&[(3, 20), (4, 27), (6, 40), (8, 52)]);
        assert_eq!(fife_steps(&linear, true).verdict, Verdict::Holds);
        let quadratic = explored(&[(3, 27), (4, 48), (6, 108), (8, 192)]);
        assert!(
            matches!(fife_steps(&quadratic, true).verdict, Verdict::Differs(w) if w.contains("O(n)")),
            "{:?}",
            fife_steps(&quadratic, true)
        );
        // Never enabled at more than one n: nothing to judge.
        let once = explored(&[(3, 20)]);
        assert!(matches!(fife_steps(&once, true).verdict, Verdict::Open(_)));
    }
}
