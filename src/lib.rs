//! lockbench: measures lock algorithms against their theory.

pub mod check;
pub mod cli;
pub mod cmd;
pub mod engine;
pub mod error;
pub mod hw;
pub mod locks;
pub mod mem;
pub mod metrics;
pub mod mp;
pub mod opts;
pub mod registry;
pub mod report;
pub mod rmr;
pub mod runner;
pub mod table;
pub mod verify;
pub mod workload;
