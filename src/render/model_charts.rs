//! The models' charts: the injection cliff (seed section 3.6) and staged
//! vs direct (seed section 2.3). Both are MODEL and say so in their
//! caption; what they draw is prepared by the caller
//! (`view::model_figures`), this module only draws it.

use plotters::prelude::*;

use super::charts::{
    Entry, Mark, PALETTE, bounds, draw, legend, legend_height, log_ticks, pow2_ticks,
};
use super::format::{gbs_tick, secs_tick, size_short};

/// The injection cliff, prepared: the per-GPU share for each adapter
/// count, the scale-up bandwidth, and this node's point.
#[derive(Debug, Clone, PartialEq)]
pub struct Cliff {
    pub gpus: u32,
    /// (adapters per node, per-GPU share in bytes/s), from 1 adapter up.
    pub share: Vec<(u32, f64)>,
    pub scaleup_bytes_per_s: f64,
    /// The node's adapters and its per-GPU share.
    pub node: (u32, f64),
    /// Legend words for the share line, the scale-up line and the node.
    pub share_label: String,
    pub scaleup_label: String,
    pub node_label: String,
    /// The `<title>` and `<desc>`.
    pub title: String,
    pub desc: String,
}

/// Per-GPU injection share against adapters per node, the scale-up
/// bandwidth as a line, this node marked (MODEL).
pub fn cliff_chart(c: &Cliff) -> String {
    let max_nics = c.share.last().map_or(2, |p| p.0).max(2);
    let Some((y_lo, y_hi)) = bounds(
        c.share
            .iter()
            .map(|p| p.1 / 1e9)
            .chain([c.scaleup_bytes_per_s / 1e9]),
    ) else {
        return String::new();
    };
    let (y_lo, y_hi) = (y_lo / 1.5, y_hi * 1.5);
    let ticks = log_ticks(y_lo, y_hi);
    let entries = [
        Entry {
            label: c.share_label.clone(),
            colour: PALETTE[0],
            mark: Mark::Line,
        },
        Entry {
            label: c.scaleup_label.clone(),
            colour: PALETTE[2],
            mark: Mark::Line,
        },
        Entry {
            label: c.node_label.clone(),
            colour: PALETTE[3],
            mark: Mark::Dot,
        },
    ];
    let plot_h = 340;
    let h = plot_h + legend_height(entries.len());
    draw(640, h, &c.title, &c.desc, |root| {
        let (top, below) = root.split_vertically(plot_h);
        let mut chart = ChartBuilder::on(&top)
            .caption(
                format!(
                    "MODEL: per-GPU injection share, {} GPU{} per node",
                    c.gpus,
                    if c.gpus == 1 { "" } else { "s" }
                ),
                ("sans-serif", 17),
            )
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(64)
            // From 0, so that a node with one adapter is not drawn on the
            // axis (0 itself is not labelled).
            .build_cartesian_2d(
                0u32..max_nics + 1,
                (y_lo..y_hi).log_scale().with_key_points(ticks.clone()),
            )?;
        chart
            .configure_mesh()
            .x_desc("network adapters per node")
            .y_desc("GB/s per GPU, one direction (log)")
            .x_label_formatter(&|v| {
                if *v == 0 {
                    String::new()
                } else {
                    v.to_string()
                }
            })
            .y_label_formatter(&|v| gbs_tick(*v))
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 14))
            .draw()?;
        let share: Vec<(u32, f64)> = c.share.iter().map(|p| (p.0, p.1 / 1e9)).collect();
        chart.draw_series(LineSeries::new(share, PALETTE[0].stroke_width(2)))?;
        let up = c.scaleup_bytes_per_s / 1e9;
        chart.draw_series(LineSeries::new(
            [(0, up), (max_nics + 1, up)],
            PALETTE[2].stroke_width(2),
        ))?;
        let r = PALETTE[3];
        chart.draw_series(std::iter::once(Circle::new(
            (c.node.0, c.node.1 / 1e9),
            6,
            r.filled(),
        )))?;
        legend(&below, &entries)
    })
}

/// A curve of a staged-vs-direct chart: time (seconds) against size.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    pub label: String,
    /// (bytes, seconds).
    pub points: Vec<(f64, f64)>,
    /// An index into the palette.
    pub colour: usize,
    pub mark: Mark,
}

/// Time against message size, log-log, for the model's curves (lines,
/// dashed for a pipelined bound) and measured points (dots).
pub fn staged_chart(caption: &str, title: &str, desc: &str, curves: &[Curve]) -> String {
    let all = || curves.iter().flat_map(|c| c.points.iter());
    let (Some((x0, x1)), Some((y0, y1))) = (bounds(all().map(|p| p.0)), bounds(all().map(|p| p.1)))
    else {
        return String::new();
    };
    let (x_ticks, y_ticks) = (pow2_ticks(x0, x1), log_ticks(y0, y1));
    let entries: Vec<Entry> = curves
        .iter()
        .map(|c| Entry {
            label: c.label.clone(),
            colour: PALETTE[c.colour % PALETTE.len()],
            mark: c.mark,
        })
        .collect();
    let plot_h = 360;
    let h = plot_h + legend_height(entries.len());
    draw(640, h, title, desc, |root| {
        let (top, below) = root.split_vertically(plot_h);
        let mut chart = ChartBuilder::on(&top)
            .caption(caption, ("sans-serif", 17))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(64)
            .build_cartesian_2d(
                (x0..x1).log_scale().with_key_points(x_ticks.clone()),
                (y0..y1).log_scale().with_key_points(y_ticks.clone()),
            )?;
        chart
            .configure_mesh()
            .x_desc("message size (log; KiB = 1024 bytes)")
            .y_desc("time per message (log)")
            .x_label_formatter(&|v| size_short(*v))
            .y_label_formatter(&|v| secs_tick(*v))
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 14))
            .draw()?;
        for c in curves {
            let col = PALETTE[c.colour % PALETTE.len()];
            let pts = c.points.clone();
            match c.mark {
                Mark::Line => {
                    chart.draw_series(LineSeries::new(pts, col.stroke_width(2)))?;
                }
                Mark::Dashed => {
                    chart.draw_series(DashedLineSeries::new(pts, 8, 5, col.stroke_width(2)))?;
                }
                Mark::Dot => {
                    chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 5, col.filled())))?;
                }
            }
        }
        legend(&below, &entries)
    })
}
