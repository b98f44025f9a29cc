//! The many-core rig's results, checked: `scripts/numa-rig.sh` boots a 16-vCPU guest over 2
//! sockets and 4 NUMA nodes, runs lockbench inside and copies the results out, then runs this
//! test with `LOCKBENCH_RIG_OUT` pointing at them. Each placement policy's CPUs must be those
//! the policy gives on the guest kernel's own topology (its sysfs, copied out), each thread's
//! node and socket what that sysfs says, and every page of the lock on the node its memory
//! policy names. Without the variable the test says how to run the rig and passes: the rig
//! boots a guest (about 2 minutes on 2 host cores), which CI does in a step of its own after
//! `cargo test`, and the script then runs this test on what came out.

use std::path::{Path, PathBuf};

use crate::runner::topology::{PinMode, Topology};
use serde_json::Value;

fn read(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e} (see the .log beside it)", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn rig_out() -> Option<PathBuf> {
    match std::env::var_os("LOCKBENCH_RIG_OUT") {
        Some(dir) => Some(PathBuf::from(dir)),
        None => {
            eprintln!(
                "skipped: the NUMA rig's results are checked after `scripts/numa-rig.sh` boots its guest \
                 (a few minutes; it installs QEMU with scripts/install-rig.sh and runs this test itself)"
            );
            None
        }
    }
}

#[test]
fn each_policy_places_threads_as_the_guest_kernel_reports_its_topology() {
    let Some(out) = rig_out() else { return };
    let sysfs = out.join("sysfs");
    let topo = Topology::read(&sysfs.join("cpu"), Some(&sysfs.join("node"))).unwrap();
    assert_eq!(topo.logical_cpus(), 16, "{topo}");
    assert_eq!(topo.numa_nodes.len(), 4, "{topo}");
    assert_eq!(topo.packages(), 2, "{topo}");
    for (pin, mode) in [
        ("physical", PinMode::Physical),
        ("compact", PinMode::Compact),
        ("scatter", PinMode::Scatter),
    ] {
        let runs = read(&out.join(format!("pin-{pin}.json")));
        let want = topo.placement(mode, false);
        // A run that stalled (a spinning lock on emulated CPUs) may leave threads behind.
        let finished: Vec<&Value> = runs.iter().filter(|r| r["stalled"].is_null()).collect();
        assert!(!finished.is_empty(), "{pin}: every run stalled");
        for r in finished {
            assert_eq!(r["pin"], pin);
            let threads = r["per_thread"].as_array().unwrap();
            let cpus: Vec<usize> = threads
                .iter()
                .map(|t| t["cpu"].as_u64().unwrap() as usize)
                .collect();
            assert_eq!(cpus, want[..threads.len()], "{pin}: {}", r["lock"]);
            for t in threads {
                let cpu = topo.cpu(t["cpu"].as_u64().unwrap() as usize).unwrap();
                assert_eq!(t["node"].as_u64().map(|n| n as usize), cpu.numa, "{t}");
                assert_eq!(t["socket"].as_u64().unwrap() as usize, cpu.package, "{t}");
            }
            assert!(r["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .all(|w| !w.as_str().unwrap().contains("pin")));
        }
    }
}

#[test]
fn each_memory_policy_puts_the_pages_on_its_nodes() {
    let Some(out) = rig_out() else { return };
    for (file, policy) in [
        ("mem-local.json", "local"),
        ("mem-interleave.json", "interleave"),
        ("mem-node.json", "node:3"),
    ] {
        let runs = read(&out.join(file));
        assert!(
            !runs.is_empty(),
            "{policy}: no result (see the .log beside {file})"
        );
        for r in runs {
            assert_eq!(r["mem_policy"], policy);
            let pages = &r["mem_pages"];
            assert!(pages["error"].is_null(), "{policy}: {pages}");
            assert!(pages["bound"].as_u64().unwrap() > 0, "{policy}: {pages}");
            assert_eq!(pages["misplaced"], 0, "{policy}: {pages}");
            // A page per register: no page holds registers of processes on two nodes, so
            // under local every process's pages are on its own node.
            assert_eq!(pages["mixed"], 0, "{policy}: {pages}");
            let nodes: std::collections::BTreeSet<u64> = r["per_thread"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|t| t["node"].as_u64())
                .collect();
            assert_eq!(nodes.len(), 4, "{policy}: one scattered thread per node");
        }
    }
}

#[test]
fn the_quick_validation_completed_inside_the_guest() {
    let Some(out) = rig_out() else { return };
    let dir = out.join("validate");
    if !out.join("validate.log").exists() {
        eprintln!("skipped: the rig ran with --no-validate");
        return;
    }
    // It ran: it must have finished (validate.args is its last write before the report).
    assert!(
        dir.join("validate.args").exists(),
        "validate-server.sh --quick did not finish inside the guest: {}",
        std::fs::read_to_string(out.join("validate.log")).unwrap_or_default()
    );
    assert!(
        dir.join("report.md").exists(),
        "no report.md in {}",
        dir.display()
    );
    for pin in ["compact", "scatter"] {
        let runs = read(&dir.join(format!("{pin}.json")));
        assert!(!runs.is_empty());
        for r in &runs {
            assert_eq!(r["safety_violations"], 0, "{pin}: {}", r["lock"]);
            assert_eq!(r["pin"], pin);
        }
        // A thread alone never waits for another, so at 1 thread every lock finishes. With
        // more, a FIFO hand-off waits for its successor's emulated CPU, which the starved host
        // may not run within the watchdog's grace: such a run is reported stalled (its threads
        // left behind, named in the report), which the emulation explains and the test allows.
        for r in runs.iter().filter(|r| r["threads"] == 1) {
            assert!(
                r["stalled"].is_null(),
                "{pin}: {} at 1 thread: {}",
                r["lock"],
                r["stalled"]
            );
        }
        let stalled = runs.iter().filter(|r| !r["stalled"].is_null()).count();
        eprintln!(
            "{pin}: {} runs, {stalled} stalled at 2+ threads",
            runs.len()
        );
    }
}
