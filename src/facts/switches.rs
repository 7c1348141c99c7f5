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
//! A rate is the per-direction ceiling ([`ceiling::pcie`]) of a link at
//! its negotiated width and its top speed: the lower of the two ends'
//! capable speeds (`LnkCap`, sysfs `max_link_speed`) where both are read,
//! else the negotiated speed. Links drop their speed, not their width, to
//! save power (an idle GPU shows 2.5 GT/s under an 8 GT/s `LnkCap`), so
//! the negotiated speed says what the link did at the moment it was read,
//! not what it carries when busy. A device or uplink without a width and a
//! speed is left out of the sum and named as unrated.
//!
//! The tree comes from sysfs on a live node or from the `Bus:` lines of a
//! whole-machine `lspci -vvv` (see `evidence::pcie`). A live collection
//! that read both names each switch twice (`0000:18:00.0` and `18:00.0`):
//! one switch per bridge address is kept, a bare one read as domain 0000.

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
    /// Its link's per-direction rate (top speed, negotiated width), and
    /// the link in words (`PCIe Gen4 x16`), when both were read.
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

/// The per-direction ceiling of `p`'s link (to `above`, the bridge over
/// it) at its negotiated width and top speed, and its words.
fn rate(p: &PcieLink, above: Option<&PcieLink>) -> Option<(f64, String)> {
    let lanes = p.current_width_lanes?;
    let negotiated = p.current_generation.or_else(|| {
        p.current_speed_gt_per_s
            .and_then(ceiling::pcie_generation_of)
    });
    let top = p
        .max_speed_gt_per_s
        .zip(above.and_then(|a| a.max_speed_gt_per_s))
        .and_then(|(a, b)| ceiling::pcie_generation_of(a.min(b)));
    let generation = match (top, negotiated) {
        (Some(t), Some(n)) => t.max(n),
        (t, n) => t.or(n)?,
    };
    let c = ceiling::pcie(generation, lanes).ok()?;
    Some((c.per_direction_bytes_per_s, c.link))
}

/// `18:00.0` -> `0000:18:00.0`: lspci leaves the domain out only where it
/// is 0000 (on a machine of one domain, without `-D`), so a bare address
/// and its domain-0000 form are one bridge, and `0001:18:00.0` another.
fn with_domain(address: &str) -> String {
    match address.split(':').count() {
        2 => format!("0000:{address}"),
        _ => address.to_string(),
    }
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
    // Per bridge below the root port: the devices whose chain passes it;
    // per bridge, the bridges right above it there, and the endpoints
    // whose chain passes it (each built once: a whole machine's lspci can
    // list thousands of switches).
    let mut under: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut parents: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut through: BTreeMap<&str, Vec<&PcieLink>> = BTreeMap::new();
    for e in &endpoints {
        let below_root = &e.upstream[..e.upstream.len() - 1];
        for bridge in below_root {
            under
                .entry(bridge.as_str())
                .or_default()
                .insert(device_of(&e.address));
        }
        for pair in below_root.windows(2) {
            parents
                .entry(pair[0].as_str())
                .or_default()
                .insert(pair[1].as_str());
        }
        for bridge in &e.upstream {
            through.entry(bridge.as_str()).or_default().push(e);
        }
    }
    // Keep a bridge shared by two devices or more, and of bridges with the
    // same devices on one chain, the one nearest the root (the uplink).
    let above = |p: &PcieLink| {
        p.upstream
            .first()
            .and_then(|u| by_addr.get(u.as_str()).copied())
    };
    let mut out: Vec<Switch> = Vec::new();
    let mut named: BTreeSet<String> = BTreeSet::new();
    for (bridge, devs) in &under {
        if devs.len() < 2 {
            continue;
        }
        if nearer_same(bridge, devs, &under, &parents) || !named.insert(with_domain(bridge)) {
            continue;
        }
        let mut devices = Vec::new();
        let mut seen = BTreeSet::new();
        for e in through.get(bridge).into_iter().flatten() {
            let d = device_of(&e.address);
            if devs.contains(d) && seen.insert(d) {
                devices.push(SwitchDevice {
                    address: e.address.clone(),
                    name: e.name.clone(),
                    role: e.role.clone(),
                    bytes_per_s: rate(e, above(e)).map(|r| r.0),
                });
            }
        }
        let up = by_addr.get(bridge);
        let uplink = up.and_then(|p| rate(p, above(p)));
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

/// Whether a bridge above `bridge` (below the root port) leads to the
/// same devices `devs`: then that one, nearer the root, is the uplink.
fn nearer_same(
    bridge: &str,
    devs: &BTreeSet<&str>,
    under: &BTreeMap<&str, BTreeSet<&str>>,
    parents: &BTreeMap<&str, BTreeSet<&str>>,
) -> bool {
    let mut stack: Vec<&str> = parents.get(bridge).into_iter().flatten().copied().collect();
    let mut seen = BTreeSet::from([bridge]);
    while let Some(up) = stack.pop() {
        if !seen.insert(up) {
            continue;
        }
        if under.get(up) == Some(devs) {
            return true;
        }
        stack.extend(parents.get(up).into_iter().flatten().copied());
    }
    false
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
    fn a_real_lspci_tree_gives_its_switch_with_idle_links_at_their_top_speed() {
        // Supermicro X11DPG-OT excerpt (captures/supermicro-x11dpg-ot-pex8747):
        // PEX 8747 upstream port 18:00.0 at 8GT/s x16 (lines 95, 99); the
        // two GPUs idle at `LnkSta: Speed 2.5GT/s, Width x16` (lines 310,
        // 375) under `LnkCap: ... Speed 8GT/s, Width x16` on both ends of
        // their links (lines 306, 371 and the ports' 162, 235).
        let text = include_str!(
            "../../captures/supermicro-x11dpg-ot-pex8747/lspci-005-x11dpg-ot-two-gpus-under-one-pex8747-x16-uplink-excerpt.txt"
        );
        let mut b = Bundle::new(Host {
            name: "x11dpg".into(),
            origin: Origin::Ingested,
        });
        b.pcie = crate::evidence::pcie::parse_lspci(text).unwrap().pcie;
        let s = switches(&b);
        assert_eq!(s.len(), 1, "{s:#?}");
        assert_eq!(s[0].uplink_bridge, "18:00.0");
        assert_eq!(s[0].uplink_link.as_deref(), Some("PCIe Gen3 x16"));
        let gen3 = ceiling::pcie(3, 16).unwrap().per_direction_bytes_per_s;
        let got: Vec<(&str, Option<f64>)> = s[0]
            .devices
            .iter()
            .map(|d| (d.address.as_str(), d.bytes_per_s))
            .collect();
        assert_eq!(got, [("1a:00.0", Some(gen3)), ("1b:00.0", Some(gen3))]);
        assert_eq!(s[0].uplink_bytes_per_s, Some(gen3));
    }

    #[test]
    fn a_link_runs_at_the_lower_capable_speed_of_its_two_ends() {
        // A Gen4-capable card (16 GT/s) behind a Gen3 port (8 GT/s), idle
        // at 2.5 GT/s: its link counts at Gen3.
        let mut b = synthetic_tree();
        for p in &mut b.pcie {
            p.max_speed_gt_per_s = Some(16.0);
            if p.address == "0000:02:00.0" {
                p.max_speed_gt_per_s = Some(8.0);
            }
            if p.address == "0000:03:00.0" {
                p.current_speed_gt_per_s = Some(2.5);
            }
        }
        let s = switches(&b);
        let gpu = &s[0].devices[0];
        assert_eq!(gpu.address, "0000:03:00.0");
        let gen3 = ceiling::pcie(3, 16).unwrap().per_direction_bytes_per_s;
        assert_eq!(gpu.bytes_per_s, Some(gen3));
    }

    /// `0000:18:00.0` -> `18:00.0`: the address without its PCI domain.
    fn without_domain(address: &str) -> &str {
        match address.split(':').count() {
            3 => address.split_once(':').map_or(address, |(_, rest)| rest),
            _ => address,
        }
    }

    #[test]
    fn one_switch_read_from_sysfs_and_from_lspci_is_named_once() {
        let mut b = synthetic_tree();
        let bare: Vec<PcieLink> = b
            .pcie
            .iter()
            .map(|p| PcieLink {
                address: without_domain(&p.address).to_string(),
                upstream: p
                    .upstream
                    .iter()
                    .map(|u| without_domain(u).to_string())
                    .collect(),
                ..p.clone()
            })
            .collect();
        b.pcie.extend(bare);
        let s = switches(&b);
        assert_eq!(s.len(), 1, "{s:#?}");
        assert_eq!(s[0].uplink_bridge, "0000:01:00.0");
    }

    #[test]
    fn switches_at_one_address_in_two_pci_domains_are_two() {
        // Synthetic: the same tree again in PCI domain 0001 (a machine of
        // several root complexes, as lspci prints it there: every address
        // with its domain). Two switches, not one named once.
        let mut b = synthetic_tree();
        let other: Vec<PcieLink> = b
            .pcie
            .iter()
            .map(|p| PcieLink {
                address: p.address.replacen("0000:", "0001:", 1),
                upstream: p
                    .upstream
                    .iter()
                    .map(|u| u.replacen("0000:", "0001:", 1))
                    .collect(),
                ..p.clone()
            })
            .collect();
        b.pcie.extend(other);
        let s = switches(&b);
        let uplinks: Vec<&str> = s.iter().map(|s| s.uplink_bridge.as_str()).collect();
        assert_eq!(uplinks, ["0000:01:00.0", "0001:01:00.0"]);
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
