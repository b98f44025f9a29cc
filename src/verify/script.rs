//! `verify --scheduler script`: a lock's scripted counter-example ([`CounterExample`]) as a
//! shuttle scheduler. The executions tell a board what each process has done (doorways ended,
//! entries, writes); the scheduler runs the process of the current goal until the board shows
//! the goal reached, then the next; once every goal is reached, every runnable task in turn.
//! One schedule, the same at every seed: the failure the paper states shows at every level.

use std::cell::RefCell;

use shuttle::scheduler::{Schedule, Scheduler, Task, TaskId};

use crate::locks::{CounterExample, Step};

/// What one process has done in the current execution.
#[derive(Clone, Copy, Debug, Default)]
struct Done {
    task: Option<usize>,
    doorways: usize,
    entries: usize,
    writes: usize,
    waits: usize,
}

thread_local! {
    /// The board of the current execution (None when no script runs on this thread). Shuttle
    /// runs every task of an execution on the calling thread, so a thread-local reaches all.
    static BOARD: RefCell<Option<Vec<Done>>> = const { RefCell::new(None) };
}

/// What a process did, for the board.
#[derive(Clone, Copy, Debug)]
pub(super) enum Event {
    /// Its task started (shuttle task id).
    Started(usize),
    /// A doorway ended.
    Doorway,
    /// It entered the critical section.
    Enter,
    /// It wrote a register.
    Write,
    /// It found a wait condition false.
    Wait,
}

/// Process p did `e` (nothing when no script runs).
pub(super) fn note(p: usize, e: Event) {
    BOARD.with(|b| {
        if let Some(board) = b.borrow_mut().as_mut() {
            if let Some(d) = board.get_mut(p) {
                match e {
                    Event::Started(t) => d.task = Some(t),
                    Event::Doorway => d.doorways += 1,
                    Event::Enter => d.entries += 1,
                    Event::Write => d.writes += 1,
                    Event::Wait => d.waits += 1,
                }
            }
        }
    });
}

/// Stops recording on drop (the board belongs to one exploration).
pub(super) struct BoardGuard;

impl Drop for BoardGuard {
    fn drop(&mut self) {
        BOARD.with(|b| *b.borrow_mut() = None);
    }
}

/// The scheduler of a script: one execution.
pub(super) struct ScriptScheduler {
    script: CounterExample,
    goal: usize,
    started: bool,
    next: usize,
    rng: u64,
}

impl ScriptScheduler {
    /// For `script`; the board records from now until the guard drops.
    pub(super) fn new(script: CounterExample) -> (Self, BoardGuard) {
        BOARD.with(|b| *b.borrow_mut() = Some(vec![Done::default(); script.threads]));
        let s = ScriptScheduler {
            script,
            goal: 0,
            started: false,
            next: 0,
            rng: 0x5eed,
        };
        (s, BoardGuard)
    }

    /// The process of the first goal not yet reached, if any.
    fn current(&mut self, board: &[Done]) -> Option<usize> {
        while let Some(&s) = self.script.steps.get(self.goal) {
            let (q, reached) = match s {
                Step::Doorway(q, n) => (q, board.get(q).is_none_or(|d| d.doorways >= n)),
                Step::Enter(q, n) => (q, board.get(q).is_none_or(|d| d.entries >= n)),
                Step::Writes(q, n) => (q, board.get(q).is_none_or(|d| d.writes >= n)),
                Step::Waits(q, n) => (q, board.get(q).is_none_or(|d| d.waits >= n)),
            };
            if !reached {
                return Some(q);
            }
            self.goal += 1;
        }
        None
    }
}

impl Scheduler for ScriptScheduler {
    fn new_execution(&mut self) -> Option<Schedule> {
        if self.started {
            return None;
        }
        self.started = true;
        BOARD.with(|b| *b.borrow_mut() = Some(vec![Done::default(); self.script.threads]));
        Some(Schedule::new(self.rng))
    }

    fn next_task(
        &mut self,
        runnable: &[&Task],
        _current: Option<TaskId>,
        _is_yielding: bool,
    ) -> Option<TaskId> {
        let board = BOARD.with(|b| b.borrow().clone()).unwrap_or_default();
        let ids: Vec<TaskId> = runnable.iter().map(|t| t.id()).collect();
        let known = |t: TaskId| board.iter().any(|d| d.task == Some(usize::from(t)));
        if let Some(q) = self.current(&board) {
            match board.get(q).and_then(|d| d.task) {
                Some(t) => {
                    if let Some(&id) = ids.iter().find(|&&id| usize::from(id) == t) {
                        return Some(id);
                    }
                }
                // Not started: run the tasks that have not told the board who they are yet.
                None => {
                    if let Some(&id) = ids.iter().rev().find(|&&id| !known(id)) {
                        return Some(id);
                    }
                }
            }
        }
        // Every goal reached (or the goal's process cannot run): every task in turn.
        let n = ids.len();
        let pick = ids[self.next % n];
        self.next = self.next.wrapping_add(1);
        Some(pick)
    }

    fn next_u64(&mut self) -> u64 {
        // SplitMix64: the values a process draws (sessions come from the script's plan).
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}
