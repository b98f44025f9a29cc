//! What a run is and what it hands back: the lock as the runner sees it ([`Subject`], with its
//! monomorphised [`Bench`]), the request ([`RunSpec`], [`StopRule`], [`LoopKind`]) and the
//! outcome ([`Repetition`], [`ThreadOutcome`], [`Latencies`], [`RunFailure`]). These are the
//! types of the one door between whoever asks for a run and the runner, so they live together.

use std::time::Duration;

use hdrhistogram::Histogram;

use crate::check::trace::TraceRecord;
use crate::check::OracleKind;
use crate::locks::{CountingBuilder, LockInfo};
use crate::mem::counting::RmrSummary;
use crate::mem::{Model, WaitPolicy};
use crate::metrics::counters::{CounterSample, CounterSpec};
use crate::metrics::latency::ticks_histogram;
use crate::workload::Mix;

/// Runs one measured repetition of a lock on native memory, with the passage loop (harness or
/// bare) monomorphised for the lock's concrete type: no dynamic call on the hot path, so the
/// lock's fast path inlines into the loop as it does in the lock's own benchmarks. The
/// registry makes one per lock from [`run_typed`](crate::runner::exec::run_typed).
pub type Bench =
    std::sync::Arc<dyn Fn(&RunSpec, LoopKind) -> Result<Repetition, RunFailure> + Send + Sync>;

/// What the runner needs of a lock: its description, its monomorphised bench, its counting build.
#[derive(Clone)]
pub struct Subject {
    /// What the registry says of it.
    pub info: LockInfo,
    /// Runs it on native memory, monomorphised (every timed run goes through this).
    pub bench: Bench,
    /// Builds the same algorithm on a counting memory (for `run --rmr`); `None` for locks not
    /// written over the register abstraction.
    pub counting: Option<CountingBuilder>,
}

/// When a run stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopRule {
    /// After this long (after the warm-up).
    Duration(Duration),
    /// After each thread completed this many measured passages.
    Passages(u64),
}

/// Which loop a repetition runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoopKind {
    /// The harness's passage loop: workload, oracle, sampled latencies, counters, traces.
    Harness,
    /// `enter; exit` and a count, nothing else (needs a [`StopRule::Duration`]).
    Bare,
}

/// Everything one run needs.
#[derive(Clone)]
pub struct RunSpec {
    /// The lock.
    pub lock: Subject,
    /// Number of threads; they act as processes 0..threads.
    pub threads: usize,
    /// Processes the lock is built for (at least `threads`): with more slots than threads, the
    /// extra processes stay idle, which shows what a lock's size costs an uncontended passage.
    pub slots: usize,
    /// Capacity for k-exclusion locks.
    pub k: usize,
    /// Which session each request asks for.
    pub mix: Mix,
    /// Busy work inside the critical section.
    pub cs: Duration,
    /// Busy work between passages.
    pub think: Duration,
    /// Shared cache lines read and written in every critical section.
    pub cs_lines: usize,
    /// When to stop.
    pub stop: StopRule,
    /// Warm-up before measuring (excluded from every figure).
    pub warmup: Duration,
    /// The safety oracle (a trace with the self-check records with the counting oracle, which
    /// knows how many are inside).
    pub oracle: OracleKind,
    /// Record a trace of every passage (doorway start/end, CS enter/exit).
    pub trace: bool,
    /// Time one passage in this many on average, chosen at random (geometric gaps); 1 times
    /// every passage. Throughput is unaffected. Traces time every passage.
    pub latency_sample: u64,
    /// What timing one passage costs, ns, when `latency_sample` is the default rate: each
    /// thread then times fewer passages where its own passage is so short that timing would
    /// take more than [`TIMING_SHARE`](crate::runner::sampling::TIMING_SHARE) of it (see
    /// [`adapted_latency_sample`](crate::runner::sampling::adapted_latency_sample)). `None`: the
    /// rate was asked for and is kept.
    pub timing_cost_ns: Option<f64>,
    /// Most passages traced per thread.
    pub trace_capacity: usize,
    /// CPU of each thread (`None`: not pinned).
    pub cpus: Vec<Option<usize>>,
    /// How waiting threads wait.
    pub policy: WaitPolicy,
    /// Counters to read in every worker.
    pub counters: Vec<CounterSpec>,
    /// A run with no passage completed for this long is stopped as stalled.
    pub stall_timeout: Duration,
    /// Seed of the session samplers and of latency sampling.
    pub seed: u64,
    /// Run on a counting memory under this RMR model (slower; fills `Repetition::rmr`).
    pub rmr: Option<Model>,
    /// Where the lock's registers go (`None`: the kernel's first touch, no binding).
    pub mem: Option<MemPlan>,
}

/// A memory policy and what applying it needs: the node of each thread's CPU.
#[derive(Clone, Debug)]
pub struct MemPlan {
    /// The policy.
    pub policy: crate::mem::placement::MemPolicy,
    /// The NUMA node of each thread's CPU (`None`: unpinned or unknown).
    pub thread_nodes: Vec<Option<usize>>,
}

impl MemPlan {
    /// Binds the pages of the lock's register arrays (`regions`) and of the block the run
    /// shares (`shared`: address and size) as the policy says.
    pub fn apply(
        &self,
        regions: &[crate::mem::placement::Region],
        shared: (usize, usize),
    ) -> crate::mem::placement::Placed {
        let nodes: Vec<usize> = self
            .thread_nodes
            .iter()
            .flatten()
            .copied()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let node_of = |p: usize| self.thread_nodes.get(p).copied().flatten();
        crate::mem::placement::apply(self.policy, regions, shared, &node_of, &nodes)
    }
}

impl RunSpec {
    /// A run of `lock` at `threads` unpinned threads until `stop`, everything else at its
    /// default: as many slots as threads, k = 1, distinct sessions, no think time, an empty
    /// critical section touching no shared line, no warm-up, the problem's default oracle at
    /// k = 1 (set `oracle` with `k`), no trace, every passage timed, spin-then-yield waiting,
    /// no counters, a 10 s stall timeout, seed 1, native memory.
    pub fn new(lock: Subject, threads: usize, stop: StopRule) -> RunSpec {
        let k = 1;
        RunSpec {
            oracle: OracleKind::default_for(lock.info.problem, k),
            lock,
            threads,
            slots: threads,
            k,
            mix: Mix::Distinct,
            cs: Duration::ZERO,
            think: Duration::ZERO,
            cs_lines: 0,
            stop,
            warmup: Duration::ZERO,
            trace: false,
            latency_sample: 1,
            timing_cost_ns: None,
            trace_capacity: 0,
            cpus: vec![None; threads],
            policy: WaitPolicy::YIELD,
            counters: Vec::new(),
            stall_timeout: Duration::from_secs(10),
            seed: 1,
            rmr: None,
            mem: None,
        }
    }

    /// The oracle this spec's run actually uses (see [`RunSpec::oracle`]).
    pub fn effective_oracle(&self) -> OracleKind {
        let o = self.oracle.for_lock(self.lock.info.problem, self.k);
        if self.trace && matches!(o, OracleKind::SelfCheck | OracleKind::Sampled) {
            OracleKind::Counting
        } else {
            o
        }
    }
}

/// One thread's share of a repetition.
#[derive(Clone, Debug)]
pub struct ThreadOutcome {
    /// CPU it was pinned to, if any.
    pub cpu: Option<usize>,
    /// Why pinning failed, if it did.
    pub pin_error: Option<String>,
    /// Measured passages.
    pub passages: u64,
    /// Measured window, ns.
    pub window_ns: f64,
}

/// Sampled latency histograms (clock ticks), merged over threads.
pub struct Latencies {
    /// Entry latency: request → inside.
    pub entry: Histogram<u64>,
    /// Whole passage: request to the same thread's next request.
    pub passage: Histogram<u64>,
    /// Exit latency: the exit section, start to end (bounded exit, P3).
    pub exit: Histogram<u64>,
}

impl Latencies {
    /// Empty histograms for a clock of `ns_per_tick`.
    pub(crate) fn new(ns_per_tick: f64) -> Self {
        Latencies {
            entry: ticks_histogram(ns_per_tick),
            passage: ticks_histogram(ns_per_tick),
            exit: ticks_histogram(ns_per_tick),
        }
    }

    /// Forgets every sample.
    pub(crate) fn reset(&mut self) {
        self.entry.reset();
        self.passage.reset();
        self.exit.reset();
    }

    /// Adds `other`'s samples.
    pub fn add(&mut self, other: &Latencies) {
        self.entry.add(&other.entry).expect("same bounds");
        self.passage.add(&other.passage).expect("same bounds");
        self.exit.add(&other.exit).expect("same bounds");
    }
}

/// The raw outcome of one repetition.
pub struct Repetition {
    /// Which loop ran (what the runner's tests check).
    #[cfg(test)]
    pub kind: LoopKind,
    /// Per thread.
    pub threads: Vec<ThreadOutcome>,
    /// Sampled latencies (taken out by whoever aggregates repetitions, to keep them small).
    pub latency: Option<Latencies>,
    /// Measured passages of all threads.
    pub passages: u64,
    /// Passages per second over that window.
    pub throughput_per_sec: f64,
    /// The oracle that ran.
    pub oracle: OracleKind,
    /// Mean and max processes inside together as the counting oracle saw them at entries (None
    /// with another oracle).
    pub inside: Option<(f64, u64)>,
    /// Safety violations the oracle saw.
    pub violations: u64,
    /// Failed register-invariant checks (the lock's own bounds) and the first message.
    pub invariant_failures: u64,
    /// The first invariant failure.
    pub invariant_example: Option<String>,
    /// Counter samples, one vector per thread.
    pub counters: Vec<Vec<CounterSample>>,
    /// Why the run was stopped early, when it stalled.
    pub stalled: Option<String>,
    /// Trace records of all threads, and whether a buffer filled.
    pub trace: Option<(Vec<TraceRecord>, bool)>,
    /// Nanoseconds per clock tick.
    pub ns_per_tick: f64,
    /// RMRs of the measured passages (`rmr` set in the spec).
    pub rmr: Option<RmrSummary>,
    /// What binding the lock's pages did (`mem` set in the spec).
    pub placed: Option<crate::mem::placement::Placed>,
}

/// A run that could not be carried out.
#[derive(Debug)]
pub struct RunFailure(pub String);

impl std::fmt::Display for RunFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RunFailure {}
