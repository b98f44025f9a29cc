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

pub mod check;
pub mod cli;
pub mod cmd;
pub mod engine;
pub mod error;
pub mod hw;
pub mod locks;
pub mod mem;
pub mod metrics;
pub mod mp;
pub mod opts;
pub mod registry;
pub mod report;
pub mod rmr;
pub mod runner;
mod start;
pub mod table;
pub mod verify;
pub mod workload;

pub use start::main_with;
