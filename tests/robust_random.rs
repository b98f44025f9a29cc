//! Random argument vectors for every subcommand but `run` and `sim` (tests/robust.rs has
//! theirs): real option names from clap's definition, values drawn from the edges (0, 1, the
//! limits and one past them, 2⁶⁴−1, NaN, inf, negative, empty lists). No panic, no abort, only
//! the documented exit codes, and a refusal is one line. Each vector is made small (tiny work
//! unless it asks otherwise) and one that still runs long is stopped and not judged. Then the
//! families of files and streams: hostile paths (FIFOs, devices, link loops, a name with a
//! newline) for every argument naming a file, a full stdout or stderr for every command, and a
//! 64 KiB tmpfs as the output of every command that saves (where the test may mount one).

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

mod common;

const EDGES: &[&str] = &[
    "0",
    "1",
    "2",
    "64",
    "65",
    "1024",
    "1025",
    "10000",
    "10001",
    "1000000",
    "1000001",
    "1048577",
    "18446744073709551615",
    "18446744073709551616",
    "-1",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "1e308",
    "",
    ",",
    "1,,2",
    "0s",
    "1ns",
    "100000s",
    "x",
];

/// A xorshift stream: each call, a number below its argument.
fn xorshift(mut state: u64) -> impl FnMut(usize) -> usize {
    move |below| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % below as u64) as usize
    }
}

/// The long options of `name` and whether each takes a value, from its `--help`.
fn options_of(name: &str) -> Vec<(String, bool)> {
    common::help_options(name)
        .into_iter()
        .map(|o| (o.long, o.takes_value))
        .collect()
}

/// One subcommand's cases: its fixed arguments (positionals), the options that keep it small
/// (added when the vector does not set them), and how many vectors.
struct Case {
    name: &'static str,
    fixed: Vec<String>,
    small: Vec<(&'static str, &'static str)>,
    vectors: usize,
}

fn cases(tmp: &Path) -> Vec<Case> {
    let sample = common::fixture_path("rmr-sample/pmu");
    let sample = sample.to_str().unwrap().to_string();
    let cal = common::fixture_path("rmr-sample/calibration-vm.json");
    let cal = cal.to_str().unwrap().to_string();
    let sweep = tmp.join("sweep.toml");
    std::fs::write(
        &sweep,
        "lock = [\"ticket\"]\nthreads = [1]\npassages = 20\nwarmup = \"1ms\"\nrepeat = 1\n",
    )
    .unwrap();
    let out = |n: &str| tmp.join(n).to_str().unwrap().to_string();
    vec![
        Case {
            name: "list",
            fixed: vec![],
            small: vec![],
            vectors: 10,
        },
        Case {
            name: "verify",
            fixed: vec![],
            small: vec![("lock", "ticket"), ("schedules", "5"), ("threads", "2")],
            vectors: 30,
        },
        Case {
            name: "rmr",
            fixed: vec![],
            small: vec![("lock", "ticket"), ("threads", "2"), ("passages", "2")],
            vectors: 30,
        },
        Case {
            name: "calibrate",
            fixed: vec![],
            small: vec![("rounds", "3"), ("lines", "8"), ("out", "")],
            vectors: 16,
        },
        Case {
            name: "fidelity",
            fixed: vec![],
            small: vec![
                ("lock", "ticket"),
                ("threads", "1"),
                ("duration", "2ms"),
                ("warmup", "0"),
                ("rounds", "1"),
                ("out", ""),
            ],
            vectors: 16,
        },
        Case {
            name: "mp-run",
            fixed: vec![],
            small: vec![("algo", "ra1"), ("n", "3"), ("requests", "3")],
            vectors: 24,
        },
        Case {
            name: "correlate",
            fixed: vec![sample.clone()],
            small: vec![("no-svg", "")],
            vectors: 12,
        },
        Case {
            name: "predict",
            fixed: vec![sample.clone()],
            small: vec![("calibration", Box::leak(cal.into_boxed_str()))],
            vectors: 12,
        },
        Case {
            name: "report",
            fixed: vec![common::fixture_path("compare/a")
                .to_str()
                .unwrap()
                .to_string()],
            small: vec![("out", "")],
            vectors: 12,
        },
        Case {
            name: "compare",
            fixed: vec![
                common::fixture_path("compare/a")
                    .to_str()
                    .unwrap()
                    .to_string(),
                common::fixture_path("compare/b")
                    .to_str()
                    .unwrap()
                    .to_string(),
            ],
            small: vec![],
            vectors: 12,
        },
        Case {
            name: "sweep",
            fixed: vec![sweep.to_str().unwrap().to_string()],
            small: vec![("out", "")],
            vectors: 12,
        },
        Case {
            name: "claims",
            fixed: vec![],
            small: vec![("paper", "001"), ("quick", "")],
            vectors: 6,
        },
    ]
    .into_iter()
    .map(|mut c| {
        // `out` given as "" above: a fresh path in the temporary directory per case.
        let dir = out(&format!("out-{}", c.name));
        c.small = c
            .small
            .into_iter()
            .map(|(k, v)| {
                if k == "out" {
                    (k, &*Box::leak(dir.clone().into_boxed_str()))
                } else {
                    (k, v)
                }
            })
            .collect();
        c
    })
    .collect()
}

#[test]
fn random_argument_vectors_of_every_subcommand_never_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
    let mut vectors: Vec<(Vec<String>, u64)> = Vec::new();
    for case in cases(tmp.path()) {
        let options = options_of(case.name);
        for _ in 0..case.vectors {
            let mut v = vec![case.name.to_string()];
            v.extend(case.fixed.iter().cloned());
            let chosen: Vec<&(String, bool)> = (0..1 + next(3))
                .map(|_| &options[next(options.len())])
                .collect();
            for (name, takes) in &chosen {
                v.push(format!("--{name}"));
                if *takes && next(10) != 0 {
                    v.push(EDGES[next(EDGES.len())].to_string());
                }
            }
            for (k, val) in &case.small {
                if !chosen.iter().any(|(c, _)| c == k) {
                    v.push(format!("--{k}"));
                    if !val.is_empty() {
                        v.push(val.to_string());
                    }
                }
            }
            let budget = if case.name == "claims" { 5 } else { 20 };
            vectors.push((v, budget));
        }
    }
    let outcomes = std::sync::Mutex::new(std::collections::BTreeMap::<i32, usize>::new());
    let check = |(v, budget): &(Vec<String>, u64)| {
        // Values read as relative paths (`--out 64`) land in the temporary directory.
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("lockbench"))
            .current_dir(tmp.path())
            .args(&v[..])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut err = String::new();
            std::io::Read::read_to_string(&mut stderr, &mut err).unwrap();
            err
        });
        let started = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break Some(s);
            }
            if started.elapsed() > Duration::from_secs(*budget) {
                child.kill().unwrap();
                child.wait().unwrap();
                break None;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let err = reader.join().unwrap();
        assert!(!err.contains("panicked"), "{v:?}: {err}");
        let Some(status) = status else {
            return;
        };
        let code = status.code();
        assert!(
            matches!(code, Some(0..=3)),
            "{v:?}: exit {code:?} (a signal is an abort): {err}"
        );
        *outcomes.lock().unwrap().entry(code.unwrap()).or_default() += 1;
        if code == Some(2) {
            assert!(err.starts_with("error"), "{v:?}: {err}");
            assert_eq!(err.trim().lines().count(), 1, "one line: {v:?}: {err}");
            assert!(!err.contains("NaN") || err.contains("--"), "{v:?}: {err}");
        }
    };
    std::thread::scope(|s| {
        let (a, b) = vectors.split_at(vectors.len() / 2);
        let h = s.spawn(|| a.iter().for_each(&check));
        b.iter().for_each(&check);
        h.join().unwrap();
    });
    let o = outcomes.into_inner().unwrap();
    assert!(
        o.get(&0).copied().unwrap_or(0) >= 10 && o.get(&2).copied().unwrap_or(0) >= 40,
        "both accepted and refused vectors: {o:?}"
    );
}

/// Hostile paths for every argument that names a file or directory: special files, devices,
/// a file past the config cap, a link loop, a directory holding links back to its parent, a
/// name with a newline. (name, path).
fn hostile_paths(tmp: &Path) -> Vec<(&'static str, String)> {
    let fifo = tmp.join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo reads the NUL-terminated path it is given.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let big = tmp.join("big.toml");
    std::fs::write(&big, "# padding\n".repeat(200_000)).unwrap();
    let zero = tmp.join("zero.json");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let looped = tmp.join("loop");
    std::os::unix::fs::symlink(&looped, &looped).unwrap();
    let parents = tmp.join("parents");
    std::fs::create_dir(&parents).unwrap();
    for i in 0..12 {
        std::os::unix::fs::symlink("..", parents.join(format!("up{i}"))).unwrap();
    }
    let dir = tmp.join("a-dir");
    std::fs::create_dir(&dir).unwrap();
    let s = |p: &Path| p.to_str().unwrap().to_string();
    vec![
        ("fifo", s(&fifo)),
        ("/dev/zero", "/dev/zero".into()),
        ("/dev/null", "/dev/null".into()),
        ("/dev/full", "/dev/full".into()),
        ("big file", s(&big)),
        ("link to /dev/zero", s(&zero)),
        ("link loop", s(&looped)),
        ("links to parents", s(&parents)),
        ("directory", s(&dir)),
        ("newline", s(&tmp.join("a\nb"))),
    ]
}

/// Each command with an argument naming a file or directory: the arguments before the path,
/// the option taking it ("" for a positional), the arguments after, and small settings.
fn path_arguments() -> Vec<(Vec<String>, Vec<String>)> {
    let fx = |p: &str| common::fixture_path(p).to_str().unwrap().to_string();
    let small_run = "--lock ticket --threads 1 --passages 20 --repeat 1 --warmup 1ms";
    let v = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
    let out = vec![
        (v("run --config"), v(small_run)),
        (v("run --out"), v(small_run)),
        (v("sweep"), v("")),
        (v("sweep --resume"), v("")),
        (v("sim --paper"), v("--quick")),
        (v("claims --paper 001 --quick --baseline"), v("")),
        (
            v("predict"),
            v(&format!(
                "--calibration {}",
                fx("rmr-sample/calibration-vm.json")
            )),
        ),
        (
            v(&format!("predict {} --calibration", fx("rmr-sample/pmu"))),
            v(""),
        ),
        (v("correlate"), v("--no-svg")),
        (
            v(&format!("correlate {} --svg", fx("rmr-sample/pmu"))),
            v(""),
        ),
        (v("report"), v("")),
        (v(&format!("report {} --out", fx("compare/a"))), v("")),
        (
            v(&format!("report {} --calibration", fx("compare/a"))),
            v(""),
        ),
        (v("compare"), v(&fx("compare/b"))),
        (
            v(&format!(
                "compare {} {} --plots",
                fx("compare/a"),
                fx("compare/b")
            )),
            v(""),
        ),
        (v("calibrate --rounds 3 --lines 8 --out"), v("")),
        (
            v("fidelity --out"),
            v("--lock ticket --threads 1 --duration 2ms --warmup 0 --rounds 1"),
        ),
    ];
    out
}

/// Runs `lockbench args` in `dir` with the given streams; it must end within `secs` (a hang
/// fails the test). Returns (code, stderr).
fn ended(
    dir: &Path,
    args: &[String],
    stdout: Stdio,
    stderr_full: bool,
    secs: u64,
) -> (Option<i32>, String) {
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("lockbench"));
    cmd.current_dir(dir).args(args).stdout(stdout);
    if stderr_full {
        cmd.stderr(
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap(),
        );
    } else {
        cmd.stderr(Stdio::piped());
    }
    let mut child = cmd.spawn().unwrap();
    let reader = child.stderr.take().map(|mut e| {
        std::thread::spawn(move || {
            let mut err = String::new();
            std::io::Read::read_to_string(&mut e, &mut err).unwrap();
            err
        })
    });
    let started = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if started.elapsed() > Duration::from_secs(secs) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{args:?} still ran after {secs} s: it hangs");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let err = reader.map(|r| r.join().unwrap()).unwrap_or_default();
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    (status.code(), err)
}

/// The exit codes docs/commands.md lists (74: output could not be written).
fn documented(code: Option<i32>) -> bool {
    matches!(code, Some(0..=3 | 74))
}

#[test]
fn hostile_paths_for_every_file_argument_end_in_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let hostile = hostile_paths(tmp.path());
    let mut cases = Vec::new();
    for (before, after) in path_arguments() {
        for (what, path) in &hostile {
            let mut args = before.clone();
            args.push(path.clone());
            args.extend(after.iter().cloned());
            if args[0] == "report" && !args.iter().any(|a| a == "--out") {
                args.push("--out".into());
                args.push(tmp.path().join("report-out").to_str().unwrap().into());
            }
            if args[0] == "run" && !args.iter().any(|a| a == "--out") {
                args.push("--out".into());
                args.push(tmp.path().join("run-out").to_str().unwrap().into());
            }
            cases.push((*what, args));
        }
    }
    let check = |(what, args): &(&str, Vec<String>)| {
        let (code, err) = ended(tmp.path(), args, Stdio::null(), false, 60);
        assert!(documented(code), "{what}: {args:?}: exit {code:?}: {err}");
        if code == Some(2) {
            assert!(err.starts_with("error"), "{what}: {args:?}: {err}");
            assert_eq!(err.trim_end().lines().count(), 1, "{what}: {args:?}: {err}");
        }
    };
    std::thread::scope(|s| {
        let (a, b) = cases.split_at(cases.len() / 2);
        let h = s.spawn(|| a.iter().for_each(&check));
        b.iter().for_each(&check);
        h.join().unwrap();
    });
}

#[test]
fn a_full_stdout_or_stderr_ends_every_command_with_a_documented_code() {
    let tmp = tempfile::tempdir().unwrap();
    let fx = |p: &str| common::fixture_path(p).to_str().unwrap().to_string();
    let out = |n: &str| tmp.path().join(n).to_str().unwrap().to_string();
    let commands: Vec<Vec<String>> = [
        "list".to_string(),
        "list --format json".into(),
        "run --lock ticket --threads 1 --passages 20 --repeat 1 --warmup 1ms --out OUT".into(),
        "verify --lock ticket --schedules 3 --threads 2".into(),
        "rmr --lock ticket --threads 2 --passages 2".into(),
        "mp-run --algo ra1 --n 3 --requests 3".into(),
        "sim --algo ra1 --n 3 --requests 3".into(),
        format!("correlate {} --no-svg", fx("rmr-sample/pmu")),
        format!(
            "predict {} --calibration {}",
            fx("rmr-sample/pmu"),
            fx("rmr-sample/calibration-vm.json")
        ),
        format!("compare {} {}", fx("compare/a"), fx("compare/b")),
        format!("report {} --out OUT", fx("compare/a")),
        "claims --paper 001 --quick".into(),
        "--help".into(),
        "run --threads 0".into(),
    ]
    .iter()
    .enumerate()
    .map(|(i, c)| {
        c.split_whitespace()
            .map(|w| {
                if w == "OUT" {
                    out(&format!("o{i}"))
                } else {
                    w.to_string()
                }
            })
            .collect()
    })
    .collect();
    for args in &commands {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let (code, err) = ended(tmp.path(), args, full.into(), false, 120);
        assert!(
            documented(code),
            "stdout full: {args:?}: exit {code:?}: {err}"
        );
        if code == Some(74) {
            assert_eq!(
                err.trim_end()
                    .lines()
                    .last()
                    .map(|l| l.starts_with("error: cannot write to stdout")),
                Some(true),
                "{args:?}: {err}"
            );
        }
        let (code, _) = ended(tmp.path(), args, Stdio::null(), true, 120);
        assert!(documented(code), "stderr full: {args:?}: exit {code:?}");
    }
}

#[test]
fn a_tiny_disk_leaves_every_saved_file_whole() {
    let mnt = tempfile::tempdir().unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(mnt.path())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("skipped: cannot mount a tmpfs here (needs root or CAP_SYS_ADMIN)");
        return;
    }
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(self.0).status();
        }
    }
    let _guard = Unmount(mnt.path());
    let m = |n: &str| mnt.path().join(n).to_str().unwrap().to_string();
    let fx = |p: &str| common::fixture_path(p).to_str().unwrap().to_string();
    let sweep = mnt.path().join("s.toml");
    std::fs::write(
        &sweep,
        "lock = [\"ticket\", \"tas\", \"ttas\"]\nthreads = [1, 2]\npassages = 20\nwarmup = \"1ms\"\nrepeat = 1\n",
    )
    .unwrap();
    let runs: Vec<Vec<String>> = vec![
        format!("run --lock ticket,tas,ttas,mcs,clh,spin-ticket --threads 1,2 --passages 20 --repeat 1 --warmup 1ms --out {}", m("run")),
        format!("sweep {} --out {}", sweep.display(), m("sweep")),
        format!("report {} --out {}", fx("compare/a"), m("report")),
        format!("compare {} {} --plots {}", fx("compare/a"), fx("compare/b"), m("plots")),
        format!("fidelity --lock ticket --threads 1 --duration 2ms --warmup 0 --rounds 1 --out {}", m("fid")),
        format!("calibrate --rounds 3 --lines 8 --out {}", m("cal.json")),
    ]
    .into_iter()
    .map(|c| c.split_whitespace().map(String::from).collect())
    .collect();
    for args in &runs {
        let (code, err) = ended(mnt.path(), args, Stdio::null(), false, 120);
        assert!(
            matches!(code, Some(0 | 1 | 3 | 74)),
            "{args:?}: exit {code:?}: {err}"
        );
        if code == Some(74) {
            let last = err.trim_end().lines().last().unwrap_or("");
            assert!(last.starts_with("error: cannot "), "{args:?}: {err}");
        }
    }
    // Whatever filled the disk: no temporary left, every JSON file whole.
    fn walk(dir: &Path) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            assert!(!name.ends_with(".tmp"), "{p:?} left behind");
            if p.is_dir() {
                walk(&p);
            } else if name.ends_with(".json") {
                let text = std::fs::read_to_string(&p).unwrap();
                assert!(
                    serde_json::from_str::<serde_json::Value>(&text).is_ok(),
                    "{p:?} is not whole"
                );
            }
        }
    }
    walk(mnt.path());
}
