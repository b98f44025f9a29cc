//! `noop`: admits everyone at once. Not a lock: it measures the harness's own cost per passage
//! (run it at one thread). Excluded from `all`; at more than one thread the oracle flags it.

use crate::locks::{Lock, LockInfo, Problem};

/// What the registry and `lockbench list` say of `noop`: its paper and figure, its claims.
pub const INFO: LockInfo = LockInfo {
    safe: false,
    ..LockInfo::baseline(
        "noop",
        Problem::Mutex,
        false,
        "calibration, not a lock: admits everyone; measures harness overhead at 1 thread",
    )
};

/// Admits everyone at once (see the module doc).
pub struct Noop;

impl Lock for Noop {
    #[inline]
    fn enter(&self, _p: usize, _session: usize) {}
    #[inline]
    fn exit(&self, _p: usize, _session: usize) {}
}
