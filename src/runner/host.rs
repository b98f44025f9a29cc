//! The machine a run took place on, as recorded beside its results.

use std::ffi::CStr;
use std::path::Path;

use super::topology::Topology;

/// The host a benchmark ran on. Counts describe the topology the run used (after any
/// restriction to the process's allowed CPUs; `notes` says when that happened).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
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
    /// What else the machine was doing while this result was measured (the worst of its
    /// rounds); null where it was not sampled.
    pub load: Option<Load>,
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
    crate::opts::io::read_system(path).map(|s| s.trim().to_string())
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
        let cpuinfo = crate::opts::io::read_system(root.join("proc/cpuinfo")).unwrap_or_default();
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
        let cpu_model =
            crate::opts::io::read_system("/proc/cpuinfo").and_then(|text| cpu_model(&text));
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
            load: None,
        }
    }
}

/// Other work on the machine while something was measured: what `run`, `sweep` and `fidelity`
/// sample before and during each point, and warn about when [`Load::busy`].
///
/// The rule: busy when, during the point, other processes used at least [`BUSY_OTHERS_CPU`]
/// of a CPU on average (all CPUs' busy time in `/proc/stat` less this process's own CPU time
/// from `getrusage`), or at least one other task was runnable at its start (`procs_running` of
/// `/proc/stat` less this thread, the least of three readings 1 ms apart), or the hypervisor
/// stole at least [`BUSY_STEAL`] of the CPU time, or the workers were preempted at least
/// [`BUSY_PREEMPTIONS`] times per second each (involuntary context switches, `getrusage`; not
/// counted when the run oversubscribes, where preemption is the design).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Load {
    /// Other runnable tasks at the start (null where `/proc/stat` is unreadable).
    pub runnable_before: Option<u64>,
    /// CPUs' worth of other processes' work during the point, on average.
    pub others_cpu: Option<f64>,
    /// Fraction of CPU time stolen by the hypervisor during the point.
    pub steal: Option<f64>,
    /// Involuntary context switches of this process's threads per second per worker.
    pub preemptions_per_sec: Option<f64>,
    /// Voluntary context switches of this process's threads per second, all threads together
    /// (a lock that sleeps while it waits makes them; one that spins does not).
    pub sleeps_per_sec: Option<f64>,
    /// Seconds the sample covered.
    pub seconds: f64,
    /// One of the rules held.
    pub busy: bool,
    /// Which, in numbers (`1.9 CPUs of other work`).
    pub reasons: Vec<String>,
}

/// Other processes using this much of a CPU on average make the host busy.
pub const BUSY_OTHERS_CPU: f64 = 0.25;
/// Steal at this fraction makes the host busy.
pub const BUSY_STEAL: f64 = 0.05;
/// Involuntary switches per second per worker at which the host is busy (an undisturbed
/// worker alone on its CPU is switched out a few times a second at most).
pub const BUSY_PREEMPTIONS: f64 = 50.0;

/// One reading of the counters behind [`Load`].
#[derive(Clone, Copy, Debug)]
pub struct LoadSample {
    at: std::time::Instant,
    /// (busy, total, steal) ticks of all CPUs.
    cpu: Option<(u64, u64, u64)>,
    runnable: Option<u64>,
    own_cpu_s: f64,
    own_preemptions: u64,
    own_sleeps: Option<u64>,
}

/// `(busy, total, steal, procs_running)` from a `/proc/stat` text.
fn parse_stat(text: &str) -> (Option<(u64, u64, u64)>, Option<u64>) {
    let mut cpu = None;
    let mut running = None;
    for line in text.lines() {
        let mut f = line.split_whitespace();
        match f.next() {
            Some("cpu") => {
                let v: Vec<u64> = f.take(8).filter_map(|x| x.parse().ok()).collect();
                if v.len() >= 8 {
                    // user nice system idle iowait irq softirq steal
                    let busy = v[0] + v[1] + v[2] + v[5] + v[6];
                    cpu = Some((busy, v.iter().sum(), v[7]));
                }
            }
            Some("procs_running") => running = f.next().and_then(|x| x.parse().ok()),
            _ => {}
        }
    }
    (cpu, running)
}

impl LoadSample {
    /// Reads `/proc/stat` and this process's resource usage now; with `settle`, takes the
    /// least runnable count of three readings 1 ms apart (one transient task is not load).
    pub fn take(settle: bool) -> LoadSample {
        let read = || parse_stat(&crate::opts::io::read_system("/proc/stat").unwrap_or_default());
        let (cpu, mut runnable) = read();
        if settle {
            for _ in 0..2 {
                std::thread::sleep(std::time::Duration::from_millis(1));
                let r = read().1;
                runnable = match (runnable, r) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
            }
        }
        // SAFETY: rusage is plain integers, for which all zeroes is a valid value.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `u` is a live, writable rusage; RUSAGE_SELF covers every thread of the process.
        let ok = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } == 0;
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        LoadSample {
            at: std::time::Instant::now(),
            cpu,
            runnable,
            own_cpu_s: if ok {
                secs(u.ru_utime) + secs(u.ru_stime)
            } else {
                0.0
            },
            own_preemptions: if ok { u.ru_nivcsw.max(0) as u64 } else { 0 },
            own_sleeps: ok.then(|| u.ru_nvcsw.max(0) as u64),
        }
    }

    /// The load from this sample (taken before) to `after`, with `workers` threads measured
    /// (0: none of this process's switches count) on `cpus` CPUs.
    pub fn until(&self, after: &LoadSample, workers: usize, cpus: usize) -> Load {
        let seconds = after.at.duration_since(self.at).as_secs_f64();
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
        // Ticks come in 1/hz steps: under 20 of them say nothing about the point.
        let (others_cpu, steal) = match (self.cpu, after.cpu) {
            (Some(b), Some(a)) if a.1.saturating_sub(b.1) >= 20 && seconds > 0.0 => {
                let busy_s = a.0.saturating_sub(b.0) as f64 / hz;
                let own = (after.own_cpu_s - self.own_cpu_s).max(0.0);
                let others = ((busy_s - own) / seconds).clamp(0.0, cpus.max(1) as f64);
                let steal = a.2.saturating_sub(b.2) as f64 / a.1.saturating_sub(b.1) as f64;
                (Some(others), Some(steal))
            }
            _ => (None, None),
        };
        let preemptions_per_sec = (workers > 0 && seconds >= 0.02).then(|| {
            after.own_preemptions.saturating_sub(self.own_preemptions) as f64
                / seconds
                / workers as f64
        });
        let sleeps_per_sec = match (self.own_sleeps, after.own_sleeps) {
            (Some(b), Some(a)) if seconds >= 0.02 => Some(a.saturating_sub(b) as f64 / seconds),
            _ => None,
        };
        let mut load = Load {
            runnable_before: self.runnable.map(|r| r.saturating_sub(1)),
            others_cpu,
            steal,
            preemptions_per_sec,
            sleeps_per_sec,
            seconds,
            busy: false,
            reasons: Vec::new(),
        };
        load.judge();
        load
    }
}

impl Load {
    /// Sets `busy` and `reasons` by the rules of [`Load`].
    pub fn judge(&mut self) {
        let mut reasons = Vec::new();
        if let Some(c) = self.others_cpu.filter(|c| *c >= BUSY_OTHERS_CPU) {
            reasons.push(format!("{c:.2} CPUs of other work"));
        }
        if let Some(r) = self.runnable_before.filter(|r| *r >= 1) {
            reasons.push(format!("{r} other runnable tasks at the start"));
        }
        if let Some(s) = self.steal.filter(|s| *s >= BUSY_STEAL) {
            reasons.push(format!("{:.0}% steal", s * 100.0));
        }
        if let Some(p) = self.preemptions_per_sec.filter(|p| *p >= BUSY_PREEMPTIONS) {
            reasons.push(format!("workers preempted {p:.0}/s each"));
        }
        self.busy = !reasons.is_empty();
        self.reasons = reasons;
    }

    /// The worst of several loads (each figure its largest), judged again.
    pub fn worst(loads: &[Load]) -> Option<Load> {
        let first = loads.first()?;
        let max_f = |f: fn(&Load) -> Option<f64>| {
            loads
                .iter()
                .filter_map(f)
                .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
        };
        let mut w = Load {
            runnable_before: loads.iter().filter_map(|l| l.runnable_before).max(),
            others_cpu: max_f(|l| l.others_cpu),
            steal: max_f(|l| l.steal),
            preemptions_per_sec: max_f(|l| l.preemptions_per_sec),
            sleeps_per_sec: max_f(|l| l.sleeps_per_sec),
            seconds: loads.iter().map(|l| l.seconds).sum(),
            ..first.clone()
        };
        w.judge();
        Some(w)
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
    crate::opts::io::read_system(format!("/proc/sys/kernel/{name}"))
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

#[cfg(test)]
mod load_tests {
    use super::*;

    #[test]
    fn proc_stat_is_read() {
        let text = "cpu  100 5 50 1000 10 3 2 7 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\nprocs_running 3\nprocs_blocked 0\n";
        assert_eq!(parse_stat(text), (Some((160, 1177, 7)), Some(3)));
        assert_eq!(parse_stat(""), (None, None));
    }

    #[test]
    fn the_rules_judge_a_load() {
        let mut quiet = Load {
            runnable_before: Some(0),
            others_cpu: Some(0.05),
            steal: Some(0.0),
            preemptions_per_sec: Some(2.0),
            ..Load::default()
        };
        quiet.judge();
        assert!(!quiet.busy && quiet.reasons.is_empty());
        let mut busy = Load {
            others_cpu: Some(1.9),
            steal: Some(0.1),
            ..quiet.clone()
        };
        busy.judge();
        assert!(busy.busy);
        assert_eq!(busy.reasons, vec!["1.90 CPUs of other work", "10% steal"]);
        let w = Load::worst(&[quiet, busy]).unwrap();
        assert!(w.busy && w.others_cpu == Some(1.9) && w.preemptions_per_sec == Some(2.0));
        assert!(Load::worst(&[]).is_none());
    }

    #[test]
    fn a_sample_over_a_sleep_reads_this_machine() {
        let a = LoadSample::take(true);
        std::thread::sleep(std::time::Duration::from_millis(30));
        let l = a.until(&LoadSample::take(false), 1, 2);
        assert!(l.seconds >= 0.03, "{l:?}");
        if std::path::Path::new("/proc/stat").exists() {
            assert!(l.runnable_before.is_some(), "{l:?}");
        }
        // Switches are counted over the whole process (other tests' threads too): a rate.
        assert!(l.preemptions_per_sec.unwrap() >= 0.0, "{l:?}");
        assert_eq!(l.busy, !l.reasons.is_empty());
    }
}
