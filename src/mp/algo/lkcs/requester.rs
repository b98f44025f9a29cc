//! The requester's side of Algorithms 4 and 5 (Algorithm 2 for LMUTIN): asking, counting
//! grants, obeying a Preempt, completing the transition, and the requester's half of LK-15.

use std::collections::BTreeSet;

use super::{At, Cause, LkMsg, Local, Variant, MUTEX, MUTIN};
use crate::mp::{Observation, Path, Pid, Runtime};

impl Local {
    /// Algorithm 4: nGrants_i[at] := ∅; send ⟨Request, at, ts_i, P_i⟩ to N_i ∪ {P_i}.
    pub(super) fn start(&mut self, rt: &mut dyn Runtime<LkMsg>, at: At) {
        self.n_grants[at].clear();
        self.blocked.clear();
        self.parked_at = None;
        self.sent_gen.iter_mut().for_each(|g| *g = 0);
        self.requesting = Some(at);
        self.broadcast(rt, LkMsg::Request(at, self.ts));
    }

    /// LK-15: a Grant or Failed of generation `g` from `from` answers the request as last
    /// sent there.
    pub(super) fn current(&self, from: Pid, g: u32) -> bool {
        self.slot(from).is_some_and(|s| self.sent_gen[s] == g)
    }

    /// LK-15: blocked by a completed configuration, give back every grant held and park the
    /// request at every grantor but the blocking ones.
    pub(super) fn park(&mut self, rt: &mut dyn Runtime<LkMsg>, at: At) {
        let mut set = BTreeSet::new();
        for s in 0..self.closed.len() {
            let j = self.closed[s];
            if !self.blocked.contains(&j) {
                set.insert(j);
                self.sent_gen[s] += 1;
                rt.send(j, LkMsg::Park(at, self.ts));
            }
        }
        self.n_grants[at].clear();
        self.parked_at = Some(set);
        rt.observe(Observation::Path(Path::Machinery));
        rt.observe(Observation::Blocked(true));
    }

    /// LK-15: once every blocking grantor has granted, the request is pending again where it
    /// was parked.
    pub(super) fn unpark(&mut self, rt: &mut dyn Runtime<LkMsg>, at: At) {
        if !self.blocked.is_empty() {
            return;
        }
        if let Some(set) = self.parked_at.take() {
            rt.observe(Observation::Blocked(false));
            for j in set {
                let g = self.slot(j).map_or(0, |s| self.sent_gen[s]);
                rt.send(j, LkMsg::Resume(at, self.ts, g));
            }
        }
    }

    /// Completes the transition once |N_i| + 1 grants are held.
    pub(super) fn check_done(&mut self, rt: &mut dyn Runtime<LkMsg>) {
        let Some(at) = self.requesting else {
            return;
        };
        // LK-14e: P_LDR waiting after TriggerNomination() completes nothing (`leader_step`).
        if self.n_grants[at].len() < self.closed.len() || self.nominating {
            return;
        }
        self.requesting = None;
        if at == MUTIN {
            self.inside = false;
            rt.exited();
            if self.variant == Variant::Lkcs {
                self.broadcast(rt, LkMsg::Release(MUTEX));
            }
        } else {
            self.inside = true;
            rt.enter();
            self.broadcast(rt, LkMsg::Release(MUTIN));
        }
    }

    /// Algorithm 5, on receipt of ⟨Grant, at, P_j⟩: nGrants_i[at] ∪= {P_j}.
    pub(super) fn on_grant(
        &mut self,
        rt: &mut dyn Runtime<LkMsg>,
        from: Pid,
        at: At,
        t: u64,
        g: u32,
    ) {
        // LK-13: only a grant of the request now waiting counts; LK-15: of its current
        // generation there, and while parked only a blocking grantor's.
        if self.requesting != Some(at) || t != self.ts || !self.current(from, g) {
            return;
        }
        if self.parked_at.is_some() {
            if !self.blocked.remove(&from) {
                return;
            }
            self.n_grants[at].insert(from);
            self.unpark(rt, at);
        } else {
            self.blocked.remove(&from);
            self.n_grants[at].insert(from);
        }
        self.check_done(rt);
    }

    /// LK-15: request t is blocked at `from` behind completed transitions only.
    pub(super) fn on_failed(
        &mut self,
        rt: &mut dyn Runtime<LkMsg>,
        from: Pid,
        at: At,
        t: u64,
        g: u32,
    ) {
        if self.requesting == Some(at)
            && t == self.ts
            && self.current(from, g)
            && !self.n_grants[at].contains(&from)
        {
            self.blocked.insert(from);
            if self.parked_at.is_none() {
                self.park(rt, at);
            }
        }
    }

    /// Algorithm 5, on receipt of ⟨Preempt, at, P_j⟩: while the transition is in progress
    /// (LK-3) and P_j's grant of it is held (LK-13), give it back with ⟨Relinquish⟩.
    pub(super) fn on_preempt(
        &mut self,
        rt: &mut dyn Runtime<LkMsg>,
        from: Pid,
        at: At,
        t: u64,
        cause: Cause,
    ) {
        if self.requesting == Some(at) && t == self.ts && self.n_grants[at].remove(&from) {
            let path = if cause.inferred {
                Path::Machinery
            } else {
                Path::Preemption
            };
            rt.observe(Observation::Path(path));
            rt.send(from, LkMsg::Relinquish(at, t, cause));
        }
    }
}
