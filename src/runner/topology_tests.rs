//! Topology parsing from sysfs fixtures, thread placement, and pinning on this machine.

use std::fs;
use std::path::PathBuf;

use clap::ValueEnum;

use crate::runner::topology::{
    allowed_cpus, cpu_for, parse_cpu_list, pin_current_thread, PinMode, Topology, TopologyError,
};

/// A file or directory under `tests/fixtures` (`sysfs/vm`).
fn fixture_path(rel: &str) -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

fn fixture(name: &str) -> Topology {
    let root = fixture_path(&format!("sysfs/{name}"));
    Topology::read(&root.join("cpu"), Some(&root.join("node")))
        .unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

/// Writes `files` (path relative to `root`, content) into a fresh directory.
fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, content) in files {
        let path = dir.path().join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, format!("{content}\n")).unwrap();
    }
    dir
}

#[test]
fn vm_with_two_single_threaded_cores() {
    let t = fixture("vm-2cpu");
    assert_eq!(t.logical_cpus(), 2);
    assert_eq!(t.physical_cores(), 2);
    assert_eq!(t.packages(), 1);
    assert!(!t.smt());
    assert_eq!(t.numa_nodes, [(0, vec![0, 1])]);
    let cpu1 = t.cpu(1).unwrap();
    assert_eq!((cpu1.core, cpu1.package, cpu1.numa), (1, 0, Some(0)));
    assert_eq!(cpu1.siblings, [1]);
    assert_eq!(cpu1.l3.as_deref(), Some(&[0, 1][..]));
    assert_eq!(t.placement(PinMode::Physical, false), [0, 1]);
    assert_eq!(t.placement(PinMode::Physical, true), [0, 1]);
    assert_eq!(t.placement(PinMode::Logical, false), [0, 1]);
    assert!(t.notes.is_empty());
    assert_eq!(t.to_string(), "1 package, 2 cores, 2 CPUs, 1 NUMA node");
}

#[test]
fn two_socket_server_fills_a_socket_before_the_next() {
    let t = fixture("server-2s-smt2");
    assert_eq!(t.logical_cpus(), 16);
    assert_eq!(t.physical_cores(), 8);
    assert_eq!(t.packages(), 2);
    assert!(t.smt());
    assert_eq!(
        t.numa_nodes,
        [
            (0, vec![0, 1, 2, 3, 8, 9, 10, 11]),
            (1, vec![4, 5, 6, 7, 12, 13, 14, 15])
        ]
    );
    // core_id repeats across sockets; core keys do not.
    let (c4, c12) = (t.cpu(4).unwrap(), t.cpu(12).unwrap());
    assert_eq!((c4.core, c4.package, c4.numa), (4, 1, Some(1)));
    assert_eq!((c12.core, c12.package), (4, 1));
    assert_eq!(c12.siblings, [4, 12]);
    assert_eq!(t.cpu(0).unwrap().core, 0);
    assert_eq!(c12.l3.as_deref(), Some(&[4, 5, 6, 7, 12, 13, 14, 15][..]));

    assert_eq!(
        t.placement(PinMode::Physical, false),
        [0, 1, 2, 3, 4, 5, 6, 7]
    );
    assert_eq!(
        t.placement(PinMode::Physical, true),
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
    );
    assert_eq!(
        t.placement(PinMode::Logical, false),
        (0..16).collect::<Vec<_>>()
    );
    assert!(t.placement(PinMode::None, true).is_empty());
}

#[test]
fn desktop_with_adjacent_siblings_places_one_thread_per_core_first() {
    let t = fixture("desktop-1s-smt2");
    assert_eq!(t.logical_cpus(), 8);
    assert_eq!(t.physical_cores(), 4);
    assert_eq!(t.packages(), 1);
    assert!(t.smt());
    let c5 = t.cpu(5).unwrap();
    assert_eq!((c5.core, c5.package, c5.numa), (4, 0, Some(0)));
    assert_eq!(c5.siblings, [4, 5]);
    assert_eq!(t.placement(PinMode::Physical, false), [0, 2, 4, 6]);
    assert_eq!(
        t.placement(PinMode::Physical, true),
        [0, 2, 4, 6, 1, 3, 5, 7]
    );
    assert_eq!(
        t.placement(PinMode::Logical, true),
        [0, 1, 2, 3, 4, 5, 6, 7]
    );
}

#[test]
fn cpu_list_syntax() {
    assert_eq!(
        parse_cpu_list("0-3,8-11").unwrap(),
        [0, 1, 2, 3, 8, 9, 10, 11]
    );
    assert_eq!(parse_cpu_list("5").unwrap(), [5]);
    assert_eq!(parse_cpu_list("0,2,4\n").unwrap(), [0, 2, 4]);
    assert_eq!(parse_cpu_list(" 0 - 1 , 3 \n").unwrap(), [0, 1, 3]);
    assert_eq!(parse_cpu_list("4-4,1,0-1").unwrap(), [0, 1, 4]);
    assert_eq!(parse_cpu_list("").unwrap(), Vec::<usize>::new());
    assert_eq!(parse_cpu_list(" \n").unwrap(), Vec::<usize>::new());
    for bad in ["3-1", "0,,2", "0,", "a", "0-", "-1", "1-2-3", "0x3"] {
        let err = parse_cpu_list(bad).expect_err(bad);
        assert!(err.to_string().contains("0-3,8-11"), "{err}");
    }
}

#[test]
fn cpu_for_wraps_and_none_means_unpinned() {
    let placement = [0, 2, 4];
    let cpus: Vec<_> = (0..7).map(|t| cpu_for(&placement, t)).collect();
    assert_eq!(
        cpus,
        [
            Some(0),
            Some(2),
            Some(4),
            Some(0),
            Some(2),
            Some(4),
            Some(0)
        ]
    );
    assert_eq!(cpu_for(&[], 0), None);
}

#[test]
fn pin_mode_names_on_the_command_line_and_in_json() {
    assert_eq!(PinMode::from_str("physical", false), Ok(PinMode::Physical));
    assert_eq!(PinMode::from_str("logical", false), Ok(PinMode::Logical));
    assert_eq!(PinMode::from_str("none", false), Ok(PinMode::None));
    assert_eq!(
        serde_json::to_string(&PinMode::Physical).unwrap(),
        "\"physical\""
    );
    assert_eq!(PinMode::default(), PinMode::Physical);
}

#[test]
fn missing_online_file_is_a_one_line_error() {
    let dir = tree(&[("cpu/cpu0/topology/core_id", "0")]);
    let err = Topology::read(&dir.path().join("cpu"), None).unwrap_err();
    assert!(matches!(err, TopologyError::Read { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("cpu/online") && !msg.contains('\n'), "{msg}");
}

#[test]
fn empty_or_malformed_files_are_errors() {
    let dir = tree(&[("cpu/online", "")]);
    let err = Topology::read(&dir.path().join("cpu"), None).unwrap_err();
    assert!(matches!(err, TopologyError::NoCpus { .. }), "{err:?}");

    let dir = tree(&[
        ("cpu/online", "0-1"),
        ("cpu/cpu1/topology/physical_package_id", "zero"),
    ]);
    let err = Topology::read(&dir.path().join("cpu"), None).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("cpu1/topology/physical_package_id") && msg.contains("\"zero\""),
        "{msg}"
    );
}

#[test]
fn missing_optional_files_leave_fields_unknown() {
    let dir = tree(&[("cpu/online", "0-3")]);
    let cpu = dir.path().join("cpu");
    let absent_nodes: PathBuf = dir.path().join("node");
    let t = Topology::read(&cpu, Some(&absent_nodes)).unwrap();
    assert_eq!(t.logical_cpus(), 4);
    assert_eq!(t.physical_cores(), 4);
    assert_eq!(t.packages(), 1);
    assert!(t.numa_nodes.is_empty());
    for c in &t.cpus {
        assert_eq!(
            (c.core, c.package, c.l3.as_ref(), c.numa),
            (c.id, 0, None, None)
        );
        assert_eq!(c.siblings, [c.id]);
    }
    assert_eq!(t.placement(PinMode::Physical, true), [0, 1, 2, 3]);
}

#[test]
fn cores_from_core_id_when_sibling_lists_are_missing() {
    let mut files = vec![("cpu/online", "0-3")];
    let ids = ["0", "0", "1", "1"];
    let paths: Vec<String> = (0..4)
        .map(|c| format!("cpu/cpu{c}/topology/core_id"))
        .collect();
    for (p, id) in paths.iter().zip(ids) {
        files.push((p, id));
    }
    let dir = tree(&files);
    let t = Topology::read(&dir.path().join("cpu"), None).unwrap();
    assert_eq!(t.physical_cores(), 2);
    assert_eq!(t.cpu(1).unwrap().siblings, [0, 1]);
    assert_eq!(t.cpu(3).unwrap().core, 2);
    assert_eq!(t.placement(PinMode::Physical, true), [0, 2, 1, 3]);
}

#[test]
fn offline_cpus_are_left_out_of_every_list() {
    let dir = tree(&[
        ("cpu/online", "0-2"),
        ("cpu/cpu2/topology/core_cpus_list", "2-3"),
        ("cpu/cpu2/cache/index3/level", "3"),
        ("cpu/cpu2/cache/index3/shared_cpu_list", "0-3"),
        ("cpu/cpu3/topology/core_cpus_list", "2-3"),
        ("node/online", "0"),
        ("node/node0/cpulist", "0-2"),
    ]);
    let t = Topology::read(&dir.path().join("cpu"), Some(&dir.path().join("node"))).unwrap();
    assert_eq!(t.logical_cpus(), 3);
    let c2 = t.cpu(2).unwrap();
    assert_eq!(c2.siblings, [2]);
    assert_eq!(c2.l3.as_deref(), Some(&[0, 1, 2][..]));
    assert!(t.cpu(3).is_none());
    assert!(!t.smt());
}

#[test]
fn l3_found_at_another_index_when_index3_is_absent() {
    let dir = tree(&[
        ("cpu/online", "0"),
        ("cpu/cpu0/cache/index0/level", "1"),
        ("cpu/cpu0/cache/index0/shared_cpu_list", "0"),
        ("cpu/cpu0/cache/index1/level", "2"),
        ("cpu/cpu0/cache/index1/shared_cpu_list", "0"),
        ("cpu/cpu0/cache/index2/level", "3"),
        ("cpu/cpu0/cache/index2/shared_cpu_list", "0-7"),
    ]);
    let t = Topology::read(&dir.path().join("cpu"), None).unwrap();
    // Only CPU 0 is online, so the L3 list shrinks to it.
    assert_eq!(t.cpu(0).unwrap().l3.as_deref(), Some(&[0][..]));

    let dir = tree(&[("cpu/online", "0"), ("cpu/cpu0/cache/index0/level", "1")]);
    let t = Topology::read(&dir.path().join("cpu"), None).unwrap();
    assert_eq!(t.cpu(0).unwrap().l3, None);
}

#[test]
fn detect_reads_this_machine() {
    let t = Topology::detect().unwrap();
    assert!(t.logical_cpus() >= 1);
    assert!(t.physical_cores() >= 1 && t.physical_cores() <= t.logical_cpus());
    let ids: Vec<usize> = t.cpus.iter().map(|c| c.id).collect();
    assert_eq!(t.placement(PinMode::Logical, false), ids);
    let physical = t.placement(PinMode::Physical, false);
    assert_eq!(physical.len(), t.physical_cores());
    let mut with_smt = t.placement(PinMode::Physical, true);
    with_smt.sort_unstable();
    assert_eq!(with_smt, ids);
    let allowed = allowed_cpus().unwrap();
    assert!(
        ids.iter().all(|c| allowed.contains(c)),
        "{ids:?} vs {allowed:?}"
    );
}

#[test]
fn pinning_moves_the_thread_and_bad_cpus_are_refused() {
    let first = allowed_cpus().unwrap()[0];
    let after = std::thread::spawn(move || {
        pin_current_thread(first).unwrap();
        allowed_cpus().unwrap()
    })
    .join()
    .unwrap();
    assert_eq!(after, [first]);
    let err = std::thread::spawn(|| pin_current_thread(1 << 20).unwrap_err())
        .join()
        .unwrap();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
}
