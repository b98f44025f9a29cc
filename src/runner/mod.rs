//! Running locks: topology and pinning, the passage loop, the watchdog.

pub mod exec;
pub mod fidelity;
pub mod host;
pub mod topology;

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
