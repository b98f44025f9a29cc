//! Seed 004 (Kamei & Kakugawa, Algorithms 2017): l_i-LMUTIN (Algorithm 2, local mutual
//! inclusion: at least l_i of each closed neighbourhood inside) and LKCS (Algorithms 3–5, the
//! generalized local critical section: l_i ≤ |CS_i| ≤ k_i; Algorithms 6–7 run only with
//! `sim --lkcs-rules printed` and in tests, LK-14), in one state machine.
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
//!   moves again), and a preemption aimed at it is aimed again: after any change at the
//!   grantor, for its oldest pending request (Algorithm 5 preempts only on receipt of a
//!   Request, so such a preemption is counted on Lemma 6's machinery path, `Cause::inferred`).
//! - **LK-13 (grant identity)**: Grant, Preempt and Relinquish carry the timestamp of the
//!   granted request; a process counts only grants of its current request, and a Relinquish
//!   returns only the grant it names.
//! - **LK-14 (no leader)**: Cond_i uses l_i and k_i everywhere and nobody nominates. The
//!   seed's leader (L_i = l_i + 1, K_i = k_i − 1 within distance 2 of P_LDR, Algorithms 6–7)
//!   runs only with the switch [`Rules::leader`] (tests, and [`RuleSet`] for `sim --lkcs-rules`) (`leader.rs`, readings LK-14a…LK-14g).
//!   As printed, TriggerNomination's tests cannot hold when it is called, so it sends no
//!   Trigger and the leader only tightens the bounds; read at Cond's limits
//!   ([`Rules::at_capacity`], LK-14g) it nominates again while earlier nominees hold their
//!   unconditional special grants. Seeds 1–4, 25 entries, from a C0 within L_i and K_i where
//!   one exists (live of 4; stuck / dead / unsafe):
//!
//!   | case | LK-14 | leader + LK-15 | leader | LK-14g + LK-15 | LK-14g |
//!   |---|---|---|---|---|---|
//!   | ring 9, (1, 2) | 4 | 0 (3 stuck, 1 dead) | 0 (4 dead) | 0 (3 stuck, 1 dead) | 0 (4 dead, 2 unsafe) |
//!   | ring 9, (0, 3) | 4 | 0 (4 stuck) | 0 (4 stuck) | 4 | 0 (4 stuck) |
//!   | grid 16, (1, 3) | 4 | 0 (4 stuck) | 0 (4 dead) | 0 (4 stuck) | 0 (4 dead) |
//!   | complete 8, (1, 3) | 4 | 0 (4 dead) | 0 (4 dead) | 0 (4 dead) | 4 (4 unsafe) |
//!   | complete 8, (0, 4) | 4 | 4 | 4 | 4 (4 unsafe) | 4 (4 unsafe) |
//!
//!   Each reading fails where LK-14 is live and safe (`leader_tests.rs`; more rows in
//!   docs/message-passing.md). LK-15 does the leader's job everywhere and needs no tightened
//!   bounds.
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
//! Lemma 6 (counted per path by `crate::mp::paths`, messages charged as its proof does): no
//! transition on the no-preemption or the preemption path has exceeded 3(|N_i| + 1) or
//! 6(|N_i| + 1) in any run we made; a transition that waits on the configuration parks
//! (FAILED, PARK, RESUME, grants again) and is on the machinery path, which the lemma does not
//! bound. LK-15 and LK-16 can be switched off in tests, and the leader on ([`Rules`]), each with
//! a run that fails.
//!
//! **Mutants** ([`Mutant`], `sim --lkcs-rules mutant-k-plus-one` / `mutant-l-minus-one`): Cond_i
//! with `<` read as `≤`, one grant past k_i (MUTEX) or past |N_i| − l_i + 1 (MUTIN). The ledger's
//! `004/lemma4-bind` runs them where the bounds bind and must not hold under either.

mod grantor;
mod leader;
#[cfg(test)]
mod leader_tests;
mod msg;
mod requester;
mod rules;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};

use super::setup::Setup;
use crate::mp::{Algorithm, Group, Pid, Runtime};

pub use msg::{At, Cause, LkMsg, MUTEX, MUTIN};
pub use rules::RuleSet;

/// Which algorithm of seed 004.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// l_i-LMUTIN (Algorithm 2).
    Lmutin,
    /// LKCS (Algorithms 3–5, with LK-14 and LK-15).
    Lkcs,
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
    /// Grantor side, for counting only: per `at`, each relinquished request and the process
    /// whose request preempted it (its grant given again is charged there, Lemma 6).
    regrant: [BTreeMap<(u64, Pid), Cause>; 2],
    /// Which of our rules are on (all, but in tests that show a run failing without one).
    rules: Rules,
    /// Seed 004's leader (only with `rules.leader`): whether this process is P_LDR, whether
    /// it is within distance 2 of P_LDR (the macros L_i, K_i), and whether P_LDR waits after
    /// TriggerNomination() for Waiting_LDR to fall (Algorithm 4).
    is_leader: bool,
    near_leader: bool,
    nominating: bool,
}

/// Rules of ours that a test may switch off to show a run that fails without them
/// (`Local::with_rules`); every runtime runs with all of them unless `sim --lkcs-rules`
/// picks another [`RuleSet`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules {
    /// LK-15: a blocked transition parks.
    pub park: bool,
    /// LK-16: ts_i is a Lamport clock (off: a counter of the process's own exits).
    pub clock: bool,
    /// Seed 004's leader, Algorithms 6–7 with the macros L_i, K_i (on: the seed's text,
    /// `leader.rs`; off: LK-14, no leader).
    pub leader: bool,
    /// With the leader: Algorithm 6's tests read at Cond_i's limits (LK-14g), not as printed.
    pub at_capacity: bool,
    /// A one-character mutant of Cond_i, to show that the checks catch an off-by-one (never
    /// on outside `sim --lkcs-rules mutant-*`).
    pub mutant: Option<Mutant>,
}

/// An off-by-one in Cond_i (Algorithms 2 and 5), for testing the checks: with it a grantor
/// gives one grant more than its bound allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutant {
    /// MUTEX: `|grantedTo| < K_i` read as `≤` (up to k_i + 1 inside a closed neighbourhood).
    KPlusOne,
    /// MUTIN: `|grantedTo| < |N_i| − L_i + 1` read as `≤` (down to l_i − 1 inside).
    LMinusOne,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            park: true,
            clock: true,
            leader: false,
            at_capacity: false,
            mutant: None,
        }
    }
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
            regrant: Default::default(),
            rules: Rules::default(),
            is_leader: false,
            near_leader: false,
            nominating: false,
        }
    }

    /// [`Local::new`] with some of our rules switched off (tests, and [`RuleSet`]).
    pub fn with_rules(me: Pid, s: &Setup, variant: Variant, rules: Rules) -> Self {
        // LK-14a: P_LDR is `s.leader`, the smallest id.
        let (is_leader, near_leader) = if rules.leader {
            (me == s.leader, s.graph.distance(s.leader, me) <= 2)
        } else {
            (false, false)
        };
        Local {
            rules,
            is_leader,
            near_leader,
            ..Local::new(me, s, variant)
        }
    }

    fn degree(&self) -> usize {
        self.closed.len() - 1
    }

    /// Cond_i for `at`: room for one more grant (with K_i and L_i, which are k_i and l_i
    /// without the leader, LK-14).
    fn cond(&self, at: At) -> bool {
        let m = self.rules.mutant;
        if at == MUTEX {
            let k = self.bound_k() + usize::from(m == Some(Mutant::KPlusOne));
            self.granted_to[MUTEX].len() < k
        } else {
            let room = self.degree() + 1 + usize::from(m == Some(Mutant::LMinusOne));
            self.granted_to[MUTIN].len() + self.bound_l() < room
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
}

impl Algorithm for Local {
    type Msg = LkMsg;

    /// Entry-Sequence (Algorithm 2: enter and Release MUTIN; Algorithm 4: Request MUTEX).
    fn on_request(&mut self, rt: &mut dyn Runtime<LkMsg>, _group: Group) {
        match self.variant {
            Variant::Lmutin => {
                self.inside = true;
                rt.enter();
                self.broadcast(rt, LkMsg::Release(MUTIN));
            }
            Variant::Lkcs => {
                // LK-16: the entry's timestamp is the clock as it stands (off: ts_i as is).
                if self.rules.clock {
                    self.ts = self.clock;
                }
                self.start(rt, MUTEX);
                self.leader_step(rt);
            }
        }
    }

    /// Exit-Sequence (Algorithms 2 and 4: ts_i := ts_i + 1, Request MUTIN).
    fn on_exit(&mut self, rt: &mut dyn Runtime<LkMsg>) {
        if self.rules.clock {
            // LK-16: on the logical clock.
            self.clock += 1;
            self.ts = self.clock;
        } else {
            self.ts += 1;
        }
        self.start(rt, MUTIN);
        self.leader_step(rt);
    }

    /// Algorithm 5's handlers (Algorithm 2's for LMUTIN), LK-15's, and Algorithm 7's.
    fn on_message(&mut self, rt: &mut dyn Runtime<LkMsg>, from: Pid, msg: LkMsg) {
        match msg {
            LkMsg::Request(at, ts) => self.on_request_msg(rt, from, at, ts),
            LkMsg::Grant(at, t, g, _) => self.on_grant(rt, from, at, t, g),
            LkMsg::Failed(at, t, g) => self.on_failed(rt, from, at, t, g),
            LkMsg::Release(at) => self.on_release(rt, from, at),
            LkMsg::Preempt(at, t, b) => self.on_preempt(rt, from, at, t, b),
            LkMsg::Relinquish(at, t, b) => self.on_relinquish(rt, from, at, t, b),
            LkMsg::Park(at, t) => self.on_park(rt, from, at, t),
            LkMsg::Resume(at, t, g) => self.on_resume(rt, from, at, t, g),
            LkMsg::Trigger(at, t) => self.on_trigger(rt, at, t),
            LkMsg::RequestByTrigger(at, t, g) => self.on_request_by_trigger(rt, from, at, t, g),
        }
        self.leader_step(rt);
    }

    fn starts_inside(&self) -> bool {
        self.inside
    }
}
