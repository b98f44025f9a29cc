//! TokenGME (Mittal & Mohan, JPDC 2007; seed 003 §3): Suzuki–Kasami with one primary token and
//! secondary tokens, priority = size + age type selection (or FIFO, §4.2).
//!
//! The seed lost its pseudocode (actions A0–A6); these actions follow
//! `../shared/seeds/TOKEN_GME_NOTES.md`. Rules the seed text does not state are named
//! decisions, `TG-n`, here and in docs/message-passing.md:
//!
//! - **TG-1 (initial state)**: p0 holds the primary token of type ⊥, which conflicts with every
//!   type, so the first requests are queued and the first A6 picks a real type.
//! - **TG-2 (primary holder asking for another type)** broadcasts REQUEST like everyone else,
//!   or secondary holders never learn of the conflict.
//! - **TG-3 (no secondary past a queued conflict)**: the primary holder issues a secondary for a
//!   same-type request only when no conflicting request is queued (stated for §5.1; without it
//!   a busy type can starve the queue).
//! - **TG-4 (new primary scans)**: a process receiving the primary treats every pending request
//!   it knows of and the queue does not hold as a fresh REQUEST (A2).
//! - **TG-5 (stale RELEASE)**: RELEASE(s) with s > session_i restarts the count at 1, s =
//!   session_i counts, older is ignored.
//! - **TG-6 (tie-break)**: equal priorities go to the type whose oldest request was queued
//!   first; the oldest request of the chosen type becomes the next primary holder.
//! - **TG-7 (secondaries carry oldNoOfTokens)**: a secondary token issued in session s is used
//!   only once the previous session is released, by the same safety test as the primary.
//! - **TG-8 (local broadcast copy)**: the copy of a broadcast to oneself is a local action (no
//!   message), as the seed allows ("can be simulated by a local action").
//! - **TG-9 (secondary release)**: a secondary holder releases when it is outside, not waiting to
//!   use the token, and knows a pending request (its own included) of another type.
//! - **TG-10 (passive receipts)**: a process holding no token, or holding a secondary inside
//!   the critical section, takes REQUEST and RELEASE passively ([`Algorithm::passive`]): the
//!   simulator may apply them late, in a batch, with the same outcome. A simulation decision,
//!   not a rule of the algorithm.
//!
//! Section 5: `multi` (§5.1, multi-type requests, rules MT-1…MT-7), `blocking` (§5.1,
//! freedom from unnecessary blocking as a property the simulator checks after every event),
//! `bounded` (§5.2, bounded sequence numbers) and `ft` (§5.3, crash recovery by
//! restarting the algorithm, rules FT-1…FT-7).

use std::collections::VecDeque;

mod blocking;
mod bounded;
mod ft;
#[cfg(test)]
mod ft_tests;
#[cfg(test)]
mod lockstep;
mod msg;
mod multi;
#[cfg(test)]
mod multi_tests;
use bounded::Bounded;
#[cfg(test)]
pub(crate) use ft::set_restart_twice;
pub use msg::{Queued, TgMsg, Token};

use super::setup::Setup;
use crate::mp::{Algorithm, Group, Observation, Pid, Runtime};

/// How the next session's type is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selection {
    /// priority(t) = |S_t| + Σ ages (seed 003 §3.2.1).
    Priority,
    /// The type of the first queued request (seed 003 §4.2).
    Fifo,
}

/// The ⊥ type of the initial primary token (TG-1).
const BOTTOM: Group = usize::MAX;

/// One process.
#[derive(Debug)]
pub struct TokenGme {
    me: Pid,
    selection: Selection,
    /// request_i[j] = (number, type).
    /// Stored as 32-bit (number, type) pairs: every REQUEST touches one entry of the
    /// receiver's table, and halving the table halves what those touches pull into cache.
    request: Vec<(u32, u32)>,
    session: u64,
    no_of_release: u64,
    /// Boxed, as it arrives: the process's state stays small (a passive receipt reads it).
    token: Option<Box<Token>>,
    /// Type of the outstanding request, if any (the first of its set, §5.1).
    want: Option<Group>,
    /// §5.1 (MT-1): the further types of the outstanding request (empty: one type).
    want_also: Vec<Group>,
    /// §5.1 (MT-1): the further types of request_i[j], once a multi-type REQUEST came.
    also: multi::Also,
    /// The deliberately broken variant that checks the §5.1 checkers: A2 reads only the
    /// first type of a set.
    first_type_only: bool,
    inside: bool,
    /// Secondary holder: a pending request of another type is known (set on receipt of the
    /// token by one scan, then by each REQUEST, so an event costs O(1) rather than O(n)).
    conflict: bool,
    /// Primary holder: which processes the queue holds, and how many queued requests conflict
    /// with the token's type (an index of the queue rebuilt on receipt, so A2 is O(1)).
    queued: Vec<bool>,
    queued_conflicts: usize,
    /// Secondaries issued by A2, sent after the handler's borrow of the token ends.
    outbox: Vec<(Pid, Token)>,
    /// The bounded variant's resets (§5.2), if bounded.
    bounded: Option<Box<Bounded>>,
    /// Crash recovery (§5.3), from the first crash detected on.
    ft: Option<Box<ft::Ft>>,
    /// A2 issues secondaries (false only in the deliberately broken variant that checks the
    /// §5.1 checker).
    admit: bool,
    /// A6 ages the requests it leaves queued (false only in the deliberately broken variant
    /// that checks Theorem 6's row: priority is then size alone, and a rare type starves).
    ageing: bool,
    /// A6 waits for the current session's RELEASEs before choosing the next session (true
    /// only in the deliberately broken variant that checks Theorem 10's row: the next session
    /// then waits for a RELEASE and a TOKEN, two hops).
    hold_for_releases: bool,
    /// An even-numbered primary holder hands the primary token to its successor instead of
    /// running A6 itself (true only in the deliberately broken variant that checks Theorem
    /// 11's row: a request then waits for REQUEST, TOKEN, TOKEN, three hops).
    detour: bool,
    /// A1 broadcasts its REQUEST twice (true only in the deliberately broken variant that
    /// checks Theorem 8's row: the copies are ignored, but each costs n − 1 messages).
    request_twice: bool,
}

impl TokenGme {
    /// Process `me` (A0; TG-1).
    pub fn new(me: Pid, s: &Setup, selection: Selection) -> Self {
        TokenGme {
            me,
            selection,
            request: vec![(0, u32::MAX); s.n],
            session: 0,
            no_of_release: 0,
            token: (me == 0).then(|| {
                Box::new(Token {
                    primary: true,
                    ty: BOTTOM,
                    session: 0,
                    fulfilled: vec![0; s.n],
                    old_no_of_tokens: 0,
                    no_of_tokens_issued: 0,
                    queue: VecDeque::new(),
                    total_issued: None,
                    epochs: None,
                })
            }),
            want: None,
            want_also: Vec::new(),
            also: None,
            first_type_only: false,
            inside: false,
            conflict: false,
            queued: vec![false; s.n],
            queued_conflicts: 0,
            outbox: Vec::new(),
            bounded: None,
            ft: None,
            admit: true,
            ageing: true,
            hold_for_releases: false,
            detour: false,
            request_twice: false,
        }
    }

    /// The deliberately broken variant whose A6 never ages a queued request (the self-reported
    /// age then stays 0 while the request starves): a negative control for Theorem 6's row.
    #[cfg(test)]
    pub(crate) fn without_ageing(mut self) -> Self {
        self.ageing = false;
        self
    }

    /// The deliberately broken variant whose primary holder starts the next session only when
    /// every secondary of the current one has released (a RELEASE, then the TOKEN: two hops of
    /// synchronization delay): a negative control for Theorem 10's row.
    #[cfg(test)]
    pub(crate) fn holding_for_releases(mut self) -> Self {
        self.hold_for_releases = true;
        self
    }

    /// The deliberately broken variant whose even-numbered primary holders pass the primary
    /// token to their (odd) successor, which runs A6 (one hop more on every path through such
    /// a holder): a negative control for Theorem 11's row.
    #[cfg(test)]
    pub(crate) fn with_detour(mut self) -> Self {
        self.detour = true;
        self
    }

    /// The deliberately broken variant whose A1 broadcasts each REQUEST twice (harmless, as
    /// receivers ignore a number they have seen, but 3(n − 1) + 1 messages for a request that
    /// releases): a negative control for Theorem 8's row.
    #[cfg(test)]
    pub(crate) fn requesting_twice(mut self) -> Self {
        self.request_twice = true;
        self
    }

    /// Process `me` of the bounded variant (seed 003 §5.2): sequence numbers in 0..=smax.
    pub fn new_bounded(me: Pid, s: &Setup, selection: Selection, smax: u64) -> Self {
        Self::with_resets(me, s, selection, smax, true)
    }

    /// With §5.2's reset messages and pauses every smax requests (sessions), resetting the
    /// numbers (`wrap`, the bounded variant) or not (the unbounded reference that makes
    /// the same exchanges, for lockstep tests).
    pub fn with_resets(me: Pid, s: &Setup, selection: Selection, smax: u64, wrap: bool) -> Self {
        let mut p = TokenGme::new(me, s, selection);
        if let Some(t) = p.token.as_mut() {
            t.total_issued = Some(0);
            t.epochs = Some(vec![false; s.n]);
        }
        p.bounded = Some(Box::new(Bounded::new(s.n, smax, wrap)));
        p
    }

    /// Whether request number `r` of `j` is newer than what token `t` fulfilled for `j`.
    /// Bounded variant (§5.2.1, TGB-7): a fulfilled entry from before this process's last
    /// reset of `j`'s entry is older than every request number but 0 ("smax ≺ 1").
    fn newer(&self, t: &Token, j: Pid, r: u64) -> bool {
        match (self.bounded.as_ref(), t.epochs.as_ref()) {
            (Some(b), Some(e)) if b.epoch[j] != e[j] => r >= 1,
            _ => r > t.fulfilled[j],
        }
    }

    /// Token `t` fulfils request number `num` of `j` (TGB-7: in this process's epoch of `j`).
    fn fulfil(bounded: Option<&Bounded>, t: &mut Token, j: Pid, num: u64) {
        t.fulfilled[j] = num;
        if let (Some(b), Some(e)) = (bounded, t.epochs.as_mut()) {
            e[j] = b.epoch[j];
        }
    }

    /// Condition (1) ∨ (2) of seed 003 §3.2.
    fn safe(&self, t: &Token) -> bool {
        t.old_no_of_tokens == 0
            || (self.session + 1 == t.session && self.no_of_release == t.old_no_of_tokens)
            || self.session == t.session
    }

    /// request_i[j] as (number, type).
    #[inline]
    fn req(&self, j: Pid) -> (u64, Group) {
        let (num, ty) = self.request[j];
        let ty = if ty == u32::MAX { BOTTOM } else { ty as Group };
        (u64::from(num), ty)
    }

    fn pending(&self, t: &Token, j: Pid) -> bool {
        self.newer(t, j, self.req(j).0)
    }

    /// Enter if holding a safe token of the wanted type; then release or pass if idle.
    /// Without a token there is nothing to do: most receipts, every passive one, end here.
    #[inline]
    fn progress(&mut self, rt: &mut dyn Runtime<TgMsg>) {
        if self.token.is_some() {
            self.progress_holding(rt);
        }
    }

    fn progress_holding(&mut self, rt: &mut dyn Runtime<TgMsg>) {
        if let Some(t) = self.token.as_ref() {
            // MT-2: for the token's type, if the request names it.
            if self.wants(t.ty) && !self.inside && self.safe(t) {
                let ty = t.ty;
                self.want = None;
                self.want_also.clear();
                self.inside = true;
                rt.enter_as(ty);
                self.after_entry(rt);
                return;
            }
        }
        if self.inside {
            return;
        }
        let Some(t) = self.token.as_ref() else {
            return;
        };
        // Waiting to use an unsafe token of a wanted type: busy.
        if self.wants(t.ty) {
            return;
        }
        if t.primary {
            if self.hold_for_releases
                && t.no_of_tokens_issued > 0
                && !(self.session == t.session && self.no_of_release >= t.no_of_tokens_issued)
            {
                return;
            }
            // Only when no other token is out (none of this session's or the last one's
            // secondaries) and the successor has no request known: it takes the token as
            // any holder of a primary token it did not ask for does.
            let succ = (self.me + 1) % self.request.len();
            if self.detour
                && self.me.is_multiple_of(2)
                && !succ.is_multiple_of(2)
                && !t.queue.is_empty()
                && t.no_of_tokens_issued == 0
                && t.old_no_of_tokens == 0
                && !self.queued[succ]
                && !self.pending(t, succ)
            {
                let t = self.token.take().expect("just seen");
                rt.send(succ, TgMsg::Token(t));
                return;
            }
            if !t.queue.is_empty() && !self.session_reset_first(rt) {
                self.a6(rt);
            }
        } else {
            // TG-9 (the flag kept by token receipt and each REQUEST: O(1) per event).
            debug_assert_eq!(
                self.conflict,
                (0..self.request.len()).any(|k| self.pending(t, k) && !self.compatible(k, t.ty))
            );
            if self.conflict {
                let s = t.session;
                self.token = None;
                rt.broadcast(TgMsg::Release(s));
                // TG-8: the copy to oneself.
                self.on_release(s);
                self.count_release(rt);
            }
        }
    }

    /// A2 at the primary holder (and TG-4 for scans).
    fn a2_primary(&mut self, j: Pid) {
        let (num, ty) = self.req(j);
        let Some(t) = self.token.as_ref() else {
            return;
        };
        if !t.primary || self.queued[j] || !self.newer(t, j, num) {
            return;
        }
        // §5.1: compatible (MT-3), unless a conflicting request is queued (TG-3).
        let compatible = self.admits(j, t.ty);
        let conflict_queued = self.queued_conflicts > 0;
        if compatible && !conflict_queued && j != self.me && self.admit {
            let t = self.token.as_mut().expect("just seen");
            // Issue a secondary (TG-3 checked above).
            Self::fulfil(self.bounded.as_deref(), t, j, num);
            t.no_of_tokens_issued += 1;
            Self::count_issued(t);
            let sec = Token {
                primary: false,
                ty: t.ty,
                session: t.session,
                fulfilled: t.fulfilled.clone(),
                old_no_of_tokens: t.old_no_of_tokens,
                no_of_tokens_issued: 0,
                queue: VecDeque::new(),
                total_issued: None,
                epochs: t.epochs.clone(),
            };
            self.outbox.push((j, sec));
        } else {
            // MT-4: with its set.
            let also = self.also_of(j);
            let t = self.token.as_mut().expect("just seen");
            t.queue.push_back(multi::queued(j, num, ty, also));
            self.queued[j] = true;
            if !compatible {
                self.queued_conflicts += 1;
            }
        }
    }

    /// A6: start the next session.
    fn a6(&mut self, rt: &mut dyn Runtime<TgMsg>) {
        let mut t = self.token.take().expect("primary held");
        // Subsets by type, priority (TG-6, MT-5) or FIFO (MT-6).
        let chosen = self.choose(&t);
        // MT-7: every request naming the chosen type.
        let (members, rest): (Vec<Queued>, Vec<Queued>) =
            t.queue.drain(..).partition(|q| q.has(chosen));
        for q in &members {
            Self::fulfil(self.bounded.as_deref(), &mut t, q.pid, q.num);
            // The age is the number of sessions started since it was queued.
            rt.observe(Observation::SessionsWaited(q.age));
        }
        t.old_no_of_tokens = t.no_of_tokens_issued;
        t.no_of_tokens_issued = members.len() as u64 - 1;
        t.session += 1;
        t.ty = chosen;
        t.queue = rest
            .into_iter()
            .map(|mut q| {
                q.age += u64::from(self.ageing);
                q
            })
            .collect();
        rt.observe(Observation::SessionStarted);
        let primary_to = members[0].pid;
        for q in &members[1..] {
            Self::count_issued(&mut t);
            let sec = Token {
                primary: false,
                ty: t.ty,
                session: t.session,
                fulfilled: t.fulfilled.clone(),
                old_no_of_tokens: t.old_no_of_tokens,
                no_of_tokens_issued: 0,
                queue: VecDeque::new(),
                total_issued: None,
                epochs: t.epochs.clone(),
            };
            rt.send(q.pid, TgMsg::Token(Box::new(sec)));
        }
        rt.send(primary_to, TgMsg::Token(t));
    }

    /// A5 (TG-5).
    fn on_release(&mut self, s: u64) {
        if s > self.session {
            self.session = s;
            self.no_of_release = 1;
        } else if s == self.session {
            self.no_of_release += 1;
        }
    }

    fn flush(&mut self, rt: &mut dyn Runtime<TgMsg>) {
        for (j, sec) in std::mem::take(&mut self.outbox) {
            rt.send(j, TgMsg::Token(Box::new(sec)));
        }
    }

    /// A1, for `group` and the further types in `want_also` (§5.1, MT-1).
    fn a1(&mut self, rt: &mut dyn Runtime<TgMsg>, group: Group) {
        self.want = Some(group);
        // MT-2: holding a token of a type the request names.
        if self.token.as_ref().is_some_and(|t| self.wants(t.ty)) {
            self.progress(rt);
            return;
        }
        let num = self.req(self.me).0 + 1;
        self.numbered(num);
        rt.broadcast(self.request_msg(num, group));
        if self.request_twice {
            rt.broadcast(self.request_msg(num, group));
        }
        // TG-8: the copy to oneself (TG-2 for a primary holder; MT-3).
        let also = self.want_also.clone();
        self.on_request_msg(rt, self.me, num, group, &also);
    }

    /// A2's record: request_i[j] := (num, ty), with the further types `also` (§5.1), for a
    /// number above the one kept.
    #[inline]
    fn a2_record(&mut self, j: Pid, num: u64, ty: Group, also: &[Group]) {
        if num > self.req(j).0 {
            self.record_also(j, also);
            self.request[j] = (
                u32::try_from(num).expect("request numbers fit 32 bits"),
                if ty == BOTTOM {
                    u32::MAX
                } else {
                    u32::try_from(ty).expect("types fit 32 bits")
                },
            );
        }
    }

    /// A REQUEST (from another process, or this process's own copy: TG-8) for `ty` and the
    /// further types `also` (§5.1).
    fn on_request_msg(
        &mut self,
        rt: &mut dyn Runtime<TgMsg>,
        j: Pid,
        num: u64,
        ty: Group,
        also: &[Group],
    ) {
        self.a2_record(j, num, ty, also);
        // Bounded variant: after recording, so a reset it completes is not undone.
        self.count_request(rt, j);
        if let Some(t) = self.token.as_ref() {
            if !t.primary && self.pending(t, j) && !self.compatible(j, t.ty) {
                self.conflict = true;
            }
        }
        if self.token.as_ref().is_some_and(|t| t.primary) {
            self.a2_primary(j);
            self.flush(rt);
        }
        self.progress(rt);
    }
}

impl Algorithm for TokenGme {
    type Msg = TgMsg;

    const PASSIVE: bool = true;

    /// **TG-10 (passive receipts)**: a process holding no token takes REQUEST and RELEASE
    /// passively. Without a token, A2 only raises request_i[j] to the higher request number
    /// (a maximum: order-free), A5 only keeps the highest session with its count of releases
    /// (order-free too: the count of the highest session seen, or of the current one
    /// added to), and `progress` returns at once; neither gives or takes a token, which is
    /// all this answer depends on.
    ///
    /// So does a secondary holder inside the critical section (unbounded, no recovery). A5
    /// is as above, and `progress` returns at once inside. A2 records as above, then sets
    /// TG-9's flag if the request it knows of `j` is pending and of another type: order-free
    /// too, since an earlier request of `j` that still looks pending to this token is of the
    /// session's type (`j` made no later one before it was served, and a request of another
    /// type is not served while this session holds a process inside), so it never sets the
    /// flag whatever order the receipts come in. Only its own exit, an event, ends this
    /// state. (At n = 500, two in five of the receipts the simulator ran as events before.)
    fn passive(&self, msg: &TgMsg) -> bool {
        self.passive_now()
            && matches!(
                msg,
                TgMsg::Request(..) | TgMsg::RequestAny(..) | TgMsg::Release(_)
            )
    }

    /// Without a token, or holding a secondary inside the critical section (TG-10); TGB-6:
    /// never in the bounded variant.
    fn passive_now(&self) -> bool {
        self.bounded.is_none()
            && self
                .token
                .as_ref()
                .is_none_or(|t| !t.primary && self.inside && self.ft.is_none())
    }

    /// A passive REQUEST or RELEASE without copying it: the instance-0 path of
    /// [`Algorithm::on_message`] (no recovery under way), else that handler on a copy.
    #[inline]
    fn on_passive(&mut self, rt: &mut dyn Runtime<TgMsg>, from: Pid, msg: &TgMsg) {
        match *msg {
            // Without a token or the bounded variant, A2 is its record alone:
            // `on_request_msg`'s other steps (`count_request`, the token's checks,
            // `progress`) do nothing. A secondary holder inside, passive too (`passive_now`),
            // takes the next arm: its receipt may set TG-9's flag.
            TgMsg::Request(num, ty)
                if self.ft.is_none() && self.bounded.is_none() && self.token.is_none() =>
            {
                self.a2_record(from, num, ty, &[])
            }
            TgMsg::Request(num, ty) if self.ft.is_none() => {
                self.on_request_msg(rt, from, num, ty, &[])
            }
            TgMsg::Release(s) if self.ft.is_none() => {
                self.on_release(s);
                self.count_release(rt);
                self.progress(rt);
            }
            _ => self.on_message(rt, from, msg.clone()),
        }
    }

    /// A2 will read request_i[from] for each: with at least half as many receipts as
    /// entries, the whole table is fetched, its lines in order (at n = 500, 63 lines for
    /// receipts that come 512–1 023 at a time for most copies).
    fn will_receive_many(&self, receipts: usize) -> bool {
        if 2 * receipts < self.request.len() {
            return false;
        }
        crate::mp::prefetch_lines(&self.request, usize::MAX);
        true
    }

    /// A2 will read request_i[from].
    fn will_receive(&self, from: Pid, _msg: &TgMsg) {
        if let Some(r) = self.request.get(from) {
            crate::mp::prefetch(r);
        }
    }

    /// Bounded variant: §5.2.3's domains (none for the unbounded one).
    fn out_of_domain(&self) -> Option<String> {
        self.domain_violation()
    }

    /// §5.1's checker (see [`blocking`]).
    fn unnecessary_blocking(&self) -> Option<String> {
        self.blocked_request()
    }

    /// §5.3 (see [`ft`]).
    fn on_crash_detected(&mut self, rt: &mut dyn Runtime<TgMsg>, p: Pid) {
        self.detect(rt, p);
    }

    /// A1 (held back during the bounded variant's RESET_RSN, TGB-2, and while a restart
    /// suspends the instance, §5.3).
    fn on_request(&mut self, rt: &mut dyn Runtime<TgMsg>, group: Group) {
        if self.held_by_restart(group) {
            return;
        }
        self.tagged(rt, |p, rt| {
            if !p.hold_request(group) {
                p.a1(rt, group);
            }
        });
    }

    /// A1 for a request of any of `types` (§5.1, MT-1), held back as a single type's is (the
    /// further types wait in `want_also`).
    fn on_request_any(&mut self, rt: &mut dyn Runtime<TgMsg>, types: &[Group]) {
        self.want_also.clear();
        self.want_also.extend_from_slice(&types[1..]);
        self.on_request(rt, types[0]);
    }

    /// A4 (or the end of an old request's critical section, or a deferred RESTART, §5.3).
    fn on_exit(&mut self, rt: &mut dyn Runtime<TgMsg>) {
        if self.exit_in_recovery(rt) {
            return;
        }
        self.tagged(rt, |p, rt| {
            p.inside = false;
            rt.exited();
            p.progress(rt);
        });
    }

    fn on_message(&mut self, rt: &mut dyn Runtime<TgMsg>, from: Pid, msg: TgMsg) {
        if let Some(msg) = self.recovery_message(rt, from, msg) {
            self.tagged(rt, |p, rt| p.on_algo_message(rt, from, msg));
        }
    }
}

impl TokenGme {
    /// A message of the algorithm (of the current instance, §5.3).
    fn on_algo_message(&mut self, rt: &mut dyn Runtime<TgMsg>, from: Pid, msg: TgMsg) {
        match msg {
            TgMsg::Request(num, ty) => self.on_request_msg(rt, from, num, ty, &[]),
            TgMsg::RequestAny(num, types) => {
                self.on_request_msg(rt, from, num, types[0], &types[1..])
            }
            // A3.
            TgMsg::Token(t) => {
                // Checked in every build (one comparison a token): a second token is a broken
                // run, and tests of the fault-tolerant variants count on seeing it.
                assert!(self.token.is_none(), "p{} got a second token", self.me);
                let primary = t.primary;
                if primary {
                    self.queued.iter_mut().for_each(|q| *q = false);
                    for q in &t.queue {
                        self.queued[q.pid] = true;
                    }
                    self.queued_conflicts = t.queue.iter().filter(|q| !q.has(t.ty)).count();
                }
                self.conflict = !primary
                    && (0..self.request.len())
                        .any(|k| self.newer(&t, k, self.req(k).0) && !self.compatible(k, t.ty));
                self.token = Some(t);
                if primary {
                    // TG-4.
                    for j in 0..self.request.len() {
                        self.a2_primary(j);
                    }
                    self.flush(rt);
                }
                self.progress(rt);
            }
            // A5.
            TgMsg::Release(s) => {
                self.on_release(s);
                self.count_release(rt);
                self.progress(rt);
            }
            // The bounded variant's resets (§5.2).
            TgMsg::ResetRsn => self.on_reset_rsn(rt, from),
            TgMsg::AckRsn => self.on_ack_rsn(rt),
            TgMsg::ResetSsn(total) => {
                self.on_reset_ssn(rt, from, total);
                self.progress(rt);
            }
            TgMsg::AckSsn => self.on_ack_ssn(rt),
            _ => unreachable!("recovery messages are taken by recovery_message"),
        }
    }
}
