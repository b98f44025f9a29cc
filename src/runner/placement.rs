//! Placement across NUMA nodes and sockets: the `compact` and `scatter` orders of
//! [`Topology::placement`](super::topology::Topology::placement), and where each thread ran
//! (CPU, core, node, socket) for the results.
//!
//! A CPU's *node* is its NUMA node; on a machine whose kernel reports no node, its package
//! stands in (one node per socket), so both orders still mean something there.
//!
//! - **compact** fills one node before the next: the node's physical cores (one CPU each, cores
//!   sharing an L3 together), then, with SMT asked for, that node's other hardware threads rank
//!   by rank; nodes in (socket, node) order.
//! - **scatter** deals threads out round-robin over the nodes, the nodes ordered so that
//!   consecutive ones sit on different sockets (socket 0's first node, socket 1's first node,
//!   socket 0's second node, ...): two threads land on two sockets, four on four nodes. Every
//!   node's physical cores come before any SMT sibling (siblings only with SMT asked for,
//!   dealt out the same way).

use std::collections::BTreeMap;

use super::topology::{Cpu, PinMode, Topology};

/// Where one thread ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    /// Logical CPU id.
    pub cpu: usize,
    /// Physical core key (the lowest CPU id of the core).
    pub core: usize,
    /// NUMA node (`None` when the kernel reports none).
    pub node: Option<usize>,
    /// Package (socket).
    pub socket: usize,
}

/// The place of CPU `cpu` in `topo`, if it is one of its CPUs.
pub fn place_of(topo: &Topology, cpu: usize) -> Option<Place> {
    topo.cpu(cpu).map(|c| Place {
        cpu: c.id,
        core: c.core,
        node: c.numa,
        socket: c.package,
    })
}

// Placement orders are defined here, beside `compact` and `scatter`, so that the topology
// (below) knows nothing of the policies built on it.
impl Topology {
    /// The CPUs threads are placed on, in order: thread `i` goes to `placement[i]` (see the
    /// [module documentation](super::topology) for the order). `smt` adds the SMT siblings under
    /// [`PinMode::Physical`], [`PinMode::Compact`] and [`PinMode::Scatter`]; the other modes
    /// ignore it.
    pub fn placement(&self, pin: PinMode, smt: bool) -> Vec<usize> {
        match pin {
            PinMode::None => Vec::new(),
            PinMode::Compact => compact(self, smt),
            PinMode::Scatter => scatter(self, smt),
            PinMode::Logical => {
                let mut ids: Vec<usize> = self.cpus.iter().map(|c| c.id).collect();
                ids.sort_unstable();
                ids
            }
            PinMode::Physical => {
                let cores = self.ordered_cores();
                let mut out: Vec<usize> = cores.iter().map(|(_, cpus)| cpus[0]).collect();
                if smt {
                    for package in cores.chunk_by(|a, b| a.0 == b.0) {
                        let width = package.iter().map(|(_, c)| c.len()).max().unwrap_or(0);
                        for rank in 1..width {
                            out.extend(package.iter().filter_map(|(_, c)| c.get(rank)));
                        }
                    }
                }
                out
            }
        }
    }
}

/// One node's cores in placement order, each core's CPUs ascending.
struct NodeCores {
    socket: usize,
    cores: Vec<Vec<usize>>,
}

/// A core with its sort key: (lowest CPU id sharing its L3, its lowest CPU id, its CPUs).
type KeyedCore = (Option<usize>, usize, Vec<usize>);

/// The nodes of `topo` in (socket, node) order with their cores (cores sharing an L3
/// together, then by lowest id).
fn nodes(topo: &Topology) -> Vec<NodeCores> {
    let mut cores: BTreeMap<usize, Vec<&Cpu>> = BTreeMap::new();
    for cpu in &topo.cpus {
        cores.entry(cpu.core).or_default().push(cpu);
    }
    // (socket, node key) → [(l3 key, first id, cpus)]
    let mut by_node: BTreeMap<(usize, usize), Vec<KeyedCore>> = BTreeMap::new();
    for mut cpus in cores.into_values() {
        cpus.sort_by_key(|c| c.id);
        let first = cpus[0];
        let node = first.numa.unwrap_or(first.package);
        let l3 = first.l3.as_ref().and_then(|l| l.iter().min().copied());
        by_node.entry((first.package, node)).or_default().push((
            l3,
            first.id,
            cpus.iter().map(|c| c.id).collect(),
        ));
    }
    by_node
        .into_iter()
        .map(|((socket, _), mut cores)| {
            cores.sort();
            NodeCores {
                socket,
                cores: cores.into_iter().map(|(_, _, cpus)| cpus).collect(),
            }
        })
        .collect()
}

/// The widest core's number of hardware threads.
fn width(nodes: &[NodeCores]) -> usize {
    nodes
        .iter()
        .flat_map(|n| n.cores.iter().map(Vec::len))
        .max()
        .unwrap_or(0)
}

/// The compact order (see the module documentation).
pub(crate) fn compact(topo: &Topology, smt: bool) -> Vec<usize> {
    let nodes = nodes(topo);
    let ranks = if smt { width(&nodes) } else { 1 };
    let mut out = Vec::new();
    for node in &nodes {
        for rank in 0..ranks {
            out.extend(node.cores.iter().filter_map(|c| c.get(rank)));
        }
    }
    out
}

/// The scatter order (see the module documentation).
pub(crate) fn scatter(topo: &Topology, smt: bool) -> Vec<usize> {
    let nodes = nodes(topo);
    // Nodes interleaved across sockets: each socket's i-th node, socket by socket, for i = 0, 1, …
    let mut per_socket: BTreeMap<usize, Vec<&NodeCores>> = BTreeMap::new();
    for n in &nodes {
        per_socket.entry(n.socket).or_default().push(n);
    }
    let deepest = per_socket.values().map(Vec::len).max().unwrap_or(0);
    let order: Vec<&NodeCores> = (0..deepest)
        .flat_map(|i| per_socket.values().filter_map(move |s| s.get(i).copied()))
        .collect();
    let ranks = if smt { width(&nodes) } else { 1 };
    let most_cores = nodes.iter().map(|n| n.cores.len()).max().unwrap_or(0);
    let mut out = Vec::new();
    for rank in 0..ranks {
        for i in 0..most_cores {
            out.extend(
                order
                    .iter()
                    .filter_map(|n| n.cores.get(i).and_then(|c| c.get(rank))),
            );
        }
    }
    out
}

/// Threads and passages per second of each node the threads of one run used, from each
/// thread's node and rate: `(node, threads, passages per second)`, ascending by node. Threads
/// without a node are left out; empty when fewer than two nodes were used.
pub fn per_node(
    threads: impl IntoIterator<Item = (Option<usize>, f64)>,
) -> Vec<(usize, usize, f64)> {
    let mut by: BTreeMap<usize, (usize, f64)> = BTreeMap::new();
    for (node, rate) in threads {
        if let Some(n) = node {
            let e = by.entry(n).or_default();
            e.0 += 1;
            e.1 += rate;
        }
    }
    if by.len() < 2 {
        return Vec::new();
    }
    by.into_iter().map(|(n, (t, r))| (n, t, r)).collect()
}
