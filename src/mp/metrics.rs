//! What a message-passing run measures (seed 003 §2.2.1): messages per request by kind and
//! their size in integers, waiting time, synchronization delay, throughput and concurrency;
//! and what its checks found. One [`Tally`] per runtime run, summarised into one [`MpResult`].
//!
//! Here the per-run counts (messages, requests, waits); the hops on the paths entries waited
//! for and on the longest causal chains in `path_hops.rs`; the integers a message carries in
//! `ints.rs`; the result and its JSON fields in `result.rs`.

mod ints;
mod path_hops;
mod result;

use super::paths::PathTally;
pub use super::restarts::Recovery;
use super::restarts::RestartTally;
use super::{Charge, Message, Observation, Pid};
use crate::metrics::fairness::Fairness;
use ints::IntCount;
pub use path_hops::PathHops;
pub use result::{MpResult, ProcessWait};

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
    /// Integers in the messages between distinct processes as they would be serialized (the
    /// simulator, n ≤ 64; what travels, not what the message says its size is): sum, messages.
    pub observed_ints: (u64, u64),
    /// The largest non-negative integer those messages carried.
    pub observed_int_max: u64,
    /// Whether the simulator counts `observed_ints` (n ≤ 64).
    sizes_on: bool,
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

    /// Counts the integers of `copies` copies of `msg` as they would be serialized (n ≤ 64).
    fn observe_size<M: Message>(&mut self, msg: &M, copies: u64) {
        if !self.sizes_on {
            return;
        }
        let c = IntCount::of(msg);
        self.observed_ints.0 += copies * c.ints;
        self.observed_ints.1 += copies;
        self.observed_int_max = self.observed_int_max.max(c.largest);
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

#[cfg(test)]
mod tests {
    use super::*;

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
