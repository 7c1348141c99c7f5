//! What one collection lists and the other does not: GPUs, adapters,
//! topology links, active NVLinks and RDMA ports; and which topology
//! device of the old collection is which of the new.
//!
//! Topology ids are positions (`NIC0` is the first adapter the matrix
//! lists), so a node that lost three of its four adapters calls the one
//! left `NIC0`: matched by id, that adapter's pairs would read as class
//! changes of the first one. Devices are matched by what names them
//! instead (an adapter's name, a PCI bus id), when every device of the
//! kind on both sides has one; else by id.
//!
//! A kind is compared only where both collections list it: a collection
//! that did not run `ibstat` has lost no adapter.

use std::collections::{BTreeMap, BTreeSet};

use super::{ChangeKind, Listed, Part};
use crate::bundle::Bundle;
use crate::evidence::topology::{Device, DeviceKind, Link};

/// Which topology device of the old collection is which of the new.
pub(super) struct Identity {
    /// Old id -> new id, for the devices both sides list.
    to_new: BTreeMap<String, String>,
    /// New id -> old id.
    to_old: BTreeMap<String, String>,
}

/// What identifies a device across collections: its adapter name or its
/// PCI bus id (with its domain, in one spelling).
type Key = fn(&Device) -> Option<String>;

fn by_name(d: &Device) -> Option<String> {
    d.name.clone()
}

fn by_bus(d: &Device) -> Option<String> {
    d.pci_bus_id.as_deref().map(crate::facts::bus_key)
}

fn by_id(d: &Device) -> Option<String> {
    Some(d.id.clone())
}

/// The first key that every device of `kind` on both sides has, once per
/// side; else the id.
fn key_for(old: &Bundle, new: &Bundle, kind: DeviceKind) -> Key {
    // A GPU's name is its model (eight alike); an adapter's names it.
    let keys: &[Key] = match kind {
        DeviceKind::Nic => &[by_name, by_bus],
        DeviceKind::Gpu => &[by_bus],
    };
    let names_all = |b: &Bundle, key: Key| {
        let mut seen = BTreeSet::new();
        b.topology
            .devices
            .iter()
            .filter(|d| d.kind == kind)
            .all(|d| key(d).is_some_and(|k| seen.insert(k)))
    };
    keys.iter()
        .copied()
        .find(|k| names_all(old, *k) && names_all(new, *k))
        .unwrap_or(by_id)
}

impl Identity {
    pub(super) fn of(old: &Bundle, new: &Bundle) -> Identity {
        let mut to_new = BTreeMap::new();
        for kind in [DeviceKind::Gpu, DeviceKind::Nic] {
            let key = key_for(old, new, kind);
            let of_kind = |b: &'_ Bundle| -> BTreeMap<String, String> {
                b.topology
                    .devices
                    .iter()
                    .filter(|d| d.kind == kind)
                    .filter_map(|d| Some((key(d)?, d.id.clone())))
                    .collect()
            };
            let new_ids = of_kind(new);
            for (k, id) in of_kind(old) {
                if let Some(n) = new_ids.get(&k) {
                    to_new.insert(id, n.clone());
                }
            }
        }
        let to_old = to_new.iter().map(|(o, n)| (n.clone(), o.clone())).collect();
        Identity { to_new, to_old }
    }

    /// The new id of an old device, when the new collection lists it.
    pub(super) fn new_id(&self, old_id: &str) -> Option<&str> {
        self.to_new.get(old_id).map(String::as_str)
    }

    /// The old id of a new device, when the old collection listed it.
    pub(super) fn old_id(&self, new_id: &str) -> Option<&str> {
        self.to_old.get(new_id).map(String::as_str)
    }
}

fn listed(part: Part, id: impl Into<String>, detail: Option<String>) -> Listed {
    Listed {
        part,
        id: id.into(),
        detail,
    }
}

/// A device's name and bus id, whichever it has.
fn device_detail(d: &Device) -> Option<String> {
    let parts: Vec<&str> = [d.name.as_deref(), d.pci_bus_id.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// Every GPU, adapter, link, NVLink and RDMA port one side lists and the
/// other does not, where both list that kind.
pub(super) fn listed_apart(old: &Bundle, new: &Bundle, ids: &Identity, out: &mut Vec<ChangeKind>) {
    let described = !old.topology.devices.is_empty() && !new.topology.devices.is_empty();
    // Adapters: by RDMA device name when both list RDMA devices (the
    // topology's NICs are most often the same adapters), else the
    // topology's NICs.
    let rdma_listed = !old.rdma.is_empty() && !new.rdma.is_empty();
    let mut kinds = vec![DeviceKind::Gpu];
    if !rdma_listed {
        kinds.push(DeviceKind::Nic);
    }
    if described {
        for kind in kinds {
            let part = match kind {
                DeviceKind::Gpu => Part::Gpu,
                DeviceKind::Nic => Part::Adapter,
            };
            let of = |b: &'_ Bundle| -> Vec<Device> {
                b.topology
                    .devices
                    .iter()
                    .filter(|d| d.kind == kind)
                    .cloned()
                    .collect()
            };
            for d in of(old).iter().filter(|d| ids.new_id(&d.id).is_none()) {
                out.push(ChangeKind::Gone(listed(part, &d.id, device_detail(d))));
            }
            for d in of(new).iter().filter(|d| ids.old_id(&d.id).is_none()) {
                out.push(ChangeKind::Appeared(listed(part, &d.id, device_detail(d))));
            }
        }
        links(old, new, ids, out);
    }
    if rdma_listed {
        adapters(old, new, out);
    }
    nvlinks(old, new, ids, out);
}

/// Pairs whose two devices both sides list, described on one side only.
fn links(old: &Bundle, new: &Bundle, ids: &Identity, out: &mut Vec<ChangeKind>) {
    let pair = |a: &str, b: &str| match a <= b {
        true => (a.to_string(), b.to_string()),
        false => (b.to_string(), a.to_string()),
    };
    let new_links: BTreeMap<(String, String), &Link> = new
        .topology
        .links
        .iter()
        .map(|l| (pair(&l.a, &l.b), l))
        .collect();
    let mut old_as_new = BTreeSet::new();
    for l in &old.topology.links {
        let (Some(a), Some(b)) = (ids.new_id(&l.a), ids.new_id(&l.b)) else {
            continue;
        };
        old_as_new.insert(pair(a, b));
        if !new_links.contains_key(&pair(a, b)) {
            out.push(ChangeKind::Gone(listed(
                Part::Link,
                format!("{a}-{b}"),
                Some(l.class.to_string()),
            )));
        }
    }
    for (k, l) in &new_links {
        if ids.old_id(&l.a).is_some() && ids.old_id(&l.b).is_some() && !old_as_new.contains(k) {
            out.push(ChangeKind::Appeared(listed(
                Part::Link,
                format!("{}-{}", l.a, l.b),
                Some(l.class.to_string()),
            )));
        }
    }
}

/// RDMA adapters by name, and the ports of those both list.
fn adapters(old: &Bundle, new: &Bundle, out: &mut Vec<ChangeKind>) {
    let names =
        |b: &Bundle| -> BTreeSet<String> { b.rdma.iter().map(|d| d.name.clone()).collect() };
    let (on, nn) = (names(old), names(new));
    let detail = |b: &Bundle, name: &str| {
        b.rdma
            .iter()
            .find(|d| d.name == name)
            .and_then(|d| d.ca_type.clone().or(d.board_id.clone()))
    };
    for n in on.difference(&nn) {
        out.push(ChangeKind::Gone(listed(Part::Adapter, n, detail(old, n))));
    }
    for n in nn.difference(&on) {
        out.push(ChangeKind::Appeared(listed(
            Part::Adapter,
            n,
            detail(new, n),
        )));
    }
    // Of two adapters with one name, the first (as the port diff does).
    for name in on.intersection(&nn) {
        let (Some(od), Some(nd)) = (
            old.rdma.iter().find(|d| &d.name == name),
            new.rdma.iter().find(|d| &d.name == name),
        ) else {
            continue;
        };
        let ports = |d: &crate::evidence::rdma::RdmaDevice| -> BTreeSet<u32> {
            d.ports.iter().map(|p| p.port).collect()
        };
        let (op, np) = (ports(od), ports(nd));
        let state = |d: &crate::evidence::rdma::RdmaDevice, port: u32| {
            d.ports
                .iter()
                .find(|p| p.port == port)
                .and_then(|p| p.state.clone())
        };
        for p in op.difference(&np) {
            out.push(ChangeKind::Gone(listed(
                Part::RdmaPort,
                format!("{} port {p}", od.name),
                state(od, *p),
            )));
        }
        for p in np.difference(&op) {
            out.push(ChangeKind::Appeared(listed(
                Part::RdmaPort,
                format!("{} port {p}", nd.name),
                state(nd, *p),
            )));
        }
    }
}

/// Active NVLinks (GPU, link number) of the GPUs both NVLink listings
/// cover: one active on one side only came up or went down.
fn nvlinks(old: &Bundle, new: &Bundle, ids: &Identity, out: &mut Vec<ChangeKind>) {
    if old.topology.nvlink.is_empty() || new.topology.nvlink.is_empty() {
        return;
    }
    // Old GPU ids as the new collection names them; by id when the
    // topology does not list the GPU.
    let as_new = |gpu: &str| ids.new_id(gpu).unwrap_or(gpu).to_string();
    let covered = |b: &Bundle, map: &dyn Fn(&str) -> String| -> BTreeSet<String> {
        b.topology.nvlink.iter().map(|p| map(&p.gpu)).collect()
    };
    let active =
        |b: &Bundle, map: &dyn Fn(&str) -> String| -> BTreeMap<(String, u32), Option<String>> {
            b.topology
                .nvlink
                .iter()
                .filter(|p| p.active)
                .filter_map(|p| Some(((map(&p.gpu), p.link?), Some(p.as_printed.clone()))))
                .collect()
        };
    let same = |g: &str| g.to_string();
    let (oc, nc) = (covered(old, &as_new), covered(new, &same));
    let (oa, na) = (active(old, &as_new), active(new, &same));
    for ((gpu, link), printed) in &oa {
        if nc.contains(gpu) && !na.contains_key(&(gpu.clone(), *link)) {
            out.push(ChangeKind::Gone(listed(
                Part::Nvlink,
                format!("{gpu} link {link}"),
                printed.clone(),
            )));
        }
    }
    for ((gpu, link), printed) in &na {
        if oc.contains(gpu) && !oa.contains_key(&(gpu.clone(), *link)) {
            out.push(ChangeKind::Appeared(listed(
                Part::Nvlink,
                format!("{gpu} link {link}"),
                printed.clone(),
            )));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::Source;
    use crate::evidence::rdma::{RdmaDevice, RdmaPort};

    /// A node named `n` with RDMA adapters of these names and ports.
    fn node(adapters: &[(&str, &[u32])]) -> Bundle {
        let mut b = Bundle::new(crate::bundle::Host {
            name: "n".into(),
            origin: crate::bundle::Origin::Ingested,
        });
        for (name, ports) in adapters {
            let mut d = RdmaDevice::new(*name, Source::line(1));
            d.ports = ports
                .iter()
                .map(|p| RdmaPort {
                    port: *p,
                    ..Default::default()
                })
                .collect();
            b.rdma.push(d);
        }
        b
    }

    fn apart(old: &Bundle, new: &Bundle) -> Vec<ChangeKind> {
        let mut out = Vec::new();
        listed_apart(old, new, &Identity::of(old, new), &mut out);
        out
    }

    #[test]
    fn an_adapter_or_port_gone_is_its_own_change_and_a_listing_not_taken_is_none() {
        let old = node(&[("mlx5_0", &[1, 2]), ("mlx5_1", &[1])]);
        let new = node(&[("mlx5_0", &[1])]);
        let gone = |part, id: &str| {
            ChangeKind::Gone(Listed {
                part,
                id: id.into(),
                detail: None,
            })
        };
        assert_eq!(
            apart(&old, &new),
            [
                gone(Part::Adapter, "mlx5_1"),
                gone(Part::RdmaPort, "mlx5_0 port 2")
            ]
        );
        assert!(
            apart(&new, &old)
                .iter()
                .all(|c| c.trend() == super::super::Trend::Better)
        );
        // A collection that listed no adapter (no ibstat run) lost none.
        assert!(apart(&old, &node(&[])).is_empty());
    }
}
