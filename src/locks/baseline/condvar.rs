//! Blocking baselines built from a mutex and a condition variable: the group lock an engineer
//! would write (`condvar-gme`) and a counting semaphore (`semaphore`).

use std::collections::VecDeque;

use parking_lot::{Condvar, Mutex};

use crate::locks::{Lock, LockInfo, Params, Problem};

/// What the registry and `lockbench list` say of `condvar-gme`: its paper and figure, its claims.
pub const CONDVAR_GME: LockInfo = LockInfo::baseline(
    "condvar-gme",
    Problem::Gme,
    true,
    "mutex + condvar group lock, FCFS between conflicting sessions",
);

/// What the registry and `lockbench list` say of `semaphore`: its paper and figure, its claims.
pub const SEMAPHORE: LockInfo = LockInfo::baseline(
    "semaphore",
    Problem::KExclusion,
    false,
    "counting semaphore (mutex + condvar) with k permits",
);

#[derive(Default)]
struct GroupState {
    /// Session of the processes inside (meaningful while `inside > 0`).
    session: usize,
    inside: usize,
    /// Waiting requests in arrival order: (ticket, session).
    queue: VecDeque<(u64, usize)>,
    next_ticket: u64,
}

impl GroupState {
    /// A queued request may enter when every request ahead of it in the queue asks for its
    /// session (it belongs to the leading batch) and the sessions inside, if any, are the same.
    fn may_enter(&self, ticket: u64, session: usize) -> bool {
        (self.inside == 0 || self.session == session)
            && self
                .queue
                .iter()
                .take_while(|&&(t, _)| t != ticket)
                .all(|&(_, s)| s == session)
    }
}

/// `condvar-gme`: mutex + condvar group lock. Requests queue in arrival order; the leading run
/// of same-session requests enters together once the sessions inside match, so conflicting
/// requests are served first-come-first-served and same-session requests share.
pub struct CondvarGme {
    state: Mutex<GroupState>,
    changed: Condvar,
}

impl CondvarGme {
    /// A new, empty group lock.
    pub fn new(_params: &Params) -> Self {
        CondvarGme {
            state: Mutex::new(GroupState::default()),
            changed: Condvar::new(),
        }
    }
}

impl CondvarGme {
    fn acquire(&self, session: usize, mut doorway_done: impl FnMut()) {
        let mut st = self.state.lock();
        // Doorway: take a ticket and join the queue.
        let ticket = st.next_ticket;
        st.next_ticket += 1;
        st.queue.push_back((ticket, session));
        doorway_done();
        while !st.may_enter(ticket, session) {
            self.changed.wait(&mut st);
        }
        let pos = st
            .queue
            .iter()
            .position(|&(t, _)| t == ticket)
            .expect("queued");
        st.queue.remove(pos);
        st.session = session;
        st.inside += 1;
        if !st.queue.is_empty() {
            // Same-session requests queued behind us may now share.
            self.changed.notify_all();
        }
    }
}

impl Lock for CondvarGme {
    fn enter(&self, _p: usize, session: usize) {
        self.acquire(session, || {})
    }

    fn enter_traced(&self, _p: usize, session: usize, doorway_done: &mut dyn FnMut()) {
        self.acquire(session, doorway_done)
    }

    fn exit(&self, _p: usize, _session: usize) {
        let mut st = self.state.lock();
        st.inside -= 1;
        if st.inside == 0 && !st.queue.is_empty() {
            self.changed.notify_all();
        }
    }
}

/// `semaphore`: a counting semaphore with `k` permits (mutex + condvar), the k-exclusion
/// baseline.
pub struct Semaphore {
    permits: Mutex<usize>,
    freed: Condvar,
}

impl Semaphore {
    /// A semaphore with `params.k` permits.
    pub fn new(params: &Params) -> Self {
        Semaphore {
            permits: Mutex::new(params.k),
            freed: Condvar::new(),
        }
    }
}

impl Lock for Semaphore {
    fn enter(&self, _p: usize, _session: usize) {
        let mut permits = self.permits.lock();
        while *permits == 0 {
            self.freed.wait(&mut permits);
        }
        *permits -= 1;
    }

    fn exit(&self, _p: usize, _session: usize) {
        *self.permits.lock() += 1;
        self.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_batch_shares_and_conflicts_wait_their_turn() {
        let mut st = GroupState::default();
        st.queue.extend([(0, 1), (1, 1), (2, 2), (3, 1)]);
        assert!(st.may_enter(0, 1));
        assert!(st.may_enter(1, 1));
        assert!(
            !st.may_enter(2, 2),
            "session 2 waits for the batch ahead of it"
        );
        assert!(
            !st.may_enter(3, 1),
            "a later same-session request does not overtake session 2"
        );
        st.inside = 1;
        st.session = 2;
        assert!(
            !st.may_enter(0, 1),
            "session 1 waits while session 2 is inside"
        );
    }
}
