//! The machine a run took place on, as recorded beside its results.

use std::ffi::CStr;

use super::topology::Topology;

/// The host a benchmark ran on. Counts describe the topology the run used (after any
/// restriction to the process's allowed CPUs; `notes` says when that happened).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Host {
    /// CPU model as `/proc/cpuinfo` names it; `null` when it does not.
    pub cpu_model: Option<String>,
    /// Online logical CPUs.
    pub logical_cpus: usize,
    /// Physical cores.
    pub physical_cores: usize,
    /// Packages (sockets).
    pub packages: usize,
    /// NUMA nodes; `null` when unknown.
    pub numa_nodes: Option<usize>,
    /// Whether any core runs more than one hardware thread.
    pub smt: bool,
    /// Kernel release (`uname -r`); `null` when unavailable.
    pub kernel: Option<String>,
    /// Host name; `null` when unavailable.
    pub hostname: Option<String>,
    /// What the topology had to assume or leave out.
    pub notes: Vec<String>,
}

impl Host {
    /// Describes this machine: counts from `topology`, the CPU model from `/proc/cpuinfo`, the
    /// kernel release and host name from `uname` (or `/proc/sys/kernel`).
    pub fn detect(topology: &Topology) -> Host {
        let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|text| cpu_model(&text));
        let (kernel, hostname) = match uname() {
            Some((release, nodename)) => (Some(release), Some(nodename)),
            None => (proc_kernel("osrelease"), proc_kernel("hostname")),
        };
        Host::new(topology, cpu_model, kernel, hostname)
    }

    /// A host of the given topology and names.
    pub fn new(
        topology: &Topology,
        cpu_model: Option<String>,
        kernel: Option<String>,
        hostname: Option<String>,
    ) -> Host {
        Host {
            cpu_model,
            logical_cpus: topology.logical_cpus(),
            physical_cores: topology.physical_cores(),
            packages: topology.packages(),
            numa_nodes: (!topology.numa_nodes.is_empty()).then_some(topology.numa_nodes.len()),
            smt: topology.smt(),
            kernel,
            hostname,
            notes: topology.notes.clone(),
        }
    }
}

/// The CPU model named in a `/proc/cpuinfo` text: the first `model name` (x86), else `cpu
/// model` (MIPS), `cpu` (POWER) or `Hardware` (32-bit Arm), with runs of blanks collapsed.
/// `None` when there is none (arm64 names only implementer and part numbers).
pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    ["model name", "cpu model", "cpu", "Hardware"]
        .iter()
        .find_map(|key| {
            cpuinfo.lines().find_map(|line| {
                let (k, v) = line.split_once(':')?;
                (k.trim() == *key).then(|| v.split_whitespace().collect::<Vec<_>>().join(" "))
            })
        })
        .filter(|m| !m.is_empty())
}

/// Kernel release and node name from `uname(2)`.
fn uname() -> Option<(String, String)> {
    // SAFETY: utsname is plain arrays of c_char, for which all zeroes is a valid value.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a live, writable utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return None;
    }
    // SAFETY: on success uname fills each field with a NUL-terminated string within its array.
    let field = |f: &[libc::c_char]| {
        unsafe { CStr::from_ptr(f.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    };
    Some((field(&u.release), field(&u.nodename)))
}

/// `/proc/sys/kernel/<name>`, trimmed.
fn proc_kernel(name: &str) -> Option<String> {
    std::fs::read_to_string(format!("/proc/sys/kernel/{name}"))
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_model_from_cpuinfo_of_several_architectures() {
        let x86 = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n\
                   model\t\t: 85\nmodel name\t: Intel(R) Xeon(R) CPU   E5-2680 v4 @ 2.40GHz\n\
                   cpu MHz\t\t: 2400.000\n\nprocessor\t: 1\nmodel name\t: other\n";
        assert_eq!(
            cpu_model(x86).as_deref(),
            Some("Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz")
        );
        let power = "processor\t: 0\ncpu\t\t: POWER9, altivec supported\nclock\t\t: 2300MHz\n";
        assert_eq!(
            cpu_model(power).as_deref(),
            Some("POWER9, altivec supported")
        );
        let arm64 =
            "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n";
        assert_eq!(cpu_model(arm64), None);
        assert_eq!(cpu_model("model name\t:   \n"), None);
    }

    #[test]
    fn detect_fills_counts_from_the_topology() {
        let topology = Topology::flat(&[0, 1, 2]);
        let host = Host::detect(&topology);
        assert_eq!(host.logical_cpus, 3);
        assert_eq!(host.physical_cores, 3);
        assert_eq!(host.packages, 1);
        assert_eq!(host.numa_nodes, None);
        assert!(!host.smt);
        let kernel = host
            .kernel
            .expect("uname or /proc gives the kernel release");
        assert!(
            kernel.chars().next().is_some_and(|c| c.is_ascii_digit()),
            "{kernel}"
        );
        let json = serde_json::to_value(Host::new(&topology, None, None, None)).unwrap();
        assert!(json["cpu_model"].is_null());
        assert_eq!(json["logical_cpus"], 3);
    }
}
