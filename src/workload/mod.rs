//! The workload of a run: which session each request asks for ([`Mix`]), and the calibrated
//! busy work of the critical section and think time ([`Delay`], [`SharedLines`]).

pub mod delay;
pub mod mix;

pub use delay::{format_duration, parse_duration, Delay, SharedLines};
pub use mix::{Mix, Sampler};
