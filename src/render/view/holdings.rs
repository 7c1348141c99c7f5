//! What the bundle holds, as tables: each device's bus id and NUMA node,
//! the RDMA adapters' ports (state, rate, MTU, link layer, counters that
//! moved), the PCIe links (capable against negotiated), the peer-to-peer
//! support matrix (`nvidia-smi topo -p2p`), and the AMD weight and hop
//! tables. A table with no rows is not built; every table names its source.

use std::collections::BTreeMap;

use super::{Link, Linker};
use crate::bundle::Bundle;
use crate::evidence::Source;
use crate::evidence::measurement::Measurement;
use crate::render::format::{gbs, secs, size_short};

/// One table of facts, display-ready.
pub struct TableView {
    pub title: String,
    pub note: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub sources: Vec<Link>,
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map(T::to_string).unwrap_or_default()
}

/// The distinct transcripts of some sources, as links to their first line.
fn sources<'a>(linker: &Linker<'_>, s: impl Iterator<Item = &'a Source>) -> Vec<Link> {
    let mut first: BTreeMap<String, &Source> = BTreeMap::new();
    for x in s {
        first.entry(x.file.to_string()).or_insert(x);
    }
    first
        .values()
        .map(|s| linker.link(s))
        .filter(|l| !l.href.is_empty())
        .collect()
}

/// Every table the bundle has rows for, in page order.
pub(super) fn tables(b: &Bundle, linker: &Linker<'_>) -> Vec<TableView> {
    [
        key_figures(b, linker),
        devices(b, linker),
        rdma_ports(b, linker),
        interfaces(b, linker),
        modules(b, linker),
        pcie(b, linker),
        p2p(b, linker),
        amd_links(b, linker),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn devices(b: &Bundle, linker: &Linker<'_>) -> Option<TableView> {
    let t = &b.topology;
    let any = t.devices.iter().any(|d| {
        d.pci_bus_id.is_some()
            || d.numa_node.is_some()
            || d.name.is_some()
            || d.cpu_affinity.is_some()
    });
    if !any {
        return None;
    }
    let rows = t
        .devices
        .iter()
        .map(|d| {
            let cpus = d.cpu_affinity.as_ref().map(|r| {
                r.iter()
                    .map(|c| {
                        if c.first == c.last {
                            c.first.to_string()
                        } else {
                            format!("{}-{}", c.first, c.last)
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            });
            vec![
                d.id.clone(),
                format!("{:?}", d.kind).to_lowercase(),
                opt(&d.name),
                opt(&d.pci_bus_id),
                opt(&d.numa_node),
                opt(&cpus),
            ]
        })
        .collect();
    Some(TableView {
        title: "Devices".into(),
        note: "Each device as the topology transcript lists it: name, PCI bus id, the NUMA node \
               and CPUs closest to it (blank where the transcript does not say)."
            .into(),
        columns: [
            "device",
            "kind",
            "name",
            "PCI bus id",
            "NUMA node",
            "CPU affinity",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        sources: sources(linker, t.devices.iter().map(|d| &d.source)),
    })
}

/// `ethtool -S` counters that say something: errors and congestion
/// signals, their growth where read twice, else their totals.
fn interfaces(b: &Bundle, linker: &Linker<'_>) -> Option<TableView> {
    use crate::evidence::ethtool::is_congestion_counter;
    if b.interfaces.is_empty() {
        return None;
    }
    let rows = b
        .interfaces
        .iter()
        .map(|i| {
            let pick = |congestion: bool| {
                let v: Vec<String> = i
                    .counters
                    .iter()
                    .filter(|c| {
                        let n = c.name.to_ascii_lowercase();
                        if congestion {
                            is_congestion_counter(&n)
                        } else {
                            !is_congestion_counter(&n) && crate::diff::is_error_counter(&n)
                        }
                    })
                    .filter_map(|c| match c.delta {
                        Some(d) if d > 0 => Some(format!("{} +{d}", c.name)),
                        Some(_) => None,
                        None if i.readings < 2 && c.value > 0 => {
                            Some(format!("{} {}", c.name, c.value))
                        }
                        None => None,
                    })
                    .collect();
                if v.is_empty() {
                    "none".to_string()
                } else {
                    v.join(", ")
                }
            };
            let readings = if i.readings < 2 {
                "1 (totals since the driver loaded)".to_string()
            } else {
                format!("{} (growth first to last)", i.readings)
            };
            vec![
                i.interface.clone().unwrap_or_else(|| "(not named)".into()),
                readings,
                i.counters.len().to_string(),
                pick(false),
                pick(true),
            ]
        })
        .collect();
    Some(TableView {
        title: "Network interface counters (ethtool -S)".into(),
        note: "Counters are cumulative since the driver loaded: from one reading, the non-zero \
               totals; from two or more readings of one interface, how much each grew between \
               the first and the last (a counter that went backwards is left out). Errors: \
               discards, drops, symbol, CRC and other errors, link downs; congestion: pause \
               frames, ECN marks, CNPs."
            .into(),
        columns: [
            "interface",
            "readings",
            "counters read",
            "errors",
            "congestion signals",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        sources: sources(linker, b.interfaces.iter().map(|i| &i.source)),
    })
}

/// `lsmod` listings: what each command printed, and what it says about
/// the GPUDirect RDMA peer-memory modules.
fn modules(b: &Bundle, linker: &Linker<'_>) -> Option<TableView> {
    use crate::evidence::lsmod::Said;
    if b.modules.is_empty() {
        return None;
    }
    let said = |m: &str| match crate::evidence::lsmod::state(&b.modules, m) {
        Some(Said::Loaded(s)) => format!("loaded (line {})", s.line),
        Some(Said::Absent(s)) => format!("not loaded (line {})", s.line),
        None => "not said".to_string(),
    };
    let peer = ["nvidia_peermem", "nv_peer_mem"]
        .map(|m| format!("{m}: {}", said(m)))
        .join("; ");
    let rows = b
        .modules
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let reach = match l.reach() {
                crate::evidence::lsmod::filter::Reach::All => "every loaded module".to_string(),
                crate::evidence::lsmod::filter::Reach::Filtered(_) => {
                    "the rows its grep matched".to_string()
                }
                crate::evidence::lsmod::filter::Reach::Unknown(why) => format!("not known: {why}"),
            };
            let reach = if l.cut {
                format!("{reach}; a line not read as a row (cut or wrapped): none ruled out")
            } else {
                reach
            };
            vec![
                l.command
                    .clone()
                    .unwrap_or_else(|| "(not in the paste)".into()),
                format!("{} (line {})", l.rows.len(), l.source.line),
                reach,
                // The verdict is the node's, from every listing: said once.
                if i == 0 { peer.clone() } else { String::new() },
            ]
        })
        .collect();
    Some(TableView {
        title: "Kernel modules (lsmod)".into(),
        note: "A row, or a name in another row's Used by column, says a module is loaded. \
               That one is not loaded is said only where the command would have printed its \
               row (a whole lsmod, or a grep whose pattern matches its name), or where a \
               module it must hold (nvidia, ib_core) is listed and its holders leave it out."
            .into(),
        columns: ["command", "rows", "printed", "peer-memory modules"]
            .map(String::from)
            .to_vec(),
        rows,
        sources: sources(linker, b.modules.iter().map(|m| &m.source)),
    })
}

fn rdma_ports(b: &Bundle, linker: &Linker<'_>) -> Option<TableView> {
    let mut rows = Vec::new();
    for d in &b.rdma {
        for p in &d.ports {
            // What the tool printed (bits, its unit added once), and the
            // data the link carries after its line encoding where known.
            let printed = p.rate_as_printed.as_ref().map(|r| {
                if r.contains("Gb") {
                    r.clone()
                } else {
                    format!("{r} Gb/s")
                }
            });
            let data = crate::facts::port_data_rate(p);
            let rate = match (printed, data, p.rate_bytes_per_s) {
                (Some(r), Some(d), _) => format!("{r}; data {}", gbs(d)),
                (Some(r), None, Some(v)) => format!("{r} ({})", gbs(v)),
                (Some(r), None, None) => format!("{r} (as printed)"),
                (None, Some(d), _) => format!("data {}", gbs(d)),
                (None, None, Some(v)) => gbs(v),
                (None, None, None) => String::new(),
            };
            let mtu = match (p.active_mtu_bytes, p.max_mtu_bytes) {
                (Some(a), Some(m)) => format!("{a} of {m}"),
                (Some(a), None) => a.to_string(),
                (None, Some(m)) => format!("max {m}"),
                (None, None) => String::new(),
            };
            let moved: Vec<String> = p
                .counters
                .iter()
                .filter(|c| c.delta > 0)
                .map(|c| format!("{} +{}", c.name, c.delta))
                .collect();
            let counters = if p.counters.is_empty() {
                String::new()
            } else if moved.is_empty() {
                format!("{} read, none moved", p.counters.len())
            } else {
                moved.join(", ")
            };
            rows.push(vec![
                d.name.clone(),
                opt(&d.ca_type),
                p.port.to_string(),
                opt(&p.state),
                opt(&p.physical_state),
                rate,
                opt(&p.width),
                mtu,
                opt(&p.link_layer),
                counters,
            ]);
        }
        if d.ports.is_empty() {
            let mut row = vec![d.name.clone(), opt(&d.ca_type)];
            row.push("no port listed".into());
            row.extend(std::iter::repeat_n(String::new(), 7));
            rows.push(row);
        }
    }
    if rows.is_empty() {
        return None;
    }
    Some(TableView {
        title: "RDMA adapters and ports".into(),
        note: "Rates as the tool printed them (bits), then the data the link carries in GB/s \
               (1e9 bytes/s) after its line encoding (8b/10b up to QDR, 64b/66b from FDR) where \
               the width and speed are known; MTU in \
               bytes, active of maximum; counters: those that moved between two reads, with \
               the increase."
            .into(),
        columns: [
            "adapter",
            "model",
            "port",
            "state",
            "physical",
            "rate",
            "width",
            "MTU",
            "link layer",
            "counters",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        sources: sources(linker, b.rdma.iter().map(|d| &d.source)),
    })
}

fn pcie(b: &Bundle, linker: &Linker<'_>) -> Option<TableView> {
    if b.pcie.is_empty() {
        return None;
    }
    let pair = |cur: String, max: String| match (cur.is_empty(), max.is_empty()) {
        (true, true) => String::new(),
        _ => format!("{} of {}", or_q(&cur), or_q(&max)),
    };
    let rows = b
        .pcie
        .iter()
        .map(|p| {
            let speed = pair(
                opt(&p.current_speed_gt_per_s.map(|s| format!("{s} GT/s"))),
                opt(&p.max_speed_gt_per_s.map(|s| format!("{s} GT/s"))),
            );
            let generation = pair(
                opt(&p.current_generation.map(|g| format!("Gen{g}"))),
                opt(&p.max_generation.map(|g| format!("Gen{g}"))),
            );
            let width = pair(
                opt(&p.current_width_lanes.map(|w| format!("x{w}"))),
                opt(&p.max_width_lanes.map(|w| format!("x{w}"))),
            );
            let mut flags = Vec::new();
            if p.speed_downgraded {
                flags.push("speed downgraded");
            }
            if p.width_downgraded {
                flags.push("width downgraded");
            }
            if p.link_hidden {
                flags.push("link lines not readable");
            }
            vec![
                p.address.clone(),
                opt(&p.name),
                opt(&p.role),
                speed,
                generation,
                width,
                opt(&p.host_max_generation.map(|g| format!("Gen{g}"))),
                p.upstream.join(" > "),
                flags.join(", "),
            ]
        })
        .collect();
    Some(TableView {
        title: "PCIe links".into(),
        note: "Negotiated of capable, per device (and per bridge on its way up, where sysfs \
               was read)."
            .into(),
        columns: [
            "address",
            "device",
            "role",
            "speed",
            "generation",
            "width",
            "host max",
            "upstream",
            "flags",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        sources: sources(linker, b.pcie.iter().map(|p| &p.source)),
    })
}

fn or_q(s: &str) -> &str {
    if s.is_empty() { "?" } else { s }
}

/// A square table of GPU pairs from (src, dst, text) cells.
fn square(cells: &[(String, String, String)]) -> (Vec<String>, Vec<Vec<String>>) {
    let mut ids: Vec<String> = Vec::new();
    for (a, b, _) in cells {
        for x in [a, b] {
            if !ids.contains(x) {
                ids.push(x.clone());
            }
        }
    }
    let at: BTreeMap<(&str, &str), &str> = cells
        .iter()
        .map(|(a, b, t)| ((a.as_str(), b.as_str()), t.as_str()))
        .collect();
    let rows = ids
        .iter()
        .map(|r| {
            std::iter::once(r.clone())
                .chain(ids.iter().map(|c| {
                    at.get(&(r.as_str(), c.as_str()))
                        .or_else(|| at.get(&(c.as_str(), r.as_str())))
                        .map(|t| t.to_string())
                        .unwrap_or_else(|| if r == c { "X".into() } else { String::new() })
                }))
                .collect()
        })
        .collect();
    let mut columns = vec!["src \\ dst".to_string()];
    columns.extend(ids);
    (columns, rows)
}

fn p2p(b: &Bundle, linker: &Linker<'_>) -> Option<TableView> {
    let t = &b.topology;
    if t.p2p.is_empty() {
        return None;
    }
    let cells: Vec<(String, String, String)> = t
        .p2p
        .iter()
        .map(|c| (c.src.clone(), c.dst.clone(), c.status.clone()))
        .collect();
    let (columns, rows) = square(&cells);
    Some(TableView {
        title: "Peer-to-peer support".into(),
        note: "The status each pair reports, as printed: nvidia-smi topo -p2p's OK, NS not \
               supported, CNS chipset not supported, TNS topology not supported...; amd-smi's \
               ENABLED or DISABLED; rocm-smi's True or False; rocm_bandwidth_test's access matrix, \
               1 or 0; the peer copy lab's direct peer path or NO direct path; a live \
               collection's canAccessPeer = 1 or 0. Asked one direction at a time: a pair \
               with either direction allowed has a peer path."
            .into(),
        columns,
        rows,
        sources: sources(linker, t.p2p.iter().map(|c| &c.source)),
    })
}

fn amd_links(b: &Bundle, linker: &Linker<'_>) -> Option<TableView> {
    let t = &b.topology;
    let links: Vec<_> = t
        .links
        .iter()
        .filter(|l| l.weight.is_some() || l.xgmi_hops.is_some() || l.pcie_hops.is_some())
        .collect();
    if links.is_empty() {
        return None;
    }
    let cells: Vec<(String, String, String)> = links
        .iter()
        .map(|l| {
            let mut parts = Vec::new();
            if let Some(w) = l.weight {
                parts.push(format!("w{w}"));
            }
            if let Some(h) = l.xgmi_hops {
                parts.push(format!("{h} xgmi hop(s)"));
            }
            if let Some(h) = l.pcie_hops {
                parts.push(format!("{h} pcie hop(s)"));
            }
            (l.a.clone(), l.b.clone(), parts.join(", "))
        })
        .collect();
    let (columns, rows) = square(&cells);
    Some(TableView {
        title: "Link weights and hops".into(),
        note: "The driver's weight of each GPU pair (w, lower is closer) and its hop count over \
               xGMI or PCIe, as rocm-smi / amd-smi print them."
            .into(),
        columns,
        rows,
        sources: sources(linker, links.iter().flat_map(|l| l.sources.iter())),
    })
}

/// The key figures, as the markdown summary has them: per tool, kind,
/// direction, statistic and buffers, the best and the worst figure (bandwidth at
/// the largest message, latency at the smallest), each with its pair, size
/// and line.
fn key_figures(b: &Bundle, linker: &Linker<'_>) -> Option<TableView> {
    let mut rows = Vec::new();
    let mut used = Vec::new();
    for k in crate::render::key_figures::key_figures(b) {
        let latency = k.latency;
        let show = |m: &Measurement| {
            let v = if latency {
                secs(m.latency_s.unwrap_or(f64::NAN))
            } else {
                gbs(m.bandwidth_bytes_per_s.unwrap_or(f64::NAN))
            };
            let pair = match (&m.src, &m.dst) {
                (Some(s), Some(d)) => format!(" {s}\u{2192}{d}"),
                (Some(s), None) => format!(" {s}"),
                _ => String::new(),
            };
            let size = m
                .size_bytes
                .map(|s| format!(" at {}", size_short(s as f64)))
                .unwrap_or_default();
            let line = m.source.file.rsplit('/').next().unwrap_or("").to_string();
            format!("{v}{pair}{size} ({line}:{})", m.source.line)
        };
        let (tool, kind, stat) = (&k.tool, k.kind.as_str(), &k.statistic);
        let (dir, p2p, buf) = (k.direction_words(), k.p2p_words(), k.buffers_words());
        let (best, worst) = (k.best, k.worst);
        let what = if latency { "latency" } else { "bandwidth" };
        rows.push(vec![
            format!("{tool} {kind} {what}, {stat}, {dir}{p2p}{buf}"),
            show(best),
            if k.count > 1 {
                show(worst)
            } else {
                "(one figure)".into()
            },
            k.count.to_string(),
        ]);
        used.push(&best.source);
    }
    if rows.is_empty() {
        return None;
    }
    Some(TableView {
        title: "Key figures".into(),
        note: "Measured or ingested, as the markdown summary gives them: per tool, kind, \
               direction, statistic and buffers (host and GPU never in one figure), the best and worst figure (bandwidth at the largest \
               message, latency at the smallest), with pair, size and transcript line. GB/s = \
               1e9 bytes/s."
            .into(),
        columns: ["figure", "best", "worst", "figures"]
            .map(String::from)
            .to_vec(),
        rows,
        sources: sources(linker, used.into_iter()),
    })
}
