//! `lockbench rmr`: RMRs per passage under the papers' models, on a deterministic schedule.

use anyhow::Result;
use clap::Args as ClapArgs;

use crate::error::UsageError;
use crate::opts::{CsStepsOpt, Format, FormatOpt, KOpt, LockOpt, PassagesOpt, SeedOpt, ThreadsOpt};
use crate::registry::{lookup, registry, LockEntry};
use crate::rmr::{run_all, table, RmrOptions};

/// Options of `rmr`.
#[derive(ClapArgs, Debug)]
#[command(mut_arg("lock", |a| a.help("Locks: comma-separated names, or `all` (every safe lock written over the register abstraction); default all.")))]
#[command(mut_arg("threads", |a| a.help("Process counts, comma-separated (each at most 64); default 4.")))]
#[command(mut_arg("passages", |a| a.help("Passages per process; default 3.")))]
#[command(mut_arg("seed", |a| a.help("Seed of the random and PCT schedules; default 1.")))]
#[command(mut_arg("k", |a| a.help("Capacity of k-exclusion locks; default 1.")))]
#[command(mut_arg("cs_steps", |a| a.help("Local steps each process spends inside the critical section; default 2.")))]
#[command(mut_arg("format", |a| a.help("Output format: table or json (default table).")))]
pub struct Args {
    /// `--lock`: the locks (default all: every safe lock written over the register
    /// abstraction).
    #[command(flatten)]
    pub lock: LockOpt,
    /// `--threads`: process counts (default 4; each at most 64).
    #[command(flatten)]
    pub threads: ThreadsOpt,
    /// Models, comma-separated: cc (write-through, every write remote), cc-wb (write-back),
    /// dsm (remote unless the register's home).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "cc")]
    pub model: Vec<crate::mem::Model>,
    /// Schedules, comma-separated: round-robin, random, pct, adversarial (the paper's scripted
    /// worst case where there is one, else the largest passage of a search over greedy
    /// adversaries, round-robin, random and PCT, never below those three at the same seed).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "round-robin")]
    pub schedule: Vec<crate::rmr::ScheduleKind>,
    /// Adversarial: schedules the search tries beyond its four fixed ones (greedy against N−1,
    /// round-robin, random and PCT at --seed): random and PCT at the next seeds, greedy against
    /// other victims and spinning them.
    #[arg(long, value_name = "TRIES", default_value_t = crate::rmr::DEFAULT_SEARCH)]
    pub search: usize,
    /// Runs at once, one per thread (0: one per CPU): the cells and the schedules an
    /// adversarial search tries. Results do not depend on it.
    #[arg(long, default_value_t = 0)]
    pub jobs: usize,
    /// `--passages`: per process (default 3).
    #[command(flatten)]
    pub passages: PassagesOpt,
    /// `--seed`: of the random and PCT schedules (default 1).
    #[command(flatten)]
    pub seed: SeedOpt,
    /// `--k`: the capacity of k-exclusion locks (default 1).
    #[command(flatten)]
    pub k: KOpt,
    /// `--cs-steps`: local steps each process spends inside the critical section (default 2).
    #[command(flatten)]
    pub cs_steps: CsStepsOpt,
    /// `--format`: table (default) or json.
    #[command(flatten)]
    pub format: FormatOpt,
}

/// `lockbench rmr`: exit code 0 when every bound checked holds, 1 otherwise.
pub fn exec(args: &Args) -> Result<i32> {
    let locks = args.lock.names_or(&["all"]);
    let threads = args.threads.counts_or(&[4]);
    let entries: Vec<LockEntry> = if locks.iter().any(|l| l == "all") {
        if locks.len() > 1 {
            return Err(UsageError("--lock all cannot be combined with names".into()).into());
        }
        registry()
            .into_iter()
            .filter(|e| e.info.safe && e.counting.is_some())
            .collect()
    } else {
        let mut v = Vec::new();
        for name in &locks {
            let e = lookup(name.trim())?;
            if e.counting.is_none() {
                return Err(UsageError(format!(
                    "{name} is not written over the register abstraction, so its RMRs cannot be counted; `lockbench list` shows the locks with an RMR class"
                ))
                .into());
            }
            v.push(e);
        }
        v
    };
    let max = crate::mem::counting::MAX_PROCESSES;
    if threads.is_empty() || threads.iter().any(|&t| t == 0 || t > max) {
        return Err(UsageError(format!(
            "--threads: each between 1 and {max} (e.g. --threads 4,8)"
        ))
        .into());
    }
    let (passages, k) = check_sizes(args, &threads)?;
    let format = args
        .format
        .pick("rmr", &[Format::Table, Format::Json], Format::Table)?;
    let mut cells = Vec::new();
    for e in &entries {
        for &n in &threads {
            for &model in &args.model {
                for &schedule in &args.schedule {
                    let mut o = RmrOptions::new(n, model, schedule);
                    o.passages = passages;
                    o.seed = args.seed.get(1);
                    o.k = k;
                    o.cs_steps = args.cs_steps.get();
                    o.search = args.search;
                    cells.push((e, o));
                }
            }
        }
    }
    let mut reports = Vec::new();
    let mut failed = false;
    for r in run_all(&cells, args.jobs) {
        match r {
            Ok(r) => {
                failed |= r.within_bound == Some(false);
                reports.push(r);
            }
            Err(msg) => {
                crate::opts::io::errln!("error: {msg}");
                failed = true;
            }
        }
    }
    if format == Format::Json {
        println!("{}", serde_json::to_string_pretty(&reports)?);
    } else {
        print!("{}", table(&reports));
    }
    Ok(i32::from(failed))
}

/// Most schedules the adversarial search tries beyond its fixed four.
pub const MAX_SEARCH: usize = 10_000;

/// Passages and k, checked with the critical-section steps and the search against their
/// limits: one execution is cut after [`RmrOptions`]'s step bound, so the steps the options
/// ask for at the largest process count must fit in it.
fn check_sizes(args: &Args, threads: &[usize]) -> Result<(usize, usize), UsageError> {
    let passages = args.passages.passages.unwrap_or(3);
    let k = args.k.one("--k")?.unwrap_or(1);
    if passages == 0 {
        return Err(UsageError("--passages must be at least 1".into()));
    }
    if k == 0 || k > crate::mem::counting::MAX_PROCESSES {
        return Err(UsageError(format!(
            "--k {k}: between 1 and {}",
            crate::mem::counting::MAX_PROCESSES
        )));
    }
    if args.search > MAX_SEARCH {
        return Err(UsageError(format!(
            "--search {}: at most {MAX_SEARCH} schedules",
            args.search
        )));
    }
    let bound = RmrOptions::new(
        1,
        crate::mem::Model::Cc,
        crate::rmr::ScheduleKind::RoundRobin,
    )
    .max_steps;
    let n = threads.iter().copied().max().unwrap_or(1) as u128;
    // Each passage takes its critical-section steps and at least one step of the lock.
    let steps = n * u128::from(passages) * (args.cs_steps.get() as u128 + 1);
    if steps > u128::from(bound) {
        return Err(UsageError(format!(
            "--threads {n} × --passages {passages} × (--cs-steps {} + 1) = {steps} scheduling steps: at most {bound} in one execution; lower one of them",
            args.cs_steps.get()
        )));
    }
    Ok((passages as usize, k))
}
