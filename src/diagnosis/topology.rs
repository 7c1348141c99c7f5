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
    } else if routable {
        Why::HostHopRoutable
    } else {
        Why::HostHopSplitsGroups
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
        Why::FewerAdaptersThanGpus,
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
