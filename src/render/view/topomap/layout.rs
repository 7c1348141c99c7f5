//! Where everything on the map goes, within [`MAX_W`] pixels so a map is
//! drawn unscaled (text at its set size) and whole on an 800 px page.
//!
//! Boxes flow like words in a paragraph: left to right, wrapping when the
//! next would pass the width; a box sizes to what it holds and its
//! caption. A switch of one or two devices stacks them (a GPU over its
//! adapter), so four such switches sit side by side. Text widths are
//! estimated at [`CHAR_W`] a character (DejaVu Sans at 12 px, the widest
//! of the usual sans-serif fonts), so a label fits its box.

use std::collections::BTreeMap;

use super::{Item, MapBox, MapDevice, MapEdge, Mesh, TopoMap};

/// The widest a map is drawn: an 800 px window's content column (800
/// less the page's 2 x 24 px padding, a scroll bar and the SVG's border).
pub(super) const MAX_W: f64 = 720.0;
pub(super) const MARGIN: f64 = 10.0;
/// Estimated width of one character at 12 px.
pub(super) const CHAR_W: f64 = 7.5;
pub(super) const DEV_H: f64 = 38.0;
const DEV_MIN_W: f64 = 88.0;
/// A GPU in the scale-up panel, which needs only its id.
const GPU_W: f64 = 64.0;
const GPU_H: f64 = 30.0;
const GAP: f64 = 10.0;
/// The grid of GPUs joined edge by edge, and the room kept above and
/// below it for links that bend around the others.
const EDGE_PITCH_X: f64 = 150.0;
const EDGE_PITCH_Y: f64 = 96.0;
const EDGE_ROOM: f64 = 40.0;
const PAD: f64 = 8.0;
/// A caption line of a box.
pub(super) const LINE_H: f64 = 16.0;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    pub fn centre(&self) -> (f64, f64) {
        (self.x + self.w / 2.0, self.y + self.h / 2.0)
    }
    fn shift(self, dx: f64, dy: f64) -> Rect {
        Rect {
            x: self.x + dx,
            y: self.y + dy,
            ..self
        }
    }
}

/// Placed things; positions relative to this placement's origin.
#[derive(Debug, Default)]
pub(super) struct Placed<'a> {
    pub devices: BTreeMap<&'a str, Rect>,
    /// Boxes, outer before inner.
    pub boxes: Vec<(&'a MapBox, Rect)>,
    /// Each mesh's bar.
    pub bars: Vec<(&'a Mesh, Rect)>,
    pub w: f64,
    pub h: f64,
}

impl<'a> Placed<'a> {
    fn add(&mut self, other: Placed<'a>, dx: f64, dy: f64) {
        self.devices
            .extend(other.devices.into_iter().map(|(k, r)| (k, r.shift(dx, dy))));
        self.boxes
            .extend(other.boxes.into_iter().map(|(b, r)| (b, r.shift(dx, dy))));
        self.bars
            .extend(other.bars.into_iter().map(|(b, r)| (b, r.shift(dx, dy))));
        self.w = self.w.max(dx + other.w);
        self.h = self.h.max(dy + other.h);
    }
}

/// Estimated width of a text at 12 px.
pub(super) fn text_w(s: &str) -> f64 {
    s.chars().count() as f64 * CHAR_W
}

fn device_w(d: &MapDevice) -> f64 {
    d.lines
        .iter()
        .map(|l| text_w(l) + 12.0)
        .fold(DEV_MIN_W, f64::max)
}

/// Lays `parts` left to right, wrapping at `max_w`, or one under another.
fn flow<'a>(parts: Vec<Placed<'a>>, max_w: f64, column: bool) -> Placed<'a> {
    let mut out = Placed::default();
    let (mut x, mut y, mut row_h) = (0.0, 0.0, 0.0f64);
    for p in parts {
        if column {
            let h = p.h;
            out.add(p, 0.0, y);
            y += h + GAP;
            continue;
        }
        if x > 0.0 && x + p.w > max_w {
            x = 0.0;
            y += row_h + GAP;
            row_h = 0.0;
        }
        let (w, h) = (p.w, p.h);
        out.add(p, x, y);
        x += w + GAP;
        row_h = row_h.max(h);
    }
    out
}

/// A box and what it holds, at the origin.
fn place_box<'a>(b: &'a MapBox, m: &'a TopoMap, max_w: f64) -> Placed<'a> {
    let inner_max = max_w - 2.0 * PAD;
    let column = b.items.len() <= 2 && b.items.iter().all(|i| matches!(i, Item::Device(_)));
    let parts = b
        .items
        .iter()
        .map(|i| match i {
            Item::Device(id) => {
                let mut p = Placed::default();
                let w = m.device(id).map_or(DEV_MIN_W, device_w);
                p.devices.insert(
                    id.as_str(),
                    Rect {
                        x: 0.0,
                        y: 0.0,
                        w,
                        h: DEV_H,
                    },
                );
                p.w = w;
                p.h = DEV_H;
                p
            }
            Item::Box(inner) => place_box(inner, m, inner_max),
        })
        .collect();
    let inner = flow(parts, inner_max, column);
    let caption = b.label.iter().map(|l| text_w(l)).fold(0.0, f64::max);
    let top = PAD + LINE_H * b.label.len() as f64;
    let w = inner.w.max(caption).min(inner_max) + 2.0 * PAD;
    let h = top + inner.h + PAD;
    let mut out = Placed::default();
    out.boxes.push((
        b,
        Rect {
            x: 0.0,
            y: 0.0,
            w,
            h,
        },
    ));
    out.add(inner, PAD, top);
    out.w = w;
    out.h = h;
    out
}

/// The PCIe panel: the NUMA boxes, flowed.
pub(super) fn pcie(m: &TopoMap) -> Placed<'_> {
    let max_w = MAX_W - 2.0 * MARGIN;
    let parts = m.numa.iter().map(|b| place_box(b, m, max_w)).collect();
    let mut out = Placed::default();
    out.add(flow(parts, max_w, false), MARGIN, MARGIN);
    out
}

/// A mesh: its GPUs in rows above and below one bar.
fn place_mesh<'a>(mesh: &'a Mesh, caption: f64, max_w: f64) -> Placed<'a> {
    let pitch = GPU_W + 16.0;
    let n = mesh.members.len();
    let fit = (((max_w + 16.0) / pitch).floor() as usize).max(1);
    let cols = n.div_ceil(2).min(fit);
    let rows = n.div_ceil(cols);
    let above = rows.div_ceil(2);
    let bar_w = (cols as f64 * pitch - 16.0).max(caption + 20.0).min(max_w);
    let row_gap = 46.0;
    let bar_h = 28.0;
    let bar_y = above as f64 * (GPU_H + row_gap);
    let mut out = Placed::default();
    for (i, id) in mesh.members.iter().enumerate() {
        let (r, c) = (i / cols, i % cols);
        let in_row = if r + 1 == rows { n - r * cols } else { cols };
        let x0 = (bar_w - (in_row as f64 * pitch - 16.0)) / 2.0;
        let y = if r < above {
            r as f64 * (GPU_H + row_gap)
        } else {
            bar_y + bar_h + row_gap + (r - above) as f64 * (GPU_H + row_gap)
        };
        out.devices.insert(
            id.as_str(),
            Rect {
                x: x0 + c as f64 * pitch,
                y,
                w: GPU_W,
                h: GPU_H,
            },
        );
    }
    out.bars.push((
        mesh,
        Rect {
            x: 0.0,
            y: bar_y,
            w: bar_w,
            h: bar_h,
        },
    ));
    out.w = bar_w;
    out.h = bar_y + bar_h + (rows - above) as f64 * (GPU_H + row_gap);
    out
}

/// GPUs joined edge by edge: per NUMA box, a grid two wide (a quad of
/// GPUs is a square, so a DGX-1's cube mesh reads as two squares), each
/// grid after the first mirrored where that shortens the links to the
/// grids before it (GPU1 beside GPU5, not GPU4).
fn place_edges<'a>(edges: &'a [MapEdge], m: &'a TopoMap, max_w: f64) -> Placed<'a> {
    let mut groups: BTreeMap<(bool, usize, &str), Vec<&str>> = BTreeMap::new();
    for d in &m.devices {
        if edges.iter().any(|e| e.a == d.id || e.b == d.id) {
            let g = d.group.as_str();
            groups
                .entry((g.contains("not stated"), g.len(), g))
                .or_default()
                .push(d.id.as_str());
        }
    }
    let groups: Vec<Vec<&str>> = groups.into_values().collect();
    let parts = groups
        .iter()
        .map(|ids| {
            let mut p = Placed::default();
            for (i, id) in ids.iter().enumerate() {
                let (c, r) = ((i % 2) as f64, (i / 2) as f64);
                p.devices.insert(
                    id,
                    Rect {
                        x: c * EDGE_PITCH_X,
                        y: EDGE_ROOM + r * EDGE_PITCH_Y,
                        w: GPU_W,
                        h: GPU_H,
                    },
                );
            }
            // Room between groups, above and below for the links that
            // bend around the others.
            p.w = if ids.len() > 1 { EDGE_PITCH_X } else { 0.0 } + GPU_W + 60.0;
            p.h = 2.0 * EDGE_ROOM + ids.len().div_ceil(2) as f64 * EDGE_PITCH_Y - EDGE_PITCH_Y
                + GPU_H;
            p
        })
        .collect();
    let mut out = flow(parts, max_w, false);
    for (k, ids) in groups.iter().enumerate().skip(1) {
        let before: Vec<&str> = groups[..k].iter().flatten().copied().collect();
        // Links to the grids before that run over a device, then their
        // length: fewer detours first.
        let cost = |p: &Placed| -> (usize, f64) {
            let joining: Vec<&MapEdge> = edges
                .iter()
                .filter(|e| {
                    (ids.contains(&e.a.as_str()) && before.contains(&e.b.as_str()))
                        || (ids.contains(&e.b.as_str()) && before.contains(&e.a.as_str()))
                })
                .collect();
            let over = joining
                .iter()
                .filter(|e| blocked(p, &e.a, &e.b, 0.0))
                .count();
            let length = joining
                .iter()
                .filter_map(|e| {
                    Some((
                        p.devices.get(e.a.as_str())?.centre(),
                        p.devices.get(e.b.as_str())?.centre(),
                    ))
                })
                .map(|(a, b)| ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt())
                .sum();
            (over, length)
        };
        let plain = cost(&out);
        let mut mirrored = Placed {
            devices: out.devices.clone(),
            w: out.w,
            h: out.h,
            ..Placed::default()
        };
        for row in ids.chunks(2) {
            if let [a, b] = row {
                let (ra, rb) = (mirrored.devices[a], mirrored.devices[b]);
                mirrored.devices.insert(a, Rect { x: rb.x, ..ra });
                mirrored.devices.insert(b, Rect { x: ra.x, ..rb });
            }
        }
        let turned = cost(&mirrored);
        if turned.0 < plain.0 || (turned.0 == plain.0 && turned.1 + 1.0 < plain.1) {
            out.devices = mirrored.devices;
        }
    }
    out
}

/// The scale-up panel: each mesh, then the GPUs joined edge by edge.
/// `caption` is the width of each mesh's label, in mesh order.
pub(super) fn scaleup<'a>(m: &'a TopoMap, captions: &[f64]) -> Placed<'a> {
    let max_w = MAX_W - 2.0 * MARGIN;
    let mut parts: Vec<Placed> = m
        .scaleup
        .meshes
        .iter()
        .zip(captions)
        .map(|(mesh, c)| place_mesh(mesh, *c, max_w))
        .collect();
    if !m.scaleup.edges.is_empty() {
        parts.push(place_edges(&m.scaleup.edges, m, max_w));
    }
    let parts = parts
        .into_iter()
        .map(|mut p| {
            p.w += 30.0;
            p
        })
        .collect();
    let mut out = Placed::default();
    out.add(flow(parts, max_w, false), MARGIN, MARGIN);
    out
}

/// A point `t` along a quadratic curve from `a` to `b` bent by `bend`.
pub(super) fn along(a: (f64, f64), b: (f64, f64), bend: f64, t: f64) -> (f64, f64) {
    let (mx, my) = ((a.0 + b.0) / 2.0, (a.1 + b.1) / 2.0);
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len = (dx * dx + dy * dy).sqrt().max(1.0);
    let c = (mx - dy / len * bend, my + dx / len * bend);
    let u = 1.0 - t;
    (
        u * u * a.0 + 2.0 * u * t * c.0 + t * t * b.0,
        u * u * a.1 + 2.0 * u * t * c.1 + t * t * b.1,
    )
}

/// Whether a link from `a` to `b` bent by `bend` runs over another
/// device or out of the drawing.
fn blocked(p: &Placed, a: &str, b: &str, bend: f64) -> bool {
    let (Some(ra), Some(rb)) = (p.devices.get(a), p.devices.get(b)) else {
        return false;
    };
    let (ca, cb) = (ra.centre(), rb.centre());
    (1..20).any(|k| {
        let q = along(ca, cb, bend, k as f64 / 20.0);
        q.0 < 2.0
            || q.1 < 2.0
            || q.0 > p.w - 2.0
            || q.1 > p.h - 2.0
            || p.devices.iter().any(|(id, r)| {
                *id != a
                    && *id != b
                    && q.0 > r.x - 6.0
                    && q.0 < r.x + r.w + 6.0
                    && q.1 > r.y - 6.0
                    && q.1 < r.y + r.h + 6.0
            })
    })
}

/// The least bend that keeps a link from `a` to `b` clear of every other
/// device, and inside the drawing.
pub(super) fn bend_for(p: &Placed, a: &str, b: &str) -> f64 {
    [0.0, 45.0, -45.0, 90.0, -90.0, 140.0, -140.0]
        .into_iter()
        .find(|bend| !blocked(p, a, b, *bend))
        .unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_curve_bends_away_from_the_straight_line_and_keeps_its_ends() {
        let (a, b) = ((0.0, 0.0), (100.0, 0.0));
        assert_eq!(along(a, b, 40.0, 0.0), a);
        assert_eq!(along(a, b, 40.0, 1.0), b);
        assert!((along(a, b, 40.0, 0.5).1 - 20.0).abs() < 1e-9);
    }

    #[test]
    fn boxes_too_wide_for_one_row_wrap_and_stay_within_the_width() {
        let part = |w: f64| Placed {
            w,
            h: 20.0,
            ..Placed::default()
        };
        let p = flow(vec![part(300.0), part(300.0), part(300.0)], 700.0, false);
        assert_eq!((p.w, p.h), (610.0, 50.0));
    }
}
