//! PCIe switches the live sysfs tree shows, with the devices under each
//! and their link rates against the switch's uplink (seed section 3.7: "a
//! shared switch uplink").
//!
//! The evidence is each device's bridge chain (`PcieLink::upstream`,
//! nearest bridge first, root port last) and every bridge's own link
//! state (each is a `pcie[]` entry too). A bridge below the root port that
//! two or more devices share is a switch; of a switch's two bridges on a
//! device's chain (its downstream and upstream port), the one nearer the
//! root carries the uplink, and the devices are grouped under it. Functions
//! of one device (`41:00.0`, `41:00.1`) share one link and count once.
//! A rate is the per-direction ceiling of the negotiated link
//! ([`ceiling::pcie`]); a device or uplink without both a speed and a width
//! is left out of the sum and named as unrated.

use std::collections::{BTreeMap, BTreeSet};

use crate::bundle::Bundle;
use crate::evidence::Source;
use crate::evidence::pcie::PcieLink;
use crate::models::ceiling;

/// One PCIe switch and the devices under it.
#[derive(Debug, Clone, PartialEq)]
pub struct Switch {
    /// The bridge whose link is the uplink (the switch's upstream port).
    pub uplink_bridge: String,
    /// Its negotiated link's per-direction rate, and the link in words
    /// (`PCIe Gen4 x16`), when sysfs read both.
    pub uplink_bytes_per_s: Option<f64>,
    pub uplink_link: Option<String>,
    /// Devices under it (one address per physical device, function 0 or
    /// the first seen), each with its negotiated rate when read.
    pub devices: Vec<SwitchDevice>,
    pub source: Source,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SwitchDevice {
    pub address: String,
    pub name: Option<String>,
    pub role: Option<String>,
    pub bytes_per_s: Option<f64>,
}

impl Switch {
    /// The rated devices' rates summed.
    pub fn devices_bytes_per_s(&self) -> f64 {
        self.devices.iter().filter_map(|d| d.bytes_per_s).sum()
    }
}

/// The per-direction ceiling of a link as negotiated, and its words.
fn rate(p: &PcieLink) -> Option<(f64, String)> {
    let lanes = p.current_width_lanes?;
    let generation = p.current_generation.or_else(|| {
        p.current_speed_gt_per_s
            .and_then(ceiling::pcie_generation_of)
    })?;
    let c = ceiling::pcie(generation, lanes).ok()?;
    Some((c.per_direction_bytes_per_s, c.link))
}

/// `0000:41:00.1` -> `0000:41:00`: the device, not the function.
fn device_of(address: &str) -> &str {
    address.rsplit_once('.').map_or(address, |(d, _)| d)
}

/// Every switch two or more devices share, in address order of its uplink
/// bridge.
pub fn switches(b: &Bundle) -> Vec<Switch> {
    let by_addr: BTreeMap<&str, &PcieLink> =
        b.pcie.iter().map(|p| (p.address.as_str(), p)).collect();
    let endpoints: Vec<&PcieLink> = b
        .pcie
        .iter()
        .filter(|p| p.role.as_deref() != Some("bridge") && p.upstream.len() >= 2)
        .collect();
    // Per bridge below the root port: the devices whose chain passes it.
    let mut under: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for e in &endpoints {
        let below_root = &e.upstream[..e.upstream.len() - 1];
        for bridge in below_root {
            under
                .entry(bridge.as_str())
                .or_default()
                .insert(device_of(&e.address));
        }
    }
    // Keep a bridge shared by two devices or more, and of bridges with the
    // same devices on one chain, the one nearest the root (the uplink).
    let mut out = Vec::new();
    for (bridge, devs) in &under {
        if devs.len() < 2 {
            continue;
        }
        let nearer_same = endpoints.iter().any(|e| {
            let below_root = &e.upstream[..e.upstream.len() - 1];
            below_root
                .iter()
                .position(|x| x == bridge)
                .is_some_and(|i| {
                    below_root[i + 1..]
                        .iter()
                        .any(|up| under.get(up.as_str()) == Some(devs))
                })
        });
        if nearer_same {
            continue;
        }
        let mut devices = Vec::new();
        let mut seen = BTreeSet::new();
        for e in &endpoints {
            let d = device_of(&e.address);
            if devs.contains(d) && e.upstream.iter().any(|x| x == bridge) && seen.insert(d) {
                devices.push(SwitchDevice {
                    address: e.address.clone(),
                    name: e.name.clone(),
                    role: e.role.clone(),
                    bytes_per_s: rate(e).map(|r| r.0),
                });
            }
        }
        let up = by_addr.get(bridge);
        let uplink = up.and_then(|p| rate(p));
        out.push(Switch {
            uplink_bridge: bridge.to_string(),
            uplink_bytes_per_s: uplink.as_ref().map(|u| u.0),
            uplink_link: uplink.map(|u| u.1),
            devices,
            source: up.map_or_else(|| endpoints[0].source.clone(), |p| p.source.clone()),
        });
    }
    out
}

#[cfg(test)]
pub(crate) use tests::synthetic_tree;

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::bundle::{Host, Origin};

    /// A synthetic live tree: root port 00:01.0, a switch (upstream port
    /// 01:00.0 at Gen4 x16, downstream ports 02:00.0 and 02:01.0), a GPU
    /// at Gen4 x16 and a two-function adapter at Gen4 x16 under it; a
    /// second GPU straight under root port 00:03.0.
    pub(crate) fn synthetic_tree() -> Bundle {
        let mut b = Bundle::new(Host {
            name: "synthetic-switch".into(),
            origin: Origin::Live,
        });
        let link = |addr: &str, role: &str, up: &[&str], gts: f64, lanes: u32| PcieLink {
            address: addr.into(),
            role: Some(role.into()),
            upstream: up.iter().map(|s| s.to_string()).collect(),
            current_speed_gt_per_s: Some(gts),
            current_width_lanes: Some(lanes),
            source: Source::line(1),
            ..Default::default()
        };
        b.pcie = vec![
            link("0000:00:01.0", "bridge", &[], 16.0, 16),
            link("0000:01:00.0", "bridge", &["0000:00:01.0"], 16.0, 16),
            link(
                "0000:02:00.0",
                "bridge",
                &["0000:01:00.0", "0000:00:01.0"],
                16.0,
                16,
            ),
            link(
                "0000:02:01.0",
                "bridge",
                &["0000:01:00.0", "0000:00:01.0"],
                16.0,
                16,
            ),
            link(
                "0000:03:00.0",
                "gpu",
                &["0000:02:00.0", "0000:01:00.0", "0000:00:01.0"],
                16.0,
                16,
            ),
            link(
                "0000:04:00.0",
                "nic",
                &["0000:02:01.0", "0000:01:00.0", "0000:00:01.0"],
                16.0,
                16,
            ),
            link(
                "0000:04:00.1",
                "nic",
                &["0000:02:01.0", "0000:01:00.0", "0000:00:01.0"],
                16.0,
                16,
            ),
            link("0000:81:00.0", "gpu", &["0000:00:03.0"], 16.0, 16),
        ];
        b
    }

    #[test]
    fn a_switch_is_the_shared_bridge_nearest_the_root_with_each_device_once() {
        let s = switches(&synthetic_tree());
        assert_eq!(s.len(), 1, "{s:#?}");
        assert_eq!(s[0].uplink_bridge, "0000:01:00.0");
        assert_eq!(s[0].uplink_link.as_deref(), Some("PCIe Gen4 x16"));
        let addrs: Vec<&str> = s[0].devices.iter().map(|d| d.address.as_str()).collect();
        assert_eq!(addrs, ["0000:03:00.0", "0000:04:00.0"]);
        let one = ceiling::pcie(4, 16).unwrap().per_direction_bytes_per_s;
        assert_eq!(s[0].uplink_bytes_per_s, Some(one));
        assert_eq!(s[0].devices_bytes_per_s(), 2.0 * one);
    }

    #[test]
    fn no_chains_no_switches() {
        let mut b = synthetic_tree();
        for p in &mut b.pcie {
            p.upstream.clear();
        }
        assert!(switches(&b).is_empty());
    }
}
