//! TokenGME's tokens and messages (seed 003 §3.2; §5.2's resets; §5.3's recovery).

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::mp::{Charge, Group, Message, Pid};

/// A queued request in the primary token.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Queued {
    /// Requesting process.
    pub pid: Pid,
    /// Its request number.
    pub num: u64,
    /// Its type (the first of its set, §5.1).
    pub ty: Group,
    /// Sessions started since it was queued.
    pub age: u64,
    /// §5.1: the further types of a multi-type request (empty for a single-type one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<Group>,
}

impl Queued {
    /// types(r), in the order the request named them.
    pub fn types(&self) -> impl Iterator<Item = Group> + '_ {
        std::iter::once(self.ty).chain(self.also.iter().copied())
    }

    /// Whether the request is compatible with type `t`: t ∈ types(r) (seed 003 §5.1).
    #[inline]
    pub fn has(&self, t: Group) -> bool {
        self.ty == t || self.also.contains(&t)
    }
}

/// A token, primary or secondary.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Token {
    /// Primary (may issue tokens) or secondary.
    pub primary: bool,
    /// The type it serves.
    pub ty: Group,
    /// Its session number.
    pub session: u64,
    /// Requests fulfilled per process, as this token knows.
    pub fulfilled: Vec<u64>,
    /// Secondaries issued in the previous session (TG-7: on every token).
    pub old_no_of_tokens: u64,
    /// Primary only: secondaries issued in this session.
    pub no_of_tokens_issued: u64,
    /// Primary only: the queue.
    pub queue: VecDeque<Queued>,
    /// Primary only, bounded variant (§5.2.2): secondaries issued since the last session reset.
    pub total_issued: Option<u64>,
    /// Bounded variant (TGB-7): per process, the parity of request-number resets the
    /// fulfilled entry belongs to.
    pub epochs: Option<Vec<bool>>,
}

/// Messages.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum TgMsg {
    /// REQUEST(number, type).
    Request(u64, Group),
    /// REQUEST(number, types) of a multi-type request (seed 003 §5.1): two or more types.
    RequestAny(u64, Vec<Group>),
    /// TOKEN.
    Token(Box<Token>),
    /// RELEASE(session).
    Release(u64),
    /// Bounded variant (§5.2.1): reset the sender's entry of the request vectors.
    ResetRsn,
    /// Bounded variant: a RESET_RSN is done here.
    AckRsn,
    /// Bounded variant (§5.2.2): reset session numbers (totalNoOfTokensIssued).
    ResetSsn(u64),
    /// Bounded variant: a RESET_SSN is done here.
    AckSsn,
    /// §5.3: a crash was detected; the sender's set of failed processes.
    Notify(Vec<Pid>),
    /// §5.3 phase 1: abort and start instance `k` without the failed processes.
    Restart(u64, Vec<Pid>),
    /// §5.3 phase 1: instance `k` started here; the pending (old) request's type, if any.
    Done(u64, Option<Group>),
    /// §5.3 phase 2: the old requests' schedule (groups of one type, in turn); enter.
    Start(u64, Vec<Vec<Pid>>),
    /// §5.3 phase 2: the sender, of group `i` of the schedule, left its critical section.
    Leave(u64, Vec<Vec<Pid>>, usize),
    /// §5.3 phase 3: resume instance `k`.
    Resume(u64),
    /// §5.3: a message of the algorithm in instance `k` ≥ 1 (instance 0 sends them bare).
    Inst(u64, Box<TgMsg>),
}

impl Message for TgMsg {
    fn kind(&self) -> &'static str {
        match self {
            TgMsg::Request(..) | TgMsg::RequestAny(..) => "REQUEST",
            TgMsg::Token(_) => "TOKEN",
            TgMsg::Release(_) => "RELEASE",
            TgMsg::ResetRsn => "RESET_RSN",
            TgMsg::AckRsn => "ACK_RSN",
            TgMsg::ResetSsn(_) => "RESET_SSN",
            TgMsg::AckSsn => "ACK_SSN",
            TgMsg::Notify(_) => "NOTIFY",
            TgMsg::Restart(..) => "RESTART",
            TgMsg::Done(..) => "DONE",
            TgMsg::Start(..) => "START",
            TgMsg::Leave(..) => "LEAVE",
            TgMsg::Resume(_) => "RESUME",
            TgMsg::Inst(_, m) => m.kind(),
        }
    }
    fn size_ints(&self) -> usize {
        match self {
            TgMsg::Request(..) => 2,
            // §5.1: the number and g types, O(g).
            TgMsg::RequestAny(_, types) => 1 + types.len(),
            TgMsg::Release(_) | TgMsg::ResetRsn | TgMsg::AckRsn | TgMsg::AckSsn => 1,
            TgMsg::ResetSsn(_) => 2,
            TgMsg::Notify(f) => f.len().max(1),
            TgMsg::Restart(_, f) => 1 + f.len(),
            TgMsg::Done(..) | TgMsg::Resume(_) => 2,
            TgMsg::Start(_, s) => 1 + s.iter().map(Vec::len).sum::<usize>(),
            TgMsg::Leave(_, s, _) => 2 + s.iter().map(Vec::len).sum::<usize>(),
            TgMsg::Inst(_, m) => 1 + m.size_ints(),
            // kind, type, session, old count, fulfilled[n]; the primary adds its issued count
            // and (pid, number, type, age) per queued request, and its further types (§5.1)
            // (and, bounded, its total).
            TgMsg::Token(t) => {
                4 + t.fulfilled.len()
                    + if t.primary {
                        1 + t.queue.iter().map(|q| 4 + q.also.len()).sum::<usize>()
                    } else {
                        0
                    }
                    + usize::from(t.total_issued.is_some())
                    + t.epochs.as_ref().map_or(0, |e| e.len().div_ceil(64))
            }
        }
    }
    fn charge(&self) -> Charge {
        match self {
            TgMsg::Request(..) | TgMsg::RequestAny(..) => Charge::Sender,
            TgMsg::Release(_) => Charge::SenderHeld,
            TgMsg::Token(_) => Charge::Receiver,
            TgMsg::ResetRsn | TgMsg::ResetSsn(_) => Charge::Sender,
            TgMsg::AckRsn | TgMsg::AckSsn => Charge::Receiver,
            // Recovery (§5.3.4 counts it apart from the requests).
            TgMsg::Notify(_)
            | TgMsg::Restart(..)
            | TgMsg::Done(..)
            | TgMsg::Start(..)
            | TgMsg::Leave(..)
            | TgMsg::Resume(_) => Charge::Receiver,
            TgMsg::Inst(_, m) => m.charge(),
        }
    }
    fn restart_op(&self) -> Option<u64> {
        match self {
            // A NOTIFY asks for the restart of its set: the instance id is the set's size (FT-1).
            TgMsg::Notify(f) => Some(f.len() as u64),
            TgMsg::Restart(k, _)
            | TgMsg::Done(k, _)
            | TgMsg::Start(k, _)
            | TgMsg::Leave(k, ..)
            | TgMsg::Resume(k) => Some(*k),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_size_counts_fulfilled_and_queue() {
        let t = Token {
            primary: true,
            ty: 1,
            session: 2,
            fulfilled: vec![0; 10],
            old_no_of_tokens: 0,
            no_of_tokens_issued: 0,
            queue: VecDeque::from(vec![Queued {
                pid: 1,
                num: 1,
                ty: 2,
                age: 0,
                also: Vec::new(),
            }]),
            total_issued: None,
            epochs: None,
        };
        assert_eq!(
            TgMsg::Token(Box::new(t.clone())).size_ints(),
            4 + 10 + 1 + 4
        );
        let sec = Token {
            primary: false,
            queue: VecDeque::new(),
            ..t
        };
        assert_eq!(TgMsg::Token(Box::new(sec)).size_ints(), 14);
        assert_eq!(TgMsg::Request(1, 2).size_ints(), 2);
    }

    #[test]
    fn multi_type_sizes_grow_with_the_types() {
        assert_eq!(TgMsg::RequestAny(1, vec![0, 3]).size_ints(), 3);
        assert_eq!(TgMsg::RequestAny(1, vec![0, 3, 4, 7]).size_ints(), 5);
        assert_eq!(TgMsg::RequestAny(1, vec![0, 3]).kind(), "REQUEST");
        let q = Queued {
            pid: 1,
            num: 1,
            ty: 2,
            age: 0,
            also: vec![5, 6],
        };
        assert!(q.has(2) && q.has(6) && !q.has(3));
        assert_eq!(q.types().collect::<Vec<_>>(), vec![2, 5, 6]);
        let t = Token {
            primary: true,
            ty: 1,
            session: 2,
            fulfilled: vec![0; 10],
            old_no_of_tokens: 0,
            no_of_tokens_issued: 0,
            queue: VecDeque::from(vec![q]),
            total_issued: None,
            epochs: None,
        };
        assert_eq!(TgMsg::Token(Box::new(t)).size_ints(), 4 + 10 + 1 + 4 + 2);
    }
}
