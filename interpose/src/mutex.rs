//! `pthread_mutex_*` and `pthread_cond_{wait,timedwait}` on the chosen lock.
//!
//! **Condition variables** (LiTL's scheme): a thread holding an interposed mutex also holds
//! the real pthread mutex at the same address, taken after the chosen lock and released before
//! it. `pthread_cond_wait` leaves the chosen lock, waits on the real condition variable with
//! the real mutex (which the C library releases and retakes), releases the real mutex and
//! acquires both again in order. Signal and broadcast need nothing. The real mutex is never
//! contended except by a woken waiter retaking it, so it costs one uncontended
//! compare-and-swap a side.
//!
//! **Kinds.** A normal or adaptive mutex runs on the chosen lock. Recursive, error-checking,
//! robust, priority-protocol and process-shared mutexes are passed to the C library untouched
//! (their semantics are not a plain lock's) and counted (`passthrough_mutexes`,
//! `passthrough_ops`). The kind is read from the mutex itself (glibc keeps it in `__kind`,
//! set by `pthread_mutex_init` and by the static initialisers), so static initialisers of
//! every kind are classified too.
//!
//! **`pthread`** runs the real mutex alone through the same bookkeeping (the table, the id,
//! the counters, the oracle), so `app` measures what the interposer itself costs.

use std::ffi::c_int;

use libc::{pthread_cond_t, pthread_mutex_t, pthread_mutexattr_t, timespec};

use crate::lock::{exclusive_session, Entry, MUTEX, MUTEX_PASS};
use crate::real::reals;
use crate::sample;
use crate::state::{get, State};
use crate::stats::bump;

/// The kind glibc stored in the mutex: pass through anything but a normal or adaptive,
/// process-private, non-robust, no-priority-protocol mutex.
fn classify(m: *mut pthread_mutex_t) -> u8 {
    // glibc's `struct __pthread_mutex_s` on 64-bit targets: __lock, __count, __owner,
    // __nusers, then __kind at byte 16.
    // SAFETY: m points to a pthread_mutex_t (40 bytes), initialised by the program.
    let kind = unsafe { (m as *const u8).add(16).cast::<c_int>().read_volatile() };
    const KIND_MASK: c_int = 3; // 0 normal, 1 recursive, 2 error-checking, 3 adaptive
    const ROBUST_PRIO_PSHARED: c_int = 16 | 32 | 64 | 128;
    let plain = matches!(kind & KIND_MASK, 0 | 3) && kind & ROBUST_PRIO_PSHARED == 0;
    if plain {
        MUTEX
    } else {
        MUTEX_PASS
    }
}

type M = *mut pthread_mutex_t;

#[inline]
fn stand_in(s: &'static State, m: M) -> (&'static Entry, bool) {
    let e = s.stand_in(m as usize);
    let pass = e.kind(|| classify(m)) == MUTEX_PASS;
    (e, pass)
}

pub fn init(m: M, attr: *const pthread_mutexattr_t) -> c_int {
    // SAFETY: the program's arguments, passed on.
    let r = unsafe { (reals().mutex_init)(m, attr) };
    if r == 0 {
        let s = get();
        s.stand_in(m as usize).set_kind(classify(m));
    }
    r
}

pub fn destroy(m: M) -> c_int {
    if let Some(s) = crate::state::get_if_ready() {
        s.stand_in(m as usize).forget_kind();
    }
    // SAFETY: the program's argument, passed on.
    unsafe { (reals().mutex_destroy)(m) }
}

/// Takes the real mutex inside the chosen lock. It is free but when a woken condition-variable
/// waiter is retaking it for a moment, or when the chosen lock let two threads in: polling
/// (rather than sleeping in the kernel) keeps such a thread running beside the holder, where
/// the oracle sees it.
#[inline]
fn take_real(m: M) {
    let r = reals();
    // SAFETY: the program's mutex.
    if unsafe { (r.mutex_trylock)(m) } == 0 {
        return;
    }
    let mut tries = 0u32;
    // SAFETY: as above.
    while unsafe { (r.mutex_trylock)(m) } != 0 {
        tries += 1;
        if tries < 64 {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

/// Takes the chosen lock (and the real mutex), as process `p`.
#[inline]
fn acquire(s: &State, e: &Entry, m: M, p: usize) -> c_int {
    let start = sample::draw(s, p);
    let r = reals();
    let contended = match &e.lock {
        None => {
            // Contended when another thread is inside (the oracle's owner word, a line this
            // call touches anyway; a trylock first would cost more than the bookkeeping).
            let busy = e.held();
            // SAFETY: the program's mutex.
            let rc = unsafe { (r.mutex_lock)(m) };
            if rc != 0 {
                return rc;
            }
            e.mark_owner(&s.stats, p);
            busy
        }
        Some(l) => {
            let contended = e.enter(l.as_ref(), p, exclusive_session(p));
            e.mark_owner(&s.stats, p);
            take_real(m);
            contended
        }
    };
    sample::acquired(s, p, m as usize, start, contended);
    0
}

/// Releases what [`acquire`] took; `keep_real` leaves the real mutex held (a condvar wait).
#[inline]
fn release(s: &State, e: &Entry, m: M, p: usize, keep_real: bool) -> c_int {
    sample::releasing(s, p, m as usize);
    let r = reals();
    match &e.lock {
        None => {
            e.check_owner(&s.stats, p);
            if keep_real {
                0
            } else {
                // SAFETY: the program's mutex, held by this thread.
                unsafe { (r.mutex_unlock)(m) }
            }
        }
        Some(l) => {
            if !keep_real {
                // SAFETY: the program's mutex, taken in `acquire` by this thread.
                unsafe { (r.mutex_unlock)(m) };
            }
            e.check_owner(&s.stats, p);
            e.exit(l.as_ref(), p, exclusive_session(p));
            0
        }
    }
}

pub fn lock(m: M) -> c_int {
    let s = get();
    let (e, pass) = stand_in(s, m);
    let p = s.ids.current();
    if pass {
        bump(&s.stats.per_id[p].passthrough);
        // SAFETY: the program's mutex, passed on.
        return unsafe { (reals().mutex_lock)(m) };
    }
    acquire(s, e, m, p)
}

pub fn trylock(m: M) -> c_int {
    let s = get();
    let (e, pass) = stand_in(s, m);
    let p = s.ids.current();
    let r = reals();
    if pass {
        bump(&s.stats.per_id[p].passthrough);
        // SAFETY: the program's mutex, passed on.
        return unsafe { (r.mutex_trylock)(m) };
    }
    let got = match &e.lock {
        // SAFETY: the program's mutex.
        None => (unsafe { (r.mutex_trylock)(m) }) == 0,
        Some(l) => {
            let got = e.try_enter(l.as_ref(), p, exclusive_session(p));
            if got {
                e.mark_owner(&s.stats, p);
                take_real(m);
            }
            got
        }
    };
    if !got {
        bump(&s.stats.per_id[p].trylock_failures);
        return libc::EBUSY;
    }
    if e.lock.is_none() {
        e.mark_owner(&s.stats, p);
    }
    sample::acquired(s, p, m as usize, None, false);
    0
}

pub fn timedlock(m: M, deadline: *const timespec) -> c_int {
    let s = get();
    let (e, pass) = stand_in(s, m);
    if pass || e.lock.is_none() {
        let p = s.ids.current();
        if pass {
            bump(&s.stats.per_id[p].passthrough);
        }
        // SAFETY: the program's arguments, passed on.
        let rc = unsafe { (reals().mutex_timedlock)(m, deadline) };
        if rc == 0 && !pass {
            e.mark_owner(&s.stats, p);
            sample::acquired(s, p, m as usize, None, false);
        }
        return rc;
    }
    poll_trylock(m, deadline)
}

fn poll_trylock(m: M, deadline: *const timespec) -> c_int {
    crate::lock::poll_until(deadline, || trylock(m) == 0)
}

pub fn unlock(m: M) -> c_int {
    let s = get();
    let (e, pass) = stand_in(s, m);
    let p = s.ids.current();
    if pass {
        bump(&s.stats.per_id[p].passthrough);
        // SAFETY: the program's mutex, passed on.
        return unsafe { (reals().mutex_unlock)(m) };
    }
    release(s, e, m, p, false)
}

pub fn cond_wait(c: *mut pthread_cond_t, m: M, deadline: Option<*const timespec>) -> c_int {
    let s = get();
    let (e, pass) = stand_in(s, m);
    let p = s.ids.current();
    bump(&s.stats.per_id[p].cond_waits);
    let r = reals();
    let wait = || match deadline {
        // SAFETY: the program's arguments, passed on; the real mutex is held.
        None => unsafe { (r.cond_wait)(c, m) },
        // SAFETY: as above.
        Some(d) => unsafe { (r.cond_timedwait)(c, m, d) },
    };
    if pass {
        return wait();
    }
    release(s, e, m, p, true);
    let rc = wait();
    match &e.lock {
        None => {
            e.mark_owner(&s.stats, p);
        }
        Some(_) => {
            // SAFETY: the real mutex, retaken by the wait; released to keep the order
            // (chosen lock first, then the real mutex).
            unsafe { (r.mutex_unlock)(m) };
            acquire(s, e, m, p);
        }
    }
    rc
}
