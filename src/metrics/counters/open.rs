//! Opening events with `perf_event_open` on the calling thread: one event alone, or several as
//! one group read at once, counting the kernel too where permitted and user space only where not.

use std::io;

use perf_event::events::{Cache, CacheId, CacheOp, CacheResult, Hardware, Raw, Software};
use perf_event::{Builder, Counter, ReadFormat};

use super::spec::CounterSpec;

/// How a spec is handed to the kernel.
enum EventKind {
    Hardware(Hardware),
    Cache(Cache),
    Raw(Raw),
    Software(Software),
}

/// The kernel's name for the event of `spec`.
fn event_kind(spec: &CounterSpec) -> EventKind {
    let cache = |which, result| Cache {
        which,
        operation: CacheOp::READ,
        result,
    };
    match spec {
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
        CounterSpec::Raw { code, config1, .. } => EventKind::Raw(Raw::new(*code).config1(*config1)),
    }
}

/// A builder for the event of `spec` on the calling thread, any CPU, user and kernel, disabled.
fn builder(spec: &CounterSpec) -> Builder<'static> {
    let mut builder = match event_kind(spec) {
        EventKind::Hardware(e) => Builder::new(e),
        EventKind::Cache(e) => Builder::new(e),
        EventKind::Raw(e) => Builder::new(e),
        EventKind::Software(e) => Builder::new(e),
    };
    builder.observe_self().any_cpu().include_kernel();
    builder
}

/// The hardware group: `counters[0]` is the leader. Each entry holds the spec's index.
#[derive(Debug)]
pub(super) struct HwGroup {
    pub(super) counters: Vec<(usize, Counter)>,
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
pub(super) fn open_event(
    spec: &CounterSpec,
    mut leader: Option<&mut Counter>,
    read_format: ReadFormat,
) -> io::Result<(Counter, bool)> {
    let mut builder = builder(spec);
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
pub(super) fn open_group(
    specs: &[(usize, &CounterSpec)],
) -> io::Result<(HwGroup, Vec<(usize, bool)>)> {
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
