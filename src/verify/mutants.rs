//! Seeded mutants of the locks and their kill score: how strong `verify` is.
//!
//! Each lock's file describes its mutants where it implements them (its `LockInfo`'s
//! `mutants`); this module only selects and runs them. Each mutant is one line of its figure changed (a wait dropped, `<` turned into `≤`, a write
//! skipped or reordered, a reset dropped). The mutation sits in the algorithm's own text behind
//! a const generic (`GlbLock<M, MUT>`, `mutant::NO_CHOOSING_WAIT`, …), so a mutant runs exactly
//! the code that is timed, with one line changed, and cannot drift from it as a copy could;
//! the registered locks are `MUT = 0`, for which every mutation branch is a compile-time
//! constant that folds away, so the native hot path is the same machine code. Mutants are not
//! in the registry's names (`lockbench list`, `all`); only `verify --mutants` builds them.
//!
//! A mutant is killed when `verify` finds a violation of the safety property, an invariant,
//! deadlock freedom or a property the lock claims. A survivor is either argued equivalent (the
//! `equivalent` text) or a gap in `verify`.

use serde::Serialize;

use crate::locks::Mutant;
use crate::registry::{registry, LockEntry};

use super::{verify, Outcome, VerifyOptions};

/// A mutant of a registered lock: the lock's entry and the mutant its file describes.
#[derive(Clone)]
pub struct Chosen {
    /// The lock it mutates.
    pub lock: LockEntry,
    /// The mutant.
    pub mutant: Mutant,
}

/// Every mutant of every lock of the registry, by lock in listing order.
pub fn catalogue() -> Vec<Chosen> {
    registry()
        .into_iter()
        .flat_map(|lock| {
            (lock.info.mutants)().into_iter().map(move |mutant| Chosen {
                lock: lock.clone(),
                mutant,
            })
        })
        .collect()
}

/// Mutants selected by `NAME` (`lock/mutant`, a lock name for all of its mutants, or `all`).
pub fn select(name: &str) -> Result<Vec<Chosen>, String> {
    let all = catalogue();
    let chosen: Vec<Chosen> = all
        .iter()
        .filter(|m| {
            let lock = m.lock.info.name;
            name == "all" || name == lock || name == format!("{lock}/{}", m.mutant.name)
        })
        .cloned()
        .collect();
    if chosen.is_empty() {
        let example = all
            .first()
            .map(|m| format!(" (e.g. {}/{})", m.lock.info.name, m.mutant.name))
            .unwrap_or_default();
        return Err(format!(
            "no mutant `{name}`: give all, a lock name with mutants, or lock/mutant{example}"
        ));
    }
    Ok(chosen)
}

/// The registry entry of a mutant: its lock's entry with the mutant's builder.
pub fn entry(m: &Chosen) -> LockEntry {
    let mut e = m.lock.clone();
    e.scheduled = Some(m.mutant.build.clone());
    e
}

/// How one mutant fared.
#[derive(Clone, Debug, Serialize)]
pub struct MutantResult {
    /// The lock.
    pub lock: String,
    /// The mutant.
    pub mutant: String,
    /// The line of the figure changed.
    pub line: String,
    /// The change.
    pub change: String,
    /// A violation was found.
    pub killed: bool,
    /// Argued equivalent to the algorithm (then surviving is expected).
    pub equivalent: bool,
    /// Why it is equivalent.
    pub argument: Option<String>,
    /// Schedules explored up to and including the killing one (None if it survived).
    pub schedules_to_kill: Option<usize>,
    /// Schedules explored in all.
    pub schedules_run: usize,
    /// Processes of the killing run.
    pub threads: Option<usize>,
    /// Steps inside the critical section in the killing run.
    pub cs_steps: Option<usize>,
    /// What broke.
    pub kind: Option<String>,
    /// The replay string of the kill.
    pub replay: Option<String>,
    /// How hard it was tried: the scheduler, its seed and PCT depth, the passages per
    /// process, and the (processes, critical-section steps) rungs run, in order.
    pub tried: Tried,
}

/// The settings a mutant was explored with.
#[derive(Clone, Debug, Serialize)]
pub struct Tried {
    /// `pct`, `random` or `both`.
    pub scheduler: String,
    /// The first seed (each rung's schedules follow from it).
    pub seed: u64,
    /// PCT change points.
    pub pct_depth: usize,
    /// Passages per process.
    pub passages: usize,
    /// Schedules per rung.
    pub schedules_per_rung: usize,
    /// (processes, critical-section steps) of each rung run, in order.
    pub rungs: Vec<(usize, usize)>,
}

/// The settings a mutant is tried at, in order: thread counts smallest first (every problem
/// needs enough processes to show its violations: GME 3 for a conflict beside a shared
/// session, k-exclusion k + 1 with k = 2), each with the given steps inside the critical
/// section and then with none. Both matter under PCT: a yield inside the critical section
/// drops the holder to the lowest priority (others run while it is inside), while with none a
/// holder keeps running through its exit and its next passage while a process it overtook
/// stays parked mid-doorway (how `bwb-gme` without the line 28 guard is caught). A mutant
/// that shows only at fewer processes ([`Mutant::from_threads`]) starts there.
///
/// [`Mutant::from_threads`]: crate::locks::Mutant::from_threads
fn ladder(entry: &LockEntry, from: usize, cs_steps: usize) -> Vec<(usize, usize)> {
    let (fewest, most) = match entry.info.problem {
        crate::locks::Problem::Mutex => (2, 4),
        _ => (3, 5),
    };
    let fewest = if from == 0 { fewest } else { from.min(fewest) };
    let mut rungs = Vec::new();
    for n in fewest..=most {
        rungs.push((n, cs_steps));
        if cs_steps != 0 {
            rungs.push((n, 0));
        }
    }
    rungs
}

/// Schedules per rung of the ladder by default: six rungs stay within 10,000 schedules.
pub const DEFAULT_SCHEDULES_PER_RUNG: usize = 1500;

/// Runs one mutant with `base`'s settings at each rung of its ladder, `base.schedules`
/// schedules each, until it is killed.
pub fn run(chosen: &Chosen, base: &VerifyOptions, quiet: bool) -> Result<MutantResult, String> {
    let e = entry(chosen);
    let m = &chosen.mutant;
    let mut total = 0;
    let mut result = MutantResult {
        lock: e.info.name.to_string(),
        mutant: m.name.to_string(),
        line: m.line.to_string(),
        change: m.change.to_string(),
        killed: false,
        equivalent: m.equivalent.is_some(),
        argument: m.equivalent.map(String::from),
        schedules_to_kill: None,
        schedules_run: 0,
        threads: None,
        cs_steps: None,
        kind: None,
        replay: None,
        tried: Tried {
            scheduler: format!("{:?}", base.scheduler).to_lowercase(),
            seed: base.seed,
            pct_depth: base.pct_depth.max(m.at_least.1),
            passages: base.passages.max(m.at_least.0),
            schedules_per_rung: base.schedules,
            rungs: Vec::new(),
        },
    };
    for (n, cs_steps) in ladder(&e, m.from_threads, base.cs_steps) {
        result.tried.rungs.push((n, cs_steps));
        let mut o = base.clone();
        o.threads = n;
        o.k = VerifyOptions::default_k(n);
        o.cs_steps = cs_steps;
        o.passages = o.passages.max(m.at_least.0);
        o.pct_depth = o.pct_depth.max(m.at_least.1);
        o.mutant = Some(m.name.to_string());
        // The mutant table prints no trace: do not replay the kill once more to build one.
        o.trace = None;
        let r = verify(&e, &o, quiet)?;
        total += r.schedules_run;
        if let Outcome::Violation { kind, schedule } = r.outcome {
            result.killed = true;
            result.schedules_to_kill = Some(total);
            result.threads = Some(n);
            result.cs_steps = Some(cs_steps);
            result.kind = Some(kind);
            result.replay = Some(schedule);
            break;
        }
    }
    result.schedules_run = total;
    Ok(result)
}

/// The mutation score: killed / (mutants − proven equivalent), over `results`.
pub fn score(results: &[MutantResult]) -> (usize, usize) {
    let killed = results.iter().filter(|r| r.killed).count();
    let counted = results.iter().filter(|r| !r.equivalent || r.killed).count();
    (killed, counted)
}

/// The table `verify --mutants` prints: columns as wide as their widest cell. A killed row's
/// `n` and `cs` are the killing run's; a survivor's are every rung it was tried at, and its
/// `schedules` all it explored.
pub fn table(results: &[MutantResult]) -> String {
    use crate::table::{Align, Table};
    use std::fmt::Write;
    let mut out = String::new();
    let mut t = Table::new(|i| match i {
        4..=9 => Align::Right,
        _ => Align::Left,
    });
    t.row([
        "lock",
        "mutant",
        "line",
        "result",
        "schedules",
        "n",
        "cs",
        "passages",
        "seed",
        "depth",
        "what broke / why equivalent",
    ])
    .rule();
    for r in results {
        let verdict = if r.killed {
            "killed"
        } else if r.equivalent {
            "equiv."
        } else {
            "SURVIVED"
        };
        // The argument's first sentence (the whole is in the JSON's `argument`).
        let why = if r.killed {
            r.kind.clone().unwrap_or_default()
        } else {
            let a = r.argument.clone().unwrap_or_default();
            let end = [". ", "; "]
                .iter()
                .filter_map(|sep| a.find(sep))
                .min()
                .unwrap_or(a.len());
            a[..end].to_string()
        };
        let listed = |f: fn(&(usize, usize)) -> usize| {
            let mut seen: Vec<usize> = Vec::new();
            for x in r.tried.rungs.iter().map(f) {
                if !seen.contains(&x) {
                    seen.push(x);
                }
            }
            seen.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(",")
        };
        let (schedules, n, cs) = if r.killed {
            (
                r.schedules_to_kill.map_or("-".into(), |s| s.to_string()),
                r.threads.map_or("-".into(), |s| s.to_string()),
                r.cs_steps.map_or("-".into(), |s| s.to_string()),
            )
        } else {
            (
                r.schedules_run.to_string(),
                listed(|r| r.0),
                listed(|r| r.1),
            )
        };
        t.row([
            r.lock.clone(),
            r.mutant.clone(),
            r.line.clone(),
            verdict.to_string(),
            schedules,
            n,
            cs,
            r.tried.passages.to_string(),
            r.tried.seed.to_string(),
            r.tried.pct_depth.to_string(),
            why,
        ]);
    }
    out.push_str(&t.render());
    let _ = writeln!(
        out,
        "schedules: explored up to the kill (killed) or in all (otherwise); n, cs: processes and \
         critical-section steps of the killing run, or every setting tried; seed: the first \
         seed; depth: PCT change points"
    );
    let (killed, counted) = score(results);
    let _ = writeln!(
        out,
        "mutation score: {killed}/{counted} killed ({:.0}%), {} argued equivalent",
        if counted == 0 {
            100.0
        } else {
            100.0 * killed as f64 / counted as f64
        },
        results.iter().filter(|r| r.equivalent && !r.killed).count()
    );
    out
}
