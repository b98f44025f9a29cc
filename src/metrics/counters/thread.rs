//! The counters of one worker thread: opened after it is pinned, the hardware events as one
//! group and the software ones alone, enabled and disabled around the measured interval, read
//! into one sample per counter.

use std::io;

use perf_event::{Counter, ReadFormat};

use super::coherence::preset_id;
use super::open::{open_event, open_group, HwGroup};
use super::reason::open_error_reason;
use super::sample::CounterSample;
use super::spec::CounterSpec;

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
                preset: preset_id(spec),
                ..sample
            });
        }
        samples
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::counters::coherence::INTEL_SKX;
    use crate::metrics::counters::list::default_specs;
    use crate::metrics::counters::reason::core_pmu_present;
    use crate::metrics::counters::report::merge;
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

    #[test]
    fn reports_carry_the_raw_encoding_and_preset() {
        let spec = INTEL_SKX.specs().pop().unwrap();
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
        let map = crate::mem::placement::FreshMapping::new(LEN);
        for offset in (0..LEN).step_by(4096) {
            // SAFETY: `offset < LEN`, inside the writable mapping made above.
            unsafe { std::ptr::write_volatile(map.addr.add(offset), 1) };
        }
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
}
