//! Charts as SVG strings. Preparing what to draw is done by the caller
//! (plain numbers and labels); this module only draws, with plotters' SVG
//! backend, which escapes every text it writes. No fonts are read: text is
//! SVG `<text>` for the browser to set.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::format::size_short;
use crate::models::ladder::{LABEL, TIERS};

/// Class colours, shared with the CSS of the matrices.
pub fn class_colour(class: &str) -> RGBColor {
    match class {
        "self" => RGBColor(200, 200, 200),
        "direct-link" => RGBColor(46, 139, 87),
        "pcie-switch" => RGBColor(154, 205, 50),
        "pcie-host" => RGBColor(255, 165, 0),
        "cross-socket" => RGBColor(220, 20, 60),
        _ => RGBColor(150, 150, 150),
    }
}

const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// A series of (size in bytes, bandwidth in bytes/s).
pub struct Series {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// An alpha-beta fit to draw over a sweep (MODEL).
pub struct FitLine {
    pub alpha_s: f64,
    pub beta_bytes_per_s: f64,
    pub from_bytes: f64,
    pub to_bytes: f64,
}

fn draw<F>(w: u32, h: u32, f: F) -> String
where
    F: FnOnce(
        &DrawingArea<SVGBackend<'_>, Shift>,
    ) -> Result<(), DrawingAreaErrorKind<std::io::Error>>,
{
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (w, h)).into_drawing_area();
        if root.fill(&WHITE).is_ok() && f(&root).is_ok() {
            let _ = root.present();
        }
    }
    s
}

/// A log axis around the values: normal positive numbers only, and at
/// most 15 decades (a denormal such as 1e-320 made plotters' key points
/// loop for ever; the data is checked before, this is the last guard).
fn bounds(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = values
        .filter(|v| v.is_normal() && *v > 0.0 && *v < 1e30)
        .fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
    (lo <= hi).then(|| ((lo / 1.5).max(hi * 1e-15), hi * 1.5))
}

/// Decimal tick labels for a log axis whose ticks fall on powers of ten:
/// `10 B`, `1 kB` (1e3 bytes), `10 MB` (1e7 bytes).
fn size_decimal(v: f64) -> String {
    for (m, u) in [(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")] {
        if v >= m {
            return format!("{} {u}", trim(v / m));
        }
    }
    format!("{} B", trim(v))
}

fn trim(v: f64) -> String {
    let s = format!("{v:.1}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

/// Bandwidth against message size on log-log axes; the fit dashed with its
/// m* marked. Axis labels carry units (GB/s = 1e9 bytes/s).
pub fn sweep_chart(title: &str, series: &[Series], fits: &[FitLine], y_label: &str) -> String {
    let xs = bounds(series.iter().flat_map(|s| s.points.iter().map(|p| p.0)));
    let ys = bounds(
        series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1 / 1e9)),
    );
    let (Some((x0, x1)), Some((y0, y1))) = (xs, ys) else {
        return String::new();
    };
    draw(640, 360, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 14))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())?;
        chart
            .configure_mesh()
            .x_desc("message size (bytes, log; kB = 1e3 bytes)")
            .y_desc(y_label)
            .x_label_formatter(&|v| size_decimal(*v))
            .y_label_formatter(&|v| format!("{v:.3}"))
            .label_style(("sans-serif", 11))
            .draw()?;
        for (i, s) in series.iter().enumerate() {
            let c = PALETTE[i % PALETTE.len()];
            let pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .map(|p| (p.0, p.1 / 1e9))
                .filter(|p| p.1 > 0.0)
                .collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))?
                .label(s.label.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2))
                });
            chart.draw_series(pts.iter().map(|p| Circle::new(*p, 3, c.filled())))?;
        }
        for (fi, f) in fits.iter().enumerate() {
            let mut pts = Vec::new();
            let mut m = f.from_bytes.max(x0);
            while m <= f.to_bytes.min(x1) * 1.0001 {
                pts.push((m, m / (f.alpha_s + m / f.beta_bytes_per_s) / 1e9));
                m *= 1.25;
            }
            let fit_colour = RGBColor(200, 30, 30);
            let drawn =
                chart.draw_series(DashedLineSeries::new(pts, 7, 4, fit_colour.stroke_width(2)))?;
            if fi == 0 {
                drawn
                    .label("alpha-beta fit, one line per segment (MODEL)")
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 16, y)], fit_colour.stroke_width(2))
                    });
            }
            let mstar = f.alpha_s * f.beta_bytes_per_s;
            if mstar > x0 && mstar < x1 {
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(mstar, y0), (mstar, y1)],
                    RGBColor(120, 120, 120),
                )))?;
                chart.draw_series(std::iter::once(Text::new(
                    format!("m* {}", size_short(mstar)),
                    (mstar, y1 / 1.6),
                    ("sans-serif", 11),
                )))?;
            }
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .label_font(("sans-serif", 11))
            .position(SeriesLabelPosition::LowerRight)
            .draw()?;
        Ok(())
    })
}

/// The tier ladder as bands (ILLUSTRATIVE), with this node's figures on it.
pub fn ladder_chart(points: &[(String, f64)]) -> String {
    let n = points.len().max(1) as f64;
    draw(720, 420, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(format!("Tier ladder: {LABEL}"), ("sans-serif", 13))
            .margin(10)
            .x_label_area_size(20)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..(n + 4.5), (1e8f64..1e14).log_scale())?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .disable_x_axis()
            .y_desc("bandwidth, GB/s (1e9 bytes/s, log)")
            .y_label_formatter(&|v| format!("{}", v / 1e9))
            .label_style(("sans-serif", 11))
            .draw()?;
        for (i, t) in TIERS.iter().enumerate() {
            let c = PALETTE[i % PALETTE.len()].mix(0.12);
            chart.draw_series(std::iter::once(Rectangle::new(
                [
                    (0.0, t.bandwidth_low_bytes_per_s),
                    (n + 4.5, t.bandwidth_high_bytes_per_s),
                ],
                c.filled(),
            )))?;
            chart.draw_series(std::iter::once(Text::new(
                t.name.to_string(),
                (
                    n + 0.3 + 2.1 * (i % 2) as f64,
                    (t.bandwidth_low_bytes_per_s * t.bandwidth_high_bytes_per_s).sqrt(),
                ),
                ("sans-serif", 10),
            )))?;
        }
        for (i, (label, bw)) in points.iter().enumerate() {
            let x = i as f64 + 0.5;
            let c = PALETTE[i % PALETTE.len()];
            chart.draw_series(std::iter::once(Circle::new((x, *bw), 5, c.filled())))?;
            chart.draw_series(std::iter::once(Text::new(
                label.clone(),
                (x, *bw * 1.5),
                ("sans-serif", 9),
            )))?;
        }
        Ok(())
    })
}

/// Per-GPU injection share against adapters per node, with the scale-up
/// bandwidth as a line and this node marked (MODEL).
pub fn cliff_chart(
    gpus: u32,
    nic_bytes_per_s: f64,
    scaleup_bytes_per_s: f64,
    node_nics: u32,
) -> String {
    let max_nics = (gpus * 2).max(node_nics + 1).max(2);
    let share = |n: u32| f64::from(n) * nic_bytes_per_s / f64::from(gpus) / 1e9;
    let y_hi = (share(max_nics).max(scaleup_bytes_per_s / 1e9)) * 2.0;
    let y_lo = share(1) / 2.0;
    draw(640, 360, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(
                format!("MODEL: per-GPU injection share, {gpus} GPUs per node"),
                ("sans-serif", 14),
            )
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(1u32..max_nics, (y_lo..y_hi).log_scale())?;
        chart
            .configure_mesh()
            .x_desc("network adapters per node")
            .y_desc("GB/s per GPU (1e9 bytes/s, log)")
            .label_style(("sans-serif", 11))
            .draw()?;
        let c = PALETTE[0];
        chart
            .draw_series(LineSeries::new(
                (1..=max_nics).map(|n| (n, share(n))),
                c.stroke_width(2),
            ))?
            .label("per-GPU share = adapters x adapter rate / GPUs")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.stroke_width(2)));
        let s = PALETTE[2];
        chart
            .draw_series(LineSeries::new(
                [
                    (1, scaleup_bytes_per_s / 1e9),
                    (max_nics, scaleup_bytes_per_s / 1e9),
                ],
                s.stroke_width(2),
            ))?
            .label("scale-up bandwidth per GPU")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], s.stroke_width(2)));
        let r = PALETTE[3];
        chart
            .draw_series(std::iter::once(Circle::new(
                (node_nics, share(node_nics)),
                6,
                r.filled(),
            )))?
            .label("this node")
            .legend(move |(x, y)| Circle::new((x + 8, y), 4, r.filled()));
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .label_font(("sans-serif", 11))
            .position(SeriesLabelPosition::LowerRight)
            .draw()?;
        Ok(())
    })
}

/// A box of the node drawing.
pub struct NodeBox {
    pub id: String,
    pub label: String,
    pub group: String,
    pub is_gpu: bool,
}

/// An edge of the node drawing, coloured by class.
pub struct Edge {
    pub a: String,
    pub b: String,
    pub class: String,
    pub label: String,
}

/// The node: devices grouped by NUMA node / socket in columns, GPUs above
/// NICs, edges coloured by class (only the best class per device pair is
/// drawn, so the picture stays readable).
pub fn node_diagram(boxes: &[NodeBox], edges: &[Edge]) -> String {
    let mut groups: Vec<&str> = boxes.iter().map(|b| b.group.as_str()).collect();
    groups.sort_unstable();
    groups.dedup();
    let col_w = 170i32;
    let width = (groups.len() as i32 * col_w + 40).max(400);
    let per_col = groups
        .iter()
        .map(|g| boxes.iter().filter(|b| b.group == *g).count())
        .max()
        .unwrap_or(1) as i32;
    let height = (per_col * 46 + 120).max(220);
    let pos = |id: &str| -> Option<(i32, i32)> {
        let b = boxes.iter().find(|b| b.id == id)?;
        let gi = groups.iter().position(|g| *g == b.group)? as i32;
        let mut in_group: Vec<&NodeBox> = boxes.iter().filter(|x| x.group == b.group).collect();
        in_group.sort_by_key(|x| !x.is_gpu);
        let k = in_group.iter().position(|x| x.id == id)? as i32;
        Some((30 + gi * col_w, 60 + k * 46))
    };
    draw(width as u32, height as u32, |root| {
        for (gi, g) in groups.iter().enumerate() {
            let x = 20 + gi as i32 * col_w;
            root.draw(&Rectangle::new(
                [(x, 30), (x + col_w - 20, height - 10)],
                RGBColor(235, 240, 250).filled(),
            ))?;
            root.draw(&Text::new(g.to_string(), (x + 6, 36), ("sans-serif", 12)))?;
        }
        for e in edges {
            let (Some(a), Some(b)) = (pos(&e.a), pos(&e.b)) else {
                continue;
            };
            let c = class_colour(&e.class);
            let (a, b) = ((a.0 + 60, a.1 + 15), (b.0 + 60, b.1 + 15));
            root.draw(&PathElement::new(vec![a, b], c.stroke_width(2)))?;
            if !e.label.is_empty() {
                root.draw(&Text::new(
                    e.label.clone(),
                    ((a.0 + b.0) / 2, (a.1 + b.1) / 2),
                    ("sans-serif", 9),
                ))?;
            }
        }
        for b in boxes {
            let Some((x, y)) = pos(&b.id) else { continue };
            let fill = if b.is_gpu {
                RGBColor(225, 245, 225)
            } else {
                RGBColor(255, 240, 220)
            };
            root.draw(&Rectangle::new([(x, y), (x + 120, y + 30)], fill.filled()))?;
            root.draw(&Rectangle::new(
                [(x, y), (x + 120, y + 30)],
                BLACK.stroke_width(1),
            ))?;
            root.draw(&Text::new(
                b.label.clone(),
                (x + 5, y + 10),
                ("sans-serif", 11),
            ))?;
        }
        Ok(())
    })
}
