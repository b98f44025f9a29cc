//! The hardware side: what cache-line transfers cost on this machine (`calibrate`), how the
//! model's RMRs line up with hardware coherence counts (`correlate`), and how well RMRs times
//! transfer cost predict passage time (`predict`).
//!
//! `correlate` and `predict` read results saved by `lockbench run` (with `--rmr` for the model
//! side, `--counters coherence` for the hardware side); see [`results`] for what they read.

pub mod calibrate;
pub mod correlate;
pub mod predict;
pub mod results;
pub mod section;
pub mod stats;
pub mod svg;

use std::path::Path;

use crate::error::UsageError;

/// Where `calibrate` saves and `predict` reads the calibration by default.
pub const DEFAULT_CALIBRATION: &str = "reports/calibration.json";

/// The 1-minute load average, when readable.
pub fn load_average() -> Option<f64> {
    crate::opts::io::read_system("/proc/loadavg")?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Reads a calibration file; a missing or malformed one is bad input.
pub fn read_calibration(path: &Path) -> Result<calibrate::Calibration, UsageError> {
    let text = crate::opts::io::read_text(path, crate::opts::io::RESULTS_CAP).map_err(|e| {
        UsageError(format!(
            "cannot read the calibration {} ({e}); run `lockbench calibrate` first or give \
             --calibration FILE",
            crate::opts::io::shown(path)
        ))
    })?;
    let cal: calibrate::Calibration = serde_json::from_str(&text).map_err(|e| {
        UsageError(format!(
            "{} is not a lockbench calibration ({e}); run `lockbench calibrate` to make one",
            crate::opts::io::shown(path)
        ))
    })?;
    cal.validate().map_err(|e| {
        UsageError(format!(
            "{} is not a usable calibration: {e}; run `lockbench calibrate` again",
            crate::opts::io::shown(path)
        ))
    })?;
    Ok(cal)
}
