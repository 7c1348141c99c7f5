//! The tier ladder charts, of bandwidth and of latency: one column per
//! tier from HBM down, each with its band (ILLUSTRATIVE), so the bands
//! step down (bandwidth) or up (latency) like the seed's table. Each of
//! this node's figures sits in the column of the path it took, at its
//! value: a copy within one GPU in HBM even when it runs below the HBM
//! band, a staged copy in PCIe (drawn as a ring when the topology offers
//! its pair a faster tier). Each point's label (kind, figure with unit,
//! source file) sits in a column right of the plot, joined to its point by
//! a leader line, moved up or down just enough that no two labels touch
//! ([`place_labels`]).

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::charts::{PALETTE, log_ticks};
use super::format::{gbs_tick, secs_tick};
use crate::models::ladder::TIERS;

/// Width of the SVG; at this width the page shows it unscaled at 800 px.
const WIDTH: u32 = 720;
/// Plotters' font size 14 is written as 14 / 1.24 = 11.3 px in the SVG.
const FONT: u32 = 14;
const FONT_PX: f64 = FONT as f64 / 1.24;
/// A generous width per character of sans-serif text (digits are 0.56 em).
const CHAR_EM: f64 = 0.6;
const LINE_PX: f64 = 14.0;
const GAP_PX: f64 = 4.0;
/// Left of the plot (axis labels), band names, the points' strip, labels.
/// Margin 10 and the axis labels' area.
const PLOT_LEFT: f64 = 80.0;
const PLOT_RIGHT: f64 = 470.0;
const COLUMN_LEFT: f64 = 482.0;
const TOP: f64 = 40.0;
const BOTTOM_MARGIN: f64 = 30.0;

/// A label set in the column: its lines and its box, in SVG pixels.
#[derive(Debug, Clone, PartialEq)]
pub struct LabelBox {
    pub lines: Vec<String>,
    pub x: f64,
    pub top: f64,
    pub width: f64,
    pub height: f64,
}

/// Estimated width of a line of text in pixels.
pub fn text_px(s: &str, font_px: f64) -> f64 {
    s.chars().count() as f64 * font_px * CHAR_EM
}

/// Word-wraps `s` into lines of at most `max` characters, a figure and
/// its unit (`GB/s`) on one line; a word longer
/// than `max` gets a line of its own (and is not cut). No text is lost.
pub fn wrap(s: &str, max: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    // A unit stays on the line of its number.
    let mut words: Vec<String> = Vec::new();
    for w in s.split_whitespace() {
        match words.last_mut() {
            Some(last) if w.starts_with("GB/s") => {
                last.push(' ');
                last.push_str(w);
            }
            _ => words.push(w.to_string()),
        }
    }
    for w in &words {
        if !cur.is_empty() && cur.chars().count() + 1 + w.chars().count() > max {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(w);
    }
    if !cur.is_empty() || lines.is_empty() {
        lines.push(cur);
    }
    lines
}

/// Places one label per anchor (its point's y, in pixels) in a column from
/// `x` to `x + width`, between `top` and `bottom`: each label is wrapped
/// to the column's width and centred on its anchor where it can be, then
/// labels sorted by anchor are pushed down past the one above, and back up
/// from `bottom` where the last ran over. Their order is the anchors'
/// order, so leader lines do not cross. When all labels together are
/// taller than the column, they overflow at the bottom
/// ([`labels_height`] says how tall to make it).
pub fn place_labels(
    anchors: &[(f64, &str)],
    x: f64,
    width: f64,
    top: f64,
    bottom: f64,
) -> Vec<LabelBox> {
    let max_chars = ((width / (FONT_PX * CHAR_EM)).floor() as usize).max(8);
    let mut boxes: Vec<LabelBox> = anchors
        .iter()
        .map(|(y, s)| {
            let lines = wrap(s, max_chars);
            let w = lines
                .iter()
                .map(|l| text_px(l, FONT_PX))
                .fold(0.0, f64::max);
            let height = lines.len() as f64 * LINE_PX;
            LabelBox {
                lines,
                x,
                top: y - height / 2.0,
                width: w,
                height,
            }
        })
        .collect();
    let mut order: Vec<usize> = (0..boxes.len()).collect();
    order.sort_by(|a, b| anchors[*a].0.total_cmp(&anchors[*b].0).then(a.cmp(b)));
    let mut floor = top;
    for &i in &order {
        boxes[i].top = boxes[i].top.max(floor);
        floor = boxes[i].top + boxes[i].height + GAP_PX;
    }
    let mut ceiling = bottom;
    for &i in order.iter().rev() {
        let b = &mut boxes[i];
        if b.top + b.height > ceiling {
            b.top = (ceiling - b.height).max(top);
        }
        ceiling = b.top - GAP_PX;
    }
    // Where the column was too short the upward pass stopped at `top`:
    // push down again so that boxes never overlap (they then run past
    // `bottom`, which the caller avoided by sizing with labels_height).
    let mut floor = top;
    for &i in &order {
        boxes[i].top = boxes[i].top.max(floor);
        floor = boxes[i].top + boxes[i].height + GAP_PX;
    }
    boxes
}

/// The height all labels need in a column of this width, gaps included.
pub fn labels_height(labels: &[&str], width: f64) -> f64 {
    place_labels(
        &labels.iter().map(|s| (0.0, *s)).collect::<Vec<_>>(),
        0.0,
        width,
        0.0,
        f64::MAX,
    )
    .iter()
    .map(|b| b.height + GAP_PX)
    .sum()
}

/// Short column names under the plot, index for index with [`TIERS`].
const SHORT: [&str; 8] = [
    "registers",
    "cache",
    "HBM",
    "scale-up",
    "PCIe",
    "scale-out RDMA",
    "Ethernet TCP",
    "storage",
];
/// The first tier drawn: nothing these tools measure reaches the
/// registers or the last-level cache, and eight columns would not fit.
const FIRST: usize = 2;

/// One figure on the ladder, prepared by the caller: the tier of the path
/// it took (an index into [`TIERS`]), its value (bytes/s or seconds), its
/// label, and whether its path fell below the tier the topology offers.
#[derive(Debug, Clone, PartialEq)]
pub struct Rung {
    pub tier: usize,
    pub value: f64,
    pub label: String,
    pub fell: bool,
}

/// What a ladder's axis shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quantity {
    Bandwidth,
    Latency,
}

impl Quantity {
    /// A tier's band in drawn units (GB/s or seconds).
    fn band(self, t: &crate::models::ladder::Tier) -> (f64, f64) {
        match self {
            Quantity::Bandwidth => (
                t.bandwidth_low_bytes_per_s / 1e9,
                t.bandwidth_high_bytes_per_s / 1e9,
            ),
            Quantity::Latency => (t.latency_low_s, t.latency_high_s),
        }
    }

    fn drawn(self, v: f64) -> f64 {
        match self {
            Quantity::Bandwidth => v / 1e9,
            Quantity::Latency => v,
        }
    }

    fn tick(self, v: f64) -> String {
        match self {
            Quantity::Bandwidth => gbs_tick(v),
            Quantity::Latency => secs_tick(v),
        }
    }
}

/// The tier ladder of bandwidth: one column per tier, its ILLUSTRATIVE
/// band, and this node's figures each in the column of its path.
pub fn ladder_chart(points: &[Rung]) -> String {
    column_ladder(points, Quantity::Bandwidth)
}

/// The same ladder for latency (the seed's latency column): bands of
/// latency per tier, this node's smallest-message latencies on them.
pub fn latency_ladder_chart(points: &[Rung]) -> String {
    column_ladder(points, Quantity::Latency)
}

/// The `<desc>` of a ladder: its figures, a few of them.
fn ladder_desc(points: &[Rung]) -> String {
    let mut parts: Vec<String> = points
        .iter()
        .take(4)
        .map(|p| format!("{}: {}", SHORT[p.tier.min(7)], p.label))
        .collect();
    if points.len() > 4 {
        parts.push(format!("and {} more", points.len() - 4));
    }
    format!("measured, on illustrative bands: {}", parts.join("; "))
}

fn column_ladder(points: &[Rung], q: Quantity) -> String {
    if points.is_empty() {
        return String::new();
    }
    let column = f64::from(WIDTH) - 8.0 - COLUMN_LEFT;
    let labels: Vec<&str> = points.iter().map(|p| p.label.as_str()).collect();
    let need = labels_height(&labels, column) + TOP + BOTTOM_MARGIN;
    let h = need.max(440.0).ceil() as u32;
    let (y_lo, y_hi) = y_range(points, q);
    let ticks = log_ticks(y_lo, y_hi);
    let cols = (TIERS.len() - FIRST) as f64;
    let (name, axis) = match q {
        Quantity::Bandwidth => ("bandwidth", "bandwidth, GB/s (1e9 bytes/s, log)"),
        Quantity::Latency => ("latency", "latency (log)"),
    };
    let title = format!("ladder: {name} of this node's figures by the tier of their path");
    super::charts::draw(WIDTH, h, &title, &ladder_desc(points), |root| {
        let body = root.titled(
            &format!("Tier ladder, {name} (bands ILLUSTRATIVE)"),
            ("sans-serif", 16),
        )?;
        let (left, _) = body.split_horizontally(PLOT_RIGHT as u32);
        let mut chart = ChartBuilder::on(&left)
            .margin(10)
            .x_label_area_size(34)
            .y_label_area_size(PLOT_LEFT as u32 - 10)
            .build_cartesian_2d(
                0f64..cols,
                (y_lo..y_hi).log_scale().with_key_points(ticks.clone()),
            )?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_desc(axis)
            .y_label_formatter(&|v| q.tick(*v))
            .label_style(("sans-serif", FONT))
            .axis_desc_style(("sans-serif", FONT))
            .draw()?;
        for (i, t) in TIERS.iter().enumerate().skip(FIRST) {
            let x = (i - FIRST) as f64;
            let (lo, hi) = q.band(t);
            let c = PALETTE[i % PALETTE.len()].mix(0.15);
            let rect = Rectangle::new([(x + 0.08, lo), (x + 0.92, hi)], c.filled());
            chart.draw_series(std::iter::once(rect))?;
            let (cx, bottom) = chart.backend_coord(&(x + 0.5, y_lo));
            for (k, l) in SHORT[i].split(' ').enumerate() {
                let style = TextStyle::from(("sans-serif", FONT).into_font())
                    .pos(Pos::new(HPos::Center, VPos::Top));
                root.draw(&Text::new(
                    l.to_string(),
                    (cx, bottom + 4 + 13 * k as i32),
                    style,
                ))?;
            }
        }
        // Points of one column spread across it, in the order given.
        let mut in_col = [0usize; 8];
        let mut seen = [0usize; 8];
        for p in points {
            in_col[p.tier.min(7)] += 1;
        }
        let at: Vec<(i32, i32)> = points
            .iter()
            .map(|p| {
                let t = p.tier.clamp(FIRST, 7);
                let k = seen[t];
                seen[t] += 1;
                let x = (t - FIRST) as f64 + 0.2 + 0.6 * (k as f64 + 0.5) / in_col[t] as f64;
                chart.backend_coord(&(x, q.drawn(p.value).clamp(y_lo, y_hi)))
            })
            .collect();
        let anchors: Vec<(f64, &str)> = at
            .iter()
            .zip(&labels)
            .map(|((_, y), l)| (f64::from(*y), *l))
            .collect();
        let (_, plot_bottom) = chart.backend_coord(&(0.0, y_lo));
        let bottom = f64::from(plot_bottom).max(f64::from(h) - BOTTOM_MARGIN);
        let boxes = place_labels(&anchors, COLUMN_LEFT, column, TOP, bottom);
        for (i, ((pt, b), p)) in at.iter().zip(&boxes).zip(points).enumerate() {
            let c = PALETTE[i % PALETTE.len()];
            let end = (COLUMN_LEFT as i32 - 3, (b.top + b.height / 2.0) as i32);
            root.draw(&PathElement::new(vec![*pt, end], c.stroke_width(1)))?;
            if p.fell {
                // A ring: the figure fell below the tier its pair offers.
                root.draw(&Circle::new(*pt, 6, c.stroke_width(3)))?;
            } else {
                root.draw(&Circle::new(*pt, 5, c.filled()))?;
            }
            for (k, l) in b.lines.iter().enumerate() {
                let y = (b.top + k as f64 * LINE_PX) as i32;
                let style = ("sans-serif", FONT).into_font().color(&c);
                root.draw(&Text::new(l.clone(), (b.x as i32, y), style))?;
            }
        }
        Ok(())
    })
}

/// The value axis: the drawn tiers' bands, widened to whole decades so
/// that every figure of the node lies on the chart (a software RDMA run
/// at 3 MB/s sits below the lowest band, not off it).
fn y_range(points: &[Rung], q: Quantity) -> (f64, f64) {
    let bands = TIERS[FIRST..].iter().map(|t| q.band(t));
    let (lo, hi) = bands.fold((f64::MAX, f64::MIN), |(a, b), (l, h)| (a.min(l), b.max(h)));
    points
        .iter()
        .map(|p| q.drawn(p.value))
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold((lo, hi), |(lo, hi), v| {
            let decade = v.log10();
            (
                lo.min(10f64.powf(decade.floor())),
                hi.max(10f64.powf(decade.ceil())),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn intersect(a: &LabelBox, b: &LabelBox) -> bool {
        a.x < b.x + b.width
            && b.x < a.x + a.width
            && a.top < b.top + b.height
            && b.top < a.top + a.height
    }

    #[test]
    fn close_values_get_labels_that_do_not_overlap_and_fit_the_width() {
        // The mi350x TransferBench node's five figures, four within 15 px.
        let labels = [
            "d2d 2163.5 GB/s (transferbench-005-)",
            "d2h 55.66 GB/s (transferbench-005-)",
            "h2d 45.16 GB/s (transferbench-005-)",
            "h2h 104.9 GB/s (transferbench-005-)",
            "p2p-copy 57.75 GB/s per direction (sum 115.5 GB/s) (transferbench-005-)",
            "p2p-copy 57.70 GB/s (transferbench-005-)",
        ];
        let ys = [121.0, 216.0, 221.0, 199.0, 215.0, 215.0];
        let anchors: Vec<(f64, &str)> = ys.iter().copied().zip(labels).collect();
        let column = f64::from(WIDTH) - 8.0 - COLUMN_LEFT;
        let boxes = place_labels(&anchors, COLUMN_LEFT, column, TOP, 390.0);
        assert_eq!(boxes.len(), labels.len());
        for (i, a) in boxes.iter().enumerate() {
            assert!(a.x >= 0.0 && a.x + a.width <= f64::from(WIDTH), "{a:?}");
            assert!(a.top >= TOP && a.top + a.height <= 390.0, "{a:?}");
            // Every word of the label is kept, in order.
            assert_eq!(a.lines.join(" "), labels[i]);
            assert!(a.lines.iter().all(|l| !l.starts_with("GB/s")), "{a:?}");
            for b in &boxes[i + 1..] {
                assert!(!intersect(a, b), "{a:?} overlaps {b:?}");
            }
        }
        // Labels keep their anchors' order (leader lines do not cross).
        let mut by_anchor: Vec<usize> = (0..ys.len()).collect();
        by_anchor.sort_by(|a, b| ys[*a].total_cmp(&ys[*b]).then(a.cmp(b)));
        assert!(
            by_anchor
                .windows(2)
                .all(|w| boxes[w[0]].top < boxes[w[1]].top)
        );
        // A lone label is centred on its point.
        let one = place_labels(&anchors[..1], COLUMN_LEFT, column, TOP, 390.0);
        assert!((one[0].top + one[0].height / 2.0 - 121.0).abs() < 0.01);
    }

    #[test]
    fn many_labels_overflow_downwards_without_overlap_and_size_the_chart() {
        let labels: Vec<String> = (0..12)
            .map(|i| format!("p2p-copy {i}.00 GB/s per direction (sum 1 GB/s) (file-{i})"))
            .collect();
        let refs: Vec<&str> = labels.iter().map(String::as_str).collect();
        let anchors: Vec<(f64, &str)> = refs.iter().map(|l| (200.0, *l)).collect();
        let boxes = place_labels(&anchors, 400.0, 300.0, 40.0, 300.0);
        for (i, a) in boxes.iter().enumerate() {
            for b in &boxes[i + 1..] {
                assert!(!intersect(a, b));
            }
        }
        let need = labels_height(&refs, 300.0);
        let sized = place_labels(&anchors, 400.0, 300.0, 40.0, 40.0 + need);
        assert!(sized.iter().all(|b| b.top + b.height <= 40.0 + need));
        // The chart grows to hold them.
        let pts: Vec<Rung> = labels.iter().map(|l| rung(4, 5e10, l)).collect();
        let svg = ladder_chart(&pts);
        assert!(svg.contains(&format!(
            "height=\"{}\"",
            (need + TOP + BOTTOM_MARGIN).ceil()
        )));
    }

    fn rung(tier: usize, value: f64, label: &str) -> Rung {
        Rung {
            tier,
            value,
            label: label.into(),
            fell: false,
        }
    }

    #[test]
    fn column_names_fit_their_column_and_every_drawn_tier_has_one() {
        let cols = (TIERS.len() - FIRST) as f64;
        let width = (PLOT_RIGHT - PLOT_LEFT - 20.0) / cols;
        for name in &SHORT[FIRST..] {
            for word in name.split(' ') {
                assert!(text_px(word, FONT_PX) < width, "{word}");
            }
        }
        assert_eq!(SHORT.len(), TIERS.len());
    }

    #[test]
    fn the_axis_widens_to_hold_every_figure() {
        let q = Quantity::Bandwidth;
        assert_eq!(y_range(&[], q), (0.1, 1e4));
        assert_eq!(y_range(&[rung(3, 5e10, "a")], q), (0.1, 1e4));
        let (lo, hi) = y_range(&[rung(5, 3.21e6, "rxe"), rung(2, 3e14, "hbm")], q);
        assert!(
            (lo - 1e-3).abs() < 1e-9 && (hi - 1e6).abs() < 1e-6,
            "{lo} {hi}"
        );
        // Latency bands: HBM's 100 ns to storage's 10 ms.
        assert_eq!(y_range(&[], Quantity::Latency), (1e-7, 1e-2));
    }

    #[test]
    fn a_point_is_drawn_in_its_paths_column_not_where_its_value_falls() {
        // A GPU's copy to itself at 700 GB/s: inside the scale-up band, but
        // its column is HBM (the first), left of the scale-up column.
        let svg = ladder_chart(&[
            rung(2, 700e9, "d2d 700 GB/s"),
            rung(3, 700e9, "p2p 700 GB/s"),
        ]);
        let circles: Vec<f64> = svg
            .match_indices("<circle cx=\"")
            .map(|(i, m)| {
                svg[i + m.len()..]
                    .split('"')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap()
            })
            .collect();
        assert_eq!(circles.len(), 2, "{svg}");
        let col = (PLOT_RIGHT - PLOT_LEFT) / (TIERS.len() - FIRST) as f64;
        assert!(circles[1] - circles[0] > col * 0.5, "{circles:?}");
        assert!(svg.contains("<title>ladder: bandwidth"));
    }
}
