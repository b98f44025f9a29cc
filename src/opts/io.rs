//! One way in and one way out: every file lockbench reads goes through [`read`] (or
//! [`read_text`]), every file it writes through [`write_atomic`], and every path it prints in
//! a message through [`shown`].
//!
//! - A reader opens without blocking and refuses anything but a regular file (a FIFO would
//!   hang, `/dev/zero` never ends, a directory is not text) and anything larger than the cap
//!   its caller gives for that kind of file ([`CONFIG_CAP`], [`RESULTS_CAP`], [`SYSTEM_CAP`]).
//! - A writer writes a temporary beside the file, then renames it over: the file is whole or
//!   untouched. On failure the temporary is removed and the message names the file.
//! - A path is shown on one line: control characters (a newline in a name) are escaped.

use std::fs;
use std::io::{self, Read as _, Write as _};
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use anyhow::Result;

/// Largest config file (run, sweep, `sim --paper`, claims files): 1 MiB.
pub const CONFIG_CAP: u64 = 1 << 20;
/// Largest results file (`results.json`, a sweep's journal or manifest, a calibration): 1 GiB.
pub const RESULTS_CAP: u64 = 1 << 30;
/// Largest file read from `/proc` or `/sys`: 4 MiB (`/proc/cpuinfo` of a large host).
pub const SYSTEM_CAP: u64 = 4 << 20;

/// Exit code of a command whose output could not be written: a standard stream (a full
/// disk, a closed stream) or a file it saves into ([`WriteError`]).
pub const EXIT_WRITE: i32 = 74;

/// A file or directory lockbench could not write: names it, says why (exit [`EXIT_WRITE`]).
#[derive(Debug)]
pub struct WriteError {
    /// The file, shown on one line.
    pub path: String,
    /// What went wrong.
    pub source: io::Error,
    /// `write` or `create`.
    verb: &'static str,
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot {} {}: {}", self.verb, self.path, self.source)?;
        if self.source.raw_os_error() == Some(libc::ENOSPC) {
            f.write_str("; free some space or choose another place")?;
        }
        Ok(())
    }
}

impl std::error::Error for WriteError {}

fn write_error(verb: &'static str, path: &Path, source: io::Error) -> anyhow::Error {
    WriteError {
        path: shown(path),
        source,
        verb,
    }
    .into()
}

/// A failed write to stdout, as a [`WriteError`] (exit [`EXIT_WRITE`]); for the commands
/// that write stdout through a handle of their own rather than `print!`.
pub fn stdout_failed(source: io::Error) -> anyhow::Error {
    WriteError {
        path: "stdout".into(),
        source,
        verb: "write to",
    }
    .into()
}

/// Set once a write to stderr has failed (a full disk, a closed stream): the command goes on
/// (what it measured is saved), and its exit code says the stream failed ([`EXIT_WRITE`]).
static STDERR_FAILED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// stderr, through which every warning, note and progress line is written: a failed write
/// is not a reason to stop measuring, but it is remembered ([`stderr_failed`]).
pub(crate) struct Stderr;

/// The process's stderr, remembering a failed write.
pub(crate) fn stderr() -> Stderr {
    Stderr
}

/// Whether a write to stderr has failed in this process.
pub(crate) fn stderr_failed() -> bool {
    STDERR_FAILED.load(std::sync::atomic::Ordering::Relaxed)
}

impl Stderr {
    fn seen<T>(r: io::Result<T>) -> io::Result<T> {
        if r.is_err() {
            STDERR_FAILED.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        r
    }
}

impl io::Write for Stderr {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Self::seen(io::stderr().write(buf))
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        Self::seen(io::stderr().write_all(buf))
    }
    fn flush(&mut self) -> io::Result<()> {
        Self::seen(io::stderr().flush())
    }
}

/// `eprintln!` through [`stderr`]: a failed write is remembered for the exit code, never a
/// panic that would stop a command half way.
macro_rules! errln {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!($crate::opts::io::stderr(), $($t)*);
    }};
}
pub(crate) use errln;

/// `eprint!` through [`stderr`], as [`errln`].
macro_rules! errout {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = write!($crate::opts::io::stderr(), $($t)*);
    }};
}
pub(crate) use errout;

/// `path` on one line: as [`Path::display`] shows it, with control characters escaped
/// (`\n`, `\t`, `\u{1b}`), so a message naming it stays one line.
pub fn shown(path: &Path) -> String {
    one_line(&path.display().to_string())
}

/// `text` with its control characters escaped, so it prints as one line.
pub fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

fn refuse(why: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, why)
}

/// What kind of file `t` is, in words, when it is not a regular file.
fn not_regular(t: fs::FileType) -> Option<&'static str> {
    if t.is_file() {
        None
    } else if t.is_dir() {
        Some("a directory")
    } else if t.is_fifo() {
        Some("a FIFO (named pipe)")
    } else if t.is_socket() {
        Some("a socket")
    } else if t.is_char_device() {
        Some("a character device")
    } else if t.is_block_device() {
        Some("a block device")
    } else {
        Some("not a regular file")
    }
}

/// The bytes of the regular file at `path`, at most `cap` of them. Opening never blocks (a
/// FIFO is refused, not waited on); anything but a regular file, or a file past `cap`, is an
/// [`io::ErrorKind::InvalidInput`] error saying what it is and what to give instead.
pub fn read(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    let mut f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = f.metadata()?;
    if let Some(kind) = not_regular(meta.file_type()) {
        return Err(refuse(format!("is {kind}; give a regular file")));
    }
    let too_big = || {
        refuse(format!(
            "is larger than {}; give a smaller file",
            bytes(cap)
        ))
    };
    if meta.len() > cap {
        return Err(too_big());
    }
    let mut buf = Vec::with_capacity(meta.len() as usize);
    (&mut f).take(cap + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > cap {
        return Err(too_big());
    }
    Ok(buf)
}

/// [`read`] as UTF-8 text.
pub fn read_text(path: &Path, cap: u64) -> io::Result<String> {
    String::from_utf8(read(path, cap)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "is not UTF-8 text"))
}

/// A small system file (`/proc`, `/sys`), trimmed; `None` when it cannot be read.
pub fn read_system(path: impl AsRef<Path>) -> Option<String> {
    read_text(path.as_ref(), SYSTEM_CAP).ok()
}

fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 => format!("{} MiB", n >> 20),
        n => format!("{} KiB", n >> 10),
    }
}

/// A fresh temporary for [`write_atomic`] to write before renaming it to `path`: beside it,
/// named after it, this process and a count (`results.json.4242-0.tmp`), so two writers of the
/// same file — two processes saving into one directory — never rename each other's temporary.
pub fn temp_of(path: &Path) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{}-{n}.tmp", std::process::id()));
    path.with_file_name(name)
}

/// Writes `bytes` to `path` atomically: into [`temp_of`] `path`, synced, then renamed over
/// `path`. On failure the temporary is removed, `path` is as it was, and the error names
/// `path` (e.g. `cannot write out/results.json: No space left on device (os error 28)`).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    // Renaming over a device, a FIFO or a directory would replace it, not write to it.
    if let Some(kind) = fs::metadata(path)
        .ok()
        .and_then(|m| not_regular(m.file_type()))
    {
        return Err(write_error(
            "write",
            path,
            refuse(format!("it is {kind}; give a regular file")),
        ));
    }
    let tmp = temp_of(path);
    let attempt = || -> io::Result<()> {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    };
    attempt().map_err(|e| {
        let _ = fs::remove_file(&tmp);
        write_error("write", path, e)
    })
}

/// The directories a walk has entered, by device and inode, so that a link back to a parent
/// (or any loop of links) is entered once and the walk ends.
#[derive(Debug, Default)]
pub struct Visited(std::collections::HashSet<(u64, u64)>);

impl Visited {
    /// Whether `dir` is new to this walk (it is recorded now); a directory that cannot be
    /// looked up is not entered.
    pub fn enter(&mut self, dir: &Path) -> bool {
        use std::os::unix::fs::MetadataExt as _;
        fs::metadata(dir).is_ok_and(|m| m.is_dir() && self.0.insert((m.dev(), m.ino())))
    }
}

/// Creates directory `dir` and its parents; the error names it.
pub fn create_dir_all(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).map_err(|e| write_error("create", dir, e))
}

/// Appends `bytes` to `path` (created when missing) and syncs: for journals, where a torn
/// last line is the reader's to skip. The error names `path`.
pub fn append(path: &Path, bytes: &[u8]) -> Result<()> {
    let attempt = || -> io::Result<()> {
        let mut f = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        f.write_all(bytes)?;
        f.sync_data()
    };
    attempt().map_err(|e| write_error("write", path, e))
}

/// Longest part of a result's file name taken from a lock or a mix: the name stays far below
/// the 255 bytes a file system allows, whatever was typed.
const PART_MAX: usize = 48;

/// `text` as part of a file name: letters, digits, `.`, `-` and `_` kept, anything else `_`;
/// past [`PART_MAX`] cut, with a hash of the whole so that two long names stay apart.
pub fn file_part(text: &str) -> String {
    let safe: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    bounded(safe, text)
}

/// `safe` (a file-name part made from `whole`), or, past [`PART_MAX`] bytes, its start and
/// a hash of `whole`, so that two long names stay apart.
pub fn bounded(safe: String, whole: &str) -> String {
    if safe.len() <= PART_MAX {
        return safe;
    }
    // FNV-1a: stable across runs and builds, unlike the std hasher.
    let hash = whole.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    let mut cut = PART_MAX - 9;
    while !safe.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}-{:08x}", &safe[..cut], hash as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_parts_are_short_and_safe() {
        assert_eq!(file_part("hot:8:20,80"), "hot_8_20_80");
        let long = format!("zipf:4:{}", "1".repeat(300));
        let p = file_part(&long);
        assert_eq!(p.len(), PART_MAX);
        assert_ne!(p, file_part(&format!("zipf:4:{}", "2".repeat(300))));
    }

    #[test]
    fn only_regular_files_within_the_cap_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.toml");
        fs::write(&f, "x = 1\n").unwrap();
        assert_eq!(read_text(&f, 6).unwrap(), "x = 1\n");
        let e = read_text(&f, 5).unwrap_err().to_string();
        assert!(e.contains("larger than"), "{e}");
        let e = read_text(dir.path(), 5).unwrap_err().to_string();
        assert!(e.contains("a directory"), "{e}");
        let fifo = dir.path().join("f");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads the NUL-terminated path it is given.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_text(&fifo, 5).unwrap_err().to_string();
        assert!(e.contains("FIFO"), "{e}");
        let e = read_text(Path::new("/dev/zero"), 5)
            .unwrap_err()
            .to_string();
        assert!(e.contains("character device"), "{e}");
    }

    #[test]
    fn writes_are_whole_and_leave_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("r.json");
        write_atomic(&f, b"[1]").unwrap();
        assert_eq!(fs::read(&f).unwrap(), b"[1]");
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["r.json"], "no temporary left beside it");
        assert_ne!(temp_of(&f), temp_of(&f), "each write its own temporary");
        let e = write_atomic(&dir.path().join("no/such/r.json"), b"x")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("cannot write ") && e.contains("no/such/r.json"),
            "{e}"
        );
    }

    #[test]
    fn paths_show_on_one_line() {
        assert_eq!(shown(Path::new("a\nb")), "a\\nb");
        assert_eq!(shown(Path::new("plain/x.json")), "plain/x.json");
    }
}
