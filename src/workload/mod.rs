//! TEMP STUB
use std::time::Duration;
#[derive(Clone, Debug, PartialEq)]
pub enum Mix {
    Single,
    Distinct,
    Uniform(usize),
}
impl std::str::FromStr for Mix {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "single" => Ok(Mix::Single),
            "distinct" => Ok(Mix::Distinct),
            s if s.starts_with("uniform:") => {
                let m: usize = s[8..].parse().map_err(|_| "bad uniform".to_string())?;
                if m == 0 {
                    return Err("zero sessions".into());
                }
                Ok(Mix::Uniform(m))
            }
            _ => Err(format!("unknown mix {s}")),
        }
    }
}
impl std::fmt::Display for Mix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Mix::Single => write!(f, "single"),
            Mix::Distinct => write!(f, "distinct"),
            Mix::Uniform(m) => write!(f, "uniform:{m}"),
        }
    }
}
pub struct Sampler {
    p: usize,
    m: usize,
    x: u64,
}
impl Sampler {
    pub fn next_session(&mut self) -> usize {
        self.x = self
            .x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        match self.m {
            0 => 0,
            usize::MAX => self.p,
            m => ((self.x >> 33) as usize) % m,
        }
    }
}
impl Mix {
    pub fn sampler(&self, p: usize, _n: usize, seed: u64) -> Sampler {
        Sampler {
            p,
            m: match self {
                Mix::Single => 0,
                Mix::Distinct => usize::MAX,
                Mix::Uniform(m) => *m,
            },
            x: seed ^ p as u64,
        }
    }
    pub fn sessions(&self, n: usize) -> usize {
        match self {
            Mix::Single => 1,
            Mix::Distinct => n,
            Mix::Uniform(m) => *m,
        }
    }
    pub fn needs_groups(&self, _n: usize) -> bool {
        matches!(self, Mix::Uniform(m) if *m > 1)
    }
}
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    for (u, mul) in [
        ("ns", 1u64),
        ("us", 1000),
        ("ms", 1_000_000),
        ("s", 1_000_000_000),
    ] {
        if let Some(v) = s.strip_suffix(u) {
            if let Ok(x) = v.parse::<f64>() {
                if x >= 0.0 {
                    return Ok(Duration::from_nanos((x * mul as f64) as u64));
                }
            }
        }
    }
    Err("expected e.g. 200ns, 1us, 2s".into())
}
pub fn format_duration(d: Duration) -> String {
    format!("{d:?}")
}
pub struct Delay(u64);
impl Delay {
    pub fn new(d: Duration) -> Delay {
        Delay(d.as_nanos() as u64)
    }
    pub fn run(&self) {
        let mut x = 0u64;
        for i in 0..self.0 {
            x = std::hint::black_box(x + i);
        }
    }
}
pub struct SharedLines(Vec<crossbeam_utils::CachePadded<std::sync::atomic::AtomicU64>>);
impl SharedLines {
    pub fn new(n: usize) -> Self {
        SharedLines((0..n).map(|_| Default::default()).collect())
    }
    pub fn touch(&self) {
        for l in &self.0 {
            let v = l.load(std::sync::atomic::Ordering::Relaxed);
            l.store(v + 1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}
