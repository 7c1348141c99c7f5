//! The topology section: how the GPUs are joined in one sentence, the class
//! of every GPU pair and GPU-adapter pair, and the diagram of the node.

use std::collections::BTreeSet;

use crate::bundle::Bundle;
use crate::evidence::measurement::{Direction, Kind, Statistic};
use crate::evidence::topology::{DeviceKind, LinkClass};
use crate::facts::NodeFacts;
use crate::render::charts::{self, NodeBox};
use crate::render::format::gbs;

pub struct Cell {
    pub text: String,
    pub class: String,
    pub title: String,
}

pub struct MatrixView {
    pub columns: Vec<String>,
    pub rows: Vec<(String, Vec<Cell>)>,
}

/// One sentence on how the GPUs are joined.
pub(super) fn shape(b: &Bundle, facts: &NodeFacts) -> String {
    let by = &facts.gpu_pairs_by_class;
    if by.is_empty() {
        return if facts.gpus.len() == 1 {
            "one GPU".into()
        } else {
            "GPU links not described".into()
        };
    }
    if by.len() == 1 {
        let (c, _) = by.iter().next().expect("one entry");
        let codes: BTreeSet<&str> = b
            .topology
            .gpu_links()
            .filter_map(|l| l.code.as_deref())
            .collect();
        return format!(
            "every GPU pair {c} ({})",
            codes.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    by.iter()
        .map(|(c, n)| format!("{n} {c}"))
        .collect::<Vec<_>>()
        .join(", ")
        + " GPU pairs"
}

pub(super) fn class_matrix(b: &Bundle, facts: &NodeFacts) -> Option<MatrixView> {
    let t = &b.topology;
    let gpus = &facts.gpus;
    if gpus.is_empty() || t.links.is_empty() {
        return None;
    }
    let cols: Vec<&str> = t.devices.iter().map(|d| d.id.as_str()).collect();
    let rows = gpus
        .iter()
        .map(|g| {
            let cells = cols
                .iter()
                .map(|c| {
                    if c == g {
                        return Cell {
                            text: "X".into(),
                            class: "self".into(),
                            title: "self".into(),
                        };
                    }
                    match t.link(g, c) {
                        Some(l) => Cell {
                            text: l.code.clone().unwrap_or_else(|| "-".into()),
                            class: l.class.as_str().into(),
                            title: format!("{g}-{c}: {}", l.class),
                        },
                        None => Cell {
                            text: "".into(),
                            class: "unknown".into(),
                            title: "not described".into(),
                        },
                    }
                })
                .collect();
            (g.to_string(), cells)
        })
        .collect();
    let columns = cols
        .iter()
        .map(|c| match t.device(c).and_then(|d| d.name.clone()) {
            Some(n) if t.device(c).is_some_and(|d| d.kind == DeviceKind::Nic) => format!("{c} {n}"),
            _ => c.to_string(),
        })
        .collect();
    Some(MatrixView { columns, rows })
}

pub(super) fn diagram(b: &Bundle) -> String {
    let t = &b.topology;
    if t.devices.is_empty() {
        return String::new();
    }
    let boxes: Vec<NodeBox> = t
        .devices
        .iter()
        .map(|d| NodeBox {
            id: d.id.clone(),
            label: match &d.name {
                Some(n) if d.kind == DeviceKind::Nic => format!("{} {n}", d.id),
                _ => d.id.clone(),
            },
            group: d.numa_node.map_or_else(
                || "NUMA node not stated".to_string(),
                |n| format!("NUMA node {n}"),
            ),
            is_gpu: d.kind == DeviceKind::Gpu,
        })
        .collect();
    // Each device's best links only, so the picture stays readable.
    let mut edges = Vec::new();
    for l in &t.links {
        if l.class == LinkClass::Unknown {
            continue;
        }
        let best_a = t
            .links
            .iter()
            .filter(|x| x.a == l.a || x.b == l.a)
            .map(|x| x.class)
            .min();
        let best_b = t
            .links
            .iter()
            .filter(|x| x.a == l.b || x.b == l.b)
            .map(|x| x.class)
            .min();
        if Some(l.class) != best_a && Some(l.class) != best_b {
            continue;
        }
        let measured = b
            .measurements
            .iter()
            .filter(|m| {
                m.kind == Kind::P2pCopy
                    && m.direction == Direction::Uni
                    && m.statistic == Statistic::Avg
            })
            .filter(|m| {
                m.src.as_deref() == Some(l.a.as_str()) && m.dst.as_deref() == Some(l.b.as_str())
            })
            .filter_map(|m| m.bandwidth_bytes_per_s)
            .fold(None, |a: Option<f64>, v| Some(a.map_or(v, |a| a.max(v))));
        let label = match measured {
            Some(v) => format!("{} measured", gbs(v)),
            None => String::new(),
        };
        edges.push(charts::Edge {
            a: l.a.clone(),
            b: l.b.clone(),
            class: l.class.as_str().to_string(),
            label,
        });
    }
    charts::node_diagram(&boxes, &edges)
}

/// A device count as shown: `8`, or `not described` when no topology
/// transcript names devices.
pub(super) fn shown(facts: &NodeFacts, n: usize) -> String {
    if !facts.described {
        "not described".into()
    } else {
        n.to_string()
    }
}
