//! What a run measures: latency histograms, fairness, hardware and software counters.

pub mod counters;
pub mod fairness;
pub mod latency;
pub mod stats;
