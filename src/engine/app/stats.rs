//! The interposer's statistics file, read back: one JSON line per process that loaded the
//! library and took a lock (the format is documented in docs/apps.md, "The statistics file";
//! `interpose/src/stats.rs` writes it). A run's lines are added up into one record, the
//! [`Seen`] record defined once for both sides in `record.rs`.

use std::path::Path;

pub use super::record::{Hist, Record as Seen};

impl Seen {
    /// The share of acquisitions that were contended.
    pub fn contended_share(&self) -> f64 {
        if self.acquisitions == 0 {
            0.0
        } else {
            self.contended as f64 / self.acquisitions as f64
        }
    }

    /// Adds up the lines of a statistics file; `None` when there is no file or no line (the
    /// program took no lock, or died before its exit handlers ran).
    pub fn read(path: &Path) -> anyhow::Result<Option<Seen>> {
        let Ok(text) = std::fs::read_to_string(path) else {
            return Ok(None);
        };
        Seen::from_lines(&text).map_err(|e| {
            anyhow::anyhow!(
                "the interposer's statistics {} are unreadable: {e}",
                path.display()
            )
        })
    }

    /// Several runs' records added up (a lock's rounds).
    pub fn sum<'a>(runs: impl IntoIterator<Item = &'a Seen>) -> Option<Seen> {
        let mut total: Option<Seen> = None;
        for s in runs {
            match &mut total {
                None => total = Some(s.clone()),
                Some(t) => t.add(s),
            }
        }
        total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_add_up() {
        let dir = std::env::temp_dir().join(format!("lockbench-seen-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.jsonl");
        std::fs::write(
            &path,
            concat!(
                r#"{"lock":"ticket","procs":8,"ids_peak":3,"acquisitions":10,"contended":5,"violations":0,"wait_ns":{"buckets":[[100,3],[200,1]]}}"#,
                "\n",
                r#"{"lock":"ticket","procs":8,"ids_peak":2,"acquisitions":30,"contended":5,"violations":2,"wait_ns":{"buckets":[[200,4]]}}"#,
                "\n"
            ),
        )
        .unwrap();
        let s = Seen::read(&path).unwrap().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!((s.processes, s.ids_peak, s.acquisitions), (2, 3, 40));
        assert_eq!(s.violations, 2);
        assert_eq!(s.contended_share(), 0.25);
        assert_eq!(s.wait_ns.samples, 8);
        assert_eq!((s.wait_ns.p50, s.wait_ns.max), (200, 200));
        assert_eq!(Seen::read(&dir.join("missing")).unwrap(), None);
    }
}
