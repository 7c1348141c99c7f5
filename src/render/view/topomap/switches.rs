//! PCIe switches on the map, where the evidence shows them: a live
//! collection's sysfs bridge chains (a bridge below the root port that two
//! or more devices share, [`crate::facts::switches`]), or a vendor
//! matrix's `PIX` (at most one bridge between the two devices): devices
//! joined by `PIX` pairs sit under one switch, unless a pair among them
//! shows another PCIe code. `PXB` (several
//! bridges) names no one switch and stays a dashed edge. Each switch is
//! drawn as a box with a spoke to each member, and carries `data-members`,
//! `data-code` and, from sysfs, `data-bridge`, so the edge test can hold
//! it against the evidence. The pairwise edges it replaces are dropped.

use std::collections::BTreeSet;
use std::fmt::Write;

use super::{DEV_H, DEV_W, Layout, TopoMap, colour, esc};
use crate::bundle::Bundle;
use crate::evidence::topology::LinkClass;
use crate::facts::NodeFacts;

/// One switch drawn on the map.
#[derive(Debug, Clone, PartialEq)]
pub struct MapSwitch {
    /// Device ids under it, in topology order.
    pub members: Vec<String>,
    /// `PIX` (from the matrix) or `sysfs` (from the bridge chains).
    pub code: String,
    /// The uplink bridge's address, from sysfs.
    pub bridge: Option<String>,
}

/// `0000:41:00.1` -> `0000:41:00`; `41:00.0` keeps its form too.
fn device_of(address: &str) -> &str {
    address.rsplit_once('.').map_or(address, |(d, _)| d)
}

/// The switches the evidence shows, and the edges they replace removed.
pub(super) fn place(b: &Bundle, facts: &NodeFacts, m: &mut TopoMap) {
    let t = &b.topology;
    let mut out: Vec<MapSwitch> = Vec::new();
    for s in &facts.switches {
        let under: BTreeSet<&str> = s.devices.iter().map(|d| device_of(&d.address)).collect();
        let members: Vec<String> = t
            .devices
            .iter()
            .filter(|d| {
                d.pci_bus_id
                    .as_deref()
                    .is_some_and(|a| under.contains(device_of(a)))
            })
            .map(|d| d.id.clone())
            .collect();
        if members.len() >= 2 {
            out.push(MapSwitch {
                members,
                code: "sysfs".into(),
                bridge: Some(s.uplink_bridge.clone()),
            });
        }
    }
    // PIX groups: at most one bridge between two devices means both sit
    // under that bridge, so devices joined by PIX pairs share one switch.
    // A pair the matrix shows as a direct link (NV#) hides its PCIe path
    // and does not contradict; any other PCIe code (PXB, PHB, SYS) does,
    // and such a group is left as edges.
    let code = |a: &str, c: &str| t.link(a, c).and_then(|l| l.code.clone());
    let pix = |a: &str, c: &str| code(a, c).as_deref() == Some("PIX");
    let direct = |a: &str, c: &str| {
        t.link(a, c)
            .is_some_and(|l| l.class == LinkClass::DirectLink)
    };
    let mut seen: BTreeSet<String> = BTreeSet::new();
    for d in &t.devices {
        if seen.contains(&d.id) {
            continue;
        }
        let mut group: Vec<String> = vec![d.id.clone()];
        let mut i = 0;
        while i < group.len() {
            let next: Vec<String> = t
                .devices
                .iter()
                .map(|x| x.id.clone())
                .filter(|x| !group.contains(x) && pix(&group[i], x))
                .collect();
            group.extend(next);
            i += 1;
        }
        seen.extend(group.iter().cloned());
        let consistent = group
            .iter()
            .all(|x| group.iter().all(|y| x == y || pix(x, y) || direct(x, y)));
        if group.len() < 2 || !consistent {
            continue;
        }
        // Topology order, as the evidence lists the devices.
        let members: Vec<String> = t
            .devices
            .iter()
            .map(|x| x.id.clone())
            .filter(|x| group.contains(x))
            .collect();
        if !out.iter().any(|s| s.members == members) {
            out.push(MapSwitch {
                members,
                code: "PIX".into(),
                bridge: None,
            });
        }
    }
    let together = |a: &str, c: &str| {
        out.iter()
            .any(|s| s.members.iter().any(|x| x == a) && s.members.iter().any(|x| x == c))
    };
    m.edges
        .retain(|e| e.class != LinkClass::PcieSwitch || !together(&e.a, &e.b));
    m.switches = out;
}

/// Each switch: a spoke from each member to a small box between them.
pub(super) fn draw(s: &mut String, m: &TopoMap, l: &Layout) {
    for sw in &m.switches {
        let centres: Vec<(f64, f64)> = sw
            .members
            .iter()
            .filter_map(|id| l.pos.get(id))
            .map(|p| (p.0 + DEV_W / 2.0, p.1 + DEV_H / 2.0))
            .collect();
        if centres.len() < 2 {
            continue;
        }
        let n = centres.len() as f64;
        let cx = centres.iter().map(|c| c.0).sum::<f64>() / n;
        let mut cy = centres.iter().map(|c| c.1).sum::<f64>() / n;
        // Members in one row: the box goes in the gap below them.
        if centres.iter().all(|c| (c.1 - cy).abs() < 1.0) {
            cy += DEV_H / 2.0 + 20.0;
        }
        let (w, h) = (DEV_W, 22.0);
        let _ = write!(
            s,
            r#"<g class="switch" data-members="{}" data-code="{}"{}>"#,
            esc(&sw.members.join(" ")),
            esc(&sw.code),
            sw.bridge
                .as_ref()
                .map(|b| format!(r#" data-bridge="{}""#, esc(b)))
                .unwrap_or_default()
        );
        for c in &centres {
            let _ = write!(
                s,
                r#"<line x1="{:.1}" y1="{:.1}" x2="{cx:.1}" y2="{cy:.1}" stroke="{}" stroke-width="2" stroke-dasharray="7 4"/>"#,
                c.0,
                c.1,
                colour(LinkClass::PcieSwitch)
            );
        }
        let label = match &sw.bridge {
            Some(_) => "PCIe switch".to_string(),
            None => format!("PCIe switch ({})", sw.code),
        };
        let _ = write!(
            s,
            r##"<rect x="{:.1}" y="{:.1}" width="{w}" height="{h}" rx="4" fill="#fff7ed" stroke="#9a3412"/><text x="{cx:.1}" y="{:.1}" text-anchor="middle" font-size="11">{}</text></g>"##,
            cx - w / 2.0,
            cy - h / 2.0,
            cy + 4.0,
            esc(&label)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::Source;
    use crate::evidence::topology::{Device, DeviceKind};

    #[test]
    fn a_sysfs_switch_is_drawn_with_its_bridge_and_members() {
        // The synthetic live tree of facts::switches: a GPU and a
        // two-function adapter under one switch, a GPU under a root port.
        let mut b = crate::facts::switches::synthetic_tree();
        for (id, kind, addr) in [
            ("GPU0", DeviceKind::Gpu, "0000:03:00.0"),
            ("GPU1", DeviceKind::Gpu, "0000:81:00.0"),
            ("NIC0", DeviceKind::Nic, "0000:04:00.0"),
        ] {
            let mut d = Device::new(id, kind, Source::line(1));
            d.pci_bus_id = Some(addr.into());
            b.topology.devices.push(d);
        }
        let facts = NodeFacts::of(&b);
        let m = super::super::map(&b, &facts);
        assert_eq!(
            m.switches,
            vec![MapSwitch {
                members: vec!["GPU0".into(), "NIC0".into()],
                code: "sysfs".into(),
                bridge: Some("0000:01:00.0".into()),
            }]
        );
        let svg = super::super::svg(&m);
        assert!(svg.contains(
            r#"<g class="switch" data-members="GPU0 NIC0" data-code="sysfs" data-bridge="0000:01:00.0">"#
        ));
    }
}
