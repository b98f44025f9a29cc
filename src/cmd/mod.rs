//! One file per subcommand: its options (`Args`) and its entry point (`exec`), which parses
//! nothing further and calls the engine below it.

pub mod app;
pub mod calibrate;
pub mod claims;
pub mod compare;
pub mod correlate;
pub mod fidelity;
pub mod list;
pub mod mp_model;
pub mod mp_run;
pub mod predict;
pub mod report;
pub mod rmr;
pub mod run;
pub mod sim;
pub mod sweep;
pub mod verify;
