//! Properties checked from traces of passages: first-come-first-served (P5), concurrent entry
//! (P4) and, for k-exclusion, first-in-first-enabled (FIFE).
//!
//! Every passage records four timestamps of one synchronised clock (the TSC, read with fences so
//! that it orders with the lock's memory accesses): doorway start (the request), doorway end,
//! entry into the critical section and exit from it.

use serde::Serialize;

use super::Problem;

/// One traced passage.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceRecord {
    /// Process that made the request.
    pub process: u32,
    /// Session asked for.
    pub session: u32,
    /// Request: the doorway starts.
    pub doorway_start: u64,
    /// The doorway ends (the lock's `enter_traced` callback).
    pub doorway_end: u64,
    /// Inside the critical section.
    pub cs_enter: u64,
    /// Leaving the critical section.
    pub cs_exit: u64,
    /// Processes inside at entry as the oracle saw them (0 when the oracle was off).
    pub inside: u32,
    /// The lock reported the end of its doorway; when false, `doorway_end` is the request.
    pub doorway_observed: bool,
}

/// What the trace shows.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize, PartialEq)]
#[serde(default)]
pub struct TraceReport {
    /// Passages analysed.
    pub passages: u64,
    /// The lock reported its doorway for every passage. When false, FCFS is judged from the
    /// requests (arrival order), which a lock may legitimately break by a few nanoseconds
    /// before its doorway fixes the order.
    pub doorway_observed: bool,
    /// Passages that entered before a conflicting request that doorway-preceded them (P5:
    /// "if i doorway-precedes j and they conflict, j does not enter before i").
    pub fcfs_violations: u64,
    /// One FCFS violation, described.
    pub fcfs_example: Option<String>,
    /// Passages during whose whole wait (doorway start to entry) no conflicting request was
    /// active: under concurrent entry (P4) these should enter without waiting on each other.
    pub unconflicted_passages: u64,
    /// Waiting time (doorway end to entry) of those passages, median, ns.
    pub unconflicted_wait_p50_ns: Option<f64>,
    /// Waiting time of those passages, maximum, ns.
    pub unconflicted_wait_max_ns: Option<f64>,
    /// k-exclusion: passages that overtook a doorway-preceding request while k were inside,
    /// so the overtaken request had no free place (FIFE violated). None when not applicable
    /// (other problems, or the oracle off so occupancy is unknown).
    pub fife_violations: Option<u64>,
    /// The trace buffer filled and later passages were not traced.
    pub truncated: bool,
}

/// Running maxima of a value over a prefix, kept for the two best distinct sessions so that
/// "the best over sessions other than s" is answered in O(1).
#[derive(Clone, Copy, Default)]
struct TopTwo {
    best: Option<(u64, u32, usize)>,
    second: Option<(u64, u32, usize)>,
}

impl TopTwo {
    fn add(&mut self, value: u64, session: u32, index: usize) {
        let cand = Some((value, session, index));
        match self.best {
            None => self.best = cand,
            Some((v, s, _)) if s == session => {
                if value > v {
                    self.best = cand;
                }
            }
            Some((v, _, _)) if value > v => {
                self.second = self.best;
                self.best = cand;
            }
            _ => match self.second {
                Some((v2, s2, _)) if s2 != session || value <= v2 => {
                    if value > v2 {
                        self.second = cand;
                    }
                }
                _ => self.second = cand,
            },
        }
    }

    /// The largest value among sessions other than `session` (any session when `any`).
    fn best_except(&self, session: u32, any: bool) -> Option<(u64, u32, usize)> {
        match self.best {
            Some(b) if any || b.1 != session => Some(b),
            _ => self.second,
        }
    }
}

/// Analyses a trace of a lock solving `problem` (capacity `k`). `ns_per_tick` converts
/// timestamps for the report.
pub fn analyze(
    records: &[TraceRecord],
    problem: Problem,
    k: usize,
    ns_per_tick: f64,
    truncated: bool,
) -> TraceReport {
    // Mutual exclusion: every two requests conflict. k-exclusion: FCFS is not its property;
    // it is analysed as every pair conflicting for FIFE.
    let any = problem != Problem::Gme;
    let mut report = TraceReport {
        passages: records.len() as u64,
        doorway_observed: !records.is_empty() && records.iter().all(|r| r.doorway_observed),
        truncated,
        ..Default::default()
    };

    // FCFS: i doorway-precedes j when doorway_end_i < doorway_start_j. Sort by doorway end and
    // sweep the requests j in order of doorway start, keeping the latest entry among the
    // requests that doorway-precede j.
    let mut by_dend: Vec<usize> = (0..records.len()).collect();
    by_dend.sort_by_key(|&i| records[i].doorway_end);
    let mut by_dstart: Vec<usize> = (0..records.len()).collect();
    by_dstart.sort_by_key(|&i| records[i].doorway_start);
    let mut top = TopTwo::default();
    let mut next = 0;
    let mut fife = 0u64;
    for &j in &by_dstart {
        let rj = &records[j];
        while next < by_dend.len() && records[by_dend[next]].doorway_end < rj.doorway_start {
            let i = by_dend[next];
            top.add(records[i].cs_enter, records[i].session, i);
            next += 1;
        }
        if let Some((enter_i, _, i)) = top.best_except(rj.session, any) {
            if enter_i > rj.cs_enter {
                if problem == Problem::KExclusion {
                    if rj.inside as usize >= k {
                        fife += 1;
                    }
                } else {
                    report.fcfs_violations += 1;
                    if report.fcfs_example.is_none() {
                        let ri = &records[i];
                        report.fcfs_example = Some(format!(
                            "process {} (session {}) {} {:.0} ns before process {} (session {}) \
                             started its own, yet entered {:.0} ns after it",
                            ri.process,
                            ri.session,
                            if ri.doorway_observed {
                                "finished its doorway"
                            } else {
                                "made its request (doorway not observable)"
                            },
                            (rj.doorway_start - ri.doorway_end) as f64 * ns_per_tick,
                            rj.process,
                            rj.session,
                            (ri.cs_enter - rj.cs_enter) as f64 * ns_per_tick,
                        ));
                    }
                }
            }
        }
    }
    if problem == Problem::KExclusion {
        let oracle_on = records.iter().any(|r| r.inside > 0);
        report.fife_violations = oracle_on.then_some(fife);
    }

    // Concurrent entry: a conflicting request i is active during j's wait when
    // doorway_start_i <= cs_enter_j and cs_exit_i >= doorway_start_j (i != j). Sweep the j in
    // order of entry, keeping the latest exit among the requests started before it.
    if problem == Problem::Gme {
        let mut by_enter: Vec<usize> = (0..records.len()).collect();
        by_enter.sort_by_key(|&i| records[i].cs_enter);
        let mut top = TopTwo::default();
        let mut next = 0;
        let mut waits = Vec::new();
        for &j in &by_enter {
            let rj = &records[j];
            while next < by_dstart.len() && records[by_dstart[next]].doorway_start <= rj.cs_enter {
                let i = by_dstart[next];
                top.add(records[i].cs_exit, records[i].session, i);
                next += 1;
            }
            let conflicted = top
                .best_except(rj.session, false)
                .is_some_and(|(exit_i, _, _)| exit_i >= rj.doorway_start);
            if !conflicted {
                waits.push(rj.cs_enter.saturating_sub(rj.doorway_end));
            }
        }
        report.unconflicted_passages = waits.len() as u64;
        if !waits.is_empty() {
            waits.sort_unstable();
            report.unconflicted_wait_p50_ns = Some(waits[waits.len() / 2] as f64 * ns_per_tick);
            report.unconflicted_wait_max_ns = Some(*waits.last().unwrap() as f64 * ns_per_tick);
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(process: u32, session: u32, t: [u64; 4]) -> TraceRecord {
        TraceRecord {
            process,
            session,
            doorway_start: t[0],
            doorway_end: t[1],
            cs_enter: t[2],
            cs_exit: t[3],
            inside: 1,
            doorway_observed: true,
        }
    }

    #[test]
    fn fifo_trace_has_no_fcfs_violation() {
        let t = [
            rec(0, 0, [0, 1, 2, 5]),
            rec(1, 1, [3, 4, 6, 8]),
            rec(2, 2, [4, 5, 9, 10]),
        ];
        let r = analyze(&t, Problem::Mutex, 1, 1.0, false);
        assert_eq!(r.fcfs_violations, 0);
        assert_eq!(r.passages, 3);
    }

    #[test]
    fn overtaking_is_an_fcfs_violation() {
        // 0 finishes its doorway at 1; 1 starts at 2 and enters at 3, before 0 (at 6).
        let t = [rec(0, 0, [0, 1, 6, 7]), rec(1, 1, [2, 3, 3, 5])];
        let r = analyze(&t, Problem::Mutex, 1, 1.0, false);
        assert_eq!(r.fcfs_violations, 1);
        assert!(r.fcfs_example.unwrap().contains("process 0"));
    }

    #[test]
    fn gme_same_session_may_overtake_but_not_a_conflicting_one() {
        let same = [rec(0, 7, [0, 1, 6, 7]), rec(1, 7, [2, 3, 3, 5])];
        assert_eq!(
            analyze(&same, Problem::Gme, 1, 1.0, false).fcfs_violations,
            0
        );
        let other = [rec(0, 7, [0, 1, 6, 7]), rec(1, 8, [2, 3, 3, 5])];
        assert_eq!(
            analyze(&other, Problem::Gme, 1, 1.0, false).fcfs_violations,
            1
        );
        // The latest-entering preceding request of the *other* session is found even when a
        // later-entering one of j's own session precedes it.
        let mixed = [
            rec(0, 8, [0, 1, 9, 10]),
            rec(2, 7, [0, 1, 20, 21]),
            rec(1, 7, [2, 3, 4, 5]),
        ];
        assert_eq!(
            analyze(&mixed, Problem::Gme, 1, 1.0, false).fcfs_violations,
            1
        );
    }

    #[test]
    fn concurrent_entry_counts_unconflicted_waits() {
        // Two same-session requests overlapping, then a conflicting one later.
        let t = [
            rec(0, 1, [0, 1, 2, 10]),
            rec(1, 1, [3, 4, 8, 12]),
            rec(2, 2, [20, 21, 22, 23]),
        ];
        let r = analyze(&t, Problem::Gme, 1, 1.0, false);
        assert_eq!(r.unconflicted_passages, 3);
        assert_eq!(r.unconflicted_wait_max_ns, Some(4.0));
        // Now the conflicting request is active while process 1 waits.
        let t = [
            rec(0, 1, [0, 1, 2, 10]),
            rec(2, 2, [3, 4, 11, 12]),
            rec(1, 1, [5, 6, 13, 14]),
        ];
        let r = analyze(&t, Problem::Gme, 1, 1.0, false);
        assert_eq!(r.unconflicted_passages, 1);
    }

    #[test]
    fn fife_needs_a_full_lock_to_be_broken() {
        let mut a = rec(0, 0, [0, 1, 6, 7]);
        let mut b = rec(1, 0, [2, 3, 3, 5]);
        a.inside = 1;
        b.inside = 1; // overtook with a free place left (k = 2): allowed
        let r = analyze(&[a, b], Problem::KExclusion, 2, 1.0, false);
        assert_eq!(r.fife_violations, Some(0));
        b.inside = 2; // overtook and filled the lock: the overtaken request was not enabled
        let r = analyze(&[a, b], Problem::KExclusion, 2, 1.0, false);
        assert_eq!(r.fife_violations, Some(1));
        assert_eq!(r.fcfs_violations, 0);
    }

    #[test]
    fn top_two_keeps_distinct_sessions() {
        let mut t = TopTwo::default();
        t.add(5, 1, 0);
        t.add(9, 1, 1);
        t.add(7, 2, 2);
        t.add(3, 3, 3);
        assert_eq!(t.best_except(1, false).map(|b| b.0), Some(7));
        assert_eq!(t.best_except(2, false).map(|b| b.0), Some(9));
        assert_eq!(t.best_except(2, true).map(|b| b.0), Some(9));
        t.add(8, 2, 4);
        assert_eq!(t.best_except(1, false).map(|b| b.0), Some(8));
    }
}
