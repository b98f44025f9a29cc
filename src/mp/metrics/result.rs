//! One message-passing run's result: the figures of its [`Tally`] and its checks, whose field
//! names are the machine-readable contract.

use serde::Serialize;

use super::Tally;
use crate::mp::paths::{Lemma6, PathTally};
use crate::mp::restarts::Recovery;
use crate::mp::Pid;

/// One process's waiting times.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ProcessWait {
    /// The process.
    pub process: Pid,
    /// Waits recorded (requests; local CS: entries and exits).
    pub waits: u64,
    /// Mean waiting time.
    pub mean: f64,
    /// Longest waiting time.
    pub max: f64,
}

/// Messages of one kind, per request.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct KindFigure {
    /// The kind.
    pub kind: String,
    /// Mean per request.
    pub per_request: f64,
    /// Mean size in integers.
    pub size_mean: f64,
}

/// One message-passing run (simulated or threaded). Field names are the machine-readable
/// contract: add, don't rename.
#[derive(Clone, Debug, Default, Serialize)]
pub struct MpResult {
    /// Algorithm name.
    pub algo: String,
    /// `sim` or `threaded`.
    pub runtime: String,
    /// Processes.
    pub n: usize,
    /// Groups.
    pub m: usize,
    /// Requests per process.
    pub requests_per_process: u64,
    /// Seed.
    pub seed: u64,
    /// Topology (local CS algorithms) or `complete`.
    pub topology: String,
    /// Channel delay distribution.
    pub delay: String,
    /// Inter-request (non-CS) time distribution.
    pub ncs: String,
    /// CS time distribution.
    pub cs: String,
    /// Group selection.
    pub mix: String,
    /// FIFO channels.
    pub fifo: bool,
    /// Requests (local CS: transitions, entries and exits) whose messages were counted.
    pub requests: u64,
    /// Messages between distinct processes per request, mean.
    pub messages_per_request_mean: f64,
    /// ... and max over the run.
    pub messages_per_request_max: u64,
    /// Max per request counting self-messages (seed 004's Lemma 6 counts them).
    pub messages_per_request_max_with_self: u64,
    /// Integers per message between distinct processes, counted in each message as it is
    /// serialized, not taken from its own size (the simulator, n ≤ 64; null elsewhere).
    pub message_size_observed_mean: Option<f64>,
    /// The largest non-negative integer a message between distinct processes carried, as
    /// serialized (the simulator, n ≤ 64; null elsewhere): seed 003 §5.2's bounded numbers
    /// seen on the channels.
    pub message_int_observed_max: Option<u64>,
    /// Self-messages per request, mean.
    pub self_messages_per_request_mean: f64,
    /// Per kind.
    pub messages_by_kind: Vec<KindFigure>,
    /// Mean message size in integers.
    pub message_size_mean: f64,
    /// Integers sent per request.
    pub message_ints_per_request_mean: f64,
    /// Mean waiting time (request → entry), time units.
    pub waiting_time_mean: f64,
    /// Largest waiting time.
    pub waiting_time_max: f64,
    /// Mean waiting time in message hops: the longest causal chain of messages from the
    /// request to the entry (simulator only, n ≤ 64; null elsewhere).
    pub waiting_time_hops: Option<f64>,
    /// Largest waiting time in message hops.
    pub waiting_time_hops_max: Option<u64>,
    /// Mean synchronization delay (last exit with someone waiting → next entry).
    pub sync_delay_mean: Option<f64>,
    /// Largest synchronization delay.
    pub sync_delay_max: Option<f64>,
    /// Mean synchronization delay in message hops (causal chain from the exit to the entry).
    pub sync_delay_hops: Option<f64>,
    /// Largest synchronization delay in message hops.
    pub sync_delay_hops_max: Option<u64>,
    /// Waiting time in hops as seed 003 §2.2.1 counts them: the messages on the path the entry
    /// waited for, from its request (simulator only, n ≤ 64; null elsewhere). Mean over the
    /// entries whose path begins at their request.
    pub waiting_time_path_hops: Option<f64>,
    /// Largest waiting time in hops on the path waited for.
    pub waiting_time_path_hops_max: Option<u64>,
    /// The first path with that many hops, message by message.
    pub waiting_time_path_longest: Option<String>,
    /// Entries whose path began at another event than their request (they waited for another
    /// process's exit, request or timer too), and the first, described.
    pub waiting_path_elsewhere: Option<u64>,
    /// The first of those.
    pub waiting_path_elsewhere_first: Option<String>,
    /// Entries whose path began at another process's exit (among `waiting_path_elsewhere`):
    /// they waited for another process's critical section to end.
    pub waiting_path_after_exit: Option<u64>,
    /// The first of those, message by message.
    pub waiting_path_after_exit_first: Option<String>,
    /// Synchronization delay in hops on the path waited for: its messages sent at the exit
    /// that emptied the system or later (mean).
    pub sync_delay_path_hops: Option<f64>,
    /// Largest synchronization delay in hops on the path waited for.
    pub sync_delay_path_hops_max: Option<u64>,
    /// The first path with that many hops, message by message.
    pub sync_delay_path_longest: Option<String>,
    /// Entries after an exit that emptied the system whose path began elsewhere (before the
    /// exit, such as a token sent before it; only the messages sent from the exit on count).
    pub sync_path_elsewhere: Option<u64>,
    /// Critical sections completed per time unit.
    pub throughput: f64,
    /// Mean processes inside while anyone is.
    pub concurrency_mean: f64,
    /// Most inside at once.
    pub concurrency_max: usize,
    /// Jain's index of per-process mean waiting times.
    pub fairness_jain: f64,
    /// Time at the end (simulated units, or seconds on the threaded runtime).
    pub time: f64,
    /// Events processed (simulator) or messages delivered (threaded).
    pub events: u64,
    /// Wall-clock seconds.
    pub wall_seconds: f64,
    /// Simulator: events run per wall-clock second (its speed; null on other runtimes).
    pub events_per_sec: Option<f64>,
    /// Safety violations seen (checked at every event).
    pub safety_violations: u64,
    /// The first violations, described.
    pub violations: Vec<String>,
    /// A liveness failure (a request unserved past the watchdog bound), with state.
    pub liveness_failure: Option<String>,
    /// TokenGME: most sessions a queued request waited, as the algorithm counts them (the age
    /// it reports; ledger rows judge `sessions_passed_max`).
    pub starvation_sessions_max: Option<u64>,
    /// Group mutual exclusion on the simulator: most sessions of other types that began while
    /// one request waited, observed from the entries' types (runs of entries of one type;
    /// `sim/passed.rs`), never read from the algorithm.
    pub sessions_passed_max: Option<u64>,
    /// The first request passed over by that many, described.
    pub sessions_passed_worst: Option<String>,
    /// TokenGME: the bound m(n + 1) − 1.
    pub starvation_bound: Option<u64>,
    /// Seed 003 §5.1 (TokenGME on the simulator; null elsewhere): events after which a
    /// request waited that the primary holder could admit, and the first, described.
    pub unnecessary_blocking: Option<u64>,
    /// The first state counted in `unnecessary_blocking`.
    pub unnecessary_blocking_first: Option<String>,
    /// Seed 003 §5.3 (`sim --crash`; null without crashes): crashes and recovery messages.
    pub recovery: Option<Recovery>,
    /// Seed 003 §5.1's multi-type requests (`sim --types-per-request G`, G ≥ 2; absent
    /// otherwise): G and the two-hop property.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multi_type: Option<crate::mp::two_hop::MultiType>,
    /// Per process: waits, mean and longest waiting time (the distribution behind
    /// `waiting_time_mean` / `_max`).
    pub waiting_by_process: Vec<ProcessWait>,
    /// Seed 004: messages per transition by path and kind against Lemma 6 (the simulator, for
    /// lmutin and lkcs; null elsewhere).
    pub lemma6: Option<Lemma6>,
    /// Seed 004: the rules LKCS / LMUTIN ran (`ours`, `printed`, `printed-at-capacity`;
    /// absent for other algorithms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lkcs_rules: Option<String>,
}

impl MpResult {
    /// Fills the figures of `t`; the caller sets the run's description. Hops are counted
    /// causally by the runtime ([`Tally::wait_hops`]).
    pub fn figures(&mut self, t: &Tally, time: f64, sync_applies: bool) {
        let req = t.requests.max(1) as f64;
        self.requests = t.requests;
        self.messages_per_request_mean = t.messages as f64 / req;
        self.messages_per_request_max = t.per_request_max;
        self.messages_per_request_max_with_self = t.per_request_max_with_self;
        self.message_size_observed_mean =
            (t.observed_ints.1 > 0).then(|| t.observed_ints.0 as f64 / t.observed_ints.1 as f64);
        self.message_int_observed_max = (t.observed_ints.1 > 0).then_some(t.observed_int_max);
        self.self_messages_per_request_mean = t.self_messages as f64 / req;
        let mut kinds = t.kinds.clone();
        kinds.sort_by_key(|k| k.0);
        self.messages_by_kind = kinds
            .iter()
            .map(|k| KindFigure {
                kind: k.0.to_string(),
                per_request: k.1 as f64 / req,
                size_mean: k.2 as f64 / k.1.max(1) as f64,
            })
            .collect();
        self.message_size_mean = t.ints as f64 / t.messages.max(1) as f64;
        self.message_ints_per_request_mean = t.ints as f64 / req;
        self.waiting_time_mean = t.wait_sum / t.wait_count.max(1) as f64;
        self.waiting_time_max = t.wait_max;
        let mean = |h: (u64, u64, u64)| (h.2 > 0).then(|| h.0 as f64 / h.2 as f64);
        self.waiting_time_hops = mean(t.wait_hops);
        self.waiting_time_hops_max = (t.wait_hops.2 > 0).then_some(t.wait_hops.1);
        if sync_applies && t.sync_count > 0 {
            let s = t.sync_sum / t.sync_count as f64;
            self.sync_delay_mean = Some(s);
            self.sync_delay_max = Some(t.sync_max);
            self.sync_delay_hops = mean(t.sync_hops);
            self.sync_delay_hops_max = (t.sync_hops.2 > 0).then_some(t.sync_hops.1);
            let p = &t.path_sync;
            if p.count + p.elsewhere > 0 {
                self.sync_delay_path_hops = (p.count > 0).then(|| p.sum as f64 / p.count as f64);
                self.sync_delay_path_hops_max = (p.count > 0).then_some(p.max);
                self.sync_delay_path_longest.clone_from(&p.longest);
                self.sync_path_elsewhere = Some(p.elsewhere);
            }
        }
        let p = &t.path_wait;
        if p.count + p.elsewhere > 0 {
            self.waiting_time_path_hops = (p.count > 0).then(|| p.sum as f64 / p.count as f64);
            self.waiting_time_path_hops_max = (p.count > 0).then_some(p.max);
            self.waiting_time_path_longest.clone_from(&p.longest);
            self.waiting_path_elsewhere = Some(p.elsewhere);
            self.waiting_path_elsewhere_first
                .clone_from(&p.first_elsewhere);
            self.waiting_path_after_exit = Some(p.after_exit);
            self.waiting_path_after_exit_first
                .clone_from(&p.first_after_exit);
        }
        self.throughput = if time > 0.0 {
            t.completed as f64 / time
        } else {
            0.0
        };
        self.concurrency_mean = if t.busy_time > 0.0 {
            t.inside_integral / t.busy_time
        } else {
            0.0
        };
        self.concurrency_max = t.inside_max;
        self.fairness_jain = t.wait_fairness();
        self.time = time;
        self.waiting_by_process = t.waits_by_process();
        self.lemma6 = t.paths.as_ref().map(PathTally::summary);
    }
}
