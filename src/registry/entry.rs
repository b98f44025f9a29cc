//! Making a registry entry from a lock's type: [`Algorithm`] for a lock written over the
//! register abstraction (every command, `verify` and `rmr` included), [`LockEntry::native_only`]
//! for any other [`Lock`].

use std::sync::Arc;

use super::LockEntry;
use crate::locks::{Lock, LockInfo, Params};
use crate::mem::{Memory, ScheduledMemory};
use crate::runner::exec::run_typed;

/// A lock algorithm written once over the register abstraction: for every [`Memory`] `M`, the
/// lock [`Algorithm::On<M>`] built by [`Algorithm::new`]. The same code then runs on native
/// memory (timed), on the scheduled memory (`verify`) and on a counting memory (`rmr`).
///
/// ```
/// use lockbench::locks::{Lock, LockInfo, Params, Problem};
/// use lockbench::mem::{Home, Memory, Register};
/// use lockbench::registry::{Algorithm, LockEntry};
///
/// /// A test-and-set lock over any memory.
/// struct Spin<M: Memory> {
///     mem: M,
///     word: M::Reg,
/// }
///
/// impl<M: Memory> Lock for Spin<M> {
///     fn enter(&self, p: usize, _session: usize) {
///         while self.word.swap(p, 1) != 0 {
///             self.mem.wait_until(p, || self.word.read(p) == 0);
///         }
///     }
///     fn exit(&self, p: usize, _session: usize) {
///         self.word.write(p, 0);
///     }
/// }
///
/// struct SpinAlgorithm;
///
/// impl Algorithm for SpinAlgorithm {
///     type On<M: Memory> = Spin<M>;
///     fn new<M: Memory>(mem: M, _params: &Params) -> Spin<M> {
///         let word = mem.register(Home::Shared, 0);
///         Spin { mem, word }
///     }
/// }
///
/// const INFO: LockInfo = LockInfo::baseline("my-spin", Problem::Mutex, false, "swap on one word");
/// let entry = LockEntry::over_memory::<SpinAlgorithm>(INFO);
/// assert!(entry.over_registers());
/// let lock = (entry.native)(&Params::new(2, 1, Default::default()));
/// lock.enter(0, 0);
/// lock.exit(0, 0);
/// ```
pub trait Algorithm: 'static {
    /// The lock on memory `M`.
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
    /// # use lockbench::locks::Params;
    /// # use lockbench::registry::Algorithm;
    /// # struct TasAlgorithm;
    /// # impl Algorithm for TasAlgorithm {
    /// #     type On<M: Memory> = Tas<M>;
    /// #     fn new<M: Memory>(mem: M, _: &Params) -> Tas<M> { Tas::new(mem) }
    /// # }
    /// use lockbench::mem::{CountingMemory, Model, WaitPolicy};
    /// let mem = CountingMemory::new(Model::Cc, 1, WaitPolicy::Spin, None);
    /// let lock: <TasAlgorithm as Algorithm>::On<CountingMemory> = TasAlgorithm::new(mem, &Params::new(1, 1, WaitPolicy::Spin));
    /// lock.enter(0, 0);
    /// lock.exit(0, 0);
    /// ```
    type On<M: Memory>: Lock;

    /// Builds the lock on `mem` for `params.n` processes.
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
    /// # use lockbench::locks::Params;
    /// # use lockbench::registry::Algorithm;
    /// # struct TasAlgorithm;
    /// # impl Algorithm for TasAlgorithm {
    /// #     type On<M: Memory> = Tas<M>;
    /// #     fn new<M: Memory>(mem: M, _: &Params) -> Tas<M> { Tas::new(mem) }
    /// # }
    /// use lockbench::mem::{NativeMemory, WaitPolicy};
    /// let lock = TasAlgorithm::new(NativeMemory::default(), &Params::new(2, 1, WaitPolicy::Spin));
    /// lock.enter(1, 0);
    /// lock.exit(1, 0);
    /// ```
    fn new<M: Memory>(mem: M, params: &Params) -> Self::On<M>;
}

impl LockEntry {
    /// The entry of an algorithm written over the register abstraction: timed on native
    /// memory, explored by `verify` on the scheduled memory, counted by `rmr`.
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
    /// # use lockbench::locks::Params;
    /// # use lockbench::registry::Algorithm;
    /// # struct TasAlgorithm;
    /// # impl Algorithm for TasAlgorithm {
    /// #     type On<M: Memory> = Tas<M>;
    /// #     fn new<M: Memory>(mem: M, _: &Params) -> Tas<M> { Tas::new(mem) }
    /// # }
    /// use lockbench::locks::{LockInfo, Problem};
    /// use lockbench::registry::{LockEntry, Registry};
    /// const TAS: LockInfo = LockInfo::baseline("my-tas", Problem::Mutex, false, "swap on one word");
    /// let entry = LockEntry::over_memory::<TasAlgorithm>(TAS);
    /// assert!(entry.over_registers()); // `verify` and `rmr` take it too
    /// let registry = Registry::builtin().with(entry);
    /// assert!(registry.find("my-tas").is_some());
    /// ```
    pub fn over_memory<A: Algorithm>(info: LockInfo) -> LockEntry {
        LockEntry {
            info,
            native: Arc::new(|p: &Params| -> Box<dyn Lock> { Box::new(A::new(p.native(), p)) }),
            // A run with a memory policy gives each register a page (its owner's node's).
            bench: Arc::new(|spec, kind| match spec.mem {
                Some(_) => run_typed(spec, kind, |p| {
                    A::new(crate::mem::paged::PagedMemory(p.native()), p)
                }),
                None => run_typed(spec, kind, |p| A::new(p.native(), p)),
            }),
            scheduled: Some(Arc::new(|p: &Params| -> Box<dyn Lock> {
                Box::new(A::new(ScheduledMemory, p))
            })),
            counting: Some(Arc::new(|p: &Params, m| -> Box<dyn Lock> {
                Box::new(A::new(m, p))
            })),
        }
    }

    /// The entry of a lock that runs on native memory only (every command but `verify` and
    /// `rmr`): `build` makes one for the given parameters, and timed runs are monomorphised
    /// for its type `L`.
    ///
    /// ```
    /// use lockbench::locks::{Lock, LockInfo, Params, Problem};
    /// use lockbench::registry::LockEntry;
    /// struct Std(std::sync::Mutex<()>);
    /// # impl Lock for Std { fn enter(&self, _: usize, _: usize) {} fn exit(&self, _: usize, _: usize) {} }
    /// const INFO: LockInfo = LockInfo::baseline("std-again", Problem::Mutex, false, "");
    /// let e = LockEntry::native_only(INFO, |_: &Params| Std(Default::default()));
    /// assert!(!e.over_registers());
    /// ```
    pub fn native_only<L, B>(info: LockInfo, build: B) -> LockEntry
    where
        L: Lock + 'static,
        B: Fn(&Params) -> L + Send + Sync + 'static,
    {
        let build = Arc::new(build);
        let timed = build.clone();
        LockEntry {
            info,
            native: Arc::new(move |p: &Params| -> Box<dyn Lock> { Box::new(build(p)) }),
            bench: Arc::new(move |spec, kind| run_typed(spec, kind, |p| timed(p))),
            scheduled: None,
            counting: None,
        }
    }
}

/// The entry of a built-in lock written over the register abstraction: `generic_entry!(INFO,
/// path::Type)` for a type `Type<M: Memory>` with `fn new(mem: M, params: &Params) -> Self`
/// implementing [`Lock`]: shorthand for an [`Algorithm`] and [`LockEntry::over_memory`].
///
/// # Examples
///
/// ```
/// use lockbench::locks::{LockInfo, Params, Problem};
/// mod tas {
/// #   use lockbench::locks::{Lock, Params};
/// #   use lockbench::mem::{Home, Memory, Register};
///     pub struct Tas<M: Memory> { mem: M, word: M::Reg }
///     impl<M: Memory> Tas<M> {
///         pub fn new(mem: M, _params: &Params) -> Self {
///             let word = mem.register(Home::Shared, 0);
///             Tas { mem, word }
///         }
///     }
/// #   impl<M: Memory> Lock for Tas<M> {
/// #       fn enter(&self, p: usize, _: usize) {
/// #           while self.word.swap(p, 1) != 0 { self.mem.wait_until(p, || self.word.read(p) == 0); }
/// #       }
/// #       fn exit(&self, p: usize, _: usize) { self.word.write(p, 0); }
/// #   }
/// }
/// const TAS: LockInfo = LockInfo::baseline("my-tas", Problem::Mutex, false, "swap on one word");
/// let entry = lockbench::generic_entry!(TAS, tas::Tas);
/// assert!(entry.over_registers());
/// ```
#[macro_export]
macro_rules! generic_entry {
    ($info:expr, $($ty:ident)::+) => {{
        struct Over;
        impl $crate::registry::Algorithm for Over {
            type On<M: $crate::mem::Memory> = $($ty)::+<M>;
            fn new<M: $crate::mem::Memory>(mem: M, params: &$crate::locks::Params) -> Self::On<M> {
                <$($ty)::+<M>>::new(mem, params)
            }
        }
        $crate::registry::LockEntry::over_memory::<Over>($info)
    }};
}
