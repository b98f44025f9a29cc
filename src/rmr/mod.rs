//! `lockbench rmr`: RMRs per passage under the papers' models on a deterministic schedule,
//! beside the paper's bound.
//!
//! Every process runs on its own thread on a gated counting memory ([`crate::mem::gate`]): one
//! process moves at a time, at the schedule's choice, so the counts are exact and reproducible.
//! Schedules: round-robin, random, PCT, and the adversary — the paper's own worst case where one
//! is scripted (Burns–Lamport, seed 000 §4; Lamport's Bakery and UB-Bakery at two processes,
//! seed 002 §3.1), otherwise a greedy adversary against process N−1.

pub mod bounds;
pub mod fit;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use crate::locks::{Lock, Params, Problem};
use crate::mem::counting::RmrSummary;
use crate::mem::gate::{
    Cut, Gate, Goal, Greedy, Pct, Random, RoundRobin, Schedule, Script, SplitMix,
};
use crate::mem::{CountingMemory, Model, Section, WaitPolicy};
use crate::registry::LockEntry;
use crate::table::{Align, Table};

pub use bounds::{Bound, Direction};
pub use fit::{fit, Fit, Growth};

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
    /// The paper's scripted worst case where there is one, else a greedy adversary.
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
        }
    }
}

/// One process's figures, for the adversary's victim.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Victim {
    /// The process the adversary works against.
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
    /// Register accesses.
    pub accesses: u64,
    /// Scheduling steps, of which spins charged without running the waiter.
    pub steps: u64,
    /// Spins charged without running the waiter (see `mem::gate`).
    pub virtual_spins: u64,
    /// Wall-clock seconds.
    pub elapsed_secs: f64,
}

/// Seed 000 §4: P_N raises its bit; each lower process in turn raises its own just after, blocks
/// the one above it, and makes P_N retry and block on it; the lowest then enters and leaves, and
/// the round repeats with one process fewer. P_N is blocked N(N−1)/2 times.
pub fn burns_lamport_script(n: usize) -> Vec<Goal> {
    let hi = n - 1;
    let mut goals = Vec::new();
    for lo in 0..hi {
        goals.push(Goal::UntilWrite(hi));
        for m in (lo..hi).rev() {
            goals.push(Goal::UntilWrite(m));
            goals.push(Goal::UntilParked(m + 1));
            if m + 1 != hi {
                goals.push(Goal::UntilParked(hi));
            }
        }
        goals.push(Goal::UntilDone(lo));
    }
    goals.push(Goal::UntilDone(hi));
    goals
}

/// Seed 002 §3.1 at two processes: both finish the doorway; then, each cycle, both pass line 5;
/// the one with the smaller token (`first`) enters, leaves, and stops its next doorway just
/// before writing its token; the other enters, leaves and completes a doorway (reading −1); the
/// first then writes its token. `writes_to_exit` is the number of writes from line 6 through
/// the exit (1 for Fig. 1, 2 for Fig. 2, which also writes X), `doorway_writes` the writes of
/// the doorway (3 for both).
pub fn bakery_scenario(cycles: usize, writes_to_exit: usize) -> Script {
    let mut goals = Vec::new();
    for p in 0..2 {
        goals.extend(std::iter::repeat_n(Goal::UntilWrite(p), 3));
    }
    for _ in 0..cycles {
        // Line 5, both: gettoken of the other is false. Then the race decides who is first.
        goals.push(Goal::Steps(0, 1));
        goals.push(Goal::Steps(1, 1));
        goals.push(Goal::Race(0, 1));
    }
    Script::new(goals).with_expand(Box::new(move |first, second| {
        let mut g = Vec::new();
        // first: line 6, CS, exit, then its new doorway up to (not including) the token write.
        g.extend(std::iter::repeat_n(
            Goal::UntilWrite(first),
            writes_to_exit + 1,
        ));
        g.push(Goal::BeforeWrite(first));
        // second: line 6 (token of first is −1), CS, exit, and a whole doorway.
        g.extend(std::iter::repeat_n(
            Goal::UntilWrite(second),
            writes_to_exit + 3,
        ));
        // first: writes its token and gettoken := false.
        g.extend(std::iter::repeat_n(Goal::UntilWrite(first), 2));
        g
    }))
}

fn adversary(entry: &LockEntry, o: &RmrOptions) -> (Box<dyn Schedule>, String) {
    let n = o.threads;
    match entry.info.name {
        "burns-lamport" if n >= 2 => (
            Box::new(Script::new(burns_lamport_script(n))),
            "scripted: seed 000 §4 (P_N blocked by every lower process in turn)".into(),
        ),
        "lamport-bakery" | "ub-bakery" if n == 2 => {
            let exit_writes = if entry.info.name == "lamport-bakery" {
                1
            } else {
                2
            };
            (
                Box::new(bakery_scenario(o.passages.saturating_sub(1), exit_writes)),
                "scripted: seed 002 §3.1 (Lamport's token range grows one per cycle)".into(),
            )
        }
        _ => (
            Box::new(Greedy::new(n - 1)),
            format!(
                "greedy against process {}: invalidate its copies, run it when it pays, else run the others",
                n - 1
            ),
        ),
    }
}

/// Runs `entry` for `o.threads` processes on the gated counting memory.
pub fn run_one(entry: &LockEntry, o: &RmrOptions) -> Result<RmrReport, String> {
    let n = o.threads;
    let build = entry.counting.ok_or_else(|| {
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
    let (sched, detail): (Box<dyn Schedule>, String) = match o.schedule {
        ScheduleKind::RoundRobin => (Box::new(RoundRobin::default()), "round-robin".into()),
        ScheduleKind::Random => (
            Box::new(Random(SplitMix::new(o.seed))),
            format!("random, seed {}", o.seed),
        ),
        ScheduleKind::Pct => (
            Box::new(Pct::new(
                n,
                3,
                (o.passages * n * 200) as u64,
                SplitMix::new(o.seed),
            )),
            format!("pct depth 3, seed {}", o.seed),
        ),
        ScheduleKind::Adversarial => adversary(entry, o),
    };
    let started = Instant::now();
    let gate = Gate::new(n, o.model, sched, o.max_steps);
    let mem = CountingMemory::gated(gate.clone());
    let params = Params::new(n, o.k, WaitPolicy::Spin);
    let lock: Arc<dyn Lock> = Arc::from(build(&params, mem.clone()));
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
    std::thread::scope(|s| {
        for p in 0..n {
            let (gate, mem, lock) = (gate.clone(), mem.clone(), lock.clone());
            s.spawn(move || {
                let r = catch_unwind(AssertUnwindSafe(|| {
                    process(&gate, &mem, &*lock, problem, p, o);
                }));
                if let Err(payload) = r {
                    if payload.downcast_ref::<Cut>().is_none() {
                        let msg = payload
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_else(|| "a process panicked".into());
                        gate.fail(format!("process {p}: {msg}"));
                    }
                }
            });
        }
    });
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
    let victim = (o.schedule == ScheduleKind::Adversarial).then(|| Victim {
        process: n - 1,
        max_rmr_per_passage: mem.summary_of(Some(&[n - 1])).per_passage_max,
        blocked: gs.blocks[n - 1],
    });
    let bound = bounds::bound(entry.info.name, o.model, n);
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
        "bound", "at N", "ok", "victim", "tokens",
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
                        "P{} max {} blocked {}",
                        v.process, v.max_rmr_per_passage, v.blocked
                    )
                }),
                r.token_range_max
                    .map_or("-".into(), |t| format!("range {t}")),
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
