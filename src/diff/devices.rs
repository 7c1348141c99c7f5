//! Changes of the devices themselves: the class of each topology pair, the
//! width and speed of each PCIe link, the state and rate of each RDMA port,
//! and the error counters that grew.

use super::parts::Identity;
use super::{ChangeKind, PairLink, PcieDevice, PcieState, PortState};
use crate::bundle::Bundle;
use crate::evidence::pcie::PcieLink;
use crate::evidence::rdma::RdmaPort;
use crate::evidence::topology::Link;

/// Counters whose growth means trouble (IB port counters and common
/// driver hw counters). L3/L4 checksum counters (`rx_tcp_checksum_errs`,
/// `rx_csum_offload_errors`) count bad packets a peer sent, not link
/// faults (ixgbe stopped counting them as input errors), so they are not.
pub(crate) fn is_error_counter(name: &str) -> bool {
    if name.contains("csum") || name.contains("checksum") {
        return false;
    }
    [
        "err",
        "discard",
        "drop",
        "symbol",
        "downed",
        "link_down",
        "out_of_buffer",
        "recovery",
        "integrity",
        "overrun",
        "timeout",
    ]
    .iter()
    .any(|k| name.contains(k))
}

fn pair_link(l: &Link) -> PairLink {
    PairLink {
        class: l.class,
        code: l.code.clone(),
    }
}

/// Class and code per pair, each device matched across the collections
/// by what names it ([`Identity`]), not by its position.
pub(super) fn topology(old: &Bundle, new: &Bundle, ids: &Identity, out: &mut Vec<ChangeKind>) {
    for nl in &new.topology.links {
        let (Some(a), Some(b)) = (ids.old_id(&nl.a), ids.old_id(&nl.b)) else {
            continue;
        };
        let Some(ol) = old.topology.link(a, b) else {
            continue;
        };
        if ol.class != nl.class || ol.code != nl.code {
            out.push(ChangeKind::ClassChanged {
                a: nl.a.clone(),
                b: nl.b.clone(),
                from: pair_link(ol),
                to: pair_link(nl),
            });
        }
    }
}

fn pcie_state(p: &PcieLink) -> PcieState {
    PcieState {
        width_lanes: p.current_width_lanes,
        speed_gt_per_s: p.current_speed_gt_per_s,
        generation: p.current_generation,
    }
}

/// Width and speed per address.
pub(super) fn pcie(old: &Bundle, new: &Bundle, out: &mut Vec<ChangeKind>) {
    for np in &new.pcie {
        let Some(op) = old.pcie.iter().find(|p| p.address == np.address) else {
            continue;
        };
        let (from, to) = (pcie_state(op), pcie_state(np));
        if from == to {
            continue;
        }
        let device = PcieDevice {
            address: np.address.clone(),
            name: np.name.clone(),
        };
        out.push(if from.width_lanes != to.width_lanes {
            ChangeKind::PcieWidth { device, from, to }
        } else {
            ChangeKind::PcieSpeed { device, from, to }
        });
    }
}

fn port_state(p: &RdmaPort) -> PortState {
    PortState {
        state: p.state.clone(),
        physical_state: p.physical_state.clone(),
        active: p.active,
        link_up: p.link_up,
        rate_bytes_per_s: p.rate_bytes_per_s,
        rate_as_printed: p.rate_as_printed.clone(),
    }
}

/// State, physical state and rate per port; error counters that grew.
pub(super) fn rdma(old: &Bundle, new: &Bundle, out: &mut Vec<ChangeKind>) {
    for nd in &new.rdma {
        let Some(od) = old.rdma.iter().find(|d| d.name == nd.name) else {
            continue;
        };
        for npo in &nd.ports {
            let Some(opo) = od.ports.iter().find(|p| p.port == npo.port) else {
                continue;
            };
            if opo.active != npo.active
                || opo.link_up != npo.link_up
                || opo.rate_bytes_per_s != npo.rate_bytes_per_s
            {
                out.push(ChangeKind::PortState {
                    device: nd.name.clone(),
                    port: npo.port,
                    from: port_state(opo),
                    to: port_state(npo),
                });
            }
            for c in npo.counters.iter().filter(|c| is_error_counter(&c.name)) {
                let old_c = opo
                    .counters
                    .iter()
                    .find(|x| x.name == c.name && x.group == c.group);
                let before = old_c.map(|x| x.end);
                // Growth while the new collection ran is a change only if
                // the old one did not see the counter grow as it ran too
                // (then it is the same standing fault, which the node's
                // own diagnosis tells; a collection diffed with itself has
                // no change).
                let grew_between = before.is_some_and(|b| c.end > b);
                let grew_newly = c.delta > 0 && old_c.is_none_or(|x| x.delta == 0);
                if grew_between || grew_newly {
                    out.push(ChangeKind::CounterGrew {
                        device: nd.name.clone(),
                        port: npo.port,
                        group: c.group.clone(),
                        counter: c.name.clone(),
                        before,
                        after: c.end,
                        delta: c.delta,
                    });
                }
            }
        }
    }
}

/// The peer-memory module a collection saw loaded (`Some(name)`), saw not
/// loaded (`Some(None)`: a live collection reads every module; listings
/// must rule out both NVIDIA ones), or cannot say (`None`).
fn peer_module(b: &Bundle) -> Option<Option<String>> {
    use crate::diagnosis::gpudirect::{NVIDIA_PEER_MEMORY_MODULES, PEER_MEMORY_MODULES};
    use crate::evidence::lsmod::{Said, state};
    let live = b.system.as_ref();
    let loaded = PEER_MEMORY_MODULES.iter().find(|m| {
        live.is_some_and(|s| s.drivers.iter().any(|d| d.module == **m))
            || matches!(state(&b.modules, m), Some(Said::Loaded(_)))
    });
    if let Some(m) = loaded {
        return Some(Some(m.to_string()));
    }
    let ruled_out = NVIDIA_PEER_MEMORY_MODULES
        .iter()
        .all(|m| matches!(state(&b.modules, m), Some(Said::Absent(_))));
    (live.is_some() || ruled_out).then_some(None)
}

/// Whether GPUDirect RDMA's peer-memory module came or went.
pub(super) fn peer_memory(old: &Bundle, new: &Bundle, out: &mut Vec<ChangeKind>) {
    if let (Some(from), Some(to)) = (peer_module(old), peer_module(new))
        && from.is_some() != to.is_some()
    {
        out.push(ChangeKind::PeerMemory { from, to });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One node named `n` holding the real `lsmod` transcript at `path`.
    fn node_with(path: &str) -> Bundle {
        let mut b = Bundle::new(crate::bundle::Host {
            name: "n".into(),
            origin: crate::bundle::Origin::Ingested,
        });
        let bytes = std::fs::read(path).unwrap();
        b.absorb(crate::ingest::read_transcript(path, &bytes));
        b
    }

    #[test]
    fn a_peer_memory_module_that_goes_is_worse_and_one_that_comes_is_better() {
        // Real listings: NVIDIA/nccl #1737 shows `nvidia_peermem` loaded;
        // openucx/ucx #9908's `nvidia` row names neither module among its
        // holders (both ruled out). As two collections of one node:
        let with = node_with(
            "captures/nv18-8gpu-6nic-peermem-nccl1737/lsmod-001-grep-nvidia-peermem-loaded-8x-nv18-gh-3714u15.txt",
        );
        let without = node_with(
            "captures/cx6-hdr-gpu1-no-peermem-ucx9908/lsmod-002-grep-gdrdrv-nvidia-holders-no-peermem-gpu1.txt",
        );
        let mut out = Vec::new();
        peer_memory(&with, &without, &mut out);
        assert_eq!(
            out,
            [ChangeKind::PeerMemory {
                from: Some("nvidia_peermem".into()),
                to: None
            }]
        );
        assert_eq!(out[0].trend(), super::super::Trend::Worse);
        let mut back = Vec::new();
        peer_memory(&without, &with, &mut back);
        assert_eq!(back[0].trend(), super::super::Trend::Better);
        // A node that says nothing of its modules gives no change.
        let silent = node_with(
            "captures/cx6-hdr-gpu1-no-peermem-ucx9908/ibv-devinfo-010-vv-cx6-mlx5_0-hdr-active-mlx5_1-disabled-gpu1.txt",
        );
        let mut none = Vec::new();
        peer_memory(&with, &silent, &mut none);
        assert!(none.is_empty());
    }

    #[test]
    fn error_counters_are_told_from_traffic_counters() {
        assert!(is_error_counter("port_rcv_errors"));
        assert!(is_error_counter("link_downed"));
        assert!(is_error_counter("symbol_error"));
        assert!(!is_error_counter("port_xmit_data"));
        // Checksum counters count what a peer sent, not a link fault.
        assert!(!is_error_counter("rx_tcp_checksum_errs"));
        assert!(!is_error_counter("rx_csum_offload_errors"));
        assert!(is_error_counter("rx_crc_errors_phy"));
    }
}
