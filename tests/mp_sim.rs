//! The message-passing side through the binary: safety over seeds, the theory checks of
//! issue 10 §8, determinism, and bad input.

use serde_json::Value;

mod common;
use common::{lockbench, sim_runs};

fn f(r: &Value, k: &str) -> f64 {
    r[k].as_f64()
        .unwrap_or_else(|| panic!("{k} missing in {r}"))
}

const GME_AND_MUTEX: &str = "suzuki-kasami,ricart-agrawala,token-gme,token-gme-fifo,ra1,ra2";
/// The same and the bounded variant of TokenGME (seed 003 Section 5.2).
const WITH_BOUNDED: &str =
    "suzuki-kasami,ricart-agrawala,token-gme,token-gme-fifo,token-gme-bounded,ra1,ra2";

#[test]
fn every_algorithm_is_safe_and_live_over_seeds() {
    for (n, m, extra) in [
        ("3", "2", vec![]),
        ("8", "3", vec!["--non-fifo"]),
        ("6", "4", vec!["--cs", "const:0", "--ncs", "0"]),
    ] {
        let mut args = vec![
            "--algo",
            WITH_BOUNDED,
            "--n",
            n,
            "--m",
            m,
            "--requests",
            "60",
            "--seeds",
            "4",
        ];
        args.extend(extra);
        for r in sim_runs(&args) {
            assert_eq!(r["safety_violations"], 0, "{r}");
            assert!(r["liveness_failure"].is_null(), "{r}");
            assert_eq!(f(&r, "requests"), f(&r, "n") * 60.0, "{r}");
        }
    }
    for topo in ["ring", "grid", "random:4", "complete"] {
        for r in sim_runs(&[
            "--algo",
            "lmutin",
            "--n",
            "9",
            "--topology",
            topo,
            "--l",
            "1",
            "--requests",
            "40",
            "--seeds",
            "3",
        ]) {
            assert_eq!(r["safety_violations"], 0, "{r}");
            assert!(r["liveness_failure"].is_null(), "{r}");
        }
    }
}

#[test]
fn message_counts_match_the_papers() {
    let n = 10.0;
    for r in sim_runs(&[
        "--algo",
        GME_AND_MUTEX,
        "--n",
        "10",
        "--m",
        "4",
        "--requests",
        "80",
        "--seeds",
        "3",
    ]) {
        let (mean, max) = (
            f(&r, "messages_per_request_mean"),
            f(&r, "messages_per_request_max"),
        );
        match r["algo"].as_str().unwrap() {
            // Seed 003 Theorem 8: at most 2n − 1.
            "token-gme" | "token-gme-fifo" => {
                assert!(max <= 2.0 * n - 1.0, "{r}");
                let waited = f(&r, "starvation_sessions_max");
                assert!(waited <= f(&r, "starvation_bound"), "{r}");
            }
            // n per CS, fewer when the token is at hand.
            "suzuki-kasami" => assert!(max <= n && mean <= n, "{r}"),
            // Exactly 2(n − 1): n − 1 REQUESTs and n − 1 REPLYs.
            "ra1" | "ricart-agrawala" => {
                assert_eq!(max, 2.0 * (n - 1.0), "{r}");
                assert!((mean - 2.0 * (n - 1.0)).abs() < 1e-9, "{r}");
            }
            _ => {}
        }
    }
}

#[test]
fn waiting_time_two_hops_light_and_sync_delay_one_hop_heavy() {
    // Hops are causal chains of messages (request → entry, emptying exit → next entry), so
    // they do not depend on the delays: constant and exponential delays give the same claims.
    for cd in ["const:1", "exp:10"] {
        let light = sim_runs(&[
            "--algo",
            "suzuki-kasami,token-gme,ra1,ra2",
            "--n",
            "8",
            "--m",
            "3",
            "--requests",
            "20",
            "--ncs",
            "exp:100000",
            "--cs",
            "const:1",
            "--cd",
            cd,
        ]);
        for r in &light {
            let max = f(r, "waiting_time_hops_max");
            match r["algo"].as_str().unwrap() {
                // REQUEST, then TOKEN (or the n − 1 REPLYs): 2 hops, fewer with the token at hand.
                "suzuki-kasami" => assert_eq!(max, 2.0, "{cd}: {r}"),
                // RA2 as well, but hops are the longest causal chain: when two requests
                // overlap and the second's REQUEST (sent after the first's arrived) reaches a
                // replier before the first's does, that REPLY ends a 3-hop chain.
                "ra2" if cd == "const:1" => assert_eq!(max, 2.0, "{cd}: {r}"),
                "ra2" => {
                    assert!(max <= 3.0, "{cd}: {r}");
                    assert!(f(r, "waiting_time_hops") < 2.05, "{cd}: {r}");
                }
                // TokenGME: 2 hops when no secondary token is out; a secondary holder releases
                // only on seeing a request of another type (TG-9), so with uneven delays the
                // primary may still be collecting RELEASEs when the request comes (docs/message-passing.md).
                "token-gme" if cd == "const:1" => assert_eq!(max, 2.0, "{cd}: {r}"),
                "token-gme" => {
                    assert!(max > 2.0, "{cd}: {r}");
                    assert!(f(r, "waiting_time_hops") < 2.0, "{cd}: {r}");
                }
                _ => assert!(max >= 2.0, "{cd}: {r}"),
            }
            if cd == "const:1" {
                assert!(f(r, "waiting_time_max") <= 2.0 + 1e-9, "{r}");
            }
        }
        let heavy = sim_runs(&[
            "--algo",
            "suzuki-kasami,token-gme,token-gme-fifo",
            "--n",
            "8",
            "--m",
            "3",
            "--requests",
            "60",
            "--ncs",
            "const:0",
            "--cs",
            "const:1",
            "--cd",
            cd,
            "--seeds",
            "3",
        ]);
        for r in &heavy {
            let (mean, max) = (f(r, "sync_delay_hops"), f(r, "sync_delay_hops_max"));
            if r["algo"] == "suzuki-kasami" {
                // The TOKEN, one hop; 0 when the exiting holder is the next to enter.
                assert_eq!(max, 1.0, "{cd}: {r}");
            } else {
                // The TOKEN from the primary holder is one hop; when the last to leave holds a
                // secondary token, its RELEASE and then the TOKEN make two (docs/message-passing.md).
                assert!(mean <= 1.0 && max <= 2.0, "{cd}: {r}");
            }
            if cd == "const:1" && r["algo"] == "suzuki-kasami" {
                assert!(f(r, "sync_delay_max") <= 1.0 + 1e-9, "{r}");
            }
        }
    }
}

#[test]
fn runs_are_deterministic() {
    let strip = |mut v: Vec<Value>| {
        for r in &mut v {
            r["wall_seconds"] = Value::Null;
            r["events_per_sec"] = Value::Null;
        }
        v
    };
    let args = [
        "--algo",
        "token-gme,ra2",
        "--n",
        "7",
        "--m",
        "3",
        "--requests",
        "30",
        "--seed",
        "9",
    ];
    assert_eq!(strip(sim_runs(&args)), strip(sim_runs(&args)));
    // Run one at a time or at once (and with more seeds than CPUs): the same results, in
    // the same order.
    let mut seeds = args.to_vec();
    seeds.extend(["--seeds", "3"]);
    let one = strip(sim_runs(&[&seeds[..], &["--jobs", "1"]].concat()));
    assert_eq!(one.len(), 6);
    assert_eq!(
        one,
        strip(sim_runs(&[&seeds[..], &["--jobs", "4"]].concat()))
    );
    assert_eq!(one, strip(sim_runs(&seeds)));
    let other = [
        "--algo",
        "token-gme,ra2",
        "--n",
        "7",
        "--m",
        "3",
        "--requests",
        "30",
        "--seed",
        "10",
    ];
    assert_ne!(strip(sim_runs(&args)), strip(sim_runs(&other)));
}

#[test]
fn bad_input_exits_2_with_one_line() {
    for args in [
        vec![],
        vec!["--algo", "nope"],
        vec![
            "--algo",
            "lkcs",
            "--n",
            "6",
            "--topology",
            "ring",
            "--l",
            "2",
            "--k",
            "2",
        ],
        vec!["--algo", "lmutin", "--non-fifo"],
        vec!["--algo", "ra1", "--cd", "uniform:5,1"],
        vec!["--algo", "ra1", "--topology", "torus"],
        vec!["--algo", "ra1", "--format", "csv"],
        vec!["--algo", "ra1", "--n", "100000000000"],
        vec!["--algo", "token-gme", "--m", "100000000000"],
        vec!["--algo", "ra1", "--seeds", "0"],
        vec!["--algo", "ra1", "--seeds", "99999999999"],
    ] {
        let out = lockbench().arg("sim").args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn threaded_runtime_runs_the_same_algorithms_safely() {
    let out = lockbench()
        .args([
            "mp-run",
            "--algo",
            WITH_BOUNDED,
            "--n",
            "4",
            "--m",
            "2",
            "--requests",
            "15",
            "--ncs",
            "0.3",
            "--cs",
            "0.1",
            "--cd",
            "0.05",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.len(), 7);
    let out = lockbench()
        .args([
            "mp-run",
            "--algo",
            "lmutin",
            "--n",
            "6",
            "--topology",
            "ring",
            "--l",
            "1",
            "--requests",
            "10",
            "--ncs",
            "0.3",
            "--cs",
            "0.1",
            "--cd",
            "0.05",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut v = v;
    v.extend(serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap());
    // LKCS with both bounds active on sparse graphs too (LK-15).
    for topo in [
        ["complete", "1", "3"],
        ["ring", "1", "3"],
        ["ring", "1", "2"],
        ["grid", "1", "2"],
    ] {
        let out = lockbench()
            .args([
                "mp-run",
                "--algo",
                "lkcs",
                "--n",
                "6",
                "--topology",
                topo[0],
            ])
            .args(["--l", topo[1], "--k", topo[2], "--requests", "10"])
            .args([
                "--ncs", "0.3", "--cs", "0.1", "--cd", "0.05", "--format", "json",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "lkcs on {topo:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        v.extend(serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap());
    }
    for r in v {
        assert_eq!(r["runtime"], "threaded");
        assert_eq!(r["safety_violations"], 0, "{r}");
        assert!(r["liveness_failure"].is_null(), "{r}");
        if r["algo"] != "lmutin" && r["algo"] != "lkcs" {
            assert_eq!(f(&r, "requests"), 60.0, "{r}");
        }
    }
}

#[test]
fn paper_suite_prints_ratio_tables() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("suite.toml");
    std::fs::write(
        &path,
        r#"
requests = 15
seeds = 1
[base]
n = 6
m = 4
ncs = 50.0
cs = 20.0
cd = 10.0
hot = [20.0, 80.0]
[[figure]]
name = "6f"
vary = "n"
values = [3, 6]
compare = ["token-gme", "ra2"]
paper = "size ratio 2.22 at n = 5"
quote = [{ at = 3, metric = "message_size", value = 2.22 }]
[[figure]]
name = "7b"
vary = "hot"
values = [50, 10]
compare = ["token-gme", "token-gme-fifo"]
paper = "priority better"
"#,
    )
    .unwrap();
    let out = lockbench()
        .args(["sim", "--format", "json", "--seeds", "2", "--paper"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    // Two points a figure, four ratios a point.
    assert_eq!(rows.len(), 16);
    for r in &rows {
        assert_eq!(r["failures"], 0, "{r}");
        let ratio = &r["ratio"];
        assert_eq!(ratio["seeds"], 2, "{r}");
        let (lo, med, hi) = (f(ratio, "lo"), f(ratio, "median"), f(ratio, "hi"));
        assert!(med > 0.0 && med.is_finite(), "{r}");
        assert!(lo <= med && med <= hi, "{r}");
    }
    assert_eq!(rows[0]["ratio_of"], "token-gme/ra2");
    assert_eq!(rows[0]["metric"], "messages");
    assert_eq!(rows[15]["ratio_of"], "token-gme/token-gme-fifo");
    let quoted = rows
        .iter()
        .find(|r| r["metric"] == "message_size" && r["value"] == 3.0)
        .unwrap();
    assert_eq!(quoted["paper"], 2.22);
    assert!(quoted["paper_inside"].is_boolean());
    assert!(rows[0]["paper"].is_null());
    // The shipped suite parses (only its first figure's first point would run in a test).
    std::fs::write(
        &path,
        std::fs::read_to_string("bench-configs/message-passing-paper.toml")
            .unwrap()
            .replace("vary = \"m\"", "vary = \"bogus\""),
    )
    .unwrap();
    let out = lockbench()
        .args(["sim", "--paper"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot vary `bogus`"));
}

#[test]
fn lmutin_without_preemption_costs_what_lemma_6_counts() {
    // l = 0 on a complete graph never fills a grant set, so nothing is preempted: an exit is
    // |N_i| + 1 REQUESTs and |N_i| + 1 GRANTs, an entry |N_i| + 1 RELEASEs (self included, as
    // seed 004's Lemma 6 counts them for the MUTIN half of LKCS).
    let r = &sim_runs(&[
        "--algo",
        "lmutin",
        "--n",
        "6",
        "--topology",
        "complete",
        "--l",
        "0",
        "--requests",
        "50",
    ])[0];
    let closed = 6.0;
    assert_eq!(
        f(r, "messages_per_request_max_with_self"),
        2.0 * closed,
        "{r}"
    );
    let mean = f(r, "messages_per_request_mean") + f(r, "self_messages_per_request_mean");
    assert!((mean - 1.5 * closed).abs() < 0.1, "{mean} in {r}");
    let kinds: Vec<&str> = r["messages_by_kind"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kind"].as_str().unwrap())
        .collect();
    assert!(!kinds.contains(&"PREEMPT"), "{kinds:?}");
    // With light contention (a complete graph of 10, l = 4, near-instant channels) some exits
    // are preempted: each still costs at most 6(|N_i| + 1).
    for seed in ["1", "3"] {
        let r = &sim_runs(&[
            "--algo",
            "lmutin",
            "--n",
            "10",
            "--topology",
            "complete",
            "--l",
            "4",
            "--ncs",
            "20",
            "--cs",
            "40",
            "--cd",
            "const:0.1",
            "--requests",
            "100",
            "--seed",
            seed,
        ])[0];
        let kinds: Vec<&str> = r["messages_by_kind"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["kind"].as_str().unwrap())
            .collect();
        assert!(kinds.contains(&"PREEMPT"), "{kinds:?}");
        let max = f(r, "messages_per_request_max_with_self");
        assert!(max > 2.0 * 10.0 && max <= 6.0 * 10.0, "{r}");
    }
    // Under the default load too, now that a Request advances the receiver's logical clock
    // (LK-16): a grantor's neighbours that heard the request cannot preempt it again. Without
    // it a ring reached 25–30 (bound 18) and a complete graph of 6 with l = 2 reached 51
    // (bound 36), a slow process's old timestamps preempting a fast one again and again.
    for (topo, n, l, closed) in [("ring", "9", "1", 3.0), ("complete", "6", "2", 6.0)] {
        for r in sim_runs(&[
            "--algo",
            "lmutin",
            "--n",
            n,
            "--topology",
            topo,
            "--l",
            l,
            "--requests",
            "300",
            "--seeds",
            "3",
        ]) {
            assert!(r["messages_by_kind"].to_string().contains("PREEMPT"), "{r}");
            let max = f(&r, "messages_per_request_max_with_self");
            assert!(max <= 6.0 * closed, "{topo}: {r}");
        }
    }
}

/// `sim` as JSON whatever its exit status (a run reported stuck exits 1 but still reports).
fn sim_any(args: &[&str]) -> Vec<Value> {
    let out = lockbench()
        .arg("sim")
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "sim {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn lkcs_is_safe_and_live_wherever_the_bounds_let_every_process_move() {
    // Both bounds active on sparse graphs was stuck in every run before LK-14 / LK-15.
    let cases = [
        ("complete", "1", "2"),
        ("complete", "2", "4"),
        ("ring", "1", "3"),
        ("ring", "0", "2"),
        ("ring", "1", "2"),
        ("grid", "1", "3"),
        ("random:4", "1", "3"),
    ];
    for (topo, l, k) in cases {
        for n in ["9", "12"] {
            let args = [
                "--algo",
                "lkcs",
                "--n",
                n,
                "--topology",
                topo,
                "--l",
                l,
                "--k",
                k,
                "--requests",
                "40",
                "--seeds",
                "4",
                "--watchdog",
                "20000",
            ];
            for r in sim_any(&args) {
                assert_eq!(r["safety_violations"], 0, "{r}");
                assert!(r["liveness_failure"].is_null(), "{r}");
                assert!(f(&r, "requests") >= 2.0 * 40.0 * 9.0, "{r}");
            }
        }
    }
    // Bounds under which some process can never move, whatever the algorithm: refused.
    let out = lockbench()
        .args(["sim", "--algo", "lkcs", "--n", "9", "--topology", "grid"])
        .args(["--l", "1", "--k", "2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("unable ever to enter or leave"), "{err}");
}

#[test]
fn lkcs_grants_are_told_apart() {
    // Without LK-13 (grants carry the granted request's timestamp) this run let a Grant sent
    // before a special request, and a Relinquish crossing the special grant, put a fourth
    // process into |CS_5| with k = 3, while the run was stuck. It must stay safe, and it is
    // now live.
    let r = &sim_any(&[
        "--algo",
        "lkcs",
        "--n",
        "16",
        "--topology",
        "grid",
        "--l",
        "1",
        "--k",
        "3",
        "--requests",
        "60",
        "--seed",
        "8",
    ])[0];
    assert_eq!(r["safety_violations"], 0, "{r}");
    assert!(r["liveness_failure"].is_null(), "{r}");
}

#[test]
fn lkcs_costs_what_lemma_6_counts() {
    // Seed 004 Lemma 6, self-messages included: without preemption an entry or an exit is
    // |N_i| + 1 REQUESTs, |N_i| + 1 GRANTs and |N_i| + 1 RELEASEs. A complete graph of 10 with
    // l = 1, k = 10, long critical sections, short pauses (so more than one is inside) and
    // near-instant channels has no contention in seeds 1 and 3 (checked: no PREEMPT, no
    // FAILED), so every transition costs exactly that.
    let closed = 10.0;
    let kinds = |r: &Value| -> Vec<String> {
        r["messages_by_kind"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["kind"].as_str().unwrap().to_string())
            .collect()
    };
    for seed in ["1", "3"] {
        let r = &sim_runs(&[
            "--algo",
            "lkcs",
            "--n",
            "10",
            "--topology",
            "complete",
            "--l",
            "1",
            "--k",
            "10",
            "--ncs",
            "10",
            "--cs",
            "50",
            "--cd",
            "const:0.01",
            "--requests",
            "100",
            "--seed",
            seed,
        ])[0];
        let k = kinds(r);
        assert!(!k.iter().any(|k| k == "PREEMPT" || k == "FAILED"), "{k:?}");
        assert_eq!(
            f(r, "messages_per_request_max_with_self"),
            3.0 * closed,
            "{r}"
        );
        let mean = f(r, "messages_per_request_mean") + f(r, "self_messages_per_request_mean");
        assert!((mean - 3.0 * closed).abs() < 1e-9, "{mean} in {r}");
    }
    // A transition that waits on the configuration (a grantor whose places all belong to
    // completed transitions) is told FAILED and parks (LK-15): PARK, RESUME and the grants
    // again are outside Lemma 6, which assumes every grantor grants after at most one
    // preemption; with them a transition costs more than 6(|N_i| + 1) (docs/message-passing.md).
    let r = &sim_runs(&[
        "--algo",
        "lkcs",
        "--n",
        "10",
        "--topology",
        "complete",
        "--l",
        "1",
        "--k",
        "9",
        "--ncs",
        "30",
        "--cs",
        "30",
        "--cd",
        "2",
        "--requests",
        "100",
    ])[0];
    let k = kinds(r);
    assert!(k.iter().any(|k| k == "PARK"), "{k:?}");
    assert!(
        f(r, "messages_per_request_max_with_self") > 6.0 * closed,
        "{r}"
    );
}

#[test]
fn lkcs_reports_lemma_6_by_path_and_waits_by_process() {
    // Ring of 9 with (1, 2): the no-preemption and preemption paths keep 3(|N_i| + 1) = 9 and
    // 6(|N_i| + 1) = 18; parking (LK-15) and LK-11's preemptions aimed again are the
    // machinery path, which the lemma does not bound.
    let r = &sim_runs(&[
        "--algo",
        "lkcs",
        "--n",
        "9",
        "--topology",
        "ring",
        "--l",
        "1",
        "--k",
        "2",
        "--requests",
        "40",
        "--seed",
        "2",
    ])[0];
    let paths = r["lemma6"]["paths"].as_array().unwrap();
    let names: Vec<&str> = paths.iter().map(|p| p["path"].as_str().unwrap()).collect();
    assert_eq!(names, ["no_preemption", "preemption", "machinery"]);
    for (p, bound) in paths.iter().zip([Some(9.0), Some(18.0), None]) {
        assert_eq!(p["bound_max"].as_f64(), bound, "{p}");
        if let Some(b) = bound {
            assert_eq!(p["over_bound"], 0, "{p}");
            assert!(f(p, "messages_max") <= b, "{p}");
        }
    }
    let transitions: f64 = paths.iter().map(|p| f(p, "transitions")).sum();
    assert_eq!(transitions, f(r, "requests"));
    assert!(f(&paths[2], "transitions") > 0.0, "{r}");
    let kinds = paths[2]["by_kind"].to_string();
    assert!(
        kinds.contains("PARK") && kinds.contains("FAILED"),
        "{kinds}"
    );
    assert!(f(&r["lemma6"], "blocked_transitions") > 0.0, "{r}");
    let waits = r["waiting_by_process"].as_array().unwrap();
    assert_eq!(waits.len(), 9);
    let max = waits.iter().map(|w| f(w, "max")).fold(0.0, f64::max);
    assert_eq!(max, f(r, "waiting_time_max"));
    // The table prints the same breakdown.
    let out = lockbench()
        .args(["sim", "--algo", "lkcs", "--n", "9", "--topology", "ring"])
        .args(["--l", "1", "--k", "2", "--requests", "10"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("seed 004 Lemma 6") && text.contains("6(|N_i|+1)"),
        "{text}"
    );
    assert!(text.contains("waiting per process"), "{text}");
}

#[test]
fn lkcs_under_light_load_ends_within_the_scaled_watchdog() {
    // A pause of 10^5 against a critical section of 20: an exit that needs a neighbour's next
    // entry waits about a pause, and under parking (LK-15) one that needs two neighbours
    // inside at once waits far longer. The default watchdog (1000 mean cycles, here about
    // 10^8) lets the run end; the wait on the configuration is reported apart.
    let r = &sim_runs(&[
        "--algo",
        "lkcs",
        "--n",
        "9",
        "--topology",
        "ring",
        "--l",
        "1",
        "--k",
        "3",
        "--ncs",
        "100000",
        "--requests",
        "30",
        "--seed",
        "3",
    ])[0];
    assert!(r["liveness_failure"].is_null(), "{r}");
    assert!(f(r, "waiting_time_max") > 1e6, "{r}");
    assert!(f(&r["lemma6"], "blocked_wait_max") > 0.5 * f(r, "waiting_time_max"));
}

#[test]
fn crashes_are_recovered_safely_within_five_n_minus_one_messages() {
    // Seed 003 §5.3: the primary holder at time 0, then a process and the coordinator
    // (p0, the smallest live id) during the restart it started.
    for crashes in [
        vec!["--crash", "0@0"],
        vec!["--crash", "5@200", "--crash", "0@201"],
    ] {
        let mut args = vec![
            "--algo",
            "token-gme,token-gme-fifo",
            "--n",
            "8",
            "--m",
            "3",
            "--requests",
            "40",
            "--seeds",
            "2",
            "--ncs",
            "exp:20",
        ];
        args.extend(&crashes);
        let f_crashes = (crashes.len() / 2) as f64;
        for r in sim_runs(&args) {
            assert_eq!(r["safety_violations"], 0, "{r}");
            assert!(r["liveness_failure"].is_null(), "{r}");
            let rec = &r["recovery"];
            assert_eq!(f(rec, "crashes"), f_crashes, "{r}");
            assert_eq!(f(rec, "recovery_bound"), 5.0 * 7.0 * f_crashes);
            assert!(
                f(rec, "recovery_messages") <= f(rec, "recovery_bound"),
                "{r}"
            );
            // The survivors all made their requests.
            assert!(f(&r, "requests") >= (8.0 - f_crashes) * 40.0, "{r}");
        }
    }
}

#[test]
fn bad_crash_schedules_exit_2_with_one_line() {
    for args in [
        vec!["--algo", "token-gme", "--crash", "3"],
        vec!["--algo", "token-gme", "--n", "4", "--crash", "4@1"],
        vec!["--algo", "token-gme", "--crash", "1@1", "--crash", "1@2"],
        vec![
            "--algo",
            "token-gme",
            "--n",
            "2",
            "--crash",
            "0@1",
            "--crash",
            "1@1",
        ],
        vec!["--algo", "ra1", "--crash", "1@1"],
        vec!["--algo", "token-gme-bounded", "--crash", "1@1"],
    ] {
        let out = lockbench().arg("sim").args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn unnecessary_blocking_is_checked_for_token_gme_only() {
    // Seed 003 §5.1, counted after every event for the TokenGME family, null elsewhere.
    for r in sim_runs(&[
        "--algo",
        "token-gme,token-gme-bounded,ra1",
        "--n",
        "6",
        "--m",
        "2",
        "--requests",
        "40",
    ]) {
        if r["algo"].as_str().unwrap().starts_with("token-gme") {
            assert_eq!(r["unnecessary_blocking"], 0, "{r}");
        } else {
            assert!(r["unnecessary_blocking"].is_null(), "{r}");
        }
        assert!(r["recovery"].is_null(), "{r}");
    }
}
