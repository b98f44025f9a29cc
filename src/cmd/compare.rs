//! `lockbench compare A B`: two result sets point by point; exit 1 when a point regressed
//! beyond `--fail-above` (for CI).

use std::path::PathBuf;

use anyhow::Result;

use crate::opts::{Format, FormatOpt};
use crate::report::compare::{self, Side};
use crate::report::saved;

/// Options of `compare`.
#[derive(clap::Args, Debug)]
#[command(mut_arg("format", |a| a.help("Output format: table, md or json (default table)")))]
pub struct Args {
    /// The reference result set (a directory `run` or `sweep` saved to).
    pub a: PathBuf,
    /// The result set compared with it.
    pub b: PathBuf,
    /// Exit 1 when some point's throughput in B is lower than in A by more than this (e.g.
    /// 5%) and the difference exceeds the noise.
    #[arg(long, value_name = "X%")]
    pub fail_above: Option<String>,
    /// Output format: table, md or json (default table).
    #[command(flatten)]
    pub format: FormatOpt,
}

/// The formats `compare` writes.
const WRITES: [Format; 3] = [Format::Table, Format::Md, Format::Json];

/// `lockbench compare A B`: exit 1 when `--fail-above` is exceeded.
pub fn exec(args: &Args) -> Result<i32> {
    let format = args.format.pick("compare", &WRITES, Format::Table)?;
    let fail_above = args
        .fail_above
        .as_deref()
        .map(compare::parse_percent)
        .transpose()?;
    let a = saved::load(&args.a)?;
    let b = saved::load(&args.b)?;
    let (points, only_a, only_b) = compare::compare(&a, &b, fail_above);
    if points.is_empty() {
        return Err(compare::nothing_in_common(&args.a, &args.b).into());
    }
    let sides = [
        Side {
            dir: &args.a,
            first: &a[0],
        },
        Side {
            dir: &args.b,
            first: &b[0],
        },
    ];
    let out = compare::render(format, sides, fail_above, &points, [&only_a, &only_b])?;
    print!("{out}");
    if let Some(line) = compare::regressions(&points, fail_above) {
        eprintln!("error: {line}");
        return Ok(1);
    }
    Ok(0)
}
