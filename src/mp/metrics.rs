//! What a message-passing run measures (seed 003 §2.2.1): messages per request by kind and
//! their size in integers, waiting time, synchronization delay, throughput and concurrency;
//! and what its checks found. One [`Tally`] per runtime run, summarised into one [`MpResult`].

use serde::Serialize;

use super::paths::{Lemma6, PathTally};
pub use super::restarts::Recovery;
use super::restarts::RestartTally;
use super::{Charge, Message, Observation, Pid};
use crate::metrics::fairness::Fairness;

/// Per-run message and timing tallies, independent of the runtime.
#[derive(Clone, Debug)]
pub struct Tally {
    /// Per kind: (name, messages, integers).
    pub kinds: Vec<(&'static str, u64, u64)>,
    /// Messages between distinct processes.
    pub messages: u64,
    /// Messages a process sent to itself (seed 004's counts include them).
    pub self_messages: u64,
    /// Integers carried by messages between distinct processes.
    pub ints: u64,
    cur: Vec<(u64, u64)>,
    open: Vec<bool>,
    /// The previous request of each process, open until the current one enters (so that a
    /// `Charge::SenderHeld` message sent while waiting reaches it).
    prev: Vec<Option<(u64, u64)>>,
    entered: Vec<bool>,
    /// Per request (or transition): messages charged to it, self-messages excluded.
    pub per_request_max: u64,
    /// Per request: messages charged, self-messages included (max).
    pub per_request_max_with_self: u64,
    /// Closed cycles.
    pub requests: u64,
    /// Waiting time: sum, max, count; and per process sums.
    pub wait_sum: f64,
    /// Largest waiting time.
    pub wait_max: f64,
    /// Waiting times recorded.
    pub wait_count: u64,
    per_proc_wait: Vec<(f64, u64)>,
    /// Synchronization delay: sum, count, max.
    pub sync_sum: f64,
    /// Synchronization delays recorded.
    pub sync_count: u64,
    /// Largest synchronization delay.
    pub sync_max: f64,
    /// Causal hops of waiting times (runtimes that track chains): sum, max, count.
    pub wait_hops: (u64, u64, u64),
    /// Causal hops of synchronization delays: sum, max, count.
    pub sync_hops: (u64, u64, u64),
    /// Hops on the path each entry waited for, from its request (the simulator, n ≤ 64).
    pub path_wait: PathHops,
    /// Hops on the path each entry after an exit that emptied the system waited for, from
    /// that exit.
    pub path_sync: PathHops,
    /// Critical sections completed.
    pub completed: u64,
    /// ∫ inside dt, time with someone inside, largest number inside.
    pub inside_integral: f64,
    /// Time with at least one process inside.
    pub busy_time: f64,
    /// Most processes inside at once.
    pub inside_max: usize,
    /// Per process: the longest waiting time.
    pub per_proc_wait_max: Vec<f64>,
    /// Messages per transition by path and kind (seed 004's Lemma 6), where the runtime
    /// keeps them (the simulator, for the local critical-section algorithms).
    pub paths: Option<PathTally>,
    /// Recovery messages per restart operation (seed 003 §5.3.4), in runs with crashes.
    pub restarts: Option<RestartTally>,
    /// Integers in the messages between distinct processes as they are serialized (the
    /// simulator, n ≤ 64; what travels, not what the message says its size is): sum, messages.
    pub observed_ints: (u64, u64),
    /// The largest non-negative integer those messages carried.
    pub observed_int_max: u64,
    /// Whether the simulator counts `observed_ints` (n ≤ 64), and the buffer it serializes into.
    sizes_on: bool,
    buf: Vec<u8>,
}

/// Numbers in `json` outside its strings: the integers a serialized message carries (field
/// and variant names are strings; booleans and nulls are not numbers), and the largest
/// non-negative integer among them.
fn numbers_in(json: &[u8]) -> (u64, u64) {
    let (mut n, mut in_str, mut esc, mut in_num) = (0, false, false, false);
    let (mut value, mut plain, mut largest) = (0u64, true, 0u64);
    for &b in json {
        if in_str {
            match (esc, b) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => in_str = false,
                _ => {}
            }
            continue;
        }
        let digit = b.is_ascii_digit() || (b == b'-' && !in_num);
        if digit && !in_num {
            n += 1;
            (value, plain) = (0, b != b'-');
        }
        let was = in_num;
        in_num = digit || (in_num && matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
        if in_num {
            if b.is_ascii_digit() {
                value = value.saturating_mul(10).saturating_add(u64::from(b - b'0'));
            } else if was {
                plain = false;
            }
        } else if was && plain {
            largest = largest.max(value);
        }
        in_str = b == b'"';
    }
    if in_num && plain {
        largest = largest.max(value);
    }
    (n, largest)
}

impl Tally {
    /// Tallies for `n` processes.
    pub fn new(n: usize) -> Self {
        Tally {
            kinds: Vec::new(),
            messages: 0,
            self_messages: 0,
            ints: 0,
            cur: vec![(0, 0); n],
            open: vec![false; n],
            prev: vec![None; n],
            entered: vec![false; n],
            per_request_max: 0,
            per_request_max_with_self: 0,
            requests: 0,
            wait_sum: 0.0,
            wait_max: 0.0,
            wait_count: 0,
            per_proc_wait: vec![(0.0, 0); n],
            sync_sum: 0.0,
            sync_count: 0,
            sync_max: 0.0,
            wait_hops: (0, 0, 0),
            sync_hops: (0, 0, 0),
            path_wait: PathHops::default(),
            path_sync: PathHops::default(),
            completed: 0,
            inside_integral: 0.0,
            busy_time: 0.0,
            inside_max: 0,
            per_proc_wait_max: vec![0.0; n],
            paths: None,
            restarts: None,
            observed_ints: (0, 0),
            observed_int_max: 0,
            sizes_on: n <= 64,
            buf: Vec::new(),
        }
    }

    /// An observation of process `p` at time `now` (per-transition paths, where kept).
    pub fn observe(&mut self, p: Pid, now: f64, obs: Observation) {
        if let Some(d) = self.paths.as_mut() {
            d.observe(p, now, obs);
        }
        if let Some(r) = self.restarts.as_mut() {
            r.observe(p, now, obs);
        }
    }

    /// Counts the integers of `copies` copies of `msg` as serialized (n ≤ 64).
    fn observe_size<M: Message>(&mut self, msg: &M, copies: u64) {
        if !self.sizes_on {
            return;
        }
        self.buf.clear();
        if serde_json::to_writer(&mut self.buf, msg).is_ok() {
            let (ints, largest) = numbers_in(&self.buf);
            self.observed_ints.0 += copies * ints;
            self.observed_ints.1 += copies;
            self.observed_int_max = self.observed_int_max.max(largest);
        }
    }

    /// Counts one message from `from` to `to`, as its sender and its receiver.
    #[inline]
    pub fn message<M: Message>(&mut self, from: Pid, to: Pid, msg: &M) {
        if let Some(d) = self.paths.as_mut() {
            d.message(from, to, msg);
        }
        if let Some(r) = self.restarts.as_mut() {
            r.message(from, to, msg);
        }
        self.sent(from, to, msg);
        self.received(from, to, msg);
        if from != to {
            self.observe_size(msg, 1);
        }
    }

    /// The receiver's part of [`Tally::message`]: a receiver-charged message counts towards
    /// the receiver's request (runtimes where each process keeps its own tally).
    #[inline]
    pub fn received<M: Message>(&mut self, from: Pid, to: Pid, msg: &M) {
        if msg.charge() == Charge::Receiver {
            if from == to {
                self.cur[to].1 += 1;
            } else {
                self.cur[to].0 += 1;
            }
        }
    }

    /// The sender's part of [`Tally::message`]: totals, kinds, and a sender-charged message
    /// towards the sender's request.
    #[inline]
    pub fn sent<M: Message>(&mut self, from: Pid, to: Pid, msg: &M) {
        let kind = msg.kind();
        let size = msg.size_ints() as u64;
        let slot = match msg.charge() {
            Charge::Receiver => None,
            Charge::Sender => Some(&mut self.cur[from]),
            Charge::SenderHeld => {
                if self.entered[from] || self.prev[from].is_none() {
                    Some(&mut self.cur[from])
                } else {
                    self.prev[from].as_mut()
                }
            }
            Charge::Of(p) => {
                if self.entered[p] || self.prev[p].is_none() {
                    Some(&mut self.cur[p])
                } else {
                    self.prev[p].as_mut()
                }
            }
        };
        if from == to {
            self.self_messages += 1;
            if let Some(c) = slot {
                c.1 += 1;
            }
            return;
        }
        if let Some(c) = slot {
            c.0 += 1;
        }
        self.messages += 1;
        self.ints += size;
        // A kind's name is one static string, so comparing addresses first spares the
        // byte comparison.
        match self
            .kinds
            .iter_mut()
            .find(|k| std::ptr::eq(k.0, kind) || k.0 == kind)
        {
            Some(k) => {
                k.1 += 1;
                k.2 += size;
            }
            None => self.kinds.push((kind, 1, size)),
        }
    }

    /// The same as [`Tally::message`] from `from` to every other of `n` processes.
    pub fn broadcast<M: Message>(&mut self, from: Pid, n: usize, msg: &M) {
        let others = n.saturating_sub(1) as u64;
        if others == 0 {
            return;
        }
        self.observe_size(msg, others);
        if let Some(d) = self.paths.as_mut() {
            for to in (0..n).filter(|&to| to != from) {
                d.message(from, to, msg);
            }
        }
        if let Some(r) = self.restarts.as_mut() {
            for to in (0..n).filter(|&to| to != from) {
                r.message(from, to, msg);
            }
        }
        let kind = msg.kind();
        let size = msg.size_ints() as u64;
        let slot = match msg.charge() {
            Charge::Receiver => {
                for (to, c) in self.cur.iter_mut().enumerate() {
                    if to != from {
                        c.0 += 1;
                    }
                }
                None
            }
            Charge::Sender => Some(&mut self.cur[from]),
            Charge::SenderHeld => {
                if self.entered[from] || self.prev[from].is_none() {
                    Some(&mut self.cur[from])
                } else {
                    self.prev[from].as_mut()
                }
            }
            Charge::Of(p) => {
                if self.entered[p] || self.prev[p].is_none() {
                    Some(&mut self.cur[p])
                } else {
                    self.prev[p].as_mut()
                }
            }
        };
        if let Some(c) = slot {
            c.0 += others;
        }
        self.messages += others;
        self.ints += size * others;
        match self
            .kinds
            .iter_mut()
            .find(|k| std::ptr::eq(k.0, kind) || k.0 == kind)
        {
            Some(k) => {
                k.1 += others;
                k.2 += size * others;
            }
            None => self.kinds.push((kind, others, size * others)),
        }
    }

    /// Process `p` starts a new request (or transition); its previous one stays open until
    /// this one enters.
    pub fn start_cycle(&mut self, p: Pid) {
        self.close_prev(p);
        if self.open[p] {
            self.prev[p] = Some(self.cur[p]);
        }
        self.cur[p] = (0, 0);
        self.open[p] = true;
        self.entered[p] = false;
        if let Some(d) = self.paths.as_mut() {
            d.start(p);
        }
    }

    /// Process `p`'s current request was served: its previous one closes.
    pub fn entered(&mut self, p: Pid) {
        self.entered[p] = true;
        self.close_prev(p);
        if let Some(d) = self.paths.as_mut() {
            d.completed(p);
        }
    }

    fn close_prev(&mut self, p: Pid) {
        if let Some(c) = self.prev[p].take() {
            self.record(c);
        }
    }

    fn record(&mut self, (net, own): (u64, u64)) {
        self.per_request_max = self.per_request_max.max(net);
        self.per_request_max_with_self = self.per_request_max_with_self.max(net + own);
        self.requests += 1;
    }

    /// Closes every open cycle (end of run).
    pub fn finish(&mut self) {
        for p in 0..self.cur.len() {
            self.close_prev(p);
            if self.open[p] {
                self.record(self.cur[p]);
            }
            self.cur[p] = (0, 0);
            self.open[p] = false;
        }
    }

    /// Adds another tally's counts (one per thread of a threaded run; cycles already closed).
    pub fn absorb(&mut self, o: &Tally) {
        for k in &o.kinds {
            match self.kinds.iter_mut().find(|x| x.0 == k.0) {
                Some(x) => {
                    x.1 += k.1;
                    x.2 += k.2;
                }
                None => self.kinds.push(*k),
            }
        }
        self.messages += o.messages;
        self.self_messages += o.self_messages;
        self.ints += o.ints;
        self.per_request_max = self.per_request_max.max(o.per_request_max);
        self.per_request_max_with_self = self
            .per_request_max_with_self
            .max(o.per_request_max_with_self);
        self.requests += o.requests;
        self.wait_sum += o.wait_sum;
        self.wait_max = self.wait_max.max(o.wait_max);
        self.wait_count += o.wait_count;
        for (a, b) in [
            (&mut self.wait_hops, o.wait_hops),
            (&mut self.sync_hops, o.sync_hops),
        ] {
            a.0 += b.0;
            a.1 = a.1.max(b.1);
            a.2 += b.2;
        }
        self.path_wait.absorb(&o.path_wait);
        self.path_sync.absorb(&o.path_sync);
        for (a, b) in self.per_proc_wait.iter_mut().zip(&o.per_proc_wait) {
            a.0 += b.0;
            a.1 += b.1;
        }
        for (a, b) in self.per_proc_wait_max.iter_mut().zip(&o.per_proc_wait_max) {
            *a = a.max(*b);
        }
    }

    /// Records a waiting time of process `p`.
    pub fn wait(&mut self, p: Pid, w: f64) {
        self.wait_sum += w;
        self.wait_max = self.wait_max.max(w);
        self.wait_count += 1;
        self.per_proc_wait[p].0 += w;
        self.per_proc_wait[p].1 += 1;
        self.per_proc_wait_max[p] = self.per_proc_wait_max[p].max(w);
    }

    /// Per process: transitions (requests) waited for, mean and longest wait.
    pub fn waits_by_process(&self) -> Vec<ProcessWait> {
        self.per_proc_wait
            .iter()
            .zip(&self.per_proc_wait_max)
            .enumerate()
            .map(|(p, (&(sum, count), &max))| ProcessWait {
                process: p,
                waits: count,
                mean: sum / count.max(1) as f64,
                max,
            })
            .collect()
    }

    /// Records the causal hops of a waiting time: the longest chain of messages from the
    /// request to the entry (or, seed 004, from asking to leave to leaving).
    pub fn wait_hops(&mut self, h: u64) {
        add_hops(&mut self.wait_hops, h);
    }

    /// Records the causal hops of a synchronization delay: the longest chain of messages from
    /// the exit that left the system empty to the next entry (0 when that entry does not
    /// depend on the exit).
    pub fn sync_hops(&mut self, h: u64) {
        add_hops(&mut self.sync_hops, h);
    }

    /// Records the path an entry waited for: `hops` messages from the entering process's
    /// request (`from_request`), or from another event; `describe` gives the path.
    pub fn path_wait(&mut self, hops: u64, from_request: bool, describe: impl Fn() -> String) {
        self.path_wait.add(hops, from_request, describe);
    }

    /// Records that an entry's path began at another process's exit (it waited for that
    /// process's critical section to end); `describe` gives the path.
    pub fn path_after_exit(&mut self, describe: impl Fn() -> String) {
        let p = &mut self.path_wait;
        p.after_exit += 1;
        if p.first_after_exit.is_none() {
            p.first_after_exit = Some(describe());
        }
    }

    /// Records the path an entry after an exit that emptied the system waited for: `hops`
    /// of its messages sent at that exit or later; `from_exit`: whether it began there (else
    /// it is also counted as begun elsewhere).
    pub fn path_sync(&mut self, hops: u64, from_exit: bool, describe: impl Fn() -> String) {
        if !from_exit {
            self.path_sync.elsewhere += 1;
        }
        self.path_sync.add(hops, true, describe);
    }

    /// Records a synchronization delay.
    pub fn sync(&mut self, d: f64) {
        self.sync_sum += d;
        self.sync_max = self.sync_max.max(d);
        self.sync_count += 1;
    }

    /// Jain's index of the per-process mean waiting times (1: everyone waits alike).
    pub fn wait_fairness(&self) -> f64 {
        let means: Vec<f64> = self
            .per_proc_wait
            .iter()
            .filter(|w| w.1 > 0)
            .map(|w| w.0 / w.1 as f64)
            .collect();
        if means.iter().all(|&m| m == 0.0) {
            return 1.0;
        }
        Fairness::of(&means).jain
    }
}

/// Hops on the paths entries waited for (seed 003 §2.2.1, as its Theorems 10 and 11 count
/// them): the messages, one after the other, from an event to the entry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PathHops {
    /// Over the paths that begin at the event measured from: sum, most, count.
    pub sum: u64,
    /// Most hops.
    pub max: u64,
    /// Paths counted.
    pub count: u64,
    /// Entries whose path began at another event (they also waited for that event).
    pub elsewhere: u64,
    /// The first path with `max` hops, described.
    pub longest: Option<String>,
    /// The first entry whose path began elsewhere, described.
    pub first_elsewhere: Option<String>,
    /// Entries whose path began at another process's exit (counted among `elsewhere`).
    pub after_exit: u64,
    /// The first of those, described.
    pub first_after_exit: Option<String>,
}

impl PathHops {
    fn add(&mut self, hops: u64, from_start: bool, describe: impl Fn() -> String) {
        if !from_start {
            self.elsewhere += 1;
            if self.first_elsewhere.is_none() {
                self.first_elsewhere = Some(describe());
            }
            return;
        }
        if self.count == 0 || hops > self.max {
            self.longest = Some(describe());
        }
        self.sum += hops;
        self.max = self.max.max(hops);
        self.count += 1;
    }

    fn absorb(&mut self, o: &PathHops) {
        self.sum += o.sum;
        self.max = self.max.max(o.max);
        self.count += o.count;
        self.elsewhere += o.elsewhere;
        if self.longest.is_none() {
            self.longest.clone_from(&o.longest);
        }
        if self.first_elsewhere.is_none() {
            self.first_elsewhere.clone_from(&o.first_elsewhere);
        }
        self.after_exit += o.after_exit;
        if self.first_after_exit.is_none() {
            self.first_after_exit.clone_from(&o.first_after_exit);
        }
    }
}

fn add_hops(acc: &mut (u64, u64, u64), h: u64) {
    acc.0 += h;
    acc.1 = acc.1.max(h);
    acc.2 += 1;
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_counted_outside_strings() {
        assert_eq!(
            numbers_in(br#"{"Token":{"a1":[3,-4,5.5e2],"b":true,"c":null,"d":"7"}}"#),
            (3, 3)
        );
        assert_eq!(numbers_in(br#"{"Request":[12,0]}"#), (2, 12));
        assert_eq!(numbers_in(br#"{"s":"x\"9"}"#), (0, 0));
        assert_eq!(numbers_in(b"[18446744073709551615]"), (1, u64::MAX));
    }
    use crate::mp::algo::ra1::Ra1Msg;

    #[test]
    fn a_broadcast_counts_as_its_messages() {
        use crate::mp::algo::token_gme::TgMsg;
        // Sender-, receiver- and held-charged kinds, with a previous request open.
        let msgs = [TgMsg::Request(1, 0), TgMsg::Release(3)];
        let (mut one, mut all) = (Tally::new(4), Tally::new(4));
        for t in [&mut one, &mut all] {
            t.start_cycle(2);
            t.start_cycle(2);
            t.message(0, 1, &Ra1Msg::Reply);
        }
        for m in &msgs {
            for to in [0, 1, 3] {
                one.message(2, to, m);
                one.message(2, to, &Ra1Msg::Reply);
            }
            all.broadcast(2, 4, m);
            all.broadcast(2, 4, &Ra1Msg::Reply);
        }
        one.finish();
        all.finish();
        assert_eq!(format!("{one:?}"), format!("{all:?}"));
        assert_eq!(all.messages, 13);
    }

    #[test]
    fn cycles_charge_sender_and_receiver() {
        let mut t = Tally::new(3);
        t.start_cycle(0);
        t.message(0, 1, &Ra1Msg::Request(1, 0));
        t.message(0, 2, &Ra1Msg::Request(1, 0));
        t.message(1, 0, &Ra1Msg::Reply);
        t.message(2, 0, &Ra1Msg::Reply);
        t.message(0, 0, &Ra1Msg::Reply);
        t.finish();
        assert_eq!(t.requests, 1);
        assert_eq!(t.per_request_max, 4);
        assert_eq!(t.per_request_max_with_self, 5);
        assert_eq!(t.messages, 4);
        assert_eq!(t.self_messages, 1);
        assert_eq!(t.ints, 4);
    }
}
