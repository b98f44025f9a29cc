//! The lock of a `--rmr` run: the lock on a counting memory, wrapped so that the memory knows
//! which section of the passage (doorway, waiting room, critical section, exit) each access
//! belongs to.

use crate::locks::Lock;
use crate::mem::{CountingMemory, Section};

/// A lock on a counting memory, telling the memory which section each access belongs to:
/// the doorway until the lock reports its end, then the waiting room, the critical section
/// once inside, the exit section. The passage loop sees an ordinary lock.
pub(super) struct Counted {
    pub(super) lock: Box<dyn Lock>,
    pub(super) mem: CountingMemory,
}

impl Counted {
    fn acquire(&self, p: usize, session: usize, doorway_done: &mut dyn FnMut()) {
        self.mem.begin_passage(p);
        let mut seen = false;
        self.lock.enter_traced(p, session, &mut || {
            seen = true;
            self.mem.set_section(p, Section::Waiting);
            doorway_done();
        });
        if !seen {
            self.mem.doorway_unobserved(p);
        }
        self.mem.set_section(p, Section::Cs);
    }
}

impl Lock for Counted {
    fn enter(&self, p: usize, session: usize) {
        self.acquire(p, session, &mut || {});
    }

    fn enter_traced(&self, p: usize, session: usize, doorway_done: &mut dyn FnMut()) {
        self.acquire(p, session, doorway_done);
    }

    fn exit(&self, p: usize, session: usize) {
        self.mem.set_section(p, Section::Exit);
        self.lock.exit(p, session);
        self.mem.end_passage(p);
    }

    fn check_invariants(&self, exact: bool) -> Result<(), String> {
        self.lock.check_invariants(exact)
    }

    fn token_range(&self) -> Option<i64> {
        self.lock.token_range()
    }

    fn measurement_starts(&self, p: usize) {
        self.mem.reset_passages(p);
    }
}
