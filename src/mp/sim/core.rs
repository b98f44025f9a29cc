//! The simulator's state apart from the processes (so a handler can borrow both): the
//! clock, the queue, the deferred receipts, the channels and the workload's random streams,
//! where each process's application is, and the checks (safety, the tally, causal hops)
//! that every entry and exit goes through.

use std::collections::VecDeque;

use super::deferred::Deferred;
use super::down::Crashes;
use super::hops::{Hops, TwoHopTracker, HOPS_MAX_N};
use super::passed::Passed;
use super::queue::{Kind, Queue};
use crate::mp::metrics::Tally;
use crate::mp::run_config::RunConfig;
use crate::mp::safety::Safety;
use crate::mp::workload::Dist;
use crate::mp::{Group, Message, Pid, Problem};
use crate::workload::rng::Rng;
use crate::workload::Sampler;

/// Where a process's application is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Phase {
    /// Between critical sections (or done).
    Out,
    /// Asked to enter at this time, for this group.
    Waiting(f64, Group),
    /// Inside, in this group.
    Inside(Group),
    /// Asked to leave at this time (local CS only).
    Leaving(f64, Group),
}

/// Everything but the processes.
pub(super) struct Core<M> {
    pub(super) now: f64,
    pub(super) q: Queue<M>,
    /// A broadcast is queued as one bundle (else as one event per copy, as where hops are
    /// tracked).
    pub(super) cast: bool,
    pub(super) deferred: Deferred<M>,
    /// A broadcast's delivery times, reused (see [`Core::cast_times`]).
    pub(super) cast_buf: Vec<u64>,
    /// A broadcast's delays, reused (see [`Core::cast_times`]).
    draws: Vec<f64>,
    /// (since, p) for every start of a wait, oldest first; entries whose process has since
    /// moved on are dropped when met.
    pub(super) waits: VecDeque<(f64, Pid)>,
    pub(super) n: usize,
    pub(super) delay: Dist,
    fifo: bool,
    link_last: Vec<f64>,
    delay_rng: Vec<Rng>,
    work_rng: Vec<Rng>,
    pub(super) samplers: Vec<Sampler>,
    ncs: Dist,
    cs: Dist,
    pub(super) requests: u64,
    keep_cycling: bool,
    pub(super) phase: Vec<Phase>,
    pub(super) entries: Vec<u64>,
    /// Every entry as (process, time), when asked for (lockstep comparisons).
    pub(super) entry_log: Option<Vec<(Pid, f64)>>,
    pub(super) unfinished: usize,
    pub(super) tally: Tally,
    pub(super) problem: Problem,
    pub(super) safety: Safety,
    pub(super) empty_since: Option<f64>,
    pub(super) waiting: usize,
    pub(super) sessions_waited_max: Option<u64>,
    pub(super) trace: bool,
    pub(super) hops: Hops,
    /// Crashed processes (`sim --crash`).
    pub(super) crash: Crashes,
    /// Seed 003 §5.1: events after which a request waited unnecessarily, and the first.
    pub(super) blocking: (u64, Option<String>),
    /// Seed 003 §5.1: types per request (1: single-type requests), each process's current
    /// set (G ≥ 2) and the two-hop property's measure (G ≥ 2).
    pub(super) types_per_request: usize,
    pub(super) want_types: Vec<Vec<Group>>,
    pub(super) two_hop: Option<TwoHopTracker>,
    /// Sessions each request was passed over by, observed from the entries (Theorem 6).
    pub(super) passed: Passed,
}

impl<M: Message> Core<M> {
    /// Time 0, nothing queued, every process out, for `run` on FIFO channels or not
    /// (`trace`: print every event; `cast`: broadcasts may be bundled).
    pub(super) fn new(run: &RunConfig, fifo: bool, trace: bool, cast: bool) -> Self {
        let n = run.setup.n;
        Core {
            now: 0.0,
            q: Queue::with_capacity(4 * n),
            cast: cast && n > HOPS_MAX_N,
            deferred: Deferred::new(n),
            cast_buf: Vec::with_capacity(n),
            draws: Vec::with_capacity(n),
            waits: VecDeque::new(),
            n,
            delay: run.delay,
            fifo,
            link_last: if fifo { vec![0.0; n * n] } else { Vec::new() },
            delay_rng: (0..n)
                .map(|p| Rng::new(run.seed, 0xD1_0000 + p as u64))
                .collect(),
            work_rng: (0..n)
                .map(|p| Rng::new(run.seed, 0x3C_0000 + p as u64))
                .collect(),
            samplers: run.mix.samplers(n, run.seed),
            ncs: run.ncs,
            cs: run.cs,
            requests: run.requests,
            keep_cycling: run.local(),
            phase: vec![Phase::Out; n],
            entries: vec![0; n],
            entry_log: None,
            unfinished: if run.requests == 0 { 0 } else { n },
            tally: Tally::new(n),
            problem: run.problem,
            safety: Safety::new(run),
            empty_since: None,
            waiting: 0,
            sessions_waited_max: None,
            trace,
            hops: Hops::new(n),
            crash: Crashes::new(n, run.seed),
            blocking: (0, None),
            types_per_request: 1,
            want_types: Vec::new(),
            two_hop: None,
            passed: Passed::new(n),
        }
    }

    /// Requests name `g` types each (seed 003 §5.1; 1: single-type requests).
    pub(super) fn set_types_per_request(&mut self, g: usize) {
        self.types_per_request = g;
        if g > 1 {
            self.want_types = vec![Vec::with_capacity(g); self.n];
            let d = self.delay.is_constant().then(|| self.delay.mean());
            self.two_hop = Some(TwoHopTracker::new(self.n, d));
        }
    }

    /// `p`'s next request: its group (G = 1), or its set of G types drawn into
    /// `want_types[p]` and its first type.
    pub(super) fn draw_request(&mut self, p: Pid) -> Group {
        if self.types_per_request == 1 {
            return self.samplers[p].next();
        }
        let set = &mut self.want_types[p];
        crate::mp::workload::draw_types(&mut self.samplers[p], self.types_per_request, set);
        if let Some(t) = self.two_hop.as_mut() {
            t.request(p, set);
        }
        set[0]
    }

    /// `p` starts waiting: `phase` says to enter (in which group) or to leave.
    pub(super) fn start_wait(&mut self, p: Pid, phase: Phase) {
        self.phase[p] = phase;
        self.waits.push_back((self.now, p));
        self.waiting += 1;
        self.tally.start_cycle(p);
        self.hops.new_source(p, p);
        self.passed.request(p);
    }

    /// The delivery time of a message `from` → `to` sent now: its delay drawn, after the
    /// link's last delivery on FIFO channels.
    #[inline]
    pub(super) fn delivery(&mut self, from: Pid, to: Pid) -> f64 {
        let d = if from == to {
            0.0
        } else {
            self.delay.sample(&mut self.delay_rng[from])
        };
        let mut t = self.now + d;
        if self.fifo {
            let link = &mut self.link_last[from * self.n + to];
            t = t.max(*link);
            *link = t;
        }
        t
    }

    /// Asks the cache for the link `from` → `to`'s last delivery on FIFO channels: a handler
    /// often answers the message it runs (a reply to a request), and [`Core::delivery`] then
    /// reads it.
    #[inline]
    pub(super) fn will_send(&self, from: Pid, to: Pid) {
        if self.fifo {
            crate::mp::prefetch_at(self.link_last.as_ptr().wrapping_add(from * self.n + to));
        }
    }

    /// The delivery times (as bits) of a broadcast `from` → every other process sent now, in
    /// receiver order, into `out`: the same draws as one [`Core::delivery`] per receiver, drawn
    /// together from the sender's random stream, then set after its row of links.
    #[inline]
    pub(super) fn cast_times(&mut self, from: Pid, out: &mut Vec<u64>) {
        let (now, n) = (self.now, self.n);
        // The n − 1 delays first, their logarithms together (`Dist::sample_into`).
        let draws = &mut self.draws;
        draws.resize(n.saturating_sub(1), 0.0);
        self.delay.sample_into(&mut self.delay_rng[from], draws);
        // Receivers 0..from, then from + 1..n: the two runs of the row around the sender.
        let (d0, d1) = draws.split_at(from.min(draws.len()));
        // Every place is written below, so a buffer kept from the last broadcast (of the same
        // length) is not cleared first.
        out.resize(draws.len(), 0);
        let (o0, o1) = out.split_at_mut(d0.len());
        if self.fifo {
            let row = &mut self.link_last[from * n..(from + 1) * n];
            let (l0, l1) = row.split_at_mut(from);
            for (o, d, l) in [(o0, d0, l0), (o1, d1, &mut l1[1..])] {
                for ((o, &d), l) in o.iter_mut().zip(d).zip(l.iter_mut()) {
                    let t = (now + d).max(*l);
                    *l = t;
                    *o = t.to_bits();
                }
            }
        } else {
            for (o, &d) in out.iter_mut().zip(draws.iter()) {
                *o = (now + d).to_bits();
            }
        }
    }

    /// Whether a watchdog check at time `t`, with the processes where they are now, could
    /// report a request overdue: exactly when the oldest wait is (`overdue`'s test).
    pub(super) fn may_be_overdue(&mut self, t: f64, bound: f64) -> bool {
        while let Some(&(since, p)) = self.waits.front() {
            match self.phase[p] {
                Phase::Waiting(s, _) | Phase::Leaving(s, _) if s == since => {
                    return t - since > bound
                }
                _ => {
                    self.waits.pop_front();
                }
            }
        }
        false
    }

    pub(super) fn violation(&mut self, what: String) {
        if self.trace {
            crate::opts::io::errln!("{:.3} VIOLATION {what}", self.now);
        }
        self.safety.record(format!("t={:.3}: {what}", self.now));
    }

    /// Advances the concurrency integral to now.
    pub(super) fn account_time(&mut self) {
        self.safety.tick(self.now);
    }

    pub(super) fn schedule_want(&mut self, p: Pid) {
        if self.entries[p] < self.requests || self.keep_cycling {
            let d = self.ncs.sample(&mut self.work_rng[p]);
            self.q.push(self.now + d, Kind::Want { p });
        }
    }

    pub(super) fn schedule_leave(&mut self, p: Pid) {
        let d = self.cs.sample(&mut self.work_rng[p]);
        self.q.push(self.now + d, Kind::Leave { p });
    }

    /// `p` enters for type `ty`, one of its request's (see [`Core::enter`]).
    pub(super) fn enter_as(&mut self, p: Pid, ty: Group) {
        let Phase::Waiting(since, g) = self.phase[p] else {
            self.enter(p);
            return;
        };
        let asked: &[Group] = if self.types_per_request > 1 {
            &self.want_types[p]
        } else {
            &[g]
        };
        if let Some(v) = crate::mp::safety::not_asked(p, ty, asked) {
            self.violation(v);
        }
        self.phase[p] = Phase::Waiting(since, ty);
        self.enter(p);
    }

    pub(super) fn enter(&mut self, p: Pid) {
        if self.trace {
            let h = if self.hops.on {
                self.hops.depth(p, p)
            } else {
                0
            };
            crate::opts::io::errln!(
                "{:.3} p{p} ENTERS {:?} after {h} hops",
                self.now,
                self.phase[p]
            );
        }
        let Phase::Waiting(since, g) = self.phase[p] else {
            self.violation(format!("p{p} entered without asking"));
            return;
        };
        self.account_time();
        self.waiting -= 1;
        self.tally.wait(p, self.now - since);
        self.tally.entered(p);
        self.record_wait_hops(p);
        self.record_paths(p);
        self.passed.entry(p, g, since, self.now);
        if let Some(t) = self.two_hop.as_mut() {
            let h = self.hops.on.then(|| self.hops.depth(p, p));
            t.entry(p, g, h, self.now - since, self.now);
        }
        if let Some(t0) = self.empty_since.take() {
            self.tally.sync(self.now - t0);
            if self.hops.on {
                let h = self.hops.depth(p, self.n);
                self.tally.sync_hops(h);
            }
        }
        for v in self.safety.enter(p, g) {
            self.violation(v);
        }
        self.phase[p] = Phase::Inside(g);
        if let Some(log) = self.entry_log.as_mut() {
            log.push((p, self.now));
        }
        self.entries[p] += 1;
        if self.entries[p] == self.requests {
            self.unfinished -= 1;
        }
        self.schedule_leave(p);
    }

    pub(super) fn exited(&mut self, p: Pid) {
        if self.trace {
            crate::opts::io::errln!("{:.3} p{p} EXITS", self.now);
        }
        let g = match self.phase[p] {
            Phase::Inside(g) | Phase::Leaving(_, g) => g,
            _ => {
                self.violation(format!("p{p} left while outside"));
                return;
            }
        };
        self.account_time();
        if let Phase::Leaving(since, _) = self.phase[p] {
            self.tally.wait(p, self.now - since);
            self.tally.entered(p);
            self.record_wait_hops(p);
            self.waiting -= 1;
        }
        self.tally.completed += 1;
        for v in self.safety.exit(p, g) {
            self.violation(v);
        }
        if self.safety.inside() == 0 && self.waiting > 0 && self.problem != Problem::LocalCs {
            self.empty_since = Some(self.now);
            self.hops.new_source(p, self.n);
        }
        self.phase[p] = Phase::Out;
        self.schedule_want(p);
    }

    fn record_wait_hops(&mut self, p: Pid) {
        if self.hops.on {
            let h = self.hops.depth(p, p);
            self.tally.wait_hops(h);
        }
    }
}

impl<M: Message> Core<M> {
    /// Records the path `p`'s entry now waited for: its waiting time in hops when it begins at
    /// `p`'s request (else that it waited for something else too); and when it follows an exit
    /// that emptied the system (before `empty_since` is taken), its synchronization delay in
    /// hops: the messages on the path sent at that exit or later (a path that began earlier,
    /// such as a token sent before the exit and delivered after it, counts only those).
    pub(super) fn record_paths(&mut self, p: Pid) {
        if !self.hops.on || !matches!(self.phase[p], Phase::Waiting(..)) {
            return;
        }
        let w = self.hops.waited(p);
        let (hops, now) = (&self.hops, self.now);
        let describe = || hops.describe(p, now);
        self.tally.path_wait(w.hops, w.from_request, describe);
        if w.after_exit {
            self.tally.path_after_exit(describe);
        }
        if let Some(t0) = self.empty_since {
            let h = self.hops.hops_since(p, t0);
            self.tally.path_sync(h, w.from_sync, describe);
        }
    }
}
