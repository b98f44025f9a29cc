//! The growth of a figure over N: least-squares fits and a class, to print beside a paper's
//! bound ("measured 9.5N + 3 (linear)").
//!
//! Two least-squares fits are made over the points (N, figure): the line c·N + d and the
//! quadratic a·N² + b·N + e. The class is the highest-degree term that carries at least half of
//! the fitted figure at the largest N:
//!
//! - quadratic when a > 0 and a·N² ≥ ½ of the quadratic fit there (needs three distinct N);
//! - otherwise linear when c > 0 and c·N ≥ ½ of the line there;
//! - otherwise constant.
//!
//! So over N = 2…32, N(2N − 1) and N^1.5 are quadratic, 11N − 4, 5N + 100 and 2N·log₂N are
//! linear, and 0.5N + 50 or a count that wanders between 3 and 5 are constant. Only three classes
//! exist: a figure between two of them lands by which term dominates at the largest N measured.

use std::fmt;

use serde::Serialize;

/// The growth class of a fitted figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Growth {
    /// Dominated by a constant at the largest N.
    Constant,
    /// Dominated by c·N.
    Linear,
    /// Dominated by a·N².
    Quadratic,
}

impl Growth {
    /// `constant`, `linear` or `quadratic`.
    pub fn name(self) -> &'static str {
        match self {
            Growth::Constant => "constant",
            Growth::Linear => "linear",
            Growth::Quadratic => "quadratic",
        }
    }
}

/// Least-squares fits of a figure over N, and its class.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Fit {
    /// Slope of the line c·N + d.
    pub c: f64,
    /// Intercept of the line c·N + d.
    pub d: f64,
    /// The quadratic a·N² + b·N + e as [a, b, e] ([0, c, d] with fewer than three distinct N).
    pub quadratic: [f64; 3],
    /// Mean of the figures.
    pub mean: f64,
    /// The class (see the module's rule).
    pub class: Growth,
}

/// Fits `points` (N, figure); see the module for the rule. No points: a constant 0.
pub fn fit(points: &[(usize, u64)]) -> Fit {
    let xs: Vec<f64> = points.iter().map(|&(n, _)| n as f64).collect();
    let ys: Vec<f64> = points.iter().map(|&(_, y)| y as f64).collect();
    let mean = if ys.is_empty() {
        0.0
    } else {
        ys.iter().sum::<f64>() / ys.len() as f64
    };
    let mut distinct = xs.clone();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    let (c, d) = match least_squares(&xs, &ys, 1, distinct.len()) {
        Some(p) => (p[1], p[0]),
        None => (0.0, mean),
    };
    let quadratic = match least_squares(&xs, &ys, 2, distinct.len()) {
        Some(p) => [p[2], p[1], p[0]],
        None => [0.0, c, d],
    };
    let top = distinct.last().copied().unwrap_or(0.0);
    let [a, b, e] = quadratic;
    let at_top = a * top * top + b * top + e;
    let line_top = c * top + d;
    // A figure that falls over N (c ≤ 0) is not growing, however convex its curve: a
    // decreasing convex sequence has a > 0 and would otherwise read as quadratic.
    let class = if c > 0.0 && a > 0.0 && at_top > 0.0 && a * top * top >= 0.5 * at_top {
        Growth::Quadratic
    } else if c > 0.0 && line_top > 0.0 && c * top >= 0.5 * line_top {
        Growth::Linear
    } else {
        Growth::Constant
    };
    Fit {
        c,
        d,
        quadratic,
        mean,
        class,
    }
}

/// Coefficients [x⁰, x¹, …] of the least-squares polynomial of `degree`, or None with fewer
/// than degree + 1 distinct x. x is scaled to its largest value so the normal equations stay
/// well conditioned.
fn least_squares(xs: &[f64], ys: &[f64], degree: usize, distinct: usize) -> Option<Vec<f64>> {
    if distinct <= degree {
        return None;
    }
    let scale = xs.iter().fold(0.0f64, |m, &x| m.max(x.abs())).max(1.0);
    let k = degree + 1;
    // The normal equations as an augmented k × (k + 1) matrix.
    let mut m = vec![vec![0.0; k + 1]; k];
    for (&x, &y) in xs.iter().zip(ys) {
        let u = x / scale;
        for (i, row) in m.iter_mut().enumerate() {
            for (j, cell) in row[..k].iter_mut().enumerate() {
                *cell += u.powi((i + j) as i32);
            }
            row[k] += y * u.powi(i as i32);
        }
    }
    for col in 0..k {
        let pivot = (col..k).max_by(|&p, &q| m[p][col].abs().total_cmp(&m[q][col].abs()))?;
        m.swap(col, pivot);
        if m[col][col].abs() < 1e-12 {
            return None;
        }
        let pivot_row = m[col].clone();
        for (r, row) in m.iter_mut().enumerate() {
            if r != col {
                let f = row[col] / pivot_row[col];
                for (x, p) in row[col..].iter_mut().zip(&pivot_row[col..]) {
                    *x -= f * p;
                }
            }
        }
    }
    Some(
        (0..k)
            .map(|i| m[i][k] / m[i][i] / scale.powi(i as i32))
            .collect(),
    )
}

/// A coefficient to one decimal, without a trailing `.0`.
fn num(x: f64) -> String {
    let r = (x * 10.0).round() / 10.0;
    if r.fract() == 0.0 {
        format!("{r:.0}")
    } else {
        format!("{r:.1}")
    }
}

/// Σ terms (coefficient, power of N) as `2N² − N + 3`, dropping those that round to 0.
fn polynomial(terms: &[(f64, u32)]) -> String {
    let mut out = String::new();
    for &(coef, pow) in terms {
        let r = (coef * 10.0).round() / 10.0;
        if r == 0.0 {
            continue;
        }
        let mag = num(r.abs());
        let body = match pow {
            0 => mag,
            _ => {
                let n = if pow == 2 { "N²" } else { "N" };
                if mag == "1" {
                    n.to_string()
                } else {
                    format!("{mag}{n}")
                }
            }
        };
        match (out.is_empty(), r < 0.0) {
            (true, false) => out.push_str(&body),
            (true, true) => out.push_str(&format!("−{body}")),
            (false, false) => out.push_str(&format!(" + {body}")),
            (false, true) => out.push_str(&format!(" − {body}")),
        }
    }
    if out.is_empty() {
        "0".into()
    } else {
        out
    }
}

impl Fit {
    /// The fitted formula of its class: the mean (constant), c·N + d (linear) or
    /// a·N² + b·N + e (quadratic).
    pub fn formula(&self) -> String {
        match self.class {
            Growth::Constant => num(self.mean),
            Growth::Linear => polynomial(&[(self.c, 1), (self.d, 0)]),
            Growth::Quadratic => {
                let [a, b, e] = self.quadratic;
                polynomial(&[(a, 2), (b, 1), (e, 0)])
            }
        }
    }
}

impl fmt::Display for Fit {
    /// `9.5N + 3 (linear)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.formula(), self.class.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_falling_convex_figure_is_constant() {
        let f = fit(&[(5, 2850), (10, 2430), (20, 2210), (40, 2100)]);
        assert_eq!(f.class, Growth::Constant, "{f:?}");
    }

    fn over(f: impl Fn(f64) -> f64) -> Vec<(usize, u64)> {
        [2usize, 4, 8, 16, 32]
            .iter()
            .map(|&n| (n, f(n as f64).round() as u64))
            .collect()
    }

    #[test]
    fn classifies_known_sequences() {
        type Case = (&'static str, Vec<(usize, u64)>, Growth);
        let cases: [Case; 9] = [
            ("mcs", over(|_| 7.0), Growth::Constant),
            (
                "wanders",
                vec![(2, 3), (4, 5), (8, 5), (16, 4), (32, 5)],
                Growth::Constant,
            ),
            ("0.5N + 50", over(|n| 0.5 * n + 50.0), Growth::Constant),
            ("11N − 4", over(|n| 11.0 * n - 4.0), Growth::Linear),
            ("5N + 100", over(|n| 5.0 * n + 100.0), Growth::Linear),
            ("2N log N", over(|n| 2.0 * n * n.log2()), Growth::Linear),
            (
                "N(2N − 1)",
                over(|n| n * (2.0 * n - 1.0)),
                Growth::Quadratic,
            ),
            (
                "N(N − 1)/2",
                over(|n| n * (n - 1.0) / 2.0),
                Growth::Quadratic,
            ),
            ("N^1.5", over(|n| n.powf(1.5)), Growth::Quadratic),
        ];
        for (name, points, class) in cases {
            assert_eq!(fit(&points).class, class, "{name}: {}", fit(&points));
        }
    }

    #[test]
    fn recovers_exact_coefficients_and_prints_them() {
        let f = fit(&over(|n| 9.5 * n + 3.0));
        assert!(
            (f.c - 9.5).abs() < 1e-9 && (f.d - 3.0).abs() < 1e-9,
            "{f:?}"
        );
        assert_eq!(f.to_string(), "9.5N + 3 (linear)");
        let q = fit(&over(|n| 2.0 * n * n - n));
        assert_eq!(q.to_string(), "2N² − N (quadratic)");
        assert_eq!(
            fit(&over(|n| 11.0 * n - 4.0)).to_string(),
            "11N − 4 (linear)"
        );
        assert_eq!(fit(&over(|_| 7.0)).to_string(), "7 (constant)");
    }

    #[test]
    fn few_points_still_fit() {
        assert_eq!(fit(&[]).class, Growth::Constant);
        assert_eq!(fit(&[(4, 9)]).to_string(), "9 (constant)");
        let two = fit(&[(2, 20), (4, 40)]);
        assert_eq!(two.class, Growth::Linear);
        assert!((two.c - 10.0).abs() < 1e-9);
        // Repeated N (several runs at one N) average out.
        let rep = fit(&[(2, 10), (2, 12), (4, 21), (4, 23), (8, 43), (8, 45)]);
        assert_eq!(rep.class, Growth::Linear, "{rep}");
    }
}
