//! CPU lists and pinning: the `0-3,8-11` syntax of sysfs, the CPU a thread goes to, pinning
//! the calling thread and the CPUs it may run on. [`super::topology`] re-exports all of it.

use std::collections::BTreeSet;
use std::fmt;
use std::io;

/// A malformed CPU list (the `0-3,8-11` syntax of sysfs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuListError {
    /// The offending element of the list.
    pub element: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl fmt::Display for CpuListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bad CPU list element {:?}: {}; expected ids and ranges such as 0-3,8-11",
            self.element, self.reason
        )
    }
}

impl std::error::Error for CpuListError {}

/// Parses a CPU list such as `0-3,8-11` into ascending, distinct ids. Whitespace around the list
/// and its elements is ignored; an empty (or all-blank) list is empty.
pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>, CpuListError> {
    let s = s.trim();
    let mut ids = BTreeSet::new();
    if s.is_empty() {
        return Ok(Vec::new());
    }
    for element in s.split(',') {
        let bad = |reason| CpuListError {
            element: element.trim().to_string(),
            reason,
        };
        let number = |t: &str| t.trim().parse::<usize>().map_err(|_| bad("not a CPU id"));
        match element.split_once('-') {
            _ if element.trim().is_empty() => return Err(bad("empty element")),
            Some((lo, hi)) => {
                let (lo, hi) = (number(lo)?, number(hi)?);
                if hi < lo {
                    return Err(bad("range ends before it starts"));
                }
                ids.extend(lo..=hi);
            }
            None => {
                ids.insert(number(element)?);
            }
        }
    }
    Ok(ids.into_iter().collect())
}

/// Formats ids as a CPU list, collapsing runs into ranges: `[0, 1, 2, 3, 8]` gives `0-3,8`.
pub fn format_cpu_list(ids: &[usize]) -> String {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        while i + 1 < sorted.len() && sorted[i + 1] == sorted[i] + 1 {
            i += 1;
        }
        parts.push(if sorted[i] == start {
            start.to_string()
        } else {
            format!("{start}-{}", sorted[i])
        });
        i += 1;
    }
    parts.join(",")
}

/// The CPU of thread `thread` under `placement`, wrapping around when threads outnumber the
/// placement; `None` when the placement is empty (no pinning).
pub fn cpu_for(placement: &[usize], thread: usize) -> Option<usize> {
    if placement.is_empty() {
        None
    } else {
        Some(placement[thread % placement.len()])
    }
}

/// Pins the calling thread to CPU `cpu` (`sched_setaffinity`). Fails with `InvalidInput` when
/// the CPU is offline, absent, or outside this process's allowed set.
pub fn pin_current_thread(cpu: usize) -> io::Result<()> {
    let bits = libc::c_ulong::BITS as usize;
    // At least a full cpu_set_t, so the pointer below always covers the type it names.
    let words = (cpu / bits + 1).max(std::mem::size_of::<libc::cpu_set_t>().div_ceil(8));
    let mut mask: Vec<libc::c_ulong> = vec![0; words];
    mask[cpu / bits] |= 1 << (cpu % bits);
    // SAFETY: `mask` is a live, suitably aligned buffer of exactly the size passed, at least as
    // large as a cpu_set_t; the kernel only reads it. Pid 0 names the calling thread.
    let rc = unsafe {
        libc::sched_setaffinity(
            0,
            std::mem::size_of_val(mask.as_slice()),
            mask.as_ptr().cast::<libc::cpu_set_t>(),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The CPUs the calling thread may run on (`sched_getaffinity`), ascending.
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    let bits = libc::c_ulong::BITS as usize;
    let mut words = std::mem::size_of::<libc::cpu_set_t>().div_ceil(8);
    loop {
        let mut mask: Vec<libc::c_ulong> = vec![0; words];
        // SAFETY: `mask` is a live, suitably aligned, writable buffer of exactly the size passed,
        // at least as large as a cpu_set_t. Pid 0 names the calling thread.
        let rc = unsafe {
            libc::sched_getaffinity(
                0,
                std::mem::size_of_val(mask.as_slice()),
                mask.as_mut_ptr().cast::<libc::cpu_set_t>(),
            )
        };
        if rc == 0 {
            return Ok((0..words * bits)
                .filter(|&c| mask[c / bits] & (1 << (c % bits)) != 0)
                .collect());
        }
        let err = io::Error::last_os_error();
        // EINVAL: the kernel's CPU mask is wider than ours.
        if err.raw_os_error() != Some(libc::EINVAL) || words >= 1 << 16 {
            return Err(err);
        }
        words *= 2;
    }
}
