//! `lockbench verify`: explore interleavings of a lock on the scheduled memory.

use anyhow::Result;
use clap::Args as ClapArgs;

use crate::error::{usage, UsageError};
use crate::locks::Problem;
use crate::opts::{CsStepsOpt, Format, FormatOpt, KOpt, LockOpt, PassagesOpt, SeedOpt, ThreadsOpt};
use crate::registry::{lookup, LockEntry};
use crate::verify::replay::ReplayContext;
use crate::verify::{mutants, verify, SchedulerKind, SessionPlan, VerifyOptions};

/// Options of `verify`. Options left out take their default, or when replaying, the value the
/// replay string carries (an option given that contradicts it is refused).
#[derive(ClapArgs, Debug)]
#[command(mut_arg("lock", |a| a.help("Lock to verify (not needed with --replay, which carries it; with --mutants, the lock whose mutants run when --mutants names none).")))]
#[command(mut_arg("threads", |a| a.help("Processes (default 3; with --mutants each mutant runs at its own ladder of counts).")))]
#[command(mut_arg("seed", |a| a.help("Seed of the schedulers (default 1).")))]
#[command(mut_arg("passages", |a| a.help("Passages per process in each schedule (default 2).")))]
#[command(mut_arg("k", |a| a.help("Capacity for k-exclusion locks (default 2 at 3 or more processes, else 1).")))]
#[command(mut_arg("cs_steps", |a| a.help("Scheduling steps each process spends inside the critical section (default 2).")))]
#[command(mut_arg("format", |a| a.help("Output format: text or json (default text).")))]
pub struct Args {
    /// `--lock`: the one lock to verify (not needed with --replay, which carries it; with
    /// --mutants, the lock whose mutants run when --mutants names none).
    #[command(flatten)]
    pub lock: LockOpt,
    /// `--threads`: one process count (default 3; with --mutants each mutant runs at its own
    /// ladder of counts).
    #[command(flatten)]
    pub threads: ThreadsOpt,
    /// Schedules to explore (default 1000; with --mutants, per setting tried, default 1500:
    /// each mutant is tried at 3, 4 and 5 processes (2, 3, 4 for mutual exclusion), each with
    /// --cs-steps and with none, until killed).
    #[arg(long)]
    pub schedules: Option<usize>,
    /// `--seed`: of the schedulers (default 1).
    #[command(flatten)]
    pub seed: SeedOpt,
    /// `--passages`: per process in each schedule (default 2).
    #[command(flatten)]
    pub passages: PassagesOpt,
    /// `--k`: the capacity of k-exclusion locks (default 2 at 3 or more processes, else 1).
    #[command(flatten)]
    pub k: KOpt,
    /// Sessions a GME passage chooses from (default 3).
    #[arg(long)]
    pub sessions: Option<usize>,
    /// Session plan: random (each passage draws its session from the schedule's randomness)
    /// or fixed (process p asks p mod --sessions). Default random.
    #[arg(long, value_enum)]
    pub plan: Option<crate::verify::SessionPlan>,
    /// `--cs-steps`: scheduling steps each process spends inside the critical section (default 2).
    #[command(flatten)]
    pub cs_steps: CsStepsOpt,
    /// PCT depth: priority change points per schedule (default 3).
    #[arg(long)]
    pub pct_depth: Option<usize>,
    /// Steps after which one schedule is cut, neither safe nor unsafe (default 100000).
    #[arg(long)]
    pub max_steps: Option<usize>,
    /// Scheduler: random, pct, or both (half the schedules each; the default).
    #[arg(long, value_enum)]
    pub scheduler: Option<crate::verify::SchedulerKind>,
    /// Check the properties the lock does not claim too, and stop at the first that fails
    /// (a witness, printed with its replay; exit 0).
    #[arg(long)]
    pub witness: bool,
    /// Run seeded mutants: all, a lock name (its mutants) or lock/mutant; prints killed or
    /// survived per mutant and the mutation score.
    #[arg(long)]
    pub mutants: Option<String>,
    /// Explore one mutant of --lock (a name `--mutants` lists, e.g. no-flip) exactly as the
    /// lock itself would be explored, with the lock's report: how a check of a paper's claim
    /// is shown to fail on a broken algorithm.
    #[arg(long, conflicts_with_all = ["mutants", "replay"])]
    pub mutant: Option<String>,
    /// With --lock b-bakery: run B-Bakery in lockstep with UB-Bakery (seed 002 §5), every
    /// register holding the pair, the B state checked to be the UB state mod 2n−1 after every
    /// write and every line-7 comparison checked to come out the same (give it to --replay too).
    #[arg(long, conflicts_with_all = ["mutants", "mutant"])]
    pub lockstep: bool,
    /// Replay one replay string (as printed by a failing verify) instead of exploring.
    #[arg(long)]
    pub replay: Option<String>,
    /// Steps of a counter-example's trace to print: the last N before the failure (default 60;
    /// 0 prints none).
    #[arg(long, value_name = "N", conflicts_with = "trace_all")]
    pub trace: Option<usize>,
    /// Print a counter-example's whole step trace.
    #[arg(long)]
    pub trace_all: bool,
    /// Let the scheduler print its own failure messages to stderr.
    #[arg(long)]
    pub loud: bool,
    /// `--format`: table (or text, the default) or json.
    #[command(flatten)]
    pub format: FormatOpt,
    /// Output as JSON (same as --format json).
    #[arg(long)]
    pub json: bool,
}

/// `lockbench verify`: exit code 0 when no violation (or a witness found with `--witness`), 1
/// on a violation (or a surviving non-equivalent mutant), 2 on bad input, 3 when inconclusive
/// (no schedule completed).
pub fn exec(args: &Args) -> Result<i32> {
    let json = args.json
        || args
            .format
            .pick("verify", &[Format::Table, Format::Json], Format::Table)?
            == Format::Json;
    let (opts, lock) = options(args)?;

    if let Some(sel) = &args.mutants {
        let chosen = mutants::select(sel).map_err(UsageError)?;
        let mut results = Vec::new();
        for m in &chosen {
            results.push(mutants::run(m, &opts, !args.loud).map_err(UsageError)?);
        }
        if json {
            println!("{}", serde_json::to_string_pretty(&results)?);
        } else {
            print!("{}", mutants::table(&results));
        }
        let gaps = results.iter().any(|r| !r.killed && !r.equivalent);
        return Ok(i32::from(gaps));
    }

    let Some(lock) = lock else {
        return usage("give --lock NAME (or --replay with a replay string, or --mutants)")?;
    };
    let entry = match &opts.mutant {
        Some(name) => {
            let m = mutants::select(&format!("{lock}/{name}"))
                .map_err(|_| match args.mutant {
                    Some(_) => UsageError(format!(
                        "no mutant {lock}/{name}: `lockbench verify --mutants {lock}` lists the lock's mutants"
                    )),
                    None => UsageError(format!("malformed --replay: no mutant {lock}/{name}")),
                })?;
            mutants::entry(&m[0])
        }
        None => lookup(&lock)?,
    };
    let entry = if args.lockstep {
        lockstep(entry)?
    } else {
        entry
    };
    if args.k.k.is_some() && entry.info.problem != Problem::KExclusion {
        return Err(UsageError(format!(
            "--k applies to k-exclusion locks only, and {} is a {:?} lock: drop --k",
            entry.info.name, entry.info.problem
        ))
        .into());
    }
    if entry.info.problem == Problem::KExclusion && opts.k >= opts.threads {
        crate::opts::io::errln!(
            "warning: k = {} ≥ {} processes: k-exclusion can never be violated, so the safety check is vacuous",
            opts.k, opts.threads
        );
    }
    let report = verify(&entry, &opts, !args.loud).map_err(UsageError)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{report}");
    }
    Ok(report.exit_code())
}

/// `lockbench verify`: exit code 0 when no violation (or a witness found with `--witness`), 1
/// on a violation (or a surviving non-equivalent mutant), 2 on bad input, 3 when inconclusive
/// (no schedule completed).
/// B-Bakery's entry, built as the lockstep of UB-Bakery and B-Bakery.
fn lockstep(mut entry: LockEntry) -> Result<LockEntry, UsageError> {
    use crate::locks::paper::ub_bakery::Lockstep;
    use crate::mem::ScheduledMemory;
    if entry.info.name != "b-bakery" {
        return usage(format!(
            "--lockstep runs B-Bakery beside UB-Bakery: give --lock b-bakery, not {}",
            entry.info.name
        ));
    }
    entry.scheduled = Some(std::sync::Arc::new(
        |p: &crate::locks::Params| -> Box<dyn crate::locks::Lock> {
            Box::new(Lockstep::new(ScheduledMemory, p))
        },
    ));
    Ok(entry)
}

/// The exploration's options from the command line and the replay string (an option given
/// beside `--replay` must agree with the value the string carries), and the lock named.
fn options(args: &Args) -> Result<(VerifyOptions, Option<String>), UsageError> {
    let ctx = match &args.replay {
        Some(text) => Some(ReplayContext::decode(text).map_err(UsageError)?),
        None => None,
    };
    if ctx.is_some() && args.mutants.is_some() {
        return usage(
            "--replay and --mutants exclude each other: a replay string names its mutant",
        );
    }
    // An option given beside --replay must agree with the value the string carries.
    fn agree<T: PartialEq + std::fmt::Debug>(
        flag: &str,
        given: Option<T>,
        carried: Option<T>,
    ) -> Result<Option<T>, UsageError> {
        match (given, carried) {
            (Some(g), Some(c)) if g != c => usage(format!(
                "--{flag} {g:?} contradicts the replay string, recorded with {c:?}: drop --{flag} or replay with the settings it carries"
            )),
            (g, c) => Ok(g.or(c)),
        }
    }
    let c = ctx.as_ref();
    let lock = agree("lock", args.lock.one("verify")?, c.map(|c| c.lock.clone()))?;
    let threads = agree("threads", args.threads.one("verify")?, c.map(|c| c.threads))?.unwrap_or(3);
    let passages = agree(
        "passages",
        args.passages.passages.map(|p| p as usize),
        c.map(|c| c.passages),
    )?;
    let k = agree("k", args.k.one("--k")?, c.map(|c| c.k))?;
    let sessions = agree("sessions", args.sessions, c.map(|c| c.sessions))?;
    let plan_name = agree(
        "plan",
        args.plan.map(|p| format!("{p:?}").to_lowercase()),
        c.map(|c| c.plan.clone()),
    )?;
    let cs_steps = agree("cs-steps", args.cs_steps.cs_steps, c.map(|c| c.cs_steps))?;
    let max_steps = agree("max-steps", args.max_steps, c.map(|c| c.max_steps))?;
    let scheduler = args.scheduler.map(|s| format!("{s:?}").to_lowercase());
    if let (Some(s), Some(c)) = (&scheduler, c) {
        if s != "both" && *s != c.scheduler {
            return usage(format!(
                "--scheduler {s} contradicts the replay string, found by {}: drop --scheduler",
                c.scheduler
            ));
        }
    }
    if let Some(c) = c {
        if args.witness != c.witness && args.witness {
            return usage("--witness contradicts the replay string, recorded without it");
        }
    }
    let mut opts = VerifyOptions::new(threads);
    if let Some(v) = args.schedules {
        opts.schedules = v;
    } else if args.mutants.is_some() {
        opts.schedules = crate::verify::mutants::DEFAULT_SCHEDULES_PER_RUNG;
    }
    opts.seed = args.seed.get(1);
    opts.scheduler = args.scheduler.unwrap_or(SchedulerKind::Both);
    if let Some(v) = passages {
        opts.passages = v;
    }
    if let Some(v) = k {
        if v == 0 {
            return usage("--k must be at least 1");
        }
        opts.k = v;
    }
    if let Some(v) = sessions {
        opts.sessions = v;
    }
    opts.plan = match plan_name.as_deref() {
        None | Some("random") => SessionPlan::Random,
        Some("fixed") => SessionPlan::Fixed,
        Some(other) => return usage(format!("malformed --replay: unknown plan {other:?}")),
    };
    if let Some(v) = cs_steps {
        opts.cs_steps = v;
    }
    if let Some(v) = args.pct_depth {
        if v == 0 {
            return usage("--pct-depth must be at least 1");
        }
        opts.pct_depth = v;
    }
    if let Some(v) = max_steps {
        opts.max_steps = v;
    }
    opts.witness = args.witness || c.is_some_and(|c| c.witness);
    opts.mutant = c.and_then(|c| c.mutant.clone()).or(args.mutant.clone());
    opts.replay = args.replay.clone();
    opts.trace = match (args.trace_all, args.trace) {
        (true, _) => Some(usize::MAX),
        (false, Some(0)) => None,
        (false, n) => Some(n.unwrap_or(crate::verify::trace::DEFAULT_TRACE_STEPS)),
    };
    check_limits(&opts)?;
    Ok((opts, lock))
}

/// Most schedules one exploration runs.
pub const MAX_SCHEDULES: usize = 1_000_000;
/// Most passages per process, critical-section steps, sessions and PCT depth.
pub const MAX_SMALL: usize = 10_000;
/// Largest step bound of one schedule.
pub const MAX_STEPS: usize = 100_000_000;

/// Every size of the exploration against its limit (docs/commands.md, "Limits").
fn check_limits(o: &VerifyOptions) -> Result<(), UsageError> {
    let procs = crate::mem::counting::MAX_PROCESSES;
    let checks: [(&str, usize, usize, usize); 8] = [
        ("threads", o.threads, 1, procs),
        ("k", o.k, 1, procs),
        ("schedules", o.schedules, 1, MAX_SCHEDULES),
        ("passages", o.passages, 1, MAX_SMALL),
        ("cs-steps", o.cs_steps, 0, MAX_SMALL),
        ("sessions", o.sessions, 1, MAX_SMALL),
        ("pct-depth", o.pct_depth, 1, MAX_SMALL),
        ("max-steps", o.max_steps, 1, MAX_STEPS),
    ];
    for (flag, v, lo, hi) in checks {
        if v < lo || v > hi {
            return usage(format!("--{flag} {v}: between {lo} and {hi}"));
        }
    }
    Ok(())
}
