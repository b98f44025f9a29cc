//! Message-passing algorithms (seeds 003 and 004 and their comparators) as event-driven state
//! machines, and the runtimes that drive them.
//!
//! An algorithm sees only the [`Runtime`] trait: its own id, the process count, a clock, `send`
//! to a process id, timers, and two notifications to the application (`enter`, `exited`). It
//! never learns whether the runtime is the discrete-event simulator ([`sim`]), the threaded
//! runtime ([`threaded`]) or the MPI backend ([`mpi`], one rank per process): messages are plain
//! `serde` values, so a backend that moves bytes between ranks serializes them with any serde
//! format and calls the same three handlers.
//!
//! The application drives each process through [`Algorithm::on_request`] (wants to enter, with a
//! group) and [`Algorithm::on_exit`] (wants to leave). Mutual-exclusion and GME algorithms let a
//! process leave at once; the local critical-section algorithms of seed 004 also need permission
//! to leave, so leaving is a request too and the algorithm calls [`Runtime::exited`] when done.

pub mod algo;
pub mod batch;
pub(crate) mod heap;
pub mod metrics;
pub mod model;
pub mod mpi;
pub mod output;
pub mod paper;
pub mod paths;
pub mod restarts;
pub mod run_config;
pub mod safety;
pub mod sim;
pub mod threaded;
pub mod topo;
pub mod two_hop;
pub mod workload;

use serde::de::DeserializeOwned;
use serde::Serialize;

/// A process id, `0..n`.
pub type Pid = usize;

/// A critical-section type (group, forum, session).
pub type Group = usize;

/// Who a message's cost is charged to when messages are counted per request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Charge {
    /// The sender's current request (REQUEST, RELEASE: sent because the sender asked or left).
    Sender,
    /// The receiver's current request (TOKEN, REPLY, GRANT: sent to serve the receiver).
    Receiver,
    /// The sender's request that obtained what this message gives back (TokenGME's RELEASE
    /// of a token): the previous request while the sender waits for a new one, else the
    /// current one.
    SenderHeld,
    /// A third process's current transition (seed 004's Lemma 6 charges a Preempt, the
    /// Relinquish it returns and the grant given again to the request that caused the
    /// preemption); like `SenderHeld`, its previous one while it waits in a new one. Runtimes
    /// whose processes keep their own tallies (threads, MPI) count it in the totals only.
    Of(Pid),
}

/// The path of seed 004's Lemma 6 a transition took: the messages charged to it and what its
/// process observed ([`Observation::Path`]) decide; the highest wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Path {
    /// Request, one Grant per grantor, Release: 3(|N_i| + 1) messages.
    NoPreemption,
    /// A grant taken back (Preempt, Relinquish, the grant again): 6(|N_i| + 1).
    Preemption,
    /// Also a rule outside the lemma (seed 004's leader and TriggerNomination, or a rule of
    /// ours such as parking, LK-15): no bound from the lemma.
    Machinery,
}

/// A message of one algorithm.
pub trait Message: Clone + Send + std::fmt::Debug + Serialize + DeserializeOwned + 'static {
    /// Its kind, for per-kind counts (`"REQUEST"`, `"TOKEN"`, ...).
    fn kind(&self) -> &'static str;
    /// Its payload size in integers (the papers' message-size measure; the sender id and the
    /// kind, which every transport carries, are not counted).
    fn size_ints(&self) -> usize;
    /// Whose request this message is charged to.
    fn charge(&self) -> Charge;
    /// The path of seed 004's Lemma 6 this message puts the transition it is charged to on.
    fn path(&self) -> Path {
        Path::NoPreemption
    }
    /// Seed 003 §5.3: the restart operation (instance id) a recovery message belongs to;
    /// None for every other message.
    fn restart_op(&self) -> Option<u64> {
        None
    }
}

/// Something an algorithm reports about itself for the checks (no effect on its behaviour).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Observation {
    /// TokenGME: a request queued in the primary token waited this many sessions before a
    /// session of its type was started (checked against the bound m(n+1) − 1).
    SessionsWaited(u64),
    /// TokenGME: a new session started.
    SessionStarted,
    /// Seed 004: this process's current transition took (at least) this path of Lemma 6.
    Path(Path),
    /// Seed 004: this process's current transition waits on the configuration (true: from
    /// now on, false: no longer), a wait that only a neighbour's move can end.
    Blocked(bool),
    /// Seed 003 §5.3: this process, as coordinator, began restart operation `k` (sent RESTART).
    RestartBegun(u64),
    /// Seed 003 §5.3: this process, as coordinator, ended restart operation `k` (sent RESUME).
    RestartEnded(u64),
}

/// What an algorithm may ask of the runtime that drives it.
pub trait Runtime<M: Message> {
    /// This process's id.
    fn me(&self) -> Pid;
    /// The number of processes.
    fn n(&self) -> usize;
    /// The current time (simulated time units, or seconds since start on a real runtime).
    // Offered to the algorithms, read by none of the table's yet (allowed, not expected: the
    // lint's expectation is not seen through a trait's methods).
    #[allow(dead_code)]
    fn now(&self) -> f64;
    /// Sends `msg` to process `to` (which may be this process: a local message).
    fn send(&mut self, to: Pid, msg: M);
    /// Sends `msg` to every other process, in increasing id order: the same as that many
    /// [`Runtime::send`]s, which a runtime may do at once.
    fn broadcast(&mut self, msg: M) {
        let me = self.me();
        for j in 0..self.n() {
            if j != me {
                self.send(j, msg.clone());
            }
        }
    }
    /// Calls [`Algorithm::on_timer`] with `tag` after `after` time units.
    // Offered to the algorithms, read by none of the table's yet (allowed, not expected: the
    // lint's expectation is not seen through a trait's methods).
    #[allow(dead_code)]
    fn set_timer(&mut self, after: f64, tag: u64);
    /// Tells the application it may now enter its critical section.
    fn enter(&mut self);
    /// Tells the application it may now enter its critical section of type `g`, one of the
    /// types its request named ([`Algorithm::on_request_any`]). The default: [`Runtime::enter`].
    fn enter_as(&mut self, g: Group) {
        let _ = g;
        self.enter();
    }
    /// Tells the application it has left its critical section (seed 004: may now be outside).
    fn exited(&mut self);
    /// Reports an observation to the checks; a runtime without checks ignores it.
    fn observe(&mut self, _obs: Observation) {}
}

/// The problem an algorithm solves, which decides the safety check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Problem {
    /// At most one process inside.
    Mutex,
    /// No two processes of different groups inside together.
    Gme,
    /// l_i ≤ |CS_i| ≤ k_i in every closed neighbourhood (seed 004).
    LocalCs,
}

/// An algorithm: one state machine per process, driven by three (four) handlers.
pub trait Algorithm: Send + std::fmt::Debug {
    /// Its messages.
    type Msg: Message;
    /// The process wants to enter a critical section of `group`.
    fn on_request(&mut self, rt: &mut dyn Runtime<Self::Msg>, group: Group);
    /// The process wants to enter a critical section of any one of `types` (distinct, at
    /// least one; seed 003 §5.1 after Manabe and Park), and says which with
    /// [`Runtime::enter_as`]. The default serves single-type algorithms: the first type.
    fn on_request_any(&mut self, rt: &mut dyn Runtime<Self::Msg>, types: &[Group]) {
        self.on_request(rt, types[0]);
    }
    /// The process wants to leave its critical section.
    fn on_exit(&mut self, rt: &mut dyn Runtime<Self::Msg>);
    /// A message from `from` arrived.
    fn on_message(&mut self, rt: &mut dyn Runtime<Self::Msg>, from: Pid, msg: Self::Msg);
    /// A timer set with `set_timer` fired.
    fn on_timer(&mut self, _rt: &mut dyn Runtime<Self::Msg>, _tag: u64) {}
    /// Whether this process starts inside its critical section (seed 004's initial
    /// configuration; false for every other algorithm).
    fn starts_inside(&self) -> bool {
        false
    }
    /// Whether receiving `msg` in this process's current state is *passive*: its handler
    /// uses nothing of the runtime but `me`, `n` and `now` (no send, timer, entry, exit or
    /// observation), its effect on this process's state commutes with every other passive
    /// receipt's, and no passive receipt changes what this method answers for any message.
    /// The simulator may then apply such a receipt late, just before the process's next
    /// other event, with the same outcome (see `sim`). The default, false, delivers every
    /// message as an event of its own; a wrong true is caught when its handler uses the
    /// runtime. An algorithm that overrides it sets [`Algorithm::PASSIVE`].
    fn passive(&self, _msg: &Self::Msg) -> bool {
        false
    }
    /// Whether [`Algorithm::passive`] may answer true in this process's current state. Where
    /// it does, `passive`'s answer depends on the message alone (the same for every process
    /// that says true here), and no passive receipt changes this answer. The simulator reads
    /// it after each of the process's events, so that a broadcast asks `passive` of one
    /// receiver rather than of every receiver's state; debug builds check it against
    /// `passive` at each copy. The default: [`Algorithm::PASSIVE`].
    fn passive_now(&self) -> bool {
        Self::PASSIVE
    }
    /// Whether [`Algorithm::passive`] may ever answer true. The simulator keeps no deferred
    /// receipts for an algorithm that says false (default), and spends nothing per event
    /// looking for them; debug builds check that `passive` keeps to it.
    const PASSIVE: bool = false;
    /// A passive receipt applied late by the simulator, the message lent rather than given
    /// (one message serves every receiver of a broadcast): the same effect as
    /// [`Algorithm::on_message`] with a copy of `msg`, which the default makes.
    fn on_passive(&mut self, rt: &mut dyn Runtime<Self::Msg>, from: Pid, msg: &Self::Msg) {
        self.on_message(rt, from, msg.clone());
    }
    /// A receipt of `msg` from `from` will be applied soon (a passive one, or the simulator's
    /// event after the one it is about to run): the state it touches may be asked of the
    /// cache now ([`prefetch`]), so that a process applying hundreds of receipts does not
    /// wait for each one's line in turn, nor the event loop for the next receiver's. A hint;
    /// the default gives none.
    fn will_receive(&self, _from: Pid, _msg: &Self::Msg) {}
    /// Up to `receipts` passive receipts will be applied in a row: where they would touch
    /// most of the state they touch anyway, all of it may be asked of the cache now, for
    /// less than a hint per receipt; returns whether it was (the simulator then gives no
    /// [`Algorithm::will_receive`] for them). A hint; the default gives none.
    fn will_receive_many(&self, _receipts: usize) -> bool {
        false
    }
    /// An event of this process will run soon (the simulator's bundles at its heap's second
    /// level, while the event before runs): the state every handler reads first may be asked
    /// of the cache now ([`prefetch`]), before the event itself is read. A hint; the default
    /// gives none (a process that takes most receipts passively would fetch for nothing).
    fn will_run(&self) {}
    /// A state variable outside the domain the algorithm claims for it (seed 003 §5.2.3's
    /// bounded sequence numbers), described; the simulator looks after every event of this
    /// process and counts each answer as a safety violation. The default claims nothing.
    fn out_of_domain(&self) -> Option<String> {
        None
    }
    /// A request this process could admit but keeps waiting (seed 003 §5.1), described; the
    /// simulator looks after every event of this process and counts each answer. The
    /// default claims nothing.
    fn unnecessary_blocking(&self) -> Option<String> {
        None
    }
    /// The perfect failure detector reports that process `p` crashed (seed 003 §5.3.1). The
    /// default ignores it (an algorithm without recovery).
    fn on_crash_detected(&mut self, _rt: &mut dyn Runtime<Self::Msg>, _p: Pid) {}
}

/// Asks the cache for the line holding `x`, without waiting for it (a hint: nothing the
/// program sees changes).
#[inline(always)]
pub(crate) fn prefetch<T>(x: &T) {
    prefetch_at(x as *const T);
}

/// As [`prefetch`], for the lines holding `run`: at most `lines` of them, from its start.
#[inline(always)]
pub(crate) fn prefetch_lines<T>(run: &[T], lines: usize) {
    let per_line = (64 / std::mem::size_of::<T>()).max(1);
    for x in run.iter().step_by(per_line).take(lines) {
        prefetch(x);
    }
}

/// As [`prefetch`], for the line at `p`, which need not hold a value yet (the free room at a
/// vector's end, say).
#[inline(always)]
pub(crate) fn prefetch_at<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint to the cache: it reads nothing the program sees and never
    // faults, whatever the address.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
