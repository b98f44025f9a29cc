//! Seed 003 §5.1's multi-type requests through the binary: `sim --types-per-request G`.

use std::process::Output;

use serde_json::Value;

mod common;
use common::{lockbench, sim_runs};

fn sim(args: &[&str]) -> Output {
    lockbench().arg("sim").args(args).output().unwrap()
}

const SMALL: [&str; 6] = ["--n", "8", "--m", "4", "--requests", "60"];

fn with(extra: &[&'static str]) -> Vec<&'static str> {
    let mut a = SMALL.to_vec();
    a.extend(extra);
    a
}

fn request_size(r: &Value) -> f64 {
    r["messages_by_kind"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kind"] == "REQUEST")
        .unwrap()["size_mean"]
        .as_f64()
        .unwrap()
}

#[test]
fn one_type_per_request_is_the_default_run() {
    let algos = "token-gme,token-gme-fifo,token-gme-bounded,ra2";
    let strip = |mut v: Vec<Value>| {
        for r in &mut v {
            r["wall_seconds"] = 0.into();
            r["events_per_sec"] = 0.into();
        }
        v
    };
    let a = strip(sim_runs(&with(&["--algo", algos, "--seeds", "2"])));
    let b = strip(sim_runs(&with(&[
        "--algo",
        algos,
        "--seeds",
        "2",
        "--types-per-request",
        "1",
    ])));
    assert_eq!(a, b);
    assert!(a.iter().all(|r| r.get("multi_type").is_none()));
    assert!(a
        .iter()
        .filter(|r| r["algo"] != "ra2")
        .all(|r| request_size(r) == 2.0));
}

#[test]
fn requests_of_g_types_are_served_and_carry_their_types() {
    for g in ["2", "4"] {
        let runs = sim_runs(&with(&[
            "--algo",
            "token-gme,token-gme-fifo,token-gme-bounded",
            "--seeds",
            "2",
            "--types-per-request",
            g,
        ]));
        assert_eq!(runs.len(), 6);
        let g: f64 = g.parse().unwrap();
        for r in &runs {
            assert_eq!(r["safety_violations"], 0, "{r}");
            assert!(r["liveness_failure"].is_null(), "{r}");
            assert_eq!(r["unnecessary_blocking"], 0, "{r}");
            assert_eq!(r["multi_type"]["types_per_request"], g as u64);
            // REQUEST(number, types): 1 + G integers.
            assert_eq!(request_size(r), 1.0 + g, "{r}");
        }
    }
}

#[test]
fn the_two_hop_scenario_is_judged_and_holds() {
    let out = sim(&[
        "--algo",
        "token-gme,token-gme-fifo",
        "--n",
        "10",
        "--m",
        "3",
        "--requests",
        "80",
        "--cd",
        "const:10",
        "--types-per-request",
        "3",
    ]);
    assert!(out.status.success());
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains(
            "3 types per request (§5.1); blocked unnecessarily after 0 events; two hops:"
        ),
        "{table}"
    );
    assert!(table.contains("0 over two, 0 unserved"), "{table}");
    let runs = sim_runs(&[
        "--algo",
        "token-gme",
        "--n",
        "10",
        "--m",
        "3",
        "--requests",
        "80",
        "--ncs",
        "const:0",
        "--cd",
        "const:10",
        "--types-per-request",
        "3",
    ]);
    let t = &runs[0]["multi_type"]["two_hop"];
    assert_eq!(t["scenario"], true, "{t}");
    assert_eq!(t["judged"], true, "{t}");
    assert_eq!(t["over_two"], 0, "{t}");
    assert_eq!(t["hops_max"], 2, "{t}");
    assert!(t["requests"].as_u64().unwrap() > 0);
    // Random delays: measured, not judged.
    let runs = sim_runs(&[
        "--algo",
        "token-gme",
        "--n",
        "10",
        "--m",
        "2",
        "--requests",
        "50",
        "--types-per-request",
        "2",
    ]);
    let t = &runs[0]["multi_type"]["two_hop"];
    assert_eq!(t["judged"], false, "{t}");
    assert!(t["why_not"]
        .as_str()
        .unwrap()
        .contains("random channel delays"));
}

#[test]
fn bad_types_per_request_is_refused_in_one_line() {
    for (extra, says) in [
        (vec!["--types-per-request", "0"], "at least 1 type"),
        (vec!["--types-per-request", "5"], "at most --m 4"),
        (
            vec!["--types-per-request", "2", "--algo", "ra2"],
            "ra2 takes single-type requests",
        ),
        (
            vec!["--types-per-request", "2", "--mix", "zipf:4:1"],
            "not --mix zipf:4:1",
        ),
        (
            vec!["--types-per-request", "3", "--hot", "25,100"],
            "draws only 1 type(s)",
        ),
        (
            vec!["--types-per-request", "2", "--crash", "1@5"],
            "drop --crash",
        ),
    ] {
        let mut a = with(&["--algo", "token-gme"]);
        // A second --algo adds to the first.
        a.extend(extra.iter().copied());
        let out = sim(&a);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(says), "{extra:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{extra:?}: {err}");
    }
    // mp-run (threads, MPI) takes single-type requests: it has no such option.
    let out = lockbench()
        .args([
            "mp-run",
            "--algo",
            "token-gme",
            "--n",
            "2",
            "--types-per-request",
            "2",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--types-per-request"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
