//! Runs the ledger's checks: each distinct command once, as its own `lockbench` process with
//! `--format json` (so a check is exactly the command a user reruns, and a panic or an abort in
//! one check is that row's verdict, not the ledger's end), several at a time.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;
use std::time::Instant;

use serde_json::Value;

/// The output of one check: its JSON, or what went wrong; and the seconds it took.
pub type Outcome = (Result<Value, String>, f64);

/// Runs `lockbench <args> --format json` and parses its standard output. The exit code is not
/// the verdict (`verify` exits 1 on a violation, `rmr` on a bound missed, and the ledger wants
/// their reports either way); only output that is not JSON is an error.
pub fn run(exe: &PathBuf, args: &[String]) -> Outcome {
    let started = Instant::now();
    let mut cmd = Command::new(exe);
    cmd.args(args).args(["--format", "json"]);
    let result = match cmd.output() {
        Err(e) => Err(format!("could not start {}: {e}", exe.display())),
        Ok(out) => serde_json::from_slice::<Value>(&out.stdout).map_err(|_| {
            let err = String::from_utf8_lossy(&out.stderr);
            let line = err
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            format!(
                "the check printed no JSON (exit {}): {}",
                out.status
                    .code()
                    .map_or("by signal".into(), |c| c.to_string()),
                line.trim()
            )
        }),
    };
    (result, started.elapsed().as_secs_f64())
}

/// Runs every distinct command of `commands` on `jobs` workers; the outcomes by command.
pub fn run_all(
    exe: &PathBuf,
    commands: &[Vec<String>],
    jobs: usize,
    progress: &(dyn Fn(usize, usize, &[String]) + Sync),
) -> HashMap<Vec<String>, Outcome> {
    let mut distinct: Vec<&Vec<String>> = Vec::new();
    for c in commands {
        if !distinct.contains(&c) {
            distinct.push(c);
        }
    }
    let next = Mutex::new(0usize);
    let done = Mutex::new(HashMap::new());
    let total = distinct.len();
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1).min(total.max(1)) {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().unwrap();
                    let i = *n;
                    *n += 1;
                    i
                };
                let Some(c) = distinct.get(i) else { break };
                let outcome = run(exe, c);
                let mut d = done.lock().unwrap();
                d.insert((*c).clone(), outcome);
                progress(d.len(), total, c);
            });
        }
    });
    done.into_inner().unwrap()
}
