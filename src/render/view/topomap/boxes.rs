//! The PCIe panel's boxes: NUMA nodes, and inside them the PCIe switches
//! the evidence shows, nested as lstopo nests them.
//!
//! A box comes from one of three readings:
//! - a live bundle's sysfs bridge chains ([`crate::facts::switches`]): a
//!   real switch with its uplink bridge;
//! - the matrix's `PIX` (at most one bridge between two devices): devices
//!   joined by `PIX` pairs sit under one switch;
//! - the matrix's `PXB` (several bridges, not the host bridge): devices
//!   joined by `PIX`/`PXB` pairs sit in one tree of switches below one
//!   host bridge port, drawn as a box holding the `PIX` boxes.
//!
//! A group is kept only where the matrix agrees with itself: every pair in
//! it is `PIX` (or `PIX`/`PXB` for a tree) or a direct link (an NV# code
//! hides the pair's PCIe path and does not contradict), and all of it sits
//! in one NUMA box. Groups that overlap without nesting lose the smaller
//! one. Each `PIX`/`PXB` pair no kept box holds stays a dashed edge, so
//! no pair the matrix states is dropped.

use std::collections::{BTreeMap, BTreeSet};

use super::{MapDevice, MapEdge};
use crate::evidence::Source;
use crate::evidence::topology::{Link, LinkClass, Topology};
use crate::facts::NodeFacts;

/// What a box stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum BoxKind {
    /// A switch from the sysfs bridge chains (a real bridge address).
    Bridge,
    /// A tree of switches (`PXB` pairs).
    Tree,
    /// One switch (`PIX` pairs).
    Switch,
    /// A NUMA node, or the CPUs closest to its devices.
    Numa,
}

/// One thing inside a box.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Device(String),
    Box(MapBox),
}

/// A box of the PCIe panel.
#[derive(Debug, Clone, PartialEq)]
pub struct MapBox {
    pub kind: BoxKind,
    /// Its caption, one entry a line.
    pub label: Vec<String>,
    /// `NUMA`, `PIX`, `PXB` or `sysfs`.
    pub code: String,
    /// Every device under it, nested or not, in topology order.
    pub members: Vec<String>,
    /// What it holds, in topology order of each item's first device.
    pub items: Vec<Item>,
    /// The lines it rests on: the pairs' matrix rows, the bridge's entry,
    /// the devices' affinity.
    pub sources: Vec<Source>,
}

/// A candidate box before nesting.
#[derive(Debug, Clone)]
struct Group {
    kind: BoxKind,
    label: Vec<String>,
    code: String,
    members: Vec<String>,
    sources: Vec<Source>,
}

/// The NUMA boxes with their switches nested inside, and the `PIX`/`PXB`
/// pairs no box holds.
pub(super) fn tree(
    t: &Topology,
    facts: &NodeFacts,
    devices: &[MapDevice],
) -> (Vec<MapBox>, Vec<MapEdge>) {
    let order: BTreeMap<&str, usize> = devices
        .iter()
        .enumerate()
        .map(|(i, d)| (d.id.as_str(), i))
        .collect();
    let group: BTreeMap<&str, &str> = devices
        .iter()
        .map(|d| (d.id.as_str(), d.group.as_str()))
        .collect();
    let one_group = |g: &Group| {
        g.members
            .iter()
            .all(|x| group.get(x.as_str()) == group.get(g.members[0].as_str()))
    };
    let mut groups = bridges(facts, devices);
    groups.extend(from_matrix(t, devices));
    groups.retain(one_group);
    let kept = nested(groups, &order);
    let together = |a: &str, b: &str| {
        kept.iter()
            .any(|g| g.members.iter().any(|x| x == a) && g.members.iter().any(|x| x == b))
    };
    let edges = t
        .links
        .iter()
        .filter(|l| l.class == LinkClass::PcieSwitch && !together(&l.a, &l.b))
        .map(MapEdge::of)
        .collect();
    let mut names: Vec<&str> = devices.iter().map(|d| d.group.as_str()).collect();
    names.sort_by_key(|g| (g.contains("not stated"), g.len(), g.to_string()));
    names.dedup();
    let numa = names
        .into_iter()
        .map(|name| {
            let members: Vec<String> = devices
                .iter()
                .filter(|d| d.group == name)
                .map(|d| d.id.clone())
                .collect();
            MapBox {
                kind: BoxKind::Numa,
                label: vec![name.to_string()],
                code: "NUMA".into(),
                items: items(&members, false, &kept, &order),
                sources: devices
                    .iter()
                    .filter(|d| d.group == name)
                    .filter_map(|d| d.source.clone())
                    .collect(),
                members,
            }
        })
        .collect();
    (numa, edges)
}

/// `0000:41:00.1` -> `41:00`: the device, whatever the domain or function.
fn device_of(address: &str) -> &str {
    let a = address.rsplit_once('.').map_or(address, |(d, _)| d);
    match a.split(':').count() {
        3 => a.split_once(':').map_or(a, |(_, rest)| rest),
        _ => a,
    }
}

/// The switches of the sysfs bridge chains, with the map's devices under
/// each.
fn bridges(facts: &NodeFacts, devices: &[MapDevice]) -> Vec<Group> {
    let mut out = Vec::new();
    for s in &facts.switches {
        let under: BTreeSet<&str> = s.devices.iter().map(|d| device_of(&d.address)).collect();
        let members: Vec<String> = devices
            .iter()
            .filter(|d| {
                d.bus
                    .as_deref()
                    .is_some_and(|a| under.contains(device_of(a)))
            })
            .map(|d| d.id.clone())
            .collect();
        if members.len() < 2 {
            continue;
        }
        let mut label = vec![format!("PCIe switch {}", s.uplink_bridge)];
        label.extend(s.uplink_link.as_ref().map(|l| format!("uplink {l}")));
        out.push(Group {
            kind: BoxKind::Bridge,
            label,
            code: "sysfs".into(),
            members,
            sources: vec![s.source.clone()],
        });
    }
    out
}

/// The `PXB` trees and `PIX` switches the matrix shows.
fn from_matrix(t: &Topology, devices: &[MapDevice]) -> Vec<Group> {
    let pairs: BTreeMap<(&str, &str), &Link> = t
        .links
        .iter()
        .flat_map(|l| {
            [
                ((l.a.as_str(), l.b.as_str()), l),
                ((l.b.as_str(), l.a.as_str()), l),
            ]
        })
        .collect();
    let link = |a: &str, b: &str| pairs.get(&(a, b)).copied();
    let code = |a: &str, b: &str| link(a, b).and_then(|l| l.code.as_deref());
    let direct = |a: &str, b: &str| link(a, b).is_some_and(|l| l.class == LinkClass::DirectLink);
    let pix = |a: &str, b: &str| code(a, b) == Some("PIX");
    let switched = |a: &str, b: &str| link(a, b).is_some_and(|l| l.class == LinkClass::PcieSwitch);
    let ids: Vec<&str> = devices.iter().map(|d| d.id.as_str()).collect();
    let mut out = Vec::new();
    for (joined, kind) in [
        (&switched as &dyn Fn(&str, &str) -> bool, BoxKind::Tree),
        (&pix, BoxKind::Switch),
    ] {
        for members in components(&ids, joined) {
            let consistent = members.iter().all(|x| {
                members
                    .iter()
                    .all(|y| x == y || joined(x, y) || direct(x, y))
            });
            if members.len() < 2 || !consistent {
                continue;
            }
            // A tree all of whose pairs are PIX is one switch: the PIX
            // pass finds it.
            let all_pix = members.iter().all(|x| {
                members
                    .iter()
                    .all(|y| x == y || !switched(x, y) || pix(x, y))
            });
            if kind == BoxKind::Tree && all_pix {
                continue;
            }
            let sources = members
                .iter()
                .enumerate()
                .flat_map(|(i, x)| members[i + 1..].iter().map(move |y| (*x, *y)))
                .filter(|(x, y)| joined(x, y))
                .filter_map(|(x, y)| link(x, y))
                .flat_map(|l| l.sources.iter().cloned())
                .collect();
            let (label, code) = match kind {
                BoxKind::Tree => ("PCIe switches · PXB", "PXB"),
                _ => ("switch · PIX", "PIX"),
            };
            out.push(Group {
                kind,
                label: vec![label.into()],
                code: code.into(),
                members: members.iter().map(|s| s.to_string()).collect(),
                sources,
            });
        }
    }
    out
}

/// The connected groups of `ids` under `joined`, each in the order of `ids`.
fn components<'a>(ids: &[&'a str], joined: &dyn Fn(&str, &str) -> bool) -> Vec<Vec<&'a str>> {
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut out = Vec::new();
    for &start in ids {
        if !seen.insert(start) {
            continue;
        }
        let mut found = vec![start];
        let mut i = 0;
        while i < found.len() {
            for &x in ids {
                if !seen.contains(x) && joined(found[i], x) {
                    seen.insert(x);
                    found.push(x);
                }
            }
            i += 1;
        }
        let mut group = found;
        group.sort_by_key(|x| ids.iter().position(|y| y == x));
        out.push(group);
    }
    out
}

/// The groups that nest (each two disjoint, or one inside the other):
/// larger first, a real bridge before a matrix reading of the same
/// devices; one that overlaps a kept group without nesting is left out.
fn nested(mut groups: Vec<Group>, order: &BTreeMap<&str, usize>) -> Vec<Group> {
    let first = |g: &Group| order.get(g.members[0].as_str()).copied().unwrap_or(0);
    groups.sort_by_key(|g| (std::cmp::Reverse(g.members.len()), g.kind, first(g)));
    let mut kept: Vec<Group> = Vec::new();
    for g in groups {
        let set: BTreeSet<&String> = g.members.iter().collect();
        let fits = kept.iter().all(|k| {
            let other: BTreeSet<&String> = k.members.iter().collect();
            set.is_disjoint(&other) || (set.is_subset(&other) && set != other)
        });
        if fits {
            kept.push(g);
        }
    }
    kept
}

/// What a box of `members` holds: the largest kept groups inside it (each
/// with its own items), and its devices in no such group. `own`: the
/// members are a kept group's, which is not inside itself (a NUMA box may
/// hold a switch with all its devices).
fn items(
    members: &[String],
    own: bool,
    kept: &[Group],
    order: &BTreeMap<&str, usize>,
) -> Vec<Item> {
    let subset = |a: &[String], b: &[String]| a.iter().all(|x| b.contains(x));
    let inside: Vec<&Group> = kept
        .iter()
        .filter(|g| subset(&g.members, members) && !(own && g.members == members))
        .collect();
    let top: Vec<&Group> = inside
        .iter()
        .copied()
        .filter(|g| {
            !inside
                .iter()
                .any(|o| o.members != g.members && subset(&g.members, &o.members))
        })
        .collect();
    let mut out: Vec<(usize, Item)> = Vec::new();
    for g in &top {
        let pos = order.get(g.members[0].as_str()).copied().unwrap_or(0);
        out.push((
            pos,
            Item::Box(MapBox {
                kind: g.kind,
                label: g.label.clone(),
                code: g.code.clone(),
                members: g.members.clone(),
                items: items(&g.members, true, kept, order),
                sources: g.sources.clone(),
            }),
        ));
    }
    for d in members {
        if !top.iter().any(|g| g.members.contains(d)) {
            out.push((
                order.get(d.as_str()).copied().unwrap_or(0),
                Item::Device(d.clone()),
            ));
        }
    }
    out.sort_by_key(|(pos, _)| *pos);
    out.into_iter().map(|(_, i)| i).collect()
}
