//! Seed 003's experiment (Fig. 6 (a)–(f): TokenGME / RA2; Fig. 7 (a)–(b): priority / FIFO
//! type selection) as ratio tables, from a TOML suite such as
//! `bench-configs/message-passing-paper.toml`.
//!
//! Every point runs both algorithms over several seeds. Each metric's ratio is the
//! Hodges–Lehmann estimate over the seeds (the median of every numerator-seed /
//! denominator-seed ratio) with Moses' distribution-free interval (95% from 5 seeds a side;
//! the whole range, at the level it has, with fewer), as `compare` computes for rounds. The
//! paper's figures were lost in extraction: the values its text gives (the suite's `quote`s)
//! are printed beside our intervals, never used to tune them.

use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::algo::{self, AlgoInfo, Setup};
use super::metrics::MpResult;
use super::run_config::RunConfig;
use super::sim::{self, SimConfig};
use super::workload::Dist;
use crate::error::UsageError;
use crate::opts::Format;
use crate::report::compare::ratio_estimate;

/// The suites the binary carries, by the path they have in the checkout: `sim --paper` (and so
/// `claims`) runs them from any directory. A file at that path, where there is one, wins.
pub const BUNDLED: [(&str, &str); 5] = [
    (
        "bench-configs/claims-paper.toml",
        include_str!("../../bench-configs/claims-paper.toml"),
    ),
    (
        "bench-configs/claims-paper-n500.toml",
        include_str!("../../bench-configs/claims-paper-n500.toml"),
    ),
    (
        "bench-configs/claims-paper-trends.toml",
        include_str!("../../bench-configs/claims-paper-trends.toml"),
    ),
    (
        "bench-configs/claims-paper-trends-quick.toml",
        include_str!("../../bench-configs/claims-paper-trends-quick.toml"),
    ),
    (
        "bench-configs/message-passing-paper.toml",
        include_str!("../../bench-configs/message-passing-paper.toml"),
    ),
];

/// The built-in copy of the suite at `path` (as the checkout names it), if it is one.
pub fn bundled(path: &Path) -> Option<&'static str> {
    let p = path.to_str()?.trim_start_matches("./");
    BUNDLED.iter().find(|(name, _)| *name == p).map(|(_, t)| *t)
}

/// Seeds per point when the suite names none.
pub const DEFAULT_SEEDS: usize = 5;

/// The base point every figure varies one parameter of.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Base {
    /// Processes.
    pub n: usize,
    /// Groups.
    pub m: usize,
    /// Mean inter-request time (exponential).
    pub ncs: f64,
    /// Mean CS time (uniform on [0, 2·cs]).
    pub cs: f64,
    /// Mean channel delay (exponential).
    pub cd: f64,
    /// (α, β): exactly two, as `--hot A,B`.
    #[serde(deserialize_with = "two")]
    pub hot: [f64; 2],
}

/// A value the paper's text gives for one ratio of one point.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quote {
    /// The value of the figure's parameter; absent: every value of the figure.
    #[serde(default)]
    pub at: Option<f64>,
    /// Which ratio.
    pub metric: Metric,
    /// The paper's ratio.
    pub value: f64,
}

/// One figure: a parameter swept over values, two algorithms compared.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Figure {
    /// E.g. `6a`.
    pub name: String,
    /// `m`, `ncs`, `cs`, `cd`, `hot` (α; β = 100 − α) or `n`.
    pub vary: String,
    /// Values of the parameter.
    pub values: Vec<f64>,
    /// Numerator and denominator algorithms.
    pub compare: [String; 2],
    /// Overrides of the base point (e.g. n = 200 for Fig. 7 (b)).
    #[serde(default)]
    pub n: Option<usize>,
    /// What the paper's text reports for this figure.
    pub paper: String,
    /// The numbers in that text, each tied to a point and a ratio.
    #[serde(default)]
    pub quote: Vec<Quote>,
}

/// A suite.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    /// Requests per process (500 in the paper).
    pub requests: u64,
    /// Seeds per point and algorithm (default [`DEFAULT_SEEDS`]).
    #[serde(default = "default_seeds")]
    pub seeds: usize,
    /// The base point.
    pub base: Base,
    /// The figures.
    pub figure: Vec<Figure>,
}

/// Exactly two numbers (a longer or shorter list is refused, not cut or padded).
fn two<'de, D: serde::Deserializer<'de>>(d: D) -> Result<[f64; 2], D::Error> {
    let v: Vec<f64> = Vec::deserialize(d)?;
    <[f64; 2]>::try_from(v.as_slice()).map_err(|_| {
        serde::de::Error::custom(format!(
            "hot takes two percentages [α, β] (as --hot A,B), not {} values",
            v.len()
        ))
    })
}

fn default_seeds() -> usize {
    DEFAULT_SEEDS
}

impl Suite {
    /// Reads and checks a suite file (unknown algorithms and parameters are usage errors).
    pub fn load(path: &Path) -> anyhow::Result<Suite> {
        let read = crate::opts::io::read_text(path, crate::opts::io::CONFIG_CAP);
        let text = match (read, bundled(path)) {
            (Ok(text), _) => text,
            (Err(e), Some(text)) if e.kind() == std::io::ErrorKind::NotFound => {
                crate::opts::io::errln!(
                    "note: {} is not here: using the copy built into lockbench",
                    crate::opts::io::shown(path)
                );
                text.to_string()
            }
            (Err(e), _) => {
                return Err(UsageError(format!(
                    "cannot read {}: {e}",
                    crate::opts::io::shown(path)
                ))
                .into())
            }
        };
        let suite: Suite = toml::from_str(&text)
            .map_err(|e| UsageError(format!("{}: {}", path.display(), e.message())))?;
        suite
            .check()
            .map_err(|e| UsageError(format!("{}: {}", path.display(), e.0)))?;
        Ok(suite)
    }

    /// Every value against the limits of `sim`'s command line (`lockbench sim --help` and
    /// docs/commands.md): a suite file runs nothing the command line would refuse.
    fn check(&self) -> Result<(), UsageError> {
        use crate::mp::model::{MAX_M, MAX_N, MAX_SEEDS};
        use crate::mp::model::{MAX_REQUESTS, MAX_SIM_TIME, MAX_SIM_TOTAL};
        let bad = |what: String| Err(UsageError(what));
        if self.requests == 0 || self.requests > MAX_REQUESTS {
            return bad(format!(
                "requests = {}: between 1 and {MAX_REQUESTS} per process",
                self.requests
            ));
        }
        if self.seeds == 0 || self.seeds as u64 > MAX_SEEDS {
            return bad(format!("seeds = {}: between 1 and {MAX_SEEDS}", self.seeds));
        }
        // A count (n, m) or a time (ncs, cs, cd) or α of `hot`, in range.
        let num = |v: f64| {
            if v.abs() >= 1e9 {
                format!("{v:e}")
            } else {
                format!("{v}")
            }
        };
        let value = |key: &str, v: f64| -> Result<(), UsageError> {
            let (lo, hi, whole) = match key {
                "n" => (1.0, MAX_N as f64, true),
                "m" => (1.0, MAX_M as f64, true),
                "hot" => (0.0, 100.0, false),
                _ => (0.0, MAX_SIM_TIME, false),
            };
            if !(v >= lo && v <= hi) || (whole && v.fract() != 0.0) {
                return bad(format!(
                    "{key} = {}: {} from {lo} to {hi:e}",
                    num(v),
                    if whole { "a whole number" } else { "a number" }
                ));
            }
            Ok(())
        };
        let b = &self.base;
        value("n", b.n as f64)?;
        value("m", b.m as f64)?;
        for (k, v) in [
            ("ncs", b.ncs),
            ("cs", b.cs),
            ("cd", b.cd),
            ("hot", b.hot[0]),
        ] {
            value(k, v)?;
        }
        if !(b.hot[1] >= 0.0 && b.hot[1] <= 100.0) {
            return bad(format!("hot = {:?}: two percentages from 0 to 100", b.hot));
        }
        for fig in &self.figure {
            if fig.values.is_empty() {
                return bad(format!(
                    "figure {}: values is empty; give at least one",
                    fig.name
                ));
            }
            let n = fig.n.unwrap_or(b.n);
            value("n", n as f64)
                .map_err(|e| UsageError(format!("figure {}: {}", fig.name, e.0)))?;
            let mut most_n = n as f64;
            for &v in &fig.values {
                if ["m", "n", "ncs", "cs", "cd", "hot"].contains(&fig.vary.as_str()) {
                    value(&fig.vary, v)
                        .map_err(|e| UsageError(format!("figure {}: {}", fig.name, e.0)))?;
                }
                if fig.vary == "n" {
                    most_n = most_n.max(v);
                }
            }
            if most_n * self.requests as f64 > MAX_SIM_TOTAL as f64 {
                return bad(format!(
                    "figure {}: n {} × requests {} is more than {MAX_SIM_TOTAL} critical sections in one run; use fewer requests",
                    fig.name,
                    num(most_n),
                    self.requests
                ));
            }
            for q in &fig.quote {
                // A ratio is positive and finite; its point is one the figure measures.
                if !(q.value.is_finite() && q.value > 0.0) {
                    return bad(format!(
                        "figure {}: quote value = {}: a ratio above 0 (finite)",
                        fig.name,
                        num(q.value)
                    ));
                }
                if let Some(at) = q.at.filter(|at| !fig.values.contains(at)) {
                    return bad(format!(
                        "figure {}: quote at = {}: not among the figure's values; give one of them or leave `at` out",
                        fig.name,
                        num(at)
                    ));
                }
            }
            for a in &fig.compare {
                if algo::info(a).is_none() {
                    return Err(UsageError(format!(
                        "figure {}: unknown algorithm `{a}`",
                        fig.name
                    )));
                }
            }
            if !["m", "n", "ncs", "cs", "cd", "hot"].contains(&fig.vary.as_str()) {
                return Err(UsageError(format!(
                    "figure {}: cannot vary `{}` (m, n, ncs, cs, cd, hot)",
                    fig.name, fig.vary
                )));
            }
        }
        Ok(())
    }
}

/// The four ratios of a point (for messages, size and waiting time below 1 favours the
/// numerator; for throughput above 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Messages per request.
    Messages,
    /// Mean message size in integers.
    MessageSize,
    /// Mean waiting time.
    WaitingTime,
    /// Throughput.
    Throughput,
}

impl Metric {
    /// All four, in table order.
    pub const ALL: [Metric; 4] = [
        Metric::Messages,
        Metric::MessageSize,
        Metric::WaitingTime,
        Metric::Throughput,
    ];

    fn of(self, r: &MpResult) -> f64 {
        match self {
            Metric::Messages => r.messages_per_request_mean,
            Metric::MessageSize => r.message_size_mean,
            Metric::WaitingTime => r.waiting_time_mean,
            Metric::Throughput => r.throughput,
        }
    }

    fn short(self) -> &'static str {
        match self {
            Metric::Messages => "msgs",
            Metric::MessageSize => "size",
            Metric::WaitingTime => "wait",
            Metric::Throughput => "thrpt",
        }
    }
}

/// A ratio over seeds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    /// Hodges–Lehmann estimate: the median of every numerator / denominator pair of seeds
    /// (with one seed, the one ratio).
    pub median: f64,
    /// Lower bound of Moses' interval (equal to `median` with one seed).
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
    /// The interval's confidence level (0.968 for 5 seeds a side, 0.667 for 2; 0 for one).
    pub level: f64,
    /// Seeds run per algorithm.
    pub seeds: usize,
}

impl Ratio {
    /// From the per-seed values of the numerator and of the denominator (NaN when either is
    /// all zero).
    pub fn of(num: &[f64], den: &[f64]) -> Ratio {
        let seeds = num.len().min(den.len());
        match ratio_estimate(den, num) {
            Some(e) => {
                let (lo, hi, level) = e
                    .interval
                    .map_or((e.median, e.median, 0.0), |i| (i.low, i.high, i.level));
                Ratio {
                    median: e.median,
                    lo,
                    hi,
                    level,
                    seeds,
                }
            }
            None => Ratio {
                median: f64::NAN,
                lo: f64::NAN,
                hi: f64::NAN,
                level: 0.0,
                seeds,
            },
        }
    }

    /// Whether `x` lies in `[lo, hi]`.
    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }
}

/// One ratio of one point of one figure: what the ledger of paper claims reads.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PointResult {
    /// Figure, e.g. `6f`.
    pub figure: String,
    /// The parameter the figure varies (`m`, `n`, `ncs`, `cs`, `cd`, `hot`).
    pub param: String,
    /// Its value at this point (for `hot`, α).
    pub value: f64,
    /// Processes at this point (smaller than the paper's in a quick run).
    pub n: usize,
    /// Requests per process.
    pub requests: u64,
    /// "numerator/denominator", e.g. `token-gme/ra2`.
    pub ratio_of: String,
    /// Which ratio.
    pub metric: Metric,
    /// The ratio over seeds.
    pub ratio: Ratio,
    /// The paper's value, where its text gives one for this point and metric.
    pub paper: Option<f64>,
    /// Whether the paper's value lies in our interval (null without a paper value).
    pub paper_inside: Option<bool>,
    /// Safety violations and liveness failures over the point's runs (both algorithms).
    pub failures: u64,
}

/// In a quick run: requests per process, the largest n, and the most seeds.
pub const QUICK_REQUESTS: u64 = 30;
/// See [`QUICK_REQUESTS`].
pub const QUICK_MAX_N: usize = 12;
/// See [`QUICK_REQUESTS`].
pub const QUICK_SEEDS: usize = 2;

/// The suite a quick run measures: [`QUICK_REQUESTS`] requests, n at most [`QUICK_MAX_N`]
/// (a figure varying n keeps only its values up to that), at most [`QUICK_SEEDS`] seeds.
/// Seconds in all on one core; the ratios are smoke, not the paper's points.
pub fn quick(suite: &Suite) -> Suite {
    let mut s = suite.clone();
    s.requests = s.requests.min(QUICK_REQUESTS);
    s.seeds = s.seeds.clamp(1, QUICK_SEEDS);
    s.base.n = s.base.n.min(QUICK_MAX_N);
    for f in &mut s.figure {
        f.n = f.n.map(|n| n.min(QUICK_MAX_N));
        if f.vary == "n" {
            f.values.retain(|&v| v as usize <= QUICK_MAX_N);
            if f.values.is_empty() {
                f.values.push(QUICK_MAX_N as f64);
            }
        }
    }
    s
}

#[cfg(test)]
/// Runs every point of `suite` over seeds 1..=`seeds` (0: the suite's own count), both
/// algorithms, all at once up to one simulation per CPU; `quick` runs [`quick`]'s suite.
/// Four results per point (one per [`Metric`]), in the suite's order.
pub fn run_suite(suite: &Suite, seeds: usize, quick: bool) -> anyhow::Result<Vec<PointResult>> {
    let mut out = Vec::new();
    each_point(suite, seeds, quick, 0, |_, mut p| {
        out.append(&mut p.results);
        Ok(())
    })?;
    Ok(out)
}

/// A point's results and what its own runs cost.
struct Point {
    results: Vec<PointResult>,
    /// From the first of its own runs' start to the last one's end.
    wall_seconds: f64,
    /// The sum of its own runs' times.
    run_seconds: f64,
    /// Events its own runs ran.
    events: u64,
    /// Its runs that an earlier point ran (the same algorithm, parameters and seed).
    shared: usize,
    /// All its runs.
    runs: usize,
}

/// What decides a run of a suite: [`config`] is a function of these alone.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Params<'a> {
    algo: &'a str,
    n: usize,
    m: usize,
    ncs: f64,
    cs: f64,
    cd: f64,
    hot: [f64; 2],
    seed: u64,
}

fn each_point(
    suite: &Suite,
    seeds: usize,
    quick_run: bool,
    jobs: usize,
    mut sink: impl FnMut(&Figure, Point) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    suite.check()?;
    let mut s = if quick_run {
        quick(suite)
    } else {
        suite.clone()
    };
    if seeds > 0 {
        s.seeds = if quick_run {
            seeds.min(QUICK_SEEDS)
        } else {
            seeds
        };
    }
    // Every distinct run of every point in one list, run in parallel (points too, so that
    // no core idles at a point's last long run); each point is summed up, in order, once
    // its runs are done. A run is deterministic and decided by its parameters, so a run
    // that several points share (every figure of Fig. 6 holds the base point) runs once.
    let mut runs: Vec<(Params, &'static AlgoInfo, SimConfig)> = Vec::new();
    let mut points = Vec::new();
    for fig in &s.figure {
        for &v in &fig.values {
            // Runs are numbered in the order points first hold them: a point's own runs
            // (those no earlier point holds) are the ones numbered from here on.
            let first_own = runs.len();
            let mut of_point = Vec::new();
            for (side, name) in fig.compare.iter().enumerate() {
                let info = algo::info(name).expect("checked");
                for seed in 0..s.seeds {
                    let p = params(&s, fig, v, name, 1 + seed as u64);
                    let k = match runs.iter().position(|r| r.0 == p) {
                        Some(k) => k,
                        None => {
                            runs.push((p, info, config(&s, &p)));
                            runs.len() - 1
                        }
                    };
                    of_point.push((side, k));
                }
            }
            points.push((fig, v, of_point, first_own));
        }
    }
    let mut done: Vec<(MpResult, Instant, Instant)> = Vec::with_capacity(runs.len());
    let mut at = 0;
    crate::runner::parallel::in_order(
        &runs,
        jobs,
        |&(_, info, ref cfg)| {
            let started = Instant::now();
            let r = crate::with_algo!(info, |make| sim::run(cfg, make));
            (r, started, Instant::now())
        },
        |_, r| {
            done.push(r);
            // Each point whose runs are all done is summed up.
            while let Some(&(fig, v, ref of_point, first_own)) = points.get(at) {
                if of_point.iter().any(|&(_, k)| k >= done.len()) {
                    break;
                }
                let p = point(fig, v, s.requests, of_point, &done, |k| k >= first_own);
                at += 1;
                sink(fig, p)?;
            }
            Ok(())
        },
    )
}

/// Runs the suite in `path` over `seeds` seeds (0: the suite's) and prints its tables;
/// exit code 1 when a run failed its checks.
pub fn run(
    path: &Path,
    format: Format,
    jobs: usize,
    seeds: usize,
    quick_run: bool,
) -> anyhow::Result<i32> {
    let suite = Suite::load(path)?;
    let mut all = Vec::new();
    let mut header: Option<String> = None;
    each_point(&suite, seeds, quick_run, jobs, |fig, p| {
        // The table goes to stdout, or with `--format json` to stderr point by point, so a
        // long run that is stopped keeps every point it measured.
        let mut text = String::new();
        if header.as_deref() != Some(fig.name.as_str()) {
            text.push_str(&figure_header(fig, p.results[0].ratio.seeds));
            header = Some(fig.name.clone());
        }
        text.push_str(&point_line(&p));
        if format == Format::Table {
            print!("{text}");
        } else {
            crate::opts::io::errout!("{text}");
        }
        all.extend(p.results);
        Ok(())
    })?;
    if format == Format::Json {
        println!("{}", serde_json::to_string_pretty(&all)?);
    }
    Ok(if all.iter().any(|r| r.failures > 0) {
        1
    } else {
        0
    })
}

fn figure_header(fig: &Figure, seeds: usize) -> String {
    let mut s = format!(
        "Fig. {} — {} / {} varying {}, {seeds} seed(s); ratio [interval]\n  paper: {}\n  {:>6}",
        fig.name, fig.compare[0], fig.compare[1], fig.vary, fig.paper, fig.vary
    );
    for m in Metric::ALL {
        s.push_str(&format!("  {:<21}", m.short()));
    }
    s.push_str("  wall s   run s  Mev/s\n");
    s
}

fn point_line(p: &Point) -> String {
    let first = &p.results[0];
    let mut s = format!("  {:>6}", first.value);
    let mut quotes = Vec::new();
    for r in &p.results {
        s.push_str(&format!(
            "  {:<21}",
            format!(
                "{:.3} [{:.3}, {:.3}]",
                r.ratio.median, r.ratio.lo, r.ratio.hi
            )
        ));
        if let Some(v) = r.paper {
            let verdict = if r.paper_inside == Some(true) {
                "inside"
            } else {
                "outside"
            };
            quotes.push(format!("{} {v} {verdict}", r.metric.short()));
        }
    }
    // The point's own runs' times, and their events per second of those runs' own time
    // (whatever the jobs); none when an earlier point ran all of its runs.
    if p.shared == p.runs {
        s.push_str(&format!("  {:>6}  {:>6}  {:>5}", "-", "-", "-"));
    } else {
        s.push_str(&format!(
            "  {:>6.1}  {:>6.1}  {:>5.1}",
            p.wall_seconds,
            p.run_seconds,
            p.events as f64 / p.run_seconds.max(1e-9) / 1e6
        ));
    }
    if !quotes.is_empty() {
        s.push_str(&format!("  paper: {}", quotes.join(", ")));
    }
    if p.shared > 0 {
        s.push_str(&format!(
            "  ({} of its {} runs ran for an earlier point)",
            p.shared, p.runs
        ));
    }
    if first.failures > 0 {
        s.push_str("  FAILURES");
    }
    s.push('\n');
    s
}

/// The parameters of one algorithm's run at one point and seed.
fn params<'a>(suite: &Suite, fig: &Figure, v: f64, algo: &'a str, seed: u64) -> Params<'a> {
    let b = &suite.base;
    let mut p = Params {
        algo,
        n: fig.n.unwrap_or(b.n),
        m: b.m,
        ncs: b.ncs,
        cs: b.cs,
        cd: b.cd,
        hot: b.hot,
        seed,
    };
    match fig.vary.as_str() {
        "m" => p.m = v as usize,
        "n" => p.n = v as usize,
        "ncs" => p.ncs = v,
        "cs" => p.cs = v,
        "cd" => p.cd = v,
        _ => p.hot = [v, 100.0 - v],
    }
    p
}

/// The run configuration of [`params`].
fn config(suite: &Suite, p: &Params) -> SimConfig {
    let mix = format!("hot:{}:{},{}", p.m, p.hot[0], p.hot[1])
        .parse()
        .expect("a hot mix from numbers");
    let run = RunConfig {
        algo: p.algo.to_string(),
        problem: algo::info(p.algo).expect("checked").problem,
        setup: Setup::complete(p.n, p.m),
        requests: suite.requests,
        seed: p.seed,
        ncs: Dist::Exp(p.ncs),
        cs: Dist::cs_of_mean(p.cs),
        delay: Dist::Exp(p.cd),
        mix,
        watchdog: 1e9,
    };
    SimConfig {
        run,
        topology: "complete".into(),
        fifo: true,
        trace: false,
    }
}

/// A point summed up from its runs: each one's side (0: the ratio's numerator, 1: its
/// denominator) and index in `done` (its result, with when it started and ended), `own`
/// telling the runs no earlier point had.
fn point(
    fig: &Figure,
    v: f64,
    requests: u64,
    of_point: &[(usize, usize)],
    done: &[(MpResult, Instant, Instant)],
    own: impl Fn(usize) -> bool,
) -> Point {
    let results: Vec<&MpResult> = of_point.iter().map(|&(_, k)| &done[k].0).collect();
    let n = results[0].n;
    let failures = results
        .iter()
        .map(|r| r.safety_violations + u64::from(r.liveness_failure.is_some()))
        .sum();
    let side = |i: usize, m: Metric| -> Vec<f64> {
        of_point
            .iter()
            .zip(&results)
            .filter(|((j, _), _)| *j == i)
            .map(|(_, r)| m.of(r))
            .collect()
    };
    let results_of = Metric::ALL
        .iter()
        .map(|&metric| {
            let ratio = Ratio::of(&side(0, metric), &side(1, metric));
            let paper = fig
                .quote
                .iter()
                .find(|q| q.metric == metric && q.at.is_none_or(|a| a == v))
                .map(|q| q.value);
            PointResult {
                figure: fig.name.clone(),
                param: fig.vary.clone(),
                value: v,
                n,
                requests,
                ratio_of: format!("{}/{}", fig.compare[0], fig.compare[1]),
                metric,
                ratio,
                paper,
                paper_inside: paper.map(|p| ratio.contains(p)),
                failures,
            }
        })
        .collect();
    // Its own runs, each once (a figure may compare an algorithm with itself).
    let mut own_runs: Vec<usize> = of_point
        .iter()
        .map(|&(_, k)| k)
        .filter(|&k| own(k))
        .collect();
    own_runs.sort_unstable();
    own_runs.dedup();
    let mine: Vec<&(MpResult, Instant, Instant)> = own_runs.iter().map(|&k| &done[k]).collect();
    let first = mine.iter().map(|d| d.1).min();
    let last = mine.iter().map(|d| d.2).max();
    Point {
        results: results_of,
        wall_seconds: match (first, last) {
            (Some(a), Some(b)) => b.duration_since(a).as_secs_f64(),
            _ => 0.0,
        },
        run_seconds: mine.iter().map(|d| d.0.wall_seconds).sum(),
        events: mine.iter().map(|d| d.0.events).sum(),
        shared: of_point.iter().filter(|&&(_, k)| !own(k)).count(),
        runs: of_point.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> Suite {
        toml::from_str(
            r#"
requests = 10
seeds = 3
[base]
n = 4
m = 3
ncs = 50.0
cs = 20.0
cd = 10.0
hot = [20.0, 80.0]
[[figure]]
name = "6f"
vary = "n"
values = [3, 40]
compare = ["token-gme", "ra2"]
paper = "size ratio 2.22 at n = 3"
quote = [{ at = 3, metric = "message_size", value = 2.22 }]
"#,
        )
        .unwrap()
    }

    #[test]
    fn check_refuses_what_the_command_line_refuses() {
        assert!(tiny().check().is_ok());
        let mut cases: Vec<(Suite, &str)> = Vec::new();
        let mut s = tiny();
        s.requests = 0;
        cases.push((s, "requests = 0"));
        let mut s = tiny();
        s.seeds = 0;
        cases.push((s, "seeds = 0"));
        let mut s = tiny();
        s.base.ncs = -50.0;
        cases.push((s, "ncs = -50"));
        let mut s = tiny();
        s.base.cd = f64::NAN;
        cases.push((s, "cd = NaN"));
        let mut s = tiny();
        s.base.cs = 1e308;
        cases.push((s, "cs = 1e308"));
        let mut s = tiny();
        s.figure[0].values = vec![3.0, 1e12];
        cases.push((s, "figure 6f: n = 1e12"));
        let mut s = tiny();
        s.figure[0].values.clear();
        cases.push((s, "values is empty"));
        let mut s = tiny();
        s.requests = MAX_REQUESTS_FOR_TEST;
        s.figure[0].values = vec![3000.0];
        cases.push((s, "critical sections in one run"));
        for (s, want) in cases {
            let e = s.check().unwrap_err().0;
            assert!(e.contains(want), "{want}: {e}");
        }
    }

    const MAX_REQUESTS_FOR_TEST: u64 = crate::mp::model::MAX_REQUESTS;

    #[test]
    fn quick_keeps_small_points_and_few_seeds() {
        let q = quick(&tiny());
        assert_eq!(q.figure[0].values, vec![3.0]);
        assert_eq!(q.seeds, 2);
        let r = run_suite(&tiny(), 0, true).unwrap();
        assert_eq!(r.len(), 4);
        assert!(r.iter().all(|p| p.failures == 0 && p.ratio.seeds == 2));
        let size = r.iter().find(|p| p.metric == Metric::MessageSize).unwrap();
        assert_eq!(size.paper, Some(2.22));
        assert_eq!(size.paper_inside, Some(size.ratio.contains(2.22)));
        assert!(r
            .iter()
            .filter(|p| p.metric != Metric::MessageSize)
            .all(|p| p.paper.is_none()));
        for p in &r {
            assert!(
                p.ratio.lo <= p.ratio.median && p.ratio.median <= p.ratio.hi,
                "{p:?}"
            );
        }
    }

    #[test]
    fn results_do_not_depend_on_the_jobs() {
        // Two figures of two points each: points run at once too, and come back in order.
        let mut suite = tiny();
        let mut f = suite.figure[0].clone();
        f.name = "6a".into();
        f.vary = "m".into();
        f.values = vec![2.0, 3.0];
        f.quote.clear();
        suite.figure.push(f);
        let with = |jobs: usize| {
            let mut out = Vec::new();
            let mut order = Vec::new();
            each_point(&suite, 0, false, jobs, |fig, p| {
                order.push(format!("{} {}", fig.name, p.results[0].value));
                out.extend(p.results);
                Ok(())
            })
            .unwrap();
            assert_eq!(order, ["6f 3", "6f 40", "6a 2", "6a 3"], "jobs {jobs}");
            serde_json::to_string(&out).unwrap()
        };
        let one = with(1);
        assert!(one.contains("\"figure\":\"6f\""), "{one}");
        for jobs in [0, 2, 5] {
            assert_eq!(with(jobs), one, "jobs {jobs}");
        }
    }

    #[test]
    fn a_run_points_share_runs_once_and_gives_each_the_same_results() {
        // Fig. 6a at m = 3 is the base point, and so is Fig. 6f at n = 4: the same runs.
        let mut suite = tiny();
        suite.figure[0].values = vec![4.0, 5.0];
        suite.figure[0].quote.clear();
        let mut f = suite.figure[0].clone();
        f.name = "6a".into();
        f.vary = "m".into();
        f.values = vec![3.0, 2.0];
        f.quote.clear();
        suite.figure.push(f.clone());
        let mut alone = tiny();
        alone.figure = vec![f];
        let points = |s: &Suite| {
            let mut out = Vec::new();
            each_point(s, 0, false, 2, |fig, p| {
                let json = serde_json::to_string(&p.results).unwrap();
                out.push((fig.name.clone(), p.results[0].value, p.shared, p.runs, json));
                Ok(())
            })
            .unwrap();
            out
        };
        let both = points(&suite);
        let shares: Vec<(&str, f64, usize, usize)> = both
            .iter()
            .map(|(f, v, shared, runs, _)| (f.as_str(), *v, *shared, *runs))
            .collect();
        assert_eq!(
            shares,
            [
                ("6f", 4.0, 0, 6),
                ("6f", 5.0, 0, 6),
                ("6a", 3.0, 6, 6),
                ("6a", 2.0, 0, 6)
            ]
        );
        let one = points(&alone);
        assert!(one.iter().all(|p| p.2 == 0));
        assert_eq!(both[2].4, one[0].4, "the shared point");
        assert_eq!(both[3].4, one[1].4);
    }

    #[test]
    fn ratios_over_seeds_use_moses_intervals() {
        let r = Ratio::of(&[2.0, 2.2, 1.8, 2.1, 1.9], &[1.0; 5]);
        assert!((r.median - 2.0).abs() < 1e-12);
        assert!((r.lo - 1.8).abs() < 1e-12 && (r.hi - 2.2).abs() < 1e-12 && r.seeds == 5);
        assert!(r.level > 0.95);
        let one = Ratio::of(&[3.0], &[2.0]);
        assert!((one.median - 1.5).abs() < 1e-12);
        assert_eq!((one.lo, one.hi, one.level), (one.median, one.median, 0.0));
        assert!(Ratio::of(&[1.0], &[0.0]).median.is_nan());
    }
}
