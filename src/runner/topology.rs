//! CPU topology read from sysfs, where benchmark threads go, and pinning them there.
//!
//! [`Topology::read`] parses a sysfs tree (`/sys/devices/system/cpu` and, optionally,
//! `/sys/devices/system/node`); [`Topology::detect`] does so for this machine. From a topology,
//! [`Topology::placement`] gives the list of CPUs that threads are pinned to, thread `i` on
//! `placement[i]`:
//!
//! - [`PinMode::Physical`]: one CPU per physical core (the lowest CPU id of each core), filling
//!   one package before the next; within a package, cores of one NUMA node and then of one L3
//!   come together. With SMT asked for, the other hardware threads of each core follow, again
//!   package by package.
//! - [`PinMode::Compact`] and [`PinMode::Scatter`]: fill one NUMA node before the next, or deal
//!   threads out over the nodes and sockets (see [`super::placement`]).
//! - [`PinMode::Logical`]: every online CPU in id order.
//! - [`PinMode::None`]: no pinning (an empty placement).
//!
//! Threads beyond the placement wrap around ([`cpu_for`]); whether to allow that is the
//! caller's decision.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Where Linux exposes the CPUs.
pub const SYSFS_CPU: &str = "/sys/devices/system/cpu";
/// Where Linux exposes the NUMA nodes.
pub const SYSFS_NODE: &str = "/sys/devices/system/node";

/// One online logical CPU.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Cpu {
    /// Logical CPU id: the `N` of `cpuN`, the number `sched_setaffinity` takes.
    pub id: usize,
    /// Physical core key: the lowest online CPU id of this CPU's core, so unique across packages.
    pub core: usize,
    /// Package (socket) id from `physical_package_id`; 0 when the kernel does not say.
    pub package: usize,
    /// Online SMT siblings on the same physical core, this CPU included, ascending.
    pub siblings: Vec<usize>,
    /// Online CPUs sharing this CPU's L3 cache, ascending; `None` when unknown or without L3.
    pub l3: Option<Vec<usize>>,
    /// NUMA node holding this CPU; `None` when unknown.
    pub numa: Option<usize>,
}

/// The online CPUs of a machine and how they group into cores, caches, packages and nodes.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Topology {
    /// Online CPUs, ascending by id.
    pub cpus: Vec<Cpu>,
    /// Online NUMA nodes, ascending by id, each with its online CPUs (possibly none: a
    /// memory-only node). Empty when unknown.
    pub numa_nodes: Vec<(usize, Vec<usize>)>,
    /// What was assumed or left out while building this topology, one sentence each.
    pub notes: Vec<String>,
}

/// How threads are pinned to CPUs.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    clap::ValueEnum,
    serde::Serialize,
    serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum PinMode {
    /// One thread per physical core first (SMT siblings only when asked for).
    #[default]
    Physical,
    /// Every online CPU in id order, SMT siblings included.
    Logical,
    /// Fill one NUMA node's physical cores, then the next node's (SMT siblings only when asked
    /// for, node by node).
    Compact,
    /// Round-robin over the NUMA nodes, consecutive nodes on different sockets (SMT siblings
    /// only when asked for, after every physical core).
    Scatter,
    /// No pinning: the OS scheduler places threads.
    None,
}

/// Why a topology could not be read.
#[derive(Debug)]
pub enum TopologyError {
    /// A file the topology cannot do without could not be read.
    Read {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
    /// A file held something other than what the kernel writes there.
    Parse {
        /// The file.
        path: PathBuf,
        /// Its content, trimmed.
        content: String,
        /// What was expected instead.
        expected: &'static str,
    },
    /// The list of online CPUs is empty.
    NoCpus {
        /// The `online` file.
        path: PathBuf,
    },
    /// Neither sysfs nor the OS's count of usable CPUs is available.
    Unavailable {
        /// Why sysfs failed.
        sysfs: Box<TopologyError>,
        /// Why `available_parallelism` failed.
        source: io::Error,
    },
}

impl fmt::Display for TopologyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TopologyError::Read { path, source } => write!(
                f,
                "cannot read {}: {source}; is sysfs mounted at /sys?",
                path.display()
            ),
            TopologyError::Parse {
                path,
                content,
                expected,
            } => write!(
                f,
                "{}: expected {expected}, found {content:?}",
                path.display()
            ),
            TopologyError::NoCpus { path } => {
                write!(f, "{} lists no online CPU", path.display())
            }
            TopologyError::Unavailable { sysfs, source } => write!(
                f,
                "cannot tell how many CPUs there are ({sysfs}; available_parallelism: {source})"
            ),
        }
    }
}

impl std::error::Error for TopologyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TopologyError::Read { source, .. } | TopologyError::Unavailable { source, .. } => {
                Some(source)
            }
            _ => None,
        }
    }
}

pub use super::cpus::{allowed_cpus, cpu_for, format_cpu_list, parse_cpu_list, pin_current_thread};

impl Topology {
    /// Reads the topology from a sysfs tree: `cpu_root` like `/sys/devices/system/cpu`,
    /// `node_root` like `/sys/devices/system/node` (NUMA nodes; `None` to leave them unknown).
    ///
    /// `cpu_root/online` must exist; every other file is optional and its absence leaves the
    /// corresponding field unknown. A file present with malformed content is an error.
    pub fn read(cpu_root: &Path, node_root: Option<&Path>) -> Result<Topology, TopologyError> {
        let online_path = cpu_root.join("online");
        let online_text = crate::opts::io::read_text(&online_path, crate::opts::io::SYSTEM_CAP)
            .map_err(|source| TopologyError::Read {
                path: online_path.clone(),
                source,
            })?;
        let online = parse_list(&online_path, &online_text)?;
        if online.is_empty() {
            return Err(TopologyError::NoCpus { path: online_path });
        }
        let is_online = |c: &usize| online.binary_search(c).is_ok();

        let numa_nodes = match node_root {
            Some(root) => read_nodes(root, &is_online)?,
            None => Vec::new(),
        };
        let mut raw = Vec::with_capacity(online.len());
        for &id in &online {
            let dir = cpu_root.join(format!("cpu{id}"));
            let topo = dir.join("topology");
            let siblings = match read_list_opt(&topo.join("core_cpus_list"))? {
                Some(list) => Some(list),
                None => read_list_opt(&topo.join("thread_siblings_list"))?,
            };
            let siblings = siblings.map(|s| with_self(s.into_iter().filter(is_online), id));
            // Negative ids (-1: "unknown", on some architectures) count as unknown.
            let nonnegative = |v: Option<i64>| v.and_then(|v| usize::try_from(v).ok());
            raw.push(RawCpu {
                id,
                package: nonnegative(read_int_opt(&topo.join("physical_package_id"))?),
                core_id: nonnegative(read_int_opt(&topo.join("core_id"))?),
                siblings,
                l3: read_l3(&dir.join("cache"))?
                    .map(|l| with_self(l.into_iter().filter(is_online), id)),
                numa: numa_nodes
                    .iter()
                    .find(|(_, cpus)| cpus.contains(&id))
                    .map(|&(node, _)| node),
            });
        }
        Ok(assemble(raw, numa_nodes))
    }

    /// Reads this machine's topology from sysfs, restricted to the CPUs this process may run on
    /// (a note says so when that excludes any). When sysfs cannot be read, assumes one package
    /// of single-threaded cores, one per CPU the process may use, and notes it.
    pub fn detect() -> Result<Topology, TopologyError> {
        match Topology::read(Path::new(SYSFS_CPU), Some(Path::new(SYSFS_NODE))) {
            Ok(topology) => Ok(match allowed_cpus() {
                Ok(allowed) if !allowed.is_empty() => {
                    let restricted = topology.restrict(&allowed);
                    if restricted.cpus.is_empty() {
                        topology
                    } else {
                        restricted
                    }
                }
                _ => topology,
            }),
            Err(sysfs) => {
                let ids = match allowed_cpus() {
                    Ok(ids) if !ids.is_empty() => ids,
                    _ => match std::thread::available_parallelism() {
                        Ok(n) => (0..n.get()).collect(),
                        Err(source) => {
                            return Err(TopologyError::Unavailable {
                                sysfs: Box::new(sysfs),
                                source,
                            })
                        }
                    },
                };
                let mut topology = Topology::flat(&ids);
                topology.notes.push(format!(
                    "CPU topology unknown ({sysfs}): assuming {} CPUs ({}), each its own core, \
                     in one package",
                    ids.len(),
                    format_cpu_list(&ids)
                ));
                Ok(topology)
            }
        }
    }

    /// A topology of the given CPUs, each its own physical core, all in package 0, with no L3
    /// or NUMA information.
    pub fn flat(ids: &[usize]) -> Topology {
        let mut ids = ids.to_vec();
        ids.sort_unstable();
        ids.dedup();
        let raw = ids
            .into_iter()
            .map(|id| RawCpu {
                id,
                package: Some(0),
                core_id: None,
                siblings: Some(vec![id]),
                l3: None,
                numa: None,
            })
            .collect();
        assemble(raw, Vec::new())
    }

    /// This topology limited to the CPUs in `allowed`: sibling, L3 and node lists shrink with
    /// it and core keys are recomputed. Adds a note when any CPU is left out.
    pub fn restrict(&self, allowed: &[usize]) -> Topology {
        let keep = |c: &usize| allowed.contains(c);
        let dropped: Vec<usize> = self
            .cpus
            .iter()
            .map(|c| c.id)
            .filter(|c| !keep(c))
            .collect();
        if dropped.is_empty() {
            return self.clone();
        }
        let raw = self
            .cpus
            .iter()
            .filter(|c| keep(&c.id))
            .map(|c| RawCpu {
                id: c.id,
                package: Some(c.package),
                core_id: None,
                siblings: Some(c.siblings.iter().copied().filter(keep).collect()),
                l3: c
                    .l3
                    .as_ref()
                    .map(|l| l.iter().copied().filter(keep).collect()),
                numa: c.numa,
            })
            .collect();
        let nodes = self
            .numa_nodes
            .iter()
            .map(|(n, cpus)| (*n, cpus.iter().copied().filter(keep).collect()))
            .collect();
        let mut restricted = assemble(raw, nodes);
        restricted.notes = self.notes.clone();
        restricted.notes.push(format!(
            "CPUs {} are online but outside this process's affinity mask; left out",
            format_cpu_list(&dropped)
        ));
        restricted
    }

    /// The CPU with id `id`, if online.
    pub fn cpu(&self, id: usize) -> Option<&Cpu> {
        self.cpus
            .binary_search_by_key(&id, |c| c.id)
            .ok()
            .map(|i| &self.cpus[i])
    }

    /// Number of physical cores.
    pub fn physical_cores(&self) -> usize {
        self.cpus
            .iter()
            .map(|c| c.core)
            .collect::<BTreeSet<_>>()
            .len()
    }

    /// Number of packages (sockets).
    pub fn packages(&self) -> usize {
        self.cpus
            .iter()
            .map(|c| c.package)
            .collect::<BTreeSet<_>>()
            .len()
    }

    /// Number of online logical CPUs.
    pub fn logical_cpus(&self) -> usize {
        self.cpus.len()
    }

    /// Whether some physical core runs more than one online hardware thread.
    pub fn smt(&self) -> bool {
        self.cpus.iter().any(|c| c.siblings.len() > 1)
    }

    /// Physical cores in placement order, each as (package, its CPUs ascending).
    pub(crate) fn ordered_cores(&self) -> Vec<(usize, Vec<usize>)> {
        let mut cores: BTreeMap<usize, Vec<&Cpu>> = BTreeMap::new();
        for cpu in &self.cpus {
            cores.entry(cpu.core).or_default().push(cpu);
        }
        let mut keyed: Vec<_> = cores
            .into_values()
            .map(|mut cpus| {
                cpus.sort_by_key(|c| c.id);
                let first = cpus[0];
                let l3 = first.l3.as_ref().and_then(|l| l.iter().min().copied());
                let key = (first.package, first.numa, l3, first.id);
                (key, cpus.iter().map(|c| c.id).collect::<Vec<_>>())
            })
            .collect();
        keyed.sort();
        keyed
            .into_iter()
            .map(|((package, ..), cpus)| (package, cpus))
            .collect()
    }
}

impl fmt::Display for Topology {
    /// One line, e.g. `2 packages, 8 cores, 16 CPUs (SMT), 2 NUMA nodes`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
        write!(
            f,
            "{}, {}, {}{}",
            plural(self.packages(), "package"),
            plural(self.physical_cores(), "core"),
            plural(self.logical_cpus(), "CPU"),
            if self.smt() { " (SMT)" } else { "" }
        )?;
        if !self.numa_nodes.is_empty() {
            write!(f, ", {}", plural(self.numa_nodes.len(), "NUMA node"))?;
        }
        Ok(())
    }
}

/// What sysfs says about one CPU, before cores are keyed.
struct RawCpu {
    id: usize,
    package: Option<usize>,
    core_id: Option<usize>,
    siblings: Option<Vec<usize>>,
    l3: Option<Vec<usize>>,
    numa: Option<usize>,
}

/// Keys the cores and builds the topology. A CPU's core is its sibling list when the kernel
/// gave one, else the CPUs with the same (package, core_id), else the CPU alone; the key is the
/// lowest id of the core, and each CPU's siblings are the CPUs with its key.
fn assemble(mut raw: Vec<RawCpu>, numa_nodes: Vec<(usize, Vec<usize>)>) -> Topology {
    raw.sort_by_key(|r| r.id);
    let mut by_core_id: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for r in &raw {
        if let Some(core_id) = r.core_id {
            let lowest = by_core_id
                .entry((r.package.unwrap_or(0), core_id))
                .or_insert(r.id);
            *lowest = (*lowest).min(r.id);
        }
    }
    let keys: Vec<usize> = raw
        .iter()
        .map(|r| match (&r.siblings, r.core_id) {
            (Some(s), _) => s.iter().copied().chain([r.id]).min().unwrap_or(r.id),
            (None, Some(core_id)) => by_core_id[&(r.package.unwrap_or(0), core_id)],
            (None, None) => r.id,
        })
        .collect();
    let mut members: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (r, &key) in raw.iter().zip(&keys) {
        members.entry(key).or_default().push(r.id);
    }
    let cpus = raw
        .into_iter()
        .zip(keys)
        .map(|(r, core)| Cpu {
            id: r.id,
            core,
            package: r.package.unwrap_or(0),
            siblings: members[&core].clone(),
            l3: r.l3,
            numa: r.numa,
        })
        .collect();
    Topology {
        cpus,
        numa_nodes,
        notes: Vec::new(),
    }
}

/// `list` ∪ {`id`}, ascending and distinct.
fn with_self(list: impl Iterator<Item = usize>, id: usize) -> Vec<usize> {
    list.chain([id])
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// Online NUMA nodes under `root` with their online CPUs; empty when `root/online` is absent
/// (a kernel without NUMA support).
fn read_nodes(
    root: &Path,
    is_online: &impl Fn(&usize) -> bool,
) -> Result<Vec<(usize, Vec<usize>)>, TopologyError> {
    let Some(nodes) = read_list_opt(&root.join("online"))? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::with_capacity(nodes.len());
    for node in nodes {
        let cpus = read_list_opt(&root.join(format!("node{node}/cpulist")))?.unwrap_or_default();
        out.push((node, cpus.into_iter().filter(is_online).collect()));
    }
    Ok(out)
}

/// The CPUs (online or not) sharing the level-3 cache under `cache` (a `cpuN/cache` dir):
/// `index3` when it is level 3 (or says no level), else the first `indexK` whose level is 3.
fn read_l3(cache: &Path) -> Result<Option<Vec<usize>>, TopologyError> {
    let index3 = cache.join("index3");
    if index3.is_dir() && matches!(read_int_opt(&index3.join("level"))?, None | Some(3)) {
        return read_list_opt(&index3.join("shared_cpu_list"));
    }
    let Ok(entries) = std::fs::read_dir(cache) else {
        return Ok(None);
    };
    let mut indices: Vec<(usize, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name();
            let k = name.to_str()?.strip_prefix("index")?.parse().ok()?;
            Some((k, e.path()))
        })
        .collect();
    indices.sort();
    for (_, dir) in indices {
        if read_int_opt(&dir.join("level"))? == Some(3) {
            return read_list_opt(&dir.join("shared_cpu_list"));
        }
    }
    Ok(None)
}

/// The file's content, or `None` when it cannot be read (absent, or refused by the kernel).
fn read_opt(path: &Path) -> Option<String> {
    crate::opts::io::read_system(path)
}

fn parse_list(path: &Path, text: &str) -> Result<Vec<usize>, TopologyError> {
    parse_cpu_list(text).map_err(|_| TopologyError::Parse {
        path: path.to_path_buf(),
        content: text.trim().to_string(),
        expected: "a CPU list such as 0-3,8-11",
    })
}

fn read_list_opt(path: &Path) -> Result<Option<Vec<usize>>, TopologyError> {
    read_opt(path).map(|t| parse_list(path, &t)).transpose()
}

fn read_int_opt(path: &Path) -> Result<Option<i64>, TopologyError> {
    read_opt(path)
        .map(|t| {
            t.trim().parse().map_err(|_| TopologyError::Parse {
                path: path.to_path_buf(),
                content: t.trim().to_string(),
                expected: "an integer",
            })
        })
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(id: usize, core: usize, package: usize, l3: &[usize], numa: usize) -> Cpu {
        Cpu {
            id,
            core,
            package,
            siblings: vec![id],
            l3: Some(l3.to_vec()),
            numa: Some(numa),
        }
    }

    #[test]
    fn physical_placement_keeps_l3_and_numa_domains_together_within_a_package() {
        // One package whose core numbering alternates between two L3 domains (and two
        // sub-NUMA nodes): cores of one domain must come out together.
        let a = [0, 2, 4, 6];
        let b = [1, 3, 5, 7];
        let mut cpus: Vec<Cpu> = (0..8)
            .map(|i| cpu(i, i, 0, if i % 2 == 0 { &a } else { &b }, 0))
            .collect();
        let t = Topology {
            cpus: cpus.clone(),
            numa_nodes: vec![(0, (0..8).collect())],
            notes: vec![],
        };
        assert_eq!(
            t.placement(PinMode::Physical, false),
            [0, 2, 4, 6, 1, 3, 5, 7]
        );
        // NUMA order comes before L3 order: node 0 (the odd CPUs) first although its L3 key
        // is higher.
        for c in &mut cpus {
            c.numa = Some(if c.id % 2 == 0 { 1 } else { 0 });
        }
        let t = Topology {
            cpus,
            numa_nodes: vec![(0, b.to_vec()), (1, a.to_vec())],
            notes: vec![],
        };
        assert_eq!(
            t.placement(PinMode::Physical, false),
            [1, 3, 5, 7, 0, 2, 4, 6]
        );
    }

    #[test]
    fn smt_siblings_come_rank_by_rank_within_each_package() {
        // SMT-4 cores {0,2,4,6} and {1,3,5,7} in package 0, SMT-2 core {8,9} in package 1.
        let mut cpus = Vec::new();
        for id in 0..8 {
            let siblings: Vec<usize> = (0..8).filter(|c| c % 2 == id % 2).collect();
            cpus.push(Cpu {
                id,
                core: id % 2,
                package: 0,
                siblings,
                l3: None,
                numa: None,
            });
        }
        for id in 8..10 {
            cpus.push(Cpu {
                id,
                core: 8,
                package: 1,
                siblings: vec![8, 9],
                l3: None,
                numa: None,
            });
        }
        let t = Topology {
            cpus,
            numa_nodes: vec![],
            notes: vec![],
        };
        assert_eq!(t.physical_cores(), 3);
        assert_eq!(t.placement(PinMode::Physical, false), [0, 1, 8]);
        assert_eq!(
            t.placement(PinMode::Physical, true),
            [0, 1, 8, 2, 3, 4, 5, 6, 7, 9]
        );
    }

    #[test]
    fn restrict_recomputes_core_keys_and_notes_what_was_left_out() {
        let cpus = (0..4)
            .map(|id| Cpu {
                id,
                core: id % 2,
                package: 0,
                siblings: vec![id % 2, id % 2 + 2],
                l3: Some(vec![0, 1, 2, 3]),
                numa: Some(0),
            })
            .collect();
        let t = Topology {
            cpus,
            numa_nodes: vec![(0, vec![0, 1, 2, 3])],
            notes: vec![],
        };
        let r = t.restrict(&[1, 2, 3]);
        assert_eq!(r.logical_cpus(), 3);
        assert_eq!(r.cpu(2).unwrap().core, 2);
        assert_eq!(r.cpu(2).unwrap().siblings, [2]);
        assert_eq!(r.cpu(3).unwrap().siblings, [1, 3]);
        assert_eq!(r.cpu(1).unwrap().l3.as_deref(), Some(&[1, 2, 3][..]));
        assert_eq!(r.numa_nodes, [(0, vec![1, 2, 3])]);
        assert_eq!(r.placement(PinMode::Physical, false), [1, 2]);
        assert_eq!(r.notes.len(), 1);
        assert!(r.notes[0].contains("CPUs 0 "), "{}", r.notes[0]);
        assert_eq!(t.restrict(&[0, 1, 2, 3, 9]), t);
    }

    #[test]
    fn formats_cpu_lists_with_ranges() {
        assert_eq!(format_cpu_list(&[]), "");
        assert_eq!(format_cpu_list(&[3, 0, 1, 2, 8, 10, 11]), "0-3,8,10-11");
        assert_eq!(format_cpu_list(&[5]), "5");
        let ids = [0, 1, 2, 7, 9, 10];
        assert_eq!(parse_cpu_list(&format_cpu_list(&ids)).unwrap(), ids);
    }
}
