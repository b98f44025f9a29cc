//! Hops of a run (seed 003 §2.2.1, as its Theorems 10 and 11 count them): the longest causal
//! chain of messages before an entry, and the path the entry waited for, message by message.

use super::Tally;

impl Tally {
    /// Records the causal hops of a waiting time: the longest chain of messages from the
    /// request to the entry (or, seed 004, from asking to leave to leaving).
    pub fn wait_hops(&mut self, h: u64) {
        add_hops(&mut self.wait_hops, h);
    }

    /// Records the causal hops of a synchronization delay: the longest chain of messages from
    /// the exit that left the system empty to the next entry (0 when that entry does not
    /// depend on the exit).
    pub fn sync_hops(&mut self, h: u64) {
        add_hops(&mut self.sync_hops, h);
    }

    /// Records the path an entry waited for: `hops` messages from the entering process's
    /// request (`from_request`), or from another event; `describe` gives the path.
    pub fn path_wait(&mut self, hops: u64, from_request: bool, describe: impl Fn() -> String) {
        self.path_wait.add(hops, from_request, describe);
    }

    /// Records that an entry's path began at another process's exit (it waited for that
    /// process's critical section to end); `describe` gives the path.
    pub fn path_after_exit(&mut self, describe: impl Fn() -> String) {
        let p = &mut self.path_wait;
        p.after_exit += 1;
        if p.first_after_exit.is_none() {
            p.first_after_exit = Some(describe());
        }
    }

    /// Records the path an entry after an exit that emptied the system waited for: `hops`
    /// of its messages sent at that exit or later; `from_exit`: whether it began there (else
    /// it is also counted as begun elsewhere).
    pub fn path_sync(&mut self, hops: u64, from_exit: bool, describe: impl Fn() -> String) {
        if !from_exit {
            self.path_sync.elsewhere += 1;
        }
        self.path_sync.add(hops, true, describe);
    }
}

/// Hops on the paths entries waited for (seed 003 §2.2.1, as its Theorems 10 and 11 count
/// them): the messages, one after the other, from an event to the entry.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PathHops {
    /// Over the paths that begin at the event measured from: sum, most, count.
    pub sum: u64,
    /// Most hops.
    pub max: u64,
    /// Paths counted.
    pub count: u64,
    /// Entries whose path began at another event (they also waited for that event).
    pub elsewhere: u64,
    /// The first path with `max` hops, described.
    pub longest: Option<String>,
    /// The first entry whose path began elsewhere, described.
    pub first_elsewhere: Option<String>,
    /// Entries whose path began at another process's exit (counted among `elsewhere`).
    pub after_exit: u64,
    /// The first of those, described.
    pub first_after_exit: Option<String>,
}

impl PathHops {
    pub(super) fn add(&mut self, hops: u64, from_start: bool, describe: impl Fn() -> String) {
        if !from_start {
            self.elsewhere += 1;
            if self.first_elsewhere.is_none() {
                self.first_elsewhere = Some(describe());
            }
            return;
        }
        if self.count == 0 || hops > self.max {
            self.longest = Some(describe());
        }
        self.sum += hops;
        self.max = self.max.max(hops);
        self.count += 1;
    }

    pub(super) fn absorb(&mut self, o: &PathHops) {
        self.sum += o.sum;
        self.max = self.max.max(o.max);
        self.count += o.count;
        self.elsewhere += o.elsewhere;
        if self.longest.is_none() {
            self.longest.clone_from(&o.longest);
        }
        if self.first_elsewhere.is_none() {
            self.first_elsewhere.clone_from(&o.first_elsewhere);
        }
        self.after_exit += o.after_exit;
        if self.first_after_exit.is_none() {
            self.first_after_exit.clone_from(&o.first_after_exit);
        }
    }
}

fn add_hops(acc: &mut (u64, u64, u64), h: u64) {
    acc.0 += h;
    acc.1 = acc.1.max(h);
    acc.2 += 1;
}
