//! Paged memory: native memory whose every register has a 4 KiB page of its own, for runs with
//! a `--mem-policy`. On native memory a process's registers are 128 bytes apart, so one page
//! holds 32 processes' registers and `mbind` cannot put each on its own process's node; here
//! each register is page-aligned and page-sized, so under `local` every process's registers
//! go to its node (the DSM locality the papers assume) and no page is mixed. The price is
//! memory (a page per register instead of 128 bytes: 32 times more) and a TLB entry per
//! register touched; without a memory policy the runner keeps native memory's layout.

use std::sync::atomic::AtomicI64;

use super::native::NativeMemory;
use super::wide::NativeWide;
use super::{Home, Memory};

/// The bytes each register takes: one x86-64 base page. (On a machine with larger base pages
/// several registers share one, and `Placed::mixed` counts the pages that mix owners.)
pub const REGISTER_PAGE: usize = 4096;

/// Native memory laid out a page per register: waits as the native memory it wraps.
#[derive(Clone, Debug, Default)]
pub struct PagedMemory(pub NativeMemory);

/// A register alone on its page, accessed as [`NativeMemory`]'s are (`SeqCst`).
#[derive(Debug, Default)]
#[repr(C, align(4096))]
pub struct PagedRegister(AtomicI64);

const _: () = assert!(std::mem::size_of::<PagedRegister>() == REGISTER_PAGE);

super::native::atomic_register!(PagedRegister);

impl Memory for PagedMemory {
    type Reg = PagedRegister;
    type Wide = NativeWide;

    fn register(&self, _home: Home, init: i64) -> PagedRegister {
        PagedRegister(AtomicI64::new(init))
    }

    /// A page per register, noted for placement recording as native memory's arrays are.
    fn array(&self, len: usize, home: impl Fn(usize) -> Home, init: i64) -> Box<[PagedRegister]> {
        super::placement::noted_array(len, home, || self.register(Home::Shared, init))
    }

    fn wide(&self, _home: Home, words: usize, init: i64) -> NativeWide {
        NativeWide::new(words, init)
    }

    #[inline(always)]
    fn wait_until(&self, _p: usize, cond: impl FnMut() -> bool) {
        self.0.policy.wait_until(self.0.abort.as_deref(), cond)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::placement::record;
    use crate::mem::Register;

    #[test]
    fn each_register_of_an_array_starts_its_own_page() {
        let mem = PagedMemory::default();
        let (regs, regions) = record(|| mem.per_process(3, 7));
        for r in regs.iter() {
            assert_eq!(r as *const _ as usize % REGISTER_PAGE, 0);
        }
        assert_eq!(regs[2].read(0), 7);
        assert_eq!(regions.len(), 1);
        assert_eq!(regions[0].stride, REGISTER_PAGE);
        assert_eq!(regions[0].homes[1], Home::Process(1));
        regs[1].write(1, 5);
        assert_eq!(regs[1].fetch_add(0, 2), 5);
        assert_eq!(regs[1].swap(0, 1), 7);
        assert_eq!(regs[1].compare_exchange(0, 1, 2), Ok(1));
        assert_eq!(regs[1].peek(), 2);
    }
}
