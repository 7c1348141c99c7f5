//! This node's figures on the tier ladder (seed section 2.1): the best
//! figure of each kind per transcript, per direction on one node, and the
//! tier of the path each one took.

use std::collections::BTreeMap;

use crate::bundle::Bundle;
use crate::evidence::measurement::{Direction, Measurement};

/// How a figure sits against the tier ladder, whose bands are one
/// direction on one node (seed section 2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LadderScope {
    /// One direction, inside one node: placed as measured.
    OneDirection,
    /// The sum of both directions: placed at half, per direction.
    BothDirectionsHalved,
    /// Ranks on more than one node: not a figure of this node's tiers,
    /// kept off the ladder.
    MultiNode,
}

/// The best figure of one kind in one transcript, for the ladder.
#[derive(Debug, Clone, PartialEq)]
pub struct LadderPoint {
    pub kind: &'static str,
    /// The transcript's file name.
    pub file: String,
    /// As measured (a bidirectional sum stays a sum here).
    pub measured_bytes_per_s: f64,
    /// What the ladder places: per direction, one node.
    pub per_direction_bytes_per_s: f64,
    pub scope: LadderScope,
}

/// Whether a figure's ranks span nodes, as its path says (`Ranks`), or a
/// migrated bundle's sentence (`16 ranks on 2 nodes: crosses ...`).
fn spans_nodes(m: &Measurement) -> bool {
    use crate::evidence::answers::Path;
    if let Path::Ranks { nodes, .. } = m.questions.path {
        return nodes > 1;
    }
    let path = m.questions.legacy.path.as_deref().unwrap_or("");
    path.split(" nodes")
        .next()
        .and_then(|h| h.rsplit(' ').next())
        .and_then(|n| n.parse::<u32>().ok())
        .is_some_and(|n| n > 1)
}

/// The best figure per kind, transcript and scope (avg, peak or busbw),
/// classified against the ladder's one-direction, one-node bands.
pub fn ladder_points(b: &Bundle) -> Vec<LadderPoint> {
    use crate::evidence::measurement::Statistic;
    let mut best: BTreeMap<(String, &'static str, LadderScope), f64> = BTreeMap::new();
    for m in &b.measurements {
        let Some(bw) = m.bandwidth_bytes_per_s.filter(|v| *v > 0.0) else {
            continue;
        };
        if !matches!(
            m.statistic,
            Statistic::Avg | Statistic::Peak | Statistic::Busbw
        ) || (m.statistic == Statistic::Busbw && m.size_bytes.is_none())
        {
            continue;
        }
        let scope = if spans_nodes(m) {
            LadderScope::MultiNode
        } else if m.direction == Direction::Bi {
            LadderScope::BothDirectionsHalved
        } else {
            LadderScope::OneDirection
        };
        let file = m.source.file.rsplit('/').next().unwrap_or("").to_string();
        let e = best.entry((file, m.kind.as_str(), scope)).or_insert(0.0);
        *e = e.max(bw);
    }
    best.into_iter()
        .map(|((file, kind, scope), v)| LadderPoint {
            kind,
            file,
            measured_bytes_per_s: v,
            per_direction_bytes_per_s: if scope == LadderScope::BothDirectionsHalved {
                v / 2.0
            } else {
                v
            },
            scope,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{Host, Origin};
    use crate::evidence::measurement::{Kind, Statistic};

    #[test]
    fn the_ladder_halves_sums_and_keeps_multi_node_figures_off() {
        let mut b = Bundle::new(Host {
            name: "n".into(),
            origin: Origin::Ingested,
        });
        let mut bi = Measurement::new("t", 1, Kind::P2pCopy, "t", Statistic::Avg);
        bi.direction = Direction::Bi;
        bi.bandwidth_bytes_per_s = Some(8.77e9);
        let mut two = Measurement::new("n", 2, Kind::Allreduce, "a", Statistic::Busbw);
        two.size_bytes = Some(1 << 30);
        two.bandwidth_bytes_per_s = Some(360e9);
        two.questions.path = crate::evidence::answers::Path::Ranks {
            ranks: 16,
            nodes: 2,
            gpu: None,
        };
        let mut one = two.clone();
        one.source.file = "m".into();
        one.questions.path = crate::evidence::answers::Path::Ranks {
            ranks: 8,
            nodes: 1,
            gpu: None,
        };
        b.measurements.extend([bi, two, one]);
        let p = ladder_points(&b);
        let scopes: Vec<_> = p
            .iter()
            .map(|p| (p.scope, p.per_direction_bytes_per_s))
            .collect();
        assert_eq!(
            scopes,
            [
                (LadderScope::MultiNode, 360e9),
                (LadderScope::BothDirectionsHalved, 4.385e9),
                (LadderScope::OneDirection, 360e9),
            ]
        );
    }
}
