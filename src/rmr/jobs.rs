//! Several `rmr` runs at once (`--jobs`): every (lock, N, model, schedule) cell and, for an
//! adversarial cell, every schedule its search tries, spread over threads; the results are
//! assembled in the serial order, so they do not depend on the number of jobs.

use super::search::{pick_worst, tries};
use super::{run_with, RmrOptions, RmrReport};
use crate::registry::LockEntry;

/// The reports of `cells` (each as [`super::run_one`] gives it), running at most `jobs` runs
/// at once (0: one per CPU).
pub fn run_all(cells: &[(&LockEntry, RmrOptions)], jobs: usize) -> Vec<Result<RmrReport, String>> {
    // Every run of every cell, in the serial order.
    let mut runs = Vec::new();
    let mut spans = Vec::new();
    for (c, (entry, o)) in cells.iter().enumerate() {
        let (o, list) = tries(entry, o);
        runs.extend(list.iter().map(|&t| (c, o.clone(), t)));
        spans.push(list);
    }
    let done = crate::runner::parallel::in_parallel(&runs, jobs, |(c, o, t)| {
        let (sched, detail, found_by, victim) = t.schedule(cells[*c].0, o);
        run_with(cells[*c].0, o, sched, detail, found_by, victim)
    });
    let mut done = done.into_iter();
    spans
        .into_iter()
        .map(|list| pick_worst(&list, done.by_ref().take(list.len()).collect()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::Model;
    use crate::registry::find;
    use crate::rmr::ScheduleKind;

    /// Every figure of a report, its timing aside.
    fn figures(r: &Result<RmrReport, String>) -> String {
        match r {
            Ok(r) => {
                let mut v = serde_json::to_value(r).unwrap();
                v["elapsed_secs"] = 0.into();
                v.to_string()
            }
            Err(e) => format!("error: {e}"),
        }
    }

    #[test]
    fn reports_do_not_depend_on_the_jobs() {
        // A search (zehavi-kex), a script (burns-lamport), plain schedules, and a run that
        // fails (cut after too few steps), in one list.
        let entries: Vec<LockEntry> = ["zehavi-kex", "burns-lamport", "glb"]
            .iter()
            .map(|n| find(n).unwrap())
            .collect();
        let mut cells = Vec::new();
        for e in &entries {
            for (n, model) in [(3, Model::Cc), (4, Model::Dsm)] {
                for schedule in [ScheduleKind::Adversarial, ScheduleKind::Random] {
                    let mut o = RmrOptions::new(n, model, schedule);
                    o.passages = 2;
                    o.seed = 3;
                    cells.push((e, o));
                }
            }
        }
        let mut cut = RmrOptions::new(3, Model::Cc, ScheduleKind::Adversarial);
        cut.max_steps = 10;
        cells.push((&entries[0], cut));
        let serial: Vec<String> = run_all(&cells, 1).iter().map(figures).collect();
        assert!(serial.last().unwrap().starts_with("error: "), "{serial:?}");
        assert!(serial.iter().any(|r| r.contains("\"worst\":\"found\"")));
        assert!(serial.iter().any(|r| r.contains("\"worst\":\"proven\"")));
        for jobs in [2, 3] {
            let par: Vec<String> = run_all(&cells, jobs).iter().map(figures).collect();
            assert_eq!(par, serial, "jobs {jobs}");
        }
    }
}
