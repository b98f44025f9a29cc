//! CPU topology from sysfs, thread placement and pinning, and the host description.
//!
//! Read from `/sys/devices/system/cpu`: `online`, and for each online `cpuN`:
//! `topology/core_cpus_list` (or the older `thread_siblings_list`),
//! `topology/physical_package_id`, `topology/core_id`, and the L3's `cache/indexK/shared_cpu_list`
//! (the index whose `level` is 3); NUMA nodes from `/sys/devices/system/node`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// Where threads go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PinMode {
    /// One thread per physical core, package by package; SMT siblings after every core, only
    /// with `--smt`.
    Physical,
    /// Every logical CPU, in id order.
    Logical,
    /// No pinning: the OS places threads.
    None,
}

/// One online logical CPU.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Cpu {
    /// Logical CPU id.
    pub id: usize,
    /// Physical core key, unique across packages (the lowest CPU id among its SMT siblings).
    pub core: usize,
    /// Package (socket).
    pub package: usize,
    /// SMT siblings, itself included, ascending.
    pub siblings: Vec<usize>,
    /// CPUs sharing its L3, if known.
    pub l3: Option<Vec<usize>>,
    /// NUMA node, if known.
    pub numa: Option<usize>,
}

/// The online CPUs of a machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    /// Online CPUs, ascending by id.
    pub cpus: Vec<Cpu>,
    /// NUMA nodes and their CPUs.
    pub numa_nodes: Vec<(usize, Vec<usize>)>,
    /// Where it was read from, or why it was guessed.
    pub source: String,
}

/// Why the topology could not be read.
#[derive(Debug)]
pub struct TopologyError(pub String);

impl std::fmt::Display for TopologyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TopologyError {}

/// Parses the kernel's CPU list syntax: `0-3,8-11`, `5`, or empty.
pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in s.trim().split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let num = |x: &str| {
            x.trim()
                .parse::<usize>()
                .map_err(|_| format!("bad CPU list {s:?}"))
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (num(a)?, num(b)?);
                if a > b {
                    return Err(format!("bad CPU range {part:?}"));
                }
                out.extend(a..=b);
            }
            None => out.push(num(part)?),
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

fn read_trim(p: &Path) -> Option<String> {
    fs::read_to_string(p).ok().map(|s| s.trim().to_string())
}

fn read_list(p: &Path) -> Option<Vec<usize>> {
    read_trim(p).and_then(|s| parse_cpu_list(&s).ok())
}

fn l3_of(cpu_dir: &Path) -> Option<Vec<usize>> {
    let cache = cpu_dir.join("cache");
    let mut entries: Vec<PathBuf> = fs::read_dir(&cache)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("index"))
        })
        .collect();
    entries.sort();
    entries
        .iter()
        .find(|d| read_trim(&d.join("level")).as_deref() == Some("3"))
        .and_then(|d| read_list(&d.join("shared_cpu_list")))
}

impl Topology {
    /// Reads a sysfs-like tree: `cpu_root` like `/sys/devices/system/cpu`, `node_root` like
    /// `/sys/devices/system/node`.
    pub fn read(cpu_root: &Path, node_root: Option<&Path>) -> Result<Topology, TopologyError> {
        let online_path = cpu_root.join("online");
        let online = read_trim(&online_path)
            .ok_or_else(|| TopologyError(format!("cannot read {}", online_path.display())))?;
        let online = parse_cpu_list(&online).map_err(TopologyError)?;
        if online.is_empty() {
            return Err(TopologyError(format!(
                "{} lists no CPU",
                online_path.display()
            )));
        }
        let mut numa_nodes = Vec::new();
        if let Some(nodes) = node_root {
            if let Some(ids) = read_list(&nodes.join("online")) {
                for n in ids {
                    if let Some(cpus) = read_list(&nodes.join(format!("node{n}/cpulist"))) {
                        numa_nodes.push((n, cpus));
                    }
                }
            }
        }
        let mut cpus = Vec::with_capacity(online.len());
        for &id in &online {
            let dir = cpu_root.join(format!("cpu{id}"));
            let topo = dir.join("topology");
            let siblings = read_list(&topo.join("core_cpus_list"))
                .or_else(|| read_list(&topo.join("thread_siblings_list")))
                .map(|s| {
                    s.into_iter()
                        .filter(|c| online.contains(c))
                        .collect::<Vec<_>>()
                })
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| vec![id]);
            let package = read_trim(&topo.join("physical_package_id"))
                .and_then(|s| s.parse::<i64>().ok())
                .map_or(0, |p| p.max(0) as usize);
            cpus.push(Cpu {
                id,
                core: siblings[0],
                package,
                siblings,
                l3: l3_of(&dir),
                numa: numa_nodes
                    .iter()
                    .find(|(_, c)| c.contains(&id))
                    .map(|(n, _)| *n),
            });
        }
        Ok(Topology {
            cpus,
            numa_nodes,
            source: cpu_root.display().to_string(),
        })
    }

    /// The topology of this machine; without a readable sysfs, every CPU the OS offers is
    /// taken as its own core (and the source says so).
    pub fn detect() -> Result<Topology, TopologyError> {
        let root = Path::new("/sys/devices/system/cpu");
        match Topology::read(root, Some(Path::new("/sys/devices/system/node"))) {
            Ok(t) => Ok(t),
            Err(e) => {
                let n = std::thread::available_parallelism().map_or(1, |n| n.get());
                let cpus = (0..n)
                    .map(|id| Cpu {
                        id,
                        core: id,
                        package: 0,
                        siblings: vec![id],
                        l3: None,
                        numa: None,
                    })
                    .collect();
                Ok(Topology {
                    cpus,
                    numa_nodes: Vec::new(),
                    source: format!("guessed from the OS ({n} CPUs): {e}"),
                })
            }
        }
    }

    /// Logical CPUs online.
    pub fn logical_cpus(&self) -> usize {
        self.cpus.len()
    }

    /// Physical cores.
    pub fn physical_cores(&self) -> usize {
        let mut cores: Vec<usize> = self.cpus.iter().map(|c| c.core).collect();
        cores.sort_unstable();
        cores.dedup();
        cores.len()
    }

    /// Packages (sockets).
    pub fn packages(&self) -> usize {
        let mut p: Vec<usize> = self.cpus.iter().map(|c| c.package).collect();
        p.sort_unstable();
        p.dedup();
        p.len()
    }

    /// Some core has more than one hardware thread.
    pub fn smt(&self) -> bool {
        self.cpus.iter().any(|c| c.siblings.len() > 1)
    }

    /// The CPUs threads are placed on, in order: thread i goes to `placement[i]`.
    ///
    /// `Physical`: the first CPU of each physical core, package by package (within a package by
    /// NUMA node, then L3, then core); with `smt`, the remaining siblings follow, again package
    /// by package. `Logical`: every CPU in id order. `None`: empty (no pinning).
    pub fn placement(&self, pin: PinMode, smt: bool) -> Vec<usize> {
        match pin {
            PinMode::None => Vec::new(),
            PinMode::Logical => self.cpus.iter().map(|c| c.id).collect(),
            PinMode::Physical => {
                // Order cores by (package, numa, l3 leader, core).
                let mut cores: BTreeMap<(usize, usize, usize, usize), Vec<usize>> = BTreeMap::new();
                for c in &self.cpus {
                    let l3 = c.l3.as_ref().and_then(|l| l.first().copied()).unwrap_or(0);
                    let key = (c.package, c.numa.unwrap_or(0), l3, c.core);
                    cores.entry(key).or_default().push(c.id);
                }
                let mut out: Vec<usize> = cores.values().map(|ids| ids[0]).collect();
                if smt {
                    let mut rank = 1;
                    loop {
                        let more: Vec<usize> = cores
                            .values()
                            .filter_map(|ids| ids.get(rank).copied())
                            .collect();
                        if more.is_empty() {
                            break;
                        }
                        out.extend(more);
                        rank += 1;
                    }
                }
                out
            }
        }
    }
}

/// The CPU of thread `t`: threads beyond the placement wrap around (oversubscription).
pub fn cpu_for(placement: &[usize], thread: usize) -> Option<usize> {
    (!placement.is_empty()).then(|| placement[thread % placement.len()])
}

/// Pins the calling thread to one CPU.
pub fn pin_current_thread(cpu: usize) -> std::io::Result<()> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "CPU id beyond CPU_SETSIZE",
        ));
    }
    // SAFETY: cpu_set_t is plain data; CPU_ZERO/CPU_SET write within it (cpu < CPU_SETSIZE);
    // sched_setaffinity(0, ...) affects only the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        libc::CPU_SET(cpu, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// What the results say about the machine.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Host {
    /// CPU model name.
    pub cpu_model: String,
    /// Online logical CPUs.
    pub logical_cpus: usize,
    /// Physical cores.
    pub physical_cores: usize,
    /// Packages (sockets).
    pub packages: usize,
    /// NUMA nodes.
    pub numa_nodes: usize,
    /// SMT present.
    pub smt: bool,
    /// Kernel release.
    pub kernel: String,
    /// Host name.
    pub hostname: String,
    /// Where the topology came from.
    pub topology_source: String,
}

impl Host {
    /// Describes this machine.
    pub fn detect(topo: &Topology) -> Host {
        let cpu_model = fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".into());
        Host {
            cpu_model,
            logical_cpus: topo.logical_cpus(),
            physical_cores: topo.physical_cores(),
            packages: topo.packages(),
            numa_nodes: topo.numa_nodes.len(),
            smt: topo.smt(),
            kernel: read_trim(Path::new("/proc/sys/kernel/osrelease"))
                .unwrap_or_else(|| "unknown".into()),
            hostname: read_trim(Path::new("/proc/sys/kernel/hostname")).unwrap_or_default(),
            topology_source: topo.source.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,8-9").unwrap(), vec![0, 1, 2, 3, 8, 9]);
        assert_eq!(parse_cpu_list(" 5\n").unwrap(), vec![5]);
        assert_eq!(parse_cpu_list("").unwrap(), Vec::<usize>::new());
        assert_eq!(parse_cpu_list("3,1,1-2").unwrap(), vec![1, 2, 3]);
        assert!(parse_cpu_list("3-1").is_err());
        assert!(parse_cpu_list("x").is_err());
    }

    #[test]
    fn this_machine() {
        let t = Topology::detect().unwrap();
        assert!(t.logical_cpus() >= 1);
        assert!(t.physical_cores() >= 1 && t.physical_cores() <= t.logical_cpus());
        let p = t.placement(PinMode::Physical, false);
        assert_eq!(p.len(), t.physical_cores());
        pin_current_thread(p[0]).unwrap();
        assert_eq!(cpu_for(&p, p.len()), Some(p[0]), "wraps around");
        assert_eq!(cpu_for(&[], 3), None);
        let h = Host::detect(&t);
        assert!(!h.kernel.is_empty());
    }
}
