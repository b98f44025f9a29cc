//! Saved named baselines, as criterion keeps them: `run … --save-as NAME` copies the results of
//! the run into `<out>/baselines/NAME/` (`reports/baselines/NAME/` by default, replacing an
//! earlier baseline of that name), and `compare NAME DIR` reads NAME from there when no
//! directory NAME exists.

use crate::opts::io;
use std::fs;
use std::path::{Path, PathBuf};

use crate::error::UsageError;

/// Where baselines are kept under a results root.
pub const DIR: &str = "baselines";

/// Refuses a name that is not a plain file name.
pub fn check_name(name: &str) -> Result<(), UsageError> {
    let ok = !name.is_empty()
        && name.len() <= crate::opts::out::NAME_MAX
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(UsageError(format!(
            "--save-as {name:?}: a baseline name is letters, digits, '-', '_' and '.', at most 255 of them (e.g. --save-as main)"
        )))
    }
}

/// Copies the JSON files of `results` (a run's directory) into `root/baselines/name/`, which
/// is emptied first; returns it.
pub fn save(results: &Path, root: &Path, name: &str) -> anyhow::Result<PathBuf> {
    check_name(name)?;
    let dest = root.join(DIR).join(name);
    if dest.exists() {
        fs::remove_dir_all(&dest).map_err(|e| {
            anyhow::anyhow!("cannot replace the baseline {}: {e}", io::shown(&dest))
        })?;
    }
    io::create_dir_all(&dest)?;
    let entries = fs::read_dir(results)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", io::shown(results)))?;
    for e in entries {
        let p = e?.path();
        if p.extension().is_some_and(|x| x == "json") {
            let bytes = io::read(&p, io::RESULTS_CAP)
                .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", io::shown(&p)))?;
            io::write_atomic(&dest.join(p.file_name().expect("a file")), &bytes)?;
        }
    }
    Ok(dest)
}

/// The directory `compare` reads for `arg`: `arg` itself when it is a directory, else the
/// baseline of that name under `root` when there is one, else `arg` (for `saved::load` to
/// refuse).
pub fn resolve(arg: &Path, root: &Path) -> PathBuf {
    if arg.is_dir() {
        return arg.to_path_buf();
    }
    let name = arg.to_string_lossy();
    if check_name(&name).is_ok() {
        let saved = root.join(DIR).join(&*name);
        if saved.is_dir() {
            return saved;
        }
    }
    arg.to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_then_resolve_by_name() {
        let root = tempfile::tempdir().unwrap();
        let run = root.path().join("run-1");
        fs::create_dir(&run).unwrap();
        fs::write(run.join("results.json"), "[]").unwrap();
        fs::write(run.join("notes.txt"), "x").unwrap();
        let dest = save(&run, root.path(), "main").unwrap();
        assert_eq!(dest, root.path().join("baselines/main"));
        assert!(dest.join("results.json").is_file() && !dest.join("notes.txt").exists());
        assert_eq!(resolve(Path::new("main"), root.path()), dest);
        assert_eq!(resolve(&run, root.path()), run);
        assert_eq!(
            resolve(Path::new("nope"), root.path()),
            PathBuf::from("nope")
        );
        assert!(check_name("../x").is_err() && check_name("").is_err());
    }
}
