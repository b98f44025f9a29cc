//! One run of the program: under the interposer with one lock, or alone; its wall time (from
//! spawn to exit), its exit, the figure `--metric` reads from its stdout, and what the
//! interposer saw. The program runs in a process group of its own, so a timeout kills
//! everything it started.

use std::ffi::OsString;
use std::io::Read as _;
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::stats::Seen;

/// How the program is run.
#[derive(Clone, Debug)]
pub enum Setup {
    /// Without the interposer.
    Alone,
    /// Under the interposer with `lock` (`pthread` included).
    Interposed {
        /// The library.
        so: PathBuf,
        /// LOCKBENCH_LOCK.
        lock: String,
        /// LOCKBENCH_PROCS.
        procs: usize,
    },
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind", content = "value")]
pub enum Status {
    /// Exit 0.
    Ok,
    /// Another exit status.
    Exit(i32),
    /// Killed by a signal.
    Signal(i32),
    /// Still running at the timeout (killed).
    Timeout,
    /// Exit 0, but the figure `--metric` names was not in its output.
    NoMetric,
}

impl Status {
    /// One phrase for a table or a warning.
    pub fn describe(&self) -> String {
        match self {
            Status::Ok => "ok".into(),
            Status::Exit(c) => format!("exit {c}"),
            Status::Signal(s) => format!("signal {s}"),
            Status::Timeout => "timeout".into(),
            Status::NoMetric => "metric not found".into(),
        }
    }
}

/// One run's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// How it ended.
    pub status: Status,
    /// Spawn to exit, seconds.
    pub wall_s: f64,
    /// The figure `--metric` read (None without --metric, or when absent).
    pub metric: Option<f64>,
    /// What the interposer saw (None alone, or when no process wrote statistics).
    pub seen: Option<Seen>,
    /// The last line the program wrote on stderr (for a failure's report).
    pub stderr_tail: String,
}

/// The figure the regular expression `pattern` finds in `out`: its first capture group's
/// number when it has one, else the first number after the first match ("events per second:"
/// on "events per second:  1234.5" gives 1234.5). `pattern` was checked when the command
/// started; one that does not compile reads nothing.
pub fn read_metric(out: &str, pattern: &str) -> Option<f64> {
    let caps = regex::Regex::new(pattern).ok()?.captures(out)?;
    match caps.get(1) {
        Some(group) => number_in(group.as_str()),
        None => number_in(&out[caps.get(0)?.end()..]),
    }
}

/// The first number in `rest` (a minus sign just before it kept).
fn number_in(rest: &str) -> Option<f64> {
    let start = rest.find(|c: char| c.is_ascii_digit())?;
    let num: String = rest[start..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == 'e' || *c == 'E')
        .collect();
    let neg = rest[..start].ends_with('-');
    num.trim_end_matches(['e', 'E', '.'])
        .parse::<f64>()
        .ok()
        .map(|v| if neg { -v } else { v })
}

/// Runs `argv` once under `setup`, killing it after `timeout`; `scratch` is a file name the
/// interposer may write its statistics to (removed afterwards).
pub fn run_once(
    argv: &[OsString],
    setup: &Setup,
    timeout: Duration,
    metric: Option<&str>,
    scratch: &Path,
) -> anyhow::Result<Outcome> {
    let _ = std::fs::remove_file(scratch);
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for v in [
        "LD_PRELOAD",
        "LOCKBENCH_LOCK",
        "LOCKBENCH_PROCS",
        "LOCKBENCH_STATS",
    ] {
        cmd.env_remove(v);
    }
    if let Setup::Interposed { so, lock, procs } = setup {
        cmd.env("LD_PRELOAD", so)
            .env("LOCKBENCH_LOCK", lock)
            .env("LOCKBENCH_PROCS", procs.to_string())
            .env("LOCKBENCH_STATS", scratch);
    }
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| anyhow::anyhow!("cannot start {}: {e}", argv[0].to_string_lossy()))?;
    let pid = child.id() as i32;
    let drain = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("piped")));
    let err = drain(Box::new(child.stderr.take().expect("piped")));
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let status = child.wait();
        let _ = tx.send((status, Instant::now()));
    });
    let (status, end, timed_out) = match rx.recv_timeout(timeout) {
        Ok((s, end)) => (s, end, false),
        Err(_) => {
            // SAFETY: signalling the process group this function started (its id is the
            // child's pid).
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            let (s, end) = rx.recv()?;
            (s, end, true)
        }
    };
    let status = status?;
    // The group's other processes may keep the pipes open: after the program exits, stop
    // them too, so draining ends.
    // SAFETY: as above; the group may be gone already, which is harmless.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    let stdout = String::from_utf8_lossy(&out.join().unwrap_or_default()).into_owned();
    let stderr = String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned();
    let wall_s = end.duration_since(start).as_secs_f64();
    let mut status = if timed_out {
        Status::Timeout
    } else if let Some(sig) = status.signal() {
        Status::Signal(sig)
    } else {
        match status.code() {
            Some(0) => Status::Ok,
            Some(c) => Status::Exit(c),
            None => Status::Exit(-1),
        }
    };
    let value = metric.and_then(|m| read_metric(&stdout, m));
    if status == Status::Ok && metric.is_some() && value.is_none() {
        status = Status::NoMetric;
    }
    let seen = match setup {
        Setup::Alone => None,
        Setup::Interposed { .. } => Seen::read(scratch)?,
    };
    let _ = std::fs::remove_file(scratch);
    Ok(Outcome {
        status,
        wall_s,
        metric: value,
        seen,
        stderr_tail: stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .chars()
            .take(300)
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_are_read_after_their_label() {
        let out = "threads: 2\n    events per second:  1234.50\ntotal: 9\n";
        assert_eq!(read_metric(out, "events per second:"), Some(1234.5));
        assert_eq!(read_metric(out, "threads"), Some(2.0));
        assert_eq!(read_metric(out, "absent"), None);
        assert_eq!(read_metric("rate -3.5e2 op/s", "rate"), Some(-350.0));
        // A pattern: its capture group, or the number after the whole match.
        let out = "read 10 ms\nwrite: 7 ops, 250.5 ops/s\n";
        assert_eq!(read_metric(out, r"([0-9.]+) ops/s"), Some(250.5));
        assert_eq!(read_metric(out, r"write: \d+ ops,"), Some(250.5));
        assert_eq!(read_metric(out, r"^read"), Some(10.0));
        assert_eq!(read_metric(out, r"(x+)?ops/s"), None);
    }
}
