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
//! - **LK-4 (stale Relinquish)**: a Relinquish for a grant no longer held only clears
//!   preemptingNow.
//! - **LK-5 (nomination tests)**: Algorithm 6 as printed tests |grantedTo[MUTIN]| = |N| − L
//!   and |grantedTo[MUTEX]| = K − 1, one below Cond's limits, so a leader whose neighbourhood
//!   is full never nominates; the tests are read as "no ordinary grant is possible" and the
//!   direction is chosen by LK-8. The Trigger carries the nominee's request timestamp, so
//!   Algorithm 7's test ts = ts_i holds (for an exit that is ts_j + 1 of Algorithm 6).
//! - **LK-6 (leader)**: P_LDR is process 0.
//! - **LK-7 (serving)**: a Release (and a Relinquish) grants pending requests while Cond_i
//!   holds, not one unconditionally, so no ordinary grant ever exceeds L_i / K_i.
//! - **LK-8 (special grants within the bounds)**: a RequestByTrigger is granted when it
//!   replaces a grant its sender holds or when the grant stays within the problem's own
//!   bounds (|grantedTo[MUTEX]| < k_i, |grantedTo[MUTIN]| < |N_i| + 1 − l_i); otherwise it
//!   waits first in line (timestamp 0) and preempts an ordinary grant not yet used. So every
//!   grant, ordinary or special, keeps l_i ≤ |CS_i| ≤ k_i at its grantor, and safety is
//!   Lemma 4's argument with those bounds, whatever the leader does. The leader nominates the
//!   oldest waiting transition in its closed neighbourhood that it has room for itself.
//! - **LK-9 (Waiting_LDR)**: the leader counts a closed neighbour as waiting from its Request
//!   until the Release that completes that transition (Release(MUTIN) ends an entry,
//!   Release(MUTEX) an exit); it nominates when all |N_LDR| + 1 are waiting and it is itself
//!   in Algorithm 4's loop.
//! - **LK-10 (one nomination at a time)**: the leader nominates again only once its nominee
//!   has completed the nominated transition (Algorithm 4's "wait until", made explicit), or
//!   was refused (LK-12).
//! - **LK-11 (preempt only unused grants)**: a grantor learns from a holder's Release of the
//!   other kind that the holder completed its transition; such a grant is never the target
//!   of a Preempt (it would be ignored and block the grantor's preemptingNow until the holder
//!   moves again), and a preemption aimed at it is aimed again.
//! - **LK-12 (refusal)**: a grantor that keeps a special request waiting tells the leader
//!   (⟨Refuse, at, P_j⟩), which may nominate someone else and skips P_j until its next
//!   Release; a nominee asked twice broadcasts RequestByTrigger again, and a grantor that
//!   already granted it specially does not grant twice. Special requests are ordered among
//!   themselves by process id and only an older one preempts a special grant.
//! - **LK-13 (grant identity)**: Grant, Preempt and Relinquish carry the timestamp of the grant
//!   (0 for a special one); a process counts only grants of its current request (or, once
//!   triggered, only special ones), and a Relinquish returns only the grant it names. Without
//!   this, a Grant sent before a RequestByTrigger and a Relinquish of it crossing the special
//!   grant let two processes use one place (seen as |CS_i| = k_i + 1 on a grid).
//!
//! **Status**: safe on every topology and bound we ran (0 violations). Live on complete
//! graphs for every (l, k) we tried, and on sparse graphs (ring, grid, random) when one of
//! the two bounds is vacuous there (l_i = 0, or k_i = |N_i| + 1). With both bounds active on a
//! sparse graph it still deadlocks, in configurations where some process *could* move alone
//! (the simulator's report lists them), so the cause is the protocol, not the configuration:
//! (a) within distance 2 of the leader L_i = l_i + 1 and K_i = k_i − 1, and only the leader's
//! neighbours can be nominated: with k_i − l_i = 1 a process at distance 2 can never get its
//! own ordinary grant, and with k_i − l_i = 2 only once special grants near it pushed its
//! count to a bound; (b) an older request that
//! cannot complete (a bound blocks it at one grantor) keeps the places it holds at others, and
//! a younger request that could complete cannot preempt it. The leader sees only its own
//! closed neighbourhood, so a deadlock farther away is never nominated out of.

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

/// The timestamp of a special grant (Algorithm 7's (0, P_j)), below every request's.
const SPECIAL: u64 = 0;

/// Messages; `at` is 0 for MUTIN, 1 for MUTEX.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum LkMsg {
    /// ⟨Request, at, ts⟩.
    Request(At, u64),
    /// ⟨Grant, at⟩.
    Grant(At, u64),
    /// ⟨Release, at⟩.
    Release(At),
    /// ⟨Preempt, at⟩.
    Preempt(At, u64),
    /// ⟨Relinquish, at⟩.
    Relinquish(At, u64),
    /// ⟨Trigger, at, ts⟩ (leader only).
    Trigger(At, u64),
    /// ⟨Refuse, at, P_j⟩: to the leader, P_j's special request found no place here (LK-12).
    Refuse(At, Pid),
    /// ⟨RequestByTrigger, at⟩.
    RequestByTrigger(At),
}

impl Message for LkMsg {
    fn kind(&self) -> &'static str {
        match self {
            LkMsg::Request(..) => "REQUEST",
            LkMsg::Grant(..) => "GRANT",
            LkMsg::Release(_) => "RELEASE",
            LkMsg::Preempt(..) => "PREEMPT",
            LkMsg::Relinquish(..) => "RELINQUISH",
            LkMsg::Trigger(..) => "TRIGGER",
            LkMsg::Refuse(..) => "REFUSE",
            LkMsg::RequestByTrigger(_) => "REQUEST_BY_TRIGGER",
        }
    }
    fn size_ints(&self) -> usize {
        match self {
            LkMsg::Request(..)
            | LkMsg::Trigger(..)
            | LkMsg::Refuse(..)
            | LkMsg::Grant(..)
            | LkMsg::Preempt(..)
            | LkMsg::Relinquish(..) => 2,
            _ => 1,
        }
    }
    fn charge(&self) -> Charge {
        match self {
            LkMsg::Grant(..) | LkMsg::Preempt(..) | LkMsg::Trigger(..) | LkMsg::Refuse(..) => {
                Charge::Receiver
            }
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
    /// The waiting transition asked again by trigger (Algorithm 7), per `at`.
    special: [bool; 2],
    /// Macro L_i and K_i (tightened by one within distance 2 of the leader, LKCS only).
    big_l: usize,
    big_k: usize,
    /// The hard bounds l_i and k_i, which a special grant may reach (LK-8).
    hard_l: usize,
    hard_k: usize,
    /// Per `at` and closed neighbour (by position in `closed`): its grant is held by a
    /// process that has completed the transition (LK-11; LKCS only).
    completed: [Vec<bool>; 2],
    is_leader: bool,
    /// Leader only: per closed neighbour (by position in `closed`), its open request as the
    /// leader last heard it, (at, ts), until the Release that completes it (LK-9).
    open: Vec<Option<(At, u64)>>,
    /// Leader only: the nominee and the direction it was nominated for, until the Release
    /// that completes that transition arrives (LK-10).
    nominee: Option<(Pid, At)>,
    /// Leader only: closed neighbours whose special request was refused since the last
    /// Release the leader received (LK-12).
    refused: Vec<bool>,
    /// P_LDR.
    leader: Pid,
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
        let is_leader = variant == Variant::Lkcs && me == s.leader;
        let width = closed.len();
        let completed = if variant == Variant::Lkcs {
            [
                closed.iter().map(|&j| !s.initial_in[j]).collect(),
                closed.iter().map(|&j| s.initial_in[j]).collect(),
            ]
        } else {
            [vec![false; closed.len()], vec![false; closed.len()]]
        };
        Local {
            variant,
            completed,
            open: if is_leader {
                vec![None; width]
            } else {
                Vec::new()
            },
            closed,
            inside: s.initial_in[me],
            ts: t0,
            n_grants: Default::default(),
            granted_to: [out, inn],
            pending: Default::default(),
            preempting: [None, None],
            requesting: None,
            special: [false; 2],
            big_l: s.l[me] + usize::from(near),
            big_k: s.k[me].saturating_sub(usize::from(near)),
            hard_l: s.l[me],
            hard_k: s.k[me],
            refused: if is_leader {
                vec![false; width]
            } else {
                Vec::new()
            },
            is_leader,
            nominee: None,
            leader: s.leader,
        }
    }

    fn degree(&self) -> usize {
        self.closed.len() - 1
    }

    /// Cond_i for `at`: room for one more ordinary grant under L_i / K_i.
    fn cond(&self, at: At) -> bool {
        if at == MUTEX {
            self.granted_to[MUTEX].len() < self.big_k
        } else {
            self.granted_to[MUTIN].len() + self.big_l < self.degree() + 1
        }
    }

    /// Room for one more grant under the problem's own bounds l_i / k_i (LK-8).
    fn hard_room(&self, at: At) -> bool {
        if at == MUTEX {
            self.granted_to[MUTEX].len() < self.hard_k
        } else {
            self.granted_to[MUTIN].len() + self.hard_l < self.degree() + 1
        }
    }

    fn broadcast(&self, rt: &mut dyn Runtime<LkMsg>, msg: LkMsg) {
        for &j in &self.closed {
            rt.send(j, msg.clone());
        }
    }

    /// Grants the lowest pending requests while there is room (LK-7): an ordinary request
    /// (ts ≥ 1) needs Cond_i, a special one (ts 0, LK-8) the hard bound.
    fn serve(&mut self, rt: &mut dyn Runtime<LkMsg>, at: At) {
        while let Some(&h) = self.pending[at].first() {
            let room = if h.0 == SPECIAL {
                self.hard_room(at)
            } else {
                self.cond(at)
            };
            if !room {
                break;
            }
            self.pending[at].pop_first();
            self.give(rt, at, h);
        }
    }

    /// Grants the lowest pending request whatever the count (a Relinquish hands a grant on).
    fn grant_min(&mut self, rt: &mut dyn Runtime<LkMsg>, at: At) {
        if let Some(h) = self.pending[at].pop_first() {
            self.give(rt, at, h);
        }
    }

    /// Records and sends one grant.
    fn give(&mut self, rt: &mut dyn Runtime<LkMsg>, at: At, h: (u64, Pid)) {
        if let Some(s) = self.slot(h.1) {
            self.completed[at][s] = false;
        }
        self.granted_to[at].insert(h);
        rt.send(h.1, LkMsg::Grant(at, h.0));
    }

    /// Asks the holder of the highest granted request of `at` to give it back if `than`
    /// is older (Algorithm 5's preemption). A special grant (ts 0) is taken back only for an
    /// older special request (LK-12), and in LKCS no grant whose holder has completed its
    /// transition is (LK-11).
    fn maybe_preempt(&mut self, rt: &mut dyn Runtime<LkMsg>, at: At, than: (u64, Pid)) {
        if self.preempting[at].is_some() {
            return;
        }
        let target = self.granted_to[at]
            .iter()
            .rev()
            .find(|&&(_, p)| self.slot(p).is_some_and(|s| !self.completed[at][s]))
            .copied();
        if let Some(h) = target {
            if than < h && (h.0 != SPECIAL || than.0 == SPECIAL) {
                self.preempting[at] = Some(h);
                rt.send(h.1, LkMsg::Preempt(at, h.0));
            }
        }
    }

    /// LK-11: a Release of the other kind from `p` means `p` completed the transition its
    /// grant of `at` was for; a preemption aimed at it is void, so aim again.
    fn completes(&mut self, rt: &mut dyn Runtime<LkMsg>, at: At, p: Pid) {
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
            if let Some(&h) = self.pending[at].first() {
                self.maybe_preempt(rt, at, h);
            }
        }
    }

    /// The timestamp the grants of the waiting `at` transition carry: the request's, or
    /// SPECIAL once it asked again by trigger (LK-13).
    fn asked(&self, at: At) -> u64 {
        if self.special[at] {
            SPECIAL
        } else {
            self.ts
        }
    }

    fn start(&mut self, rt: &mut dyn Runtime<LkMsg>, at: At) {
        self.n_grants[at].clear();
        self.special[at] = false;
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

    /// The position of `p` in the closed neighbourhood.
    fn slot(&self, p: Pid) -> Option<usize> {
        self.closed.binary_search(&p).ok()
    }

    /// The leader's deadlock check (Algorithm 4's loop): with its own transition waiting,
    /// every closed neighbour waiting, and no nomination outstanding (LK-10), nominate.
    fn leader_check(&mut self, rt: &mut dyn Runtime<LkMsg>) {
        if !self.is_leader || self.nominee.is_some() || self.requesting.is_none() {
            return;
        }
        if self.open.iter().any(Option::is_none) {
            return;
        }
        self.trigger_nomination(rt);
    }

    /// Algorithm 6, with the direction chosen by room under the hard bounds (LK-8): the
    /// oldest waiting transition of a closed neighbour that the leader itself has room for
    /// and that was not refused since the last Release (LK-12).
    fn trigger_nomination(&mut self, rt: &mut dyn Runtime<LkMsg>) {
        let room = [self.hard_room(MUTIN), self.hard_room(MUTEX)];
        let pick = self
            .open
            .iter()
            .zip(&self.closed)
            .zip(&self.refused)
            .filter_map(|((o, &p), &refused)| match *o {
                Some((at, t)) if room[at] && !refused => Some((t, p, at)),
                _ => None,
            })
            .min();
        if let Some((t, p, at)) = pick {
            self.nominee = Some((p, at));
            rt.send(p, LkMsg::Trigger(at, t));
        }
    }

    /// Leader only: what a message tells about a closed neighbour's open request.
    fn note(&mut self, from: Pid, msg: &LkMsg) {
        if !self.is_leader {
            return;
        }
        let Some(s) = self.slot(from) else {
            return;
        };
        match *msg {
            LkMsg::Request(at, ts) => self.open[s] = Some((at, ts)),
            // Entering ends with Release(MUTIN), exiting with Release(MUTEX).
            LkMsg::Release(rel) => {
                let done = 1 - rel;
                if self.open[s].is_some_and(|(a, _)| a == done) {
                    self.open[s] = None;
                }
                if self.nominee == Some((from, done)) {
                    self.nominee = None;
                }
                self.refused.iter_mut().for_each(|r| *r = false);
            }
            _ => {}
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
        self.note(from, &msg);
        match msg {
            LkMsg::Request(at, ts) => {
                self.pending[at].insert((ts, from));
                if self.cond(at) {
                    self.serve(rt, at);
                } else {
                    self.maybe_preempt(rt, at, (ts, from));
                }
            }
            LkMsg::Grant(at, t) => {
                // LK-13: only a grant of the request now waiting counts.
                if self.requesting == Some(at) && t == self.asked(at) {
                    self.n_grants[at].insert(from);
                    self.check_done(rt);
                }
            }
            LkMsg::Release(at) => {
                if self.preempting[at].is_some_and(|(_, p)| p == from) {
                    self.preempting[at] = None;
                }
                self.granted_to[at].retain(|&(_, p)| p != from);
                // LK-7.
                self.serve(rt, at);
                self.completes(rt, 1 - at, from);
            }
            LkMsg::Preempt(at, t) => {
                // LK-3, LK-13.
                if self.requesting == Some(at)
                    && t == self.asked(at)
                    && self.n_grants[at].remove(&from)
                {
                    rt.send(from, LkMsg::Relinquish(at, t));
                }
            }
            LkMsg::Relinquish(at, t) => {
                if self.preempting[at].is_some_and(|(_, p)| p == from) {
                    self.preempting[at] = None;
                }
                // LK-4, LK-13: only the grant that was preempted goes back.
                if self.granted_to[at].remove(&(t, from)) {
                    self.pending[at].insert((t, from));
                    self.grant_min(rt, at);
                }
                self.serve(rt, at);
            }
            LkMsg::Trigger(at, ts) => {
                if self.requesting == Some(at) && ts == self.ts {
                    // A second nomination asks again; the special grants held stay valid.
                    if !self.special[at] {
                        self.special[at] = true;
                        self.n_grants[at].clear();
                    }
                    self.broadcast(rt, LkMsg::RequestByTrigger(at));
                }
            }
            LkMsg::RequestByTrigger(at) => {
                // LK-8: a special grant replaces an ordinary one, or takes a free place under
                // the hard bound, or waits first in line for one (preempting if it can).
                if self.granted_to[at].contains(&(SPECIAL, from)) {
                    // Asked again (LK-12) and already granted: that grant stands, and a
                    // second one could be mistaken for it by a Relinquish in flight.
                    return self.leader_check(rt);
                }
                self.pending[at].retain(|&(_, p)| p != from);
                let had = self.granted_to[at].iter().any(|&(_, p)| p == from);
                self.granted_to[at].retain(|&(_, p)| p != from);
                if had || self.hard_room(at) {
                    self.give(rt, at, (SPECIAL, from));
                } else {
                    self.pending[at].insert((SPECIAL, from));
                    self.maybe_preempt(rt, at, (SPECIAL, from));
                    // LK-12.
                    rt.send(self.leader, LkMsg::Refuse(at, from));
                }
            }
            LkMsg::Refuse(at, p) => {
                if self.nominee == Some((p, at)) {
                    self.nominee = None;
                    if let Some(s) = self.slot(p) {
                        self.refused[s] = true;
                    }
                }
            }
        }
        self.leader_check(rt);
    }

    fn starts_inside(&self) -> bool {
        self.inside
    }
}
