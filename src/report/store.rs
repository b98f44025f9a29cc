//! Saving results as they are measured: one JSON file per run, written as soon as the run
//! finishes (to a temporary name, then renamed), so nothing measured is lost to Ctrl-C or a
//! later failure; `results.json` with every run is rewritten after each one.

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};

use super::RunResult;

/// A directory of one invocation's results.
pub struct Store {
    dir: PathBuf,
    saved: Vec<RunResult>,
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

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = path.with_extension("json.tmp");
    let mut f =
        fs::File::create(&tmp).with_context(|| format!("cannot write {}", tmp.display()))?;
    f.write_all(bytes)?;
    f.sync_all().ok();
    fs::rename(&tmp, path).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

impl Store {
    /// Creates `<root>/run-<UTC stamp>[-N]/` for this invocation.
    pub fn create(root: &Path) -> Result<Store> {
        let stamp = utc_stamp(now_secs());
        let mut dir = root.join(format!("run-{stamp}"));
        let mut i = 1;
        while dir.exists() {
            i += 1;
            dir = root.join(format!("run-{stamp}-{i}"));
        }
        fs::create_dir_all(&dir).with_context(|| {
            format!(
                "cannot create the results directory {}: choose another with --out",
                dir.display()
            )
        })?;
        Ok(Store {
            dir,
            saved: Vec::new(),
        })
    }

    /// The directory results go to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Saves one finished run now.
    pub fn save(&mut self, r: &RunResult) -> Result<PathBuf> {
        let name = format!(
            "{:03}-{}-t{}-{}.json",
            self.saved.len() + 1,
            r.lock,
            r.threads,
            r.mix.replace([':', ',', '/'], "_")
        );
        let path = self.dir.join(name);
        write_atomic(&path, serde_json::to_string_pretty(r)?.as_bytes())?;
        self.saved.push(r.clone());
        write_atomic(
            &self.dir.join("results.json"),
            serde_json::to_string_pretty(&self.saved)?.as_bytes(),
        )?;
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
