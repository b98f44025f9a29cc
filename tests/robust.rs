//! Robustness of `lockbench run`: bad input is one line and exit 2 with nothing written, no
//! silent surprises, nothing lost to a signal, and no panic on any argument vector.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;
use common::{lockbench, refused_with_out};

/// Runs `args` (with `--out` in a fresh directory) and asserts exit 2, a one-line message
/// containing `expect`, no panic and nothing written.
fn refused(args: &[&str], expect: &str) -> String {
    let err = refused_with_out(args);
    assert!(err.contains(expect), "{args:?}: {err}");
    assert_eq!(
        err.trim().lines().count(),
        1,
        "one line for {args:?}: {err}"
    );
    err
}

fn config(dir: &Path, text: &str) -> String {
    let path = dir.join("c.toml");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn unbounded_sizes_are_refused_before_anything_runs() {
    refused(
        &["run", "--cs-lines", "100000000"],
        "--cs-lines 100000000: at most",
    );
    refused(
        &["run", "--threads", "100000", "--oversubscribe"],
        "--threads 100000: at most",
    );
    refused(&["run", "--slots", "5000"], "--slots 5000");
    refused(&["run", "--k", "100000"], "--k 100000");
    refused(&["run", "--mix", "zipf:4000000000:1"], "at most");
    refused(&["run", "--mix", "uniform:99999999999"], "at most");
    refused(
        &["run", "--latency-sample", "99999999999999"],
        "--latency-sample",
    );
    refused(&["run", "--cs", "11s"], "--cs 11 s: at most");
    refused(&["run", "--duration", "100000s"], "--duration");
    refused(&["run", "--repeat", "0"], "--repeat 0");
    refused(&["run", "--rounds", "100000"], "--repeat 100000");
}

#[test]
fn an_unusable_out_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    for out in [file.clone(), file.join("below"), "/proc/lockbench".into()] {
        let o = lockbench()
            .args(["run", "--lock", "ticket", "--threads", "1", "--out"])
            .arg(&out)
            .assert()
            .code(2)
            .get_output()
            .clone();
        let err = String::from_utf8(o.stderr).unwrap();
        assert!(err.starts_with("error: --out"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}

#[test]
fn config_errors_name_the_file_the_key_and_an_example() {
    let dir = tempfile::tempdir().unwrap();
    for (text, expect) in [
        (
            "threads = \"many\"",
            "key `threads`: `many` is not a whole number",
        ),
        ("threads = [1, \"a\"]", "key `threads`"),
        ("mix = 3", "key `mix`: expected a mix"),
        ("cs = 5", "key `cs`: the number 5 has no unit"),
        ("pin = \"phys\"", "key `pin`: unknown variant `phys`"),
        ("smt = \"yes\"", "key `smt`"),
        (
            "thread = 1",
            "unknown key `thread` (did you mean `threads`?)",
        ),
    ] {
        let c = config(dir.path(), text);
        let err = refused(&["run", "--config", &c], expect);
        assert!(err.contains(&c), "names the file: {err}");
        assert!(
            err.contains("e.g.") || err.contains("did you mean"),
            "{err}"
        );
        assert!(!err.contains("untagged"), "{err}");
    }
    // Value errors found after layering name the key in the file, not a flag.
    let c = config(dir.path(), "cs-lines = 100000000");
    refused(&["run", "--config", &c], "`cs-lines` in");
    let c = config(dir.path(), "threads = [0]");
    let err = refused(&["run", "--config", &c], "`threads` in");
    assert!(!err.contains("--threads"), "{err}");
    // Both stop rules in one file is refused as on the command line.
    let c = config(dir.path(), "passages = 100\nduration = \"1s\"");
    refused(&["run", "--config", &c], "both `duration` and `passages`");
    refused(
        &["run", "--passages", "100", "--duration", "1s"],
        "cannot be used with",
    );
}

#[test]
fn config_keys_are_the_long_options() {
    let dir = tempfile::tempdir().unwrap();
    let c = config(
        dir.path(),
        "lock = \"ticket\"\nthreads = 1\nmix = \"single\"\nrounds = 1\nwarmup = \"1ms\"\n\
         duration = \"20ms\"\nlatency_sample = 1\noracle = \"counting\"\ncs-lines = 2\n\
         counters = \"none\"\nformat = \"json\"\n",
    );
    // --passages on the command line replaces the file's duration.
    let out = lockbench()
        .args(["run", "--config", &c, "--passages", "300", "--out"])
        .arg(dir.path().join("o"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let r = &v[0];
    assert_eq!(r["lock"], "ticket");
    assert_eq!(r["mix"], "single");
    assert_eq!(r["repeat"], 1);
    assert_eq!(r["latency_sample"], 1);
    assert_eq!(
        r["latency_sample_adaptive"], false,
        "a rate asked for is kept"
    );
    assert_eq!(r["oracle"], "counting");
    assert_eq!(r["cs_lines"], 2);
    assert_eq!(r["stop"], "passages 300 per thread");
    assert_eq!(r["passages"], 300);
}

fn run_stderr(args: &[&str]) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = lockbench()
        .arg("run")
        .args(args)
        .arg("--out")
        .arg(dir.path())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn silent_changes_warn() {
    let (code, _, err) = run_stderr(&[
        "--lock",
        "spin-ticket",
        "--threads",
        "2,2",
        "--mix",
        "single",
        "--mix",
        "single",
        "--slots",
        "1",
        "--counters",
        "",
        "--passages",
        "200",
        "--repeat",
        "1",
        "--warmup",
        "1ms",
        "--latency-sample",
        "1000",
    ]);
    assert_eq!(code, 0, "{err}");
    for w in [
        "--threads names a thread count twice",
        "--mix names a mix twice",
        "--slots 1 is below 2 threads",
        "--counters is empty",
        "--latency-sample 1000 with 200 passages",
        "baseline ticket is not among the locks",
    ] {
        assert!(err.contains(&format!("warning: {w}")), "{w}: {err}");
    }
    assert_eq!(
        err.matches("] round 1: spin-ticket").count(),
        1,
        "the duplicate configuration ran once: {err}"
    );
}

#[test]
fn k_exclusion_locks_sit_out_gme_mixes_at_every_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let out = lockbench()
        .args([
            "run",
            "--lock",
            "all",
            "--threads",
            "1",
            "--mix",
            "uniform:4",
            "--passages",
            "50",
            "--repeat",
            "1",
            "--warmup",
            "1ms",
            "--format",
            "json",
            "--no-check",
            "--out",
        ])
        .arg(dir.path())
        .assert()
        .success()
        .get_output()
        .clone();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let problems: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["problem"].as_str().unwrap())
        .collect();
    assert!(!problems.contains(&"k-exclusion"), "{problems:?}");
    assert!(problems.contains(&"gme"), "{problems:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("left out of mix uniform:4"), "{err}");
    refused(
        &[
            "run",
            "--lock",
            "semaphore",
            "--threads",
            "1",
            "--mix",
            "uniform:4",
        ],
        "k-exclusion",
    );
}

#[test]
fn a_run_that_measured_nothing_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = lockbench()
        .args([
            "run",
            "--lock",
            "ticket",
            "--threads",
            "1",
            "--cs",
            "300ms",
            "--duration",
            "50ms",
            "--warmup",
            "5ms",
            "--repeat",
            "1",
            "--format",
            "json",
            "--out",
        ])
        .arg(dir.path())
        .assert()
        .code(3)
        .get_output()
        .clone();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v[0];
    assert_eq!(r["nothing_measured"], true);
    assert_eq!(r["passages"], 0);
    let window = r["per_thread"][0]["window_ns"].as_f64().unwrap();
    assert!(
        window > 25e6 && window < 2e9,
        "the measured phase, not the uptime: {window}"
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("nothing measured"), "{err}");
    assert!(!err.contains("NaN"), "no figure printed as NaN: {err}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "a run that measured nothing leaves no results directory"
    );
}

#[test]
fn starvation_is_flagged_in_json_table_and_summary() {
    // Under --passages every thread is asked the same count; under a duration an
    // oversubscribed FIFO lock starves some. The rule itself is checked on the figures: a
    // thread below half the busiest one's rate is listed, and only such threads.
    let dir = tempfile::tempdir().unwrap();
    let out = lockbench()
        .args([
            "run",
            "--lock",
            "ticket",
            "--threads",
            "4",
            "--oversubscribe",
            "--wait",
            "spin",
            "--duration",
            "100ms",
            "--warmup",
            "10ms",
            "--repeat",
            "1",
            "--format",
            "json",
            "--out",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v[0];
    let rates: Vec<f64> = r["per_thread"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["rate_per_sec"].as_f64().unwrap())
        .collect();
    let busiest = rates.iter().cloned().fold(0.0, f64::max);
    let expect: Vec<u64> = (0..rates.len())
        .filter(|&i| rates[i] < busiest / 2.0)
        .map(|i| i as u64)
        .collect();
    let got: Vec<u64> = r["starved_threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert_eq!(got, expect, "{rates:?}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(!expect.is_empty(), err.contains("starved"), "{err}");
}

/// Starts a run, waits for `ready` on its stderr, sends `signal`, and returns the exit code,
/// stdout, stderr and the results root.
fn interrupted_run(args: &[&str], ready: &str, signal: i32) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("lockbench"))
        .arg("run")
        .args(args)
        .arg("--out")
        .arg(dir.path().join("out"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stderr.take().unwrap());
    let mut err = String::new();
    let started = Instant::now();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 {
            break;
        }
        err.push_str(&line);
        if line.contains(ready) {
            // SAFETY: sending a signal to our own child.
            unsafe { libc::kill(child.id() as i32, signal) };
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(120), "{err}");
    }
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut reader, &mut rest).unwrap();
    err.push_str(&rest);
    let out = child.wait_with_output().unwrap();
    let saved = dir.path().join("out");
    let dirs = std::fs::read_dir(&saved).map_or(0, |d| d.count());
    let stdout = String::from_utf8(out.stdout).unwrap();
    (
        out.status.code(),
        stdout,
        format!("{err}\n[dirs under out: {dirs}]"),
    )
}

#[test]
fn a_signal_keeps_what_finished_and_prints_it() {
    let args = [
        "--lock",
        "ticket,spin-ticket,tas,ttas",
        "--threads",
        "1",
        "--duration",
        "700ms",
        "--warmup",
        "5ms",
        "--repeat",
        "2",
        "--counters",
        "none",
    ];
    let (code, stdout, err) = interrupted_run(&args, "[2/8] round 1", libc::SIGINT);
    assert_eq!(code, Some(130), "{err}");
    assert!(
        err.contains("interrupted: 2 of 4 results saved in "),
        "{err}"
    );
    assert!(err.contains("[dirs under out: 1]"), "{err}");
    assert_eq!(
        stdout.lines().filter(|l| l.contains(" mutex ")).count(),
        2,
        "{stdout}"
    );

    let (code, _, err) = interrupted_run(&args, "lockbench: latency", libc::SIGTERM);
    assert_eq!(code, Some(143), "{err}");
    assert!(err.contains("interrupted: 0 of 4 results saved"), "{err}");
    assert!(
        err.contains("[dirs under out: 0]"),
        "no empty directory: {err}"
    );
}

/// A xorshift stream: each call, a number below its argument.
fn xorshift(mut state: u64) -> impl FnMut(usize) -> usize {
    move |m| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % m as u64) as usize
    }
}

/// Runs `check` over `items` two at a time: the machine has two cores.
fn two_at_a_time<T: Sync>(items: &[T], check: impl Fn(&T) + Sync) {
    std::thread::scope(|s| {
        let (a, b) = items.split_at(items.len() / 2);
        s.spawn(|| a.iter().for_each(&check));
        b.iter().for_each(&check);
    });
}

/// Random argument vectors over the real option names (from clap's definition) and values
/// both good and bad: no panic, and only the documented exit codes.
#[test]
fn random_argument_vectors_never_panic() {
    // The options of `run` as its help lists them (`--save-as` is the command's own, not an
    // option of the run or a key of its config file).
    let options = common::help_options("run");
    let names: Vec<String> = options
        .iter()
        .map(|o| o.long.clone())
        .filter(|n| !matches!(n.as_str(), "out" | "config" | "save-as"))
        .collect();
    assert!(names.len() > 20, "{names:?}");
    // The choices the help lists for an option (its enums), so many vectors are valid runs.
    let arg = |name: &str| options.iter().find(|o| o.long == name).unwrap();
    // Values that make a quick valid run, where the option has no choices of its own.
    let good = |name: &str| -> Vec<String> {
        let v: &[&str] = match name {
            "lock" => &["ticket", "tas,ttas", "glb", "lamport-bakery"],
            "threads" => &["1", "2", "1,2"],
            "mix" => &["single", "uniform:3", "zipf:4:1", "rw:0.5"],
            "slots" => &["4"],
            "k" => &["2"],
            "cs" | "think" => &["100ns", "0"],
            "cs-lines" => &["2"],
            "duration" => &["5ms"],
            "passages" => &["50"],
            "warmup" => &["1ms"],
            "repeat" => &["2"],
            "baseline" => &["tas"],
            "latency-sample" => &["3"],
            "counters" => &["none", "task-clock"],
            "stall-timeout" => &["5s"],
            "seed" => &["9"],
            _ => &[],
        };
        let mut all: Vec<String> = arg(name).choices.clone();
        all.extend(v.iter().map(|s| s.to_string()));
        all
    };
    let values = [
        "0",
        "1",
        "2",
        "3",
        "-1",
        "",
        "x",
        "1,2",
        "0,1",
        "99999999999999999999",
        "1ms",
        "3ms",
        "0.5ms",
        "20ms",
        "-5us",
        "single",
        "distinct",
        "uniform:3",
        "zipf:4:1",
        "hot:4:25,75",
        "rw:0.5",
        "fixed:2",
        "uniform:0",
        "ticket",
        "glb",
        "semaphore",
        "all",
        "nosuch",
        "none",
        "counting",
        "self-check",
        "sampled",
        "yield",
        "spin",
        "physical",
        "logical",
        "cc",
        "csv",
        "md",
        "json",
        "table",
        "cycles",
        "bogus",
    ];
    let mut next = xorshift(0x9E37_79B9_7F4A_7C15);
    let dir = tempfile::tempdir().unwrap();
    // Config values as TOML literals: right and wrong types, empty lists, tables.
    let literals = [
        "1",
        "0",
        "-1",
        "2",
        "\"x\"",
        "true",
        "false",
        "[1, 2]",
        "[]",
        "[\"single\"]",
        "\"1ms\"",
        "\"0\"",
        "3.5",
        "{ a = 1 }",
        "\"ticket\"",
        "\"uniform:3\"",
        "\"none\"",
    ];
    let vectors: Vec<Vec<String>> = (0..200)
        .map(|i| {
            let mut v = vec!["run".to_string()];
            // Every third vector also reads a config file of random keys and values.
            if i % 3 == 0 {
                let mut text = String::new();
                for _ in 0..1 + next(3) {
                    let key =
                        names[next(names.len())].replace('-', if next(2) == 0 { "-" } else { "_" });
                    text.push_str(&format!("{key} = {}\n", literals[next(literals.len())]));
                }
                let path = dir.path().join(format!("c{i}.toml"));
                std::fs::write(&path, text).unwrap();
                v.push("--config".into());
                v.push(path.to_str().unwrap().into());
            }
            let chosen: Vec<String> = (0..1 + next(4))
                .map(|_| names[next(names.len())].clone())
                .collect();
            for n in &chosen {
                v.push(format!("--{n}"));
                let known = good(n);
                let flag = !arg(n).takes_value;
                if flag {
                    // A flag, sometimes given a stray value.
                    if next(8) == 0 {
                        v.push(values[next(values.len())].to_string());
                    }
                } else if !known.is_empty() && next(3) > 0 {
                    v.push(known[next(known.len())].clone());
                } else if next(6) > 0 {
                    v.push(values[next(values.len())].to_string());
                }
            }
            // Keep what runs short unless the vector says otherwise.
            for (n, val) in [
                ("lock", "ticket"),
                ("threads", "1"),
                ("repeat", "1"),
                ("warmup", "1ms"),
            ] {
                if !chosen.iter().any(|c| c == n) {
                    v.push(format!("--{n}"));
                    v.push(val.into());
                }
            }
            if !chosen.iter().any(|c| c == "duration" || c == "passages") {
                v.push("--passages".into());
                v.push("100".into());
            }
            v.push("--out".into());
            v.push(dir.path().join("o").to_str().unwrap().into());
            v
        })
        .collect();
    let outcomes = std::sync::Mutex::new([0usize; 4]);
    let check = |v: &Vec<String>| {
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("lockbench"))
            .args(&v[..])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{v:?}: {err}");
        let code = out.status.code();
        assert!(matches!(code, Some(0..=3)), "{v:?}: exit {code:?}: {err}");
        outcomes.lock().unwrap()[code.unwrap() as usize] += 1;
        if code == Some(2) {
            assert!(err.starts_with("error:"), "{v:?}: {err}");
            assert_eq!(err.trim().lines().count(), 1, "one line: {v:?}: {err}");
            assert!(!err.contains("untagged"), "{v:?}: {err}");
        }
    };
    two_at_a_time(&vectors, check);
    // Both sides are exercised: runs that measure, and bad input.
    let o = outcomes.into_inner().unwrap();
    assert!(o[0] >= 10 && o[2] >= 10, "exit codes 0..=3: {o:?}");
}

#[test]
fn traces_and_settings_reach_every_format() {
    let run = |format: &str| {
        let dir = tempfile::tempdir().unwrap();
        let out = lockbench()
            .args([
                "run",
                "--lock",
                "lamport-bakery",
                "--threads",
                "2",
                "--passages",
                "300",
                "--repeat",
                "1",
                "--warmup",
                "1ms",
                "--trace",
                "--pin",
                "none",
                "--cs",
                "100ns",
                "--counters",
                "task-clock",
                "--format",
                format,
                "--out",
            ])
            .arg(dir.path())
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        String::from_utf8(out).unwrap()
    };
    let table = run("table");
    assert!(table.contains("trace (every passage)"), "{table}");
    assert!(table.contains("fcfs viol"), "{table}");
    let md = run("md");
    assert!(md.contains("Trace (every passage)"), "{md}");
    let csv = run("csv");
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 3, "{csv}");
    assert_eq!(rows[0].len(), rows[1].len(), "{csv}");
    let field = |row: usize, name: &str| {
        let i = rows[0]
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("{name}: {csv}"));
        rows[row][i].to_string()
    };
    assert_eq!(field(1, "pin"), "none");
    assert_eq!(field(1, "cs_ns"), "100");
    assert_eq!(field(1, "trace_passages"), "600");
    assert_eq!(field(1, "fcfs_violations"), "0");
    // The counter's column is there (empty where the machine refuses the counter).
    field(1, "task_clock_ns_per_passage");
}

#[test]
fn every_run_config_in_bench_configs_reads() {
    for entry in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/bench-configs")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        // The message-passing suites are `sim --paper` files, not `run` configs.
        if text.contains("[[figure]]") {
            continue;
        }
        // Sweeps (lists of cs, think, k, cs-lines or rmr; thread counts named after the
        // machine) are `sweep` configs: the sweep's own test reads every one of them.
        let table: toml::Table = text.parse().unwrap();
        let sweep_only = ["cs", "think", "k", "cs-lines", "cs_lines", "rmr"]
            .iter()
            .any(|k| table.get(*k).is_some_and(toml::Value::is_array))
            || table
                .get("threads")
                .and_then(toml::Value::as_array)
                .is_some_and(|a| a.iter().any(toml::Value::is_str));
        if sweep_only {
            continue;
        }
        // The file is read and layered; the made-up lock is then what is refused.
        refused(
            &[
                "run",
                "--config",
                path.to_str().unwrap(),
                "--lock",
                "made-up",
            ],
            "--lock: unknown lock \"made-up\"",
        );
    }
}

/// The same for `sim`: random vectors over its real option names (from clap), with values
/// that make a quick valid simulation and values that must be refused. No panic, no abort
/// (an allocation the size of the input), only exit codes 0, 1 and 2, and a refusal is one
/// line.
#[test]
fn random_sim_argument_vectors_never_panic() {
    let options: Vec<(String, bool)> = common::help_options("sim")
        .into_iter()
        .map(|o| (o.long, o.takes_value))
        .filter(|(n, _)| !matches!(n.as_str(), "paper" | "trace"))
        .collect();
    assert!(options.len() > 15, "{options:?}");
    let values = [
        "0",
        "1",
        "2",
        "3",
        "7",
        "-1",
        "",
        "x",
        "1,2",
        "2,1,3",
        "99999999999",
        "1e400",
        "nan",
        "10",
        "exp:5",
        "const:0",
        "uniform:1,5",
        "uniform:5,1",
        "20,80",
        "120,-20",
        "50",
        "uniform:3",
        "zipf:4:1",
        "hot:4:25,75",
        "zipf:99999999999:1",
        "complete",
        "ring",
        "grid",
        "random:3",
        "random:99",
        "random:x",
        "torus",
        "all",
        "ra1",
        "token-gme,ra2",
        "lkcs",
        "lmutin",
        "nosuch",
        "json",
        "table",
        "csv",
    ];
    let mut next = xorshift(0x2545_F491_4F6C_DD1D);
    let vectors: Vec<Vec<String>> = (0..160)
        .map(|_| {
            let mut v = vec!["sim".to_string()];
            let chosen: Vec<&(String, bool)> = (0..1 + next(4))
                .map(|_| &options[next(options.len())])
                .collect();
            for (name, takes) in &chosen {
                v.push(format!("--{name}"));
                // Values that make a quick valid simulation, about half the time.
                let good: &[&str] = match name.as_str() {
                    "algo" => &["ra1", "token-gme,ra2", "suzuki-kasami", "all"],
                    "n" | "m" => &["2", "4", "9"],
                    "ncs" | "cs" | "cd" => &["10", "exp:5", "const:0", "uniform:1,5"],
                    "hot" => &["20,80", "50,50"],
                    "mix" => &["uniform:3", "zipf:4:1", "hot:4:25,75"],
                    "requests" => &["0", "3"],
                    "seed" | "seeds" | "jobs" => &["1", "2"],
                    "topology" => &["complete", "ring", "grid", "random:3"],
                    "l" => &["1"],
                    "k" => &["2", "3"],
                    "format" => &["json", "table"],
                    "watchdog" => &["1000", "5"],
                    _ => &[],
                };
                if !*takes {
                    continue;
                }
                match next(8) {
                    // Sizes the input could make allocations of.
                    0 => v.push("99999999999".into()),
                    1..=4 if !good.is_empty() => v.push(good[next(good.len())].to_string()),
                    7 => {}
                    _ => v.push(values[next(values.len())].to_string()),
                }
            }
            // Small and quick unless the vector says otherwise (a large valid run is the
            // user's to ask for, not a test's).
            for (name, val) in [
                ("algo", "ra1,token-gme"),
                ("n", "5"),
                ("requests", "4"),
                ("seeds", "1"),
            ] {
                if !chosen.iter().any(|(c, _)| c == name) {
                    v.push(format!("--{name}"));
                    v.push(val.into());
                }
            }
            v
        })
        .collect();
    let outcomes = std::sync::Mutex::new([0usize; 3]);
    let check = |v: &Vec<String>| {
        // Values chosen at random can still ask for a long run (`--requests 99999999999`):
        // those are stopped, and only what finished is judged.
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("lockbench"))
            .args(&v[..])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let started = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break Some(s);
            }
            if started.elapsed() > Duration::from_secs(20) {
                child.kill().unwrap();
                child.wait().unwrap();
                break None;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let mut err = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
        assert!(!err.contains("panicked"), "{v:?}: {err}");
        let Some(status) = status else {
            return;
        };
        let code = status.code();
        assert!(matches!(code, Some(0..=2)), "{v:?}: exit {code:?}: {err}");
        outcomes.lock().unwrap()[code.unwrap() as usize] += 1;
        if code == Some(2) {
            assert!(err.starts_with("error:"), "{v:?}: {err}");
            assert_eq!(err.trim().lines().count(), 1, "one line: {v:?}: {err}");
        }
    };
    two_at_a_time(&vectors, check);
    let o = outcomes.into_inner().unwrap();
    assert!(o[0] >= 10 && o[2] >= 10, "exit codes 0..=2: {o:?}");
}
