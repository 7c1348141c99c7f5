//! The sysfs PCIe step: the PCIe links of GPUs and network adapters and
//! the switches above them, and the vendor-neutral topology of the PCIe
//! tree, folded into what the vendor tools said.

use std::collections::BTreeSet;

use super::recorder::Recorder;
use crate::bundle::ProbeStatus;
use crate::bundle::{Bundle, Problem, ProblemKind};
use crate::collect::sysfs::{self, Root};
use crate::evidence::topology::{LinkClass, Topology};

/// Reads the PCI functions under `root`, keeps the links of GPUs, adapters
/// and the bridges above them, and folds the tree into the topology.
pub(super) fn pcie(rec: &mut Recorder, root: &Root) {
    rec.timed("sysfs /sys/bus/pci/devices", |rec| {
        let funcs = sysfs::pci_functions(root);
        let relevant: BTreeSet<&str> = funcs
            .iter()
            .filter(|f| f.is_gpu() || f.is_nic())
            .flat_map(|f| {
                std::iter::once(f.address.as_str()).chain(f.chain.iter().map(String::as_str))
            })
            .collect();
        for f in &funcs {
            if relevant.contains(f.address.as_str()) {
                rec.b.pcie.push(f.link.clone());
            }
        }
        fold_tree(&mut rec.b, sysfs::tree_topology(&funcs));
        let gpus = funcs.iter().filter(|f| f.is_gpu()).count();
        let nics = funcs.iter().filter(|f| f.is_nic()).count();
        let status = if funcs.is_empty() {
            ProbeStatus::Failed
        } else {
            ProbeStatus::Ok
        };
        let message = format!(
            "{} PCI functions: {gpus} GPU(s), {nics} network adapter(s)",
            funcs.len()
        );
        (status, message)
    });
}

/// Folds the sysfs tree into the topology. Without a vendor matrix the tree
/// is the topology. With one, each pair keeps the vendor's class and gains
/// the tree's PCIe class beside it; where both describe a PCIe path and
/// disagree, a conflict problem says so.
fn fold_tree(b: &mut Bundle, tree: Topology) {
    if b.topology.links.is_empty() {
        // Keep any devices the tools described (names, UUIDs), add the tree's.
        let tools = std::mem::take(&mut b.topology);
        b.topology = tree;
        for c in b.topology.merge(tools) {
            b.problems.push(Problem {
                file: c.other.file.to_string(),
                line: Some(c.other.line),
                kind: ProblemKind::Conflict,
                message: format!("sysfs and the vendor tool disagree: {}", c.what),
            });
        }
        return;
    }
    for tl in tree.links {
        let Some(vl) = b
            .topology
            .links
            .iter_mut()
            .find(|l| (l.a == tl.a && l.b == tl.b) || (l.a == tl.b && l.b == tl.a))
        else {
            continue;
        };
        vl.pcie_class = Some(tl.class);
        let vendor_pcie = matches!(
            vl.class,
            LinkClass::PcieSwitch | LinkClass::PcieHost | LinkClass::CrossSocket
        );
        if vendor_pcie && tl.class != LinkClass::Unknown && tl.class != vl.class {
            b.problems.push(Problem {
                file: "sysfs /sys/bus/pci/devices".into(),
                line: None,
                kind: ProblemKind::Conflict,
                message: format!(
                    "{}-{}: the PCIe tree says {}, {} says {} ({}); both kept",
                    vl.a,
                    vl.b,
                    tl.class,
                    vl.sources
                        .first()
                        .map(|s| s.file.to_string())
                        .unwrap_or_default(),
                    vl.class,
                    vl.code.clone().unwrap_or_default()
                ),
            });
        }
    }
    // Devices: add PCI bus ids and NUMA nodes the vendor matrix lacks.
    for d in tree.devices {
        if let Some(v) = b.topology.devices.iter_mut().find(|x| x.id == d.id) {
            if v.pci_bus_id.is_none() {
                v.pci_bus_id = d.pci_bus_id;
            }
            if v.numa_node.is_none() {
                v.numa_node = d.numa_node;
            }
        } else {
            b.topology.devices.push(d);
        }
    }
    b.topology.sort();
}
