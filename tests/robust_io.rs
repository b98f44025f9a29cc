//! Standard streams, special files, full disks, link loops and long names: each kind of
//! failure ends in one line and a documented exit code, and nothing is left half-written.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::lockbench;

/// Exit code of a command whose output could not be written (docs/commands.md).
const EXIT_WRITE: i32 = 74;

/// A small, quick run: one lock, one thread, one round.
const QUICK: &[&str] = &[
    "--threads",
    "1",
    "--passages",
    "200",
    "--repeat",
    "1",
    "--warmup",
    "1ms",
];

fn bin() -> Command {
    Command::new(assert_cmd::cargo::cargo_bin("lockbench"))
}

/// Runs `cmd` to its end (at most `secs`, else the test fails: it hung); (code, stderr).
fn finish(mut cmd: Command, secs: u64) -> (Option<i32>, String) {
    let mut child = cmd.stderr(Stdio::piped()).spawn().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut err = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut err).unwrap();
        err
    });
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > Duration::from_secs(secs) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{cmd:?} still ran after {secs} s");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let err = reader.join().unwrap();
    assert!(!err.contains("panicked"), "{cmd:?}: {err}");
    (status.code(), err)
}

/// One line of stderr starting `error`.
fn one_error_line(err: &str) {
    assert!(err.starts_with("error"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo reads the NUL-terminated path it is given.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

fn full() -> fs::File {
    fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap()
}

// 1. A failed write to stdout or stderr.

#[test]
fn a_full_stdout_or_stderr_is_one_line_and_exit_74() {
    let mut list = bin();
    list.arg("list").stdout(full());
    let (code, err) = finish(list, 30);
    assert_eq!(code, Some(EXIT_WRITE), "{err}");
    one_error_line(&err);
    assert!(err.contains("cannot write to stdout"), "{err}");

    let mut help = bin();
    help.arg("--help").stdout(full());
    assert_eq!(finish(help, 30).0, Some(EXIT_WRITE));

    // stderr itself full: nothing can be said, the code says it.
    let tmp = tempfile::tempdir().unwrap();
    let out = bin()
        .args(["run", "--lock", "ticket"])
        .args(QUICK)
        .arg("--out")
        .arg(tmp.path())
        .stdout(Stdio::null())
        .stderr(full())
        .status()
        .unwrap();
    assert_eq!(out.code(), Some(EXIT_WRITE));
}

#[test]
fn results_saved_before_stdout_failed_are_kept_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let mut run = bin();
    run.args(["run", "--lock", "ticket,tas"])
        .args(QUICK)
        .arg("--out")
        .arg(tmp.path())
        .stdout(full());
    let (code, err) = finish(run, 120);
    assert_eq!(code, Some(EXIT_WRITE), "{err}");
    assert!(
        err.trim_end()
            .lines()
            .last()
            .unwrap()
            .contains("cannot write to stdout"),
        "{err}"
    );
    let runs: Vec<PathBuf> = fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    let results = common::results(&runs[0]);
    let locks: Vec<&str> = results
        .iter()
        .map(|r| r["lock"].as_str().unwrap())
        .collect();
    assert!(
        locks.contains(&"ticket") && locks.contains(&"tas"),
        "{locks:?}"
    );
    no_temporaries(&runs[0]);
}

fn no_temporaries(dir: &Path) {
    for e in fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name();
        assert!(
            !name.to_string_lossy().ends_with(".tmp"),
            "{name:?} left in {dir:?}"
        );
    }
}

// 2. and 3. Special files and unbounded reads, for every file option.

#[test]
fn special_files_are_refused_at_once_by_every_reader() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("fifo");
    mkfifo(&fifo);
    let big = tmp.path().join("big.toml");
    fs::write(&big, "# x\n".repeat(300_000)).unwrap();
    let dir = tmp.path().join("a-dir");
    fs::create_dir(&dir).unwrap();
    let zero_link = tmp.path().join("zero.json");
    std::os::unix::fs::symlink("/dev/zero", &zero_link).unwrap();
    for special in [&fifo, Path::new("/dev/zero"), &big, &dir, &zero_link] {
        let s = special.to_str().unwrap();
        for args in [
            vec!["run", "--config", s],
            vec!["sweep", s],
            vec!["sim", "--paper", s],
            vec![
                "predict",
                "tests/fixtures/rmr-sample/pmu",
                "--calibration",
                s,
            ],
            vec!["claims", "--paper", "001", "--quick", "--baseline", s],
        ] {
            let mut cmd = bin();
            cmd.args(&args).current_dir(env!("CARGO_MANIFEST_DIR"));
            if args[0] == "run" || args[0] == "sweep" {
                cmd.arg("--out").arg(tmp.path().join("out"));
            }
            let (code, err) = finish(cmd, 20);
            assert_eq!(code, Some(2), "{args:?}: {err}");
            one_error_line(&err);
            assert!(err.contains(s), "names the file: {args:?}: {err}");
        }
    }
    assert!(!tmp.path().join("out").exists());
}

#[test]
fn a_results_file_that_is_a_device_is_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run-1");
    fs::create_dir(&run).unwrap();
    std::os::unix::fs::symlink("/dev/zero", run.join("results.json")).unwrap();
    for cmd in ["report", "correlate"] {
        let mut c = bin();
        c.arg(cmd)
            .arg(tmp.path())
            .arg("--out")
            .arg(tmp.path().join("o"));
        if cmd == "correlate" {
            c = bin();
            c.arg(cmd).arg(tmp.path()).arg("--no-svg");
        }
        let (code, err) = finish(c, 20);
        assert_eq!(code, Some(2), "{cmd}: {err}");
        one_error_line(&err);
    }
}

// 4. Link loops.

#[test]
fn links_back_to_a_parent_end_the_walk() {
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("pmu");
    let status = Command::new("cp")
        .arg("-r")
        .arg(common::fixture_path("rmr-sample/pmu"))
        .arg(&copy)
        .status()
        .unwrap();
    assert!(status.success());
    let plain = common::lockbench()
        .args(["correlate", "--no-svg"])
        .arg(&copy)
        .output()
        .unwrap();
    assert_eq!(plain.status.code(), Some(0));
    for sub in fs::read_dir(&copy).unwrap() {
        let sub = sub.unwrap().path();
        for i in 0..12 {
            std::os::unix::fs::symlink("..", sub.join(format!("up{i}"))).unwrap();
        }
    }
    for args in [
        vec!["correlate", "--no-svg"],
        vec!["report", "--out", tmp.path().join("r").to_str().unwrap()],
        vec!["compare"],
    ] {
        let mut c = bin();
        c.args(&args).arg(&copy);
        if args[0] == "compare" {
            c.arg(&copy);
        }
        let (code, err) = finish(c, 30);
        if args[0] == "correlate" {
            assert_eq!(code, Some(0), "{err}");
            let looped = lockbench()
                .args(["correlate", "--no-svg"])
                .arg(&copy)
                .output()
                .unwrap();
            assert_eq!(looped.stdout, plain.stdout, "the links add nothing");
        } else {
            assert!(matches!(code, Some(0..=2)), "{args:?}: {err}");
        }
    }
}

// 5. Memory limits.

#[test]
fn an_address_space_limit_bounds_the_sizes() {
    let tmp = tempfile::tempdir().unwrap();
    let script = format!(
        "ulimit -v 4000000 && exec {} run --lock ticket --threads 1 --passages 500 --cs-lines 50000000 --out {}",
        assert_cmd::cargo::cargo_bin("lockbench").display(),
        tmp.path().join("out").display()
    );
    let mut sh = Command::new("sh");
    sh.args(["-c", &script]);
    let (code, err) = finish(sh, 30);
    assert_eq!(code, Some(2), "{err}");
    one_error_line(&err);
    assert!(err.contains("--cs-lines"), "{err}");
    assert!(!tmp.path().join("out").exists());
}

// 6. A mix's parameter in names and tables.

#[test]
fn a_huge_mix_parameter_prints_short_and_names_a_short_file() {
    let tmp = tempfile::tempdir().unwrap();
    let out = lockbench()
        .args(["run", "--lock", "glb", "--mix", "zipf:4:1e308"])
        .args(QUICK)
        .arg("--out")
        .arg(tmp.path())
        .output()
        .unwrap();
    let (stdout, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(stdout.contains("zipf:4:1e308"), "{stdout}");
    assert!(!stdout.contains("0000000000"), "{stdout}");
    let run = fs::read_dir(tmp.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    for f in fs::read_dir(&run).unwrap() {
        let name = f.unwrap().file_name();
        assert!(name.len() < 100, "{name:?}");
    }
    let results = common::results(&run);
    assert!(
        results.iter().all(|r| r["mix"] == "zipf:4:1e308"),
        "{results:?}"
    );
}

// 7. A full disk while saving.

/// A 64 KiB tmpfs mounted for the test, unmounted when dropped; `None` (with a message) where
/// this process may not mount one.
struct TinyFs(tempfile::TempDir);

impl TinyFs {
    fn mount() -> Option<TinyFs> {
        let dir = tempfile::tempdir().ok()?;
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(dir.path())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            Some(TinyFs(dir))
        } else {
            eprintln!("skipped: cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN)");
            None
        }
    }

    fn path(&self) -> &Path {
        self.0.path()
    }
}

impl Drop for TinyFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

#[test]
fn a_full_disk_names_the_file_and_keeps_every_saved_result_whole() {
    let Some(fs64) = TinyFs::mount() else {
        return;
    };
    let mut run = bin();
    run.args(["run", "--lock", "ticket,tas,ttas,mcs,clh,spin-ticket"])
        .args(QUICK)
        .arg("--out")
        .arg(fs64.path())
        .stdout(Stdio::null());
    let (code, err) = finish(run, 120);
    assert_eq!(code, Some(EXIT_WRITE), "{err}");
    let last = err.trim_end().lines().last().unwrap();
    assert!(
        last.starts_with("error: cannot write ") && last.contains("No space left"),
        "{err}"
    );
    let run_dir = fs::read_dir(fs64.path())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert!(
        last.contains(run_dir.to_str().unwrap()),
        "names the file: {last}"
    );
    no_temporaries(&run_dir);
    // results.json holds exactly the runs whose own files are beside it.
    let saved = common::results(&run_dir);
    let files = fs::read_dir(&run_dir)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name() != "results.json")
        .count();
    assert_eq!(saved.len(), files, "{err}");
}

// 8. Output names checked before measuring.

#[test]
fn a_baseline_name_too_long_is_refused_before_measuring() {
    let long = "n".repeat(300);
    let err = common::refused_with_out(&["run", "--lock", "ticket", "--save-as", &long]);
    one_error_line(&err);
    assert!(err.contains("--save-as"), "{err}");
}

// 9. `compare --plots` onto a file.

#[test]
fn compare_plots_onto_a_file_is_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("f");
    fs::write(&file, "x").unwrap();
    let err = common::stderr_of_failure(
        lockbench()
            .arg("compare")
            .arg(common::fixture_path("compare/a"))
            .arg(common::fixture_path("compare/b"))
            .arg("--plots")
            .arg(&file),
        2,
    );
    one_error_line(&err);
    assert!(err.contains("--plots"), "{err}");
}

// 10. `sim --paper` files against the command line's limits.

#[test]
fn a_paper_file_is_held_to_the_command_line_limits() {
    let tmp = tempfile::tempdir().unwrap();
    let shipped = fs::read_to_string(common::fixture_path(
        "../../bench-configs/message-passing-paper.toml",
    ))
    .unwrap();
    let three = shipped.replace("hot = [20.0, 80.0]", "hot = [20.0, 80.0, 5.0]");
    assert_ne!(three, shipped);
    let at = shipped.find("value = ").unwrap();
    let digits = shipped[at + 8..]
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap();
    let end = at + 8 + digits;
    let nan = format!("{}value = nan{}", &shipped[..at], &shipped[end..]);
    for (name, text, says) in [
        ("three.toml", three, "hot"),
        ("nan.toml", nan, "quote value"),
    ] {
        let path = tmp.path().join(name);
        fs::write(&path, text).unwrap();
        let err = common::stderr_of_failure(lockbench().arg("sim").arg("--paper").arg(&path), 2);
        one_error_line(&err);
        assert!(err.contains(says), "{name}: {err}");
    }
}

// 11. An empty mix list.

#[test]
fn an_empty_mix_list_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("c.toml");
    fs::write(&config, "lock = [\"ticket\"]\nthreads = [1]\nmix = []\n").unwrap();
    let err = common::refused_with_out(&["run", "--config", config.to_str().unwrap()]);
    one_error_line(&err);
    assert!(err.contains("mix") && err.contains("empty"), "{err}");
}

// 12. A sweep's places checked before measuring.

#[test]
fn a_sweep_resumed_with_partial_a_file_is_refused_before_measuring() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("tiny.toml");
    fs::write(
        &config,
        "lock = [\"ticket\"]\nthreads = [1, 2]\npassages = 50\nwarmup = \"1ms\"\nrepeat = 1\n",
    )
    .unwrap();
    let dir = tmp.path().join("sweep");
    lockbench()
        .arg("sweep")
        .arg(&config)
        .arg("--out")
        .arg(&dir)
        .assert()
        .success();
    // Keep only the first point's journal lines, so a point is left to measure.
    let journal = fs::read_to_string(dir.join("points.jsonl")).unwrap();
    let first: String = journal
        .lines()
        .take_while(|l| !l.contains("\"done\""))
        .chain(journal.lines().find(|l| l.contains("\"done\"")))
        .map(|l| format!("{l}\n"))
        .collect();
    fs::write(dir.join("points.jsonl"), &first).unwrap();
    fs::write(dir.join("partial"), "not a directory").unwrap();
    let err = common::stderr_of_failure(lockbench().args(["sweep", "--resume"]).arg(&dir), 2);
    one_error_line(&err);
    assert!(
        err.contains("partial") && !err.contains("--out reports"),
        "{err}"
    );
    assert_eq!(fs::read_to_string(dir.join("points.jsonl")).unwrap(), first);
}

// 13. A path holding a newline.

#[test]
fn a_path_with_a_newline_is_shown_on_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let odd = tmp.path().join("a\nb.toml");
    fs::write(&odd, "lock = [\"nosuch\"]\n").unwrap();
    for args in [
        vec![
            "run".to_string(),
            "--config".into(),
            odd.display().to_string(),
        ],
        vec![
            "run".into(),
            "--config".into(),
            tmp.path().join("x\ny").display().to_string(),
        ],
        vec![
            "report".into(),
            tmp.path().join("r\nr").display().to_string(),
        ],
    ] {
        let err = common::stderr_of_failure(lockbench().args(&args), 2);
        one_error_line(&err);
        assert!(err.contains("\\n"), "{args:?}: {err}");
    }
}

// 14. A figure that is not a number.

#[test]
fn results_holding_null_figures_read_back_and_print_no_nan() {
    let tmp = tempfile::tempdir().unwrap();
    let text = fs::read_to_string(common::fixture_path("compare/b/results.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    for r in v.as_array_mut().unwrap() {
        r["harness_overhead_ns"] = serde_json::Value::Null;
    }
    let dir = tmp.path().join("a");
    fs::create_dir(&dir).unwrap();
    fs::write(dir.join("results.json"), v.to_string()).unwrap();
    let out = lockbench()
        .arg("compare")
        .arg(&dir)
        .arg(common::fixture_path("compare/b"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!stdout.contains("NaN"), "{stdout}");
    lockbench()
        .arg("report")
        .arg(&dir)
        .arg("--out")
        .arg(tmp.path().join("r"))
        .assert()
        .success();
}
