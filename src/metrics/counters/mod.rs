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
//!
//! # Where things are
//!
//! [`spec`] names the counters and parses one; [`coherence`] holds the per-CPU coherence
//! presets; [`list`] reads a counter list (and the default one); [`open`] opens events with
//! `perf_event_open` and [`reason`] says why one could not be opened; [`thread`] holds one
//! worker's counters and reads them into [`sample`]s; [`report`] merges the threads' samples
//! into the per-passage figures of the results.

pub mod coherence;
pub mod list;
pub mod open;
pub mod reason;
pub mod report;
pub mod sample;
pub mod spec;
pub mod thread;

pub use list::{default_specs, parse_list};
pub use report::{merge, CounterReport};
pub use sample::CounterSample;
pub use spec::CounterSpec;
pub use thread::ThreadCounters;
