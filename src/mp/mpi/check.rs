//! Safety and the shared figures from logs, for a runtime where no single memory sees every
//! process: each process logs its critical sections and waits in a clock synchronised to one
//! reference, with a known error bound per process, and the checks run on the gathered logs.
//!
//! An overlap counts as a violation only beyond the clocks' uncertainty: two intervals logged
//! on hosts with error bounds e_i and e_j conflict when they overlap by more than e_i + e_j
//! (0 when both come from one clock). For the local critical-section bounds, a process is
//! *certainly inside* on its interval shrunk by its error bound (the k_i check) and *possibly
//! inside* on it widened by the bound (the l_i check).

use serde::{Deserialize, Serialize};

use crate::mp::{Group, Pid, Problem};

/// One critical section of one process, times in ms of the synchronised clock.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CsInterval {
    /// The process.
    pub p: Pid,
    /// Its group.
    pub group: Group,
    /// When it entered (`None`: inside from the start, seed 004's initial configuration).
    pub enter: Option<f64>,
    /// When it left (`None`: still inside at the end).
    pub exit: Option<f64>,
}

/// A process asked (to enter, or for local critical sections also to leave) at this time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WaitStart {
    /// The process.
    pub p: Pid,
    /// When it asked, ms of the synchronised clock.
    pub at: f64,
}

/// What the checks need besides the logs.
#[derive(Clone, Debug)]
pub struct Spec {
    /// The problem, which chooses the check.
    pub problem: Problem,
    /// Local critical sections: each process's closed neighbourhood (empty otherwise).
    pub closed: Vec<Vec<Pid>>,
    /// Lower bounds l_i.
    pub l: Vec<usize>,
    /// Upper bounds k_i.
    pub k: Vec<usize>,
    /// The clock each process's times were read from (its rank).
    pub clock_of: Vec<usize>,
    /// Error bound of each clock, ms.
    pub error_of_clock: Vec<f64>,
}

/// What the checks found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Verdict {
    /// Violations beyond the error bound.
    pub count: u64,
    /// The first few, described.
    pub described: Vec<String>,
}

impl Verdict {
    fn add(&mut self, what: String) {
        self.count += 1;
        if self.described.len() < 5 {
            self.described.push(what);
        }
    }
}

impl Spec {
    fn err(&self, p: Pid) -> f64 {
        self.error_of_clock[self.clock_of[p]]
    }

    /// The slack two processes' intervals may overlap by: 0 on one clock.
    fn slack(&self, a: Pid, b: Pid) -> f64 {
        if self.clock_of[a] == self.clock_of[b] {
            0.0
        } else {
            self.err(a) + self.err(b)
        }
    }
}

/// Checks the gathered intervals; `end` is when the run stopped (open intervals end there).
pub fn check(spec: &Spec, intervals: &[CsInterval], end: f64) -> Verdict {
    match spec.problem {
        Problem::Mutex | Problem::Gme => pairwise(spec, intervals, end),
        Problem::LocalCs => local(spec, intervals, end),
    }
}

fn bounds(iv: &CsInterval, end: f64) -> (f64, f64) {
    (
        iv.enter.unwrap_or(f64::NEG_INFINITY),
        iv.exit.unwrap_or(end),
    )
}

/// Mutual exclusion (any two) and GME (two of different groups): overlap beyond the slack.
fn pairwise(spec: &Spec, intervals: &[CsInterval], end: f64) -> Verdict {
    let mut v = Verdict::default();
    let mut order: Vec<(f64, f64, &CsInterval)> = intervals
        .iter()
        .map(|iv| {
            let (a, b) = bounds(iv, end);
            (a, b, iv)
        })
        .collect();
    order.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.2.p.cmp(&y.2.p)));
    let mut active: Vec<(f64, f64, &CsInterval)> = Vec::new();
    for &(a, b, iv) in &order {
        active.retain(|x| x.1 > a);
        for &(_, bj, jv) in &active {
            if jv.p == iv.p || (spec.problem == Problem::Gme && jv.group == iv.group) {
                continue;
            }
            let overlap = b.min(bj) - a;
            let slack = spec.slack(iv.p, jv.p);
            if overlap > slack {
                let what = match spec.problem {
                    Problem::Gme => format!(
                        "p{} entered group {} at {a:.3} ms while p{} of group {} was inside until {bj:.3} ms: {overlap:.3} ms together, clock slack {slack:.3} ms",
                        iv.p, iv.group, jv.p, jv.group
                    ),
                    _ => format!(
                        "p{} entered at {a:.3} ms while p{} was inside until {bj:.3} ms: {overlap:.3} ms together, clock slack {slack:.3} ms",
                        iv.p, jv.p
                    ),
                };
                v.add(what);
            }
        }
        active.push((a, b, iv));
    }
    v
}

/// l_i ≤ |CS_i| ≤ k_i in every closed neighbourhood, with certainly-inside intervals for k_i
/// and possibly-inside ones for l_i, over the run's span [0, end].
fn local(spec: &Spec, intervals: &[CsInterval], end: f64) -> Verdict {
    let mut v = Verdict::default();
    let n = spec.closed.len();
    let mut by_proc: Vec<Vec<(f64, f64)>> = vec![Vec::new(); n];
    for iv in intervals {
        by_proc[iv.p].push(bounds(iv, end));
    }
    for u in 0..n {
        // (time, +1 enter / −1 exit) for the certainly-inside and possibly-inside views.
        let mut sure: Vec<(f64, i32)> = Vec::new();
        let mut maybe: Vec<(f64, i32)> = Vec::new();
        for &p in &spec.closed[u] {
            let e = spec.err(p);
            for &(a, b) in &by_proc[p] {
                if b - a > 2.0 * e {
                    sure.push((a + e, 1));
                    sure.push((b - e, -1));
                }
                maybe.push((a - e, 1));
                maybe.push((b + e, -1));
            }
        }
        // Touching intervals: for "certainly inside" a leave and an entry at one instant do
        // not overlap (leaves first); for "possibly inside" they do (entries first).
        sure.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        maybe.sort_by(|x, y| x.0.total_cmp(&y.0).then(y.1.cmp(&x.1)));
        sweep(&sure, end, |count, t, entered, _| {
            if entered && count > spec.k[u] as i64 {
                v.add(format!(
                    "|CS_{u}| = {count} > k = {} at {t:.3} ms (beyond the clocks' error)",
                    spec.k[u]
                ));
            }
        });
        sweep(&maybe, end, |count, t, _, left| {
            if left && count < spec.l[u] as i64 {
                v.add(format!(
                    "|CS_{u}| = {count} < l = {} at {t:.3} ms (beyond the clocks' error)",
                    spec.l[u]
                ));
            }
        });
    }
    v
}

/// Runs through sorted ±1 events, calling `at(count, time, any entry, any exit)` after each
/// instant within [0, end).
fn sweep(events: &[(f64, i32)], end: f64, mut at: impl FnMut(i64, f64, bool, bool)) {
    let mut count = 0i64;
    let mut i = 0;
    while i < events.len() {
        let t = events[i].0;
        let (mut entered, mut left) = (false, false);
        while i < events.len() && events[i].0 == t {
            count += events[i].1 as i64;
            entered |= events[i].1 > 0;
            left |= events[i].1 < 0;
            i += 1;
        }
        if (0.0..end).contains(&t) {
            at(count, t, entered, left);
        }
    }
}

/// The figures a global monitor would have kept, from the logs: synchronization delay
/// (`sync`: last exit with someone waiting → next entry, not for local critical sections),
/// the time integral of processes inside, the time with anyone inside, the most inside at
/// once, and the critical sections completed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Shared {
    /// Sum of synchronization delays, ms.
    pub sync_sum: f64,
    /// Synchronization delays recorded.
    pub sync_count: u64,
    /// Largest synchronization delay, ms.
    pub sync_max: f64,
    /// ∫ inside dt, ms.
    pub inside_integral: f64,
    /// Time with at least one process inside, ms.
    pub busy_time: f64,
    /// Most inside at once.
    pub inside_max: usize,
    /// Exits.
    pub completed: u64,
}

/// Replays the logs in time order, as the threaded runtime's monitor sees them live.
pub fn shared(
    problem: Problem,
    n: usize,
    intervals: &[CsInterval],
    waits: &[WaitStart],
    end: f64,
) -> Shared {
    // (time, order at one instant: exits, then asks, then entries; process; kind)
    let mut ev: Vec<(f64, u8, Pid)> = Vec::new();
    let mut inside = 0usize;
    for iv in intervals {
        match iv.enter {
            Some(t) => ev.push((t, 2, iv.p)),
            None => inside += 1,
        }
        if let Some(t) = iv.exit {
            ev.push((t, 0, iv.p));
        }
    }
    for w in waits {
        ev.push((w.at, 1, w.p));
    }
    ev.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2)));
    let mut s = Shared {
        inside_max: inside,
        ..Shared::default()
    };
    let mut waiting = vec![false; n];
    let mut n_waiting = 0usize;
    let mut empty_since: Option<f64> = None;
    let mut last = ev.first().map_or(0.0, |e| e.0.min(0.0));
    let tick = |s: &mut Shared, inside: usize, t: f64, last: &mut f64| {
        let dt = (t - *last).max(0.0);
        if inside > 0 {
            s.inside_integral += dt * inside as f64;
            s.busy_time += dt;
        }
        *last = t.max(*last);
    };
    for &(t, kind, p) in &ev {
        tick(&mut s, inside, t, &mut last);
        match kind {
            0 => {
                if std::mem::take(&mut waiting[p]) {
                    n_waiting -= 1;
                }
                inside = inside.saturating_sub(1);
                s.completed += 1;
                if inside == 0 && n_waiting > 0 && problem != Problem::LocalCs {
                    empty_since = Some(t);
                }
            }
            1 => {
                if !std::mem::replace(&mut waiting[p], true) {
                    n_waiting += 1;
                }
            }
            _ => {
                if std::mem::take(&mut waiting[p]) {
                    n_waiting -= 1;
                }
                if let Some(t0) = empty_since.take() {
                    let d = t - t0;
                    s.sync_sum += d;
                    s.sync_count += 1;
                    s.sync_max = s.sync_max.max(d);
                }
                inside += 1;
                s.inside_max = s.inside_max.max(inside);
            }
        }
    }
    tick(&mut s, inside, end, &mut last);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(p: Pid, group: Group, a: f64, b: f64) -> CsInterval {
        CsInterval {
            p,
            group,
            enter: Some(a),
            exit: Some(b),
        }
    }

    fn spec(problem: Problem, n: usize, clock_of: Vec<usize>, err: Vec<f64>) -> Spec {
        Spec {
            problem,
            closed: Vec::new(),
            l: vec![0; n],
            k: vec![n; n],
            clock_of,
            error_of_clock: err,
        }
    }

    #[test]
    fn mutex_overlap_within_the_slack_is_not_a_violation() {
        // Two ranks with 0.05 ms error each: slack 0.1 ms.
        let s = spec(Problem::Mutex, 2, vec![0, 1], vec![0.05, 0.05]);
        let ok = check(&s, &[iv(0, 0, 0.0, 1.0), iv(1, 0, 0.95, 2.0)], 3.0);
        assert_eq!(ok.count, 0, "{ok:?}");
        let bad = check(&s, &[iv(0, 0, 0.0, 1.0), iv(1, 0, 0.8, 2.0)], 3.0);
        assert_eq!(bad.count, 1, "{bad:?}");
        assert!(bad.described[0].contains("p1 entered"), "{bad:?}");
    }

    #[test]
    fn one_clock_has_no_slack() {
        let s = spec(Problem::Mutex, 2, vec![0, 0], vec![0.5]);
        let v = check(&s, &[iv(0, 0, 0.0, 1.0), iv(1, 0, 0.99, 2.0)], 3.0);
        assert_eq!(v.count, 1);
        // Touching is not overlapping.
        let v = check(&s, &[iv(0, 0, 0.0, 1.0), iv(1, 0, 1.0, 2.0)], 3.0);
        assert_eq!(v.count, 0);
    }

    #[test]
    fn gme_allows_one_group_together_and_flags_two() {
        let s = spec(Problem::Gme, 3, vec![0, 1, 2], vec![0.0, 0.01, 0.01]);
        let same = [iv(0, 1, 0.0, 5.0), iv(1, 1, 1.0, 6.0), iv(2, 1, 2.0, 3.0)];
        assert_eq!(check(&s, &same, 10.0).count, 0);
        let mixed = [iv(0, 1, 0.0, 5.0), iv(1, 1, 1.0, 6.0), iv(2, 2, 5.5, 7.0)];
        let v = check(&s, &mixed, 10.0);
        assert_eq!(v.count, 1, "{v:?}");
        assert!(v.described[0].contains("group 2"), "{v:?}");
        // An interval still open at the end runs to the end.
        let open = [
            CsInterval {
                p: 0,
                group: 1,
                enter: Some(0.0),
                exit: None,
            },
            iv(2, 2, 8.0, 9.0),
        ];
        assert_eq!(check(&s, &open, 10.0).count, 1);
    }

    #[test]
    fn local_bounds_with_certain_and_possible_insides() {
        // A path 0 - 1 - 2; closed neighbourhood of 1 is {0, 1, 2}; l = 1, k = 2 everywhere.
        let closed = vec![vec![1, 0], vec![0, 2, 1], vec![1, 2]];
        let mut s = spec(Problem::LocalCs, 3, vec![0, 1, 2], vec![0.1, 0.1, 0.1]);
        s.closed = closed;
        s.l = vec![1; 3];
        s.k = vec![2; 3];
        let always = |p| CsInterval {
            p,
            group: 0,
            enter: None,
            exit: None,
        };
        let from = |p, a| CsInterval {
            p,
            group: 0,
            enter: Some(a),
            exit: None,
        };
        let until = |p, b| CsInterval {
            p,
            group: 0,
            enter: None,
            exit: Some(b),
        };
        // p1 hands over to p0 with a gap within the slack; p2 is already in.
        let fine = [until(1, 5.0), from(0, 5.1), from(2, 4.95)];
        assert_eq!(check(&s, &fine, 20.0), Verdict::default());
        // A gap of 1 ms: |CS_0| = 0 < l = 1 beyond the error.
        let gap = [until(1, 5.0), from(0, 6.0), from(2, 4.0)];
        let v = check(&s, &gap, 20.0);
        assert_eq!(v.count, 1, "{v:?}");
        assert!(v.described[0].contains("|CS_0| = 0 < l"), "{v:?}");
        // All three inside together: |CS_1| = 3 > k = 2.
        let crowd = [always(1), iv(0, 0, 0.0, 10.0), iv(2, 0, 0.0, 10.0)];
        let v = check(&s, &crowd, 20.0);
        assert_eq!(v.count, 1, "{v:?}");
        assert!(v.described[0].contains("|CS_1| = 3 > k"), "{v:?}");
    }

    #[test]
    fn shared_figures_replay_a_monitor() {
        // p0 inside 0..2 while p1 asks at 1; p1 enters at 3: sync delay 1; then p1 leaves at 4.
        let ivs = [iv(0, 0, 0.0, 2.0), iv(1, 0, 3.0, 4.0)];
        let waits = [WaitStart { p: 0, at: 0.0 }, WaitStart { p: 1, at: 1.0 }];
        let s = shared(Problem::Mutex, 2, &ivs, &waits, 5.0);
        assert_eq!(s.completed, 2);
        assert_eq!(s.sync_count, 1);
        assert!((s.sync_sum - 1.0).abs() < 1e-9);
        assert!((s.busy_time - 3.0).abs() < 1e-9);
        assert!((s.inside_integral - 3.0).abs() < 1e-9);
        assert_eq!(s.inside_max, 1);
        // Two inside together for 1 ms.
        let ivs = [iv(0, 0, 0.0, 2.0), iv(1, 0, 1.0, 3.0)];
        let s = shared(Problem::Gme, 2, &ivs, &[], 3.0);
        assert_eq!(s.inside_max, 2);
        assert!((s.inside_integral - 4.0).abs() < 1e-9);
        assert!((s.busy_time - 3.0).abs() < 1e-9);
        assert_eq!(s.sync_count, 0);
    }
}
