//! Correlation coefficients.

/// Pearson's r of paired samples; `None` with fewer than three pairs or when either side is
/// constant (r is undefined there, not 0).
pub fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len();
    if n != y.len() || n < 3 {
        return None;
    }
    let mx = x.iter().sum::<f64>() / n as f64;
    let my = y.iter().sum::<f64>() / n as f64;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x.iter().zip(y) {
        let (dx, dy) = (a - mx, b - my);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    if sxx <= 0.0 || syy <= 0.0 {
        return None;
    }
    Some((sxy / (sxx * syy).sqrt()).clamp(-1.0, 1.0))
}

/// Ranks from 1, ties sharing their mean rank.
pub fn ranks(v: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
    let mut r = vec![0.0; v.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && v[idx[j + 1]] == v[idx[i]] {
            j += 1;
        }
        let mean = (i + j) as f64 / 2.0 + 1.0;
        for &k in &idx[i..=j] {
            r[k] = mean;
        }
        i = j + 1;
    }
    r
}

/// Spearman's ρ: Pearson's r of the ranks (ties averaged).
pub fn spearman(x: &[f64], y: &[f64]) -> Option<f64> {
    if x.len() != y.len() {
        return None;
    }
    pearson(&ranks(x), &ranks(y))
}

/// Least-squares line `y = a + b x`; `None` when x is constant or there are under two points.
pub fn fit(x: &[f64], y: &[f64]) -> Option<(f64, f64)> {
    let n = x.len();
    if n != y.len() || n < 2 {
        return None;
    }
    let mx = x.iter().sum::<f64>() / n as f64;
    let my = y.iter().sum::<f64>() / n as f64;
    let sxx: f64 = x.iter().map(|a| (a - mx) * (a - mx)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let b = sxy / sxx;
    Some((my - b * mx, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-9)
    }

    #[test]
    fn pearson_of_known_data() {
        assert!(close(pearson(&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0]), 1.0));
        assert!(close(pearson(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]), -1.0));
        // x = 1..5, y = 2,4,5,4,5: r = 6 / sqrt(10 * 6) = 0.7746.
        let r = pearson(&[1.0, 2.0, 3.0, 4.0, 5.0], &[2.0, 4.0, 5.0, 4.0, 5.0]).unwrap();
        assert!((r - 6.0 / 60f64.sqrt()).abs() < 1e-12, "{r}");
        assert_eq!(pearson(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]), None);
        assert_eq!(pearson(&[1.0, 2.0], &[1.0, 2.0]), None);
    }

    #[test]
    fn spearman_sees_monotone_and_handles_ties() {
        // Monotone but not linear: ρ = 1, r < 1.
        let x = [1.0, 2.0, 3.0, 4.0];
        let y = [1.0, 10.0, 100.0, 1000.0];
        assert!(close(spearman(&x, &y), 1.0));
        assert!(pearson(&x, &y).unwrap() < 0.99);
        assert_eq!(ranks(&[10.0, 20.0, 20.0, 5.0]), vec![2.0, 3.5, 3.5, 1.0]);
        // Ranks 1,2,3,4 against 1,3.5,3.5,2: r of the ranks.
        let rho = spearman(&[1.0, 2.0, 3.0, 4.0], &[1.0, 9.0, 9.0, 5.0]).unwrap();
        assert!(
            (rho - pearson(&[1.0, 2.0, 3.0, 4.0], &[1.0, 3.5, 3.5, 2.0]).unwrap()).abs() < 1e-12
        );
    }

    #[test]
    fn fits_a_line() {
        let (a, b) = fit(&[0.0, 1.0, 2.0], &[1.0, 3.0, 5.0]).unwrap();
        assert!((a - 1.0).abs() < 1e-12 && (b - 2.0).abs() < 1e-12);
        assert_eq!(fit(&[1.0, 1.0], &[1.0, 2.0]), None);
    }
}
