//! Session mixes: which session (group) each request asks for.
//!
//! | mix | sessions |
//! |---|---|
//! | `single` | every request session 0 |
//! | `distinct` | process p always asks session p: every request conflicts (mutual exclusion) |
//! | `uniform:M` | uniform over 0..M |
//! | `hot:M:A,B` | A% of the M sessions (the hot ones, at least one) receive B% of the requests, uniformly within the hot and within the cold set: the (α, β) non-uniform access of Mittal & Mohan |
//! | `zipf:M:S` | rank r in 0..M with probability ∝ 1/(r+1)^S |
//! | `fixed:M` | process p always asks p mod M |
//! | `rw:P` | with probability P a reader (session 0, shared); otherwise a writer of process p asks 1+p, so writers conflict with everyone |

use std::fmt;
use std::str::FromStr;

use serde::{Serialize, Serializer};

/// A session mix.
#[derive(Clone, Debug, PartialEq)]
pub enum Mix {
    /// Everyone in session 0.
    Single,
    /// Process p in session p.
    Distinct,
    /// Uniform over M sessions.
    Uniform(usize),
    /// `hot`% of M sessions receive `share`% of requests.
    Hot {
        /// Sessions.
        m: usize,
        /// Percentage of sessions that are hot.
        hot: f64,
        /// Percentage of requests they receive.
        share: f64,
    },
    /// Zipf over M sessions with exponent S.
    Zipf(usize, f64),
    /// Process p in session p mod M.
    Fixed(usize),
    /// Readers with probability P.
    ReadWrite(f64),
}

const FORMS: &str =
    "single, distinct, uniform:M, hot:M:A,B, zipf:M:S, fixed:M or rw:P (e.g. uniform:4, hot:10:20,80)";

fn sessions_arg(s: &str) -> Result<usize, String> {
    let m: usize = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of sessions (expected e.g. 4)"))?;
    if m == 0 {
        return Err("zero sessions: a mix needs at least 1 session".into());
    }
    Ok(m)
}

fn number(s: &str, what: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number ({what})"))?;
    if !v.is_finite() {
        return Err(format!("{s:?} is not a finite number ({what})"));
    }
    Ok(v)
}

impl FromStr for Mix {
    type Err = String;

    fn from_str(s: &str) -> Result<Mix, String> {
        let s = s.trim();
        let (kind, rest) = match s.split_once(':') {
            Some((k, r)) => (k, Some(r)),
            None => (s, None),
        };
        let need = |form: &str| format!("{kind} needs its arguments: {form}");
        match (kind, rest) {
            ("single", None) => Ok(Mix::Single),
            ("distinct", None) => Ok(Mix::Distinct),
            ("uniform", Some(m)) => Ok(Mix::Uniform(sessions_arg(m)?)),
            ("uniform", None) => Err(need("uniform:M")),
            ("fixed", Some(m)) => Ok(Mix::Fixed(sessions_arg(m)?)),
            ("fixed", None) => Err(need("fixed:M")),
            ("zipf", Some(r)) => {
                let (m, e) = r
                    .split_once(':')
                    .ok_or_else(|| need("zipf:M:S, e.g. zipf:8:1.0"))?;
                let m = sessions_arg(m)?;
                let e = number(e, "the Zipf exponent")?;
                if e < 0.0 {
                    return Err(format!("the Zipf exponent must be ≥ 0, not {e}"));
                }
                Ok(Mix::Zipf(m, e))
            }
            ("zipf", None) => Err(need("zipf:M:S")),
            ("hot", Some(r)) => {
                let (m, ab) = r
                    .split_once(':')
                    .ok_or_else(|| need("hot:M:A,B, e.g. hot:10:20,80"))?;
                let m = sessions_arg(m)?;
                let (a, b) = ab
                    .split_once(',')
                    .ok_or_else(|| need("hot:M:A,B, e.g. hot:10:20,80"))?;
                let hot = number(a, "the hot percentage of sessions")?;
                let share = number(b, "the percentage of requests")?;
                if !(0.0..=100.0).contains(&hot) || hot == 0.0 {
                    return Err(format!(
                        "hot: A is a percentage of sessions in (0, 100], not {hot}"
                    ));
                }
                if !(0.0..=100.0).contains(&share) {
                    return Err(format!(
                        "hot: B is a percentage of requests in [0, 100], not {share}"
                    ));
                }
                Ok(Mix::Hot { m, hot, share })
            }
            ("hot", None) => Err(need("hot:M:A,B")),
            ("rw", Some(p)) => {
                let p = number(p, "the reader fraction")?;
                if !(0.0..=1.0).contains(&p) {
                    return Err(format!("rw: the reader fraction is in [0, 1], not {p}"));
                }
                Ok(Mix::ReadWrite(p))
            }
            ("rw", None) => Err(need("rw:P, e.g. rw:0.9")),
            _ => Err(format!("unknown mix {s:?}: expected {FORMS}")),
        }
    }
}

impl fmt::Display for Mix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mix::Single => write!(f, "single"),
            Mix::Distinct => write!(f, "distinct"),
            Mix::Uniform(m) => write!(f, "uniform:{m}"),
            Mix::Hot { m, hot, share } => write!(f, "hot:{m}:{hot},{share}"),
            Mix::Zipf(m, s) => write!(f, "zipf:{m}:{s}"),
            Mix::Fixed(m) => write!(f, "fixed:{m}"),
            Mix::ReadWrite(p) => write!(f, "rw:{p}"),
        }
    }
}

impl Serialize for Mix {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl Mix {
    /// Hot sessions of `hot:M:A,B`: A% of M rounded, at least 1, at most M.
    fn hot_count(m: usize, hot: f64) -> usize {
        ((m as f64 * hot / 100.0).round() as usize).clamp(1, m)
    }

    /// How many distinct session ids can occur with `n` processes.
    pub fn sessions(&self, n: usize) -> usize {
        match *self {
            Mix::Single => 1,
            Mix::Distinct => n,
            Mix::Uniform(m) | Mix::Hot { m, .. } | Mix::Zipf(m, _) => m,
            Mix::Fixed(m) => m.min(n),
            Mix::ReadWrite(p) if p >= 1.0 => 1,
            Mix::ReadWrite(p) if p <= 0.0 => n,
            Mix::ReadWrite(_) => n + 1,
        }
    }

    /// True when the mix is a real group workload at `n` processes: concurrent requests can
    /// ask for the same session and also for different ones. False when everyone shares one
    /// session or every process has its own (mutual exclusion). A k-exclusion lock ignores
    /// sessions and so cannot serve such a mix.
    pub fn needs_groups(&self, n: usize) -> bool {
        match *self {
            Mix::Single | Mix::Distinct => false,
            Mix::Fixed(m) => m > 1 && m < n,
            Mix::ReadWrite(p) => p > 0.0 && p < 1.0,
            _ => self.sessions(n) > 1,
        }
    }

    /// The session sampler of process `p` of `n`, deterministic for a given `seed`.
    pub fn sampler(&self, p: usize, n: usize, seed: u64) -> Sampler {
        let _ = n;
        let rng = Rng::new(seed ^ (p as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5EED);
        let kind = match *self {
            Mix::Single => Kind::Constant(0),
            Mix::Distinct => Kind::Constant(p),
            Mix::Fixed(m) => Kind::Constant(p % m),
            Mix::Uniform(m) => Kind::Uniform(m as u64),
            Mix::Hot { m, hot, share } => {
                let h = Mix::hot_count(m, hot);
                Kind::Hot {
                    hot: h as u64,
                    cold: (m - h) as u64,
                    p_hot: (share / 100.0).clamp(0.0, 1.0),
                }
            }
            Mix::Zipf(m, s) => {
                let weights: Vec<f64> = (0..m).map(|r| 1.0 / ((r + 1) as f64).powf(s)).collect();
                let total: f64 = weights.iter().sum();
                let mut acc = 0.0;
                let mut cdf: Vec<f64> = weights
                    .iter()
                    .map(|w| {
                        acc += w / total;
                        acc
                    })
                    .collect();
                *cdf.last_mut().expect("m >= 1") = 1.0;
                Kind::Table(cdf.into_boxed_slice())
            }
            Mix::ReadWrite(rp) => Kind::ReadWrite {
                p_read: rp,
                writer: 1 + p,
            },
        };
        Sampler { rng, kind }
    }
}

/// SplitMix64: small, fast, statistically sound for sampling.
#[derive(Clone, Debug)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    #[inline]
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in 0..m (Lemire's multiply-shift; the bias is below 2^-32 for any m we use).
    #[inline]
    fn below(&mut self, m: u64) -> u64 {
        ((self.next_u64() as u128 * m as u128) >> 64) as u64
    }
}

#[derive(Clone, Debug)]
enum Kind {
    Constant(usize),
    Uniform(u64),
    Hot { hot: u64, cold: u64, p_hot: f64 },
    Table(Box<[f64]>),
    ReadWrite { p_read: f64, writer: usize },
}

/// Draws the sessions of one process's requests. No allocation, no locks.
#[derive(Clone, Debug)]
pub struct Sampler {
    rng: Rng,
    kind: Kind,
}

impl Sampler {
    /// The session of the next request.
    #[inline]
    pub fn next_session(&mut self) -> usize {
        match &self.kind {
            Kind::Constant(s) => *s,
            Kind::Uniform(m) => self.rng.below(*m) as usize,
            Kind::Hot { hot, cold, p_hot } => {
                if *cold == 0 || self.rng.unit() < *p_hot {
                    self.rng.below(*hot) as usize
                } else {
                    (*hot + self.rng.below(*cold)) as usize
                }
            }
            Kind::Table(cdf) => {
                let u = self.rng.unit();
                cdf.partition_point(|&c| c <= u).min(cdf.len() - 1)
            }
            Kind::ReadWrite { p_read, writer } => {
                if self.rng.unit() < *p_read {
                    0
                } else {
                    *writer
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DRAWS: usize = 200_000;

    fn freqs(mix: &str, p: usize, n: usize, bins: usize) -> Vec<f64> {
        let mut s = mix.parse::<Mix>().unwrap().sampler(p, n, 42);
        let mut c = vec![0usize; bins];
        for _ in 0..DRAWS {
            c[s.next_session()] += 1;
        }
        c.into_iter().map(|x| x as f64).collect()
    }

    /// Pearson's chi-square against expected probabilities; asserts below the 99.9999%
    /// quantile (approximated by Wilson–Hilferty), so a correct sampler fails with probability
    /// 1e-6 and a wrong one with any visible bias fails surely.
    fn chi_square_ok(observed: &[f64], expected_p: &[f64]) {
        let total: f64 = observed.iter().sum();
        let mut chi = 0.0;
        let mut dof = 0usize;
        for (o, p) in observed.iter().zip(expected_p) {
            let e = p * total;
            if e > 0.0 {
                chi += (o - e) * (o - e) / e;
                dof += 1;
            } else {
                assert_eq!(*o, 0.0, "a bin of probability 0 was drawn");
            }
        }
        let k = (dof - 1) as f64;
        let z = 4.753; // one-sided 1e-6
        let crit = k * (1.0 - 2.0 / (9.0 * k) + z * (2.0 / (9.0 * k)).sqrt()).powi(3);
        assert!(
            chi < crit,
            "chi-square {chi:.1} ≥ {crit:.1} (dof {k}): {observed:?} vs {expected_p:?}"
        );
    }

    #[test]
    fn uniform_is_uniform() {
        chi_square_ok(&freqs("uniform:5", 0, 4, 5), &[0.2; 5]);
    }

    #[test]
    fn hot_gives_the_hot_sessions_their_share() {
        // 10 sessions, 20% hot (2 sessions) get 80%: 0.4 each; 8 cold share 20%: 0.025 each.
        let f = freqs("hot:10:20,80", 1, 4, 10);
        let mut p = vec![0.4, 0.4];
        p.extend([0.025; 8]);
        chi_square_ok(&f, &p);
    }

    #[test]
    fn zipf_follows_the_power_law() {
        let flat = freqs("zipf:4:0", 0, 2, 4);
        chi_square_ok(&flat, &[0.25; 4]);
        let h: f64 = (1..=4).map(|r| 1.0 / r as f64).sum();
        let p: Vec<f64> = (1..=4).map(|r| 1.0 / r as f64 / h).collect();
        chi_square_ok(&freqs("zipf:4:1", 3, 4, 4), &p);
    }

    #[test]
    fn rw_readers_share_and_writers_are_alone() {
        let f = freqs("rw:0.9", 2, 4, 4);
        chi_square_ok(&f, &[0.9, 0.0, 0.0, 0.1]);
        let mut w = "rw:0.9".parse::<Mix>().unwrap().sampler(0, 4, 1);
        assert!((0..1000)
            .map(|_| w.next_session())
            .all(|s| s == 0 || s == 1));
    }

    #[test]
    fn fixed_distinct_single_are_exact() {
        let m: Mix = "fixed:3".parse().unwrap();
        for p in 0..7 {
            let mut s = m.sampler(p, 7, 9);
            assert!((0..100).all(|_| s.next_session() == p % 3));
        }
        let mut d = Mix::Distinct.sampler(5, 8, 1);
        assert_eq!(d.next_session(), 5);
        let mut one = Mix::Single.sampler(5, 8, 1);
        assert_eq!(one.next_session(), 0);
    }

    #[test]
    fn samplers_are_deterministic_per_seed_and_differ_per_process() {
        let m: Mix = "uniform:100".parse().unwrap();
        let a: Vec<usize> = {
            let mut s = m.sampler(0, 2, 7);
            (0..50).map(|_| s.next_session()).collect()
        };
        let b: Vec<usize> = {
            let mut s = m.sampler(0, 2, 7);
            (0..50).map(|_| s.next_session()).collect()
        };
        let c: Vec<usize> = {
            let mut s = m.sampler(1, 2, 7);
            (0..50).map(|_| s.next_session()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn parse_round_trips_and_rejects_bad_input() {
        for s in [
            "single",
            "distinct",
            "uniform:4",
            "hot:10:20,80",
            "zipf:8:1.2",
            "fixed:3",
            "rw:0.9",
        ] {
            assert_eq!(s.parse::<Mix>().unwrap().to_string(), s);
        }
        for (bad, why) in [
            ("uniform:0", "zero sessions"),
            ("uniform:x", "not a number"),
            ("hot:4:50", "hot:M:A,B"),
            ("hot:4:0,50", "percentage"),
            ("zipf:4:-1", "≥ 0"),
            ("rw:1.5", "[0, 1]"),
            ("bogus", "unknown mix"),
            ("uniform", "uniform:M"),
        ] {
            let err = bad.parse::<Mix>().unwrap_err();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn groups_and_sessions() {
        let n = 4;
        let g = |s: &str| s.parse::<Mix>().unwrap().needs_groups(n);
        assert!(
            !g("single") && !g("distinct") && !g("fixed:4") && !g("fixed:1") && !g("uniform:1")
        );
        assert!(
            g("uniform:2") && g("fixed:2") && g("rw:0.5") && g("hot:10:20,80") && g("zipf:3:1")
        );
        assert!(!g("rw:1") && !g("rw:0"));
        assert_eq!("rw:0.5".parse::<Mix>().unwrap().sessions(4), 5);
        assert_eq!(Mix::Distinct.sessions(6), 6);
    }
}
