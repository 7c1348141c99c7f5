//! Folding several transcripts of one node into one [`Topology`]: missing
//! facts are filled in, and a fact two transcripts describe differently is
//! kept as the first has it and reported as a [`Conflict`].

use super::{Conflict, Device, Link, LinkClass, Topology};
use crate::evidence::Source;

impl Topology {
    /// Folds `other` (another transcript of the same node) into `self`.
    /// Missing facts are filled in; a fact both describe differently is kept
    /// as `self` has it and returned as a conflict, never silently replaced.
    /// An `unknown` class yields to a known one.
    pub fn merge(&mut self, other: Topology) -> Vec<Conflict> {
        if self.is_empty() {
            // Parsers return their topology already in canonical order.
            *self = other;
            return Vec::new();
        }
        let mut conflicts = Vec::new();
        for d in other.devices {
            match self.devices.iter_mut().find(|x| x.id == d.id) {
                None => self.devices.push(d),
                Some(mine) => merge_device(mine, d, &mut conflicts),
            }
        }
        // Index the pairs once: a node has hundreds of them.
        let mut index: std::collections::HashMap<(String, String), usize> = self
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| ((l.a.clone(), l.b.clone()), i))
            .collect();
        for l in other.links {
            let found = index
                .get(&(l.a.clone(), l.b.clone()))
                .or_else(|| index.get(&(l.b.clone(), l.a.clone())))
                .copied();
            match found {
                None => {
                    index.insert((l.a.clone(), l.b.clone()), self.links.len());
                    self.links.push(l);
                }
                Some(i) => merge_link(&mut self.links[i], l, &mut conflicts),
            }
        }
        // p2p cells are directional observations: `-p2p r` and `-p2p w`, or two
        // tools, may legitimately differ, so every cell is kept with its source.
        self.p2p.extend(other.p2p);
        self.nvlink.extend(other.nvlink);
        self.sort();
        conflicts
    }
}

fn merge_opt<T: PartialEq + Clone + std::fmt::Debug>(
    what: &str,
    mine: &mut Option<T>,
    theirs: Option<T>,
    kept: &Source,
    other: &Source,
    conflicts: &mut Vec<Conflict>,
) {
    match (mine.as_ref(), theirs) {
        (None, t) => *mine = t,
        (Some(_), None) => {}
        (Some(m), Some(t)) => {
            if *m != t {
                conflicts.push(Conflict {
                    what: format!("{what}: {m:?} here, {t:?} there"),
                    kept: kept.clone(),
                    other: other.clone(),
                });
            }
        }
    }
}

fn merge_device(mine: &mut Device, d: Device, conflicts: &mut Vec<Conflict>) {
    let (k, o) = (mine.source.clone(), d.source.clone());
    let id = mine.id.clone();
    if mine.kind != d.kind {
        conflicts.push(Conflict {
            what: format!("{id} is a {:?} here and a {:?} there", mine.kind, d.kind),
            kept: k.clone(),
            other: o.clone(),
        });
        return;
    }
    merge_opt(
        &format!("{id} name"),
        &mut mine.name,
        d.name,
        &k,
        &o,
        conflicts,
    );
    merge_opt(
        &format!("{id} PCI bus id"),
        &mut mine.pci_bus_id,
        d.pci_bus_id,
        &k,
        &o,
        conflicts,
    );
    merge_opt(
        &format!("{id} uuid"),
        &mut mine.uuid,
        d.uuid,
        &k,
        &o,
        conflicts,
    );
    merge_opt(
        &format!("{id} NUMA node"),
        &mut mine.numa_node,
        d.numa_node,
        &k,
        &o,
        conflicts,
    );
    merge_opt(
        &format!("{id} CPU affinity"),
        &mut mine.cpu_affinity,
        d.cpu_affinity,
        &k,
        &o,
        conflicts,
    );
    merge_opt(
        &format!("{id} GPU NUMA id"),
        &mut mine.gpu_numa_node,
        d.gpu_numa_node,
        &k,
        &o,
        conflicts,
    );
}

fn merge_link(mine: &mut Link, l: Link, conflicts: &mut Vec<Conflict>) {
    let k = mine.sources.first().cloned().unwrap_or_default();
    let o = l.sources.first().cloned().unwrap_or_default();
    let pair = format!("{}-{}", mine.a, mine.b);
    if mine.class == LinkClass::Unknown {
        mine.class = l.class;
    } else if l.class != LinkClass::Unknown && l.class != mine.class {
        conflicts.push(Conflict {
            what: format!("{pair} class: {} here, {} there", mine.class, l.class),
            kept: k.clone(),
            other: o.clone(),
        });
    }
    merge_opt(
        &format!("{pair} code"),
        &mut mine.code,
        l.code,
        &k,
        &o,
        conflicts,
    );
    merge_opt(
        &format!("{pair} NVLinks"),
        &mut mine.nvlinks,
        l.nvlinks,
        &k,
        &o,
        conflicts,
    );
    merge_opt(
        &format!("{pair} xGMI hops"),
        &mut mine.xgmi_hops,
        l.xgmi_hops,
        &k,
        &o,
        conflicts,
    );
    merge_opt(
        &format!("{pair} PCIe hops"),
        &mut mine.pcie_hops,
        l.pcie_hops,
        &k,
        &o,
        conflicts,
    );
    merge_opt(
        &format!("{pair} weight"),
        &mut mine.weight,
        l.weight,
        &k,
        &o,
        conflicts,
    );
    merge_opt(
        &format!("{pair} min bandwidth"),
        &mut mine.min_bandwidth_bytes_per_s,
        l.min_bandwidth_bytes_per_s,
        &k,
        &o,
        conflicts,
    );
    merge_opt(
        &format!("{pair} max bandwidth"),
        &mut mine.max_bandwidth_bytes_per_s,
        l.max_bandwidth_bytes_per_s,
        &k,
        &o,
        conflicts,
    );
    mine.sources.extend(l.sources);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::topology::DeviceKind;

    #[test]
    fn merge_fills_gaps_and_reports_disagreements() {
        let s = |line| Source {
            file: "a".into(),
            line,
        };
        let mut t1 = Topology::default();
        t1.devices.push(Device::new("GPU0", DeviceKind::Gpu, s(1)));
        t1.links
            .push(Link::new("GPU0", "GPU1", LinkClass::Unknown, s(2)));
        let mut t2 = Topology::default();
        let mut d = Device::new("GPU0", DeviceKind::Gpu, s(5));
        d.numa_node = Some(1);
        t2.devices.push(d);
        t2.links
            .push(Link::new("GPU1", "GPU0", LinkClass::DirectLink, s(6)));
        assert!(t1.merge(t2).is_empty());
        assert_eq!(t1.devices[0].numa_node, Some(1));
        assert_eq!(t1.links[0].class, LinkClass::DirectLink);

        let mut t3 = Topology::default();
        t3.links
            .push(Link::new("GPU0", "GPU1", LinkClass::CrossSocket, s(9)));
        let c = t1.merge(t3);
        assert_eq!(c.len(), 1);
        assert!(
            c[0].what.contains("direct-link here, cross-socket there"),
            "{:?}",
            c
        );
        assert_eq!(t1.links[0].class, LinkClass::DirectLink);
    }
}
