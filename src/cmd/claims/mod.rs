//! `lockbench claims`: every checkable claim of the five papers as one ledger, the paper's
//! figure beside ours and a verdict on each, every figure produced by running the `lockbench`
//! command the row names (rmr, verify, sim), never a stored number.

mod checks;
mod growth;
mod ledger;
mod probe;
mod seed000;
mod seed001;
mod seed002;
mod seed003;
mod seed004;
mod table1;

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context as _, Result};
use clap::Args as ClapArgs;

use crate::error::UsageError;
use crate::opts::{Format, FormatOpt};
use checks::Level;
use ledger::{Row, Spec};

/// The papers, by seed number.
pub const PAPERS: [&str; 5] = ["000", "001", "002", "003", "004"];

/// Options of `claims`.
#[derive(ClapArgs, Debug)]
#[command(mut_arg("format", |a| a.help("Output format: table (default), json (the rows as data) or md (a Markdown table for an artifact appendix).")))]
pub struct Args {
    /// Only these papers, comma-separated: 000 (GME in linear time and space), 001 (Zehavi
    /// k-exclusion), 002 (bounded Bakery), 003 (TokenGME), 004 (LKCS).
    #[arg(long, value_delimiter = ',')]
    pub paper: Vec<String>,
    /// Small N, few seeds and schedules: the ledger in under two minutes (CI).
    #[arg(long)]
    pub quick: bool,
    /// Seed 000's Table 1: the paper's RMR, space and P2–P5 entries beside ours, per algorithm.
    #[arg(long)]
    pub table1: bool,
    /// A ledger saved with --format json: exit 1 when a claim that held there does not now.
    #[arg(long)]
    pub baseline: Option<PathBuf>,
    /// Check the ledger itself: every `verify` check of LOCK explores its mutant NAME instead
    /// (`LOCK/NAME`, as `verify --mutants` lists them, or lkcs/k-plus-one, lkcs/l-minus-one,
    /// lmutin/l-minus-one: seed 004's Cond_i off by one in `sim`); only the rows whose checks
    /// run the mutant are shown, and a row it breaks must not hold.
    #[arg(long, value_name = "LOCK/NAME")]
    pub mutant: Option<String>,
    /// Checks run at once (0: one per CPU).
    #[arg(long, default_value_t = 0)]
    pub jobs: usize,
    /// `--format`: table, json or md.
    #[command(flatten)]
    pub format: FormatOpt,
}

/// Every claim of the papers asked for, in ledger order.
fn specs(papers: &[String], level: &Level) -> Vec<Spec> {
    let mut all = Vec::new();
    for p in papers {
        all.extend(match p.as_str() {
            "000" => seed000::specs(level),
            "001" => seed001::specs(level),
            "002" => seed002::specs(level),
            "003" => seed003::specs(level),
            _ => seed004::specs(level),
        });
    }
    all
}

fn papers(args: &Args) -> Result<Vec<String>, UsageError> {
    if args.paper.is_empty() {
        return Ok(PAPERS.iter().map(|p| p.to_string()).collect());
    }
    for p in &args.paper {
        if !PAPERS.contains(&p.as_str()) {
            return Err(UsageError(format!(
                "--paper {p}: give one of {} (the seed numbers)",
                PAPERS.join(", ")
            )));
        }
    }
    Ok(args.paper.clone())
}

fn mutant(args: &Args) -> Result<Option<(String, String)>, UsageError> {
    let Some(m) = &args.mutant else {
        return Ok(None);
    };
    if let Some((lock, name)) = seed004::mutant(m) {
        return Ok(Some((lock.to_string(), name.to_string())));
    }
    let found = crate::verify::mutants::select(m).map_err(UsageError)?;
    match (m.split_once('/'), found.as_slice()) {
        (Some((lock, name)), [_]) => Ok(Some((lock.to_string(), name.to_string()))),
        _ => Err(UsageError(format!(
            "--mutant {m}: name one mutant as LOCK/NAME (`lockbench verify --mutants all` lists them)"
        ))),
    }
}

/// Runs the checks of `specs` and judges each row.
fn ledger(specs: &[Spec], jobs: usize, quiet: bool) -> Result<Vec<Row>> {
    let exe = std::env::current_exe().context("cannot find the lockbench binary to run checks")?;
    let commands: Vec<Vec<String>> = specs.iter().flat_map(|s| s.checks.clone()).collect();
    let jobs = if jobs == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        jobs
    };
    let progress = |done: usize, total: usize, c: &[String]| {
        if !quiet {
            let mut e = crate::opts::io::stderr();
            let _ = write!(
                e,
                "\r\x1b[2K[{done}/{total}] {}",
                ledger::command_line(c)
                    .chars()
                    .take(100)
                    .collect::<String>()
            );
            if done == total {
                let _ = writeln!(e);
            }
        }
    };
    let outcomes = probe::run_all(&exe, &commands, jobs, &progress);
    let mut charged: Vec<&Vec<String>> = Vec::new();
    let mut rows = Vec::new();
    for s in specs {
        let mut outputs = Vec::new();
        let mut failure = None;
        let mut seconds = 0.0;
        for c in &s.checks {
            let (result, secs) = &outcomes[c];
            if !charged.contains(&c) {
                charged.push(c);
                seconds += secs;
            }
            match result {
                Ok(v) => outputs.push(v.clone()),
                Err(e) => {
                    failure.get_or_insert(format!("{}: {e}", ledger::command_line(c)));
                }
            }
        }
        let judged = match failure {
            Some(e) => Err(format!("the check failed to run: {e}")),
            None => (s.judge)(&outputs)
                .map_err(|e| format!("the check's output could not be judged: {e}")),
        };
        let judged = judged.unwrap_or_else(|e| ledger::Judged {
            ours: "-".into(),
            effort: "-".into(),
            verdict: ledger::Verdict::NotRun(e),
        });
        rows.push(Row {
            id: s.id.clone(),
            paper_id: s.paper_id().to_string(),
            place: s.place.clone(),
            claim: s.claim.clone(),
            paper: s.paper.clone(),
            check: s.checks.iter().map(|c| ledger::command_line(c)).collect(),
            ours: judged.ours,
            effort: judged.effort,
            verdict: judged.verdict,
            seconds,
        });
    }
    Ok(rows)
}

/// `lockbench claims`: 0, or 1 when --baseline names a claim that held and does not now or
/// when a check could not run.
pub fn exec(args: &Args) -> Result<i32> {
    let format = args.format.pick(
        "claims",
        &[Format::Table, Format::Json, Format::Md],
        Format::Table,
    )?;
    let papers = papers(args)?;
    let level = Level {
        quick: args.quick,
        mutant: mutant(args)?,
    };
    let baseline: Option<Vec<Row>> = match &args.baseline {
        None => None,
        Some(p) => {
            let text =
                crate::opts::io::read_text(p, crate::opts::io::RESULTS_CAP).map_err(|e| {
                    UsageError(format!(
                    "--baseline {}: {e}; give a ledger saved with `lockbench claims --format json`",
                    p.display()
                ))
                })?;
            Some(serde_json::from_str(&text).map_err(|e| {
                UsageError(format!(
                    "--baseline {}: not a saved ledger ({e}); save one with `lockbench claims --format json > FILE`",
                    p.display()
                ))
            })?)
        }
    };
    let started = Instant::now();
    let quiet = !std::io::IsTerminal::is_terminal(&std::io::stderr());
    if args.table1 {
        let t = table1::specs(&level);
        let rows = ledger(&t, args.jobs, quiet)?;
        print!("{}", table1::render(&rows, format)?);
        return Ok(0);
    }
    let mut all = specs(&papers, &level);
    if level.mutant.is_some() {
        // Only the rows whose checks run the mutant: the others are the ledger's as it is.
        all.retain(|s| s.checks.iter().any(|c| checks::runs_mutant(c)));
    }
    let rows = ledger(&all, args.jobs, quiet)?;
    match format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&rows)?),
        Format::Md => print!("{}", ledger::markdown(&rows)),
        _ => {
            print!("{}", ledger::table(&rows));
            println!(
                "\n{} level, {:.0} s",
                if args.quick { "quick" } else { "full" },
                started.elapsed().as_secs_f64()
            );
        }
    }
    let not_run = rows
        .iter()
        .filter(|r| matches!(r.verdict, ledger::Verdict::NotRun(_)))
        .count();
    if let Some(before) = baseline {
        let before: Vec<Row> = before
            .into_iter()
            .filter(|b| papers.contains(&b.paper_id))
            // A mutant's ledger has only the rows it reaches.
            .filter(|b| level.mutant.is_none() || rows.iter().any(|r| r.id == b.id))
            .collect();
        let lost = ledger::regressions(&before, &rows);
        if !lost.is_empty() {
            crate::opts::io::errln!(
                "{} claim(s) held in {} and do not now:",
                lost.len(),
                args.baseline
                    .as_ref()
                    .map_or(String::new(), |p| p.display().to_string())
            );
            for l in &lost {
                crate::opts::io::errln!("  {l}");
            }
            return Ok(1);
        }
    }
    if not_run > 0 {
        crate::opts::io::errln!(
            "{not_run} check(s) could not run, so their claims have no verdict: rerun the `$` command of each `not run` row to see why"
        );
        return Ok(1);
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_that_cannot_run_has_no_verdict() {
        // The test binary is `current_exe` here: it prints no JSON for these arguments, as a
        // `lockbench` that cannot run a check would not.
        let spec = Spec::new(
            "000/x",
            "§1",
            "c",
            "p",
            vec![checks::args("--no-such-option")],
            |_| unreachable!("a check that did not run is not judged"),
        );
        let judged_badly = Spec::new("000/y", "§1", "c", "p", Vec::new(), |_| {
            Err("the run has no such point".into())
        });
        let rows = ledger(&[spec, judged_badly], 1, true).unwrap();
        for r in &rows {
            assert_eq!(r.verdict.word(), "not run", "{r:?}");
        }
        assert!(rows[0].verdict.why().contains("failed to run"));
        assert!(rows[1].verdict.why().contains("no such point"));
        assert!(ledger::table(&rows).contains("2 not run"));
    }
}
