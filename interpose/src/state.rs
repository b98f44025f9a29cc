//! The process-wide state: the configuration, the chosen lock, the address table, the ids and
//! the counters. Made once — at load time by a constructor, or by the first pthread call if
//! that comes earlier — and never freed.

use std::sync::atomic::{AtomicPtr, AtomicU8, Ordering};

use lockbench::locks::{Params, Problem};
use lockbench::mem::WaitPolicy;
use lockbench::registry::LockEntry;

use crate::config::Config;
use crate::ids::Ids;
use crate::lock::Entry;
use crate::stats::{Report, Stats};
use crate::table::Table;

/// Everything this library keeps.
pub struct State {
    pub config: Config,
    /// The registry's entry, or `None` for `pthread`.
    pub entry: Option<LockEntry>,
    /// Its problem (a GME lock serves rwlocks with readers sharing a session).
    pub gme: bool,
    pub params: Params,
    pub table: Table<Entry>,
    pub ids: Ids,
    pub stats: Stats,
}

static STATE: AtomicPtr<State> = AtomicPtr::new(std::ptr::null_mut());
static INIT: AtomicU8 = AtomicU8::new(0);

/// The state, made on first use.
#[inline]
pub fn get() -> &'static State {
    let p = STATE.load(Ordering::Acquire);
    if p.is_null() {
        init()
    } else {
        // SAFETY: published once and never freed.
        unsafe { &*p }
    }
}

/// The state if it was made (for thread-exit destructors, which must not make it).
pub fn get_if_ready() -> Option<&'static State> {
    let p = STATE.load(Ordering::Acquire);
    // SAFETY: published once and never freed.
    (!p.is_null()).then(|| unsafe { &*p })
}

#[cold]
fn init() -> &'static State {
    if INIT
        .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        // Another thread is making it.
        loop {
            if let Some(s) = get_if_ready() {
                return s;
            }
            std::thread::yield_now();
        }
    }
    let config = Config::from_env().unwrap_or_else(|e| crate::fatal(&e));
    let entry = if config.lock == "pthread" {
        None
    } else {
        let entry =
            lockbench::registry::lookup(&config.lock).unwrap_or_else(|e| crate::fatal(&e.0));
        if entry.info.problem == Problem::KExclusion {
            crate::fatal(&format!(
                "LOCKBENCH_LOCK={} is a k-exclusion lock: it lets several threads in at once, \
                 so it cannot stand in for a mutex; choose a mutual-exclusion or GME lock",
                config.lock
            ));
        }
        Some(entry)
    };
    let gme = entry
        .as_ref()
        .is_some_and(|e| e.info.problem == Problem::Gme);
    let state = Box::new(State {
        params: Params::new(config.procs, 1, WaitPolicy::YIELD),
        table: Table::new(config.max_locks),
        ids: Ids::new(config.procs),
        stats: Stats::new(config.procs),
        entry,
        gme,
        config,
    });
    let p = Box::into_raw(state);
    STATE.store(p, Ordering::Release);
    // SAFETY: registering plain extern "C" functions with the C library.
    unsafe {
        libc::atexit(write_at_exit);
        libc::pthread_atfork(None, None, Some(after_fork_child));
    }
    // SAFETY: just published, never freed.
    unsafe { &*p }
}

/// Makes the state when the library is loaded, before the program's `main`.
extern "C" fn on_load() {
    get();
}

#[used]
#[link_section = ".init_array"]
static ON_LOAD: extern "C" fn() = on_load;

/// In a forked child only the forking thread runs on: the other threads' ids are free again
/// and the counters start afresh (the parent writes its own).
extern "C" fn after_fork_child() {
    if let Some(s) = get_if_ready() {
        s.ids.reset_after_fork();
        s.stats.reset();
        crate::lock::reset_counts();
    }
}

extern "C" fn write_at_exit() {
    if let Some(s) = get_if_ready() {
        s.write_stats();
    }
}

impl State {
    /// The stand-in of the pthread object at `addr` (made on first use, over a lock of its
    /// own built from the chosen entry).
    #[inline]
    pub fn stand_in(&'static self, addr: usize) -> &'static Entry {
        self.table
            .get_or_make(addr, || {
                Entry::new(self.entry.as_ref().map(|e| (e.native)(&self.params)))
            })
            .unwrap_or_else(|| {
                crate::fatal_gave_up(&format!(
                    "the program used more than LOCKBENCH_MAX_LOCKS={} mutexes and rwlocks: \
                     rerun with a larger LOCKBENCH_MAX_LOCKS",
                    self.config.max_locks
                ))
            })
    }

    /// Appends this process's line to the statistics file, if one was asked for and the
    /// process took any lock (every process that loads the library — a wrapper, a forked
    /// child — writes its own line; `app` adds them up).
    pub fn write_stats(&self) {
        let Some(path) = &self.config.stats else {
            return;
        };
        let mut r = Report {
            processes: 1,
            pid: std::process::id(),
            program: std::fs::read_to_string("/proc/self/comm")
                .map(|c| c.trim().to_string())
                .unwrap_or_default(),
            lock: self.config.lock.clone(),
            problem: match &self.entry {
                None => "mutex".into(),
                Some(e) => e.info.problem.name().into(),
            },
            procs: self.config.procs,
            ids_peak: self.ids.peak.load(Ordering::Relaxed),
            ids_leaked: self.ids.leaked.load(Ordering::Relaxed),
            ..Report::default()
        };
        self.stats.fill(&mut r);
        crate::lock::count_kinds(&mut r);
        if r.ids_peak == 0 && r.mutexes + r.rwlocks + r.passthrough_mutexes == 0 {
            return;
        }
        let line = serde_json::to_string(&r).unwrap_or_default() + "\n";
        // One write(2) of the whole line with O_APPEND: lines of processes ending together
        // do not interleave.
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
        if let Err(e) = written {
            eprintln!(
                "lockbench-interpose: cannot write LOCKBENCH_STATS={}: {e}",
                path.display().to_string().escape_debug()
            );
        }
    }
}
