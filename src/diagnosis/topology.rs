//! Rules on how the node is wired: GPU pairs without a direct link, GPUs
//! whose closest adapter is across the socket boundary, and fewer adapters
//! than GPUs.

use super::{Diagnosed, Finding, Why, push};
use crate::bundle::Bundle;
use crate::evidence::topology::LinkClass;
use std::collections::BTreeMap;

use crate::evidence::Source;
use crate::facts::{Nic, NodeFacts};
use crate::models::injection;

/// Whether a GPU pair's class is below a direct link (and known).
fn host_hop(class: LinkClass) -> bool {
    class > LinkClass::DirectLink && class != LinkClass::Unknown
}

pub(super) fn host_hops(b: &Bundle, facts: &NodeFacts, out: &mut Vec<Diagnosed>) {
    let by_class = &facts.gpu_pairs_by_class;
    let direct = by_class.get(&LinkClass::DirectLink).copied().unwrap_or(0);
    let others: usize = by_class
        .iter()
        .filter(|(c, _)| host_hop(**c))
        .map(|(_, n)| n)
        .sum();
    // Report the worst pair; the matrix on the page shows the rest.
    let Some(worst) = b
        .topology
        .gpu_links()
        .filter(|l| host_hop(l.class))
        .max_by_key(|l| l.class)
    else {
        return;
    };
    // Direct links that still join every GPU (a DGX-1's hybrid cube
    // mesh) let rings route around the pair: worth knowing, no warning.
    let routable = facts.direct_links_join_all;
    let why = if direct == 0 {
        Why::HostHopNoDirectLinks
    } else {
        match direct_groups(&facts.gpus, b) {
            Grouping::SwitchedWithHole => Why::HostHopOnSwitchedFabric,
            _ if routable => Why::HostHopRoutable,
            Grouping::BuiltInGroups => Why::HostHopBetweenDesignGroups,
            Grouping::Other => Why::HostHopSplitsGroups,
        }
    };
    push(
        out,
        why,
        Finding::HostHopInGroup {
            a: worst.a.clone(),
            b: worst.b.clone(),
            class: worst.class,
            code: worst.code.clone().unwrap_or_default(),
            direct_pairs: direct,
            other_pairs: others,
            gpu_pairs: direct + others,
            unknown_pairs: by_class.get(&LinkClass::Unknown).copied().unwrap_or(0),
            routable,
        },
        worst.sources.clone(),
    );
}

/// How the direct links group the GPUs.
enum Grouping {
    /// Every GPU has a direct link, all to the same number of NVLinks (8
    /// or more: an NVSwitch fabric, where every pair is joined), and some
    /// pair is not: a hole in a fabric built to join all.
    SwitchedWithHole,
    /// Groups each joined all to all (bridge pairs, xGMI hives), none a
    /// GPU left alone beside a group of three or more: how the node is
    /// built.
    BuiltInGroups,
    Other,
}

fn direct_groups(gpus: &[String], b: &Bundle) -> Grouping {
    let t = &b.topology;
    let direct = |x: &str, y: &str| {
        t.link(x, y)
            .is_some_and(|l| l.class == LinkClass::DirectLink)
    };
    let counts: std::collections::BTreeSet<Option<u32>> = t
        .gpu_links()
        .filter(|l| l.class == LinkClass::DirectLink)
        .map(|l| l.nvlinks)
        .collect();
    let every_gpu_linked = gpus
        .iter()
        .all(|g| gpus.iter().any(|o| o != g && direct(g, o)));
    if every_gpu_linked
        && counts.len() == 1
        && counts.first().copied().flatten().is_some_and(|n| n >= 8)
    {
        return Grouping::SwitchedWithHole;
    }
    // Components of the direct-link graph.
    let mut group_of: Vec<usize> = (0..gpus.len()).collect();
    for i in 0..gpus.len() {
        for j in 0..i {
            if direct(&gpus[i], &gpus[j]) {
                let (gi, gj) = (group_of[i], group_of[j]);
                group_of
                    .iter_mut()
                    .filter(|g| **g == gi)
                    .for_each(|g| *g = gj);
            }
        }
    }
    let members =
        |g: usize| -> Vec<usize> { (0..gpus.len()).filter(|&i| group_of[i] == g).collect() };
    let all_to_all = group_of.iter().all(|&g| {
        let m = members(g);
        m.iter()
            .all(|&i| m.iter().all(|&j| i == j || direct(&gpus[i], &gpus[j])))
    });
    let size = |g: usize| members(g).len();
    let alone_beside_big =
        group_of.iter().any(|&g| size(g) == 1) && group_of.iter().any(|&g| size(g) >= 3);
    if all_to_all && !alone_beside_big {
        Grouping::BuiltInGroups
    } else {
        Grouping::Other
    }
}

pub(super) fn nic_sockets(b: &Bundle, facts: &NodeFacts, out: &mut Vec<Diagnosed>) {
    let t = &b.topology;
    // One cause, one finding: the GPUs whose closest adapters are the same
    // ones beyond their own PCIe switch, together, by how far they are.
    // Adapters equally close are all named, not the first of them.
    type Far<'a> = (Vec<String>, Vec<&'a Nic>, String, Vec<Source>);
    let mut far: BTreeMap<(LinkClass, Vec<&str>), Far<'_>> = BTreeMap::new();
    let numa = |id: &str| t.device(id).and_then(|d| d.numa_node);
    for g in &facts.gpus {
        let links: Vec<_> = facts
            .nics
            .iter()
            .filter_map(|n| t.link(g, &n.id).map(|l| (l, n)))
            .collect();
        let Some(class) = links.iter().map(|(l, _)| l.class).min() else {
            continue;
        };
        let closest: Vec<_> = links
            .into_iter()
            .filter(|(l, _)| l.class == class)
            .collect();
        // Not mis-paired when one of the equally close adapters is on the
        // GPU's own NUMA node, where the evidence says so.
        let home = numa(g);
        if home.is_some() && closest.iter().any(|(_, n)| numa(&n.id) == home) {
            continue;
        }
        if matches!(class, LinkClass::CrossSocket | LinkClass::PcieHost) {
            let ids: Vec<&str> = closest.iter().map(|(_, n)| n.id.as_str()).collect();
            let e = far.entry((class, ids)).or_insert_with(|| {
                (
                    Vec::new(),
                    closest.iter().map(|(_, n)| *n).collect(),
                    closest[0].0.code.clone().unwrap_or_default(),
                    Vec::new(),
                )
            });
            e.0.push(g.clone());
            e.3.extend(closest[0].0.sources.iter().take(1).cloned());
        }
    }
    for ((class, _), (gpus, nics, code, sources)) in far {
        let (nic, nic_name) = (nics[0].id.clone(), nics[0].name.clone());
        let also = nics[1..]
            .iter()
            .map(|n| n.name.clone().unwrap_or_else(|| n.id.clone()))
            .collect();
        let (why, finding) = if class == LinkClass::CrossSocket {
            (
                Why::NicOnOtherSocket,
                Finding::NicOnOtherSocket {
                    gpus,
                    nic,
                    nic_name,
                    code,
                    also,
                },
            )
        } else {
            (
                Why::NicAcrossHostBridge,
                Finding::NicAcrossHostBridge {
                    gpus,
                    nic,
                    nic_name,
                    code,
                    also,
                },
            )
        };
        push(out, why, finding, sources);
    }
}

pub(super) fn injection_share(facts: &NodeFacts, out: &mut Vec<Diagnosed>) {
    let gpus = facts.gpus.len();
    // The compute adapters when their rates are known, else every adapter
    // the topology names.
    let nics = facts
        .injection
        .as_ref()
        .map_or(facts.nics.len(), |i| i.adapters);
    if gpus < 2 || nics == 0 || nics >= gpus {
        return;
    }
    let node = facts.injection.as_ref().map(|i| i.node_bytes_per_s);
    // One adapter's rate as the model takes it: the node's sum, shared.
    let rate = node.map(|n| n / nics as f64);
    let per_gpu = rate
        .and_then(|r| injection::injection(gpus as u32, nics as u32, r, 1.0).ok())
        .map(|i| i.per_gpu_bytes_per_s);
    push(
        out,
        if 2 * nics >= gpus {
            Why::AdapterPerTwoGpus
        } else {
            Why::FewerAdaptersThanGpus
        },
        Finding::InjectionShare {
            gpus,
            nics,
            nic_bytes_per_s: rate,
            per_gpu_bytes_per_s: per_gpu,
        },
        facts
            .nics
            .iter()
            .map(|n| n.source.clone())
            .take(1)
            .collect(),
    );
}
