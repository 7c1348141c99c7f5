//! The topology map, in the spirit of hwloc's lstopo: one box per NUMA
//! node (from the transcript's affinity columns), the GPUs and adapters
//! inside it, the PCIe switches the evidence shows (`PIX` groups, sysfs
//! bridge chains: [`switches`]) with a dashed spoke to each device under
//! them, dashed PCIe links between devices behind several switches
//! (`PXB`), and the scale-up links: every direct link of the matrix
//! (NV#, XGMI) as an edge labelled with its code and drawn wider for more
//! links, or, when the codes say more links than a GPU has, one NVSwitch
//! hub. Only what the matrix states is drawn; what it does not state is said
//! under the map ([`TopoMap::notes`]).
//!
//! [`map`] decides what to draw (data a test can hold against the matrix);
//! [`svg`] draws it. Every edge carries `data-a`, `data-b` and `data-code`,
//! every switch `data-members` and the hub `data-members`, so a reviewer
//! (and `tests/it/topology_map.rs`) can check the picture edge by edge.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use crate::bundle::Bundle;
use crate::evidence::topology::{DeviceKind, LinkClass};
use crate::facts::NodeFacts;

mod switches;
pub use switches::MapSwitch;

/// Most NVLinks any NVIDIA GPU has had (Hopper and Blackwell: 18).
const MAX_NVLINKS_PER_GPU: u32 = 18;

/// One device on the map.
#[derive(Debug, Clone, PartialEq)]
pub struct MapDevice {
    pub id: String,
    pub label: String,
    pub is_gpu: bool,
    /// The box it sits in (`NUMA node 0`, or `NUMA node not stated`).
    pub group: String,
}

/// One drawn link between two devices, as the matrix states it.
#[derive(Debug, Clone, PartialEq)]
pub struct MapEdge {
    pub a: String,
    pub b: String,
    pub code: String,
    pub class: LinkClass,
    /// Bonded links (NV4 is 4); 1 when the code gives no count.
    pub links: u32,
}

/// What the map draws.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TopoMap {
    pub devices: Vec<MapDevice>,
    /// Direct links drawn device to device.
    pub edges: Vec<MapEdge>,
    /// GPUs joined through NVSwitch, and the code every pair of them shows.
    pub hub: Option<(Vec<String>, String)>,
    /// PCIe switches the evidence shows ([`switches`]).
    pub switches: Vec<MapSwitch>,
    /// What the evidence does not say, in words.
    pub notes: Vec<String>,
}

/// The box a device sits in: its NUMA node, else the CPUs closest to it.
fn group_of(d: &crate::evidence::topology::Device) -> String {
    if let Some(n) = d.numa_node {
        return format!("NUMA node {n}");
    }
    match &d.cpu_affinity {
        Some(r) if !r.is_empty() => format!(
            "CPUs {}",
            r.iter()
                .map(|c| if c.first == c.last {
                    c.first.to_string()
                } else {
                    format!("{}-{}", c.first, c.last)
                })
                .collect::<Vec<_>>()
                .join(",")
        ),
        _ => "NUMA node not stated".into(),
    }
}

/// Decides what to draw from the topology the bundle holds.
pub fn map(b: &Bundle, facts: &NodeFacts) -> TopoMap {
    let t = &b.topology;
    let mut m = TopoMap::default();
    if t.devices.is_empty() {
        return m;
    }
    m.devices = t
        .devices
        .iter()
        .map(|d| MapDevice {
            id: d.id.clone(),
            label: match &d.name {
                Some(n) if d.kind == DeviceKind::Nic => format!("{} {n}", d.id),
                _ => d.id.clone(),
            },
            is_gpu: d.kind == DeviceKind::Gpu,
            group: group_of(d),
        })
        .collect();
    place_adapters(&mut m, t);
    let edge = |l: &crate::evidence::topology::Link| MapEdge {
        a: l.a.clone(),
        b: l.b.clone(),
        code: l.code.clone().unwrap_or_else(|| l.class.as_str().into()),
        class: l.class,
        links: l.nvlinks.unwrap_or(1).max(1),
    };
    let direct: Vec<MapEdge> = t
        .links
        .iter()
        .filter(|l| l.class == LinkClass::DirectLink)
        .map(|l| MapEdge {
            a: l.a.clone(),
            b: l.b.clone(),
            code: l.code.clone().unwrap_or_else(|| "direct".into()),
            class: l.class,
            links: l.nvlinks.unwrap_or(1).max(1),
        })
        .collect();
    m.hub = hub(&direct, facts);
    if let Some((members, code)) = &m.hub {
        let per_gpu = direct
            .iter()
            .find(|e| e.a == members[0])
            .map_or(0, |e| e.links)
            * (members.len() as u32 - 1);
        m.notes.push(format!(
            "Every pair of these {} GPUs shows {code}: {per_gpu} links per GPU if each pair \
             were wired directly, more than a GPU has, so the pairs meet in NVSwitch. It is \
             drawn as one hub; the transcript does not show the switches themselves.",
            members.len()
        ));
    } else {
        m.edges = direct;
    }
    // PCIe switches: the pairs the matrix puts behind one (PIX) or several
    // (PXB) switches, drawn dashed; the switches themselves are not named.
    m.edges.extend(
        t.links
            .iter()
            .filter(|l| l.class == LinkClass::PcieSwitch)
            .map(edge),
    );
    switches::place(b, facts, &mut m);
    let unknown = t
        .gpu_links()
        .filter(|l| l.class == LinkClass::Unknown)
        .count();
    if unknown > 0 {
        m.notes.push(format!(
            "{unknown} GPU pair(s) have no link class in the transcript; they are not drawn \
             (see the matrix)."
        ));
    }
    let gpus = facts.gpus.len();
    let described = t.gpu_links().count();
    let all_pairs = gpus * gpus.saturating_sub(1) / 2;
    if gpus > 1 && described == 0 {
        let pairs = if all_pairs == 1 { "pair" } else { "pairs" };
        m.notes.push(format!(
            "No link between these {gpus} GPUs ({all_pairs} {pairs}) was read from the \
             transcripts: none is drawn."
        ));
    } else if gpus > 1 && described < all_pairs {
        m.notes.push(format!(
            "The transcript describes {described} of {all_pairs} GPU pairs; the others are \
             not drawn."
        ));
    }
    m
}

/// Adapters with no affinity of their own go in the box of a GPU behind
/// their PCIe switch; the notes say how the devices were boxed.
fn place_adapters(m: &mut TopoMap, t: &crate::evidence::topology::Topology) {
    let group: BTreeMap<String, String> = m
        .devices
        .iter()
        .map(|d| (d.id.clone(), d.group.clone()))
        .collect();
    // An adapter with no affinity of its own sits with a GPU behind its
    // PCIe switch (PIX first, then PXB): same switch, same socket.
    let mut placed = Vec::new();
    for d in m.devices.iter_mut().filter(|d| !d.is_gpu) {
        if !d.group.contains("not stated") {
            continue;
        }
        let near = ["PIX", "PXB"].iter().find_map(|code| {
            t.gpus().find(|g| {
                !group[&g.id].contains("not stated")
                    && t.link(&g.id, &d.id).and_then(|l| l.code.as_deref()) == Some(code)
            })
        });
        if let Some(g) = near {
            d.group = group[&g.id].clone();
            placed.push(format!("{} (with {})", d.id, g.id));
        }
    }
    if !placed.is_empty() {
        m.notes.push(format!(
            "No affinity column for {}: each is drawn in the box of a GPU behind the same \
             PCIe switch.",
            placed.join(", ")
        ));
    }
    if t.devices.iter().all(|d| d.numa_node.is_none())
        && t.devices.iter().any(|d| d.cpu_affinity.is_some())
    {
        m.notes.push(
            "The transcript states no NUMA node; devices are boxed by the CPUs closest to them \
             (its CPU affinity column), which is how the sockets split."
                .into(),
        );
    } else if t.devices.iter().all(|d| d.numa_node.is_none()) {
        m.notes.push(
            "The transcript states no NUMA affinity, so every device is drawn in one box; \
             which socket each sits on is not known."
                .into(),
        );
    }
}

/// NVSwitch, when every GPU pair shows the same NV# code and that many
/// links to every other GPU is more than one GPU has (its NVLink count
/// from `nvidia-smi nvlink --status` when listed, else the most any GPU has).
fn hub(direct: &[MapEdge], facts: &NodeFacts) -> Option<(Vec<String>, String)> {
    let gpus = &facts.gpus;
    if gpus.len() < 3 {
        return None;
    }
    let first = direct.first()?;
    if !first.code.starts_with("NV") {
        return None;
    }
    let pairs: BTreeSet<(&str, &str)> = direct
        .iter()
        .filter(|e| e.code == first.code)
        .flat_map(|e| [(e.a.as_str(), e.b.as_str()), (e.b.as_str(), e.a.as_str())])
        .collect();
    let every_pair = gpus.iter().all(|a| {
        gpus.iter()
            .all(|b| a == b || pairs.contains(&(a.as_str(), b.as_str())))
    });
    let has = gpus
        .iter()
        .filter_map(|g| facts.nvlinks.get(g).map(|n| n.listed as u32))
        .max()
        .unwrap_or(MAX_NVLINKS_PER_GPU);
    (every_pair && first.links * (gpus.len() as u32 - 1) > has)
        .then(|| (gpus.clone(), first.code.clone()))
}

/// Pixel layout: box size and pitch.
const DEV_W: f64 = 92.0;
const DEV_H: f64 = 38.0;
const PITCH_X: f64 = 136.0;
const PITCH_Y: f64 = 110.0;
const PAD: f64 = 18.0;
/// The widest a map is drawn before its boxes wrap (a page's main column).
const MAX_WIDTH: f64 = 1300.0;

/// Where each device sits, and each group's box.
struct Layout {
    pos: BTreeMap<String, (f64, f64)>,
    groups: Vec<(String, (f64, f64, f64, f64))>,
    width: f64,
    height: f64,
}

fn layout(m: &TopoMap) -> Layout {
    let mut names: Vec<&str> = m.devices.iter().map(|d| d.group.as_str()).collect();
    names.sort_by_key(|g| (g.contains("not stated"), g.len(), g.to_string()));
    names.dedup();
    let mut top = if m.hub.is_some() { 110.0 } else { 20.0 };
    let mut pos = BTreeMap::new();
    let mut groups = Vec::new();
    let mut x0 = 10.0;
    let mut height: f64 = 0.0;
    let mut width: f64 = 0.0;
    for g in names {
        let gpus: Vec<&MapDevice> = m
            .devices
            .iter()
            .filter(|d| d.group == g && d.is_gpu)
            .collect();
        let nics: Vec<&MapDevice> = m
            .devices
            .iter()
            .filter(|d| d.group == g && !d.is_gpu)
            .collect();
        // One row under a hub (lines go straight up); else a grid of two
        // columns, so a quad of GPUs is a square and its links can be seen.
        let cols = if m.hub.is_some() {
            gpus.len().max(1)
        } else {
            2.min(gpus.len()).max(1)
        };
        let nic_cols = nics.len().clamp(1, cols.max(2));
        let w = cols.max(nic_cols) as f64 * PITCH_X - (PITCH_X - DEV_W) + 2.0 * PAD;
        // Boxes that would not fit a page's width start a new row (not
        // under a hub, whose lines run straight up).
        if m.hub.is_none() && x0 > 10.0 && x0 + w > MAX_WIDTH {
            x0 = 10.0;
            top = height + 24.0;
        }
        let mut y = top + PAD;
        for (i, d) in gpus.iter().enumerate() {
            let (c, r) = (i % cols, i / cols);
            pos.insert(
                d.id.clone(),
                (x0 + PAD + c as f64 * PITCH_X, y + r as f64 * PITCH_Y),
            );
        }
        y += gpus.len().div_ceil(cols) as f64 * PITCH_Y;
        for (i, d) in nics.iter().enumerate() {
            let (c, r) = (i % nic_cols, i / nic_cols);
            pos.insert(
                d.id.clone(),
                (x0 + PAD + c as f64 * PITCH_X, y + r as f64 * (DEV_H + 40.0)),
            );
        }
        y += nics.len().div_ceil(nic_cols) as f64 * (DEV_H + 40.0);
        groups.push((g.to_string(), (x0, top, w, y - top)));
        height = height.max(y);
        width = width.max(x0 + w);
        x0 += w + 24.0;
    }
    Layout {
        pos,
        groups,
        width: (width + 10.0).max(420.0),
        height: height + 10.0,
    }
}

/// A point `t` along a quadratic curve from `a` to `b` bent by `bend`.
fn along(a: (f64, f64), b: (f64, f64), bend: f64, t: f64) -> (f64, f64) {
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

/// The least bend that keeps a link clear of every other device.
fn bend_for(l: &Layout, e: &MapEdge) -> f64 {
    let centre = |id: &str| {
        l.pos
            .get(id)
            .map(|p| (p.0 + DEV_W / 2.0, p.1 + DEV_H / 2.0))
    };
    let (Some(a), Some(b)) = (centre(&e.a), centre(&e.b)) else {
        return 0.0;
    };
    let hits = |bend: f64| {
        (1..20).any(|k| {
            let p = along(a, b, bend, k as f64 / 20.0);
            l.pos.iter().any(|(id, q)| {
                id != &e.a
                    && id != &e.b
                    && p.0 > q.0 - 6.0
                    && p.0 < q.0 + DEV_W + 6.0
                    && p.1 > q.1 - 6.0
                    && p.1 < q.1 + DEV_H + 6.0
            })
        })
    };
    [0.0, 45.0, -45.0, 90.0, -90.0, 140.0, -140.0]
        .into_iter()
        .find(|b| !hits(*b))
        .unwrap_or(0.0)
}

/// Escapes text for SVG.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn colour(class: LinkClass) -> String {
    let c = crate::render::charts::class_colour(class.as_str());
    format!("rgb({},{},{})", c.0, c.1, c.2)
}

/// Stroke width for a number of bonded links.
fn width(links: u32) -> f64 {
    (1.5 + 0.9 * f64::from(links)).min(9.0)
}

/// The map as SVG (empty when there is nothing to draw).
pub fn svg(m: &TopoMap) -> String {
    if m.devices.is_empty() {
        return String::new();
    }
    let l = layout(m);
    let legend_y = l.height + 20.0;
    let h = legend_y + 20.0 * legend_items(m).len() as f64;
    // Wide enough for the legend's longest line (about 7 px a character).
    let w = l.width.max(60.0 + 7.0 * 90.0);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="topomap" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#,
    );
    for (g, (x, y, w, gh)) in &l.groups {
        let _ = write!(
            s,
            r##"<rect x="{x}" y="{y}" width="{w}" height="{gh}" rx="6" fill="#eef2fa" stroke="#9fb0d0"/><text x="{}" y="{}" font-size="13" font-weight="bold">{}</text>"##,
            x + 10.0,
            y + gh - 9.0,
            esc(g)
        );
    }
    if let Some((members, code)) = &m.hub {
        draw_hub(&mut s, &l, members, code);
    }
    draw_edges(&mut s, m, &l);
    switches::draw(&mut s, m, &l);
    for d in &m.devices {
        let Some((x, y)) = l.pos.get(&d.id) else {
            continue;
        };
        let fill = if d.is_gpu { "#dcfce7" } else { "#ffedd5" };
        let _ = write!(
            s,
            r##"<g class="device" data-id="{id}"><rect x="{x}" y="{y}" width="{DEV_W}" height="{DEV_H}" rx="4" fill="{fill}" stroke="#333"/>"##,
            id = esc(&d.id),
        );
        // An adapter's id and name on two lines, so the box stays narrow.
        let lines: Vec<&str> = match d.label.split_once(' ') {
            Some((a, b)) => vec![a, b],
            None => vec![d.label.as_str()],
        };
        let top = y + DEV_H / 2.0 + 4.0 - 7.0 * (lines.len() as f64 - 1.0);
        for (i, line) in lines.iter().enumerate() {
            let _ = write!(
                s,
                r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
                x + DEV_W / 2.0,
                top + 14.0 * i as f64,
                esc(line)
            );
        }
        s.push_str("</g>");
    }
    legend(&mut s, m, legend_y);
    s.push_str("</svg>");
    let gpus = m.devices.iter().filter(|d| d.is_gpu).count();
    crate::render::charts::titled(
        s,
        &format!(
            "topology map: {gpus} GPUs and {} adapters",
            m.devices.len() - gpus
        ),
        &format!(
            "ingested: {} direct links drawn, {} PCIe switches",
            m.edges.len(),
            m.switches.len()
        ),
    )
}

fn draw_hub(s: &mut String, l: &Layout, members: &[String], code: &str) {
    let (hx, hy, hw, hh) = (10.0, 20.0, l.width - 20.0, 40.0);
    let links = code.trim_start_matches("NV").parse().unwrap_or(1);
    let _ = write!(
        s,
        r##"<g class="hub" data-members="{}" data-code="{}">"##,
        esc(&members.join(" ")),
        esc(code)
    );
    for id in members {
        let Some((x, y)) = l.pos.get(id) else {
            continue;
        };
        let cx = x + DEV_W / 2.0;
        let _ = write!(
            s,
            r#"<line x1="{cx}" y1="{y}" x2="{cx}" y2="{}" stroke="{}" stroke-width="{}"/><text x="{}" y="{}" paint-order="stroke" stroke="white" stroke-width="3">{}</text>"#,
            hy + hh,
            colour(LinkClass::DirectLink),
            width(links),
            cx + 8.0,
            (y + hy + hh) / 2.0 + 4.0,
            esc(code)
        );
    }
    let _ = write!(
        s,
        r##"<rect x="{hx}" y="{hy}" width="{hw}" height="{hh}" rx="6" fill="#bbf7d0" stroke="#166534"/><text x="{}" y="{}" text-anchor="middle" font-weight="bold">NVSwitch (inferred: every GPU pair {}, see the note)</text></g>"##,
        hx + hw / 2.0,
        hy + 25.0,
        esc(code)
    );
}

fn draw_edges(s: &mut String, m: &TopoMap, l: &Layout) {
    let mut labels: Vec<(f64, f64)> = Vec::new();
    for e in &m.edges {
        let centre = |id: &str| {
            l.pos
                .get(id)
                .map(|p| (p.0 + DEV_W / 2.0, p.1 + DEV_H / 2.0))
        };
        let (Some(a), Some(b)) = (centre(&e.a), centre(&e.b)) else {
            continue;
        };
        let bend = bend_for(l, e);
        let c = along(a, b, bend * 2.0, 0.5);
        let _ = write!(
            s,
            r#"<path class="edge" data-a="{}" data-b="{}" data-code="{}" d="M{:.1},{:.1} Q{:.1},{:.1} {:.1},{:.1}" fill="none" stroke="{}" stroke-width="{:.1}" stroke-opacity="0.8"{}/>"#,
            esc(&e.a),
            esc(&e.b),
            esc(&e.code),
            a.0,
            a.1,
            c.0,
            c.1,
            b.0,
            b.1,
            colour(e.class),
            width(e.links),
            if e.class == LinkClass::PcieSwitch {
                r#" stroke-dasharray="7 4""#
            } else {
                ""
            }
        );
        // The label where no other label is.
        let spot = [0.5, 0.35, 0.65, 0.25, 0.75]
            .into_iter()
            .map(|t| along(a, b, bend, t))
            .find(|p| {
                labels
                    .iter()
                    .all(|q| (p.0 - q.0).abs() > 44.0 || (p.1 - q.1).abs() > 15.0)
            })
            .unwrap_or_else(|| along(a, b, bend, 0.5));
        labels.push(spot);
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" paint-order="stroke" stroke="white" stroke-width="4">{}</text>"#,
            spot.0,
            spot.1 + 4.0,
            esc(&e.code)
        );
    }
}

/// The legend's lines: which swatch, and its words.
fn legend_items(m: &TopoMap) -> Vec<(&'static str, &'static str)> {
    let mut items = Vec::new();
    if !m.edges.is_empty() || m.hub.is_some() {
        items.push((
            "link",
            "direct link (NV#, XGMI): labelled with the code as printed, wider for more bonded links",
        ));
    }
    if !m.switches.is_empty() {
        items.push((
            "switch",
            "PCIe switch: dashed spokes to the devices under it (PIX in the matrix, or the sysfs bridge chain)",
        ));
    }
    if m.edges.iter().any(|e| e.class == LinkClass::PcieSwitch) {
        items.push((
            "switch",
            "dashed: behind one PCIe switch (PIX) or several (PXB), code as printed",
        ));
    }
    items.push((
        "numa",
        "NUMA node or CPU set, from the transcript's affinity columns",
    ));
    items
}

fn legend(s: &mut String, m: &TopoMap, y0: f64) {
    let x = 10.0;
    for (i, (kind, text)) in legend_items(m).into_iter().enumerate() {
        let y = y0 + 20.0 * i as f64;
        let swatch = match kind {
            "link" => format!(
                r#"<line x1="{x}" y1="{y}" x2="{}" y2="{y}" stroke="{}" stroke-width="5"/>"#,
                x + 28.0,
                colour(LinkClass::DirectLink)
            ),
            "switch" => format!(
                r#"<line x1="{x}" y1="{y}" x2="{}" y2="{y}" stroke="{}" stroke-width="3" stroke-dasharray="6 3"/>"#,
                x + 28.0,
                colour(LinkClass::PcieSwitch)
            ),
            _ => format!(
                r##"<rect x="{x}" y="{}" width="28" height="12" fill="#eef2fa" stroke="#9fb0d0"/>"##,
                y - 6.0
            ),
        };
        let _ = write!(
            s,
            r#"{swatch}<text x="{}" y="{}">{}</text>"#,
            x + 36.0,
            y + 4.0,
            esc(text)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{Host, Origin};

    /// The map's notes for the bundle of one real capture file.
    fn notes_of(path: &str) -> Vec<String> {
        let bytes = std::fs::read(path).unwrap();
        let mut b = Bundle::new(Host {
            name: "n".into(),
            origin: Origin::Ingested,
        });
        b.absorb(crate::ingest::read_transcript(path, &bytes));
        map(&b, &NodeFacts::of(&b)).notes
    }

    #[test]
    fn gpus_with_no_link_described_are_said_so_not_counted_as_zero_of_n() {
        // Two A100s whose NVLinks are all inactive: no link class is stated.
        let notes = notes_of(
            "captures/a100-pcie-2gpu-no-nvlink/nvlink-status-004-2x-a100-pcie-no-nvlink-all-inactive.txt",
        );
        assert!(
            notes.contains(
                &"No link between these 2 GPUs (1 pair) was read from the transcripts: none is drawn."
                    .to_string()
            ),
            "{notes:?}"
        );
        assert!(
            !notes.iter().any(|n| n.contains("describes 0 of")),
            "{notes:?}"
        );
        // A matrix cut after three rows still counts the pairs it holds.
        let notes = notes_of(
            "captures/nv18-8gpu-6nic-peermem-nccl1737/nvidia-topo-021-8x-nv18-6nic-gh-3714u15-rows-gpu0-2-truncated.txt",
        );
        assert!(
            notes.contains(
                &"The transcript describes 18 of 28 GPU pairs; the others are not drawn."
                    .to_string()
            ),
            "{notes:?}"
        );
    }

    #[test]
    fn a_curve_bends_away_from_the_straight_line_and_keeps_its_ends() {
        let (a, b) = ((0.0, 0.0), (100.0, 0.0));
        assert_eq!(along(a, b, 40.0, 0.0), a);
        assert_eq!(along(a, b, 40.0, 1.0), b);
        assert!((along(a, b, 40.0, 0.5).1 - 20.0).abs() < 1e-9);
    }
}
