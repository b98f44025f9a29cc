//! Seed 004 (Kamei & Kakugawa, Algorithms 2017): l_i-LMUTIN (Algorithm 2, local mutual
//! inclusion: at least l_i of each closed neighbourhood inside) and LKCS (Algorithms 3–5, the
//! generalized local critical section: l_i ≤ |CS_i| ≤ k_i; Algorithms 6–7 are not run, LK-14),
//! in one state machine.
//!
//! LKCS composes MUTIN (permission to be *out*, granted for exiting and held while out) and
//! MUTEX (permission to be *in*, granted for entering and held while in); LMUTIN is MUTIN alone
//! (entering needs no permission). Both leave and enter only with |N_i| + 1 grants.
//!
//! Rules the seed does not state, named here and in docs/message-passing.md:
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
//! - **LK-7 (serving)**: a Release (and a Relinquish) grants pending requests while Cond_i
//!   holds, not one unconditionally, so no grant ever exceeds the bounds.
//! - **LK-11 (preempt only unused grants)**: a grantor learns from a holder's Release of the
//!   other kind that the holder completed its transition; such a grant is never the target
//!   of a Preempt (it would be ignored and block the grantor's preemptingNow until the holder
//!   moves again), and a preemption aimed at it is aimed again.
//! - **LK-13 (grant identity)**: Grant, Preempt and Relinquish carry the timestamp of the
//!   granted request; a process counts only grants of its current request, and a Relinquish
//!   returns only the grant it names.
//! - **LK-14 (no leader)**: Cond_i uses l_i and k_i everywhere and no leader nominates
//!   (Algorithms 6–7, TriggerNomination / RequestByTrigger, are not run). The seed's macros
//!   L_i = l_i + 1 and K_i = k_i − 1 within distance 2 of P_LDR reserve room for the
//!   leader's special grants, but a grantor there with |CS_i| = c grants an entry only when
//!   c < k_i − 1 and an exit only when c > l_i + 1: with k_i − l_i ≤ 2 a grantor at c = l_i + 1
//!   grants nothing ordinary, and with k_i − l_i = 1 no process at distance 2 ever moves (only
//!   the leader's neighbours can be nominated). A special grant is unconditional, so a nominee
//!   that the configuration blocks at one grantor holds its special places at the others
//!   like the deadlock it was meant to break (measured: ring n = 9, (1, 2), 0 of 4 seeds live
//!   with the nomination kept beside LK-15, 4 of 4 without). LK-15 does the leader's job
//!   everywhere and needs no tightened bounds.
//! - **LK-15 (blocked transitions park)**: a grantor where every holder of the requested
//!   kind has completed its transition (LK-11) can make room only through a move of the
//!   configuration, so it tells each waiting request once ⟨Failed⟩. The requester then gives
//!   back every grant it holds by sending ⟨Park⟩ to every closed neighbour except the
//!   grantors that failed it (a Park takes back the grant, and a parked request is neither
//!   granted nor preempted for), and waits for those grantors; once each has granted, it
//!   sends ⟨Resume⟩ and its request is pending again with its old timestamp. Without it, an
//!   older request that a bound blocks at one grantor keeps its places at the others, where
//!   younger requests that could complete cannot preempt it (the deadlock of the seed's
//!   rules on sparse graphs with both bounds active). Grants and Failed carry a generation
//!   per grantor, raised by each Park, so a Grant sent before the Park arrived is not counted
//!   after the Resume (without it |CS_i| fell below l_i on a ring).
//! - **LK-16 (logical clock)**: ts_i is a Lamport clock, as the seed says ("the logical clock")
//!   and as Lemma 2's proof uses ("after P_j receives ⟨Request, ts_i, P_i⟩, (ts_j, P_j) exceeds
//!   (ts_i, P_i)"): a received Request advances the clock to its timestamp, an exit advances
//!   it by one and takes it, and an LKCS entry takes it as it stands. A counter of one's own
//!   exits (what we had) lets a process that moves rarely keep old timestamps and preempt a
//!   busy neighbour's transition again and again: LMUTIN reached 25–30 messages for one exit
//!   on a ring (Lemma 6's 6(|N_i| + 1) = 18) and 88–97 on a complete graph of 8 (48); with
//!   the clock 15–18 and 40–46.
//!
//! Rules LK-5, LK-6, LK-8, LK-9, LK-10 and LK-12 were our reading of the leader's nomination;
//! they went with it (LK-14).
//!
//! **Status**: safe on every topology and bound we ran. Some (topology, l, k) have no
//! configuration from which every process can move, and the simulator refuses them
//! (`Graph::initial_configuration`): seed 004 claims liveness for 0 ≤ l_i < k_i ≤ |N_i| + 1,
//! and a 3 × 3 grid with (1, 2) shows that no algorithm has it there. Elsewhere every run
//! on rings, grids and complete graphs was live; on random graphs a few runs keep one
//! process waiting past a watchdog of 20 000 time units while the others keep moving (a
//! parked request keeps its timestamp but not its places; docs/message-passing.md); with 10^6 they complete.
//! Lemma 6's 6(|N_i| + 1) holds for LMUTIN; in LKCS a transition that waits on the
//! configuration parks (FAILED, PARK, RESUME, grants again), which the lemma does not count.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::setup::Setup;
use crate::mp::{Algorithm, Charge, Group, Message, Pid, Runtime};

/// Which algorithm of seed 004.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// l_i-LMUTIN (Algorithm 2).
    Lmutin,
    /// LKCS (Algorithms 3–5, with LK-14 and LK-15).
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
    /// ⟨Grant, at⟩, with the granted request's timestamp (LK-13) and generation (LK-15).
    Grant(At, u64, u32),
    /// ⟨Release, at⟩.
    Release(At),
    /// ⟨Preempt, at⟩, naming the grant (LK-13).
    Preempt(At, u64),
    /// ⟨Relinquish, at⟩, naming the grant (LK-13).
    Relinquish(At, u64),
    /// ⟨Failed, at, ts, generation⟩: request ts waits here behind completed transitions
    /// only (LK-15).
    Failed(At, u64, u32),
    /// ⟨Park, at, ts⟩: take back the grant of request ts, and do not grant it until Resume.
    Park(At, u64),
    /// ⟨Resume, at, ts, generation⟩: request ts is pending again.
    Resume(At, u64, u32),
}

impl Message for LkMsg {
    fn kind(&self) -> &'static str {
        match self {
            LkMsg::Request(..) => "REQUEST",
            LkMsg::Grant(..) => "GRANT",
            LkMsg::Release(_) => "RELEASE",
            LkMsg::Preempt(..) => "PREEMPT",
            LkMsg::Relinquish(..) => "RELINQUISH",
            LkMsg::Failed(..) => "FAILED",
            LkMsg::Park(..) => "PARK",
            LkMsg::Resume(..) => "RESUME",
        }
    }
    fn size_ints(&self) -> usize {
        match self {
            LkMsg::Release(_) => 1,
            LkMsg::Request(..) | LkMsg::Preempt(..) | LkMsg::Relinquish(..) | LkMsg::Park(..) => 2,
            LkMsg::Grant(..) | LkMsg::Failed(..) | LkMsg::Resume(..) => 3,
        }
    }
    /// Everything is charged to the transition it serves: a Grant, Preempt or Failed to its
    /// receiver's, the rest to the sender's.
    fn charge(&self) -> Charge {
        match self {
            LkMsg::Grant(..) | LkMsg::Preempt(..) | LkMsg::Failed(..) => Charge::Receiver,
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
    /// The timestamp of the current (or last) request.
    ts: u64,
    /// The logical clock (LK-16): the largest request timestamp sent or received.
    clock: u64,
    n_grants: [BTreeSet<Pid>; 2],
    granted_to: [BTreeSet<(u64, Pid)>; 2],
    pending: [BTreeSet<(u64, Pid)>; 2],
    preempting: [Option<(u64, Pid)>; 2],
    /// The transition waiting for grants, if any.
    requesting: Option<At>,
    /// l_i and k_i (Cond_i's L_i and K_i, LK-14).
    l: usize,
    k: usize,
    /// Per `at` and closed neighbour (by position in `closed`): its grant is held by a
    /// process that has completed the transition (LK-11; LKCS only).
    completed: [Vec<bool>; 2],
    /// LK-15, grantor side: parked requests per `at`, the pending ones already told
    /// Failed, and per closed neighbour the generation of its request.
    parked: [BTreeSet<(u64, Pid)>; 2],
    failed_sent: [BTreeSet<(u64, Pid)>; 2],
    req_gen: [Vec<u32>; 2],
    /// LK-15, requester side: the grantors whose Failed holds the waiting transition (until
    /// they grant it), the grantors it is parked at (None: not parked), and per closed
    /// neighbour the generation of the request as last sent there.
    blocked: BTreeSet<Pid>,
    parked_at: Option<BTreeSet<Pid>>,
    sent_gen: Vec<u32>,
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
        let width = closed.len();
        let completed = if variant == Variant::Lkcs {
            [
                closed.iter().map(|&j| !s.initial_in[j]).collect(),
                closed.iter().map(|&j| s.initial_in[j]).collect(),
            ]
        } else {
            [vec![false; width], vec![false; width]]
        };
        Local {
            variant,
            completed,
            closed,
            inside: s.initial_in[me],
            ts: t0,
            clock: t0,
            n_grants: Default::default(),
            granted_to: [out, inn],
            pending: Default::default(),
            preempting: [None, None],
            requesting: None,
            l: s.l[me],
            k: s.k[me],
            parked: Default::default(),
            failed_sent: Default::default(),
            req_gen: [vec![0; width], vec![0; width]],
            blocked: BTreeSet::new(),
            parked_at: None,
            sent_gen: vec![0; width],
        }
    }

    fn degree(&self) -> usize {
        self.closed.len() - 1
    }

    /// Cond_i for `at`: room for one more grant.
    fn cond(&self, at: At) -> bool {
        if at == MUTEX {
            self.granted_to[MUTEX].len() < self.k
        } else {
            self.granted_to[MUTIN].len() + self.l < self.degree() + 1
        }
    }

    fn broadcast(&self, rt: &mut dyn Runtime<LkMsg>, msg: LkMsg) {
        for &j in &self.closed {
            rt.send(j, msg.clone());
        }
    }

    /// The position of `p` in the closed neighbourhood.
    fn slot(&self, p: Pid) -> Option<usize> {
        self.closed.binary_search(&p).ok()
    }

    /// Grants the lowest pending requests while Cond_i holds (LK-7).
    fn serve(&mut self, rt: &mut dyn Runtime<LkMsg>, at: At) {
        while self.cond(at) {
            let Some(h) = self.pending[at].pop_first() else {
                break;
            };
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
        self.failed_sent[at].remove(&h);
        let mut generation = 0;
        if let Some(s) = self.slot(h.1) {
            self.completed[at][s] = false;
            generation = self.req_gen[at][s];
        }
        self.granted_to[at].insert(h);
        rt.send(h.1, LkMsg::Grant(at, h.0, generation));
    }

    /// Asks the holder of the highest granted request of `at` to give it back if `than`
    /// is older (Algorithm 5's preemption); in LKCS no grant whose holder has completed its
    /// transition is asked (LK-11).
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
            if than < h {
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
        }
        self.review(rt, at);
    }

    /// After any change to `at`: serve what fits (LK-7); in LKCS, aim a preemption for the
    /// oldest pending request and, when every holder of `at` here has completed its
    /// transition, tell each pending request once that it is blocked here (LK-15).
    fn review(&mut self, rt: &mut dyn Runtime<LkMsg>, at: At) {
        self.serve(rt, at);
        if self.variant != Variant::Lkcs || self.pending[at].is_empty() {
            return;
        }
        if let Some(&h) = self.pending[at].first() {
            self.maybe_preempt(rt, at, h);
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

    fn start(&mut self, rt: &mut dyn Runtime<LkMsg>, at: At) {
        self.n_grants[at].clear();
        self.blocked.clear();
        self.parked_at = None;
        self.sent_gen.iter_mut().for_each(|g| *g = 0);
        self.requesting = Some(at);
        self.broadcast(rt, LkMsg::Request(at, self.ts));
    }

    /// LK-15: a Grant or Failed of generation `g` from `from` answers the request as last
    /// sent there.
    fn current(&self, from: Pid, g: u32) -> bool {
        self.slot(from).is_some_and(|s| self.sent_gen[s] == g)
    }

    /// LK-15: blocked by a completed configuration, give back every grant held and park the
    /// request at every grantor but the blocking ones.
    fn park(&mut self, rt: &mut dyn Runtime<LkMsg>, at: At) {
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
    }

    /// LK-15: once every blocking grantor has granted, the request is pending again where it
    /// was parked.
    fn unpark(&mut self, rt: &mut dyn Runtime<LkMsg>, at: At) {
        if !self.blocked.is_empty() {
            return;
        }
        if let Some(set) = self.parked_at.take() {
            for j in set {
                let g = self.slot(j).map_or(0, |s| self.sent_gen[s]);
                rt.send(j, LkMsg::Resume(at, self.ts, g));
            }
        }
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
                // LK-16: the entry's timestamp is the clock as it stands.
                self.ts = self.clock;
                self.start(rt, MUTEX)
            }
        }
    }

    /// Exit-Sequence.
    fn on_exit(&mut self, rt: &mut dyn Runtime<LkMsg>) {
        // Algorithm 2 / 4: ts_i := ts_i + 1, on the logical clock (LK-16).
        self.clock += 1;
        self.ts = self.clock;
        self.start(rt, MUTIN);
    }

    fn on_message(&mut self, rt: &mut dyn Runtime<LkMsg>, from: Pid, msg: LkMsg) {
        match msg {
            LkMsg::Request(at, ts) => {
                // LK-16.
                self.clock = self.clock.max(ts);
                if let Some(s) = self.slot(from) {
                    self.req_gen[at][s] = 0;
                }
                self.pending[at].insert((ts, from));
                if self.cond(at) {
                    self.serve(rt, at);
                } else {
                    self.maybe_preempt(rt, at, (ts, from));
                }
                self.review(rt, at);
            }
            LkMsg::Grant(at, t, g) => {
                // LK-13: only a grant of the request now waiting counts; LK-15: of its
                // current generation there, and while parked only a blocking grantor's.
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
            LkMsg::Failed(at, t, g) => {
                // LK-15.
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
            LkMsg::Release(at) => {
                if self.preempting[at].is_some_and(|(_, p)| p == from) {
                    self.preempting[at] = None;
                }
                self.granted_to[at].retain(|&(_, p)| p != from);
                self.review(rt, at);
                self.completes(rt, 1 - at, from);
            }
            LkMsg::Preempt(at, t) => {
                // LK-3, LK-13.
                if self.requesting == Some(at) && t == self.ts && self.n_grants[at].remove(&from) {
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
                self.review(rt, at);
            }
            LkMsg::Park(at, t) => {
                // LK-15.
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
            LkMsg::Resume(at, t, g) => {
                if self.parked[at].remove(&(t, from)) {
                    if let Some(s) = self.slot(from) {
                        self.req_gen[at][s] = g;
                    }
                    self.pending[at].insert((t, from));
                    self.review(rt, at);
                }
            }
        }
    }

    fn starts_inside(&self) -> bool {
        self.inside
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mp::metrics::MpResult;
    use crate::mp::run_config::RunConfig;
    use crate::mp::sim::{run, SimConfig};
    use crate::mp::topo::{Graph, Topology};
    use crate::mp::workload::Dist;
    use crate::mp::Problem;

    /// One simulated LKCS run with the CLI's defaults (ncs exp:50, cs uniform:0,40, channel
    /// delay exp:10), every process entering `requests` times; a request waiting 20 000 time
    /// units (some 300 critical sections) is reported as a liveness failure.
    fn lkcs(topology: Topology, n: usize, l: usize, k: usize, seed: u64) -> MpResult {
        let graph = Graph::build(&topology, n, seed);
        let (l, k) = (vec![l; n], vec![k; n]);
        let initial_in = graph
            .initial_configuration(&l, &k, seed)
            .unwrap_or_else(|e| panic!("{topology} n = {n} seed {seed}: {e}"));
        let run_config = RunConfig {
            algo: "lkcs".into(),
            problem: Problem::LocalCs,
            setup: Setup {
                n,
                m: 1,
                graph,
                l,
                k,
                initial_in,
                leader: 0,
            },
            requests: 25,
            seed,
            ncs: Dist::Exp(50.0),
            cs: Dist::Uniform(0.0, 40.0),
            delay: Dist::Exp(10.0),
            mix: "single".parse().unwrap(),
            watchdog: 20_000.0,
        };
        let cfg = SimConfig {
            run: run_config,
            topology: topology.to_string(),
            fifo: true,
            trace: false,
        };
        run(&cfg, |p, s| Local::new(p, s, Variant::Lkcs))
    }

    #[test]
    fn live_and_safe_on_sparse_graphs_with_both_bounds_active() {
        // Each of these was stuck (no process served for good) before LK-14 / LK-15.
        let cases = [
            (Topology::Ring, 9, 1, 2),
            (Topology::Ring, 16, 1, 2),
            (Topology::Grid, 9, 1, 3),
            (Topology::Grid, 16, 1, 2),
            (Topology::Grid, 16, 1, 3),
            (Topology::Random(3.0), 16, 1, 2),
            (Topology::Random(4.0), 16, 1, 3),
        ];
        for (t, n, l, k) in cases {
            for seed in 1..=3 {
                let r = lkcs(t.clone(), n, l, k, seed);
                let what = format!("{t} n = {n} ({l}, {k}) seed {seed}");
                assert_eq!(r.safety_violations, 0, "{what}: {:?}", r.violations);
                assert!(
                    r.liveness_failure.is_none(),
                    "{what}: {:?}",
                    r.liveness_failure
                );
                assert!(r.requests >= 25 * n as u64, "{what}: {}", r.requests);
            }
        }
    }

    #[test]
    fn a_blocked_transition_parks_and_resumes() {
        // Ring of 9 with (1, 2): transitions wait on the configuration, so LK-15 runs.
        let r = lkcs(Topology::Ring, 9, 1, 2, 1);
        assert!(r.liveness_failure.is_none(), "{:?}", r.liveness_failure);
        let count = |kind: &str| {
            r.messages_by_kind
                .iter()
                .find(|m| m.kind == kind)
                .map_or(0.0, |m| m.per_request)
        };
        assert!(count("FAILED") > 0.0 && count("PARK") > 0.0, "{r:?}");
        assert!(count("RESUME") > 0.0, "{r:?}");
    }
}
