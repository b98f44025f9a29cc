//! One counter of one thread as read: its value, scaled when the kernel multiplexed it, or the
//! reason it has none.

/// One counter of one thread, as read.
///
/// Exactly one of `value` and `unavailable` is set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CounterSample {
    /// The counter's name ([`super::CounterSpec::name`]).
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
    /// The raw encoding ([`super::CounterSpec::event`]); `None` for named events.
    pub event: Option<String>,
    /// The coherence preset the event came from ([`super::coherence::preset_id`]).
    pub preset: Option<&'static str>,
}

impl CounterSample {
    /// A sample from a raw count and its times, scaled if the counter was multiplexed.
    pub(super) fn from_count(
        name: &str,
        count: u64,
        enabled: u64,
        running: u64,
        user_only: bool,
    ) -> Self {
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
    pub(super) fn unavailable(name: &str, reason: &str) -> Self {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(name: &str, value: u64, enabled: u64, running: u64) -> CounterSample {
        CounterSample::from_count(name, value, enabled, running, false)
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
}
