//! Seed 003 §5.3: crash recovery by restarting TokenGME on the operational processes.
//!
//! What §5.3 states [seed]: a perfect failure detector; on detecting a crash a process sends
//! NOTIFY (its set of failed processes) to the smallest operational id in its view, which
//! coordinates; once every operational process has notified the same set, the coordinator
//! restarts in three phases. (1) RESTART(set) to all: each aborts the current instance, starts
//! a new, suspended one without the failed processes (a process inside its critical section
//! defers the RESTART until it leaves) and answers DONE, carrying its pending ("old") request.
//! (2) The old requests are split by type into Q1..Qr: START to Q1; a process of Qi that
//! leaves sends LEAVE to every process of Qi+1, which enters once all of Qi left; Qr's LEAVEs
//! go to the coordinator. (3) RESUME to all. Messages of an older instance are ignored; a
//! crash during a restart starts a new one. At most 5(n − 1) messages per restart.
//!
//! Counting per restart operation (`mp/restarts.rs`): every recovery message already names
//! its operation (k in RESTART, DONE, START, LEAVE, RESUME; a NOTIFY's set has size k), so
//! nothing is added to a message; the coordinator reports when it began an operation (sent
//! RESTART) and ended it (sent RESUME). None of the steps below sends a message of its own:
//! the five kinds and LEAVE are the paper's.
//!
//! Steps §5.3 does not state (its Figs. 8–11 were lost in extraction), named `FT-n` here and
//! in docs/message-passing.md:
//!
//! - **FT-1 (instance id)**: the number of failed processes in the RESTART's set (§5.3
//!   suggests "the number of processes participating", the same order); instance 0 sends its
//!   messages bare, later ones wrap them in `Inst(k, ·)`; a message of another instance is
//!   dropped.
//! - **FT-2 (new instance)**: A0 again, with the coordinator holding the primary token (as
//!   §5.3.4's two-phase variant says; A0 gives it to p0, which may have crashed).
//! - **FT-3 (who must notify)**: the coordinator waits for a NOTIFY carrying exactly its own
//!   set from every process operational in its view; a restart is started once per set size.
//! - **FT-4 (schedule)**: Q1..Qr in increasing type, each in increasing id; START and LEAVE
//!   carry the whole schedule, so a process of Qi+1 knows how many LEAVEs to wait for.
//! - **FT-5 (deferred RESTART)**: a process that leaves its critical section with a RESTART
//!   deferred skips A4 (the instance is being aborted) and restarts at once.
//! - **FT-6 (suspended requests)**: a request made while the instance is suspended is held
//!   until RESUME (and is an old request if another restart comes first); messages of the
//!   current instance are taken while suspended.
//! - **FT-7 (a repeated restart)**: an old request not yet served when a newer RESTART comes
//!   is an old request of the new restart.
//!
//! Each step FT-n was taken out or replaced (the test-only switch `WITHOUT`) and run over four
//! crash schedules (the primary holder at time 0, a process inside its CS, the coordinator
//! during its own restart: p0 0.01 after it sent RESTART for p5's crash, two crashes at
//! random) × 12 seeds × 2 loads (mean NCS 10 and 200, n = 6, 30 requests each); a step is
//! necessary when some run fails without it, a choice when none does and the variant was
//! exercised:
//!
//! | step | removed or replaced by | what happens |
//! |---|---|---|
//! | FT-1 | messages of any instance taken | `ft1_without_instance_ids_a_token_of_an_aborted_instance_breaks_safety`: a token of the aborted instance arrives in the new one (33 of 96 runs fail: safety violations, a process given a second token, stalls) |
//! | FT-2 | A0 as written: p0 holds the new primary | `ft2_with_p0_holding_the_new_primary_a_crash_of_p0_stalls`: once p0 has crashed nobody holds the primary token (61 of 96 runs stall) |
//! | FT-3 | the coordinator restarts on its own detection | needed for the per-failure budget, not for safety or liveness: a RESTART carries the set and a perfect detector brings every process to it (137 restarts started before every NOTIFY came, every run safe and live), but where the coordinator crashes inside its own restart its successor restarts the aborted instance at once and again for the coordinator's crash, three operations for two failures: 3 of 96 runs charge 11 RESTARTs to the two crashes, over (n − 1) a kind per failure, each operation and the run within their bounds (`ft3_restarting_without_waiting_for_the_notifies_sends_more_restarts_than_two_failures_allow`) |
//! | FT-4 | old requests in decreasing type | a choice: each group is one type and enters only once the previous left; 37 schedules of two or more types, no run failed (`ft4_old_requests_in_decreasing_type_is_a_choice`) |
//! | FT-5 | A4 runs before the deferred RESTART | a choice: A4 only sends messages of the aborted instance; 46 deferred RESTARTs, no run failed (`ft5_a4_before_the_deferred_restart_is_a_choice`) |
//! | FT-6 | a request while suspended is made at once | `ft6_a_request_made_while_suspended_breaks_safety`: it meets the new primary while old requests are inside (44 of 96 runs violate safety) |
//! | FT-7 | a repeated restart drops an unserved old request | `ft7_an_old_request_dropped_by_a_repeated_restart_is_never_served`: a crash during a restart, the dropped request waits for ever (27 of 96 runs stall: 17 of the 24 where the coordinator crashes inside its own restart, 10 of the two-crash random schedule) |

use std::collections::VecDeque;

use super::{Token, TokenGme, BOTTOM};
use crate::mp::{Group, Observation, Pid, Runtime};

use super::TgMsg;

#[cfg(test)]
thread_local! {
    /// Test-only: the inferred step this thread's runs leave out or replace (1..=7; 0: none).
    pub(super) static WITHOUT: std::cell::Cell<u8> = const { std::cell::Cell::new(0) };
    /// Test-only: how often the left-out step would have applied.
    pub(super) static HITS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// Test-only mutant: the coordinator sends every RESTART twice (the second copy is
    /// dropped as of an instance already started, so only the count changes).
    pub(super) static RESTART_TWICE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Test-only: this thread's runs send every RESTART twice (`on`) or once.
#[cfg(test)]
pub(crate) fn set_restart_twice(on: bool) {
    RESTART_TWICE.with(|m| m.set(on));
}

/// Copies of each RESTART the coordinator sends: 1 (2 under the test-only mutant).
#[cfg(test)]
fn restart_copies() -> usize {
    1 + usize::from(RESTART_TWICE.with(|m| m.get()))
}

#[cfg(not(test))]
#[inline(always)]
fn restart_copies() -> usize {
    1
}

/// Step FT-`k` is left out or replaced in this run (tests only; always false otherwise).
#[cfg(test)]
fn off(k: u8) -> bool {
    let hit = WITHOUT.with(|w| w.get() == k);
    HITS.with(|h| h.set(h.get() + u64::from(hit)));
    hit
}

#[cfg(not(test))]
#[inline(always)]
fn off(_: u8) -> bool {
    false
}

/// Recovery state of one process.
#[derive(Debug)]
pub(super) struct Ft {
    /// Failed processes in this process's view.
    failed: Vec<bool>,
    /// The instance running here (FT-1).
    inst: u64,
    /// The instance is suspended (between RESTART and RESUME).
    suspended: bool,
    /// The coordinator of the current instance's restart.
    coord: Pid,
    /// A RESTART (coordinator, instance, set) received inside the critical section.
    deferred: Option<(Pid, u64, Vec<Pid>)>,
    /// A request made while suspended (FT-6).
    held: Option<Group>,
    /// This process's place in the old requests' schedule: (schedule, group, LEAVEs heard).
    old: Option<(Vec<Vec<Pid>>, usize, usize)>,
    /// The latest set each process notified here.
    notified: Vec<Vec<Pid>>,
    /// As coordinator: the instance of its latest restart, its phase (1: DONEs, 2: old
    /// requests, 3: resumed), who is done, the old requests, LEAVEs heard from Qr.
    c_inst: u64,
    c_phase: u8,
    c_done: Vec<bool>,
    c_old: Vec<(Group, Pid)>,
    c_leaves: usize,
}

impl Ft {
    fn new(n: usize) -> Self {
        Ft {
            failed: vec![false; n],
            inst: 0,
            suspended: false,
            coord: 0,
            deferred: None,
            held: None,
            old: None,
            notified: vec![Vec::new(); n],
            c_inst: 0,
            c_phase: 0,
            c_done: vec![false; n],
            c_old: Vec::new(),
            c_leaves: 0,
        }
    }

    fn set(&self) -> Vec<Pid> {
        (0..self.failed.len()).filter(|&p| self.failed[p]).collect()
    }

    fn live(&self) -> impl Iterator<Item = Pid> + '_ {
        (0..self.failed.len()).filter(|&p| !self.failed[p])
    }

    fn coordinator(&self) -> Pid {
        self.live().next().expect("this process is operational")
    }
}

/// The runtime of instance `inst` ≥ 1: every message wrapped with its instance (FT-1).
struct Tagged<'a> {
    rt: &'a mut dyn Runtime<TgMsg>,
    inst: u64,
}

impl Runtime<TgMsg> for Tagged<'_> {
    fn me(&self) -> Pid {
        self.rt.me()
    }
    fn n(&self) -> usize {
        self.rt.n()
    }
    fn now(&self) -> f64 {
        self.rt.now()
    }
    fn send(&mut self, to: Pid, msg: TgMsg) {
        self.rt.send(to, TgMsg::Inst(self.inst, Box::new(msg)));
    }
    fn broadcast(&mut self, msg: TgMsg) {
        self.rt.broadcast(TgMsg::Inst(self.inst, Box::new(msg)));
    }
    fn set_timer(&mut self, after: f64, tag: u64) {
        self.rt.set_timer(after, tag);
    }
    fn enter(&mut self) {
        self.rt.enter();
    }
    fn exited(&mut self) {
        self.rt.exited();
    }
    fn observe(&mut self, obs: Observation) {
        self.rt.observe(obs);
    }
}

impl TokenGme {
    /// Runs `f` with the runtime of the current instance.
    pub(super) fn tagged(
        &mut self,
        rt: &mut dyn Runtime<TgMsg>,
        f: impl FnOnce(&mut Self, &mut dyn Runtime<TgMsg>),
    ) {
        match self.ft.as_ref().map_or(0, |ft| ft.inst) {
            0 => f(self, rt),
            inst => f(self, &mut Tagged { rt, inst }),
        }
    }

    /// FT-6: a request while suspended waits for RESUME.
    pub(super) fn held_by_restart(&mut self, group: Group) -> bool {
        match self.ft.as_mut() {
            Some(ft) if ft.suspended && !off(6) => {
                ft.held = Some(group);
                true
            }
            _ => false,
        }
    }

    /// The failure detector reports `q` (§5.3.1–2): NOTIFY the coordinator, or coordinate.
    pub(super) fn detect(&mut self, rt: &mut dyn Runtime<TgMsg>, q: Pid) {
        if self.bounded.is_some() {
            return; // §5.3 is built on the unbounded algorithm here.
        }
        let n = rt.n();
        let ft = self.ft.get_or_insert_with(|| Box::new(Ft::new(n)));
        if std::mem::replace(&mut ft.failed[q], true) {
            return;
        }
        let c = ft.coordinator();
        if c != self.me {
            rt.send(c, TgMsg::Notify(ft.set()));
        }
        self.try_restart(rt);
    }

    /// Phase 1 at the coordinator, once every operational process notified its set (FT-3).
    fn try_restart(&mut self, rt: &mut dyn Runtime<TgMsg>) {
        let me = self.me;
        let Some(ft) = self.ft.as_mut() else { return };
        let f = ft.set();
        let k = f.len() as u64;
        if ft.coordinator() != me || k <= ft.c_inst || k <= ft.inst {
            return;
        }
        if ft.live().any(|j| j != me && ft.notified[j] != f) && !off(3) {
            return;
        }
        ft.c_inst = k;
        ft.c_phase = 1;
        ft.c_done.iter_mut().for_each(|d| *d = false);
        ft.c_old.clear();
        rt.observe(Observation::RestartBegun(k));
        let others: Vec<Pid> = ft.live().filter(|&j| j != me).collect();
        for j in others {
            for _ in 0..restart_copies() {
                rt.send(j, TgMsg::Restart(k, f.clone()));
            }
        }
        self.on_restart(rt, me, k, f);
    }

    /// RESTART(k, set) from coordinator `c`: deferred inside the critical section.
    fn on_restart(&mut self, rt: &mut dyn Runtime<TgMsg>, c: Pid, k: u64, f: Vec<Pid>) {
        let (inside, n) = (self.inside, rt.n());
        let ft = self.ft.get_or_insert_with(|| Box::new(Ft::new(n)));
        if k <= ft.inst || ft.deferred.as_ref().is_some_and(|d| d.1 >= k) {
            return;
        }
        if inside {
            ft.deferred = Some((c, k, f));
            return;
        }
        self.restart(rt, c, k, f);
    }

    /// Aborts the instance, starts instance `k` suspended (FT-2), answers DONE.
    fn restart(&mut self, rt: &mut dyn Runtime<TgMsg>, c: Pid, k: u64, f: Vec<Pid>) {
        let (me, n) = (self.me, rt.n());
        let ft = self.ft.as_mut().expect("recovering");
        for p in f {
            ft.failed[p] = true;
        }
        // The pending request, if any, is an old request (FT-6, FT-7).
        let mut old = self.want.or(ft.held.take());
        if off(7) && ft.inst > 0 && ft.suspended {
            old = None; // Without FT-7: an unserved old request is dropped.
        }
        self.want = old;
        ft.inst = k;
        ft.suspended = true;
        ft.coord = c;
        ft.deferred = None;
        ft.old = None;
        self.request.iter_mut().for_each(|r| *r = (0, u32::MAX));
        self.session = 0;
        self.no_of_release = 0;
        self.conflict = false;
        self.queued.iter_mut().for_each(|q| *q = false);
        self.queued_conflicts = 0;
        self.outbox.clear();
        // Without FT-2: A0 as written, p0 holds the primary token.
        let holder = if off(2) { 0 } else { c };
        self.token = (me == holder).then(|| {
            Box::new(Token {
                primary: true,
                ty: BOTTOM,
                session: 0,
                fulfilled: vec![0; n],
                old_no_of_tokens: 0,
                no_of_tokens_issued: 0,
                queue: VecDeque::new(),
                total_issued: None,
                epochs: None,
            })
        });
        if c == me {
            self.on_done(rt, me, k, old);
        } else {
            rt.send(c, TgMsg::Done(k, old));
        }
    }

    /// DONE at the coordinator; phase 2 once every operational process is done.
    fn on_done(&mut self, rt: &mut dyn Runtime<TgMsg>, j: Pid, k: u64, old: Option<Group>) {
        let me = self.me;
        let ft = self.ft.as_mut().expect("recovering");
        if k != ft.c_inst || ft.c_phase != 1 || ft.c_done[j] {
            return;
        }
        ft.c_done[j] = true;
        if let Some(g) = old {
            ft.c_old.push((g, j));
        }
        if ft.live().any(|p| !ft.c_done[p]) {
            return;
        }
        // FT-4.
        ft.c_old.sort_unstable();
        if ft.c_old.first().map(|o| o.0) != ft.c_old.last().map(|o| o.0) && off(4) {
            ft.c_old.sort_by_key(|&(g, p)| (std::cmp::Reverse(g), p)); // decreasing type
        }
        let mut sched: Vec<Vec<Pid>> = Vec::new();
        let mut last = None;
        for &(g, p) in &ft.c_old {
            if last != Some(g) {
                sched.push(Vec::new());
                last = Some(g);
            }
            sched.last_mut().expect("pushed").push(p);
        }
        if sched.is_empty() {
            self.resume(rt);
            return;
        }
        ft.c_phase = 2;
        ft.c_leaves = 0;
        for &p in &sched[0].clone() {
            if p == me {
                self.on_start(rt, k, sched.clone());
            } else {
                rt.send(p, TgMsg::Start(k, sched.clone()));
            }
        }
    }

    /// START: a process of Q1 enters.
    fn on_start(&mut self, rt: &mut dyn Runtime<TgMsg>, k: u64, sched: Vec<Vec<Pid>>) {
        let ft = self.ft.as_mut().expect("recovering");
        if k != ft.inst {
            return;
        }
        ft.old = Some((sched, 0, 0));
        self.enter_old(rt);
    }

    /// An old request enters (its request is served: no longer pending).
    fn enter_old(&mut self, rt: &mut dyn Runtime<TgMsg>) {
        self.want = None;
        self.inside = true;
        rt.enter();
    }

    /// LEAVE from a process of group `i`: the next group enters once all of group i left;
    /// the coordinator resumes once all of Qr left.
    fn on_leave(&mut self, rt: &mut dyn Runtime<TgMsg>, k: u64, sched: Vec<Vec<Pid>>, i: usize) {
        let ft = self.ft.as_mut().expect("recovering");
        if k != ft.inst {
            return;
        }
        let need = sched[i].len();
        if i + 1 == sched.len() {
            if ft.c_inst == k && ft.c_phase == 2 {
                ft.c_leaves += 1;
                if ft.c_leaves == need {
                    self.resume(rt);
                }
            }
            return;
        }
        let (_, _, heard) = ft.old.get_or_insert((sched, i + 1, 0));
        *heard += 1;
        if *heard == need {
            self.enter_old(rt);
        }
    }

    /// Phase 3: RESUME to every operational process.
    fn resume(&mut self, rt: &mut dyn Runtime<TgMsg>) {
        let me = self.me;
        let ft = self.ft.as_mut().expect("recovering");
        ft.c_phase = 3;
        let k = ft.c_inst;
        rt.observe(Observation::RestartEnded(k));
        let others: Vec<Pid> = ft.live().filter(|&j| j != me).collect();
        for j in others {
            rt.send(j, TgMsg::Resume(k));
        }
        self.on_resume(rt, k);
    }

    /// RESUME: the instance runs; a held request is made now (FT-6).
    fn on_resume(&mut self, rt: &mut dyn Runtime<TgMsg>, k: u64) {
        let ft = self.ft.as_mut().expect("recovering");
        if k != ft.inst || !ft.suspended {
            return;
        }
        ft.suspended = false;
        if let Some(g) = ft.held.take() {
            self.tagged(rt, |p, rt| p.a1(rt, g));
        }
    }

    /// Leaving the critical section during recovery: an old request's LEAVEs, or a deferred
    /// RESTART (FT-5). False when A4 applies.
    pub(super) fn exit_in_recovery(&mut self, rt: &mut dyn Runtime<TgMsg>) -> bool {
        let me = self.me;
        let Some(ft) = self.ft.as_mut() else {
            return false;
        };
        let old = ft.old.take();
        if old.is_none() && ft.deferred.is_none() {
            return false;
        }
        self.inside = false;
        rt.exited();
        if let Some((c, k, f)) = ft.deferred.take() {
            if off(5) {
                self.tagged(rt, |p, rt| p.progress(rt)); // Without FT-5: A4 first.
            }
            self.restart(rt, c, k, f);
            return true;
        }
        let (sched, i, _) = old.expect("an old request");
        let k = ft.inst;
        let to = match sched.get(i + 1) {
            Some(next) => next.clone(),
            None => vec![ft.coord],
        };
        for p in to {
            if p == me {
                self.on_leave(rt, k, sched.clone(), i);
            } else {
                rt.send(p, TgMsg::Leave(k, sched.clone(), i));
            }
        }
        true
    }

    /// Takes the recovery messages and unwraps the algorithm's (None: taken or dropped).
    pub(super) fn recovery_message(
        &mut self,
        rt: &mut dyn Runtime<TgMsg>,
        from: Pid,
        msg: TgMsg,
    ) -> Option<TgMsg> {
        let inst = self.ft.as_ref().map_or(0, |ft| ft.inst);
        match msg {
            TgMsg::Notify(f) => {
                let n = rt.n();
                let ft = self.ft.get_or_insert_with(|| Box::new(Ft::new(n)));
                if f.len() >= ft.notified[from].len() {
                    ft.notified[from] = f;
                }
                self.try_restart(rt);
            }
            TgMsg::Restart(k, f) => self.on_restart(rt, from, k, f),
            TgMsg::Done(k, old) => self.on_done(rt, from, k, old),
            TgMsg::Start(k, s) => self.on_start(rt, k, s),
            TgMsg::Leave(k, s, i) => self.on_leave(rt, k, s, i),
            TgMsg::Resume(k) => self.on_resume(rt, k),
            TgMsg::Inst(k, m) => return (k == inst || off(1)).then_some(*m),
            m => return (inst == 0 || off(1)).then_some(m),
        }
        None
    }
}
