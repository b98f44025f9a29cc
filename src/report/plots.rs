//! The plots of `report`, drawn with plotters as SVG: line charts with error bars, percentile
//! spectra and per-thread dot rows. Every plot has titled axes with units and its legend in a
//! margin of its own, so the legend never covers data; lines are told apart by colour, marker
//! and, for baselines, a dashed line with hollow markers, which stays readable with 15 locks.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Width of a plot, px.
pub const W: u32 = 980;
/// Height of a plot, px.
pub const H: u32 = 600;
/// Width of the legend margin, px.
const LEGEND_W: u32 = 250;
const FONT: &str = "sans-serif";

/// Okabe–Ito (without its yellow, too pale on white) and four of Tol's colours.
const PALETTE: [RGBColor; 10] = [
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0x56, 0xB4, 0xE9),
    RGBColor(0x00, 0x00, 0x00),
    RGBColor(0x88, 0x22, 0x55),
    RGBColor(0x99, 0x99, 0x33),
    RGBColor(0x33, 0x22, 0x88),
];
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
    /// Colour and marker: the lock's index in the report, so a lock looks alike in every plot.
    pub style: usize,
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

fn style_of(i: usize) -> (RGBColor, usize) {
    (PALETTE[i % PALETTE.len()], i % 4)
}

/// A marker of one of four shapes at pixel `(x, y)`.
fn marker<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
    shape: usize,
    color: RGBColor,
    filled: bool,
) -> anyhow::Result<()> {
    let style = if filled {
        color.filled()
    } else {
        color.stroke_width(2)
    };
    match shape {
        0 => area.draw(&Circle::new((x, y), 4, style)),
        1 => area.draw(&TriangleMarker::new((x, y), 6, style)),
        2 => area.draw(&Rectangle::new([(x - 4, y - 4), (x + 4, y + 4)], style)),
        _ => area.draw(&Polygon::new(
            vec![(x, y - 6), (x + 5, y), (x, y + 6), (x - 5, y)],
            style,
        )),
    }
    .map_err(err)?;
    if !filled && shape == 3 {
        // Polygons are always filled: punch the hollow one out.
        area.draw(&Polygon::new(
            vec![(x, y - 3), (x + 2, y), (x, y + 3), (x - 2, y)],
            WHITE.filled(),
        ))
        .map_err(err)?;
    }
    Ok(())
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
    entries: &[(String, bool, usize)],
    note: &str,
) -> anyhow::Result<()> {
    let (_, h) = area.dim_in_pixel();
    let step = (((h as i32) - 80) / entries.len().max(1) as i32).clamp(12, 22);
    let font = (FONT, 13).into_font();
    let mut y = 40;
    for (name, baseline, i) in entries {
        let (color, shape) = style_of(*i);
        let line = color.stroke_width(2);
        if *baseline {
            for x0 in [8, 22, 36] {
                area.draw(&PathElement::new(vec![(x0, y), (x0 + 8, y)], line))
                    .map_err(err)?;
            }
        } else {
            area.draw(&PathElement::new(vec![(8, y), (44, y)], line))
                .map_err(err)?;
        }
        marker(area, (26, y), shape, color, !*baseline)?;
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
    let small = (FONT, 12).into_font().color(&RGBColor(0x55, 0x55, 0x55));
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

/// A horizontal reference line at `ry` (plot coordinates) across `x0..x1`, labelled `text` at
/// its right end.
fn reference_line(
    chart: &mut Chart,
    root: &DrawingArea<SVGBackend, Shift>,
    ry: f64,
    text: &str,
    (x0, x1): (f64, f64),
) -> anyhow::Result<()> {
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(x0, ry), (x1, ry)],
            RGBColor(0x80, 0x80, 0x80).stroke_width(1),
        )))
        .map_err(err)?;
    let (px, py) = chart.backend_coord(&(x1, ry));
    root.draw(&Text::new(
        text.to_string(),
        (px - 4, py - 4),
        (FONT, 12)
            .into_font()
            .color(&RGBColor(0x55, 0x55, 0x55))
            .pos(Pos::new(HPos::Right, VPos::Bottom)),
    ))
    .map_err(err)?;
    Ok(())
}

/// One series: its line (dashed for a baseline), its bars and its markers.
fn draw_series(
    chart: &mut Chart,
    root: &DrawingArea<SVGBackend, Shift>,
    s: &Series,
    (sx, sy): (Scale, Scale),
) -> anyhow::Result<()> {
    let (color, shape) = style_of(s.style);
    let pts: Vec<(f64, f64)> = s.points.iter().map(|p| (sx.to(p.x), sy.to(p.y))).collect();
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
    for p in &s.points {
        if let Some((lo, hi)) = p.bar {
            chart
                .draw_series(std::iter::once(ErrorBar::new_vertical(
                    sx.to(p.x),
                    sy.to(lo),
                    sy.to(p.y),
                    sy.to(hi),
                    color.stroke_width(1),
                    8,
                )))
                .map_err(err)?;
        }
    }
    for (&(x, y), p) in pts.iter().zip(&s.points) {
        if p.mark {
            marker(
                root,
                chart.backend_coord(&(x, y)),
                shape,
                color,
                !s.baseline,
            )?;
        }
    }
    Ok(())
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
            .x_desc(c.x.label.as_str())
            .y_desc(c.y.label.as_str())
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
        if let Some((r, text)) = &c.reference {
            reference_line(&mut chart, &root, sy.to(*r), text, (x0, x1))?;
        }
        let mut entries = Vec::new();
        for s in &c.series {
            draw_series(&mut chart, &root, s, (sx, sy))?;
            entries.push((s.name.clone(), s.baseline, s.style));
        }
        legend(&right, &entries, &c.note)?;
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// One row of a dot plot: a label and its values.
#[derive(Clone, Debug)]
pub struct Row {
    /// Label written left of the row.
    pub label: String,
    /// Drawn with hollow markers.
    pub baseline: bool,
    /// Colour and marker (as [`Series::style`]).
    pub style: usize,
    /// The values (one dot each).
    pub values: Vec<f64>,
}

/// Rows of dots (one row per lock, one dot per thread), with a vertical reference line.
pub fn dot_rows(
    title: &str,
    subtitle: &str,
    x: &Axis,
    rows: &[Row],
    reference: f64,
) -> anyhow::Result<String> {
    let height = H.max(120 + 28 * rows.len() as u32);
    let label_w = rows
        .iter()
        .map(|r| r.label.chars().count())
        .max()
        .unwrap_or(4) as u32
        * 8
        + 20;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (W, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let titled = root.titled(title, (FONT, 20)).map_err(err)?;
        let plot = titled.titled(subtitle, (FONT, 13)).map_err(err)?;
        let mut xs: Vec<f64> = rows.iter().flat_map(|r| r.values.clone()).collect();
        xs.push(reference);
        let (_, x0, x1, xticks) = layout(x, &xs);
        let n = rows.len().max(1) as f64;
        let mut chart = ChartBuilder::on(&plot)
            .margin(14)
            .margin_right(40)
            .x_label_area_size(56)
            .y_label_area_size(label_w)
            .build_cartesian_2d(x0..x1, -0.5..n - 0.5)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(0)
            .y_labels(0)
            .x_desc(x.label.as_str())
            .axis_desc_style((FONT, 15))
            .draw()
            .map_err(err)?;
        for &t in &xticks {
            grid_line(
                &mut chart,
                &root,
                (t, -0.5),
                (t, n - 0.5),
                (x.fmt)(t),
                Side::Below,
            )?;
        }
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(reference, -0.5), (reference, n - 0.5)],
                RGBColor(0x80, 0x80, 0x80).stroke_width(1),
            )))
            .map_err(err)?;
        for (i, r) in rows.iter().enumerate() {
            // First row on top.
            let y = n - 1.0 - i as f64;
            let (color, shape) = style_of(r.style);
            grid_line(
                &mut chart,
                &root,
                (x0, y),
                (x1, y),
                r.label.clone(),
                Side::Left,
            )?;
            for &v in &r.values {
                marker(
                    &root,
                    chart.backend_coord(&(v, y)),
                    shape,
                    color,
                    !r.baseline,
                )?;
            }
        }
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
                    style: 0,
                    points: vec![
                        Pt::new(1.0, 1e8, Some((9e7, 1.1e8))),
                        Pt::new(2.0, 2e7, None),
                    ],
                },
                Series {
                    name: "glb".into(),
                    baseline: false,
                    style: 1,
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
            style: 0,
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
