//! Per-thread performance counters read through `perf_event_open`.
//!
//! Each worker opens its own [`ThreadCounters`] after it is pinned: the counters measure the
//! calling thread only (pid 0, any CPU). Hardware events (cycles, instructions, cache events,
//! raw codes) are opened as one perf group, so the kernel schedules them together and one read
//! returns all of them over the same interval; software events (task clock, context switches,
//! migrations, page faults) are opened one by one, so they still count where the hardware group
//! cannot be opened. Opening never fails: a counter the machine cannot give is carried with the
//! reason, and is reported as unavailable, never as zero.
//!
//! # Reading the counters section of the results
//!
//! Each run reports one entry per requested counter:
//!
//! - `name`: the counter (`cycles`, `instructions`, `cache-misses`, `l1d-read-misses`,
//!   `context-switches`, `task-clock`, ..., or a raw event such as `r0443` or the label given
//!   with `label=r0443`).
//! - `per_passage`: the counter summed over every worker thread, divided by the number of
//!   passages (one passage = one entry and exit of the critical section). `cycles` per passage
//!   is the CPU time, in cycles, that all threads together spent per passage, waiting included;
//!   `task-clock` is the same in nanoseconds of CPU time; `context-switches` per passage tells
//!   how often a thread lost its CPU (a spinning lock should stay near zero; a blocking lock
//!   switches about once per contended passage).
//! - `total`: the raw sum over threads, for the whole measured interval.
//! - `unavailable`: when set, the counter could not be measured and `per_passage` and `total`
//!   are null; the text says why and what to do. Typical reasons: no hardware PMU (a virtual
//!   machine without a virtual PMU: every hardware counter is unavailable, software ones still
//!   work), `perf_event_paranoid` forbidding it (run as root or lower
//!   `/proc/sys/kernel/perf_event_paranoid`), or a raw code this CPU does not know. A counter
//!   unavailable on any thread is unavailable for the run.
//! - `multiplexed`: true when the kernel had to time-share the hardware counters (more events
//!   than the PMU has registers, or other users of the PMU), so at least one thread's counter ran
//!   only part of the time. The value is then scaled by `time_enabled / time_running`: an
//!   estimate, good for steady loops, rough for bursty ones. Ask for fewer counters to get exact
//!   counts.
//! - `user_only`: true when the kernel only allowed counting user space (the process may not
//!   count kernel events: `perf_event_paranoid` ≥ 2 and not root); time spent in the kernel (for
//!   example in futex waits) is then missing. Events that happen only in the kernel
//!   (`context-switches`, `cpu-migrations`) are reported unavailable in that case, not as 0.

use std::fmt;
use std::io;
use std::str::FromStr;
use std::sync::OnceLock;

use perf_event::events::{Cache, CacheId, CacheOp, CacheResult, Hardware, Raw, Software};
use perf_event::{Builder, Counter, ReadFormat};

/// One counter the user asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CounterSpec {
    /// CPU cycles (`PERF_COUNT_HW_CPU_CYCLES`).
    Cycles,
    /// Retired instructions.
    Instructions,
    /// Cache references, as the CPU defines them (on x86: last-level cache references).
    CacheReferences,
    /// Cache misses, as the CPU defines them (on x86: last-level cache misses).
    CacheMisses,
    /// Retired branch instructions.
    Branches,
    /// Mispredicted branches.
    BranchMisses,
    /// L1 data cache read misses (`L1-dcache-load-misses`).
    L1dReadMisses,
    /// Last-level cache read misses (`LLC-load-misses`).
    LlcReadMisses,
    /// Context switches of the thread (software event).
    ContextSwitches,
    /// Migrations of the thread to another CPU (software event).
    CpuMigrations,
    /// Page faults of the thread (software event).
    PageFaults,
    /// CPU time of the thread in nanoseconds (software event).
    TaskClock,
    /// A CPU-specific event given by its raw code, as perf's `rNNNN` (e.g. coherence events).
    Raw {
        /// The raw `config` value (event select and unit mask, CPU specific).
        code: u64,
        /// The raw `config1` value (Intel's offcore response mask); 0 for most events.
        config1: u64,
        /// The name shown in results: `rNNNN`, or the label given as `label=rNNNN`.
        name: String,
    },
}

/// The named counters, in the order they are listed to users.
static NAMED: [CounterSpec; 12] = [
    CounterSpec::Cycles,
    CounterSpec::Instructions,
    CounterSpec::CacheReferences,
    CounterSpec::CacheMisses,
    CounterSpec::Branches,
    CounterSpec::BranchMisses,
    CounterSpec::L1dReadMisses,
    CounterSpec::LlcReadMisses,
    CounterSpec::ContextSwitches,
    CounterSpec::CpuMigrations,
    CounterSpec::PageFaults,
    CounterSpec::TaskClock,
];

/// How a spec is handed to the kernel.
enum EventKind {
    Hardware(Hardware),
    Cache(Cache),
    Raw(Raw),
    Software(Software),
}

impl CounterSpec {
    /// The name shown in results.
    pub fn name(&self) -> &str {
        match self {
            CounterSpec::Cycles => "cycles",
            CounterSpec::Instructions => "instructions",
            CounterSpec::CacheReferences => "cache-references",
            CounterSpec::CacheMisses => "cache-misses",
            CounterSpec::Branches => "branches",
            CounterSpec::BranchMisses => "branch-misses",
            CounterSpec::L1dReadMisses => "l1d-read-misses",
            CounterSpec::LlcReadMisses => "llc-read-misses",
            CounterSpec::ContextSwitches => "context-switches",
            CounterSpec::CpuMigrations => "cpu-migrations",
            CounterSpec::PageFaults => "page-faults",
            CounterSpec::TaskClock => "task-clock",
            CounterSpec::Raw { name, .. } => name,
        }
    }

    /// The raw encoding handed to the kernel, for raw events: `r0443`, or
    /// `r01b7,config1=0x10003c0002` when the event takes a `config1`. `None` for named events.
    pub fn event(&self) -> Option<String> {
        match self {
            CounterSpec::Raw {
                code, config1: 0, ..
            } => Some(raw_name(*code)),
            CounterSpec::Raw { code, config1, .. } => {
                Some(format!("{},config1={config1:#x}", raw_name(*code)))
            }
            _ => None,
        }
    }

    /// The coherence preset this raw event belongs to ([`super::coherence`]), if any.
    pub fn preset(&self) -> Option<&'static str> {
        let CounterSpec::Raw {
            code,
            config1,
            name,
        } = self
        else {
            return None;
        };
        super::coherence::ALL.iter().find_map(|preset| {
            preset
                .events
                .iter()
                .any(|e| e.code == *code && e.config1 == *config1 && e.name == name)
                .then_some(preset.id)
        })
    }

    /// Whether the event is counted by the CPU's PMU (and so joins the hardware group).
    pub fn is_hardware(&self) -> bool {
        !matches!(self.kind(), EventKind::Software(_))
    }

    /// Whether the event only ever happens in kernel mode, so that counting user space only
    /// would silently give 0.
    fn kernel_only(&self) -> bool {
        matches!(
            self,
            CounterSpec::ContextSwitches | CounterSpec::CpuMigrations
        )
    }

    /// Whether leaving the kernel out changes the count. The kernel's task clock adds up the
    /// thread's CPU time whatever the exclude bits say, so task-clock is never user-only.
    fn mode_sensitive(&self) -> bool {
        !matches!(self, CounterSpec::TaskClock)
    }

    fn kind(&self) -> EventKind {
        let cache = |which, result| Cache {
            which,
            operation: CacheOp::READ,
            result,
        };
        match self {
            CounterSpec::Cycles => EventKind::Hardware(Hardware::CPU_CYCLES),
            CounterSpec::Instructions => EventKind::Hardware(Hardware::INSTRUCTIONS),
            CounterSpec::CacheReferences => EventKind::Hardware(Hardware::CACHE_REFERENCES),
            CounterSpec::CacheMisses => EventKind::Hardware(Hardware::CACHE_MISSES),
            CounterSpec::Branches => EventKind::Hardware(Hardware::BRANCH_INSTRUCTIONS),
            CounterSpec::BranchMisses => EventKind::Hardware(Hardware::BRANCH_MISSES),
            CounterSpec::L1dReadMisses => EventKind::Cache(cache(CacheId::L1D, CacheResult::MISS)),
            CounterSpec::LlcReadMisses => EventKind::Cache(cache(CacheId::LL, CacheResult::MISS)),
            CounterSpec::ContextSwitches => EventKind::Software(Software::CONTEXT_SWITCHES),
            CounterSpec::CpuMigrations => EventKind::Software(Software::CPU_MIGRATIONS),
            CounterSpec::PageFaults => EventKind::Software(Software::PAGE_FAULTS),
            CounterSpec::TaskClock => EventKind::Software(Software::TASK_CLOCK),
            CounterSpec::Raw { code, config1, .. } => {
                EventKind::Raw(Raw::new(*code).config1(*config1))
            }
        }
    }

    /// A builder for this event on the calling thread, any CPU, user and kernel, disabled.
    fn builder(&self) -> Builder<'static> {
        let mut builder = match self.kind() {
            EventKind::Hardware(e) => Builder::new(e),
            EventKind::Cache(e) => Builder::new(e),
            EventKind::Raw(e) => Builder::new(e),
            EventKind::Software(e) => Builder::new(e),
        };
        builder.observe_self().any_cpu().include_kernel();
        builder
    }
}

impl fmt::Display for CounterSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CounterSpec::Raw {
                code,
                config1: 0,
                name,
            } if *name != raw_name(*code) => write!(f, "{name}={}", raw_name(*code)),
            CounterSpec::Raw {
                code,
                config1,
                name,
            } if *config1 != 0 => write!(f, "{name}={}:config1={config1:#x}", raw_name(*code)),
            spec => f.write_str(spec.name()),
        }
    }
}

/// perf's spelling of a raw code.
fn raw_name(code: u64) -> String {
    format!("r{code:04x}")
}

/// The counter names `FromStr` accepts (besides raw codes and perf's aliases).
pub fn valid_names() -> Vec<&'static str> {
    NAMED.iter().map(CounterSpec::name).collect()
}

/// The tail of every parse error: what is accepted.
fn valid_help() -> String {
    format!(
        "valid: {}, coherence (this CPU's coherence preset), or a raw event rNNNN (hex, as perf's rNNNN), optionally named label=rNNNN",
        valid_names().join(", ")
    )
}

/// Parses perf's `rNNNN` (1 to 16 hex digits after `r`).
fn parse_raw(s: &str) -> Option<u64> {
    let hex = s.strip_prefix('r')?;
    if hex.is_empty() || hex.len() > 16 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(hex, 16).ok()
}

impl FromStr for CounterSpec {
    type Err = String;

    /// Parses a counter name (`cycles`, `task-clock`, ...; perf's spellings such as
    /// `cpu-cycles`, `L1-dcache-load-misses` or `cs` are accepted too), a raw code `r0443`, or a
    /// named raw code `label=r0443`. Case does not matter.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let item = s.trim().to_ascii_lowercase();
        if let Some(spec) = NAMED.iter().find(|spec| spec.name() == item) {
            return Ok(spec.clone());
        }
        let alias = match item.as_str() {
            "cpu-cycles" => Some(CounterSpec::Cycles),
            "branch-instructions" => Some(CounterSpec::Branches),
            "l1-dcache-load-misses" => Some(CounterSpec::L1dReadMisses),
            "llc-load-misses" => Some(CounterSpec::LlcReadMisses),
            "cs" => Some(CounterSpec::ContextSwitches),
            "migrations" => Some(CounterSpec::CpuMigrations),
            "faults" => Some(CounterSpec::PageFaults),
            _ => None,
        };
        if let Some(spec) = alias {
            return Ok(spec);
        }
        let (label, raw) = match item.split_once('=') {
            Some((label, raw)) => (Some(label.trim()), raw.trim()),
            None => (None, item.as_str()),
        };
        let looks_raw =
            raw.starts_with('r') && raw[1..].starts_with(|c: char| c.is_ascii_hexdigit());
        match parse_raw(raw) {
            Some(code) => {
                let name = match label {
                    None => raw_name(code),
                    Some(label) => check_label(label, s.trim())?.to_string(),
                };
                Ok(CounterSpec::Raw {
                    code,
                    config1: 0,
                    name,
                })
            }
            None if label.is_some() || looks_raw => Err(format!(
                "bad raw event '{}': expected r followed by 1 to 16 hex digits (e.g. r0443), \
                 optionally named label=rNNNN; {}",
                s.trim(),
                valid_help()
            )),
            None => Err(format!("unknown counter '{}'; {}", s.trim(), valid_help())),
        }
    }
}

/// A raw event's label must read as a name and not shadow a named counter or a raw code.
fn check_label<'a>(label: &'a str, item: &str) -> Result<&'a str, String> {
    let well_formed = label.starts_with(|c: char| c.is_ascii_alphabetic())
        && label
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !well_formed {
        return Err(format!(
            "bad label in '{item}': a label starts with a letter and holds letters, digits, \
             '-', '_' or '.'; {}",
            valid_help()
        ));
    }
    if NAMED.iter().any(|n| n.name() == label) || parse_raw(label).is_some() {
        return Err(format!(
            "bad label in '{item}': '{label}' is itself a counter name; pick another; {}",
            valid_help()
        ));
    }
    Ok(label)
}

/// Parses a comma-separated counter list such as `cycles,instructions,r0443`; `coherence`
/// stands for the coherence preset of this machine's CPU ([`super::coherence::detect`]).
///
/// The error is one line naming the bad item and listing the valid names.
pub fn parse_list(s: &str) -> Result<Vec<CounterSpec>, String> {
    parse_list_with(s, super::coherence::detect)
}

/// [`parse_list`] with `coherence` expanded to the preset `preset` returns (called only when
/// the list names it).
pub fn parse_list_with(
    s: &str,
    preset: impl FnOnce() -> super::coherence::Preset,
) -> Result<Vec<CounterSpec>, String> {
    let mut preset = Some(preset);
    let mut specs: Vec<CounterSpec> = Vec::new();
    for item in s.split(',') {
        if item.trim().eq_ignore_ascii_case("coherence") {
            let Some(preset) = preset.take() else {
                return Err(format!(
                    "'coherence' listed twice in '{s}'; list each counter once"
                ));
            };
            for spec in preset().specs() {
                if let Some(other) = specs.iter().position(|o| o.name() == spec.name()) {
                    if specs[other] != spec {
                        return Err(format!(
                            "counter '{}' in '{s}' is also in the coherence preset with \
                             another code; drop one",
                            spec.name()
                        ));
                    }
                    continue;
                }
                specs.push(spec);
            }
            continue;
        }
        if item.trim().is_empty() {
            return Err(format!(
                "empty counter name in list '{s}'; give names separated by commas; {}",
                valid_help()
            ));
        }
        let spec: CounterSpec = item.parse()?;
        if specs.iter().any(|other| other.name() == spec.name()) {
            return Err(format!(
                "counter '{}' listed twice in '{s}'; list each counter once",
                spec.name()
            ));
        }
        specs.push(spec);
    }
    Ok(specs)
}

/// The counters measured when the user names none: cycles, instructions, cache-misses,
/// l1d-read-misses, context-switches, task-clock.
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

/// One counter of one thread, as read.
///
/// Exactly one of `value` and `unavailable` is set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterSample {
    /// The counter's name ([`CounterSpec::name`]).
    pub name: String,
    /// The count since the counters were opened (or last reset) while enabled, scaled by
    /// `time_enabled / time_running` when the kernel multiplexed it.
    pub value: Option<u64>,
    /// Why there is no value: one line saying what is missing and what to do.
    pub unavailable: Option<String>,
    /// Nanoseconds the counter was enabled.
    pub time_enabled: u64,
    /// Nanoseconds the counter was actually running on the PMU (less than `time_enabled` when
    /// multiplexed).
    pub time_running: u64,
    /// Whether only user space was counted (kernel counting not permitted).
    pub user_only: bool,
    /// The raw encoding ([`CounterSpec::event`]); `None` for named events.
    pub event: Option<String>,
    /// The coherence preset the event came from ([`CounterSpec::preset`]).
    pub preset: Option<&'static str>,
}

impl CounterSample {
    /// A sample from a raw count and its times, scaled if the counter was multiplexed.
    fn from_count(name: &str, count: u64, enabled: u64, running: u64, user_only: bool) -> Self {
        let mut sample = CounterSample {
            name: name.to_string(),
            value: None,
            unavailable: None,
            time_enabled: enabled,
            time_running: running,
            user_only,
            event: None,
            preset: None,
        };
        if running == 0 && enabled > 0 {
            sample.unavailable = Some(
                "never scheduled on the PMU while enabled (time_running 0): other events hold \
                 the counters; ask for fewer counters"
                    .to_string(),
            );
        } else {
            sample.value = Some(scale(count, enabled, running));
        }
        sample
    }

    /// A sample carrying only the reason there is no value.
    fn unavailable(name: &str, reason: &str) -> Self {
        CounterSample {
            name: name.to_string(),
            value: None,
            unavailable: Some(reason.to_string()),
            time_enabled: 0,
            time_running: 0,
            user_only: false,
            event: None,
            preset: None,
        }
    }

    /// Whether the value is an estimate scaled from part of the enabled time.
    pub fn multiplexed(&self) -> bool {
        self.value.is_some() && self.time_running < self.time_enabled
    }
}

/// `count * enabled / running`: the count estimated over the whole enabled time.
fn scale(count: u64, enabled: u64, running: u64) -> u64 {
    if running == 0 || running >= enabled {
        return count;
    }
    let scaled = u128::from(count) * u128::from(enabled) / u128::from(running);
    u64::try_from(scaled).unwrap_or(u64::MAX)
}

/// How a counter of a [`ThreadCounters`] is held.
#[derive(Debug)]
enum Slot {
    /// A member (or the leader) of the hardware group: read through the group.
    Grouped,
    /// An event of its own.
    Alone(Counter),
    /// Not measurable, with the reason.
    Unavailable(String),
}

/// The hardware group: `counters[0]` is the leader. Each entry holds the spec's index.
#[derive(Debug)]
struct HwGroup {
    counters: Vec<(usize, Counter)>,
}

/// Counters of the calling thread, opened inside the pinned worker.
///
/// They count the thread that called [`ThreadCounters::open`], on whichever CPU it runs; read
/// them from that thread before it ends. Counts accumulate over every enabled interval until
/// [`ThreadCounters::reset`].
#[derive(Debug)]
pub struct ThreadCounters {
    specs: Vec<CounterSpec>,
    slots: Vec<Slot>,
    /// Per spec: whether only user space is counted.
    user_only: Vec<bool>,
    group: Option<HwGroup>,
}

/// Read format of the group leader: all members in one read, with ids and times.
fn group_read_format() -> ReadFormat {
    ReadFormat::GROUP
        | ReadFormat::ID
        | ReadFormat::TOTAL_TIME_ENABLED
        | ReadFormat::TOTAL_TIME_RUNNING
}

fn is_permission_error(err: &io::Error) -> bool {
    matches!(err.raw_os_error(), Some(libc::EACCES) | Some(libc::EPERM))
}

/// Opens one event on the calling thread, into `leader`'s group when given, and returns it
/// with whether it counts user space only.
///
/// It asks for user and kernel counting and falls back to user space only when the kernel may
/// not be counted, except for kernel-only events, where that would give a silent 0. A group
/// member is created enabled, so that it counts exactly while its leader does and the group is
/// switched on and off through the leader alone, as `perf stat` does: members created disabled
/// and enabled later with the group ioctl were seen to start counting only at the thread's next
/// schedule-in, silently dropping counts.
fn open_event(
    spec: &CounterSpec,
    mut leader: Option<&mut Counter>,
    read_format: ReadFormat,
) -> io::Result<(Counter, bool)> {
    let mut builder = spec.builder();
    builder.read_format(read_format).enabled(leader.is_some());
    let build = |builder: &Builder, leader: Option<&mut Counter>| match leader {
        Some(leader) => builder.build_with_group(leader),
        None => builder.build(),
    };
    match build(&builder, leader.as_deref_mut()) {
        Ok(counter) => Ok((counter, false)),
        Err(err) if is_permission_error(&err) && !spec.kernel_only() => {
            builder.exclude_kernel(true);
            build(&builder, leader).map(|counter| (counter, spec.mode_sensitive()))
        }
        Err(err) => Err(err),
    }
}

/// Opens `specs` (index, spec) as one group led by the first. Fails as a whole.
fn open_group(specs: &[(usize, &CounterSpec)]) -> io::Result<(HwGroup, Vec<(usize, bool)>)> {
    let mut counters = Vec::with_capacity(specs.len());
    let mut user_only = Vec::with_capacity(specs.len());
    let Some(((first_index, first), rest)) = specs.split_first() else {
        return Ok((HwGroup { counters }, user_only));
    };
    let (mut leader, leader_user) = open_event(first, None, group_read_format())?;
    user_only.push((*first_index, leader_user));
    let mut members = Vec::with_capacity(rest.len());
    for (index, spec) in rest {
        let (member, user) = open_event(spec, Some(&mut leader), group_read_format())?;
        members.push((*index, member));
        user_only.push((*index, user));
    }
    counters.push((*first_index, leader));
    counters.extend(members);
    Ok((HwGroup { counters }, user_only))
}

/// The errno's symbolic name, for reasons.
fn errno_name(code: i32) -> String {
    let name = match code {
        libc::ENOENT => "ENOENT",
        libc::EACCES => "EACCES",
        libc::EPERM => "EPERM",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::EINVAL => "EINVAL",
        libc::ENODEV => "ENODEV",
        libc::EMFILE => "EMFILE",
        libc::ENOSYS => "ENOSYS",
        libc::EBUSY => "EBUSY",
        libc::E2BIG => "E2BIG",
        libc::ENOSPC => "ENOSPC",
        _ => return format!("errno {code}"),
    };
    name.to_string()
}

/// Whether a core PMU is registered (a `/sys/bus/event_source` device of type
/// `PERF_TYPE_RAW`, such as x86's `cpu`); `None` when sysfs cannot tell.
fn core_pmu_present() -> Option<bool> {
    static PRESENT: OnceLock<Option<bool>> = OnceLock::new();
    *PRESENT.get_or_init(|| {
        let devices = std::fs::read_dir("/sys/bus/event_source/devices").ok()?;
        let raw_type = Builder::new(Raw::new(0)).attrs().type_;
        Some(devices.flatten().any(|device| {
            std::fs::read_to_string(device.path().join("type"))
                .ok()
                .and_then(|t| t.trim().parse::<u32>().ok())
                == Some(raw_type)
        }))
    })
}

/// "not permitted" with what to do about it.
fn permission_reason(code: i32) -> String {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    if euid == 0 {
        return format!(
            "not permitted even as root (perf_event_open: {}): a seccomp profile or security \
             module blocks it; allow perf_event_open (e.g. in the container's seccomp profile)",
            errno_name(code)
        );
    }
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unreadable".to_string());
    format!(
        "not permitted: /proc/sys/kernel/perf_event_paranoid is {paranoid}; run as root or lower it"
    )
}

/// One short, actionable line for a failed `perf_event_open` of `spec`.
fn open_error_reason(spec: &CounterSpec, err: &io::Error) -> String {
    let raw = match spec {
        CounterSpec::Raw { code, name, .. } if *name == raw_name(*code) => Some(name.clone()),
        CounterSpec::Raw { name, .. } => {
            Some(format!("{name} ({})", spec.event().unwrap_or_default()))
        }
        _ => None,
    };
    let Some(code) = err.raw_os_error() else {
        if err.kind() == io::ErrorKind::Unsupported {
            return "this kernel does not know the perf_event_attr size the program uses \
                    (perf_event_open: E2BIG); use a newer kernel"
                .to_string();
        }
        return format!("perf_event_open failed: {err}");
    };
    match code {
        libc::ENOENT if spec.is_hardware() && core_pmu_present() == Some(false) => {
            "no hardware PMU on this machine (perf_event_open: ENOENT); on a VM enable the \
             virtual PMU"
                .to_string()
        }
        libc::ENOENT | libc::EINVAL if raw.is_some() => format!(
            "raw event {} not supported by this CPU (perf_event_open: {})",
            raw.unwrap_or_default(),
            errno_name(code)
        ),
        libc::ENOENT => {
            "event not supported by this CPU's PMU (perf_event_open: ENOENT)".to_string()
        }
        libc::EACCES | libc::EPERM if spec.kernel_only() => {
            format!("counted only in kernel mode, {}", permission_reason(code))
        }
        libc::EACCES | libc::EPERM => permission_reason(code),
        libc::EOPNOTSUPP => "the PMU does not support this event with these options \
                             (perf_event_open: EOPNOTSUPP)"
            .to_string(),
        libc::EINVAL => {
            "rejected by the kernel as invalid on this CPU (perf_event_open: EINVAL)".to_string()
        }
        libc::ENODEV => {
            "no PMU on this machine provides this event (perf_event_open: ENODEV)".to_string()
        }
        libc::EMFILE => {
            "too many open files (perf_event_open: EMFILE); raise the limit with ulimit -n"
                .to_string()
        }
        libc::ENOSYS => {
            "this kernel has no perf_event_open (ENOSYS); enable CONFIG_PERF_EVENTS".to_string()
        }
        _ => format!("perf_event_open: {err} ({})", errno_name(code)),
    }
}

impl ThreadCounters {
    /// Opens `specs` for the calling thread. Never fails: each counter is either open or
    /// carries the reason it is unavailable. The counters start disabled: call
    /// [`ThreadCounters::enable`].
    pub fn open(specs: &[CounterSpec]) -> ThreadCounters {
        let mut counters = ThreadCounters {
            specs: specs.to_vec(),
            slots: Vec::with_capacity(specs.len()),
            user_only: vec![false; specs.len()],
            group: None,
        };
        let mut hardware = Vec::new();
        for (index, spec) in specs.iter().enumerate() {
            if spec.is_hardware() {
                hardware.push((index, spec));
                // Replaced by `open_hardware` below, which decides all hardware slots at once.
                counters
                    .slots
                    .push(Slot::Unavailable("not opened".to_string()));
            } else {
                let slot = counters.open_alone(index, spec);
                counters.slots.push(slot);
            }
        }
        counters.open_hardware(&hardware);
        counters
    }

    /// Opens one event on its own.
    fn open_alone(&mut self, index: usize, spec: &CounterSpec) -> Slot {
        match open_event(
            spec,
            None,
            ReadFormat::TOTAL_TIME_ENABLED | ReadFormat::TOTAL_TIME_RUNNING,
        ) {
            Ok((counter, user_only)) => {
                self.user_only[index] = user_only;
                Slot::Alone(counter)
            }
            Err(err) => Slot::Unavailable(open_error_reason(spec, &err)),
        }
    }

    /// Installs an opened group.
    fn install_group(&mut self, group: HwGroup, user_only: Vec<(usize, bool)>) {
        for (index, user) in user_only {
            self.user_only[index] = user;
        }
        for (index, _) in &group.counters {
            self.slots[*index] = Slot::Grouped;
        }
        self.group = Some(group);
    }

    /// Opens the hardware events as one group. If the group cannot be opened, probes each
    /// event alone to learn each one's own reason, then groups those that open (or, if even
    /// they do not fit one group, keeps them as separate events).
    fn open_hardware(&mut self, hardware: &[(usize, &CounterSpec)]) {
        if hardware.len() > 1 {
            if let Ok((group, user_only)) = open_group(hardware) {
                self.install_group(group, user_only);
                return;
            }
        }
        let mut opened = Vec::new();
        for &(index, spec) in hardware {
            match self.open_alone(index, spec) {
                Slot::Alone(counter) => opened.push((index, spec, counter)),
                slot => self.slots[index] = slot,
            }
        }
        if opened.len() > 1 {
            let members: Vec<(usize, &CounterSpec)> = opened
                .iter()
                .map(|(index, spec, _)| (*index, *spec))
                .collect();
            if let Ok((group, user_only)) = open_group(&members) {
                drop(opened);
                self.install_group(group, user_only);
                return;
            }
        }
        for (index, _, counter) in opened {
            self.slots[index] = Slot::Alone(counter);
        }
    }

    /// Marks every grouped counter unavailable (the group failed after opening).
    fn fail_group(&mut self, what: &str, err: &io::Error) {
        let reason = format!("{what} of the hardware counter group failed: {err}");
        if let Some(group) = self.group.take() {
            for (index, _) in group.counters {
                self.slots[index] = Slot::Unavailable(reason.clone());
            }
        }
    }

    /// Applies `group_op` to the group's leader and `alone_op` to every counter of its own; a
    /// counter whose ioctl fails becomes unavailable with the error.
    fn control(
        &mut self,
        what: &str,
        group_op: fn(&mut Counter) -> io::Result<()>,
        alone_op: fn(&mut Counter) -> io::Result<()>,
    ) {
        if let Some(group) = self.group.as_mut() {
            if let Err(err) = group_op(&mut group.counters[0].1) {
                self.fail_group(what, &err);
            }
        }
        for slot in &mut self.slots {
            if let Slot::Alone(counter) = slot {
                if let Err(err) = alone_op(counter) {
                    *slot = Slot::Unavailable(format!("{what} of the counter failed: {err}"));
                }
            }
        }
    }

    /// Starts counting (every open counter; the hardware group at once, through its leader).
    pub fn enable(&mut self) {
        self.control("enabling", Counter::enable, Counter::enable);
    }

    /// Stops counting; counts are kept.
    pub fn disable(&mut self) {
        self.control("disabling", Counter::disable, Counter::disable);
    }

    /// Sets every count back to zero.
    pub fn reset(&mut self) {
        self.control("resetting", Counter::reset_group, Counter::reset);
    }

    /// Reads every counter: one sample per spec, in the order given to
    /// [`ThreadCounters::open`]. The hardware group is read with one read.
    pub fn read(&mut self) -> Vec<CounterSample> {
        let group_read = self.group.as_mut().map(|group| {
            let data = group.counters[0].1.read_group()?;
            let nanos = |d: Option<std::time::Duration>| {
                d.map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
            };
            let (enabled, running) = (nanos(data.time_enabled()), nanos(data.time_running()));
            let values = group
                .counters
                .iter()
                .map(|(index, counter)| (*index, data.get(counter).map(|entry| entry.value())))
                .collect::<Vec<_>>();
            Ok::<_, io::Error>((values, enabled, running))
        });
        let mut samples = Vec::with_capacity(self.specs.len());
        for (index, (spec, slot)) in self.specs.iter().zip(&mut self.slots).enumerate() {
            let name = spec.name();
            let user_only = self.user_only[index];
            let sample = match slot {
                Slot::Unavailable(reason) => CounterSample::unavailable(name, reason),
                Slot::Alone(counter) => match counter.read_count_and_time() {
                    Ok(read) => CounterSample::from_count(
                        name,
                        read.count,
                        read.time_enabled,
                        read.time_running,
                        user_only,
                    ),
                    Err(err) => CounterSample::unavailable(
                        name,
                        &format!("reading the counter failed: {err}"),
                    ),
                },
                Slot::Grouped => match &group_read {
                    Some(Ok((values, enabled, running))) => {
                        match values.iter().find(|(i, _)| *i == index) {
                            Some((_, Some(count))) => CounterSample::from_count(
                                name, *count, *enabled, *running, user_only,
                            ),
                            _ => CounterSample::unavailable(
                                name,
                                "missing from the hardware group's read",
                            ),
                        }
                    }
                    Some(Err(err)) => CounterSample::unavailable(
                        name,
                        &format!("reading the hardware counter group failed: {err}"),
                    ),
                    None => CounterSample::unavailable(name, "hardware counter group closed"),
                },
            };
            samples.push(CounterSample {
                event: spec.event(),
                preset: spec.preset(),
                ..sample
            });
        }
        samples
    }
}

/// One counter merged over threads and divided by passages: what the results report.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CounterReport {
    /// The counter's name.
    pub name: String,
    /// `total / passages`; null when unavailable or when there were no passages.
    pub per_passage: Option<f64>,
    /// Sum over threads; null when unavailable.
    pub total: Option<u64>,
    /// Why the counter is missing (the first thread's reason); null when measured.
    pub unavailable: Option<String>,
    /// Whether any thread's count was time-shared on the PMU and scaled up.
    #[serde(default)]
    pub multiplexed: bool,
    /// Whether any thread counted user space only (kernel counting not permitted).
    #[serde(default)]
    pub user_only: bool,
    /// The raw encoding given to the kernel (`r0443`, `r01b7,config1=0x10003c0002`); null for
    /// named events.
    pub event: Option<String>,
    /// The coherence preset the event belongs to (`amd-zen4`, `intel-icx`, ...; see
    /// `--counters coherence`); null otherwise.
    pub preset: Option<String>,
}

/// Merges per-thread samples (each thread's list in spec order) into one report per counter,
/// in the order the counters first appear.
///
/// A counter unavailable on any thread (or missing from a thread's list) is unavailable in the
/// report, with the first reason met; otherwise `total` is the sum over threads and
/// `per_passage` is `total / passages` (null when `passages` is 0).
pub fn merge(per_thread: &[Vec<CounterSample>], passages: u64) -> Vec<CounterReport> {
    let mut names: Vec<&str> = Vec::new();
    for sample in per_thread.iter().flatten() {
        if !names.contains(&sample.name.as_str()) {
            names.push(&sample.name);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let mut report = CounterReport {
                name: name.to_string(),
                per_passage: None,
                total: None,
                unavailable: None,
                multiplexed: false,
                user_only: false,
                event: None,
                preset: None,
            };
            let mut total = 0u64;
            for samples in per_thread {
                let Some(sample) = samples.iter().find(|s| s.name == name) else {
                    report
                        .unavailable
                        .get_or_insert_with(|| "not measured on every thread".to_string());
                    continue;
                };
                report.event = report.event.take().or_else(|| sample.event.clone());
                report.preset = report
                    .preset
                    .take()
                    .or_else(|| sample.preset.map(str::to_string));
                report.multiplexed |= sample.multiplexed();
                report.user_only |= sample.user_only;
                match (&sample.value, &sample.unavailable) {
                    (_, Some(reason)) => {
                        report.unavailable.get_or_insert_with(|| reason.clone());
                    }
                    (Some(value), None) => total = total.saturating_add(*value),
                    (None, None) => {
                        report
                            .unavailable
                            .get_or_insert_with(|| "no value recorded".to_string());
                    }
                }
            }
            if report.unavailable.is_none() {
                report.total = Some(total);
                report.per_passage = (passages > 0).then(|| total as f64 / passages as f64);
            }
            report
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Burns CPU on the calling thread for `wall` of wall-clock time.
    fn busy(wall: Duration) -> u64 {
        let start = Instant::now();
        let mut x = 0u64;
        while start.elapsed() < wall {
            for i in 0..1000u64 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
            }
        }
        x
    }

    /// Sleeps several times, so the thread gives up its CPU several times.
    fn sleep_a_few_times() {
        for _ in 0..5 {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Either a value or a reason, never both, never an empty reason.
    fn assert_value_or_reason(sample: &CounterSample) {
        match (&sample.value, &sample.unavailable) {
            (Some(_), None) => {}
            (None, Some(reason)) => assert!(!reason.trim().is_empty(), "{sample:?}"),
            _ => panic!("exactly one of value and unavailable must be set: {sample:?}"),
        }
    }

    fn sample(name: &str, value: u64, enabled: u64, running: u64) -> CounterSample {
        CounterSample::from_count(name, value, enabled, running, false)
    }

    #[test]
    fn parses_names_aliases_and_case() {
        for name in valid_names() {
            let spec: CounterSpec = name.parse().unwrap();
            assert_eq!(spec.name(), name);
        }
        assert_eq!("cycles".parse::<CounterSpec>(), Ok(CounterSpec::Cycles));
        assert_eq!(
            " Task-Clock ".parse::<CounterSpec>(),
            Ok(CounterSpec::TaskClock)
        );
        assert_eq!(
            "L1-dcache-load-misses".parse::<CounterSpec>(),
            Ok(CounterSpec::L1dReadMisses)
        );
        assert_eq!(
            "cs".parse::<CounterSpec>(),
            Ok(CounterSpec::ContextSwitches)
        );
        assert_eq!("cpu-cycles".parse::<CounterSpec>(), Ok(CounterSpec::Cycles));
    }

    #[test]
    fn parses_raw_codes() {
        assert_eq!(
            "r0443".parse::<CounterSpec>(),
            Ok(CounterSpec::Raw {
                code: 0x0443,
                config1: 0,
                name: "r0443".into()
            })
        );
        assert_eq!(
            "R1D2".parse::<CounterSpec>(),
            Ok(CounterSpec::Raw {
                code: 0x01d2,
                config1: 0,
                name: "r01d2".into()
            })
        );
        assert_eq!(
            "hitm=r01d2".parse::<CounterSpec>(),
            Ok(CounterSpec::Raw {
                code: 0x01d2,
                config1: 0,
                name: "hitm".into()
            })
        );
        let spec: CounterSpec = "hitm=r01d2".parse().unwrap();
        assert_eq!(spec.to_string(), "hitm=r01d2");
        assert_eq!(spec.to_string().parse::<CounterSpec>(), Ok(spec));
        assert!(CounterSpec::Raw {
            code: 1,
            config1: 0,
            name: "r0001".into()
        }
        .is_hardware());
        assert_eq!(
            "rffffffffffffffff"
                .parse::<CounterSpec>()
                .map(|s| s.to_string()),
            Ok("rffffffffffffffff".to_string())
        );
    }

    #[test]
    fn parse_errors_name_the_item_and_list_valid_names() {
        let err = "cyclez".parse::<CounterSpec>().unwrap_err();
        assert!(err.contains("'cyclez'"), "{err}");
        assert!(
            err.contains("cycles") && err.contains("task-clock"),
            "{err}"
        );
        assert!(!err.contains('\n'), "{err}");

        let err = "r04zz".parse::<CounterSpec>().unwrap_err();
        assert!(err.contains("bad raw event 'r04zz'"), "{err}");
        let err = "r".parse::<CounterSpec>().unwrap_err();
        assert!(err.contains("'r'"), "{err}");
        let err = "r12345678901234567".parse::<CounterSpec>().unwrap_err();
        assert!(err.contains("1 to 16 hex digits"), "{err}");
        let err = "cycles=r0443".parse::<CounterSpec>().unwrap_err();
        assert!(err.contains("itself a counter name"), "{err}");
        let err = "9x=r0443".parse::<CounterSpec>().unwrap_err();
        assert!(err.contains("bad label"), "{err}");
        let err = "hitm=0443".parse::<CounterSpec>().unwrap_err();
        assert!(err.contains("bad raw event"), "{err}");
    }

    #[test]
    fn parses_lists() {
        assert_eq!(
            parse_list("cycles, instructions,r0443"),
            Ok(vec![
                CounterSpec::Cycles,
                CounterSpec::Instructions,
                CounterSpec::Raw {
                    code: 0x443,
                    config1: 0,
                    name: "r0443".into()
                }
            ])
        );
        let err = parse_list("cycles,bogus,task-clock").unwrap_err();
        assert!(err.contains("'bogus'") && err.contains("valid:"), "{err}");
        let err = parse_list("cycles,,task-clock").unwrap_err();
        assert!(err.contains("empty counter name"), "{err}");
        let err = parse_list("").unwrap_err();
        assert!(err.contains("empty counter name"), "{err}");
        let err = parse_list("cycles,cpu-cycles").unwrap_err();
        assert!(err.contains("'cycles' listed twice"), "{err}");
        let names: Vec<String> = default_specs().iter().map(|s| s.to_string()).collect();
        assert_eq!(parse_list(&names.join(",")), Ok(default_specs()));
    }

    #[test]
    fn coherence_expands_to_the_cpus_preset() {
        use crate::metrics::coherence::{AMD_ZEN4, GENERIC, INTEL_SPR};
        let specs = parse_list_with("cycles,coherence", || AMD_ZEN4).unwrap();
        assert_eq!(specs[0], CounterSpec::Cycles);
        assert_eq!(&specs[1..], AMD_ZEN4.specs().as_slice());
        assert_eq!(specs[1].preset(), Some("amd-zen4"));
        assert_eq!(specs[1].event().as_deref(), Some("r0243"));
        assert_eq!(specs[0].preset(), None);
        // A user's own r0243 is not a preset event.
        let own: CounterSpec = "r0243".parse().unwrap();
        assert_eq!(
            (own.preset(), own.event().as_deref()),
            (None, Some("r0243"))
        );
        // Case does not matter; the generic preset is cache-misses, listed once.
        let generic = parse_list_with("cache-misses, Coherence", || GENERIC).unwrap();
        assert_eq!(generic, vec![CounterSpec::CacheMisses]);
        let err = parse_list_with("coherence,coherence", || INTEL_SPR).unwrap_err();
        assert!(err.contains("listed twice"), "{err}");
        // The preset is looked up only when asked for.
        let plain = parse_list_with("cycles", || panic!("not asked")).unwrap();
        assert_eq!(plain, vec![CounterSpec::Cycles]);
        let spr = parse_list_with("coherence", || INTEL_SPR).unwrap();
        assert_eq!(
            spr.last().unwrap().to_string(),
            "ocr.demand_rfo.l3_hit.snoop_hitm=r012a:config1=0x10003c0002"
        );
    }

    #[test]
    fn reports_carry_the_raw_encoding_and_preset() {
        let spec = crate::metrics::coherence::INTEL_SKX.specs().pop().unwrap();
        let mut counters = ThreadCounters::open(std::slice::from_ref(&spec));
        let samples = counters.read();
        assert_eq!(
            samples[0].event.as_deref(),
            Some("r01b7,config1=0x10003c0002")
        );
        assert_eq!(samples[0].preset, Some("intel-skx"));
        let report = &merge(&[samples.clone(), samples], 10)[0];
        assert_eq!(report.event.as_deref(), Some("r01b7,config1=0x10003c0002"));
        assert_eq!(report.preset.as_deref(), Some("intel-skx"));
        // On a machine without this CPU's PMU the event is unavailable, never 0.
        if core_pmu_present() == Some(false) {
            assert_eq!(report.total, None);
            assert!(report.unavailable.is_some());
        }
    }

    /// Whether this process may count kernel events (root, CAP_PERFMON, or a low
    /// perf_event_paranoid): a user-only page-fault counter says it may not.
    fn kernel_counting_permitted() -> bool {
        let mut probe = ThreadCounters::open(&[CounterSpec::PageFaults]);
        !probe.read()[0].user_only
    }

    /// Context switches either count (when the kernel may be counted) or say why not.
    fn assert_switches(sample: &CounterSample) {
        if kernel_counting_permitted() {
            assert!(sample.value.is_some_and(|v| v >= 1), "{sample:?}");
        } else {
            assert_eq!(
                sample.value, None,
                "a user-only count of switches is a silent 0"
            );
            let reason = sample.unavailable.as_deref().unwrap();
            assert!(
                reason.starts_with("counted only in kernel mode"),
                "{reason}"
            );
        }
    }

    /// Touches freshly mapped memory, so the thread takes page faults in user mode. (Heap
    /// memory could be reused and already mapped; a new anonymous mapping cannot.)
    fn fault_pages() {
        const LEN: usize = 64 * 4096;
        // SAFETY: an anonymous private mapping with no address hint; it aliases nothing.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                LEN,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(map, libc::MAP_FAILED, "{}", io::Error::last_os_error());
        for offset in (0..LEN).step_by(4096) {
            // SAFETY: `offset < LEN`, inside the writable mapping made above.
            unsafe { std::ptr::write_volatile(map.cast::<u8>().add(offset), 1) };
        }
        // SAFETY: `map` is the mapping of `LEN` bytes made above, no longer used.
        unsafe { libc::munmap(map, LEN) };
    }

    #[test]
    fn software_counters_count_here() {
        let mut counters = ThreadCounters::open(&[
            CounterSpec::TaskClock,
            CounterSpec::ContextSwitches,
            CounterSpec::PageFaults,
        ]);
        counters.enable();
        busy(Duration::from_millis(5));
        sleep_a_few_times();
        fault_pages();
        counters.disable();
        let first = counters.read();
        assert_eq!(first.len(), 3);
        for s in &first {
            assert_value_or_reason(s);
        }
        assert_eq!(first[0].name, "task-clock");
        let task_clock = first[0].value.expect("task-clock opens on any Linux");
        assert!(task_clock > 0, "{first:?}");
        assert!(first[0].time_enabled > 0 && !first[0].multiplexed());
        assert!(!first[0].user_only, "task-clock counts all CPU time");
        assert_switches(&first[1]);
        assert!(first[2].value.is_some_and(|v| v >= 1), "{first:?}");

        // Disabled counters stand still; reset zeroes them.
        busy(Duration::from_millis(2));
        sleep_a_few_times();
        assert_eq!(counters.read()[0].value, Some(task_clock));
        counters.reset();
        assert_eq!(counters.read()[0].value, Some(0));
    }

    #[test]
    fn hardware_counters_give_a_value_or_a_reason() {
        let mut specs = default_specs();
        specs.push("r0443".parse().unwrap());
        let mut counters = ThreadCounters::open(&specs);
        counters.enable();
        busy(Duration::from_millis(3));
        counters.disable();
        let samples = counters.read();
        assert_eq!(samples.len(), specs.len());
        for (spec, s) in specs.iter().zip(&samples) {
            assert_eq!(s.name, spec.name());
            assert_value_or_reason(s);
            // Where cycles and instructions count, a busy loop cannot give 0.
            if matches!(spec, CounterSpec::Cycles | CounterSpec::Instructions) {
                assert_ne!(s.value, Some(0), "{s:?}");
            }
            // Without a core PMU every hardware event is unavailable, and says why.
            if spec.is_hardware() && core_pmu_present() == Some(false) {
                assert_eq!(s.value, None, "{s:?}");
                let reason = s.unavailable.as_deref().unwrap();
                assert!(reason.contains("no hardware PMU"), "{reason}");
            }
        }
    }

    #[test]
    fn group_mechanics_work_on_software_events() {
        // The hardware group's code path, exercised with events every machine has.
        let specs = [CounterSpec::TaskClock, CounterSpec::PageFaults];
        let indexed: Vec<(usize, &CounterSpec)> = specs.iter().enumerate().collect();
        let (group, user_only) = open_group(&indexed).expect("software events group");
        let mut counters = ThreadCounters {
            specs: specs.to_vec(),
            slots: vec![
                Slot::Unavailable(String::new()),
                Slot::Unavailable(String::new()),
            ],
            user_only: vec![false; 2],
            group: None,
        };
        counters.install_group(group, user_only);
        counters.enable();
        busy(Duration::from_millis(3));
        fault_pages();
        counters.disable();
        let samples = counters.read();
        assert!(samples[0].value.unwrap() > 0, "{samples:?}");
        assert!(samples[1].value.unwrap() >= 1, "{samples:?}");
        // One read, one interval: both members carry the group's times.
        assert_eq!(samples[0].time_enabled, samples[1].time_enabled);
        assert!(samples[0].time_enabled > 0);

        // Members count again after a reset and a second enable of the leader.
        counters.reset();
        assert_eq!(counters.read()[1].value, Some(0));
        counters.enable();
        fault_pages();
        counters.disable();
        let again = counters.read();
        assert!(again[1].value.is_some_and(|v| v >= 1), "{again:?}");
    }

    #[test]
    fn failed_group_falls_back_to_each_events_own_outcome() {
        // Cycles joins software events: where the PMU is missing the group fails as a whole,
        // and probing gives the software events their counts and cycles its own reason.
        let specs = [
            CounterSpec::TaskClock,
            CounterSpec::Cycles,
            CounterSpec::ContextSwitches,
        ];
        let indexed: Vec<(usize, &CounterSpec)> = specs.iter().enumerate().collect();
        let mut counters = ThreadCounters {
            specs: specs.to_vec(),
            slots: (0..3).map(|_| Slot::Unavailable(String::new())).collect(),
            user_only: vec![false; 3],
            group: None,
        };
        counters.open_hardware(&indexed);
        counters.enable();
        busy(Duration::from_millis(3));
        sleep_a_few_times();
        counters.disable();
        let samples = counters.read();
        for s in &samples {
            assert_value_or_reason(s);
        }
        assert!(samples[0].value.unwrap() > 0, "{samples:?}");
        assert_switches(&samples[2]);
        assert!(samples[1].value.is_some_and(|v| v > 0) || samples[1].unavailable.is_some());
    }

    #[test]
    fn reasons_are_short_and_actionable() {
        let enoent = io::Error::from_raw_os_error(libc::ENOENT);
        let raw = CounterSpec::Raw {
            code: 0x443,
            config1: 0,
            name: "r0443".into(),
        };
        let einval = io::Error::from_raw_os_error(libc::EINVAL);
        assert_eq!(
            open_error_reason(&raw, &einval),
            "raw event r0443 not supported by this CPU (perf_event_open: EINVAL)"
        );
        let reason = open_error_reason(&CounterSpec::Cycles, &enoent);
        match core_pmu_present() {
            Some(false) => assert_eq!(
                reason,
                "no hardware PMU on this machine (perf_event_open: ENOENT); on a VM enable the \
                 virtual PMU"
            ),
            _ => assert!(reason.contains("ENOENT"), "{reason}"),
        }
        let eacces = io::Error::from_raw_os_error(libc::EACCES);
        let reason = open_error_reason(&CounterSpec::Cycles, &eacces);
        assert!(reason.starts_with("not permitted"), "{reason}");
        let reason = open_error_reason(&CounterSpec::ContextSwitches, &eacces);
        assert!(
            reason.starts_with("counted only in kernel mode, not permitted"),
            "{reason}"
        );
        let reason = open_error_reason(
            &CounterSpec::Cycles,
            &io::Error::from_raw_os_error(libc::EBUSY),
        );
        assert!(reason.contains("EBUSY"), "{reason}");
        for reason in [
            open_error_reason(&CounterSpec::Cycles, &einval),
            open_error_reason(
                &CounterSpec::Cycles,
                &io::Error::from_raw_os_error(libc::EOPNOTSUPP),
            ),
        ] {
            assert!(
                !reason.contains('\n') && reason.contains("perf_event_open"),
                "{reason}"
            );
        }
    }

    #[test]
    fn multiplexed_counts_are_scaled() {
        assert_eq!(scale(100, 10, 10), 100);
        assert_eq!(scale(100, 10, 5), 200);
        assert_eq!(scale(100, 0, 0), 100);
        assert_eq!(scale(u64::MAX, 3, 1), u64::MAX);
        let s = sample("cycles", 100, 30, 10);
        assert_eq!(s.value, Some(300));
        assert!(s.multiplexed());
        let never = sample("cycles", 0, 30, 0);
        assert_eq!(never.value, None);
        assert!(never.unavailable.unwrap().contains("never scheduled"));
        assert_eq!(sample("cycles", 0, 0, 0).value, Some(0));
    }

    #[test]
    fn merge_sums_and_divides() {
        let threads = vec![
            vec![
                sample("cycles", 1000, 10, 10),
                sample("task-clock", 50, 10, 10),
            ],
            vec![
                sample("cycles", 500, 20, 10),
                sample("task-clock", 70, 10, 10),
            ],
        ];
        let reports = merge(&threads, 4);
        assert_eq!(reports.len(), 2);
        assert_eq!(reports[0].name, "cycles");
        assert_eq!(reports[0].total, Some(2000));
        assert_eq!(reports[0].per_passage, Some(500.0));
        assert!(reports[0].multiplexed);
        assert_eq!(reports[1].total, Some(120));
        assert_eq!(reports[1].per_passage, Some(30.0));
        assert!(!reports[1].multiplexed);
        assert!(reports.iter().all(|r| r.unavailable.is_none()));

        let none = merge(&threads, 0);
        assert_eq!(none[0].total, Some(2000));
        assert_eq!(none[0].per_passage, None);
        assert!(merge(&[], 10).is_empty());
    }

    #[test]
    fn merge_propagates_unavailable() {
        let threads = vec![
            vec![
                sample("cycles", 1000, 10, 10),
                sample("task-clock", 5, 1, 1),
            ],
            vec![
                CounterSample::unavailable("cycles", "first reason"),
                sample("task-clock", 5, 1, 1),
            ],
            vec![
                CounterSample::unavailable("cycles", "second reason"),
                sample("task-clock", 5, 1, 1),
            ],
        ];
        let reports = merge(&threads, 10);
        assert_eq!(reports[0].unavailable.as_deref(), Some("first reason"));
        assert_eq!(reports[0].total, None);
        assert_eq!(reports[0].per_passage, None);
        assert_eq!(reports[1].total, Some(15));
        assert_eq!(reports[1].per_passage, Some(1.5));

        let missing = merge(&[vec![sample("cycles", 1, 1, 1)], vec![]], 1);
        assert_eq!(
            missing[0].unavailable.as_deref(),
            Some("not measured on every thread")
        );
        let json = serde_json::to_value(&reports[0]).unwrap();
        assert_eq!(json["per_passage"], serde_json::Value::Null);
        assert_eq!(json["unavailable"], "first reason");
    }
}
