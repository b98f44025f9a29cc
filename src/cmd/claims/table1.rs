//! Seed 000's Table 1 (GME algorithms from reads and writes: RMR, space, P2–P5, bounded
//! registers), the paper's entries beside ours for the algorithms lockbench implements, and
//! the paper's alone, marked not implemented, for the others.

use serde_json::Value;

use super::checks::{Explored, Level};
use super::growth;
use super::ledger::{Judged, Row, Spec, Verdict};
use crate::opts::Format;
use crate::table::{Align, Table};

/// The columns after the algorithm's name.
const COLUMNS: [&str; 7] = ["RMR", "Space", "P2", "P3", "P4", "P5", "Bounded"];

/// The paper's rows: algorithm, lockbench lock (if implemented), entries by column.
const PAPER: [(&str, Option<&str>, [&str; 7]); 9] = [
    (
        "Joung [10]",
        None,
        ["∞", "O(N)", "Yes", "Yes", "Yes", "No", "Yes"],
    ),
    (
        "Takamura et al. [14] I",
        None,
        ["∞", "O(N)", "No", "Yes", "No", "No", "No"],
    ),
    (
        "Takamura et al. [14] II",
        None,
        ["O(N)", "O(N)", "Yes", "No", "No", "No", "No"],
    ),
    (
        "Takamura et al. [14] III",
        None,
        ["O(N)", "O(N)", "Yes", "No", "No", "No", "No"],
    ),
    (
        "This work (GLB)",
        Some("glb"),
        ["O(N)", "O(N)", "Yes", "Yes", "Yes", "Yes", "No"],
    ),
    (
        "Keane & Moir [11]",
        None,
        ["O(log N)", "O(N)", "Yes", "No", "No", "No", "Yes"],
    ),
    (
        "Hadzilacos [6]",
        None,
        ["O(N²)", "O(N²)", "Yes", "Yes", "Yes", "Yes", "Yes"],
    ),
    (
        "Jayanti et al. [8]",
        None,
        ["O(N²)", "O(N)", "Yes", "Yes", "Yes", "Yes", "Yes"],
    ),
    (
        "This work (BWBGME)",
        Some("bwb-gme"),
        ["O(N)", "O(N)", "Yes", "Yes", "Yes", "Yes", "Yes"],
    ),
];

fn big_o(class: &str) -> &'static str {
    match class {
        "constant" => "O(1)",
        "linear" => "O(N)",
        "quadratic" => "O(N²)",
        _ => "faster than O(N²)",
    }
}

/// A cell: ours against the paper's entry.
fn cell(ours: String, effort: String, paper: &str) -> Judged {
    let agrees = ours.starts_with(paper);
    Judged::check(ours, effort, agrees, || format!("the paper says {paper}"))
}

/// One spec per (algorithm, column).
pub fn specs(l: &Level) -> Vec<Spec> {
    let mut v = Vec::new();
    for (name, lock, paper) in PAPER {
        let Some(lock) = lock else {
            for (col, entry) in COLUMNS.iter().zip(paper) {
                v.push(Spec::unchecked(
                    &format!("{name}/{col}"),
                    "Table 1",
                    name,
                    entry,
                    Verdict::Open("not implemented in lockbench".into()),
                ));
            }
            continue;
        };
        let rmr = growth::command(l, lock, "cc", "");
        let explore = l.verify(lock, &[3, 4], "--passages 2");
        let bounded = l.verify(lock, &[2, 3], "--passages 3");
        for (i, col) in COLUMNS.iter().enumerate() {
            let entry = paper[i];
            let id = format!("{name}/{col}");
            let spec = match i {
                0 => Spec::new(&id, "Table 1", name, entry, vec![rmr.clone()], move |o| {
                    let pts: Vec<(usize, u64)> =
                        growth::points(&o[0]).iter().map(|p| (p.n, p.max)).collect();
                    Ok(cell(
                        format!(
                            "{} ({})",
                            big_o(growth::class(&pts)),
                            growth::describe(&pts)
                        ),
                        "rmr, worst schedule found per N".into(),
                        entry,
                    ))
                }),
                1 => Spec::new(&id, "Table 1", name, entry, vec![rmr.clone()], move |o| {
                    let pts: Vec<(usize, u64)> = growth::points(&o[0])
                        .iter()
                        .filter_map(|p| p.registers.map(|r| (p.n, r)))
                        .collect();
                    if pts.is_empty() {
                        return Err("rmr reports no register count".into());
                    }
                    Ok(cell(
                        format!(
                            "{} ({} registers)",
                            big_o(growth::class(&pts)),
                            growth::describe(&pts)
                        ),
                        "registers allocated on the counting memory".into(),
                        entry,
                    ))
                }),
                6 => Spec::new(&id, "Table 1", name, entry, bounded.clone(), move |o| {
                    Ok(bounded_cell(o, entry))
                }),
                _ => {
                    let key = [
                        "",
                        "",
                        "deadlock|starv",
                        "bounded exit",
                        "P4 concurrent entry",
                        "FCFS",
                    ][i];
                    Spec::new(&id, "Table 1", name, entry, explore.clone(), move |o| {
                        let e = Explored::of(o);
                        let j = e.property(key);
                        let ours = match j.verdict {
                            Verdict::Holds => format!("Yes ({})", j.ours),
                            Verdict::Differs(_) => format!("No ({})", j.ours),
                            _ => format!("? ({})", j.ours),
                        };
                        Ok(cell(ours, j.effort, entry))
                    })
                }
            };
            v.push(spec);
        }
    }
    v
}

/// Bounded registers: the largest number any process held, per N, against N + 1 (the bound
/// of the bounded algorithms here): past it at some N, the numbers grow with the passages
/// rather than with N.
fn bounded_cell(o: &[Value], paper: &str) -> Judged {
    let e = Explored::of(o);
    let past: Vec<String> = e
        .largest_by_n
        .iter()
        .filter(|(n, t)| *t > *n as i64 + 1)
        .map(|(n, t)| format!("{t} at N = {n}"))
        .collect();
    let ours = match (e.largest_token(), &e.violation) {
        (_, Some((kind, _))) => format!("No ({})", kind.lines().next().unwrap_or("")),
        (None, None) => format!("? (no number reported; {} schedules safe)", e.run),
        (Some(_), None) if !past.is_empty() => {
            format!("No (numbers past N + 1: {})", past.join(", "))
        }
        (Some(t), None) => format!("Yes (largest number {t}, within N + 1)"),
    };
    cell(ours, e.effort(), paper)
}

/// Table 1 as the paper lays it out: one line per algorithm, the paper's entry and ours.
pub fn render(rows: &[Row], format: Format) -> anyhow::Result<String> {
    if format == Format::Json {
        return Ok(serde_json::to_string_pretty(rows)? + "\n");
    }
    let mut lines: Vec<Vec<String>> = Vec::new();
    for (name, _, paper) in PAPER {
        let mut line = vec![name.to_string()];
        for (i, col) in COLUMNS.iter().enumerate() {
            let id = format!("{name}/{col}");
            let r = rows.iter().find(|r| r.id == id);
            line.push(match r {
                Some(r) if r.ours != "-" => {
                    let mark = if r.verdict == Verdict::Holds {
                        ""
                    } else {
                        " ≠"
                    };
                    let short = r.ours.split(" (").next().unwrap_or(&r.ours);
                    format!("{} / {short}{mark}", paper[i])
                }
                _ => format!("{} / -", paper[i]),
            });
        }
        lines.push(line);
    }
    let mut header = vec!["algorithm".to_string()];
    header.extend(COLUMNS.iter().map(|c| c.to_string()));
    let mut out = if format == Format::Md {
        let mut s = format!(
            "| {} |\n|{}\n",
            header.join(" | "),
            "---|".repeat(header.len())
        );
        for l in &lines {
            s.push_str(&format!("| {} |\n", l.join(" | ")));
        }
        s
    } else {
        let mut t = Table::new(|_| Align::Left);
        t.row(header);
        t.rule();
        for l in lines {
            t.row(l);
        }
        t.render()
    };
    out.push_str("\neach cell: the paper's entry / ours (≠: they disagree; -: not implemented)\n");
    for r in rows.iter().filter(|r| r.ours != "-") {
        out.push_str(&format!("  {} [{}] {}\n", r.id, r.verdict.word(), r.effort));
    }
    Ok(out)
}
