//! The quality of a result's figures: the one definition of every flag that says a figure rests
//! on too little (or on a disturbed machine) to be read as a precise number. The table marks
//! such a figure with `!` and lists the reasons under it; JSON carries them as the `quality`
//! object of every result; CSV in its `quality` column; `report.md`, `report.html` and `compare`
//! beside the figure.
//!
//! The rules (documented in docs/measurement.md, "Quality flags"):
//!
//! | flag | figure | raised when |
//! |---|---|---|
//! | `nothing-measured` | every figure | no round measured a passage |
//! | `empty-rounds` | `throughput_per_sec` | some rounds (not all) measured no passage |
//! | `near-empty-rounds` | `throughput_per_sec` | a round measured fewer than [`MIN_ROUND_PASSAGES`] passages |
//! | `short-window` | `throughput_per_sec` | the median round's shortest thread window is under [`MIN_WINDOW_NS`] |
//! | `spread-undefined` | `throughput_spread` | fewer than 2 rounds, or a median throughput of 0 |
//! | `wide-spread` | `throughput_spread` | the range (max − min) exceeds [`WIDE_RANGE`] of the median |
//! | `few-paired-rounds` | `throughput_vs_baseline` | the ratio rests on fewer than [`MIN_PAIRED_ROUNDS`] paired rounds |
//! | `thin-percentile` | `latency_ns.pNN` | quantile q rests on fewer than 10 / (1 − q) samples |
//! | `busy-host` | every figure | other work ran on the machine during the point ([`crate::runner::host::Load`]) |

use serde::{Deserialize, Serialize};

use super::RunResult;

/// A round with fewer passages than this is near-empty: its throughput is a count of a handful
/// of events, and a ratio to it is noise.
pub const MIN_ROUND_PASSAGES: u64 = 100;

/// A ratio resting on fewer paired rounds than this has no useful interval (3 rounds give the
/// median's range at 75% only).
pub const MIN_PAIRED_ROUNDS: usize = 3;

/// A measured window shorter than this (10 ms: a few scheduler time slices) can be decided by
/// one preemption or one migration.
pub const MIN_WINDOW_NS: f64 = 10e6;

/// The spread is wide when the range over rounds exceeds this fraction of the median (the
/// same threshold as the `spread_wide` field: half the range above 5%).
pub const WIDE_RANGE: f64 = 2.0 * crate::metrics::stats::WIDE_SPREAD;

/// The percentiles every result reports: (name, field, quantile).
pub const PERCENTILES: [(&str, &str, f64); 4] = [
    ("p50", "latency_ns.p50", 0.5),
    ("p90", "latency_ns.p90", 0.9),
    ("p99", "latency_ns.p99", 0.99),
    ("p99.9", "latency_ns.p999", 0.999),
];

/// The samples a quantile `q` needs: about 10 beyond it, `10 / (1 − q)` (20 for the median,
/// 1 000 for p99, 10 000 for p99.9).
pub fn samples_needed(q: f64) -> u64 {
    (10.0 / (1.0 - q)).round() as u64
}

/// One flag: what is wrong, with which figure, and why.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Flag {
    /// The rule (`near-empty-rounds`, `thin-percentile`, ...).
    pub name: String,
    /// The figure it affects, by its JSON field (`throughput_per_sec`, `latency_ns.p99`, `*`
    /// for every figure).
    pub figure: String,
    /// Why, in numbers.
    pub reason: String,
}

/// The quality of one result: its flags (empty: every figure stands).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Quality {
    /// Every flag raised, in the order of the table above.
    pub flags: Vec<Flag>,
}

impl Quality {
    /// Whether a flag touches `figure` (a flag on `*` touches every figure).
    pub fn affects(&self, figure: &str) -> bool {
        self.flags
            .iter()
            .any(|f| f.figure == figure || f.figure == "*")
    }

    /// The flags' names, `;`-joined (the CSV cell).
    pub fn names(&self) -> String {
        let mut names: Vec<&str> = self.flags.iter().map(|f| f.name.as_str()).collect();
        names.dedup();
        names.join(";")
    }

    /// The reasons, `; `-joined (a note line).
    pub fn reasons(&self) -> String {
        self.flags
            .iter()
            .map(|f| f.reason.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    }

    fn push(&mut self, name: &str, figure: &str, reason: String) {
        self.flags.push(Flag {
            name: name.into(),
            figure: figure.into(),
            reason,
        });
    }
}

/// The flags of `r`, from its own figures (so results saved before flags existed get them too).
pub fn assess(r: &RunResult) -> Quality {
    let mut q = Quality::default();
    if r.nothing_measured {
        q.push(
            "nothing-measured",
            "*",
            "no round measured a passage".into(),
        );
    }
    rounds(r, &mut q);
    spread(r, &mut q);
    ratio(r, &mut q);
    if !r.nothing_measured {
        let n = r.latency_ns.count;
        for (name, field, quantile) in PERCENTILES {
            let need = samples_needed(quantile);
            if n < need {
                q.push(
                    "thin-percentile",
                    field,
                    format!(
                        "{name} rests on {n} samples (needs ≥ {need}, about 10 beyond it): time more with --latency-sample 1 or a longer --duration"
                    ),
                );
            }
        }
    }
    if let Some(load) = r.host.load.as_ref().filter(|l| l.busy) {
        q.push(
            "busy-host",
            "*",
            format!("busy host: {}", load.reasons.join(", ")),
        );
    }
    q
}

/// Empty, near-empty and short rounds.
fn rounds(r: &RunResult, q: &mut Quality) {
    let counts: Vec<u64> = if r.per_round.iter().all(|f| f.passages.is_some()) {
        r.per_round.iter().filter_map(|f| f.passages).collect()
    } else {
        vec![r.passages]
    };
    let n = counts.len();
    let empty = counts.iter().filter(|&&c| c == 0).count();
    if empty > 0 && empty < n {
        q.push(
            "empty-rounds",
            "throughput_per_sec",
            format!("{empty} of {n} rounds measured no passage"),
        );
    }
    let thin: Vec<u64> = counts
        .iter()
        .copied()
        .filter(|&c| c > 0 && c < MIN_ROUND_PASSAGES)
        .collect();
    if !thin.is_empty() {
        q.push(
            "near-empty-rounds",
            "throughput_per_sec",
            format!(
                "{} of {n} rounds measured fewer than {MIN_ROUND_PASSAGES} passages (fewest {})",
                thin.len(),
                thin.iter().min().expect("not empty")
            ),
        );
    }
    let shortest = r
        .per_thread
        .iter()
        .map(|t| t.window_ns)
        .filter(|w| *w > 0.0)
        .fold(f64::INFINITY, f64::min);
    if !r.nothing_measured && shortest < MIN_WINDOW_NS {
        q.push(
            "short-window",
            "throughput_per_sec",
            format!(
                "measured window {} (shortest thread, median round) is under {}",
                super::nanos(shortest),
                super::nanos(MIN_WINDOW_NS)
            ),
        );
    }
}

/// An undefined or wide spread.
fn spread(r: &RunResult, q: &mut Quality) {
    let s = &r.throughput_spread;
    if r.repeat < 2 {
        q.push(
            "spread-undefined",
            "throughput_spread",
            format!("spread undefined: {} round", r.repeat),
        );
    } else if s.median <= 0.0 {
        q.push(
            "spread-undefined",
            "throughput_spread",
            "spread undefined: the median round measured nothing".into(),
        );
    } else if s.relative > WIDE_RANGE {
        q.push(
            "wide-spread",
            "throughput_spread",
            format!(
                "throughput range over rounds is {:.0}% of the median (over {:.0}%)",
                s.relative * 100.0,
                WIDE_RANGE * 100.0
            ),
        );
    }
}

/// A ratio resting on too few paired rounds.
fn ratio(r: &RunResult, q: &mut Quality) {
    let Some(base) = &r.baseline else { return };
    let paired = r
        .per_round
        .iter()
        .filter(|f| f.vs_baseline.is_some())
        .count();
    if paired < MIN_PAIRED_ROUNDS {
        let rounds = r.per_round.len().max(r.repeat);
        q.push(
            "few-paired-rounds",
            "throughput_vs_baseline",
            format!(
                "ratio to {base} rests on {paired} paired round{} of {rounds} (needs ≥ {MIN_PAIRED_ROUNDS}; rounds where either measured fewer than {MIN_ROUND_PASSAGES} passages are not paired)",
                if paired == 1 { "" } else { "s" }
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(rounds: &[(f64, u64)], base: bool) -> RunResult {
        serde_json::from_value(serde_json::json!({
            "lock": "a", "threads": 2, "repeat": rounds.len(),
            "passages": rounds[rounds.len() / 2].1,
            "baseline": if base { Some("ticket") } else { None },
            "throughput_spread": crate::metrics::stats::Spread::of(
                &rounds.iter().map(|r| r.0).collect::<Vec<_>>()),
            "per_round": rounds.iter().enumerate().map(|(i, (t, p))| serde_json::json!({
                "round": i, "throughput_per_sec": t, "passages": p,
                "vs_baseline": if base && *p >= MIN_ROUND_PASSAGES { Some(1.0) } else { None },
            })).collect::<Vec<_>>(),
            "per_thread": [{"window_ns": 1e8}],
            "latency_ns": {"count": 5000},
        }))
        .unwrap()
    }

    fn names(q: &Quality) -> Vec<&str> {
        q.flags.iter().map(|f| f.name.as_str()).collect()
    }

    #[test]
    fn percentiles_need_about_ten_samples_beyond_them() {
        assert_eq!(samples_needed(0.5), 20);
        assert_eq!(samples_needed(0.99), 1000);
        assert_eq!(samples_needed(0.999), 10_000);
        let q = assess(&result(&[(1e6, 1000); 3], false));
        assert_eq!(names(&q), vec!["thin-percentile"]);
        assert!(q.affects("latency_ns.p999") && !q.affects("latency_ns.p99"));
    }

    #[test]
    fn zero_and_near_empty_rounds_are_flagged_and_not_paired() {
        let q = assess(&result(&[(0.0, 0), (0.0, 0), (5e5, 50_000)], true));
        let n = names(&q);
        assert!(n.contains(&"empty-rounds"), "{n:?}");
        assert!(n.contains(&"spread-undefined"), "{n:?}");
        assert!(n.contains(&"few-paired-rounds"), "{n:?}");
        assert!(q.affects("throughput_per_sec") && q.affects("throughput_vs_baseline"));
        let q = assess(&result(&[(10.0, 10), (1e6, 1000), (1e6, 1000)], true));
        assert!(names(&q).contains(&"near-empty-rounds"));
        assert!(names(&q).contains(&"few-paired-rounds"));
        // Three good rounds, close together: nothing but the thin p99.9.
        let q = assess(&result(&[(1e6, 1000), (1.01e6, 1010), (0.99e6, 990)], true));
        assert_eq!(names(&q), vec!["thin-percentile"]);
    }

    #[test]
    fn one_round_a_short_window_and_a_busy_host() {
        let mut r = result(&[(1e6, 1000)], true);
        r.per_thread[0].window_ns = 6_000.0;
        r.host.load = Some(crate::runner::host::Load {
            busy: true,
            reasons: vec!["1.9 CPUs of other work".into()],
            ..Default::default()
        });
        let q = assess(&r);
        let n = names(&q);
        for want in [
            "short-window",
            "spread-undefined",
            "few-paired-rounds",
            "busy-host",
        ] {
            assert!(n.contains(&want), "{want} missing from {n:?}");
        }
        assert!(
            q.affects("latency_ns.p50"),
            "busy-host touches every figure"
        );
        assert!(q.reasons().contains("6.00 µs"));
    }
}
