//! Output paths checked before anything is measured: a directory the results go in, or one
//! file, must be creatable and writable, and not the other kind where it exists. Nothing is
//! created: writing is tried with a probe file that is removed at once.

use std::path::Path;

use crate::error::{usage, UsageError};
use crate::opts::io::shown;

/// Longest name of one path component on the file systems lockbench writes to.
pub const NAME_MAX: usize = 255;

/// Whether a file can be created in directory `dir` (tried, not inferred from permissions:
/// root passes `access` everywhere, and /proc or a read-only mount refuse anyway).
fn writable(dir: &Path) -> bool {
    let probe = dir.join(format!(".lockbench-probe-{}", std::process::id()));
    let ok = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .is_ok();
    if ok {
        let _ = std::fs::remove_file(&probe);
    }
    ok
}

/// A component longer than [`NAME_MAX`] bytes, refused with `what`.
fn check_names(what: &str, path: &Path) -> Result<(), UsageError> {
    if let Some(c) = path.components().find(|c| c.as_os_str().len() > NAME_MAX) {
        return usage(format!(
            "{what} {}: the name {}… is longer than {NAME_MAX} bytes; choose a shorter name",
            crate::opts::io::shown(path),
            c.as_os_str()
                .to_string_lossy()
                .chars()
                .take(16)
                .collect::<String>()
        ));
    }
    Ok(())
}

/// The nearest existing ancestor of `path` (itself included) must be a writable directory.
fn check_ancestor(what: &str, path: &Path, start: &Path) -> Result<(), UsageError> {
    let mut probe = start;
    loop {
        if probe.as_os_str().is_empty() {
            probe = Path::new(".");
        }
        match std::fs::metadata(probe) {
            Ok(m) if !m.is_dir() => {
                return usage(format!(
                    "{what} {}: {} is not a directory; choose a path under a directory",
                    crate::opts::io::shown(path),
                    crate::opts::io::shown(probe)
                ));
            }
            Ok(_) if !writable(probe) => {
                return usage(format!(
                    "{what} {}: cannot write in {}; choose a directory you can write",
                    crate::opts::io::shown(path),
                    crate::opts::io::shown(probe)
                ));
            }
            Ok(_) => return Ok(()),
            // A link that leads nowhere (dangling, or a loop) cannot be made a directory.
            Err(_) if std::fs::symlink_metadata(probe).is_ok() => {
                return usage(format!(
                    "{what} {}: {} is a link that leads nowhere (dangling, or a loop); choose another path",
                    shown(path),
                    shown(probe)
                ));
            }
            Err(_) => match probe.parent() {
                Some(parent) => probe = parent,
                None => {
                    return usage(format!(
                        "{what} {}: no such place; choose a directory you can write",
                        crate::opts::io::shown(path)
                    ))
                }
            },
        }
    }
}

/// Checks, creating nothing, that `path` is or can be made a writable directory (`what` is
/// the option, e.g. `--out`).
pub fn check_dir(what: &str, path: &Path) -> Result<(), UsageError> {
    check_names(what, path)?;
    check_ancestor(what, path, path)
}

/// Checks, creating nothing, that a file can be written at `path`: not a directory, and its
/// directory is or can be made writable.
pub fn check_file(what: &str, path: &Path) -> Result<(), UsageError> {
    check_names(what, path)?;
    if path.as_os_str().is_empty() {
        return usage(format!("{what} is empty: name a file"));
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => {
            return usage(format!(
                "{what} {}: is a directory; name a file (e.g. {}/out.json)",
                crate::opts::io::shown(path),
                crate::opts::io::shown(path)
            ))
        }
        Ok(m) if !m.is_file() => {
            return usage(format!(
                "{what} {}: is not a regular file (a device, FIFO or socket); name a file",
                shown(path)
            ))
        }
        Ok(_) => {
            // Regular, so opening cannot block.
            if std::fs::OpenOptions::new().append(true).open(path).is_err() {
                return usage(format!(
                    "{what} {}: cannot write this file; choose another",
                    crate::opts::io::shown(path)
                ));
            }
            return Ok(());
        }
        Err(_) => {}
    }
    let parent = path.parent().unwrap_or(Path::new("."));
    check_ancestor(what, path, parent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_and_files_are_told_apart_and_nothing_is_created() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let sub = dir.path().join("a/b/c");
        assert!(check_dir("--out", &sub).is_ok());
        assert!(!dir.path().join("a").exists());
        assert!(check_file("--out", &sub.join("x.json")).is_ok());
        assert!(check_file("--out", &file).is_ok());
        let e = check_file("--out", dir.path()).unwrap_err().0;
        assert!(e.contains("is a directory"), "{e}");
        let e = check_dir("--out", &file.join("x")).unwrap_err().0;
        assert!(e.contains("is not a directory"), "{e}");
        let e = check_dir("--out", &dir.path().join("n".repeat(300)))
            .unwrap_err()
            .0;
        assert!(e.contains("longer than 255 bytes"), "{e}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
