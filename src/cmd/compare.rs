//! `lockbench compare A B`: two result sets point by point; exit 1 when a point regressed
//! beyond `--fail-above` (for CI).

use std::path::PathBuf;

use anyhow::Result;

use crate::opts::{Format, FormatOpt};
use crate::report::compare::{self, Side};
use crate::report::{baselines, compare_doc, saved};

/// A and B as directories: a name that is no directory is a saved baseline's
/// (reports/baselines/NAME).
fn sides_of(args: &Args) -> (PathBuf, PathBuf) {
    let root = std::path::Path::new("reports");
    (
        baselines::resolve(&args.a, root),
        baselines::resolve(&args.b, root),
    )
}

/// Options of `compare`.
#[derive(clap::Args, Debug)]
#[command(mut_arg("format", |a| a.help("Output format: table, md or json (default table)")))]
pub struct Args {
    /// The reference result set: a directory `run` or `sweep` saved to, or the name of a
    /// baseline `run --save-as NAME` saved (reports/baselines/NAME).
    pub a: PathBuf,
    /// The result set compared with it (a directory or a saved baseline's name).
    pub b: PathBuf,
    /// Also write DIR/compare.md with A-against-B plots (throughput per lock, entry-latency
    /// percentiles) under DIR/plots/.
    #[arg(long, value_name = "DIR")]
    pub plots: Option<PathBuf>,
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
    if let Some(dir) = &args.plots {
        // Where the plots go, checked before anything is read or written.
        crate::opts::out::check_dir("--plots", dir)?;
    }
    let (dir_a, dir_b) = sides_of(args);
    let a = saved::load(&dir_a)?;
    let b = saved::load(&dir_b)?;
    let (points, only_a, only_b) = compare::compare(&a, &b, fail_above);
    if points.is_empty() {
        return Err(compare::nothing_in_common(&dir_a, &dir_b).into());
    }
    let sides = [
        Side {
            dir: &dir_a,
            first: &a[0],
        },
        Side {
            dir: &dir_b,
            first: &b[0],
        },
    ];
    let warnings = compare_doc::warnings(&a, &b);
    let only = [only_a.as_slice(), only_b.as_slice()];
    let out = compare::render(format, sides, fail_above, &points, only, &warnings)?;
    print!("{out}");
    if let Some(dir) = &args.plots {
        let md = compare::render(Format::Md, sides, fail_above, &points, only, &warnings)?;
        let path = compare_doc::write(dir, &md, &a, &b, &points)?;
        crate::opts::io::errln!("compare: {}", crate::opts::io::shown(&path));
    }
    if let Some(line) = compare::regressions(&points, fail_above) {
        crate::opts::io::errln!("error: {line}");
        return Ok(1);
    }
    Ok(0)
}
