//! The tier ladder chart: the bands (ILLUSTRATIVE) with this node's
//! figures on them. Band names sit inside the plot, stacked one line each
//! inside their band; the points sit in a strip right of them; each
//! point's label (kind, figure with unit, source file) sits in a column
//! right of the plot, joined to its point by a leader line, moved up or
//! down just enough that no two labels touch ([`place_labels`]).

use plotters::prelude::*;

use super::charts::PALETTE;
use crate::models::ladder::{LABEL, TIERS};

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
const BAND_NAME_CHARS: usize = 27;
const PLOT_RIGHT: f64 = 400.0;
const COLUMN_LEFT: f64 = 412.0;
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

/// Band names, one entry per band (tiers sharing a band share it), each
/// as lines that fit the names' column: a name's parenthesis goes on a
/// line of its own, and a long name is wrapped.
fn band_names() -> Vec<((f64, f64), Vec<String>)> {
    let mut out: Vec<((f64, f64), Vec<String>)> = Vec::new();
    for t in TIERS {
        let band = (t.bandwidth_low_bytes_per_s, t.bandwidth_high_bytes_per_s);
        let mut lines = Vec::new();
        for part in t.name.split(" (") {
            let part = if lines.is_empty() {
                part.to_string()
            } else {
                format!("({part}")
            };
            lines.extend(wrap(&part, BAND_NAME_CHARS));
        }
        match out.iter_mut().find(|(b, _)| *b == band) {
            Some((_, l)) => l.extend(lines),
            None => out.push((band, lines)),
        }
    }
    out
}

/// The tier ladder as bands (ILLUSTRATIVE), with this node's figures on it
/// (label, bytes per second).
pub fn ladder_chart(points: &[(String, f64)]) -> String {
    let column = f64::from(WIDTH) - 8.0 - COLUMN_LEFT;
    let labels: Vec<&str> = points.iter().map(|(l, _)| l.as_str()).collect();
    let need = labels_height(&labels, column) + TOP + BOTTOM_MARGIN;
    let h = need.max(420.0).ceil() as u32;
    let n = points.len();
    let (y_lo, y_hi) = y_range(points);
    super::charts::draw(WIDTH, h, |root| {
        let body = root.titled(&format!("Tier ladder: {LABEL}"), ("sans-serif", 16))?;
        let (left, _) = body.split_horizontally(PLOT_RIGHT as u32);
        let mut chart = ChartBuilder::on(&left)
            .margin(10)
            .x_label_area_size(20)
            .y_label_area_size(PLOT_LEFT as u32 - 10)
            .build_cartesian_2d(0f64..1.0, (y_lo..y_hi).log_scale())?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .disable_x_axis()
            .y_desc("bandwidth, GB/s (1e9 bytes/s, log)")
            .y_label_formatter(&|v| format!("{}", v / 1e9))
            .label_style(("sans-serif", FONT))
            .axis_desc_style(("sans-serif", FONT))
            .draw()?;
        for (i, ((lo, hi), lines)) in band_names().into_iter().enumerate() {
            let c = PALETTE[i % PALETTE.len()].mix(0.12);
            let rect = Rectangle::new([(0.0, lo), (1.0, hi)], c.filled());
            chart.draw_series(std::iter::once(rect))?;
            let (_, mid) = chart.backend_coord(&(0.0, (lo * hi).sqrt()));
            let first = f64::from(mid) - lines.len() as f64 * LINE_PX / 2.0;
            let (left, _) = chart.backend_coord(&(0.0, lo));
            for (k, l) in lines.iter().enumerate() {
                let y = (first + k as f64 * LINE_PX) as i32;
                root.draw(&Text::new(l.clone(), (left + 4, y), ("sans-serif", FONT)))?;
            }
        }
        let name_px = text_px(&"x".repeat(BAND_NAME_CHARS), FONT_PX);
        let (plot_left_px, _) = chart.backend_coord(&(0.0, 1e9));
        let strip = f64::from(plot_left_px) + 4.0 + name_px + 8.0;
        let (plot_right_px, plot_bottom) = chart.backend_coord(&(1.0, y_lo));
        let step = (f64::from(plot_right_px) - 8.0 - strip) / n.max(1) as f64;
        let at: Vec<(i32, i32)> = points
            .iter()
            .enumerate()
            .map(|(i, (_, bw))| {
                let (_, y) = chart.backend_coord(&(0.0, *bw));
                ((strip + step * (i as f64 + 0.5)) as i32, y)
            })
            .collect();
        let anchors: Vec<(f64, &str)> = at
            .iter()
            .zip(&labels)
            .map(|((_, y), l)| (f64::from(*y), *l))
            .collect();
        let bottom = f64::from(plot_bottom).max(f64::from(h) - BOTTOM_MARGIN);
        let boxes = place_labels(&anchors, COLUMN_LEFT, column, TOP, bottom);
        for (i, (p, b)) in at.iter().zip(&boxes).enumerate() {
            let c = PALETTE[i % PALETTE.len()];
            let end = (COLUMN_LEFT as i32 - 3, (b.top + b.height / 2.0) as i32);
            root.draw(&PathElement::new(vec![*p, end], c.stroke_width(1)))?;
            root.draw(&Circle::new(*p, 5, c.filled()))?;
            for (k, l) in b.lines.iter().enumerate() {
                let y = (b.top + k as f64 * LINE_PX) as i32;
                let style = ("sans-serif", FONT).into_font().color(&c);
                root.draw(&Text::new(l.clone(), (b.x as i32, y), style))?;
            }
        }
        Ok(())
    })
}

/// The bandwidth axis: the tiers' decades (0.1 to 100,000 GB/s), widened
/// to whole decades so that every figure of the node lies on the chart (a
/// software RDMA run at 3 MB/s sits below the lowest band, not off it).
fn y_range(points: &[(String, f64)]) -> (f64, f64) {
    let shown = points
        .iter()
        .map(|(_, bw)| *bw)
        .filter(|bw| bw.is_finite() && *bw > 0.0);
    shown.fold((1e8f64, 1e14f64), |(lo, hi), bw| {
        let decade = bw.log10();
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
        let pts: Vec<(String, f64)> = labels.iter().map(|l| (l.clone(), 5e10)).collect();
        let svg = ladder_chart(&pts);
        assert!(svg.contains(&format!(
            "height=\"{}\"",
            (need + TOP + BOTTOM_MARGIN).ceil()
        )));
    }

    #[test]
    fn band_names_fit_their_column_and_keep_every_word() {
        let names = band_names();
        let all: Vec<String> = names.iter().flat_map(|(_, l)| l.clone()).collect();
        assert!(all.iter().all(|l| l.chars().count() <= BAND_NAME_CHARS));
        assert!(all.contains(&"(InfiniBand, RoCE, EFA)".to_string()));
        let joined = all.join(" ");
        for t in TIERS {
            assert!(joined.contains(t.name), "{}", t.name);
        }
        // The names' column ends before the points' strip and the plot.
        assert!(PLOT_LEFT + 4.0 + text_px(&"x".repeat(BAND_NAME_CHARS), FONT_PX) < PLOT_RIGHT);
    }

    #[test]
    fn the_axis_widens_to_hold_every_figure() {
        assert_eq!(y_range(&[]), (1e8, 1e14));
        assert_eq!(y_range(&[("a".into(), 5e10)]), (1e8, 1e14));
        let (lo, hi) = y_range(&[("rxe".into(), 3.21e6), ("hbm".into(), 3e14)]);
        assert!(
            (lo - 1e6).abs() < 1e-3 && (hi - 1e15).abs() < 1.0,
            "{lo} {hi}"
        );
    }
}
