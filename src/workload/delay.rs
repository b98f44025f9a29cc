//! Durations on the command line, calibrated busy work, and shared cache lines touched in the
//! critical section.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;

/// Parses `0`, `200ns`, `1us` (or `1µs`), `1.5ms`, `2s`, `1m`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    if t == "0" {
        return Ok(Duration::ZERO);
    }
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| format!("{t:?} has no unit: write e.g. 200ns, 1us, 1.5ms, 2s, 1m"))?;
    let (num, unit) = t.split_at(split);
    if num.is_empty() {
        return Err(format!(
            "{t:?} is not a duration: write e.g. 200ns, 1us, 1.5ms, 2s, 1m"
        ));
    }
    let v: f64 = num
        .parse()
        .map_err(|_| format!("{num:?} is not a number"))?;
    let ns_per = match unit.trim() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" | "min" => 60e9,
        u => {
            return Err(format!(
                "unknown unit {u:?} in {t:?}: use ns, us, ms, s or m"
            ))
        }
    };
    let ns = v * ns_per;
    if !ns.is_finite() || ns > 1e18 {
        return Err(format!("{t:?} is too long"));
    }
    Ok(Duration::from_nanos(ns.round() as u64))
}

/// A duration for people: `0`, `200ns`, `1.5us`, `2s`.
pub fn format_duration(d: Duration) -> String {
    let ns = d.as_nanos() as f64;
    let (v, unit) = if ns == 0.0 {
        return "0".into();
    } else if ns < 1e3 {
        (ns, "ns")
    } else if ns < 1e6 {
        (ns / 1e3, "us")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    let text = format!("{v:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}{unit}")
}

/// Busy work of a given duration: pure computation, no clock reads, calibrated once per
/// process against the OS clock.
#[derive(Clone, Copy, Debug)]
pub struct Delay {
    iterations: u64,
}

/// Iterations of the delay loop per nanosecond, measured once.
pub fn calibration() -> f64 {
    static CAL: OnceLock<f64> = OnceLock::new();
    *CAL.get_or_init(|| {
        // Best of several trials: interference only ever slows the loop down.
        let iters = 200_000u64;
        let mut best = f64::MAX;
        for _ in 0..7 {
            let t = Instant::now();
            spin(iters);
            best = best.min(t.elapsed().as_nanos().max(1) as f64);
        }
        iters as f64 / best
    })
}

#[inline(never)]
fn spin(iterations: u64) {
    let mut x = 0u64;
    for i in 0..iterations {
        x = std::hint::black_box(x.wrapping_add(i));
    }
    std::hint::black_box(x);
}

impl Delay {
    /// No work at all.
    pub const ZERO: Delay = Delay { iterations: 0 };

    /// Busy work lasting about `d`.
    pub fn new(d: Duration) -> Delay {
        if d.is_zero() {
            return Delay::ZERO;
        }
        Delay {
            iterations: ((d.as_nanos() as f64 * calibration()).round() as u64).max(1),
        }
    }

    /// Does the work.
    #[inline]
    pub fn run(&self) {
        if self.iterations > 0 {
            spin(self.iterations)
        }
    }
}

/// Shared cache lines each critical section reads and writes (`--cs-lines`): the data a lock
/// protects, so that the cost of moving it between cores shows.
#[derive(Debug)]
pub struct SharedLines(Box<[CachePadded<AtomicU64>]>);

impl SharedLines {
    /// `lines` separate lines.
    pub fn new(lines: usize) -> SharedLines {
        SharedLines(
            (0..lines)
                .map(|_| CachePadded::new(AtomicU64::new(0)))
                .collect(),
        )
    }

    /// Reads and writes every line. Relaxed: the lock's own ordering publishes them.
    #[inline]
    pub fn touch(&self) {
        for l in self.0.iter() {
            l.store(l.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        }
    }

    /// Sum over lines (every touch adds one per line).
    pub fn total(&self) -> u64 {
        self.0.iter().map(|l| l.load(Ordering::Relaxed)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("0").unwrap(), Duration::ZERO);
        assert_eq!(parse_duration("200ns").unwrap(), Duration::from_nanos(200));
        assert_eq!(parse_duration("1us").unwrap(), Duration::from_micros(1));
        assert_eq!(
            parse_duration("1.5ms").unwrap(),
            Duration::from_micros(1500)
        );
        assert_eq!(parse_duration("2s").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_duration("1m").unwrap(), Duration::from_secs(60));
        for bad in ["", "5", "-5us", "fast", "1.2.3s", "3 parsecs", "ms"] {
            assert!(parse_duration(bad).is_err(), "{bad:?} accepted");
        }
        assert_eq!(format_duration(Duration::from_micros(1500)), "1.5ms");
        assert_eq!(format_duration(Duration::from_nanos(200)), "200ns");
        assert_eq!(format_duration(Duration::ZERO), "0");
        assert_eq!(format_duration(Duration::from_secs(2)), "2s");
    }

    #[test]
    fn delay_is_roughly_calibrated() {
        Delay::ZERO.run();
        assert_eq!(Delay::new(Duration::ZERO).iterations, 0);
        let d = Delay::new(Duration::from_millis(2));
        let mut best = u128::MAX;
        for _ in 0..5 {
            let t = Instant::now();
            d.run();
            best = best.min(t.elapsed().as_micros());
        }
        // A behaviour check with a wide margin (the machine is shared), not a speed test.
        assert!(
            (600..=10_000).contains(&best),
            "2 ms of busy work took {best} µs"
        );
    }

    #[test]
    fn lines_are_touched() {
        let l = SharedLines::new(3);
        l.touch();
        l.touch();
        assert_eq!(l.total(), 6);
        SharedLines::new(0).touch();
    }
}
