//! Crash-stop failures on the simulator (seed 003 §5.3): `--crash p@t` stops process `p` at
//! time `t` for good, as the paper's model has it (a process that crashes never comes back;
//! recovery restarts the algorithm on the processes still operational).
//!
//! - A crashed process runs no handler again: messages to it are lost, and its timers and its
//!   application's requests and exits are dropped. Its application stops with it: it makes
//!   no more requests, and a critical section it was in ends with the crash (the paper does
//!   not restart the application and assumes it copes with the crash, §5.3).
//! - A perfect failure detector (§5.3.1): every operational process learns of the crash once,
//!   after a delay drawn from the channel-delay distribution (its own random stream), through
//!   [`crate::mp::Algorithm::on_crash_detected`]. The delay is a decision of the simulator;
//!   the paper only assumes the detection is reliable.

use std::str::FromStr;

use crate::mp::metrics::Recovery;
use crate::mp::restarts::{ObservedRecovery, RestartTally};

use super::core::{Core, Phase};
use super::queue::Kind;
use crate::mp::{Message, Pid};

/// The timer tag of a crash event (at the crashing process).
pub(super) const CRASH_TAG: u64 = u64::MAX;
/// Timer tags from here on report a crash to a process: the tag is this plus the crashed id.
pub(super) const DETECT_BASE: u64 = 1 << 63;

/// The crashed process a failure detector's timer reports (None for any other timer).
pub(super) fn detected(tag: u64) -> Option<Pid> {
    (DETECT_BASE..CRASH_TAG)
        .contains(&tag)
        .then(|| (tag - DETECT_BASE) as Pid)
}

/// One crash: process `p` stops at time `at`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Crash {
    /// The process.
    pub p: Pid,
    /// When.
    pub at: f64,
}

impl FromStr for Crash {
    type Err = String;
    /// `p@t`, e.g. `3@120.5`.
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("--crash {s}: write process@time, e.g. 3@120.5");
        let (p, t) = s.split_once('@').ok_or_else(bad)?;
        let p: Pid = p.trim().parse().map_err(|_| bad())?;
        let at: f64 = t.trim().parse().map_err(|_| bad())?;
        if !at.is_finite() || at < 0.0 {
            return Err(bad());
        }
        Ok(Crash { p, at })
    }
}

/// Checks a crash schedule against `n` processes: one line saying what is wrong.
pub fn check_crashes(crashes: &[Crash], n: usize) -> Result<(), String> {
    for (i, c) in crashes.iter().enumerate() {
        if c.p >= n {
            return Err(format!(
                "--crash {}@{}: processes are 0 to {}",
                c.p,
                c.at,
                n - 1
            ));
        }
        if crashes[..i].iter().any(|d| d.p == c.p) {
            return Err(format!(
                "--crash: process {} crashes twice (a crashed process stays down)",
                c.p
            ));
        }
    }
    if !crashes.is_empty() && crashes.len() >= n {
        return Err(format!(
            "--crash: {} crashes of {n} processes leave none to recover (crash at most {})",
            crashes.len(),
            n - 1
        ));
    }
    Ok(())
}

impl<M: Message> Core<M> {
    /// Queues the crash events of `crashes`.
    pub(super) fn schedule_crashes(&mut self, crashes: &[Crash]) {
        self.crash.on = !crashes.is_empty();
        if self.crash.on {
            self.tally.restarts = Some(RestartTally::default());
        }
        for c in crashes {
            self.q.push(
                c.at,
                Kind::Timer {
                    p: c.p,
                    tag: CRASH_TAG,
                },
            );
        }
    }

    /// Process `p` crashes now: its application stops (leaving its critical section if
    /// inside), and every operational process is told after a detection delay.
    pub(super) fn crash_now(&mut self, p: Pid) {
        if self.trace {
            crate::opts::io::errln!("{:.3} p{p} CRASHES", self.now);
        }
        self.crash.down[p] = true;
        self.crash.count += 1;
        self.hops.crashed(p, self.now, self.entries.iter().sum());
        match self.phase[p] {
            Phase::Waiting(..) | Phase::Leaving(..) => self.waiting -= 1,
            Phase::Inside(g) => {
                self.account_time();
                for v in self.safety.exit(p, g) {
                    self.violation(v);
                }
                if self.safety.inside() == 0 && self.waiting > 0 {
                    self.empty_since = Some(self.now);
                }
            }
            Phase::Out => {}
        }
        self.phase[p] = Phase::Out;
        if self.entries[p] < self.requests {
            self.unfinished -= 1;
        }
        for j in (0..self.n).filter(|&j| !self.crash.down[j]) {
            let d = self.delay.sample(&mut self.crash.rng[j]);
            self.q.push(
                self.now + d,
                Kind::Timer {
                    p: j,
                    tag: DETECT_BASE + p as u64,
                },
            );
        }
    }

    /// The recovery figures of the run (None without crashes), once the tally is finished:
    /// per restart operation, and the whole run against (2n − 1) r + 5(n − 1) f.
    pub(super) fn recovery(&self) -> Option<Recovery> {
        let t = self.tally.restarts.as_ref().filter(|_| self.crash.on)?;
        let mut r = Recovery::of(
            t,
            self.n,
            self.crash.count,
            self.tally.requests,
            self.tally.messages,
        );
        if self.hops.on {
            r.observed = Some(ObservedRecovery::of(
                self.n,
                self.entries.iter().sum(),
                self.hops.crashes(),
                self.hops.messages_after_crashes(),
            ));
        }
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crash_syntax_and_schedule_checks() {
        assert_eq!("3@120.5".parse::<Crash>(), Ok(Crash { p: 3, at: 120.5 }));
        for bad in ["3", "x@1", "3@-1", "3@nan", "@4"] {
            assert!(bad.parse::<Crash>().is_err(), "{bad}");
        }
        let c = |p, at| Crash { p, at };
        assert!(check_crashes(&[c(1, 1.0), c(2, 5.0)], 4).is_ok());
        assert!(check_crashes(&[c(4, 1.0)], 4)
            .unwrap_err()
            .contains("0 to 3"));
        assert!(check_crashes(&[c(1, 1.0), c(1, 2.0)], 4)
            .unwrap_err()
            .contains("twice"));
        assert!(check_crashes(&[c(0, 1.0), c(1, 1.0)], 2)
            .unwrap_err()
            .contains("none to recover"));
    }
}
