//! A crates.io lock in one line: any `lock_api::RawMutex` (here parking_lot's eventually-fair
//! mutex) joins the built-in locks as a mutex, and every command but `verify` and `rmr` (which
//! need the register abstraction) runs it:
//!
//! ```text
//! cargo run --release --example fair_mutex -- run --lock fair-mutex,parking-lot-mutex --threads 2
//! ```
//!
//! A `lock_api::RawRwLock` joins the same way as a GME lock of two kinds of session
//! (`LockEntry::raw_rwlock`: session 0 shared, every other exclusive).

use lockbench::locks::{LockInfo, Problem};
use lockbench::registry::{LockEntry, Registry};

const FAIR_MUTEX: LockInfo = LockInfo::baseline(
    "fair-mutex",
    Problem::Mutex,
    false,
    "parking_lot::RawFairMutex: hands the lock to a parked waiter on unlock",
);

fn main() {
    lockbench::main_with(Registry::builtin().with(
        LockEntry::raw_mutex::<parking_lot::RawFairMutex>(FAIR_MUTEX),
    ))
}
