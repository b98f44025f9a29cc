//! Process ids for the paper locks (`0..n`): a thread takes one at its first lock call and gives
//! it back when it exits (a thread-local destructor, which glibc runs for every thread however
//! it was created and however it ends: returning from its start routine or `pthread_exit`).
//!
//! A thread keeps its id between calls, so a lock's per-process registers are always used by
//! one thread at a time (the papers' model). When more than n threads hold an id at once the
//! process stops with one line on stderr (exit [`crate::EXIT_GAVE_UP`]): waiting for an id could
//! deadlock, since the threads holding them may be waiting for this one.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

const NONE: usize = usize::MAX;

thread_local! {
    /// This thread's id (NONE until its first lock call, and again after its destructor ran).
    static ID: Cell<usize> = const { Cell::new(NONE) };
    /// Gives the id back, to the id space it came from, when the thread exits.
    static RELEASE: Release = const { Release(Cell::new(None)) };
}

struct Release(Cell<Option<&'static Ids>>);

impl Drop for Release {
    fn drop(&mut self) {
        let id = ID.get();
        if id != NONE {
            ID.set(NONE);
            if let Some(ids) = self.0.get() {
                ids.free(id);
            }
        }
    }
}

/// The id space: one bit per id, set while a thread holds it.
pub struct Ids {
    words: Box<[AtomicU64]>,
    n: usize,
    in_use: AtomicUsize,
    /// Most ids held at once.
    pub peak: AtomicUsize,
    /// Ids taken by threads that lock again after their destructor ran (they keep them).
    pub leaked: AtomicUsize,
}

impl Ids {
    /// `n` free ids.
    pub fn new(n: usize) -> Ids {
        Ids {
            words: (0..n.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
            n,
            in_use: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            leaked: AtomicUsize::new(0),
        }
    }

    /// The calling thread's id, taking a free one at its first call.
    #[inline]
    pub fn current(&'static self) -> usize {
        let id = ID.get();
        if id != NONE {
            return id;
        }
        self.take()
    }

    #[cold]
    fn take(&'static self) -> usize {
        let id = self.alloc().unwrap_or_else(|| {
            crate::fatal_gave_up(&format!(
                "more than {n} threads took locks at once, and LOCKBENCH_PROCS={n} ids exist: \
                 rerun with a larger LOCKBENCH_PROCS (lockbench app --procs)",
                n = self.n
            ))
        });
        ID.set(id);
        // Register the destructor; after it has run (a lock taken by a later thread-local
        // destructor) the id cannot be given back, so it is counted as leaked.
        if RELEASE.try_with(|r| r.0.set(Some(self))).is_err() {
            self.leaked.fetch_add(1, Ordering::Relaxed);
        }
        id
    }

    fn alloc(&self) -> Option<usize> {
        for (w, word) in self.words.iter().enumerate() {
            let mut cur = word.load(Ordering::Relaxed);
            loop {
                let free = !cur;
                if free == 0 {
                    break;
                }
                let bit = free.trailing_zeros() as usize;
                let id = w * 64 + bit;
                if id >= self.n {
                    break;
                }
                match word.compare_exchange_weak(
                    cur,
                    cur | 1 << bit,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        let now = self.in_use.fetch_add(1, Ordering::Relaxed) + 1;
                        self.peak.fetch_max(now, Ordering::Relaxed);
                        return Some(id);
                    }
                    Err(seen) => cur = seen,
                }
            }
        }
        None
    }

    /// After `fork`, in the child: only the calling thread is left, so only its id is held.
    pub fn reset_after_fork(&self) {
        for w in self.words.iter() {
            w.store(0, Ordering::Relaxed);
        }
        let id = ID.get();
        let held = usize::from(id != NONE);
        if id != NONE {
            self.words[id / 64].store(1 << (id % 64), Ordering::Relaxed);
        }
        self.in_use.store(held, Ordering::Relaxed);
        self.peak.store(held, Ordering::Relaxed);
    }

    /// Gives `id` back.
    pub fn free(&self, id: usize) {
        self.words[id / 64].fetch_and(!(1 << (id % 64)), Ordering::AcqRel);
        self.in_use.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_recycled() {
        let ids = Ids::new(70);
        let taken: Vec<usize> = (0..70).map(|_| ids.alloc().unwrap()).collect();
        let mut sorted = taken.clone();
        sorted.sort();
        assert_eq!(sorted, (0..70).collect::<Vec<_>>());
        assert_eq!(ids.alloc(), None, "no 71st id");
        ids.free(65);
        assert_eq!(ids.alloc(), Some(65));
        assert_eq!(ids.peak.load(Ordering::Relaxed), 70);
    }
}
