//! The real pthread functions, found once with `dlsym(RTLD_NEXT, …)`: the next definition after
//! this library in the lookup order, i.e. the C library's.
//!
//! glibc's `dlsym` takes only its own internal locks and may allocate; it never calls the
//! public `pthread_mutex_*`, so resolving cannot recurse into this library. Two threads
//! resolving at once each build a table; the first published wins and the other is leaked
//! (a few hundred bytes, once).

use std::ffi::{c_int, c_void, CStr};
use std::sync::atomic::{AtomicPtr, Ordering};

use libc::{
    pthread_cond_t, pthread_mutex_t, pthread_mutexattr_t, pthread_rwlock_t, pthread_rwlockattr_t,
    timespec,
};

type M = *mut pthread_mutex_t;
type R = *mut pthread_rwlock_t;
type Ts = *const timespec;

/// The C library's pthread functions this library stands in front of.
pub struct Reals {
    pub mutex_init: unsafe extern "C" fn(M, *const pthread_mutexattr_t) -> c_int,
    pub mutex_destroy: unsafe extern "C" fn(M) -> c_int,
    pub mutex_lock: unsafe extern "C" fn(M) -> c_int,
    pub mutex_trylock: unsafe extern "C" fn(M) -> c_int,
    pub mutex_timedlock: unsafe extern "C" fn(M, Ts) -> c_int,
    pub mutex_unlock: unsafe extern "C" fn(M) -> c_int,
    pub rwlock_init: unsafe extern "C" fn(R, *const pthread_rwlockattr_t) -> c_int,
    pub rwlock_destroy: unsafe extern "C" fn(R) -> c_int,
    pub rwlock_rdlock: unsafe extern "C" fn(R) -> c_int,
    pub rwlock_tryrdlock: unsafe extern "C" fn(R) -> c_int,
    pub rwlock_timedrdlock: unsafe extern "C" fn(R, Ts) -> c_int,
    pub rwlock_wrlock: unsafe extern "C" fn(R) -> c_int,
    pub rwlock_trywrlock: unsafe extern "C" fn(R) -> c_int,
    pub rwlock_timedwrlock: unsafe extern "C" fn(R, Ts) -> c_int,
    pub rwlock_unlock: unsafe extern "C" fn(R) -> c_int,
    pub cond_wait: unsafe extern "C" fn(*mut pthread_cond_t, M) -> c_int,
    pub cond_timedwait: unsafe extern "C" fn(*mut pthread_cond_t, M, Ts) -> c_int,
}

static REALS: AtomicPtr<Reals> = AtomicPtr::new(std::ptr::null_mut());

/// The real functions (resolved on first use).
#[inline]
pub fn reals() -> &'static Reals {
    let p = REALS.load(Ordering::Acquire);
    if p.is_null() {
        resolve()
    } else {
        // SAFETY: a published table is leaked, so it lives for the rest of the process.
        unsafe { &*p }
    }
}

#[cold]
fn resolve() -> &'static Reals {
    /// One symbol, or a one-line complaint and exit: without the C library's function there
    /// is nothing to stand in front of.
    fn sym<T>(name: &CStr) -> T {
        // SAFETY: dlsym with RTLD_NEXT and a NUL-terminated name.
        let p = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) };
        if p.is_null() {
            crate::fatal(&format!(
                "the C library has no {}: this library works with glibc's pthreads only",
                name.to_string_lossy()
            ));
        }
        assert_eq!(std::mem::size_of::<T>(), std::mem::size_of::<*mut c_void>());
        // SAFETY: T is the function pointer type of the named symbol (same size as a pointer,
        // checked above); the signatures are those of <pthread.h>.
        unsafe { std::mem::transmute_copy::<*mut c_void, T>(&p) }
    }
    let table = Box::new(Reals {
        mutex_init: sym(c"pthread_mutex_init"),
        mutex_destroy: sym(c"pthread_mutex_destroy"),
        mutex_lock: sym(c"pthread_mutex_lock"),
        mutex_trylock: sym(c"pthread_mutex_trylock"),
        mutex_timedlock: sym(c"pthread_mutex_timedlock"),
        mutex_unlock: sym(c"pthread_mutex_unlock"),
        rwlock_init: sym(c"pthread_rwlock_init"),
        rwlock_destroy: sym(c"pthread_rwlock_destroy"),
        rwlock_rdlock: sym(c"pthread_rwlock_rdlock"),
        rwlock_tryrdlock: sym(c"pthread_rwlock_tryrdlock"),
        rwlock_timedrdlock: sym(c"pthread_rwlock_timedrdlock"),
        rwlock_wrlock: sym(c"pthread_rwlock_wrlock"),
        rwlock_trywrlock: sym(c"pthread_rwlock_trywrlock"),
        rwlock_timedwrlock: sym(c"pthread_rwlock_timedwrlock"),
        rwlock_unlock: sym(c"pthread_rwlock_unlock"),
        cond_wait: sym(c"pthread_cond_wait"),
        cond_timedwait: sym(c"pthread_cond_timedwait"),
    });
    let fresh = Box::into_raw(table);
    match REALS.compare_exchange(
        std::ptr::null_mut(),
        fresh,
        Ordering::AcqRel,
        Ordering::Acquire,
    ) {
        // SAFETY: just published and never freed.
        Ok(_) => unsafe { &*fresh },
        // SAFETY: another thread's table, published and never freed; ours is leaked.
        Err(other) => unsafe { &*other },
    }
}
