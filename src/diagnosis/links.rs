//! Rules on the links themselves: PCIe links trained narrower or slower
//! than they can, NVLinks reported inactive, RDMA ports down or slower than
//! the fastest of their link layer.

use std::collections::{BTreeMap, BTreeSet};

use super::{Diagnosed, Finding, PcieSpeed, Why, push};
use crate::bundle::Bundle;
use crate::diff::is_error_counter;
use crate::evidence::ethtool::is_congestion_counter;
use crate::evidence::pcie::PcieLink;
use crate::facts::NodeFacts;
use crate::facts::sku::NvlinkWiring;

/// The lanes of the port above a device (its slot), where a live
/// collection listed the bridges above it and read their links; `lanes`
/// maps each address to its first entry's capable width.
fn slot_lanes(lanes: &BTreeMap<&str, Option<u32>>, p: &PcieLink) -> Option<u32> {
    let up = p.upstream.first()?;
    *lanes.get(up.as_str())?
}

/// `17:00.0` and `0000:17:00.0` are one device: lspci prints the domain
/// only with `-D`, sysfs always does.
fn device_key(address: &str) -> String {
    let a = address.to_ascii_lowercase();
    if a.len() == 7 { format!("0000:{a}") } else { a }
}

/// Which entry of `pcie[]` speaks for each device: a live collection reads
/// one device from sysfs and again from `lspci -vvv`. The entry that knows
/// the device's role (sysfs) wins, else the first.
fn one_entry_per_device(b: &Bundle) -> Vec<bool> {
    let mut chosen: std::collections::HashMap<String, usize> = Default::default();
    for (i, p) in b.pcie.iter().enumerate() {
        if p.address.starts_with("unknown") {
            continue;
        }
        let e = chosen.entry(device_key(&p.address)).or_insert(i);
        if b.pcie[*e].role.is_none() && p.role.is_some() {
            *e = i;
        }
    }
    let mut keep = vec![true; b.pcie.len()];
    for (i, p) in b.pcie.iter().enumerate() {
        if let Some(&c) = chosen.get(&device_key(&p.address)) {
            keep[i] = c == i;
        }
    }
    keep
}

pub(super) fn pcie_links(b: &Bundle, out: &mut Vec<Diagnosed>) {
    let keep = one_entry_per_device(b);
    // Built once (a whole machine's lspci lists thousands of functions):
    // the ports with a device right below them, and each address's width.
    let above_a_device: BTreeSet<String> = b
        .pcie
        .iter()
        .filter(|x| x.role.as_deref() != Some("bridge"))
        .filter_map(|x| x.upstream.first().map(|u| device_key(u)))
        .collect();
    let mut lanes: BTreeMap<&str, Option<u32>> = BTreeMap::new();
    for x in &b.pcie {
        lanes.entry(x.address.as_str()).or_insert(x.max_width_lanes);
    }
    for (p, _) in b.pcie.iter().zip(&keep).filter(|x| *x.1) {
        // A port and the device right below it report one link: it is
        // judged once, on the device. (A switch's upstream port has only
        // bridges below it, its downstream ports, and keeps its own link.)
        // A link of width 0 is not trained (an empty slot), not a narrow one.
        if p.current_width_lanes == Some(0) || above_a_device.contains(&device_key(&p.address)) {
            continue;
        }
        if let (Some(c), Some(m)) = (p.current_width_lanes, p.max_width_lanes)
            && c < m
        {
            // A device's own LnkCap says what the card can do, not what the
            // slot can (a laptop's x8 wiring, an x16 card in an x4 slot):
            // critical only when the slot is known to be wider too.
            let slot = slot_lanes(&lanes, p);
            let why = match slot {
                Some(s) if s > c => Why::PcieWidthDownSlotWider,
                _ => Why::PcieWidthDownCardOnly,
            };
            push(
                out,
                why,
                Finding::PcieWidthDown {
                    address: p.address.clone(),
                    name: p.name.clone(),
                    current_lanes: c,
                    max_lanes: m,
                    slot_lanes: slot,
                },
                vec![p.source.clone()],
            );
        }
        let speed = match (
            p.current_speed_gt_per_s,
            p.max_speed_gt_per_s,
            p.current_generation,
            p.max_generation,
        ) {
            (Some(c), Some(m), _, _) if c < m => Some((PcieSpeed::GtPerS(c), PcieSpeed::GtPerS(m))),
            (_, _, Some(c), Some(m)) if c < m => {
                Some((PcieSpeed::Generation(c), PcieSpeed::Generation(m)))
            }
            _ => None,
        };
        if let Some((current, max)) = speed {
            // GPUs lower their PCIe generation when idle and no evidence
            // here says the GPU was under load: a note with "re-read under
            // load", not a warning. A device known not to be a GPU (a NIC,
            // a bridge) keeps the warning.
            let why = match p.role.as_deref() {
                Some(r) if r != "gpu" => Why::PcieSpeedDownNotGpu,
                _ => Why::PcieSpeedDownGpuIdle,
            };
            push(
                out,
                why,
                Finding::PcieSpeedDown {
                    address: p.address.clone(),
                    name: p.name.clone(),
                    current,
                    max,
                },
                vec![p.source.clone()],
            );
        }
    }
}

/// Switches whose devices' links sum above the uplink (seed section 3.7,
/// a shared switch uplink). Info: by design in many servers, and it costs
/// only when the devices are busy at once with traffic that leaves the
/// switch, which no evidence here shows.
pub(super) fn switch_uplinks(facts: &NodeFacts, out: &mut Vec<Diagnosed>) {
    for s in &facts.switches {
        let (Some(up), Some(link)) = (s.uplink_bytes_per_s, s.uplink_link.as_ref()) else {
            continue;
        };
        let devices: Vec<(String, f64)> = s
            .devices
            .iter()
            .filter_map(|d| Some((d.address.clone(), d.bytes_per_s?)))
            .collect();
        let sum: f64 = devices.iter().map(|d| d.1).sum();
        if devices.len() < 2 || sum <= up * (1.0 + 1e-9) {
            continue;
        }
        push(
            out,
            Why::SwitchUplinkShared,
            Finding::SwitchUplinkOversubscribed {
                switch: s.uplink_bridge.clone(),
                uplink_link: link.clone(),
                uplink_bytes_per_s: up,
                devices,
                sum_bytes_per_s: sum,
            },
            vec![s.source.clone()],
        );
    }
}

pub(super) fn nvlinks(b: &Bundle, facts: &NodeFacts, out: &mut Vec<Diagnosed>) {
    for (gpu, n) in &facts.nvlinks {
        let sku = facts.sku(gpu);
        // nvidia-smi lists 18 links on an H100 PCIe built with 12: the
        // design, not the listing, says how many should be up.
        let designed = sku.map(|s| s.nvlinks);
        // Links the transcript does not list (a cut capture) are unknown,
        // not inactive; a listing that numbers no link ("all links are
        // inactive") stands for every link.
        let seen = if n.unnumbered >= n.listed {
            designed.unwrap_or(n.listed)
        } else {
            n.listed.min(designed.unwrap_or(n.listed))
        };
        let inactive = seen.saturating_sub(n.active);
        if inactive == 0 {
            continue;
        }
        // A bridged card with no link up simply has no bridge. Any other
        // listed link is one the part has (a GPU built without NVLink
        // lists none), so down is a fault, whatever the other GPUs show.
        let no_bridge = n.active == 0 && sku.is_some_and(|s| s.wiring == NvlinkWiring::Bridge);
        let why = if no_bridge {
            Why::NvlinksNoBridge
        } else {
            Why::NvlinksDown
        };
        push(
            out,
            why,
            Finding::NvlinksInactive {
                gpu: gpu.clone(),
                inactive,
                // Every link unnumbered: the tool could not read any.
                total: (n.unnumbered < n.listed).then_some(n.listed),
                designed,
            },
            b.topology
                .nvlink
                .iter()
                .filter(|p| p.gpu == *gpu && !p.active)
                .take(3)
                .map(|p| p.source.clone())
                .collect(),
        );
    }
}

/// NVLinks down as the topology matrix shows them: on an NVSwitch fabric
/// (every GPU pair joined, 8 or more NVLinks a pair) a GPU whose pairs all
/// carry fewer links than the others' (`NV12` among `NV18`) has lost the
/// difference. Only where `nvidia-smi nvlink --status` did not list that
/// GPU's links (the listing is read by [`nvlinks`]).
pub(super) fn nvlinks_in_matrix(b: &Bundle, facts: &NodeFacts, out: &mut Vec<Diagnosed>) {
    let t = &b.topology;
    let links: Vec<_> = t.gpu_links().collect();
    let pairs = facts.gpus.len() * facts.gpus.len().saturating_sub(1) / 2;
    if pairs == 0
        || links.len() < pairs
        || links
            .iter()
            .any(|l| l.class != crate::evidence::topology::LinkClass::DirectLink)
    {
        return;
    }
    let Some(full) = links
        .iter()
        .filter_map(|l| l.nvlinks)
        .max()
        .filter(|n| *n >= 8)
    else {
        return;
    };
    for g in &facts.gpus {
        if facts.nvlinks.contains_key(g) {
            continue;
        }
        let mine: Vec<_> = links.iter().filter(|l| l.a == *g || l.b == *g).collect();
        let Some(most) = mine.iter().filter_map(|l| l.nvlinks).max() else {
            continue;
        };
        // The GPU's best pair is below the fabric's: its own links are down
        // (a peer's lost links lower only that peer's pairs).
        if most >= full {
            continue;
        }
        push(
            out,
            Why::NvlinksDown,
            Finding::NvlinksInactive {
                gpu: g.clone(),
                inactive: (full - most) as usize,
                total: Some(full as usize),
                designed: facts.sku(g).map(|s| s.nvlinks),
            },
            mine.iter()
                .flat_map(|l| l.sources.iter().take(1))
                .take(3)
                .cloned()
                .collect(),
        );
    }
}

pub(super) fn rdma_ports(b: &Bundle, facts: &NodeFacts, out: &mut Vec<Diagnosed>) {
    for d in &b.rdma {
        for p in &d.ports {
            if p.active == Some(false) || p.link_up == Some(false) {
                // Switched off, or the spare port of a card whose other port
                // is up: nothing to cable or fix.
                let disabled = p
                    .physical_state
                    .as_deref()
                    .is_some_and(|s| s.to_ascii_lowercase().contains("disabled"));
                let sibling_up = d
                    .ports
                    .iter()
                    .any(|o| o.port != p.port && o.active == Some(true));
                if disabled || sibling_up {
                    push(
                        out,
                        Why::RdmaPortUnused,
                        Finding::RdmaPortUnused {
                            device: d.name.clone(),
                            port: p.port,
                            link_layer: p.link_layer.clone(),
                            physical_state: p.physical_state.clone(),
                        },
                        vec![p.source.clone()],
                    );
                    continue;
                }
                push(
                    out,
                    Why::RdmaPortDown,
                    Finding::RdmaPortDown {
                        device: d.name.clone(),
                        port: p.port,
                        state: p.state.clone(),
                        physical_state: p.physical_state.clone(),
                    },
                    vec![p.source.clone()],
                );
            }
        }
    }
    // Below the best rate among active ports of the same link layer on
    // adapters of the same kind: a 100 Gb/s ConnectX-6 Dx beside 400 Gb/s
    // ConnectX-7s is built that way, not trained down. Where no adapter
    // model is stated, a full-width port a generation or two down may be
    // such an adapter too, and is left alone.
    for d in &b.rdma {
        for p in d.ports.iter().filter(|p| p.active == Some(true)) {
            let Some(rate) = crate::facts::port_data_rate(p) else {
                continue;
            };
            let best = facts
                .fastest_port_by_kind
                .get(&crate::facts::ports::port_kind(d, p))
                .copied()
                .unwrap_or(0.0);
            if rate < best && !crate::facts::ports::may_be_another_adapter(b, d, p) {
                push(
                    out,
                    Why::RdmaPortBelowRate,
                    Finding::RdmaPortBelowRate {
                        device: d.name.clone(),
                        port: p.port,
                        link_layer: p.link_layer.clone(),
                        rate_bytes_per_s: rate,
                        best_bytes_per_s: best,
                    },
                    vec![p.source.clone()],
                );
            }
        }
    }
}

/// Counters that grew: RDMA port counters read at a live collection's
/// start and end, and interface counters between two `ethtool -S`
/// readings.
pub(super) fn port_counters(b: &Bundle, out: &mut Vec<Diagnosed>) {
    let paused = pause_without_ecn(b, out);
    for d in &b.rdma {
        for p in &d.ports {
            let grown = p.counters.iter().map(|c| (c.name.as_str(), c.delta));
            // The port, and the rows of the counters that grew where a
            // transcript printed them.
            let sources = || {
                let mut v = vec![p.source.clone()];
                v.extend(
                    p.counters
                        .iter()
                        .filter(|c| c.delta > 0)
                        .filter(|c| {
                            let n = c.name.to_ascii_lowercase();
                            is_congestion_counter(&n) || is_error_counter(&n)
                        })
                        .filter_map(|c| c.source.clone())
                        .take(8),
                );
                v
            };
            grew(&d.name, Some(p.port), grown, sources, out);
        }
    }
    // Counter dumps read twice (in one paste, or in two files): their
    // growth, the two readings' first lines and the rows that grew.
    for g in crate::evidence::counters::growth(&b.counters) {
        let grown = g.counters.iter().map(|c| (c.name.as_str(), c.delta));
        let sources = || {
            let mut v = g.readings.to_vec();
            v.extend(
                g.counters
                    .iter()
                    .filter(|c| c.delta > 0)
                    .filter(|c| {
                        let n = c.name.to_ascii_lowercase();
                        is_congestion_counter(&n) || is_error_counter(&n)
                    })
                    .filter_map(|c| c.source.clone())
                    .take(8),
            );
            v
        };
        grew(&g.who, g.port, grown, sources, out);
    }
    for i in &b.interfaces {
        let Some(name) = &i.interface else { continue };
        let grown = i
            .counters
            .iter()
            .filter_map(|c| Some((c.name.as_str(), c.delta?)));
        // The rows of the counters that grew, in the last reading.
        let sources = || {
            let mut v = vec![i.source.clone()];
            v.extend(
                i.counters
                    .iter()
                    .filter(|c| c.delta.is_some_and(|d| d > 0))
                    .filter(|c| {
                        let n = c.name.to_ascii_lowercase();
                        is_congestion_counter(&n) || is_error_counter(&n)
                    })
                    .map(|c| c.source.clone())
                    .take(8),
            );
            v
        };
        // Said once, by the pause rule, where it fired for this interface.
        if paused.as_deref() == Some(name.as_str()) {
            let errors_only = grown.filter(|c| !is_congestion_counter(&c.0.to_ascii_lowercase()));
            grew(name, None, errors_only, sources, out);
            continue;
        }
        grew(name, None, grown, sources, out);
    }
}

/// Pause frames received (`rx_*pause*`: the switch held this port's
/// traffic) that grew between two readings of an interface, while the
/// node's RoCE congestion counters, read twice too (`rp_cnp_handled`,
/// `np_cnp_sent`, `np_ecn_marked_roce_packets` in the RDMA device's
/// `hw_counters`), stayed flat: PFC is doing the work DCQCN should (seed
/// section 6.1). The netdev's own `rx_ecn_mark` does not count: mlx5
/// counts it on the kernel's receive path, which RoCE traffic never
/// takes. Pause sent (`tx_*pause*`: this host could not drain) is another
/// problem, and pause storms are counted as signals, not frames. Returns
/// the interface named, when the rule fired.
fn pause_without_ecn(b: &Bundle, out: &mut Vec<Diagnosed>) -> Option<String> {
    let is_rx_pause = |n: &str| {
        let n = n.to_ascii_lowercase();
        n.starts_with("rx")
            && n.contains("pause")
            && !["duration", "transition", "storm"]
                .iter()
                .any(|w| n.contains(w))
    };
    let is_roce_congestion = |n: &str| {
        let n = n.to_ascii_lowercase();
        n.contains("cnp") || n.contains("ecn_marked_roce")
    };
    // The RoCE congestion counters read twice, on any RDMA port of the
    // node (a live collection reads every port's hw_counters at its start
    // and end; a transcript's port counters do not say whether a flat one
    // was read twice), and whether any grew.
    let twice = b.host.origin == crate::bundle::Origin::Live;
    // Counter dumps read twice say so themselves.
    let dumped = crate::evidence::counters::growth(&b.counters);
    let roce: Vec<(&str, u64)> = b
        .rdma
        .iter()
        .flat_map(|d| &d.ports)
        .flat_map(|p| &p.counters)
        .filter(|c| twice && is_roce_congestion(&c.name))
        .map(|c| (c.name.as_str(), c.delta))
        .chain(
            dumped
                .iter()
                .flat_map(|g| &g.counters)
                .filter(|c| is_roce_congestion(&c.name))
                .map(|c| (c.name.as_str(), c.delta)),
        )
        .chain(
            b.interfaces
                .iter()
                .filter(|i| i.readings >= 2)
                .flat_map(|i| &i.counters)
                .filter(|c| is_roce_congestion(&c.name))
                .filter_map(|c| Some((c.name.as_str(), c.delta?))),
        )
        .collect();
    if roce.is_empty() || roce.iter().any(|c| c.1 > 0) {
        return None;
    }
    let (i, pauses) = b
        .interfaces
        .iter()
        .filter(|i| i.readings >= 2 && i.interface.is_some())
        .map(|i| {
            let mut grown: Vec<(String, u64)> = i
                .counters
                .iter()
                .filter(|c| is_rx_pause(&c.name))
                .filter_map(|c| Some((c.name.clone(), c.delta.filter(|d| *d > 0)?)))
                .collect();
            grown.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            (i, grown)
        })
        .filter(|(_, g)| !g.is_empty())
        .max_by_key(|(_, g)| g[0].1)?;
    let mut flat: Vec<String> = roce.iter().map(|c| c.0.to_string()).collect();
    flat.sort();
    flat.dedup();
    let device = i.interface.clone().unwrap_or_default();
    let mut evidence = vec![i.source.clone()];
    evidence.extend(
        i.counters
            .iter()
            .filter(|c| pauses.iter().any(|p| p.0 == c.name))
            .map(|c| c.source.clone())
            .take(4),
    );
    push(
        out,
        Why::PauseWithoutEcn,
        Finding::PauseWithoutEcn {
            device: device.clone(),
            port: None,
            pauses,
            flat,
        },
        evidence,
    );
    Some(device)
}

/// One warning for the error counters that grew and one note for the
/// congestion signals, each naming its counters, largest first.
fn grew<'a>(
    device: &str,
    port: Option<u32>,
    counters: impl Iterator<Item = (&'a str, u64)> + Clone,
    sources: impl Fn() -> Vec<crate::evidence::Source>,
    out: &mut Vec<Diagnosed>,
) {
    let pick = |congestion: bool| {
        let mut v: Vec<(String, u64)> = counters
            .clone()
            .filter(|c| c.1 > 0)
            .filter(|c| {
                let n = c.0.to_ascii_lowercase();
                if congestion {
                    is_congestion_counter(&n)
                } else {
                    !is_congestion_counter(&n) && is_error_counter(&n)
                }
            })
            .map(|c| (c.0.to_string(), c.1))
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    };
    let errors = pick(false);
    if !errors.is_empty() {
        push(
            out,
            Why::PortErrorsGrew,
            Finding::PortErrorsGrew {
                device: device.to_string(),
                port,
                counters: errors,
            },
            sources(),
        );
    }
    let signals = pick(true);
    if signals.is_empty() {
        return;
    }
    push(
        out,
        Why::CongestionSignals,
        Finding::CongestionSignals {
            device: device.to_string(),
            port,
            counters: signals,
        },
        sources(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{Host, Origin};
    use crate::evidence::Source;

    #[test]
    fn a_device_read_from_sysfs_and_from_lspci_is_judged_once() {
        // A live collection: sysfs names the NIC `0000:17:00.0` with its
        // role, `lspci -vvv` (no -D) names it `17:00.0`; both show x8 of
        // x16. One finding, from the sysfs entry.
        let link = |addr: &str, role: Option<&str>, line: usize| PcieLink {
            address: addr.into(),
            current_width_lanes: Some(8),
            max_width_lanes: Some(16),
            role: role.map(String::from),
            source: Source::line(line),
            ..Default::default()
        };
        let mut b = Bundle::new(Host {
            name: "n".into(),
            origin: Origin::Live,
        });
        b.pcie = vec![
            link("17:00.0", None, 40),
            link("0000:17:00.0", Some("nic"), 3),
        ];
        let mut out = Vec::new();
        pcie_links(&b, &mut out);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0].evidence[0].line, 3);
        // Two devices stay two.
        b.pcie.push(link("18:00.0", None, 50));
        let mut out = Vec::new();
        pcie_links(&b, &mut out);
        assert_eq!(out.len(), 2, "{out:?}");
    }
}
