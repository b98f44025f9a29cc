//! Planning: from validated run options to the runs to make — which locks (the baseline first),
//! at which thread counts, under which mixes, how each thread count waits — and the checks that
//! need the plan. Nothing here runs or writes anything.

use anyhow::{Context, Result};

use crate::check::OracleKind;
use crate::engine::options::{Limits, OracleArg, RunArgs, WaitArg, TRACE_CAPACITY};
use crate::error::{usage, UsageError};
use crate::locks::Problem;
use crate::mem::WaitPolicy;
use crate::registry::{lookup, registry, LockEntry};
use crate::runner::topology::{PinMode, Topology};
use crate::workload::Mix;

/// One planned run.
pub(crate) struct Planned {
    pub entry: LockEntry,
    pub threads: usize,
    pub mix: Mix,
    pub is_baseline: bool,
    /// Its thread count's plan: `Plan::threads[at]`.
    pub at: usize,
}

/// How one thread count runs.
pub(crate) struct ThreadPlan {
    pub threads: usize,
    /// How its threads wait.
    pub policy: WaitPolicy,
    /// Whether its threads outnumber the CPUs they are placed on.
    pub oversubscribed: bool,
    /// The warnings about this thread count alone, carried into each of its results.
    pub warnings: Vec<String>,
}

/// The whole plan of an invocation, validated before anything runs or is written.
pub(crate) struct Plan {
    pub runs: Vec<Planned>,
    pub threads: Vec<ThreadPlan>,
    pub placement: Vec<usize>,
    /// Where each CPU of `placement` is (core, node, socket), in the same order.
    pub places: Vec<crate::runner::placement::Place>,
    /// Every warning, printed once before anything runs.
    pub warnings: Vec<String>,
}

/// The plan of `opts`: what runs, where, and how its threads wait.
fn plan(opts: &RunArgs, topo: &Topology) -> Result<Plan, UsageError> {
    let mut warnings = Vec::new();
    let (explicit, baseline) = chosen_locks(opts, &mut warnings)?;
    let restricted;
    let topo = match &opts.cpus {
        Some(list) => {
            restricted = restrict_to(topo, list, &opts.name("cpus"))?;
            &restricted
        }
        None => topo,
    };
    if opts.smt && !topo.smt() {
        warnings.push("--smt on a machine without SMT siblings: nothing changes".into());
    }
    if opts.cpus.is_some() && opts.pin() == PinMode::None {
        warnings.push(format!(
            "{} with --pin none: threads are not pinned, so they may run on any CPU",
            opts.name("cpus")
        ));
    }
    if let Some(crate::mem::placement::MemPolicy::Node(n)) = opts.mem_policy {
        let known: Vec<usize> = topo.numa_nodes.iter().map(|(n, _)| *n).collect();
        if !known.is_empty() && !known.contains(&n) {
            return usage(format!(
                "{} node:{n}: there is no NUMA node {n} here (nodes: {})",
                opts.name("mem-policy"),
                crate::runner::topology::format_cpu_list(&known)
            ));
        }
    }
    if opts.mem_policy.is_some() && opts.pin() == PinMode::None {
        warnings.push(format!(
            "{} with --pin none: threads are not pinned, so their nodes are unknown and every register goes where the policy puts shared ones",
            opts.name("mem-policy")
        ));
    }
    let placement = topo.placement(opts.pin(), opts.smt);
    let places = placement
        .iter()
        .filter_map(|&c| crate::runner::placement::place_of(topo, c))
        .collect();
    let threads = thread_plans(opts, topo, &placement, &mut warnings)?;
    let runs = plan_runs(opts, &threads, &explicit, &baseline, &mut warnings)?;
    Ok(Plan {
        runs,
        threads,
        placement,
        places,
        warnings,
    })
}

/// The memory plan of a run of `threads` threads under `opts`'s `--mem-policy`.
pub(crate) fn mem_plan(
    opts: &RunArgs,
    plan: &Plan,
    threads: usize,
) -> Option<crate::runner::spec::MemPlan> {
    let policy = opts.mem_policy?;
    let thread_nodes = (0..threads)
        .map(|t| {
            let cpu = crate::runner::topology::cpu_for(&plan.placement, t)?;
            plan.places.iter().find(|p| p.cpu == cpu)?.node
        })
        .collect();
    Some(crate::runner::spec::MemPlan {
        policy,
        thread_nodes,
    })
}

/// What a reader must know of how the lock's pages were placed: the kernel refused, or some
/// pages hold registers of processes on different nodes.
pub(crate) fn placed_warning(placed: Option<crate::mem::placement::Placed>) -> Vec<String> {
    let Some(p) = placed else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(e) = p.error {
        out.push(format!(
            "--mem-policy: the kernel refused to bind the lock's pages ({e}); they stay where first touched"
        ));
    }
    if p.misplaced > 0 {
        out.push(format!(
            "--mem-policy: {} of {} pages of the lock are not on the node the policy names (the kernel did not move them)",
            p.misplaced, p.pages
        ));
    }
    if p.mixed > 0 {
        out.push(format!(
            "--mem-policy local: {} of {} pages hold registers of processes on different nodes (each went to its first register's owner's node)",
            p.mixed, p.pages
        ));
    }
    out
}

/// Fills each thread's core, node and socket from the places of the plan's CPUs.
pub(crate) fn annotate(
    per_thread: &mut [crate::report::result::ThreadResult],
    places: &[crate::runner::placement::Place],
) {
    for t in per_thread {
        if let Some(place) = t.cpu.and_then(|c| places.iter().find(|p| p.cpu == c)) {
            t.core = Some(place.core);
            t.node = place.node;
            t.socket = Some(place.socket);
        }
    }
}

/// `topo` limited to the CPUs of `list` (`--cpus`), each of which must be one this process may
/// use.
pub(crate) fn restrict_to(topo: &Topology, list: &str, what: &str) -> Result<Topology, UsageError> {
    let cpus = crate::runner::topology::parse_cpu_list(list)
        .map_err(|e| UsageError(format!("{what}: {e}")))?;
    if cpus.is_empty() {
        return usage(format!(
            "{what} is empty: name CPUs such as 0-3, or leave it out"
        ));
    }
    if let Some(bad) = cpus.iter().find(|&&c| topo.cpu(c).is_none()) {
        let all: Vec<usize> = topo.cpus.iter().map(|c| c.id).collect();
        return usage(format!(
            "{what}: CPU {bad} is not one this process may use (allowed: {})",
            crate::runner::topology::format_cpu_list(&all)
        ));
    }
    Ok(topo.restrict(&cpus))
}

/// The locks `opts` names (None for `all`) and the baseline, with what deserves a warning.
fn chosen_locks(
    opts: &RunArgs,
    warnings: &mut Vec<String>,
) -> Result<(Option<Vec<LockEntry>>, LockEntry), UsageError> {
    let names = opts.locks();
    let explicit: Option<Vec<LockEntry>> = if names.iter().any(|l| l == "all") {
        if names.len() > 1 {
            return usage(format!(
                "{}: all cannot be combined with names",
                opts.name("lock")
            ));
        }
        None
    } else {
        Some(
            names
                .iter()
                .map(|n| {
                    lookup(n).map_err(|e| UsageError(format!("{}: {}", opts.name("lock"), e.0)))
                })
                .collect::<Result<_, _>>()?,
        )
    };
    if let (Some(model), Some(locks)) = (opts.rmr, &explicit) {
        if let Some(e) = locks.iter().find(|e| e.counting.is_none()) {
            return usage(format!(
                "--rmr {model}: {} is not written over the register abstraction, so its RMRs cannot be counted (drop it, or run without --rmr)",
                e.info.name
            ));
        }
    }
    // A run of one problem's locks only is compared with a baseline of that problem that waits
    // as the algorithms do, by spinning: GME with `spin-gme`, k-exclusion with
    // `spin-semaphore` (the header says how the baseline waited, measured).
    let only = |p: Problem| {
        explicit
            .as_ref()
            .is_some_and(|l| l.iter().all(|e| e.info.problem == p))
    };
    let name = match &opts.baseline {
        None if only(Problem::Gme) => "spin-gme".to_string(),
        None if only(Problem::KExclusion) => "spin-semaphore".to_string(),
        _ => opts.baseline(),
    };
    let baseline = lookup(&name).map_err(|_| {
        UsageError(format!(
            "unknown baseline {:?} ({}): `lockbench list` shows the names",
            opts.baseline(),
            opts.name("baseline")
        ))
    })?;
    if let Some(list) = &explicit {
        if !list.iter().any(|e| e.info.name == baseline.info.name) {
            warnings.push(format!(
                "baseline {} is not among the locks asked for: it runs too, in every configuration it fits, so the others have a ratio",
                baseline.info.name
            ));
        }
    }

    Ok((explicit, baseline))
}

/// Every thread count's plan: its wait policy, whether it oversubscribes, its own warnings.
fn thread_plans(
    opts: &RunArgs,
    topo: &Topology,
    placement: &[usize],
    warnings: &mut Vec<String>,
) -> Result<Vec<ThreadPlan>, UsageError> {
    let cpus_available = match opts.pin() {
        PinMode::None => topo.logical_cpus(),
        _ => placement.len(),
    };
    let thread_counts = opts.threads.threads.clone().unwrap_or_else(|| {
        let all = if opts.smt {
            cpus_available
        } else {
            topo.physical_cores()
        }
        .max(1);
        if all > 1 {
            vec![1, all]
        } else {
            vec![1]
        }
    });
    let mut plans = Vec::new();
    for &t in &thread_counts {
        let over = t > cpus_available;
        if over && !opts.oversubscribe {
            let spread = matches!(
                opts.pin(),
                PinMode::Physical | PinMode::Compact | PinMode::Scatter
            );
            let what = match (spread && !opts.smt, cpus_available) {
                (true, 1) => "physical core",
                (true, _) => "physical cores",
                (false, 1) => "CPU",
                _ => "CPUs",
            };
            return usage(format!(
                "{t} threads but only {cpus_available} {what} to place them on: pass --oversubscribe \
                 (threads then share cores and wait with spin-then-yield){} or fewer --threads",
                if opts.pin() != PinMode::Logical && opts.pin() != PinMode::None && !opts.smt && topo.smt() { ", --smt" } else { "" }
            ));
        }
        let mut own = Vec::new();
        let policy = match (opts.wait, over) {
            (Some(WaitArg::Spin), _) => WaitPolicy::Spin,
            (Some(WaitArg::Yield), _) | (None, true) => WaitPolicy::YIELD,
            (None, false) => WaitPolicy::Spin,
        };
        if over {
            own.push(format!(
                "{t} threads on {cpus_available} CPU{}: oversubscribed, waiting with {}{}",
                if cpus_available == 1 { "" } else { "s" },
                policy.name(),
                if opts.wait.is_none() {
                    " (the default when oversubscribed)"
                } else {
                    ""
                }
            ));
            warnings.extend(own.iter().cloned());
            if policy == WaitPolicy::Spin {
                warnings.push("pure spinning while oversubscribed: FIFO locks may collapse (a waiter can hold the core its predecessor needs)".into());
            }
        }
        if opts.k.k.is_some() && opts.k() >= t {
            warnings.push(format!(
                "k = {} ≥ {t} threads: a k-exclusion lock never makes anyone wait at {t} threads",
                opts.k()
            ));
        }
        if let Some(s) = opts.slots.filter(|&s| s < t) {
            warnings.push(format!(
                "{} {s} is below {t} threads: at {t} threads locks are built for {t} processes",
                opts.name("slots")
            ));
        }
        plans.push(ThreadPlan {
            threads: t,
            policy,
            oversubscribed: over,
            warnings: own,
        });
    }

    Ok(plans)
}

/// The runs: every thread count × mix × lock that serves it, the baseline first in each
/// configuration it fits.
fn plan_runs(
    opts: &RunArgs,
    threads: &[ThreadPlan],
    explicit: &Option<Vec<LockEntry>>,
    baseline: &LockEntry,
    warnings: &mut Vec<String>,
) -> Result<Vec<Planned>, UsageError> {
    let mut runs = Vec::new();
    for (at, tp) in threads.iter().enumerate() {
        let t = tp.threads;
        for mix in &opts.mixes() {
            let mut locks: Vec<LockEntry> = match explicit {
                Some(list) => {
                    for e in list {
                        if !fits(e, mix, t) {
                            return usage(format!(
                                "{} is a k-exclusion lock and ignores sessions; it cannot serve the GME mix {mix}: use --mix single or distinct, or leave it out",
                                e.info.name
                            ));
                        }
                    }
                    list.clone()
                }
                None => {
                    let (fit, left): (Vec<LockEntry>, Vec<LockEntry>) = registry()
                        .into_iter()
                        .filter(|e| e.info.safe)
                        .partition(|e| fits(e, mix, t));
                    if !left.is_empty() {
                        let names: Vec<&str> = left.iter().map(|e| e.info.name).collect();
                        let note = format!(
                            "{} left out of mix {mix}: k-exclusion locks ignore sessions",
                            names.join(", ")
                        );
                        if !warnings.contains(&note) {
                            warnings.push(note);
                        }
                    }
                    fit
                }
            };
            let base_fits = fits(baseline, mix, t);
            locks.retain(|e| e.info.name != baseline.info.name);
            if base_fits {
                runs.push(Planned {
                    entry: baseline.clone(),
                    threads: t,
                    mix: mix.clone(),
                    is_baseline: true,
                    at,
                });
            }
            for e in locks {
                runs.push(Planned {
                    entry: e,
                    threads: t,
                    mix: mix.clone(),
                    is_baseline: false,
                    at,
                });
            }
        }
    }
    Ok(runs)
}

/// Can `entry` serve `mix` at `n` threads? A k-exclusion lock ignores sessions, so it serves
/// no mix that can put two requests in one session and two in different ones; at 1 thread the
/// mix is judged as at 2, so `--lock all` holds the same locks at every thread count.
pub(crate) fn fits(entry: &LockEntry, mix: &Mix, n: usize) -> bool {
    entry.info.problem != Problem::KExclusion || !mix.needs_groups(n.max(2))
}

/// Repetitions `run` would make with `opts` (runs × rounds): `opts` layered and validated as
/// `run` validates them, so a sweep checks every point before measuring any.
pub fn planned_repetitions(opts: &RunArgs, limits: &Limits) -> Result<usize> {
    let topo = Topology::detect().context("reading the CPU topology")?;
    Ok(checked_plan(opts, &topo, limits)?.runs.len() * opts.rounds())
}

/// The plan of `opts` with the checks that need it (the counting memory's process limit, the
/// traces' memory) and what they change (`--rmr` leaves out locks it cannot count): what
/// `run` measures, and what a sweep validates each point against before measuring any.
pub(crate) fn checked_plan(
    opts: &RunArgs,
    topo: &Topology,
    limits: &Limits,
) -> Result<Plan, UsageError> {
    let mut plan = plan(opts, topo)?;
    let most = crate::mem::counting::MAX_PROCESSES;
    if opts.rmr.is_some()
        && opts
            .slots
            .unwrap_or(0)
            .max(plan.threads.iter().map(|t| t.threads).max().unwrap_or(0))
            > most
    {
        return Err(UsageError(format!(
            "{} counts at most {most} processes: lower the thread count and slots, or run without it",
            opts.name("rmr")
        )));
    }
    if opts.rmr.is_some() {
        let before = plan.runs.len();
        plan.runs.retain(|r| r.entry.counting.is_some());
        if plan.runs.len() < before {
            plan.warnings.push(
                "--rmr: locks not written over the register abstraction (std, parking_lot, spin, condvar baselines) are left out".into(),
            );
        }
    }
    if opts.trace.trace {
        for tp in &mut plan.threads {
            let t = tp.threads;
            let cap = limits.trace_capacity(t);
            if cap < 1000 {
                return usage(format!(
                    "--trace at {t} threads: the traces would not fit in the memory available; trace fewer threads"
                ));
            }
            if cap < TRACE_CAPACITY {
                let w = format!(
                    "{t} threads: traces keep {cap} passages per thread (what fits in the memory available); later passages are not traced"
                );
                tp.warnings.push(w.clone());
                plan.warnings.push(w);
            }
        }
    }
    Ok(plan)
}

/// The oracle a run of `entry` uses under `choice`.
pub(crate) fn oracle_for(choice: OracleArg, entry: &LockEntry, k: usize) -> OracleKind {
    let problem = entry.info.problem;
    match choice {
        OracleArg::Auto => OracleKind::default_for(problem, k),
        OracleArg::Sampled => OracleKind::Sampled.for_lock(problem, k),
        OracleArg::SelfCheck => OracleKind::SelfCheck.for_lock(problem, k),
        OracleArg::Counting => OracleKind::Counting,
        OracleArg::None => OracleKind::None,
    }
}

/// Checks, without creating anything, that results can be saved under `out`: it is a
/// writable directory, or can be created in one ([`crate::opts::out::check_dir`]).
pub(crate) fn check_out(opts: &RunArgs) -> Result<(), UsageError> {
    crate::opts::out::check_dir(&opts.name("out"), &opts.out())
}
