//! Native memory: cache-padded atomics, for timing.

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;

use crossbeam_utils::CachePadded;

use super::wide::NativeWide;
use super::{Home, Memory};

/// How a process busy-waits.
///
/// # Examples
///
/// ```
/// use lockbench::mem::{NativeMemory, WaitPolicy};
/// // More threads than cores: yield after a few spins.
/// let mem = NativeMemory::new(WaitPolicy::SpinThenYield { spins: 64 });
/// assert_eq!(mem.policy.name(), "spin-then-yield");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum WaitPolicy {
    /// Spin with a spin-loop hint forever (right when every thread has its own core).
    #[default]
    Spin,
    /// Spin `spins` times, then yield the CPU between tries (right when threads outnumber
    /// cores: a pure spinner can hold the core the lock holder needs).
    SpinThenYield {
        /// Tries before the first yield.
        spins: u32,
    },
}

impl WaitPolicy {
    /// Spin-then-yield with the default spin budget.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::WaitPolicy;
    /// assert_eq!(WaitPolicy::YIELD, WaitPolicy::SpinThenYield { spins: 128 });
    /// ```
    pub const YIELD: WaitPolicy = WaitPolicy::SpinThenYield { spins: 128 };

    /// The policy's name as shown in reports.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::WaitPolicy;
    /// assert_eq!(WaitPolicy::Spin.name(), "spin");
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            WaitPolicy::Spin => "spin",
            WaitPolicy::SpinThenYield { .. } => "spin-then-yield",
        }
    }

    /// Waits until `cond` holds, following this policy. When `abort` is set the wait gives up
    /// by panicking with [`Aborted`] (the runner's watchdog sets it on a stalled run and catches
    /// the unwind); it is polled every 1024 tries, off the fast path.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::AtomicBool;
    /// use lockbench::mem::{Aborted, WaitPolicy};
    /// let mut tries = 0;
    /// WaitPolicy::Spin.wait_until(None, || { tries += 1; tries == 3 });
    /// assert_eq!(tries, 3);
    /// // A wait on a set abort flag gives up with the `Aborted` payload.
    /// let abort = AtomicBool::new(true);
    /// let gave_up = std::panic::catch_unwind(|| WaitPolicy::Spin.wait_until(Some(&abort), || false));
    /// assert!(gave_up.unwrap_err().is::<Aborted>());
    /// ```
    #[inline]
    pub fn wait_until(&self, abort: Option<&AtomicBool>, mut cond: impl FnMut() -> bool) {
        if cond() {
            return;
        }
        self.wait_slow(abort, &mut cond)
    }

    /// The waiting loop, out of line (`#[cold]`) but generic, so the condition is inlined into
    /// it: the loop is the condition's loads, a compare and a `pause`.
    #[cold]
    #[inline(never)]
    fn wait_slow<F: FnMut() -> bool>(&self, abort: Option<&AtomicBool>, cond: &mut F) {
        let mut tries = 0u32;
        while !cond() {
            tries = tries.wrapping_add(1);
            match *self {
                WaitPolicy::SpinThenYield { spins } if tries > spins => std::thread::yield_now(),
                _ => std::hint::spin_loop(),
            }
            if tries.is_multiple_of(1024) && abort.is_some_and(|a| a.load(Ordering::Relaxed)) {
                std::panic::panic_any(Aborted);
            }
        }
    }
}

/// The panic payload of a wait given up because the run was aborted.
///
/// # Examples
///
/// ```
/// use std::sync::atomic::AtomicBool;
/// use std::sync::Arc;
/// use lockbench::mem::{Aborted, Home, Memory, NativeMemory, Register, WaitPolicy};
/// let abort = Arc::new(AtomicBool::new(true));
/// let mem = NativeMemory::with_abort(WaitPolicy::Spin, abort);
/// let never = mem.register(Home::Shared, 0);
/// let stalled = std::panic::catch_unwind(|| mem.wait_until(0, || never.read(0) == 1));
/// assert!(stalled.unwrap_err().downcast_ref::<Aborted>().is_some());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Aborted;

/// Native memory: each register is a [`CachePadded`] `AtomicI64` accessed with `SeqCst`.
///
/// SeqCst is what the papers assume (atomic, sequentially consistent registers): every bakery
/// doorway writes its own register and then reads the others', an order x86 and Arm break
/// without a full fence. On x86 a SeqCst load is a plain `mov` and a SeqCst store an `xchg`, so
/// the cost falls on writes only.
///
/// # Examples
///
/// ```
/// # use lockbench::locks::Lock;
/// # use lockbench::mem::{Home, Memory, Register};
/// # struct Tas<M: Memory> { mem: M, word: M::Reg }
/// # impl<M: Memory> Tas<M> {
/// #     fn new(mem: M) -> Self { let word = mem.register(Home::Shared, 0); Tas { mem, word } }
/// # }
/// # impl<M: Memory> Lock for Tas<M> {
/// #     fn enter(&self, p: usize, _session: usize) {
/// #         while self.word.swap(p, 1) != 0 {
/// #             self.mem.wait_until(p, || self.word.read(p) == 0);
/// #         }
/// #     }
/// #     fn exit(&self, p: usize, _session: usize) { self.word.write(p, 0); }
/// # }
/// use lockbench::mem::NativeMemory;
/// let lock = Tas::new(NativeMemory::default());
/// lock.enter(0, 0);
/// lock.exit(0, 0);
/// ```
#[derive(Clone, Debug, Default)]
pub struct NativeMemory {
    /// How `wait_until` waits.
    pub policy: WaitPolicy,
    /// When set, waits give up (see [`WaitPolicy::wait_until`]).
    pub abort: Option<Arc<AtomicBool>>,
}

impl NativeMemory {
    /// A native memory whose waits follow `policy` and never give up.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::{NativeMemory, WaitPolicy};
    /// let mem = NativeMemory::new(WaitPolicy::YIELD);
    /// assert!(mem.abort.is_none());
    /// ```
    pub fn new(policy: WaitPolicy) -> Self {
        NativeMemory {
            policy,
            abort: None,
        }
    }

    /// A native memory whose waits follow `policy` and give up once `abort` is set.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::AtomicBool;
    /// use std::sync::Arc;
    /// use lockbench::mem::{NativeMemory, WaitPolicy};
    /// let abort = Arc::new(AtomicBool::new(false));
    /// let mem = NativeMemory::with_abort(WaitPolicy::Spin, abort.clone());
    /// // a watchdog would set `abort` to make every wait on `mem` give up
    /// assert!(mem.abort.is_some());
    /// ```
    pub fn with_abort(policy: WaitPolicy, abort: Arc<AtomicBool>) -> Self {
        NativeMemory {
            policy,
            abort: Some(abort),
        }
    }
}

/// A native register: one `AtomicI64` on its own cache line (pair).
#[derive(Debug, Default)]
pub struct NativeRegister(CachePadded<AtomicI64>);

/// `Register` for a tuple struct over an `AtomicI64` (directly or through a padding wrapper
/// that derefs to it): every access `SeqCst` but the release write, the peek `Relaxed`. One
/// definition for the padded native register and the paged one.
macro_rules! atomic_register {
    ($t:ty) => {
        impl $crate::mem::Register for $t {
            #[inline(always)]
            fn read(&self, _p: usize) -> i64 {
                self.0.load(std::sync::atomic::Ordering::SeqCst)
            }

            #[inline(always)]
            fn write(&self, _p: usize, v: i64) {
                self.0.store(v, std::sync::atomic::Ordering::SeqCst)
            }

            #[inline(always)]
            fn write_release(&self, _p: usize, v: i64) {
                self.0.store(v, std::sync::atomic::Ordering::Release)
            }

            #[inline(always)]
            fn fetch_add(&self, _p: usize, v: i64) -> i64 {
                self.0.fetch_add(v, std::sync::atomic::Ordering::SeqCst)
            }

            #[inline(always)]
            fn swap(&self, _p: usize, v: i64) -> i64 {
                self.0.swap(v, std::sync::atomic::Ordering::SeqCst)
            }

            #[inline(always)]
            fn compare_exchange(&self, _p: usize, current: i64, new: i64) -> Result<i64, i64> {
                self.0.compare_exchange(
                    current,
                    new,
                    std::sync::atomic::Ordering::SeqCst,
                    std::sync::atomic::Ordering::SeqCst,
                )
            }

            #[inline(always)]
            fn peek(&self) -> i64 {
                self.0.load(std::sync::atomic::Ordering::Relaxed)
            }
        }
    };
}
pub(crate) use atomic_register;

atomic_register!(NativeRegister);

impl Memory for NativeMemory {
    type Reg = NativeRegister;
    type Wide = NativeWide;

    fn register(&self, _home: Home, init: i64) -> NativeRegister {
        NativeRegister(CachePadded::new(AtomicI64::new(init)))
    }

    /// As the default, and noted for placement recording, so a run can bind each
    /// process's registers to its node.
    fn array(&self, len: usize, home: impl Fn(usize) -> Home, init: i64) -> Box<[NativeRegister]> {
        super::placement::noted_array(len, home, || self.register(Home::Shared, init))
    }

    fn wide(&self, _home: Home, words: usize, init: i64) -> NativeWide {
        NativeWide::new(words, init)
    }

    #[inline(always)]
    fn wait_until(&self, _p: usize, cond: impl FnMut() -> bool) {
        self.policy.wait_until(self.abort.as_deref(), cond)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::Register;

    #[test]
    fn registers_are_padded_apart() {
        let mem = NativeMemory::default();
        let regs = mem.per_process(3, 7);
        let a = &regs[0] as *const _ as usize;
        let b = &regs[1] as *const _ as usize;
        assert!(
            b - a >= 64,
            "registers {a:#x} and {b:#x} share a cache line"
        );
        assert_eq!(regs[2].read(0), 7);
    }

    #[test]
    fn read_write_fetch_add() {
        let mem = NativeMemory::new(WaitPolicy::YIELD);
        let r = mem.register(Home::Shared, -1);
        assert_eq!(r.read(0), -1);
        r.write(1, 5);
        assert_eq!(r.fetch_add(0, 2), 5);
        assert_eq!(r.peek(), 7);
        assert_eq!(r.swap(1, 9), 7);
        assert_eq!(r.compare_exchange(0, 9, 10), Ok(9));
        assert_eq!(r.compare_exchange(0, 9, 11), Err(10));
        mem.wait_until(0, || r.read(0) == 10);
    }
}
