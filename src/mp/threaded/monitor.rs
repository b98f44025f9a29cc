//! The threaded runtime's global view, under a mutex: the shared safety monitor, who is
//! waiting since when (for the watchdog), and the synchronisation delay (from an exit that
//! empties the system to the next entry). Every entry and exit is recorded in causal order
//! (an exit before the messages it enables are sent), so the checks are exact.

use std::time::Instant;

use crate::mp::metrics::Tally;
use crate::mp::run_config::RunConfig;
use crate::mp::safety::Safety;
use crate::mp::{Group, Pid};

/// Who is inside and who waits, seen by every process thread.
pub(super) struct Monitor {
    pub(super) safety: Safety,
    start: Instant,
    local: bool,
    waiting_since: Vec<Option<Instant>>,
    waiting: usize,
    empty_since: Option<Instant>,
    sync_sum: f64,
    sync_count: u64,
    sync_max: f64,
    completed: u64,
}

/// Milliseconds from `a` to `b`.
fn ms_between(a: Instant, b: Instant) -> f64 {
    b.duration_since(a).as_secs_f64() * 1e3
}

impl Monitor {
    /// Nobody inside or waiting at `start`.
    pub(super) fn new(cfg: &RunConfig, start: Instant) -> Self {
        Monitor {
            safety: Safety::new(cfg),
            start,
            local: cfg.local(),
            waiting_since: vec![None; cfg.setup.n],
            waiting: 0,
            empty_since: None,
            sync_sum: 0.0,
            sync_count: 0,
            sync_max: 0.0,
            completed: 0,
        }
    }

    /// Advances the concurrency integral to `now`.
    pub(super) fn tick(&mut self, now: Instant) {
        self.safety.tick(ms_between(self.start, now));
    }

    /// Counts a violation.
    pub(super) fn violation(&mut self, what: String) {
        self.safety.record(what);
    }

    /// `p` entered group `g` at `now`.
    pub(super) fn enter(&mut self, p: Pid, g: Group, now: Instant) {
        self.tick(now);
        if self.waiting_since[p].take().is_some() {
            self.waiting -= 1;
        }
        if let Some(t0) = self.empty_since.take() {
            let d = ms_between(t0, now);
            self.sync_sum += d;
            self.sync_count += 1;
            self.sync_max = self.sync_max.max(d);
        }
        for v in self.safety.enter(p, g) {
            self.violation(v);
        }
    }

    /// `p` left group `g` at `now`.
    pub(super) fn exit(&mut self, p: Pid, g: Group, now: Instant) {
        self.tick(now);
        if self.waiting_since[p].take().is_some() {
            self.waiting -= 1;
        }
        self.completed += 1;
        for v in self.safety.exit(p, g) {
            self.violation(v);
        }
        if self.safety.inside() == 0 && self.waiting > 0 && !self.local {
            self.empty_since = Some(now);
        }
    }

    /// `p` starts waiting (to enter, or on local CS to leave) at `now`.
    pub(super) fn wait(&mut self, p: Pid, now: Instant) {
        if self.waiting_since[p].is_none() {
            self.waiting += 1;
        }
        self.waiting_since[p] = Some(now);
    }

    /// A request waiting longer than `watchdog` seconds at `now`, described.
    pub(super) fn overdue(&self, now: Instant, watchdog: f64) -> Option<String> {
        let (p, since) = self
            .waiting_since
            .iter()
            .enumerate()
            .filter_map(|(p, w)| w.map(|w| (p, w)))
            .find(|(_, w)| now.duration_since(*w).as_secs_f64() > watchdog)?;
        Some(format!(
            "p{p} waiting for {:.1} s (watchdog {} s); {} waiting, {} inside",
            now.duration_since(since).as_secs_f64(),
            watchdog,
            self.waiting,
            self.safety.inside()
        ))
    }

    /// Puts the shared figures in `tally`.
    pub(super) fn figures_into(&self, tally: &mut Tally) {
        tally.sync_sum = self.sync_sum;
        tally.sync_count = self.sync_count;
        tally.sync_max = self.sync_max;
        tally.completed = self.completed;
        tally.inside_integral = self.safety.inside_integral;
        tally.busy_time = self.safety.busy_time;
        tally.inside_max = self.safety.inside_max;
    }
}
