//! Causal hop counts of the simulator (up to [`HOPS_MAX_N`] processes): how many message
//! hops the longest causal chain from a request (or from the exit that emptied the system)
//! to its entry has. Each message carries its sender's depths; its receiver keeps the
//! deeper of its own and the message's, one hop further. And seed 003 §5.1's two-hop
//! property of multi-type requests, measured with those depths ([`TwoHop`]).
//!
//! Beside the longest chain, the path an entry waited for (seed 003 §2.2.1's waiting time and
//! synchronization delay in hops): each handler runs because of one event, a delivered message
//! or a local event (a request, an exit, a timer); each message sent in it is linked to that
//! event. Followed back from an entry, the links give the messages the entry waited for, one
//! after the other, down to the local event the path began at. A message that arrived before
//! the one that ran the handler (a RELEASE received before the REQUEST it answers) is on no
//! such path, though it lengthens the longest chain.

pub use crate::mp::two_hop::{MultiType, TwoHop};
use crate::mp::{Group, Pid};

/// Hops are tracked (O(n) per message) up to this many processes.
pub const HOPS_MAX_N: usize = 64;

/// Causal hop depths a message carries when hops are tracked: per process, (request epoch,
/// depth since that request), and last (sync epoch, depth since the exit that emptied the
/// system). Epoch 0: not causally after any.
pub(super) type HopDepths = Option<Box<[(u32, u32)]>>;

/// No link: a path that begins at a local event.
const NONE: u32 = u32::MAX;

/// One message on the paths followed back from entries: its sender, receiver and kind, when
/// it was sent, and what ran the handler that sent it.
#[derive(Debug)]
struct Link {
    /// The message whose delivery ran the sender's handler (NONE: a local event, `origin`).
    parent: u32,
    /// The local event the path begins at (an index of `Hops::origins`).
    origin: u32,
    /// Messages between distinct processes on the path, this one included.
    depth: u32,
    from: u32,
    to: u32,
    kind: &'static str,
    sent: f64,
    /// The latest injected crash in its sender's causal past (an index of `Hops::crashes`
    /// plus one; 0: none).
    crash: u32,
}

/// What ran a process's latest handler: a delivered message (`link`) or a local event.
#[derive(Clone, Copy, Debug)]
struct Trigger {
    link: u32,
    origin: u32,
    depth: u32,
}

/// Every process's depths.
pub(super) struct Hops {
    /// Whether hops are tracked (n ≤ [`HOPS_MAX_N`]).
    pub(super) on: bool,
    n: usize,
    /// reach[q * (n + 1) + j] is, for source j (j = n: the sync source), the (epoch, depth)
    /// of the longest chain from j's current request to q.
    reach: Vec<(u32, u32)>,
    epoch: Vec<u32>,
    /// Every message sent, as a link (a message carries its index after its depths).
    links: Vec<Link>,
    /// Every local event: (process, what, when).
    origins: Vec<(Pid, &'static str, f64)>,
    /// Per process: what ran its latest handler.
    trig: Vec<Trigger>,
    /// Per process: the local event its current request began at.
    req_origin: Vec<u32>,
    /// The exit that last emptied the system with someone waiting.
    sync_origin: u32,
    /// Every crash the simulator injected, in order: (process, when, entries before it).
    crashes: Vec<(Pid, f64, u64)>,
    /// Per process: the latest crash in its causal past (its own detection of it, or a
    /// message sent after one), as in `Link::crash`.
    crash_seen: Vec<u32>,
}

/// The path an entry waited for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Waited {
    /// Messages between distinct processes on it.
    pub(super) hops: u64,
    /// Whether it begins at the entering process's own request (else the entry also waited
    /// for another event: another process's exit, request or timer).
    pub(super) from_request: bool,
    /// Whether it begins at the exit that last emptied the system.
    pub(super) from_sync: bool,
    /// Whether it begins at another process's exit: the entry waited for another process's
    /// critical section to end (what seed 003's concurrent entry, Theorem 7, rules out when
    /// every request is of one type).
    pub(super) after_exit: bool,
}

impl Hops {
    /// Tracked for `n` processes if `n` ≤ [`HOPS_MAX_N`].
    pub(super) fn new(n: usize) -> Self {
        let on = n <= HOPS_MAX_N;
        Hops {
            on,
            n,
            reach: if on {
                vec![(0, 0); n * (n + 1)]
            } else {
                Vec::new()
            },
            epoch: vec![0; n + 1],
            links: Vec::new(),
            origins: Vec::new(),
            trig: vec![
                Trigger {
                    link: NONE,
                    origin: NONE,
                    depth: 0
                };
                n
            ],
            req_origin: vec![NONE; n],
            sync_origin: NONE,
            crashes: Vec::new(),
            crash_seen: vec![0; n],
        }
    }

    /// A local event (`what`: a request, an exit, a timer) runs `p`'s handler at `now`: the
    /// paths of the messages it sends begin there.
    pub(super) fn local(&mut self, p: Pid, what: &'static str, now: f64) {
        if self.on {
            self.origins.push((p, what, now));
            self.trig[p] = Trigger {
                link: NONE,
                origin: (self.origins.len() - 1) as u32,
                depth: 0,
            };
        }
    }

    /// A timer runs `p`'s handler: a local event, and, if it is the failure detector's
    /// report of the crash of `detected`, that crash enters `p`'s causal past.
    pub(super) fn timer(&mut self, p: Pid, detected: Option<Pid>, now: f64) {
        let what = if detected.is_some() {
            "detects a crash"
        } else {
            "timer"
        };
        self.local(p, what, now);
        if let Some(c) = detected.filter(|_| self.on) {
            if let Some(i) = self.crashes.iter().position(|x| x.0 == c) {
                self.crash_seen[p] = self.crash_seen[p].max(i as u32 + 1);
            }
        }
    }

    /// The simulator crashes `p` at `now`, after `entries` entries in the run.
    pub(super) fn crashed(&mut self, p: Pid, now: f64, entries: u64) {
        if self.on {
            self.crashes.push((p, now, entries));
        }
    }

    /// The crashes injected, in order: (process, when, entries before it).
    pub(super) fn crashes(&self) -> &[(Pid, f64, u64)] {
        &self.crashes
    }

    /// Every message between distinct processes as (the latest crash in its sender's causal
    /// past: an index of [`Hops::crashes`] plus one, 0 for none; its kind; when it was sent).
    pub(super) fn messages_after_crashes(
        &self,
    ) -> impl Iterator<Item = (u32, &'static str, f64)> + '_ {
        self.links
            .iter()
            .filter(|k| k.from != k.to)
            .map(|k| (k.crash, k.kind, k.sent))
    }

    /// The path `p`'s entry now waited for.
    pub(super) fn waited(&self, p: Pid) -> Waited {
        let t = self.trig[p];
        Waited {
            hops: u64::from(t.depth),
            from_request: t.origin != NONE && t.origin == self.req_origin[p],
            from_sync: t.origin != NONE && t.origin == self.sync_origin,
            after_exit: self
                .origins
                .get(t.origin as usize)
                .is_some_and(|&(q, what, _)| q != p && what == "leaves"),
        }
    }

    /// Messages between distinct processes on the path `p`'s entry now waited for that were
    /// sent at `since` or later.
    pub(super) fn hops_since(&self, p: Pid, since: f64) -> u64 {
        let mut h = 0;
        let mut l = self.trig[p].link;
        while l != NONE {
            let k = &self.links[l as usize];
            if k.sent < since {
                break;
            }
            h += u64::from(k.from != k.to);
            l = k.parent;
        }
        h
    }

    /// The path `p`'s entry at `now` waited for, message by message.
    pub(super) fn describe(&self, p: Pid, now: f64) -> String {
        let t = self.trig[p];
        let mut steps = Vec::new();
        let mut l = t.link;
        while l != NONE {
            let k = &self.links[l as usize];
            steps.push(format!(
                "{} p{}→p{} sent t={:.3}",
                k.kind, k.from, k.to, k.sent
            ));
            l = k.parent;
        }
        steps.reverse();
        let start = match self.origins.get(t.origin as usize) {
            Some((q, what, at)) => format!("p{q} {what} at t={at:.3}"),
            None => "the start".into(),
        };
        steps.insert(0, start);
        steps.push(format!("p{p} enters at t={now:.3}"));
        steps.join(" → ")
    }

    /// Starts a new causal source `j` (a request of process j, or j = n: the exit at `p` that
    /// emptied the system).
    pub(super) fn new_source(&mut self, p: Pid, j: usize) {
        if self.on {
            self.epoch[j] += 1;
            self.reach[p * (self.n + 1) + j] = (self.epoch[j], 0);
            if j == self.n {
                self.sync_origin = self.trig[p].origin;
            } else {
                self.req_origin[p] = self.trig[p].origin;
            }
        }
    }

    /// The longest chain from source `j`'s current event to process `p` (0 if none).
    pub(super) fn depth(&self, p: Pid, j: usize) -> u64 {
        let (e, d) = self.reach[p * (self.n + 1) + j];
        if e == self.epoch[j] {
            u64::from(d)
        } else {
            0
        }
    }

    /// What a message of `kind` from `from`, sent at `now`, carries: its sender's depths, one
    /// hop further (none to itself), and its link.
    pub(super) fn of(&mut self, from: Pid, to: Pid, kind: &'static str, now: f64) -> HopDepths {
        if !self.on {
            return None;
        }
        let w = self.n + 1;
        let hop = u32::from(from != to);
        let t = self.trig[from];
        self.links.push(Link {
            parent: t.link,
            origin: t.origin,
            depth: t.depth + hop,
            from: from as u32,
            to: to as u32,
            kind,
            sent: now,
            crash: self.crash_seen[from],
        });
        let link = (self.links.len() - 1) as u32;
        Some(
            self.reach[from * w..(from + 1) * w]
                .iter()
                .map(|&(e, d)| if e == 0 { (0, 0) } else { (e, d + hop) })
                .chain([(link, 0)])
                .collect(),
        )
    }

    /// Merges a delivered message's depths into its receiver's; the message runs its
    /// receiver's handler.
    pub(super) fn receive(&mut self, to: Pid, hops: &[(u32, u32)]) {
        let w = self.n + 1;
        if let Some(&(link, _)) = hops.get(w) {
            let k = &self.links[link as usize];
            self.trig[to] = Trigger {
                link,
                origin: k.origin,
                depth: k.depth,
            };
            self.crash_seen[to] = self.crash_seen[to].max(k.crash);
        }
        for (j, &(e, d)) in hops[..w].iter().enumerate() {
            if e != 0 && e == self.epoch[j] {
                let mine = &mut self.reach[to * w + j];
                if mine.0 != e || mine.1 < d {
                    *mine = (e, d);
                }
            }
        }
    }
}

/// What the simulator keeps to measure [`TwoHop`] (seed 003 §5.1) as the run goes.
#[derive(Debug)]
pub(super) struct TwoHopTracker {
    /// The types every request so far named (None before the first request).
    common: Option<Vec<Group>>,
    /// The type of the first entry: the first session's.
    first_type: Option<Group>,
    /// Whether a session has started.
    session_started: bool,
    /// Per process: whether its current request was made once a session had started.
    in_scope: Vec<bool>,
    figures: TwoHop,
}

impl TwoHopTracker {
    /// For `n` processes; `channel_delay`: D if every message takes D.
    pub(super) fn new(n: usize, channel_delay: Option<f64>) -> Self {
        TwoHopTracker {
            common: None,
            first_type: None,
            session_started: false,
            in_scope: vec![false; n],
            figures: TwoHop {
                channel_delay,
                ..TwoHop::default()
            },
        }
    }

    /// `p` made a request naming `types`.
    pub(super) fn request(&mut self, p: Pid, types: &[Group]) {
        match self.common.as_mut() {
            None => self.common = Some(types.to_vec()),
            Some(c) => c.retain(|t| types.contains(t)),
        }
        self.in_scope[p] = self.session_started;
    }

    /// A session started (TokenGME's observation).
    pub(super) fn session_started(&mut self) {
        self.session_started = true;
    }

    /// `p` entered type `ty` at `now` after waiting `wait` time units and `hops` hops
    /// (None: not tracked).
    pub(super) fn entry(&mut self, p: Pid, ty: Group, hops: Option<u64>, wait: f64, now: f64) {
        self.first_type.get_or_insert(ty);
        if !std::mem::take(&mut self.in_scope[p]) {
            return;
        }
        let f = &mut self.figures;
        f.requests += 1;
        f.wait_max = f.wait_max.max(wait);
        if let Some(h) = hops {
            f.hops_max = Some(f.hops_max.unwrap_or(0).max(h));
        }
        // Two delays, and rounding of the clock's sums.
        let late = f
            .channel_delay
            .is_some_and(|d| wait > 2.0 * d + 1e-9 * (1.0 + now.abs()));
        if hops.is_some_and(|h| h > 2) || late {
            f.over_two += 1;
            f.first_over.get_or_insert_with(|| {
                let d = f.channel_delay.map_or(String::new(), |d| format!(" (D = {d})"));
                let h = hops.map_or("-".into(), |h| h.to_string());
                format!("t={now:.3}: p{p} entered type {ty} after {h} message hops, waiting {wait:.3}{d}")
            });
        }
    }

    /// The figures at the end of the run.
    pub(super) fn finish(self) -> TwoHop {
        let mut f = self.figures;
        f.unserved = self.in_scope.iter().filter(|&&w| w).count() as u64;
        f.scenario = matches!(
            (self.first_type, self.common.as_ref()),
            (Some(t), Some(c)) if c.contains(&t)
        );
        f.why_not = if !f.scenario {
            Some(
                "not a two-hop scenario: the first session's type is not in every request's set"
                    .into(),
            )
        } else if f.channel_delay.is_none() {
            Some("random channel delays: neither hops nor time measure it exactly (use a constant --cd)".into())
        } else {
            None
        };
        f.judged = f.why_not.is_none();
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_hop_is_judged_only_on_a_scenario_with_a_constant_delay() {
        // Every request names type 1, the first session is of type 1: a scenario.
        let mut t = TwoHopTracker::new(4, Some(10.0));
        t.request(0, &[1, 2]);
        t.session_started();
        t.request(1, &[0, 1]);
        t.request(2, &[1, 3]);
        t.request(3, &[1]);
        t.entry(0, 1, Some(2), 50.0, 50.0);
        t.entry(1, 1, Some(3), 30.0, 60.0);
        t.entry(2, 1, Some(2), 25.0, 70.0);
        let f = t.finish();
        assert!(f.scenario && f.judged && f.failed(), "{f:?}");
        // p0's request came before the session: out of scope; p1 took 3 hops, p2 2.5 D;
        // p3 was never served.
        assert_eq!((f.requests, f.over_two, f.unserved), (2, 2, 1));
        assert_eq!((f.hops_max, f.wait_max), (Some(3), 30.0));
        assert!(f.first_over.unwrap().contains("p1 entered type 1 after 3"));
        // Exactly 2·D, 2 hops: within.
        let mut t = TwoHopTracker::new(1, Some(10.0));
        t.session_started();
        t.request(0, &[0, 1]);
        t.entry(0, 0, Some(2), 20.0, 1e6);
        assert!(!t.finish().failed());
        // A request without the first session's type: not a scenario, never judged.
        let mut t = TwoHopTracker::new(2, Some(10.0));
        t.session_started();
        t.request(0, &[1, 2]);
        t.entry(0, 2, Some(5), 99.0, 1.0);
        t.request(1, &[0, 1]);
        let f = t.finish();
        assert!(!f.scenario && !f.judged && !f.failed());
        // Random delays: measured, not judged.
        let mut t = TwoHopTracker::new(1, None);
        t.session_started();
        t.request(0, &[0]);
        t.entry(0, 0, Some(4), 9.0, 1.0);
        let f = t.finish();
        assert!(f.scenario && !f.judged && !f.failed() && f.over_two == 1);
    }
}
