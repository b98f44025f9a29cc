//! `lockbench sim` and `lockbench mp-run`: options, their validation, and output.

use std::path::PathBuf;

use clap::Args;

use super::algo::{self, Setup, ALGOS};
use super::metrics::MpResult;
use super::sim::{self, SimConfig};
use super::topo::{Graph, Topology};
use super::workload::Dist;
use super::{threaded, Problem};
use crate::error::UsageError;
use crate::report::Format;
use crate::workload::Mix;

/// The most processes a model may have.
pub const MAX_N: usize = 10_000;
/// The most groups a model may have.
pub const MAX_M: usize = 1_000_000;
/// The most seeds one `sim` runs.
pub const MAX_SEEDS: u64 = 100_000;

/// The model both runtimes share: algorithm, processes, groups, workload, topology.
#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// Algorithms, comma-separated, or `all`: suzuki-kasami, ricart-agrawala, token-gme,
    /// token-gme-fifo, ra1, ra2, lmutin, lkcs (required, but for `sim --paper`).
    #[arg(long, value_delimiter = ',')]
    pub algo: Vec<String>,
    /// Processes.
    #[arg(long, default_value_t = 100)]
    pub n: usize,
    /// Groups (critical-section types).
    #[arg(long, default_value_t = 50)]
    pub m: usize,
    /// Inter-request time: a number is an exponential mean (seed 003), or exp:X, const:X,
    /// uniform:A,B.
    #[arg(long, default_value = "50")]
    pub ncs: String,
    /// Critical-section time: a number X is uniform on [0, 2X] (seed 003), or a distribution.
    #[arg(long, default_value = "20")]
    pub cs: String,
    /// Channel delay: a number is an exponential mean (seed 003), or a distribution.
    #[arg(long, default_value = "10")]
    pub cd: String,
    /// (α, β) hot groups: α% of the groups get β% of the requests (default 20,80).
    #[arg(long, conflicts_with = "mix")]
    pub hot: Option<String>,
    /// Group selection as a session mix instead of --hot: uniform:M, zipf:M:S, hot:M:A,B, ...
    #[arg(long)]
    pub mix: Option<String>,
    /// Critical sections each process enters.
    #[arg(long, default_value_t = 500)]
    pub requests: u64,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Topology of lmutin/lkcs: complete, ring, grid, random:D.
    #[arg(long, default_value = "complete")]
    pub topology: String,
    /// lmutin/lkcs lower bound l_i: one value, or one per process (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub l: Option<Vec<usize>>,
    /// lkcs upper bound k_i: one value, or one per process (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub k: Option<Vec<usize>>,
    /// Output format: table or json.
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
}

/// Options of `sim`.
#[derive(Args, Debug, Clone)]
pub struct SimArgs {
    /// The model.
    #[command(flatten)]
    pub model: ModelArgs,
    /// Run this many seeds (seed, seed + 1, ...) of each algorithm.
    #[arg(long, default_value_t = 1)]
    pub seeds: u64,
    /// Let channels reorder messages (only for algorithms that allow it).
    #[arg(long)]
    pub non_fifo: bool,
    /// A request unserved for this many time units is a liveness failure.
    #[arg(long, default_value_t = 1e6)]
    pub watchdog: f64,
    /// Print every simulated event to stderr (for small runs).
    #[arg(long)]
    pub trace: bool,
    /// Run seed 003's Fig. 6 / Fig. 7 suite from this TOML file instead (the model options
    /// are ignored; the suite names its algorithms).
    #[arg(long)]
    pub paper: Option<PathBuf>,
    /// Simulations run at once, one per thread (0: one per CPU). Results do not depend on it.
    #[arg(long, default_value_t = 0)]
    pub jobs: usize,
}

/// Options of `mp-run`.
#[derive(Args, Debug, Clone)]
pub struct MpRunArgs {
    /// The model (times are in milliseconds here).
    #[command(flatten)]
    pub model: ModelArgs,
    /// Thread placement: pin each process thread to a CPU in turn (default), or not.
    #[arg(long)]
    pub no_pin: bool,
    /// A request unserved for this many seconds is a liveness failure.
    #[arg(long, default_value_t = 10.0)]
    pub watchdog: f64,
    /// Where the processes run: `threaded` (one thread each on this host) or `mpi` (one MPI
    /// rank each, started by `mpirun -n N`; needs a build with `--features mpi`).
    #[arg(long, value_enum, default_value = "threaded")]
    pub runtime: RuntimeKind,
    /// --runtime mpi: algorithm processes per rank (--n must be ranks × this; default 1).
    #[arg(long)]
    pub procs_per_rank: Option<usize>,
}

/// The runtimes `mp-run` can use.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuntimeKind {
    /// One OS thread per process, channels between them.
    Threaded,
    /// One MPI rank per process (or `--procs-per-rank`), under `mpirun`.
    Mpi,
}

fn usage(msg: impl Into<String>) -> anyhow::Error {
    UsageError(msg.into()).into()
}

fn dist(what: &str, s: &str, cs_style: bool) -> anyhow::Result<Dist> {
    if cs_style {
        if let Ok(x) = s.parse::<f64>() {
            if x.is_finite() && x >= 0.0 {
                return Ok(Dist::cs_of_mean(x));
            }
        }
    }
    s.parse()
        .map_err(|e: String| usage(format!("--{what}: {e}")))
}

/// The validated model for one algorithm.
pub struct Model {
    /// Algorithm names.
    pub algos: Vec<&'static algo::AlgoInfo>,
    /// Inter-request time.
    pub ncs: Dist,
    /// CS time.
    pub cs: Dist,
    /// Channel delay.
    pub cd: Dist,
    /// Group selection.
    pub mix: Mix,
    /// Topology.
    pub topology: Topology,
}

impl ModelArgs {
    /// Validates everything but the per-algorithm set-up.
    pub fn model(&self) -> anyhow::Result<Model> {
        if self.n == 0 {
            return Err(usage("--n must be at least 1"));
        }
        if self.n > MAX_N {
            return Err(usage(format!(
                "--n {}: at most {MAX_N} processes (the simulator keeps n² link clocks and \
                 tables of n entries per process; mp-run starts one thread each)",
                self.n
            )));
        }
        if self.m == 0 {
            return Err(usage("--m must be at least 1"));
        }
        if self.m > MAX_M {
            return Err(usage(format!(
                "--m {}: at most {MAX_M} groups (the algorithms keep per-group tables)",
                self.m
            )));
        }
        if self.algo.is_empty() {
            return Err(usage(
                "--algo is required: name algorithms, comma-separated, or `all`",
            ));
        }
        let mut algos = Vec::new();
        for a in &self.algo {
            if a == "all" {
                algos.extend(ALGOS.iter());
            } else {
                algos.push(algo::info(a).ok_or_else(|| {
                    usage(format!(
                        "unknown algorithm `{a}`: use {} or all",
                        algo::names()
                    ))
                })?);
            }
        }
        let mix = match (&self.hot, &self.mix) {
            (_, Some(m)) => m.parse::<Mix>().map_err(|e| usage(format!("--mix: {e}")))?,
            (h, None) => {
                let h = h.as_deref().unwrap_or("20,80");
                format!("hot:{}:{h}", self.m)
                    .parse::<Mix>()
                    .map_err(|e| usage(format!("--hot `{h}`: {e}")))?
            }
        };
        if mix.sessions(self.n) > self.m.max(self.n + 1) {
            return Err(usage(format!(
                "--mix {mix} draws more groups than --m {}",
                self.m
            )));
        }
        Ok(Model {
            algos,
            ncs: dist("ncs", &self.ncs, false)?,
            cs: dist("cs", &self.cs, true)?,
            cd: dist("cd", &self.cd, false)?,
            mix,
            topology: self.topology.parse().map_err(usage)?,
        })
    }

    /// The set-up of `info` under `model`.
    pub fn setup(&self, info: &algo::AlgoInfo, model: &Model) -> anyhow::Result<Setup> {
        let n = self.n;
        let local = info.problem == Problem::LocalCs;
        let graph = if local {
            Graph::build(&model.topology, n, self.seed)
        } else {
            Graph::complete(0)
        };
        let per =
            |v: &Option<Vec<usize>>, what: &str, default: usize| -> anyhow::Result<Vec<usize>> {
                match v {
                    None => Ok(vec![default; n]),
                    Some(v) if v.len() == 1 => Ok(vec![v[0]; n]),
                    Some(v) if v.len() == n => Ok(v.clone()),
                    Some(v) => Err(usage(format!(
                        "--{what} takes one value or {n} (one per process), got {}",
                        v.len()
                    ))),
                }
            };
        let (mut l, mut k, mut initial_in) = (vec![0; n], vec![n; n], vec![false; n]);
        if local {
            l = per(&self.l, "l", 1)?;
            k = per(&self.k, "k", 2)?;
            for i in 0..n {
                let deg = graph.neighbours(i).len();
                if info.name == "lmutin" {
                    k[i] = deg + 1;
                }
                if !(l[i] < k[i] && k[i] <= deg + 1) {
                    return Err(usage(format!(
                        "{}: process {i} needs 0 <= l < k <= |N_i| + 1 = {}, got l = {}, k = {}",
                        info.name,
                        deg + 1,
                        l[i],
                        k[i]
                    )));
                }
            }
            initial_in = graph
                .initial_configuration(&l, &k, self.seed)
                .map_err(|why| {
                    usage(format!(
                        "{}: {why} on {} with n = {n}; choose other --l / --k or --topology",
                        info.name, model.topology
                    ))
                })?;
        }
        Ok(Setup {
            n,
            m: self.m,
            graph,
            l,
            k,
            initial_in,
            leader: 0,
        })
    }
}

/// `lockbench sim`.
pub fn sim(args: &SimArgs) -> anyhow::Result<i32> {
    if let Some(path) = &args.paper {
        return super::paper::run(path, args.model.format, args.jobs);
    }
    let model = args.model.model()?;
    check_format(args.model.format)?;
    if args.seeds == 0 || args.seeds > MAX_SEEDS {
        return Err(usage(format!(
            "--seeds {}: use 1 to {MAX_SEEDS}",
            args.seeds
        )));
    }
    let mut runs = Vec::new();
    for info in &model.algos {
        if args.non_fifo && !info.allows_non_fifo {
            return Err(usage(format!(
                "{} needs FIFO channels (drop --non-fifo)",
                info.name
            )));
        }
        for s in 0..args.seeds {
            let mut m = args.model.clone();
            m.seed = args.model.seed + s;
            let setup = m.setup(info, &model)?;
            let cfg = SimConfig {
                algo: info.name.to_string(),
                problem: info.problem,
                setup,
                topology: if info.problem == Problem::LocalCs {
                    model.topology.to_string()
                } else {
                    "complete".into()
                },
                requests: m.requests,
                seed: m.seed,
                ncs: model.ncs,
                cs: model.cs,
                delay: model.cd,
                fifo: !args.non_fifo,
                mix: model.mix.clone(),
                watchdog: args.watchdog,
                trace: args.trace,
            };
            runs.push(cfg);
        }
    }
    // A trace interleaves nothing: one simulation at a time.
    let jobs = if args.trace { 1 } else { args.jobs };
    let results = super::in_parallel(&runs, jobs, |cfg| {
        crate::with_algo!(cfg.algo.as_str(), |make| sim::run(cfg, make))
            .expect("registered algorithm")
    });
    print!("{}", render(&results, args.model.format));
    Ok(exit_code(&results))
}

/// `lockbench mp-run`.
pub fn mp_run(args: &MpRunArgs) -> anyhow::Result<i32> {
    if args.runtime == RuntimeKind::Mpi {
        return mpi_run(args);
    }
    if args.procs_per_rank.is_some() {
        return Err(usage("--procs-per-rank applies to --runtime mpi only"));
    }
    let model = args.model.model()?;
    check_format(args.model.format)?;
    let mut results = Vec::new();
    for info in &model.algos {
        let setup = args.model.setup(info, &model)?;
        let cfg = threaded::ThreadConfig {
            algo: info.name.to_string(),
            problem: info.problem,
            setup,
            requests: args.model.requests,
            seed: args.model.seed,
            ncs: model.ncs,
            cs: model.cs,
            delay: model.cd,
            mix: model.mix.clone(),
            pin: !args.no_pin,
            watchdog: args.watchdog,
        };
        let r = crate::with_algo!(info.name, |make| threaded::run(&cfg, make))
            .expect("registered algorithm")?;
        results.push(r);
    }
    print!("{}", render(&results, args.model.format));
    Ok(exit_code(&results))
}

#[cfg(feature = "mpi")]
fn mpi_run(args: &MpRunArgs) -> anyhow::Result<i32> {
    super::mpi::mp_run(args)
}

#[cfg(not(feature = "mpi"))]
fn mpi_run(_: &MpRunArgs) -> anyhow::Result<i32> {
    // Started by mpirun all the same: one line from the first rank, exit 2 everywhere.
    let rank = ["PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"]
        .iter()
        .find_map(|v| std::env::var(v).ok());
    if rank.is_some_and(|r| r != "0") {
        return Ok(2);
    }
    Err(usage(
        "--runtime mpi needs a build with MPI: scripts/install-mpi.sh, then cargo build --release --features mpi, then mpirun -n N target/release/lockbench mp-run --runtime mpi ...",
    ))
}

pub(crate) fn check_format(f: Format) -> anyhow::Result<()> {
    match f {
        Format::Table | Format::Json => Ok(()),
        _ => Err(usage("sim and mp-run print --format table or json")),
    }
}

/// 1 when any run broke safety or liveness, else 0 (and a line on stderr saying which).
pub(crate) fn exit_code(results: &[MpResult]) -> i32 {
    let mut code = 0;
    for r in results {
        if r.safety_violations > 0 {
            eprintln!(
                "error: {} seed {}: {} safety violations, first: {}",
                r.algo,
                r.seed,
                r.safety_violations,
                r.violations.first().map_or("", String::as_str)
            );
            code = 1;
        }
        if let Some(l) = &r.liveness_failure {
            eprintln!("error: {} seed {}: liveness: {l}", r.algo, r.seed);
            code = 1;
        }
        if let (Some(w), Some(b)) = (r.starvation_sessions_max, r.starvation_bound) {
            if w > b {
                eprintln!(
                    "error: {} seed {}: a request waited {w} sessions > bound {b}",
                    r.algo, r.seed
                );
                code = 1;
            }
        }
    }
    code
}

/// The results as a table or JSON array.
pub fn render(results: &[MpResult], format: Format) -> String {
    if format == Format::Json {
        return serde_json::to_string_pretty(results).expect("serializable") + "\n";
    }
    let opt = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.2}"));
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            vec![
                r.algo.clone(),
                r.n.to_string(),
                r.m.to_string(),
                r.seed.to_string(),
                format!("{:.2}", r.messages_per_request_mean),
                r.messages_per_request_max.to_string(),
                format!("{:.2}", r.message_size_mean),
                format!("{:.2}", r.waiting_time_mean),
                opt(r.waiting_time_hops),
                opt(r.sync_delay_mean),
                format!("{:.4}", r.throughput),
                format!("{:.2}/{}", r.concurrency_mean, r.concurrency_max),
                if r.safety_violations == 0 && r.liveness_failure.is_none() {
                    "ok".into()
                } else if r.safety_violations > 0 {
                    format!("{} VIOL", r.safety_violations)
                } else {
                    "STUCK".into()
                },
                format!("{:.2}", r.wall_seconds),
            ]
        })
        .collect();
    let head = [
        "algo", "n", "m", "seed", "msg/req", "max", "size", "wait", "hops", "sync", "thrpt",
        "inside", "safety", "wall s",
    ];
    let mut w: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (i, c) in row.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |cells: Vec<String>| -> String {
        cells
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i == 0 {
                    format!("{c:<w$}", w = w[i])
                } else {
                    format!("{c:>w$}", w = w[i])
                }
            })
            .collect::<Vec<_>>()
            .join("  ")
            .trim_end()
            .to_string()
            + "\n"
    };
    let mut out = String::new();
    if let Some(r) = results.first() {
        out.push_str(&format!(
            "runtime {}; ncs {}, cs {}, delay {}, mix {}, {} requests per process; times in {}\n",
            r.runtime,
            r.ncs,
            r.cs,
            r.delay,
            r.mix,
            r.requests_per_process,
            if r.runtime == "sim" {
                "simulated units"
            } else {
                "ms"
            }
        ));
    }
    out.push_str(&line(head.iter().map(|s| s.to_string()).collect()));
    out.push_str(&line(w.iter().map(|&n| "-".repeat(n)).collect()));
    for row in rows {
        out.push_str(&line(row));
    }
    out
}
