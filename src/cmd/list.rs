//! `lockbench list`: the locks with their problem, claims and source paper. The table fits 100
//! columns (the RMR class in short, the source wrapped); `--lock NAME` shows one lock in full
//! (its notes, its RMR claim and the citation of its paper); `--format csv|json|md` write every
//! field.

use std::fmt::Write as _;

use anyhow::Result;
use clap::Args as ClapArgs;
use serde::Serialize;

use crate::locks::sources::{cite_source, Citation, CITATIONS};
use crate::locks::LockInfo;
use crate::opts::{Format, FormatOpt};
use crate::registry::{lookup, plugin, registry};

/// The width the table keeps within.
pub const WIDTH: usize = 100;

/// Options of `list`.
#[derive(ClapArgs, Debug)]
#[command(mut_arg("format", |a| a.help("Output format: table (default), csv, json or md.")))]
pub struct Args {
    /// `--format`: table (default), csv, json or md.
    #[command(flatten)]
    pub format: FormatOpt,
    /// Show this lock in full: its notes, RMR claim and the citation of its paper.
    #[arg(long, value_name = "NAME")]
    pub lock: Option<String>,
    /// Show what the C plug-in at PATH offers (its descriptor, checked as `--lock plugin:PATH`
    /// checks it).
    #[arg(long, value_name = "PATH", conflicts_with = "lock")]
    pub plugin: Option<String>,
}

/// Prints the listing.
pub fn exec(args: &Args) -> Result<i32> {
    let format = args.format.pick(
        "list",
        &[Format::Table, Format::Csv, Format::Json, Format::Md],
        Format::Table,
    )?;
    let plugin = args.plugin.as_deref().map(plugin::load).transpose()?;
    let infos: Vec<LockInfo> = match (&args.lock, &plugin) {
        (_, Some(p)) => vec![p.info.clone()],
        (Some(name), None) => vec![lookup(name)?.info],
        (None, None) => registry().into_iter().map(|e| e.info).collect(),
    };
    let text = match format {
        Format::Json => json(&infos)?,
        Format::Csv => csv(&infos),
        Format::Md => md(&infos),
        Format::Table if plugin.is_some() => {
            let p = plugin.as_ref().expect("matched");
            detail(&infos[0])
                + &hang(
                    "  plug-in:  ",
                    &format!(
                        "{} (ABI version {}): `--lock plugin:PATH` in run, sweep and fidelity; not verify or rmr, which need the register abstraction",
                        crate::opts::io::shown(&p.path),
                        p.abi_version
                    ),
                )
        }
        Format::Table if args.lock.is_some() => infos.iter().map(detail).collect(),
        Format::Table => table(&infos),
    };
    print!("{text}");
    Ok(0)
}

/// A lock with the citation of its paper, as JSON writes it.
#[derive(Serialize)]
struct Cited<'a> {
    #[serde(flatten)]
    info: &'a LockInfo,
    /// The paper its source names (null for baselines and reference locks).
    citation: Option<&'static Citation>,
    /// Its RMR bound per model, as its file states it (empty: none claimed).
    bounds: Vec<BoundShown>,
    /// Its seeded mutants, as its file describes them.
    mutants: Vec<MutantShown>,
}

fn json(infos: &[LockInfo]) -> Result<String> {
    let cited: Vec<Cited> = infos
        .iter()
        .map(|info| Cited {
            info,
            citation: cite_source(info.source),
            bounds: bounds(info),
            mutants: mutants(info),
        })
        .collect();
    Ok(serde_json::to_string_pretty(&cited)? + "\n")
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// The RMR claim in short: up to its first aside (` (`) or semicolon.
fn rmr_short(rmr: &str) -> &str {
    let end = [rmr.find(" ("), rmr.find(';')]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(rmr.len());
    rmr[..end].trim_end()
}

/// A lock's paper as one line: `Authors, "Title", Venue.`, or empty.
fn cite_line(info: &LockInfo) -> String {
    cite_source(info.source).map_or(String::new(), Citation::line)
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn csv(infos: &[LockInfo]) -> String {
    let mut out = String::from("name,problem,fcfs,bounded,rmr,safe,source,citation,notes\n");
    for i in infos {
        let fields = [
            i.name.to_string(),
            i.problem.name().to_string(),
            i.fcfs.to_string(),
            i.bounded.to_string(),
            i.rmr.to_string(),
            i.safe.to_string(),
            i.source.to_string(),
            cite_line(i),
            i.notes.to_string(),
        ];
        let row: Vec<String> = fields.iter().map(|f| csv_field(f)).collect();
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out
}

fn md(infos: &[LockInfo]) -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let mut out =
        String::from("| lock | problem | fcfs | bounded | rmr | in `all` | source | notes |\n");
    out.push_str("|---|---|---|---|---|---|---|---|\n");
    for i in infos {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} | {} | {} | {} |",
            i.name,
            i.problem.name(),
            yes(i.fcfs),
            yes(i.bounded),
            cell(i.rmr),
            yes(i.safe),
            cell(i.source),
            cell(i.notes)
        );
    }
    out.push_str("\nThe papers (seeds):\n\n");
    for c in cited_seeds(infos) {
        let _ = writeln!(out, "- seed {}: {}", c.seed, c.line());
    }
    out
}

/// The seeds the listed locks cite, in order (all five for the whole registry).
fn cited_seeds(infos: &[LockInfo]) -> Vec<&'static Citation> {
    if infos.len() > 1 {
        return CITATIONS.iter().collect();
    }
    infos.iter().filter_map(|i| cite_source(i.source)).collect()
}

/// `text` broken at spaces into lines of at most `width` characters (a longer word stands
/// alone on its line).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let len = line.chars().count();
        if len > 0 && len + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// `text` wrapped to `WIDTH` with `indent` spaces before every line after the first.
fn hang(first: &str, text: &str) -> String {
    let pad = " ".repeat(first.chars().count());
    let mut out = String::new();
    for (j, l) in wrap(text, WIDTH - pad.len()).iter().enumerate() {
        let _ = writeln!(out, "{}{l}", if j == 0 { first } else { &pad });
    }
    out
}

/// The default table: one lock a row, the source wrapped in the last column, then the papers.
fn table(infos: &[LockInfo]) -> String {
    let rows: Vec<[String; 6]> = infos
        .iter()
        .map(|i| {
            [
                i.name.to_string(),
                i.problem.name().to_string(),
                yes(i.fcfs).to_string(),
                yes(i.bounded).to_string(),
                rmr_short(i.rmr).to_string(),
                if i.safe {
                    i.source.to_string()
                } else {
                    format!("{} [not in `all`]", i.source)
                },
            ]
        })
        .collect();
    let headers = ["lock", "problem", "fcfs", "bounded", "rmr", "source"];
    let mut widths = headers.map(|h| h.chars().count());
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r.iter()).take(5) {
            *w = (*w).max(c.chars().count());
        }
    }
    let lead: usize = widths[..5].iter().map(|w| w + 2).sum();
    let source_w = WIDTH.saturating_sub(lead).max(20);
    let mut out = String::new();
    let all = std::iter::once(headers.map(String::from)).chain(rows);
    for r in all {
        let mut first = String::new();
        for (c, w) in r.iter().zip(widths).take(5) {
            let _ = write!(first, "{c:<w$}  ");
        }
        for (j, l) in wrap(&r[5], source_w).iter().enumerate() {
            let head = if j == 0 { first.as_str() } else { "" };
            let _ = writeln!(out, "{head:<lead$}{l}");
        }
    }
    out.push_str("\nThe papers (seeds):\n");
    for c in CITATIONS {
        out.push_str(&hang(&format!("  {}  ", c.seed), &c.line()));
    }
    out.push('\n');
    out.push_str(&hang(
        "",
        "`lockbench list --lock NAME` shows a lock's notes and full RMR claim; \
         --format csv|json|md write every field.",
    ));
    out
}

/// One lock in full.
fn detail(i: &LockInfo) -> String {
    let mut out = format!("{} ({})\n", i.name, i.problem.name());
    out.push_str(&hang("  source:   ", i.source));
    if let Some(c) = cite_source(i.source) {
        out.push_str(&hang(
            "  paper:    ",
            &format!("seed {}: {}", c.seed, c.line()),
        ));
    }
    let _ = writeln!(
        out,
        "  claims:   FCFS {}, bounded registers {}",
        yes(i.fcfs),
        yes(i.bounded)
    );
    out.push_str(&hang("  rmr:      ", i.rmr));
    let _ = writeln!(
        out,
        "  in `all`: {}",
        if i.safe {
            "yes"
        } else {
            "no (a negative control or calibration entry: expected to show violations)"
        }
    );
    out.push_str(&hang("  notes:    ", i.notes));
    for b in bounds(i) {
        out.push_str(&hang(
            "  bound:    ",
            &format!(
                "{} {} RMRs per passage, {} ({}; `rmr --lock {}` checks it)",
                b.model, b.formula, b.direction, b.source, i.name
            ),
        ));
    }
    let mutants = mutants(i);
    if !mutants.is_empty() {
        let _ = writeln!(
            out,
            "  mutants:  {} (`verify --mutants {}` tries them)",
            mutants.len(),
            i.name
        );
    }
    for m in mutants {
        let equivalent = m
            .equivalent
            .map_or(String::new(), |w| format!("; equivalent: {w}"));
        out.push_str(&hang(
            "    ",
            &format!("{}: {}: {}{equivalent}", m.name, m.line, m.change),
        ));
    }
    out
}

/// N at which a bound is evaluated to show its formula (the formula is in N; its value is not
/// shown).
const BOUND_N: usize = 4;

/// A lock's RMR bound under one model, as `list` shows it (from the lock's own file).
#[derive(Serialize)]
struct BoundShown {
    model: &'static str,
    direction: &'static str,
    formula: String,
    source: String,
}

/// The bounds the lock's file states, per model.
fn bounds(i: &LockInfo) -> Vec<BoundShown> {
    [
        crate::mem::Model::Cc,
        crate::mem::Model::CcWb,
        crate::mem::Model::Dsm,
    ]
    .into_iter()
    .filter_map(|m| {
        (i.bound)(m, BOUND_N).map(|b| BoundShown {
            model: m.name(),
            direction: match b.direction {
                crate::locks::Direction::Upper => "upper",
                crate::locks::Direction::Lower => "lower (the paper's worst case)",
            },
            formula: b.formula,
            source: b.source,
        })
    })
    .collect()
}

/// A seeded mutant, as `list` shows it (from the lock's own file).
#[derive(Serialize)]
struct MutantShown {
    name: &'static str,
    line: &'static str,
    change: &'static str,
    equivalent: Option<&'static str>,
}

fn mutants(i: &LockInfo) -> Vec<MutantShown> {
    (i.mutants)()
        .into_iter()
        .map(|m| MutantShown {
            name: m.name,
            line: m.line,
            change: m.change,
            equivalent: m.equivalent,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> Vec<LockInfo> {
        registry().into_iter().map(|e| e.info).collect()
    }

    #[test]
    fn the_table_fits_100_columns_and_names_every_lock() {
        let infos = all();
        let text = table(&infos);
        for l in text.lines() {
            assert!(
                l.chars().count() <= WIDTH,
                "{} columns: {l}",
                l.chars().count()
            );
        }
        for i in &infos {
            assert!(text.lines().any(|l| l.starts_with(i.name)), "{}", i.name);
        }
        for c in CITATIONS {
            assert!(text.contains(&c.title[..20]), "{}", c.seed);
        }
    }

    #[test]
    fn wrapping_keeps_words_and_width() {
        let w = wrap("aa bb cc dd", 5);
        assert_eq!(w, vec!["aa bb", "cc dd"]);
        assert_eq!(wrap("", 5), vec![""]);
        assert_eq!(wrap("abcdefgh ij", 4), vec!["abcdefgh", "ij"]);
    }

    #[test]
    fn short_rmr_stops_at_the_first_aside() {
        assert_eq!(rmr_short("O(N) CC (seed 000 §3); DSM: no claim"), "O(N) CC");
        assert_eq!(rmr_short("n/a"), "n/a");
    }

    #[test]
    fn csv_has_one_row_per_lock_with_fixed_columns() {
        let infos = all();
        let text = csv(&infos);
        let mut rdr = csv_rows(&text);
        let header = rdr.remove(0);
        assert_eq!(header.len(), 9);
        assert_eq!(rdr.len(), infos.len());
        assert!(rdr.iter().all(|r| r.len() == 9));
        let glb = rdr.iter().find(|r| r[0] == "glb").unwrap();
        assert!(glb[7].contains("Group mutual exclusion in linear time and space"));
    }

    /// A small CSV reader: fields split at commas outside quotes.
    fn csv_rows(text: &str) -> Vec<Vec<String>> {
        text.lines()
            .map(|line| {
                let (mut fields, mut f, mut quoted) = (Vec::new(), String::new(), false);
                let mut chars = line.chars().peekable();
                while let Some(c) = chars.next() {
                    match c {
                        '"' if quoted && chars.peek() == Some(&'"') => {
                            f.push('"');
                            chars.next();
                        }
                        '"' => quoted = !quoted,
                        ',' if !quoted => fields.push(std::mem::take(&mut f)),
                        c => f.push(c),
                    }
                }
                fields.push(f);
                fields
            })
            .collect()
    }

    #[test]
    fn the_detail_view_has_the_notes_and_the_paper() {
        let glb = lookup("glb").unwrap().info;
        let text = detail(&glb);
        assert!(text.starts_with("glb (gme)"));
        assert!(text.contains("He, K. Gopalakrishnan, E. Gafni"));
        let notes_start: String = glb
            .notes
            .split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ");
        assert!(text.contains(&notes_start), "{text}");
        assert!(text.lines().all(|l| l.chars().count() <= WIDTH));
    }
}
