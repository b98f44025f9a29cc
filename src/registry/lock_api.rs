//! Any `lock_api` lock as an entry, in one line: a [`lock_api::RawMutex`] as a mutex
//! ([`LockEntry::raw_mutex`]), a [`lock_api::RawRwLock`] as a GME lock of two kinds of session
//! ([`LockEntry::raw_rwlock`]: session 0 shared, every other exclusive).

use super::LockEntry;
use crate::locks::{Lock, LockInfo, Params};

/// A [`lock_api::RawMutex`] as a [`Lock`]: every process enters with `lock`, leaves with
/// `unlock`; sessions are ignored.
///
/// # Examples
///
/// ```
/// use lockbench::locks::{Lock, Params};
/// use lockbench::registry::RawMutexLock;
/// let m = RawMutexLock::<parking_lot::RawMutex>::new(&Params::new(2, 1, Default::default()));
/// m.enter(0, 7); // the session is ignored
/// m.exit(0, 7);
/// ```
pub struct RawMutexLock<R>(R);

impl<R: lock_api::RawMutex> RawMutexLock<R> {
    /// A new unlocked mutex (`R::INIT`).
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::locks::Params;
    /// use lockbench::registry::RawMutexLock;
    /// let _m = RawMutexLock::<parking_lot::RawFairMutex>::new(&Params::new(4, 1, Default::default()));
    /// ```
    pub fn new(_params: &Params) -> Self {
        RawMutexLock(R::INIT)
    }
}

impl<R: lock_api::RawMutex + Send + Sync> Lock for RawMutexLock<R> {
    #[inline]
    fn enter(&self, _p: usize, _session: usize) {
        self.0.lock();
    }

    #[inline]
    fn exit(&self, _p: usize, _session: usize) {
        // SAFETY: the caller entered before exiting (the `Lock` contract), so it holds the lock.
        unsafe { self.0.unlock() }
    }
}

/// A [`lock_api::RawRwLock`] as a GME lock: session 0 is the shared ("reader") session,
/// entered with `lock_shared`; every other session is exclusive (`lock_exclusive`), so two
/// requests of the same non-zero session never share. Under `--mix rw:P` session 0 is exactly
/// the readers' session.
///
/// # Examples
///
/// ```
/// use lockbench::locks::{Lock, Params};
/// use lockbench::registry::RawRwLockGme;
/// let rw = RawRwLockGme::<parking_lot::RawRwLock>::new(&Params::new(2, 1, Default::default()));
/// rw.enter(0, 1); // a writer: session 1 is exclusive
/// rw.exit(0, 1);
/// ```
pub struct RawRwLockGme<R>(R);

impl<R: lock_api::RawRwLock> RawRwLockGme<R> {
    /// A new unlocked rwlock (`R::INIT`).
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::locks::Params;
    /// use lockbench::registry::RawRwLockGme;
    /// let _rw = RawRwLockGme::<parking_lot::RawRwLock>::new(&Params::new(4, 1, Default::default()));
    /// ```
    pub fn new(_params: &Params) -> Self {
        RawRwLockGme(R::INIT)
    }
}

impl<R: lock_api::RawRwLock + Send + Sync> Lock for RawRwLockGme<R> {
    #[inline]
    fn enter(&self, _p: usize, session: usize) {
        if session == 0 {
            self.0.lock_shared()
        } else {
            self.0.lock_exclusive()
        }
    }

    #[inline]
    fn exit(&self, _p: usize, session: usize) {
        // SAFETY: the caller entered with the same session (the `Lock` contract), so it holds
        // the lock in that mode.
        unsafe {
            if session == 0 {
                self.0.unlock_shared()
            } else {
                self.0.unlock_exclusive()
            }
        }
    }
}

impl LockEntry {
    /// Any `lock_api::RawMutex` as a mutual-exclusion entry (its problem should be
    /// [`Problem::Mutex`](crate::locks::Problem)).
    ///
    /// ```
    /// use lockbench::locks::{LockInfo, Problem};
    /// use lockbench::registry::LockEntry;
    /// const FAIR: LockInfo = LockInfo::baseline("fair-mutex", Problem::Mutex, false, "parking_lot::RawFairMutex");
    /// let e = LockEntry::raw_mutex::<parking_lot::RawFairMutex>(FAIR);
    /// let m = (e.native)(&lockbench::locks::Params::new(2, 1, Default::default()));
    /// m.enter(0, 0);
    /// m.exit(0, 0);
    /// ```
    pub fn raw_mutex<R: lock_api::RawMutex + Send + Sync + 'static>(info: LockInfo) -> LockEntry {
        LockEntry::native_only(info, RawMutexLock::<R>::new)
    }

    /// Any `lock_api::RawRwLock` as a GME entry of two kinds of session: session 0 shared,
    /// every other exclusive (its problem should be [`Problem::Gme`](crate::locks::Problem)).
    ///
    /// ```
    /// use lockbench::locks::{LockInfo, Problem};
    /// use lockbench::registry::LockEntry;
    /// const RW: LockInfo = LockInfo::baseline("my-rwlock", Problem::Gme, false, "readers share session 0");
    /// let e = LockEntry::raw_rwlock::<parking_lot::RawRwLock>(RW);
    /// let l = (e.native)(&lockbench::locks::Params::new(2, 1, Default::default()));
    /// l.enter(0, 0);
    /// l.enter(1, 0); // two readers together
    /// l.exit(1, 0);
    /// l.exit(0, 0);
    /// ```
    pub fn raw_rwlock<R: lock_api::RawRwLock + Send + Sync + 'static>(info: LockInfo) -> LockEntry {
        LockEntry::native_only(info, RawRwLockGme::<R>::new)
    }
}
