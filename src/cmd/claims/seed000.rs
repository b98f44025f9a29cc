//! Seed 000: He, Gopalakrishnan and Gafni, group mutual exclusion in linear time and space
//! (GLB, Fig. 1; Burns–Lamport, Fig. 2 and §4; Black-White Bakery, Fig. 3; BWBGME, Figs. 4–6).

use serde_json::Value;

use crate::locks::Claims;
use crate::mem::Model;

use super::checks::{holds, items, num, Explored, Level, Said};
use super::growth;
use super::ledger::{Judged, Spec, Verdict};

/// Whether a lock's file claims a property (None: every lock here claims it, deadlock and
/// starvation freedom, which `LockInfo` and `Claims` do not list).
type Claimed = Option<fn(&Said) -> bool>;

/// GME properties the exploration checks at every step, by the place each algorithm proves
/// it: (property, what the violation's kind says, GLB's lemma, BWBGME's theorem, where the
/// lock's file says whether it claims it).
const PROPERTIES: [(&str, &str, &str, &str, Claimed); 6] = [
    (
        "P1 mutual exclusion",
        "safety",
        "Lemma 2",
        "Theorem 3",
        Some(|s| s.info.safe),
    ),
    (
        "P2 starvation freedom",
        "deadlock|starv",
        "Lemma 5",
        "Theorem 7",
        None,
    ),
    (
        "P3 bounded exit",
        "bounded exit",
        "Lemma 3",
        "Theorem 4",
        Some(|s| s.claims.bounded_exit),
    ),
    (
        "P4 concurrent entry",
        "P4 concurrent entry",
        "Lemma 6",
        "Theorem 5",
        Some(|s| s.claims.concurrent_entry),
    ),
    (
        "P5 FCFS",
        "FCFS",
        "Lemma 1",
        "Theorem 2",
        Some(|s| s.info.fcfs),
    ),
    (
        "P6 deadlock freedom",
        "deadlock",
        "Lemma 4",
        "Theorem 6",
        None,
    ),
];

/// Reads one progress property from a lock's claims.
type ClaimOf = fn(&Claims) -> bool;

/// The properties §8 says neither algorithm has, each as (property, what its failure's kind
/// says, the claim in the lock's code).
const BEYOND: [(&str, &str, ClaimOf); 2] = [
    ("P7 FIFE", "FIFE", |c| c.fife),
    ("P8 strong concurrent entry", "P8", |c| {
        c.strong_concurrent_entry
    }),
];

/// The claims of seed 000.
pub fn specs(l: &Level) -> Vec<Spec> {
    let mut v = Vec::new();
    for (lock, name, thm) in [
        ("glb", "GLB", "Theorem 1"),
        ("bwb-gme", "BWBGME", "Theorem 9"),
    ] {
        let id = &lock.replace('-', "")[..];
        let rmr = growth::command(l, lock, "cc", "");
        v.push(rmr_row(
            &format!("000/{id}-rmr"),
            thm,
            name,
            "",
            &Said::of(lock),
            rmr.clone(),
        ));
        v.push(Spec::new(
            &format!("000/{id}-space"),
            thm,
            &format!("{name}: O(N) shared space"),
            "O(N) registers",
            vec![rmr],
            |o| growth::space(&o[0]),
        ));
    }
    v.extend(section_rows(l));
    let safe = Said::of("burns-lamport").info.safe;
    v.push(Spec::new(
        "000/bl-me",
        "§4, Fig. 2",
        "Burns–Lamport: mutual exclusion and deadlock freedom with N bits",
        if safe { "holds" } else { "not satisfied" },
        l.verify("burns-lamport", &[2, 3], "--passages 2"),
        move |o| Ok(Explored::of(o).claimed("safety|deadlock", safe)),
    ));
    v.push(rmr_row(
        "000/bw-bakery-rmr",
        "§5, Fig. 3",
        "Black-White Bakery",
        " (Theorem 9's argument)",
        &Said::of("bw-bakery"),
        growth::command(l, "bw-bakery", "cc", ""),
    ));
    let bounded = Said::of("burns-lamport").info.bounded;
    v.push(Spec::new(
        "000/bl-space",
        "§1, §4, Fig. 2",
        "Burns–Lamport: one bit of shared space per process (Competing, N booleans)",
        "N registers, each a boolean",
        vec![growth::command(l, "burns-lamport", "cc", "")],
        move |o| bits_per_process(&o[0], bounded),
    ));
    let blocks = Said::of("burns-lamport").bound(Model::Cc);
    v.push(Spec::new(
        "000/sec4",
        "§4, Fig. 2",
        &format!("Burns–Lamport: P_N blocked {blocks} times, Ω(N²) RMRs"),
        &format!("{blocks} blocks"),
        vec![growth::command(l, "burns-lamport", "cc", "")],
        |o| burns_lamport(&o[0]),
    ));
    for (lock, name, col) in [("glb", "GLB", 2), ("bwb-gme", "BWBGME", 3)] {
        let checks = l.verify(lock, &[3, 4], "--passages 2");
        let said = Said::of(lock);
        for p in PROPERTIES {
            let place = if col == 2 { p.2 } else { p.3 };
            let key = p.1;
            let claimed = p.4.is_none_or(|f| f(&said));
            v.push(Spec::new(
                &format!("000/{}-{}", lock.replace('-', ""), prop_id(p.0)),
                place,
                &claim(name, p.0, claimed),
                holds(claimed),
                checks.clone(),
                move |o| Ok(Explored::of(o).claimed(key, claimed)),
            ));
        }
        for (prop, word, claims) in BEYOND {
            let claimed = claims(&said.claims);
            // The failure the paper states, scripted where the lock's file scripts it (one
            // schedule, the same at every level), beside the exploration.
            let mut with = checks.clone();
            if let Some(c) = super::checks::script(lock, prop) {
                with.push(c);
            }
            v.push(Spec::new(
                &format!("000/{}-{}", lock.replace('-', ""), prop_id(prop)),
                "§8",
                &claim(name, prop, claimed),
                holds(claimed),
                with,
                move |o| Ok(Explored::of(o).claimed(word, claimed)),
            ));
        }
    }
    v.extend(lemmas(l));
    v.push(tokens(
        l,
        "000/thm8",
        "Theorem 8, Fig. 5",
        "bwb-gme",
        "BWBGME: token numbers stay in {0, …, N+1} (bounded registers)",
        "≤ N + 1",
        1,
    ));
    v.push(tokens(
        l,
        "000/sec5-fig3",
        "§5, Fig. 3",
        "bw-bakery",
        "Black-White Bakery: numbers only grow up to N",
        "≤ N",
        0,
    ));
    v.push(hardware());
    // Its file marks it unsafe (a negative control): the row expects a violation from that.
    let unsafe_ = !Said::of("naive-bwb-gme").info.safe;
    v.push(Spec::new(
        "000/sec6",
        "§6",
        "the naive generalization of Fig. 3 to GME breaks mutual exclusion",
        if unsafe_ {
            "a violating schedule exists"
        } else {
            "no violating schedule"
        },
        l.verify("naive-bwb-gme", &[3], "--passages 2"),
        move |o| {
            let e = Explored::of(o);
            Ok(match &e.violation {
                Some((kind, replay)) => Judged::check(
                    kind.lines().next().unwrap_or("").to_string(),
                    format!("{}; lockbench verify --replay '{replay}'", e.effort()),
                    unsafe_,
                    || format!("a schedule breaks it: lockbench verify --replay '{replay}'"),
                ),
                None => Judged::check("no violation found".into(), e.effort(), !unsafe_, || {
                    "no schedule broke the naive algorithm".into()
                }),
            })
        },
    ));
    v
}

/// Theorem 1's and Theorem 9's costs by section, as each lock's file states them (the
/// figure's lines and the bound, `Lock::section_costs`), against `rmr`'s per-section counts.
fn section_rows(l: &Level) -> Vec<Spec> {
    let mut v = Vec::new();
    let (glb, bwb) = (Said::of("glb"), Said::of("bwb-gme"));
    let exit = glb.section("exit");
    let door = glb.section("doorway");
    let mut rows = vec![
        (
            "000/glb-exit",
            "§3, Theorem 1",
            "glb",
            exit,
            format!(
                "GLB: the exit section costs {} {} RMRs (lines {}) in CC",
                if exit.exact { "exactly" } else { "at most" },
                exit.formula,
                exit.lines
            ),
        ),
        (
            "000/glb-doorway",
            "§3, Theorem 1",
            "glb",
            door,
            format!(
                "GLB: the doorway (lines {}) costs at most {} RMRs in CC",
                door.lines, door.formula
            ),
        ),
    ];
    for (id, section, what, per) in [
        ("000/bwbgme-doorway", "doorway", "the doorway", ""),
        (
            "000/bwbgme-waiting",
            "waiting",
            "the waiting room",
            ": 10 per other process",
        ),
        (
            "000/bwbgme-exit",
            "exit",
            "the exit",
            ", OPPOSITECOLOR (Fig. 6) included",
        ),
    ] {
        let c = bwb.section(section);
        rows.push((
            id,
            "Theorem 9, Fig. 5",
            "bwb-gme",
            c,
            format!(
                "BWBGME: {what} (lines {}) costs at most {} RMRs in CC{per}",
                c.lines, c.formula
            ),
        ));
    }
    for (id, place, lock, c, claim) in rows {
        let paper = if c.exact {
            c.formula.to_string()
        } else {
            format!("≤ {}", c.formula)
        };
        v.push(Spec::new(
            id,
            place,
            &claim,
            &paper,
            vec![growth::command(l, lock, "cc", "")],
            move |o| sections(&o[0], c.section, c.bound, c.exact),
        ));
    }
    v
}

/// Lemmas 7–10 of §7, each checked by `bwb-gme` at every step it speaks of under `verify`
/// (its file's `lemma_step`, from marks the scheduled memory delivers; the lock's own state is
/// not read: the marks are the values the process read and wrote): a broken lemma stops the
/// exploration with "Lemma N broken".
fn lemmas(l: &Level) -> Vec<Spec> {
    let checks = l.verify("bwb-gme", &[3, 4], "--passages 2");
    [
        (
            "lemma7",
            "Lemma 7",
            "BWBGME: a number of 2 or more is taken above a conflicting process of the same colour with a smaller number, which leaves the CS first",
        ),
        (
            "lemma8",
            "Lemma 8",
            "BWBGME: whoever flips GlobalColor took its number above such a process, and both read GlobalColor (line 5) since its last flip",
        ),
        (
            "lemma9",
            "Lemma 9",
            "BWBGME: after a process reads GlobalColor (line 5), it flips at most once before that process's exit ends",
        ),
        (
            "lemma10",
            "Lemma 10",
            "BWBGME: a process does not enter before a conflicting one whose doorway ended before its line 4 has left the CS",
        ),
    ]
    .into_iter()
    .map(|(id, place, claim)| {
        let key = format!("{place} broken");
        Spec::new(
            &format!("000/bwbgme-{id}"),
            &format!("{place}, §7"),
            claim,
            "holds at every step (proved)",
            checks.clone(),
            move |o| Ok(Explored::of(o).property(&key)),
        )
    })
    .chain([Spec::new(
        "000/bwbgme-rewrites",
        "Theorem 9's proof, §7",
        "BWBGME: rewrites of GlobalColor make a process waiting on line 23 (the proof's line 21) re-read it and stay blocked at most N − 1 times a passage, so GlobalColor costs O(1) amortised RMRs",
        "≤ N − 1 a passage (argued)",
        // From N = 2, where N − 1 is smallest, with three passages (Theorem 8's checks).
        l.verify("bwb-gme", &[2, 3, 4], "--passages 3"),
        |o| Ok(Explored::of(o).property("GlobalColor rewrites")),
    )])
    .collect()
}

/// A property row's claim: the property, or that the lock does not satisfy it, as its file
/// says.
pub(super) fn claim(name: &str, prop: &str, claimed: bool) -> String {
    if claimed {
        format!("{name}: {prop}")
    } else {
        format!("{name} does not satisfy {prop}")
    }
}

/// "O(N) RMRs per passage in CC", with the order and the formula the lock's file claims.
pub(super) fn rmr_row(
    id: &str,
    place: &str,
    name: &str,
    note: &str,
    said: &Said,
    check: Vec<String>,
) -> Spec {
    let (order, class) = said.order(Model::Cc);
    Spec::new(
        id,
        place,
        &format!("{name}: {order} RMRs per passage in CC{note}"),
        &format!(
            "{order}; counted from the figure ≤ {}",
            said.bound(Model::Cc)
        ),
        vec![check],
        move |o| growth::judge(&o[0], class),
    )
}

fn prop_id(p: &str) -> String {
    p.split(' ').next().unwrap_or(p).to_lowercase()
}

/// One register per process, each a bounded one (a boolean): the registers the lock
/// allocated at each N against N, and the lock's file saying its registers are bounded.
fn bits_per_process(v: &Value, bounded: bool) -> Result<Judged, String> {
    let mut at = Vec::new();
    let mut off = Vec::new();
    for r in items(v) {
        let n = num(r, "threads");
        let regs = num(r, "registers");
        at.push(format!("N={n}: {regs}"));
        if regs != n {
            off.push(format!("N = {n}: {regs} registers"));
        }
    }
    if at.is_empty() {
        return Err("the rmr run has no point".into());
    }
    if !bounded {
        off.push("the lock's file does not say its registers are bounded".into());
    }
    Ok(Judged::check(
        format!(
            "registers {}; bounded (booleans): {}",
            at.join(", "),
            if bounded { "yes" } else { "no" }
        ),
        "registers allocated by the lock on the counting memory; boundedness from the lock's file"
            .into(),
        off.is_empty(),
        || off.join("; "),
    ))
}

/// Burns–Lamport's scripted schedule: the victim blocked at least N(N−1)/2 times at each N.
fn burns_lamport(v: &Value) -> Result<Judged, String> {
    let mut at = Vec::new();
    let mut short = Vec::new();
    let mut pts = Vec::new();
    for r in items(v) {
        let n = num(r, "threads") as usize;
        let blocked = num(&r["victim"], "blocked") as u64;
        let want = (n * (n - 1) / 2) as u64;
        at.push(format!("N={n}: {blocked} (≥ {want})"));
        pts.push((n, blocked.max(1)));
        if blocked < want {
            short.push(format!("N = {n}: {blocked} < {want}"));
        }
    }
    Ok(Judged::check(
        format!("victim blocked, {}: {}", growth::class(&pts), at.join(", ")),
        "proven: the paper's scripted schedule (seed 000 §4), run step by step".into(),
        short.is_empty(),
        || format!("the script blocks P_N fewer times: {}", short.join(", ")),
    ))
}

/// A bounded-token claim: no register invariant broken (the lock checks its numbers after
/// every write) and the largest number seen within N + `over`, when the lock's file claims
/// bounded registers (its `LockInfo::bounded`); otherwise the numbers are only reported.
fn tokens(
    l: &Level,
    id: &str,
    place: &str,
    lock: &str,
    claim: &str,
    paper: &str,
    over: i64,
) -> Spec {
    let threads = [2, 3, 4];
    let bounded = Said::of(lock).info.bounded;
    Spec::new(
        id,
        place,
        claim,
        if bounded { paper } else { "unbounded" },
        l.verify(lock, &threads, "--passages 3"),
        move |o| {
            let e = Explored::of(o);
            let mut j = e.property("number|token|invariant|safety");
            // The largest number any process held, per N, against N + `over`.
            let seen = &e.largest_by_n;
            if !seen.is_empty() {
                let at: Vec<String> = seen
                    .iter()
                    .map(|(n, t)| format!("N={n}: {t} (≤ {})", *n as i64 + over))
                    .collect();
                j.ours = format!("largest number {}; {}", at.join(", "), j.ours);
                let over_at: Vec<String> = seen
                    .iter()
                    .filter(|(n, t)| *t > *n as i64 + over)
                    .map(|(n, t)| format!("{t} at N = {n}"))
                    .collect();
                if bounded && !over_at.is_empty() && j.verdict == Verdict::Holds {
                    j.verdict =
                        Verdict::Differs(format!("numbers past the bound: {}", over_at.join(", ")));
                }
            }
            Ok(j)
        },
    )
}

/// §1.1's premise: in the CC model a remote memory reference is a coherence miss. Set the
/// model's RMRs per passage against the hardware's cache misses per passage, where the
/// machine has a PMU.
fn hardware() -> Spec {
    let out = std::env::temp_dir().join("lockbench-claims");
    Spec::new(
        "000/sec1.1",
        "§1.1",
        "CC model: RMRs are the coherence misses that dominate a passage's cost",
        "1 miss per RMR (the model's premise)",
        vec![
            super::checks::args(&format!(
                "run --lock glb --threads 2 --passages 20000 --counters cache-misses --out {}",
                out.display()
            )),
            super::checks::args(
                "rmr --lock glb --threads 2 --model cc --schedule random --passages 20",
            ),
        ],
        |o| {
            let run = items(&o[0])
                .into_iter()
                .find(|r| r["lock"] == "glb")
                .ok_or("run reported no glb result")?;
            let counter = &run["counters"][0];
            let rmr = items(&o[1])
                .first()
                .map_or(0.0, |r| num(r, "mean_rmr_per_passage"));
            if let Some(why) = counter["unavailable"].as_str() {
                return Ok(Judged {
                    ours: format!("model: {rmr:.1} RMRs per passage; misses not counted"),
                    effort: "run with --counters cache-misses; rmr, random schedule".into(),
                    verdict: Verdict::NotCheckableHere(why.to_string()),
                });
            }
            let misses = num(counter, "per_passage");
            let ratio = misses / rmr.max(1e-9);
            Ok(Judged::check(
                format!("{misses:.1} cache misses vs {rmr:.1} RMRs per passage (ratio {ratio:.2})"),
                "run: 2 threads, 20000 passages each; rmr: random schedule, 2 processes".into(),
                (0.5..=2.0).contains(&ratio),
                || format!("misses per RMR {ratio:.2}, outside 0.5–2"),
            ))
        },
    )
}

/// A section's RMRs per passage against the paper's figure at each N, from the `rmr` run's
/// `by_section_max` (and `by_section`, the mean): at most `bound(N)`, or exactly it when
/// `exact` (the largest and the mean passage both).
fn sections(
    v: &Value,
    section: &str,
    bound: impl Fn(usize) -> u64,
    exact: bool,
) -> Result<Judged, String> {
    let mut at = Vec::new();
    let mut off = Vec::new();
    for r in items(v) {
        let n = num(r, "threads") as usize;
        let max = num(&r["by_section_max"], section);
        let mean = num(&r["by_section"], section);
        let want = bound(n) as f64;
        at.push(format!(
            "N={n}: max {max}, mean {mean:.1} ({} {want})",
            if exact { "=" } else { "≤" }
        ));
        let ok = if exact {
            max == want && (mean - want).abs() < 1e-9
        } else {
            max <= want
        };
        if !ok {
            off.push(format!("N = {n}: max {max}, mean {mean:.2}"));
        }
    }
    if at.is_empty() {
        return Err("the rmr run has no point".into());
    }
    Ok(Judged::check(
        at.join("; "),
        format!("rmr: the {section} section of every passage, adversarial schedules at each N"),
        off.is_empty(),
        || format!("the {section} costs otherwise: {}", off.join(", ")),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_bounded_register_per_process_holds_and_anything_else_differs() {
        let at = |regs: [u64; 3]| {
            serde_json::json!([
                {"threads": 2, "registers": regs[0]},
                {"threads": 4, "registers": regs[1]},
                {"threads": 8, "registers": regs[2]}
            ])
        };
        let holds = bits_per_process(&at([2, 4, 8]), true).unwrap();
        assert_eq!(holds.verdict, Verdict::Holds, "{}", holds.ours);
        // A register more per process (a second array), or one shared register beside them.
        for regs in [[4, 8, 16], [3, 5, 9]] {
            let j = bits_per_process(&at(regs), true).unwrap();
            assert!(
                matches!(&j.verdict, Verdict::Differs(w) if w.contains("N = 2")),
                "{j:?}"
            );
        }
        // Unbounded registers (a counter where the figure has a bit).
        let j = bits_per_process(&at([2, 4, 8]), false).unwrap();
        assert!(
            matches!(&j.verdict, Verdict::Differs(w) if w.contains("bounded")),
            "{j:?}"
        );
        assert!(bits_per_process(&serde_json::json!([]), true).is_err());
    }

    /// `rmr` at 2 and 4 processes, round-robin, of the lock `entry` builds, as the JSON the
    /// ledger reads.
    fn rmr_of(entry: &crate::registry::LockEntry) -> Value {
        use crate::rmr::{run_one, RmrOptions, ScheduleKind};
        let reports: Vec<_> = [2, 4]
            .into_iter()
            .map(|n| {
                run_one(
                    entry,
                    &RmrOptions::new(n, Model::Cc, ScheduleKind::RoundRobin),
                )
            })
            .collect::<Result<_, _>>()
            .unwrap();
        serde_json::to_value(reports).unwrap()
    }

    #[test]
    fn a_token_written_in_two_steps_turns_the_bwbgme_doorway_row() {
        use crate::locks::paper::bwb_gme::{mutant, BwbGmeLock, Generalized, INFO};
        type TwoWrites<M> = BwbGmeLock<M, Generalized, { mutant::TOKEN_IN_TWO_WRITES }>;
        let c = Said::of("bwb-gme").section("doorway");
        let judge = |v: &Value| sections(v, c.section, c.bound, c.exact).unwrap();
        let lock = judge(&rmr_of(&crate::registry::find("bwb-gme").unwrap()));
        assert_eq!(lock.verdict, Verdict::Holds, "{}", lock.ours);
        // Line 14 as two writes: one RMR more in the doorway at every N.
        let broken = judge(&rmr_of(&crate::generic_entry!(INFO, TwoWrites)));
        assert!(
            matches!(&broken.verdict, Verdict::Differs(w) if w.contains("N = 2: max 7")),
            "{broken:?}"
        );
    }

    #[test]
    fn a_section_past_its_bound_differs() {
        let at = |waiting: u64, exit: u64| {
            serde_json::json!([{"threads": 4,
                "by_section_max": {"waiting": waiting, "exit": exit},
                "by_section": {"waiting": 1.0, "exit": 1.0}}])
        };
        let said = Said::of("bwb-gme");
        let (w, e) = (said.section("waiting"), said.section("exit"));
        let judge =
            |v: &Value| [w, e].map(|c| sections(v, c.section, c.bound, c.exact).unwrap().verdict);
        assert_eq!(judge(&at(30, 7)), [Verdict::Holds, Verdict::Holds]);
        for v in judge(&at(31, 8)) {
            assert!(matches!(v, Verdict::Differs(_)), "{v:?}");
        }
    }

    #[test]
    fn the_burns_lamport_file_says_its_registers_are_bounded() {
        assert!(Said::of("burns-lamport").info.bounded);
    }
}
