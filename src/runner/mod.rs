//! Running locks: what a run is (`spec`), topology and pinning, launching a run (`exec`), the
//! passage loops, the checkers, the watchdog, the sampling maths.

mod checkers;
mod counted;
mod cpus;
pub mod exec;
pub mod fidelity;
pub mod host;
mod hot_loop;
pub(crate) mod parallel;
pub mod placement;
pub mod sampling;
mod shared;
pub mod spec;
pub mod topology;
mod watchdog;

#[cfg(test)]
mod many_threads_tests;
#[cfg(test)]
mod numa_rig_tests;
#[cfg(test)]
mod placement_tests;
#[cfg(test)]
mod stress_tests;
#[cfg(test)]
mod topology_tests;

use std::sync::Once;

use crate::mem::Aborted;

/// Installs (once) a panic hook that stays silent for the watchdog's [`Aborted`] unwinds and
/// defers to the previous hook for every other panic.
pub fn install_quiet_abort_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<Aborted>().is_none() {
                previous(info);
            }
        }));
    });
}

/// The signal (SIGINT, SIGTERM or SIGHUP) that asked the run to stop, 0 while none did.
static INTERRUPTED: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

extern "C" fn on_interrupt(sig: libc::c_int) {
    // Only async-signal-safe work here: an atomic swap, and `_exit` on the second signal.
    if INTERRUPTED.swap(sig, std::sync::atomic::Ordering::SeqCst) != 0 {
        // SAFETY: `_exit` is async-signal-safe and ends the process at once.
        unsafe { libc::_exit(128 + sig) };
    }
}

/// From now on the first SIGINT, SIGTERM or SIGHUP asks the run to stop (the watchdog ends the
/// current repetition, [`interrupted`] says which signal came); a second one exits at once
/// with 128 + its number.
pub fn catch_interrupts() {
    let handler = on_interrupt as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: installing a handler that only touches an atomic and calls `_exit`.
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
        // A closed terminal (SIGHUP) stops the run the same way: what finished is kept.
        libc::signal(libc::SIGHUP, handler);
    }
}

/// The signal that asked the run to stop, if one did.
pub fn interrupted() -> Option<i32> {
    match INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) {
        0 => None,
        sig => Some(sig),
    }
}

/// Test support: the ticket lock as the runner sees it, built from the lock below the runner
/// (the registry, above it, is not needed to run one).
#[cfg(test)]
pub(crate) fn ticket() -> spec::Subject {
    use crate::locks::baseline::ticket::{TicketLock, INFO};
    spec::Subject {
        info: INFO,
        bench: std::sync::Arc::new(|spec, kind| {
            exec::run_typed(spec, kind, |p| TicketLock::new(p.native(), p))
        }),
        counting: Some(std::sync::Arc::new(
            |p: &crate::locks::Params, m| -> Box<dyn crate::locks::Lock> {
                Box::new(TicketLock::new(m, p))
            },
        )),
    }
}
