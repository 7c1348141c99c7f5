use super::*;

#[test]
fn cpu_lists_become_ranges() {
    assert_eq!(cpu_ranges(&mut vec![5, 0, 1, 2, 2, 7, 8]), "0-2,5,7-8");
    assert_eq!(cpu_ranges(&mut Vec::new()), "");
}

#[test]
fn a_distance_row_whose_label_a_prefix_reading_took_is_read_by_order() {
    // `0:  10  21` reads as `10  21` once an srun-style `0: ` is taken off.
    let t = "node distances:\nnode   0   1\n10  21\n21  10\n";
    let p = parse_numactl(t).unwrap();
    let d = &p.numa[0].distances;
    assert_eq!(d.len(), 4);
    assert_eq!(
        (d[2].from, d[2].to, d[2].distance, d[2].source.line),
        (1, 0, 21, 4)
    );
}

#[test]
fn a_short_row_is_read_as_far_as_it_goes_and_named() {
    let t = "available: 2 nodes (0-1)\nnode 0 cpus: 0\nnode 1 cpus: 1\nnode distances:\nnode 0 1\n0: 10 21\n1: 21\n";
    let p = parse_numactl(t).unwrap();
    assert_eq!(p.numa[0].distances.len(), 3);
    assert_eq!(p.issues.len(), 1);
    assert_eq!(p.issues[0].line, 7);
}

#[test]
fn text_that_is_no_numactl_is_refused() {
    assert!(parse_numactl("hello\n").is_err());
    assert!(!looks_like_numactl("node 0 is up", &["node 0 is up"]));
}

#[test]
fn hwloc2_memory_children_place_devices_under_the_package_node() {
    // hwloc 2.x layout (Hwloc.jl's PR #71 shows this shape): the NUMANode
    // is a leaf under the Package; the bridge under the Package is node 0's,
    // one under Machine is no node's.
    let t = "Machine (31GB total)\n  Package L#0\n    NUMANode L#0 (P#0 31GB)\n    L3 L#0 (12MB)\n      Core L#0\n        PU L#0 (P#0)\n        PU L#1 (P#4)\n    HostBridge\n      PCI 01:00.0 (3D)\n  HostBridge\n    PCI 72:00.0 (Network)\n      Net \"wlp114s0\"\n";
    let lines: Vec<&str> = t.lines().collect();
    assert!(looks_like_lstopo(t, &lines));
    let p = parse_lstopo(t).unwrap();
    let n = &p.numa[0];
    assert_eq!((n.nodes[0].cpus.as_str(), n.nodes[0].cpu_count), ("0,4", 2));
    assert_eq!(n.devices[0].numa_node, Some(0));
    assert_eq!(n.devices[0].kind, DeviceKind::Gpu);
    assert_eq!(n.devices[0].bus_id.as_deref(), Some("0000:01:00.0"));
    assert_eq!(n.devices[1].numa_node, None);
    assert_eq!(n.devices[1].kind, DeviceKind::Nic);
    assert_eq!(n.node_of("01:00.0").map(|x| x.0), Some(0));
}

#[test]
fn verbose_lstopo_gives_bus_ids_ids_and_classes() {
    let t = "Machine (P#0 total=1KB)\n  Package L#0 (P#0)\n    NUMANode L#0 (P#0 local=401040224KB total=401040224KB)\n    HostBridge L#6 (buses=0000:[3a-3b])\n      PCIBridge L#7 (busid=0000:3a:00.0 id=8086:2030 class=0604(PCIBridge))\n        PCI L#6 (busid=0000:3b:00.0 id=15b3:101b class=0207(InfiniBand) link=15.75GB/s)\n          OpenFabrics L#4 (NodeGUID=b859:9f03:00d4:27e2) \"mlx5_0\"\n";
    let p = parse_lstopo(t).unwrap();
    let d = &p.numa[0].devices[0];
    assert_eq!(d.bus_id.as_deref(), Some("0000:3b:00.0"));
    assert_eq!(d.pci_id.as_deref(), Some("15b3:101b"));
    assert_eq!(d.class.as_deref(), Some("InfiniBand"));
    assert_eq!((d.kind, d.numa_node), (DeviceKind::Rdma, Some(0)));
    assert_eq!(
        d.host_bridge.as_deref(),
        Some("HostBridge L#6 (buses=0000:[3a-3b])")
    );
    assert_eq!(p.numa[0].nodes[0].size_bytes, Some(401_040_224 << 10));
}
