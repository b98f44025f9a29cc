//! The simulator's heap on transparent huge pages.
//!
//! At n = 500 the simulator's state is tens of megabytes of small allocations (RA2's vectors
//! and the snapshots its messages carry, each process's tables, the broadcasts' blocks), read
//! at random from one event to the next: with 4 KiB pages, a read of another process's state
//! misses the TLB as well as the cache. glibc's allocator puts its heap on huge pages when
//! its tunable `glibc.malloc.hugetlb` is 1 (glibc 2.35 and later; the kernel's transparent
//! huge pages in `madvise` mode, where nothing gets them unasked), and glibc reads tunables
//! only when a process starts. So `sim` starts itself again, once, with the tunable set:
//! the same results, measured faster (docs/message-passing.md, "Huge pages"). A
//! `GLIBC_TUNABLES` that names the tunable already (`glibc.malloc.hugetlb=0` to keep 4 KiB
//! pages) is left as it is.

/// The tunable.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TUNABLE: &str = "glibc.malloc.hugetlb";

/// Starts this process again with glibc's heap on huge pages where that helps and is not
/// asked already; returns only if it does not (nothing to do, or the new start failed, in
/// which case the run goes on here as it would have).
pub(crate) fn on_huge_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        use std::os::unix::process::CommandExt;
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
        let Some(tunables) = tunables_with_huge_pages(
            std::env::var("GLIBC_TUNABLES").ok().as_deref(),
            thp.as_deref().unwrap_or(""),
        ) else {
            return;
        };
        let mut args = std::env::args_os();
        let Some(argv0) = args.next() else {
            return;
        };
        // `exec` returns only when it fails.
        let _ = std::process::Command::new("/proc/self/exe")
            .arg0(argv0)
            .args(args)
            .env("GLIBC_TUNABLES", tunables)
            .exec();
    }
}

/// The `GLIBC_TUNABLES` to start again with, given the current one and the kernel's
/// transparent huge page mode (the contents of
/// `/sys/kernel/mm/transparent_hugepage/enabled`); `None` to go on as we are: the tunable is
/// named already, or the mode is not `madvise` (`always` gives huge pages unasked, `never`
/// none at all).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn tunables_with_huge_pages(current: Option<&str>, thp: &str) -> Option<String> {
    if !thp.contains("[madvise]") || current.is_some_and(|c| c.contains(TUNABLE)) {
        return None;
    }
    Some(match current {
        Some(c) if !c.is_empty() => format!("{c}:{TUNABLE}=1"),
        _ => format!("{TUNABLE}=1"),
    })
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::tunables_with_huge_pages as with;

    #[test]
    fn the_tunable_is_added_once_and_only_in_madvise_mode() {
        let madvise = "always [madvise] never\n";
        assert_eq!(
            with(None, madvise).as_deref(),
            Some("glibc.malloc.hugetlb=1")
        );
        assert_eq!(
            with(Some(""), madvise).as_deref(),
            Some("glibc.malloc.hugetlb=1")
        );
        assert_eq!(
            with(Some("glibc.malloc.arena_max=2"), madvise).as_deref(),
            Some("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1")
        );
        // Named already (by the user, or by the first start): left alone.
        assert_eq!(with(Some("glibc.malloc.hugetlb=0"), madvise), None);
        assert_eq!(with(Some("glibc.malloc.hugetlb=1"), madvise), None);
        // Other modes, or no transparent huge pages at all.
        assert_eq!(with(None, "[always] madvise never\n"), None);
        assert_eq!(with(None, "always madvise [never]\n"), None);
        assert_eq!(with(None, ""), None);
    }
}
