//! Saving results as they are measured: one JSON file per run, written as soon as the run
//! finishes (to a temporary name, then renamed), so nothing measured is lost to Ctrl-C or a
//! later failure; `results.json` with every run is rewritten after each one.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};

use super::RunResult;

/// A directory of one invocation's results.
pub struct Store {
    dir: PathBuf,
    /// Results saved by slot ([`Store::save_slot`]), rewritten as they are refined.
    slots: Vec<Option<RunResult>>,
}

/// UTC `YYYYMMDD-HHMMSS` for a Unix time.
pub fn utc_stamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// Seconds since the Unix epoch.
pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

use crate::opts::io::{file_part, write_atomic};

impl Store {
    /// Creates `<root>/run-<UTC stamp>[-N]/` for this invocation: the first name no one has
    /// made, claimed by making it (so two invocations started in the same second, saving under
    /// one root, never share a directory).
    pub fn create(root: &Path) -> Result<Store> {
        let stamp = utc_stamp(now_secs());
        let cannot = |dir: &Path| {
            format!(
                "cannot create the results directory {}: choose another with --out",
                crate::opts::io::shown(dir)
            )
        };
        fs::create_dir_all(root).with_context(|| cannot(root))?;
        let mut dir = root.join(format!("run-{stamp}"));
        let mut i = 1;
        loop {
            match fs::create_dir(&dir) {
                Ok(()) => break,
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    i += 1;
                    dir = root.join(format!("run-{stamp}-{i}"));
                }
                Err(e) => return Err(e).with_context(|| cannot(&dir)),
            }
        }
        Ok(Store {
            dir,
            slots: Vec::new(),
        })
    }

    /// Saves into `dir` (created when missing), as a sweep does for the point it measures.
    pub fn at(dir: &Path) -> Result<Store> {
        fs::create_dir_all(dir).with_context(|| {
            format!(
                "cannot create the results directory {}",
                crate::opts::io::shown(dir)
            )
        })?;
        Ok(Store {
            dir: dir.to_path_buf(),
            slots: Vec::new(),
        })
    }

    /// The directory results go to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Saves the result of planned run `slot` now, replacing what was saved for that slot
    /// before (a run refined round after round keeps one file), and rewrites `results.json`
    /// with every slot saved so far, in slot order.
    pub fn save_slot(&mut self, slot: usize, r: &RunResult) -> Result<PathBuf> {
        let name = format!(
            "{:03}-{}-t{}-{}.json",
            slot + 1,
            file_part(&r.lock),
            r.threads,
            file_part(&r.mix)
        );
        let path = self.dir.join(name);
        // `results.json` first: it is what the readers take, and the larger file, so on a
        // disk filling up it fails first and leaves the directory as it was (every file
        // whole, no temporary), holding the results saved before.
        let mut slots = self.slots.clone();
        if slots.len() <= slot {
            slots.resize(slot + 1, None);
        }
        slots[slot] = Some(r.clone());
        let all: Vec<&RunResult> = slots.iter().flatten().collect();
        write_atomic(
            &self.dir.join("results.json"),
            serde_json::to_string_pretty(&all)?.as_bytes(),
        )?;
        self.slots = slots;
        write_atomic(&path, serde_json::to_string_pretty(r)?.as_bytes())?;
        Ok(path)
    }

    /// Saves any serialisable value as `name` in the directory, now.
    pub fn save_json<T: serde::Serialize>(&self, name: &str, value: &T) -> Result<PathBuf> {
        let path = self.dir.join(name);
        write_atomic(&path, serde_json::to_string_pretty(value)?.as_bytes())?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps() {
        assert_eq!(utc_stamp(0), "19700101-000000");
        assert_eq!(utc_stamp(951_782_400), "20000229-000000");
        assert_eq!(utc_stamp(1_795_383_296), "20261122-213456");
    }
}
