//! The messages of seed 004's Algorithms 2, 5 and 7 (and LK-15's), and how each is counted
//! against Lemma 6.

use serde::{Deserialize, Serialize};

use crate::mp::{Charge, Message, Path, Pid};

/// MUTIN (0) or MUTEX (1).
pub type At = usize;
/// Permission to be out (granted for exiting, held while out).
pub const MUTIN: At = 0;
/// Permission to be in (granted for entering, held while in).
pub const MUTEX: At = 1;

/// Why a Preempt was sent, carried by it, by the Relinquish it returns and by the grant
/// given again after it. For counting only (Lemma 6 charges these messages to the transition
/// that caused the preemption): no handler reads it, and it is not part of a message's size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cause {
    /// The process whose request caused the preemption.
    pub of: Pid,
    /// Sent by one of our rules (LK-11: aimed again after a change at the grantor) rather
    /// than by Algorithm 5's Request handler.
    pub inferred: bool,
}

/// Messages; `at` is 0 for MUTIN, 1 for MUTEX.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum LkMsg {
    /// ⟨Request, at, ts⟩.
    Request(At, u64),
    /// ⟨Grant, at⟩, with the granted request's timestamp (LK-13) and generation (LK-15);
    /// `Some` when it is the grant given again after a preemption.
    Grant(At, u64, u32, Option<Cause>),
    /// ⟨Release, at⟩.
    Release(At),
    /// ⟨Preempt, at⟩, naming the grant (LK-13).
    Preempt(At, u64, Cause),
    /// ⟨Relinquish, at⟩, naming the grant (LK-13), echoing the Preempt's cause.
    Relinquish(At, u64, Cause),
    /// ⟨Failed, at, ts, generation⟩: request ts waits here behind completed transitions
    /// only (LK-15).
    Failed(At, u64, u32),
    /// ⟨Park, at, ts⟩: take back the grant of request ts, and do not grant it until Resume.
    Park(At, u64),
    /// ⟨Resume, at, ts, generation⟩: request ts is pending again.
    Resume(At, u64, u32),
    /// ⟨Trigger, at, ts⟩ (Algorithms 6–7, only with the leader): P_LDR nominates request ts.
    Trigger(At, u64),
    /// ⟨RequestByTrigger, at⟩ (Algorithm 7), with the request's timestamp (LK-13) and the
    /// generation at its receiver (LK-15; LK-14f): give a special grant.
    RequestByTrigger(At, u64, u32),
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
            LkMsg::Trigger(..) => "TRIGGER",
            LkMsg::RequestByTrigger(..) => "REQUEST_BY_TRIGGER",
        }
    }
    fn size_ints(&self) -> usize {
        match self {
            LkMsg::Release(_) => 1,
            LkMsg::Request(..)
            | LkMsg::Preempt(..)
            | LkMsg::Relinquish(..)
            | LkMsg::Park(..)
            | LkMsg::Trigger(..) => 2,
            LkMsg::Grant(..)
            | LkMsg::Failed(..)
            | LkMsg::Resume(..)
            | LkMsg::RequestByTrigger(..) => 3,
        }
    }
    /// Each message is charged to the transition it serves, as Lemma 6's proof counts:
    /// Request, Release, Park, Resume and RequestByTrigger to the sender's; a Grant, Failed and
    /// Trigger to the receiver's (the nominee's); a Preempt, its Relinquish and the grant given
    /// again after it to the transition that caused the preemption (the lemma's Preempt,
    /// Relinquish and "Grant to some process with the highest priority" after the Release).
    fn charge(&self) -> Charge {
        match *self {
            LkMsg::Grant(_, _, _, Some(c))
            | LkMsg::Preempt(_, _, c)
            | LkMsg::Relinquish(_, _, c) => Charge::Of(c.of),
            LkMsg::Grant(..) | LkMsg::Failed(..) | LkMsg::Trigger(..) => Charge::Receiver,
            _ => Charge::Sender,
        }
    }
    /// A preemption by Algorithm 5's Request handler is the lemma's preemption path; one
    /// aimed again by LK-11, LK-15's messages and the leader's (Algorithms 6–7) are outside it.
    fn path(&self) -> Path {
        match *self {
            LkMsg::Grant(_, _, _, Some(c))
            | LkMsg::Preempt(_, _, c)
            | LkMsg::Relinquish(_, _, c) => {
                if c.inferred {
                    Path::Machinery
                } else {
                    Path::Preemption
                }
            }
            LkMsg::Failed(..)
            | LkMsg::Park(..)
            | LkMsg::Resume(..)
            | LkMsg::Trigger(..)
            | LkMsg::RequestByTrigger(..) => Path::Machinery,
            _ => Path::NoPreemption,
        }
    }
}
