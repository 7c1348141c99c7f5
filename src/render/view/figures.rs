//! The figures sections: matrices of copy tests coloured by heat, size
//! sweeps with their alpha-beta fits, collectives' bus bandwidth, and the
//! ladder of this node's best figures.

use std::collections::BTreeMap;

use super::{ChartView, Link, Linker};
use crate::bundle::Bundle;
use crate::evidence::measurement::{Direction, Kind, Measurement, Statistic};
use crate::facts::{self, LadderScope, NodeFacts};
use crate::models::fit;
use crate::render::charts::{self, FitLine, Series};
use crate::render::format::{gbs, secs, size_short};
use crate::render::ladder_chart::Rung;

pub struct ValueMatrix {
    pub title: String,
    pub unit: String,
    pub source: Link,
    pub columns: Vec<String>,
    pub rows: Vec<(String, Vec<(String, String)>)>,
}

/// Matrices of cells that name a source and a destination (copy tests).
pub(super) fn value_matrices(b: &Bundle, linker: &Linker<'_>) -> Vec<ValueMatrix> {
    type Key = (String, String, Statistic, Direction, bool);
    let mut groups: BTreeMap<Key, Vec<&Measurement>> = BTreeMap::new();
    for m in &b.measurements {
        if !matches!(m.kind, Kind::P2pCopy | Kind::D2d | Kind::H2d | Kind::D2h)
            || m.size_bytes.is_some()
        {
            continue;
        }
        if m.src.is_none() || m.dst.is_none() || m.statistic == Statistic::Single {
            continue;
        }
        let lat = m.latency_s.is_some();
        groups
            .entry((
                m.source.file.to_string(),
                m.test.to_string(),
                m.statistic,
                m.direction,
                lat,
            ))
            .or_default()
            .push(m);
    }
    let mut out = Vec::new();
    for ((_, test, stat, dir, lat), cells) in groups {
        let mut srcs: Vec<String> = cells
            .iter()
            .filter_map(|m| m.src.as_ref().map(|s| s.to_string()))
            .collect();
        let mut dsts: Vec<String> = cells
            .iter()
            .filter_map(|m| m.dst.as_ref().map(|s| s.to_string()))
            .collect();
        let key = |s: &String| crate::evidence::topology::device_sort_key(s);
        srcs.sort_by_key(key);
        srcs.dedup();
        dsts.sort_by_key(key);
        dsts.dedup();
        // The colour scale leaves the diagonal (a device to itself, a local
        // copy) out: it would set the scale and wash out every link.
        let values: Vec<f64> = cells
            .iter()
            .filter(|m| m.src.is_none() || m.src != m.dst)
            .filter_map(|m| {
                if lat {
                    m.latency_s
                } else {
                    m.bandwidth_bytes_per_s
                }
            })
            .collect();
        let max = values.iter().cloned().fold(0.0f64, f64::max);
        let rows = srcs
            .iter()
            .map(|s| {
                let row = dsts
                    .iter()
                    .map(|d| {
                        let c = cells.iter().find(|m| {
                            m.src.as_deref() == Some(s.as_str())
                                && m.dst.as_deref() == Some(d.as_str())
                        });
                        match c {
                            Some(m) => {
                                let v = if lat {
                                    m.latency_s.unwrap_or(0.0)
                                } else {
                                    m.bandwidth_bytes_per_s.unwrap_or(0.0)
                                };
                                let text = if lat {
                                    format!("{:.2}", v * 1e6)
                                } else {
                                    format!("{:.1}", v / 1e9)
                                };
                                let style = if s == d {
                                    "background:#e5e7eb".to_string()
                                } else {
                                    heat(v, max, lat)
                                };
                                (text, style)
                            }
                            None => (String::new(), String::new()),
                        }
                    })
                    .collect();
                (s.clone(), row)
            })
            .collect();
        out.push(ValueMatrix {
            title: format!(
                "{test} ({}, {})",
                format!("{stat:?}").to_lowercase(),
                if dir == Direction::Bi {
                    "bidirectional, sum of both"
                } else {
                    "unidirectional, row to column"
                }
            ),
            unit: if lat {
                "us".into()
            } else {
                "GB/s (1e9 bytes/s)".into()
            },
            source: linker.link(&cells[0].source),
            columns: dsts,
            rows,
        });
    }
    out
}

/// A background colour: darker for better (higher bandwidth, lower latency).
fn heat(v: f64, max: f64, lower_is_better: bool) -> String {
    if max <= 0.0 || v <= 0.0 {
        return String::new();
    }
    // Log scale over three decades below the best.
    let r = (v / max).log10().clamp(-3.0, 0.0) / 3.0 + 1.0;
    let r = if lower_is_better { 1.0 - r * 0.8 } else { r };
    let light = (95.0 - 50.0 * r).round() as u32;
    let bg = hsl_blue(f64::from(light) / 100.0);
    // Black or white text, whichever reads better: one of them always
    // reaches 4.5:1 (the old dark grey text fell to 3.6:1 mid-scale).
    let text = if charts::contrast(bg, (0, 0, 0)) >= charts::contrast(bg, (255, 255, 255)) {
        "#000"
    } else {
        "#fff"
    };
    format!("background:hsl(210,70%,{light}%);color:{text}")
}

/// `hsl(210, 70%, l)` in sRGB, to choose the text colour over it.
fn hsl_blue(l: f64) -> (u8, u8, u8) {
    let (h, s) = (210.0 / 360.0, 0.7);
    let q = if l < 0.5 {
        l * (1.0 + s)
    } else {
        l + s - l * s
    };
    let p = 2.0 * l - q;
    let channel = |t: f64| {
        let t = t.rem_euclid(1.0);
        let v = if t < 1.0 / 6.0 {
            p + (q - p) * 6.0 * t
        } else if t < 0.5 {
            q
        } else if t < 2.0 / 3.0 {
            p + (q - p) * (2.0 / 3.0 - t) * 6.0
        } else {
            p
        };
        (v * 255.0).round() as u8
    };
    (channel(h + 1.0 / 3.0), channel(h), channel(h - 1.0 / 3.0))
}

/// The expected ceiling of a sweep's path, and where it comes from in
/// words, when the link facts give one ([`NodeFacts::ceiling`]).
fn ceiling_of(s: &fit::Sweep, facts: &NodeFacts) -> Option<(f64, String)> {
    let mut m = Measurement::new("sweep", 1, s.kind, s.test.clone(), s.statistic);
    m.src = s.src.clone().map(Into::into);
    m.dst = s.dst.clone().map(Into::into);
    m.direction = s.direction;
    let c = facts.ceiling(&m)?;
    let from = crate::render::explain::ceiling_from(&c.from);
    Some((c.bytes_per_s, from))
}

/// The words under a fitted sweep: each segment's alpha, beta, m* and R^2
/// (MODEL), its knees, and how the bandwidth was obtained.
fn fit_note(f: &fit::SegmentedFit, from_latency: bool) -> String {
    let segs: Vec<String> = f
        .segments
        .iter()
        .map(|g| {
            format!(
                "{} to {}: alpha {}, beta {}, m* {}, R^2 {:.3}",
                size_short(g.from_bytes),
                size_short(g.to_bytes),
                secs(g.alpha_s),
                gbs(g.beta_bytes_per_s),
                size_short(g.m_star_bytes),
                g.r_squared
            )
        })
        .collect();
    format!(
        "MODEL fit t(m) = alpha + m/beta, {}.{} {}",
        segs.join("; "),
        knees(&f.knees_bytes),
        if from_latency {
            "Bandwidth shown is size / measured time."
        } else {
            "Times are size / measured bandwidth."
        }
    )
}

/// ` Knees at 64 KiB, 1 MiB.`, or nothing.
fn knees(knees_bytes: &[f64]) -> String {
    if knees_bytes.is_empty() {
        return String::new();
    }
    let k: Vec<String> = knees_bytes.iter().map(|k| size_short(*k)).collect();
    format!(" Knees at {}.", k.join(", "))
}

/// The lines a sweep's chart draws and the note under it: lines only for
/// a sound fit ([`fit::fit_sweep`] judges); an unsound one is named as
/// such, with its reasons, and drawn as points alone.
fn fit_view(judged: &fit::SweepFit, from_latency: bool) -> (Vec<FitLine>, String) {
    match judged {
        fit::SweepFit::Sound(f) => {
            let lines = f
                .segments
                .iter()
                .map(|g| FitLine {
                    alpha_s: g.alpha_s,
                    beta_bytes_per_s: g.beta_bytes_per_s,
                    from_bytes: g.from_bytes,
                    to_bytes: g.to_bytes,
                })
                .collect();
            (lines, fit_note(f, from_latency))
        }
        // Many messages in flight: beta only (see `Sweep::alpha_meaningful`).
        fit::SweepFit::BetaOnly {
            plateau_bytes_per_s,
            queue_depth,
            ..
        } => (
            Vec::new(),
            format!(
                "beta {} (the largest message's bandwidth); no alpha-beta fit. Alpha and m* not given: {queue_depth} messages in flight hide the cost of one; alpha comes from a latency test.",
                gbs(*plateau_bytes_per_s),
            ),
        ),
        fit::SweepFit::Unsound { fit, why } => (
            Vec::new(),
            crate::render::trust::unsound_fit(why, fit.segments.len()),
        ),
        fit::SweepFit::NoFit(_) => (
            Vec::new(),
            "No alpha-beta fit: the sweep does not support one.".into(),
        ),
    }
}

/// Size sweeps: bandwidth vs size on log-log axes with the fit dashed and
/// m* marked (only where the fit is sound) and the path's ceiling where
/// known; collectives as busbw vs size; median/fastest/slowest sweeps as
/// three lines.
pub(super) fn sweep_charts(b: &Bundle, facts: &NodeFacts, linker: &Linker<'_>) -> Vec<ChartView> {
    let mut out = Vec::new();
    for s in fit::sweeps(&b.measurements).iter().take(12) {
        // A collective's times are drawn as times: its size over its time
        // is neither a path's bandwidth nor busbw (drawn below from the
        // tool's own column where it printed one).
        if s.kind.is_collective() && s.from_latency {
            out.push(latency_view(s, linker, "Measured time of one collective per message size, from the tool's time column; not drawn as GB/s: size over time of a collective is no link's bandwidth."));
            continue;
        }
        let series = Series {
            label: s.label(),
            points: s
                .points
                .iter()
                .map(|p| (p.size_bytes, p.size_bytes / p.time_s))
                .collect(),
        };
        let (lines, note) = fit_view(&fit::fit_sweep(s, 3), s.from_latency);
        // The legend keeps the figure short; the note says where it comes from.
        let ceiling = ceiling_of(s, facts);
        let legend = ceiling
            .as_ref()
            .map(|(c, _)| format!("{} (link facts, below the chart)", gbs(*c)));
        let note = match &ceiling {
            Some((c, from)) => format!("{note} Expected ceiling {}: {from}.", gbs(*c)),
            None => note,
        };
        let y = if s.direction == Direction::Bi {
            "GB/s both directions (1e9 bytes/s, log)"
        } else {
            "GB/s (1e9 bytes/s, log)"
        };
        out.push(ChartView {
            title: s.label(),
            svg: charts::sweep_chart(
                &s.label(),
                &[series],
                &lines,
                y,
                ceiling
                    .as_ref()
                    .zip(legend.as_deref())
                    .map(|((c, _), l)| (*c, l)),
            ),
            note,
            source: Some(linker.link(&s.source)),
        });
        // A latency sweep: the measured times too, in microseconds.
        if s.from_latency {
            out.push(latency_view(
                s,
                linker,
                "Measured latency per message size, as the tool printed it (microseconds).",
            ));
        }
    }
    out.extend(collective_charts(b, linker));
    out.extend(spread_charts(b, linker));
    out
}

/// A latency sweep's times against size, in microseconds.
fn latency_view(s: &fit::Sweep, linker: &Linker<'_>, note: &str) -> ChartView {
    let title = format!("{} latency", s.label());
    ChartView {
        svg: charts::latency_chart(
            &title,
            &[Series {
                label: s.label(),
                points: s.points.iter().map(|p| (p.size_bytes, p.time_s)).collect(),
            }],
        ),
        title,
        note: note.into(),
        source: Some(linker.link(&s.source)),
    }
}

/// Collectives: busbw vs size, out-of-place and in-place together.
fn collective_charts(b: &Bundle, linker: &Linker<'_>) -> Vec<ChartView> {
    let mut out = Vec::new();
    let mut coll: BTreeMap<(String, String), Vec<&Measurement>> = BTreeMap::new();
    for m in &b.measurements {
        if m.statistic == Statistic::Busbw && m.size_bytes.is_some_and(|s| s > 0) {
            coll.entry((m.source.file.to_string(), m.kind.as_str().to_string()))
                .or_default()
                .push(m);
        }
    }
    for ((_, kind), cells) in coll {
        let mut by_test: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
        for m in &cells {
            if let (Some(s), Some(bw)) = (m.size_bytes, m.bandwidth_bytes_per_s)
                && bw > 0.0
            {
                by_test
                    .entry(m.test.to_string())
                    .or_default()
                    .push((s as f64, bw));
            }
        }
        let series: Vec<Series> = by_test
            .into_iter()
            .map(|(label, points)| Series { label, points })
            .collect();
        if series.iter().all(|s| s.points.len() < 2) {
            continue;
        }
        let title = format!("{kind}: bus bandwidth vs message size");
        out.push(ChartView {
            svg: charts::sweep_chart(&title, &series, &[], "busbw GB/s (1e9 bytes/s, log)", None),
            title,
            note: "busbw = algbw x the collective's factor, comparable with a link's bandwidth (nccl-tests).".into(),
            source: Some(linker.link(&cells[0].source)),
        });
    }
    out
}

/// Sweeps reported as a median with the fastest and slowest repetition
/// (wire-report's own copy sweeps): the three as lines against size.
fn spread_charts(b: &Bundle, linker: &Linker<'_>) -> Vec<ChartView> {
    type Key = (String, String, String, Option<String>, Option<String>);
    /// Points (size, bytes/s) of each statistic.
    type Lines = BTreeMap<&'static str, Vec<(f64, f64)>>;
    let mut groups: BTreeMap<Key, Lines> = BTreeMap::new();
    let mut first: BTreeMap<Key, &Measurement> = BTreeMap::new();
    for m in &b.measurements {
        let name = match m.statistic {
            Statistic::Median => "median",
            Statistic::Max => "fastest",
            Statistic::Min => "slowest",
            _ => continue,
        };
        let (Some(size), Some(bw)) = (m.size_bytes, m.bandwidth_bytes_per_s) else {
            continue;
        };
        if size == 0 || bw <= 0.0 {
            continue;
        }
        let key = (
            m.source.file.to_string(),
            m.tool.to_string(),
            m.test.to_string(),
            m.src.as_ref().map(|x| x.to_string()),
            m.dst.as_ref().map(|x| x.to_string()),
        );
        first.entry(key.clone()).or_insert(m);
        groups
            .entry(key)
            .or_default()
            .entry(name)
            .or_default()
            .push((size as f64, bw));
    }
    let mut out = Vec::new();
    for (key, by) in groups {
        if by.get("median").is_none_or(|p| p.len() < 2) {
            continue;
        }
        let series: Vec<Series> = ["median", "fastest", "slowest"]
            .into_iter()
            .filter_map(|n| {
                let mut points = by.get(n)?.clone();
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                Some(Series {
                    label: format!("{n} of the repetitions"),
                    points,
                })
            })
            .collect();
        let m = first[&key];
        let pair = match (&key.3, &key.4) {
            (Some(s), Some(d)) => format!(" {s}->{d}"),
            _ => String::new(),
        };
        let title = format!("{} {}{pair}", key.1, key.2);
        let y = if m.direction == Direction::Bi {
            "GB/s both directions (1e9 bytes/s, log)"
        } else {
            "GB/s (1e9 bytes/s, log)"
        };
        out.push(ChartView {
            svg: charts::sweep_chart(&title, &series, &[], y, None),
            title,
            note: format!(
                "Measured: bytes/s = size / time of one copy, median, fastest and slowest of the repetitions at each size ({}).",
                m.kind.as_str()
            ),
            source: Some(linker.link(&m.source)),
        });
    }
    out
}

/// Whether the ladder has a point to draw.
pub(super) fn has_ladder(b: &Bundle, facts: &NodeFacts) -> bool {
    !ladder_points(b, facts).is_empty()
}

/// The bandwidth ladder chart, or nothing when it has no point.
pub(super) fn ladder(b: &Bundle, facts: &NodeFacts) -> String {
    charts::ladder_chart(&ladder_points(b, facts))
}

/// The latency ladder chart, or nothing when no latency is measured.
pub(super) fn latency_ladder(b: &Bundle, facts: &NodeFacts) -> String {
    charts::latency_ladder_chart(&latency_points(b, facts))
}

/// ` fell a tier: expected scale-up`, where it did.
fn fell(p: facts::ladder::Placement) -> String {
    match p.fell_from {
        Some(t) => format!(
            " fell a tier: expected {}",
            crate::models::ladder::TIERS[t]
                .name
                .split(" (")
                .next()
                .unwrap_or("")
        ),
        None => String::new(),
    }
}

/// This node's best figure per kind, transcript and path, in the tier of
/// its path ([`facts::placement`]): one direction on one node
/// ([`facts::ladder_points`] halves bidirectional sums and keeps
/// multi-node figures off).
pub(super) fn ladder_points(b: &Bundle, facts: &NodeFacts) -> Vec<Rung> {
    facts::ladder_points(b, facts)
        .into_iter()
        .filter(|p| p.scope != LadderScope::MultiNode)
        .map(|p| {
            let f: String = p.file.chars().take(18).collect();
            let label = match p.scope {
                LadderScope::BothDirectionsHalved => format!(
                    "{} {} per direction (sum {}) ({f}){}",
                    p.kind,
                    gbs(p.per_direction_bytes_per_s),
                    gbs(p.measured_bytes_per_s),
                    fell(p.placement)
                ),
                _ => format!(
                    "{} {} ({f}){}",
                    p.kind,
                    gbs(p.per_direction_bytes_per_s),
                    fell(p.placement)
                ),
            };
            Rung {
                tier: p.placement.tier,
                value: p.per_direction_bytes_per_s,
                label,
                fell: p.placement.fell_from.is_some(),
            }
        })
        .collect()
}

/// This node's lowest latency per kind, transcript and path.
fn latency_points(b: &Bundle, facts: &NodeFacts) -> Vec<Rung> {
    facts::ladder::latency_points(b, facts)
        .into_iter()
        .map(|p| {
            let f: String = p.file.chars().take(18).collect();
            let at = p
                .size_bytes
                .map(|s| format!(" at {}", size_short(s as f64)))
                .unwrap_or_default();
            Rung {
                tier: p.placement.tier,
                value: p.latency_s,
                label: format!(
                    "{} {}{at} ({f}){}",
                    p.kind,
                    secs(p.latency_s),
                    fell(p.placement)
                ),
                fell: p.placement.fell_from.is_some(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
