//! `lockbench fidelity`: the harness's loop against a bare loop of the same lock.

use clap::Args as ClapArgs;

use std::time::Duration;

use anyhow::{Context, Result};

use crate::engine::fidelity::{
    default_sampling, measure_all, measure_boundary, BoundaryPoint, FidelityPlan, FIDELITY_LOCKS,
};
use crate::engine::options::{OracleArg, WaitArg};
use crate::error::UsageError;
use crate::locks::Problem;
use crate::mem::WaitPolicy;
use crate::opts::{Format, FormatOpt, LockOpt, LoopOpt, OutOpt, RoundsOpt, ThreadsOpt, WindowOpt};
use crate::registry::plugin::PREFIX;
use crate::registry::{lookup, LockEntry};
use crate::report::rate;
use crate::report::store::Store;
use crate::runner::fidelity::FidelityPoint;
use crate::runner::topology::{PinMode, Topology};
use crate::workload::format_duration;

/// Options of `fidelity`.
#[derive(ClapArgs, Debug)]
#[command(mut_arg("lock", |a| a.help("Locks to measure (default: parking-lot-mutex, spin-ticket, std-mutex, ticket; `noop` is always added at 1 thread: the harness's cost above an empty loop).")))]
#[command(mut_arg("threads", |a| a.help("Thread counts (default 1 and every physical core).")))]
#[command(mut_arg("rounds", |a| a.help("Rounds per point; each runs the bare loop and the harness once (default 7).")))]
#[command(mut_arg("duration", |a| a.help("Measured time of each loop in each round (default 200ms).")))]
#[command(mut_arg("warmup", |a| a.help("Warm-up of each loop (default 50ms).")))]
#[command(mut_arg("oracle", |a| a.help("The harness loop's oracle (default auto, as `run`): `--oracle none` shows what the loop costs without the oracle's critical-section accesses.")))]
#[command(mut_arg("latency_sample", |a| a.help("Time one passage in N in the harness loop (default as `run`: chosen from what timing one passage costs here).")))]
#[command(mut_arg("format", |a| a.help("Output format: table or json (default table).")))]
#[command(mut_arg("out", |a| a.help("Directory the results are saved under (default reports/).")))]
pub struct Args {
    /// `--lock`: the locks to measure (default: parking-lot-mutex, spin-ticket, std-mutex, ticket; `noop`
    /// is always added at 1 thread: the harness's cost above an empty loop).
    #[command(flatten)]
    pub lock: LockOpt,
    /// `--threads`: the thread counts (default 1 and every physical core).
    #[command(flatten)]
    pub threads: ThreadsOpt,
    /// `--rounds`: per point; each runs the bare loop and the harness once (default 7).
    #[command(flatten)]
    pub rounds: RoundsOpt,
    /// `--duration`: the measured time of each loop in each round (default 200ms);
    /// `--warmup`: of each loop (default 50ms).
    #[command(flatten)]
    pub window: WindowOpt,
    /// `--oracle`: the harness loop's oracle (default auto, as `run`: `--oracle none` shows
    /// what the loop costs without the oracle's critical-section accesses); `--latency-sample`:
    /// one passage in N timed in the harness loop (default as `run`).
    #[command(flatten)]
    pub harness: LoopOpt,
    /// `--format`: table (default) or json.
    #[command(flatten)]
    pub format: FormatOpt,
    /// `--out`: the directory the results are saved under (default reports/).
    #[command(flatten)]
    pub out: OutOpt,
    /// How waiting threads wait in both loops (default spin: fidelity pins one thread per
    /// physical core). `yield` where the cores are emulated or shared with other work, where a
    /// pure spinner can hold the CPU the lock holder needs.
    #[arg(long, value_enum)]
    pub wait: Option<WaitArg>,
    /// The plug-in boundary instead: each `plugin:PATH=LOCK` sets the C plug-in against the
    /// built-in LOCK it reimplements, both in a bare loop at 1 thread, and reports what the
    /// boundary costs per passage (e.g. `plugin:target/c-examples/libticket.so=ticket`).
    #[arg(long, value_name = "plugin:PATH=LOCK", value_delimiter = ',', conflicts_with_all = ["lock", "threads"])]
    pub boundary: Option<Vec<String>>,
}

/// `lockbench fidelity`: harness against bare loop, interleaved, per lock and thread count.
pub fn exec(args: &Args) -> Result<i32> {
    let duration = args
        .window
        .duration
        .map_or(Duration::from_millis(200), |d| d.0);
    let warmup = args
        .window
        .warmup
        .map_or(Duration::from_millis(50), |d| d.0);
    let rounds = args.rounds.get(7);
    check_limits(args, duration, warmup, rounds)?;
    let format = args
        .format
        .pick("fidelity", &[Format::Table, Format::Json], Format::Table)?;
    let out_dir = args
        .out
        .out
        .clone()
        .unwrap_or_else(|| std::path::PathBuf::from("reports"));
    let names: Vec<String> = args.lock.names_or(&FIDELITY_LOCKS);
    let entries = names
        .iter()
        .map(|n| lookup(n.trim()))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(e) = entries.iter().find(|e| e.info.problem != Problem::Mutex) {
        return Err(UsageError(format!(
            "{} is not a mutual-exclusion lock: fidelity runs every thread in its own session, which only a mutex serves",
            e.info.name
        ))
        .into());
    }
    let topo = Topology::detect().context("reading the CPU topology")?;
    let placement = topo.placement(PinMode::Physical, false);
    let cores = placement.len().max(1);
    let threads = args.threads.threads.clone().unwrap_or_else(|| {
        if cores > 1 {
            vec![1, cores]
        } else {
            vec![1]
        }
    });
    if threads.is_empty() || threads.contains(&0) {
        return Err(UsageError("--threads must be at least 1 (e.g. --threads 1,2)".into()).into());
    }
    if let Some(t) = threads.iter().find(|&&t| t > cores) {
        return Err(UsageError(format!(
            "{t} threads but {cores} physical cores: fidelity measures pinned threads, one per core"
        ))
        .into());
    }
    if let Some(pairs) = &args.boundary {
        let pairs = boundary_pairs(pairs)?;
        crate::opts::out::check_dir("--out", &out_dir)?;
        let store = Store::create(&out_dir).map_err(|e| {
            UsageError(format!("--out {}: {e:#}", crate::opts::io::shown(&out_dir)))
        })?;
        crate::runner::catch_interrupts();
        return boundary(
            &pairs,
            &placement,
            (duration, warmup),
            rounds,
            format,
            &store,
        );
    }
    crate::opts::out::check_dir("--out", &out_dir)?;
    let store = Store::create(&out_dir)
        .map_err(|e| UsageError(format!("--out {}: {e:#}", crate::opts::io::shown(&out_dir))))?;
    crate::runner::catch_interrupts();
    let sampling = args
        .harness
        .latency_sample
        .map_or_else(default_sampling, |n| (n, None));
    let points = measure_all(
        &FidelityPlan {
            entries: &entries,
            threads: &threads,
            placement: &placement,
            duration,
            warmup,
            sampling,
            rounds,
            oracle: args.harness.oracle.unwrap_or(OracleArg::Auto),
            wait: match args.wait {
                Some(WaitArg::Yield) => WaitPolicy::YIELD,
                Some(WaitArg::Spin) | None => WaitPolicy::Spin,
            },
        },
        &store,
    );
    // Nothing saved (refused midway, or interrupted before a point finished): no directory.
    let _ = std::fs::remove_dir(store.dir());
    let (points, busy) = points?;
    let Some(sig) = crate::runner::interrupted() else {
        print!(
            "{}",
            render(&points, &busy, format, rounds, duration, sampling, &store)?
        );
        return Ok(0);
    };
    // What finished is printed; the exit code says the run was cut short.
    let measured = points.len().saturating_sub(1);
    if measured > 0 {
        print!(
            "{}",
            render(&points, &busy, format, rounds, duration, sampling, &store)?
        );
    }
    crate::opts::io::errln!(
        "interrupted: {measured} of {} points saved in {}",
        entries.len() * threads.len(),
        if measured > 0 {
            crate::opts::io::shown(store.dir())
        } else {
            "no directory (nothing finished)".into()
        }
    );
    Ok(128 + sig)
}

/// `--boundary`'s pairs, each a plug-in and the built-in lock it is set against.
fn boundary_pairs(pairs: &[String]) -> Result<Vec<(LockEntry, LockEntry)>> {
    let mut out = Vec::new();
    for pair in pairs {
        let bad = |why: &str| -> anyhow::Error {
            UsageError(format!(
                "--boundary {pair}: {why} (e.g. --boundary plugin:target/c-examples/libticket.so=ticket)"
            ))
            .into()
        };
        let Some((plugin, compiled)) = pair.trim().rsplit_once('=') else {
            return Err(bad("give plugin:PATH=LOCK"));
        };
        if !plugin.starts_with(PREFIX) || compiled.starts_with(PREFIX) {
            return Err(bad("a plug-in (plugin:PATH) = a built-in lock"));
        }
        let (p, c) = (lookup(plugin)?, lookup(compiled.trim())?);
        if p.info.problem != Problem::Mutex || c.info.problem != Problem::Mutex {
            return Err(bad(
                "both must be mutual-exclusion locks (a bare loop runs one session)",
            ));
        }
        out.push((p, c));
    }
    Ok(out)
}

/// Measures and prints every boundary pair; saves them in `boundary.json`.
fn boundary(
    pairs: &[(LockEntry, LockEntry)],
    placement: &[usize],
    window: (Duration, Duration),
    rounds: usize,
    format: Format,
    store: &Store,
) -> Result<i32> {
    let mut points: Vec<BoundaryPoint> = Vec::new();
    for (plugin, compiled) in pairs {
        let point = measure_boundary(compiled, plugin, placement, window, rounds)?;
        crate::opts::io::errln!(
            "{} against {}: {:+.2} ns per passage",
            point.plugin,
            point.compiled,
            point.boundary_ns_per_passage.median
        );
        points.push(point);
        store.save_json("boundary.json", &points)?;
        if crate::runner::interrupted().is_some() {
            break;
        }
    }
    if format == Format::Json {
        println!("{}", serde_json::to_string_pretty(&points)?);
    } else {
        print!("{}", boundary_table(&points, rounds, window.0, store));
    }
    Ok(crate::runner::interrupted().map_or(0, |sig| 128 + sig))
}

/// The boundary table.
fn boundary_table(
    points: &[BoundaryPoint],
    rounds: usize,
    duration: Duration,
    store: &Store,
) -> String {
    let mut out = format!(
        "boundary = the same lock as a C plug-in and compiled in, each in a bare loop (enter; exit) at 1 thread; {rounds} interleaved rounds of {}; cost = plug-in − compiled ns per passage, paired by round: median [interval, level]; range = max − min over the rounds\n",
        format_duration(duration)
    );
    let header = format!(
        "{:<18} {:<18} {:>12} {:>12}  {:<26} {:>8}",
        "plug-in", "compiled", "compiled ns", "plug-in ns", "boundary ns/passage", "range"
    );
    out.push_str(&header);
    out.push('\n');
    out.push_str(&"-".repeat(header.chars().count()));
    out.push('\n');
    for p in points {
        let e = &p.boundary_ns_per_passage;
        let est = match e.interval {
            Some(i) => format!(
                "{:.2} [{:.2}–{:.2}, {:.0}%]",
                e.median,
                i.low,
                i.high,
                i.level * 100.0
            ),
            None => format!("{:.2}", e.median),
        };
        out.push_str(&format!(
            "{:<18} {:<18} {:>12.2} {:>12.2}  {:<26} {:>8.2}\n",
            p.plugin,
            p.compiled,
            p.compiled_ns_per_passage,
            p.plugin_ns_per_passage,
            est,
            p.range_ns
        ));
    }
    out.push_str(&format!(
        "results saved in {}\n",
        crate::opts::io::shown(store.dir())
    ));
    out
}

/// The sizes and durations against the limits `run` has for them.
fn check_limits(args: &Args, duration: Duration, warmup: Duration, rounds: usize) -> Result<()> {
    let limits = crate::engine::options::Limits::detect();
    let bad = |m: String| -> Result<()> { Err(UsageError(m).into()) };
    if duration.is_zero() || duration > limits.duration {
        return bad(format!(
            "--duration {}: longer than 0 and at most {} (e.g. 200ms)",
            format_duration(duration),
            format_duration(limits.duration)
        ));
    }
    if warmup > limits.warmup {
        return bad(format!(
            "--warmup {}: at most {}",
            format_duration(warmup),
            format_duration(limits.warmup)
        ));
    }
    if rounds == 0 || rounds > limits.rounds {
        return bad(format!(
            "--rounds {rounds}: at least 1 and at most {}",
            limits.rounds
        ));
    }
    match args.harness.latency_sample {
        Some(n) if n == 0 || n > limits.latency_sample => bad(format!(
            "--latency-sample {n}: between 1 and {} (one passage in N is timed)",
            limits.latency_sample
        )),
        _ => Ok(()),
    }
}

/// The table (or JSON) of the points.
#[allow(clippy::too_many_arguments)]
fn render(
    points: &[FidelityPoint],
    busy: &[Option<String>],
    format: Format,
    rounds: usize,
    duration: Duration,
    sampling: (u64, Option<f64>),
    store: &Store,
) -> Result<String> {
    let latency_sample = sampling.0;
    let mut out = String::new();
    if format == Format::Json {
        out = serde_json::to_string_pretty(points)? + "\n";
    } else {
        out.push_str(&format!(
            "harness = the default passage loop (oracle, 1 passage in {latency_sample}{} timed, counters) against a bare loop of the same lock (enter; exit), waiting with {}; {} interleaved rounds of {} each; ratio = harness / bare throughput, median [interval, level]; range = (max − min) / median over the rounds\n",
            if sampling.1.is_some() { " or fewer" } else { "" },
            points.last().map_or("spin", |f| f.wait.as_str()),
            rounds,
            format_duration(duration)
        ));
        let header = format!(
            "{:<18} {:>3}  {:<10}  {:>12}  {:>6}  {:>12}  {:<30} {:>6}  {:>13}",
            "lock",
            "thr",
            "oracle",
            "bare",
            "range",
            "harness",
            "harness/bare",
            "range",
            "added ns/pass"
        );
        out.push_str(&header);
        out.push('\n');
        out.push_str(&"-".repeat(header.chars().count()));
        out.push('\n');
        for (i, f) in points.iter().enumerate() {
            let flagged = busy.get(i).is_some_and(Option::is_some);
            out.push_str(&format!(
                "{:<18} {:>3}  {:<10}  {:>12}  {:>6}  {:>12}  {:<30} {:>6}  {:>13}\n",
                if flagged {
                    format!("{} !", f.lock)
                } else {
                    f.lock.clone()
                },
                f.threads,
                f.oracle,
                rate(f.bare_per_sec),
                format!("{:.0}%", 100.0 * f.bare_spread),
                rate(f.harness_per_sec),
                crate::report::estimate(&f.ratio),
                format!("{:.0}%", 100.0 * f.ratio_spread),
                f.added_ns_per_passage
                    .map_or("-".to_string(), |ns| format!("{ns:.2}")),
            ));
        }
        if let Some(why) = busy.iter().flatten().next() {
            out.push_str(&format!(
                "! measured on a busy host ({why}{}): its figures may be other work's, not the harness's; repeat on an idle machine\n",
                if busy.iter().flatten().count() > 1 {
                    ", for the first"
                } else {
                    ""
                }
            ));
        }
        out.push_str(&format!(
            "results saved in {}\n",
            crate::opts::io::shown(store.dir())
        ));
    }
    Ok(out)
}
