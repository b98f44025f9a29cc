//! Sessions a request was passed over, as the simulator sees them from outside the algorithm
//! (seed 003 Theorem 6): no session number or age of the algorithm is read. The entries, in
//! the order they happen, fall into runs of one type; a group mutual exclusion algorithm
//! cannot admit two types at once, so each run of another type than the one before it is a
//! session of its own. A request made when `k` runs had begun and served when `k'` had begun
//! (its own entry counted) was passed over by `k' − k − 1` of them: every run that began while
//! it waited except the one it entered in (0 when it joined a run begun before it asked).
//!
//! Consecutive sessions of one type look like one run, so the figure never counts more
//! sessions than the algorithm started, but one: a session started before the request whose
//! first entry comes after it. A starving request shows as a count that grows with the run.

use crate::mp::{Group, Pid};

/// Runs of entries of one type, and where each process's current request began.
#[derive(Debug)]
pub(super) struct Passed {
    /// Runs begun so far.
    runs: u64,
    /// The type of the latest entry.
    last: Option<Group>,
    /// Per process: `runs` when its current request was made.
    at_request: Vec<u64>,
    /// The most runs one request was passed over by (None: nobody entered yet).
    pub(super) max: Option<u64>,
    /// The first request passed over by `max`, described.
    pub(super) worst: Option<String>,
}

impl Passed {
    /// For `n` processes.
    pub(super) fn new(n: usize) -> Self {
        Passed {
            runs: 0,
            last: None,
            at_request: vec![0; n],
            max: None,
            worst: None,
        }
    }

    /// `p` asks to enter.
    pub(super) fn request(&mut self, p: Pid) {
        self.at_request[p] = self.runs;
    }

    /// `p` enters type `g` at `now`, having asked at `since`.
    pub(super) fn entry(&mut self, p: Pid, g: Group, since: f64, now: f64) {
        if self.last != Some(g) {
            self.runs += 1;
            self.last = Some(g);
        }
        let passed = (self.runs - self.at_request[p]).saturating_sub(1);
        if self.max.is_none_or(|m| passed > m) {
            self.max = Some(passed);
            self.worst = Some(format!(
                "p{p} asked at t={since:.3} and entered type {g} at t={now:.3} after {passed} sessions of other types began"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_other_types_begun_while_waiting_are_counted() {
        let mut s = Passed::new(3);
        // p0 asks for type 0 while type 1 and 2 sessions come and go.
        s.request(0);
        s.entry(1, 1, 0.0, 1.0);
        s.request(1);
        s.entry(2, 2, 0.0, 2.0);
        s.entry(1, 1, 1.5, 3.0);
        s.entry(0, 0, 0.0, 4.0);
        assert_eq!(s.max, Some(3));
        // p1 (asked after the first run began) was passed over by the type 2 run only; p2
        // asks for type 0 and joins the run in progress: passed over by none.
        s.request(2);
        s.entry(2, 0, 4.5, 5.0);
        assert_eq!(s.max, Some(3));
        assert!(s.worst.unwrap().contains("p0 asked at t=0.000"));
        // A repeated type is one run.
        let mut s = Passed::new(2);
        s.request(0);
        s.entry(1, 1, 0.0, 1.0);
        s.entry(1, 1, 1.0, 2.0);
        s.entry(0, 0, 0.0, 3.0);
        assert_eq!(s.max, Some(1));
    }
}
