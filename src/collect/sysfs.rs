//! Facts from sysfs: PCIe devices and their bridges, RDMA ports and
//! counters, NUMA nodes, the kernel and drivers. Every path is read under a
//! root (`/` normally, `--sysfs-root` for a saved tree), and a file that is
//! missing is a fact that is absent, not an error: virtual machines and
//! containers hide many of them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::evidence::Source;
use crate::evidence::pcie::PcieLink;
use crate::evidence::rdma::{Counter, RdmaDevice, RdmaPort};
use crate::evidence::topology::{
    CpuRange, Device, DeviceKind, Link, LinkClass, Topology, parse_cpu_list,
};

/// Where sysfs and procfs are read from.
#[derive(Debug, Clone)]
pub struct Root(pub PathBuf);

impl Root {
    pub fn path(&self, p: &str) -> PathBuf {
        self.0.join(p.trim_start_matches('/'))
    }

    /// A file's first line, trimmed; `None` when absent or unreadable.
    pub fn read(&self, p: &Path) -> Option<String> {
        // Never blocks on a FIFO planted in a saved tree; a sysfs value is small.
        let bytes = crate::fs::read_capped(p, 1 << 20).ok()?;
        let s = String::from_utf8(bytes).ok()?;
        Some(s.lines().next().unwrap_or("").trim().to_string())
    }

    fn source(&self, p: &Path) -> Source {
        let shown = p
            .strip_prefix(&self.0)
            .map(|r| format!("/{}", r.display()))
            .unwrap_or_else(|_| p.display().to_string());
        Source {
            file: shown.into(),
            line: 1,
        }
    }
}

/// One PCI function found in sysfs.
#[derive(Debug, Clone)]
pub struct PciFunction {
    pub address: String,
    pub class: u32,
    pub link: PcieLink,
    /// Bridges from the device up to the root port, nearest first.
    pub chain: Vec<String>,
    pub root_complex: Option<String>,
    pub numa_node: Option<u32>,
    /// Network interfaces or RDMA devices named under the function.
    pub names: Vec<String>,
}

impl PciFunction {
    pub fn is_gpu(&self) -> bool {
        // 0x03xxxx: display controllers (VGA 0x0300, 3D 0x0302, other 0x0380),
        // except a BMC's console (ASPEED, Matrox).
        self.class >> 16 == 0x03 && !is_bmc_vendor(self.link.vendor_id.as_deref())
    }

    pub fn is_nic(&self) -> bool {
        // 0x0200 Ethernet, 0x0207 InfiniBand.
        matches!(self.class >> 8, 0x0200 | 0x0207)
    }
}

/// A BMC console's vendor (`0x1a03` ASPEED, `0x102b` Matrox), as sysfs
/// prints it.
fn is_bmc_vendor(vendor: Option<&str>) -> bool {
    vendor.is_some_and(|v| {
        crate::evidence::pcie::BMC_DISPLAY_VENDORS.contains(&v.trim().trim_start_matches("0x"))
    })
}

/// `8.0 GT/s PCIe` -> 8.0; `Unknown` -> None.
fn speed(s: &str) -> Option<f64> {
    s.split_whitespace().next()?.parse().ok()
}

fn is_pci_address(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 12 && b[4] == b':' && b[7] == b':' && b[10] == b'.'
}

/// Reads every PCI function with its link state and bridge chain.
pub fn pci_functions(root: &Root) -> Vec<PciFunction> {
    let dir = root.path("/sys/bus/pci/devices");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut out = Vec::new();
    for addr in names {
        let link_path = dir.join(&addr);
        let real = std::fs::canonicalize(&link_path).unwrap_or_else(|_| link_path.clone());
        // `/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0`
        let parts: Vec<String> = real
            .components()
            .filter_map(|c| c.as_os_str().to_str().map(str::to_string))
            .collect();
        let root_complex = parts.iter().find(|p| p.starts_with("pci")).cloned();
        let mut chain: Vec<String> = parts
            .iter()
            .filter(|p| is_pci_address(p) && **p != addr)
            .cloned()
            .collect();
        chain.reverse();
        let get = |f: &str| root.read(&real.join(f));
        let class = get("class")
            .and_then(|c| u32::from_str_radix(c.trim_start_matches("0x"), 16).ok())
            .unwrap_or(0);
        // -1 means none; a number past u32 is no node (it wrapped to a
        // real one: 4294967296 read as NUMA 0).
        let numa_node = get("numa_node").and_then(|n| n.parse::<u32>().ok());
        let mut device_names = Vec::new();
        // RDMA names first (what nvidia-smi's NIC legend shows), then
        // network interfaces, also those under a virtio child.
        let mut dirs = vec![real.join("infiniband"), real.join("net")];
        if let Ok(rd) = std::fs::read_dir(&real) {
            let mut virtio: Vec<PathBuf> = rd
                .filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().starts_with("virtio"))
                .map(|e| e.path().join("net"))
                .collect();
            virtio.sort();
            dirs.extend(virtio);
        }
        for sub in dirs {
            if let Ok(rd) = std::fs::read_dir(sub) {
                let mut v: Vec<String> = rd
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect();
                v.sort();
                device_names.extend(v);
            }
        }
        let vendor = get("vendor");
        let bmc = is_bmc_vendor(vendor.as_deref());
        let role = if class >> 16 == 0x03 && !bmc {
            Some("gpu")
        } else if matches!(class >> 8, 0x0200 | 0x0207) {
            Some("nic")
        } else if class >> 8 == 0x0604 {
            Some("bridge")
        } else {
            None
        };
        let link = PcieLink {
            address: addr.clone(),
            name: device_names.first().cloned(),
            numa_node,
            max_speed_gt_per_s: get("max_link_speed").as_deref().and_then(speed),
            current_speed_gt_per_s: get("current_link_speed").as_deref().and_then(speed),
            max_width_lanes: get("max_link_width").and_then(|w| w.parse().ok()),
            current_width_lanes: get("current_link_width").and_then(|w| w.parse().ok()),
            role: role.map(str::to_string),
            vendor_id: vendor,
            device_id: get("device"),
            upstream: chain.clone(),
            root_complex: root_complex.clone(),
            local_cpus: get("local_cpulist"),
            source: root.source(&real.join("class")),
            ..PcieLink::default()
        };
        out.push(PciFunction {
            address: addr,
            class,
            link,
            chain,
            root_complex,
            numa_node,
            names: device_names,
        });
    }
    out
}

/// The class of a pair from the PCIe tree alone: a shared bridge below the
/// root port is `pcie-switch`; the same root complex or NUMA node is
/// `pcie-host`; anything else `cross-socket`.
pub fn tree_class(a: &PciFunction, b: &PciFunction) -> LinkClass {
    // The last element of a chain is the root port: a common bridge other
    // than the root port means a switch below it.
    let shared_below_root = a
        .chain
        .iter()
        .rev()
        .skip(1)
        .any(|x| b.chain.iter().rev().skip(1).any(|y| y == x));
    if shared_below_root {
        return LinkClass::PcieSwitch;
    }
    let same_rc = a.root_complex.is_some() && a.root_complex == b.root_complex;
    let same_numa = a.numa_node.is_some() && a.numa_node == b.numa_node;
    if same_rc || same_numa {
        LinkClass::PcieHost
    } else if a.numa_node.is_none() || b.numa_node.is_none() {
        // Different root complexes but no NUMA facts: one socket with
        // several host bridges is as likely as two sockets.
        LinkClass::Unknown
    } else {
        LinkClass::CrossSocket
    }
}

/// GPUs and NICs numbered in PCI address order (the order nvidia-smi and
/// rocm-smi use by default), with the pair classes from the tree.
pub fn tree_topology(funcs: &[PciFunction]) -> Topology {
    let mut t = Topology::default();
    let gpus: Vec<&PciFunction> = funcs.iter().filter(|f| f.is_gpu()).collect();
    let nics: Vec<&PciFunction> = funcs.iter().filter(|f| f.is_nic()).collect();
    let mut ids: Vec<(String, &PciFunction)> = Vec::new();
    for (i, f) in gpus.iter().enumerate() {
        ids.push((format!("GPU{i}"), f));
    }
    for (i, f) in nics.iter().enumerate() {
        ids.push((format!("NIC{i}"), f));
    }
    for (id, f) in &ids {
        let kind = if f.is_gpu() {
            DeviceKind::Gpu
        } else {
            DeviceKind::Nic
        };
        let mut d = Device::new(id, kind, f.link.source.clone());
        d.pci_bus_id = Some(f.address.clone());
        d.name = Some(
            f.names
                .first()
                .cloned()
                .unwrap_or_else(|| f.address.clone()),
        );
        d.numa_node = f.numa_node;
        d.cpu_affinity = f
            .link
            .local_cpus
            .as_deref()
            .and_then(parse_cpu_list)
            .map(|v: Vec<CpuRange>| v);
        t.devices.push(d);
    }
    for (i, (ia, fa)) in ids.iter().enumerate() {
        for (ib, fb) in &ids[i + 1..] {
            // GPU-GPU and GPU-NIC pairs, as the vendor matrices show them.
            if !fa.is_gpu() && !fb.is_gpu() {
                continue;
            }
            let mut l = Link::new(ia, ib, tree_class(fa, fb), fa.link.source.clone());
            l.code = Some("sysfs".into());
            t.links.push(l);
        }
    }
    t.sort();
    t
}

/// RDMA devices and ports from `/sys/class/infiniband`.
pub fn rdma_devices(root: &Root) -> Vec<RdmaDevice> {
    let dir = root.path("/sys/class/infiniband");
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let d = dir.join(&name);
        let mut dev = RdmaDevice {
            name: name.clone(),
            ca_type: root.read(&d.join("hca_type")),
            firmware: root.read(&d.join("fw_ver")),
            node_guid: root.read(&d.join("node_guid")),
            transport: None,
            board_id: root.read(&d.join("board_id")),
            ports: Vec::new(),
            source: root.source(&d.join("node_guid")),
        };
        let mut ports: Vec<u32> = std::fs::read_dir(d.join("ports"))
            .map(|rd| {
                rd.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        ports.sort_unstable();
        for n in ports {
            let p = d.join("ports").join(n.to_string());
            let mut port = RdmaPort {
                port: n,
                source: root.source(&p.join("state")),
                ..RdmaPort::default()
            };
            if let Some(s) = root.read(&p.join("state")) {
                port.active = Some(s.to_ascii_uppercase().contains("ACTIVE"));
                port.state = Some(s);
            }
            if let Some(s) = root.read(&p.join("phys_state")) {
                port.link_up = Some(s.to_ascii_lowercase().contains("linkup"));
                port.physical_state = Some(s);
            }
            if let Some(r) = root.read(&p.join("rate")) {
                // `200 Gb/sec (4X HDR)`: bits, converted once.
                port.rate_bytes_per_s = r
                    .split_whitespace()
                    .next()
                    .and_then(|v| v.parse::<f64>().ok())
                    .map(|g| g * 1.25e8);
                if let Some((_, inner)) = r.split_once('(') {
                    let mut it = inner.trim_end_matches(')').split_whitespace();
                    port.width = it.next().map(str::to_string);
                    port.speed = it.next().map(str::to_string);
                }
                port.rate_as_printed = Some(r);
            }
            port.link_layer = root.read(&p.join("link_layer"));
            port.lid = root.read(&p.join("lid"));
            port.sm_lid = root.read(&p.join("sm_lid"));
            dev.ports.push(port);
        }
        out.push(dev);
    }
    out
}

/// The network interfaces of the RDMA adapters
/// (`/sys/class/infiniband/<dev>/device/net/<if>`), sorted, each once: the
/// interfaces whose `ethtool -S` counters a live collection reads.
pub fn rdma_interfaces(root: &Root) -> Vec<String> {
    let mut out = std::collections::BTreeSet::new();
    let Ok(devs) = std::fs::read_dir(root.path("/sys/class/infiniband")) else {
        return Vec::new();
    };
    for d in devs.filter_map(|e| e.ok()) {
        let Ok(nets) = std::fs::read_dir(d.path().join("device/net")) else {
            continue;
        };
        out.extend(
            nets.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| {
                    !n.is_empty()
                        && n.bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b))
                }),
        );
    }
    out.into_iter().collect()
}

/// Every counter of every port: (device, port, group, name) -> value.
pub type CounterSnapshot = BTreeMap<(String, u32, String, String), u64>;

pub fn rdma_counters(root: &Root) -> CounterSnapshot {
    let mut out = BTreeMap::new();
    let dir = root.path("/sys/class/infiniband");
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return out;
    };
    for dev in rd.filter_map(|e| e.ok()) {
        let name = dev.file_name().to_string_lossy().into_owned();
        let Ok(ports) = std::fs::read_dir(dev.path().join("ports")) else {
            continue;
        };
        for p in ports.filter_map(|e| e.ok()) {
            let Ok(n) = p.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            for group in ["counters", "hw_counters"] {
                let Ok(cs) = std::fs::read_dir(p.path().join(group)) else {
                    continue;
                };
                for c in cs.filter_map(|e| e.ok()) {
                    if let Some(v) = root.read(&c.path()).and_then(|v| v.parse::<u64>().ok()) {
                        out.insert(
                            (
                                name.clone(),
                                n,
                                group.to_string(),
                                c.file_name().to_string_lossy().into_owned(),
                            ),
                            v,
                        );
                    }
                }
            }
        }
    }
    out
}

/// Both readings and the delta of every counter that exists in both.
pub fn counter_deltas(
    start: &CounterSnapshot,
    end: &CounterSnapshot,
) -> BTreeMap<(String, u32), Vec<Counter>> {
    let mut out: BTreeMap<(String, u32), Vec<Counter>> = BTreeMap::new();
    for ((dev, port, group, name), s) in start {
        if let Some(e) = end.get(&(dev.clone(), *port, group.clone(), name.clone())) {
            out.entry((dev.clone(), *port)).or_default().push(Counter {
                name: name.clone(),
                group: group.clone(),
                start: *s,
                end: *e,
                delta: e.saturating_sub(*s),
                source: None,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(addr: &str, chain: &[&str], rc: &str, numa: Option<u32>) -> PciFunction {
        PciFunction {
            address: addr.into(),
            class: 0x030200,
            link: PcieLink::default(),
            chain: chain.iter().map(|s| s.to_string()).collect(),
            root_complex: Some(rc.into()),
            numa_node: numa,
            names: Vec::new(),
        }
    }

    #[test]
    fn classes_from_the_tree() {
        // chain: nearest bridge first, root port last.
        let a = f(
            "0000:03:00.0",
            &["0000:02:00.0", "0000:01:00.0", "0000:00:01.0"],
            "pci0000:00",
            Some(0),
        );
        let b = f(
            "0000:04:00.0",
            &["0000:02:01.0", "0000:01:00.0", "0000:00:01.0"],
            "pci0000:00",
            Some(0),
        );
        let c = f(
            "0000:13:00.0",
            &["0000:12:00.0", "0000:10:01.0"],
            "pci0000:10",
            Some(0),
        );
        let d = f(
            "0000:83:00.0",
            &["0000:82:00.0", "0000:80:01.0"],
            "pci0000:80",
            Some(1),
        );
        assert_eq!(tree_class(&a, &b), LinkClass::PcieSwitch);
        assert_eq!(tree_class(&a, &c), LinkClass::PcieHost);
        assert_eq!(tree_class(&a, &d), LinkClass::CrossSocket);
        let e = f("0000:93:00.0", &["0000:90:01.0"], "pci0000:90", None);
        assert_eq!(tree_class(&a, &e), LinkClass::Unknown);
    }
}
