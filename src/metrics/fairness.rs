//! Fairness of the passages each thread completed.

use serde::Serialize;

/// How evenly passages were shared among threads.
#[derive(Clone, Copy, Debug, Default, Serialize, serde::Deserialize, PartialEq)]
#[serde(default)]
pub struct Fairness {
    /// Jain's index (Σx)² / (n·Σx²): 1 when every thread did the same, 1/n when one did all.
    pub jain: f64,
    /// Largest thread share of all passages.
    pub max_share: f64,
    /// Smallest thread share.
    pub min_share: f64,
    /// Largest over smallest per-thread passage count (∞ when a thread starved, as null in
    /// JSON).
    pub max_min_ratio: Option<f64>,
}

impl Fairness {
    /// Fairness of per-thread passage counts (rates, when windows differ).
    pub fn of(counts: &[f64]) -> Self {
        let n = counts.len() as f64;
        let sum: f64 = counts.iter().sum();
        let sq: f64 = counts.iter().map(|x| x * x).sum();
        if counts.is_empty() || sum <= 0.0 {
            return Fairness::default();
        }
        let max = counts.iter().cloned().fold(f64::MIN, f64::max);
        let min = counts.iter().cloned().fold(f64::MAX, f64::min);
        Fairness {
            jain: sum * sum / (n * sq),
            max_share: max / sum,
            min_share: min / sum,
            max_min_ratio: (min > 0.0).then(|| max / min),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_bounds() {
        let even = Fairness::of(&[5.0, 5.0, 5.0, 5.0]);
        assert!((even.jain - 1.0).abs() < 1e-12);
        assert_eq!(even.max_min_ratio, Some(1.0));
        let one = Fairness::of(&[8.0, 0.0, 0.0, 0.0]);
        assert!((one.jain - 0.25).abs() < 1e-12);
        assert_eq!(one.max_min_ratio, None);
        assert_eq!(one.max_share, 1.0);
        let two = Fairness::of(&[3.0, 1.0]);
        assert!((two.jain - 0.8).abs() < 1e-12);
        assert_eq!(two.max_min_ratio, Some(3.0));
    }
}
