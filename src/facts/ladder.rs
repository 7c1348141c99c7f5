//! This node's figures on the tier ladder (seed section 2.1): the best
//! figure of each kind per transcript, per direction on one node, and the
//! tier of the path each one took.

use std::collections::BTreeMap;

use super::NodeFacts;
use crate::bundle::Bundle;
use crate::evidence::measurement::{Direction, Kind, Measurement, P2p};
use crate::evidence::topology::{LinkClass, Topology};

/// Tiers of [`crate::models::ladder::TIERS`] a path can take, by index.
pub const HBM: usize = 2;
pub const SCALE_UP: usize = 3;
pub const PCIE: usize = 4;
pub const SCALE_OUT: usize = 5;

/// The tier of the path a figure took, and the faster tier the topology
/// offered it when it fell below that.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Placement {
    pub tier: usize,
    pub fell_from: Option<usize>,
}

fn at(tier: usize) -> Placement {
    Placement {
        tier,
        fell_from: None,
    }
}

/// The tier of a figure's path, from what moved and the topology: a copy
/// within one GPU (D2D, or a copy test's diagonal) in HBM; host copies in
/// PCIe; a GPU pair joined by a direct link (or, where the topology does
/// not show the pair, GPUs of a model built with board links) (NVLink, xGMI) in scale-up,
/// unless peer access was disabled (the copy is staged through the host)
/// or the figure is under a quarter of the pair's link ceiling (staged
/// without saying so): then PCIe, fallen from scale-up; a pair without a
/// direct link in PCIe; RDMA and MPI between nodes in scale-out;
/// a one-node collective in scale-up when direct links join the GPUs, else
/// PCIe. Host-to-host copies have no tier on the ladder (`None`).
pub fn placement(m: &Measurement, facts: &NodeFacts, t: &Topology) -> Option<Placement> {
    let same = m.src.is_some() && m.src == m.dst;
    Some(match m.kind {
        Kind::D2d => at(HBM),
        Kind::P2pCopy if same => at(HBM),
        Kind::H2d | Kind::D2h => at(PCIE),
        Kind::H2h => return None,
        Kind::P2pCopy => {
            // The pair's link, else (no topology of the pair) any direct
            // link, a GPU model built with board links, or a figure
            // beyond any PCIe x16 (64 GB/s at Gen5).
            let pair = match (m.src.as_deref(), m.dst.as_deref()) {
                (Some(a), Some(b)) => t
                    .link(a, b)
                    .filter(|l| l.class != LinkClass::Unknown)
                    .map(|l| l.class == LinkClass::DirectLink),
                _ => None,
            };
            let direct = pair.unwrap_or_else(|| {
                facts
                    .gpu_pairs_by_class
                    .contains_key(&LinkClass::DirectLink)
                    || super::model_inputs::gpu_row(facts)
                        .is_some_and(|r| r.scaleup_bytes_per_s.is_some())
                    || m.bandwidth_bytes_per_s.is_some_and(|bw| bw > 64e9)
            });
            let silent = facts
                .ceiling(m)
                .zip(m.bandwidth_bytes_per_s)
                .is_some_and(|(c, bw)| bw < c.bytes_per_s / 4.0);
            let staged = matches!(m.p2p, P2p::Disabled | P2p::NoPeerAccess);
            match (direct, staged || silent) {
                (true, true) => Placement {
                    tier: PCIE,
                    fell_from: Some(SCALE_UP),
                },
                (true, false) => at(SCALE_UP),
                (false, _) => at(PCIE),
            }
        }
        Kind::RdmaWrite
        | Kind::RdmaRead
        | Kind::RdmaSend
        | Kind::RdmaAtomic
        | Kind::Rdma
        | Kind::MpiPt2pt => at(SCALE_OUT),
        _ if facts
            .gpu_pairs_by_class
            .contains_key(&LinkClass::DirectLink) =>
        {
            at(SCALE_UP)
        }
        _ => at(PCIE),
    })
}

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
    pub placement: Placement,
}

/// The lowest latency of one kind and path in one transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyPoint {
    pub kind: &'static str,
    pub file: String,
    pub latency_s: f64,
    /// The size it was measured at, when stated.
    pub size_bytes: Option<u64>,
    pub placement: Placement,
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

/// The best figure per kind, transcript, scope and path (avg, peak or
/// busbw), classified against the ladder's one-direction, one-node bands.
pub fn ladder_points(b: &Bundle, facts: &NodeFacts) -> Vec<LadderPoint> {
    use crate::evidence::measurement::Statistic;
    type Key = (String, &'static str, LadderScope, Placement);
    let mut best: BTreeMap<Key, f64> = BTreeMap::new();
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
        let Some(placement) = placement(m, facts, &b.topology) else {
            continue;
        };
        let file = m.source.file.rsplit('/').next().unwrap_or("").to_string();
        let e = best
            .entry((file, m.kind.as_str(), scope, placement))
            .or_insert(0.0);
        *e = e.max(bw);
    }
    best.into_iter()
        .map(|((file, kind, scope, placement), v)| LadderPoint {
            kind,
            file,
            measured_bytes_per_s: v,
            per_direction_bytes_per_s: if scope == LadderScope::BothDirectionsHalved {
                v / 2.0
            } else {
                v
            },
            scope,
            placement,
        })
        .collect()
}

/// The lowest latency per kind, transcript and path, one node only.
pub fn latency_points(b: &Bundle, facts: &NodeFacts) -> Vec<LatencyPoint> {
    type Key = (String, &'static str, Placement);
    let mut best: BTreeMap<Key, (f64, Option<u64>)> = BTreeMap::new();
    for m in &b.measurements {
        let Some(lat) = m.latency_s.filter(|v| v.is_normal() && *v > 0.0) else {
            continue;
        };
        if spans_nodes(m) {
            continue;
        }
        let Some(placement) = placement(m, facts, &b.topology) else {
            continue;
        };
        let file = m.source.file.rsplit('/').next().unwrap_or("").to_string();
        let e = best
            .entry((file, m.kind.as_str(), placement))
            .or_insert((f64::MAX, None));
        if lat < e.0 {
            *e = (lat, m.size_bytes);
        }
    }
    best.into_iter()
        .map(
            |((file, kind, placement), (latency_s, size_bytes))| LatencyPoint {
                kind,
                file,
                latency_s,
                size_bytes,
                placement,
            },
        )
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
        let p = ladder_points(&b, &NodeFacts::of(&b));
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

    #[test]
    fn each_copy_lands_in_the_tier_of_its_path() {
        use crate::evidence::Source;
        use crate::evidence::topology::{Device, DeviceKind, Link};
        let mut b = Bundle::new(Host {
            name: "n".into(),
            origin: Origin::Ingested,
        });
        for g in ["GPU0", "GPU1", "GPU2"] {
            b.topology
                .devices
                .push(Device::new(g, DeviceKind::Gpu, Source::line(1)));
        }
        let mut nv = Link::new("GPU0", "GPU1", LinkClass::DirectLink, Source::line(1));
        nv.nvlinks = Some(2);
        b.topology.links.push(nv);
        b.topology.links.push(Link::new(
            "GPU0",
            "GPU2",
            LinkClass::PcieHost,
            Source::line(1),
        ));
        let cell = |src: &str, dst: &str, p2p: P2p, bw: f64| {
            let mut m = Measurement::new("t", 1, Kind::P2pCopy, "t", Statistic::Avg);
            (m.src, m.dst, m.p2p) = (
                Some(src.to_string().into()),
                Some(dst.to_string().into()),
                p2p,
            );
            m.bandwidth_bytes_per_s = Some(bw);
            m
        };
        b.measurements.extend([
            cell("GPU0", "GPU0", P2p::Enabled, 700e9),
            cell("GPU0", "GPU1", P2p::Enabled, 48e9),
            cell("GPU0", "GPU1", P2p::Disabled, 9e9),
            cell("GPU0", "GPU2", P2p::Enabled, 20e9),
        ]);
        let f = NodeFacts::of(&b);
        let tiers: Vec<(usize, Option<usize>, f64)> = ladder_points(&b, &f)
            .iter()
            .map(|p| {
                (
                    p.placement.tier,
                    p.placement.fell_from,
                    p.measured_bytes_per_s,
                )
            })
            .collect();
        assert_eq!(
            tiers,
            [
                // A GPU to itself at 700 GB/s: HBM, though the value sits in
                // the scale-up band.
                (HBM, None, 700e9),
                (SCALE_UP, None, 48e9),
                // P2P disabled over an NVLink pair: staged, fell a tier.
                (PCIE, None, 20e9),
                (PCIE, Some(SCALE_UP), 9e9),
            ]
        );
    }

    #[test]
    fn rdma_lands_in_scale_out_and_host_copies_in_pcie() {
        let mut b = Bundle::new(Host {
            name: "n".into(),
            origin: Origin::Ingested,
        });
        for (k, line) in [(Kind::RdmaWrite, 1), (Kind::H2d, 2), (Kind::H2h, 3)] {
            let mut m = Measurement::new("t", line, k, "t", Statistic::Avg);
            m.bandwidth_bytes_per_s = Some(1e10);
            m.latency_s = Some(2e-6);
            b.measurements.push(m);
        }
        let f = NodeFacts::of(&b);
        let tiers: Vec<usize> = ladder_points(&b, &f)
            .iter()
            .map(|p| p.placement.tier)
            .collect();
        assert_eq!(tiers, [PCIE, SCALE_OUT]);
        assert_eq!(latency_points(&b, &f).len(), 2);
    }
}
