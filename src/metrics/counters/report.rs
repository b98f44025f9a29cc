//! Per-passage reports: each counter summed over the worker threads and divided by the run's
//! passages, unavailable for the run when it was unavailable on any thread.

use super::sample::CounterSample;

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

    fn sample(name: &str, value: u64, enabled: u64, running: u64) -> CounterSample {
        CounterSample::from_count(name, value, enabled, running, false)
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
