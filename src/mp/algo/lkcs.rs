//! Seed 004 (Kamei & Kakugawa, Algorithms 2017): l_i-LMUTIN (Algorithm 2, local mutual
//! inclusion: at least l_i of each closed neighbourhood inside) and LKCS (Algorithms 3–7, the
//! generalized local critical section: l_i ≤ |CS_i| ≤ k_i), in one state machine.
//!
//! LKCS composes MUTIN (permission to be *out*, granted for exiting and held while out) and
//! MUTEX (permission to be *in*, granted for entering and held while in); LMUTIN is MUTIN alone
//! (entering needs no permission). Both leave and enter only with |N_i| + 1 grants.
//!
//! Rules the seed does not state, named here and in the README:
//!
//! - **LK-1 (initial grants)**: the printed initial grantedTo lost an overline: grantedTo[MUTIN]
//!   holds the closed neighbours that are *out* in C0, grantedTo[MUTEX] those that are *in*.
//! - **LK-2 (grant sets)**: nGrants is a set of grantors in both algorithms (LKCS's form, also
//!   for LMUTIN), and the channels must be FIFO so that a Preempt never overtakes its Grant.
//! - **LK-3 (stale Preempt)**: a Preempt is obeyed only while the matching transition is in
//!   progress and the preemptor's grant is held; otherwise it is ignored (the preemptor clears
//!   its preemptingNow on the target's next Release).
//! - **LK-4 (stale Relinquish)**: a Relinquish whose sender is no longer in grantedTo only
//!   clears preemptingNow.
//! - **LK-5 (Trigger timestamp)**: Algorithm 6's MUTIN candidate branch selects (ts_j + 1, P_j)
//!   in grantedTo[MUTIN]; the Trigger carries ts_j + 1, the exit request's timestamp, so that
//!   Algorithm 7's test ts = ts_i can hold.
//! - **LK-6 (leader)**: P_LDR is process 0; TriggerNomination runs when Waiting_LDR reaches
//!   |N_LDR| + 1 while the leader waits, and not again until the nominee's next Release has
//!   arrived, so at most one over-the-limit grant is outstanding (the "wait until" of
//!   Algorithm 4, made explicit).
//!
//! **Status**: LMUTIN runs live and safe. LKCS as transcribed is safe in our runs but
//! deadlocks: Algorithm 6 tests |grantedTo[MUTIN]| = |N_LDR| − L_LDR and |grantedTo[MUTEX]| =
//! K_LDR − 1, one below the limits of Cond, so a leader whose neighbourhood is full in both
//! directions never nominates. Testing the limits themselves instead ends the deadlocks but
//! lets over-the-limit grants accumulate (|CS_i| > k_i): the Trigger rules the seed lost are
//! not recovered yet, and the simulator's liveness watchdog reports the deadlock with the
//! leader's state.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::Setup;
use crate::mp::{Algorithm, Charge, Group, Message, Pid, Runtime};

/// Which algorithm of seed 004.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// l_i-LMUTIN (Algorithm 2).
    Lmutin,
    /// LKCS (Algorithms 3–7).
    Lkcs,
}

/// MUTIN (0) or MUTEX (1).
type At = usize;
const MUTIN: At = 0;
const MUTEX: At = 1;

/// Messages; `at` is 0 for MUTIN, 1 for MUTEX.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum LkMsg {
    /// ⟨Request, at, ts⟩.
    Request(At, u64),
    /// ⟨Grant, at⟩.
    Grant(At),
    /// ⟨Release, at⟩.
    Release(At),
    /// ⟨Preempt, at⟩.
    Preempt(At),
    /// ⟨Relinquish, at⟩.
    Relinquish(At),
    /// ⟨Trigger, at, ts⟩ (leader only).
    Trigger(At, u64),
    /// ⟨RequestByTrigger, at⟩.
    RequestByTrigger(At),
}

impl Message for LkMsg {
    fn kind(&self) -> &'static str {
        match self {
            LkMsg::Request(..) => "REQUEST",
            LkMsg::Grant(_) => "GRANT",
            LkMsg::Release(_) => "RELEASE",
            LkMsg::Preempt(_) => "PREEMPT",
            LkMsg::Relinquish(_) => "RELINQUISH",
            LkMsg::Trigger(..) => "TRIGGER",
            LkMsg::RequestByTrigger(_) => "REQUEST_BY_TRIGGER",
        }
    }
    fn size_ints(&self) -> usize {
        match self {
            LkMsg::Request(..) | LkMsg::Trigger(..) => 2,
            _ => 1,
        }
    }
    fn charge(&self) -> Charge {
        match self {
            LkMsg::Grant(_) | LkMsg::Preempt(_) | LkMsg::Trigger(..) => Charge::Receiver,
            _ => Charge::Sender,
        }
    }
}

/// One process.
#[derive(Debug)]
pub struct Local {
    variant: Variant,
    /// N_i ∪ {P_i}.
    closed: Vec<Pid>,
    inside: bool,
    ts: u64,
    n_grants: [BTreeSet<Pid>; 2],
    granted_to: [BTreeSet<(u64, Pid)>; 2],
    pending: [BTreeSet<(u64, Pid)>; 2],
    preempting: [Option<(u64, Pid)>; 2],
    /// The transition waiting for grants, if any.
    requesting: Option<At>,
    /// Macro L_i and K_i (tightened by one within distance 2 of the leader, LKCS only).
    big_l: usize,
    big_k: usize,
    is_leader: bool,
    /// The process the leader last nominated, until its Release arrives (LK-6).
    nominee: Option<Pid>,
}

impl Local {
    /// Process `me` in the initial configuration `s.initial_in` (LK-1).
    pub fn new(me: Pid, s: &Setup, variant: Variant) -> Self {
        let mut closed = s.graph.neighbours(me).to_vec();
        closed.push(me);
        closed.sort_unstable();
        let t0 = match variant {
            Variant::Lmutin => 0,
            Variant::Lkcs => 1,
        };
        let out: BTreeSet<(u64, Pid)> = closed
            .iter()
            .filter(|&&j| !s.initial_in[j])
            .map(|&j| (t0, j))
            .collect();
        let inn: BTreeSet<(u64, Pid)> = closed
            .iter()
            .filter(|&&j| s.initial_in[j])
            .map(|&j| (t0, j))
            .collect();
        let near = variant == Variant::Lkcs && s.graph.distance(s.leader, me) <= 2;
        Local {
            variant,
            closed,
            inside: s.initial_in[me],
            ts: t0,
            n_grants: Default::default(),
            granted_to: [out, inn],
            pending: Default::default(),
            preempting: [None, None],
            requesting: None,
            big_l: s.l[me] + usize::from(near),
            big_k: s.k[me].saturating_sub(usize::from(near)),
            is_leader: variant == Variant::Lkcs && me == s.leader,
            nominee: None,
        }
    }

    fn degree(&self) -> usize {
        self.closed.len() - 1
    }

    /// Cond_i for `at`.
    fn cond(&self, at: At) -> bool {
        if at == MUTEX {
            self.granted_to[MUTEX].len() < self.big_k
        } else {
            self.granted_to[MUTIN].len() + self.big_l < self.degree() + 1
        }
    }

    fn broadcast(&self, rt: &mut dyn Runtime<LkMsg>, msg: LkMsg) {
        for &j in &self.closed {
            rt.send(j, msg.clone());
        }
    }

    fn grant_min(&mut self, rt: &mut dyn Runtime<LkMsg>, at: At) {
        if let Some(h) = self.pending[at].pop_first() {
            self.granted_to[at].insert(h);
            rt.send(h.1, LkMsg::Grant(at));
        }
    }

    fn start(&mut self, rt: &mut dyn Runtime<LkMsg>, at: At) {
        self.n_grants[at].clear();
        self.requesting = Some(at);
        self.broadcast(rt, LkMsg::Request(at, self.ts));
    }

    /// Completes the transition once |N_i| + 1 grants are held.
    fn check_done(&mut self, rt: &mut dyn Runtime<LkMsg>) {
        let Some(at) = self.requesting else {
            return;
        };
        if self.n_grants[at].len() < self.closed.len() {
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

    /// Waiting_LDR (Algorithm 3).
    fn waiting(&self) -> usize {
        let both = self.granted_to[MUTIN]
            .iter()
            .filter(|(_, j)| self.granted_to[MUTEX].iter().any(|(_, k)| k == j))
            .count();
        self.pending[MUTIN].len() + self.pending[MUTEX].len() + both
    }

    /// The leader's deadlock check (Algorithm 4's loop, LK-6).
    fn leader_check(&mut self, rt: &mut dyn Runtime<LkMsg>) {
        if !self.is_leader {
            return;
        }
        if self.nominee.is_some() {
            return;
        }
        let full = self.waiting() >= self.closed.len();
        if full && self.requesting.is_some() {
            self.trigger_nomination(rt);
        }
    }

    /// Algorithm 6.
    fn trigger_nomination(&mut self, rt: &mut dyn Runtime<LkMsg>) {
        let deg = self.degree();
        let in_both = |this: &Self, mutin_ts_offset: u64| -> Option<(u64, Pid)> {
            this.granted_to[MUTEX]
                .iter()
                .filter(|&&(t, j)| this.granted_to[MUTIN].contains(&(t + mutin_ts_offset, j)))
                .min()
                .copied()
        };
        if self.granted_to[MUTIN].len() + self.big_l == deg {
            let h = match self.pending[MUTEX].pop_first() {
                Some(h) => Some(h),
                None => in_both(self, 0),
            };
            if let Some((t, p)) = h {
                self.nominee = Some(p);
                rt.send(p, LkMsg::Trigger(MUTEX, t));
            }
        } else if self.granted_to[MUTEX].len() + 1 == self.big_k {
            let h = match self.pending[MUTIN].pop_first() {
                Some(h) => Some(h),
                // LK-5.
                None => in_both(self, 1).map(|(t, p)| (t + 1, p)),
            };
            if let Some((t, p)) = h {
                self.nominee = Some(p);
                rt.send(p, LkMsg::Trigger(MUTIN, t));
            }
        }
    }
}

impl Algorithm for Local {
    type Msg = LkMsg;

    /// Entry-Sequence.
    fn on_request(&mut self, rt: &mut dyn Runtime<LkMsg>, _group: Group) {
        match self.variant {
            Variant::Lmutin => {
                self.inside = true;
                rt.enter();
                self.broadcast(rt, LkMsg::Release(MUTIN));
            }
            Variant::Lkcs => {
                self.start(rt, MUTEX);
                self.leader_check(rt);
            }
        }
    }

    /// Exit-Sequence.
    fn on_exit(&mut self, rt: &mut dyn Runtime<LkMsg>) {
        self.ts += 1;
        self.start(rt, MUTIN);
        self.leader_check(rt);
    }

    fn on_message(&mut self, rt: &mut dyn Runtime<LkMsg>, from: Pid, msg: LkMsg) {
        match msg {
            LkMsg::Request(at, ts) => {
                self.pending[at].insert((ts, from));
                if self.cond(at) {
                    self.grant_min(rt, at);
                } else if self.preempting[at].is_none() {
                    if let Some(&h) = self.granted_to[at].last() {
                        if (ts, from) < h {
                            self.preempting[at] = Some(h);
                            rt.send(h.1, LkMsg::Preempt(at));
                        }
                    }
                }
            }
            LkMsg::Grant(at) => {
                if self.requesting == Some(at) {
                    self.n_grants[at].insert(from);
                    self.check_done(rt);
                }
            }
            LkMsg::Release(at) => {
                if self.nominee == Some(from) {
                    self.nominee = None;
                }
                if self.preempting[at].is_some_and(|(_, p)| p == from) {
                    self.preempting[at] = None;
                }
                self.granted_to[at].retain(|&(_, p)| p != from);
                self.grant_min(rt, at);
            }
            LkMsg::Preempt(at) => {
                // LK-3.
                if self.requesting == Some(at) && self.n_grants[at].remove(&from) {
                    rt.send(from, LkMsg::Relinquish(at));
                }
            }
            LkMsg::Relinquish(at) => {
                self.preempting[at] = None;
                let held: Vec<(u64, Pid)> = self.granted_to[at]
                    .iter()
                    .filter(|&&(_, p)| p == from)
                    .copied()
                    .collect();
                // LK-4.
                if !held.is_empty() {
                    for h in held {
                        self.granted_to[at].remove(&h);
                        self.pending[at].insert(h);
                    }
                    self.grant_min(rt, at);
                }
            }
            LkMsg::Trigger(at, ts) => {
                if self.requesting == Some(at) && ts == self.ts {
                    self.n_grants[at].clear();
                    self.broadcast(rt, LkMsg::RequestByTrigger(at));
                }
            }
            LkMsg::RequestByTrigger(at) => {
                self.pending[at].retain(|&(_, p)| p != from);
                self.granted_to[at].retain(|&(_, p)| p != from);
                self.granted_to[at].insert((0, from));
                rt.send(from, LkMsg::Grant(at));
            }
        }
        self.leader_check(rt);
    }

    fn starts_inside(&self) -> bool {
        self.inside
    }
}
