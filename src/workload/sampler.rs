//! Drawing sessions: a [`Sampler`] per process turns a [`Mix`] into the session of each of its
//! requests, without allocating or locking, deterministically for a given seed.

use std::sync::Arc;

use super::mix::{hot_set, Mix};
use super::rng::Rng;

impl Mix {
    /// The sampler of process `process` (in `0..n`) for run seed `seed`. Equal arguments give
    /// equal sequences. To build samplers for every process at once, sharing one table, use
    /// [`Mix::samplers`].
    #[cfg(test)]
    pub fn sampler(&self, process: usize, n: usize, seed: u64) -> Sampler {
        self.sampler_with(process, n, seed, &self.zipf_table())
    }

    /// The samplers of processes `0..n` for run seed `seed`, in process order; `zipf` mixes
    /// share one cumulative table among them.
    pub fn samplers(&self, n: usize, seed: u64) -> Vec<Sampler> {
        let table = self.zipf_table();
        (0..n)
            .map(|p| self.sampler_with(p, n, seed, &table))
            .collect()
    }

    fn sampler_with(
        &self,
        process: usize,
        n: usize,
        seed: u64,
        table: &Option<Arc<[f64]>>,
    ) -> Sampler {
        debug_assert!(process < n, "process {process} out of range 0..{n}");
        let draw = match *self {
            Mix::Single => Draw::Constant(0),
            Mix::Distinct => Draw::Constant(process),
            Mix::Fixed { sessions } => Draw::Constant(process % sessions),
            Mix::Uniform { sessions } => match sessions {
                1 => Draw::Constant(0),
                m => Draw::Uniform(m as u64),
            },
            Mix::Hot {
                sessions,
                hot_percent,
                hot_share,
            } => {
                let hot = hot_set(sessions, hot_percent);
                match sessions - hot {
                    0 => Draw::Constant(0),
                    cold => Draw::Hot {
                        hot: hot as u64,
                        cold: cold as u64,
                        p_hot: hot_share / 100.0,
                    },
                }
            }
            Mix::Zipf { .. } => Draw::Table(table.clone().expect("zipf mixes have a table")),
            Mix::ReadWrite { read_probability } => Draw::ReadWrite {
                p_read: read_probability,
                writer: 1 + process,
            },
        };
        Sampler {
            rng: Rng::new(seed, process as u64),
            draw,
        }
    }

    /// The normalized cumulative distribution of a `zipf` mix: entry r is P(session ≤ r). The
    /// last entry is exactly 1 (the running sum divided by itself), so a draw in [0, 1) always
    /// lands on a session of positive weight.
    fn zipf_table(&self) -> Option<Arc<[f64]>> {
        let Mix::Zipf { sessions, exponent } = *self else {
            return None;
        };
        let mut cumulative = Vec::with_capacity(sessions);
        let mut sum = 0.0;
        for r in 0..sessions {
            sum += ((r + 1) as f64).powf(-exponent);
            cumulative.push(sum);
        }
        for c in &mut cumulative {
            *c /= sum;
        }
        Some(cumulative.into())
    }
}

/// Draws the session of each request of one process: no allocation, no locks.
#[derive(Clone, Debug)]
pub struct Sampler {
    rng: Rng,
    draw: Draw,
}

/// How a sampler turns random bits into a session.
#[derive(Clone, Debug)]
enum Draw {
    /// Always this session.
    Constant(usize),
    /// Uniform in `0..m`.
    Uniform(u64),
    /// Uniform in `0..hot` with probability `p_hot`, else uniform in `hot..hot + cold`.
    Hot { hot: u64, cold: u64, p_hot: f64 },
    /// Inverse of a cumulative distribution (first entry above a uniform draw in [0, 1)).
    Table(Arc<[f64]>),
    /// Session 0 with probability `p_read`, else `writer`.
    ReadWrite { p_read: f64, writer: usize },
}

impl Sampler {
    /// The session of this process's next request.
    // An endless stream: returning `usize` rather than `Option<usize>` keeps the passage loop
    // free of an unwrap.
    #[allow(clippy::should_implement_trait)]
    #[inline(always)]
    pub fn next(&mut self) -> usize {
        // The constant mixes (distinct, single, fixed) cost one compare in the passage loop;
        // the random ones a call.
        if let Draw::Constant(s) = self.draw {
            return s;
        }
        self.draw_random()
    }

    /// The one session of a constant mix (distinct, single, fixed); `None` for a random one.
    pub fn constant(&self) -> Option<usize> {
        match self.draw {
            Draw::Constant(s) => Some(s),
            _ => None,
        }
    }

    /// The session of a random mix.
    #[inline(never)]
    fn draw_random(&mut self) -> usize {
        match &self.draw {
            Draw::Constant(s) => *s,
            Draw::Uniform(m) => self.rng.below(*m) as usize,
            Draw::Hot { hot, cold, p_hot } => {
                if self.rng.chance(*p_hot) {
                    self.rng.below(*hot) as usize
                } else {
                    (*hot + self.rng.below(*cold)) as usize
                }
            }
            Draw::Table(cumulative) => {
                let u = self.rng.next_f64();
                cumulative.partition_point(|&c| c <= u)
            }
            Draw::ReadWrite { p_read, writer } => {
                if self.rng.chance(*p_read) {
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

    fn mix(s: &str) -> Mix {
        s.parse().unwrap_or_else(|e| panic!("{e}"))
    }

    /// Counts of each session over `DRAWS` draws by process `p` of `n`.
    fn counts(m: &Mix, p: usize, n: usize, bins: usize, seed: u64) -> Vec<u64> {
        let mut sampler = m.sampler(p, n, seed);
        let mut c = vec![0u64; bins];
        for _ in 0..DRAWS {
            let s = sampler.next();
            assert!(s < bins, "{m}: session {s} outside 0..{bins}");
            c[s] += 1;
        }
        c
    }

    /// Upper-tail quantile of the chi-square distribution with `df` degrees of freedom at
    /// p ≈ 1e-9 (standard normal z = 6.0), by the Wilson–Hilferty cube approximation, which
    /// errs on the high (lenient) side for small `df`.
    fn chi2_threshold(df: usize) -> f64 {
        let k = df as f64;
        let z = 6.0;
        let c = 2.0 / (9.0 * k);
        k * (1.0 - c + z * c.sqrt()).powi(3)
    }

    /// Whether the counts fit the expected probabilities: sessions of probability 0 must never
    /// occur, the others must pass a chi-square test at p ≈ 1e-9.
    fn fits(counts: &[u64], expected: &[f64]) -> Result<(), String> {
        assert_eq!(counts.len(), expected.len());
        let total: u64 = counts.iter().sum();
        let mut chi2 = 0.0;
        let mut bins = 0;
        for (s, (&o, &p)) in counts.iter().zip(expected).enumerate() {
            if p == 0.0 {
                if o != 0 {
                    return Err(format!(
                        "session {s} has probability 0 but occurred {o} times"
                    ));
                }
                continue;
            }
            let e = p * total as f64;
            chi2 += (o as f64 - e).powi(2) / e;
            bins += 1;
        }
        let limit = chi2_threshold(bins - 1);
        if chi2 < limit {
            Ok(())
        } else {
            Err(format!(
                "chi-square {chi2:.1} over {bins} sessions exceeds {limit:.1}; counts {counts:?}"
            ))
        }
    }

    fn assert_fits(name: &str, counts: &[u64], expected: &[f64]) {
        if let Err(e) = fits(counts, expected) {
            panic!("{name}: {e}");
        }
    }

    #[test]
    fn the_fit_check_rejects_skewed_counts() {
        // Moving 10% of one uniform session's draws to another must fail at this sample size.
        let mut c = vec![25_000u64; 8];
        c[0] += 2_500;
        c[1] -= 2_500;
        assert!(fits(&c, &[0.125; 8]).is_err());
        // Fair counts pass; a draw of a probability-0 session fails.
        assert!(fits(&[25_000; 8], &[0.125; 8]).is_ok());
        assert!(fits(&[100_000, 1], &[1.0, 0.0]).is_err());
    }

    #[test]
    fn uniform_draws_each_session_equally() {
        let c = counts(&mix("uniform:10"), 0, 4, 10, 1);
        assert_fits("uniform:10", &c, &[0.1; 10]);
        let c = counts(&mix("uniform:3"), 2, 4, 3, 2);
        assert_fits("uniform:3", &c, &[1.0 / 3.0; 3]);
    }

    #[test]
    fn hot_follows_the_alpha_beta_model() {
        // 20% of 10 sessions (0 and 1) receive 80% of the requests.
        let c = counts(&mix("hot:10:20,80"), 1, 4, 10, 3);
        let mut want = vec![0.2 / 8.0; 10];
        want[0] = 0.4;
        want[1] = 0.4;
        assert_fits("hot:10:20,80", &c, &want);

        // 25% of 7 sessions rounds to 2 (1.75); 10% of requests go there.
        let c = counts(&mix("hot:7:25,10"), 0, 2, 7, 4);
        let mut want = vec![0.9 / 5.0; 7];
        want[0] = 0.05;
        want[1] = 0.05;
        assert_fits("hot:7:25,10", &c, &want);

        // Edges: a tiny percentage still makes one hot session; B = 0 and B = 100 starve a set.
        let c = counts(&mix("hot:5:1,100"), 0, 2, 5, 5);
        assert_eq!(c, vec![DRAWS as u64, 0, 0, 0, 0]);
        let c = counts(&mix("hot:4:50,0"), 0, 2, 4, 6);
        assert_fits("hot:4:50,0", &c, &[0.0, 0.0, 0.5, 0.5]);
        // 99% of 4 would be every session; one stays cold.
        let c = counts(&mix("hot:4:99,50"), 0, 2, 4, 7);
        assert_fits("hot:4:99,50", &c, &[0.5 / 3.0, 0.5 / 3.0, 0.5 / 3.0, 0.5]);
        // One session: always session 0.
        assert_eq!(counts(&mix("hot:1:50,50"), 0, 2, 1, 8), vec![DRAWS as u64]);
    }

    #[test]
    fn zipf_with_exponent_zero_is_uniform() {
        let c = counts(&mix("zipf:8:0"), 3, 4, 8, 9);
        assert_fits("zipf:8:0", &c, &[0.125; 8]);
    }

    #[test]
    fn zipf_follows_the_power_law() {
        for (text, m, s) in [("zipf:16:1", 16, 1.0), ("zipf:5:2.5", 5, 2.5)] {
            let weights: Vec<f64> = (1..=m).map(|r| 1.0 / (r as f64).powf(s)).collect();
            let total: f64 = weights.iter().sum();
            let want: Vec<f64> = weights.iter().map(|w| w / total).collect();
            let c = counts(&mix(text), 0, 2, m, 10);
            assert_fits(text, &c, &want);
        }
    }

    #[test]
    fn zipf_with_a_huge_exponent_still_draws_valid_sessions() {
        // Weights past the first few underflow to zero; they must never be drawn.
        let c = counts(&mix("zipf:2000:200"), 0, 1, 2000, 11);
        assert_eq!(c[0], DRAWS as u64);
    }

    #[test]
    fn rw_readers_share_session_zero_and_writers_are_alone() {
        let n = 8;
        let c = counts(&mix("rw:0.7"), 5, n, n + 1, 12);
        let mut want = vec![0.0; n + 1];
        want[0] = 0.7;
        want[6] = 0.3;
        assert_fits("rw:0.7", &c, &want);
        assert_eq!(counts(&mix("rw:1"), 5, n, n + 1, 13)[0], DRAWS as u64);
        assert_eq!(counts(&mix("rw:0"), 5, n, n + 1, 14)[6], DRAWS as u64);
    }

    #[test]
    fn single_distinct_and_fixed_are_exact() {
        let n = 7;
        for p in 0..n {
            let mut single = mix("single").sampler(p, n, 0);
            let mut distinct = mix("distinct").sampler(p, n, 0);
            let mut fixed = mix("fixed:3").sampler(p, n, 0);
            for _ in 0..100 {
                assert_eq!(single.next(), 0);
                assert_eq!(distinct.next(), p);
                assert_eq!(fixed.next(), p % 3);
            }
        }
    }

    #[test]
    fn samplers_are_deterministic_per_seed_and_differ_across_processes() {
        let m = mix("zipf:32:0.8");
        let run = |seed| {
            m.samplers(3, seed)
                .into_iter()
                .map(|mut s| (0..50).map(|_| s.next()).collect::<Vec<_>>())
                .collect::<Vec<_>>()
        };
        let a = run(42);
        assert_eq!(a, run(42));
        assert_ne!(a, run(43));
        assert_ne!(a[0], a[1]);
        // One sampler alone draws what the same process draws among all.
        let mut alone = m.sampler(1, 3, 42);
        assert_eq!(a[1], (0..50).map(|_| alone.next()).collect::<Vec<_>>());
    }
}
