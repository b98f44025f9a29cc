//! `lockbench correlate DIR`: model RMRs against hardware coherence counts, with scatter
//! plots.

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::hw::{correlate, results};
use crate::opts::{Format, FormatOpt};

/// Options of `correlate`.
#[derive(clap::Args, Debug)]
#[command(mut_arg("format", |a| a.help("Output format: table or json (default table)")))]
pub struct Args {
    /// Directory of results (`lockbench run` output, with `--rmr` runs).
    pub dir: PathBuf,
    /// Directory the scatter plots (SVG) are written to (default: DIR).
    #[arg(long)]
    pub svg: Option<PathBuf>,
    /// Write no plots.
    #[arg(long)]
    pub no_svg: bool,
    /// Output format: table or json (default table).
    #[command(flatten)]
    pub format: FormatOpt,
}

/// `lockbench correlate DIR`: returns the exit code.
pub fn exec(args: &Args) -> Result<i32> {
    let format = args
        .format
        .pick("correlate", &[Format::Table, Format::Json], Format::Table)?;
    let svg_dir: Option<&Path> = if args.no_svg {
        None
    } else {
        Some(args.svg.as_deref().unwrap_or(&args.dir))
    };
    if let Some(d) = svg_dir {
        crate::opts::out::check_dir(if args.svg.is_some() { "--svg" } else { "DIR" }, d)?;
    }
    let loaded = results::load_modelled(&args.dir)?;
    let report = correlate::correlate(&args.dir, &loaded.runs, svg_dir)?;
    match format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        _ => print!("{}", correlate::table(&report)),
    }
    Ok(0)
}
