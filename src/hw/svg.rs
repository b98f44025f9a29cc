//! A small SVG scatter plot: points coloured and shaped by series (a lock keeps the colour and
//! marker of every other plot, [`look`]), a least-squares line, axes with ticks.

use std::fmt::Write as _;

use crate::report::plots::style::marker_outline;
use crate::report::plots::{look, nice_step};

/// One point.
#[derive(Clone, Debug)]
pub struct Point {
    /// Horizontal value.
    pub x: f64,
    /// Vertical value.
    pub y: f64,
    /// Series (colour and legend entry), e.g. the lock.
    pub series: String,
    /// Label written beside the point, e.g. the thread count.
    pub label: String,
}

/// A plot to draw.
#[derive(Clone, Debug)]
pub struct Scatter {
    /// Title line.
    pub title: String,
    /// Second title line (the coefficients).
    pub subtitle: String,
    /// Horizontal axis label.
    pub x_label: String,
    /// Vertical axis label.
    pub y_label: String,
    /// The points.
    pub points: Vec<Point>,
    /// Least-squares line `y = a + b x`, drawn across the data when given.
    pub fit: Option<(f64, f64)>,
}

const W: f64 = 760.0;
const H: f64 = 520.0;
const LEFT: f64 = 90.0;
const RIGHT: f64 = 190.0;
const TOP: f64 = 70.0;
const BOTTOM: f64 = 70.0;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Axis range from 0 (or the data's minimum when negative) to a tick past the maximum.
fn axis(values: impl Iterator<Item = f64>) -> (f64, f64, f64) {
    let (mut lo, mut hi) = (0.0f64, f64::MIN);
    for v in values {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if hi <= lo {
        hi = lo + 1.0;
    }
    let step = nice_step(hi - lo, 5.0);
    ((lo / step).floor() * step, (hi / step).ceil() * step, step)
}

fn fmt_tick(v: f64, step: f64) -> String {
    if step >= 1.0 {
        format!("{v:.0}")
    } else {
        let digits = (-step.log10().floor()) as usize;
        format!("{v:.digits$}")
    }
}

/// Where the data sit on the page: each axis's range and tick step, and the plot area.
struct Frame {
    x: (f64, f64, f64),
    y: (f64, f64, f64),
    pw: f64,
    ph: f64,
}

impl Frame {
    fn of(plot: &Scatter) -> Frame {
        Frame {
            x: axis(plot.points.iter().map(|p| p.x)),
            y: axis(plot.points.iter().map(|p| p.y)),
            pw: W - LEFT - RIGHT,
            ph: H - TOP - BOTTOM,
        }
    }

    fn px(&self, x: f64) -> f64 {
        LEFT + (x - self.x.0) / (self.x.1 - self.x.0) * self.pw
    }

    fn py(&self, y: f64) -> f64 {
        TOP + self.ph - (y - self.y.0) / (self.y.1 - self.y.0) * self.ph
    }
}

/// Renders the plot as a standalone SVG document.
pub fn render(plot: &Scatter) -> String {
    let f = Frame::of(plot);
    let mut series: Vec<&str> = Vec::new();
    for p in &plot.points {
        if !series.contains(&p.series.as_str()) {
            series.push(&p.series);
        }
    }

    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(out, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="{}" y="24" font-size="15" font-weight="bold">{}</text>"#,
        LEFT,
        escape(&plot.title)
    );
    let _ = writeln!(
        out,
        r##"<text x="{}" y="44" fill="#444">{}</text>"##,
        LEFT,
        escape(&plot.subtitle)
    );
    axes(&mut out, &f, plot);
    fit_line(&mut out, &f, plot);
    for p in &plot.points {
        let (sx, sy) = (f.px(p.x), f.py(p.y));
        let title = escape(&format!("{} {}: x {} y {}", p.series, p.label, p.x, p.y));
        out.push_str(&marker(&p.series, (sx, sy), &title));
        if !p.label.is_empty() {
            let _ = writeln!(
                out,
                r##"<text x="{:.1}" y="{:.1}" font-size="10" fill="#555">{}</text>"##,
                sx + 7.0,
                sy - 6.0,
                escape(&p.label)
            );
        }
    }
    // Legend.
    let lx = LEFT + f.pw + 20.0;
    for (i, s) in series.iter().enumerate() {
        let ly = TOP + 10.0 + i as f64 * 20.0;
        out.push_str(&marker(s, (lx, ly), ""));
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
            lx + 12.0,
            ly + 4.0,
            escape(s)
        );
    }
    out.push_str("</svg>\n");
    out
}

/// The marker of `series` (its colour and shape, [`look`]) at `(x, y)`, with a tooltip
/// `title` when not empty.
fn marker(series: &str, (x, y): (f64, f64), title: &str) -> String {
    let l = look(series);
    let paint = format!(
        r##"fill="{}" fill-opacity="0.85" stroke="#222" stroke-width="0.6""##,
        l.hex()
    );
    let tip = if title.is_empty() {
        String::new()
    } else {
        format!("<title>{title}</title>")
    };
    match marker_outline(l.marker, (x, y), 5.0) {
        None => format!(r#"<circle cx="{x:.1}" cy="{y:.1}" r="5" {paint}>{tip}</circle>"#) + "\n",
        Some(pts) => {
            let pts: Vec<String> = pts.iter().map(|(a, b)| format!("{a:.1},{b:.1}")).collect();
            format!(
                r#"<polygon points="{}" {paint}>{tip}</polygon>"#,
                pts.join(" ")
            ) + "\n"
        }
    }
}

/// Grid lines and ticks, the plot's frame and the axis labels.
fn axes(out: &mut String, f: &Frame, plot: &Scatter) {
    let ((x0, x1, xs), (y0, y1, ys), (pw, ph)) = (f.x, f.y, (f.pw, f.ph));
    let mut x = x0;
    while x <= x1 + xs / 2.0 {
        let sx = f.px(x);
        let _ = writeln!(
            out,
            r##"<line x1="{sx:.1}" y1="{TOP}" x2="{sx:.1}" y2="{:.1}" stroke="#e6e6e6"/><text x="{sx:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
            TOP + ph,
            TOP + ph + 18.0,
            fmt_tick(x, xs)
        );
        x += xs;
    }
    let mut y = y0;
    while y <= y1 + ys / 2.0 {
        let sy = f.py(y);
        let _ = writeln!(
            out,
            r##"<line x1="{LEFT}" y1="{sy:.1}" x2="{:.1}" y2="{sy:.1}" stroke="#e6e6e6"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            LEFT + pw,
            LEFT - 8.0,
            sy + 4.0,
            fmt_tick(y, ys)
        );
        y += ys;
    }
    let _ = writeln!(
        out,
        r##"<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>"##
    );
    let _ = writeln!(
        out,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        LEFT + pw / 2.0,
        H - 22.0,
        escape(&plot.x_label)
    );
    let _ = writeln!(
        out,
        r#"<text transform="translate(24 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
        TOP + ph / 2.0,
        escape(&plot.y_label)
    );
}

/// The fit line, clipped to the plot by evaluating it at the data's ends and clamping.
fn fit_line(out: &mut String, f: &Frame, plot: &Scatter) {
    let Some((a, b)) = plot.fit else { return };
    let (lo, hi) = plot
        .points
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), p| {
            (lo.min(p.x), hi.max(p.x))
        });
    let clamp = |v: f64| v.clamp(f.y.0, f.y.1);
    let _ = writeln!(
        out,
        r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#888" stroke-dasharray="6 4"/>"##,
        f.px(lo),
        f.py(clamp(a + b * lo)),
        f.px(hi),
        f.py(clamp(a + b * hi))
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round() {
        assert_eq!(nice_step(10.0, 5.0), 2.0);
        assert_eq!(nice_step(1000.0, 5.0), 200.0);
        assert_eq!(nice_step(0.3, 5.0), 0.05);
        assert_eq!(axis([3.0, 47.0].into_iter()), (0.0, 50.0, 10.0));
        assert_eq!(fmt_tick(0.25, 0.05), "0.25");
    }

    #[test]
    fn renders_points_legend_and_escapes() {
        let plot = Scatter {
            title: "a <b> & c".into(),
            subtitle: "r = 0.9".into(),
            x_label: "RMRs".into(),
            y_label: "events".into(),
            points: vec![
                Point {
                    x: 1.0,
                    y: 2.0,
                    series: "mcs".into(),
                    label: "t2".into(),
                },
                Point {
                    x: 3.0,
                    y: 7.0,
                    series: "tas".into(),
                    label: "t4".into(),
                },
            ],
            fit: Some((0.0, 2.0)),
        };
        let svg = render(&plot);
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert_eq!(
            svg.matches("<circle").count() + svg.matches("<polygon").count(),
            4,
            "two points, two legend entries"
        );
        // Each lock in its own colour, the one it has in every plot.
        for lock in ["mcs", "tas"] {
            let fill = format!("fill=\"{}\"", look(lock).hex());
            assert_eq!(svg.matches(&fill).count(), 2, "{lock}: {svg}");
        }
        assert!(svg.contains("a &lt;b&gt; &amp; c"));
        assert!(svg.contains("stroke-dasharray"));
        assert!(!svg.contains("NaN"));
    }
}
