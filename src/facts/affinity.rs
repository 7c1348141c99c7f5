//! Where a process was allowed to run and allocate, against the NUMA node
//! of the GPUs it used (seed sections 3.7 and 6.2: a process on the far
//! socket adds a cross-socket traversal to every staged byte).
//!
//! A binding comes from a live collection (this process's
//! `Cpus_allowed_list` / `Mems_allowed_list`, and sysfs's CPUs per NUMA
//! node) or from a launcher command line a transcript kept
//! (`numactl -N0 -m0 ...`, `numactl --physcpubind=0-7`, `taskset -c 0-7`).
//! A topology matrix alone says where GPUs sit, never where a job ran:
//! without a binding there is nothing here.

use std::collections::BTreeSet;

use crate::bundle::Bundle;
use crate::evidence::Source;
use crate::evidence::topology::{CpuRange, DeviceKind, parse_cpu_list};

/// Node or CPU lists longer than this are not expanded (never size a loop
/// from a number in the text).
const MAX_IDS: u32 = 4096;

/// Where a process could run and allocate memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Binding {
    /// The launcher command line that bound it (`numactl -m0 -N0
    /// bandwidthTest`), or none for the live collection's own process.
    pub command: Option<String>,
    /// The line that says so (the command line, or the bundle's first
    /// transcript for a live collection).
    pub source: Option<Source>,
    /// CPUs it may run on, as given (`0-15`).
    pub cpus_as_given: Option<String>,
    pub cpus: Option<Vec<CpuRange>>,
    /// NUMA nodes whose CPUs it may run on.
    pub cpu_nodes: Option<BTreeSet<u32>>,
    /// NUMA nodes it may allocate memory from.
    pub mem_nodes: Option<BTreeSet<u32>>,
    /// Topology devices it used: every GPU and adapter for a live
    /// collection; for a command line, the GPUs and RDMA adapters the
    /// transcript's figures under it name.
    pub devices: Vec<String>,
}

/// A binding's devices sorted by distance.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Placement {
    /// GPUs whose NUMA node (or CPU affinity) the process could not run
    /// or allocate on, with that node where known.
    pub far: Vec<(String, Option<u32>)>,
    /// Adapters out of reach in the same way (their name where the
    /// topology gives one, else their id), with their node.
    pub far_nics: Vec<(String, Option<u32>)>,
    /// Devices with a CPU or memory node in reach and none out.
    pub near: usize,
    /// Of those, the GPUs.
    pub near_gpus: usize,
    /// Some device is far only by [`node_zero_far`]'s assumption.
    pub node_zero_assumed: bool,
}

/// Every binding the bundle shows.
pub fn bindings(b: &Bundle) -> Vec<Binding> {
    let mut out = Vec::new();
    if let Some(sys) = &b.system {
        let cpus = sys.cpus_allowed.as_deref().and_then(parse_cpu_list);
        let cpu_nodes = cpus.as_ref().map(|c| {
            sys.numa_nodes
                .iter()
                .filter(|n| parse_cpu_list(&n.cpus).is_some_and(|nc| overlaps(&nc, c)))
                .map(|n| n.node)
                .collect()
        });
        out.push(Binding {
            command: None,
            source: None,
            cpus_as_given: sys.cpus_allowed.clone(),
            cpus,
            cpu_nodes: cpu_nodes.filter(|n: &BTreeSet<u32>| !n.is_empty()),
            mem_nodes: sys.mems_allowed.as_deref().and_then(ids),
            devices: b.topology.devices.iter().map(|d| d.id.clone()).collect(),
        });
    }
    for t in &b.transcripts {
        for blk in &t.blocks {
            let Some(cmd) = &blk.command else { continue };
            let Some(mut binding) = of_command(cmd) else {
                continue;
            };
            binding.source = Some(Source {
                file: t.path.clone().into(),
                line: blk.first_line.saturating_sub(1).max(1),
            });
            let file = t.path.as_str();
            let named: BTreeSet<String> = b
                .measurements
                .iter()
                .filter(|m| &*m.source.file == file)
                .filter(|m| (blk.first_line..=blk.last_line).contains(&m.source.line))
                .flat_map(|m| [m.src.as_ref(), m.dst.as_ref()])
                .flatten()
                .filter_map(|s| physical_gpu(s, visible_devices(cmd).as_deref()))
                .collect();
            // GPU ids as such; adapters by the name perftest prints.
            binding.devices = b
                .topology
                .devices
                .iter()
                .filter(|d| {
                    named.contains(&d.id)
                        || d.kind == DeviceKind::Nic
                            && d.name.as_ref().is_some_and(|n| named.contains(n))
                })
                .map(|d| d.id.clone())
                .collect();
            out.push(binding);
        }
    }
    out
}

/// The list a `CUDA_VISIBLE_DEVICES=`, `HIP_VISIBLE_DEVICES=` or
/// `ROCR_VISIBLE_DEVICES=` word of the command line gives, if any.
fn visible_devices(cmd: &str) -> Option<Vec<String>> {
    cmd.split_whitespace().find_map(|w| {
        let (k, v) = w.split_once('=')?;
        matches!(
            k,
            "CUDA_VISIBLE_DEVICES" | "HIP_VISIBLE_DEVICES" | "ROCR_VISIBLE_DEVICES"
        )
        .then(|| v.split(',').map(|d| d.trim().to_string()).collect())
    })
}

/// The topology's name for a device a figure names: under a visible-devices
/// list the tool's `GPU<k>` is the list's k-th GPU, and a GPU the list
/// names some other way (a UUID, an index past it) is dropped rather than
/// matched to the wrong one. Other names pass as they are.
fn physical_gpu(name: &str, visible: Option<&[String]>) -> Option<String> {
    let (Some(list), Some(k)) = (
        visible,
        name.strip_prefix("GPU")
            .and_then(|k| k.parse::<usize>().ok()),
    ) else {
        return Some(name.to_string());
    };
    let phys: u32 = list.get(k)?.parse().ok()?;
    Some(format!("GPU{phys}"))
}

/// The binding a `numactl` or `taskset` command line asks for.
pub fn of_command(cmd: &str) -> Option<Binding> {
    let words: Vec<&str> = cmd.split_whitespace().collect();
    let start = words
        .iter()
        .position(|w| matches!(w.rsplit('/').next(), Some("numactl" | "taskset")))?;
    let mut b = Binding {
        command: Some(cmd.to_string()),
        source: None,
        cpus_as_given: None,
        cpus: None,
        cpu_nodes: None,
        mem_nodes: None,
        devices: Vec::new(),
    };
    let taskset = words[start].ends_with("taskset");
    let mut i = start + 1;
    while i < words.len() {
        let w = words[i];
        // `--opt=v`, `-Nv`, or `-N v`.
        let (flag, inline) = match w.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v)),
            _ if w.len() > 2 && w.starts_with('-') && !w.starts_with("--") => {
                // `-é0` is no flag: `get` keeps a multi-byte second
                // character from panicking.
                match (w.get(..2), w.get(2..)) {
                    (Some(f), Some(v)) => (f, Some(v)),
                    _ => (w, None),
                }
            }
            _ => (w, None),
        };
        let takes = matches!(
            flag,
            "-N" | "--cpunodebind"
                | "-m"
                | "--membind"
                | "-C"
                | "--physcpubind"
                | "-c"
                | "--cpu-list"
        );
        let value = if takes && inline.is_none() {
            i += 1;
            words.get(i).copied()
        } else {
            inline
        };
        match (flag, value) {
            ("-N" | "--cpunodebind", Some(v)) if !taskset => b.cpu_nodes = ids(v),
            ("-m" | "--membind", Some(v)) if !taskset => b.mem_nodes = ids(v),
            ("-C" | "--physcpubind", Some(v)) if !taskset => cpus(&mut b, v),
            ("-c" | "--cpu-list", Some(v)) if taskset => cpus(&mut b, v),
            _ if !w.starts_with('-') => break,
            _ => {}
        }
        i += 1;
    }
    (b.cpus.is_some() || b.cpu_nodes.is_some() || b.mem_nodes.is_some()).then_some(b)
}

fn cpus(b: &mut Binding, v: &str) {
    b.cpus = parse_cpu_list(v);
    b.cpus_as_given = b.cpus.is_some().then(|| v.to_string());
}

/// A node list (`0`, `0,1`, `0-3`), bounded.
fn ids(v: &str) -> Option<BTreeSet<u32>> {
    let ranges = parse_cpu_list(v)?;
    let n: u32 = ranges
        .iter()
        .map(|r| (r.last - r.first).saturating_add(1))
        .fold(0u32, u32::saturating_add);
    (n <= MAX_IDS).then(|| ranges.iter().flat_map(|r| r.first..=r.last).collect())
}

fn overlaps(a: &[CpuRange], b: &[CpuRange]) -> bool {
    a.iter()
        .any(|x| b.iter().any(|y| x.first <= y.last && y.first <= x.last))
}

/// Which of the binding's GPUs it could reach from its CPUs and memory:
/// by the GPU's NUMA node where the evidence gives one, else by its CPU
/// affinity (the topology matrix's column) against the bound CPUs, else
/// (a binding by node, an affinity without a node) by [`node_zero_far`].
pub fn placement(b: &Bundle, binding: &Binding) -> Placement {
    let mut out = Placement::default();
    for id in &binding.devices {
        let Some(d) = b.topology.devices.iter().find(|d| &d.id == id) else {
            continue;
        };
        let cpu_far = match (
            d.numa_node,
            &binding.cpu_nodes,
            &d.cpu_affinity,
            &binding.cpus,
        ) {
            (Some(n), Some(nodes), _, _) => Some(!nodes.contains(&n)),
            (_, _, Some(aff), Some(c)) => Some(!overlaps(aff, c)),
            (None, Some(nodes), Some(aff), None) => node_zero_far(b, aff, nodes),
            _ => None,
        };
        let mem_far = match (d.numa_node, &binding.mem_nodes, &d.cpu_affinity) {
            (Some(n), Some(nodes), _) => Some(!nodes.contains(&n)),
            (None, Some(nodes), Some(aff)) => node_zero_far(b, aff, nodes),
            _ => None,
        };
        // Far by the CPU-0 assumption alone (its own match arms above).
        let by_node = d.numa_node.is_none() && d.cpu_affinity.is_some();
        if (cpu_far == Some(true) && by_node && binding.cpus.is_none())
            || (mem_far == Some(true) && by_node)
        {
            out.node_zero_assumed = true;
        }
        match (cpu_far, mem_far) {
            (Some(true), _) | (_, Some(true)) if d.kind == DeviceKind::Nic => {
                let name = d.name.clone().unwrap_or_else(|| id.clone());
                out.far_nics.push((name, d.numa_node));
            }
            (Some(true), _) | (_, Some(true)) => out.far.push((id.clone(), d.numa_node)),
            (None, None) => {}
            _ => {
                out.near += 1;
                if d.kind == DeviceKind::Gpu {
                    out.near_gpus += 1;
                }
            }
        }
    }
    out
}

/// Whether a device known only by its CPU affinity (an older
/// `nvidia-smi topo -m` has no `NUMA Affinity` column) is off the bound
/// `nodes`, taking the node that holds CPU 0 to be node 0. That is an
/// assumption, and the finding says so: Linux numbers the boot CPU 0 and,
/// on x86, numbers NUMA nodes in the order the firmware's SRAT lists
/// their proximity domains (`acpi_map_pxm_to_node`), which on
/// multi-socket servers begins with the boot CPU's. So a device whose
/// affinity holds CPU 0 is on node 0; one whose affinity is disjoint
/// from another device's that holds CPU 0 is on some other node, which
/// rules out a binding to node 0 alone. Anything else (which other node)
/// stays unknown. Only where the topology shows per-node affinities (some
/// device's CPUs disjoint from this one's): a device with no NUMA node (a
/// VM, a `NUMA Affinity` of N/A) has every CPU as its affinity, which
/// holds CPU 0 and says nothing of nodes.
pub fn node_zero_far(b: &Bundle, aff: &[CpuRange], nodes: &BTreeSet<u32>) -> Option<bool> {
    let per_node = b
        .topology
        .devices
        .iter()
        .any(|d| d.cpu_affinity.as_deref().is_some_and(|o| !overlaps(o, aff)));
    if !per_node {
        return None;
    }
    let cpu0 = [CpuRange { first: 0, last: 0 }];
    if overlaps(aff, &cpu0) {
        return Some(!nodes.contains(&0));
    }
    let other_node = b.topology.devices.iter().any(|d| {
        d.cpu_affinity
            .as_deref()
            .is_some_and(|o| overlaps(o, &cpu0) && !overlaps(o, aff))
    });
    (other_node && nodes.len() == 1 && nodes.contains(&0)).then_some(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numactl_and_taskset_lines_give_nodes_and_cpus() {
        let b = of_command("numactl -m0 -N0 bandwidthTest").unwrap();
        assert_eq!(b.cpu_nodes, Some(BTreeSet::from([0])));
        assert_eq!(b.mem_nodes, Some(BTreeSet::from([0])));
        let b = of_command("numactl --cpunodebind=1 --membind 0,1 ./all_reduce_perf -g 8").unwrap();
        assert_eq!(b.cpu_nodes, Some(BTreeSet::from([1])));
        assert_eq!(b.mem_nodes, Some(BTreeSet::from([0, 1])));
        let b = of_command("taskset -c 0-7 ./bandwidthTest --device=1").unwrap();
        assert_eq!(b.cpus_as_given.as_deref(), Some("0-7"));
        assert!(of_command("numactl --hardware").is_none());
        assert!(of_command("./bandwidthTest -N0").is_none());
        // A node list the size of a denial of service is not expanded.
        assert_eq!(of_command("numactl -N0-4294967295 x"), None);
    }

    #[test]
    fn a_visible_devices_list_maps_the_tools_gpu_to_the_physical_one() {
        let list = visible_devices("CUDA_VISIBLE_DEVICES=2,3 numactl -N1 -m1 bandwidthTest");
        let list = list.as_deref();
        assert_eq!(physical_gpu("GPU0", list), Some("GPU2".into()));
        assert_eq!(physical_gpu("GPU1", list), Some("GPU3".into()));
        assert_eq!(physical_gpu("GPU2", list), None, "past the list");
        assert_eq!(physical_gpu("mlx5_0", list), Some("mlx5_0".into()));
        assert_eq!(physical_gpu("GPU0", None), Some("GPU0".into()));
        let uuids = visible_devices("HIP_VISIBLE_DEVICES=GPU-4a6f numactl -N0 x");
        assert_eq!(physical_gpu("GPU0", uuids.as_deref()), None);
    }

    /// Two GPUs with a CPU affinity each (0-5, 6-11) and no NUMA node.
    fn two_gpus_by_cpu_affinity() -> Bundle {
        use crate::bundle::{Host, Origin};
        use crate::evidence::topology::Device;
        let mut b = Bundle::new(Host {
            name: "n".into(),
            origin: Origin::Ingested,
        });
        for (id, cpus) in [("GPU0", "0-5"), ("GPU1", "6-11")] {
            let mut d = Device::new(id, DeviceKind::Gpu, Source::line(1));
            d.cpu_affinity = parse_cpu_list(cpus);
            b.topology.devices.push(d);
        }
        b
    }

    #[test]
    fn a_node_binding_against_a_cpu_affinity_takes_cpu_0_to_be_on_node_0() {
        // Synthetic, shaped like gearshifft #82: `CPU Affinity` only.
        let mut b = two_gpus_by_cpu_affinity();
        let on = |n: &[u32]| n.iter().copied().collect::<BTreeSet<u32>>();
        let (gpu0, gpu1) = (
            parse_cpu_list("0-5").unwrap(),
            parse_cpu_list("6-11").unwrap(),
        );
        assert_eq!(node_zero_far(&b, &gpu0, &on(&[1])), Some(true));
        assert_eq!(node_zero_far(&b, &gpu0, &on(&[0])), Some(false));
        assert_eq!(node_zero_far(&b, &gpu0, &on(&[0, 1])), Some(false));
        // GPU1 is on some node other than 0, but which is not known.
        assert_eq!(node_zero_far(&b, &gpu1, &on(&[0])), Some(true));
        assert_eq!(node_zero_far(&b, &gpu1, &on(&[1])), None);
        assert_eq!(node_zero_far(&b, &gpu1, &on(&[2])), None);
        // Without a device that holds CPU 0, nothing is known of GPU1.
        b.topology.devices.remove(0);
        assert_eq!(node_zero_far(&b, &gpu1, &on(&[0])), None);
        let bound = of_command("numactl -m1 -N1 bandwidthTest").unwrap();
        let bound = Binding {
            devices: vec!["GPU1".into()],
            ..bound
        };
        assert_eq!(placement(&b, &bound), Placement::default());
        // Every device with every CPU as its affinity (no NUMA node known:
        // a VM, `NUMA Affinity` N/A): nothing is assumed, not even for the
        // device that holds CPU 0.
        for d in &mut b.topology.devices {
            d.cpu_affinity = parse_cpu_list("0-11");
        }
        let all = parse_cpu_list("0-11").unwrap();
        assert_eq!(node_zero_far(&b, &all, &on(&[1])), None);
        b.topology.devices.push(b.topology.devices[0].clone());
        b.topology.devices[1].id = "GPU2".into();
        assert_eq!(node_zero_far(&b, &all, &on(&[1])), None);
    }

    #[test]
    fn a_device_far_only_by_the_cpu_0_assumption_is_marked_so() {
        let mut b = two_gpus_by_cpu_affinity();
        let on = |cmd: &str| Binding {
            devices: vec!["GPU0".into()],
            ..of_command(cmd).unwrap()
        };
        // By node: the assumption decides.
        let p = placement(&b, &on("numactl -m1 -N1 bandwidthTest"));
        assert_eq!((p.far.len(), p.node_zero_assumed), (1, true));
        // CPUs near by the affinity itself, memory far by the assumption.
        let p = placement(&b, &on("numactl -C 0-5 -m1 bandwidthTest"));
        assert_eq!((p.far.len(), p.node_zero_assumed), (1, true));
        // CPUs far by the affinity itself, no node given: no assumption.
        let p = placement(&b, &on("taskset -c 6-11 bandwidthTest"));
        assert_eq!((p.far.len(), p.node_zero_assumed), (1, false));
        // With the GPU's NUMA node stated, nothing is assumed.
        b.topology.devices[0].numa_node = Some(0);
        let p = placement(&b, &on("numactl -m1 -N1 bandwidthTest"));
        assert_eq!((p.far.len(), p.node_zero_assumed), (1, false));
    }

    #[test]
    fn a_flag_with_a_multi_byte_character_is_no_flag_and_no_panic() {
        let b = of_command("numactl -\u{e9}0 -N0 bandwidthTest").unwrap();
        assert_eq!(
            b.cpu_nodes.map(|n| n.into_iter().collect::<Vec<_>>()),
            Some(vec![0])
        );
    }
}
