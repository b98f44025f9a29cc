//! The engine: from a command's options to results. It knows nothing of the command line's
//! parsing; the commands above call it, and it calls the registry, the runner and the reports
//! below.

pub mod app;
pub mod fidelity;
pub mod options;
pub mod plan;
pub mod rounds;
pub mod summarize;
pub mod sweep;
