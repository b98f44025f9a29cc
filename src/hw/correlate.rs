//! `lockbench correlate DIR`: model RMRs set against hardware coherence counts, run by run.
//!
//! Each point is one configuration (lock × thread count × mix): x is the mean RMRs per passage
//! under the run's model, y an event's count per passage. Pearson's r says how well a straight
//! line fits (the hardware counting a fixed multiple of the model's RMRs); Spearman's ρ says
//! whether the two rank the configurations the same way, which is the claim that matters when
//! the constant differs between locks. Coefficients are given per event and per model.
//!
//! The passage time measured by the clock is always one of the "events" (`passage-ns`), so
//! the model side is shown, and checkable, on a machine without a PMU.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::results::{join, Joined};
use super::stats::{fit, pearson, spearman};
use super::svg::{render, Point, Scatter};
use crate::report::RunResult;

/// The clock's pseudo-event: the whole passage, ns.
pub const CLOCK: &str = "passage-ns";

/// Software counters: they exist without a PMU and are not coherence events.
const SOFTWARE: [&str; 4] = [
    "task-clock",
    "context-switches",
    "cpu-migrations",
    "page-faults",
];

/// One coefficient pair.
#[derive(Clone, Debug, Serialize)]
pub struct Correlation {
    /// RMR model of the x side.
    pub model: String,
    /// Event of the y side (`passage-ns` for the clock).
    pub event: String,
    /// The event's raw encoding, when it is a raw event.
    pub encoding: Option<String>,
    /// Whether the event is counted by the PMU.
    pub hardware: bool,
    /// Points (configurations).
    pub n: usize,
    /// Pearson's r (null under three points or with a constant side).
    pub pearson: Option<f64>,
    /// Spearman's ρ (same).
    pub spearman: Option<f64>,
    /// The scatter plot written, if any.
    pub plot: Option<PathBuf>,
}

/// One configuration's model side.
#[derive(Clone, Debug, Serialize)]
pub struct ModelRow {
    /// Lock.
    pub lock: String,
    /// Threads.
    pub threads: usize,
    /// Mix.
    pub mix: String,
    /// Model.
    pub model: String,
    /// Mean RMRs per passage.
    pub rmr_mean: f64,
    /// Largest RMRs of a passage.
    pub rmr_max: Option<f64>,
    /// Per-section means.
    pub by_section: BTreeMap<String, f64>,
    /// Measured mean passage time, ns.
    pub passage_ns: Option<f64>,
    /// Time (and counters) come from the counting-memory run itself: slower than native.
    pub measured_on_counting_memory: bool,
}

/// Whether the runs' hardware counters counted, and why not.
#[derive(Clone, Debug, Serialize)]
pub struct Pmu {
    /// Some hardware event has a value.
    pub available: bool,
    /// Why not, when not.
    pub reason: Option<String>,
}

/// What `correlate` reports.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The directory read.
    pub dir: PathBuf,
    /// Hardware counters' status.
    pub pmu: Pmu,
    /// Coefficients, per model then event.
    pub correlations: Vec<Correlation>,
    /// The model side, one row per configuration.
    pub model_side: Vec<ModelRow>,
    /// What the reader should know.
    pub notes: Vec<String>,
}

fn is_hardware(name: &str) -> bool {
    name != CLOCK && !SOFTWARE.contains(&name)
}

fn pmu_status(joined: &[Joined<'_>]) -> Pmu {
    let counters = || {
        joined
            .iter()
            .flat_map(|j| &j.measured.counters)
            .filter(|c| is_hardware(&c.name))
    };
    if counters().any(|c| c.per_passage.is_some()) {
        return Pmu {
            available: true,
            reason: None,
        };
    }
    let reason = counters()
        .find_map(|c| c.unavailable.clone())
        .unwrap_or_else(|| {
            "the runs asked for no hardware counters; run with --counters coherence".to_string()
        });
    Pmu {
        available: false,
        reason: Some(reason),
    }
}

fn file_part(s: &str) -> String {
    let safe = s
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    crate::opts::io::bounded(safe, s)
}

/// Correlates the runs of `runs` (read from `dir`), writing one SVG per (model, event) with at
/// least two points under `svg_dir` (none when `None`).
pub fn correlate(dir: &Path, runs: &[RunResult], svg_dir: Option<&Path>) -> anyhow::Result<Report> {
    let joined = join(runs);
    let mut notes = Vec::new();
    let on_counting = joined
        .iter()
        .filter(|j| j.measured_on_counting_memory())
        .count();
    if on_counting > 0 {
        notes.push(format!(
            "{on_counting} of {} configurations have no native run beside the --rmr run: their \
             time and counters were measured on the counting memory, which is slower and adds \
             traffic of its own",
            joined.len()
        ));
    }
    let mut models: Vec<&str> = Vec::new();
    for j in &joined {
        if !models.contains(&j.rmr().model.as_str()) {
            models.push(&j.rmr().model);
        }
    }
    let mut correlations = Vec::new();
    for model in models {
        let group: Vec<&Joined<'_>> = joined.iter().filter(|j| j.rmr().model == model).collect();
        for (event, encoding) in events(&group) {
            correlations.push(correlation(model, event, encoding, &group, svg_dir)?);
        }
    }
    if correlations.iter().any(|c| c.n < 3) {
        notes.push(
            "a coefficient needs at least three configurations (more locks or thread counts)"
                .to_string(),
        );
    }
    if correlations.iter().any(|c| c.n >= 3 && c.pearson.is_none()) {
        notes.push(
            "a coefficient shown '-' is undefined: that event (or the model's count) is the same \
             in every configuration"
                .to_string(),
        );
    }
    Ok(Report {
        dir: dir.to_path_buf(),
        pmu: pmu_status(&joined),
        correlations,
        model_side: joined.iter().map(model_row).collect(),
        notes,
    })
}

/// The events of one model's configurations: the clock, then every hardware counter that
/// counted somewhere, with its raw encoding.
fn events(group: &[&Joined<'_>]) -> Vec<(String, Option<String>)> {
    let mut events: Vec<(String, Option<String>)> = vec![(CLOCK.to_string(), None)];
    for j in group {
        for c in &j.measured.counters {
            if is_hardware(&c.name)
                && c.per_passage.is_some()
                && !events.iter().any(|(e, _)| *e == c.name)
            {
                events.push((c.name.clone(), c.event.clone()));
            }
        }
    }
    events
}

/// One model against one event over the configurations of `group`, with its scatter plot
/// under `svg_dir` when there are two points or more.
fn correlation(
    model: &str,
    event: String,
    encoding: Option<String>,
    group: &[&Joined<'_>],
    svg_dir: Option<&Path>,
) -> anyhow::Result<Correlation> {
    let points: Vec<Point> = group
        .iter()
        .filter_map(|j| {
            let y = if event == CLOCK {
                j.measured.passage_mean()
            } else {
                j.measured
                    .counters
                    .iter()
                    .find(|c| c.name == event)
                    .and_then(|c| c.per_passage)
            }?;
            Some(Point {
                x: j.rmr().per_passage_mean,
                y,
                series: j.model.lock.clone(),
                label: format!("t{}", j.model.threads),
            })
        })
        .collect();
    let xs: Vec<f64> = points.iter().map(|p| p.x).collect();
    let ys: Vec<f64> = points.iter().map(|p| p.y).collect();
    let (r, rho) = (pearson(&xs, &ys), spearman(&xs, &ys));
    let mut plot = None;
    if let (Some(svg_dir), true) = (svg_dir, points.len() >= 2) {
        let coeff = |v: Option<f64>| v.map_or("undefined".to_string(), |v| format!("{v:.3}"));
        let scatter = Scatter {
            title: format!("{event} against {model} RMRs, per passage"),
            subtitle: format!(
                "{} configurations: Pearson r = {}, Spearman ρ = {}",
                points.len(),
                coeff(r),
                coeff(rho)
            ),
            x_label: format!("RMRs per passage under the {model} model (mean)"),
            y_label: if event == CLOCK {
                "measured passage time, ns (mean)".to_string()
            } else {
                format!("{event} per passage")
            },
            fit: fit(&xs, &ys),
            points,
        };
        let path = svg_dir.join(format!(
            "correlate-{}-{}.svg",
            file_part(model),
            file_part(&event)
        ));
        crate::opts::io::create_dir_all(svg_dir)?;
        crate::opts::io::write_atomic(&path, render(&scatter).as_bytes())?;
        plot = Some(path);
    }
    Ok(Correlation {
        model: model.to_string(),
        hardware: is_hardware(&event),
        event,
        encoding,
        n: xs.len(),
        pearson: r,
        spearman: rho,
        plot,
    })
}

/// One configuration's model side.
fn model_row(j: &Joined<'_>) -> ModelRow {
    ModelRow {
        lock: j.model.lock.clone(),
        threads: j.model.threads,
        mix: j.model.mix.clone(),
        model: j.rmr().model.clone(),
        rmr_mean: j.rmr().per_passage_mean,
        rmr_max: j.rmr().per_passage_max,
        by_section: j
            .rmr()
            .sections()
            .into_iter()
            .map(|(s, v)| (s.to_string(), v))
            .collect(),
        passage_ns: j.measured.passage_mean(),
        measured_on_counting_memory: j.measured_on_counting_memory(),
    }
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".to_string(), |v| format!("{v:.digits$}"))
}

/// The report as text.
pub fn table(r: &Report) -> String {
    let mut out = String::new();
    if r.pmu.available {
        let _ = writeln!(out, "hardware coherence counts: present");
    } else {
        let _ = writeln!(
            out,
            "hardware coherence counts: none in {} ({}); showing the model side, against the \
             clock",
            crate::opts::io::shown(&r.dir),
            r.pmu.reason.as_deref().unwrap_or("unknown reason")
        );
    }
    let _ = writeln!(out, "\nmodel side (RMRs per passage, mean over passages):");
    let _ = writeln!(
        out,
        "{:<18} {:>4} {:<10} {:<6} {:>9} {:>7} {:>8} {:>8} {:>6} {:>6} {:>11}",
        "lock",
        "thr",
        "mix",
        "model",
        "rmr/pass",
        "max",
        "doorway",
        "waiting",
        "cs",
        "exit",
        "passage ns"
    );
    for m in &r.model_side {
        let sec = |s: &str| opt(m.by_section.get(s).copied(), 2);
        let _ = writeln!(
            out,
            "{:<18} {:>4} {:<10} {:<6} {:>9.2} {:>7} {:>8} {:>8} {:>6} {:>6} {:>11}",
            m.lock,
            m.threads,
            m.mix,
            m.model,
            m.rmr_mean,
            opt(m.rmr_max, 0),
            sec("doorway"),
            sec("waiting"),
            sec("cs"),
            sec("exit"),
            format!(
                "{}{}",
                opt(m.passage_ns, 1),
                if m.measured_on_counting_memory {
                    "*"
                } else {
                    ""
                }
            )
        );
    }
    if r.model_side.iter().any(|m| m.measured_on_counting_memory) {
        let _ = writeln!(
            out,
            "* timed on the counting memory (no native run beside it)"
        );
    }
    let _ = writeln!(
        out,
        "\ncorrelations over configurations (x: model RMRs per passage; y: the event per passage):"
    );
    let _ = writeln!(
        out,
        "{:<6} {:<50} {:>3} {:>8} {:>9}  plot",
        "model", "event", "n", "pearson", "spearman"
    );
    for c in &r.correlations {
        let name = match &c.encoding {
            Some(e) if *e != c.event => format!("{} ({e})", c.event),
            _ if c.event == CLOCK => format!("{CLOCK} (clock)"),
            _ => c.event.clone(),
        };
        let _ = writeln!(
            out,
            "{:<6} {:<50} {:>3} {:>8} {:>9}  {}",
            c.model,
            name,
            c.n,
            opt(c.pearson, 3),
            opt(c.spearman, 3),
            c.plot
                .as_ref()
                .map_or("-".to_string(), |p| crate::opts::io::shown(p))
        );
    }
    for note in &r.notes {
        let _ = writeln!(out, "note: {note}");
    }
    out
}
