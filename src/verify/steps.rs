//! The steps each process takes, counted by the scheduler: every shared-memory access (and
//! every yield of a failed wait) is one scheduling point, and [`Counted`] tallies, per shuttle
//! task, how many times the scheduler ran it. The lock reports nothing: a figure read from
//! here (seed 001 Lemma 5's "FIFE in O(n) steps") is observed from outside the algorithm.

use std::cell::RefCell;

use shuttle::scheduler::{Schedule, Scheduler, Task, TaskId};

thread_local! {
    /// Steps of each task in the current execution (by shuttle task id). Shuttle runs every
    /// task of an execution on the calling thread, so a thread-local reaches all of them.
    static STEPS: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

/// Steps task `task` has taken so far in the current execution.
pub(super) fn of_task(task: usize) -> u64 {
    STEPS.with(|s| s.borrow().get(task).copied().unwrap_or(0))
}

/// A scheduler that counts the steps of each task it runs, then picks as `S` does.
pub(super) struct Counted<S>(pub(super) S);

impl<S: Scheduler> Scheduler for Counted<S> {
    fn new_execution(&mut self) -> Option<Schedule> {
        STEPS.with(|s| s.borrow_mut().clear());
        self.0.new_execution()
    }

    fn next_task(
        &mut self,
        runnable: &[&Task],
        current: Option<TaskId>,
        is_yielding: bool,
    ) -> Option<TaskId> {
        let picked = self.0.next_task(runnable, current, is_yielding);
        if let Some(t) = picked {
            let t = usize::from(t);
            STEPS.with(|s| {
                let mut s = s.borrow_mut();
                if s.len() <= t {
                    s.resize(t + 1, 0);
                }
                s[t] += 1;
            });
        }
        picked
    }

    fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shuttle::scheduler::RandomScheduler;

    #[test]
    fn every_step_of_a_task_is_counted_once() {
        let s = Counted(RandomScheduler::new_from_seed(7, 3));
        shuttle::Runner::new(s, shuttle::Config::new()).run(|| {
            let before = of_task(usize::from(shuttle::current::me()));
            for _ in 0..5 {
                shuttle::thread::sleep(std::time::Duration::ZERO);
            }
            let after = of_task(usize::from(shuttle::current::me()));
            // Each zero sleep is a scheduling point; with one task it runs again at once.
            assert_eq!(after - before, 5);
        });
    }
}
