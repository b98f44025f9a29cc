//! `lockbench app`: an unmodified program under each lock, through the pthread interposer, in
//! interleaved rounds; its speed relative to `pthread` (through the same interposer), what the
//! interposer saw, and the interposer's own cost. The manual: docs/apps.md.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Result;

use crate::engine::app::launch::Status;
use crate::engine::app::summary::{figure, interposer_cost, paired, seen};
use crate::engine::app::{self, AppOptions, Measured, ALONE, BASELINE};
use crate::metrics::stats::median_estimate;
use crate::opts::{Dur, Format};
use crate::table::{self, Align};

/// Options of `app`.
#[derive(clap::Args, Debug)]
#[command(
    after_help = "Example: lockbench app --lock ticket,mcs,b-bakery --repeat 5 -- \
                        sysbench mutex --threads=2 run\n\
                        Exit codes: 0 every run succeeded with no safety violation; 1 a run \
                        failed or the oracle saw a violation (negative controls excepted); 2 bad \
                        input."
)]
pub struct Args {
    /// Locks to run the program on, comma-separated (`lockbench list`; mutual-exclusion or GME
    /// locks, or plugin:PATH); `pthread` and the program alone always run beside them.
    #[arg(long, value_delimiter = ',', required = true)]
    pub lock: Vec<String>,
    /// Rounds: each runs every configuration once, in a shuffled order.
    #[arg(long, default_value_t = 5)]
    pub repeat: usize,
    /// Read the figure from the program's stdout with this regular expression (a rate: higher
    /// is better): its first capture group, or the first number after the match, e.g.
    /// "events per second:" or 'ops/s: ([0-9.]+)'; default: 1 / wall time.
    #[arg(long, value_name = "REGEX")]
    pub metric: Option<String>,
    /// Output: table, json or csv (json and csv in `run`'s contract).
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Directory results are saved under (a run-<stamp> directory is made in it).
    #[arg(long, default_value = "reports")]
    pub out: PathBuf,
    /// Kill a run still going after this long (reported as a timeout for its lock).
    #[arg(long, default_value = "10m")]
    pub timeout: Dur,
    /// Process ids for the paper locks: threads that may hold a lock at once (LOCKBENCH_PROCS).
    #[arg(long, default_value_t = 32)]
    pub procs: usize,
    /// Seed of the rounds' shuffled order.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The program and its arguments, after `--`.
    #[arg(last = true, value_name = "PROGRAM")]
    pub argv: Vec<OsString>,
}

/// `lockbench app`: the exit code (0 ok, 1 a failure or violation, 2 bad input).
pub fn exec(args: &Args) -> Result<i32> {
    if !(1..=4096).contains(&args.procs) {
        return Err(crate::error::UsageError("--procs must be in 1..=4096".into()).into());
    }
    if let Some(m) = &args.metric {
        if let Err(e) = regex::Regex::new(m) {
            let why = e.to_string();
            let why = why.lines().last().unwrap_or("").trim().to_string();
            return Err(crate::error::UsageError(format!(
                "--metric {m:?} is not a regular expression ({why}): escape the special characters (\\. \\( …)"
            ))
            .into());
        }
    }
    let opts = AppOptions {
        locks: args.lock.iter().map(|s| s.trim().to_string()).collect(),
        repeat: args.repeat,
        metric: args.metric.clone(),
        timeout: args.timeout.0,
        procs: args.procs,
        out: args.out.clone(),
        argv: args.argv.clone(),
        seed: args.seed,
    };
    let (configs, pthread) = app::prepare(&opts)?;
    app::warm_up(&opts, &pthread)?;
    crate::opts::io::errln!(
        "lockbench app: {} configurations × {} rounds (shuffled each round), figure: {}",
        configs.len(),
        opts.repeat,
        opts.metric
            .as_deref()
            .map_or("1 / wall time".into(), |m| format!(
                "the number {m:?} matches"
            ))
    );
    let m = app::measure(&opts, configs, pthread, |round, name, o| {
        if o.status != Status::Ok {
            crate::opts::io::errln!("  round {round}: {name}: {}", o.status.describe());
        }
    })?;
    let results = app::summary::results(&m.configs, &m.program, &opts);
    match args.format {
        Format::Table => print!("{}", render(&m)),
        f => print!("{}", f.exporter().export(&results)),
    }
    crate::opts::io::errln!("results saved in {}", crate::opts::io::shown(&m.dir));
    Ok(exit_code(&m))
}

/// 1 when a run failed or a lock that claims safety was seen unsafe.
fn exit_code(m: &Measured) -> i32 {
    let bad = m.configs.iter().any(|c| {
        c.runs.iter().any(|r| r.status != Status::Ok)
            || (c.safe && seen(c).is_some_and(|s| s.violations > 0))
    });
    i32::from(bad)
}

fn ns(v: u64) -> String {
    crate::report::nanos(v as f64)
}

/// The table: one row per configuration.
fn render(m: &Measured) -> String {
    let base = m.configs.iter().find(|c| c.name == BASELINE);
    let mut t = table::Table::new(|i| if i == 0 { Align::Left } else { Align::Right });
    t.row([
        "lock",
        "figure",
        "vs pthread",
        "interval",
        "acq/run",
        "contended",
        "wait p50/p99",
        "hold p50/p99",
        "violations",
        "runs ok",
    ]);
    t.rule();
    for c in &m.configs {
        let figures: Vec<f64> = c.runs.iter().filter_map(figure).collect();
        let fig = median_estimate(&figures).map_or("-".into(), |e| format!("{:.4}", e.median));
        let est = base
            .and_then(|b| median_estimate(&paired(c, b).into_iter().flatten().collect::<Vec<_>>()));
        let (ratio, interval) = match (c.name.as_str(), est) {
            (BASELINE, _) => ("1".into(), "".into()),
            (_, Some(e)) => (
                format!("{:.3}", e.median),
                e.interval
                    .map_or("".into(), |i| format!("[{:.3}, {:.3}]", i.low, i.high)),
            ),
            _ => ("-".into(), "".into()),
        };
        let ok = c.runs.iter().filter(|r| r.status == Status::Ok).count();
        let s = seen(c);
        let runs = ok.max(1) as u64;
        let cells = match &s {
            None => vec!["-".into(); 5],
            Some(s) => vec![
                (s.acquisitions / runs).to_string(),
                format!("{:.1}%", 100.0 * s.contended_share()),
                format!("{}/{}", ns(s.wait_ns.p50), ns(s.wait_ns.p99)),
                format!("{}/{}", ns(s.hold_ns.p50), ns(s.hold_ns.p99)),
                s.violations.to_string(),
            ],
        };
        let mut row = vec![c.name.clone(), fig, ratio, interval];
        row.extend(cells);
        row.push(format!("{ok}/{}", c.runs.len()));
        t.row(row);
    }
    let mut out = t.render();
    let figure_name = match m.configs.first().and_then(|c| c.runs.first()) {
        Some(r) if r.metric.is_some() => "the figure read from its output",
        _ => "runs per second (1 / wall time)",
    };
    let _ = writeln!(
        out,
        "{}: figure = {figure_name}; vs pthread = that over pthread's (through the interposer), \
         median of per-round ratios with its interval; above 1 is faster.",
        m.program
    );
    if let Some(cost) = interposer_cost(&m.configs) {
        let iv = cost.interval.map_or(String::new(), |i| {
            format!(" [{:+.1}%, {:+.1}%]", 100.0 * i.low, 100.0 * i.high)
        });
        let _ = writeln!(
            out,
            "interposer's own cost: the program alone is {:+.1}%{iv} faster than pthread through \
             the interposer ({ALONE} vs {BASELINE}).",
            100.0 * cost.median
        );
    }
    for c in &m.configs {
        if let Some(s) = seen(c) {
            if s.passthrough_mutexes > 0 || s.ids_leaked > 0 {
                let _ = writeln!(
                    out,
                    "{}: {} recursive/error-checking/shared mutexes passed to pthread ({} calls); \
                     {} ids leaked.",
                    c.name, s.passthrough_mutexes, s.passthrough_ops, s.ids_leaked
                );
            }
        }
    }
    out
}
