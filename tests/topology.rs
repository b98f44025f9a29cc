//! Topology and placement against sysfs fixture trees.

use std::path::PathBuf;

use lockbench::runner::topology::{PinMode, Topology};

fn fixture(name: &str) -> Topology {
    let base = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/sysfs")
        .join(name);
    Topology::read(&base.join("cpu"), Some(&base.join("node"))).unwrap()
}

#[test]
fn vm_with_two_cpus() {
    let t = fixture("vm-2cpu");
    assert_eq!(
        (t.logical_cpus(), t.physical_cores(), t.packages()),
        (2, 2, 1)
    );
    assert!(!t.smt());
    assert_eq!(t.placement(PinMode::Physical, false), vec![0, 1]);
    assert_eq!(t.placement(PinMode::Physical, true), vec![0, 1]);
    assert_eq!(t.placement(PinMode::Logical, false), vec![0, 1]);
    assert!(t.placement(PinMode::None, false).is_empty());
    assert_eq!(t.cpus[1].l3.as_deref(), Some(&[0, 1][..]));
}

#[test]
fn two_socket_server_with_smt() {
    let t = fixture("server-2s-smt2");
    assert_eq!(
        (t.logical_cpus(), t.physical_cores(), t.packages()),
        (16, 8, 2)
    );
    assert!(t.smt());
    assert_eq!(t.numa_nodes.len(), 2);
    assert_eq!(t.cpus[12].numa, Some(1));
    assert_eq!(t.cpus[9].siblings, vec![1, 9]);
    // Physical cores of socket 0, then socket 1; never a sibling.
    assert_eq!(
        t.placement(PinMode::Physical, false),
        vec![0, 1, 2, 3, 4, 5, 6, 7]
    );
    // Siblings only after every physical core, again socket by socket.
    assert_eq!(
        t.placement(PinMode::Physical, true),
        vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]
    );
    assert_eq!(
        t.placement(PinMode::Logical, false),
        (0..16).collect::<Vec<_>>()
    );
}

#[test]
fn desktop_with_adjacent_siblings_and_an_older_kernel() {
    // This tree has only thread_siblings_list (no core_cpus_list), as older kernels do.
    let t = fixture("desktop-1s-smt2");
    assert_eq!(
        (t.logical_cpus(), t.physical_cores(), t.packages()),
        (8, 4, 1)
    );
    assert_eq!(t.placement(PinMode::Physical, false), vec![0, 2, 4, 6]);
    assert_eq!(
        t.placement(PinMode::Physical, true),
        vec![0, 2, 4, 6, 1, 3, 5, 7]
    );
    assert_eq!(
        t.placement(PinMode::Logical, false),
        (0..8).collect::<Vec<_>>()
    );
}

#[test]
fn missing_tree_is_a_clear_error() {
    let err = Topology::read(&PathBuf::from("/nonexistent/cpu"), None).unwrap_err();
    assert!(
        err.to_string()
            .contains("cannot read /nonexistent/cpu/online"),
        "{err}"
    );
}
