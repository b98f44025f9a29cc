//! Per-thread performance counters through `perf_event_open` (the `perf-event2` crate).
//!
//! Each worker opens its own counters after it is pinned, measuring only itself: the hardware
//! counters as one group (scheduled and read together), the software counters on their own so
//! they keep working where the hardware cannot be opened. They are enabled only over the
//! measured window.
//!
//! # Reading the counters section of the results
//!
//! Each counter is reported per passage (its total over every thread divided by the measured
//! passages), with the total beside it. A counter that could not be opened on some thread is
//! `null` with the reason (`unavailable`): on a virtual machine without a virtual PMU,
//! hardware events fail with ENOENT; with `perf_event_paranoid` too high they fail with
//! EACCES. It is never reported as 0. When the kernel had to time-share the hardware among more
//! events than it has counters, values are scaled by time enabled / time running and
//! `multiplexed` is true: treat them as estimates.

use std::io;
use std::str::FromStr;

use perf_event::events::{Cache, CacheId, CacheOp, CacheResult, Hardware, Raw, Software};
use perf_event::{Builder, Counter, Group};
use serde::Serialize;

/// One counter the user asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CounterSpec {
    /// CPU cycles.
    Cycles,
    /// Instructions retired.
    Instructions,
    /// Last-level cache misses.
    CacheMisses,
    /// Last-level cache references.
    CacheReferences,
    /// L1 data cache read misses.
    L1dReadMisses,
    /// Branch mispredictions.
    BranchMisses,
    /// Context switches (software).
    ContextSwitches,
    /// CPU migrations (software).
    CpuMigrations,
    /// Page faults (software).
    PageFaults,
    /// Task clock, ns (software).
    TaskClock,
    /// A raw PMU event, `rNNNN` as in perf.
    Raw {
        /// The event code.
        code: u64,
        /// How it was written.
        name: String,
    },
}

const NAMES: [(&str, CounterSpec); 10] = [
    ("cycles", CounterSpec::Cycles),
    ("instructions", CounterSpec::Instructions),
    ("cache-misses", CounterSpec::CacheMisses),
    ("cache-references", CounterSpec::CacheReferences),
    ("l1d-read-misses", CounterSpec::L1dReadMisses),
    ("branch-misses", CounterSpec::BranchMisses),
    ("context-switches", CounterSpec::ContextSwitches),
    ("cpu-migrations", CounterSpec::CpuMigrations),
    ("page-faults", CounterSpec::PageFaults),
    ("task-clock", CounterSpec::TaskClock),
];

impl CounterSpec {
    /// Its name in results.
    pub fn name(&self) -> String {
        match self {
            CounterSpec::Raw { name, .. } => name.clone(),
            other => NAMES
                .iter()
                .find(|(_, s)| s == other)
                .map(|(n, _)| n.to_string())
                .expect("named"),
        }
    }

    /// Software counters work without a PMU.
    pub fn is_software(&self) -> bool {
        matches!(
            self,
            CounterSpec::ContextSwitches
                | CounterSpec::CpuMigrations
                | CounterSpec::PageFaults
                | CounterSpec::TaskClock
        )
    }

    fn builder(&self) -> Builder<'static> {
        match self {
            CounterSpec::Cycles => Builder::new(Hardware::CPU_CYCLES),
            CounterSpec::Instructions => Builder::new(Hardware::INSTRUCTIONS),
            CounterSpec::CacheMisses => Builder::new(Hardware::CACHE_MISSES),
            CounterSpec::CacheReferences => Builder::new(Hardware::CACHE_REFERENCES),
            CounterSpec::BranchMisses => Builder::new(Hardware::BRANCH_MISSES),
            CounterSpec::L1dReadMisses => Builder::new(Cache {
                which: CacheId::L1D,
                operation: CacheOp::READ,
                result: CacheResult::MISS,
            }),
            CounterSpec::ContextSwitches => Builder::new(Software::CONTEXT_SWITCHES),
            CounterSpec::CpuMigrations => Builder::new(Software::CPU_MIGRATIONS),
            CounterSpec::PageFaults => Builder::new(Software::PAGE_FAULTS),
            CounterSpec::TaskClock => Builder::new(Software::TASK_CLOCK),
            CounterSpec::Raw { code, .. } => Builder::new(Raw::new(*code)),
        }
    }
}

impl FromStr for CounterSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<CounterSpec, String> {
        let s = s.trim();
        if let Some((_, spec)) = NAMES.iter().find(|(n, _)| *n == s) {
            return Ok(spec.clone());
        }
        if let Some(hex) = s.strip_prefix('r') {
            if !hex.is_empty() {
                if let Ok(code) = u64::from_str_radix(hex, 16) {
                    return Ok(CounterSpec::Raw {
                        code,
                        name: s.to_string(),
                    });
                }
            }
        }
        let names: Vec<&str> = NAMES.iter().map(|(n, _)| *n).collect();
        Err(format!(
            "unknown counter {s:?}: use {} or a raw event code like r0443",
            names.join(", ")
        ))
    }
}

/// Parses a comma-separated list of counters.
pub fn parse_list(s: &str) -> Result<Vec<CounterSpec>, String> {
    s.split(',')
        .filter(|x| !x.trim().is_empty())
        .map(str::parse)
        .collect()
}

/// The counters read when none are named.
pub fn default_specs() -> Vec<CounterSpec> {
    vec![
        CounterSpec::Cycles,
        CounterSpec::Instructions,
        CounterSpec::CacheMisses,
        CounterSpec::L1dReadMisses,
        CounterSpec::ContextSwitches,
        CounterSpec::TaskClock,
    ]
}

/// Why `perf_event_open` refused, in a line the user can act on.
fn reason(spec: &CounterSpec, e: &io::Error) -> String {
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into());
    match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::ENODEV) if !spec.is_software() => {
            "no hardware PMU on this machine (perf_event_open: ENOENT); on a VM enable the virtual PMU".into()
        }
        Some(libc::EACCES) | Some(libc::EPERM) => format!(
            "not permitted: /proc/sys/kernel/perf_event_paranoid is {paranoid}; run as root or lower it"
        ),
        Some(libc::EOPNOTSUPP) => "not supported by this PMU (EOPNOTSUPP)".into(),
        Some(libc::EINVAL) if matches!(spec, CounterSpec::Raw { .. }) => {
            format!("raw event {} not supported by this CPU (EINVAL)", spec.name())
        }
        Some(libc::ENOSYS) => "perf_event_open is not available in this kernel (ENOSYS)".into(),
        _ => format!("perf_event_open failed: {e}"),
    }
}

enum Slot {
    /// A member of the hardware group.
    Grouped(Counter),
    /// A counter on its own (software).
    Alone(Counter),
    /// Could not be opened, and why.
    Unavailable(String),
}

/// The counters of the calling thread.
pub struct ThreadCounters {
    group: Option<Group>,
    slots: Vec<(String, Slot)>,
}

/// One counter's reading on one thread.
#[derive(Clone, Debug, PartialEq)]
pub struct CounterSample {
    /// Counter name.
    pub name: String,
    /// Value, scaled if multiplexed; `None` when unavailable.
    pub value: Option<u64>,
    /// Why it is unavailable.
    pub unavailable: Option<String>,
    /// Time enabled, ns.
    pub time_enabled: u64,
    /// Time running, ns.
    pub time_running: u64,
}

fn scaled(count: u64, enabled: u64, running: u64) -> u64 {
    if running == 0 || running >= enabled {
        count
    } else {
        (count as u128 * enabled as u128 / running as u128) as u64
    }
}

impl ThreadCounters {
    /// Opens `specs` for the calling thread. Never fails: each counter is open or carries the
    /// reason it is not.
    pub fn open(specs: &[CounterSpec]) -> ThreadCounters {
        let mut group: Option<Result<Group, io::Error>> = None;
        let mut slots = Vec::with_capacity(specs.len());
        for spec in specs {
            let slot = if spec.is_software() {
                // Context switches happen in the kernel: count kernel time where allowed.
                let mut b = spec.builder();
                b.exclude_kernel(false);
                match b.build().or_else(|_| spec.builder().build()) {
                    Ok(c) => Slot::Alone(c),
                    Err(e) => Slot::Unavailable(reason(spec, &e)),
                }
            } else {
                let g = group.get_or_insert_with(Group::new);
                match g {
                    Ok(g) => match g.add(&spec.builder()) {
                        Ok(c) => Slot::Grouped(c),
                        Err(e) => Slot::Unavailable(reason(spec, &e)),
                    },
                    Err(e) => Slot::Unavailable(format!("cannot open a counter group: {e}")),
                }
            };
            slots.push((spec.name(), slot));
        }
        let group = group.and_then(Result::ok);
        ThreadCounters { group, slots }
    }

    /// Starts counting (from zero).
    pub fn enable(&mut self) {
        if let Some(g) = &mut self.group {
            let _ = g.reset();
            let _ = g.enable();
        }
        for (_, s) in &mut self.slots {
            if let Slot::Alone(c) = s {
                let _ = c.reset();
                let _ = c.enable();
            }
        }
    }

    /// Stops counting.
    pub fn disable(&mut self) {
        if let Some(g) = &mut self.group {
            let _ = g.disable();
        }
        for (_, s) in &mut self.slots {
            if let Slot::Alone(c) = s {
                let _ = c.disable();
            }
        }
    }

    /// One sample per counter, in the order asked.
    pub fn read(&mut self) -> Vec<CounterSample> {
        let group_data = self.group.as_mut().map(|g| g.read());
        self.slots
            .iter_mut()
            .map(|(name, slot)| {
                let unavailable = |why: String| CounterSample {
                    name: name.clone(),
                    value: None,
                    unavailable: Some(why),
                    time_enabled: 0,
                    time_running: 0,
                };
                match slot {
                    Slot::Unavailable(why) => unavailable(why.clone()),
                    Slot::Alone(c) => match c.read_count_and_time() {
                        Ok(ct) => CounterSample {
                            name: name.clone(),
                            value: Some(scaled(ct.count, ct.time_enabled, ct.time_running)),
                            unavailable: None,
                            time_enabled: ct.time_enabled,
                            time_running: ct.time_running,
                        },
                        Err(e) => unavailable(format!("read failed: {e}")),
                    },
                    Slot::Grouped(c) => match &group_data {
                        Some(Ok(data)) => {
                            let enabled = data.time_enabled().map_or(0, |d| d.as_nanos() as u64);
                            let running = data.time_running().map_or(0, |d| d.as_nanos() as u64);
                            match data.get(c) {
                                Some(entry) => CounterSample {
                                    name: name.clone(),
                                    value: Some(scaled(entry.value(), enabled, running)),
                                    unavailable: None,
                                    time_enabled: enabled,
                                    time_running: running,
                                },
                                None => unavailable("missing from the group read".into()),
                            }
                        }
                        Some(Err(e)) => unavailable(format!("group read failed: {e}")),
                        None => unavailable("no group".into()),
                    },
                }
            })
            .collect()
    }
}

/// A counter over all threads, per passage: what the results report.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CounterReport {
    /// Counter name.
    pub name: String,
    /// Total over threads divided by measured passages (null when unavailable).
    pub per_passage: Option<f64>,
    /// Total over threads (null when unavailable).
    pub total: Option<u64>,
    /// Why it is unavailable (null when it counted).
    pub unavailable: Option<String>,
    /// The kernel time-shared the hardware: values are scaled estimates.
    pub multiplexed: bool,
}

/// Merges per-thread samples (one vector per thread, same order) into per-passage figures. A
/// counter unavailable on any thread is unavailable, with the first reason.
pub fn merge(per_thread: &[Vec<CounterSample>], passages: u64) -> Vec<CounterReport> {
    let Some(first) = per_thread.first() else {
        return Vec::new();
    };
    (0..first.len())
        .map(|i| {
            let name = first[i].name.clone();
            let samples: Vec<&CounterSample> = per_thread.iter().filter_map(|t| t.get(i)).collect();
            if let Some(why) = samples.iter().find_map(|s| s.unavailable.clone()) {
                return CounterReport {
                    name,
                    per_passage: None,
                    total: None,
                    unavailable: Some(why),
                    multiplexed: false,
                };
            }
            let total: u64 = samples.iter().map(|s| s.value.unwrap_or(0)).sum();
            CounterReport {
                name,
                per_passage: (passages > 0).then(|| total as f64 / passages as f64),
                total: Some(total),
                unavailable: None,
                multiplexed: samples.iter().any(|s| s.time_running < s.time_enabled),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_and_raw_codes() {
        assert_eq!(
            parse_list("cycles,task-clock").unwrap(),
            vec![CounterSpec::Cycles, CounterSpec::TaskClock]
        );
        assert_eq!(
            "r0443".parse::<CounterSpec>().unwrap(),
            CounterSpec::Raw {
                code: 0x443,
                name: "r0443".into()
            }
        );
        let e = parse_list("cycles,bogus").unwrap_err();
        assert!(e.contains("bogus") && e.contains("r0443"), "{e}");
        assert!("r".parse::<CounterSpec>().is_err());
        assert!("rxyz".parse::<CounterSpec>().is_err());
        for (n, s) in NAMES.iter() {
            assert_eq!(s.name(), *n);
        }
    }

    fn busy(ms: u64) {
        let t = std::time::Instant::now();
        while t.elapsed().as_millis() < ms as u128 {
            std::hint::black_box(0u64);
        }
    }

    #[test]
    fn software_counters_count_here() {
        let mut c = ThreadCounters::open(&[CounterSpec::TaskClock, CounterSpec::ContextSwitches]);
        c.enable();
        busy(5);
        for _ in 0..5 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        c.disable();
        let s = c.read();
        assert!(
            s[0].value.unwrap() > 1_000_000,
            "task clock ran for 5 ms: {s:?}"
        );
        assert!(s[1].value.unwrap() >= 1, "sleeping switches context: {s:?}");
    }

    #[test]
    fn hardware_counters_give_a_value_or_a_reason_never_a_silent_zero() {
        let mut c = ThreadCounters::open(&default_specs());
        c.enable();
        busy(2);
        c.disable();
        for s in c.read() {
            match (&s.value, &s.unavailable) {
                (Some(_), None) => {}
                (None, Some(why)) => assert!(!why.is_empty(), "{s:?}"),
                _ => panic!("a value or a reason, not both or neither: {s:?}"),
            }
        }
    }

    #[test]
    fn merge_divides_and_propagates_unavailable() {
        let ok = |name: &str, v: u64, run: u64| CounterSample {
            name: name.into(),
            value: Some(v),
            unavailable: None,
            time_enabled: 100,
            time_running: run,
        };
        let gone = CounterSample {
            name: "cycles".into(),
            value: None,
            unavailable: Some("no PMU".into()),
            time_enabled: 0,
            time_running: 0,
        };
        let t0 = vec![ok("task-clock", 300, 100), ok("cycles", 5, 100)];
        let t1 = vec![ok("task-clock", 100, 50), gone];
        let m = merge(&[t0, t1], 8);
        assert_eq!(m[0].total, Some(400));
        assert_eq!(m[0].per_passage, Some(50.0));
        assert!(m[0].multiplexed);
        assert_eq!(m[1].per_passage, None);
        assert_eq!(m[1].unavailable.as_deref(), Some("no PMU"));
        assert_eq!(merge(&[], 3), Vec::new());
        assert_eq!(scaled(10, 100, 50), 20);
    }
}
