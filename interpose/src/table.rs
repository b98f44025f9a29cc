//! Mutex or rwlock address → its lock, created on first use (so `PTHREAD_MUTEX_INITIALIZER`
//! needs no init call): a fixed-capacity open-addressing table, lock-free (LiTL uses a
//! concurrent hash table, CLHT, for the same job).
//!
//! An entry is never removed: `destroy` leaves the lock idle for the next mutex at the same
//! address (destroying a held mutex is undefined in POSIX), so lookups never meet a tombstone
//! and a lock is never freed under a thread still reading it. The table holds
//! `LOCKBENCH_MAX_LOCKS` distinct addresses; one more stops the process with one line.

use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// Address → `&'static T`.
pub struct Table<T> {
    keys: Box<[AtomicUsize]>,
    vals: Box<[AtomicPtr<T>]>,
    bits: u32,
    /// Entries made.
    pub len: AtomicUsize,
}

impl<T> Table<T> {
    /// Room for at least `capacity` addresses (kept at most half full).
    pub fn new(capacity: usize) -> Table<T> {
        let slots = (capacity * 2).next_power_of_two().max(16);
        Table {
            keys: (0..slots).map(|_| AtomicUsize::new(0)).collect(),
            vals: (0..slots)
                .map(|_| AtomicPtr::new(std::ptr::null_mut()))
                .collect(),
            bits: slots.trailing_zeros(),
            len: AtomicUsize::new(0),
        }
    }

    #[inline]
    fn home(&self, addr: usize) -> usize {
        (addr >> 3).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - self.bits)
    }

    /// The entry of `addr`, made by `make` if there is none (exactly one caller makes it; the
    /// others wait for it). `None` when the table is full.
    #[inline]
    pub fn get_or_make(&self, addr: usize, make: impl FnOnce() -> T) -> Option<&'static T> {
        let mask = self.keys.len() - 1;
        let mut i = self.home(addr);
        loop {
            let k = self.keys[i].load(Ordering::Acquire);
            if k == addr {
                return Some(self.wait_value(i));
            }
            if k == 0 {
                return self.make_at(i, addr, make);
            }
            i = (i + 1) & mask;
        }
    }

    #[cold]
    fn make_at(&self, mut i: usize, addr: usize, make: impl FnOnce() -> T) -> Option<&'static T> {
        let mask = self.keys.len() - 1;
        loop {
            match self.keys[i].compare_exchange(0, addr, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {
                    // Keep the table at most half full, so probes stay short and end.
                    if self.len.fetch_add(1, Ordering::Relaxed) >= self.keys.len() / 2 {
                        return None;
                    }
                    let v = Box::into_raw(Box::new(make()));
                    self.vals[i].store(v, Ordering::Release);
                    // SAFETY: published once and never freed.
                    return Some(unsafe { &*v });
                }
                Err(k) if k == addr => return Some(self.wait_value(i)),
                Err(_) => i = (i + 1) & mask,
            }
            while self.keys[i].load(Ordering::Acquire) != 0 {
                if self.keys[i].load(Ordering::Acquire) == addr {
                    return Some(self.wait_value(i));
                }
                i = (i + 1) & mask;
            }
        }
    }

    #[inline]
    fn wait_value(&self, i: usize) -> &'static T {
        loop {
            let v = self.vals[i].load(Ordering::Acquire);
            if !v.is_null() {
                // SAFETY: published once by its maker and never freed.
                return unsafe { &*v };
            }
            std::thread::yield_now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_entry_per_address_and_full_is_none() {
        let t: Table<usize> = Table::new(8);
        let a = t.get_or_make(0x1000, || 1).unwrap();
        let b = t.get_or_make(0x1000, || 2).unwrap();
        assert!(std::ptr::eq(a, b));
        assert_eq!(*b, 1);
        let mut made = 1;
        for k in 1..100usize {
            if t.get_or_make(0x1000 + 64 * k, || k).is_none() {
                break;
            }
            made += 1;
        }
        assert_eq!(made, 8, "capacity 8 → 16 slots, half of them usable");
    }
}
