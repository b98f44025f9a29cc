//! Small statistics for repeated measurements: medians with distribution-free confidence
//! intervals, for paired ratios measured round by round.

use serde::Serialize;

/// A confidence interval for a median.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Interval {
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
    /// Its confidence level (e.g. 0.969 for the range of 6 values): the probability that the
    /// interval covers the true median, whatever the distribution.
    pub level: f64,
}

impl Interval {
    /// Whether the interval contains `x` (a ratio's interval containing 1: no difference).
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }
}

/// A median and its interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Estimate {
    /// The median.
    pub median: f64,
    /// Its confidence interval (null for a single value).
    pub interval: Option<Interval>,
}

/// P(Binomial(n, 1/2) ≤ k).
fn binomial_half_cdf(n: usize, k: usize) -> f64 {
    let mut term = 0.5f64.powi(n as i32); // C(n, 0) / 2^n
    let mut sum = term;
    for i in 1..=k.min(n) {
        term *= (n - i + 1) as f64 / i as f64;
        sum += term;
    }
    sum
}

/// The median of `values` (mean of the middle two for an even count) with the order-statistic
/// confidence interval `[x(j), x(n+1−j)]` for the largest `j` whose coverage,
/// `1 − 2·P(Bin(n, ½) ≤ j − 1)`, is still at least 95%; with fewer than 6 values no such `j`
/// exists and the interval is the whole range, at the level it has (93.8% for 5 values, 87.5%
/// for 4, 75% for 3, 50% for 2). Distribution-free: it assumes only independent rounds.
pub fn median_estimate(values: &[f64]) -> Option<Estimate> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    if n < 2 {
        return Some(Estimate {
            median,
            interval: None,
        });
    }
    let coverage = |j: usize| 1.0 - 2.0 * binomial_half_cdf(n, j - 1);
    let mut j = 1;
    while j < n / 2 && coverage(j + 1) >= 0.95 {
        j += 1;
    }
    Some(Estimate {
        median,
        interval: Some(Interval {
            low: v[j - 1],
            high: v[n - j],
            level: coverage(j),
        }),
    })
}

/// Spread of a figure over repetitions.
#[derive(Clone, Copy, Debug, Default, Serialize, serde::Deserialize, PartialEq)]
#[serde(default)]
pub struct Spread {
    /// Smallest over repetitions.
    pub min: f64,
    /// Median over repetitions (the reported figure).
    pub median: f64,
    /// Largest over repetitions.
    pub max: f64,
    /// (max − min) / median.
    pub relative: f64,
}

/// A spread is wide when half its range exceeds this fraction of the median, i.e. when its
/// range (`relative`, what every table, JSON and CSV shows) exceeds twice this.
pub const WIDE_SPREAD: f64 = 0.05;

impl Spread {
    /// Half the min–max range, relative to the median.
    pub fn half_range(&self) -> f64 {
        self.relative / 2.0
    }

    /// Whether half the range exceeds [`WIDE_SPREAD`] of the median.
    pub fn wide(&self) -> bool {
        self.half_range() > WIDE_SPREAD
    }

    /// Spread of `values` (at least one).
    pub fn of(values: &[f64]) -> Spread {
        let mut v = values.to_vec();
        v.sort_by(|a, b| a.total_cmp(b));
        let median = median_sorted(&v);
        let (min, max) = (v[0], v[v.len() - 1]);
        Spread {
            min,
            median,
            max,
            relative: if median > 0.0 {
                (max - min) / median
            } else {
                0.0
            },
        }
    }
}

/// Median of sorted values (mean of the middle two for an even count).
pub fn median_sorted(v: &[f64]) -> f64 {
    let n = v.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomial() {
        assert!((binomial_half_cdf(5, 0) - 1.0 / 32.0).abs() < 1e-12);
        assert!((binomial_half_cdf(10, 1) - 11.0 / 1024.0).abs() < 1e-12);
        assert!((binomial_half_cdf(4, 4) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn intervals_from_order_statistics() {
        let e = median_estimate(&[3.0, 1.0, 2.0, 5.0, 4.0]).unwrap();
        assert_eq!(e.median, 3.0);
        let i = e.interval.unwrap();
        assert_eq!((i.low, i.high), (1.0, 5.0));
        assert!((i.level - 0.9375).abs() < 1e-12);

        // Ten values: j = 2 (97.9%), so the extremes are dropped.
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        let e = median_estimate(&v).unwrap();
        assert_eq!(e.median, 5.5);
        let i = e.interval.unwrap();
        assert_eq!((i.low, i.high), (2.0, 9.0));
        assert!((i.level - (1.0 - 22.0 / 1024.0)).abs() < 1e-12);
        assert!(i.contains(5.5) && !i.contains(1.0));

        let one = median_estimate(&[7.0]).unwrap();
        assert_eq!((one.median, one.interval), (7.0, None));
        assert!(median_estimate(&[]).is_none());
    }

    #[test]
    fn coverage_holds_by_simulation() {
        // Paired ratios scattered around 1.1: the 6-value interval covers 1.1 about 96.9% of
        // the time, whatever the (symmetric or not) noise.
        let mut rng = crate::workload::rng::Rng::new(3, 0);
        let trials = 20_000;
        let mut covered = 0;
        for _ in 0..trials {
            let v: Vec<f64> = (0..6).map(|_| 1.1 + (rng.next_f64() - 0.5)).collect();
            if median_estimate(&v).unwrap().interval.unwrap().contains(1.1) {
                covered += 1;
            }
        }
        let rate = covered as f64 / trials as f64;
        assert!((rate - 0.96875).abs() < 0.01, "coverage {rate}");
    }
}
