//! What the interposer's tests share: the library (built with cargo if it is not fresh), the C
//! test program `tests/c/locks.c` (compiled with `cc` once per test binary), running a program
//! under the library, and the statistics it writes.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;

/// The directory of this build's binaries (target/debug).
pub fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_lockbench"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// `liblockbench_interpose.so` of this build, built once by cargo (a no-op when fresh).
pub fn interposer() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let status = Command::new(env!("CARGO"))
                .args(["build", "--quiet", "-p", "lockbench-interpose"])
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .status()
                .expect("cargo runs");
            assert!(
                status.success(),
                "cargo build -p lockbench-interpose failed"
            );
            let so = target_dir().join("liblockbench_interpose.so");
            assert!(so.is_file(), "{} was not built", so.display());
            so
        })
        .clone()
}

/// A directory for this test binary's files.
pub fn scratch() -> PathBuf {
    let d = std::env::temp_dir().join(format!("lockbench-interpose-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A name in [`scratch`] no other call of this test process has had: `prefix` and a count
/// (the directory is the process's own, so the names are unique without reading the clock).
pub fn fresh(prefix: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    scratch().join(format!("{prefix}-{n}"))
}

/// `tests/c/locks.c` compiled (`cc -O2 -pthread`), or None with a printed reason when this
/// machine has no C compiler.
pub fn locks_program() -> Option<PathBuf> {
    static BUILT: OnceLock<Option<PathBuf>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/c/locks.c");
            let exe = scratch().join("locks");
            match Command::new("cc")
                .args(["-O2", "-pthread", "-o"])
                .arg(&exe)
                .arg(&src)
                .status()
            {
                Ok(s) if s.success() => Some(exe),
                _ => {
                    eprintln!("skipped: no working C compiler (cc) to build tests/c/locks.c");
                    None
                }
            }
        })
        .clone()
}

/// A program's run under the interposer.
pub struct Run {
    pub output: Output,
    /// The statistics lines, added up by the fields the tests read.
    pub stats: Vec<Value>,
}

impl Run {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }
    /// A counter summed over the processes' lines.
    pub fn sum(&self, field: &str) -> u64 {
        self.stats
            .iter()
            .map(|v| v[field].as_u64().unwrap_or(0))
            .sum()
    }
    /// Asserts exit 0 and the program's "ok" line, and that the oracle saw nothing.
    pub fn assert_ok(&self, what: &str) {
        assert!(
            self.output.status.success() && self.stdout().starts_with("ok "),
            "{what}: status {:?}, stdout {:?}, stderr {:?}",
            self.output.status,
            self.stdout(),
            self.stderr()
        );
        assert_eq!(
            self.sum("violations"),
            0,
            "{what}: the oracle saw violations"
        );
    }
}

/// Runs `program args` with the interposer on `lock`, and `env` besides.
pub fn run_under(lock: &str, program: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut stats = fresh(&format!("stats-{lock}-{}", args.join("_"))).into_os_string();
    stats.push(".jsonl");
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env("LD_PRELOAD", interposer())
        .env("LOCKBENCH_LOCK", lock)
        .env("LOCKBENCH_STATS", &stats);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let output = cmd.output().unwrap();
    let stats_lines = std::fs::read_to_string(&stats)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let _ = std::fs::remove_file(&stats);
    Run {
        output,
        stats: stats_lines,
    }
}
