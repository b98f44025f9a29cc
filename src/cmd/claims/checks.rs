//! The kinds of check the ledger's rows share: RMR growth over N, a `verify` exploration
//! summed over seeds, a simulation; each as the commands it runs and the reading of their JSON.

use serde_json::Value;

use super::ledger::{Judged, Verdict};

mod said;
pub use said::{holds, Said};

/// How hard the ledger looks, and what it checks against.
#[derive(Clone, Debug)]
pub struct Level {
    /// Small N, few seeds and schedules (CI).
    pub quick: bool,
    /// `lock/mutant`: every `verify` check of that lock explores the mutant instead (a test of
    /// the ledger itself: a broken algorithm must turn its rows from `holds`).
    pub mutant: Option<(String, String)>,
}

impl Level {
    /// Process counts of RMR growth checks.
    pub fn ns(&self) -> &'static str {
        if self.quick {
            "2,4,8"
        } else {
            "2,4,8,16,32"
        }
    }

    /// Seeds of `verify` checks.
    pub fn seeds(&self) -> u64 {
        if self.quick {
            2
        } else {
            10
        }
    }

    /// Schedules per `verify` seed.
    pub fn schedules(&self) -> usize {
        if self.quick {
            1000
        } else {
            5000
        }
    }

    /// `verify` commands for `lock`: one per process count and seed, with `extra` options.
    pub fn verify(&self, lock: &str, threads: &[usize], extra: &str) -> Vec<Vec<String>> {
        self.verify_with(lock, threads, extra, self.seeds(), self.schedules())
    }

    /// [`Level::verify`] with `seeds` seeds of `schedules` schedules each.
    pub fn verify_with(
        &self,
        lock: &str,
        threads: &[usize],
        extra: &str,
        seeds: u64,
        schedules: usize,
    ) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        for &t in threads {
            for seed in 1..=seeds {
                let mut c = args(&format!(
                    "verify --lock {lock} --threads {t} --schedules {schedules} --seed {seed} {extra}"
                ));
                // A check of a mutant of its own, or of the lockstep (which runs the lock as
                // written beside UB-Bakery), is not the lock's exploration: it stays as it is.
                let own = extra.contains("--mutant") || extra.contains("--lockstep");
                if let Some((l, m)) = &self.mutant {
                    if l == lock && !own {
                        c.extend(["--mutant".to_string(), m.clone()]);
                    }
                }
                out.push(c);
            }
        }
        out
    }
}

/// The `verify --scheduler script` command of `lock`'s scripted counter-example, when the
/// lock's file scripts one for `property` (its registry entry says so, not this ledger).
pub fn script(lock: &str, property: &str) -> Option<Vec<String>> {
    let entry = crate::registry::find(lock)?;
    let build = entry.scheduled.clone()?;
    let c = build(&crate::locks::Params::new(
        3,
        2,
        crate::mem::WaitPolicy::Spin,
    ))
    .counter_example()?;
    (c.property == property).then(|| {
        let gme = if entry.info.problem == crate::locks::Problem::Gme {
            format!(" --sessions {} --plan fixed", c.sessions)
        } else {
            String::new()
        };
        args(&format!(
            "verify --lock {lock} --threads {} --scheduler script{gme}",
            c.threads
        ))
    })
}

/// Whether command `c` runs a mutant (`verify --mutant`, `sim --lkcs-rules mutant-*`).
pub fn runs_mutant(c: &[String]) -> bool {
    c.iter()
        .any(|a| a == "--mutant" || a.starts_with("mutant-"))
}

/// Splits a command written with single spaces into its arguments.
pub fn args(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

/// A number in a JSON object (0 when absent).
pub fn num(v: &Value, key: &str) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or(0.0)
}

/// Every element of every output (the runs of several `sim` or `verify` commands at once).
pub fn runs(o: &[Value]) -> Vec<&Value> {
    o.iter().flat_map(items).collect()
}

/// The elements of a JSON array (one element for anything else).
pub fn items(v: &Value) -> Vec<&Value> {
    match v.as_array() {
        Some(a) => a.iter().collect(),
        None => vec![v],
    }
}

/// What a set of `verify` reports found, summed over seeds and process counts.
#[derive(Debug, Default)]
pub struct Explored {
    /// Schedules run, completed, cut, and run with crashed processes.
    pub run: u64,
    /// Schedules that ran to completion.
    pub completed: u64,
    /// Schedules cut at the step bound.
    pub cut: u64,
    /// Schedules with k − 1 processes frozen mid-protocol.
    pub crashes: u64,
    /// The first violation (`kind`, replay) seen, if any.
    pub violation: Option<(String, String)>,
    /// Witnesses of unclaimed properties: (property, schedules, first).
    pub witnesses: Vec<(String, u64, String)>,
    /// Properties checked as claims.
    pub claimed: Vec<String>,
    /// Process counts, passages, seeds.
    pub threads: Vec<u64>,
    /// Passages per process.
    pub passages: u64,
    /// Seeds run.
    pub seeds: usize,
    /// The largest token (number) any process held, per process count, where the lock
    /// reports one.
    pub largest_by_n: Vec<(u64, i64)>,
    /// Witnesses of scripted schedules (`verify --scheduler script`): (property, script).
    pub scripted: Vec<(String, String)>,
    /// The most steps, counted by the scheduler, a process took from being enabled (FIFE) to
    /// entering, per process count, where some process was enabled.
    pub fife_steps_by_n: Vec<(u64, u64)>,
}

impl Explored {
    /// Sums `reports` (each a `verify --format json` output).
    pub fn of(reports: &[Value]) -> Explored {
        let mut e = Explored {
            seeds: reports.len(),
            ..Explored::default()
        };
        for r in reports {
            e.run += num(r, "schedules_run") as u64;
            e.completed += num(r, "schedules_completed") as u64;
            e.cut += num(r, "schedules_cut") as u64;
            e.crashes += num(r, "schedules_with_crashes") as u64;
            e.passages = num(r, "passages") as u64;
            let t = num(r, "threads") as u64;
            if !e.threads.contains(&t) {
                e.threads.push(t);
            }
            if let Some(l) = r.get("largest_token").and_then(Value::as_i64) {
                match e.largest_by_n.iter_mut().find(|s| s.0 == t) {
                    Some(s) => s.1 = s.1.max(l),
                    None => e.largest_by_n.push((t, l)),
                }
            }
            if let Some(f) = r.get("fife_steps_max").and_then(Value::as_u64) {
                match e.fife_steps_by_n.iter_mut().find(|s| s.0 == t) {
                    Some(s) => s.1 = s.1.max(f),
                    None => e.fife_steps_by_n.push((t, f)),
                }
            }
            if let Some(c) = r.get("claimed").and_then(Value::as_array) {
                for p in c.iter().filter_map(Value::as_str) {
                    if !e.claimed.iter().any(|x| x == p) {
                        e.claimed.push(p.to_string());
                    }
                }
            }
            let out = &r["outcome"];
            if out["result"] == "violation" && e.violation.is_none() {
                e.violation = Some((
                    out["kind"].as_str().unwrap_or("").to_string(),
                    out["schedule"].as_str().unwrap_or("").to_string(),
                ));
            }
            if out["result"] == "witness" {
                let kind = out["kind"].as_str().unwrap_or("");
                let prop = kind.trim_start_matches("WITNESS: ");
                let prop = prop.split(':').next().unwrap_or(prop).to_string();
                e.witness(&prop, 1, kind);
            }
            let script = r["scheduler"]
                .as_str()
                .filter(|s| s.starts_with("script"))
                .map(String::from);
            for w in r["witnesses"].as_array().into_iter().flatten() {
                let prop = w["property"].as_str().unwrap_or("").to_string();
                if let Some(s) = &script {
                    e.scripted.push((prop.clone(), s.clone()));
                }
                let first = w["first"].as_str().unwrap_or("");
                e.witness(&prop, num(w, "schedules") as u64, first);
            }
        }
        e
    }

    /// The largest token any process held, over every process count.
    pub fn largest_token(&self) -> Option<i64> {
        self.largest_by_n.iter().map(|s| s.1).max()
    }

    fn witness(&mut self, prop: &str, schedules: u64, first: &str) {
        match self.witnesses.iter_mut().find(|w| w.0 == prop) {
            Some(w) => w.1 += schedules,
            None => self
                .witnesses
                .push((prop.to_string(), schedules, first.to_string())),
        }
    }

    /// Processes, passages, schedules and seeds, for the row's effort.
    pub fn effort(&self) -> String {
        let t: Vec<String> = self.threads.iter().map(u64::to_string).collect();
        format!(
            "verify: {} processes, {} passages each, {} schedules over {} runs ({} completed, {} cut{})",
            t.join("/"),
            self.passages,
            self.run,
            self.seeds,
            self.completed,
            self.cut,
            if self.crashes > 0 {
                format!(", {} with crashes", self.crashes)
            } else {
                String::new()
            }
        )
    }

    /// The row of a property the exploration checks at every step: `holds` when no schedule
    /// broke anything; `differs` when one broke `property` (matched in the violation's kind);
    /// `open` when the exploration stopped at another violation first.
    pub fn property(&self, property: &str) -> Judged {
        let effort = self.effort();
        match &self.violation {
            None if self.completed == 0 => Judged {
                ours: "no schedule completed".into(),
                effort,
                verdict: Verdict::Differs(
                    "every schedule was cut at the step bound: nothing was checked".into(),
                ),
            },
            None => Judged {
                ours: format!("no violation in {} schedules", self.run),
                effort,
                verdict: Verdict::Holds,
            },
            Some((kind, replay)) if matches_property(kind, property) => Judged {
                ours: first_line(kind),
                effort,
                verdict: Verdict::Differs(format!(
                    "a schedule breaks it: lockbench verify --replay '{replay}'"
                )),
            },
            Some((kind, _)) => Judged {
                ours: "not reached".into(),
                effort,
                verdict: Verdict::Open(format!(
                    "the exploration stopped at another violation first: {}",
                    first_line(kind)
                )),
            },
        }
    }

    /// The row of a property as the lock's file claims it (see [`Said`]): [`Explored::property`]
    /// when it claims it, [`Explored::fails`] when it does not.
    pub fn claimed(&self, property: &str, claimed: bool) -> Judged {
        if claimed {
            self.property(property)
        } else {
            self.fails(property)
        }
    }

    /// The row of a property the paper says its algorithm does NOT have: `holds` when a
    /// schedule shows it failing, `open` when none did.
    pub fn fails(&self, property: &str) -> Judged {
        let scripted = self.scripted.iter().find(|w| w.0.contains(property));
        match self.witnesses.iter().find(|w| w.0.contains(property)) {
            Some((_, n, first)) if scripted.is_some() => Judged {
                ours: format!(
                    "fails in the {} and in {} of {} explored schedules",
                    scripted.map_or("", |s| s.1.as_str()),
                    n - 1,
                    self.run - 1
                ),
                effort: format!("{}; first: {}", self.effort(), first_line(first)),
                verdict: Verdict::Holds,
            },
            Some((_, n, first)) => Judged {
                ours: format!("fails in {n} schedules"),
                effort: format!("{}; first: {}", self.effort(), first_line(first)),
                verdict: Verdict::Holds,
            },
            None => Judged {
                ours: "no counter-example found".into(),
                effort: self.effort(),
                verdict: Verdict::Open(format!(
                    "{property} never failed in these schedules: a scripted schedule would show the failure the paper states"
                )),
            },
        }
    }
}

fn first_line(s: &str) -> String {
    let s = s.lines().next().unwrap_or("");
    if s.chars().count() > 110 {
        format!("{}…", s.chars().take(110).collect::<String>())
    } else {
        s.to_string()
    }
}

/// Whether a violation's kind is a failure of `property` (`safety`, `P5 FCFS`, `Theorem 1`, …).
fn matches_property(kind: &str, property: &str) -> bool {
    let k = kind.to_lowercase();
    property
        .split('|')
        .any(|p| k.contains(&p.trim().to_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn report(outcome: Value, witnesses: Value) -> Value {
        json!({"schedules_run": 100, "schedules_completed": 90, "schedules_cut": 10,
               "schedules_with_crashes": 0, "passages": 2, "threads": 3,
               "claimed": ["P5 FCFS"], "outcome": outcome, "witnesses": witnesses})
    }

    #[test]
    fn a_violation_decides_only_its_own_property() {
        let safe = report(json!({"result": "safe"}), json!([]));
        let broken = report(
            json!({"result": "violation", "kind": "SAFETY VIOLATION: process 0 inside with process 1", "schedule": "lock=glb"}),
            json!([]),
        );
        let e = Explored::of(&[safe.clone(), safe]);
        assert_eq!(e.property("safety").verdict, Verdict::Holds);
        assert_eq!((e.run, e.completed, e.seeds), (200, 180, 2));
        let e = Explored::of(&[json!(null), broken]);
        assert!(
            matches!(e.property("safety").verdict, Verdict::Differs(w) if w.contains("--replay 'lock=glb'"))
        );
        assert!(matches!(e.property("P5 FCFS").verdict, Verdict::Open(_)));
    }

    #[test]
    fn a_negative_claim_holds_on_a_witness() {
        let w = report(
            json!({"result": "safe"}),
            json!([{"property": "P8 strong concurrent entry", "schedules": 7, "first": "process 1 waited"}]),
        );
        let e = Explored::of(&[w]);
        assert_eq!(e.fails("P8").verdict, Verdict::Holds);
        assert!(matches!(e.fails("P7 FIFE").verdict, Verdict::Open(_)));
    }

    #[test]
    fn a_scripted_failure_is_named_beside_the_explored_ones() {
        let mut scripted = report(
            json!({"result": "safe"}),
            json!([{"property": "P7 FIFE", "schedules": 1, "first": "process 0 waited"}]),
        );
        scripted["scheduler"] = json!("script (seed 000 §8)");
        scripted["schedules_run"] = json!(1);
        let explored = report(json!({"result": "safe"}), json!([]));
        let j = Explored::of(&[explored.clone(), scripted]).fails("FIFE");
        assert_eq!(j.verdict, Verdict::Holds);
        assert!(
            j.ours.contains("script (seed 000 §8)") && j.ours.contains("0 of 100"),
            "{}",
            j.ours
        );
        // Without the script, nothing failed: open.
        assert!(matches!(
            Explored::of(&[explored]).fails("FIFE").verdict,
            Verdict::Open(_)
        ));
    }

    #[test]
    fn the_mutant_replaces_only_its_lock() {
        let l = Level {
            quick: true,
            mutant: Some(("glb".into(), "no-choosing-wait".into())),
        };
        let g = l.verify("glb", &[3], "");
        assert_eq!(g.len(), 2);
        assert!(g[0].ends_with(&["--mutant".into(), "no-choosing-wait".into()]));
        assert!(!l.verify("bwb-gme", &[3], "")[0].contains(&"--mutant".to_string()));
    }
}
