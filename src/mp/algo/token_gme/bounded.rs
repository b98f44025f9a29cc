//! TokenGME with bounded sequence numbers (seed 003 §5.2): every request number and the
//! session number stay in 0..=smax, and are reset to 0 once they reach smax.
//!
//! - **§5.2.1 (request numbers)** [seed]: once p_i's request numbered smax is fulfilled, p_i
//!   broadcasts RESET_RSN and generates no request until every process has acknowledged. A
//!   process p_j receiving it waits until it has received smax REQUESTs from p_i since the
//!   last reset, then sets request_j[i] to 0 and acknowledges. The fulfilled vectors are not
//!   reset: for deciding whether a request is new, "we assume smax < 1" (the order lost a
//!   symbol; read smax ≺ 1): a fulfilled smax is older than request number 1.
//! - **§5.2.2 (session number)** [seed]: before starting the session after session smax, the
//!   primary holder broadcasts RESET_SSN(totalNoOfTokensIssued); p_j waits until it has
//!   received that many RELEASEs since the last reset, sets session_j to 0 and acknowledges;
//!   once all have, the primary holder starts the next session.
//!
//! Inferred steps (TGB-n, named here and in docs/message-passing.md):
//!
//! - **TGB-1 (when a request is fulfilled)**: at the entry the request numbered smax gives.
//! - **TGB-2 (all requests wait)**: during its RESET_RSN, p_i holds back every request, even
//!   one a token at hand would serve at once (the seed: "stops generating any further
//!   requests").
//! - **TGB-3 (local copies)**: p_i's (and the primary holder's) own reset is a local action,
//!   counted as its own acknowledgement, as the seed's broadcasts include a copy to oneself.
//!   The primary holder sets its own session number to 0 with its token's, once every
//!   acknowledgement is in (until then it may still use its token in the old session).
//! - **TGB-4 (after RESET_SSN)**: every secondary token issued so far has been released, so
//!   the primary's session, noOfTokensIssued and totalNoOfTokensIssued restart at 0 and the
//!   next session (number 1) is safe at once (oldNoOfTokens = 0); noOfRelease_j restarts at 0.
//! - **TGB-5 (fulfilled past smax)**: fulfilled[j] takes the number of the request it
//!   fulfils, so after smax it takes 1 (the seed's "set to 1") without a rule of its own.
//! - **TGB-7 (epoch bit)**: "smax ≺ 1" alone misreads a lagging entry: a token may carry
//!   fulfilled[j] = smax to a process whose request_i[j] is still an older number of the same
//!   round (its last REQUESTs from j are in transit), which would count as new. So each
//!   process keeps, per j, the parity of its resets of request_i[j], and each token, per j,
//!   the parity its fulfilled entry was set in (one bit per process, counted in the TOKEN's
//!   size). Equal parities compare numbers; different ones mean the entry predates the
//!   reset, and every request number but 0 is new. One bit suffices because no process
//!   resets j's entry twice while a request of j is pending anywhere, except behind a
//!   secondary token kept over a whole round of j (then only that holder's conflict check
//!   differs).
//! - **TGB-6 (no passive receipt)**: a REQUEST or RELEASE may complete a reset and send an
//!   acknowledgement, so the bounded variant takes every receipt as an event (TG-10 off).

use super::{Group, Pid, Runtime, TgMsg, TokenGme};

/// The reset bookkeeping of one process.
#[derive(Debug, Default)]
pub(super) struct Bounded {
    /// The largest value of a sequence number (seed: at least 2).
    pub(super) smax: u64,
    /// Whether resets set numbers to 0 (the variant); false keeps counting past smax with
    /// the same reset messages and pauses: the unbounded reference a lockstep test compares
    /// the variant with.
    wrap: bool,
    /// REQUESTs received from each process since its last reset (§5.2.1).
    requests_seen: Vec<u64>,
    /// RESET_RSN received from this process and not yet acknowledged.
    rsn_waiting: Vec<bool>,
    /// This process's RESET_RSN: acknowledgements still missing (None: not resetting).
    rsn_acks_missing: Option<usize>,
    /// Per process, the parity of this process's resets of its request entry (TGB-7).
    pub(super) epoch: Vec<bool>,
    /// This process's request numbered smax (a multiple of smax unwrapped) awaits its entry.
    rsn_due: bool,
    /// A request held back during this process's RESET_RSN (TGB-2).
    held_want: Option<Group>,
    /// RELEASEs received since the last session reset (§5.2.2).
    releases_seen: u64,
    /// A RESET_SSN received and not yet acknowledged: its totalNoOfTokensIssued and sender.
    ssn_waiting: Option<(u64, Pid)>,
    /// The primary holder's RESET_SSN: acknowledgements still missing.
    pub(super) ssn_acks_missing: Option<usize>,
    /// Unwrapped: the session number whose reset is done (its next session not yet begun).
    ssn_done_at: Option<u64>,
}

impl Bounded {
    pub(super) fn new(n: usize, smax: u64, wrap: bool) -> Self {
        assert!(smax >= 2, "smax must be at least 2 (seed 003 §5.2)");
        Bounded {
            smax,
            wrap,
            requests_seen: vec![0; n],
            rsn_waiting: vec![false; n],
            epoch: vec![false; n],
            ..Bounded::default()
        }
    }
}

impl TokenGme {
    fn b(&mut self) -> &mut Bounded {
        self.bounded.as_mut().expect("bounded variant")
    }

    /// TGB-2: whether a request must wait for this process's RESET_RSN; if so it is held.
    pub(super) fn hold_request(&mut self, group: Group) -> bool {
        let Some(b) = self.bounded.as_mut() else {
            return false;
        };
        if b.rsn_acks_missing.is_some() {
            b.held_want = Some(group);
            return true;
        }
        false
    }

    /// This process broadcasts its request numbered `num`.
    pub(super) fn numbered(&mut self, num: u64) {
        if let Some(b) = self.bounded.as_mut() {
            b.rsn_due = num.is_multiple_of(b.smax);
        }
    }

    /// TGB-1: after entering, start RESET_RSN if the request numbered smax was just served.
    pub(super) fn after_entry(&mut self, rt: &mut dyn Runtime<TgMsg>) {
        let me = self.me;
        let Some(b) = self.bounded.as_mut() else {
            return;
        };
        if !b.rsn_due {
            return;
        }
        b.rsn_due = false;
        b.rsn_acks_missing = Some(self.request.len());
        rt.broadcast(TgMsg::ResetRsn);
        // TGB-3: the copy to oneself.
        self.on_reset_rsn(rt, me);
    }

    /// A REQUEST from `j` was received (its own copy included): count it (§5.2.1).
    pub(super) fn count_request(&mut self, rt: &mut dyn Runtime<TgMsg>, j: Pid) {
        let Some(b) = self.bounded.as_mut() else {
            return;
        };
        b.requests_seen[j] += 1;
        self.try_reset_rsn(rt, j);
    }

    /// RESET_RSN from `i`.
    pub(super) fn on_reset_rsn(&mut self, rt: &mut dyn Runtime<TgMsg>, i: Pid) {
        self.b().rsn_waiting[i] = true;
        self.try_reset_rsn(rt, i);
    }

    /// Resets request_me[i] once all smax REQUESTs of `i` are in, and acknowledges.
    fn try_reset_rsn(&mut self, rt: &mut dyn Runtime<TgMsg>, i: Pid) {
        let b = self.b();
        if !b.rsn_waiting[i] || b.requests_seen[i] < b.smax {
            return;
        }
        debug_assert_eq!(b.requests_seen[i], b.smax, "exactly smax REQUESTs (seed)");
        b.rsn_waiting[i] = false;
        b.requests_seen[i] = 0;
        if b.wrap {
            b.epoch[i] = !b.epoch[i];
            self.request[i] = (0, u32::MAX);
        }
        if i == self.me {
            self.on_ack_rsn(rt);
        } else {
            rt.send(i, TgMsg::AckRsn);
        }
    }

    /// ACK of this process's RESET_RSN; the last one releases a held request.
    pub(super) fn on_ack_rsn(&mut self, rt: &mut dyn Runtime<TgMsg>) {
        let b = self.b();
        let left = b.rsn_acks_missing.expect("resetting") - 1;
        if left > 0 {
            b.rsn_acks_missing = Some(left);
            return;
        }
        b.rsn_acks_missing = None;
        if let Some(g) = b.held_want.take() {
            self.a1(rt, g);
        }
    }

    /// A secondary token was issued: totalNoOfTokensIssued += 1 (§5.2.2).
    pub(super) fn count_issued(t: &mut super::Token) {
        if let Some(total) = t.total_issued.as_mut() {
            *total += 1;
        }
    }

    /// Before A6: whether the session must first be reset (the primary then waits).
    pub(super) fn session_reset_first(&mut self, rt: &mut dyn Runtime<TgMsg>) -> bool {
        let me = self.me;
        let n = self.request.len();
        let Some(t) = self.token.as_ref() else {
            return false;
        };
        let (session, total) = (t.session, t.total_issued.unwrap_or(0));
        let Some(b) = self.bounded.as_mut() else {
            return false;
        };
        if b.ssn_acks_missing.is_some() {
            return true;
        }
        if session == 0 || !session.is_multiple_of(b.smax) || b.ssn_done_at == Some(session) {
            return false;
        }
        b.ssn_acks_missing = Some(n);
        rt.broadcast(TgMsg::ResetSsn(total));
        // TGB-3.
        self.on_reset_ssn(rt, me, total);
        true
    }

    /// A RELEASE was received (its own copy included): count it (§5.2.2).
    pub(super) fn count_release(&mut self, rt: &mut dyn Runtime<TgMsg>) {
        let Some(b) = self.bounded.as_mut() else {
            return;
        };
        b.releases_seen += 1;
        self.try_reset_ssn(rt);
    }

    /// RESET_SSN(total) from `i`.
    pub(super) fn on_reset_ssn(&mut self, rt: &mut dyn Runtime<TgMsg>, i: Pid, total: u64) {
        self.b().ssn_waiting = Some((total, i));
        self.try_reset_ssn(rt);
    }

    /// Resets session_me once every RELEASE of the announced tokens is in, and acknowledges.
    fn try_reset_ssn(&mut self, rt: &mut dyn Runtime<TgMsg>) {
        let b = self.b();
        let Some((total, i)) = b.ssn_waiting else {
            return;
        };
        if b.releases_seen < total {
            return;
        }
        debug_assert_eq!(b.releases_seen, total, "one RELEASE per secondary token");
        b.ssn_waiting = None;
        b.releases_seen = 0;
        // TGB-4; the primary holder resets its own with its token's (TGB-3).
        if b.wrap && i != self.me {
            self.session = 0;
            self.no_of_release = 0;
        }
        if i == self.me {
            self.on_ack_ssn(rt);
        } else {
            rt.send(i, TgMsg::AckSsn);
        }
    }

    /// ACK of the primary holder's RESET_SSN; the last one starts the next session.
    pub(super) fn on_ack_ssn(&mut self, rt: &mut dyn Runtime<TgMsg>) {
        let b = self.b();
        let left = b.ssn_acks_missing.expect("resetting the session") - 1;
        if left > 0 {
            b.ssn_acks_missing = Some(left);
            return;
        }
        b.ssn_acks_missing = None;
        let wrap = b.wrap;
        let session = self.token.as_ref().map(|t| t.session);
        if !wrap {
            self.b().ssn_done_at = session;
        }
        let t = self
            .token
            .as_mut()
            .expect("the primary holder waits with its token");
        // TGB-4: every secondary issued so far is released.
        if wrap {
            t.session = 0;
            self.session = 0;
            self.no_of_release = 0;
        }
        t.old_no_of_tokens = 0;
        t.no_of_tokens_issued = 0;
        t.total_issued = Some(0);
        self.progress(rt);
    }

    /// The first sequence number outside 0..=smax this process holds, if any (§5.2.3: the
    /// entries of request and fulfilled vectors and the session are at most smax;
    /// totalNoOfTokensIssued at most n·smax).
    pub(super) fn domain_violation(&self) -> Option<String> {
        let b = self.bounded.as_ref().filter(|b| b.wrap)?;
        let s = b.smax;
        let me = self.me;
        if let Some(j) = (0..self.request.len()).find(|&j| self.req(j).0 > s) {
            return Some(format!(
                "p{me}: request[{j}] = {} > smax = {s}",
                self.req(j).0
            ));
        }
        if self.session > s {
            return Some(format!("p{me}: session = {} > smax = {s}", self.session));
        }
        let t = self.token.as_ref()?;
        if t.session > s {
            return Some(format!("p{me}: token session = {} > smax = {s}", t.session));
        }
        if let Some(j) = t.fulfilled.iter().position(|&f| f > s) {
            return Some(format!(
                "p{me}: fulfilled[{j}] = {} > smax = {s}",
                t.fulfilled[j]
            ));
        }
        let n = self.request.len() as u64;
        match t.total_issued {
            Some(total) if total > n * s => Some(format!(
                "p{me}: totalNoOfTokensIssued = {total} > n·smax = {}",
                n * s
            )),
            _ => None,
        }
    }
}
