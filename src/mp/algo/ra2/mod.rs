//! Joung's RA2 (Distributed Computing 15, 2002), **reconstructed**: the seed names its shape
//! (a requester with all REPLYs enters as *leader* and invites compatible outstanding requesters
//! as *followers*; 3(n − 1) messages amortized; waiting time 2 hops; messages carry vectors of
//! size n) and its two vectors — VSN\[j\], the requests of j known here (for priority), and
//! VF\[j\], the entries of j known here (whether a request is still outstanding) — but not its
//! exact rules, so every rule below is ours and named.
//!
//! - **RA2-R1 (request)**: VSN\[me\] + 1 numbers the request (seq); its priority is
//!   (Σ VSN, id), which, like a Lamport clock, exceeds the priority of every request whose
//!   REQUEST was received before; broadcast REQUEST(Σ VSN, forum, seq, VSN), where seq lets
//!   late REPLYs and INVITEs for an old request be recognised and ignored.
//! - **RA2-R2 (on REQUEST from j for forum f)**: merge VSN (entry-wise maximum). A process
//!   that *occupies* a forum F (inside as leader, or left as leader while followers it
//!   invited are still inside) and is inside as leader with f = F sends INVITE; occupying
//!   with f ≠ F, it defers; occupying F but not inside, it applies the rules that follow. A
//!   follower inside forum F replies when f = F, else defers. A requester of forum F ≠ f
//!   whose priority is higher defers. Everyone else replies at once (as RA1). A REPLY
//!   carries VF.
//! - **RA2-R3 (on REPLY for the current seq)**: merge VF; with n − 1 of them, enter as
//!   leader and INVITE every process whose latest known request is for the same forum and
//!   still outstanding by VF (its seq above VF\[j\]).
//! - **RA2-R4 (on INVITE)**: a process still requesting that seq enters as the inviter's
//!   follower; otherwise it declines with DONE so the leader's count of followers drains.
//!   Whoever enters, or invites j for request s, raises VF\[me\] or VF\[j\] to that seq.
//! - **RA2-R5 (exit)**: a follower sends DONE to its leader and sends its deferred replies; a
//!   leader sends its deferred replies only when it is out *and* every follower it invited has
//!   sent DONE — this is what keeps a conflicting requester, who always needs the leader's
//!   reply, out while followers are inside.
//! - **RA2-R6 (honour invitations)**: a process that still occupies forum F as an earlier
//!   leader does not enter as leader of another forum until its followers are done, since an
//!   INVITE it sent may still be in flight.
//! - **RA2-R7 (changed entries only)**: as in seed 003's simulation, a vector is sent with
//!   Singhal and Kshemkalyani's scheme: only the entries that changed since this process last
//!   sent that vector to that receiver, as (index, value) pairs, which is exact on FIFO
//!   links (on others a receiver's vectors may lag; the rules stay safe and live, since
//!   neither vector decides who may enter). How a message keeps its entries without listing
//!   them (a shared snapshot of the sender's vector, merged in one pass) is in `vector`.
//!
//! Message size, in integers: REQUEST 3 + 2 per VSN entry sent, REPLY 1 + 2 per VF entry
//! sent, INVITE 1, DONE 0.

use serde::{Deserialize, Serialize};

use super::setup::Setup;
use crate::mp::{Algorithm, Charge, Group, Message, Pid, Runtime};

mod vector;

pub use self::vector::Changed;
use self::vector::Vector;

/// Messages.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Ra2Msg {
    /// REQUEST(priority, forum, seq, VSN's changed entries).
    Request(u64, Group, u64, Changed),
    /// REPLY(seq, VF's changed entries).
    Reply(u64, Changed),
    /// INVITE(seq): enter as the sender's follower.
    Invite(u64),
    /// DONE: a follower left (or declined an invitation).
    Done,
}

impl Message for Ra2Msg {
    fn kind(&self) -> &'static str {
        match self {
            Ra2Msg::Request(..) => "REQUEST",
            Ra2Msg::Reply(..) => "REPLY",
            Ra2Msg::Invite(_) => "INVITE",
            Ra2Msg::Done => "DONE",
        }
    }
    fn size_ints(&self) -> usize {
        match self {
            Ra2Msg::Request(.., v) => 3 + 2 * v.len(),
            Ra2Msg::Reply(_, v) => 1 + 2 * v.len(),
            Ra2Msg::Invite(_) => 1,
            Ra2Msg::Done => 0,
        }
    }
    fn charge(&self) -> Charge {
        match self {
            Ra2Msg::Request(..) | Ra2Msg::Done => Charge::Sender,
            Ra2Msg::Reply(..) | Ra2Msg::Invite(_) => Charge::Receiver,
        }
    }
}

/// How a process is inside.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Leader,
    Follower(Pid),
}

/// One process.
#[derive(Debug)]
pub struct Ra2 {
    me: Pid,
    /// VSN: requests of each process known here; `vsn_sum` is its sum, and `seq` its own
    /// entry (only RA2-R1 raises it: no one knows more of this process's requests), kept
    /// apart so that a REPLY or an INVITE checks it without reading the vector.
    vsn: Vector,
    vsn_sum: u64,
    seq: u64,
    /// VF: the latest request of each process known here to have been served (entered, or
    /// invited in).
    vf: Vector,
    /// Priority and forum of the outstanding or current request.
    mine: Option<((u64, Pid), Group)>,
    replies: usize,
    inside: Option<Role>,
    /// Forum occupied as leader (inside, or out with followers still inside).
    occupied: Option<Group>,
    followers_out: usize,
    /// Latest REQUEST received from each process: (seq, forum).
    known: Vec<Option<(u64, Group)>>,
    deferred: Vec<Deferred>,
}

/// A request whose reply is held back.
#[derive(Clone, Copy, Debug)]
struct Deferred {
    from: Pid,
    seq: u64,
    ts: u64,
    f: Group,
}

impl Ra2 {
    /// Process `me`.
    pub fn new(me: Pid, s: &Setup) -> Self {
        Ra2 {
            me,
            vsn: Vector::new(s.n),
            vsn_sum: 0,
            seq: 0,
            vf: Vector::new(s.n),
            mine: None,
            replies: 0,
            inside: None,
            occupied: None,
            followers_out: 0,
            known: vec![None; s.n],
            deferred: Vec::new(),
        }
    }

    fn seq(&self) -> u64 {
        debug_assert_eq!(self.seq, u64::from(self.vsn.get(self.me)));
        self.seq
    }

    fn enter_as_leader(&mut self, rt: &mut dyn Runtime<Ra2Msg>) {
        let forum = self.mine.expect("requesting").1;
        self.inside = Some(Role::Leader);
        self.occupied = Some(forum);
        self.vf.raise(self.me, self.seq() as u32);
        rt.enter();
        // RA2-R3: invite the compatible requesters still outstanding by VF.
        for j in 0..self.known.len() {
            if let Some((seq, f)) = self.known[j] {
                if f == forum && j != self.me && seq > u64::from(self.vf.get(j)) {
                    self.invite(rt, j, seq);
                }
            }
        }
    }

    fn invite(&mut self, rt: &mut dyn Runtime<Ra2Msg>, j: Pid, seq: u64) {
        self.vf.raise(j, seq as u32);
        self.followers_out += 1;
        rt.send(j, Ra2Msg::Invite(seq));
    }

    fn reply(&mut self, rt: &mut dyn Runtime<Ra2Msg>, to: Pid, seq: u64) {
        let vf = self.vf.for_one(to);
        rt.send(to, Ra2Msg::Reply(seq, vf));
    }

    /// RA2-R3 with **RA2-R6 (honour invitations)**: a process still occupying a forum as an
    /// earlier leader (an INVITE may be in flight) enters as leader of a different forum only
    /// once every follower it invited is done.
    fn try_lead(&mut self, rt: &mut dyn Runtime<Ra2Msg>) {
        let Some((_, forum)) = self.mine else {
            return;
        };
        if self.inside.is_none()
            && self.replies == rt.n() - 1
            && self.occupied.is_none_or(|f| f == forum)
        {
            self.enter_as_leader(rt);
        }
    }

    /// RA2-R5: outside, a leader stops occupying its forum once every follower it invited is
    /// done; outside and not occupying, a process sends its deferred replies. (A process may
    /// still occupy as an earlier leader while it is inside as a follower of the same forum.)
    fn settle(&mut self, rt: &mut dyn Runtime<Ra2Msg>) {
        if self.inside.is_some() {
            return;
        }
        if self.followers_out == 0 {
            self.occupied = None;
        }
        if self.occupied.is_none() {
            self.release_deferred(rt);
            self.try_lead(rt);
        }
    }

    /// RA2-R2: whether a request (ts, from) for forum `f` must wait for this process.
    fn defers(&self, ts: u64, from: Pid, f: Group) -> bool {
        if let Some(occ) = self.occupied {
            if occ != f {
                return true;
            }
        }
        match (self.inside, self.mine) {
            (Some(_), Some((_, mf))) => mf != f,
            (None, Some((prio, mf))) => mf != f && prio < (ts, from),
            _ => false,
        }
    }

    /// Sends the deferred replies the rules no longer hold back.
    fn release_deferred(&mut self, rt: &mut dyn Runtime<Ra2Msg>) {
        let deferred = std::mem::take(&mut self.deferred);
        for d in deferred {
            if self.defers(d.ts, d.from, d.f) {
                self.deferred.push(d);
            } else {
                self.reply(rt, d.from, d.seq);
            }
        }
    }
}

impl Algorithm for Ra2 {
    type Msg = Ra2Msg;

    fn on_request(&mut self, rt: &mut dyn Runtime<Ra2Msg>, group: Group) {
        // RA2-R1.
        let seq = self.vsn.get(self.me) + 1;
        self.vsn.raise(self.me, seq);
        self.seq = u64::from(seq);
        self.vsn_sum += 1;
        self.mine = Some(((self.vsn_sum, self.me), group));
        self.replies = 0;
        if rt.n() == 1 {
            self.enter_as_leader(rt);
            return;
        }
        let vsn = self.vsn.for_all();
        rt.broadcast(Ra2Msg::Request(self.vsn_sum, group, u64::from(seq), vsn));
    }

    fn on_exit(&mut self, rt: &mut dyn Runtime<Ra2Msg>) {
        let role = self.inside.take().expect("exit while outside");
        self.mine = None;
        rt.exited();
        if let Role::Follower(leader) = role {
            rt.send(leader, Ra2Msg::Done);
        }
        self.settle(rt);
    }

    /// Every RA2 receipt is an event, and its handler (and `will_receive`) reads the places
    /// of the vectors and lists held here first: the whole of this state (504 bytes).
    fn will_run(&self) {
        let at = std::ptr::from_ref(self).cast::<u8>();
        for line in (0..std::mem::size_of::<Self>()).step_by(64) {
            crate::mp::prefetch_at(at.wrapping_add(line));
        }
    }

    fn will_receive(&self, from: Pid, msg: &Ra2Msg) {
        crate::mp::prefetch(&self.known[from]);
        match msg {
            Ra2Msg::Request(.., vsn) => {
                self.vsn.will_merge(from, vsn);
                // Where the request goes if it is deferred.
                let end = self.deferred.as_ptr().wrapping_add(self.deferred.len());
                crate::mp::prefetch_at(end);
            }
            Ra2Msg::Reply(_, vf) => self.vf.will_merge(from, vf),
            _ => {}
        }
    }

    fn on_message(&mut self, rt: &mut dyn Runtime<Ra2Msg>, from: Pid, msg: Ra2Msg) {
        match msg {
            Ra2Msg::Request(ts, f, seq, vsn) => {
                self.vsn_sum += self.vsn.merge(from, &vsn);
                self.known[from] = Some((seq, f));
                if self.occupied == Some(f) && self.inside == Some(Role::Leader) {
                    self.invite(rt, from, seq);
                } else if self.defers(ts, from, f) {
                    self.deferred.push(Deferred { from, seq, ts, f });
                } else {
                    self.reply(rt, from, seq);
                }
            }
            Ra2Msg::Reply(seq, vf) => {
                self.vf.merge(from, &vf);
                if seq == self.seq() && self.mine.is_some() && self.inside.is_none() {
                    self.replies += 1;
                    self.try_lead(rt);
                }
            }
            Ra2Msg::Invite(seq) => {
                if seq == self.seq() && self.mine.is_some() && self.inside.is_none() {
                    self.inside = Some(Role::Follower(from));
                    self.vf.raise(self.me, seq as u32);
                    rt.enter();
                } else {
                    rt.send(from, Ra2Msg::Done);
                }
            }
            Ra2Msg::Done => {
                self.followers_out -= 1;
                self.settle(rt);
            }
        }
    }
}

#[cfg(test)]
mod pinned;
#[cfg(test)]
mod tests;
