//! The adversarial schedule: the paper's scripted worst case where there is one (`proven`),
//! otherwise the largest of a bounded search (`found`).
//!
//! The search runs, in this order, the greedy adversary against process N−1, round-robin,
//! random and PCT at the options' seed, then `search` more: random and PCT at the next seeds,
//! the greedy adversary against other victims, and a spinning variant of it (the victim
//! re-evaluates its wait after every step of another process: free under CC, its remote reads
//! under DSM, a test-and-set's write under both). The report of the largest passage wins; ties go
//! to the earlier schedule. The three non-adversarial schedules at the same options are always
//! among the tries, so the adversarial figure is never below round-robin, random or PCT by
//! construction.

use serde::Serialize;

use super::{RmrOptions, RmrReport, ScheduleKind};
use crate::mem::gate::{Greedy, Kind, Pct, ProcView, Random, RoundRobin, Schedule, SplitMix};
use crate::registry::LockEntry;

/// Extra schedules the search tries by default beyond its four fixed ones.
pub const DEFAULT_SEARCH: usize = 4;

/// How an adversarial maximum is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Worst {
    /// Reached by the paper's own scripted worst-case schedule.
    Proven,
    /// The largest a bounded search over schedules found: a lower estimate of the worst case.
    Found,
}

impl Worst {
    /// `proven` or `found`.
    pub fn name(self) -> &'static str {
        match self {
            Worst::Proven => "proven",
            Worst::Found => "found",
        }
    }
}

/// One schedule the search tried and the largest passage it produced.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Tried {
    /// The schedule, as in `found_by`.
    pub schedule: String,
    /// Its largest RMRs in one passage.
    pub max_rmr_per_passage: u64,
}

/// A schedule the search can try.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Candidate {
    /// The greedy adversary against this process.
    Greedy(usize),
    /// The greedy adversary against this process, spinning it after every other step while it
    /// waits.
    Spinning(usize),
    /// Round-robin.
    RoundRobin,
    /// Random at this seed.
    Random(u64),
    /// PCT depth 3 at this seed.
    Pct(u64),
}

impl Candidate {
    /// The name reported as `found_by`.
    pub fn label(self) -> String {
        match self {
            Candidate::Greedy(v) => format!("greedy against process {v}"),
            Candidate::Spinning(v) => format!("greedy spinning process {v}"),
            Candidate::RoundRobin => "round-robin".into(),
            Candidate::Random(s) => format!("random seed {s}"),
            Candidate::Pct(s) => format!("pct depth 3 seed {s}"),
        }
    }

    /// The process it works against, if any.
    pub fn victim(self) -> Option<usize> {
        match self {
            Candidate::Greedy(v) | Candidate::Spinning(v) => Some(v),
            _ => None,
        }
    }

    /// The schedule for `n` processes running `passages` passages each, and its description.
    pub fn schedule(self, n: usize, passages: usize) -> (Box<dyn Schedule>, String) {
        match self {
            Candidate::Greedy(v) => (
                Box::new(Greedy::new(v)),
                format!(
                    "greedy against process {v}: invalidate its copies, run it when it pays, else run the others"
                ),
            ),
            Candidate::Spinning(v) => (
                Box::new(Spinning::new(v)),
                format!("greedy against process {v}, which re-evaluates its wait after every other step"),
            ),
            Candidate::RoundRobin => (Box::new(RoundRobin::default()), "round-robin".into()),
            Candidate::Random(s) => (
                Box::new(Random(SplitMix::new(s))),
                format!("random, seed {s}"),
            ),
            Candidate::Pct(s) => (
                Box::new(Pct::new(
                    n,
                    3,
                    (passages * n * 200) as u64,
                    SplitMix::new(s),
                )),
                format!("pct depth 3, seed {s}"),
            ),
        }
    }
}

/// The schedules a search of `search` extra tries runs for `n` processes at `seed`, in order:
/// greedy against N−1, round-robin, random and PCT at `seed`; then, in turn, random at the next
/// seed, greedy spinning a victim (N−1 first), greedy against another victim (0, N/2, N/4,
/// 3N/4, then the rest), PCT at the next seed.
pub fn candidates(n: usize, seed: u64, search: usize) -> Vec<Candidate> {
    let last = n.saturating_sub(1);
    let mut out = vec![
        Candidate::Greedy(last),
        Candidate::RoundRobin,
        Candidate::Random(seed),
        Candidate::Pct(seed),
    ];
    let mut others: Vec<usize> = [0, n / 2, n / 4, 3 * n / 4]
        .into_iter()
        .chain(0..n)
        .collect();
    others.retain(|&v| v < last);
    others.dedup();
    let mut seen = std::collections::HashSet::new();
    others.retain(|v| seen.insert(*v));
    let spinners: Vec<usize> = std::iter::once(last)
        .chain(others.iter().copied())
        .collect();
    let (mut r, mut s, mut g, mut p) = (0usize, 0usize, 0usize, 0u64);
    let mut i = 0;
    while out.len() < 4 + search && i < 4 * (search + n + 1) {
        let c = match i % 4 {
            0 => {
                r += 1;
                Some(Candidate::Random(seed.wrapping_add(r as u64)))
            }
            1 => {
                s += 1;
                spinners.get(s - 1).map(|&v| Candidate::Spinning(v))
            }
            2 => {
                g += 1;
                others.get(g - 1).map(|&v| Candidate::Greedy(v))
            }
            _ => {
                p += 1;
                Some(Candidate::Pct(seed.wrapping_add(p)))
            }
        };
        if let Some(c) = c.filter(|c| !out.contains(c)) {
            out.push(c);
        }
        i += 1;
    }
    out
}

/// The greedy adversary against one victim that also makes the victim re-evaluate its wait
/// after every step another process takes (a spin: nothing under CC, the remote registers it
/// reads under DSM, a write for a test-and-set).
pub struct Spinning {
    greedy: Greedy,
    victim: usize,
    spun: bool,
}

impl Spinning {
    /// Against `victim`.
    pub fn new(victim: usize) -> Self {
        Spinning {
            greedy: Greedy::new(victim),
            victim,
            spun: false,
        }
    }
}

impl Schedule for Spinning {
    fn pick(&mut self, v: &[ProcView]) -> usize {
        let vic = self.victim;
        let others = (0..v.len()).any(|q| q != vic && v[q].enabled());
        if !self.spun && v[vic].kind == Kind::Parked && others {
            self.spun = true;
            return vic;
        }
        self.spun = false;
        self.greedy.pick(v)
    }
}

/// One run a cell of `rmr` makes: the schedule alone (round-robin, random, PCT), the
/// paper's script, or one schedule of the adversarial search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Try {
    /// A non-adversarial schedule: its run is the cell's report.
    Plain(Candidate),
    /// The paper's scripted worst case (the victim is process N−1).
    Scripted,
    /// A schedule of the search.
    Search(Candidate),
}

impl Try {
    /// The schedule, its description, its `found_by` and the process it works against.
    pub fn schedule(
        self,
        entry: &LockEntry,
        o: &RmrOptions,
    ) -> (Box<dyn Schedule>, String, String, Option<usize>) {
        match self {
            Try::Plain(c) => {
                let (sched, detail) = c.schedule(o.threads, o.passages);
                (sched, detail, c.label(), None)
            }
            Try::Search(c) => {
                let (sched, detail) = c.schedule(o.threads, o.passages);
                (sched, detail, c.label(), c.victim())
            }
            Try::Scripted => {
                let w = (entry.info.worst_case)(o.threads, o.passages)
                    .expect("a script where Try::Scripted was chosen");
                (
                    Box::new(w.script),
                    w.detail.into(),
                    w.found_by.into(),
                    Some(o.threads - 1),
                )
            }
        }
    }
}

/// The runs a cell `o` of `entry` makes, and the options they run under: one schedule, or
/// for `adversarial` the paper's script where there is one, else the search over
/// [`candidates`] with `o.search` extra tries.
pub fn tries(entry: &LockEntry, o: &RmrOptions) -> (RmrOptions, Vec<Try>) {
    let plain = match o.schedule {
        ScheduleKind::RoundRobin => Candidate::RoundRobin,
        ScheduleKind::Random => Candidate::Random(o.seed),
        ScheduleKind::Pct => Candidate::Pct(o.seed),
        ScheduleKind::Adversarial => {
            let list = if (entry.info.worst_case)(o.threads, o.passages).is_some() {
                vec![Try::Scripted]
            } else {
                candidates(o.threads, o.seed, o.search)
                    .into_iter()
                    .map(Try::Search)
                    .collect()
            };
            return (o.clone(), list);
        }
    };
    (o.clone(), vec![Try::Plain(plain)])
}

/// A cell's report from its runs (`list`, as [`tries`] gave it): a plain run as it is; the
/// script's, `proven`; else the largest passage of the search (ties to the earlier),
/// `found`, with the search's time summed. Every try is listed. The first failed run is the
/// cell's error.
pub fn pick_worst(list: &[Try], runs: Vec<Result<RmrReport, String>>) -> Result<RmrReport, String> {
    let runs = runs.into_iter().collect::<Result<Vec<_>, _>>()?;
    if matches!(list, [Try::Plain(_)]) {
        return Ok(runs.into_iter().next().expect("one run"));
    }
    let tried: Vec<Tried> = runs
        .iter()
        .map(|r| Tried {
            schedule: r.found_by.clone(),
            max_rmr_per_passage: r.max_rmr_per_passage,
        })
        .collect();
    let elapsed: f64 = runs.iter().map(|r| r.elapsed_secs).sum();
    let mut best: Option<RmrReport> = None;
    for r in runs {
        if best
            .as_ref()
            .is_none_or(|b| r.max_rmr_per_passage > b.max_rmr_per_passage)
        {
            best = Some(r);
        }
    }
    let mut r = best.expect("at least one run");
    r.worst = Some(if list == [Try::Scripted] {
        Worst::Proven
    } else {
        Worst::Found
    });
    r.tried = tried;
    r.elapsed_secs = elapsed;
    Ok(r)
}

/// The worst case of `entry` under `o` (whatever `o.schedule` says): the paper's script where
/// there is one, else the largest passage of the search over [`candidates`] with `o.search`
/// extra tries, run one after another. The report's schedule is `adversarial`; `found_by`
/// names the schedule that reached the maximum, `worst` says `proven` or `found`, `tried`
/// lists every try. (`run_all` runs the same search in parallel; this serial form is the
/// tests' reference.)
#[cfg(test)]
pub(crate) fn worst(entry: &LockEntry, o: &RmrOptions) -> Result<RmrReport, String> {
    let mut o = o.clone();
    o.schedule = ScheduleKind::Adversarial;
    super::jobs::run_all(&[(entry, o)], 1)
        .pop()
        .expect("one cell")
}
