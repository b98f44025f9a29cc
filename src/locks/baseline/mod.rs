//! The baselines: the locks people actually use, run through the same interface.

pub mod condvar;
pub mod external;
pub mod noop;
pub mod spinning;
pub mod ticket;
