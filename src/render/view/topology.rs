//! The topology section: how the GPUs are joined in one sentence, the class
//! of every GPU pair and GPU-adapter pair, and the diagram of the node.

use std::collections::BTreeSet;

use super::Linker;
use crate::bundle::Bundle;
use crate::evidence::Source;
use crate::evidence::topology::DeviceKind;
use crate::facts::NodeFacts;

pub struct Cell {
    pub text: String,
    pub class: String,
    pub title: String,
    /// The transcript line the cell was read from; empty when none.
    pub href: String,
}

pub struct MatrixView {
    pub columns: Vec<String>,
    pub rows: Vec<(String, Vec<Cell>)>,
}

/// One sentence on how the GPUs are joined.
pub(super) fn shape(b: &Bundle, facts: &NodeFacts) -> String {
    let by = &facts.gpu_pairs_by_class;
    if by.is_empty() {
        // Pairs need two GPUs: with fewer, no list of links is missing.
        return match (facts.gpu_count(), facts.described) {
            (1, _) => "one GPU: no GPU pairs".into(),
            (0, true) => "no GPU".into(),
            (_, true) => "GPU links not listed".into(),
            (_, false) => "no topology transcript".into(),
        };
    }
    if by.len() == 1 {
        let (c, _) = by.iter().next().expect("one entry");
        let codes: BTreeSet<&str> = b
            .topology
            .gpu_links()
            .filter_map(|l| l.code.as_deref())
            .collect();
        if codes.is_empty() {
            return format!("every GPU pair {c}");
        }
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

/// Of the lines that state a pair, the one in row `row` (the device's own
/// line), else the first: the cell sits in that row.
fn row_source<'a>(sources: &'a [Source], row: Option<&Source>) -> Option<&'a Source> {
    sources
        .iter()
        .find(|s| Some(*s) == row)
        .or_else(|| sources.first())
}

/// The class of every GPU pair and GPU-adapter pair, each cell linked to
/// the line it was read from.
pub(super) fn class_matrix(b: &Bundle, facts: &NodeFacts, linker: &Linker) -> Option<MatrixView> {
    let t = &b.topology;
    let gpus = &facts.gpus;
    if gpus.is_empty() || t.links.is_empty() {
        return None;
    }
    let cols: Vec<&str> = t.devices.iter().map(|d| d.id.as_str()).collect();
    let rows = gpus
        .iter()
        .map(|g| {
            let row = t.device(g).map(|d| &d.source);
            let cells = cols
                .iter()
                .map(|c| {
                    if c == g {
                        return Cell {
                            text: "X".into(),
                            class: "self".into(),
                            title: "self".into(),
                            href: row.map(|s| linker.href(s)).unwrap_or_default(),
                        };
                    }
                    match t.link(g, c) {
                        Some(l) => Cell {
                            text: l.code.clone().unwrap_or_else(|| "-".into()),
                            class: l.class.as_str().into(),
                            title: format!("{g}-{c}: {}", l.class),
                            href: row_source(&l.sources, row)
                                .map(|s| linker.href(s))
                                .unwrap_or_default(),
                        },
                        None => Cell {
                            text: "".into(),
                            class: "unknown".into(),
                            title: "not described".into(),
                            href: String::new(),
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
