//! The machine a run took place on, as recorded beside its results.

use std::ffi::CStr;
use std::path::Path;

use super::topology::Topology;

/// The host a benchmark ran on. Counts describe the topology the run used (after any
/// restriction to the process's allowed CPUs; `notes` says when that happened).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
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
    /// Settings that move figures: frequency scaling, SMT, clocks, isolation.
    #[serde(flatten)]
    pub env: Environment,
}

/// The settings of a machine that move benchmark figures, read from sysfs and procfs; each is
/// `null` when its file is missing or unreadable (a container, a VM, another architecture).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Environment {
    /// cpufreq governors of the online CPUs (`performance`; several joined by `,` when CPUs
    /// differ).
    pub governor: Option<String>,
    /// Frequency boost (turbo) enabled: `cpufreq/boost`, or the inverse of intel_pstate's
    /// `no_turbo`.
    pub boost: Option<bool>,
    /// SMT control: `on`, `off`, `forceoff`, `notsupported`, `notimplemented`.
    pub smt_control: Option<String>,
    /// CPU microcode revision (`/proc/cpuinfo`).
    pub microcode: Option<String>,
    /// Current clock source (`tsc`, `kvm-clock`, `hpet`, ...).
    pub clocksource: Option<String>,
    /// The TSC flags the CPU reports (`tsc`, `rdtscp`, `constant_tsc`, `nonstop_tsc`,
    /// `tsc_known_freq`, `tsc_reliable`); null without a flags line.
    pub tsc_flags: Option<Vec<String>>,
    /// CPUs isolated from the scheduler (`isolcpus`; empty: none).
    pub isolated_cpus: Option<String>,
    /// CPUs in adaptive-tick mode (`nohz_full`; empty: none).
    pub nohz_full: Option<String>,
    /// Running under a hypervisor (the `hypervisor` CPU flag).
    pub hypervisor: Option<bool>,
}

/// The TSC flags worth recording.
const TSC_FLAGS: [&str; 6] = [
    "tsc",
    "rdtscp",
    "constant_tsc",
    "nonstop_tsc",
    "tsc_known_freq",
    "tsc_reliable",
];

fn read_trimmed(path: &Path) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

impl Environment {
    /// Reads the environment under `root` (`/` for this machine; a directory laid out like it
    /// in tests).
    pub fn read(root: &Path) -> Environment {
        let cpu = root.join("sys/devices/system/cpu");
        let mut governors: Vec<String> = Vec::new();
        if let Ok(entries) = std::fs::read_dir(&cpu) {
            let mut dirs: Vec<_> = entries
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .and_then(|n| n.strip_prefix("cpu"))
                        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                })
                .collect();
            dirs.sort();
            for d in dirs {
                if let Some(g) = read_trimmed(&d.join("cpufreq/scaling_governor")) {
                    if !g.is_empty() && !governors.contains(&g) {
                        governors.push(g);
                    }
                }
            }
        }
        let boost = read_trimmed(&cpu.join("cpufreq/boost"))
            .map(|v| v == "1")
            .or_else(|| read_trimmed(&cpu.join("intel_pstate/no_turbo")).map(|v| v == "0"));
        let cpuinfo = std::fs::read_to_string(root.join("proc/cpuinfo")).unwrap_or_default();
        let field = |key: &str| {
            cpuinfo.lines().find_map(|line| {
                let (k, v) = line.split_once(':')?;
                (k.trim() == key).then(|| v.trim().to_string())
            })
        };
        let flags = field("flags");
        Environment {
            governor: (!governors.is_empty()).then(|| governors.join(",")),
            boost,
            smt_control: read_trimmed(&cpu.join("smt/control")).filter(|s| !s.is_empty()),
            microcode: field("microcode").filter(|s| !s.is_empty()),
            clocksource: read_trimmed(
                &root.join("sys/devices/system/clocksource/clocksource0/current_clocksource"),
            )
            .filter(|s| !s.is_empty()),
            tsc_flags: flags.as_ref().map(|f| {
                TSC_FLAGS
                    .iter()
                    .filter(|t| f.split_whitespace().any(|x| x == **t))
                    .map(|t| t.to_string())
                    .collect()
            }),
            isolated_cpus: read_trimmed(&cpu.join("isolated")),
            nohz_full: read_trimmed(&cpu.join("nohz_full")).map(|s| {
                if s == "(null)" {
                    String::new()
                } else {
                    s
                }
            }),
            hypervisor: flags.map(|f| f.split_whitespace().any(|x| x == "hypervisor")),
        }
    }
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
        Host {
            env: Environment::read(Path::new("/")),
            ..Host::new(topology, cpu_model, kernel, hostname)
        }
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
            env: Environment::default(),
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
        // The environment sits beside the counts, null when unknown.
        assert!(json["governor"].is_null() && json["tsc_flags"].is_null());
    }

    #[test]
    fn environment_from_sysfs_and_procfs() {
        let root = tempfile::tempdir().unwrap();
        let w = |path: &str, text: &str| {
            let p = root.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        w(
            "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
            "performance\n",
        );
        w(
            "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor",
            "powersave\n",
        );
        w(
            "sys/devices/system/cpu/cpu10/cpufreq/scaling_governor",
            "performance\n",
        );
        w("sys/devices/system/cpu/intel_pstate/no_turbo", "1\n");
        w("sys/devices/system/cpu/smt/control", "on\n");
        w("sys/devices/system/cpu/isolated", "2-3\n");
        w("sys/devices/system/cpu/nohz_full", "(null)\n");
        w(
            "sys/devices/system/clocksource/clocksource0/current_clocksource",
            "tsc\n",
        );
        w(
            "proc/cpuinfo",
            "processor\t: 0\nmicrocode\t: 0xde\nflags\t\t: fpu tsc msr rdtscp constant_tsc nonstop_tsc hypervisor\n",
        );
        let env = Environment::read(root.path());
        assert_eq!(env.governor.as_deref(), Some("performance,powersave"));
        assert_eq!(env.boost, Some(false));
        assert_eq!(env.smt_control.as_deref(), Some("on"));
        assert_eq!(env.microcode.as_deref(), Some("0xde"));
        assert_eq!(env.clocksource.as_deref(), Some("tsc"));
        assert_eq!(
            env.tsc_flags.unwrap(),
            vec!["tsc", "rdtscp", "constant_tsc", "nonstop_tsc"]
        );
        assert_eq!(env.isolated_cpus.as_deref(), Some("2-3"));
        assert_eq!(env.nohz_full.as_deref(), Some(""));
        assert_eq!(env.hypervisor, Some(true));
        // cpufreq/boost wins over intel_pstate.
        w("sys/devices/system/cpu/cpufreq/boost", "1\n");
        assert_eq!(Environment::read(root.path()).boost, Some(true));
        // Nothing there: every field null, no error.
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(Environment::read(empty.path()), Environment::default());
    }
}
