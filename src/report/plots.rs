//! The plots of `report`, drawn with plotters as SVG: line charts with error bars, percentile
//! spectra and per-thread dot rows. Every plot has titled axes with units and its legend in a
//! margin of its own, so the legend never covers data; lines are told apart by colour, marker
//! and, for baselines, a dashed line with hollow markers, which stays readable with 15 locks.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

mod dots;
pub mod style;
#[cfg(test)]
mod svg_tests;
pub use dots::{dot_rows, Row};
pub use style::{look, Look};

/// Width of a plot, px.
pub const W: u32 = 980;
/// Height of a plot, px.
pub const H: u32 = 600;
/// Width of the legend margin, px.
const LEGEND_W: u32 = 250;
const FONT: &str = "sans-serif";

const GRID: RGBColor = RGBColor(0xE2, 0xE2, 0xE2);

fn err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow::anyhow!("drawing a plot: {e:?}")
}

/// One point: x, y and an optional error bar `[lo, hi]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pt {
    /// Horizontal value.
    pub x: f64,
    /// Vertical value.
    pub y: f64,
    /// Error bar, when there is one.
    pub bar: Option<(f64, f64)>,
    /// Draw a marker here (a dense line marks only its notable points).
    pub mark: bool,
}

impl Pt {
    /// A marked point with an optional error bar.
    pub fn new(x: f64, y: f64, bar: Option<(f64, f64)>) -> Pt {
        Pt {
            x,
            y,
            bar,
            mark: true,
        }
    }
}

/// One line.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// Drawn dashed with hollow markers.
    pub baseline: bool,
    /// Colour and marker ([`look`] of the lock's name: alike in every plot of every report).
    pub look: Look,
    /// Points, in x order.
    pub points: Vec<Pt>,
}

/// An axis: its title (with the unit), how values are written, and its scale.
#[derive(Clone, Debug)]
pub struct Axis {
    /// Title, with the unit.
    pub label: String,
    /// Log scale asked for (used when the data span more than a factor of 20).
    pub log: bool,
    /// Powers of two rather than of ten on a log scale (thread counts).
    pub base2: bool,
    /// Writes a value.
    pub fmt: fn(f64) -> String,
    /// Ticks given explicitly (values, before any log scale), instead of computed ones.
    pub ticks: Option<Vec<f64>>,
    /// Start a linear axis at zero.
    pub from_zero: bool,
}

impl Axis {
    /// A linear axis from zero.
    pub fn linear(label: impl Into<String>, fmt: fn(f64) -> String) -> Axis {
        Axis {
            label: label.into(),
            log: false,
            base2: false,
            fmt,
            ticks: None,
            from_zero: true,
        }
    }

    /// A log-10 axis (linear when the data span a factor of 20 or less).
    pub fn log(label: impl Into<String>, fmt: fn(f64) -> String) -> Axis {
        Axis {
            log: true,
            ..Axis::linear(label, fmt)
        }
    }
}

/// How values map to the drawn axis.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Scale {
    Linear,
    Log(f64),
}

impl Scale {
    fn choose(axis: &Axis, lo: f64, hi: f64) -> Scale {
        if axis.log && lo > 0.0 && hi / lo > 20.0 {
            Scale::Log(if axis.base2 { 2.0 } else { 10.0 })
        } else {
            Scale::Linear
        }
    }

    fn to(self, v: f64) -> f64 {
        match self {
            Scale::Linear => v,
            Scale::Log(b) => v.max(f64::MIN_POSITIVE).log(b),
        }
    }

    fn from(self, v: f64) -> f64 {
        match self {
            Scale::Linear => v,
            Scale::Log(b) => b.powf(v),
        }
    }
}

/// A "nice" step (1, 2 or 5 times a power of ten) giving about `n` ticks over `span`.
pub(crate) fn nice_step(span: f64, n: f64) -> f64 {
    if span <= 0.0 || !span.is_finite() {
        return 1.0;
    }
    let raw = span / n;
    let mag = 10f64.powf(raw.log10().floor());
    let norm = raw / mag;
    let nice = if norm < 1.5 {
        1.0
    } else if norm < 3.5 {
        2.0
    } else if norm < 7.5 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// The drawn range `[lo, hi]` (in scale units) and tick positions (in scale units).
fn layout(axis: &Axis, values: &[f64]) -> (Scale, f64, f64, Vec<f64>) {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let (mut lo, mut hi) = finite
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &v| (a.min(v), b.max(v)));
    if finite.is_empty() {
        (lo, hi) = (0.0, 1.0);
    }
    let positive_lo = finite
        .iter()
        .copied()
        .filter(|v| *v > 0.0)
        .fold(f64::MAX, f64::min);
    let scale = Scale::choose(axis, positive_lo, hi);
    if let Some(t) = &axis.ticks {
        let ticks: Vec<f64> = t.iter().map(|&v| scale.to(v)).collect();
        let lo = if scale == Scale::Linear {
            lo
        } else {
            positive_lo
        };
        let (a, b) = ticks
            .iter()
            .fold((scale.to(lo), scale.to(hi)), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        let pad = (b - a).max(1e-9) * 0.05;
        return (scale, a - pad, b + pad, ticks);
    }
    match scale {
        Scale::Log(base) => {
            let (a, b) = (scale.to(positive_lo), scale.to(hi));
            let (a, b) = (a.floor().min(a - 0.05), b.ceil().max(b + 0.05));
            let (a, b) = (
                a.max(scale.to(positive_lo) - 0.3),
                b.min(scale.to(hi) + 0.3),
            );
            let ticks: Vec<f64> = (a.ceil() as i64..=b.floor() as i64)
                .map(|e| e as f64)
                .collect();
            let _ = base;
            (scale, a, b, ticks)
        }
        Scale::Linear => {
            if axis.from_zero {
                lo = lo.min(0.0);
            }
            if hi <= lo {
                hi = lo + 1.0;
            }
            let step = nice_step(hi - lo, 5.0);
            let a = (lo / step).floor() * step;
            let b = (hi / step).ceil() * step;
            let b = if b - hi < step * 0.05 {
                b + step * 0.5
            } else {
                b
            };
            let mut ticks = Vec::new();
            let mut t = a;
            while t <= b + step * 1e-6 {
                ticks.push(t);
                t += step;
            }
            (scale, a, b, ticks)
        }
    }
}

/// A line chart.
#[derive(Clone, Debug)]
pub struct LineChart {
    /// Title.
    pub title: String,
    /// A line under the title (the configuration, how to read it).
    pub subtitle: String,
    /// Horizontal axis.
    pub x: Axis,
    /// Vertical axis.
    pub y: Axis,
    /// Lines.
    pub series: Vec<Series>,
    /// A horizontal reference line at this y, with its label.
    pub reference: Option<(f64, String)>,
    /// Note under the legend (what the error bars are).
    pub note: String,
}

/// A marker of `look`'s shape and colour at pixel `(x, y)`, hollow unless `filled`.
fn marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
    look: Look,
    filled: bool,
) -> anyhow::Result<()> {
    let color = look.rgb();
    let outline = style::marker_outline(look.marker, (f64::from(x), f64::from(y)), 4.5);
    let Some(points) = outline else {
        let style = if filled {
            color.filled()
        } else {
            color.stroke_width(2)
        };
        return area.draw(&Circle::new((x, y), 4, style)).map_err(err);
    };
    let px: Vec<(i32, i32)> = points
        .iter()
        .map(|&(a, b)| (a.round() as i32, b.round() as i32))
        .collect();
    if filled {
        area.draw(&Polygon::new(px, color.filled())).map_err(err)
    } else {
        let mut closed = px.clone();
        closed.push(px[0]);
        area.draw(&PathElement::new(closed, color.stroke_width(2)))
            .map_err(err)
    }
}

/// Where a grid line's label sits: below its start (x ticks) or left of it (y ticks, rows).
#[derive(Clone, Copy)]
enum Side {
    Below,
    Left,
}

/// A chart of `f64` against `f64` drawn as SVG.
type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// One grid line from `from` to `to` (plot coordinates), labelled `text` beside `from` on
/// `side`.
fn grid_line(
    chart: &mut Chart,
    root: &DrawingArea<SVGBackend, Shift>,
    from: (f64, f64),
    to: (f64, f64),
    text: String,
    side: Side,
) -> anyhow::Result<()> {
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![from, to],
            GRID.stroke_width(1),
        )))
        .map_err(err)?;
    let (px, py) = chart.backend_coord(&from);
    let (at, pos) = match side {
        Side::Below => ((px, py + 8), Pos::new(HPos::Center, VPos::Top)),
        Side::Left => ((px - 8, py), Pos::new(HPos::Right, VPos::Center)),
    };
    let font = (FONT, 13).into_font().color(&BLACK).pos(pos);
    root.draw(&Text::new(text, at, font)).map_err(err)?;
    Ok(())
}

/// The legend in its margin: one entry per series, with line style and marker.
fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(String, bool, Look)],
    note: &str,
) -> anyhow::Result<()> {
    let (_, h) = area.dim_in_pixel();
    let step = (((h as i32) - 80) / entries.len().max(1) as i32).clamp(12, 22);
    let font = (FONT, 13).into_font();
    let mut y = 40;
    for (name, baseline, look) in entries {
        let line = look.rgb().stroke_width(2);
        if *baseline {
            for x0 in [8, 22, 36] {
                area.draw(&PathElement::new(vec![(x0, y), (x0 + 8, y)], line))
                    .map_err(err)?;
            }
        } else {
            area.draw(&PathElement::new(vec![(8, y), (44, y)], line))
                .map_err(err)?;
        }
        marker(area, (26, y), *look, !*baseline)?;
        area.draw(&Text::new(
            name.clone(),
            (52, y),
            font.clone()
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Center)),
        ))
        .map_err(err)?;
        y += step;
    }
    let small = (FONT, 12).into_font().color(&NOTE_GREY);
    for (j, line) in note.lines().enumerate() {
        area.draw(&Text::new(
            line.to_string(),
            (8, y + 8 + 15 * j as i32),
            small.clone(),
        ))
        .map_err(err)?;
    }
    Ok(())
}

/// Every value each axis must show: the points, their bars and the reference line.
fn extents(c: &LineChart) -> (Vec<f64>, Vec<f64>) {
    let xs: Vec<f64> = c
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.x))
        .collect();
    let mut ys: Vec<f64> = Vec::new();
    for p in c.series.iter().flat_map(|s| &s.points) {
        ys.push(p.y);
        if let Some((lo, hi)) = p.bar {
            ys.extend([lo, hi]);
        }
    }
    if let Some((r, _)) = &c.reference {
        ys.push(*r);
    }
    (xs, ys)
}

/// The grey of reference lines and notes.
const NOTE_GREY: RGBColor = RGBColor(0x55, 0x55, 0x55);

/// A horizontal reference line at `ry` (plot coordinates) across `x0..x1`. Its label goes to
/// the legend's note, never into the plot, where it would print over the data.
fn reference_line(chart: &mut Chart, ry: f64, (x0, x1): (f64, f64)) -> anyhow::Result<()> {
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(x0, ry), (x1, ry)],
            RGBColor(0x80, 0x80, 0x80).stroke_width(1),
        )))
        .map_err(err)?;
    Ok(())
}

/// How one series is placed: its scales, its horizontal offset (scale units; see [`dodges`])
/// and the bottom of the drawn range, where values off a log scale (0) are put.
#[derive(Clone, Copy)]
struct Placing {
    sx: Scale,
    sy: Scale,
    dx: f64,
    floor: f64,
}

impl Placing {
    /// Where `(x, y)` is drawn, and whether it sits on the bottom edge because the log scale
    /// cannot show it.
    fn at(&self, x: f64, y: f64) -> ((f64, f64), bool) {
        let off = matches!(self.sy, Scale::Log(_)) && (y <= 0.0 || self.sy.to(y) < self.floor);
        let v = if off { self.floor } else { self.sy.to(y) };
        ((self.sx.to(x) + self.dx, v), off)
    }
}

/// Horizontal offsets, in scale units, one per series: when any point has an error bar, the
/// series are spread a few pixels apart around each x (dodged) so that the bars of different
/// locks do not sit on one another; otherwise none. `px` is the width of one pixel in scale
/// units, `xs` the distinct x positions (scale units).
fn dodges(c: &LineChart, px: f64, xs: &[f64]) -> Vec<f64> {
    let n = c.series.len();
    let barred = c
        .series
        .iter()
        .any(|s| s.points.iter().any(|p| p.bar.is_some()));
    if !barred || n < 2 || px <= 0.0 {
        return vec![0.0; n];
    }
    let mut xs = xs.to_vec();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let gap_px = xs
        .windows(2)
        .map(|w| (w[1] - w[0]) / px)
        .fold(f64::INFINITY, f64::min);
    // At most 7 px apart, and the whole spread within 60% of the narrowest gap.
    let step = 7f64.min(0.6 * gap_px / n as f64).max(1.0);
    (0..n)
        .map(|i| (i as f64 - (n - 1) as f64 / 2.0) * step * px)
        .collect()
}

/// One series: its line (dashed for a baseline), its bars and its markers; a value a log
/// scale cannot show (0) is drawn on the bottom edge with a `0` beside its marker. True when
/// any was.
fn draw_series(
    chart: &mut Chart,
    root: &DrawingArea<SVGBackend, Shift>,
    s: &Series,
    place: Placing,
) -> anyhow::Result<bool> {
    let color = s.look.rgb();
    let placed: Vec<((f64, f64), bool)> = s.points.iter().map(|p| place.at(p.x, p.y)).collect();
    let pts: Vec<(f64, f64)> = placed.iter().map(|(xy, _)| *xy).collect();
    let line = color.stroke_width(2);
    if s.baseline {
        chart
            .draw_series(DashedLineSeries::new(pts.clone(), 7, 5, line))
            .map_err(err)?;
    } else {
        chart
            .draw_series(LineSeries::new(pts.clone(), line))
            .map_err(err)?;
    }
    for (p, &(x, _)) in s.points.iter().zip(&pts) {
        if let Some((lo, hi)) = p.bar {
            let (lo, hi) = (place.at(p.x, lo).0 .1, place.at(p.x, hi).0 .1);
            let (bx, top) = chart.backend_coord(&(x, hi));
            let (_, bottom) = chart.backend_coord(&(x, lo));
            for seg in [
                vec![(bx, top), (bx, bottom)],
                vec![(bx - 4, top), (bx + 4, top)],
                vec![(bx - 4, bottom), (bx + 4, bottom)],
            ] {
                root.draw(&PathElement::new(seg, color.stroke_width(1)))
                    .map_err(err)?;
            }
        }
    }
    let mut clamped = false;
    for ((xy, off), p) in placed.iter().zip(&s.points) {
        let at = chart.backend_coord(xy);
        if p.mark || *off {
            marker(root, at, s.look, !s.baseline)?;
        }
        if *off {
            clamped = true;
            let font = (FONT, 12)
                .into_font()
                .color(&color)
                .pos(Pos::new(HPos::Center, VPos::Bottom));
            root.draw(&Text::new("0", (at.0, at.1 - 7), font))
                .map_err(err)?;
        }
    }
    Ok(clamped)
}

/// An axis title, saying "log scale" exactly when the drawn axis is one.
fn axis_title(axis: &Axis, scale: Scale) -> String {
    match scale {
        Scale::Log(_) => format!("{} — log scale", axis.label),
        Scale::Linear => axis.label.clone(),
    }
}

/// The legend's note: the chart's own, the reference line's label and, when a value sat on
/// the bottom edge, what that means.
fn full_note(c: &LineChart, clamped: bool) -> String {
    let mut note = c.note.clone();
    if let Some((_, text)) = &c.reference {
        note.push_str(&format!("\ngrey line: {text}"));
    }
    if clamped {
        note.push_str("\nmarked 0 on the bottom edge:\na value of 0 (off the log scale)");
    }
    note
}

/// Draws `c` as an SVG document.
pub fn line_chart(c: &LineChart) -> anyhow::Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (W, H)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let titled = root.titled(&c.title, (FONT, 20)).map_err(err)?;
        let (left, right) = titled.split_horizontally(W - LEGEND_W);
        let plot = left.titled(&c.subtitle, (FONT, 13)).map_err(err)?;

        let (xs, ys) = extents(c);
        let (sx, x0, x1, xticks) = layout(&c.x, &xs);
        let (sy, y0, y1, yticks) = layout(&c.y, &ys);
        let xpad = if c.x.ticks.is_none() && sx == Scale::Linear {
            (x1 - x0) * 0.03
        } else {
            0.0
        };
        let (x0, x1) = (if c.x.from_zero { x0 } else { x0 - xpad }, x1 + xpad);
        let mut chart = ChartBuilder::on(&plot)
            .margin(14)
            .x_label_area_size(56)
            .y_label_area_size(96)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(0)
            .y_labels(0)
            .x_desc(axis_title(&c.x, sx))
            .y_desc(axis_title(&c.y, sy))
            .axis_desc_style((FONT, 15))
            .draw()
            .map_err(err)?;
        // Grid and tick labels at our own ticks.
        for &t in &xticks {
            if t < x0 - 1e-9 || t > x1 + 1e-9 {
                continue;
            }
            let text = (c.x.fmt)(sx.from(t));
            grid_line(&mut chart, &root, (t, y0), (t, y1), text, Side::Below)?;
        }
        for &t in &yticks {
            if t < y0 - 1e-9 || t > y1 + 1e-9 {
                continue;
            }
            let text = (c.y.fmt)(sy.from(t));
            grid_line(&mut chart, &root, (x0, t), (x1, t), text, Side::Left)?;
        }
        if let Some((r, _)) = &c.reference {
            reference_line(&mut chart, sy.to(*r), (x0, x1))?;
        }
        let width = chart.plotting_area().dim_in_pixel().0.max(1);
        let scaled: Vec<f64> = xs.iter().map(|&x| sx.to(x)).collect();
        let dx = dodges(c, (x1 - x0) / f64::from(width), &scaled);
        let mut entries = Vec::new();
        let mut clamped = false;
        for (s, &dx) in c.series.iter().zip(&dx) {
            let place = Placing {
                sx,
                sy,
                dx,
                floor: y0,
            };
            clamped |= draw_series(&mut chart, &root, s, place)?;
            entries.push((s.name.clone(), s.baseline, s.look));
        }
        legend(&right, &entries, &full_note(c, clamped))?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(v: f64) -> String {
        format!("{v}")
    }

    #[test]
    fn linear_and_log_layouts() {
        let a = Axis::linear("x", plain);
        let (s, lo, hi, ticks) = layout(&a, &[3.0, 97.0]);
        assert_eq!(s, Scale::Linear);
        assert_eq!(lo, 0.0);
        assert!(hi >= 97.0);
        assert_eq!(ticks[..3], [0.0, 20.0, 40.0]);
        let l = Axis::log("y", plain);
        let (s, lo, hi, ticks) = layout(&l, &[15.0, 72_000.0]);
        assert_eq!(s, Scale::Log(10.0));
        assert!(lo <= 15f64.log10() && hi >= 72_000f64.log10());
        // Whole decades around the data: 10 ns to 100 µs.
        assert_eq!(ticks, vec![1.0, 2.0, 3.0, 4.0, 5.0]);
        // A narrow span stays linear even when log was asked for.
        assert_eq!(layout(&l, &[50.0, 90.0]).0, Scale::Linear);
    }

    #[test]
    fn a_chart_is_an_svg_document_naming_its_series() {
        let c = LineChart {
            title: "T <&>".into(),
            subtitle: "s".into(),
            x: Axis::linear("threads", plain),
            y: Axis::log("throughput (op/s)", plain),
            series: vec![
                Series {
                    name: "ticket".into(),
                    baseline: true,
                    look: look("ticket"),
                    points: vec![
                        Pt::new(1.0, 1e8, Some((9e7, 1.1e8))),
                        Pt::new(2.0, 2e7, None),
                    ],
                },
                Series {
                    name: "glb".into(),
                    baseline: false,
                    look: look("glb"),
                    points: vec![Pt::new(1.0, 5e7, None)],
                },
            ],
            reference: Some((1e8, "ref".into())),
            note: "bars: min–max".into(),
        };
        let svg = line_chart(&c).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        assert!(svg.trim_end().ends_with("</svg>"));
        for s in [
            "ticket",
            "glb",
            "threads",
            "throughput (op/s)",
            "T &lt;&amp;&gt;",
        ] {
            assert!(svg.contains(s), "{s} missing");
        }
        let rows = [Row {
            label: "a".into(),
            baseline: false,
            look: look("ticket"),
            values: vec![0.9, 1.1],
        }];
        let svg = dot_rows("f", "s", &Axis::linear("share", plain), &rows, 1.0).unwrap();
        assert!(texts(&svg).iter().any(|t| t == "a"), "{svg}");
    }

    /// The contents of every `<text>` element.
    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                let body = &t[t.find('>')? + 1..t.find("</text>")?];
                Some(body.trim().to_string())
            })
            .collect()
    }
}
