//! GPUs and RDMA adapters placed by lstopo (seed section 3.7): where no
//! `nvidia-smi topo -m` joins them, lstopo's tree still says which NUMA
//! node and package each sits under. A GPU whose node has no adapter
//! while another node does is the same finding as the matrix's far
//! adapter: another package is across the socket link
//! ([`Finding::NicOnOtherSocket`]), another node of its own package under
//! another host bridge ([`Finding::NicAcrossHostBridge`]).
//!
//! Runs only where the topology names no GPU-to-adapter link, so one
//! cause is not said twice from two transcripts.

use std::collections::BTreeMap;

use super::{Diagnosed, Finding, Why, push};
use crate::bundle::Bundle;
use crate::evidence::Source;
use crate::evidence::numa::{DeviceKind, NumaTopology, PlacedDevice};

/// A device on a page: its first OS device name (`mlx5_0`), else its bus
/// id, else its vendor:device.
fn label(d: &PlacedDevice) -> String {
    d.names
        .iter()
        .find(|n| !n.starts_with("card") && !n.starts_with("render") && !n.starts_with("control"))
        .cloned()
        .or_else(|| d.bus_id.clone())
        .or_else(|| d.pci_id.clone())
        .unwrap_or_else(|| "a PCI device".to_string())
}

/// Whether a node's lstopo places at least one GPU and one RDMA adapter
/// under NUMA nodes: the placement check has its evidence.
pub(crate) fn places_gpus_and_adapters(b: &Bundle) -> bool {
    b.numa.iter().any(|t| {
        let placed = |k: DeviceKind| {
            t.devices
                .iter()
                .any(|d| d.kind == k && d.numa_node.is_some())
        };
        placed(DeviceKind::Gpu) && placed(DeviceKind::Rdma)
    })
}

pub(super) fn lstopo_placement(b: &Bundle, out: &mut Vec<Diagnosed>) {
    let t = &b.topology;
    let joined = t.devices.iter().any(|g| {
        t.devices
            .iter()
            .any(|n| g.id != n.id && t.link(&g.id, &n.id).is_some() && is_pair(g, n))
    });
    if joined {
        return;
    }
    for topo in &b.numa {
        placement(topo, out);
    }
}

/// A GPU and a NIC of the topology.
fn is_pair(a: &crate::evidence::topology::Device, b: &crate::evidence::topology::Device) -> bool {
    use crate::evidence::topology::DeviceKind as K;
    matches!((a.kind, b.kind), (K::Gpu, K::Nic))
}

fn placement(topo: &NumaTopology, out: &mut Vec<Diagnosed>) {
    let adapters: Vec<(&PlacedDevice, u32)> = topo
        .devices
        .iter()
        .filter(|d| d.kind == DeviceKind::Rdma)
        .filter_map(|d| Some((d, d.numa_node?)))
        .collect();
    if adapters.is_empty() {
        return;
    }
    // Each adapter's package, looked up once.
    let adapters: Vec<(&PlacedDevice, u32, Option<_>)> = adapters
        .into_iter()
        .map(|(d, n)| (d, n, topo.package_of(n)))
        .collect();
    // (other socket?, the closest adapters) -> the GPUs, the lines.
    type Far<'a> = (Vec<String>, Vec<&'a PlacedDevice>, String, Vec<Source>);
    let mut far: BTreeMap<(bool, Vec<String>), Far<'_>> = BTreeMap::new();
    // What a GPU's home node makes of the adapters, worked out once per
    // node (a paste with thousands of devices stays linear).
    type Home<'a> = (
        bool,
        Vec<&'a (&'a PlacedDevice, u32, Option<u32>)>,
        Vec<String>,
        String,
    );
    let mut homes: BTreeMap<u32, Home<'_>> = BTreeMap::new();
    for g in topo.devices.iter().filter(|d| d.kind == DeviceKind::Gpu) {
        let Some(home) = g.numa_node else { continue };
        if adapters.iter().any(|(_, n, _)| *n == home) {
            continue;
        }
        let (other_socket, closest, ids, code) = homes.entry(home).or_insert_with(|| {
            let package = topo.package_of(home);
            let same: Vec<_> = adapters
                .iter()
                .filter(|(_, _, p)| package.is_some() && *p == package)
                .collect();
            // Another socket only where both packages are known: a paste
            // without its Package lines (or `lstopo --merge` on one
            // socket) says nodes, not sockets.
            let known = package.is_some() && adapters.iter().all(|(_, _, p)| p.is_some());
            let (other_socket, closest) = if same.is_empty() {
                (known, adapters.iter().collect::<Vec<_>>())
            } else {
                (false, same)
            };
            let ids: Vec<String> = closest.iter().map(|(d, _, _)| label(d)).collect();
            let nodes: Vec<String> = {
                let mut v: Vec<u32> = closest.iter().map(|(_, n, _)| *n).collect();
                v.sort_unstable();
                v.dedup();
                v.iter().map(u32::to_string).collect()
            };
            let code = format!(
                "lstopo: GPU on NUMA node {home}, adapter on node {}{}",
                nodes.join("/"),
                if other_socket {
                    ", another package"
                } else if known {
                    ", same package"
                } else {
                    ", package not shown"
                }
            );
            (other_socket, closest, ids, code)
        });
        let (other_socket, ids, code) = (*other_socket, ids.clone(), code.clone());
        let closest = closest.clone();
        let e = far.entry((other_socket, ids)).or_insert_with(|| {
            (
                Vec::new(),
                closest.iter().map(|(d, _, _)| *d).collect(),
                code,
                closest.iter().map(|(d, _, _)| d.source.clone()).collect(),
            )
        });
        e.0.push(label(g));
        e.3.push(g.source.clone());
    }
    for ((other_socket, _), (gpus, nics, code, sources)) in far {
        // As the matrix's findings name them: an id, and the name.
        let nic = nics[0]
            .bus_id
            .clone()
            .or_else(|| nics[0].pci_id.clone())
            .unwrap_or_else(|| label(nics[0]));
        let nic_name = Some(label(nics[0])).filter(|n| *n != nic);
        let also = nics[1..].iter().map(|d| label(d)).collect();
        let (why, finding) = if other_socket {
            (
                Why::NicOnOtherSocket,
                Finding::NicOnOtherSocket {
                    gpus,
                    nic,
                    nic_name,
                    code,
                    also,
                },
            )
        } else {
            (
                Why::NicAcrossHostBridge,
                Finding::NicAcrossHostBridge {
                    gpus,
                    nic,
                    nic_name,
                    code,
                    also,
                },
            )
        };
        push(out, why, finding, sources);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{Host, Origin};

    fn bundle(text: &str) -> Bundle {
        let mut b = Bundle::new(Host {
            name: "n".into(),
            origin: Origin::Ingested,
        });
        b.absorb(crate::ingest::read_transcript(
            "lstopo.txt",
            text.as_bytes(),
        ));
        b
    }

    #[test]
    fn a_gpu_on_the_other_package_from_the_only_adapter_is_named() {
        // Synthetic, hwloc 2.x shape: the GPU under package 1's node, the
        // ConnectX under package 0's.
        let t = "Machine (64GB total)\n  Package L#0\n    NUMANode L#0 (P#0 32GB)\n    Core L#0 + PU L#0 (P#0)\n    HostBridge\n      PCI 3b:00.0 (InfiniBand)\n        OpenFabrics \"mlx5_0\"\n  Package L#1\n    NUMANode L#1 (P#1 32GB)\n    Core L#1 + PU L#1 (P#1)\n    HostBridge\n      PCI af:00.0 (3D)\n";
        let b = bundle(t);
        assert!(places_gpus_and_adapters(&b));
        let mut out = Vec::new();
        lstopo_placement(&b, &mut out);
        assert_eq!(out.len(), 1, "{out:?}");
        let Finding::NicOnOtherSocket {
            gpus,
            nic,
            nic_name,
            code,
            ..
        } = &out[0].finding
        else {
            panic!("{:?}", out[0].finding);
        };
        assert_eq!(gpus, &["0000:af:00.0"]);
        assert_eq!(
            (nic.as_str(), nic_name.as_deref()),
            ("0000:3b:00.0", Some("mlx5_0"))
        );
        assert!(code.contains("node 1, adapter on node 0, another package"));
        // The PCI lines of both (lines 6 and 12).
        let lines: Vec<usize> = out[0].evidence.iter().map(|s| s.line).collect();
        assert_eq!(lines, [6, 12]);
    }

    #[test]
    fn a_gpu_beside_its_adapter_is_no_finding() {
        let t = "Machine (64GB total)\n  Package L#0\n    NUMANode L#0 (P#0 32GB)\n    Core L#0 + PU L#0 (P#0)\n    HostBridge\n      PCI 3b:00.0 (InfiniBand)\n        OpenFabrics \"mlx5_0\"\n      PCI 3c:00.0 (3D)\n";
        let mut out = Vec::new();
        lstopo_placement(&bundle(t), &mut out);
        assert!(out.is_empty(), "{out:?}");
    }
}
