//! The map as SVG, from [`super::map`]'s data and [`super::layout`]'s
//! places: thin drawing code, no decisions.
//!
//! Every edge, spoke, box caption and device sits inside an `<a href>` to
//! the transcript line it rests on (SVG 2 `href`), with a `<title>`
//! tooltip; where no line is known there is no link rather than an empty
//! one. Everything from a transcript (device names, codes) is escaped,
//! in text and in attributes.

use std::fmt::Write;

use super::layout::{self, LINE_H, MARGIN, Placed, Rect, along, bend_for, text_w};
use super::{BoxKind, MapBox, MapEdge, Mesh, TopoMap};
use crate::evidence::Source;
use crate::evidence::topology::LinkClass;

/// The map's two panels as SVG, each empty when it has nothing to draw.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Panels {
    /// NUMA nodes, PCIe switches, GPUs and adapters.
    pub pcie: String,
    /// NVLink and xGMI between GPUs.
    pub scaleup: String,
}

/// Draws both panels; `href` turns a transcript line into a link (empty
/// when the line's transcript is not on the page).
pub fn svgs(m: &TopoMap, href: &dyn Fn(&Source) -> String) -> Panels {
    Panels {
        pcie: pcie(m, href),
        scaleup: scaleup(m, href),
    }
}

/// Escapes text for SVG text and attributes.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `<a href="...">` and `</a>`, or nothing when there is no link.
fn anchor(href: &str) -> (String, &'static str) {
    if href.is_empty() {
        (String::new(), "")
    } else {
        (format!(r#"<a href="{}">"#, esc(href)), "</a>")
    }
}

fn first_href(sources: &[Source], href: &dyn Fn(&Source) -> String) -> String {
    sources
        .iter()
        .map(href)
        .find(|h| !h.is_empty())
        .unwrap_or_default()
}

fn colour(class: LinkClass) -> String {
    let c = crate::render::charts::class_colour(class.as_str());
    format!("rgb({},{},{})", c.0, c.1, c.2)
}

/// Stroke width for a number of bonded links.
fn width(links: u32) -> f64 {
    (1.5 + 0.9 * f64::from(links)).min(9.0)
}

const EXCEPTION: &str = "#b91c1c";

/// The `<svg>` open tag, its title and its description (what a screen
/// reader says of the map, as every chart of the site has).
fn open(s: &mut String, w: f64, h: f64, title: &str, desc: &str) {
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="topomap" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}" font-family="sans-serif" font-size="12" role="img"><title>{}</title><desc>{}</desc>"#,
        esc(title),
        esc(desc)
    );
}

fn pcie(m: &TopoMap, href: &dyn Fn(&Source) -> String) -> String {
    if m.numa.is_empty() {
        return String::new();
    }
    let p = layout::pcie(m);
    let items = pcie_legend(m);
    let (w, h) = size(&p, &items);
    let mut s = String::new();
    open(
        &mut s,
        w,
        h,
        &format!(
            "topology map: PCIe tree of {} devices in {} NUMA boxes",
            m.devices.len(),
            m.numa.len()
        ),
        &format!(
            "ingested: {} PCIe edges drawn beside the switch boxes; every device and edge links to its transcript line",
            m.pcie_edges.len()
        ),
    );
    for (b, r) in &p.boxes {
        draw_box(&mut s, b, r, href);
    }
    let mut labels = Vec::new();
    for e in &m.pcie_edges {
        edge(&mut s, &p, e, Style::Pcie, &mut labels, href);
    }
    devices(&mut s, m, &p, href);
    legend(&mut s, &items, p.h + 20.0);
    s.push_str("</svg>");
    s
}

fn scaleup(m: &TopoMap, href: &dyn Fn(&Source) -> String) -> String {
    if m.scaleup.is_empty() {
        return String::new();
    }
    let captions: Vec<String> = m.scaleup.meshes.iter().map(caption).collect();
    let widths: Vec<f64> = captions.iter().map(|c| text_w(c)).collect();
    let p = layout::scaleup(m, &widths);
    let items = scaleup_legend(m);
    let (w, h) = size(&p, &items);
    let mut s = String::new();
    let gpus = p.devices.len();
    open(
        &mut s,
        w,
        h,
        &format!("topology map: scale-up links between {gpus} GPUs"),
        &format!(
            "ingested: {} mesh(es) summarised by one label each, {} link(s) drawn edge by edge",
            m.scaleup.meshes.len(),
            m.scaleup.edges.len()
        ),
    );
    let mut labels = Vec::new();
    for ((mesh, bar), text) in p.bars.iter().zip(&captions) {
        draw_mesh(&mut s, m, &p, mesh, bar, text, href);
        for e in &mesh.exceptions {
            edge(&mut s, &p, e, Style::Exception, &mut labels, href);
        }
    }
    for e in &m.scaleup.edges {
        edge(&mut s, &p, e, Style::Direct, &mut labels, href);
    }
    devices(&mut s, m, &p, href);
    legend(&mut s, &items, p.h + 20.0);
    s.push_str("</svg>");
    s
}

/// The drawing's size: the placed things and the legend under them.
fn size(p: &Placed, items: &[(Swatch, &str)]) -> (f64, f64) {
    let legend_w = items
        .iter()
        .map(|(_, t)| 46.0 + text_w(t))
        .fold(0.0, f64::max);
    let w = (p.w + MARGIN).max(legend_w + MARGIN).min(layout::MAX_W);
    (w, p.h + 20.0 + 20.0 * items.len() as f64)
}

/// A box: its frame, its caption linked to the lines it rests on.
fn draw_box(s: &mut String, b: &MapBox, r: &Rect, href: &dyn Fn(&Source) -> String) {
    let (fill, stroke, dash, tip) = match b.kind {
        BoxKind::Numa => (
            "#eef2fa",
            "#9fb0d0",
            "",
            "the devices whose affinity column names it",
        ),
        BoxKind::Tree => (
            "#f7fee7",
            "#4d7c0f",
            r#" stroke-dasharray="5 3""#,
            "PXB: several PCIe bridges between these devices, not the host bridge",
        ),
        BoxKind::Switch => (
            "#ecfccb",
            "#4d7c0f",
            "",
            "PIX: at most one PCIe bridge between these devices",
        ),
        BoxKind::Bridge => (
            "#ecfccb",
            "#4d7c0f",
            "",
            "a switch of the sysfs bridge chains",
        ),
    };
    let class = if b.kind == BoxKind::Numa {
        "numa"
    } else {
        "switch"
    };
    let _ = write!(
        s,
        r#"<g class="{class}" data-members="{}" data-code="{}"><title>{}: {tip}</title><rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" rx="6" fill="{fill}" stroke="{stroke}"{dash}/>"#,
        esc(&b.members.join(" ")),
        esc(&b.code),
        esc(&b.label.join(", ")),
        r.x,
        r.y,
        r.w,
        r.h,
    );
    let (a, close) = anchor(&first_href(&b.sources, href));
    s.push_str(&a);
    let bold = if b.kind == BoxKind::Numa {
        r#" font-weight="bold""#
    } else {
        ""
    };
    for (i, line) in b.label.iter().enumerate() {
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}"{bold}>{}</text>"#,
            r.x + 8.0,
            r.y + 8.0 + 12.0 + LINE_H * i as f64,
            esc(line)
        );
    }
    s.push_str(close);
    s.push_str("</g>");
}

/// Every placed device: a box with its lines, linked to its row.
fn devices(s: &mut String, m: &TopoMap, p: &Placed, href: &dyn Fn(&Source) -> String) {
    for d in &m.devices {
        let Some(r) = p.devices.get(d.id.as_str()) else {
            continue;
        };
        let fill = if d.is_gpu { "#dcfce7" } else { "#ffedd5" };
        let (a, close) = anchor(&d.source.as_ref().map(href).unwrap_or_default());
        let _ = write!(
            s,
            r##"{a}<g class="device" data-id="{}"><title>{}</title><rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" rx="4" fill="{fill}" stroke="#333"/>"##,
            esc(&d.id),
            esc(&d.title),
            r.x,
            r.y,
            r.w,
            r.h,
        );
        let lines = if r.h < 36.0 {
            &d.lines[..1]
        } else {
            &d.lines[..]
        };
        let top = r.y + r.h / 2.0 + 4.0 - 7.0 * (lines.len() as f64 - 1.0);
        for (i, line) in lines.iter().enumerate() {
            let _ = write!(
                s,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                r.x + r.w / 2.0,
                top + 14.0 * i as f64,
                esc(line)
            );
        }
        let _ = write!(s, "</g>{close}");
    }
}

/// The one label of a mesh.
fn caption(mesh: &Mesh) -> String {
    let code = if mesh.code.is_empty() {
        "direct"
    } else {
        &mesh.code
    };
    let kind = if mesh.nvswitch {
        "NVSwitch (inferred)"
    } else {
        "full mesh"
    };
    if mesh.common_pairs == mesh.pairs() {
        format!("{kind}: every GPU pair {code}")
    } else if mesh.common_pairs == mesh.described {
        format!(
            "{kind}: {code} in the {} of {} pairs described",
            mesh.described,
            mesh.pairs()
        )
    } else {
        format!("{kind}: {code} except as marked")
    }
}

/// A mesh: a spoke from each GPU to its bar, and the bar with its label.
fn draw_mesh(
    s: &mut String,
    m: &TopoMap,
    p: &Placed,
    mesh: &Mesh,
    bar: &Rect,
    text: &str,
    href: &dyn Fn(&Source) -> String,
) {
    let kind = if mesh.nvswitch {
        "nvswitch"
    } else {
        "full-mesh"
    };
    let _ = write!(
        s,
        r#"<g class="mesh" data-kind="{kind}" data-members="{}" data-code="{}">"#,
        esc(&mesh.members.join(" ")),
        esc(&mesh.code)
    );
    for id in &mesh.members {
        let Some(r) = p.devices.get(id.as_str()) else {
            continue;
        };
        let x = r.x + r.w / 2.0;
        let (y1, y2) = if r.y < bar.y {
            (r.y + r.h, bar.y)
        } else {
            (r.y, bar.y + bar.h)
        };
        let row = m.device(id).and_then(|d| d.source.as_ref()).map(href);
        let (a, close) = anchor(&row.unwrap_or_default());
        let _ = write!(
            s,
            r#"{a}<line class="spoke" data-a="{}" data-code="{}" x1="{x:.1}" y1="{y1:.1}" x2="{x:.1}" y2="{y2:.1}" stroke="{}" stroke-width="{:.1}"><title>{}: {} to every other GPU of the mesh (its row)</title></line>{close}"#,
            esc(id),
            esc(&mesh.code),
            colour(LinkClass::DirectLink),
            width(mesh.links),
            esc(id),
            esc(&mesh.code),
        );
    }
    let (fill, stroke) = if mesh.nvswitch {
        ("#bbf7d0", "#166534")
    } else {
        ("#dcfce7", "#166534")
    };
    let (a, close) = anchor(&first_href(&mesh.sources, href));
    let _ = write!(
        s,
        r#"{a}<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" rx="6" fill="{fill}" stroke="{stroke}"><title>{} of {} GPU pairs show {}</title></rect><text x="{:.1}" y="{:.1}" text-anchor="middle" font-weight="bold">{}</text>{close}</g>"#,
        bar.x,
        bar.y,
        bar.w,
        bar.h,
        mesh.common_pairs,
        mesh.pairs(),
        esc(&mesh.code),
        bar.x + bar.w / 2.0,
        bar.y + bar.h / 2.0 + 4.0,
        esc(text)
    );
}

#[derive(Clone, Copy, PartialEq)]
enum Style {
    /// A direct link of the scale-up panel.
    Direct,
    /// A pair of a mesh that differs from its common link.
    Exception,
    /// A PIX/PXB pair no box holds.
    Pcie,
}

/// One edge, curved clear of other devices, labelled with its code where
/// no other label is; edge and label link to the pair's line.
fn edge(
    s: &mut String,
    p: &Placed,
    e: &MapEdge,
    style: Style,
    labels: &mut Vec<(f64, f64)>,
    href: &dyn Fn(&Source) -> String,
) {
    let (Some(ra), Some(rb)) = (p.devices.get(e.a.as_str()), p.devices.get(e.b.as_str())) else {
        return;
    };
    let (a, b) = (ra.centre(), rb.centre());
    let bend = bend_for(p, &e.a, &e.b);
    let c = along(a, b, bend * 2.0, 0.5);
    let (stroke, w, dash, class) = match style {
        Style::Direct => (colour(e.class), width(e.links), "", "edge"),
        Style::Exception => (
            EXCEPTION.to_string(),
            2.5,
            r#" stroke-dasharray="4 3""#,
            "edge exception",
        ),
        Style::Pcie => (colour(e.class), 2.0, r#" stroke-dasharray="7 4""#, "edge"),
    };
    let (open, close) = anchor(&first_href(&e.sources, href));
    let _ = write!(
        s,
        r#"{open}<path class="{class}" data-a="{}" data-b="{}" data-code="{}" d="M{:.1},{:.1} Q{:.1},{:.1} {:.1},{:.1}" fill="none" stroke="{stroke}" stroke-width="{w:.1}" stroke-opacity="0.85"{dash}><title>{} - {}: {}</title></path>"#,
        esc(&e.a),
        esc(&e.b),
        esc(&e.code),
        a.0,
        a.1,
        c.0,
        c.1,
        b.0,
        b.1,
        esc(&e.a),
        esc(&e.b),
        esc(&e.code),
    );
    // The label where no other label is.
    let spot = [0.5, 0.35, 0.65, 0.25, 0.75]
        .into_iter()
        .map(|t| along(a, b, bend, t))
        .find(|q| {
            labels
                .iter()
                .all(|l| (q.0 - l.0).abs() > 44.0 || (q.1 - l.1).abs() > 15.0)
        })
        .unwrap_or_else(|| along(a, b, bend, 0.5));
    if e.code.is_empty() {
        s.push_str(close);
        return;
    }
    labels.push(spot);
    let fill = if style == Style::Exception {
        EXCEPTION
    } else {
        "#111"
    };
    let _ = write!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="{fill}" paint-order="stroke" stroke="white" stroke-width="4">{}</text>{close}"#,
        spot.0,
        spot.1 + 4.0,
        esc(&e.code)
    );
}

/// A legend line's swatch.
#[derive(Clone, Copy)]
enum Swatch {
    Numa,
    Switch,
    Tree,
    Dashed,
    Link,
    Bar,
    Exception,
    None,
}

fn pcie_legend(m: &TopoMap) -> Vec<(Swatch, &'static str)> {
    let mut items = vec![(Swatch::Numa, "NUMA node, from the affinity columns")];
    let kinds = |k: BoxKind| {
        fn any(items: &[super::Item], k: BoxKind) -> bool {
            items.iter().any(|i| match i {
                super::Item::Box(b) => b.kind == k || any(&b.items, k),
                super::Item::Device(_) => false,
            })
        }
        m.numa.iter().any(|b| any(&b.items, k))
    };
    if kinds(BoxKind::Switch) || kinds(BoxKind::Bridge) {
        items.push((Swatch::Switch, "PCIe switch: the devices in it share it"));
    }
    if kinds(BoxKind::Tree) {
        items.push((
            Swatch::Tree,
            "PCIe switches (PXB): several bridges, below one host port",
        ));
    }
    if !m.pcie_edges.is_empty() {
        items.push((Swatch::Dashed, "PIX/PXB pair no box holds, code as printed"));
    }
    if m.numa.len() > 1 || kinds(BoxKind::Switch) || kinds(BoxKind::Tree) || kinds(BoxKind::Bridge)
    {
        items.push((
            Swatch::None,
            "in no one box: a host bridge (PHB, NODE); across NUMA, SYS",
        ));
    }
    items
}

fn scaleup_legend(m: &TopoMap) -> Vec<(Swatch, &'static str)> {
    let mut items = Vec::new();
    if !m.scaleup.meshes.is_empty() {
        items.push((Swatch::Bar, "mesh: its GPU pairs show the code on the bar"));
    }
    if m.scaleup.meshes.iter().any(|x| !x.exceptions.is_empty()) {
        items.push((
            Swatch::Exception,
            "exception: a pair that differs from its mesh",
        ));
    }
    if !m.scaleup.edges.is_empty() {
        items.push((
            Swatch::Link,
            "direct link (NV#, XGMI), code as printed, wider for more links",
        ));
    }
    items
}

fn legend(s: &mut String, items: &[(Swatch, &str)], y0: f64) {
    let x = MARGIN;
    for (i, (kind, text)) in items.iter().enumerate() {
        let y = y0 + 20.0 * i as f64;
        let rect = |fill: &str, stroke: &str, dash: &str| {
            format!(
                r#"<rect x="{x}" y="{}" width="28" height="12" fill="{fill}" stroke="{stroke}"{dash}/>"#,
                y - 6.0
            )
        };
        let line = |stroke: &str, w: f64, dash: &str| {
            format!(
                r#"<line x1="{x}" y1="{y}" x2="{}" y2="{y}" stroke="{stroke}" stroke-width="{w}"{dash}/>"#,
                x + 28.0
            )
        };
        let swatch = match kind {
            Swatch::Numa => rect("#eef2fa", "#9fb0d0", ""),
            Swatch::Switch => rect("#ecfccb", "#4d7c0f", ""),
            Swatch::Tree => rect("#f7fee7", "#4d7c0f", r#" stroke-dasharray="5 3""#),
            Swatch::Bar => rect("#bbf7d0", "#166534", ""),
            Swatch::Dashed => line(
                &colour(LinkClass::PcieSwitch),
                3.0,
                r#" stroke-dasharray="6 3""#,
            ),
            Swatch::Link => line(&colour(LinkClass::DirectLink), 5.0, ""),
            Swatch::Exception => line(EXCEPTION, 2.5, r#" stroke-dasharray="4 3""#),
            Swatch::None => String::new(),
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
