//! `liblockbench_interpose.so`: under `LD_PRELOAD`, a dynamically linked program's pthread
//! mutexes and rwlocks run on a lock of lockbench's registry (LiTL's approach: Guiroux et al.,
//! USENIX ATC'16), chosen by `LOCKBENCH_LOCK` (see `config`); `pthread` runs the C library's
//! own through the same bookkeeping, so the interposer's cost is measured too.
//!
//! Each exported function looks the object up in the address table (`table`), takes the
//! calling thread's process id (`ids`) and acts: `mutex` (mutexes and condition variables)
//! and `rw` (rwlocks), on stand-ins (`lock`: the chosen lock, the try-gate, the oracle).
//! What it saw is written at exit (`stats`). The manual: docs/apps.md.
//!
//! Nothing here panics on the program's behalf: a setting it cannot honour is one line on
//! stderr and exit 2, a limit it reaches (ids, table) one line and exit [`EXIT_GAVE_UP`].

use std::ffi::c_int;

use libc::{
    pthread_cond_t, pthread_mutex_t, pthread_mutexattr_t, pthread_rwlock_t, pthread_rwlockattr_t,
    timespec,
};

mod config;
mod ids;
mod lock;
mod mutex;
mod real;
mod rw;
mod sample;
mod state;
mod stats;
mod table;

use rw::{Mode, Wait};

/// The exit status when the interposer meets a limit it cannot work past (more threads than
/// ids, more objects than the table holds): waiting could deadlock, so it stops the process.
pub const EXIT_GAVE_UP: c_int = 87;

/// Set by the first thread that stops the process: the others that reach a stop too wait for
/// it, so the message is one line.
static STOPPING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Lets only the first caller through; any later one waits for the process to end.
fn first_to_stop() {
    if STOPPING.swap(true, std::sync::atomic::Ordering::SeqCst) {
        loop {
            std::thread::sleep(std::time::Duration::from_secs(1));
        }
    }
}

/// One line on stderr and exit 2: the environment asked for something impossible.
pub fn fatal(msg: &str) -> ! {
    first_to_stop();
    eprintln!("lockbench-interpose: {msg}");
    // SAFETY: ends the process without running the program's exit handlers, which may wait
    // on locks this thread is in the middle of taking.
    unsafe { libc::_exit(2) }
}

/// One line on stderr, the statistics written, exit [`EXIT_GAVE_UP`].
pub fn fatal_gave_up(msg: &str) -> ! {
    first_to_stop();
    eprintln!("lockbench-interpose: {msg}");
    if let Some(s) = state::get_if_ready() {
        s.write_stats();
    }
    // SAFETY: as in `fatal`.
    unsafe { libc::_exit(EXIT_GAVE_UP) }
}

/// # Safety
/// pthread's contract for this function.
#[no_mangle]
pub unsafe extern "C" fn pthread_mutex_init(
    m: *mut pthread_mutex_t,
    attr: *const pthread_mutexattr_t,
) -> c_int {
    mutex::init(m, attr)
}

/// # Safety
/// pthread's contract for this function.
#[no_mangle]
pub unsafe extern "C" fn pthread_mutex_destroy(m: *mut pthread_mutex_t) -> c_int {
    mutex::destroy(m)
}

/// # Safety
/// pthread's contract for this function.
#[no_mangle]
pub unsafe extern "C" fn pthread_mutex_lock(m: *mut pthread_mutex_t) -> c_int {
    mutex::lock(m)
}

/// # Safety
/// pthread's contract for this function.
#[no_mangle]
pub unsafe extern "C" fn pthread_mutex_trylock(m: *mut pthread_mutex_t) -> c_int {
    mutex::trylock(m)
}

/// # Safety
/// pthread's contract for this function.
#[no_mangle]
pub unsafe extern "C" fn pthread_mutex_timedlock(
    m: *mut pthread_mutex_t,
    deadline: *const timespec,
) -> c_int {
    mutex::timedlock(m, deadline)
}

/// # Safety
/// pthread's contract for this function.
#[no_mangle]
pub unsafe extern "C" fn pthread_mutex_unlock(m: *mut pthread_mutex_t) -> c_int {
    mutex::unlock(m)
}

/// # Safety
/// pthread's contract for this function.
#[no_mangle]
pub unsafe extern "C" fn pthread_cond_wait(
    c: *mut pthread_cond_t,
    m: *mut pthread_mutex_t,
) -> c_int {
    mutex::cond_wait(c, m, None)
}

/// # Safety
/// pthread's contract for this function.
#[no_mangle]
pub unsafe extern "C" fn pthread_cond_timedwait(
    c: *mut pthread_cond_t,
    m: *mut pthread_mutex_t,
    deadline: *const timespec,
) -> c_int {
    mutex::cond_wait(c, m, Some(deadline))
}

/// # Safety
/// pthread's contract for this function.
#[no_mangle]
pub unsafe extern "C" fn pthread_rwlock_init(
    l: *mut pthread_rwlock_t,
    attr: *const pthread_rwlockattr_t,
) -> c_int {
    rw::init(l, attr)
}

/// # Safety
/// pthread's contract for this function.
#[no_mangle]
pub unsafe extern "C" fn pthread_rwlock_destroy(l: *mut pthread_rwlock_t) -> c_int {
    rw::destroy(l)
}

/// # Safety
/// pthread's contract for this function.
#[no_mangle]
pub unsafe extern "C" fn pthread_rwlock_rdlock(l: *mut pthread_rwlock_t) -> c_int {
    rw::acquire(l, Mode::Read, Wait::Block)
}

/// # Safety
/// pthread's contract for this function.
#[no_mangle]
pub unsafe extern "C" fn pthread_rwlock_tryrdlock(l: *mut pthread_rwlock_t) -> c_int {
    rw::acquire(l, Mode::Read, Wait::Try)
}

/// # Safety
/// pthread's contract for this function.
#[no_mangle]
pub unsafe extern "C" fn pthread_rwlock_timedrdlock(
    l: *mut pthread_rwlock_t,
    deadline: *const timespec,
) -> c_int {
    rw::acquire(l, Mode::Read, Wait::Until(deadline))
}

/// # Safety
/// pthread's contract for this function.
#[no_mangle]
pub unsafe extern "C" fn pthread_rwlock_wrlock(l: *mut pthread_rwlock_t) -> c_int {
    rw::acquire(l, Mode::Write, Wait::Block)
}

/// # Safety
/// pthread's contract for this function.
#[no_mangle]
pub unsafe extern "C" fn pthread_rwlock_trywrlock(l: *mut pthread_rwlock_t) -> c_int {
    rw::acquire(l, Mode::Write, Wait::Try)
}

/// # Safety
/// pthread's contract for this function.
#[no_mangle]
pub unsafe extern "C" fn pthread_rwlock_timedwrlock(
    l: *mut pthread_rwlock_t,
    deadline: *const timespec,
) -> c_int {
    rw::acquire(l, Mode::Write, Wait::Until(deadline))
}

/// # Safety
/// pthread's contract for this function.
#[no_mangle]
pub unsafe extern "C" fn pthread_rwlock_unlock(l: *mut pthread_rwlock_t) -> c_int {
    rw::unlock(l)
}
