//! Who goes next at each step of the gate: the view of every process a schedule sees, the
//! [`Schedule`] trait, and the schedules lockbench uses (round-robin, random, PCT, the greedy
//! adversary against one victim, and scripted goals).

use std::collections::VecDeque;

use super::cell::Access;

/// What a process is about to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An access (or a local step) is pending.
    Pending,
    /// Waiting: its condition was false when last evaluated.
    Parked,
    /// Finished.
    Done,
}

/// A schedule's view of one process at a scheduling point.
#[derive(Clone, Debug)]
pub struct ProcView {
    /// What it is about to do.
    pub kind: Kind,
    /// The pending access (None: a local step, or not pending).
    pub access: Option<Access>,
    /// The register of the pending access.
    pub reg: Option<usize>,
    /// The pending access would be remote if run now.
    pub remote: bool,
    /// For a pending write: the other processes holding a valid copy it would invalidate (bit p).
    pub invalidates: u64,
    /// Parked, and something it read has been written since: its condition may now hold.
    pub woken: bool,
    /// Parked: the registers its last evaluation read.
    pub watching: Vec<usize>,
}

impl ProcView {
    /// Live and able to make progress (not finished, not a parked process nothing has woken).
    pub fn enabled(&self) -> bool {
        match self.kind {
            Kind::Pending => true,
            Kind::Parked => self.woken,
            Kind::Done => false,
        }
    }
}

/// Picks the next process to run.
pub trait Schedule: Send {
    /// Returns a process that is not [`Kind::Done`] (some process always is not, when called).
    fn pick(&mut self, views: &[ProcView]) -> usize;
}

/// A deterministic pseudo-random sequence (SplitMix64).
#[derive(Clone, Debug)]
pub struct SplitMix(u64);

impl SplitMix {
    /// Seeded.
    pub fn new(seed: u64) -> Self {
        SplitMix(seed)
    }

    /// Next value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// Every live process one step in turn (waiters spin once per round).
#[derive(Debug, Default)]
pub struct RoundRobin {
    next: usize,
}

impl Schedule for RoundRobin {
    fn pick(&mut self, v: &[ProcView]) -> usize {
        let n = v.len();
        let q = (0..n)
            .map(|i| (self.next + i) % n)
            .find(|&q| v[q].kind != Kind::Done)
            .expect("a live process");
        self.next = q + 1;
        q
    }
}

/// A uniformly random live process at every step (waiters spin when picked).
#[derive(Debug)]
pub struct Random(pub SplitMix);

impl Schedule for Random {
    fn pick(&mut self, v: &[ProcView]) -> usize {
        let live: Vec<usize> = (0..v.len()).filter(|&q| v[q].kind != Kind::Done).collect();
        live[self.0.below(live.len())]
    }
}

/// Probabilistic concurrency testing: random distinct priorities, the highest-priority enabled
/// process runs; at `depth` random change points the running process drops to the lowest
/// priority, and so does a waiter that spins without being woken.
#[derive(Debug)]
pub struct Pct {
    prio: Vec<u64>,
    changes: Vec<u64>,
    step: u64,
    low: u64,
}

impl Pct {
    /// For `n` processes, `depth` change points among the first `horizon` steps.
    pub fn new(n: usize, depth: usize, horizon: u64, mut rng: SplitMix) -> Self {
        let mut prio: Vec<u64> = (0..n as u64).map(|i| 1_000_000 + i).collect();
        for i in (1..n).rev() {
            let j = rng.below(i + 1);
            prio.swap(i, j);
        }
        let changes = (0..depth)
            .map(|_| rng.next_u64() % horizon.max(1))
            .collect();
        Pct {
            prio,
            changes,
            step: 0,
            low: 1_000_000,
        }
    }

    fn lower(&mut self, q: usize) {
        self.low -= 1;
        self.prio[q] = self.low;
    }
}

impl Schedule for Pct {
    fn pick(&mut self, v: &[ProcView]) -> usize {
        let best = |f: &dyn Fn(&ProcView) -> bool| {
            (0..v.len())
                .filter(|&q| f(&v[q]))
                .max_by_key(|&q| self.prio[q])
        };
        let q = best(&|x| x.enabled())
            .or_else(|| best(&|x| x.kind != Kind::Done))
            .expect("a live process");
        self.step += 1;
        if self.changes.contains(&self.step) || !v[q].enabled() {
            self.lower(q);
        }
        q
    }
}

/// The greedy adversary against one victim: first let another process overwrite a register the
/// victim holds cached (or waits on), so the victim must fetch it again; otherwise every enabled
/// process in turn (so all compete with the victim), passing over the victim while its next step
/// is local and someone else can move (it keeps waiting); the victim's free steps only when
/// nothing else can move.
#[derive(Debug)]
pub struct Greedy {
    victim: usize,
    next: usize,
}

impl Greedy {
    /// Against `victim`.
    pub fn new(victim: usize) -> Self {
        Greedy { victim, next: 0 }
    }
}

impl Schedule for Greedy {
    fn pick(&mut self, v: &[ProcView]) -> usize {
        let vic = self.victim;
        let n = v.len();
        if v[vic].kind != Kind::Done {
            let hurts = |q: usize| {
                q != vic
                    && v[q].enabled()
                    && v[q].access.is_some_and(|a| a.writes())
                    && (v[q].invalidates & (1 << vic) != 0
                        || v[q].reg.is_some_and(|r| v[vic].watching.contains(&r)))
            };
            if let Some(q) = (0..n).find(|&q| hurts(q)) {
                return q;
            }
        }
        let others = (0..n).any(|q| q != vic && v[q].enabled());
        let start = self.next;
        let pick = (0..n).map(|i| (start + i) % n).find(|&q| {
            // The victim's local accesses wait; its local steps (arriving, the CS) do not.
            v[q].enabled() && (q != vic || v[vic].access.is_none() || v[vic].remote || !others)
        });
        let q = match pick {
            Some(q) => q,
            None => (0..n)
                .map(|i| (start + i) % n)
                .find(|&q| v[q].kind != Kind::Done)
                .expect("a live process"),
        };
        self.next = q + 1;
        q
    }
}

/// One goal of a scripted schedule.
///
/// # Examples
///
/// A lock's worst case for two processes, as a script: process 0 runs until its pending access
/// is a write, process 1 then runs until it waits, and process 0 finishes.
///
/// ```
/// use lockbench::mem::{Goal, Script};
/// let script = Script::new([Goal::BeforeWrite(0), Goal::UntilParked(1), Goal::UntilDone(0)]);
/// # let _ = script;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Goal {
    /// Run process q until it has made one write (or read-modify-write).
    UntilWrite(usize),
    /// Run process q until it waits on a condition nothing has changed since.
    UntilParked(usize),
    /// Run process q until it has finished all its passages.
    UntilDone(usize),
    /// Run process q until its pending access is a write (which it does not make yet).
    BeforeWrite(usize),
    /// Run process q for this many scheduling steps.
    Steps(usize, usize),
    /// Run process a one step; then whichever of a and b did not block on it goes first: the
    /// goals of the script's expansion for (first, second) follow.
    Race(usize, usize),
}

/// Expands a [`Goal::Race`] into the goals for (first, second).
///
/// # Examples
///
/// ```
/// use lockbench::mem::{Expand, Goal, Script};
/// // Whoever of the two did not block on the other's step runs to its end.
/// let expand: Expand = Box::new(|first, _second| vec![Goal::UntilDone(first)]);
/// let script = Script::new([Goal::Race(0, 1)]).with_expand(expand);
/// # let _ = script;
/// ```
pub type Expand = Box<dyn Fn(usize, usize) -> Vec<Goal> + Send>;

/// A scripted schedule: goals in order, then round-robin to let every process finish.
///
/// # Examples
///
/// ```
/// use lockbench::locks::WorstCase;
/// use lockbench::mem::Script;
/// // No goal: round-robin to the end.
/// let worst = WorstCase::new(
///     Script::new(std::iter::empty()),
///     "every process in turn",
///     "round-robin",
/// );
/// assert_eq!(worst.found_by, "round-robin");
/// ```
pub struct Script {
    goals: VecDeque<Goal>,
    then: RoundRobin,
    expand: Option<Expand>,
    racing: bool,
}

impl Script {
    /// The goals, in order.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::Script;
    /// let _round_robin = Script::new(std::iter::empty());
    /// ```
    pub fn new(goals: impl IntoIterator<Item = Goal>) -> Self {
        Script {
            goals: goals.into_iter().collect(),
            then: RoundRobin::default(),
            expand: None,
            racing: false,
        }
    }

    /// With the expansion of `Goal::Race`.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::Script;
    /// let _script = Script::new(std::iter::empty()).with_expand(Box::new(|_first, _second| Vec::new()));
    /// ```
    pub fn with_expand(mut self, expand: Expand) -> Self {
        self.expand = Some(expand);
        self
    }
}

impl Schedule for Script {
    fn pick(&mut self, v: &[ProcView]) -> usize {
        while let Some(&g) = self.goals.front() {
            match g {
                Goal::UntilWrite(q) => {
                    if v[q].kind == Kind::Done {
                        self.goals.pop_front();
                        continue;
                    }
                    if v[q].kind == Kind::Pending && v[q].access.is_some_and(|a| a.writes()) {
                        self.goals.pop_front();
                    }
                    return q;
                }
                Goal::UntilParked(q) => {
                    if v[q].kind == Kind::Done || (v[q].kind == Kind::Parked && !v[q].woken) {
                        self.goals.pop_front();
                        continue;
                    }
                    return q;
                }
                Goal::UntilDone(q) => {
                    if v[q].kind == Kind::Done {
                        self.goals.pop_front();
                        continue;
                    }
                    return q;
                }
                Goal::BeforeWrite(q) => {
                    if v[q].kind == Kind::Done
                        || (v[q].kind == Kind::Pending && v[q].access.is_some_and(|a| a.writes()))
                    {
                        self.goals.pop_front();
                        continue;
                    }
                    return q;
                }
                Goal::Race(a, b) => {
                    if !self.racing {
                        self.racing = true;
                        return a;
                    }
                    self.racing = false;
                    self.goals.pop_front();
                    let blocked = v[a].kind == Kind::Parked && !v[a].woken;
                    let (first, second) = if blocked { (b, a) } else { (a, b) };
                    if let Some(e) = &self.expand {
                        for g in e(first, second).into_iter().rev() {
                            self.goals.push_front(g);
                        }
                    }
                    continue;
                }
                Goal::Steps(q, k) => {
                    if k == 0 || v[q].kind == Kind::Done {
                        self.goals.pop_front();
                        continue;
                    }
                    self.goals[0] = Goal::Steps(q, k - 1);
                    return q;
                }
            }
        }
        self.then.pick(v)
    }
}
