//! Random argument vectors for every subcommand but `run` and `sim` (tests/robust.rs has
//! theirs): real option names from clap's definition, values drawn from the edges (0, 1, the
//! limits and one past them, 2⁶⁴−1, NaN, inf, negative, empty lists). No panic, no abort, only
//! the documented exit codes, and a refusal is one line. Each vector is made small (tiny work
//! unless it asks otherwise) and one that still runs long is stopped and not judged.

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

/// The long options of `name` and whether each takes a value, from clap.
fn options_of(name: &str) -> Vec<(String, bool)> {
    let cli = <lockbench::cli::Cli as clap::CommandFactory>::command();
    let sub = cli.find_subcommand(name).expect("a subcommand");
    sub.get_arguments()
        .filter_map(|a| Some((a.get_long()?.to_string(), a.get_action().takes_values())))
        .filter(|(n, _)| n != "help")
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
