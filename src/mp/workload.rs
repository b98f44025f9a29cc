//! Time distributions of the message-passing workloads (seed 003 §4): channel delay,
//! inter-request (non-critical-section) time and critical-section time; and the type sets of
//! multi-type requests (seed 003 §5.1, `sim --types-per-request G`).

use std::fmt;
use std::str::FromStr;

use crate::workload::ln::ln_all;
use crate::workload::rng::Rng;
use crate::workload::{Mix, Sampler};

use super::Group;

/// The types a mix can draw (those of positive probability), for the mixes multi-type
/// requests draw from (uniform and hot); None for the others.
pub fn reachable_types(mix: &Mix) -> Option<usize> {
    match *mix {
        Mix::Uniform { sessions } => Some(sessions),
        Mix::Hot {
            sessions,
            hot_percent,
            hot_share,
        } => {
            // The hot set as the mix's sampler makes it (`workload::mix::hot_set`).
            let hot = ((hot_percent / 100.0 * sessions as f64).round() as usize)
                .clamp(1, sessions.saturating_sub(1).max(1));
            Some(
                if hot_share > 0.0 { hot } else { 0 }
                    + if hot_share < 100.0 { sessions - hot } else { 0 },
            )
        }
        _ => None,
    }
}

/// One request's types: `g` distinct types drawn from `sampler` (the run's type
/// distribution), in the order drawn; a type drawn again is drawn anew. `g` = 1 is exactly
/// one draw, as a single-type request. Needs `g` ≤ [`reachable_types`] (else it never ends).
pub fn draw_types(sampler: &mut Sampler, g: usize, out: &mut Vec<Group>) {
    out.clear();
    while out.len() < g {
        let t = sampler.next();
        if !out.contains(&t) {
            out.push(t);
        }
    }
}

/// The forms a distribution can be written in.
pub const DIST_FORMS: &str =
    "X (exponential, mean X), exp:X, const:X, uniform:A,B (A <= B), all >= 0";

/// A distribution of non-negative times.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dist {
    /// Exponential with this mean (0 = always 0).
    Exp(f64),
    /// Always this value.
    Const(f64),
    /// Uniform on [a, b].
    Uniform(f64, f64),
}

impl Dist {
    /// The mean.
    pub fn mean(&self) -> f64 {
        match *self {
            Dist::Exp(m) | Dist::Const(m) => m,
            Dist::Uniform(a, b) => (a + b) / 2.0,
        }
    }

    /// Whether every draw is the same.
    pub fn is_constant(&self) -> bool {
        match *self {
            Dist::Const(_) => true,
            Dist::Exp(m) => m == 0.0,
            Dist::Uniform(a, b) => a == b,
        }
    }

    /// One draw.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> f64 {
        match *self {
            Dist::Exp(m) => {
                if m == 0.0 {
                    0.0
                } else {
                    // 1 − u is in (0, 1], so the logarithm is finite.
                    -m * (1.0 - rng.next_f64()).ln()
                }
            }
            Dist::Const(c) => c,
            Dist::Uniform(a, b) => a + (b - a) * rng.next_f64(),
        }
    }

    /// `out.len()` draws into `out`, the values `sample` would give one after another, bit
    /// for bit; exponential draws take their logarithms together ([`ln_all`]), which is
    /// what a broadcast's delays cost.
    pub fn sample_into(&self, rng: &mut Rng, out: &mut [f64]) {
        match *self {
            Dist::Exp(m) if m != 0.0 => {
                for x in out.iter_mut() {
                    *x = 1.0 - rng.next_f64();
                }
                ln_all(out);
                for x in out.iter_mut() {
                    *x *= -m;
                }
            }
            _ => out.iter_mut().for_each(|x| *x = self.sample(rng)),
        }
    }

    /// Seed 003's critical-section time: uniform on [0, 2·mean].
    pub fn cs_of_mean(mean: f64) -> Dist {
        Dist::Uniform(0.0, 2.0 * mean)
    }
}

impl FromStr for Dist {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("bad distribution `{s}`: use {DIST_FORMS}");
        let num = |x: &str| -> Result<f64, String> {
            let v: f64 = x.trim().parse().map_err(|_| bad())?;
            if v.is_finite() && v >= 0.0 {
                Ok(v)
            } else {
                Err(bad())
            }
        };
        if let Some(x) = s.strip_prefix("exp:") {
            return Ok(Dist::Exp(num(x)?));
        }
        if let Some(x) = s.strip_prefix("const:") {
            return Ok(Dist::Const(num(x)?));
        }
        if let Some(x) = s.strip_prefix("uniform:") {
            let (a, b) = x.split_once(',').ok_or_else(bad)?;
            let (a, b) = (num(a)?, num(b)?);
            if a > b {
                return Err(bad());
            }
            return Ok(Dist::Uniform(a, b));
        }
        Ok(Dist::Exp(num(s)?))
    }
}

impl fmt::Display for Dist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Dist::Exp(m) => write!(f, "exp:{m}"),
            Dist::Const(c) => write!(f, "const:{c}"),
            Dist::Uniform(a, b) => write!(f, "uniform:{a},{b}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_together_are_the_draws_one_by_one() {
        for dist in ["3", "exp:0", "const:2.5", "uniform:1,4", "0.001"] {
            let dist: Dist = dist.parse().unwrap();
            for len in [0, 1, 5, 499] {
                let (mut a, mut b) = (Rng::new(7, len as u64), Rng::new(7, len as u64));
                let want: Vec<u64> = (0..len).map(|_| dist.sample(&mut a).to_bits()).collect();
                let mut got = vec![0.0; len];
                dist.sample_into(&mut b, &mut got);
                let got: Vec<u64> = got.iter().map(|x| x.to_bits()).collect();
                assert_eq!(got, want, "{dist}, {len} draws");
                assert_eq!(
                    a.next_u64(),
                    b.next_u64(),
                    "{dist}: the stream moved as far"
                );
            }
        }
    }

    #[test]
    fn type_sets_are_distinct_and_follow_the_mix() {
        let mix: Mix = "hot:10:20,80".parse().unwrap();
        assert_eq!(reachable_types(&mix), Some(10));
        assert_eq!(reachable_types(&"hot:10:20,100".parse().unwrap()), Some(2));
        assert_eq!(reachable_types(&"uniform:4".parse().unwrap()), Some(4));
        assert_eq!(reachable_types(&"zipf:4:1".parse().unwrap()), None);
        let mut s = mix.samplers(1, 7).remove(0);
        let mut hot = 0;
        let mut set = Vec::new();
        for _ in 0..2000 {
            draw_types(&mut s, 3, &mut set);
            assert_eq!(set.len(), 3);
            assert!(set.iter().all(|&t| t < 10));
            assert!(set[0] != set[1] && set[1] != set[2] && set[0] != set[2]);
            hot += usize::from(set[0] < 2);
        }
        // The first type is one draw of the mix: 80% hot.
        assert!((1500..1700).contains(&hot), "{hot}");
        // One type: one draw, as the single-type workload.
        let (mut a, mut b) = (mix.samplers(1, 9).remove(0), mix.samplers(1, 9).remove(0));
        for _ in 0..100 {
            draw_types(&mut a, 1, &mut set);
            assert_eq!(set, vec![b.next()]);
        }
    }

    #[test]
    fn parse_and_mean() {
        assert_eq!("10".parse::<Dist>().unwrap(), Dist::Exp(10.0));
        assert_eq!("const:1".parse::<Dist>().unwrap(), Dist::Const(1.0));
        assert_eq!(
            "uniform:0,40".parse::<Dist>().unwrap(),
            Dist::Uniform(0.0, 40.0)
        );
        assert!("uniform:4,1".parse::<Dist>().is_err());
        assert!("-1".parse::<Dist>().is_err());
        assert!("exp:x".parse::<Dist>().is_err());
        let mut rng = Rng::new(1, 1);
        let d = Dist::Exp(10.0);
        let mean = (0..20_000).map(|_| d.sample(&mut rng)).sum::<f64>() / 20_000.0;
        assert!((mean - 10.0).abs() < 0.5, "{mean}");
        let u = Dist::cs_of_mean(20.0);
        for _ in 0..1000 {
            let x = u.sample(&mut rng);
            assert!((0.0..=40.0).contains(&x));
        }
    }
}
