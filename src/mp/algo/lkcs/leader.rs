//! Seed 004's leader, run only when [`Rules::leader`](super::Rules) is on (tests, `sim --lkcs-rules printed`): the macros
//! L_i, K_i, Grant_LDR and Waiting_LDR (Algorithm 3), the leader's loop in the Exit- and
//! Entry-Sequences (Algorithm 4), TriggerNomination (Algorithm 6) and the handlers of
//! ⟨Trigger⟩ and ⟨RequestByTrigger⟩ (Algorithm 7). Off (LK-14, the default) none of this runs
//! and Cond_i uses l_i and k_i.
//!
//! Where the text leaves a choice, our reading is named (LK-14a…LK-14g):
//!
//! - **LK-14a (who leads)**: the seed does not say how P_LDR is chosen; it is the process of
//!   the smallest id, 0 (`Setup::leader`).
//! - **LK-14b (candidates)**: Algorithm 6 finds a process "waiting to enter" by
//!   (ts_j, P_j) ∈ grantedTo[MUTIN] ∧ (ts_j, P_j) ∈ grantedTo[MUTEX], and one "waiting to exit"
//!   by (ts_j + 1, P_j) ∈ grantedTo[MUTIN] ∧ (ts_j, P_j) ∈ grantedTo[MUTEX]: equalities that
//!   hold when an entry reuses the exit's timestamp and an exit adds one. Under LK-16's clock an
//!   entry's timestamp may be larger and an exit's more than one larger, so we test the order:
//!   entering when the MUTEX grant's timestamp ≥ the MUTIN grant's, exiting when the MUTIN
//!   grant's is larger. Under the seed's counter the two readings agree; a grant recorded as
//!   (0, P_j) by RequestByTrigger makes P_j no candidate, as the equalities do.
//! - **LK-14c (the exit nominee's timestamp)**: the MUTIN branch takes (ts_h, P_h) as
//!   min(candidate), ts_h being the *entry's* timestamp, and sends ⟨Trigger, MUTIN, ts_h⟩, but
//!   Algorithm 7 obeys it only if ts = ts_i, which the exit raised: we send the exit request's
//!   timestamp (the MUTIN grant's, the seed's ts_j + 1). Candidates are still ordered by
//!   (ts_j, P_j).
//! - **LK-14d (an empty candidate set)**: min(∅) is undefined; no Trigger is sent, and the
//!   leader waits as after any TriggerNomination.
//! - **LK-14e (the leader's wait)**: "wait until (Waiting_LDR < |N_LDR| + 1)" is inside the
//!   while loop, so the leader does not complete its own transition while it waits, even with
//!   every grant. It checks after each of its events (its state changes only there).
//! - **LK-14f (with our rules)**: RequestByTrigger carries the request's timestamp, so that the
//!   special Grant names it (LK-13), and, per grantor, a generation raised by the Trigger
//!   (LK-15), so that a Grant or Failed sent before it is not counted; a Trigger reaching a
//!   parked request ends the parking (RequestByTrigger asks every closed neighbour again, and a
//!   grantor drops the parked request); after a RequestByTrigger the grantor reviews `at` as
//!   after any change (LK-7, LK-11, LK-15).
//! - **LK-14g (Algorithm 6's tests, a second reading, `Rules::at_capacity`)**: as printed the
//!   tests |grantedTo[MUTIN]| = |N_LDR| − L_LDR and |grantedTo[MUTEX]| = K_LDR − 1 cannot hold
//!   when TriggerNomination() is called. Waiting_LDR = |N_LDR| + 1 puts every closed neighbour
//!   in a transition, pending or in Grant_LDR. If |grantedTo[MUTIN]| = |N| − L, Cond holds for
//!   MUTIN, so no exit is pending (LK-7; the seed grants on receipt while Cond holds and hands a
//!   released grant on): every process exiting holds a MUTIN grant, as does every
//!   process outside, and |grantedTo[MUTIN]| = |N| + 1. Likewise |grantedTo[MUTEX]| = K − 1
//!   leaves no entry pending and gives |N| + 1 > K − 1. No Trigger was sent in any run. The
//!   nearest reading that can hold takes the tests at Cond's limits, |N| − L + 1 and K.

use super::{At, LkMsg, Local, Variant, MUTEX, MUTIN};
use crate::mp::topo::Graph;
use crate::mp::{Observation, Path, Pid, Runtime};

impl Local {
    /// Whether seed 004's leader runs here (LKCS with [`super::Rules::leader`]).
    pub(super) fn leads(&self) -> bool {
        self.rules.leader && self.variant == Variant::Lkcs
    }

    /// Algorithm 3's macro L_i: l_i + 1 within distance 2 of P_LDR, else l_i (LK-14: l_i).
    pub(super) fn bound_l(&self) -> usize {
        if self.leads() && self.near_leader {
            self.l + 1
        } else {
            self.l
        }
    }

    /// Algorithm 3's macro K_i: k_i − 1 within distance 2 of P_LDR, else k_i (LK-14: k_i).
    pub(super) fn bound_k(&self) -> usize {
        if self.leads() && self.near_leader {
            self.k.saturating_sub(1)
        } else {
            self.k
        }
    }

    /// Algorithm 3's Grant_LDR: the processes holding both a MUTIN and a MUTEX grant here,
    /// with the timestamps of the two grants.
    fn grant_ldr(&self) -> Vec<(Pid, u64, u64)> {
        self.granted_to[MUTIN]
            .iter()
            .filter_map(|&(tin, p)| {
                self.granted_to[MUTEX]
                    .iter()
                    .find(|&&(_, q)| q == p)
                    .map(|&(tex, _)| (p, tin, tex))
            })
            .collect()
    }

    /// Algorithm 3's Waiting_LDR: |pendingReq[MUTIN]| + |pendingReq[MUTEX]| + |Grant_LDR|.
    fn waiting_ldr(&self) -> usize {
        self.pending[MUTIN].len() + self.pending[MUTEX].len() + self.grant_ldr().len()
    }

    /// Algorithm 4, the leader's part of the loop `while (|nGrants_i[at]| < |N_i| + 1)`: when
    /// Waiting_LDR = |N_LDR| + 1, TriggerNomination() and wait until Waiting_LDR < |N_LDR| + 1
    /// (LK-14e); once the loop ends, the transition completes. Run after each event here.
    pub(super) fn leader_step(&mut self, rt: &mut dyn Runtime<LkMsg>) {
        if !self.leads() || !self.is_leader {
            return;
        }
        let Some(at) = self.requesting else {
            self.nominating = false;
            return;
        };
        let full = self.closed.len();
        if self.nominating {
            if self.waiting_ldr() < full {
                self.nominating = false;
            } else {
                return;
            }
        }
        if self.n_grants[at].len() >= full {
            self.check_done(rt);
        } else if self.waiting_ldr() == full {
            // "The configuration may be in a deadlock."
            self.nominating = true;
            rt.observe(Observation::Path(Path::Machinery));
            self.trigger_nomination(rt);
        }
    }

    /// Algorithm 6, TriggerNomination() at P_LDR.
    fn trigger_nomination(&mut self, rt: &mut dyn Runtime<LkMsg>) {
        // As printed; LK-14g with `Rules::at_capacity`: at Cond's limits.
        let full = usize::from(self.rules.at_capacity);
        let d = self.degree();
        let (at, nominee) = if self.granted_to[MUTIN].len() + self.bound_l() == d + full {
            // |grantedTo_LDR[MUTIN]| = |N_LDR| − L_LDR: nominate an entry, the oldest pending
            // one, else the oldest process in Grant_LDR that may be waiting to enter.
            let h = self.pending[MUTEX].pop_first().or_else(|| {
                self.grant_ldr()
                    .into_iter()
                    .filter(|&(_, tin, tex)| tin != 0 && tex != 0 && tex >= tin) // LK-14b
                    .map(|(p, _, tex)| (tex, p))
                    .min()
            });
            (MUTEX, h)
        } else if self.granted_to[MUTEX].len() + 1 == self.bound_k() + full {
            // |grantedTo_LDR[MUTEX]| = K_LDR − 1: nominate an exit likewise.
            let h = self.pending[MUTIN].pop_first().or_else(|| {
                self.grant_ldr()
                    .into_iter()
                    .filter(|&(_, tin, tex)| tin != 0 && tex != 0 && tin > tex) // LK-14b
                    .map(|(p, tin, tex)| ((tex, p), tin))
                    .min()
                    .map(|((_, p), tin)| (tin, p)) // LK-14c: the exit's timestamp
            });
            (MUTIN, h)
        } else {
            return;
        };
        // LK-14d: no candidate, no Trigger.
        if let Some((ts, p)) = nominee {
            rt.send(p, LkMsg::Trigger(at, ts));
        }
    }

    /// Algorithm 7, on receipt of ⟨Trigger, at, ts⟩: if P_i is still waiting for grants of
    /// that request (InCS and exiting for MUTIN, OutCS and entering for MUTEX), `nGrants_i[at]`
    /// := ∅ and send ⟨RequestByTrigger, at, P_i⟩ to N_i ∪ {P_i}.
    pub(super) fn on_trigger(&mut self, rt: &mut dyn Runtime<LkMsg>, at: At, ts: u64) {
        let state = if at == MUTIN {
            self.inside
        } else {
            !self.inside
        };
        if !(state
            && self.requesting == Some(at)
            && ts == self.ts
            && self.n_grants[at].len() < self.closed.len())
        {
            return;
        }
        self.n_grants[at].clear();
        // LK-14f: the Trigger ends a parking, and grants or Failed sent before it no longer
        // count.
        self.blocked.clear();
        if self.parked_at.take().is_some() {
            rt.observe(Observation::Blocked(false));
        }
        rt.observe(Observation::Path(Path::Machinery));
        for s in 0..self.closed.len() {
            self.sent_gen[s] += 1;
            let msg = LkMsg::RequestByTrigger(at, self.ts, self.sent_gen[s]);
            rt.send(self.closed[s], msg);
        }
    }

    /// Algorithm 7, on receipt of ⟨RequestByTrigger, at, P_j⟩: delete P_j's request from
    /// `pendingReq[at]` and its grant from `grantedTo[at]`, record (0, P_j) in `grantedTo[at]` and
    /// send ⟨Grant, at⟩ to P_j whatever Cond_i says (a special grant).
    pub(super) fn on_request_by_trigger(
        &mut self,
        rt: &mut dyn Runtime<LkMsg>,
        from: Pid,
        at: At,
        t: u64,
        g: u32,
    ) {
        self.pending[at].retain(|&(_, p)| p != from);
        self.granted_to[at].retain(|&(_, p)| p != from);
        self.granted_to[at].insert((0, from));
        // LK-14f: our rules' records of the request go with it.
        self.parked[at].retain(|&(_, p)| p != from);
        self.failed_sent[at].retain(|&(_, p)| p != from);
        self.regrant[at].retain(|&(_, p), _| p != from);
        if let Some(s) = self.slot(from) {
            self.completed[at][s] = false;
            self.req_gen[at][s] = g;
        }
        rt.send(from, LkMsg::Grant(at, t, g, None));
        self.review(rt, at);
    }
}

/// Algorithm 3's macros over the graph: within distance 2 of P_LDR = `leader`, L_i = l_i + 1
/// and K_i = k_i − 1; elsewhere l_i and k_i.
pub fn tightened(graph: &Graph, l: &[usize], k: &[usize], leader: Pid) -> (Vec<usize>, Vec<usize>) {
    (0..graph.n())
        .map(|i| {
            if graph.distance(leader, i) <= 2 {
                (l[i] + 1, k[i].saturating_sub(1))
            } else {
                (l[i], k[i])
            }
        })
        .unzip()
}

/// A configuration within the leader's tightened bounds ([`tightened`]), reached from `c0` by
/// moves within l and k (so in the component of configurations where every process can move):
/// a seeded random walk of at most 200 000 moves. None when some L_i > K_i (no configuration
/// is within them, e.g. k_i − l_i = 1 near P_LDR) or the walk finds none.
pub fn tightened_c0(
    graph: &Graph,
    c0: &[bool],
    (l, k): (&[usize], &[usize]),
    leader: Pid,
    seed: u64,
) -> Option<Vec<bool>> {
    let n = graph.n();
    let (tl, tk) = tightened(graph, l, k, leader);
    if (0..n).any(|i| tl[i] > tk[i]) {
        return None;
    }
    let mut c = c0.to_vec();
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for _ in 0..200_000 {
        if graph.within(&c, &tl, &tk) {
            return Some(c);
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let p = (x % n as u64) as usize;
        c[p] = !c[p];
        if !graph.within(&c, l, k) {
            c[p] = !c[p];
        }
    }
    None
}
