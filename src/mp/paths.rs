//! Messages per transition by path and by kind, against seed 004's Lemma 6 (Kamei & Kakugawa,
//! §5.4): without preemption a transition (an entry or an exit) costs 3(|N_i| + 1) messages,
//! with preemption 6(|N_i| + 1), self-messages included.
//!
//! Each message is charged to the one transition it serves, as the lemma's proof counts them:
//! a Request and a Release to the sender's, a Grant to the receiver's, and a Preempt, the
//! Relinquish it returns and the grant given again after it to the transition that caused the
//! preemption ([`Charge::Of`]). A transition's [`Path`] is the highest of its messages'
//! ([`Message::path`]) and of what its process observed ([`Observation::Path`]), so a transition
//! whose grant was taken back is on the preemption path even though the lemma charges the
//! messages to its preemptor.
//!
//! The simulator fills a [`PathTally`] beside its [`Tally`](super::metrics::Tally) for the local
//! critical-section algorithms; [`PathTally::summary`] gives the [`Lemma6`] of a run, the figures
//! the ledger of paper claims reads (`MpResult::lemma6`, field names in docs/message-passing.md).
//!
//! [`Charge::Of`]: super::Charge::Of
//! [`Observation::Path`]: super::Observation::Path

use serde::Serialize;

use super::{Charge, Message, Observation, Path, Pid};

/// One open transition.
#[derive(Clone, Debug, Default)]
struct Cycle {
    /// Messages per kind (index into [`PathTally::names`]), self-messages included.
    kinds: Vec<u32>,
    path: Option<Path>,
    /// Time spent waiting on the configuration, and since when it waits now.
    blocked: f64,
    blocked_since: Option<f64>,
    /// Which of its process's transitions (0: the first it asked for).
    index: u64,
}

impl Cycle {
    fn total(&self) -> u64 {
        self.kinds.iter().map(|&k| u64::from(k)).sum()
    }
    fn mark(&mut self, p: Path) {
        self.path = Some(self.path.map_or(p, |q| q.max(p)));
    }
}

/// Aggregates of the transitions of one path.
#[derive(Clone, Debug, Default)]
struct PathAgg {
    transitions: u64,
    sum: u64,
    max: u64,
    bound_sum: u64,
    bound_max: u64,
    over: u64,
    /// The costliest: its process and index.
    worst: Option<(Pid, u64)>,
    /// Per kind: total and largest in one transition.
    kinds: Vec<(u64, u64)>,
}

/// Per-transition counts by path and kind, and the time transitions wait on the
/// configuration. Mirrors the cycles of [`Tally`](super::metrics::Tally): a transition opens
/// when its process asks to enter or to leave and closes when the next one completes (so a
/// grant given again after its Release still reaches it).
#[derive(Clone, Debug)]
pub struct PathTally {
    /// |N_i| + 1 per process.
    closed: Vec<usize>,
    names: Vec<&'static str>,
    cur: Vec<Cycle>,
    prev: Vec<Option<Cycle>>,
    open: Vec<bool>,
    entered: Vec<bool>,
    /// Transitions each process has asked for.
    asked: Vec<u64>,
    aggs: [PathAgg; 3],
    blocked_sum: f64,
    blocked_max: f64,
    blocked_transitions: u64,
}

impl PathTally {
    /// For processes whose closed neighbourhoods have these sizes (|N_i| + 1).
    pub fn new(closed: Vec<usize>) -> Self {
        let n = closed.len();
        PathTally {
            closed,
            names: Vec::new(),
            cur: vec![Cycle::default(); n],
            prev: vec![None; n],
            open: vec![false; n],
            entered: vec![false; n],
            asked: vec![0; n],
            aggs: Default::default(),
            blocked_sum: 0.0,
            blocked_max: 0.0,
            blocked_transitions: 0,
        }
    }

    fn kind_index(&mut self, kind: &'static str) -> usize {
        match self.names.iter().position(|k| *k == kind) {
            Some(i) => i,
            None => {
                self.names.push(kind);
                self.names.len() - 1
            }
        }
    }

    /// The transition of `p` a message charged to it "as held" counts towards: the previous
    /// one while `p` waits in a new one, else the current one.
    fn held(&mut self, p: Pid) -> &mut Cycle {
        if !self.entered[p] {
            if let Some(c) = self.prev[p].as_mut() {
                return c;
            }
        }
        &mut self.cur[p]
    }

    /// Counts one message from `from` to `to` (self-messages included).
    pub fn message<M: Message>(&mut self, from: Pid, to: Pid, msg: &M) {
        let i = self.kind_index(msg.kind());
        let path = msg.path();
        let c = match msg.charge() {
            Charge::Sender => &mut self.cur[from],
            Charge::Receiver => &mut self.cur[to],
            Charge::SenderHeld => self.held(from),
            Charge::Of(p) => self.held(p),
        };
        if c.kinds.len() <= i {
            c.kinds.resize(i + 1, 0);
        }
        c.kinds[i] += 1;
        c.mark(path);
    }

    /// An observation of process `p` at time `now`.
    pub fn observe(&mut self, p: Pid, now: f64, obs: Observation) {
        let c = &mut self.cur[p];
        match obs {
            Observation::Path(path) => c.mark(path),
            Observation::Blocked(true) => {
                c.blocked_since.get_or_insert(now);
            }
            Observation::Blocked(false) => {
                if let Some(s) = c.blocked_since.take() {
                    c.blocked += now - s;
                }
            }
            _ => {}
        }
    }

    /// `p` asks to enter or to leave: a new transition.
    pub fn start(&mut self, p: Pid) {
        self.close_prev(p);
        if self.open[p] {
            self.prev[p] = Some(std::mem::take(&mut self.cur[p]));
        }
        self.cur[p] = Cycle {
            index: self.asked[p],
            ..Cycle::default()
        };
        self.asked[p] += 1;
        self.open[p] = true;
        self.entered[p] = false;
    }

    /// `p`'s current transition completed.
    pub fn completed(&mut self, p: Pid) {
        self.entered[p] = true;
        self.close_prev(p);
    }

    fn close_prev(&mut self, p: Pid) {
        if let Some(c) = self.prev[p].take() {
            self.record(p, c);
        }
    }

    fn record(&mut self, p: Pid, c: Cycle) {
        let total = c.total();
        if total == 0 && c.path.is_none() {
            return;
        }
        let path = c.path.unwrap_or(Path::NoPreemption);
        let bound = bound(path, self.closed[p]).unwrap_or(0);
        let a = &mut self.aggs[path as usize];
        a.transitions += 1;
        a.sum += total;
        if a.worst.is_none() || total > a.max {
            a.worst = Some((p, c.index));
        }
        a.max = a.max.max(total);
        a.bound_sum += bound;
        a.bound_max = a.bound_max.max(bound);
        if bound > 0 && total > bound {
            a.over += 1;
        }
        if a.kinds.len() < c.kinds.len() {
            a.kinds.resize(c.kinds.len(), (0, 0));
        }
        for (k, &m) in a.kinds.iter_mut().zip(&c.kinds) {
            k.0 += u64::from(m);
            k.1 = k.1.max(u64::from(m));
        }
        if c.blocked > 0.0 {
            self.blocked_sum += c.blocked;
            self.blocked_max = self.blocked_max.max(c.blocked);
            self.blocked_transitions += 1;
        }
    }

    /// Closes every open transition (end of run); one still waiting at the end (in a run
    /// stopped by the watchdog) counts with what it cost so far.
    pub fn finish(&mut self, now: f64) {
        for p in 0..self.cur.len() {
            self.close_prev(p);
            if self.open[p] {
                let mut c = std::mem::take(&mut self.cur[p]);
                if let Some(s) = c.blocked_since.take() {
                    c.blocked += now - s;
                }
                self.record(p, c);
            }
            self.open[p] = false;
        }
    }

    /// The run's figures by path.
    pub fn summary(&self) -> Lemma6 {
        let paths = [Path::NoPreemption, Path::Preemption, Path::Machinery]
            .into_iter()
            .map(|path| {
                let a = &self.aggs[path as usize];
                let t = a.transitions.max(1) as f64;
                let bounded = bound(path, 1).is_some();
                let mut by_kind: Vec<PathKind> = a
                    .kinds
                    .iter()
                    .zip(&self.names)
                    .filter(|(k, _)| k.0 > 0)
                    .map(|(k, name)| PathKind {
                        kind: name.to_string(),
                        messages: k.0,
                        per_transition: k.0 as f64 / t,
                        max: k.1,
                    })
                    .collect();
                by_kind.sort_by(|x, y| x.kind.cmp(&y.kind));
                PathFigure {
                    path: path_name(path).into(),
                    bound: bound_formula(path).map(String::from),
                    transitions: a.transitions,
                    messages_max: a.max,
                    messages_mean: a.sum as f64 / t,
                    bound_max: bounded.then_some(a.bound_max),
                    bound_mean: bounded.then(|| a.bound_sum as f64 / t),
                    over_bound: bounded.then_some(a.over),
                    worst_process: a.worst.map(|w| w.0),
                    worst_transition: a.worst.map(|w| w.1),
                    by_kind,
                }
            })
            .collect();
        let b = self.blocked_transitions.max(1) as f64;
        Lemma6 {
            paths,
            blocked_transitions: self.blocked_transitions,
            blocked_wait_mean: self.blocked_sum / b,
            blocked_wait_max: self.blocked_max,
        }
    }
}

/// Lemma 6's bound for a transition of a process with `closed` = |N_i| + 1.
pub fn bound(path: Path, closed: usize) -> Option<u64> {
    match path {
        Path::NoPreemption => Some(3 * closed as u64),
        Path::Preemption => Some(6 * closed as u64),
        Path::Machinery => None,
    }
}

fn bound_formula(path: Path) -> Option<&'static str> {
    match path {
        Path::NoPreemption => Some("3(|N_i|+1)"),
        Path::Preemption => Some("6(|N_i|+1)"),
        Path::Machinery => None,
    }
}

/// The name of a path in JSON and tables.
pub fn path_name(path: Path) -> &'static str {
    match path {
        Path::NoPreemption => "no_preemption",
        Path::Preemption => "preemption",
        Path::Machinery => "machinery",
    }
}

/// Messages per transition by path (seed 004's Lemma 6), self-messages included. Field names
/// are a contract (docs/message-passing.md): add, don't rename.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Lemma6 {
    /// One figure per path, always in the order no_preemption, preemption, machinery.
    pub paths: Vec<PathFigure>,
    /// Transitions that waited on the configuration (a wait only a neighbour's move ends:
    /// parked under LK-15), and how long, in the run's time unit (mean over those, and max).
    pub blocked_transitions: u64,
    /// Mean time such a transition waited on the configuration.
    pub blocked_wait_mean: f64,
    /// Longest time one transition waited on the configuration.
    pub blocked_wait_max: f64,
}

/// The transitions of one path.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct PathFigure {
    /// `no_preemption`, `preemption` or `machinery`.
    pub path: String,
    /// The lemma's bound as a formula (null for machinery: the lemma does not speak of it).
    pub bound: Option<String>,
    /// Transitions that took this path.
    pub transitions: u64,
    /// Most messages one of them cost.
    pub messages_max: u64,
    /// Mean messages per transition.
    pub messages_mean: f64,
    /// The largest of their processes' bounds (the bound at that process's |N_i|).
    pub bound_max: Option<u64>,
    /// The mean of their processes' bounds.
    pub bound_mean: Option<f64>,
    /// Transitions that cost more than their own process's bound.
    pub over_bound: Option<u64>,
    /// The process of the costliest transition (the first of them if several tie), to find
    /// it in `sim --trace`.
    pub worst_process: Option<Pid>,
    /// Which of that process's transitions it is, counted from 0 in the order the process
    /// asked to enter or leave (a process that starts inside asks to leave first).
    pub worst_transition: Option<u64>,
    /// Per kind, over this path's transitions.
    pub by_kind: Vec<PathKind>,
}

/// One kind of message over the transitions of one path.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct PathKind {
    /// The kind (`REQUEST`, `GRANT`, ...).
    pub kind: String,
    /// Messages of this kind charged to these transitions.
    pub messages: u64,
    /// Mean per transition.
    pub per_transition: f64,
    /// Most in one transition.
    pub max: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mp::algo::ra1::Ra1Msg;

    #[test]
    fn a_plain_transition_counts_against_three_times_its_neighbourhood() {
        let mut t = PathTally::new(vec![2, 2]);
        t.start(0);
        t.message(0, 0, &Ra1Msg::Request(1, 0));
        t.message(0, 1, &Ra1Msg::Request(1, 0));
        t.message(1, 0, &Ra1Msg::Reply);
        t.observe(0, 1.0, Observation::Blocked(true));
        t.observe(0, 3.5, Observation::Blocked(false));
        t.completed(0);
        t.start(1);
        t.observe(1, 4.0, Observation::Path(Path::Machinery));
        t.finish(5.0);
        let s = t.summary();
        assert_eq!(s.paths[0].transitions, 1);
        assert_eq!(s.paths[0].messages_max, 3);
        assert_eq!(s.paths[0].bound_max, Some(6));
        assert_eq!(s.paths[0].over_bound, Some(0));
        assert_eq!(s.paths[2].transitions, 1);
        assert_eq!(s.paths[2].bound_max, None);
        assert_eq!(s.blocked_transitions, 1);
        assert!((s.blocked_wait_max - 2.5).abs() < 1e-12);
    }
}
