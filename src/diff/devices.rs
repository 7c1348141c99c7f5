//! Changes of the devices themselves: the class of each topology pair, the
//! width and speed of each PCIe link, the state and rate of each RDMA port,
//! and the error counters that grew.

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

/// Class and code per pair.
pub(super) fn topology(old: &Bundle, new: &Bundle, out: &mut Vec<ChangeKind>) {
    for nl in &new.topology.links {
        let Some(ol) = old.topology.link(&nl.a, &nl.b) else {
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
                let before = opo
                    .counters
                    .iter()
                    .find(|x| x.name == c.name && x.group == c.group)
                    .map(|x| x.end);
                if before.is_some_and(|b| c.end > b) || c.delta > 0 {
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

#[cfg(test)]
mod tests {
    use super::*;

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
