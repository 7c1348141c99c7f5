//! Ports grouped by what they are expected to train at: one link layer on
//! one adapter kind.

use std::collections::BTreeMap;

use super::port_data_rate;
use crate::bundle::Bundle;
use crate::evidence::rdma::{RdmaDevice, RdmaPort, one_adapter_by_mac};

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

/// Whether `port` of `device`, slower than the fastest active port of its
/// kind, may simply sit on another adapter. Only when the transcript names
/// no adapter model (`ibstatus` and `ibv_devinfo` print none, unlike
/// `ibstat`'s `CA type`), the port runs as many lanes as every fastest
/// port of its kind, and its rate is at least a quarter of theirs: one or
/// two speed generations down at full width is how a slower adapter looks
/// (a 200 Gb/s 4X HDR cloud NIC beside 400 Gb/s 4X NDR BlueField-3 ports,
/// DeepEP issue #17; 100 Gb/s ConnectX-6 Dx beside 400 Gb/s ConnectX-7).
/// Fewer lanes, or a fall to a far older speed (4X SDR or QDR beside
/// NDR), is a port trained down whatever the adapter. So is a port the
/// transcript shows on one adapter with a faster one (consecutive MACs
/// behind their GIDs, [`one_adapter_by_mac`]): the two ports of one
/// 25 GbE ConnectX-4 Lx, one at 10 Gb/s (1X QDR), are not two adapters.
pub fn may_be_another_adapter(b: &Bundle, device: &RdmaDevice, port: &RdmaPort) -> bool {
    let (Some(rate), Some(lanes)) = (port_data_rate(port), lanes(port)) else {
        return false;
    };
    if device.ca_type.is_some() {
        return false;
    }
    let kind = port_kind(device, port);
    let same_kind: Vec<&RdmaPort> = b
        .rdma
        .iter()
        .flat_map(|d| d.ports.iter().map(move |p| (d, p)))
        .filter(|(d, p)| p.active == Some(true) && port_kind(d, p) == kind)
        .map(|(_, p)| p)
        .collect();
    let on_a_faster_ports_adapter = same_kind
        .iter()
        .any(|q| port_data_rate(q).is_some_and(|r| r > rate) && one_adapter_by_mac(port, q));
    let peers: Vec<(f64, Option<u32>)> = same_kind
        .iter()
        .filter_map(|p| Some((port_data_rate(p)?, self::lanes(p))))
        .collect();
    let best = peers.iter().map(|x| x.0).fold(0.0, f64::max);
    !on_a_faster_ports_adapter
        && rate < best
        && rate * 4.0 >= best
        && peers
            .iter()
            .filter(|x| x.0 == best)
            .all(|x| x.1 == Some(lanes))
}

/// The lane count of a port's width as printed (`4X`, `4X (2)`).
fn lanes(p: &RdmaPort) -> Option<u32> {
    let w = p.width.as_deref()?.split_whitespace().next()?;
    w.strip_suffix(['X', 'x'])?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{Host, Origin};
    use crate::evidence::Source;

    fn ibstatus_port(rate: &str) -> RdmaPort {
        // As `ibstatus` states it: `200 Gb/sec (4X HDR)`.
        let (gbit, inner) = rate.split_once(" Gb/sec (").unwrap();
        let mut w = inner.trim_end_matches(')').split_whitespace();
        RdmaPort {
            port: 1,
            active: Some(true),
            rate_bytes_per_s: gbit.parse::<f64>().ok().map(|g| g * 1e9 / 8.0),
            rate_as_printed: Some(rate.into()),
            width: w.next().map(str::to_string),
            speed: w.next().map(str::to_string),
            link_layer: Some("Ethernet".into()),
            ..RdmaPort::default()
        }
    }

    fn node(rates: &[&str]) -> Bundle {
        let mut b = Bundle::new(Host {
            name: "n".into(),
            origin: Origin::Ingested,
        });
        for (i, r) in rates.iter().enumerate() {
            b.rdma.push(RdmaDevice {
                name: format!("mlx5_{i}"),
                ca_type: None,
                firmware: None,
                node_guid: None,
                transport: None,
                board_id: None,
                ports: vec![ibstatus_port(r)],
                source: Source::line(1),
            });
        }
        b
    }

    #[test]
    fn a_full_width_port_a_generation_down_with_no_adapter_model_may_be_another_adapter() {
        // Shaped like DeepEP #17's ibstatus: mlx5_0 200 Gb/s beside 400s.
        let mut b = node(&[
            "200 Gb/sec (4X HDR)",
            "400 Gb/sec (4X NDR)",
            "400 Gb/sec (4X NDR)",
        ]);
        let slow = |b: &Bundle| may_be_another_adapter(b, &b.rdma[0], &b.rdma[0].ports[0]);
        assert!(slow(&b));
        // The fastest ports themselves are never "another adapter".
        assert!(!may_be_another_adapter(&b, &b.rdma[1], &b.rdma[1].ports[0]));
        // Fewer lanes: trained down, whatever the adapter.
        b.rdma[0].ports[0] = ibstatus_port("200 Gb/sec (2X NDR)");
        assert!(!slow(&b));
        // A fall to a far older speed at full width: trained down.
        b.rdma[0].ports[0] = ibstatus_port("40 Gb/sec (4X QDR)");
        assert!(!slow(&b));
        // Two generations down at full width is still a plausible adapter.
        b.rdma[0].ports[0] = ibstatus_port("100 Gb/sec (4X EDR)");
        assert!(slow(&b));
        // With the adapter model stated (ibstat's CA type), kinds decide.
        b.rdma[0].ca_type = Some("MT4129".into());
        assert!(!slow(&b));
    }

    #[test]
    fn a_slower_port_with_a_faster_one_on_its_adapter_is_not_another_adapter() {
        // Shaped like the t3640 host's ibstatus (ConnectX-4 Lx 25GbE).
        let mut b = node(&["10 Gb/sec (1X QDR)", "25 Gb/sec (1X EDR)"]);
        let slow = |b: &Bundle| may_be_another_adapter(b, &b.rdma[0], &b.rdma[0].ports[0]);
        // No GIDs: a 10 GbE adapter beside a 25 GbE one is how it looks.
        assert!(slow(&b));
        let gid = |b: &mut Bundle, i: usize, g: &str| {
            b.rdma[i].ports[0].gids = vec![crate::evidence::rdma::Gid {
                index: 0,
                gid: g.into(),
                ipv4: None,
                version: None,
                netdev: None,
            }];
        };
        gid(&mut b, 0, "fe80:0000:0000:0000:ee0d:9aff:fed9:8ff6");
        gid(&mut b, 1, "fe80:0000:0000:0000:ee0d:9aff:fed9:8ff7");
        assert!(!slow(&b));
        // MACs far apart: two cards, as before.
        gid(&mut b, 1, "fe80:0000:0000:0000:ee0d:9aff:fed9:9000");
        assert!(slow(&b));
    }
}

/// Whether the RDMA device `name` is done in software by the kernel over
/// an ordinary Ethernet interface: Soft-RoCE (`rdma_rxe`) or soft-iWARP
/// (`siw`). By the names `rdma link add <name> type rxe|siw` is documented
/// with (`rxe0`, `siw0`), or by what the transcript states of the device:
/// firmware `0.0.0` and no adapter model (rxe and siw have no firmware;
/// `ibv_devinfo` prints 0.0.0 for them, no hardware adapter does).
pub fn is_software_rdma(b: &Bundle, name: &str) -> bool {
    let by_name = ["rxe", "siw"].iter().any(|p| {
        name.strip_prefix(p)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
    });
    by_name
        || b.rdma.iter().any(|d| {
            d.name == name && d.firmware.as_deref() == Some("0.0.0") && d.ca_type.is_none()
        })
}

#[cfg(test)]
mod software_tests {
    use super::*;
    use crate::bundle::{Host, Origin};
    use crate::evidence::Source;

    #[test]
    fn soft_roce_and_soft_iwarp_devices_are_software() {
        let mut b = Bundle::new(Host {
            name: "n".into(),
            origin: Origin::Ingested,
        });
        assert!(is_software_rdma(&b, "rxe0") && is_software_rdma(&b, "siw12"));
        assert!(!is_software_rdma(&b, "mlx5_0") && !is_software_rdma(&b, "rxe"));
        assert!(!is_software_rdma(&b, "rxe_eth0"));
        // A renamed rxe device (`rdma link add roce_vm type rxe ...`) as
        // ibv_devinfo shows it: fw_ver 0.0.0 and no adapter model.
        b.rdma.push(RdmaDevice {
            name: "roce_vm".into(),
            ca_type: None,
            firmware: Some("0.0.0".into()),
            node_guid: None,
            transport: None,
            board_id: None,
            ports: vec![],
            source: Source::line(1),
        });
        assert!(is_software_rdma(&b, "roce_vm"));
        b.rdma[0].firmware = Some("28.41.1000".into());
        assert!(!is_software_rdma(&b, "roce_vm"));
    }
}
