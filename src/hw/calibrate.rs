//! `lockbench calibrate`: what a cache-line transfer costs between each pair of CPUs, measured
//! the way ccbench does.
//!
//! For an ordered pair (a, b), CPU b puts a set of lines into a state, then CPU a times one
//! operation on each of them:
//!
//! - **load**: b has just written the lines (modified in b's cache); a loads them. The loads
//!   form a pointer chase (each line holds the index of the next, in a random cyclic order), so
//!   they cannot overlap and the prefetchers cannot guess the next line;
//! - **store**: b has written the lines and a has read them (shared by both); a stores to each,
//!   with a full fence after each store, so each store waits for b's copy to be invalidated;
//! - **rmw**: b has written the lines; a runs an atomic fetch-add on each, chained through the
//!   returned value.
//!
//! Each timed batch covers every line once; the batch time over the line count is one sample,
//! and the median over rounds is kept. The diagonal of each matrix is the same operation on
//! lines already in the CPU's own cache (a local access), measured by one thread alone.
//!
//! Lines are 128 bytes apart (`CachePadded`), so the adjacent-line prefetcher of x86 pulls no
//! neighbour in. The result is an estimate of the latency of one transfer, not of bandwidth.

use std::hint::black_box;
use std::sync::atomic::{fence, AtomicU64, Ordering};
use std::time::{Duration, Instant as StdInstant};

use anyhow::{anyhow, bail, Context, Result};
use crossbeam_utils::CachePadded;
use serde::{Deserialize, Serialize};

use crate::error::UsageError;
use crate::runner::topology::{self, PinMode, Topology};
use crate::workload::rng::SplitMix64;

/// The three operations measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Load of a line the other CPU modified.
    Load,
    /// Store to a line shared with the other CPU.
    Store,
    /// Atomic read-modify-write of a line the other CPU modified.
    Rmw,
}

impl Op {
    /// All three, in the order they are reported.
    pub const ALL: [Op; 3] = [Op::Load, Op::Store, Op::Rmw];

    /// What the operation measures, for people.
    pub fn describe(self) -> &'static str {
        match self {
            Op::Load => "load of a line modified by the other CPU",
            Op::Store => "store to a line shared with the other CPU",
            Op::Rmw => "atomic read-modify-write of a line modified by the other CPU",
        }
    }
}

/// A saved calibration: three matrices in ns per cache-line access, indexed like `cpus`.
/// `load_ns[i][j]` is CPU `cpus[i]` loading a line CPU `cpus[j]` modified; the diagonal is a
/// local access (the line in the accessing CPU's own cache).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// lockbench version that measured it.
    pub version: String,
    /// Seconds since the Unix epoch when it finished.
    pub timestamp: u64,
    /// CPU model (`/proc/cpuinfo`).
    pub cpu_model: Option<String>,
    /// Host name.
    pub hostname: Option<String>,
    /// The CPUs measured, in matrix order.
    pub cpus: Vec<usize>,
    /// Lines per timed batch.
    pub lines: usize,
    /// Timed batches per operation and pair (the median is kept).
    pub rounds: usize,
    /// Load of a line the column CPU modified, ns.
    pub load_ns: Vec<Vec<f64>>,
    /// Store to a line shared with the column CPU, ns.
    pub store_ns: Vec<Vec<f64>>,
    /// Atomic RMW of a line the column CPU modified, ns.
    pub rmw_ns: Vec<Vec<f64>>,
    /// The spread of each cell over its rounds: the interquartile range, ns, as
    /// `[load, store, rmw]` matrices of the same shape (empty in calibrations saved before
    /// spreads were kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub iqr_ns: Vec<Vec<Vec<f64>>>,
    /// What the reader should know (noise, restrictions).
    pub notes: Vec<String>,
}

/// Largest cost a calibration may hold for one access, ns.
pub const MAX_COST_NS: f64 = 1e6;

impl Calibration {
    /// The matrix of one operation.
    pub fn matrix(&self, op: Op) -> &Vec<Vec<f64>> {
        match op {
            Op::Load => &self.load_ns,
            Op::Store => &self.store_ns,
            Op::Rmw => &self.rmw_ns,
        }
    }

    /// Whether the spread of every cell is known (calibrations saved before spreads were kept
    /// have none).
    pub fn spread_known(&self) -> bool {
        let n = self.cpus.len();
        self.iqr_ns.len() == 3
            && self
                .iqr_ns
                .iter()
                .all(|m| m.len() == n && m.iter().all(|row| row.len() == n))
    }

    /// Checks the shapes after loading a file.
    pub fn validate(&self) -> Result<(), String> {
        let n = self.cpus.len();
        if n < 2 {
            return Err(format!("it holds {n} CPU(s); a calibration needs two"));
        }
        for op in Op::ALL {
            let m = self.matrix(op);
            if m.len() != n || m.iter().any(|row| row.len() != n) {
                return Err(format!("its {op:?} matrix is not {n}×{n}"));
            }
            if m.iter().flatten().any(|v| !v.is_finite() || *v < 0.0) {
                return Err(format!(
                    "its {op:?} matrix holds a negative or non-finite cost"
                ));
            }
            if let Some(v) = m.iter().flatten().find(|v| **v > MAX_COST_NS) {
                return Err(format!(
                    "its {op:?} matrix holds a cost of {v:e} ns, above {MAX_COST_NS:e} ns (no cache line takes a millisecond to move)"
                ));
            }
        }
        Ok(())
    }

    /// The cost of one RMR for threads on `cpus`: the mean over the three operations and over
    /// every ordered pair of distinct calibrated CPUs among them. With one CPU (or none
    /// calibrated among them) there is no transfer: one thread's accesses are local, so the
    /// diagonal (local) cost of that CPU is returned; unknown CPUs fall back to the mean over
    /// the whole matrix. The text says which was used.
    pub fn cost_for(&self, cpus: &[Option<usize>]) -> (f64, String) {
        let index: Vec<usize> = cpus
            .iter()
            .filter_map(|c| c.and_then(|c| self.cpus.iter().position(|&x| x == c)))
            .collect();
        let unknown = cpus.len() - index.len();
        let mean3 =
            |i: usize, j: usize| Op::ALL.iter().map(|&op| self.matrix(op)[i][j]).sum::<f64>() / 3.0;
        if cpus.len() == 1 {
            return match index.first() {
                Some(&i) => (mean3(i, i), format!("local, cpu{}", self.cpus[i])),
                None => {
                    let n = self.cpus.len();
                    let local = (0..n).map(|i| mean3(i, i)).sum::<f64>() / n as f64;
                    (local, "local, mean over calibrated CPUs".to_string())
                }
            };
        }
        let mut pairs = Vec::new();
        for (x, &i) in index.iter().enumerate() {
            for &j in &index[x + 1..] {
                if i != j {
                    pairs.push(mean3(i, j));
                    pairs.push(mean3(j, i));
                }
            }
        }
        if unknown == 0 && !pairs.is_empty() {
            let cpus: Vec<usize> = index.iter().map(|&i| self.cpus[i]).collect();
            return (
                pairs.iter().sum::<f64>() / pairs.len() as f64,
                format!("pairs of cpus {}", topology::format_cpu_list(&cpus)),
            );
        }
        let n = self.cpus.len();
        let all: Vec<f64> = (0..n)
            .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| mean3(i, j))
            .collect();
        (
            all.iter().sum::<f64>() / all.len() as f64,
            "placement not calibrated: mean over every calibrated pair".to_string(),
        )
    }

    /// Mean over off-diagonal entries of one operation.
    pub fn mean_transfer(&self, op: Op) -> f64 {
        let m = self.matrix(op);
        let n = m.len();
        let mut sum = 0.0;
        for (i, row) in m.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                if i != j {
                    sum += v;
                }
            }
        }
        sum / (n * (n - 1)).max(1) as f64
    }
}

/// Options of one calibration.
#[derive(Clone, Debug)]
pub struct Settings {
    /// CPUs to measure between.
    pub cpus: Vec<usize>,
    /// Lines per batch.
    pub lines: usize,
    /// Timed batches per operation and pair.
    pub rounds: usize,
}

/// Lines set up untimed before timing starts, and batches thrown away per pair.
const WARMUP_ROUNDS: usize = 5;

/// A spin-wait gives up after this long without the other side moving.
const STALL: Duration = Duration::from_secs(20);

/// The lines under test: each holds, in its upper 32 bits, the index of the next line of a
/// random cycle through all of them.
struct Lines {
    slots: Vec<CachePadded<AtomicU64>>,
    /// `order[k]`: the k-th line visited (following the cycle from line `order[0]`).
    order: Vec<usize>,
}

impl Lines {
    fn new(n: usize, seed: u64) -> Lines {
        // A random permutation (Fisher–Yates), closed into one cycle.
        let mut rng = SplitMix64::new(seed);
        let mut order: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        let slots: Vec<CachePadded<AtomicU64>> = (0..n)
            .map(|_| CachePadded::new(AtomicU64::new(0)))
            .collect();
        let lines = Lines { slots, order };
        lines.write_all();
        lines
    }

    /// The value line `i` holds: the next index in the cycle, in the upper half.
    fn link(&self, k: usize) -> u64 {
        (self.order[(k + 1) % self.order.len()] as u64) << 32
    }

    /// Writes every line (the writer's cache then holds them modified).
    fn write_all(&self) {
        for k in 0..self.order.len() {
            self.slots[self.order[k]].store(self.link(k), Ordering::Relaxed);
        }
    }

    /// Loads every line by following the cycle; each load's address depends on the last.
    fn chase(&self) -> usize {
        let mut i = self.order[0];
        for _ in 0..self.order.len() {
            i = (self.slots[i].load(Ordering::Relaxed) >> 32) as usize;
        }
        i
    }

    /// Stores to every line, each store fenced so it completes before the next.
    fn store_all(&self) {
        for k in 0..self.order.len() {
            self.slots[self.order[k]].store(self.link(k), Ordering::Relaxed);
            fence(Ordering::SeqCst);
        }
    }

    /// A fetch-add on every line, chained through the values returned.
    fn rmw_chase(&self) -> usize {
        let mut i = self.order[0];
        for _ in 0..self.order.len() {
            i = (self.slots[i].fetch_add(1, Ordering::AcqRel) >> 32) as usize;
        }
        i
    }

    /// Times one operation on every line (after the untimed set-up the operation needs on the
    /// accessing side); returns ns per line.
    fn timed(&self, op: Op) -> f64 {
        if op == Op::Store {
            // Share the lines: read them untimed first.
            black_box(self.chase());
        }
        let start = quanta::Instant::now();
        match op {
            Op::Load => {
                black_box(self.chase());
            }
            Op::Store => self.store_all(),
            Op::Rmw => {
                black_box(self.rmw_chase());
            }
        }
        let ns = quanta::Instant::now().duration_since(start).as_nanos() as f64;
        ns / self.order.len() as f64
    }
}

/// Median and interquartile range of samples (sorted in place).
fn median_iqr(samples: &mut [f64]) -> (f64, f64) {
    samples.sort_by(|a, b| a.total_cmp(b));
    let quartile = |q: f64| {
        if samples.is_empty() {
            f64::NAN
        } else {
            samples[((samples.len() - 1) as f64 * q).round() as usize]
        }
    };
    (
        crate::metrics::stats::median_sorted(samples),
        quartile(0.75) - quartile(0.25),
    )
}

/// Spins until `flag` holds `want`; fails after [`STALL`] without it.
fn wait_for(flag: &AtomicU64, want: u64) -> Result<()> {
    let mut spins = 0u32;
    let mut since: Option<StdInstant> = None;
    while flag.load(Ordering::Acquire) != want {
        std::hint::spin_loop();
        spins = spins.wrapping_add(1);
        if spins.is_multiple_of(1 << 14) {
            // Someone else may hold the other CPU: let the scheduler run.
            std::thread::yield_now();
            let start = *since.get_or_insert_with(StdInstant::now);
            if start.elapsed() > STALL {
                bail!("the other CPU made no progress for {}s", STALL.as_secs());
            }
        }
    }
    Ok(())
}

fn pin(cpu: usize) -> Result<()> {
    topology::pin_current_thread(cpu).with_context(|| format!("cannot pin a thread to CPU {cpu}"))
}

/// The local cost of each operation on `cpu`: one thread, lines already in its own cache.
fn measure_local(cpu: usize, s: &Settings) -> Result<[(f64, f64); 3]> {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                pin(cpu)?;
                let lines = Lines::new(s.lines, 0x5eed ^ cpu as u64);
                let mut out = [(0.0, 0.0); 3];
                for (o, op) in Op::ALL.into_iter().enumerate() {
                    let mut samples = Vec::with_capacity(s.rounds);
                    for round in 0..WARMUP_ROUNDS + s.rounds {
                        lines.write_all();
                        let ns = lines.timed(op);
                        if round >= WARMUP_ROUNDS {
                            samples.push(ns);
                        }
                    }
                    out[o] = median_iqr(&mut samples);
                }
                Ok(out)
            })
            .join()
            .map_err(|_| anyhow!("the calibration thread on CPU {cpu} panicked"))?
    })
}

/// The transfer cost of each operation when CPU `a` accesses lines CPU `b` prepared.
fn measure_pair(a: usize, b: usize, s: &Settings) -> Result<[(f64, f64); 3]> {
    let lines = Lines::new(s.lines, (a as u64) << 20 | b as u64);
    let turn = CachePadded::new(AtomicU64::new(0));
    let per_op = WARMUP_ROUNDS + s.rounds;
    let total = (per_op * Op::ALL.len()) as u64;
    std::thread::scope(|scope| {
        // b: before each round, write every line (modified in b's cache), then hand over.
        let owner = scope.spawn(|| -> Result<()> {
            pin(b)?;
            for round in 0..total {
                wait_for(&turn, 2 * round)?;
                lines.write_all();
                turn.store(2 * round + 1, Ordering::Release);
            }
            Ok(())
        });
        // a: time the operation, then hand back. Operations interleave, so a burst of noise
        // hits all three alike.
        let accessor = scope.spawn(|| -> Result<[(f64, f64); 3]> {
            pin(a)?;
            let mut samples: [Vec<f64>; 3] = Default::default();
            for round in 0..total {
                let o = (round % 3) as usize;
                if let Err(e) = wait_for(&turn, 2 * round + 1) {
                    // Release the owner, which waits for this round's hand-back.
                    turn.store(u64::MAX, Ordering::Release);
                    return Err(e);
                }
                let ns = lines.timed(Op::ALL[o]);
                if round / 3 >= WARMUP_ROUNDS as u64 {
                    samples[o].push(ns);
                }
                turn.store(2 * round + 2, Ordering::Release);
            }
            Ok(samples.map(|mut v| median_iqr(&mut v)))
        });
        let costs = accessor
            .join()
            .map_err(|_| anyhow!("the calibration thread on CPU {a} panicked"))?;
        let owned = owner
            .join()
            .map_err(|_| anyhow!("the calibration thread on CPU {b} panicked"))?;
        match (costs, owned) {
            (Ok(costs), Ok(())) => Ok(costs),
            (Err(e), _) | (_, Err(e)) => {
                Err(e.context(format!("calibrating CPU {a} against CPU {b}")))
            }
        }
    })
}

/// Measures the three matrices.
pub fn measure(s: &Settings) -> Result<Calibration> {
    let n = s.cpus.len();
    let mut m = [
        vec![vec![0.0; n]; n],
        vec![vec![0.0; n]; n],
        vec![vec![0.0; n]; n],
    ];
    let mut iqr = vec![vec![vec![0.0; n]; n]; 3];
    for (i, &a) in s.cpus.iter().enumerate() {
        let local = measure_local(a, s)?;
        for o in 0..3 {
            (m[o][i][i], iqr[o][i][i]) = local[o];
        }
    }
    for (i, &a) in s.cpus.iter().enumerate() {
        for (j, &b) in s.cpus.iter().enumerate() {
            if i != j {
                let costs = measure_pair(a, b, s)?;
                for o in 0..3 {
                    (m[o][i][j], iqr[o][i][j]) = costs[o];
                }
            }
        }
    }
    let [load_ns, store_ns, rmw_ns] = m;
    let cpuinfo = crate::opts::io::read_system("/proc/cpuinfo").unwrap_or_default();
    let mut notes = Vec::new();
    let busy = crate::hw::load_average();
    if let Some(load) = busy.filter(|l| *l > 0.5) {
        notes.push(format!(
            "the machine was busy (load average {load:.2}): other work shares the caches and \
             the CPUs; repeat on an idle machine for figures to quote"
        ));
    }
    Ok(Calibration {
        version: env!("CARGO_PKG_VERSION").to_string(),
        timestamp: crate::report::store::now_secs(),
        cpu_model: crate::runner::host::cpu_model(&cpuinfo),
        hostname: crate::opts::io::read_system("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string()),
        cpus: s.cpus.clone(),
        lines: s.lines,
        rounds: s.rounds,
        load_ns,
        store_ns,
        rmw_ns,
        iqr_ns: iqr,
        notes,
    })
}

/// The CPUs to calibrate: those asked for (each must be one this process may use), or one per
/// physical core. Fewer than two is bad input.
pub fn choose_cpus(asked: Option<&str>, topo: &Topology) -> Result<Vec<usize>, UsageError> {
    let allowed: Vec<usize> = topo.cpus.iter().map(|c| c.id).collect();
    let cpus = match asked {
        Some(list) => {
            let cpus =
                topology::parse_cpu_list(list).map_err(|e| UsageError(format!("--cpus: {e}")))?;
            if let Some(bad) = cpus.iter().find(|c| !allowed.contains(c)) {
                return Err(UsageError(format!(
                    "--cpus: CPU {bad} is not one this process may use (allowed: {})",
                    topology::format_cpu_list(&allowed)
                )));
            }
            cpus
        }
        None => topo.placement(PinMode::Physical, false),
    };
    if cpus.len() < 2 {
        return Err(UsageError(format!(
            "calibrate needs two CPUs to move cache lines between, and has {} ({}); give \
             --cpus with two or more, or run where this process may use two CPUs (taskset)",
            cpus.len(),
            if cpus.is_empty() {
                "none".to_string()
            } else {
                format!("CPU {}", topology::format_cpu_list(&cpus))
            }
        )));
    }
    Ok(cpus)
}

/// `lockbench calibrate`: checks the settings, measures between the CPUs asked for (`None`:
/// one per physical core this process may use) and returns the calibration.
pub fn calibrate(cpus: Option<&str>, lines: usize, rounds: usize) -> Result<Calibration> {
    if lines < 2 {
        return Err(UsageError("--lines must be at least 2".into()).into());
    }
    if rounds == 0 {
        return Err(UsageError("--rounds must be at least 1".into()).into());
    }
    let topo = Topology::detect().context("reading the CPU topology")?;
    let cpus = choose_cpus(cpus, &topo)?;
    let pairs = cpus.len() * (cpus.len() - 1);
    crate::opts::io::errln!(
        "lockbench calibrate: {} CPUs, {pairs} ordered pairs, {lines} lines × {rounds} rounds per operation",
        cpus.len(),
    );
    measure(&Settings {
        cpus,
        lines,
        rounds,
    })
}

/// Saves the calibration as JSON at `path` (its directory created when missing).
pub fn save(cal: &Calibration, path: &std::path::Path) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        crate::opts::io::create_dir_all(parent)?;
    }
    crate::opts::io::write_atomic(path, (serde_json::to_string_pretty(cal)? + "\n").as_bytes())
}

/// The calibration as an aligned table.
pub fn table(c: &Calibration) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "calibration: {} CPUs ({}), {} lines × {} rounds per operation; ns per cache-line access",
        c.cpus.len(),
        c.cpu_model.as_deref().unwrap_or("unknown CPU"),
        c.lines,
        c.rounds
    );
    let spread = c.spread_known();
    if spread {
        let _ = writeln!(
            out,
            "each cell: the median over the rounds ± half their interquartile range, as % of the median"
        );
    }
    for (o, op) in Op::ALL.into_iter().enumerate() {
        let _ = writeln!(
            out,
            "\n{} (row: accessing CPU; column: the other CPU; diagonal: local access)",
            op.describe()
        );
        let width = if spread { 16 } else { 9 };
        let _ = write!(out, "{:>8}", "");
        for cpu in &c.cpus {
            let _ = write!(out, "{:>width$}", format!("cpu{cpu}"));
        }
        let _ = writeln!(out);
        for (i, row) in c.matrix(op).iter().enumerate() {
            let _ = write!(out, "{:>8}", format!("cpu{}", c.cpus[i]));
            for (j, v) in row.iter().enumerate() {
                let cell = if spread {
                    let q = c.iqr_ns[o][i][j];
                    if *v > 0.0 {
                        format!("{v:.1} (±{:.0}%)", q / 2.0 / v * 100.0)
                    } else {
                        format!("{v:.1} (-)")
                    }
                } else {
                    format!("{v:.1}")
                };
                let _ = write!(out, "{cell:>width$}");
            }
            let _ = writeln!(out);
        }
    }
    let (load, store, rmw) = (
        c.mean_transfer(Op::Load),
        c.mean_transfer(Op::Store),
        c.mean_transfer(Op::Rmw),
    );
    let _ = writeln!(
        out,
        "\nmean transfer cost: load {load:.1} ns, store {store:.1} ns, rmw {rmw:.1} ns; per RMR \
         (their mean) {:.1} ns",
        (load + store + rmw) / 3.0
    );
    for note in &c.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Calibration {
        Calibration {
            version: "0".into(),
            timestamp: 0,
            cpu_model: None,
            hostname: None,
            cpus: vec![0, 2, 4],
            lines: 8,
            rounds: 3,
            load_ns: vec![
                vec![1.0, 60.0, 90.0],
                vec![60.0, 1.0, 90.0],
                vec![90.0, 90.0, 1.0],
            ],
            store_ns: vec![
                vec![2.0, 30.0, 60.0],
                vec![30.0, 2.0, 60.0],
                vec![60.0, 60.0, 2.0],
            ],
            rmw_ns: vec![
                vec![3.0, 90.0, 120.0],
                vec![90.0, 3.0, 120.0],
                vec![120.0, 120.0, 3.0],
            ],
            iqr_ns: vec![],
            notes: vec![],
        }
    }

    #[test]
    fn the_table_gives_each_cell_its_spread_when_known() {
        let mut c = sample();
        assert!(!table(&c).contains('±'), "{}", table(&c));
        c.iqr_ns = vec![
            vec![vec![0.2; 3]; 3],
            vec![vec![6.0; 3]; 3],
            vec![vec![9.0; 3]; 3],
        ];
        let text = table(&c);
        // load cpu0 → cpu2: 60 ± 0.1 is 0%; store cpu0 → cpu2: 30 ± 3 is 10%.
        assert!(
            text.contains("60.0 (±0%)") && text.contains("30.0 (±10%)"),
            "{text}"
        );
        let json = serde_json::to_string(&c).unwrap();
        let back: Calibration = serde_json::from_str(&json).unwrap();
        assert!(back.spread_known());
    }

    #[test]
    fn median_and_interquartile_range() {
        let mut v = vec![5.0, 1.0, 4.0, 2.0, 3.0];
        assert_eq!(median_iqr(&mut v), (3.0, 2.0));
    }

    #[test]
    fn cost_follows_the_placement() {
        let c = sample();
        assert_eq!(c.validate(), Ok(()));
        // cpu0 <-> cpu2: (60 + 30 + 90) / 3 in both directions.
        let (cost, how) = c.cost_for(&[Some(0), Some(2)]);
        assert!((cost - 60.0).abs() < 1e-9, "{cost}");
        assert!(how.contains("0,2"), "{how}");
        // All three: pairs (0,2) = 60, (0,4) = 90, (2,4) = 90.
        let (cost, _) = c.cost_for(&[Some(0), Some(2), Some(4)]);
        assert!((cost - 80.0).abs() < 1e-9, "{cost}");
        // One thread: local cost of its CPU.
        let (cost, how) = c.cost_for(&[Some(4)]);
        assert!(
            (cost - 2.0).abs() < 1e-9 && how.starts_with("local"),
            "{cost} {how}"
        );
        // Unknown or unpinned CPUs: the mean over every pair.
        let (cost, how) = c.cost_for(&[Some(0), Some(7)]);
        assert!(
            (cost - 80.0).abs() < 1e-9 && how.contains("not calibrated"),
            "{how}"
        );
        let (cost, _) = c.cost_for(&[None, None]);
        assert!((cost - 80.0).abs() < 1e-9);
        assert!((c.mean_transfer(Op::Store) - 50.0).abs() < 1e-9);
    }

    #[test]
    fn validation_rejects_bad_shapes() {
        let mut c = sample();
        c.rmw_ns.pop();
        assert!(c.validate().unwrap_err().contains("Rmw"));
        let mut c = sample();
        c.load_ns[0][1] = f64::NAN;
        assert!(c.validate().is_err());
        let mut c = sample();
        c.cpus.truncate(1);
        assert!(c.validate().unwrap_err().contains("two"));
    }

    #[test]
    fn lines_form_one_cycle() {
        let lines = Lines::new(16, 7);
        let mut seen = [false; 16];
        let mut i = lines.order[0];
        for _ in 0..16 {
            assert!(!seen[i], "line {i} visited twice");
            seen[i] = true;
            i = (lines.slots[i].load(Ordering::Relaxed) >> 32) as usize;
        }
        assert_eq!(i, lines.order[0]);
        assert!(seen.iter().all(|&s| s));
        // RMWs keep the links; the chase still closes.
        lines.rmw_chase();
        assert_eq!(lines.chase(), lines.order[0]);
        assert_eq!(
            lines.slots[lines.order[0]].load(Ordering::Relaxed) & 0xffff_ffff,
            1
        );
    }

    #[test]
    fn one_cpu_is_refused() {
        let topo = Topology::flat(&[0]);
        let err = choose_cpus(None, &topo).unwrap_err().0;
        assert!(
            err.contains("needs two CPUs") && !err.contains('\n'),
            "{err}"
        );
        let topo = Topology::flat(&[0, 1]);
        assert_eq!(choose_cpus(None, &topo).unwrap(), vec![0, 1]);
        assert!(choose_cpus(Some("0"), &topo).is_err());
        let err = choose_cpus(Some("0,5"), &topo).unwrap_err().0;
        assert!(err.contains("CPU 5"), "{err}");
    }

    #[test]
    fn measures_a_pair_of_cpus_when_there_are_two() {
        let Ok(topo) = Topology::detect() else { return };
        let Ok(cpus) = choose_cpus(None, &topo) else {
            return;
        };
        // The command's default batch of 64 lines: a batch of 8 local loads takes a few ns,
        // and its median over 5 rounds could read 0 ticks of the clock (seen once: Load
        // [0.0, 5.0]), which is the clock's resolution, not a cost.
        let s = Settings {
            cpus: cpus[..2].to_vec(),
            lines: 64,
            rounds: 5,
        };
        let c = measure(&s).unwrap();
        assert_eq!(c.validate(), Ok(()));
        for op in Op::ALL {
            for row in c.matrix(op) {
                assert!(row.iter().all(|v| *v > 0.0), "{op:?}: {row:?}");
            }
        }
        let json = serde_json::to_string(&c).unwrap();
        let back: Calibration = serde_json::from_str(&json).unwrap();
        assert_eq!(back, c);
    }
}
