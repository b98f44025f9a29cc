//! The ledger's rows: a claim of a paper, the check that reproduces it, and the verdict, with
//! the table, Markdown and JSON they are written as.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::table::{Align, Table};

/// What the check found about a claim.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "verdict", content = "why")]
pub enum Verdict {
    /// Our figure agrees with the paper's (inside its bound, or the paper's value inside our
    /// interval).
    Holds,
    /// Our figure does not agree: by how much and, where we know it, why.
    Differs(String),
    /// Nothing checks it yet: what would.
    Open(String),
    /// It cannot be checked on this machine: why.
    #[serde(rename = "not checkable here")]
    NotCheckableHere(String),
    /// Its check could not run or gave output the ledger could not read: what went wrong. No
    /// verdict either way (`claims` exits 1).
    #[serde(rename = "not run")]
    NotRun(String),
}

impl Verdict {
    /// The verdict's word, as printed.
    pub fn word(&self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Differs(_) => "differs",
            Verdict::Open(_) => "open",
            Verdict::NotCheckableHere(_) => "not checkable here",
            Verdict::NotRun(_) => "not run",
        }
    }

    /// The reason, empty for `holds`.
    pub fn why(&self) -> &str {
        match self {
            Verdict::Holds => "",
            Verdict::Differs(w)
            | Verdict::Open(w)
            | Verdict::NotCheckableHere(w)
            | Verdict::NotRun(w) => w,
        }
    }
}

/// What a check's outputs come to: our figure, how hard it looked, and the verdict.
#[derive(Clone, Debug)]
pub struct Judged {
    /// Our figure, in a few words.
    pub ours: String,
    /// How hard the check looked (processes, passages, schedules, seeds), or the sample.
    pub effort: String,
    /// The verdict.
    pub verdict: Verdict,
}

impl Judged {
    /// `holds` when `ok`, else `differs` with `why`.
    pub fn check(ours: String, effort: String, ok: bool, why: impl FnOnce() -> String) -> Self {
        Judged {
            ours,
            effort,
            verdict: if ok {
                Verdict::Holds
            } else {
                Verdict::Differs(why())
            },
        }
    }
}

/// Turns the JSON outputs of a row's checks (in the order of its commands) into a verdict.
pub type Judge = Box<dyn Fn(&[Value]) -> Result<Judged, String> + Send + Sync>;

/// One claim before it is checked.
pub struct Spec {
    /// `000/thm9`, `003/fig6b`, …
    pub id: String,
    /// Section, figure, theorem or lemma.
    pub place: String,
    /// The claim in a few words.
    pub claim: String,
    /// The paper's figure.
    pub paper: String,
    /// The `lockbench` commands (arguments after the program name) whose JSON the judge reads;
    /// none for a claim nothing checks yet.
    pub checks: Vec<Vec<String>>,
    /// From the checks' outputs to the verdict.
    pub judge: Judge,
}

impl Spec {
    /// A claim checked by `checks`, judged by `judge`.
    pub fn new(
        id: &str,
        place: &str,
        claim: &str,
        paper: &str,
        checks: Vec<Vec<String>>,
        judge: impl Fn(&[Value]) -> Result<Judged, String> + Send + Sync + 'static,
    ) -> Spec {
        Spec {
            id: id.into(),
            place: place.into(),
            claim: claim.into(),
            paper: paper.into(),
            checks,
            judge: Box::new(judge),
        }
    }

    /// A claim with no check: `open` (what would check it) or `not checkable here` (why).
    pub fn unchecked(id: &str, place: &str, claim: &str, paper: &str, verdict: Verdict) -> Spec {
        let v = verdict.clone();
        Spec::new(id, place, claim, paper, Vec::new(), move |_| {
            Ok(Judged {
                ours: "-".into(),
                effort: "-".into(),
                verdict: v.clone(),
            })
        })
    }

    /// The paper this claim is from (`000` … `004`).
    pub fn paper_id(&self) -> &str {
        self.id.split('/').next().unwrap_or("")
    }
}

/// One row of the ledger.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Row {
    /// `000/thm9`, `003/fig6b`, …
    pub id: String,
    /// The paper (`000` … `004`).
    pub paper_id: String,
    /// Section, figure, theorem or lemma.
    pub place: String,
    /// The claim in a few words.
    pub claim: String,
    /// The paper's figure.
    pub paper: String,
    /// The commands that produced ours, as a user reruns them.
    pub check: Vec<String>,
    /// Our figure.
    pub ours: String,
    /// How hard the check looked.
    pub effort: String,
    /// The verdict and its reason.
    #[serde(flatten)]
    pub verdict: Verdict,
    /// Seconds the checks took (shared checks are counted by the first row using them).
    pub seconds: f64,
}

/// A command as a user types it.
pub fn command_line(args: &[String]) -> String {
    let quoted: Vec<String> = args
        .iter()
        .map(|a| {
            if a.is_empty() || a.contains(|c: char| c.is_whitespace() || "'\"$;&|<>*?".contains(c))
            {
                format!("'{a}'")
            } else {
                a.clone()
            }
        })
        .collect();
    format!("lockbench {}", quoted.join(" "))
}

/// Counts by verdict, in a fixed order.
pub fn counts(rows: &[Row]) -> Vec<(&'static str, usize)> {
    ["holds", "differs", "open", "not checkable here", "not run"]
        .into_iter()
        .map(|w| (w, rows.iter().filter(|r| r.verdict.word() == w).count()))
        .filter(|&(w, c)| c > 0 || w != "not run")
        .collect()
}

fn summary(rows: &[Row]) -> String {
    let parts: Vec<String> = counts(rows)
        .into_iter()
        .map(|(w, c)| format!("{c} {w}"))
        .collect();
    format!("{} claims: {}", rows.len(), parts.join(", "))
}

/// `text` in lines of at most `width` characters, broken at spaces (a longer word is cut).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let mut word: Vec<char> = word.chars().collect();
        loop {
            let len = line.chars().count();
            let room = if len == 0 {
                width
            } else {
                width.saturating_sub(len + 1)
            };
            if word.len() <= room {
                if len > 0 {
                    line.push(' ');
                }
                line.extend(word.iter());
                break;
            }
            if len > 0 {
                lines.push(std::mem::take(&mut line));
                continue;
            }
            let rest = word.split_off(width);
            lines.push(word.into_iter().collect());
            word = rest;
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// Widest a column of the terminal table may be: place, paper, ours (the whole text of each is
/// in the JSON, the Markdown and docs/claims.md), so a row fits in about 120 columns.
const WRAP: [usize; 3] = [12, 26, 44];

/// The ledger as an aligned table (long cells wrapped onto more lines), then each row's reason
/// and check.
pub fn table(rows: &[Row]) -> String {
    let mut t = Table::new(|_| Align::Left);
    t.row(["id", "place", "paper", "ours", "verdict"]);
    t.rule();
    let mut last = "";
    for r in rows {
        if !last.is_empty() && last != r.paper_id {
            t.gap();
        }
        last = &r.paper_id;
        let cells = [
            wrap(&r.place, WRAP[0]),
            wrap(&r.paper, WRAP[1]),
            wrap(&r.ours, WRAP[2]),
        ];
        let height = cells.iter().map(Vec::len).max().unwrap_or(1);
        for i in 0..height {
            let cell = |c: &Vec<String>| c.get(i).cloned().unwrap_or_default();
            let first = |s: String| if i == 0 { s } else { String::new() };
            t.row([
                first(r.id.clone()),
                cell(&cells[0]),
                cell(&cells[1]),
                cell(&cells[2]),
                first(r.verdict.word().to_string()),
            ]);
        }
    }
    let mut out = t.render();
    out.push_str(&format!("\n{}\n", summary(rows)));
    out.push_str("\nclaims, reasons, effort and checks:\n");
    for r in rows {
        out.push_str(&format!("  {} [{}] {}:", r.id, r.verdict.word(), r.claim));
        if !r.verdict.why().is_empty() {
            out.push_str(&format!(" {}", r.verdict.why()));
        }
        out.push('\n');
        if r.effort != "-" {
            out.push_str(&format!("    effort: {}\n", r.effort));
        }
        for c in &r.check {
            out.push_str(&format!("    $ {c}\n"));
        }
    }
    out
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The ledger as a Markdown table (for a paper's artifact appendix).
pub fn markdown(rows: &[Row]) -> String {
    let mut out = String::from(
        "| id | place | claim | paper | ours | verdict | effort | check |\n|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let verdict = match r.verdict.why() {
            "" => r.verdict.word().to_string(),
            why => format!("**{}**: {}", r.verdict.word(), why),
        };
        let check: Vec<String> = r.check.iter().map(|c| format!("`{c}`")).collect();
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.id,
            md_cell(&r.place),
            md_cell(&r.claim),
            md_cell(&r.paper),
            md_cell(&r.ours),
            md_cell(&verdict),
            md_cell(&r.effort),
            md_cell(&check.join("<br>")),
        ));
    }
    out.push_str(&format!("\n{}\n", summary(rows)));
    out
}

/// Rows that held in `before` and do not now (a row missing now counts as lost).
pub fn regressions(before: &[Row], now: &[Row]) -> Vec<String> {
    before
        .iter()
        .filter(|b| b.verdict == Verdict::Holds)
        .filter_map(|b| match now.iter().find(|r| r.id == b.id) {
            None => Some(format!("{}: held before, not in this ledger now", b.id)),
            Some(r) if r.verdict != Verdict::Holds => Some(format!(
                "{}: held before, now {}{}",
                b.id,
                r.verdict.word(),
                match r.verdict.why() {
                    "" => String::new(),
                    w => format!(" ({w})"),
                }
            )),
            Some(_) => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, verdict: Verdict) -> Row {
        Row {
            id: id.into(),
            paper_id: id[..3].into(),
            place: "§1".into(),
            claim: "c".into(),
            paper: "p".into(),
            check: vec!["lockbench rmr".into()],
            ours: "o".into(),
            effort: "-".into(),
            verdict,
            seconds: 0.0,
        }
    }

    #[test]
    fn a_row_that_held_and_now_differs_is_a_regression() {
        let before = vec![
            row("000/a", Verdict::Holds),
            row("000/b", Verdict::Holds),
            row("000/c", Verdict::Differs("x".into())),
            row("000/d", Verdict::Holds),
        ];
        let now = vec![
            row("000/a", Verdict::Holds),
            row("000/b", Verdict::Differs("broke".into())),
            row("000/c", Verdict::Holds),
        ];
        let r = regressions(&before, &now);
        assert_eq!(r.len(), 2, "{r:?}");
        assert!(r[0].starts_with("000/b") && r[0].contains("broke"));
        assert!(r[1].starts_with("000/d") && r[1].contains("not in this ledger"));
    }

    #[test]
    fn verdicts_round_trip_through_json() {
        for v in [
            Verdict::Holds,
            Verdict::Differs("by 3".into()),
            Verdict::Open("a check".into()),
            Verdict::NotCheckableHere("no PMU".into()),
            Verdict::NotRun("exit 2".into()),
        ] {
            let r = row("001/x", v.clone());
            let back: Row = serde_json::from_str(&serde_json::to_string(&r).unwrap()).unwrap();
            assert_eq!(back.verdict, v);
        }
    }

    #[test]
    fn commands_are_quoted_as_a_shell_reads_them() {
        let args: Vec<String> = ["sim", "--mix", "hot:8:20,80", "--ncs", "exp 1"]
            .map(String::from)
            .to_vec();
        assert_eq!(
            command_line(&args),
            "lockbench sim --mix hot:8:20,80 --ncs 'exp 1'"
        );
        let t = table(&[row("002/thm1", Verdict::Open("a lemma check".into()))]);
        assert!(t.contains("002/thm1 [open] c: a lemma check") && t.contains("$ lockbench rmr"));
        let md = markdown(&[row("002/thm1", Verdict::Holds)]);
        assert!(md.contains("| 002/thm1 |") && md.contains("1 claims: 1 holds"));
    }
}
