//! Charts as SVG strings. Preparing what to draw is done by the caller
//! (plain numbers and labels); this module only draws, with plotters' SVG
//! backend, which escapes every text it writes. No fonts are read: text is
//! SVG `<text>` for the browser to set.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::format::size_short;
pub use super::ladder_chart::ladder_chart;

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

pub(super) const PALETTE: [RGBColor; 6] = [
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

pub(super) fn draw<F>(w: u32, h: u32, f: F) -> String
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

/// Whether every size is a power of two (a sweep of 1 KiB, 2 KiB...).
fn powers_of_two(xs: &[f64]) -> bool {
    !xs.is_empty()
        && xs
            .iter()
            .all(|x| *x >= 1.0 && x.fract() == 0.0 && (*x as u64).is_power_of_two())
}

/// Powers of two from `x0` to `x1`, at most nine of them, evenly spaced.
fn pow2_ticks(x0: f64, x1: f64) -> Vec<f64> {
    let (lo, hi) = (x0.log2().ceil() as i32, x1.log2().floor() as i32);
    if hi < lo {
        return vec![];
    }
    let step = ((hi - lo) / 8 + 1).max(1);
    (lo..=hi)
        .filter(|e| (e - lo) % step == 0)
        .map(|e| 2f64.powi(e))
        .collect()
}

/// Powers of ten from `x0` to `x1`, at most nine of them.
fn pow10_ticks(x0: f64, x1: f64) -> Vec<f64> {
    let (lo, hi) = (x0.log10().ceil() as i32, x1.log10().floor() as i32);
    let step = ((hi - lo) / 8 + 1).max(1);
    (lo..=hi)
        .filter(|e| (e - lo) % step == 0)
        .map(|e| 10f64.powi(e))
        .collect()
}

/// A GB/s tick with as many digits as its size needs.
fn gbs_tick(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0}")
    } else if v >= 0.01 {
        trim_zeros(format!("{v:.3}"))
    } else {
        format!("{v:.0e}")
    }
}

fn trim_zeros(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Bandwidth against message size on log-log axes; the fit dashed with its
/// m* marked; the expected ceiling of the path, when known, as a grey line.
/// Sizes that are all powers of two get a KiB/MiB/GiB axis, others a
/// decimal one. Axis labels carry units (GB/s = 1e9 bytes/s).
pub fn sweep_chart(
    title: &str,
    series: &[Series],
    fits: &[FitLine],
    y_label: &str,
    ceiling: Option<(f64, &str)>,
) -> String {
    size_chart(title, series, fits, y_label, ceiling, 1e9)
}

/// Latency (seconds, drawn in microseconds) against message size, on its
/// own log-log axes: the points are the measured times, not bandwidth.
pub fn latency_chart(title: &str, series: &[Series]) -> String {
    size_chart(
        title,
        series,
        &[],
        "latency, microseconds (log)",
        None,
        1e-6,
    )
}

/// The ranges of a size chart and its size ticks.
struct Axes {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    /// Every size a power of two: KiB/MiB/GiB ticks.
    pow2: bool,
    ticks: Vec<f64>,
}

fn axes(series: &[Series], ceiling: Option<(f64, &str)>, unit: f64) -> Option<Axes> {
    let all_x: Vec<f64> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    let xs = bounds(all_x.iter().copied());
    let ys = bounds(
        series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1 / unit))
            .chain(ceiling.map(|c| c.0 / unit)),
    );
    let (Some((x0, x1)), Some((y0, y1))) = (xs, ys) else {
        return None;
    };
    let pow2 = powers_of_two(&all_x);
    let ticks = if pow2 {
        pow2_ticks(x0, x1)
    } else {
        pow10_ticks(x0, x1)
    };
    Some(Axes {
        x0,
        x1,
        y0,
        y1,
        pow2,
        ticks,
    })
}

/// The first row (0 = top) where an m* label spanning `from..to` pixels
/// meets no label placed before, which it then joins: labels of knees
/// close in size go one under the other instead of over each other.
fn knee_row(placed: &mut Vec<(i32, i32, i32)>, from: i32, to: i32) -> i32 {
    let row = (0..)
        .find(|r| {
            !placed
                .iter()
                .any(|(a, b, pr)| pr == r && from < *b && *a < to)
        })
        .unwrap_or(0);
    placed.push((from, to, row));
    row
}

/// Values against message size; `unit` divides each value for the y axis
/// (1e9: bytes/s as GB/s; 1e-6: seconds as microseconds).
fn size_chart(
    title: &str,
    series: &[Series],
    fits: &[FitLine],
    y_label: &str,
    ceiling: Option<(f64, &str)>,
    unit: f64,
) -> String {
    let Some(a) = axes(series, ceiling, unit) else {
        return String::new();
    };
    let (x0, x1, y0, y1, pow2, ticks) = (a.x0, a.x1, a.y0, a.y1, a.pow2, a.ticks);
    draw(640, 360, |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, ("sans-serif", 17))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(
                (x0..x1).log_scale().with_key_points(ticks.clone()),
                (y0..y1).log_scale(),
            )?;
        let x_desc = if pow2 {
            "message size (bytes, log; KiB = 1024 bytes)"
        } else {
            "message size (bytes, log; kB = 1e3 bytes)"
        };
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_label)
            .x_label_formatter(&|v| {
                if pow2 {
                    size_short(*v)
                } else {
                    size_decimal(*v)
                }
            })
            .y_label_formatter(&|v| gbs_tick(*v))
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 14))
            .draw()?;
        for (i, s) in series.iter().enumerate() {
            let c = PALETTE[i % PALETTE.len()];
            let pts: Vec<(f64, f64)> = s
                .points
                .iter()
                .map(|p| (p.0, p.1 / unit))
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
        if let Some((c, label)) = ceiling {
            let grey = RGBColor(90, 90, 90);
            chart
                .draw_series(DashedLineSeries::new(
                    vec![(x0, c / unit), (x1, c / unit)],
                    10,
                    5,
                    grey.stroke_width(2),
                ))?
                .label(format!("expected ceiling: {label}"))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], grey.stroke_width(2))
                });
        }
        draw_fits(&mut chart, root, fits, (x0, x1, y0, y1), unit)?;
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .label_font(("sans-serif", 14))
            .position(if unit < 1.0 {
                // Latency rises to the right: the legend goes top left.
                SeriesLabelPosition::UpperLeft
            } else {
                SeriesLabelPosition::LowerRight
            })
            .draw()?;
        Ok(())
    })
}

/// Each fit's dashed curve and labelled knee m*; apart, so `size_chart` reads layer by layer.
fn draw_fits<X, Y>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    fits: &[FitLine],
    (x0, x1, y0, y1): (f64, f64, f64, f64),
    unit: f64,
) -> Result<(), DrawingAreaErrorKind<std::io::Error>>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let mut knees: Vec<(i32, i32, i32)> = Vec::new();
    for (fi, f) in fits.iter().enumerate() {
        let mut pts = Vec::new();
        let mut m = f.from_bytes.max(x0);
        while m <= f.to_bytes.min(x1) * 1.0001 {
            pts.push((m, m / (f.alpha_s + m / f.beta_bytes_per_s) / unit));
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
            let text = format!("m* {}", size_short(mstar));
            let (x, y) = chart.backend_coord(&(mstar, y1 / 1.6));
            let w = super::ladder_chart::text_px(&text, 14.0 / 1.24) as i32 + 4;
            let row = knee_row(&mut knees, x, x + w);
            let (x, y) = (x, y + 14 * row);
            let under = WHITE.mix(0.85).filled();
            root.draw(&Rectangle::new(
                [(x - 2, y - 1), (x + w - 2, y + 13)],
                under,
            ))?;
            root.draw(&Text::new(text, (x, y), ("sans-serif", 14)))?;
        }
    }
    Ok(())
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
                ("sans-serif", 17),
            )
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(1u32..max_nics, (y_lo..y_hi).log_scale())?;
        chart
            .configure_mesh()
            .x_desc("network adapters per node")
            .y_desc("GB/s per GPU (1e9 bytes/s, log)")
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 14))
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
            .label_font(("sans-serif", 14))
            .position(SeriesLabelPosition::LowerRight)
            .draw()?;
        Ok(())
    })
}

#[cfg(test)]
mod axis_tests {
    use super::*;

    #[test]
    fn knee_labels_close_in_size_go_one_under_the_other() {
        let mut placed = Vec::new();
        assert_eq!(knee_row(&mut placed, 270, 350), 0);
        assert_eq!(knee_row(&mut placed, 320, 400), 1);
        assert_eq!(knee_row(&mut placed, 340, 420), 2);
        assert_eq!(knee_row(&mut placed, 360, 440), 0);
        assert_eq!(knee_row(&mut placed, 100, 180), 0);
    }

    #[test]
    fn power_of_two_sweeps_get_binary_ticks_and_others_decimal() {
        assert!(powers_of_two(&[1024.0, 2048.0, 1048576.0]));
        assert!(!powers_of_two(&[1000.0, 2048.0]));
        let t = pow2_ticks(4.0, 8.0 * 1073741824.0);
        assert!(t.len() <= 9 && t.iter().all(|x| (*x as u64).is_power_of_two()));
        assert_eq!(size_short(t[0]), "4 B");
        assert_eq!(pow10_ticks(5.0, 2000.0), [10.0, 100.0, 1000.0]);
        assert_eq!(gbs_tick(0.25), "0.25");
        assert_eq!(gbs_tick(120.0), "120");
    }
}
