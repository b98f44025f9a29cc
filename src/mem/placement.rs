//! Where memory lives on a NUMA machine: the `--mem-policy` a run asks for, and the
//! `set_mempolicy`/`mbind`/`move_pages` system calls that carry it out and check it, through
//! libc's `syscall` (no binding crate).
//!
//! A policy is applied to the pages a lock's registers occupy *after* the lock is built
//! (`mbind` with `MPOL_MF_MOVE` moves pages already touched), so it holds whatever the
//! allocator reused.

use std::fmt;
use std::io;
use std::str::FromStr;

/// Where a lock's registers are placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum MemPolicy {
    /// On the node of the CPU the first thread runs on (where first touch by that thread puts
    /// them).
    Local,
    /// Pages spread round-robin over the nodes the run's threads use.
    Interleave,
    /// Every page on this node.
    Node(usize),
}

impl fmt::Display for MemPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemPolicy::Local => f.write_str("local"),
            MemPolicy::Interleave => f.write_str("interleave"),
            MemPolicy::Node(n) => write!(f, "node:{n}"),
        }
    }
}

impl FromStr for MemPolicy {
    type Err = String;

    fn from_str(s: &str) -> Result<MemPolicy, String> {
        match s.trim() {
            "local" => Ok(MemPolicy::Local),
            "interleave" => Ok(MemPolicy::Interleave),
            other => other
                .strip_prefix("node:")
                .and_then(|n| n.parse().ok())
                .map(MemPolicy::Node)
                .ok_or_else(|| {
                    format!("unknown memory policy {other:?}: use local, interleave or node:N (e.g. node:0)")
                }),
        }
    }
}

impl TryFrom<String> for MemPolicy {
    type Error = String;
    fn try_from(s: String) -> Result<MemPolicy, String> {
        s.parse()
    }
}

impl From<MemPolicy> for String {
    fn from(m: MemPolicy) -> String {
        m.to_string()
    }
}

const MPOL_BIND: libc::c_long = 2;
const MPOL_INTERLEAVE: libc::c_long = 3;
const MPOL_MF_MOVE: libc::c_ulong = 1 << 1;

/// The page size.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(n).ok().filter(|&n| n > 0).unwrap_or(4096)
}

/// A node mask as the kernel reads it: one bit per node, in `c_ulong` words.
fn mask(nodes: &[usize]) -> Vec<libc::c_ulong> {
    let bits = libc::c_ulong::BITS as usize;
    let top = nodes.iter().max().copied().unwrap_or(0);
    let mut m = vec![0; top / bits + 1];
    for &n in nodes {
        m[n / bits] |= 1 << (n % bits);
    }
    m
}

/// Binds the pages covering `[addr, addr + len)` to `nodes` (one node: bound there; several:
/// interleaved over them) and moves the pages already touched there.
pub fn bind(addr: *const u8, len: usize, nodes: &[usize]) -> io::Result<()> {
    if nodes.is_empty() || len == 0 {
        return Ok(());
    }
    let page = page_size();
    let start = addr as usize & !(page - 1);
    let end = (addr as usize + len).div_ceil(page) * page;
    let m = mask(nodes);
    let mode = if nodes.len() == 1 {
        MPOL_BIND
    } else {
        MPOL_INTERLEAVE
    };
    // SAFETY: mbind only changes the policy of (and may migrate) pages of this process's own
    // address space; the range is page-aligned and covers memory the caller owns, so its
    // contents are kept. The mask is a live buffer of `maxnode` bits.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mbind,
            start as libc::c_ulong,
            (end - start) as libc::c_ulong,
            mode,
            m.as_ptr(),
            (m.len() * libc::c_ulong::BITS as usize + 1) as libc::c_ulong,
            MPOL_MF_MOVE,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The NUMA node holding the page of `addr` (`move_pages` with no target: a query), or why it
/// cannot be told (`ENOSYS` without NUMA support; a negative status such as `-ENOENT` for a
/// page not yet touched).
#[cfg(test)]
pub fn node_of(addr: *const u8) -> io::Result<usize> {
    nodes_of(&[addr as usize])?.remove(0)
}

/// The NUMA node of each page of `addrs`, in one `move_pages` query for them all (the kernel
/// walks the list in one call, where a call per page costs a system call each: thousands for
/// the larger locks at many threads). The outer error is the call's; each inner one a page's.
pub fn nodes_of(addrs: &[usize]) -> io::Result<Vec<io::Result<usize>>> {
    let pages: Vec<*mut libc::c_void> = addrs.iter().map(|&a| a as *mut libc::c_void).collect();
    let mut status: Vec<libc::c_int> = vec![0; pages.len()];
    // SAFETY: `pages` and `status` are live and of the same length, passed as the count; a null
    // `nodes` array makes move_pages report where each page is without moving it.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_move_pages,
            0 as libc::c_int,
            pages.len() as libc::c_ulong,
            pages.as_ptr(),
            std::ptr::null::<libc::c_int>(),
            status.as_mut_ptr(),
            0 as libc::c_int,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(status
        .into_iter()
        .map(|s| usize::try_from(s).map_err(|_| io::Error::from_raw_os_error(-s)))
        .collect())
}

/// One array of registers a memory allocated while [`record`] watched: where it starts, the
/// distance between registers, and each register's home.
#[derive(Clone, Debug)]
pub struct Region {
    /// Address of the first register.
    pub addr: usize,
    /// Bytes from one register to the next.
    pub stride: usize,
    /// Each register's home, in order.
    pub homes: Vec<super::Home>,
}

thread_local! {
    static RECORDING: std::cell::RefCell<Option<Vec<Region>>> =
        const { std::cell::RefCell::new(None) };
}

/// Runs `build` and returns, beside its value, the register arrays native memory allocated on
/// this thread meanwhile (so a run can place their pages once the lock is built).
pub fn record<T>(build: impl FnOnce() -> T) -> (T, Vec<Region>) {
    let outer = RECORDING.with(|r| r.replace(Some(Vec::new())));
    let value = build();
    let regions = RECORDING.with(|r| r.replace(outer)).unwrap_or_default();
    (value, regions)
}

/// `len` registers made by `make`, one after another, their region noted for placement
/// recording with each register's home (what every memory's `array` does).
pub(crate) fn noted_array<R>(
    len: usize,
    home: impl Fn(usize) -> super::Home,
    make: impl Fn() -> R,
) -> Box<[R]> {
    let regs: Box<[R]> = (0..len).map(|_| make()).collect();
    if !regs.is_empty() {
        note(|| Region {
            addr: regs.as_ptr() as usize,
            stride: std::mem::size_of::<R>(),
            homes: (0..len).map(home).collect(),
        });
    }
    regs
}

/// Notes an array just allocated, when [`record`] is watching this thread.
/// A lock may be built while the thread's locals are being torn down (the interposer builds
/// one for a `pthread_mutex_destroy` run by a library's finaliser at exit): nothing is watching
/// then, so nothing is noted.
pub(crate) fn note(region: impl FnOnce() -> Region) {
    let _ = RECORDING.try_with(|r| {
        if let Some(list) = r.borrow_mut().as_mut() {
            list.push(region());
        }
    });
}

/// What placing a lock's pages did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placed {
    /// Pages bound.
    pub pages: usize,
    /// Pages holding registers of processes on different nodes (under `local`: bound to the
    /// node of the first register's owner on the page).
    pub mixed: usize,
    /// Pages that `move_pages` says are not on a node the policy names (read back after
    /// binding; 0 when every page is where it should be).
    pub misplaced: usize,
    /// The first error the kernel gave, if any.
    pub error: Option<String>,
}

/// Binds the pages of `regions` and of the block `[shared, shared + shared_len)` (the lock
/// itself and what the run shares) under `policy`: `owner_node(p)` is the node of process `p`'s
/// CPU, `nodes` the nodes the run's threads use (ascending).
pub fn apply(
    policy: MemPolicy,
    regions: &[Region],
    shared: (usize, usize),
    owner_node: &dyn Fn(usize) -> Option<usize>,
    nodes: &[usize],
) -> Placed {
    let mut placed = Placed::default();
    let page = page_size();
    let first = owner_node(0).or(nodes.first().copied());
    let shared_nodes: Vec<usize> = match policy {
        MemPolicy::Node(n) => vec![n],
        MemPolicy::Interleave => nodes.to_vec(),
        MemPolicy::Local => first.into_iter().collect(),
    };
    let bind_one = |addr: usize, len: usize, on: &[usize], placed: &mut Placed| {
        if on.is_empty() || len == 0 {
            return;
        }
        placed.pages += (addr + len).div_ceil(page) - addr / page;
        if let Err(e) = bind(addr as *const u8, len, on) {
            placed.error.get_or_insert_with(|| e.to_string());
            return;
        }
        // Read back where each page is, in one query.
        let pages: Vec<usize> = (addr / page..(addr + len).div_ceil(page))
            .map(|i| (i * page).max(addr))
            .collect();
        match nodes_of(&pages) {
            Ok(found) => {
                for n in found {
                    match n {
                        Ok(n) if on.contains(&n) => {}
                        Ok(_) => placed.misplaced += 1,
                        Err(e) => {
                            placed.error.get_or_insert_with(|| e.to_string());
                        }
                    }
                }
            }
            Err(e) => {
                placed.error.get_or_insert_with(|| e.to_string());
            }
        }
    };
    bind_one(shared.0, shared.1, &shared_nodes, &mut placed);
    for r in regions {
        if policy != MemPolicy::Local {
            bind_one(r.addr, r.stride * r.homes.len(), &shared_nodes, &mut placed);
            continue;
        }
        // Local: page by page, the node of the owner of the registers on it.
        let home_node = |h: &super::Home| match h {
            super::Home::Process(p) => owner_node(*p).or(first),
            super::Home::Shared => first,
        };
        // Consecutive pages bound to one node go in one call (a call per page costs two system
        // calls a page: tens of thousands for the largest locks at many threads).
        let end = r.addr + r.stride * r.homes.len();
        let mut run: Option<(usize, usize, Vec<usize>)> = None;
        let mut at = r.addr;
        while at < end {
            let page_end = ((at / page) + 1) * page;
            let lo = (at - r.addr) / r.stride;
            let hi = (page_end.min(end) - r.addr).div_ceil(r.stride);
            let owners: std::collections::BTreeSet<Option<usize>> = r.homes
                [lo..hi.min(r.homes.len())]
                .iter()
                .map(home_node)
                .collect();
            if owners.len() > 1 {
                placed.mixed += 1;
            }
            let on: Vec<usize> = home_node(&r.homes[lo]).into_iter().collect();
            let stop = page_end.min(end);
            run = match run {
                Some((from, _, nodes)) if nodes == on => Some((from, stop, nodes)),
                Some((from, to, nodes)) => {
                    bind_one(from, to - from, &nodes, &mut placed);
                    Some((at, stop, on))
                }
                None => Some((at, stop, on)),
            };
            at = page_end;
        }
        if let Some((from, to, nodes)) = run {
            bind_one(from, to - from, &nodes, &mut placed);
        }
    }
    placed
}

/// A fresh private anonymous mapping, for tests that need pages nothing has touched yet (a
/// heap allocation may reuse pages already faulted in); unmapped when dropped.
#[cfg(test)]
pub(crate) struct FreshMapping {
    /// Its first byte.
    pub(crate) addr: *mut u8,
    len: usize,
}

#[cfg(test)]
impl FreshMapping {
    /// Maps `len` bytes, readable and writable; panics with the system's error when it cannot.
    pub(crate) fn new(len: usize) -> Self {
        // SAFETY: an anonymous private mapping with no address hint; it aliases nothing.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(map, libc::MAP_FAILED, "{}", io::Error::last_os_error());
        FreshMapping {
            addr: map.cast(),
            len,
        }
    }
}

#[cfg(test)]
impl Drop for FreshMapping {
    fn drop(&mut self) {
        // SAFETY: the mapping of `len` bytes made by `new`, no longer used.
        unsafe { libc::munmap(self.addr.cast(), self.len) };
    }
}
