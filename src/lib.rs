//! lockbench: measures lock algorithms against their theory.
//!
//! As a library it lets a program bring its own locks to the whole command line without a fork:
//! build a [`registry::Registry`] from [`registry::Registry::builtin`] plus entries of your own
//! ([`registry::LockEntry::over_memory`] for a lock written over the register abstraction
//! [`mem::Memory`], which then gets `verify` and `rmr` too; [`registry::LockEntry::native_only`]
//! for any [`locks::Lock`]; [`registry::LockEntry::raw_mutex`] and
//! [`registry::LockEntry::raw_rwlock`] for any `lock_api` lock) and hand it to [`main_with`].
//! A lock's description, claims, RMR bound and mutants are its [`locks::LockInfo`]. See
//! `docs/your-lock.md` and the `examples/` directory.

// The public surface: the lock trait and its description, the register abstraction, the
// registry and its entries, the usage error, and `main_with`.
pub mod error;
pub mod locks;
pub mod mem;
pub mod registry;
mod start;

// The rest is the harness itself: reachable for the crate's own integration tests and tools,
// not part of the documented interface, and free to change.
pub(crate) mod check;
pub(crate) mod cli;
pub(crate) mod cmd;
pub(crate) mod engine;
pub(crate) mod hw;
pub(crate) mod metrics;
pub(crate) mod mp;
pub(crate) mod opts;
pub(crate) mod report;
pub(crate) mod rmr;
pub(crate) mod runner;
pub(crate) mod table;
pub(crate) mod verify;
pub(crate) mod workload;

pub use start::main_with;
