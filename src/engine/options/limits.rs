//! The limits of every run option: sizes past which a run could not allocate or finish, from
//! this machine's memory and a few fixed bounds.

use std::time::Duration;

/// Bytes one shared line of `--cs-lines` takes (a padded cache line).
pub const LINE_BYTES: usize = std::mem::size_of::<crossbeam_utils::CachePadded<u64>>();
/// Bytes one trace record takes.
pub const TRACE_RECORD_BYTES: usize = std::mem::size_of::<crate::check::trace::TraceRecord>();
/// Most passages traced per thread, when memory allows.
pub const TRACE_CAPACITY: usize = 1 << 20;

/// The limits of every size and duration a user can type: one table, from what the machine
/// has where that is the real bound.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Most threads (and slots, and k): the harness's own bound, lowered by the machine's
    /// thread limits.
    pub threads: usize,
    /// Why that bound.
    pub threads_why: String,
    /// Memory a run may allocate for its sizes (half of what is available), bytes.
    pub memory_bytes: usize,
    /// Most sessions a mix may have.
    pub sessions: usize,
    /// Longest busy work in or between critical sections.
    pub cs: Duration,
    /// Longest duration per run and round (and stall timeout).
    pub duration: Duration,
    /// Longest warm-up.
    pub warmup: Duration,
    /// Most passages per thread.
    pub passages: u64,
    /// Most rounds.
    pub rounds: usize,
    /// Largest N of `--latency-sample`.
    pub latency_sample: u64,
}

/// The harness's own bound on processes: locks keep per-process arrays (Zehavi's k-exclusion
/// n² registers) and bakery doorways scan all n.
pub const MAX_PROCESSES: usize = 1024;

fn read_number(path: &str) -> Option<u64> {
    crate::opts::io::read_system(path)?.trim().parse().ok()
}

fn mem_available() -> Option<u64> {
    let text = crate::opts::io::read_system("/proc/meminfo")?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

impl Limits {
    /// The limits of this machine.
    pub fn detect() -> Limits {
        let mut threads = MAX_PROCESSES;
        let mut why = format!("the harness's bound of {MAX_PROCESSES} processes");
        let mut lower = |bound: u64, what: &str| {
            // Leave half of a system-wide or per-user bound to everything else.
            let b = (bound / 2).max(1) as usize;
            if b < threads {
                threads = b;
                why = format!("half of {what} {bound}");
            }
        };
        if let Some(n) = read_number("/proc/sys/kernel/threads-max") {
            lower(n, "the kernel's threads-max");
        }
        let mut rl = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes the struct it is given.
        if unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut rl) } == 0
            && rl.rlim_cur != libc::RLIM_INFINITY
        {
            lower(rl.rlim_cur, "RLIMIT_NPROC");
        }
        // A container's process limit (cgroup v2, then v1); `max` is none.
        for path in ["/sys/fs/cgroup/pids.max", "/sys/fs/cgroup/pids/pids.max"] {
            if let Some(n) = read_number(path) {
                lower(n, "the cgroup's pids.max");
                break;
            }
        }
        let memory = mem_available().unwrap_or(1 << 30) / 2;
        Limits {
            threads,
            threads_why: why,
            memory_bytes: usize::try_from(memory).unwrap_or(usize::MAX),
            sessions: u32::MAX as usize,
            cs: Duration::from_secs(10),
            duration: Duration::from_secs(24 * 3600),
            warmup: Duration::from_secs(3600),
            passages: 1 << 40,
            rounds: 1000,
            latency_sample: 1 << 32,
        }
    }

    /// Most shared lines in a critical section: they must fit in the memory budget.
    pub fn cs_lines(&self) -> usize {
        self.memory_bytes / LINE_BYTES
    }

    /// Passages traced per thread at `threads` threads: [`TRACE_CAPACITY`], or fewer so
    /// that the traces fit in the memory budget.
    pub fn trace_capacity(&self, threads: usize) -> usize {
        TRACE_CAPACITY.min(self.memory_bytes / (TRACE_RECORD_BYTES * threads.max(1)))
    }
}
