//! Ricart and Agrawala's permission-based mutual exclusion (CACM 1981): a request carries a
//! Lamport timestamp; a process replies at once unless it is inside, or requesting with higher
//! priority (smaller (timestamp, id)), in which case it defers the reply until it leaves.

use serde::{Deserialize, Serialize};

use super::setup::Setup;
use crate::mp::{Algorithm, Charge, Group, Message, Pid, Runtime};

/// Messages.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum RaMsg {
    /// REQUEST(ts).
    Request(u64),
    /// REPLY (permission).
    Reply,
}

impl Message for RaMsg {
    fn kind(&self) -> &'static str {
        match self {
            RaMsg::Request(_) => "REQUEST",
            RaMsg::Reply => "REPLY",
        }
    }
    fn size_ints(&self) -> usize {
        match self {
            RaMsg::Request(_) => 1,
            RaMsg::Reply => 0,
        }
    }
    fn charge(&self) -> Charge {
        match self {
            RaMsg::Request(_) => Charge::Sender,
            RaMsg::Reply => Charge::Receiver,
        }
    }
}

/// One process.
#[derive(Debug)]
pub struct RicartAgrawala {
    me: Pid,
    clock: u64,
    /// (timestamp, id) of the outstanding request.
    mine: Option<(u64, Pid)>,
    replies: usize,
    inside: bool,
    deferred: Vec<Pid>,
}

impl RicartAgrawala {
    /// Process `me`.
    pub fn new(me: Pid, _s: &Setup) -> Self {
        RicartAgrawala {
            me,
            clock: 0,
            mine: None,
            replies: 0,
            inside: false,
            deferred: Vec::new(),
        }
    }
}

impl Algorithm for RicartAgrawala {
    type Msg = RaMsg;

    fn on_request(&mut self, rt: &mut dyn Runtime<RaMsg>, _group: Group) {
        self.clock += 1;
        self.mine = Some((self.clock, self.me));
        self.replies = 0;
        if rt.n() == 1 {
            self.inside = true;
            rt.enter();
            return;
        }
        for j in 0..rt.n() {
            if j != self.me {
                rt.send(j, RaMsg::Request(self.clock));
            }
        }
    }

    fn on_exit(&mut self, rt: &mut dyn Runtime<RaMsg>) {
        self.inside = false;
        self.mine = None;
        rt.exited();
        for j in std::mem::take(&mut self.deferred) {
            rt.send(j, RaMsg::Reply);
        }
    }

    fn on_message(&mut self, rt: &mut dyn Runtime<RaMsg>, from: Pid, msg: RaMsg) {
        match msg {
            RaMsg::Request(ts) => {
                self.clock = self.clock.max(ts);
                let defer = self.inside || self.mine.is_some_and(|m| m < (ts, from));
                if defer {
                    self.deferred.push(from);
                } else {
                    rt.send(from, RaMsg::Reply);
                }
            }
            RaMsg::Reply => {
                self.replies += 1;
                if self.replies == rt.n() - 1 && self.mine.is_some() && !self.inside {
                    self.inside = true;
                    rt.enter();
                }
            }
        }
    }
}
