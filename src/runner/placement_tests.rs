//! Placement across NUMA nodes and sockets, inside the crate: each policy's CPU list on the sysfs
//! fixtures of a 2-socket Intel server with SMT and an AMD server with 4 NUMA nodes per socket
//! (NPS4), the memory policies' page binding on this machine, and the per-node breakdown.
//! (`tests/placement.rs` drives the same through the binary.)

use std::path::PathBuf;

use crate::runner::placement::place_of;
use crate::runner::topology::{PinMode, Topology};

/// A file or directory under `tests/fixtures`.
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

fn range(r: std::ops::Range<usize>) -> Vec<usize> {
    r.collect()
}

#[test]
fn intel_two_sockets_with_smt() {
    // 2 sockets × 6 cores × 2 threads: CPUs 0-5 on socket 0, 6-11 on socket 1, siblings +12;
    // one NUMA node per socket.
    let t = fixture("intel-2s-smt2");
    assert_eq!(
        t.to_string(),
        "2 packages, 12 cores, 24 CPUs (SMT), 2 NUMA nodes"
    );

    assert_eq!(t.placement(PinMode::Physical, false), range(0..12));
    assert_eq!(t.placement(PinMode::Physical, true), range(0..24));
    assert_eq!(t.placement(PinMode::Compact, false), range(0..12));
    let compact_smt: Vec<usize> = [0..6, 12..18, 6..12, 18..24]
        .into_iter()
        .flatten()
        .collect();
    assert_eq!(t.placement(PinMode::Compact, true), compact_smt);
    assert_eq!(
        t.placement(PinMode::Scatter, false),
        [0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11]
    );
    assert_eq!(
        t.placement(PinMode::Scatter, true),
        [0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11, 12, 18, 13, 19, 14, 20, 15, 21, 16, 22, 17, 23]
    );
    assert_eq!(t.placement(PinMode::Logical, true), range(0..24));

    let p = place_of(&t, 19).unwrap();
    assert_eq!((p.cpu, p.core, p.node, p.socket), (19, 7, Some(1), 1));
}

#[test]
fn amd_two_sockets_four_nodes_per_socket() {
    // 2 sockets × 4 nodes × 2 cores × 2 threads: node n holds cores 2n and 2n+1 (one L3
    // each) and their siblings +16; nodes 0-3 on socket 0, 4-7 on socket 1.
    let t = fixture("amd-2s-nps4");
    assert_eq!(
        t.to_string(),
        "2 packages, 16 cores, 32 CPUs (SMT), 8 NUMA nodes"
    );
    assert_eq!(t.numa_nodes[5], (5, vec![10, 11, 26, 27]));

    assert_eq!(t.placement(PinMode::Physical, false), range(0..16));
    assert_eq!(t.placement(PinMode::Compact, false), range(0..16));
    let compact_smt: Vec<usize> = (0..8)
        .flat_map(|n| [2 * n, 2 * n + 1, 2 * n + 16, 2 * n + 17])
        .collect();
    assert_eq!(t.placement(PinMode::Compact, true), compact_smt);
    // Nodes dealt as 0, 4, 1, 5, 2, 6, 3, 7: each socket's next node in turn.
    let scatter = [0, 8, 2, 10, 4, 12, 6, 14, 1, 9, 3, 11, 5, 13, 7, 15];
    assert_eq!(t.placement(PinMode::Scatter, false), scatter);
    let scatter_smt: Vec<usize> = scatter
        .iter()
        .copied()
        .chain(scatter.iter().map(|c| c + 16))
        .collect();
    assert_eq!(t.placement(PinMode::Scatter, true), scatter_smt);

    // Two scattered threads are on two sockets, four on four nodes; compact keeps four
    // threads on two nodes of one socket.
    let where_ = |pin, n: usize| -> Vec<(Option<usize>, usize)> {
        t.placement(pin, false)[..n]
            .iter()
            .map(|&c| {
                let p = place_of(&t, c).unwrap();
                (p.node, p.socket)
            })
            .collect()
    };
    assert_eq!(where_(PinMode::Scatter, 2), [(Some(0), 0), (Some(4), 1)]);
    assert_eq!(
        where_(PinMode::Scatter, 4),
        [(Some(0), 0), (Some(4), 1), (Some(1), 0), (Some(5), 1)]
    );
    assert_eq!(
        where_(PinMode::Compact, 4),
        [(Some(0), 0), (Some(0), 0), (Some(1), 0), (Some(1), 0)]
    );
}

#[test]
fn cpus_restricts_every_policy_before_it_orders() {
    let t = fixture("amd-2s-nps4");
    // Nodes 1 and 5 only (one on each socket).
    let r = t.restrict(&[2, 3, 10, 11, 18, 19, 26, 27]);
    assert_eq!(r.placement(PinMode::Scatter, false), [2, 10, 3, 11]);
    assert_eq!(r.placement(PinMode::Compact, false), [2, 3, 10, 11]);
    assert_eq!(
        r.placement(PinMode::Compact, true),
        [2, 3, 18, 19, 10, 11, 26, 27]
    );
}

#[test]
fn registers_are_bound_where_the_policy_says_and_the_kernel_agrees() {
    use crate::mem::placement::{apply, node_of, record, MemPolicy};
    use crate::mem::{Memory, NativeMemory, Register};

    let mem = NativeMemory::default();
    // 100 per-process registers: four pages of them.
    let (regs, regions) = record(|| mem.per_process(100, 3));
    assert_eq!(regions.len(), 1);
    assert_eq!(regions[0].addr, regs.as_ptr() as usize);
    assert_eq!(regions[0].homes.len(), 100);
    // Nothing is recorded outside `record`.
    let (_, none) = record(|| ());
    assert!(none.is_empty());
    let _untracked = mem.per_process(4, 0);

    // This machine has node 0 only: every policy must leave every page on node 0, and the
    // values must survive the move.
    for policy in [MemPolicy::Node(0), MemPolicy::Interleave, MemPolicy::Local] {
        let placed = apply(policy, &regions, (0, 0), &|_| Some(0), &[0]);
        assert_eq!(placed.error, None, "{policy}");
        assert_eq!(placed.mixed, 0, "{policy}");
        assert_eq!(placed.misplaced, 0, "{policy}");
        assert!(placed.pages >= 4, "{policy}: {placed:?}");
        for r in regs.iter().step_by(7) {
            assert_eq!(node_of(r as *const _ as *const u8).unwrap(), 0, "{policy}");
            assert_eq!(r.read(0), 3);
        }
    }
    // Under local, a page whose registers' owners sit on different nodes is counted (even
    // processes on node 0, odd on node 1: every page is mixed).
    let placed = apply(
        MemPolicy::Local,
        &regions,
        (0, 0),
        &|p| Some(p % 2),
        &[0, 1],
    );
    assert!(placed.mixed >= 4, "{placed:?}");
}

#[test]
fn paged_registers_give_every_process_pages_of_its_own() {
    use crate::mem::paged::{PagedMemory, REGISTER_PAGE};
    use crate::mem::placement::{apply, node_of, record, MemPolicy};
    use crate::mem::{Memory, Register};

    let mem = PagedMemory::default();
    let (regs, regions) = record(|| mem.per_process(10, 3));
    assert_eq!(regions[0].stride, REGISTER_PAGE);
    // Owners on alternating nodes (here the odd ones' node is not there, so their binds fail),
    // and still no page holds two owners' registers: one page each, none mixed.
    let placed = apply(
        MemPolicy::Local,
        &regions,
        (0, 0),
        &|p| Some(p % 2),
        &[0, 1],
    );
    assert_eq!(placed.mixed, 0, "{placed:?}");
    assert_eq!(placed.pages, 10, "{placed:?}");
    // On this machine's node 0: every page of every process there, the values kept.
    let placed = apply(MemPolicy::Local, &regions, (0, 0), &|_| Some(0), &[0]);
    assert_eq!((placed.pages, placed.mixed, placed.misplaced), (10, 0, 0));
    assert_eq!(placed.error, None);
    for r in regs.iter() {
        assert_eq!(node_of(r as *const _ as *const u8).unwrap(), 0);
        assert_eq!(r.read(0), 3);
    }
}

#[test]
fn one_query_says_where_every_page_is() {
    use crate::mem::paged::PagedMemory;
    use crate::mem::placement::nodes_of;
    use crate::mem::Memory;

    let regs = PagedMemory::default().per_process(8, 1);
    // A fresh anonymous mapping's page that nothing touched: the kernel has no page there
    // yet. (A heap allocation may reuse pages another test already touched.)
    let untouched = crate::mem::placement::FreshMapping::new(1 << 21);
    let mut addrs: Vec<usize> = regs.iter().map(|r| r as *const _ as usize).collect();
    addrs.push(untouched.addr as usize + (1 << 20));
    let found = nodes_of(&addrs).unwrap();
    assert_eq!(found.len(), 9);
    for n in &found[..8] {
        assert_eq!(*n.as_ref().unwrap(), 0);
    }
    assert!(found[8].is_err(), "{:?}", found[8]);
}

#[test]
fn without_numa_nodes_packages_stand_in() {
    // Two packages of two cores each, no NUMA information.
    let mut t = Topology::flat(&[0, 1, 2, 3]);
    for c in &mut t.cpus {
        c.package = c.id / 2;
    }
    assert_eq!(t.placement(PinMode::Compact, false), [0, 1, 2, 3]);
    assert_eq!(t.placement(PinMode::Scatter, false), [0, 2, 1, 3]);
}

#[test]
fn per_node_sums_rates_and_needs_two_nodes() {
    use crate::runner::placement::per_node;
    assert!(per_node([(Some(0), 1.0), (Some(0), 2.0)]).is_empty());
    assert!(per_node([(None, 1.0), (None, 2.0)]).is_empty());
    assert_eq!(
        per_node([(Some(1), 1.0), (Some(0), 2.0), (Some(1), 3.0), (None, 9.0)]),
        [(0, 1, 2.0), (1, 2, 4.0)]
    );
}

#[test]
fn memory_policies_parse_and_print_as_written() {
    use crate::mem::placement::MemPolicy;
    for s in ["local", "interleave", "node:0", "node:3"] {
        assert_eq!(s.parse::<MemPolicy>().unwrap().to_string(), s);
    }
    for bad in ["", "node:", "node:x", "remote", "node:-1"] {
        let e = bad.parse::<MemPolicy>().unwrap_err();
        assert!(e.contains("node:N"), "{e}");
    }
}

#[test]
fn the_table_breaks_throughput_down_by_node_only_across_nodes() {
    use crate::report::nodes::{markdown, table_section};
    use crate::report::result::{RunResult, ThreadResult};
    let run = |nodes: &[Option<usize>]| RunResult {
        lock: "ticket".into(),
        threads: nodes.len(),
        mix: "distinct".into(),
        per_thread: nodes
            .iter()
            .enumerate()
            .map(|(i, &node)| ThreadResult {
                thread: i,
                node,
                rate_per_sec: 1000.0 * (i + 1) as f64,
                ..ThreadResult::default()
            })
            .collect(),
        ..RunResult::default()
    };
    assert!(table_section(&[run(&[Some(0), Some(0)])]).is_empty());
    assert!(table_section(&[run(&[None, None])]).is_empty());
    let s = table_section(&[run(&[Some(0), Some(1), Some(1)])]);
    assert!(s.contains("ticket t=3 distinct: node 0 1 thread "), "{s}");
    assert!(s.contains("node 1 2 threads"), "{s}");
    let mut md = String::new();
    markdown(&mut md, &[run(&[Some(0), Some(1)])]);
    assert!(md.starts_with("## Throughput per NUMA node"), "{md}");
}
