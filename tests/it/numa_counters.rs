//! NUMA topologies (`numactl -H`, lstopo) and RDMA counter dumps (sysfs
//! greps and loops, perfquery) read from the real captures: facts checked
//! by hand against each transcript's text, one snapshot per node, and the
//! growth of two readings (synthetic, named so).

use std::path::{Path, PathBuf};

use wire_report::bundle::{Bundle, ProblemKind};
use wire_report::evidence::counters::{CounterTool, growth};
use wire_report::evidence::numa::{DeviceKind, NumaTool, NumaTopology};

fn node(dir: &str) -> Bundle {
    let mut v = wire_report::inputs::ingest(&[Path::new("captures").join(dir)]).unwrap();
    assert_eq!(v.len(), 1);
    v.remove(0).bundle
}

fn numa(b: &Bundle) -> &NumaTopology {
    assert_eq!(b.numa.len(), 1, "{:?}", b.numa);
    &b.numa[0]
}

fn dist(t: &NumaTopology, from: u32, to: u32) -> (u32, usize) {
    let d = t
        .distances
        .iter()
        .find(|d| d.from == from && d.to == to)
        .unwrap_or_else(|| panic!("no distance {from}->{to}"));
    (d.distance, d.source.line)
}

/// The line account of the node's only transcript.
fn lines(b: &Bundle) -> (usize, usize, Vec<usize>) {
    let l = &b.transcripts[0].lines;
    (l.read, l.skipped, l.not_understood_lines.clone())
}

#[test]
fn numactl_threadripper_nps4_has_memoryless_nodes_and_a_4x4_matrix() {
    let b = node("threadripper-3960x-nps4");
    let t = numa(&b);
    assert_eq!(t.tool, NumaTool::Numactl);
    let n: Vec<(u32, &str, u32, Option<u64>)> = t
        .nodes
        .iter()
        .map(|n| (n.node, n.cpus.as_str(), n.cpu_count, n.size_bytes))
        .collect();
    // `node 0 cpus: 0 1 2 3 4 5 24 ... 29` / `node 0 size: 0 MB` (lines 4-5).
    assert_eq!(n[0], (0, "0-5,24-29", 12, Some(0)));
    // `node 1 size: 64307 MB` (line 8): MiB.
    assert_eq!(n[1], (1, "6-11,30-35", 12, Some(64307 << 20)));
    assert_eq!(n[3], (3, "18-23,42-47", 12, Some(0)));
    assert_eq!(t.nodes[1].free_bytes, Some(19214 << 20));
    assert_eq!(t.nodes[0].source.line, 4);
    assert_eq!(t.distances.len(), 16);
    // `  0:  10  12  12  12 ` (line 18), `  3:  12  12  12  10 ` (line 21).
    assert_eq!(dist(t, 0, 0), (10, 18));
    assert_eq!(dist(t, 0, 3), (12, 18));
    assert_eq!(dist(t, 3, 3), (10, 21));
    assert!(b.problems.is_empty(), "{:?}", b.problems);
    // The prompt `tavianator@tachyon $ numactl -H` (line 2) is the
    // command, and nothing is left not understood.
    assert_eq!(lines(&b).2, Vec::<usize>::new());
}

#[test]
fn numactl_c5n_two_nodes_and_a_command_label() {
    let b = node("aws-c5n-18xlarge");
    let t = numa(&b);
    assert_eq!(t.nodes.len(), 2);
    assert_eq!(t.nodes[0].cpus, "0-17,36-53");
    assert_eq!(t.nodes[1].cpus, "18-35,54-71");
    assert_eq!(t.nodes[0].cpu_count, 36);
    assert_eq!(t.nodes[0].size_bytes, Some(94590 << 20));
    assert_eq!(dist(t, 0, 1), (21, 12));
    assert_eq!(dist(t, 1, 0), (21, 13));
    // `Command: numactl --hardware` is skipped, not read.
    assert!(lines(&b).2.is_empty());
}

#[test]
fn numactl_one_node_and_distances_only() {
    let b = node("diamond-1node");
    let t = numa(&b);
    assert_eq!(t.nodes.len(), 1);
    assert_eq!((t.nodes[0].cpus.as_str(), t.nodes[0].cpu_count), ("0-1", 2));
    assert_eq!(t.nodes[0].size_bytes, Some(16383 << 20));
    assert_eq!(dist(t, 0, 0), (10, 8));
    let b = node("siomon-2node-distances");
    let t = numa(&b);
    assert!(t.nodes.is_empty());
    assert_eq!(dist(t, 0, 1), (20, 5));
    assert_eq!(dist(t, 1, 1), (10, 6));
}

#[test]
fn numactl_cut_after_four_of_eight_nodes_says_so() {
    let b = node("numactl-8node-sonar");
    let t = numa(&b);
    assert_eq!(t.nodes.len(), 4);
    // The cut line `node 3 cpus: 48 49 50 51 52 53` (line 14).
    assert_eq!(
        (t.nodes[3].cpus.as_str(), t.nodes[3].size_bytes),
        ("48-53", None)
    );
    assert!(t.distances.is_empty());
    assert!(b.problems.iter().any(|p| p.kind == ProblemKind::Truncated
        && p.line == Some(3)
        && p.message.contains("8 nodes available, 4 shown")));
}

#[test]
fn lstopo_pascal_places_the_connectx5_under_node_0_and_the_x710_under_node_1() {
    let b = node("llnl-pascal-cx5");
    let t = numa(&b);
    assert_eq!(t.tool, NumaTool::Lstopo);
    assert!(!t.flattened);
    assert_eq!(t.nodes.len(), 2);
    // `NUMANode L#0 (P#0 63GB)` (line 2), PUs P#0..P#17 below it.
    assert_eq!(
        (t.nodes[0].cpus.as_str(), t.nodes[0].cpu_count),
        ("0-17", 18)
    );
    assert_eq!(t.nodes[0].size_bytes, Some(63 << 30));
    assert_eq!(t.nodes[1].cpus, "18-35");
    // `PCI 15b3:1017` (line 29) with `OpenFabrics L#3 "mlx5_0"` under
    // `HostBridge L#0` of node 0.
    let (node0, src) = t.node_of("mlx5_0").unwrap();
    assert_eq!((node0, src.line), (0, 29));
    let cx5 = t
        .devices
        .iter()
        .find(|d| d.names.contains(&"mlx5_0".to_string()))
        .unwrap();
    assert_eq!(cx5.kind, DeviceKind::Rdma);
    assert_eq!(cx5.pci_id.as_deref(), Some("15b3:1017"));
    assert_eq!(cx5.host_bridge.as_deref(), Some("HostBridge L#0"));
    assert_eq!(t.node_of("aci1").map(|x| x.0), Some(1));
    // The Matrox BMC graphics (102b:0522, `GPU L#4 "card0"`) is no GPU.
    let matrox = t
        .devices
        .iter()
        .find(|d| d.pci_id.as_deref() == Some("102b:0522"))
        .unwrap();
    assert_eq!(matrox.kind, DeviceKind::Other);
    assert!(lines(&b).2.is_empty());
}

#[test]
fn lstopo_hwloc1_puts_the_p100_under_node_0() {
    let b = node("xeon-e5-2603v4-p100");
    let t = numa(&b);
    assert_eq!(t.nodes[0].cpus, "0,2,4,6,8,10");
    // `NUMANode L#1 (P#1 16GB) + Socket L#1 + L3 L#1 (15MB)` (line 35).
    assert_eq!(
        (t.nodes[1].node, t.nodes[1].cpus.as_str()),
        (1, "1,3,5,7,9,11")
    );
    assert_eq!(t.nodes[1].source.line, 35);
    let gpu = t
        .devices
        .iter()
        .find(|d| d.kind == DeviceKind::Gpu)
        .unwrap();
    assert_eq!(gpu.pci_id.as_deref(), Some("10de:15f8"));
    assert_eq!((gpu.numa_node, gpu.source.line), (Some(0), 13));
    assert_eq!(
        t.devices
            .iter()
            .filter(|d| d.kind == DeviceKind::Nic)
            .count(),
        4
    );
}

#[test]
fn lstopo_likwid_and_a_vm_without_numa() {
    let b = node("likwid-amd-4node");
    let t = numa(&b);
    assert_eq!(t.nodes[0].size_bytes, Some(7950 << 20));
    assert_eq!(t.nodes[0].cpus, "0,4,8,12,16,20");
    assert_eq!(t.node_of("enp4s0f3").map(|x| x.0), Some(0));
    // The ES1000 BMC graphics (1002:515e with `GPU L#5 "card0"`) is no GPU.
    assert!(t.devices.iter().all(|d| d.kind != DeviceKind::Gpu));
    let b = node("hwloc-107-vm-no-numa");
    let t = numa(&b);
    assert!(t.nodes.is_empty());
    // Host bridges under Machine: devices with no node.
    assert!(t.devices.iter().all(|d| d.numa_node.is_none()));
    assert_eq!(t.devices.len(), 6);
    assert_eq!(t.devices[0].host_bridge.as_deref(), Some("HostBridge L#0"));
    assert_eq!(t.devices[5].host_bridge.as_deref(), Some("HostBridge L#1"));
}

#[test]
fn lstopo_that_lost_its_indentation_is_read_in_document_order() {
    let b = node("epyc-8numa-ib-hackmd");
    let t = numa(&b);
    assert!(t.flattened);
    assert_eq!(t.nodes.len(), 8);
    // `PCI 43:00.0 (InfiniBand)` (line 19) after `NUMANode L#1` (line 11).
    let ib = t
        .devices
        .iter()
        .find(|d| d.bus_id.as_deref() == Some("0000:43:00.0"))
        .unwrap();
    assert_eq!(
        (ib.kind, ib.numa_node, ib.source.line),
        (DeviceKind::Rdma, Some(1), 19)
    );
    assert_eq!(ib.names, ["mlx5_0", "ib0"]);
    assert_eq!(t.node_of("mlx5_1").map(|x| x.0), Some(7));
    let gpus: Vec<(String, Option<u32>)> = t
        .devices
        .iter()
        .filter(|d| d.kind == DeviceKind::Gpu)
        .map(|d| (d.bus_id.clone().unwrap(), d.numa_node))
        .collect();
    assert_eq!(
        gpus,
        [
            ("0000:44:00.0".to_string(), Some(1)),
            ("0000:03:00.0".to_string(), Some(3)),
            ("0000:c4:00.0".to_string(), Some(5)),
            ("0000:84:00.0".to_string(), Some(7)),
        ]
    );
    assert_eq!(t.nodes[1].cpus, "16,144");
    assert!(
        b.transcripts[0]
            .notes
            .iter()
            .any(|n| n.text.contains("lost its indentation"))
    );
}

#[test]
fn a_loop_of_headings_reads_mlx5_1_port_1_from_the_prompt() {
    let b = node("gpud-mlx5-ib-counters");
    assert_eq!(b.counters.len(), 1);
    let d = &b.counters[0];
    assert_eq!(
        (d.tool, d.adapter.as_deref(), d.port),
        (CounterTool::Sysfs, Some("mlx5_1"), Some(1))
    );
    assert_eq!(d.values.len(), 21);
    let v = |name: &str| {
        let v = d.values.iter().find(|v| v.name == name).unwrap();
        (v.value, v.source.line)
    };
    // `=== ./port_xmit_data ===` (line 10), `205143497464492` (line 11).
    assert_eq!(v("port_xmit_data"), (205_143_497_464_492, 11));
    assert_eq!(v("link_downed").0, 255);
    assert_eq!(v("excessive_buffer_overrun_errors").0, 15);
    assert!(b.problems.is_empty(), "{:?}", b.problems);
    assert!(lines(&b).2.is_empty());
    // One reading: no growth.
    assert!(growth(&b.counters).is_empty());
}

#[test]
fn perfquery_reads_the_lid_and_port_it_asked() {
    let b = node("perfquery-x-rhel75");
    let d = &b.counters[0];
    assert_eq!(
        (d.tool, d.adapter.as_deref(), d.lid, d.port),
        (CounterTool::Perfquery, None, Some(10), Some(1))
    );
    assert_eq!(d.values.len(), 22);
    assert!(d.values.iter().all(|v| v.value == 0));
    let b = node("perfquery-x-lid21-netdata");
    let d = &b.counters[0];
    assert_eq!((d.lid, d.port), (Some(21), Some(1)));
    let v = |name: &str| {
        d.values
            .iter()
            .find(|v| v.name == name)
            .map(|v| (v.value, v.source.line))
    };
    // `PortXmitData:....................13672645927` (line 5).
    assert_eq!(v("PortXmitData"), Some((13_672_645_927, 5)));
    assert_eq!(v("PortRcvData"), Some((2_341_975_277_576, 6)));
    // The wrapped header's end (line 2) is skipped, not read.
    assert!(lines(&b).2.is_empty());
}

#[test]
fn counters_without_a_value_are_named_unreadable() {
    let b = node("i40iw-no-pma");
    assert!(b.counters.is_empty());
    let unreadable: Vec<usize> = b
        .problems
        .iter()
        .filter(|p| p.kind == ProblemKind::Parse)
        .filter_map(|p| p.line)
        .collect();
    assert_eq!(unreadable, (4..=11).collect::<Vec<_>>());
    assert!(b.problems.iter().any(|p| {
        p.message
            .contains("i40iw0 port_rcv_data reads `N/A (no PMA)`")
    }));
}

#[test]
fn a_printf_loop_after_cd_reads_the_hfi1_hw_counters() {
    let b = node("hfi1-omnipath-hw-counters");
    let d = &b.counters[0];
    assert_eq!((d.adapter.as_deref(), d.port), (Some("hfi1_0"), Some(1)));
    assert!(d.values.iter().all(|v| v.group == "hw_counters"));
    let rc = d.values.iter().find(|v| v.name == "RcResend").unwrap();
    assert_eq!((rc.value, rc.source.line), (2079, 13));
    assert_eq!(d.values.len(), 37);
}

#[test]
fn two_readings_in_one_paste_give_growth_synthetic() {
    let dir = PathBuf::from("tests/fixtures/synthetic/synthetic-roce-counters-two-readings");
    let b = wire_report::inputs::ingest(&[dir])
        .unwrap()
        .remove(0)
        .bundle;
    assert_eq!(b.counters.len(), 2);
    assert_eq!((b.counters[0].reading, b.counters[1].reading), (0, 1));
    let g = growth(&b.counters);
    assert_eq!(g.len(), 1);
    assert_eq!((g[0].who.as_str(), g[0].port), ("mlx5_0", Some(1)));
    let c = |name: &str| {
        g[0].counters
            .iter()
            .find(|c| c.name == name)
            .map(|c| (c.start, c.end, c.delta))
    };
    assert_eq!(c("symbol_error"), Some((3, 7, 4)));
    assert_eq!(c("np_cnp_sent"), Some((17, 17, 0)));
    // Two files in either order: the earlier is the one with the smaller counters.
    let mut swapped = b.counters.clone();
    swapped.reverse();
    assert_eq!(growth(&swapped)[0].counters, g[0].counters);
}

/// Each node's `numa` and `counters` sections and its line account.
#[test]
fn numa_and_counter_snapshots() {
    let all = wire_report::inputs::ingest(&[PathBuf::from("captures")]).unwrap();
    let mut seen = 0;
    for n in all
        .iter()
        .filter(|n| !n.bundle.numa.is_empty() || !n.bundle.counters.is_empty())
    {
        seen += 1;
        let lines: Vec<_> = n
            .bundle
            .transcripts
            .iter()
            .map(|t| (t.path.as_str(), t.tool.as_str(), &t.lines))
            .collect();
        crate::common::in_snapshots(|| {
            insta::assert_json_snapshot!(
                format!("numa_counters__{}", n.bundle.host.name),
                serde_json::json!({ "numa": n.bundle.numa, "counters": n.bundle.counters, "lines": lines, "problems": n.bundle.problems })
            );
        });
    }
    assert!(seen >= 14, "{seen} nodes with NUMA or counter evidence");
}

#[test]
fn counters_that_grew_between_two_dumps_are_a_finding_synthetic() {
    use wire_report::diagnosis::{self, Finding};
    let dir = PathBuf::from("tests/fixtures/synthetic/synthetic-roce-counters-two-readings");
    let b = wire_report::inputs::ingest(&[dir])
        .unwrap()
        .remove(0)
        .bundle;
    let d = diagnosis::diagnose(&b);
    let grew: Vec<_> = d
        .iter()
        .filter_map(|x| match &x.finding {
            Finding::PortErrorsGrew {
                device,
                port,
                counters,
            } => Some((device.as_str(), *port, counters.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        grew,
        [("mlx5_0", Some(1), vec![("symbol_error".to_string(), 4)])]
    );
    // The counters check ran: two readings.
    let facts = wire_report::facts::NodeFacts::of(&b);
    let a = diagnosis::assess(&b, &facts);
    let c = a
        .checks
        .iter()
        .find(|c| c.step == diagnosis::Step::Counters)
        .unwrap();
    assert_eq!(c.state, diagnosis::State::Finding);
}
