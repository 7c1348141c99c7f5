//! The topology map, in the spirit of hwloc's lstopo, as two panels: the
//! PCIe tree and the scale-up links, never mixed.
//!
//! - **PCIe** ([`boxes`]): one box per NUMA node (from the transcript's
//!   affinity columns), and inside it the PCIe switches as boxes holding
//!   their GPUs and adapters: devices the matrix joins by `PIX` (at most
//!   one bridge) share a switch; devices joined by `PXB` (several bridges,
//!   not the host bridge) share a tree of switches, drawn as a box of
//!   boxes; a live bundle's sysfs bridge chains name real switches. A pair
//!   in one box is shown by the box, not by an edge: an H800 with ten
//!   adapters is four switch boxes, not 32 dashed lines. Devices in
//!   separate boxes of one NUMA node cross a host bridge (PHB, NODE);
//!   across NUMA nodes, the CPUs' link (SYS). A `PIX`/`PXB` pair no box
//!   can hold (the matrix contradicts itself) stays a dashed edge.
//! - **Scale-up** ([`mesh`]): NVLink and xGMI between GPUs. A group where
//!   (nearly) every pair shows one code is a mesh, drawn with ONE label
//!   for the common link and its exceptions as their own edges; when the
//!   code says more links than a GPU has, the mesh is NVSwitch. Any other
//!   link (a DGX-1's hybrid cube mesh) is an edge labelled with its code.
//!
//! [`map`] decides what to draw: data a test can hold against the matrix,
//! with each figure's transcript lines. [`layout`] places it within a
//! page's width (so no label is clipped at 800 px); [`draw`] writes the
//! SVG, each edge, box and device inside an `<a href>` to its line, with
//! `data-a`, `data-b`, `data-code` and `data-members` for the checks in
//! `tests/it/topology_map.rs`.

use std::collections::BTreeMap;

use crate::bundle::Bundle;
use crate::evidence::Source;
use crate::evidence::topology::{Device, DeviceKind, LinkClass, Topology};
use crate::facts::NodeFacts;

mod boxes;
mod draw;
mod layout;
mod mesh;

pub use boxes::{BoxKind, Item, MapBox};
pub use draw::{Panels, svgs};
pub use mesh::{Mesh, ScaleUpLayer};

/// One device on the map.
#[derive(Debug, Clone, PartialEq)]
pub struct MapDevice {
    pub id: String,
    /// The lines of its box: the id, then the adapter's name or the PCI
    /// device's model.
    pub lines: Vec<String>,
    /// The full name, for the tooltip.
    pub title: String,
    pub is_gpu: bool,
    /// The NUMA box it sits in (`NUMA node 0`, or `NUMA node not stated`).
    pub group: String,
    /// Its PCI address, to find it under a sysfs switch.
    pub bus: Option<String>,
    /// The line that lists it (its matrix row, its lspci entry).
    pub source: Option<Source>,
}

/// One drawn link between two devices, as the matrix states it.
#[derive(Debug, Clone, PartialEq)]
pub struct MapEdge {
    pub a: String,
    pub b: String,
    /// As printed; empty when the transcript printed no code (the edge
    /// is then drawn unlabelled, its class saying what it is).
    pub code: String,
    pub class: LinkClass,
    /// Bonded links (NV4 is 4); 1 when the code gives no count.
    pub links: u32,
    /// Every line that states the pair.
    pub sources: Vec<Source>,
}

impl MapEdge {
    fn of(l: &crate::evidence::topology::Link) -> MapEdge {
        MapEdge {
            a: l.a.clone(),
            b: l.b.clone(),
            code: l.code.clone().unwrap_or_default(),
            class: l.class,
            links: l.nvlinks.unwrap_or(1).max(1),
            sources: l.sources.clone(),
        }
    }
}

/// What the map draws.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TopoMap {
    pub devices: Vec<MapDevice>,
    /// The PCIe panel: one box per NUMA node, switches nested inside.
    pub numa: Vec<MapBox>,
    /// PCIe-switch pairs (`PIX`, `PXB`) no box holds: dashed edges.
    pub pcie_edges: Vec<MapEdge>,
    /// The scale-up panel.
    pub scaleup: ScaleUpLayer,
    /// What the evidence does not say, in words.
    pub notes: Vec<String>,
}

impl TopoMap {
    pub fn device(&self, id: &str) -> Option<&MapDevice> {
        self.devices.iter().find(|d| d.id == id)
    }
}

/// Decides what to draw from the topology the bundle holds, or, with no
/// topology matrix, from the PCIe tree of its `lspci`/sysfs transcripts.
pub fn map(b: &Bundle, facts: &NodeFacts) -> TopoMap {
    let t = &b.topology;
    let mut m = TopoMap {
        devices: if t.devices.is_empty() {
            pcie_devices(b, facts)
        } else {
            t.devices.iter().map(device).collect()
        },
        ..TopoMap::default()
    };
    if m.devices.is_empty() {
        return m;
    }
    place_adapters(&mut m, t);
    let (numa, pcie_edges) = boxes::tree(t, facts, &m.devices);
    m.numa = numa;
    m.pcie_edges = pcie_edges;
    m.scaleup = mesh::layer(t, facts);
    m.notes.extend(mesh::notes(&m.scaleup));
    notes_on_pairs(&mut m, t, facts);
    m
}

/// A device of the topology matrix.
fn device(d: &Device) -> MapDevice {
    let is_gpu = d.kind == DeviceKind::Gpu;
    let mut lines = vec![d.id.clone()];
    if let (false, Some(n)) = (is_gpu, &d.name) {
        lines.push(n.clone());
    }
    MapDevice {
        id: d.id.clone(),
        title: lines.join(" "),
        lines,
        is_gpu,
        group: group_of(d),
        bus: d.pci_bus_id.clone(),
        source: Some(d.source.clone()),
    }
}

/// With no topology matrix: the GPUs and adapters of the PCIe tree
/// (`lspci`, sysfs) that sit under a switch, named by address.
fn pcie_devices(b: &Bundle, facts: &NodeFacts) -> Vec<MapDevice> {
    let under: Vec<&str> = facts
        .switches
        .iter()
        .flat_map(|s| s.devices.iter().map(|d| d.address.as_str()))
        .collect();
    b.pcie
        .iter()
        .filter(|p| under.contains(&p.address.as_str()))
        .filter(|p| matches!(p.role.as_deref(), Some("gpu" | "nic")))
        .map(|p| {
            let is_gpu = p.role.as_deref() == Some("gpu");
            let kind = if is_gpu { "GPU" } else { "NIC" };
            let mut lines = vec![format!("{kind} {}", p.address)];
            lines.extend(p.name.as_deref().map(model));
            MapDevice {
                id: p.address.clone(),
                title: format!("{kind} {} {}", p.address, p.name.as_deref().unwrap_or("")),
                lines,
                is_gpu,
                group: p
                    .numa_node
                    .map_or("NUMA node not stated".into(), |n| format!("NUMA node {n}")),
                bus: Some(p.address.clone()),
                source: Some(p.source.clone()),
            }
        })
        .collect()
}

/// The model in an lspci device line, short enough for a box:
/// `VGA compatible controller [0300]: NVIDIA Corporation GV102 [10de:1e07]
/// (rev a1)` -> `GV102`.
fn model(name: &str) -> String {
    let s = name.split_once("]: ").map_or(name, |(_, r)| r);
    let s = s.split(" [").next().unwrap_or(s);
    let s = s.split(" (rev").next().unwrap_or(s);
    let s = [
        "NVIDIA Corporation ",
        "Advanced Micro Devices, Inc. ",
        "Mellanox Technologies ",
    ]
    .iter()
    .find_map(|v| s.strip_prefix(v))
    .unwrap_or(s);
    if s.chars().count() > 18 {
        s.chars().take(17).collect::<String>() + "…"
    } else {
        s.to_string()
    }
}

/// The box a device sits in: its NUMA node, else the CPUs closest to it.
fn group_of(d: &Device) -> String {
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

/// Adapters with no affinity of their own go in the box of a GPU behind
/// their PCIe switch; the notes say how the devices were boxed.
fn place_adapters(m: &mut TopoMap, t: &Topology) {
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
    if t.devices.is_empty() {
        return;
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

/// What the matrix leaves out: pairs with no class, pairs not described.
fn notes_on_pairs(m: &mut TopoMap, t: &Topology, facts: &NodeFacts) {
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
}

#[cfg(test)]
mod tests;
