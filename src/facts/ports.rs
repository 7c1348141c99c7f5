//! Ports grouped by what they are expected to train at: one link layer on
//! one adapter kind.

use std::collections::BTreeMap;

use super::port_data_rate;
use crate::bundle::Bundle;
use crate::evidence::rdma::{RdmaDevice, RdmaPort};

/// A port's link layer and its adapter's CA type, as stated.
pub type PortKind = (Option<String>, Option<String>);

/// The kind of `port` on `device`, for [`super::NodeFacts::fastest_port_by_kind`].
pub fn port_kind(device: &RdmaDevice, port: &RdmaPort) -> PortKind {
    (
        port.link_layer.clone(),
        device.ca_type.as_deref().map(str::to_string),
    )
}

/// The fastest active port (with a stated rate) of each link layer on each
/// adapter kind.
pub fn fastest_port_by_kind(b: &Bundle) -> BTreeMap<PortKind, f64> {
    let mut out: BTreeMap<PortKind, f64> = BTreeMap::new();
    for d in &b.rdma {
        for p in d.ports.iter().filter(|p| p.active == Some(true)) {
            if let Some(r) = port_data_rate(p) {
                let best = out.entry(port_kind(d, p)).or_insert(0.0);
                *best = best.max(r);
            }
        }
    }
    out
}
