//! Every lock lockbench knows, one line each, above the runner: an entry joins a lock's
//! description (the [`LockInfo`] constant its algorithm file starts with, which also carries its
//! RMR bound and its mutants) to the ways the same code runs — built on native memory, timed
//! through the monomorphised passage loop, on the scheduled memory (`verify`) and on a counting
//! memory (`rmr`).
//!
//! The built-in locks are [`Registry::builtin`] (`builtin.rs`, one line a lock). A program
//! that brings locks of its own adds their entries to that registry and hands it to
//! [`crate::main_with`], which installs it: every command then resolves `--lock`
//! through it.

mod builtin;
mod entry;
mod lock_api;
pub(crate) mod plugin;
#[cfg(test)]
mod tests;

use std::sync::OnceLock;

use crate::error::UsageError;
use crate::locks::{Builder, CountingBuilder, LockInfo};
use crate::runner::spec::{Bench, Subject};

pub use entry::Algorithm;
pub use lock_api::{RawMutexLock, RawRwLockGme};

/// One registry entry: what a lock is (its [`LockInfo`]) and how to build and run it.
///
/// Make one with [`LockEntry::over_memory`] (a lock written over the register abstraction:
/// every command), [`LockEntry::native_only`] (any [`Lock`](crate::locks::Lock): every command
/// but `verify` and `rmr`), [`LockEntry::raw_mutex`] or [`LockEntry::raw_rwlock`] (a
/// `lock_api` lock in one line).
///
/// ```
/// use lockbench::registry::Registry;
/// let reg = Registry::builtin();
/// let mcs = reg.find("mcs").unwrap();
/// assert!(mcs.over_registers());
/// assert!(!reg.find("std-mutex").unwrap().over_registers());
/// ```
#[derive(Clone)]
pub struct LockEntry {
    /// What `list` says of it, its RMR bound and its mutants.
    pub info: LockInfo,
    /// Builds the lock on native memory behind a dynamic interface (tests and tools that do
    /// not time it).
    pub native: Builder,
    /// Runs it on native memory, monomorphised (every timed run goes through this): the
    /// passage loop instantiated for the lock's concrete type.
    pub(crate) bench: Bench,
    /// Builds the same algorithm on the scheduled memory (for `verify`); `None` for locks not
    /// written over the register abstraction.
    pub(crate) scheduled: Option<Builder>,
    /// Builds the same algorithm on a counting memory (for `rmr` and `run --rmr`); `None` for
    /// locks not written over the register abstraction.
    pub(crate) counting: Option<CountingBuilder>,
}

impl LockEntry {
    /// Whether the lock is written over the register abstraction ([`Memory`]), so that
    /// `verify` and `rmr` take it as well as every other command.
    ///
    /// [`Memory`]: crate::mem::Memory
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::registry::Registry;
    /// let reg = Registry::builtin();
    /// assert!(reg.find("ticket").unwrap().over_registers());
    /// assert!(!reg.find("std-mutex").unwrap().over_registers());
    /// ```
    pub fn over_registers(&self) -> bool {
        self.scheduled.is_some() && self.counting.is_some()
    }

    /// What the runner needs of this lock: its description, its bench, its counting build.
    pub(crate) fn subject(&self) -> Subject {
        Subject {
            info: self.info.clone(),
            bench: self.bench.clone(),
            counting: self.counting.clone(),
        }
    }
}

/// A set of locks by name: the built-in ones and any a program adds.
///
/// ```
/// use lockbench::locks::{LockInfo, Problem};
/// use lockbench::registry::{LockEntry, Registry};
/// const MINE: LockInfo = LockInfo::baseline("my-mutex", Problem::Mutex, false, "parking_lot's");
/// let reg = Registry::builtin().with(LockEntry::raw_mutex::<parking_lot::RawMutex>(MINE));
/// assert!(reg.find("my-mutex").is_some());
/// assert!(Registry::builtin().with(LockEntry::raw_mutex::<parking_lot::RawMutex>(MINE))
///     .add(LockEntry::raw_mutex::<parking_lot::RawMutex>(MINE))
///     .is_err());
/// ```
#[derive(Clone, Default)]
pub struct Registry {
    entries: Vec<LockEntry>,
}

impl Registry {
    /// Every lock lockbench knows, in listing order: the baselines, the reference locks, then
    /// the paper algorithms (mutual exclusion, GME, k-exclusion).
    ///
    /// # Examples
    ///
    /// ```
    /// let reg = lockbench::registry::Registry::builtin();
    /// assert!(reg.find("mcs").is_some() && reg.find("clh").is_some());
    /// ```
    pub fn builtin() -> Registry {
        Registry {
            entries: builtin::entries(),
        }
    }

    /// Adds `entry` after the others, or says why its name cannot be used: empty, `all`, with
    /// a comma or a space (lock lists are comma-separated), or already taken.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::locks::{LockInfo, Problem};
    /// use lockbench::registry::{LockEntry, Registry};
    /// let mut reg = Registry::builtin();
    /// const TAKEN: LockInfo = LockInfo::baseline("mcs", Problem::Mutex, false, "");
    /// let err = reg.add(LockEntry::raw_mutex::<parking_lot::RawMutex>(TAKEN)).err().unwrap();
    /// assert!(err.to_string().contains("already taken"));
    /// const FRESH: LockInfo = LockInfo::baseline("pl-mutex", Problem::Mutex, false, "");
    /// assert!(reg.add(LockEntry::raw_mutex::<parking_lot::RawMutex>(FRESH)).is_ok());
    /// ```
    pub fn add(&mut self, entry: LockEntry) -> Result<&mut Registry, UsageError> {
        let name = entry.info.name;
        if name.is_empty() || name == "all" || name.contains([',', ' ']) {
            return Err(UsageError(format!(
                "lock name {name:?}: give a non-empty name other than `all`, without commas or spaces"
            )));
        }
        if self.find(name).is_some() {
            return Err(UsageError(format!(
                "lock name {name:?} is already taken: `lockbench list` shows the names in use"
            )));
        }
        self.entries.push(entry);
        Ok(self)
    }

    /// As [`Registry::add`], by value, for chaining.
    ///
    /// # Panics
    ///
    /// When `add` refuses the entry (its name is taken or unusable), with `add`'s message.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::locks::{LockInfo, Problem};
    /// use lockbench::registry::{LockEntry, Registry};
    /// const A: LockInfo = LockInfo::baseline("pl-a", Problem::Mutex, false, "");
    /// const B: LockInfo = LockInfo::baseline("pl-b", Problem::Mutex, false, "");
    /// let reg = Registry::default()
    ///     .with(LockEntry::raw_mutex::<parking_lot::RawMutex>(A))
    ///     .with(LockEntry::raw_mutex::<parking_lot::RawFairMutex>(B));
    /// assert_eq!(reg.entries().len(), 2);
    /// ```
    pub fn with(mut self, entry: LockEntry) -> Registry {
        if let Err(e) = self.add(entry) {
            panic!("{e}");
        }
        self
    }

    /// The entries, in listing order.
    ///
    /// # Examples
    ///
    /// ```
    /// let reg = lockbench::registry::Registry::builtin();
    /// let safe = reg.entries().iter().filter(|e| e.info.safe).count();
    /// assert!(safe > 0 && safe < reg.entries().len()); // negative controls are listed too
    /// ```
    pub fn entries(&self) -> &[LockEntry] {
        &self.entries
    }

    /// The entry named `name`.
    ///
    /// # Examples
    ///
    /// ```
    /// let reg = lockbench::registry::Registry::builtin();
    /// assert_eq!(reg.find("tas").unwrap().info.name, "tas");
    /// assert!(reg.find("plugin:./libmine.so").is_none()); // plug-ins: `lookup`
    /// ```
    pub fn find(&self, name: &str) -> Option<&LockEntry> {
        self.entries.iter().find(|e| e.info.name == name)
    }
}

static INSTALLED: OnceLock<Registry> = OnceLock::new();

/// Makes `registry` the one every command resolves lock names through, for the rest of the
/// process; an error if one was installed (or used) already.
pub(crate) fn install(registry: Registry) -> Result<(), UsageError> {
    INSTALLED
        .set(registry)
        .map_err(|_| UsageError("a lock registry is already installed in this process".into()))
}

/// The installed registry ([`Registry::builtin`] unless a program installed its own).
pub(crate) fn installed() -> &'static Registry {
    INSTALLED.get_or_init(Registry::builtin)
}

/// Every lock of the installed registry, in listing order.
pub(crate) fn registry() -> Vec<LockEntry> {
    installed().entries().to_vec()
}

/// Looks up a lock by name in the installed registry.
pub(crate) fn find(name: &str) -> Option<LockEntry> {
    installed().find(name).cloned()
}

/// Looks a lock up by the name `--lock` takes, in the registry the command line runs with
/// ([`Registry::builtin`] unless [`crate::main_with`] was given another): a built-in name, or
/// `plugin:PATH` for a C plug-in. An unknown name or a bad plug-in is a [`UsageError`] that
/// says what to do.
///
/// ```
/// let ticket = lockbench::registry::lookup("ticket").unwrap();
/// assert_eq!(ticket.info.name, "ticket");
/// let Err(err) = lockbench::registry::lookup("no-such-lock") else { unreachable!() };
/// assert!(err.to_string().contains("lockbench list"));
/// ```
pub fn lookup(name: &str) -> Result<LockEntry, UsageError> {
    if let Some(path) = name.strip_prefix(plugin::PREFIX) {
        return plugin::entry(path);
    }
    find(name).ok_or_else(|| {
        let hint = nearest(name, installed().entries().iter().map(|e| e.info.name))
            .map(|n| format!(" (did you mean `{n}`?)"))
            .unwrap_or_default();
        UsageError(format!(
            "unknown lock {name:?}{hint}: `lockbench list` shows the names"
        ))
    })
}

/// The name closest to `name` by edit distance, if within a third of its length (at least 1).
fn nearest<'a>(name: &str, names: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let distance = |a: &str, b: &str| {
        let b: Vec<char> = b.chars().collect();
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut diagonal = row[0];
            row[0] = i + 1;
            for (j, cb) in b.iter().enumerate() {
                let next = (row[j + 1] + 1)
                    .min(row[j] + 1)
                    .min(diagonal + usize::from(ca != *cb));
                diagonal = row[j + 1];
                row[j + 1] = next;
            }
        }
        row[b.len()]
    };
    let limit = (name.chars().count() / 3).max(1);
    names
        .map(|n| (distance(&name.to_lowercase(), n), n))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}
