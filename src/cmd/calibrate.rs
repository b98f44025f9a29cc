//! `lockbench calibrate`: measures what moving a cache line between each pair of CPUs costs
//! and saves the matrix for `predict`.

use std::path::PathBuf;

use anyhow::Result;

use crate::hw::{self, calibrate};
use crate::opts::{Format, FormatOpt, OutOpt, RoundsOpt};

/// Most cache lines per timed batch (64 MiB of lines at most, and a batch that times in
/// well under a second).
pub const MAX_LINES: usize = 1 << 20;
/// Most timed batches per operation and CPU pair.
pub const MAX_ROUNDS: usize = 100_000;

/// Options of `calibrate`.
#[derive(clap::Args, Debug)]
#[command(mut_arg("out", |a| a
    .help("Where to save the calibration (JSON)")
    .default_value(hw::DEFAULT_CALIBRATION)))]
#[command(mut_arg("format", |a| a.help("Output format: table or json (default table)")))]
pub struct Args {
    /// CPUs to measure between, e.g. 0-3,8 (default: one CPU per physical core this process
    /// may use).
    #[arg(long)]
    pub cpus: Option<String>,
    /// Cache lines per timed batch.
    #[arg(long, default_value_t = 64)]
    pub lines: usize,
    /// `--rounds`: timed batches per operation and CPU pair; the median is kept (default 201).
    #[command(flatten)]
    pub rounds: RoundsOpt,
    /// Where to save the calibration (JSON).
    #[command(flatten)]
    pub out: OutOpt,
    /// Output format: table or json (default table).
    #[command(flatten)]
    pub format: FormatOpt,
}

/// `lockbench calibrate`: returns the exit code.
pub fn exec(args: &Args) -> Result<i32> {
    let format = args
        .format
        .pick("calibrate", &[Format::Table, Format::Json], Format::Table)?;
    let out = args
        .out
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(hw::DEFAULT_CALIBRATION));
    if args.lines > MAX_LINES {
        return Err(crate::error::UsageError(format!(
            "--lines {}: at most {MAX_LINES} cache lines per batch",
            args.lines
        ))
        .into());
    }
    let rounds = args.rounds.get(201);
    if rounds > MAX_ROUNDS {
        return Err(crate::error::UsageError(format!(
            "--rounds {rounds}: at most {MAX_ROUNDS} batches per operation and pair"
        ))
        .into());
    }
    crate::opts::out::check_file("--out", &out)?;
    let cal = calibrate::calibrate(args.cpus.as_deref(), args.lines, rounds)?;
    calibrate::save(&cal, &out)?;
    match format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&cal)?),
        _ => print!("{}", calibrate::table(&cal)),
    }
    crate::opts::io::errln!("calibration saved to {}", crate::opts::io::shown(&out));
    Ok(0)
}
