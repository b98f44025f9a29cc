//! `pthread_rwlock_*` on the chosen lock: on a GME lock a read lock is the shared session 0 and
//! a write lock a session of its own (the thread's id + 1), so readers enter together and a
//! writer alone; on a mutual-exclusion lock both are exclusive.
//!
//! pthread lets a thread take the same read lock again while holding it; the registry's locks
//! would see one process enter twice. So each thread keeps the rwlocks it holds, with a count:
//! a nested read lock only counts (it cannot wait: the thread is already inside), and the last
//! unlock leaves the lock with the session it entered with. A write lock asked by a thread that
//! already holds the rwlock returns `EDEADLK` (glibc does for a writer; a reader asking to write
//! would deadlock there). Process-shared rwlocks pass through to the C library.
//!
//! The real rwlock is left alone (no condition variable waits on it), except in `pthread` mode,
//! where it serves, through the same bookkeeping.

use std::cell::RefCell;
use std::ffi::c_int;

use libc::{pthread_rwlock_t, pthread_rwlockattr_t, timespec};

use crate::lock::{exclusive_session, Entry, RWLOCK, RWLOCK_PASS};
use crate::real::reals;
use crate::sample;
use crate::state::{get, State};
use crate::stats::bump;

type R = *mut pthread_rwlock_t;

/// One rwlock the thread holds.
#[derive(Clone, Copy)]
struct Held {
    addr: usize,
    session: usize,
    count: u32,
}

thread_local! {
    static HELD: RefCell<Vec<Held>> = const { RefCell::new(Vec::new()) };
}

/// How deep the thread holds `addr` (0: not at all), with its session.
fn held(addr: usize) -> Option<Held> {
    HELD.try_with(|h| h.borrow().iter().find(|x| x.addr == addr).copied())
        .ok()
        .flatten()
}

fn push(addr: usize, session: usize) {
    let _ = HELD.try_with(|h| {
        let mut h = h.borrow_mut();
        match h.iter_mut().find(|x| x.addr == addr) {
            Some(x) => x.count += 1,
            None => h.push(Held {
                addr,
                session,
                count: 1,
            }),
        }
    });
}

/// Drops one level of `addr`; the session when that was the last.
fn pop(addr: usize) -> Option<Option<usize>> {
    HELD.try_with(|h| {
        let mut h = h.borrow_mut();
        let i = h.iter().position(|x| x.addr == addr)?;
        h[i].count -= 1;
        if h[i].count == 0 {
            Some(Some(h.swap_remove(i).session))
        } else {
            Some(None)
        }
    })
    .ok()
    .flatten()
}

fn stand_in(s: &'static State, l: R) -> (&'static Entry, bool) {
    let e = s.stand_in(l as usize);
    // A rwlock first seen at a lock call was statically initialised: process-private.
    let pass = e.kind(|| RWLOCK) == RWLOCK_PASS;
    (e, pass)
}

pub fn init(l: R, attr: *const pthread_rwlockattr_t) -> c_int {
    // SAFETY: the program's arguments, passed on.
    let r = unsafe { (reals().rwlock_init)(l, attr) };
    if r == 0 {
        let mut shared = libc::PTHREAD_PROCESS_PRIVATE;
        if !attr.is_null() {
            // SAFETY: a valid attribute object, as the init call accepted it.
            unsafe { libc::pthread_rwlockattr_getpshared(attr, &mut shared) };
        }
        let kind = if shared == libc::PTHREAD_PROCESS_SHARED {
            RWLOCK_PASS
        } else {
            RWLOCK
        };
        get().stand_in(l as usize).set_kind(kind);
    }
    r
}

pub fn destroy(l: R) -> c_int {
    if let Some(s) = crate::state::get_if_ready() {
        s.stand_in(l as usize).forget_kind();
    }
    // SAFETY: the program's argument, passed on.
    unsafe { (reals().rwlock_destroy)(l) }
}

/// Which way a request asks.
#[derive(Clone, Copy, PartialEq)]
pub enum Mode {
    Read,
    Write,
}

/// How a request waits.
#[derive(Clone, Copy)]
pub enum Wait {
    Block,
    Try,
    Until(*const timespec),
}

/// Every rdlock / wrlock variant.
pub fn acquire(l: R, mode: Mode, wait: Wait) -> c_int {
    let s = get();
    let (e, pass) = stand_in(s, l);
    let p = s.ids.current();
    let r = reals();
    if pass {
        bump(&s.stats.per_id[p].passthrough);
        // SAFETY (each arm): the program's arguments, passed on.
        return unsafe {
            match (mode, wait) {
                (Mode::Read, Wait::Block) => (r.rwlock_rdlock)(l),
                (Mode::Read, Wait::Try) => (r.rwlock_tryrdlock)(l),
                (Mode::Read, Wait::Until(d)) => (r.rwlock_timedrdlock)(l, d),
                (Mode::Write, Wait::Block) => (r.rwlock_wrlock)(l),
                (Mode::Write, Wait::Try) => (r.rwlock_trywrlock)(l),
                (Mode::Write, Wait::Until(d)) => (r.rwlock_timedwrlock)(l, d),
            }
        };
    }
    let addr = l as usize;
    if let Some(h) = held(addr) {
        if mode == Mode::Write {
            return libc::EDEADLK;
        }
        if e.lock.is_none() {
            // SAFETY: a nested read lock, allowed by pthread.
            let rc = unsafe { (r.rwlock_rdlock)(l) };
            if rc != 0 {
                return rc;
            }
        }
        push(addr, h.session);
        bump(&s.stats.per_id[p].acquisitions);
        if h.session == 0 {
            bump(&s.stats.per_id[p].shared);
        }
        return 0;
    }
    let shared = mode == Mode::Read && (s.gme || e.lock.is_none());
    let session = if shared { 0 } else { exclusive_session(p) };
    let start = match wait {
        Wait::Block => sample::draw(s, p),
        _ => None,
    };
    let (rc, contended) = match &e.lock {
        None => {
            // SAFETY (each arm): the program's arguments, passed on.
            let try_first = unsafe {
                match mode {
                    Mode::Read => (r.rwlock_tryrdlock)(l),
                    Mode::Write => (r.rwlock_trywrlock)(l),
                }
            };
            match (try_first, wait) {
                (0, _) => (0, false),
                (rc, Wait::Try) => (rc, true),
                // SAFETY (each arm): as above.
                (_, Wait::Block) => unsafe {
                    match mode {
                        Mode::Read => ((r.rwlock_rdlock)(l), true),
                        Mode::Write => ((r.rwlock_wrlock)(l), true),
                    }
                },
                (_, Wait::Until(d)) => unsafe {
                    match mode {
                        Mode::Read => ((r.rwlock_timedrdlock)(l, d), true),
                        Mode::Write => ((r.rwlock_timedwrlock)(l, d), true),
                    }
                },
            }
        }
        Some(lk) => match wait {
            Wait::Block => (0, e.enter(lk.as_ref(), p, session)),
            Wait::Try => {
                if e.try_enter(lk.as_ref(), p, session) {
                    (0, false)
                } else {
                    (libc::EBUSY, true)
                }
            }
            Wait::Until(d) => (
                crate::lock::poll_until(d, || e.try_enter(lk.as_ref(), p, session)),
                true,
            ),
        },
    };
    if rc != 0 {
        if matches!(wait, Wait::Try) {
            bump(&s.stats.per_id[p].trylock_failures);
        }
        return rc;
    }
    if !shared {
        e.mark_owner(&s.stats, p);
    } else {
        bump(&s.stats.per_id[p].shared);
    }
    push(addr, session);
    sample::acquired(s, p, addr, start, contended);
    0
}

pub fn unlock(l: R) -> c_int {
    let s = get();
    let (e, pass) = stand_in(s, l);
    let p = s.ids.current();
    let r = reals();
    if pass {
        bump(&s.stats.per_id[p].passthrough);
        // SAFETY: the program's argument, passed on.
        return unsafe { (r.rwlock_unlock)(l) };
    }
    let addr = l as usize;
    let Some(last) = pop(addr) else {
        return libc::EPERM;
    };
    if let Some(session) = last {
        sample::releasing(s, p, addr);
        if session == 0 {
            e.check_no_owner(&s.stats, p);
        } else {
            e.check_owner(&s.stats, p);
        }
        if let Some(lk) = &e.lock {
            e.exit(lk.as_ref(), p, session);
        }
    }
    match &e.lock {
        // SAFETY: the program's rwlock, held by this thread.
        None => unsafe { (r.rwlock_unlock)(l) },
        Some(_) => 0,
    }
}
