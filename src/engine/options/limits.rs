//! The limits of every run option: sizes past which a run could not allocate or finish, from
//! this machine's memory and a few fixed bounds.

use std::path::{Path, PathBuf};
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

/// The address-space limit of this process (`RLIMIT_AS`), when set.
fn rlimit_as() -> Option<u64> {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut rl) } == 0;
    (ok && rl.rlim_cur != libc::RLIM_INFINITY).then_some(rl.rlim_cur)
}

/// The memory limit of this process's cgroup (v2 `memory.max`, v1 `memory.limit_in_bytes`),
/// less what the cgroup already uses, when set. `max` (v2) and v1's huge "no limit" value are
/// none.
fn cgroup_memory() -> Option<u64> {
    let own = crate::opts::io::read_system("/proc/self/cgroup").unwrap_or_default();
    cgroup_memory_in(Path::new("/sys/fs/cgroup"), &own)
}

/// [`cgroup_memory`] under the cgroup file system mounted at `root`, for the process whose
/// `/proc/self/cgroup` reads `own`.
fn cgroup_memory_in(root: &Path, own: &str) -> Option<u64> {
    let read =
        |p: PathBuf| -> Option<u64> { crate::opts::io::read_system(&p)?.trim().parse().ok() };
    let mut candidates: Vec<(PathBuf, &str, &str)> = Vec::new();
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, ctrl, path) = (parts.next(), parts.next()?, parts.next()?);
        let rel = path.trim_start_matches('/');
        if ctrl.is_empty() {
            candidates.push((root.join(rel), "memory.max", "memory.current"));
        } else if ctrl.split(',').any(|c| c == "memory") {
            candidates.push((
                root.join("memory").join(rel),
                "memory.limit_in_bytes",
                "memory.usage_in_bytes",
            ));
        }
    }
    // The mount's own root (inside a container the cgroup path is often not visible).
    candidates.push((root.to_path_buf(), "memory.max", "memory.current"));
    candidates.push((
        root.join("memory"),
        "memory.limit_in_bytes",
        "memory.usage_in_bytes",
    ));
    let mut least: Option<u64> = None;
    for (dir, limit, usage) in candidates {
        // Every level up to the mount bounds the process: take the least.
        let mut d = dir.as_path();
        loop {
            if let Some(max) = read(d.join(limit)).filter(|&m| m < 1 << 60) {
                let free = max.saturating_sub(read(d.join(usage)).unwrap_or(0));
                least = Some(least.map_or(free, |l| l.min(free)));
            }
            if d == root || !d.starts_with(root) {
                break;
            }
            match d.parent() {
                Some(p) => d = p,
                None => break,
            }
        }
    }
    least
}

/// Bytes this process can still allocate: the least of `MemAvailable`, `RLIMIT_AS` (less the
/// address space already mapped) and the cgroup's limit (less its usage); 1 GiB when none
/// can be read.
pub fn memory_available() -> u64 {
    let mapped = crate::opts::io::read_system("/proc/self/statm")
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096);
    [
        mem_available(),
        rlimit_as().map(|l| l.saturating_sub(mapped)),
        cgroup_memory(),
    ]
    .into_iter()
    .flatten()
    .min()
    .unwrap_or(1 << 30)
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
        let memory = memory_available() / 2;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_cgroup_limit_counts_v2_and_v1() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        let leaf = r.join("a/b");
        std::fs::create_dir_all(&leaf).unwrap();
        std::fs::write(r.join("a/memory.max"), "1000000\n").unwrap();
        std::fs::write(r.join("a/memory.current"), "400000\n").unwrap();
        std::fs::write(leaf.join("memory.max"), "max\n").unwrap();
        assert_eq!(cgroup_memory_in(r, "0::/a/b\n"), Some(600_000));
        let v1 = r.join("memory/x");
        std::fs::create_dir_all(&v1).unwrap();
        std::fs::write(v1.join("memory.limit_in_bytes"), "300000").unwrap();
        std::fs::write(v1.join("memory.usage_in_bytes"), "100000").unwrap();
        assert_eq!(cgroup_memory_in(r, "4:memory:/x\n0::/a/b\n"), Some(200_000));
        assert_eq!(cgroup_memory_in(r, "0::/elsewhere\n"), None);
    }
}
