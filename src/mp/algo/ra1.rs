//! Joung's RA1 (Distributed Computing 15, 2002): Ricart–Agrawala with forums. A request carries
//! a Lamport timestamp and its forum; a receiver replies at once unless it is interested in a
//! *different* forum (inside it, or requesting it with higher priority), in which case it
//! defers the reply until it leaves. 2(n − 1) messages per request.

use serde::{Deserialize, Serialize};

use super::setup::Setup;
use crate::mp::{Algorithm, Charge, Group, Message, Pid, Runtime};

/// Messages.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Ra1Msg {
    /// REQUEST(ts, forum).
    Request(u64, Group),
    /// REPLY.
    Reply,
}

impl Message for Ra1Msg {
    fn kind(&self) -> &'static str {
        match self {
            Ra1Msg::Request(..) => "REQUEST",
            Ra1Msg::Reply => "REPLY",
        }
    }
    fn size_ints(&self) -> usize {
        match self {
            Ra1Msg::Request(..) => 2,
            Ra1Msg::Reply => 0,
        }
    }
    fn charge(&self) -> Charge {
        match self {
            Ra1Msg::Request(..) => Charge::Sender,
            Ra1Msg::Reply => Charge::Receiver,
        }
    }
}

/// One process.
#[derive(Debug)]
pub struct Ra1 {
    me: Pid,
    clock: u64,
    /// (timestamp, id) and forum of the outstanding or current request.
    mine: Option<((u64, Pid), Group)>,
    replies: usize,
    inside: bool,
    deferred: Vec<Pid>,
}

impl Ra1 {
    /// Process `me`.
    pub fn new(me: Pid, _s: &Setup) -> Self {
        Ra1 {
            me,
            clock: 0,
            mine: None,
            replies: 0,
            inside: false,
            deferred: Vec::new(),
        }
    }
}

impl Algorithm for Ra1 {
    type Msg = Ra1Msg;

    fn on_request(&mut self, rt: &mut dyn Runtime<Ra1Msg>, group: Group) {
        self.clock += 1;
        self.mine = Some(((self.clock, self.me), group));
        self.replies = 0;
        if rt.n() == 1 {
            self.inside = true;
            rt.enter();
            return;
        }
        for j in 0..rt.n() {
            if j != self.me {
                rt.send(j, Ra1Msg::Request(self.clock, group));
            }
        }
    }

    fn on_exit(&mut self, rt: &mut dyn Runtime<Ra1Msg>) {
        self.inside = false;
        self.mine = None;
        rt.exited();
        for j in std::mem::take(&mut self.deferred) {
            rt.send(j, Ra1Msg::Reply);
        }
    }

    fn on_message(&mut self, rt: &mut dyn Runtime<Ra1Msg>, from: Pid, msg: Ra1Msg) {
        match msg {
            Ra1Msg::Request(ts, forum) => {
                self.clock = self.clock.max(ts);
                let defer = match self.mine {
                    Some((prio, f)) if f != forum => self.inside || prio < (ts, from),
                    _ => false,
                };
                if defer {
                    self.deferred.push(from);
                } else {
                    rt.send(from, Ra1Msg::Reply);
                }
            }
            Ra1Msg::Reply => {
                self.replies += 1;
                if self.replies == rt.n() - 1 && self.mine.is_some() && !self.inside {
                    self.inside = true;
                    rt.enter();
                }
            }
        }
    }
}
