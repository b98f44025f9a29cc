//! What a lock's file says of it besides its code, carried by its [`LockInfo`](super::LockInfo):
//! the RMR bound its source claims per model ([`Bound`]) and its seeded mutants ([`Mutant`]),
//! each described once, beside the code that implements it. `lockbench rmr` checks the bound,
//! `lockbench verify --mutants` runs the mutants; neither keeps a table of its own.

use std::sync::Arc;

use serde::Serialize;

use super::{Builder, Lock, Params};
use crate::mem::schedule::Script;
use crate::mem::{Model, ScheduledMemory};

/// Which way a bound goes.
///
/// # Examples
///
/// ```
/// use lockbench::locks::{Bound, Direction};
/// assert_eq!(Bound::constant(4, "MCS 1991").direction, Direction::Upper);
/// assert_eq!(Bound::lower("N", 8, "seed 000 §5").direction, Direction::Lower);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// No passage may cost more.
    Upper,
    /// The paper's worst-case schedule makes one passage cost at least this much.
    Lower,
}

/// A bound on RMRs per passage, evaluated at N processes.
///
/// ```
/// use lockbench::locks::Bound;
/// let b = Bound::linear(11, -4, 8, "seed 000 §3");
/// assert_eq!((b.formula.as_str(), b.value, b.c), ("11N − 4", 84, Some(11)));
/// assert_eq!(Bound::constant(9, "MCS 1991").value, 9);
/// ```
#[derive(Clone, Debug, Serialize, PartialEq)]
#[non_exhaustive]
pub struct Bound {
    /// Upper (every passage) or lower (the paper's worst case).
    pub direction: Direction,
    /// The formula in N (processes).
    pub formula: String,
    /// Its value at this N.
    pub value: u64,
    /// The constant c of c·N (linear bounds), printed beside the check.
    pub c: Option<u64>,
    /// Where it comes from.
    pub source: String,
}

impl Bound {
    /// The upper bound c·N + d at `n` processes (never below 0).
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::locks::Bound;
    /// assert_eq!(Bound::linear(2, 0, 5, "seed 000").formula, "2N");
    /// assert_eq!(Bound::linear(1, -9, 4, "seed 000").value, 0); // never below 0
    /// ```
    pub fn linear(c: u64, d: i64, n: usize, source: &str) -> Bound {
        let value = (c as i64 * n as i64 + d).max(0) as u64;
        let formula = match d {
            0 => format!("{c}N"),
            d if d > 0 => format!("{c}N + {d}"),
            d => format!("{c}N − {}", -d),
        };
        Bound {
            direction: Direction::Upper,
            formula,
            value,
            c: Some(c),
            source: source.into(),
        }
    }

    /// The constant upper bound `v`.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::locks::Bound;
    /// let b = Bound::constant(5, "CLH 1993");
    /// assert_eq!((b.formula.as_str(), b.c), ("5", None));
    /// ```
    pub fn constant(v: u64, source: &str) -> Bound {
        Bound {
            direction: Direction::Upper,
            formula: v.to_string(),
            value: v,
            c: None,
            source: source.into(),
        }
    }

    /// A lower bound: the paper's worst case costs one passage at least `value` (`formula` in
    /// N).
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::locks::{Bound, Direction};
    /// let b = Bound::lower("N − 1", 7, "seed 000 §5");
    /// assert_eq!((b.direction, b.value), (Direction::Lower, 7));
    /// ```
    pub fn lower(formula: &str, value: u64, source: &str) -> Bound {
        Bound {
            direction: Direction::Lower,
            formula: formula.into(),
            value,
            c: None,
            source: source.into(),
        }
    }
}

/// The RMR bound of a lock under a model at `n` processes, if its source claims one.
///
/// # Examples
///
/// ```
/// use lockbench::locks::{Bound, BoundFn};
/// use lockbench::mem::Model;
/// /// A queue lock: a constant bound under CC, none under DSM.
/// fn bound(model: Model, _n: usize) -> Option<Bound> {
///     (model == Model::Cc).then(|| Bound::constant(4, "my paper, Lemma 2"))
/// }
/// let f: BoundFn = bound;
/// assert_eq!(f(Model::Cc, 8).unwrap().value, 4);
/// assert!(f(Model::Dsm, 8).is_none());
/// ```
pub type BoundFn = fn(Model, usize) -> Option<Bound>;

/// For a lock whose source claims no RMR bound.
///
/// ```
/// use lockbench::locks::no_bound;
/// use lockbench::mem::Model;
/// assert!(no_bound(Model::Cc, 4).is_none());
/// ```
pub fn no_bound(_model: Model, _n: usize) -> Option<Bound> {
    None
}

/// What a lock's paper says one section of a passage costs in RMRs under the CC model, with
/// the figure's lines the section spans: `rmr` measures the section (its `by_section_max` key
/// [`SectionCost::section`]: `doorway`, `waiting` or `exit`) and the ledger judges it against
/// [`SectionCost::bound`] at each N.
///
/// ```
/// use lockbench::locks::SectionCost;
/// const EXIT: SectionCost = SectionCost::at_most("exit", "12–13", "N + 1", |n| n as u64 + 1);
/// assert_eq!(((EXIT.bound)(4), EXIT.exact), (5, false));
/// assert!(EXIT.exactly().exact);
/// ```
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct SectionCost {
    /// The section, as `rmr` names it (`doorway`, `waiting`, `exit`).
    pub section: &'static str,
    /// The figure's lines the section spans.
    pub lines: &'static str,
    /// The bound as the paper writes it ("N + 4").
    pub formula: &'static str,
    /// The bound at N processes.
    pub bound: fn(usize) -> u64,
    /// Every passage costs exactly the bound (else at most).
    pub exact: bool,
}

impl SectionCost {
    /// `section` (lines `lines`) costs at most `formula`, `bound(N)` RMRs at N processes.
    pub const fn at_most(
        section: &'static str,
        lines: &'static str,
        formula: &'static str,
        bound: fn(usize) -> u64,
    ) -> Self {
        SectionCost {
            section,
            lines,
            formula,
            bound,
            exact: false,
        }
    }

    /// The same cost, paid by every passage exactly.
    pub const fn exactly(self) -> Self {
        SectionCost {
            exact: true,
            ..self
        }
    }
}

/// For a lock without seeded mutants.
///
/// ```
/// assert!(lockbench::locks::no_mutants().is_empty());
/// ```
pub fn no_mutants() -> Vec<Mutant> {
    Vec::new()
}

/// One seeded mutant of a lock: one line of its figure changed, behind a const generic of the
/// very code that is timed (the registered lock is the constant 0, whose mutation branches fold
/// away). A mutant is killed when `verify` finds a violation of the safety property, an
/// invariant, deadlock freedom or a claimed property; a survivor is either argued equivalent
/// ([`Mutant::equivalent`]) or a gap in `verify`.
///
/// ```
/// use lockbench::locks::{Lock, Mutant, Params};
/// use lockbench::mem::ScheduledMemory;
/// struct Never;
/// impl Lock for Never {
///     fn enter(&self, _: usize, _: usize) {}
///     fn exit(&self, _: usize, _: usize) {}
/// }
/// let m = Mutant::new("no-wait", "3", "the wait dropped", |_: ScheduledMemory, _: &Params| Never)
///     .at_least(4, 10);
/// assert_eq!((m.name, m.at_least), ("no-wait", (4, 10)));
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct Mutant {
    /// Its name (`verify --mutants LOCK/NAME`).
    pub name: &'static str,
    /// The line of the figure changed.
    pub line: &'static str,
    /// The change.
    pub change: &'static str,
    /// Why it is equivalent to the algorithm, when it is.
    pub equivalent: Option<&'static str>,
    /// Passages per process and PCT depth the mutant is tried with at least (0: the given
    /// ones), when its change can only show after that many passages and preemptions.
    pub at_least: (usize, usize),
    /// The fewest processes it is tried at (0: as many as its problem's other mutants), when
    /// its change shows only where a bound in N is smallest.
    pub from_threads: usize,
    /// Builds it on the scheduled memory.
    pub build: Builder,
}

impl Mutant {
    /// A mutant built on the scheduled memory by `build` (typically the mutated type's `new`).
    ///
    /// # Examples
    ///
    /// ```
    /// # use lockbench::locks::Lock;
    /// # use lockbench::mem::{Home, Memory, Register};
    /// # struct Tas<M: Memory> { mem: M, word: M::Reg }
    /// # impl<M: Memory> Tas<M> {
    /// #     fn new(mem: M) -> Self { let word = mem.register(Home::Shared, 0); Tas { mem, word } }
    /// # }
    /// # impl<M: Memory> Lock for Tas<M> {
    /// #     fn enter(&self, p: usize, _session: usize) {
    /// #         while self.word.swap(p, 1) != 0 {
    /// #             self.mem.wait_until(p, || self.word.read(p) == 0);
    /// #         }
    /// #     }
    /// #     fn exit(&self, p: usize, _session: usize) { self.word.write(p, 0); }
    /// # }
    /// # use lockbench::locks::{Mutant, Params};
    /// # use lockbench::mem::ScheduledMemory;
    /// # fn tas(mem: ScheduledMemory, _: &Params) -> Tas<ScheduledMemory> { Tas::new(mem) }
    /// let m = Mutant::new("no-swap", "2", "the swap made a read", tas);
    /// assert_eq!((m.line, m.equivalent), ("2", None));
    /// ```
    pub fn new<L: Lock + 'static>(
        name: &'static str,
        line: &'static str,
        change: &'static str,
        build: fn(ScheduledMemory, &Params) -> L,
    ) -> Mutant {
        Mutant {
            name,
            line,
            change,
            equivalent: None,
            at_least: (0, 0),
            from_threads: 0,
            build: Arc::new(move |p: &Params| -> Box<dyn Lock> {
                Box::new(build(ScheduledMemory, p))
            }),
        }
    }

    /// Argued equivalent to the algorithm, for this reason (surviving is then expected).
    ///
    /// # Examples
    ///
    /// ```
    /// # use lockbench::locks::Lock;
    /// # use lockbench::mem::{Home, Memory, Register};
    /// # struct Tas<M: Memory> { mem: M, word: M::Reg }
    /// # impl<M: Memory> Tas<M> {
    /// #     fn new(mem: M) -> Self { let word = mem.register(Home::Shared, 0); Tas { mem, word } }
    /// # }
    /// # impl<M: Memory> Lock for Tas<M> {
    /// #     fn enter(&self, p: usize, _session: usize) {
    /// #         while self.word.swap(p, 1) != 0 {
    /// #             self.mem.wait_until(p, || self.word.read(p) == 0);
    /// #         }
    /// #     }
    /// #     fn exit(&self, p: usize, _session: usize) { self.word.write(p, 0); }
    /// # }
    /// # use lockbench::locks::{Mutant, Params};
    /// # use lockbench::mem::ScheduledMemory;
    /// # fn tas(mem: ScheduledMemory, _: &Params) -> Tas<ScheduledMemory> { Tas::new(mem) }
    /// let m = Mutant::new("swap-twice", "2", "the swap repeated once taken", tas)
    ///     .equivalent("the second swap writes the 1 already there");
    /// assert!(m.equivalent.is_some());
    /// ```
    pub fn equivalent(mut self, why: &'static str) -> Mutant {
        self.equivalent = Some(why);
        self
    }

    /// Tried with at least `passages` per process and PCT depth `depth`.
    ///
    /// # Examples
    ///
    /// ```
    /// # use lockbench::locks::Lock;
    /// # use lockbench::mem::{Home, Memory, Register};
    /// # struct Tas<M: Memory> { mem: M, word: M::Reg }
    /// # impl<M: Memory> Tas<M> {
    /// #     fn new(mem: M) -> Self { let word = mem.register(Home::Shared, 0); Tas { mem, word } }
    /// # }
    /// # impl<M: Memory> Lock for Tas<M> {
    /// #     fn enter(&self, p: usize, _session: usize) {
    /// #         while self.word.swap(p, 1) != 0 {
    /// #             self.mem.wait_until(p, || self.word.read(p) == 0);
    /// #         }
    /// #     }
    /// #     fn exit(&self, p: usize, _session: usize) { self.word.write(p, 0); }
    /// # }
    /// # use lockbench::locks::{Mutant, Params};
    /// # use lockbench::mem::ScheduledMemory;
    /// # fn tas(mem: ScheduledMemory, _: &Params) -> Tas<ScheduledMemory> { Tas::new(mem) }
    /// let m = Mutant::new("late", "4", "shows only after a few passages", tas).at_least(3, 2);
    /// assert_eq!(m.at_least, (3, 2));
    /// ```
    pub fn at_least(mut self, passages: usize, depth: usize) -> Mutant {
        self.at_least = (passages, depth);
        self
    }

    /// Tried from `threads` processes up, below its problem's usual fewest.
    ///
    /// ```
    /// # use lockbench::locks::{Lock, Mutant, Params};
    /// # use lockbench::mem::ScheduledMemory;
    /// # struct Never;
    /// # impl Lock for Never {
    /// #     fn enter(&self, _: usize, _: usize) {}
    /// #     fn exit(&self, _: usize, _: usize) {}
    /// # }
    /// let m = Mutant::new("small", "5", "shows at two processes", |_: ScheduledMemory, _: &Params| Never)
    ///     .from_threads(2);
    /// assert_eq!(m.from_threads, 2);
    /// ```
    pub fn from_threads(mut self, threads: usize) -> Mutant {
        self.from_threads = threads;
        self
    }
}

/// The worst-case schedule a lock's paper scripts (`rmr --schedule adversarial` runs it instead
/// of searching, and calls the figure proven): the script, what it does, and its `found_by`.
///
/// # Examples
///
/// ```
/// use lockbench::locks::{WorstCase, WorstCaseFn};
/// use lockbench::mem::Script;
/// fn worst(n: usize, _passages: usize) -> Option<WorstCase> {
///     (n >= 2).then(|| {
///         WorstCase::new(Script::new(std::iter::empty()), "every process in turn (my paper, §4)", "script")
///     })
/// }
/// let f: WorstCaseFn = worst;
/// assert!(f(1, 3).is_none() && f(2, 3).is_some());
/// ```
#[non_exhaustive]
pub struct WorstCase {
    /// The schedule.
    pub script: Script,
    /// What it does, with its source.
    pub detail: &'static str,
    /// The report's `found_by`.
    pub found_by: &'static str,
}

impl WorstCase {
    /// The worst case `script`, described by `detail`, reported as found by `found_by`.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::locks::WorstCase;
    /// use lockbench::mem::Script;
    /// let w = WorstCase::new(Script::new(std::iter::empty()), "my paper, §4", "script");
    /// assert_eq!((w.detail, w.found_by), ("my paper, §4", "script"));
    /// ```
    pub fn new(script: Script, detail: &'static str, found_by: &'static str) -> WorstCase {
        WorstCase {
            script,
            detail,
            found_by,
        }
    }
}

/// The scripted worst case of a lock at `n` processes of `passages` passages each, if its
/// paper gives one there.
///
/// # Examples
///
/// ```
/// use lockbench::locks::{no_worst_case, WorstCaseFn};
/// let f: WorstCaseFn = no_worst_case;
/// assert!(f(4, 2).is_none());
/// ```
pub type WorstCaseFn = fn(n: usize, passages: usize) -> Option<WorstCase>;

/// For a lock whose paper scripts no worst case.
///
/// ```
/// assert!(lockbench::locks::no_worst_case(4, 3).is_none());
/// ```
pub fn no_worst_case(_n: usize, _passages: usize) -> Option<WorstCase> {
    None
}

/// One goal of a scripted `verify` schedule ([`CounterExample`]): run one process until it has
/// reached a point of its passages, counted from the start of the execution.
///
/// # Examples
///
/// ```
/// use lockbench::locks::Step;
/// // Process 0 takes its ticket, then process 1 enters once before it.
/// let steps = [Step::Doorway(0, 1), Step::Enter(1, 1)];
/// assert_ne!(steps[0], steps[1]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Step {
    /// Process q runs until it has ended this many doorways.
    Doorway(usize, usize),
    /// Process q runs until it has entered the critical section this many times.
    Enter(usize, usize),
    /// Process q runs until it has made this many writes.
    Writes(usize, usize),
    /// Process q runs until it has waited (found a wait condition false) this many times.
    Waits(usize, usize),
}

/// A counter-example a lock's paper states in words, scripted so `verify --scheduler script`
/// runs it step by step at every level: the property the paper says the lock lacks, the
/// settings the script assumes (processes, sessions each process p asks, p mod `sessions`),
/// and its goals; once they are reached, every process runs in turn to the end.
///
/// ```
/// use lockbench::locks::{CounterExample, Step};
/// const STEPS: &[Step] = &[Step::Doorway(0, 1), Step::Enter(2, 1), Step::Writes(1, 2), Step::Waits(0, 2)];
/// let c = CounterExample::new("P7 FIFE", "seed 000 §7", 3, 2, STEPS);
/// assert_eq!(c.steps.len(), 4);
/// ```
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct CounterExample {
    /// The property it breaks, as `verify` names it (e.g. "P7 FIFE").
    pub property: &'static str,
    /// Where the paper states the failure.
    pub source: &'static str,
    /// Processes.
    pub threads: usize,
    /// Sessions; process p asks p mod `sessions` on every passage.
    pub sessions: usize,
    /// The goals, in order.
    pub steps: &'static [Step],
}

impl CounterExample {
    /// The counter-example to `property` stated at `source`, run with `threads` processes
    /// asking `sessions` sessions, through `steps`.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::locks::{CounterExample, Step};
    /// const FIFE: CounterExample =
    ///     CounterExample::new("P7 FIFE", "my paper, §7", 3, 2, &[Step::Doorway(0, 1)]);
    /// assert_eq!((FIFE.threads, FIFE.sessions), (3, 2));
    /// ```
    pub const fn new(
        property: &'static str,
        source: &'static str,
        threads: usize,
        sessions: usize,
        steps: &'static [Step],
    ) -> CounterExample {
        CounterExample {
            property,
            source,
            threads,
            sessions,
            steps,
        }
    }
}
