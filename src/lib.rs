//! lockbench: measures lock algorithms against their theory.

pub mod locks;
pub mod mem;
pub mod check;
pub mod metrics;
