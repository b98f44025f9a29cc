//! The C plug-in ABI as Rust sees it: the structs and constants of `include/lockbench.h`,
//! version 1, laid out as C lays them out (`#[repr(C)]`). Fields are only ever appended; a
//! descriptor declares its size and is read no further.

use std::ffi::{c_char, c_int, c_void};

/// The ABI version this lockbench reads (`LOCKBENCH_ABI_VERSION`).
pub const ABI_VERSION: u32 = 1;

/// The symbol a plug-in exports: `const struct lockbench_plugin *lockbench_plugin(void)`.
pub const SYMBOL: &str = "lockbench_plugin";

/// `LOCKBENCH_MUTEX`, `LOCKBENCH_GME`, `LOCKBENCH_KEXCLUSION`.
pub const PROBLEM_MUTEX: u32 = 1;
/// See [`PROBLEM_MUTEX`].
pub const PROBLEM_GME: u32 = 2;
/// See [`PROBLEM_MUTEX`].
pub const PROBLEM_KEXCLUSION: u32 = 3;

/// `LOCKBENCH_CLAIM_FCFS`: first-come-first-served between conflicting requests.
pub const CLAIM_FCFS: u32 = 1 << 0;
/// `LOCKBENCH_CLAIM_BOUNDED`: bounded registers.
pub const CLAIM_BOUNDED: u32 = 1 << 1;
/// `LOCKBENCH_CLAIM_NOT_A_LOCK`: a negative control or calibration entry.
pub const CLAIM_NOT_A_LOCK: u32 = 1 << 2;
/// Every claim bit version 1 knows.
pub const CLAIMS_V1: u32 = CLAIM_FCFS | CLAIM_BOUNDED | CLAIM_NOT_A_LOCK;

/// `init(params, &lock, error, error_len) -> 0 or non-zero`.
pub type InitFn =
    unsafe extern "C" fn(*const Params, *mut *mut c_void, *mut c_char, usize) -> c_int;
/// `enter(lock, p, session) -> 0 once inside, non-zero when it gave up on abort`.
pub type EnterFn = unsafe extern "C" fn(*mut c_void, usize, usize) -> c_int;
/// `exit(lock, p, session)`.
pub type ExitFn = unsafe extern "C" fn(*mut c_void, usize, usize);
/// `destroy(lock)`.
pub type DestroyFn = unsafe extern "C" fn(*mut c_void);
/// The exported function returning the descriptor.
pub type DescribeFn = unsafe extern "C" fn() -> *const Descriptor;

/// `struct lockbench_params`.
#[repr(C)]
pub struct Params {
    /// `sizeof(struct lockbench_params)`.
    pub size: u32,
    /// 0: spin; otherwise spins before yielding between tries.
    pub spins: u32,
    /// Processes.
    pub n: usize,
    /// Capacity of a k-exclusion lock.
    pub k: usize,
    /// Non-zero once the run is given up.
    pub abort: *const u8,
}

/// `struct lockbench_plugin`, version 1.
#[repr(C)]
pub struct Descriptor {
    /// `LOCKBENCH_ABI_VERSION` the plug-in was built with.
    pub abi_version: u32,
    /// `sizeof(struct lockbench_plugin)` as the plug-in was built.
    pub size: u32,
    /// Its name.
    pub name: *const c_char,
    /// A `PROBLEM_*` value.
    pub problem: u32,
    /// `CLAIM_*` bits.
    pub claims: u32,
    /// Where it comes from; may be null.
    pub source: *const c_char,
    /// One line of notes; may be null.
    pub notes: *const c_char,
    /// Builds a lock.
    pub init: Option<InitFn>,
    /// Enters.
    pub enter: Option<EnterFn>,
    /// Leaves.
    pub exit: Option<ExitFn>,
    /// Frees.
    pub destroy: Option<DestroyFn>,
}

/// The descriptor's size in version 1: what a plug-in must declare at least.
pub const DESCRIPTOR_SIZE_V1: usize = std::mem::size_of::<Descriptor>();

#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    /// The offsets a C compiler gives `include/lockbench.h`'s structs on an LP64 target.
    #[test]
    fn the_structs_are_laid_out_as_the_header_s() {
        let d = [
            offset_of!(Descriptor, abi_version),
            offset_of!(Descriptor, size),
            offset_of!(Descriptor, name),
            offset_of!(Descriptor, problem),
            offset_of!(Descriptor, claims),
            offset_of!(Descriptor, source),
            offset_of!(Descriptor, notes),
            offset_of!(Descriptor, init),
            offset_of!(Descriptor, enter),
            offset_of!(Descriptor, exit),
            offset_of!(Descriptor, destroy),
        ];
        assert_eq!(d, [0, 4, 8, 16, 20, 24, 32, 40, 48, 56, 64]);
        assert_eq!(size_of::<Descriptor>(), 72);
        let p = [
            offset_of!(Params, size),
            offset_of!(Params, spins),
            offset_of!(Params, n),
            offset_of!(Params, k),
            offset_of!(Params, abort),
        ];
        assert_eq!(p, [0, 4, 8, 16, 24]);
        assert_eq!(size_of::<Params>(), 32);
    }
}
