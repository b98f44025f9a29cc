//! Seed 003 §5.3.4 counted per restart operation: "Each restart operation exchanges at most
//! 5(n − 1) messages: n − 1 NOTIFY, n − 1 RESTART, n − 1 DONE, n − 1 START and n − 1 RESUME".
//!
//! Every recovery message names its operation already: RESTART, DONE, START, LEAVE and RESUME
//! carry the instance id k (FT-1), and a NOTIFY carries the failed set, whose size is the id of
//! the restart it asks for. Nothing is added to a message to count it
//! ([`crate::mp::Message::restart_op`]). An operation is (k, coordinator): a NOTIFY and a DONE
//! belong to their receiver's operation, a RESTART, a START and a RESUME to their sender's, a
//! LEAVE to the latest operation begun with its id. The coordinator reports when it began an
//! operation (sent RESTART) and ended it (sent RESUME) ([`Observation::RestartBegun`],
//! [`Observation::RestartEnded`]).
//!
//! The bound is checked per operation *begun*, aborted or not: §5.3.2 says a failure during a
//! restart makes a new coordinator "initiate a new restart operation", and §5.3.4 bounds the
//! run by 5(n − 1) per failure, one operation each, whether it completed or not. NOTIFYs for a
//! set no coordinator restarted on (a later crash came first) are an operation "not started",
//! checked too. LEAVE is counted beside the five: the paper charges it to the old requests
//! (at most n − 1 each), not to the restart.

use serde::Serialize;

mod observed;

pub use observed::ObservedRecovery;

use super::{Message, Observation, Pid};
use crate::table::{Align, Table};

/// The messages of a restart operation (seed 003 §5.3.4): at most n − 1 of each.
pub const RECOVERY_KINDS: [&str; 5] = ["NOTIFY", "RESTART", "DONE", "START", "RESUME"];

/// Where an operation counts LEAVE (charged to old requests), after the paper's five.
const LEAVE: usize = RECOVERY_KINDS.len();

/// Recovery messages by kind: those of one restart operation, or those the simulator charged
/// to one crash (seed 003 §5.3.4).
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct KindCounts {
    /// NOTIFY messages.
    pub notify: u64,
    /// RESTART messages.
    pub restart: u64,
    /// DONE messages.
    pub done: u64,
    /// START messages.
    pub start: u64,
    /// RESUME messages.
    pub resume: u64,
    /// LEAVE messages of old requests (charged to them by the paper, not counted in `total`).
    pub leave: u64,
    /// The five kinds together.
    pub total: u64,
}

impl KindCounts {
    /// Counts indexed as [`RECOVERY_KINDS`], LEAVE last.
    fn of(c: &[u64; LEAVE + 1]) -> Self {
        KindCounts {
            notify: c[0],
            restart: c[1],
            done: c[2],
            start: c[3],
            resume: c[4],
            leave: c[LEAVE],
            total: c[..LEAVE].iter().sum(),
        }
    }

    /// `NOTIFY a, RESTART b, DONE c, START d, RESUME e`.
    fn five(&self) -> String {
        format!(
            "NOTIFY {}, RESTART {}, DONE {}, START {}, RESUME {}",
            self.notify, self.restart, self.done, self.start, self.resume
        )
    }
}

/// One operation as counted so far.
#[derive(Clone, Debug)]
struct Op {
    id: u64,
    coordinator: Pid,
    begun: Option<f64>,
    ended: Option<f64>,
    counts: [u64; LEAVE + 1],
}

/// Recovery messages per restart operation, as a run sends them.
#[derive(Clone, Debug, Default)]
pub struct RestartTally {
    ops: Vec<Op>,
}

impl RestartTally {
    /// Counts one message from `from` to `to` against its operation (recovery kinds only).
    pub fn message<M: Message>(&mut self, from: Pid, to: Pid, msg: &M) {
        if from == to {
            return;
        }
        let Some(k) = msg.restart_op() else {
            return;
        };
        let kind = msg.kind();
        let i = match RECOVERY_KINDS.iter().position(|&c| c == kind) {
            Some(i) => i,
            None if kind == "LEAVE" => LEAVE,
            None => return,
        };
        let op = match i {
            0 | 2 => self.op(k, to),
            LEAVE => match self.latest_begun(k) {
                Some(j) => &mut self.ops[j],
                None => self.op(k, to),
            },
            _ => self.op(k, from),
        };
        op.counts[i] += 1;
    }

    /// A coordinator's report: process `p` began or ended an operation at `now`.
    pub fn observe(&mut self, p: Pid, now: f64, obs: Observation) {
        match obs {
            Observation::RestartBegun(k) => {
                self.op(k, p).begun.get_or_insert(now);
            }
            Observation::RestartEnded(k) => {
                self.op(k, p).ended.get_or_insert(now);
            }
            _ => {}
        }
    }

    fn op(&mut self, id: u64, coordinator: Pid) -> &mut Op {
        let i = match self
            .ops
            .iter()
            .position(|o| o.id == id && o.coordinator == coordinator)
        {
            Some(i) => i,
            None => {
                self.ops.push(Op {
                    id,
                    coordinator,
                    begun: None,
                    ended: None,
                    counts: [0; LEAVE + 1],
                });
                self.ops.len() - 1
            }
        };
        &mut self.ops[i]
    }

    fn latest_begun(&self, id: u64) -> Option<usize> {
        self.ops
            .iter()
            .enumerate()
            .filter(|(_, o)| o.id == id)
            .filter_map(|(j, o)| o.begun.map(|b| (j, b)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(j, _)| j)
    }

    /// The operations of a run of `n` processes, in the order they began (those never
    /// begun last), each against 5(n − 1) and n − 1 of each kind.
    pub fn operations(&self, n: usize) -> Vec<RestartOp> {
        let each = n.saturating_sub(1) as u64;
        let mut ops: Vec<RestartOp> = self
            .ops
            .iter()
            .map(|o| {
                let five = &o.counts[..LEAVE];
                let kinds = KindCounts::of(&o.counts);
                let status = match (o.begun, o.ended) {
                    (None, _) => "not started",
                    (Some(_), Some(_)) => "completed",
                    (Some(_), None) => {
                        if self.ops.iter().any(|x| x.id > o.id && x.begun.is_some()) {
                            "aborted"
                        } else {
                            "unfinished"
                        }
                    }
                };
                RestartOp {
                    id: o.id,
                    coordinator: o.coordinator,
                    status,
                    begun: o.begun,
                    ended: o.ended,
                    kinds,
                    within: kinds.total <= 5 * each && five.iter().all(|&c| c <= each),
                }
            })
            .collect();
        ops.sort_by(|a, b| {
            (a.begun.is_none(), a.begun.unwrap_or(0.0), a.id)
                .partial_cmp(&(b.begun.is_none(), b.begun.unwrap_or(0.0), b.id))
                .expect("finite times")
        });
        ops
    }
}

/// One restart operation of a run (seed 003 §5.3.2) and its messages (§5.3.4).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct RestartOp {
    /// The instance it starts (FT-1: the number of failed processes in its set).
    pub id: u64,
    /// Its coordinator.
    pub coordinator: Pid,
    /// `completed` (RESUME sent), `aborted` (a newer operation began first), `unfinished`
    /// (the run ended first) or `not started` (NOTIFYs only: a later crash came first).
    pub status: &'static str,
    /// When the coordinator sent RESTART.
    pub begun: Option<f64>,
    /// When it sent RESUME.
    pub ended: Option<f64>,
    /// Its messages by kind (LEAVE: of its old requests).
    #[serde(flatten)]
    pub kinds: KindCounts,
    /// `total` ≤ 5(n − 1) and each of the five kinds ≤ n − 1.
    pub within: bool,
}

/// The recovery a run with crashes measured (seed 003 §5.3.4).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Recovery {
    /// Processes that crashed during the run.
    pub crashes: u64,
    /// Messages of the restart operations (NOTIFY, RESTART, DONE, START, RESUME).
    pub recovery_messages: u64,
    /// 5(n − 1) per crash: the whole run's recovery messages pooled (the per-operation check
    /// below is the paper's statement).
    pub recovery_bound: u64,
    /// LEAVE messages of old requests fulfilled during restarts (charged by the paper to
    /// those requests: at most n − 1 each, not to the restart).
    pub leave_messages: u64,
    /// Per restart operation, in the order they began.
    pub operations: Vec<RestartOp>,
    /// The most messages of the five kinds one operation sent.
    pub operation_messages_max: u64,
    /// The paper's bound per operation: 5(n − 1), n − 1 of each kind.
    pub operation_bound: u64,
    /// Operations over their bound.
    pub operations_over_bound: u64,
    /// Requests generated in the run (the paper's r_total).
    pub requests: u64,
    /// Messages between distinct processes in the run, every kind.
    pub run_messages: u64,
    /// The paper's bound on them: (2n − 1) r_total + 5(n − 1) f.
    pub run_bound: u64,
    /// The same five kinds charged to the crashes the simulator injected, from its own
    /// events (None where it does not follow causality, n > 64); the per-operation figures
    /// above rest on the messages' instance ids and the coordinator's reports.
    pub observed: Option<ObservedRecovery>,
}

impl Recovery {
    /// The figures of a run of `n` processes with `crashes` crashes, `requests` requests and
    /// `messages` messages, whose recovery messages `t` counted per operation.
    pub fn of(t: &RestartTally, n: usize, crashes: u64, requests: u64, messages: u64) -> Self {
        let each = n.saturating_sub(1) as u64;
        let operations = t.operations(n);
        let sum = |f: fn(&RestartOp) -> u64| operations.iter().map(f).sum::<u64>();
        Recovery {
            crashes,
            recovery_messages: sum(|o| o.kinds.total),
            recovery_bound: 5 * each * crashes,
            leave_messages: sum(|o| o.kinds.leave),
            operation_messages_max: operations.iter().map(|o| o.kinds.total).max().unwrap_or(0),
            operation_bound: 5 * each,
            operations_over_bound: operations.iter().filter(|o| !o.within).count() as u64,
            requests,
            run_messages: messages,
            run_bound: (2 * n as u64 - 1) * requests + 5 * each * crashes,
            operations,
            observed: None,
        }
    }

    /// What broke a bound, one line each: the pooled bound, each operation's, the run's.
    pub fn failures(&self) -> Vec<String> {
        let each = self.operation_bound / 5;
        let pooled = (self.recovery_messages > self.recovery_bound).then(|| {
            format!(
                "{} recovery messages for {} crashes > 5(n-1) each = {} (seed 003 §5.3.4)",
                self.recovery_messages, self.crashes, self.recovery_bound
            )
        });
        let mut out: Vec<String> = pooled.into_iter().collect();
        out.extend(self
            .operations
            .iter()
            .filter(|o| !o.within)
            .map(|o| {
                format!(
                    "restart operation {} (coordinator p{}, {}): {} messages ({}) > 5(n-1) = {} or n-1 = {each} of a kind (seed 003 §5.3.4)",
                    o.id, o.coordinator, o.status, o.kinds.total, o.kinds.five(), self.operation_bound
                )
            }));
        if let Some(o) = &self.observed {
            out.extend(o.failures(each as usize + 1));
        }
        if self.run_messages > self.run_bound {
            out.push(format!(
                "{} messages > (2n-1)r + 5(n-1)f = {} with r = {} requests, f = {} crashes (seed 003 §5.3.4)",
                self.run_messages, self.run_bound, self.requests, self.crashes
            ));
        }
        out
    }

    /// The operations as a table under a line of totals, and the whole-run bound.
    pub fn render(&self, algo: &str, seed: u64) -> String {
        let each = self.operation_bound / 5;
        let mut out = format!(
            "{algo} seed {seed}: {} crashes, restart operations begun: {}; each one's NOTIFY, RESTART, DONE, START, RESUME against 5(n-1) = {} (n-1 = {each} of a kind), LEAVE (old requests') apart\n",
            self.crashes,
            self.operations.iter().filter(|o| o.begun.is_some()).count(),
            self.operation_bound
        );
        let time = |t: Option<f64>| t.map_or("-".to_string(), |t| format!("{t:.1}"));
        let mut t = Table::new(|i| {
            if i == 1 || i == 11 {
                Align::Left
            } else {
                Align::Right
            }
        });
        t.row([
            "op", "coord", "begun", "ended", "NOTIFY", "RESTART", "DONE", "START", "RESUME",
            "total", "LEAVE", "status", "bound",
        ])
        .rule();
        for o in &self.operations {
            t.row([
                o.id.to_string(),
                format!("p{}", o.coordinator),
                time(o.begun),
                time(o.ended),
                o.kinds.notify.to_string(),
                o.kinds.restart.to_string(),
                o.kinds.done.to_string(),
                o.kinds.start.to_string(),
                o.kinds.resume.to_string(),
                o.kinds.total.to_string(),
                o.kinds.leave.to_string(),
                o.status.to_string(),
                if o.within { "ok" } else { "OVER" }.to_string(),
            ]);
        }
        out.push_str(&t.render());
        if let Some(o) = &self.observed {
            for c in &o.crashes {
                out.push_str(&format!(
                    "the crash of p{} at {:.1}, observed: {} messages caused ({}; LEAVE {}){}, {} entries after: {}\n",
                    c.process, c.at, c.kinds.total, c.kinds.five(), c.kinds.leave,
                    if c.nested { ", cut into by the next crash" } else { "" },
                    c.entries_after,
                    if c.within { "ok" } else { "OVER" }
                ));
            }
        }
        out.push_str(&format!(
            "whole run: {} messages, (2n-1)r + 5(n-1)f = {} (r = {}, f = {}): {}\n",
            self.run_messages,
            self.run_bound,
            self.requests,
            self.crashes,
            if self.run_messages <= self.run_bound {
                "ok"
            } else {
                "OVER"
            }
        ));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mp::algo::token_gme::TgMsg;

    /// One crash at n = 4: p3 down, p0 coordinates; p1, p2 notify, restart, answer, p2 has an
    /// old request, RESUME.
    fn one_restart(t: &mut RestartTally) {
        t.message(1, 0, &TgMsg::Notify(vec![3]));
        t.message(2, 0, &TgMsg::Notify(vec![3]));
        t.observe(0, 10.0, Observation::RestartBegun(1));
        for j in [1, 2] {
            t.message(0, j, &TgMsg::Restart(1, vec![3]));
            t.message(j, 0, &TgMsg::Done(1, (j == 2).then_some(0)));
        }
        t.message(0, 2, &TgMsg::Start(1, vec![vec![2]]));
        t.message(2, 0, &TgMsg::Leave(1, vec![vec![2]], 0));
        t.message(0, 1, &TgMsg::Resume(1));
        t.message(0, 2, &TgMsg::Resume(1));
        t.observe(0, 20.0, Observation::RestartEnded(1));
    }

    #[test]
    fn each_message_goes_to_its_operation() {
        let mut t = RestartTally::default();
        one_restart(&mut t);
        // Messages of the algorithm and self-messages are not counted.
        t.message(1, 2, &TgMsg::Request(1, 0));
        t.message(0, 0, &TgMsg::Resume(1));
        let ops = t.operations(4);
        assert_eq!(ops.len(), 1);
        let o = &ops[0];
        assert_eq!((o.id, o.coordinator, o.status), (1, 0, "completed"));
        assert_eq!((o.begun, o.ended), (Some(10.0), Some(20.0)));
        let k = &o.kinds;
        let counts = [k.notify, k.restart, k.done, k.start, k.resume, k.leave];
        assert_eq!(counts, [2, 2, 2, 1, 2, 1]);
        assert_eq!(o.kinds.total, 9);
        assert!(o.within);
    }

    #[test]
    fn an_operation_superseded_is_aborted_and_counted_on_its_own() {
        let mut t = RestartTally::default();
        t.message(1, 0, &TgMsg::Notify(vec![3]));
        t.message(2, 0, &TgMsg::Notify(vec![3]));
        t.observe(0, 10.0, Observation::RestartBegun(1));
        t.message(0, 1, &TgMsg::Restart(1, vec![3]));
        t.message(0, 2, &TgMsg::Restart(1, vec![3]));
        // p0 crashes; p2's NOTIFY of {0, 3} goes to p1, which begins operation 2 and ends it.
        t.message(2, 1, &TgMsg::Notify(vec![0, 3]));
        t.observe(1, 15.0, Observation::RestartBegun(2));
        t.message(1, 2, &TgMsg::Restart(2, vec![0, 3]));
        t.message(2, 1, &TgMsg::Done(2, None));
        t.message(1, 2, &TgMsg::Resume(2));
        t.observe(1, 18.0, Observation::RestartEnded(2));
        // A NOTIFY of another set of size 2, sent to p0 (down): an operation never begun.
        t.message(2, 0, &TgMsg::Notify(vec![1, 3]));
        let ops = t.operations(4);
        let st: Vec<_> = ops
            .iter()
            .map(|o| (o.id, o.coordinator, o.status, o.kinds.total))
            .collect();
        assert_eq!(
            st,
            [
                (1, 0, "aborted", 4),
                (2, 1, "completed", 4),
                (2, 0, "not started", 1)
            ]
        );
        assert!(ops.iter().all(|o| o.within));
    }

    #[test]
    fn a_kind_above_n_minus_one_or_a_total_above_five_n_minus_one_is_over() {
        // A RESTART sent twice to each of three processes at n = 4: 6 > n − 1 = 3, though
        // the operation's 12 messages are within 5(n − 1) = 15.
        let mut t = RestartTally::default();
        t.observe(0, 1.0, Observation::RestartBegun(1));
        for j in 1..4 {
            t.message(j, 0, &TgMsg::Notify(vec![4]));
            t.message(0, j, &TgMsg::Restart(1, vec![4]));
            t.message(0, j, &TgMsg::Restart(1, vec![4]));
            t.message(j, 0, &TgMsg::Done(1, None));
        }
        let o = &t.operations(4)[0];
        assert_eq!((o.kinds.restart, o.kinds.total), (6, 12));
        assert!(!o.within);
        let r = Recovery::of(&t, 4, 1, 10, 50);
        assert_eq!((r.operations_over_bound, r.operation_bound), (1, 15));
        // The pooled check of the whole run does not see it: 12 ≤ 5(n − 1) × 1.
        assert!(r.recovery_messages <= r.recovery_bound);
        let f = r.failures();
        assert_eq!(f.len(), 1);
        assert!(f[0].contains("restart operation 1"), "{f:?}");
        assert!(r.render("token-gme", 1).contains("OVER"));
    }

    #[test]
    fn the_whole_run_bound_is_2n_minus_1_per_request_and_5_n_minus_1_per_crash() {
        let mut t = RestartTally::default();
        one_restart(&mut t);
        let r = Recovery::of(&t, 4, 1, 10, 85);
        assert_eq!(r.run_bound, 7 * 10 + 15);
        assert_eq!((r.recovery_messages, r.leave_messages), (9, 1));
        assert_eq!(r.operation_messages_max, 9);
        assert!(r.failures().is_empty());
        let over = Recovery::of(&t, 4, 1, 10, 86);
        assert_eq!(over.failures().len(), 1);
        let text = r.render("token-gme", 3);
        assert!(text.contains("restart operations begun: 1"), "{text}");
        assert!(text.contains("whole run: 85 messages"), "{text}");
    }
}
