//! A small, fast, deterministic pseudo-random generator for workloads: xoshiro256** seeded
//! through SplitMix64 (both by Blackman and Vigna). No allocation, no locks, no global state;
//! each process owns one, so drawing a session costs a few arithmetic instructions.

/// The 64-bit golden ratio, SplitMix64's increment.
const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's output function: a bijection of `u64` that mixes every input bit into every
/// output bit.
#[inline]
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// SplitMix64: a 64-bit-state generator, used here only to expand a seed into xoshiro's state.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose first output is derived from `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        mix64(self.state)
    }
}

/// xoshiro256**: 256 bits of state, period 2^256 − 1, passes BigCrush; fast enough that drawing
/// a session is negligible next to a lock passage.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// The generator for stream `stream` (e.g. a process id) of run seed `seed`. Equal
    /// `(seed, stream)` give equal sequences; for one seed, distinct streams start from distinct
    /// states (the stream passes through a bijection before it meets the seed).
    pub fn new(seed: u64, stream: u64) -> Self {
        let mut sm = SplitMix64::new(seed ^ mix64(stream ^ 0x6A09_E667_F3BC_C909));
        let mut s = [0; 4];
        for word in &mut s {
            *word = sm.next_u64();
        }
        if s == [0; 4] {
            // The one state xoshiro must avoid; SplitMix64 never yields four zeros in a row,
            // but the guard costs nothing.
            s[0] = GOLDEN_GAMMA;
        }
        Rng { s }
    }

    #[cfg(test)]
    /// A generator with the given raw state (not all zero).
    pub fn from_state(s: [u64; 4]) -> Self {
        assert!(s != [0; 4], "xoshiro256** state must not be all zero");
        Rng { s }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// A uniform float in `[0, 1)` with 53 random bits (every value is a multiple of 2^-53).
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// `true` with probability `p` (exactly 0 for `p <= 0`, exactly 1 for `p >= 1`).
    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        self.next_f64() < p
    }

    /// A uniform integer in `0..n`, without bias (Lemire's multiply-and-reject method).
    /// `n` must be positive.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0, "below(0) has no value to return");
        let mut m = u128::from(self.next_u64()) * u128::from(n);
        if (m as u64) < n {
            // The low word falls in the short, biased band only with probability < n / 2^64.
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = u128::from(self.next_u64()) * u128::from(n);
            }
        }
        (m >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_reference_outputs() {
        // Reference sequence of Vigna's splitmix64.c for seed 1234567.
        let mut sm = SplitMix64::new(1_234_567);
        let want = [
            6_457_827_717_110_365_317,
            3_203_168_211_198_807_973,
            9_817_491_932_198_370_423,
            4_593_380_528_125_082_431,
            16_408_922_859_458_223_821,
        ];
        for w in want {
            assert_eq!(sm.next_u64(), w);
        }
    }

    #[test]
    fn xoshiro256starstar_matches_reference_outputs() {
        // Reference sequence of Vigna's xoshiro256starstar.c from state [1, 2, 3, 4].
        let mut rng = Rng::from_state([1, 2, 3, 4]);
        let want = [
            11_520,
            0,
            1_509_978_240,
            1_215_971_899_390_074_240,
            1_216_172_134_540_287_360,
            607_988_272_756_665_600,
            16_172_922_978_634_559_625,
            8_476_171_486_693_032_832,
            10_595_114_339_597_558_777,
            2_904_607_092_377_533_576,
        ];
        for w in want {
            assert_eq!(rng.next_u64(), w);
        }
    }

    #[test]
    fn streams_are_deterministic_and_distinct() {
        let draw = |seed, stream| {
            let mut r = Rng::new(seed, stream);
            (0..4).map(|_| r.next_u64()).collect::<Vec<_>>()
        };
        assert_eq!(draw(7, 3), draw(7, 3));
        assert_ne!(draw(7, 3), draw(7, 4));
        assert_ne!(draw(7, 3), draw(8, 3));
    }

    #[test]
    fn below_stays_in_range_and_reaches_every_value() {
        let mut r = Rng::new(1, 0);
        for n in [1u64, 2, 3, 7, 10] {
            let mut seen = vec![false; n as usize];
            for _ in 0..1000 {
                let v = r.below(n);
                assert!(v < n);
                seen[v as usize] = true;
            }
            assert!(seen.iter().all(|&s| s), "below({n}) missed a value");
        }
        // A bound near 2^64 exercises the rejection band.
        let n = u64::MAX - 1;
        for _ in 0..1000 {
            assert!(r.below(n) < n);
        }
    }

    #[test]
    fn floats_are_in_the_unit_interval() {
        let mut r = Rng::new(2, 0);
        for _ in 0..10_000 {
            let x = r.next_f64();
            assert!((0.0..1.0).contains(&x));
        }
        assert!(!r.chance(0.0));
        assert!(r.chance(1.0));
    }
}
