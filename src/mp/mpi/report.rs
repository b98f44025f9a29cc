//! What each rank reports to rank 0 at the end of a run (its counts, waits and logs of
//! critical sections), and rank 0's result from every rank's report: the shared figures
//! replayed from the logs, and the safety checks with the clocks' error bounds as slack.

use serde::{Deserialize, Serialize};

use super::check::{self, CsInterval, Spec, WaitStart};
use super::clock::SYNC_EXCHANGES;
use super::config::MpiConfig;
use super::result::MpiResult;
use crate::mp::metrics::Tally;
use crate::mp::Pid;

/// What a rank sends rank 0 at the end of a run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(super) struct Report {
    pub(super) host: String,
    pub(super) clock_error_ms: f64,
    pub(super) kinds: Vec<(String, u64, u64)>,
    pub(super) messages: u64,
    pub(super) self_messages: u64,
    pub(super) ints: u64,
    pub(super) per_request_max: u64,
    pub(super) per_request_max_with_self: u64,
    pub(super) requests: u64,
    /// (process, waiting time in ms of its own clock).
    pub(super) waits: Vec<(Pid, f64)>,
    pub(super) intervals: Vec<CsInterval>,
    pub(super) asks: Vec<WaitStart>,
    pub(super) delivered: u64,
    pub(super) violations: u64,
    pub(super) described: Vec<String>,
    pub(super) liveness: Option<String>,
    pub(super) sessions_waited_max: Option<u64>,
}

impl Report {
    /// Takes the message counts of `t` (its cycles closed).
    pub(super) fn counts_from(&mut self, t: &Tally) {
        self.kinds = t
            .kinds
            .iter()
            .map(|k| (k.0.to_string(), k.1, k.2))
            .collect();
        self.messages = t.messages;
        self.self_messages = t.self_messages;
        self.ints = t.ints;
        self.per_request_max = t.per_request_max;
        self.per_request_max_with_self = t.per_request_max_with_self;
        self.requests = t.requests;
    }
}

/// Rank 0: the run's result from every rank's report.
pub(super) fn assemble(
    cfg: &MpiConfig,
    reports: Vec<Report>,
    liveness: Option<String>,
    start_ms: f64,
    end_ms: f64,
    wall: f64,
) -> MpiResult {
    let s = &cfg.run.setup;
    let n = s.n;
    let ranks = reports.len();
    let local_cs = cfg.run.local();
    let mut tally = Tally::new(n);
    let mut intervals = Vec::new();
    let mut asks = Vec::new();
    let (mut delivered, mut violations, mut described) = (0u64, 0u64, Vec::new());
    let mut sessions_waited_max: Option<u64> = None;
    let shift = |t: f64| t - start_ms;
    for rp in &reports {
        let mut part = Tally::new(n);
        // Kind names outlive the run in the tally; a run has a handful of kinds.
        part.kinds = rp
            .kinds
            .iter()
            .map(|(k, c, i)| (&*Box::leak(k.clone().into_boxed_str()), *c, *i))
            .collect();
        part.messages = rp.messages;
        part.self_messages = rp.self_messages;
        part.ints = rp.ints;
        part.per_request_max = rp.per_request_max;
        part.per_request_max_with_self = rp.per_request_max_with_self;
        part.requests = rp.requests;
        tally.absorb(&part);
        for &(p, w) in &rp.waits {
            tally.wait(p, w);
        }
        intervals.extend(rp.intervals.iter().map(|iv| CsInterval {
            enter: iv.enter.map(shift),
            exit: iv.exit.map(shift),
            ..iv.clone()
        }));
        asks.extend(rp.asks.iter().map(|w| WaitStart {
            p: w.p,
            at: shift(w.at),
        }));
        delivered += rp.delivered;
        violations += rp.violations;
        described.extend(rp.described.iter().cloned());
        if let Some(m) = rp.sessions_waited_max {
            sessions_waited_max = Some(sessions_waited_max.unwrap_or(0).max(m));
        }
    }
    let end = shift(end_ms);
    let spec = Spec {
        problem: cfg.run.problem,
        closed: cfg.run.closed_neighbourhoods(),
        l: s.l.clone(),
        k: s.k.clone(),
        clock_of: (0..n).map(|p| p / cfg.procs_per_rank).collect(),
        error_of_clock: reports.iter().map(|r| r.clock_error_ms).collect(),
    };
    let verdict = check::check(&spec, &intervals, end);
    violations += verdict.count;
    described.extend(verdict.described);
    described.truncate(5);
    let sh = check::shared(cfg.run.problem, n, &intervals, &asks, end);
    tally.sync_sum = sh.sync_sum;
    tally.sync_count = sh.sync_count;
    tally.sync_max = sh.sync_max;
    tally.completed = sh.completed;
    tally.inside_integral = sh.inside_integral;
    tally.busy_time = sh.busy_time;
    tally.inside_max = sh.inside_max;
    let mut r = cfg.run.result("mpi", cfg.run.topology_name(), true);
    r.events = delivered;
    r.wall_seconds = wall;
    r.safety_violations = violations;
    r.violations = described;
    r.liveness_failure = liveness;
    r.starvation_sessions_max = sessions_waited_max;
    r.figures(&tally, end, !local_cs);
    let errors: Vec<f64> = reports.iter().map(|r| r.clock_error_ms).collect();
    MpiResult {
        run: r,
        ranks,
        procs_per_rank: cfg.procs_per_rank,
        hosts: reports.iter().map(|r| r.host.clone()).collect(),
        clock_sync_error_ms: errors.iter().cloned().fold(0.0, f64::max),
        clock_sync_error_by_rank_ms: errors,
        clock_sync_exchanges: SYNC_EXCHANGES,
    }
}
