//! One pthread mutex or rwlock's stand-in: the registry lock built for it, the try-gate ahead of
//! that lock, the safety oracle's owner word, and what kind of object it serves.
//!
//! **The try-gate.** None of the registry's locks can abandon its doorway, so `trylock` cannot
//! be "enter, and back out if you would wait". Instead each stand-in counts the threads inside
//! or waiting (`gate`, two per thread, plus a *try bit*): `lock` adds itself and enters the
//! algorithm; `trylock` succeeds only when the count is zero, setting count and try bit in one
//! compare-and-swap; a `lock` that arrives while the try bit is set waits for it to clear before
//! entering the algorithm, so the trylocking thread runs the algorithm's entry alone and never
//! waits on another thread. So `trylock` succeeds exactly when the lock is idle (no holder and
//! no waiter, readers included) and never blocks. The gate costs one atomic add per
//! acquisition and one per release, on the stand-in's own cache line.
//!
//! **The oracle.** Every exclusive holder reads `owner` as 0 right after the algorithm lets it
//! in, writes its id + 1 there, and reads that back when it releases (then clears it); a shared
//! holder (a reader on a GME lock) reads it as 0 when it releases. Any other value means two
//! threads were inside together: counted as a violation. With the real pthread mutex held
//! inside the algorithm (for condition variables: see `crate::mutex`), the owner word is
//! written before the real mutex is taken and checked after it is released, and the real mutex
//! is taken by polling (a thread the algorithm let in spins beside the holder rather than
//! sleeping), so a lock that lets two threads through is seen even though the real mutex then
//! serialises them.

use std::ffi::c_int;
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};

use lockbench::locks::Lock;

use crate::stats::{bump, Report, Stats};

/// Not classified yet (fresh, or destroyed).
pub const UNKNOWN: u8 = 0;
/// A normal (or adaptive) mutex: runs on the chosen lock.
pub const MUTEX: u8 = 1;
/// A recursive, error-checking, robust, priority or process-shared mutex: passed through.
pub const MUTEX_PASS: u8 = 2;
/// A process-private rwlock: runs on the chosen lock.
pub const RWLOCK: u8 = 3;
/// A process-shared rwlock: passed through.
pub const RWLOCK_PASS: u8 = 4;

static COUNT_MUTEX: AtomicU64 = AtomicU64::new(0);
static COUNT_MUTEX_PASS: AtomicU64 = AtomicU64::new(0);
static COUNT_RWLOCK: AtomicU64 = AtomicU64::new(0);

/// A stand-in.
#[repr(align(128))]
pub struct Entry {
    gate: AtomicU64,
    owner: AtomicUsize,
    kind: AtomicU8,
    /// The chosen lock (`None`: `pthread`, the real object serves).
    pub lock: Option<Box<dyn Lock>>,
}

const TRY_BIT: u64 = 1;
const ONE: u64 = 2;

impl Entry {
    /// A fresh, unclassified stand-in over `lock` (`None`: `pthread`).
    pub fn new(lock: Option<Box<dyn Lock>>) -> Entry {
        Entry {
            gate: AtomicU64::new(0),
            owner: AtomicUsize::new(0),
            kind: AtomicU8::new(UNKNOWN),
            lock,
        }
    }

    /// Its kind, classifying it with `classify` if it has none yet.
    #[inline]
    pub fn kind(&self, classify: impl FnOnce() -> u8) -> u8 {
        let k = self.kind.load(Ordering::Relaxed);
        if k != UNKNOWN {
            return k;
        }
        self.set_kind(classify())
    }

    /// Classifies it (at init, or at first use).
    pub fn set_kind(&self, k: u8) -> u8 {
        if self.kind.swap(k, Ordering::Relaxed) != k {
            match k {
                MUTEX => &COUNT_MUTEX,
                MUTEX_PASS => &COUNT_MUTEX_PASS,
                _ => &COUNT_RWLOCK,
            }
            .fetch_add(1, Ordering::Relaxed);
        }
        k
    }

    /// Forgets its kind (destroy): the next object at this address is classified afresh.
    pub fn forget_kind(&self) {
        self.kind.store(UNKNOWN, Ordering::Relaxed);
    }

    /// Enters the chosen lock as process `p` with `session`; true when others were inside or
    /// waiting (contended).
    #[inline]
    pub fn enter(&self, l: &dyn Lock, p: usize, session: usize) -> bool {
        let prev = self.gate.fetch_add(ONE, Ordering::SeqCst);
        if prev & TRY_BIT != 0 {
            self.wait_try_bit();
        }
        l.enter(p, session);
        prev != 0
    }

    #[cold]
    fn wait_try_bit(&self) {
        let mut spins = 0u32;
        while self.gate.load(Ordering::SeqCst) & TRY_BIT != 0 {
            spins += 1;
            if spins < 128 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }

    /// Enters only if the lock is idle (see the module's doc); never waits on another thread.
    #[inline]
    pub fn try_enter(&self, l: &dyn Lock, p: usize, session: usize) -> bool {
        if self
            .gate
            .compare_exchange(0, ONE | TRY_BIT, Ordering::SeqCst, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        l.enter(p, session);
        self.gate.fetch_and(!TRY_BIT, Ordering::SeqCst);
        true
    }

    /// Leaves the chosen lock.
    #[inline]
    pub fn exit(&self, l: &dyn Lock, p: usize, session: usize) {
        l.exit(p, session);
        self.gate.fetch_sub(ONE, Ordering::SeqCst);
    }

    /// The oracle, at an exclusive entry: nobody may be inside yet (a plain load and a store,
    /// no atomic read-modify-write).
    #[inline]
    pub fn mark_owner(&self, stats: &Stats, p: usize) {
        if self.owner.load(Ordering::Relaxed) != 0 {
            bump(&stats.per_id[p].violations);
        }
        self.owner.store(p + 1, Ordering::Relaxed);
    }

    /// Whether an exclusive holder is inside (a plain load of the owner word).
    #[inline]
    pub fn held(&self) -> bool {
        self.owner.load(Ordering::Relaxed) != 0
    }

    /// The oracle, at an exclusive release: was `p` alone since it entered?
    #[inline]
    pub fn check_owner(&self, stats: &Stats, p: usize) {
        if self.owner.load(Ordering::Relaxed) != p + 1 {
            bump(&stats.per_id[p].violations);
        }
        self.owner.store(0, Ordering::Relaxed);
    }

    /// The oracle, at a shared release: no exclusive holder inside.
    #[inline]
    pub fn check_no_owner(&self, stats: &Stats, p: usize) {
        if self.owner.load(Ordering::Relaxed) != 0 {
            bump(&stats.per_id[p].violations);
        }
    }
}

/// The session an exclusive acquisition asks for: its own, so that on a GME lock no two
/// exclusive requests share (mutual-exclusion locks ignore sessions).
#[inline]
pub fn exclusive_session(p: usize) -> usize {
    p + 1
}

/// The objects seen start afresh (a forked child).
pub fn reset_counts() {
    for c in [&COUNT_MUTEX, &COUNT_MUTEX_PASS, &COUNT_RWLOCK] {
        c.store(0, Ordering::Relaxed);
    }
}

/// The objects seen, for the statistics file.
pub fn count_kinds(r: &mut Report) {
    r.mutexes = COUNT_MUTEX.load(Ordering::Relaxed);
    r.passthrough_mutexes = COUNT_MUTEX_PASS.load(Ordering::Relaxed);
    r.rwlocks = COUNT_RWLOCK.load(Ordering::Relaxed);
}

/// Polls `attempt` until it succeeds or the absolute `CLOCK_REALTIME` deadline passes (the
/// timed variants: the registry's locks cannot give up a wait, so a timed acquisition is a
/// series of trylocks 50 µs apart). Returns 0 or `ETIMEDOUT` (`EINVAL` for a bad deadline).
pub fn poll_until(deadline: *const libc::timespec, mut attempt: impl FnMut() -> bool) -> c_int {
    if deadline.is_null() {
        return libc::EINVAL;
    }
    // SAFETY: the caller passed a valid timespec, as pthread requires.
    let d = unsafe { *deadline };
    if !(0..1_000_000_000).contains(&d.tv_nsec) {
        return libc::EINVAL;
    }
    loop {
        if attempt() {
            return 0;
        }
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid out-pointer.
        unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut now) };
        if (now.tv_sec, now.tv_nsec) >= (d.tv_sec, d.tv_nsec) {
            return libc::ETIMEDOUT;
        }
        std::thread::sleep(std::time::Duration::from_micros(50));
    }
}
