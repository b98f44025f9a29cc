//! Seed 003 §5.3.4 as the simulator observes it, with no label of the algorithm's but each
//! message's kind: the crashes it injected, and every recovery message charged to the latest
//! injected crash in its sender's causal past (the sender's own detection of it, or a message
//! received after one). A crash's recovery is then what it caused, whatever instance ids the
//! messages carry and whatever the coordinator says it began or ended.
//!
//! A message of an operation cut short by a later crash, sent by a process that had already
//! learnt of the later one, is charged to the later crash: the charges move to later crashes,
//! never to earlier ones, and their sum is the run's.

use serde::Serialize;

use super::{KindCounts, LEAVE, RECOVERY_KINDS};
use crate::mp::Pid;

/// One injected crash and the recovery messages charged to it.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct CrashRecovery {
    /// The process the simulator crashed.
    pub process: Pid,
    /// When.
    pub at: f64,
    /// The recovery messages charged to it, by kind (LEAVE: the paper charges those to the
    /// old requests, not to the restart).
    #[serde(flatten)]
    pub kinds: KindCounts,
    /// When the first and the last of them were sent.
    pub first_sent: Option<f64>,
    /// When the last of them was sent.
    pub last_sent: Option<f64>,
    /// When the first RESUME (the restart's last phase) charged to it was sent.
    pub resumed: Option<f64>,
    /// The next crash came after its recovery began and before a RESUME was sent.
    pub nested: bool,
    /// Critical sections entered after it (the run goes on).
    pub entries_after: u64,
    /// The messages charged to this crash and the ones before it, j crashes in all, are
    /// ≤ 5(n − 1) j, and each of the five kinds ≤ (n − 1) j (one operation per failure).
    pub within: bool,
}

/// The recovery of every injected crash, observed.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct ObservedRecovery {
    /// Per injected crash, in the order the simulator injected them.
    pub crashes: Vec<CrashRecovery>,
    /// Recovery messages with no crash in their sender's causal past (a correct run has
    /// none).
    pub uncaused: u64,
    /// The most messages of the five kinds charged to one crash.
    pub messages_max: u64,
    /// Crashes at which the charges so far exceed 5(n − 1) or n − 1 of a kind per crash.
    pub over_bound: u64,
}

impl ObservedRecovery {
    /// The figures of a run of `n` processes with `entries` entries in all, which injected
    /// `crashes` (process, when, entries before) and sent `messages` between distinct
    /// processes (the latest crash in the sender's causal past as an index of `crashes`
    /// plus one, or 0; kind; when sent).
    pub fn of(
        n: usize,
        entries: u64,
        crashes: &[(Pid, f64, u64)],
        messages: impl Iterator<Item = (u32, &'static str, f64)>,
    ) -> Self {
        let each = n.saturating_sub(1) as u64;
        let mut counts = vec![[0u64; LEAVE + 1]; crashes.len()];
        let mut sent: Vec<Option<(f64, f64)>> = vec![None; crashes.len()];
        let mut resumed: Vec<Option<f64>> = vec![None; crashes.len()];
        let mut uncaused = 0;
        for (c, kind, at) in messages {
            let i = match RECOVERY_KINDS.iter().position(|&k| k == kind) {
                Some(i) => i,
                None if kind == "LEAVE" => LEAVE,
                None => continue,
            };
            let Some(j) = (c as usize).checked_sub(1).filter(|&j| j < crashes.len()) else {
                uncaused += u64::from(i != LEAVE);
                continue;
            };
            counts[j][i] += 1;
            if i == 4 {
                let r = resumed[j].get_or_insert(at);
                *r = r.min(at);
            }
            if i != LEAVE {
                let s = sent[j].get_or_insert((at, at));
                s.0 = s.0.min(at);
                s.1 = s.1.max(at);
            }
        }
        // Each failure budgets one restart operation (§5.3.4), and charges move only to
        // later crashes: the messages charged to the first j crashes are within j operations'
        // worth, 5(n − 1) j in all and (n − 1) j of each kind.
        let mut upto = [0u64; LEAVE];
        let out: Vec<CrashRecovery> = crashes
            .iter()
            .enumerate()
            .map(|(j, &(process, at, before))| {
                let k = &counts[j];
                for (u, c) in upto.iter_mut().zip(k) {
                    *u += c;
                }
                let budget = j as u64 + 1;
                let last_sent = sent[j].map(|s| s.1);
                CrashRecovery {
                    process,
                    at,
                    kinds: KindCounts::of(k),
                    first_sent: sent[j].map(|s| s.0),
                    last_sent,
                    resumed: resumed[j],
                    nested: crashes.get(j + 1).is_some_and(|next| {
                        sent[j].is_some_and(|s| s.0 < next.1)
                            && resumed[j].is_none_or(|r| r > next.1)
                    }),
                    entries_after: entries.saturating_sub(before),
                    within: upto.iter().sum::<u64>() <= 5 * each * budget
                        && upto.iter().all(|&c| c <= each * budget),
                }
            })
            .collect();
        ObservedRecovery {
            uncaused,
            messages_max: out.iter().map(|c| c.kinds.total).max().unwrap_or(0),
            over_bound: out.iter().filter(|c| !c.within).count() as u64,
            crashes: out,
        }
    }

    /// What broke a bound, one line each.
    pub fn failures(&self, n: usize) -> Vec<String> {
        let each = n.saturating_sub(1);
        let mut out: Vec<String> = self
            .crashes
            .iter()
            .filter(|c| !c.within)
            .map(|c| {
                format!(
                    "the crashes up to p{}'s at {:.1} caused more recovery messages than 5(n-1) = {} or n-1 = {each} of a kind per crash; this one {} ({}) (seed 003 §5.3.4)",
                    c.process, c.at, 5 * each, c.kinds.total, c.kinds.five()
                )
            })
            .collect();
        if self.uncaused > 0 {
            out.push(format!(
                "{} recovery messages sent with no crash in their sender's causal past",
                self.uncaused
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_message_is_charged_to_the_latest_crash_its_sender_knew_of() {
        // n = 4: p3 crashes at 10, p0 at 30 during the first restart.
        let crashes = [(3, 10.0, 5), (0, 30.0, 6)];
        let msgs = [
            (0, "REQUEST", 1.0),
            (1, "NOTIFY", 12.0),
            (1, "NOTIFY", 13.0),
            (1, "RESTART", 20.0),
            (1, "RESTART", 20.0),
            (1, "DONE", 35.0), // sent by a process that had not yet heard of p0's crash
            (2, "NOTIFY", 36.0),
            (2, "RESTART", 40.0),
            (2, "DONE", 45.0),
            (2, "LEAVE", 47.0),
            (2, "RESUME", 50.0),
            (2, "TOKEN", 51.0),
        ];
        let r = ObservedRecovery::of(4, 9, &crashes, msgs.into_iter());
        let c = &r.crashes;
        assert_eq!(
            (
                c[0].kinds.notify,
                c[0].kinds.restart,
                c[0].kinds.done,
                c[0].kinds.total
            ),
            (2, 2, 1, 5)
        );
        assert_eq!((c[1].kinds.total, c[1].kinds.leave), (4, 1));
        assert!(c[0].nested && !c[1].nested);
        assert_eq!((c[0].first_sent, c[0].last_sent), (Some(12.0), Some(35.0)));
        assert_eq!((c[0].entries_after, c[1].entries_after), (4, 3));
        assert!(c.iter().all(|c| c.within) && r.failures(4).is_empty());
        assert_eq!((r.messages_max, r.uncaused), (5, 0));
    }

    #[test]
    fn a_kind_past_n_minus_one_or_a_message_no_crash_caused_fails() {
        let crashes = [(3, 10.0, 0)];
        let msgs = (0..4)
            .map(|_| (1, "RESTART", 11.0))
            .chain([(0, "NOTIFY", 5.0)]);
        let r = ObservedRecovery::of(4, 0, &crashes, msgs);
        assert_eq!((r.over_bound, r.uncaused), (1, 1));
        let f = r.failures(4);
        assert!(
            f[0].contains("RESTART 4") && f[1].contains("no crash"),
            "{f:?}"
        );
    }
}
