//! `lockbench list`: the locks with their problem, source and claims.

use anyhow::Result;
use clap::Args as ClapArgs;

use crate::opts::{Format, FormatOpt};
use crate::registry::registry;
use crate::table::{Align, Table};

/// Options of `list`.
#[derive(ClapArgs, Debug)]
#[command(mut_arg("format", |a| a.help("Output format: table or json (default table).")))]
pub struct Args {
    /// `--format`: table (default) or json.
    #[command(flatten)]
    pub format: FormatOpt,
}

/// Prints the listing.
pub fn exec(args: &Args) -> Result<i32> {
    let format = args
        .format
        .pick("list", &[Format::Table, Format::Json], Format::Table)?;
    print!("{}", render(format)?);
    Ok(0)
}

/// The listing in `format`.
fn render(format: Format) -> Result<String> {
    let infos: Vec<_> = registry().into_iter().map(|e| e.info).collect();
    if format == Format::Json {
        return Ok(serde_json::to_string_pretty(&infos)? + "\n");
    }
    let rows: Vec<[String; 7]> = infos
        .iter()
        .map(|i| {
            [
                i.name.to_string(),
                i.problem.name().to_string(),
                if i.fcfs { "yes" } else { "no" }.to_string(),
                if i.bounded { "yes" } else { "no" }.to_string(),
                i.rmr.to_string(),
                i.source.to_string(),
                if i.safe {
                    i.notes.to_string()
                } else {
                    format!("[not in `all`] {}", i.notes)
                },
            ]
        })
        .collect();
    let headers = [
        "lock", "problem", "fcfs", "bounded", "rmr", "source", "notes",
    ];
    let mut t = Table::new(|_| Align::Left);
    t.row(headers);
    for r in rows {
        t.row(r);
    }
    Ok(t.render())
}
