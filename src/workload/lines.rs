//! Shared cache lines that every critical section reads and writes, so a passage moves real
//! data between cores the way a protected data structure would.

use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_utils::CachePadded;

/// `len()` counters, each on its own cache line (`CachePadded`: 128-byte aligned on x86_64,
/// where the prefetcher pulls lines in pairs). Touch them only inside the critical section: the
/// accesses are relaxed, and the lock's own ordering is what publishes them to the next holder.
///
/// Under a GME lock several processes of one session may touch the lines at once; the counters
/// then lose increments (a relaxed load and store is not an atomic add) but the cache traffic is
/// the same, which is what they are there for.
#[derive(Debug)]
pub struct SharedLines {
    lines: Box<[CachePadded<AtomicU64>]>,
}

impl SharedLines {
    /// `lines` counters at zero, on separate cache lines; zero lines make `touch` free.
    pub fn new(lines: usize) -> Self {
        SharedLines {
            lines: (0..lines)
                .map(|_| CachePadded::new(AtomicU64::new(0)))
                .collect(),
        }
    }

    #[cfg(test)]
    /// How many lines there are.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether there are no lines.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// Reads and writes every line once: a relaxed load, then a relaxed store of the value + 1.
    #[inline]
    pub fn touch(&self) {
        for line in self.lines.iter() {
            let v = line.load(Ordering::Relaxed);
            line.store(v.wrapping_add(1), Ordering::Relaxed);
        }
    }

    #[cfg(test)]
    /// The sum of all counters: `len() × touches` when every touch ran alone.
    pub fn total(&self) -> u64 {
        self.lines.iter().map(|l| l.load(Ordering::Relaxed)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn lines_are_separate_cache_lines() {
        let s = SharedLines::new(3);
        assert_eq!(s.len(), 3);
        let a = &*s.lines[0] as *const AtomicU64 as usize;
        let b = &*s.lines[1] as *const AtomicU64 as usize;
        assert!(
            b - a >= 64 && a.is_multiple_of(64),
            "lines at {a:#x} and {b:#x}"
        );
    }

    #[test]
    fn touches_under_a_lock_all_count() {
        let lines = SharedLines::new(4);
        let lock = Mutex::new(());
        let (threads, touches) = (4, 1_000);
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| {
                    for _ in 0..touches {
                        let _guard = lock.lock().unwrap();
                        lines.touch();
                    }
                });
            }
        });
        assert_eq!(lines.total(), 4 * threads * touches);
        for line in lines.lines.iter() {
            assert_eq!(line.load(Ordering::Relaxed), threads * touches);
        }
    }

    #[test]
    fn no_lines_is_free() {
        let s = SharedLines::new(0);
        assert!(s.is_empty());
        s.touch();
        assert_eq!(s.total(), 0);
    }
}
