//! A sweep's journal, `points.jsonl`: each finished point's results appended in one synced
//! write, then a line marking the point done with the number of its results; and atomic
//! rewrites of the other files.
//!
//! Read back ([`read`]), the journal is trusted only where it is whole: a point is done when
//! its done line follows exactly as many readable result lines of that point. A torn last
//! line (a write cut by a crash), a damaged line, or a done line without its results drops
//! the point (it is measured again), and the journal is rewritten without it, so that nothing
//! appended later joins a broken line; a point the config does not have is refused.

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::error::UsageError;
use crate::report::RunResult;

/// `points.jsonl`: a point's results, then a line marking it done.
#[derive(Serialize, Deserialize)]
struct Line {
    point: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    result: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    done: Option<usize>,
}

/// The journal as read: the points done with their results, in the order they finished,
/// and a line per point dropped (for stderr).
#[derive(Debug, Default)]
pub struct Journal {
    /// Each point done and its results.
    pub points: Vec<(String, Vec<serde_json::Value>)>,
    /// What was dropped and why, one line each.
    pub dropped: Vec<String>,
}

impl Journal {
    /// The ids of the points done.
    pub fn done(&self) -> BTreeSet<String> {
        self.points.iter().map(|(p, _)| p.clone()).collect()
    }

    /// Every result, in the order the points finished.
    pub fn results(&self) -> Vec<serde_json::Value> {
        self.points.iter().flat_map(|(_, r)| r.clone()).collect()
    }
}

/// The points done in `dir` and their results (see the module's notes), with nothing
/// checked against a config and nothing rewritten: what `report` may read.
pub fn finished(dir: &Path) -> (BTreeSet<String>, Vec<serde_json::Value>) {
    let text = crate::opts::io::read_text(&dir.join("points.jsonl"), crate::opts::io::RESULTS_CAP)
        .unwrap_or_default();
    let j = parse(&text);
    (j.done(), j.results())
}

/// Parses the journal's text, keeping only whole points.
fn parse(text: &str) -> Journal {
    let mut j = Journal::default();
    let complete = match text.rfind('\n') {
        Some(end) => &text[..=end],
        None => "",
    };
    if complete.len() < text.len() {
        j.dropped.push(format!(
            "its last line is cut off ({} bytes without an end of line)",
            text.len() - complete.len()
        ));
    }
    // Result lines since the last done line: (line number, parsed line if readable).
    let mut pending: Vec<(usize, Option<Line>)> = Vec::new();
    for (i, raw) in complete.lines().enumerate() {
        let n = i + 1;
        let line = serde_json::from_str::<Line>(raw).ok();
        let Some(Line {
            point,
            done: Some(count),
            ..
        }) = line
        else {
            pending.push((n, line));
            continue;
        };
        let block = std::mem::take(&mut pending);
        let whole = block.len() == count
            && block
                .iter()
                .all(|(_, l)| matches!(l, Some(l) if l.point == point && l.result.is_some()));
        if !whole {
            j.dropped.push(format!(
                "point {point} (done at line {n}) has {count} results but {} readable lines of its own before it; it is measured again",
                block.iter().filter(|(_, l)| matches!(l, Some(l) if l.point == point && l.result.is_some())).count()
            ));
        } else if j.points.iter().any(|(p, _)| *p == point) {
            j.dropped.push(format!(
                "point {point} is done twice (again at line {n}); the first is kept"
            ));
        } else {
            let results = block.into_iter().filter_map(|(_, l)| l?.result).collect();
            j.points.push((point, results));
        }
    }
    if let Some((n, _)) = pending.first() {
        j.dropped.push(format!(
            "lines {n} to {} end it without a done line (a point's write was cut)",
            n + pending.len() - 1
        ));
    }
    j
}

/// Reads `dir`'s journal for a sweep of `points`: a point it holds that the config does not
/// is refused; anything dropped is cut from the file (rewritten atomically) so that it is
/// measured again and nothing appended later joins a broken line.
pub fn read(dir: &Path, points: &BTreeSet<String>) -> Result<Journal> {
    let path = dir.join("points.jsonl");
    let text = match crate::opts::io::read_text(&path, crate::opts::io::RESULTS_CAP) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            return Err(UsageError(format!(
                "cannot read {}: {e}; check its permissions, or start a new sweep with --out",
                crate::opts::io::shown(&path)
            ))
            .into())
        }
    };
    let j = parse(&text);
    if let Some((p, _)) = j.points.iter().find(|(p, _)| !points.contains(p)) {
        return Err(UsageError(format!(
            "{} holds point {p}, which the sweep's config does not have: it is not this sweep's journal; start a new sweep with --out",
            crate::opts::io::shown(&path)
        ))
        .into());
    }
    if !j.dropped.is_empty() {
        let mut whole = String::new();
        for (p, results) in &j.points {
            whole.push_str(&lines_of(p, results)?);
        }
        write_atomic(&path, whole.as_bytes())?;
    }
    Ok(j)
}

pub(super) use crate::opts::io::write_atomic;

/// A point's result lines and its done line.
fn lines_of(point: &str, results: &[serde_json::Value]) -> Result<String> {
    let mut text = String::new();
    for r in results {
        let line = Line {
            point: point.to_string(),
            result: Some(r.clone()),
            done: None,
        };
        text.push_str(&serde_json::to_string(&line)?);
        text.push('\n');
    }
    let mark = Line {
        point: point.to_string(),
        result: None,
        done: Some(results.len()),
    };
    text.push_str(&serde_json::to_string(&mark)?);
    text.push('\n');
    Ok(text)
}

/// Appends a finished point's results and its done line in one write, synced.
pub(super) fn append_point(dir: &Path, point: &str, results: &[RunResult]) -> Result<()> {
    let values = results
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<Vec<_>, _>>()?;
    let text = lines_of(point, &values)?;
    crate::opts::io::append(&dir.join("points.jsonl"), text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    const A: &str = "{\"point\":\"a\",\"result\":{\"lock\":\"x\"}}\n{\"point\":\"a\",\"done\":1}\n";

    fn ids(j: &Journal) -> Vec<&str> {
        j.points.iter().map(|(p, _)| p.as_str()).collect()
    }

    #[test]
    fn finished_points_need_their_done_line() {
        let j = parse(&format!(
            "{A}{{\"point\":\"b\",\"result\":{{\"lock\":\"y\"}}}}\n{{\"point\":\"b\",\"res"
        ));
        assert_eq!(ids(&j), ["a"]);
        assert_eq!(j.results().len(), 1);
        assert_eq!(j.results()[0]["lock"], "x");
        assert!(j.dropped[0].contains("cut off"), "{:?}", j.dropped);
    }

    #[test]
    fn damaged_points_are_dropped() {
        // A damaged result line, a done line without its results, a result of another point.
        for bad in [
            "{\"point\":\"b\",\"result\":{\"lo\n{\"point\":\"b\",\"done\":1}\n",
            "{\"point\":\"b\",\"done\":1}\n",
            "{\"point\":\"c\",\"result\":{}}\n{\"point\":\"b\",\"done\":1}\n",
            "{\"point\":\"b\",\"result\":{}}\n{\"point\":\"b\",\"done\":2}\n",
        ] {
            let j = parse(&format!("{A}{bad}"));
            assert_eq!(ids(&j), ["a"], "{bad}");
            assert_eq!(j.dropped.len(), 1, "{bad}: {:?}", j.dropped);
        }
        let j = parse(&format!("{A}{A}"));
        assert_eq!(ids(&j), ["a"]);
        assert!(j.dropped[0].contains("done twice"));
    }

    #[test]
    fn read_refuses_a_foreign_point_and_rewrites_what_it_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("points.jsonl");
        fs::write(&path, format!("{A}{{\"point\":\"b\",\"res")).unwrap();
        let only_b: BTreeSet<String> = ["b".to_string()].into();
        let e = read(dir.path(), &only_b).unwrap_err().to_string();
        assert!(
            e.contains("point a, which the sweep's config does not have"),
            "{e}"
        );
        let both: BTreeSet<String> = ["a".to_string(), "b".to_string()].into();
        let j = read(dir.path(), &both).unwrap();
        assert_eq!(ids(&j), ["a"]);
        assert_eq!(fs::read_to_string(&path).unwrap(), A);
    }
}
