//! `lockbench rmr`: RMRs per passage under the papers' models on a deterministic schedule,
//! beside the paper's bound.
//!
//! The processes of an execution run as coroutines on one thread over a gated counting memory
//! ([`crate::mem::gate`]): one process moves at a time, at the schedule's choice, so the counts
//! are exact and reproducible; independent executions run on several threads (`--jobs`).
//! Schedules: round-robin, random, PCT, and the adversary ([`search`]) — the paper's own worst
//! case where one is scripted (Burns–Lamport, seed 000 §4; Lamport's Bakery and UB-Bakery at two
//! processes, seed 002 §3.1), otherwise the largest passage of a bounded search over schedules
//! that always includes round-robin, random and PCT at the same seed. `fit` fits the growth of
//! a figure over N.

pub mod fit;
mod jobs;
pub mod search;

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use crate::locks::{Lock, Params, Problem};
use crate::mem::counting::RmrSummary;
use crate::mem::gate::{Gate, Schedule};
use crate::mem::{CountingMemory, Model, Section, WaitPolicy};
use crate::registry::LockEntry;
use crate::table::{Align, Table};

pub use crate::locks::{Bound, Direction};
pub use fit::fit;
pub use jobs::run_all;
#[cfg(test)]
pub(crate) use search::{worst, Candidate};
pub use search::{Tried, Worst, DEFAULT_SEARCH};

/// The schedule of an `rmr` run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ScheduleKind {
    /// Every live process one step in turn.
    RoundRobin,
    /// A uniformly random live process each step (seeded).
    Random,
    /// Probabilistic concurrency testing (seeded, depth 3).
    Pct,
    /// The paper's scripted worst case where there is one, else the largest passage of a
    /// bounded search (greedy adversaries, round-robin, random and PCT at several seeds).
    Adversarial,
}

impl ScheduleKind {
    /// The name as on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ScheduleKind::RoundRobin => "round-robin",
            ScheduleKind::Random => "random",
            ScheduleKind::Pct => "pct",
            ScheduleKind::Adversarial => "adversarial",
        }
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct RmrOptions {
    /// Processes.
    pub threads: usize,
    /// The model.
    pub model: Model,
    /// The schedule.
    pub schedule: ScheduleKind,
    /// Passages per process.
    pub passages: usize,
    /// Seed of the random and PCT schedules.
    pub seed: u64,
    /// Local steps each process spends inside the critical section.
    pub cs_steps: usize,
    /// k of k-exclusion locks.
    pub k: usize,
    /// Scheduling steps after which a run is cut (an error).
    pub max_steps: u64,
    /// Adversarial: schedules the search tries beyond its four fixed ones (see [`candidates`]).
    pub search: usize,
}

impl RmrOptions {
    /// Defaults for `threads` processes under `model` and `schedule`.
    pub fn new(threads: usize, model: Model, schedule: ScheduleKind) -> Self {
        RmrOptions {
            threads,
            model,
            schedule,
            passages: 3,
            seed: 1,
            cs_steps: 2,
            k: 1,
            max_steps: 50_000_000,
            search: DEFAULT_SEARCH,
        }
    }
}

/// One process's figures, for the adversary's victim.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Victim {
    /// The process the adversary works against (the script's or greedy adversary's target; for
    /// a maximum found by another schedule, the first process whose passage reached it).
    pub process: usize,
    /// Its largest RMRs in one passage.
    pub max_rmr_per_passage: u64,
    /// Times it was blocked (a wait whose condition was false at least once).
    pub blocked: u64,
}

/// The result of one (lock, N, model, schedule).
#[derive(Clone, Debug, Serialize)]
pub struct RmrReport {
    /// Lock name.
    pub lock: String,
    /// Processes.
    pub threads: usize,
    /// `cc`, `cc-wb` or `dsm`.
    pub model: String,
    /// `round-robin`, `random`, `pct` or `adversarial`.
    pub schedule: String,
    /// What the schedule was (the script's source, or the greedy adversary's victim).
    pub schedule_detail: String,
    /// The schedule that produced these figures: `round-robin`, `random seed 7`, `pct depth 3
    /// seed 2`, `greedy against process 3`, `greedy spinning process 3` or `scripted: seed 000 §4`.
    pub found_by: String,
    /// Adversarial only: `proven` (the paper's scripted worst case) or `found` (the largest of
    /// the search, a lower estimate of the worst case); null otherwise.
    pub worst: Option<Worst>,
    /// Adversarial only: every schedule tried, in order, with its largest passage.
    pub tried: Vec<Tried>,
    /// Seed of random and PCT schedules.
    pub seed: u64,
    /// Passages per process.
    pub passages_per_process: usize,
    /// Largest RMRs of one passage (any process).
    pub max_rmr_per_passage: u64,
    /// Mean RMRs per passage (all passages).
    pub mean_rmr_per_passage: f64,
    /// Mean RMRs per passage in each section (doorway, waiting, cs, exit).
    pub by_section: serde_json::Map<String, serde_json::Value>,
    /// Largest RMRs of one passage in each section.
    pub by_section_max: serde_json::Map<String, serde_json::Value>,
    /// The paper's bound (null where the paper gives none for this model).
    pub bound: Option<Bound>,
    /// Upper bound: the largest passage is within it; lower bound (adversarial only): the
    /// worst case reaches it; null without a bound to check.
    pub within_bound: Option<bool>,
    /// The class the registry states for the lock.
    pub claimed: String,
    /// The adversary's victim (adversarial schedules).
    pub victim: Option<Victim>,
    /// Largest token range seen (Lamport's Bakery, UB-Bakery; seed 002 §3.1).
    pub token_range_max: Option<i64>,
    /// Registers the lock allocated (its shared space at N, seed 000 Table 1's "Space").
    pub registers: usize,
    /// Register accesses.
    pub accesses: u64,
    /// Scheduling steps, of which spins charged without running the waiter.
    pub steps: u64,
    /// Spins charged without running the waiter (see `mem::gate`).
    pub virtual_spins: u64,
    /// Wall-clock seconds (of the whole search, for adversarial schedules).
    pub elapsed_secs: f64,
}

/// Runs `entry` for `o.threads` processes on the gated counting memory under `o.schedule`
/// (adversarial: the search of `search::worst`, through [`run_all`]).
#[cfg(test)]
pub(crate) fn run_one(entry: &LockEntry, o: &RmrOptions) -> Result<RmrReport, String> {
    run_all(&[(entry, o.clone())], 1).pop().expect("one cell")
}

/// One run of `entry` under `sched`; `target` is the process an adversarial schedule works
/// against (reported as the victim).
pub(crate) fn run_with(
    entry: &LockEntry,
    o: &RmrOptions,
    sched: Box<dyn Schedule>,
    detail: String,
    found_by: String,
    target: Option<usize>,
) -> Result<RmrReport, String> {
    let n = o.threads;
    let build = entry.counting.clone().ok_or_else(|| {
        format!(
            "{} is not written over the register abstraction: its RMRs cannot be counted",
            entry.info.name
        )
    })?;
    if n == 0 || n > crate::mem::counting::MAX_PROCESSES {
        return Err(format!(
            "--threads {n}: between 1 and {} processes",
            crate::mem::counting::MAX_PROCESSES
        ));
    }
    let started = Instant::now();
    let gate = Gate::new(n, o.model, sched, o.max_steps);
    let mem = CountingMemory::gated(gate.clone());
    let params = Params::new(n, o.k, WaitPolicy::Spin);
    let lock: Arc<dyn Lock> = Arc::from(build(&params, mem.clone()));
    let registers = mem.registers();
    let range = Arc::new(AtomicI64::new(-1));
    {
        let (lock, range) = (lock.clone(), range.clone());
        gate.set_observer(Box::new(move || {
            if let Some(r) = lock.token_range() {
                range.fetch_max(r, Ordering::Relaxed);
            }
        }));
    }
    let problem = entry.info.problem;
    gate.run(|p| process(&gate, &mem, &*lock, problem, p, o));
    if let Some(e) = gate.error() {
        return Err(format!(
            "{} at {n} processes ({}, {}): {e}",
            entry.info.name,
            o.model,
            o.schedule.name()
        ));
    }
    let all: RmrSummary = mem.summary();
    let gs = gate.stats();
    let victim = (o.schedule == ScheduleKind::Adversarial).then(|| {
        let max_of = |p: usize| mem.summary_of(Some(&[p])).per_passage_max;
        let process = target.unwrap_or_else(|| {
            (0..n)
                .find(|&p| max_of(p) == all.per_passage_max)
                .unwrap_or(0)
        });
        Victim {
            process,
            max_rmr_per_passage: max_of(process),
            blocked: gs.blocks[process],
        }
    });
    let bound = (entry.info.bound)(o.model, n);
    let within_bound = bound.as_ref().and_then(|b| match b.direction {
        Direction::Upper => Some(all.per_passage_max <= b.value),
        Direction::Lower => {
            (o.schedule == ScheduleKind::Adversarial).then_some(all.per_passage_max >= b.value)
        }
    });
    let r = range.load(Ordering::Relaxed);
    Ok(RmrReport {
        lock: entry.info.name.into(),
        threads: n,
        model: o.model.name().into(),
        schedule: o.schedule.name().into(),
        schedule_detail: detail,
        found_by,
        worst: None,
        tried: Vec::new(),
        seed: o.seed,
        passages_per_process: o.passages,
        max_rmr_per_passage: all.per_passage_max,
        mean_rmr_per_passage: all.per_passage_mean,
        by_section: all.by_section,
        by_section_max: all.by_section_max,
        bound,
        within_bound,
        claimed: entry.info.rmr.into(),
        victim,
        token_range_max: (r >= 0).then_some(r),
        registers,
        accesses: all.accesses,
        steps: gs.steps,
        virtual_spins: gs.virtual_spins,
        elapsed_secs: started.elapsed().as_secs_f64(),
    })
}

/// One process's passages: sections marked by the harness, the doorway's end by the lock.
fn process(
    gate: &Gate,
    mem: &CountingMemory,
    lock: &dyn Lock,
    problem: Problem,
    p: usize,
    o: &RmrOptions,
) {
    let session = match problem {
        Problem::Gme => p % 2,
        _ => p,
    };
    gate.arrive(p);
    for _ in 0..o.passages {
        mem.begin_passage(p);
        let mut doorway = false;
        lock.enter_traced(p, session, &mut || {
            doorway = true;
            mem.set_section(p, Section::Waiting);
        });
        if !doorway {
            mem.doorway_unobserved(p);
        }
        mem.set_section(p, Section::Cs);
        for _ in 0..o.cs_steps {
            gate.step(p, None);
        }
        mem.set_section(p, Section::Exit);
        lock.exit(p, session);
        mem.end_passage(p);
    }
    gate.finish(p);
}

fn cell(v: &serde_json::Value) -> String {
    match v.as_f64() {
        Some(x) if x.fract() == 0.0 => format!("{x:.0}"),
        Some(x) => format!("{x:.1}"),
        None => "-".into(),
    }
}

/// The reports as an aligned table.
pub fn table(reports: &[RmrReport]) -> String {
    let headers = [
        "lock", "N", "model", "schedule", "max", "mean", "doorway", "waiting", "cs", "exit",
        "bound", "at N", "ok", "victim", "tokens", "worst",
    ];
    let rows: Vec<Vec<String>> = reports
        .iter()
        .map(|r| {
            let sec = |k: &str| cell(&r.by_section[k]);
            vec![
                r.lock.clone(),
                r.threads.to_string(),
                r.model.clone(),
                r.schedule.clone(),
                r.max_rmr_per_passage.to_string(),
                format!("{:.1}", r.mean_rmr_per_passage),
                sec("doorway"),
                sec("waiting"),
                sec("cs"),
                sec("exit"),
                r.bound
                    .as_ref()
                    .map_or("none".into(), |b| match b.direction {
                        Direction::Upper => format!("≤ {}", b.formula),
                        Direction::Lower => format!("≥ {}", b.formula),
                    }),
                r.bound.as_ref().map_or("-".into(), |b| b.value.to_string()),
                match r.within_bound {
                    Some(true) => "yes".into(),
                    Some(false) => "NO".into(),
                    None => "-".into(),
                },
                r.victim.as_ref().map_or("-".into(), |v| {
                    format!(
                        "process {} max {} blocked {}",
                        v.process, v.max_rmr_per_passage, v.blocked
                    )
                }),
                r.token_range_max
                    .map_or("-".into(), |t| format!("range {t}")),
                r.worst
                    .map_or("-".into(), |w| format!("{} ({})", w.name(), r.found_by)),
            ]
        })
        .collect();
    // Names and bounds read left to right, figures line up on the right.
    let mut t = Table::new(|i| {
        if i <= 3 || i >= 10 {
            Align::Left
        } else {
            Align::Right
        }
    });
    t.row(headers);
    for r in rows {
        t.row(r);
    }
    let mut out = t.render();
    let mut notes: Vec<String> = Vec::new();
    for r in reports {
        if let Some(b) = &r.bound {
            let c = b.c.map(|c| format!(" (c = {c})")).unwrap_or_default();
            let note = format!("{} ({}): {}{c} — {}", r.lock, r.model, b.formula, b.source);
            if !notes.contains(&note) {
                notes.push(note);
            }
        }
    }
    if !notes.is_empty() {
        out.push_str("\nbounds:\n");
        for n in notes {
            out.push_str(&format!("  {n}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests;
