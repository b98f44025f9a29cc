//! `lockbench predict DIR`: passage times predicted from model RMRs and a calibration, against
//! the measured ones.

use std::path::PathBuf;

use anyhow::Result;

use crate::hw::{self, predict, results};
use crate::opts::{CalibrationOpt, Format, FormatOpt};

/// Options of `predict`.
#[derive(clap::Args, Debug)]
#[command(mut_arg("format", |a| a.help("Output format: table or json (default table)")))]
pub struct Args {
    /// Directory of results (`lockbench run` output, with `--rmr` runs and a 1-thread run of
    /// each configuration).
    pub dir: PathBuf,
    /// `--calibration`: the calibration to predict with (default reports/calibration.json).
    #[command(flatten)]
    pub calibration: CalibrationOpt,
    /// Output format: table or json (default table).
    #[command(flatten)]
    pub format: FormatOpt,
}

/// `lockbench predict DIR`: returns the exit code.
pub fn exec(args: &Args) -> Result<i32> {
    let format = args
        .format
        .pick("predict", &[Format::Table, Format::Json], Format::Table)?;
    let cal = hw::read_calibration(
        &args
            .calibration
            .calibration
            .clone()
            .unwrap_or_else(|| PathBuf::from(hw::DEFAULT_CALIBRATION)),
    )?;
    let loaded = results::load_modelled(&args.dir)?;
    let report = predict::predict(&loaded.runs, &cal);
    match format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        _ => print!("{}", predict::table(&report)),
    }
    Ok(0)
}
