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
//!
//! # Examples
//!
//! A `lock_api` mutex added to the built-in locks, in the registry the command line would run
//! with (a program's `main` hands it to [`main_with`]):
//!
//! ```
//! use lockbench::locks::{LockInfo, Problem};
//! use lockbench::registry::{LockEntry, Registry};
//!
//! const PL: LockInfo = LockInfo::baseline("pl-mutex", Problem::Mutex, false, "parking_lot's");
//! let registry = Registry::builtin().with(LockEntry::raw_mutex::<parking_lot::RawMutex>(PL));
//! assert_eq!(registry.entries().len(), Registry::builtin().entries().len() + 1);
//! ```

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
