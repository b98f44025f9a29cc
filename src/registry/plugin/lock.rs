//! [`PluginLock`]: a lock a C plug-in built, behind the [`Lock`] trait. One concrete type for
//! every plug-in, so the passage loop is monomorphised for it as for a built-in lock; its enter
//! and exit are one indirect call each into the plug-in.

use std::ffi::{c_char, c_void, CStr};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::abi;
use super::Plugin;
use crate::locks::{Lock, Params};
use crate::mem::{Aborted, WaitPolicy};

/// A lock built by a plug-in's `init`, freed by its `destroy` when dropped.
pub struct PluginLock {
    handle: *mut c_void,
    enter: abi::EnterFn,
    exit: abi::ExitFn,
    destroy: abi::DestroyFn,
    /// Keeps the flag whose address the plug-in was given alive as long as the lock.
    _abort: Arc<AtomicBool>,
    /// Keeps the plug-in's description (and its loaded object, never unloaded) with the lock.
    _plugin: Arc<Plugin>,
}

// SAFETY: the ABI requires enter and exit to be callable from n threads at once on one lock
// (include/lockbench.h, "Threads"); the handle is only passed back to the plug-in.
unsafe impl Send for PluginLock {}
// SAFETY: as above.
unsafe impl Sync for PluginLock {}

impl PluginLock {
    /// Calls the plug-in's `init` for `params` (its processes, k, wait policy and abort flag);
    /// `Err` carries the reason the plug-in wrote.
    pub fn new(plugin: Arc<Plugin>, params: &Params) -> Result<PluginLock, String> {
        let c = abi::Params {
            size: std::mem::size_of::<abi::Params>() as u32,
            spins: match params.policy {
                WaitPolicy::Spin => 0,
                WaitPolicy::SpinThenYield { spins } => spins.max(1),
            },
            n: params.n,
            k: params.k,
            abort: params.abort.as_ptr().cast_const().cast::<u8>(),
        };
        let mut handle: *mut c_void = std::ptr::null_mut();
        let mut error = [0 as c_char; 256];
        // SAFETY: `init` comes from a validated descriptor; every pointer is valid for the
        // call, and `error` holds `error.len()` bytes.
        let rc = unsafe { (plugin.init)(&c, &mut handle, error.as_mut_ptr(), error.len()) };
        if rc != 0 {
            *error.last_mut().expect("not empty") = 0;
            // SAFETY: the buffer is NUL-terminated (its last byte was just set to 0).
            let why = unsafe { CStr::from_ptr(error.as_ptr()) }.to_string_lossy();
            let why = why.lines().next().unwrap_or("").trim();
            return Err(if why.is_empty() {
                format!("init returned {rc} without a reason")
            } else {
                format!("init returned {rc}: {why}")
            });
        }
        Ok(PluginLock {
            handle,
            enter: plugin.enter,
            exit: plugin.exit,
            destroy: plugin.destroy,
            _abort: params.abort.clone(),
            _plugin: plugin,
        })
    }
}

/// A plug-in's enter gave up because the run was aborted: unwind as the register
/// abstraction's waits do, for the runner to catch.
#[cold]
#[inline(never)]
fn gave_up() -> ! {
    std::panic::panic_any(Aborted)
}

impl Lock for PluginLock {
    #[inline]
    fn enter(&self, p: usize, session: usize) {
        // SAFETY: the handle is the one `init` returned and not yet destroyed; the caller
        // keeps the Lock contract (p in 0..n, one thread per p), which is the ABI's.
        if unsafe { (self.enter)(self.handle, p, session) } != 0 {
            gave_up();
        }
    }

    #[inline]
    fn exit(&self, p: usize, session: usize) {
        // SAFETY: as in `enter`; exit follows this thread's enter with the same p and session.
        unsafe { (self.exit)(self.handle, p, session) }
    }
}

impl Drop for PluginLock {
    fn drop(&mut self) {
        // SAFETY: the handle came from `init` and is destroyed once, after every thread that
        // used it has returned (the lock is dropped with its last reference).
        unsafe { (self.destroy)(self.handle) }
    }
}
