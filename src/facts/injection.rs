//! What the node can inject into the network ([`NodeInjection`]): its
//! compute adapters and their summed rate, folded once for the facts.

use std::collections::BTreeMap;

use super::{AdapterPort, Nic, NodeInjection};
use crate::bundle::Bundle;

pub(super) fn injection(
    nics: &[Nic],
    adapters: &BTreeMap<String, Option<AdapterPort>>,
    b: &Bundle,
    fastest: Option<f64>,
) -> Option<NodeInjection> {
    // Each topology adapter the RDMA evidence rates, with its link layer.
    let layer = |name: &str| {
        b.rdma
            .iter()
            .find(|d| d.name == name)?
            .ports
            .iter()
            .find(|p| p.active == Some(true))?
            .link_layer
            .clone()
    };
    // A topology that lists no adapter at all (rocm-smi, amd-smi): the
    // adapters the RDMA evidence names are the node's.
    let names: Vec<&str> = if nics.is_empty() {
        adapters.keys().map(String::as_str).collect()
    } else {
        nics.iter().filter_map(|n| n.name.as_deref()).collect()
    };
    let rated: Vec<(f64, Option<String>)> = names
        .into_iter()
        .filter_map(|name| {
            let r = adapters.get(name)?.as_ref()?.rate_bytes_per_s?;
            Some((r, layer(name)))
        })
        .collect();
    let best = rated.iter().max_by(|a, b| a.0.total_cmp(&b.0)).cloned();
    if let Some((top, top_layer)) = best {
        let compute: Vec<f64> = rated
            .iter()
            .filter(|(r, l)| *l == top_layer && *r >= top / 2.0)
            .map(|(r, _)| *r)
            .collect();
        return Some(NodeInjection {
            adapters: compute.len(),
            node_bytes_per_s: compute.iter().sum(),
            summed: true,
        });
    }
    let r = fastest?;
    (!nics.is_empty()).then_some(NodeInjection {
        adapters: nics.len(),
        node_bytes_per_s: r * nics.len() as f64,
        summed: false,
    })
}
