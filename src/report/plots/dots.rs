//! Dot plots: one row per lock, one dot per thread, with a vertical reference line.

use plotters::prelude::*;

use super::{err, grid_line, layout, marker, Axis, Look, Side, FONT, H, W};

/// One row of a dot plot: a label and its values.
#[derive(Clone, Debug)]
pub struct Row {
    /// Label written left of the row.
    pub label: String,
    /// Drawn with hollow markers.
    pub baseline: bool,
    /// Colour and marker (as [`Series::look`]).
    pub look: Look,
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
            grid_line(
                &mut chart,
                &root,
                (x0, y),
                (x1, y),
                r.label.clone(),
                Side::Left,
            )?;
            for &v in &r.values {
                marker(&root, chart.backend_coord(&(v, y)), r.look, !r.baseline)?;
            }
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}
