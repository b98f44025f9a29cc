//! Suzuki and Kasami's token mutual exclusion (ACM TOCS 1985), the base of TokenGME (seed 003
//! §3.1). One token carries LN (last granted request number per process) and a FIFO queue;
//! every process keeps RN (largest request number heard per process).

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::setup::Setup;
use crate::mp::{Algorithm, Charge, Group, Message, Pid, Runtime};

/// Messages.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum SkMsg {
    /// REQUEST(sn): the sender's request number sn.
    Request(u64),
    /// TOKEN(LN, Q).
    Token { ln: Vec<u64>, queue: VecDeque<Pid> },
}

impl Message for SkMsg {
    fn kind(&self) -> &'static str {
        match self {
            SkMsg::Request(_) => "REQUEST",
            SkMsg::Token { .. } => "TOKEN",
        }
    }
    fn size_ints(&self) -> usize {
        match self {
            SkMsg::Request(_) => 1,
            SkMsg::Token { ln, queue } => ln.len() + 1 + queue.len(),
        }
    }
    fn charge(&self) -> Charge {
        match self {
            SkMsg::Request(_) => Charge::Sender,
            SkMsg::Token { .. } => Charge::Receiver,
        }
    }
}

/// The token while held.
#[derive(Clone, Debug)]
struct Token {
    ln: Vec<u64>,
    queue: VecDeque<Pid>,
}

/// One process.
#[derive(Debug)]
pub struct SuzukiKasami {
    me: Pid,
    rn: Vec<u64>,
    token: Option<Token>,
    requesting: bool,
    inside: bool,
}

impl SuzukiKasami {
    /// Process `me`; process 0 holds the token initially.
    pub fn new(me: Pid, s: &Setup) -> Self {
        SuzukiKasami {
            me,
            rn: vec![0; s.n],
            token: (me == 0).then(|| Token {
                ln: vec![0; s.n],
                queue: VecDeque::new(),
            }),
            requesting: false,
            inside: false,
        }
    }

    fn pass_if_wanted(&mut self, rt: &mut dyn Runtime<SkMsg>) {
        if self.inside || self.requesting {
            return;
        }
        let Some(tok) = self.token.as_mut() else {
            return;
        };
        if let Some(next) = tok.queue.pop_front() {
            let tok = self.token.take().expect("held");
            rt.send(
                next,
                SkMsg::Token {
                    ln: tok.ln,
                    queue: tok.queue,
                },
            );
        }
    }
}

impl Algorithm for SuzukiKasami {
    type Msg = SkMsg;

    fn on_request(&mut self, rt: &mut dyn Runtime<SkMsg>, _group: Group) {
        self.requesting = true;
        if self.token.is_some() {
            self.requesting = false;
            self.inside = true;
            rt.enter();
            return;
        }
        self.rn[self.me] += 1;
        let sn = self.rn[self.me];
        for j in 0..rt.n() {
            if j != self.me {
                rt.send(j, SkMsg::Request(sn));
            }
        }
    }

    fn on_exit(&mut self, rt: &mut dyn Runtime<SkMsg>) {
        self.inside = false;
        rt.exited();
        let me = self.me;
        let tok = self.token.as_mut().expect("inside without the token");
        tok.ln[me] = self.rn[me];
        for j in 0..self.rn.len() {
            if j != me && self.rn[j] == tok.ln[j] + 1 && !tok.queue.contains(&j) {
                tok.queue.push_back(j);
            }
        }
        self.pass_if_wanted(rt);
    }

    fn on_message(&mut self, rt: &mut dyn Runtime<SkMsg>, from: Pid, msg: SkMsg) {
        match msg {
            SkMsg::Request(sn) => {
                self.rn[from] = self.rn[from].max(sn);
                let idle = !self.inside && !self.requesting;
                if let Some(tok) = self.token.as_mut() {
                    if idle && self.rn[from] == tok.ln[from] + 1 {
                        let tok = self.token.take().expect("held");
                        rt.send(
                            from,
                            SkMsg::Token {
                                ln: tok.ln,
                                queue: tok.queue,
                            },
                        );
                    }
                }
            }
            SkMsg::Token { ln, queue } => {
                self.token = Some(Token { ln, queue });
                if self.requesting {
                    self.requesting = false;
                    self.inside = true;
                    rt.enter();
                }
            }
        }
    }
}
