//! Latency histograms beside the results: each result carries its entry-latency histogram in
//! nanoseconds (HdrHistogram V2 with deflate, base64: the encoding of an interval log's lines),
//! and `report` exports them as HdrHistogram interval logs (`.hlog`) that the HdrHistogram tools
//! (HistogramLogProcessor, HistogramLogAnalyzer) read.

use std::path::{Path, PathBuf};
use std::time::Duration;

use base64::Engine as _;
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::{Deserializer, Serializer as _, V2DeflateSerializer};
use hdrhistogram::Histogram;

use super::saved::file_safe;
use super::RunResult;

/// Largest latency the nanosecond histograms hold: ten minutes.
const MAX_NS: u64 = 600_000_000_000;

/// A histogram of nanoseconds, 3 significant figures, up to ten minutes.
pub fn ns_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_NS, 3).expect("valid histogram bounds")
}

/// `h` (clock ticks) converted to nanoseconds: each recorded bucket's highest equivalent value
/// times `ns_per_tick`, with its count.
pub fn ticks_to_ns(h: &Histogram<u64>, ns_per_tick: f64) -> Histogram<u64> {
    let mut ns = ns_histogram();
    for v in h.iter_recorded() {
        let value = (v.value_iterated_to() as f64 * ns_per_tick).round() as u64;
        // Values past ten minutes saturate rather than vanish.
        let _ = ns.record_n(value.clamp(1, MAX_NS), v.count_at_value());
    }
    ns
}

/// Encodes a histogram as base64 of its V2 + deflate serialization (as an interval log line).
pub fn encode(h: &Histogram<u64>) -> Option<String> {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new().serialize(h, &mut bytes).ok()?;
    Some(base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// Decodes what [`encode`] wrote; `None` when it is not such a histogram.
pub fn decode(text: &str) -> Option<Histogram<u64>> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .ok()?;
    Deserializer::new()
        .deserialize(&mut std::io::Cursor::new(bytes))
        .ok()
}

/// One interval of a log: its tag and histogram, and when it was measured.
pub struct Interval<'a> {
    /// Tag (no spaces or commas; they are replaced).
    pub tag: String,
    /// The histogram, ns.
    pub histogram: &'a Histogram<u64>,
    /// Start, seconds after the log's base time.
    pub start: Duration,
    /// Length.
    pub length: Duration,
}

/// An interval log (`.hlog`) of `intervals`, values in nanoseconds, with `comment` lines.
pub fn interval_log(comments: &[String], intervals: &[Interval]) -> anyhow::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut serializer = V2DeflateSerializer::new();
    let mut builder = IntervalLogWriterBuilder::new();
    for c in comments {
        builder.add_comment(c);
    }
    builder.add_comment("values in nanoseconds");
    // Max values printed in milliseconds, as the Java tools print them.
    builder.with_max_value_divisor(1e6);
    let mut w = builder
        .begin_log_with(&mut out, &mut serializer)
        .map_err(|e| anyhow::anyhow!("writing an interval log: {e}"))?;
    for i in intervals {
        let tag: String = i
            .tag
            .chars()
            .map(|c| {
                if c == ',' || c.is_whitespace() {
                    '_'
                } else {
                    c
                }
            })
            .collect();
        w.write_histogram(i.histogram, i.start, i.length, Tag::new(&tag))
            .map_err(|e| anyhow::anyhow!("writing an interval log: {e:?}"))?;
    }
    Ok(out)
}

/// Writes the entry-latency histogram of every result that saved one as an interval log,
/// `hlog/<lock>_t<threads>_<scenario>.hlog` under `out`; returns the files (relative to `out`).
pub fn write_run_logs(runs: &[RunResult], out: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for r in runs {
        let Some(h) = r.latency_histogram.as_deref().and_then(decode) else {
            continue;
        };
        let scenario = r.key().scenario();
        let name = format!(
            "{}_t{}_{}.hlog",
            file_safe(&r.lock),
            r.threads,
            scenario.file_part()
        );
        let length = r
            .stop
            .strip_prefix("duration ")
            .and_then(|d| crate::workload::parse_duration(d).ok())
            .map_or(Duration::ZERO, |d| d * r.repeat.max(1) as u32);
        let start = Duration::from_secs(r.timestamp).saturating_sub(length);
        let bytes = interval_log(
            &[format!(
                "lockbench {}: {} at {} threads, {}; entry latency over {} round(s)",
                r.version,
                r.lock,
                r.threads,
                scenario.title(),
                r.repeat
            )],
            &[Interval {
                tag: format!("{}/t{}/{}", r.lock, r.threads, r.mix),
                histogram: &h,
                start,
                length,
            }],
        )?;
        let rel = PathBuf::from("hlog").join(name);
        crate::opts::io::write_atomic(&out.join(&rel), &bytes)?;
        written.push(rel);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};

    #[test]
    fn ticks_become_nanoseconds_and_survive_encoding() {
        let mut ticks = Histogram::<u64>::new_with_bounds(1, 1 << 40, 3).unwrap();
        ticks.record_n(100, 99).unwrap();
        ticks.record(10_000).unwrap();
        let ns = ticks_to_ns(&ticks, 0.5);
        assert_eq!(ns.len(), 100);
        assert_eq!(ns.value_at_quantile(0.5), 50);
        assert!(ns.max() >= 4_995 && ns.max() <= 5_010, "{}", ns.max());
        let back = decode(&encode(&ns).unwrap()).unwrap();
        assert_eq!(back.len(), 100);
        assert_eq!(back.value_at_quantile(0.99), ns.value_at_quantile(0.99));
        assert!(decode("not base64!").is_none());
    }

    #[test]
    fn interval_logs_parse_back_with_their_tags() {
        let mut h = ns_histogram();
        h.record_n(120, 10).unwrap();
        let log = interval_log(
            &["lockbench".to_string()],
            &[Interval {
                tag: "ticket t=2, distinct".into(),
                histogram: &h,
                start: Duration::from_secs(1_700_000_000),
                length: Duration::from_secs(1),
            }],
        )
        .unwrap();
        let text = String::from_utf8(log.clone()).unwrap();
        assert!(text.contains("#values in nanoseconds"), "{text}");
        let hists: Vec<_> = IntervalLogIterator::new(&log)
            .filter_map(|e| match e {
                Ok(LogEntry::Interval(i)) => Some(i),
                _ => None,
            })
            .collect();
        assert_eq!(hists.len(), 1);
        assert_eq!(hists[0].tag().unwrap().as_str(), "ticket_t=2__distinct");
        let back = decode(hists[0].encoded_histogram()).unwrap();
        assert_eq!(back.len(), 10);
    }
}
