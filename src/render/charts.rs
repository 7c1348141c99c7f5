//! Charts as SVG strings. Preparing what to draw is done by the caller
//! (plain numbers and labels); this module only draws, with plotters' SVG
//! backend, which escapes every text it writes. No fonts are read: text is
//! SVG `<text>` for the browser to set.
//!
//! The rules every chart keeps live here, once: the SVG opens with a
//! `<title>` naming the chart and a `<desc>` with its key figure
//! ([`titled`]); message sizes are binary (B, KiB, MiB, GiB) on every axis;
//! a log axis always has at least two numbered ticks ([`log_ticks`]); times
//! tick in s, ms, us or ns, each tick with its unit; the legend is drawn
//! under the plot, never over the data ([`legend`]); text colours keep a
//! contrast of at least 4.5:1 on white ([`PALETTE`]).

use plotters::coord::Shift;
use plotters::prelude::*;

use super::format::{gbs_tick, secs_tick, size_short};
pub use super::ladder_chart::{ladder_chart, latency_ladder_chart};
pub use super::model_charts::{Cliff, Curve, cliff_chart, staged_chart};

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

/// Series colours, also used for text (legends, the ladder's labels):
/// each has a contrast of at least 4.5:1 on white (WCAG 2 AA), which the
/// orange and green of the usual palette (2.5:1, 3.4:1) did not.
pub(super) const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(178, 80, 0),
    RGBColor(30, 120, 30),
    RGBColor(200, 30, 30),
    RGBColor(120, 80, 170),
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

/// The plot's height in every size chart; the legend goes below it.
const PLOT_H: u32 = 360;
const LEGEND_ROW: u32 = 18;

/// WCAG 2 contrast ratio of two sRGB colours.
pub fn contrast(a: (u8, u8, u8), b: (u8, u8, u8)) -> f64 {
    let lum = |(r, g, b): (u8, u8, u8)| {
        let c = |v: u8| {
            let v = f64::from(v) / 255.0;
            if v <= 0.03928 {
                v / 12.92
            } else {
                ((v + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * c(r) + 0.7152 * c(g) + 0.0722 * c(b)
    };
    let (x, y) = (lum(a), lum(b));
    (x.max(y) + 0.05) / (x.min(y) + 0.05)
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `svg` with a `<title>` and a `<desc>` as the first children of its
/// `<svg>` element: what a screen reader says and a browser shows on
/// hover. Every chart and map goes through here. Labels may hold text
/// from transcripts (test names), so both are escaped.
pub fn titled(svg: String, title: &str, desc: &str) -> String {
    let Some(open) = svg
        .find("<svg")
        .and_then(|i| svg[i..].find('>').map(|j| i + j + 1))
    else {
        return svg;
    };
    let mut out = String::with_capacity(svg.len() + title.len() + desc.len() + 32);
    out.push_str(&svg[..open]);
    out.push_str(&format!(
        "<title>{}</title><desc>{}</desc>",
        escape(title),
        escape(desc)
    ));
    out.push_str(&svg[open..]);
    out
}

/// Draws into a `w` x `h` SVG and titles it ([`titled`]); a chart whose
/// drawing fails is left empty.
pub(super) fn draw<F>(w: u32, h: u32, title: &str, desc: &str, f: F) -> String
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
    if s.is_empty() {
        return s;
    }
    titled(s, title, desc)
}

/// How a legend entry is drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mark {
    Line,
    Dashed,
    Dot,
}

/// One legend entry: its text, colour and mark.
pub struct Entry {
    pub label: String,
    pub colour: RGBColor,
    pub mark: Mark,
}

/// The height a legend of `n` entries takes under a plot.
pub(super) fn legend_height(n: usize) -> u32 {
    if n == 0 { 0 } else { n as u32 * LEGEND_ROW + 8 }
}

/// The legend in its own strip under the plot: one entry a row, so it
/// never hides a point.
pub(super) fn legend(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    entries: &[Entry],
) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
    for (i, e) in entries.iter().enumerate() {
        let y = 4 + i as i32 * LEGEND_ROW as i32 + LEGEND_ROW as i32 / 2;
        let (x0, x1) = (70, 92);
        let c = e.colour;
        match e.mark {
            Mark::Line => {
                area.draw(&PathElement::new(vec![(x0, y), (x1, y)], c.stroke_width(2)))?
            }
            Mark::Dashed => {
                for k in 0..3 {
                    let a = x0 + k * 8;
                    area.draw(&PathElement::new(
                        vec![(a, y), (a + 5, y)],
                        c.stroke_width(2),
                    ))?;
                }
            }
            Mark::Dot => area.draw(&Circle::new(((x0 + x1) / 2, y), 4, c.filled()))?,
        }
        area.draw(&Text::new(
            e.label.clone(),
            (x1 + 8, y - 7),
            ("sans-serif", 14).into_font(),
        ))?;
    }
    Ok(())
}

/// A log axis around the values: normal positive numbers only, and at
/// most 15 decades (a denormal such as 1e-320 made plotters' key points
/// loop for ever; the data is checked before, this is the last guard).
pub(super) fn bounds(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    let (lo, hi) = values
        .filter(|v| v.is_normal() && *v > 0.0 && *v < 1e30)
        .fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
    (lo <= hi).then(|| ((lo / 1.5).max(hi * 1e-15), hi * 1.5))
}

/// Powers of two from `x0` to `x1`, at most nine of them, evenly spaced:
/// the message-size axis of every chart (KiB, MiB, GiB).
pub(super) fn pow2_ticks(x0: f64, x1: f64) -> Vec<f64> {
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

/// Ticks of a log value axis from `lo` to `hi`: powers of ten (at most
/// eight, evenly thinned); where fewer than two fall inside, 1-2-5 steps;
/// where still fewer, the ends. Plotters' own key points leave a range
/// inside one decade without a number.
pub(super) fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    if !(lo > 0.0 && hi > lo) {
        return vec![];
    }
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let decades: Vec<f64> = (a..=b)
        .map(|e| 10f64.powi(e))
        .filter(|v| *v >= lo && *v <= hi)
        .collect();
    if decades.len() >= 2 {
        let step = decades.len().div_ceil(8);
        return decades.into_iter().step_by(step).collect();
    }
    let steps: Vec<f64> = (a..=b)
        .flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e)))
        .filter(|v| *v >= lo && *v <= hi)
        .collect();
    if steps.len() >= 2 {
        return steps;
    }
    vec![lo * 1.05, (lo * hi).sqrt(), hi / 1.05]
}

/// Bandwidth against message size on log-log axes; the fit dashed with its
/// m* marked; the expected ceiling of the path, when known, as a grey line.
/// Axis labels carry units (GB/s = 1e9 bytes/s).
pub fn sweep_chart(
    title: &str,
    series: &[Series],
    fits: &[FitLine],
    y_label: &str,
    ceiling: Option<(f64, &str)>,
) -> String {
    size_chart(title, series, fits, y_label, ceiling, YAxis::Bandwidth)
}

/// Latency (seconds) against message size, on its own log-log axes: the
/// points are the measured times, not bandwidth.
pub fn latency_chart(title: &str, series: &[Series]) -> String {
    size_chart(
        title,
        series,
        &[],
        "latency (log; us = 1e-6 s)",
        None,
        YAxis::Time,
    )
}

/// What a size chart's values are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum YAxis {
    /// Bytes per second, drawn in GB/s.
    Bandwidth,
    /// Seconds, ticked in s, ms, us or ns.
    Time,
}

impl YAxis {
    /// What one drawn unit is worth in the values' own unit.
    fn unit(self) -> f64 {
        match self {
            YAxis::Bandwidth => 1e9,
            YAxis::Time => 1.0,
        }
    }

    pub(super) fn tick(self, v: f64) -> String {
        match self {
            YAxis::Bandwidth => gbs_tick(v),
            YAxis::Time => secs_tick(v),
        }
    }
}

/// The ranges of a size chart and its ticks.
struct Axes {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    x_ticks: Vec<f64>,
    y_ticks: Vec<f64>,
}

fn axes(series: &[Series], ceiling: Option<(f64, &str)>, unit: f64) -> Option<Axes> {
    let xs = bounds(series.iter().flat_map(|s| s.points.iter().map(|p| p.0)));
    let ys = bounds(
        series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1 / unit))
            .chain(ceiling.map(|c| c.0 / unit)),
    );
    let (Some((x0, x1)), Some((y0, y1))) = (xs, ys) else {
        return None;
    };
    Some(Axes {
        x0,
        x1,
        y0,
        y1,
        x_ticks: pow2_ticks(x0, x1),
        y_ticks: log_ticks(y0, y1),
    })
}

/// The key figure of a size chart, for its `<desc>`: the highest
/// bandwidth, or the lowest time, and the size it was seen at.
pub(super) fn key_figure(series: &[Series], y: YAxis) -> String {
    let pts = series.iter().flat_map(|s| s.points.iter());
    let best = match y {
        YAxis::Bandwidth => pts.max_by(|a, b| a.1.total_cmp(&b.1)),
        YAxis::Time => pts.min_by(|a, b| a.1.total_cmp(&b.1)),
    };
    match (best, y) {
        (Some(p), YAxis::Bandwidth) => format!(
            "measured: highest {} at {} messages",
            super::format::gbs(p.1),
            size_short(p.0)
        ),
        (Some(p), YAxis::Time) => format!(
            "measured: lowest latency {} at {} messages",
            super::format::secs(p.1),
            size_short(p.0)
        ),
        (None, _) => "no point".into(),
    }
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

/// Values against message size, log-log, the legend under the plot.
fn size_chart(
    title: &str,
    series: &[Series],
    fits: &[FitLine],
    y_label: &str,
    ceiling: Option<(f64, &str)>,
    y: YAxis,
) -> String {
    let unit = y.unit();
    let Some(a) = axes(series, ceiling, unit) else {
        return String::new();
    };
    let mut entries: Vec<Entry> = series
        .iter()
        .enumerate()
        .map(|(i, s)| Entry {
            label: s.label.clone(),
            colour: PALETTE[i % PALETTE.len()],
            mark: Mark::Line,
        })
        .collect();
    if let Some((_, label)) = ceiling {
        entries.push(Entry {
            label: format!("expected ceiling: {label}"),
            colour: RGBColor(90, 90, 90),
            mark: Mark::Dashed,
        });
    }
    if !fits.is_empty() {
        entries.push(Entry {
            label: "alpha-beta fit, one line per segment (MODEL)".into(),
            colour: FIT_COLOUR,
            mark: Mark::Dashed,
        });
    }
    let h = PLOT_H + legend_height(entries.len());
    let desc = key_figure(series, y);
    draw(640, h, &format!("sweep: {title}"), &desc, |root| {
        let (top, below) = root.split_vertically(PLOT_H);
        let mut chart = ChartBuilder::on(&top)
            .caption(title, ("sans-serif", 17))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(
                (a.x0..a.x1).log_scale().with_key_points(a.x_ticks.clone()),
                (a.y0..a.y1).log_scale().with_key_points(a.y_ticks.clone()),
            )?;
        chart
            .configure_mesh()
            .x_desc("message size (log; KiB = 1024 bytes)")
            .y_desc(y_label)
            .x_label_formatter(&|v| size_short(*v))
            .y_label_formatter(&|v| y.tick(*v))
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
            chart.draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))?;
            chart.draw_series(pts.iter().map(|p| Circle::new(*p, 3, c.filled())))?;
        }
        if let Some((c, _)) = ceiling {
            chart.draw_series(DashedLineSeries::new(
                vec![(a.x0, c / unit), (a.x1, c / unit)],
                10,
                5,
                RGBColor(90, 90, 90).stroke_width(2),
            ))?;
        }
        draw_fits(&mut chart, &top, fits, (a.x0, a.x1, a.y0, a.y1), unit)?;
        legend(&below, &entries)
    })
}

const FIT_COLOUR: RGBColor = RGBColor(200, 30, 30);

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
    for f in fits {
        let mut pts = Vec::new();
        let mut m = f.from_bytes.max(x0);
        while m <= f.to_bytes.min(x1) * 1.0001 {
            pts.push((m, m / (f.alpha_s + m / f.beta_bytes_per_s) / unit));
            m *= 1.25;
        }
        chart.draw_series(DashedLineSeries::new(pts, 7, 4, FIT_COLOUR.stroke_width(2)))?;
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
    fn sizes_tick_in_binary_units_whatever_the_sweep() {
        let t = pow2_ticks(4.0, 8.0 * 1073741824.0);
        assert!(t.len() <= 9 && t.iter().all(|x| (*x as u64).is_power_of_two()));
        assert_eq!(size_short(t[0]), "4 B");
        // A decimal sweep (1000, 10000 bytes) still ticks in KiB.
        let svg = sweep_chart(
            "t",
            &[Series {
                label: "a".into(),
                points: vec![(1000.0, 1e9), (1e4, 5e9), (1e6, 9e9)],
            }],
            &[],
            "GB/s",
            None,
        );
        assert!(svg.contains("KiB"), "{svg}");
        assert!(!svg.contains("kB\n<") && !svg.contains(" MB\n<"), "{svg}");
    }

    #[test]
    fn a_log_axis_inside_one_decade_still_has_numbered_ticks() {
        assert!(log_ticks(12.0, 18.0).len() >= 2);
        assert_eq!(log_ticks(3.0, 7.0).len(), 3);
        assert_eq!(log_ticks(1.5, 30.0), [2.0, 5.0, 10.0, 20.0]);
        assert_eq!(log_ticks(0.5, 2000.0), [1.0, 10.0, 100.0, 1000.0]);
        // Fourteen decades thin to at most eight ticks.
        assert!(log_ticks(1e-9, 1e5).len() <= 8);
    }

    #[test]
    fn latency_ticks_to_six_seconds_carry_their_unit_and_do_not_crowd() {
        let pts: Vec<(f64, f64)> = (0..20)
            .map(|i| (2f64.powi(i + 2), 1e-6 * 2.3f64.powi(i)))
            .collect();
        assert!(pts.last().unwrap().1 > 6.0);
        let svg = latency_chart(
            "lat",
            &[Series {
                label: "x".into(),
                points: pts,
            }],
        );
        // Plotters writes a text's content on a line of its own.
        for u in ["us\n<", "ms\n<", " s\n<"] {
            assert!(svg.contains(u), "{u} missing");
        }
        assert!(!svg.contains("1000000\n<"));
        let ticks = log_ticks(1e-6 / 1.5, 7.0 * 1.5);
        // 300 px of plot for at most eight labels 14 px high.
        assert!(ticks.len() <= 8 && ticks.len() * 14 < 300);
    }

    #[test]
    fn every_series_colour_reads_on_white_at_4_5_to_1() {
        for c in PALETTE {
            let r = contrast((c.0, c.1, c.2), (255, 255, 255));
            assert!(r >= 4.5, "{c:?} is {r:.2}:1");
        }
        // The orange it replaced did not.
        assert!(contrast((255, 127, 14), (255, 255, 255)) < 4.5);
    }

    #[test]
    fn a_chart_opens_with_its_title_and_desc_escaped() {
        let svg = sweep_chart(
            "a <b> & c",
            &[Series {
                label: "s".into(),
                points: vec![(1024.0, 1e9), (2048.0, 2e9)],
            }],
            &[],
            "GB/s",
            None,
        );
        let open = svg.find('>').unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(
            svg[open + 1..].starts_with("<title>sweep: a &lt;b&gt; &amp; c</title><desc>measured: highest 2.000 GB/s at 2 KiB messages</desc>"),
            "{}",
            &svg[..open + 120]
        );
    }

    #[test]
    fn the_legend_sits_under_the_plot() {
        let svg = sweep_chart(
            "t",
            &[Series {
                label: "LEGENDTEXT".into(),
                points: vec![(1024.0, 1e9), (2048.0, 2e9)],
            }],
            &[],
            "GB/s",
            None,
        );
        let at = svg.find("LEGENDTEXT").unwrap();
        let text = &svg[svg[..at].rfind("<text").unwrap()..at];
        let y: f64 = text
            .split("y=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(y > f64::from(PLOT_H), "{text}");
    }
}
