//! The topology section: how the GPUs are joined in one sentence, the class
//! of every GPU pair and GPU-adapter pair, and the diagram of the node.

use std::collections::BTreeSet;

use crate::bundle::Bundle;
use crate::evidence::topology::DeviceKind;
use crate::facts::NodeFacts;

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
