//! Comparing two result sets (`lockbench compare A B`): every point measured in both, with the
//! ratio of B's throughput to A's and its confidence interval from the rounds; a point whose
//! interval excludes 1 differs beyond the noise. A regression of more than `--fail-above X%`
//! (beyond the noise) is flagged, for the command to turn into exit code 1.
//!
//! The two sets ran separately, so their rounds are not paired: the ratio is the
//! Hodges–Lehmann estimate (the median of every ratio `b_j / a_i` of a round of B to a round of
//! A) and its interval the distribution-free one of Moses (order statistics of those ratios at
//! the Mann–Whitney critical value), at the level the round counts allow (95% or more when
//! there are enough rounds; with 2 and 2 rounds only 67%).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use std::path::Path;

use serde::Serialize;

use super::render::host_line;
use super::saved::PointKey;
use super::RunResult;
use super::{nanos, rate, Format};
use crate::error::UsageError;
use crate::metrics::stats::{Estimate, Interval};
use crate::report::quality::{MIN_PAIRED_ROUNDS, MIN_ROUND_PASSAGES};
use crate::table::{Align, Table};

/// One point of both sets.
#[derive(Clone, Debug, Serialize)]
pub struct PointComparison {
    /// Lock.
    pub lock: String,
    /// Threads.
    pub threads: usize,
    /// Mix.
    pub mix: String,
    /// Critical section, ns.
    pub cs_ns: u64,
    /// Think time, ns.
    pub think_ns: u64,
    /// k.
    pub k: usize,
    /// RMR model of a counting-memory run (null: native).
    pub rmr: Option<String>,
    /// A's throughput (median over its rounds).
    pub a_per_sec: f64,
    /// B's throughput.
    pub b_per_sec: f64,
    /// Rounds of A and of B the ratio rests on.
    pub rounds: (usize, usize),
    /// B / A throughput: the Hodges–Lehmann estimate.
    pub ratio: f64,
    /// Its interval (null with one round on each side).
    pub interval: Option<Interval>,
    /// The interval excludes 1: B differs from A beyond the noise.
    pub differs: bool,
    /// B / A entry latency p99 (null when either has no samples).
    pub p99_ratio: Option<f64>,
    /// Slower by more than `--fail-above`, beyond the noise: the whole interval below
    /// 1 − X and below the rounds' own span, the point decided ([`Self::inconclusive`] null).
    pub regressed: bool,
    /// Why the data cannot decide whether B differs from A (null: it can): a busy host on
    /// either side, too few rounds for an interval, near-empty rounds, or a shift no wider
    /// than the rounds of one side spread on their own. Such a point never fails the gate.
    pub inconclusive: Option<String>,
    /// Why the ratio is not to be read as a precise number (empty: nothing to say): rounds
    /// left out as near-empty, too few rounds, flags of either side's throughput.
    pub flags: Vec<String>,
}

/// The rounds of one side the estimate may rest on, and a flag for those left out: a round
/// that measured fewer than [`MIN_ROUND_PASSAGES`] passages (or, in results saved without the
/// rounds' passages, no passage or under 1% of the side's best round) is near-empty; when every
/// round is, they are all kept and the flag says the estimate rests on them.
fn usable_rounds(side: &str, r: &RunResult) -> (Vec<f64>, Option<String>, bool) {
    let all = r.round_throughputs();
    let best = all.iter().cloned().fold(0.0, f64::max);
    let passages: Vec<Option<u64>> = if r.per_round.is_empty() {
        vec![Some(r.passages)]
    } else {
        r.per_round.iter().map(|f| f.passages).collect()
    };
    let keep = |i: usize, t: f64| match passages.get(i).copied().flatten() {
        Some(p) => p >= MIN_ROUND_PASSAGES && t > 0.0,
        None => t > 0.0 && t >= 0.01 * best,
    };
    let kept: Vec<f64> = all
        .iter()
        .enumerate()
        .filter(|(i, t)| keep(*i, **t))
        .map(|(_, t)| *t)
        .collect();
    let dropped = all.len() - kept.len();
    if dropped == 0 {
        return (kept, None, false);
    }
    if kept.is_empty() {
        let positive: Vec<f64> = all.into_iter().filter(|t| *t > 0.0).collect();
        let n = positive.len();
        return (
            positive,
            Some(format!(
                "{side}: every round is near-empty (fewer than {MIN_ROUND_PASSAGES} passages, or no passage): the estimate rests on {n} of them"
            )),
            true,
        );
    }
    let flag = format!(
        "{side}: {dropped} of {} rounds near-empty (fewer than {MIN_ROUND_PASSAGES} passages, or under 1% of its best round), left out",
        dropped + kept.len()
    );
    (kept, Some(flag), false)
}

/// The flags of one point: rounds left out, too few rounds, and the quality flags either
/// side's throughput carries.
fn point_flags(ra: &RunResult, rb: &RunResult) -> (Vec<f64>, Vec<f64>, Vec<String>, bool) {
    let (xa, fa, ea) = usable_rounds("A", ra);
    let (xb, fb, eb) = usable_rounds("B", rb);
    let mut flags: Vec<String> = [fa, fb].into_iter().flatten().collect();
    if xa.len().min(xb.len()) < MIN_PAIRED_ROUNDS {
        flags.push(format!(
            "few rounds: A {}, B {} (an interval needs ≥ {MIN_PAIRED_ROUNDS} on each side)",
            xa.len(),
            xb.len()
        ));
    }
    for (side, r) in [("A", ra), ("B", rb)] {
        let q = super::quality::assess(r);
        let names: Vec<&str> = q
            .flags
            .iter()
            .filter(|f| {
                (f.figure == "throughput_per_sec" || f.figure == "*")
                    && !f.name.contains("empty-rounds")
            })
            .map(|f| f.name.as_str())
            .collect();
        if !names.is_empty() {
            flags.push(format!("{side}: {}", names.join(", ")));
        }
    }
    (xa, xb, flags, ea || eb)
}

/// Mann–Whitney U under the null for samples of `n` and `m`: the count of arrangements
/// giving each U, 0 ..= n·m (as f64: exact up to about 50 + 50 values).
fn mann_whitney_counts(n: usize, m: usize) -> Vec<f64> {
    // f[i][j] = counts for i and j values; built row by row.
    let mut prev: Vec<Vec<f64>> = (0..=m).map(|_| vec![1.0]).collect();
    for i in 1..=n {
        let mut cur: Vec<Vec<f64>> = vec![vec![1.0]];
        for j in 1..=m {
            let mut f = vec![0.0; i * j + 1];
            // The largest value is from the first sample (it beats all j of the second) or
            // from the second.
            for (u, c) in prev[j].iter().enumerate() {
                f[u + j] += c;
            }
            for (u, c) in cur[j - 1].iter().enumerate() {
                f[u] += c;
            }
            cur.push(f);
        }
        prev = cur;
    }
    prev.swap_remove(m)
}

/// The ratio of `b` to `a` (positive values, e.g. the rounds' throughputs): the median of
/// every `b_j / a_i`, with Moses' interval `[r(k), r(N−k+1)]` for the largest `k` whose
/// coverage `1 − 2·P(U ≤ k − 1)` is still at least 95% (`k = 1`, the whole range, at the level
/// it has, when the samples are too small for 95%). `None` when either side is empty.
pub fn ratio_estimate(a: &[f64], b: &[f64]) -> Option<Estimate> {
    let a: Vec<f64> = a.iter().copied().filter(|v| *v > 0.0).collect();
    let b: Vec<f64> = b.iter().copied().filter(|v| *v > 0.0).collect();
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let mut d: Vec<f64> = Vec::with_capacity(a.len() * b.len());
    for x in &a {
        for y in &b {
            d.push(y.ln() - x.ln());
        }
    }
    d.sort_by(|x, y| x.total_cmp(y));
    let n = d.len();
    let median = if n % 2 == 1 {
        d[n / 2]
    } else {
        (d[n / 2 - 1] + d[n / 2]) / 2.0
    }
    .exp();
    if n < 2 {
        return Some(Estimate {
            median,
            interval: None,
        });
    }
    let counts = mann_whitney_counts(a.len(), b.len());
    let total: f64 = counts.iter().sum();
    let mut cdf = Vec::with_capacity(counts.len());
    let mut acc = 0.0;
    for c in &counts {
        acc += c;
        cdf.push(acc / total);
    }
    let coverage = |k: usize| 1.0 - 2.0 * cdf[k - 1];
    let mut k = 1;
    while k < n / 2 && coverage(k + 1) >= 0.95 {
        k += 1;
    }
    Some(Estimate {
        median,
        interval: Some(Interval {
            low: d[k - 1].exp(),
            high: d[n - k].exp(),
            level: coverage(k),
        }),
    })
}

/// `5%`, `5` or `0.5%` as a fraction.
pub fn parse_percent(text: &str) -> Result<f64, UsageError> {
    let t = text.trim().trim_end_matches('%');
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v / 100.0),
        _ => Err(UsageError(format!(
            "--fail-above {text:?}: give a percentage, e.g. --fail-above 5%"
        ))),
    }
}

/// Compares every point of `b` with the same point of `a`; points of only one side are
/// returned apart.
pub fn compare(
    a: &[RunResult],
    b: &[RunResult],
    fail_above: Option<f64>,
) -> (Vec<PointComparison>, Vec<PointKey>, Vec<PointKey>) {
    let by_key: BTreeMap<PointKey, &RunResult> = a.iter().map(|r| (r.key(), r)).collect();
    let b_keys: BTreeMap<PointKey, &RunResult> = b.iter().map(|r| (r.key(), r)).collect();
    let mut points = Vec::new();
    for (k, rb) in &b_keys {
        let Some(ra) = by_key.get(k) else { continue };
        let (xa, xb, flags, on_empty) = point_flags(ra, rb);
        let Some(e) = ratio_estimate(&xa, &xb) else {
            continue;
        };
        let differs = e.interval.is_some_and(|i| !i.contains(1.0));
        let inconclusive = undecided(ra, rb, &xa, &xb, e.median, on_empty);
        let regressed = differs
            && inconclusive.is_none()
            && fail_above.is_some_and(|x| {
                e.interval
                    .is_some_and(|i| i.high < 1.0 - x && i.high < 1.0 / span(&xa).max(span(&xb)))
            });
        let p99_ratio = (ra.latency_ns.p99 > 0.0 && rb.latency_ns.p99 > 0.0)
            .then(|| rb.latency_ns.p99 / ra.latency_ns.p99);
        points.push(PointComparison {
            lock: k.lock.clone(),
            threads: k.threads,
            mix: k.mix.clone(),
            cs_ns: k.cs_ns,
            think_ns: k.think_ns,
            k: k.k,
            rmr: (!k.rmr.is_empty()).then(|| k.rmr.clone()),
            a_per_sec: ra.throughput_per_sec,
            b_per_sec: rb.throughput_per_sec,
            rounds: (xa.len(), xb.len()),
            ratio: e.median,
            interval: e.interval,
            differs,
            p99_ratio,
            regressed,
            inconclusive,
            flags,
        });
    }
    let only_a = by_key
        .keys()
        .filter(|k| !b_keys.contains_key(k))
        .cloned()
        .collect();
    let only_b = b_keys
        .keys()
        .filter(|k| !by_key.contains_key(k))
        .cloned()
        .collect();
    (points, only_a, only_b)
}

/// The span of one side's rounds: its largest over its smallest (1 for one round).
fn span(x: &[f64]) -> f64 {
    let lo = x.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = x.iter().cloned().fold(0.0, f64::max);
    if lo > 0.0 && hi >= lo {
        hi / lo
    } else {
        1.0
    }
}

/// Why the rounds of `a` (`xa`) and `b` (`xb`) cannot decide whether B differs from A, or
/// `None`. Two runs of one command on a noisy host differ by more than either's interval
/// says: the host's load moves between them. So a point decides only when neither side ran on
/// a busy host, each has the rounds an interval needs, and B's shift from A (`ratio`) is wider
/// than either side's rounds spread on their own.
fn undecided(
    ra: &RunResult,
    rb: &RunResult,
    xa: &[f64],
    xb: &[f64],
    ratio: f64,
    on_empty: bool,
) -> Option<String> {
    let busy: Vec<&str> = [("A", ra), ("B", rb)]
        .into_iter()
        .filter(|(_, r)| r.host.load.as_ref().is_some_and(|l| l.busy))
        .map(|(s, _)| s)
        .collect();
    if !busy.is_empty() {
        return Some(format!("busy host ({})", busy.join(", ")));
    }
    if on_empty {
        return Some("every round near-empty".into());
    }
    if xa.len().min(xb.len()) < MIN_PAIRED_ROUNDS {
        return Some(format!(
            "too few rounds (A {}, B {}; needs ≥ {MIN_PAIRED_ROUNDS} a side)",
            xa.len(),
            xb.len()
        ));
    }
    let noise = span(xa).max(span(xb));
    let shift = ratio.max(1.0 / ratio);
    (shift <= noise).then(|| {
        format!(
            "the shift ({:.1}%) is within the rounds' own spread (up to {:.1}%)",
            (shift - 1.0) * 100.0,
            (noise - 1.0) * 100.0
        )
    })
}

fn verdict(p: &PointComparison) -> &'static str {
    if p.flags
        .iter()
        .any(|f| f.contains("every round is near-empty"))
    {
        return "? (near-empty)";
    }
    match (p.interval, p.differs) {
        (None, _) => "? (1 round)",
        (Some(_), false) => "no diff",
        (Some(_), true) if p.inconclusive.is_some() => "inconclusive",
        (Some(_), true) if p.regressed => "SLOWER !",
        (Some(_), true) if p.ratio < 1.0 => "slower",
        (Some(_), true) => "faster",
    }
}

/// `!` when a flag names that side.
fn side_mark(p: &PointComparison, side: &str) -> &'static str {
    if p.flags.iter().any(|f| f.starts_with(&format!("{side}:"))) {
        "!"
    } else {
        ""
    }
}

fn config(p: &PointComparison) -> String {
    let mut s = format!(
        "cs {} think {}",
        nanos(p.cs_ns as f64),
        nanos(p.think_ns as f64)
    );
    if p.k > 1 {
        let _ = write!(s, " k {}", p.k);
    }
    if let Some(m) = &p.rmr {
        let _ = write!(s, " rmr {m}");
    }
    s
}

fn rows(points: &[PointComparison]) -> Vec<[String; 9]> {
    points
        .iter()
        .map(|p| {
            [
                p.lock.clone(),
                p.threads.to_string(),
                p.mix.clone(),
                config(p),
                format!("{}{}", rate(p.a_per_sec), side_mark(p, "A")),
                format!("{}{}", rate(p.b_per_sec), side_mark(p, "B")),
                format!(
                    "{}{}",
                    match p.interval {
                        Some(i) => format!(
                            "{:.3} [{:.3}–{:.3}, {:.0}%]",
                            p.ratio,
                            i.low,
                            i.high,
                            i.level * 100.0
                        ),
                        None => format!("{:.3}", p.ratio),
                    },
                    if p.flags.is_empty() { "" } else { "!" }
                ),
                verdict(p).to_string(),
                p.p99_ratio.map_or("-".into(), |r| format!("{r:.2}")),
            ]
        })
        .collect()
}

const HEADERS: [&str; 9] = [
    "lock",
    "thr",
    "mix",
    "config",
    "A",
    "B",
    "B/A throughput [interval]",
    "verdict",
    "B/A p99",
];

/// One result set as the comparison's header names it: where it was read from and its first
/// result (its host and version).
#[derive(Clone, Copy, Debug)]
pub struct Side<'a> {
    /// The directory given.
    pub dir: &'a Path,
    /// Its first result.
    pub first: &'a RunResult,
}

/// The usage error when the two sets share no point.
pub fn nothing_in_common(a: &Path, b: &Path) -> UsageError {
    UsageError(format!(
        "no point of {} was measured in {} too (same lock, threads, mix, cs, think, k): compare result sets of the same configuration",
        crate::opts::io::shown(b),
        crate::opts::io::shown(a)
    ))
}

/// The JSON of `compare`.
#[derive(Serialize)]
pub struct Document<'a> {
    /// [`super::result::SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The directories compared.
    pub a: String,
    /// B's.
    pub b: String,
    /// Settings A and B do not share, busy hosts.
    pub warnings: &'a [String],
    /// Every point measured in both.
    pub points: &'a [PointComparison],
}

/// The comparison as `format` (table, md or json): `points` from [`compare`], with the points
/// of one side only (`only`: A's, then B's).
pub fn render(
    format: Format,
    sides: [Side<'_>; 2],
    fail_above: Option<f64>,
    points: &[PointComparison],
    only: [&[PointKey]; 2],
    warnings: &[String],
) -> serde_json::Result<String> {
    if format == Format::Json {
        let doc = Document {
            schema_version: super::result::SCHEMA_VERSION,
            a: sides[0].dir.display().to_string(),
            b: sides[1].dir.display().to_string(),
            warnings,
            points,
        };
        return Ok(serde_json::to_string_pretty(&doc)? + "\n");
    }
    let md = format == Format::Md;
    let mut out = String::new();
    let bullet = if md { "- " } else { "" };
    for (name, side) in ["A", "B"].iter().zip(sides) {
        let _ = writeln!(
            out,
            "{bullet}{name}: {} ({}; lockbench {})",
            crate::opts::io::shown(side.dir),
            host_line(&side.first.host),
            if side.first.build.commit.is_empty() {
                side.first.version.clone()
            } else {
                side.first.build.line()
            }
        );
    }
    for w in warnings {
        let _ = writeln!(out, "{bullet}warning: {w}");
    }
    let _ = writeln!(
        out,
        "{bullet}B/A = Hodges–Lehmann ratio of the rounds' throughputs with Moses' interval; a point differs when its interval excludes 1{}\n",
        fail_above.map_or(String::new(), |x| format!(
            "; SLOWER ! = the whole interval below {:.3} (--fail-above {:.1}%) and beyond the rounds' own spread; inconclusive = the data cannot decide (busy host, too few rounds, a shift within one side's spread), never a failure",
            1.0 - x,
            x * 100.0
        ))
    );
    let rows = rows(points);
    if md {
        let _ = writeln!(out, "| {} |", HEADERS.join(" | "));
        let _ = writeln!(out, "|{}", "---|".repeat(HEADERS.len()));
        for r in &rows {
            let cells: Vec<String> = r.iter().map(|c| c.replace('|', "\\|")).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
    } else {
        let mut table = Table::new(|i| {
            if matches!(i, 1 | 4 | 5 | 8) {
                Align::Right
            } else {
                Align::Left
            }
        });
        table.row(HEADERS).rule();
        for r in rows {
            table.row(r);
        }
        out.push_str(&table.render());
    }
    let decided = |p: &&PointComparison| p.differs && p.inconclusive.is_none();
    let slower = points
        .iter()
        .filter(decided)
        .filter(|p| p.ratio < 1.0)
        .count();
    let faster = points
        .iter()
        .filter(decided)
        .filter(|p| p.ratio > 1.0)
        .count();
    let unsure = points
        .iter()
        .filter(|p| p.differs && p.inconclusive.is_some())
        .count();
    let _ = writeln!(
        out,
        "\n{} points compared: {slower} slower, {faster} faster beyond the noise, {unsure} inconclusive, {} within it",
        points.len(),
        points.len() - slower - faster - unsure
    );
    let flagged: Vec<String> = points
        .iter()
        .filter(|p| !p.flags.is_empty() || (p.differs && p.inconclusive.is_some()))
        .map(|p| {
            let mut why = p.flags.clone();
            if let (true, Some(i)) = (p.differs, &p.inconclusive) {
                why.push(format!("inconclusive: {i}"));
            }
            format!("{} t={} {}: {}", p.lock, p.threads, p.mix, why.join("; "))
        })
        .collect();
    if !flagged.is_empty() {
        let _ = writeln!(
            out,
            "{}! = not to be read as a precise number:",
            if md { "\n" } else { "" }
        );
        for f in flagged {
            let _ = writeln!(out, "{}! {f}", if md { "- " } else { "  " });
        }
    }
    for (side, keys) in ["A", "B"].iter().zip(only) {
        if !keys.is_empty() {
            let names: Vec<String> = keys
                .iter()
                .map(|k| format!("{} t={} {}", k.lock, k.threads, k.mix))
                .collect();
            let _ = writeln!(out, "only in {side}: {}", names.join(", "));
        }
    }
    Ok(out)
}

/// The error line when some point regressed beyond `--fail-above` (`None`: none did, or no
/// limit was given).
pub fn regressions(points: &[PointComparison], fail_above: Option<f64>) -> Option<String> {
    let x = fail_above?;
    let regressed: Vec<&PointComparison> = points.iter().filter(|p| p.regressed).collect();
    if regressed.is_empty() {
        return None;
    }
    let names: Vec<String> = regressed
        .iter()
        .map(|p| format!("{} t={} {} ({:.3}x)", p.lock, p.threads, p.mix, p.ratio))
        .collect();
    Some(format!(
        "{} point(s) slower by more than {:.1}% beyond the noise: {}",
        regressed.len(),
        x * 100.0,
        names.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mann_whitney_null_distribution() {
        // n = m = 2: U takes 0..=4 with counts 1 1 2 1 1 (6 arrangements).
        assert_eq!(mann_whitney_counts(2, 2), vec![1.0, 1.0, 2.0, 1.0, 1.0]);
        let c = mann_whitney_counts(5, 5);
        assert_eq!(c.len(), 26);
        assert_eq!(c.iter().sum::<f64>(), 252.0);
        assert_eq!(c[..4], [1.0, 1.0, 2.0, 3.0]);
        assert_eq!(mann_whitney_counts(3, 1), vec![1.0, 1.0, 1.0, 1.0]);
    }

    #[test]
    fn ratios_and_their_intervals() {
        let a = [100.0, 104.0, 98.0, 101.0, 99.0];
        let same = ratio_estimate(&a, &a).unwrap();
        assert!((same.median - 1.0).abs() < 1e-12);
        assert!(same.interval.unwrap().contains(1.0));
        let b: Vec<f64> = a.iter().map(|x| x * 2.0).collect();
        let e = ratio_estimate(&a, &b).unwrap();
        assert!((e.median - 2.0).abs() < 1e-12);
        let i = e.interval.unwrap();
        assert!(!i.contains(1.0) && i.contains(2.0));
        // 5 and 5 rounds: k = 3, coverage 1 − 2·4/252.
        assert!((i.level - (1.0 - 8.0 / 252.0)).abs() < 1e-12, "{}", i.level);
        // One round each: a ratio, no interval.
        let one = ratio_estimate(&[10.0], &[5.0]).unwrap();
        assert!((one.median - 0.5).abs() < 1e-12 && one.interval.is_none());
        // Two rounds each: the whole range at 67%.
        let two = ratio_estimate(&[10.0, 12.0], &[10.0, 11.0]).unwrap();
        let i = two.interval.unwrap();
        assert!((i.level - 2.0 / 3.0).abs() < 1e-12);
        assert!((i.low - 10.0 / 12.0).abs() < 1e-12 && (i.high - 1.1).abs() < 1e-12);
        assert!(ratio_estimate(&[], &[1.0]).is_none());
    }

    #[test]
    fn coverage_holds_by_simulation() {
        // B is 1.2 × A with multiplicative noise: Moses' interval from 5 and 5 rounds covers
        // 1.2 at least 95% of the time.
        let mut rng = crate::workload::rng::Rng::new(7, 0);
        let trials = 4000;
        let mut covered = 0;
        for _ in 0..trials {
            let a: Vec<f64> = (0..5)
                .map(|_| 100.0 * (1.0 + 0.2 * rng.next_f64()))
                .collect();
            let b: Vec<f64> = (0..5)
                .map(|_| 120.0 * (1.0 + 0.2 * rng.next_f64()))
                .collect();
            if ratio_estimate(&a, &b)
                .unwrap()
                .interval
                .unwrap()
                .contains(1.2)
            {
                covered += 1;
            }
        }
        let rate = covered as f64 / trials as f64;
        assert!(rate > 0.955, "coverage {rate}");
    }

    #[test]
    fn percentages() {
        assert_eq!(parse_percent("5%").unwrap(), 0.05);
        assert_eq!(parse_percent("12.5").unwrap(), 0.125);
        assert!(parse_percent("-1").is_err());
        assert!(parse_percent("abc")
            .unwrap_err()
            .0
            .contains("e.g. --fail-above 5%"));
    }

    #[test]
    fn regressions_need_both_size_and_certainty() {
        let point = |lock: &str, rounds: &[f64]| -> RunResult {
            serde_json::from_value(serde_json::json!({
                "lock": lock, "threads": 2, "mix": "distinct", "throughput_per_sec": rounds[0],
                "per_round": rounds.iter().enumerate()
                    .map(|(i, t)| serde_json::json!({"round": i, "throughput_per_sec": t}))
                    .collect::<Vec<_>>(),
            }))
            .unwrap()
        };
        let a = vec![
            point("x", &[100.0, 101.0, 99.0, 100.5, 99.5]),
            point("y", &[100.0, 101.0, 99.0, 100.5, 99.5]),
            point("gone", &[1.0]),
        ];
        let b = vec![
            point("x", &[80.0, 81.0, 79.0, 80.5, 79.5]),
            point("y", &[97.0, 98.0, 96.0, 97.5, 96.5]),
            point("new", &[1.0]),
        ];
        let (points, only_a, only_b) = compare(&a, &b, Some(0.10));
        assert_eq!(points.len(), 2);
        let x = points.iter().find(|p| p.lock == "x").unwrap();
        assert!(x.differs && x.regressed, "{x:?}");
        let y = points.iter().find(|p| p.lock == "y").unwrap();
        // 3% slower beyond the noise, but within the 10% allowed.
        assert!(y.differs && !y.regressed, "{y:?}");
        assert_eq!(only_a[0].lock, "gone");
        assert_eq!(only_b[0].lock, "new");
    }
}
