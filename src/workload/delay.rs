//! Durations as users write them, and calibrated busy work that stands in for the critical
//! section and the think time between passages.
//!
//! [`Delay::run`] spins on pure arithmetic for a number of iterations fixed in advance, so the
//! loop reads no clock and touches no shared memory: the work costs the same whether or not it
//! is being timed. The iterations per nanosecond are measured once per process
//! ([`calibration`]) against [`Instant`].

use std::hint::black_box;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Parses a duration: a non-negative decimal number and a unit, `ns`, `us` (or `µs`), `ms`, `s`
/// or `m` (minutes), optionally separated by a space: `200ns`, `1us`, `1.5ms`, `2s`, `1m`. Zero
/// needs no unit. The value must be a whole number of nanoseconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let s = text.trim();
    let fail = |what: &str| Err(format!("invalid duration `{s}`: {what}; e.g. 1.5ms"));
    if s.starts_with('-') {
        return fail("a duration cannot be negative");
    }
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, unit) = s.split_at(split);
    let unit = unit.trim_start();
    let (whole, fraction) = match number.split_once('.') {
        Some((w, f)) => (w, f),
        None => (number, ""),
    };
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty()
        || !digits(whole)
        || !digits(fraction)
        || (number.contains('.') && fraction.is_empty())
    {
        return fail("expected a number followed by a unit (ns, us, ms, s, m)");
    }
    let nanos_per_unit: u128 = match unit {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "" if number.bytes().all(|b| b == b'0' || b == b'.') => return Ok(Duration::ZERO),
        "" => return fail("missing unit (ns, us, ms, s, m)"),
        _ => return fail(&format!("unknown unit `{unit}` (ns, us, ms, s, m)")),
    };
    // Exact decimal arithmetic: value = whole.fraction × unit, in nanoseconds.
    let too_long = || format!("invalid duration `{s}`: too long (at most 584 years); e.g. 1.5ms");
    let mut nanos: u128 = 0;
    let mut scale = nanos_per_unit;
    for b in whole.bytes() {
        nanos = nanos
            .checked_mul(10)
            .and_then(|n| n.checked_add(u128::from(b - b'0')))
            .ok_or_else(too_long)?;
    }
    nanos = nanos.checked_mul(nanos_per_unit).ok_or_else(too_long)?;
    for b in fraction.bytes() {
        let d = u128::from(b - b'0');
        if !scale.is_multiple_of(10) {
            if d != 0 {
                return fail("finer than a nanosecond");
            }
            continue;
        }
        scale /= 10;
        nanos = nanos.saturating_add(d * scale);
    }
    let nanos = u64::try_from(nanos).map_err(|_| too_long())?;
    Ok(Duration::from_nanos(nanos))
}

/// Formats a duration for people, exactly, in the largest unit up to seconds that keeps an
/// integer part: `0`, `200 ns`, `1 us`, `1.5 ms`, `2 s`, `90 s`. [`parse_duration`] reads it
/// back.
pub fn format_duration(d: Duration) -> String {
    let nanos = d.as_nanos();
    if nanos == 0 {
        return "0".to_string();
    }
    let (scale, unit) = match nanos {
        n if n < 1_000 => (1, "ns"),
        n if n < 1_000_000 => (1_000, "us"),
        n if n < 1_000_000_000 => (1_000_000, "ms"),
        _ => (1_000_000_000, "s"),
    };
    let whole = nanos / scale;
    let rest = nanos % scale;
    if rest == 0 {
        return format!("{whole} {unit}");
    }
    let width = scale.ilog10() as usize;
    let fraction = format!("{rest:0width$}");
    format!("{whole}.{} {unit}", fraction.trim_end_matches('0'))
}

/// Busy work of a calibrated length: `run` spins for a number of iterations fixed when the
/// delay is made, reading no clock and touching no shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delay {
    iterations: u64,
    duration: Duration,
}

impl Delay {
    /// No work at all: `run` returns at once.
    pub const ZERO: Delay = Delay {
        iterations: 0,
        duration: Duration::ZERO,
    };

    /// Busy work lasting about `d` on this machine. The first non-zero delay of the process
    /// calibrates (a few milliseconds, once); `Delay::new(Duration::ZERO)` never does.
    pub fn new(d: Duration) -> Delay {
        if d.is_zero() {
            return Delay::ZERO;
        }
        let iterations = (d.as_nanos() as f64 * calibration()).round() as u64;
        Delay {
            iterations,
            duration: d,
        }
    }

    #[cfg(test)]
    /// The duration asked for.
    pub fn duration(&self) -> Duration {
        self.duration
    }

    #[cfg(test)]
    /// The loop iterations one `run` performs.
    pub fn iterations(&self) -> u64 {
        self.iterations
    }

    /// Whether `run` does nothing.
    pub fn is_zero(&self) -> bool {
        self.iterations == 0
    }

    /// Does the work.
    #[inline]
    pub fn run(&self) {
        if self.iterations != 0 {
            spin(self.iterations);
        }
    }
}

impl Default for Delay {
    fn default() -> Self {
        Delay::ZERO
    }
}

/// `iterations` rounds of dependent arithmetic that the optimizer can neither remove nor fold:
/// each round passes through `black_box`.
#[inline(never)]
fn spin(iterations: u64) {
    let mut acc = black_box(0u64);
    for i in 0..iterations {
        acc = black_box(acc.wrapping_mul(3).wrapping_add(i));
    }
    black_box(acc);
}

static CALIBRATION: OnceLock<f64> = OnceLock::new();

/// Iterations of the delay loop per nanosecond on this machine, measured on first use and then
/// fixed for the life of the process (reported with results so a run can be interpreted).
pub fn calibration() -> f64 {
    *CALIBRATION.get_or_init(calibrate)
}

/// The time `spin(iterations)` takes.
fn time(iterations: u64) -> Duration {
    let start = Instant::now();
    spin(iterations);
    start.elapsed()
}

/// Measures the loop rate: grow a batch until it takes at least half a millisecond (which also
/// warms the core up), then time several trials of about 2 ms and keep the fastest. Noise
/// (preemption, interrupts, a sibling thread) only ever slows a trial down, so the fastest is
/// the best estimate of the undisturbed rate.
fn calibrate() -> f64 {
    const WARM: Duration = Duration::from_micros(500);
    const TRIAL: Duration = Duration::from_millis(2);
    const TRIALS: usize = 5;

    let mut iterations = 1_000u64;
    let mut elapsed = time(iterations);
    while elapsed < WARM && iterations < 1 << 40 {
        iterations *= 2;
        elapsed = time(iterations);
    }
    let scale = TRIAL.as_nanos() as f64 / elapsed.as_nanos().max(1) as f64;
    let iterations = ((iterations as f64 * scale) as u64).max(1);
    let best = (0..TRIALS)
        .map(|_| time(iterations))
        .min()
        .expect("at least one trial");
    iterations as f64 / best.as_nanos().max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_forms() {
        for (text, nanos) in [
            ("0", 0),
            ("0.0", 0),
            ("0ms", 0),
            ("200ns", 200),
            ("1us", 1_000),
            ("1µs", 1_000),
            ("0.25us", 250),
            ("1.5ms", 1_500_000),
            ("1.5 ms", 1_500_000),
            ("2s", 2_000_000_000),
            ("1.000000001s", 1_000_000_001),
            ("1m", 60_000_000_000),
            (" 3ms ", 3_000_000),
        ] {
            assert_eq!(
                parse_duration(text),
                Ok(Duration::from_nanos(nanos)),
                "{text}"
            );
        }
    }

    #[test]
    fn rejects_malformed_durations() {
        for (text, says) in [
            ("-1ms", "negative"),
            ("5", "missing unit"),
            ("1.5", "missing unit"),
            ("ms", "expected a number"),
            ("", "expected a number"),
            ("abc", "expected a number"),
            ("1.ms", "expected a number"),
            (".5ms", "expected a number"),
            ("1.2.3ms", "expected a number"),
            ("3h", "unknown unit"),
            ("3 lightyears", "unknown unit"),
            ("1.5ns", "finer than a nanosecond"),
            ("1000000000m", "too long"),
        ] {
            let err = parse_duration(text).expect_err(text);
            assert!(err.contains(says), "`{text}`: {err}");
            assert!(err.ends_with("e.g. 1.5ms"), "`{text}`: {err}");
        }
    }

    #[test]
    fn formats_exactly_and_round_trips() {
        for (nanos, text) in [
            (0, "0"),
            (200, "200 ns"),
            (1_000, "1 us"),
            (1_500, "1.5 us"),
            (1_500_000, "1.5 ms"),
            (1_234_567, "1.234567 ms"),
            (2_000_000_000, "2 s"),
            (90_000_000_000, "90 s"),
            (1_000_000_001, "1.000000001 s"),
        ] {
            let d = Duration::from_nanos(nanos);
            assert_eq!(format_duration(d), text);
            assert_eq!(parse_duration(text), Ok(d));
        }
    }

    #[test]
    fn zero_delay_is_a_no_op() {
        let d = Delay::new(Duration::ZERO);
        assert_eq!(d, Delay::ZERO);
        assert!(d.is_zero());
        assert_eq!(d.iterations(), 0);
        d.run();
        Delay::ZERO.run();
    }

    #[test]
    fn a_millisecond_delay_takes_about_a_millisecond() {
        // A sanity check of the calibration on a shared, noisy machine, not a speed test: the
        // fastest of a few runs lands within a generous factor of what was asked.
        let want = Duration::from_millis(1);
        let d = Delay::new(want);
        assert!(calibration() > 0.0 && calibration().is_finite());
        assert_eq!(d.duration(), want);
        assert!(d.iterations() > 0);
        let best = (0..3)
            .map(|_| {
                let start = Instant::now();
                d.run();
                start.elapsed()
            })
            .min()
            .unwrap();
        assert!(
            best >= want.mul_f64(0.3) && best <= want * 5,
            "a 1 ms delay took {best:?} ({} iterations at {:.3}/ns)",
            d.iterations(),
            calibration()
        );
    }
}
