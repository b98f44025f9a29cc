//! What each process does in a run: which session it asks for ([`Mix`]), how long it works
//! inside and between critical sections ([`Delay`]), and which shared data it touches inside
//! ([`SharedLines`]).

mod delay;
mod lines;
pub(crate) mod ln;
mod mix;
pub mod rng;
mod sampler;

pub use delay::{format_duration, parse_duration, Delay};
pub use lines::SharedLines;
pub use mix::Mix;
pub use sampler::Sampler;
