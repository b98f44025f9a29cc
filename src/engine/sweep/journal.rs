//! A sweep's journal, `points.jsonl`: each finished point's results appended in one synced
//! write, then a line marking the point done; and atomic rewrites of the other files.

use std::collections::BTreeSet;
use std::fs;
use std::io::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

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

/// The points done in `dir` and their results, in the order they finished. A torn last line
/// (power lost mid-write) is ignored, and so are results of a point without its done line.
pub fn finished(dir: &Path) -> (BTreeSet<String>, Vec<serde_json::Value>) {
    let text = fs::read_to_string(dir.join("points.jsonl")).unwrap_or_default();
    let lines: Vec<Line> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Line>(l).ok())
        .collect();
    let done: BTreeSet<String> = lines
        .iter()
        .filter(|l| l.done.is_some())
        .map(|l| l.point.clone())
        .collect();
    let results = lines
        .into_iter()
        .filter(|l| done.contains(&l.point))
        .filter_map(|l| l.result)
        .collect();
    (done, results)
}

pub(super) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp");
    fs::write(&tmp, bytes).with_context(|| format!("cannot write {}", tmp.display()))?;
    fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// Appends a finished point's results and its done line in one write, synced.
pub(super) fn append_point(dir: &Path, point: &str, results: &[RunResult]) -> Result<()> {
    let mut text = String::new();
    for r in results {
        let line = Line {
            point: point.to_string(),
            result: Some(serde_json::to_value(r)?),
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
    let path = dir.join("points.jsonl");
    let mut f = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| format!("cannot append to {}", path.display()))?;
    f.write_all(text.as_bytes())?;
    f.sync_all().ok();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finished_points_need_their_done_line() {
        let dir = tempfile::tempdir().unwrap();
        let text = concat!(
            "{\"point\":\"a\",\"result\":{\"lock\":\"x\"}}\n",
            "{\"point\":\"a\",\"done\":1}\n",
            "{\"point\":\"b\",\"result\":{\"lock\":\"y\"}}\n",
            "{\"point\":\"b\",\"res"
        );
        fs::write(dir.path().join("points.jsonl"), text).unwrap();
        let (done, results) = finished(dir.path());
        assert_eq!(done.into_iter().collect::<Vec<_>>(), vec!["a".to_string()]);
        assert_eq!(results.len(), 1);
        assert_eq!(results[0]["lock"], "x");
    }
}
