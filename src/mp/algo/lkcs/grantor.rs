//! The grantor's side of Algorithm 5 (Algorithm 2 for LMUTIN): Cond_i, granting, preemption,
//! and the grantor's half of LK-15.

use super::{At, Cause, LkMsg, Local, Variant};
use crate::mp::{Pid, Runtime};

impl Local {
    /// Grants the lowest pending requests while Cond_i holds (LK-7).
    pub(super) fn serve(&mut self, rt: &mut dyn Runtime<LkMsg>, at: At) {
        while self.cond(at) {
            let Some(h) = self.pending[at].pop_first() else {
                break;
            };
            self.give(rt, at, h);
        }
    }

    /// Grants the lowest pending request whatever the count (a Relinquish hands a grant on).
    pub(super) fn grant_min(&mut self, rt: &mut dyn Runtime<LkMsg>, at: At) {
        if let Some(h) = self.pending[at].pop_first() {
            self.give(rt, at, h);
        }
    }

    /// Records and sends one grant.
    pub(super) fn give(&mut self, rt: &mut dyn Runtime<LkMsg>, at: At, h: (u64, Pid)) {
        self.failed_sent[at].remove(&h);
        let mut generation = 0;
        if let Some(s) = self.slot(h.1) {
            self.completed[at][s] = false;
            generation = self.req_gen[at][s];
        }
        self.granted_to[at].insert(h);
        // Counting only: a grant given again after a preemption is charged to the preemptor.
        let again = self.regrant[at].remove(&h);
        rt.send(h.1, LkMsg::Grant(at, h.0, generation, again));
    }

    /// Asks the holder of the highest granted request of `at` to give it back if `than`
    /// is older (Algorithm 5's preemption); in LKCS no grant whose holder has completed its
    /// transition is asked (LK-11).
    pub(super) fn maybe_preempt(
        &mut self,
        rt: &mut dyn Runtime<LkMsg>,
        at: At,
        than: (u64, Pid),
        inferred: bool,
    ) {
        if self.preempting[at].is_some() {
            return;
        }
        let target = self.granted_to[at]
            .iter()
            .rev()
            .find(|&&(_, p)| self.slot(p).is_some_and(|s| !self.completed[at][s]))
            .copied();
        if let Some(h) = target {
            if than < h {
                self.preempting[at] = Some(h);
                let cause = Cause {
                    of: than.1,
                    inferred,
                };
                rt.send(h.1, LkMsg::Preempt(at, h.0, cause));
            }
        }
    }

    /// LK-11: a Release of the other kind from `p` means `p` completed the transition its
    /// grant of `at` was for; a preemption aimed at it is void, so aim again.
    pub(super) fn completes(&mut self, rt: &mut dyn Runtime<LkMsg>, at: At, p: Pid) {
        if self.variant != Variant::Lkcs {
            return;
        }
        let Some(s) = self.slot(p) else {
            return;
        };
        if !self.granted_to[at].iter().any(|&(_, q)| q == p) {
            return;
        }
        self.completed[at][s] = true;
        if self.preempting[at].is_some_and(|(_, q)| q == p) {
            self.preempting[at] = None;
        }
        self.review(rt, at);
    }

    /// After any change to `at`: serve what fits (LK-7); in LKCS, aim a preemption for the
    /// oldest pending request and, when every holder of `at` here has completed its
    /// transition, tell each pending request once that it is blocked here (LK-15).
    pub(super) fn review(&mut self, rt: &mut dyn Runtime<LkMsg>, at: At) {
        self.serve(rt, at);
        if self.variant != Variant::Lkcs || self.pending[at].is_empty() {
            return;
        }
        if let Some(&h) = self.pending[at].first() {
            // LK-11: aimed again, for the oldest pending request, after any change here.
            self.maybe_preempt(rt, at, h, true);
        }
        if !self.rules.park {
            return;
        }
        let all_completed = self.granted_to[at]
            .iter()
            .all(|&(_, p)| self.slot(p).is_some_and(|s| self.completed[at][s]));
        if all_completed {
            let fresh: Vec<(u64, Pid)> = self.pending[at]
                .difference(&self.failed_sent[at])
                .copied()
                .collect();
            for r in fresh {
                self.failed_sent[at].insert(r);
                let generation = self.slot(r.1).map_or(0, |s| self.req_gen[at][s]);
                rt.send(r.1, LkMsg::Failed(at, r.0, generation));
            }
        }
    }

    /// Algorithm 5, on receipt of ⟨Request, at, ts_j, P_j⟩: pendingReq ∪= {(ts_j, P_j)}; grant
    /// the lowest if Cond_i, else preempt the highest granted if (ts_j, P_j) is lower and no
    /// preemption is in progress.
    pub(super) fn on_request_msg(
        &mut self,
        rt: &mut dyn Runtime<LkMsg>,
        from: Pid,
        at: At,
        ts: u64,
    ) {
        if self.rules.clock {
            // LK-16.
            self.clock = self.clock.max(ts);
        }
        if let Some(s) = self.slot(from) {
            self.req_gen[at][s] = 0;
        }
        self.regrant[at].retain(|&(_, p), _| p != from);
        self.pending[at].insert((ts, from));
        if self.cond(at) {
            self.serve(rt, at);
        } else {
            self.maybe_preempt(rt, at, (ts, from), false);
        }
        self.review(rt, at);
    }

    /// Algorithm 5, on receipt of ⟨Release, at, P_j⟩: clear preemptingNow if it names P_j,
    /// delete P_j's grant, grant pending requests (LK-7); the Release of the other kind
    /// completes P_j's transition (LK-11).
    pub(super) fn on_release(&mut self, rt: &mut dyn Runtime<LkMsg>, from: Pid, at: At) {
        if self.preempting[at].is_some_and(|(_, p)| p == from) {
            self.preempting[at] = None;
        }
        self.granted_to[at].retain(|&(_, p)| p != from);
        self.review(rt, at);
        self.completes(rt, 1 - at, from);
    }

    /// Algorithm 5, on receipt of ⟨Relinquish, at, P_j⟩: preemptingNow := nil; the grant
    /// goes back to pendingReq and the lowest pending request is granted.
    pub(super) fn on_relinquish(
        &mut self,
        rt: &mut dyn Runtime<LkMsg>,
        from: Pid,
        at: At,
        t: u64,
        cause: Cause,
    ) {
        if self.preempting[at].is_some_and(|(_, p)| p == from) {
            self.preempting[at] = None;
        }
        // LK-4, LK-13: only the grant that was preempted goes back.
        if self.granted_to[at].remove(&(t, from)) {
            self.pending[at].insert((t, from));
            self.regrant[at].insert((t, from), cause);
            self.grant_min(rt, at);
        }
        self.review(rt, at);
    }

    /// LK-15: the grant of request t is taken back, and the request waits parked.
    pub(super) fn on_park(&mut self, rt: &mut dyn Runtime<LkMsg>, from: Pid, at: At, t: u64) {
        let r = (t, from);
        self.pending[at].remove(&r);
        self.granted_to[at].remove(&r);
        self.failed_sent[at].remove(&r);
        if self.preempting[at] == Some(r) {
            self.preempting[at] = None;
        }
        self.parked[at].insert(r);
        self.review(rt, at);
    }

    /// LK-15: the parked request t is pending again, at generation g.
    pub(super) fn on_resume(
        &mut self,
        rt: &mut dyn Runtime<LkMsg>,
        from: Pid,
        at: At,
        t: u64,
        g: u32,
    ) {
        if self.parked[at].remove(&(t, from)) {
            if let Some(s) = self.slot(from) {
                self.req_gen[at][s] = g;
            }
            self.pending[at].insert((t, from));
            self.review(rt, at);
        }
    }
}
