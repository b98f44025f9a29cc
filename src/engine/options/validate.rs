//! One validation of every run option against one table of limits, before anything runs or is
//! written: an error names the option as the user wrote it (`--k` or `k in FILE`).

use super::{Limits, RunArgs, LINE_BYTES};
use crate::error::{usage, UsageError};
use crate::runner::exec::{StopRule, WATCHDOG_POLL};
use crate::workload::{format_duration, Mix};

impl RunArgs {
    /// Checks every value against [`Limits`], before anything runs or is written: an error
    /// names the option as the user wrote it. Returns warnings for values taken otherwise
    /// than written. Duplicate thread counts and mixes are dropped (with a warning).
    pub fn validate(&mut self, limits: &Limits) -> Result<Vec<String>, UsageError> {
        let mut warnings = Vec::new();
        self.check_sizes(limits)?;
        self.check_times(limits, &mut warnings)?;
        self.check_sampling(limits, &mut warnings)?;
        self.drop_duplicates(&mut warnings);
        Ok(warnings)
    }

    /// Locks, thread counts, slots, k and the mixes' sessions.
    fn check_sizes(&self, limits: &Limits) -> Result<(), UsageError> {
        let name = |k: &str| self.name(k);
        if self.locks().is_empty() {
            return usage(format!(
                "{} is empty: name locks (see `lockbench list`) or use all",
                name("lock")
            ));
        }
        if let Some(t) = &self.threads.threads {
            if t.is_empty() || t.contains(&0) {
                return usage(format!(
                    "{} must be at least 1 (e.g. 1,2,4)",
                    name("threads")
                ));
            }
            if let Some(&big) = t.iter().find(|&&t| t > limits.threads) {
                return usage(format!(
                    "{} {big}: at most {} threads ({}); run fewer threads",
                    name("threads"),
                    limits.threads,
                    limits.threads_why
                ));
            }
        }
        if self.mix.mix.as_ref().is_some_and(Vec::is_empty) {
            return usage(format!(
                "{} is empty: name at least one mix (e.g. distinct, uniform:8), or leave it out for distinct",
                name("mix")
            ));
        }
        if let Some(s) = self.slots {
            if s == 0 || s > limits.threads {
                return usage(format!(
                    "{} {s}: between 1 and {} (the processes a lock is built for; {})",
                    name("slots"),
                    limits.threads,
                    limits.threads_why
                ));
            }
        }
        if let Some(k) = self.k.one(&self.name("k"))? {
            if k == 0 || k > limits.threads {
                return usage(format!(
                    "{} {k}: between 1 and {} (the number of processes a k-exclusion lock admits together)",
                    name("k"),
                    limits.threads
                ));
            }
        }
        for m in self.mixes() {
            let sessions = match m {
                Mix::Uniform { sessions }
                | Mix::Hot { sessions, .. }
                | Mix::Zipf { sessions, .. }
                | Mix::Fixed { sessions } => sessions,
                _ => 1,
            };
            let most = match m {
                // The Zipf mix keeps a cumulative table of one f64 per session.
                Mix::Zipf { .. } => limits.sessions.min(limits.memory_bytes / 8),
                _ => limits.sessions,
            };
            if sessions > most {
                return usage(format!(
                    "{} {m}: at most {most} sessions ({}); use fewer sessions",
                    name("mix"),
                    if most < limits.sessions {
                        "its table of one number per session must fit in the memory available"
                    } else {
                        "session ids are 32-bit in traces"
                    }
                ));
            }
        }
        Ok(())
    }

    /// Shared lines, busy work, warm-up, the stop rule, rounds and the stall timeout.
    fn check_times(&self, limits: &Limits, warnings: &mut Vec<String>) -> Result<(), UsageError> {
        let name = |k: &str| self.name(k);
        let lines = self.cs_lines();
        if lines > limits.cs_lines() {
            return usage(format!(
                "{} {lines}: at most {} ({} bytes per line must fit in half the memory available, {:.1} GiB here); use fewer lines",
                name("cs-lines"),
                limits.cs_lines(),
                LINE_BYTES,
                limits.memory_bytes as f64 / (1u64 << 30) as f64
            ));
        }
        for (key, value, most) in [
            ("cs", self.cs(), limits.cs),
            ("think", self.think(), limits.cs),
            ("warmup", self.warmup(), limits.warmup),
            ("stall-timeout", self.stall_timeout(), limits.duration),
        ] {
            if value > most {
                return usage(format!(
                    "{} {}: at most {}",
                    name(key),
                    format_duration(value),
                    format_duration(most)
                ));
            }
        }
        match self.stop() {
            StopRule::Passages(0) => {
                return usage(format!("{} must be at least 1", name("passages")));
            }
            StopRule::Passages(n) if n > limits.passages => {
                return usage(format!(
                    "{} {n}: at most {} per thread",
                    name("passages"),
                    limits.passages
                ));
            }
            StopRule::Duration(d) if d.is_zero() => {
                return usage(format!(
                    "{} must be longer than 0 (e.g. --duration 2s)",
                    name("duration")
                ));
            }
            StopRule::Duration(d) if d > limits.duration => {
                return usage(format!(
                    "{} {}: at most {} per run and round",
                    name("duration"),
                    format_duration(d),
                    format_duration(limits.duration)
                ));
            }
            _ => {}
        }
        let rounds = self.rounds();
        if rounds == 0 || rounds > limits.rounds {
            return usage(format!(
                "{} {rounds}: between 1 and {}",
                name("repeat"),
                limits.rounds
            ));
        }
        if self.stall_timeout().is_zero() {
            return usage(format!(
                "{} must be longer than 0 (e.g. 10s)",
                name("stall-timeout")
            ));
        }
        if self.stall_timeout() < WATCHDOG_POLL * 2 {
            warnings.push(format!(
                "{} {} is below twice the watchdog's poll interval ({}): a run may be called stalled between two polls",
                name("stall-timeout"),
                format_duration(self.stall_timeout()),
                format_duration(WATCHDOG_POLL)
            ));
        }
        Ok(())
    }

    /// The latency sample and the counters.
    fn check_sampling(
        &self,
        limits: &Limits,
        warnings: &mut Vec<String>,
    ) -> Result<(), UsageError> {
        let name = |k: &str| self.name(k);
        match self.harness.latency_sample {
            Some(0) => {
                return usage(format!(
                    "{} 0: time one passage in N, N at least 1 (1 times every passage)",
                    name("latency-sample")
                ));
            }
            Some(n) if n > limits.latency_sample => {
                return usage(format!(
                    "{} {n}: at most {} (one passage in N is timed)",
                    name("latency-sample"),
                    limits.latency_sample
                ));
            }
            Some(n) => {
                if let StopRule::Passages(p) = self.stop() {
                    if p / n < 10 {
                        warnings.push(format!(
                            "{} {n} with {p} passages per thread: about {} timed passages per thread, too few for percentiles",
                            name("latency-sample"),
                            p / n
                        ));
                    }
                }
            }
            None => {}
        }
        if matches!(&self.counters, Some(c) if c.trim().is_empty()) {
            warnings.push(format!(
                "{} is empty: no counters are read (write `none` to say so)",
                name("counters")
            ));
        }
        Ok(())
    }

    /// Thread counts and mixes named twice run once, with a warning.
    fn drop_duplicates(&mut self, warnings: &mut Vec<String>) {
        let names = self.locks();
        let mut seen: Vec<&str> = Vec::new();
        for n in &names {
            let n = n.trim();
            if seen.contains(&n) {
                warnings.push(format!(
                    "{} names {n} twice: it runs once",
                    self.name("lock")
                ));
            } else {
                seen.push(n);
            }
        }
        if let Some(t) = &mut self.threads.threads {
            let mut seen = Vec::new();
            t.retain(|x| {
                let dup = seen.contains(x);
                seen.push(*x);
                !dup
            });
            if t.len() < seen.len() {
                warnings.push(format!(
                    "{} names a thread count twice: each runs once",
                    self.name("threads")
                ));
            }
        }
        if let Some(m) = &mut self.mix.mix {
            let mut seen: Vec<Mix> = Vec::new();
            m.retain(|x| {
                let dup = seen.contains(x);
                seen.push(x.clone());
                !dup
            });
            if m.len() < seen.len() {
                warnings.push(format!(
                    "{} names a mix twice: each runs once",
                    self.name("mix")
                ));
            }
        }
    }
}
