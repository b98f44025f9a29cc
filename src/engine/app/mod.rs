//! `lockbench app`'s engine: an unmodified program run under each lock in interleaved rounds
//! (every configuration once per round, in a shuffled order, as `run` does), with `pthread`
//! through the interposer as the baseline and the program alone beside it for the
//! interposer's own cost. The command (`crate::cmd::app`) prints; this measures and saves.

pub mod launch;
pub mod program;
mod record;
pub mod stats;
pub mod summary;

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;

use crate::error::UsageError;
use crate::locks::Problem;
use crate::report::store::Store;
use crate::workload::rng::Rng;

use launch::{Outcome, Setup, Status};

/// The baseline: the C library's own mutex, through the interposer's bookkeeping.
pub const BASELINE: &str = "pthread";
/// The program run without the interposer (the interposer's own cost).
pub const ALONE: &str = "uninterposed";

/// What `app` was asked.
#[derive(Clone, Debug)]
pub struct AppOptions {
    /// Locks to compare with `pthread` (registry names or `plugin:PATH`).
    pub locks: Vec<String>,
    /// Rounds.
    pub repeat: usize,
    /// The label of the figure to read from the program's stdout (higher is better), instead
    /// of wall time.
    pub metric: Option<String>,
    /// Per-run time limit.
    pub timeout: Duration,
    /// LOCKBENCH_PROCS.
    pub procs: usize,
    /// Where results are saved (a `run-<stamp>` directory is made under it).
    pub out: PathBuf,
    /// The program and its arguments.
    pub argv: Vec<OsString>,
    /// Seed of the rounds' order.
    pub seed: u64,
}

/// One configuration: a lock (or the program alone) and its runs.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Config {
    /// `uninterposed`, `pthread` or a lock name.
    pub name: String,
    /// Its problem (`mutex` for pthread and the program alone).
    pub problem: String,
    /// Paper and figure, "baseline", or "program alone".
    pub source: String,
    /// False for the registry's negative controls (violations expected).
    pub safe: bool,
    /// Its runs, by round.
    pub runs: Vec<Outcome>,
}

/// What the rounds gave.
pub struct Measured {
    /// Every configuration: the program alone, pthread, then the locks asked.
    pub configs: Vec<Config>,
    /// The program's name (its file name).
    pub program: String,
    /// Where the results were saved.
    pub dir: PathBuf,
}

/// Checks everything that can be checked before running: the locks, the program, the
/// interposer ([`warm_up`] then runs the program once under `pthread`).
pub fn prepare(opts: &AppOptions) -> Result<(Vec<Config>, Setup)> {
    if opts.argv.is_empty() {
        return Err(UsageError(
            "give the program to run after `--`: lockbench app --lock ticket -- PROGRAM ARGS…"
                .into(),
        )
        .into());
    }
    if opts.repeat == 0 {
        return Err(UsageError("--repeat must be at least 1".into()).into());
    }
    let mut configs = vec![
        config(ALONE, "mutex", "program alone", true),
        config(BASELINE, "mutex", "baseline", true),
    ];
    for name in &opts.locks {
        if name == BASELINE || configs.iter().any(|c| &c.name == name) {
            continue;
        }
        let entry = crate::registry::lookup(name)?;
        if entry.info.problem == Problem::KExclusion {
            return Err(UsageError(format!(
                "{name} is a k-exclusion lock: it lets several threads in at once, so it cannot \
                 stand in for a mutex; choose mutual-exclusion or GME locks"
            ))
            .into());
        }
        configs.push(config(
            name,
            entry.info.problem.name(),
            entry.info.source,
            entry.info.safe,
        ));
    }
    let program = program::resolve(&opts.argv[0].to_string_lossy())?;
    program::check_interposable(&program)?;
    let so = program::interposer()?;
    let setup = Setup::Interposed {
        so,
        lock: BASELINE.into(),
        procs: opts.procs,
    };
    Ok((configs, setup))
}

fn config(name: &str, problem: &str, source: &str, safe: bool) -> Config {
    Config {
        name: name.into(),
        problem: problem.into(),
        source: source.into(),
        safe,
        runs: Vec::new(),
    }
}

/// The program once under `pthread` (a warm-up, not measured): a program that fails there is
/// bad input.
pub fn warm_up(opts: &AppOptions, pthread: &Setup) -> Result<()> {
    let argv = resolved(opts)?;
    let program = name_of(&argv);
    let scratch = scratch();
    let warm = launch::run_once(
        &argv,
        pthread,
        opts.timeout,
        opts.metric.as_deref(),
        &scratch,
    )?;
    if warm.status != Status::Ok {
        let tail = if warm.stderr_tail.is_empty() {
            String::new()
        } else {
            format!(": {}", warm.stderr_tail)
        };
        return Err(UsageError(format!(
            "{program} fails under pthread itself ({}{tail}); fix its arguments first",
            warm.status.describe()
        ))
        .into());
    }
    Ok(())
}

fn resolved(opts: &AppOptions) -> Result<Vec<OsString>> {
    let mut argv = opts.argv.clone();
    argv[0] = program::resolve(&argv[0].to_string_lossy())?.into_os_string();
    Ok(argv)
}

fn name_of(argv: &[OsString]) -> String {
    std::path::Path::new(&argv[0])
        .file_name()
        .map_or_else(|| "program".into(), |n| n.to_string_lossy().into_owned())
}

fn scratch() -> PathBuf {
    std::env::temp_dir().join(format!("lockbench-app-{}.jsonl", std::process::id()))
}

/// Runs every configuration once per round in a shuffled order, saving as it goes;
/// `progress` hears of each run.
pub fn measure(
    opts: &AppOptions,
    mut configs: Vec<Config>,
    pthread: Setup,
    mut progress: impl FnMut(usize, &str, &Outcome),
) -> Result<Measured> {
    let argv = resolved(opts)?;
    let program = name_of(&argv);
    let scratch = scratch();
    let metric = opts.metric.as_deref();
    let Setup::Interposed { so, procs, .. } = &pthread else {
        unreachable!("prepare builds an interposed setup")
    };
    let mut store = Store::create(&opts.out)?;
    for round in 0..opts.repeat {
        let mut order: Vec<usize> = (0..configs.len()).collect();
        let mut rng = Rng::new(opts.seed ^ 0xA11_0A11, round as u64);
        for i in (1..order.len()).rev() {
            order.swap(i, rng.below(i as u64 + 1) as usize);
        }
        for &c in &order {
            let setup = if configs[c].name == ALONE {
                Setup::Alone
            } else {
                Setup::Interposed {
                    so: so.clone(),
                    lock: configs[c].name.clone(),
                    procs: *procs,
                }
            };
            let outcome = launch::run_once(&argv, &setup, opts.timeout, metric, &scratch)?;
            progress(round, &configs[c].name, &outcome);
            configs[c].runs.push(outcome);
        }
        let results = summary::results(&configs, &program, opts);
        for (slot, r) in results.iter().enumerate() {
            store.save_slot(slot, r)?;
        }
        store.save_json("app.json", &summary::details(&configs, &program, opts))?;
    }
    Ok(Measured {
        configs,
        program,
        dir: store.dir().to_path_buf(),
    })
}
