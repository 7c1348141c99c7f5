//! The ceiling of a GPU's copies to and from host memory: its PCIe link,
//! at the negotiated width and the top speed it can run (GPUs slow their
//! links when idle, so the speed read while idle is not the one a copy
//! runs at).

use std::collections::BTreeMap;

use super::{CeilingSource, PathCeiling};
use crate::bundle::Bundle;
use crate::evidence::pcie::PcieLink;
use crate::models::ceiling;

/// The key of [`gpu_pcie_ceilings`] for a link every GPU shares.
pub(super) const EVERY_GPU: &str = "every GPU";

/// One PCI function's address with its domain: `0000:1B:00.0`,
/// `00000000:1b:00.0` and `1b:00.0` are one device (domain 0), while
/// `0009:01:00.0` and `0019:01:00.0` (a GH200 node, an Azure VM) are two.
pub(crate) fn bus_key(address: &str) -> String {
    let a = address.trim().to_ascii_lowercase();
    let mut parts: Vec<&str> = a.rsplitn(3, ':').collect();
    parts.reverse();
    match parts.as_slice() {
        [domain, bus, func] => {
            let domain = u32::from_str_radix(domain, 16).unwrap_or(u32::MAX);
            format!("{domain:x}:{bus}:{func}")
        }
        [bus, func] => format!("0:{bus}:{func}"),
        _ => a,
    }
}

/// Parts whose host copies do not cross PCIe (NVLink-C2C, one package's
/// shared memory): a PCIe link is no ceiling for them.
const NOT_OVER_PCIE: [&str; 4] = ["gh200", "gb200", "mi300a", "grace"];

/// One GPU link's ceiling: its negotiated width at the top speed it can
/// run (its capability, or what it runs at if that is more).
fn pcie_link_ceiling(p: &PcieLink) -> Option<(u32, u32)> {
    let lanes = p.current_width_lanes.filter(|l| *l > 0)?;
    let gen_of = |speed: Option<f64>, generation: Option<u32>| {
        speed.and_then(ceiling::pcie_generation_of).or(generation)
    };
    let top = gen_of(p.max_speed_gt_per_s, p.max_generation);
    let now = gen_of(p.current_speed_gt_per_s, p.current_generation);
    let generation = match (top, now) {
        (Some(t), Some(n)) => t.max(n),
        (t, n) => t.or(n)?,
    };
    Some((generation, lanes))
}

/// The ceiling of each GPU's host copies, from its PCIe link: by the
/// GPU's bus id where the topology gives one, else, when every GPU link
/// the evidence shows reads alike, that link for any GPU (then which
/// address is which GPU does not matter).
pub(super) fn gpu_pcie_ceilings(b: &Bundle) -> BTreeMap<String, PathCeiling> {
    let names = b.topology.gpus().filter_map(|d| d.name.clone()).chain(
        super::names::named_gpus(&b.transcripts)
            .into_iter()
            .map(|g| g.model),
    );
    if names
        .map(|n| n.to_ascii_lowercase())
        .any(|n| NOT_OVER_PCIE.iter().any(|p| n.contains(p)))
    {
        return BTreeMap::new();
    }
    let gpu_links: BTreeMap<String, (u32, u32)> = b
        .pcie
        .iter()
        .filter(|p| p.role.as_deref() == Some("gpu"))
        .filter_map(|p| Some((bus_key(&p.address), pcie_link_ceiling(p)?)))
        .collect();
    let make = |address: &str, (generation, lanes): (u32, u32)| {
        let c = ceiling::pcie(generation, lanes).ok()?;
        Some(PathCeiling {
            bytes_per_s: c.per_direction_bytes_per_s,
            from: CeilingSource::Pcie {
                address: address.to_string(),
                link: c.link,
            },
        })
    };
    let mut out = BTreeMap::new();
    for d in b.topology.gpus() {
        let Some(id) = &d.pci_bus_id else { continue };
        if let Some(c) = gpu_links.get(&bus_key(id)).and_then(|l| make(id, *l)) {
            out.insert(d.id.clone(), c);
        }
    }
    // Any GPU's link stands for every GPU's only when every GPU's link was
    // read (as many as the node has, and two or more) and they read alike.
    let gpus = b
        .topology
        .gpus()
        .count()
        .max(super::names::attached_gpus(&b.transcripts).unwrap_or(0))
        .max(2);
    let mut kinds = gpu_links.values();
    if gpu_links.len() >= gpus
        && let Some(first) = kinds.next()
        && kinds.all(|k| k == first)
        && let Some(c) = make(EVERY_GPU, *first)
    {
        out.insert(EVERY_GPU.to_string(), c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{Host, Origin};
    use crate::evidence::Source;
    use crate::evidence::topology::{Device, DeviceKind};

    fn gpu_link(address: &str, lanes: u32, top: f64, now: f64) -> PcieLink {
        PcieLink {
            address: address.into(),
            role: Some("gpu".into()),
            current_width_lanes: Some(lanes),
            max_speed_gt_per_s: Some(top),
            current_speed_gt_per_s: Some(now),
            source: Source::line(1),
            ..Default::default()
        }
    }

    #[test]
    fn an_idle_gpu_link_is_judged_at_its_top_speed_and_its_negotiated_width() {
        let mut b = Bundle::new(Host {
            name: "n".into(),
            origin: Origin::Ingested,
        });
        // Idle at 2.5 GT/s, capable of 16 GT/s: Gen4 x16 for a copy.
        b.pcie = vec![
            gpu_link("01:00.0", 16, 16.0, 2.5),
            gpu_link("41:00.0", 16, 16.0, 2.5),
        ];
        let c = gpu_pcie_ceilings(&b);
        let every = &c[EVERY_GPU];
        let gen4_x16 = ceiling::pcie(4, 16).unwrap().per_direction_bytes_per_s;
        assert_eq!(every.bytes_per_s, gen4_x16);
        // Links that differ: no ceiling for a GPU the address does not name.
        b.pcie[1] = gpu_link("41:00.0", 8, 16.0, 16.0);
        assert!(gpu_pcie_ceilings(&b).is_empty());
        // Named by the topology's bus id (domain and case aside).
        let mut g = Device::new("GPU1", DeviceKind::Gpu, Source::line(2));
        g.pci_bus_id = Some("00000000:41:00.0".into());
        b.topology.devices.push(g);
        let c = gpu_pcie_ceilings(&b);
        assert_eq!(c["GPU1"].bytes_per_s, gen4_x16 / 2.0);
        assert!(!c.contains_key("GPU0"));
        // One GPU's link read of two GPUs: it speaks for no other.
        b.topology.devices.clear();
        b.pcie.truncate(1);
        assert!(gpu_pcie_ceilings(&b).is_empty());
    }

    #[test]
    fn bus_ids_keep_their_domain() {
        assert_eq!(bus_key("00000000:1B:00.0"), bus_key("1b:00.0"));
        assert_eq!(bus_key("0000:1b:00.0"), bus_key("1b:00.0"));
        assert_ne!(bus_key("0009:01:00.0"), bus_key("0019:01:00.0"));
    }
}
