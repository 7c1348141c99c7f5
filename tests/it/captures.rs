//! Every real transcript in `captures/` parses with no problem, its topology
//! is snapshot-tested, and chosen cells are checked by hand against the
//! transcript text.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use wire_report::bundle::Bundle;
use wire_report::evidence::topology::{CpuRange, DeviceKind, LinkClass, Topology};
use wire_report::evidence::{self, Tool};
use wire_report::inputs::NodeBundle;

/// The nodes whose captures include a topology transcript.
fn nodes() -> Vec<NodeBundle> {
    wire_report::inputs::ingest(&[PathBuf::from("captures")])
        .expect("captures/ exists")
        .into_iter()
        .filter(|n| !n.bundle.topology.is_empty())
        .collect()
}

fn node(name: &str) -> Bundle {
    let dir = Path::new("captures").join(name);
    let mut v = wire_report::inputs::ingest(&[dir]).unwrap();
    assert_eq!(v.len(), 1);
    v.remove(0).bundle
}

fn class(t: &Topology, a: &str, b: &str) -> LinkClass {
    t.link(a, b)
        .unwrap_or_else(|| panic!("no link {a}-{b}"))
        .class
}

fn code(t: &Topology, a: &str, b: &str) -> String {
    t.link(a, b).unwrap().code.clone().unwrap_or_default()
}

#[test]
fn every_topology_capture_parses_with_no_problem() {
    let nodes = nodes();
    assert!(
        nodes.len() >= 20,
        "expected the shipped captures, found {}",
        nodes.len()
    );
    for n in &nodes {
        assert!(
            n.bundle.problems.is_empty(),
            "{}: {:#?}",
            n.bundle.host.name,
            n.bundle.problems
        );
        assert!(n.parsed() >= 1, "{} parsed nothing", n.bundle.host.name);
        assert!(
            !n.bundle.topology.is_empty(),
            "{} has an empty topology",
            n.bundle.host.name
        );
    }
}

#[test]
fn every_capture_is_listed_in_sources_and_every_listing_exists() {
    let tsv = std::fs::read_to_string("captures/SOURCES.tsv").unwrap();
    let mut lines = tsv.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("file\tshared_file\tsource")
    );
    let listed: BTreeSet<String> = lines
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect();
    let mut present = BTreeSet::new();
    for e in walkdir::WalkDir::new("captures") {
        let e = e.unwrap();
        if e.file_type().is_file() && e.file_name() != "SOURCES.tsv" {
            let rel = e.path().strip_prefix("captures").unwrap();
            present.insert(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    assert_eq!(listed, present, "captures/SOURCES.tsv and captures/ differ");
    for l in tsv.lines().skip(1) {
        let cols: Vec<&str> = l.split('\t').collect();
        assert!(
            cols.len() >= 4 && !cols[2].is_empty(),
            "no source for {}",
            cols[0]
        );
    }
}

#[test]
fn detection_uses_content_not_names() {
    for n in wire_report::inputs::ingest(&[PathBuf::from("captures")]).unwrap() {
        for t in &n.bundle.transcripts {
            let text = std::fs::read_to_string(&t.path).unwrap();
            assert_eq!(evidence::detect(&text), Some(t.tool), "{}", t.path);
            // The same bytes under a meaningless name are still recognised.
            let mut b = Bundle::new(n.bundle.host.clone());
            b.absorb(wire_report::ingest::read_transcript(
                "x.dat",
                text.as_bytes(),
            ));
            assert_eq!(b.transcripts.len(), 1, "{}", t.path);
        }
    }
}

#[test]
fn topology_snapshots() {
    for n in nodes() {
        crate::common::in_snapshots(|| {
            insta::assert_json_snapshot!(
                format!("captures__{}", n.bundle.host.name),
                n.bundle.topology
            );
        });
    }
}

// ---- Hand-checked against the transcript text --------------------------

#[test]
fn dgx1_p100_old_soc_legend_and_mangled_header() {
    // Header line lost its tabs ("GPU0GPU1...mlx5_0"); GPU0 row:
    // "GPU0  X  NV1 NV1 NV1 NV1 SOC SOC SOC PIX SOC PHB SOC 1-1".
    let b = node("dgx1-p100-8gpu-4nic");
    let t = &b.topology;
    assert_eq!(t.gpus().count(), 8);
    assert_eq!(class(t, "GPU0", "GPU4"), LinkClass::DirectLink);
    assert_eq!(code(t, "GPU0", "GPU5"), "SOC");
    assert_eq!(class(t, "GPU0", "GPU5"), LinkClass::CrossSocket);
    // Column order mlx5_0, mlx5_2, mlx5_1, mlx5_3 -> NIC0..NIC3.
    assert_eq!(t.device("NIC1").unwrap().name.as_deref(), Some("mlx5_2"));
    assert_eq!(class(t, "GPU0", "NIC0"), LinkClass::PcieSwitch); // PIX
    assert_eq!(class(t, "GPU0", "NIC2"), LinkClass::PcieHost); // PHB
    assert_eq!(
        t.device("GPU7").unwrap().cpu_affinity,
        Some(vec![CpuRange { first: 1, last: 1 }])
    );
}

#[test]
fn a100_four_socket_nic_legend_and_numa() {
    let b = node("a100-sxm4-8gpu-4socket-3nic");
    let t = &b.topology;
    assert_eq!(t.link("GPU3", "GPU6").unwrap().nvlinks, Some(12));
    assert_eq!(code(t, "GPU2", "NIC1"), "NODE");
    assert_eq!(class(t, "GPU2", "NIC1"), LinkClass::PcieHost);
    assert_eq!(class(t, "GPU2", "NIC2"), LinkClass::PcieSwitch); // PXB
    assert_eq!(class(t, "GPU6", "NIC0"), LinkClass::CrossSocket);
    assert_eq!(t.device("NIC2").unwrap().name.as_deref(), Some("mlx5_2"));
    let g6 = t.device("GPU6").unwrap();
    assert_eq!(g6.numa_node, Some(3));
    assert_eq!(
        g6.cpu_affinity,
        Some(vec![
            CpuRange {
                first: 60,
                last: 79
            },
            CpuRange {
                first: 140,
                last: 159
            }
        ])
    );
}

#[test]
fn h800_affinity_that_ran_into_the_numa_column_is_split() {
    // "0-45,92-1370" is "0-45,92-137" then NUMA "0".
    let b = node("h800-8gpu-10nic");
    let t = &b.topology;
    let g0 = t.device("GPU0").unwrap();
    assert_eq!(g0.numa_node, Some(0));
    assert_eq!(
        g0.cpu_affinity.as_ref().unwrap()[1],
        CpuRange {
            first: 92,
            last: 137
        }
    );
    assert_eq!(g0.gpu_numa_node, None); // N/A
    assert_eq!(t.device("GPU4").unwrap().numa_node, Some(1));
    assert_eq!(
        t.device("NIC9").unwrap().name.as_deref(),
        Some("mlx5_stor_0")
    );
    assert_eq!(code(t, "GPU0", "NIC1"), "PIX");
    assert_eq!(class(t, "GPU0", "NIC0"), LinkClass::CrossSocket);
    assert_eq!(
        t.devices
            .iter()
            .filter(|d| d.kind == DeviceKind::Nic)
            .count(),
        10
    );
}

#[test]
fn b300_bonded_nics_and_gpu_numa_column() {
    let b = node("b300-8gpu-8nic-bond");
    let t = &b.topology;
    assert_eq!(
        t.device("NIC7").unwrap().name.as_deref(),
        Some("mlx5_bond_7")
    );
    assert_eq!(t.link("GPU0", "GPU7").unwrap().nvlinks, Some(18));
    assert_eq!(class(t, "GPU5", "NIC5"), LinkClass::PcieSwitch);
    assert_eq!(class(t, "GPU5", "NIC0"), LinkClass::CrossSocket);
    assert_eq!(t.device("GPU4").unwrap().numa_node, Some(1));
}

#[test]
fn h100_strided_affinity_and_unordered_numa_nodes() {
    let b = node("h100-4gpu-nv6-4nic");
    let t = &b.topology;
    let g0 = t.device("GPU0").unwrap();
    assert_eq!(g0.numa_node, Some(3));
    assert_eq!(g0.cpu_affinity.as_ref().unwrap().len(), 4); // 6,14,22,30
    assert_eq!(t.device("GPU2").unwrap().numa_node, Some(7));
    assert_eq!(class(t, "GPU3", "NIC3"), LinkClass::PcieSwitch);
}

#[test]
fn rtx_a6000_bridge_pair_and_its_nvlink_status_merge() {
    let b = node("rtx-a6000-3gpu-nvlink-bridge");
    let t = &b.topology;
    assert_eq!(b.transcripts.len(), 2);
    assert_eq!(code(t, "GPU0", "GPU1"), "NV4");
    assert_eq!(class(t, "GPU0", "GPU2"), LinkClass::PcieHost); // NODE
    assert_eq!(
        t.device("GPU2").unwrap().name.as_deref(),
        Some("NVIDIA RTX A6000")
    );
    assert_eq!(t.device("GPU0").unwrap().numa_node, Some(0)); // from topo -m
    let gpu0_active = t
        .nvlink
        .iter()
        .filter(|p| p.gpu == "GPU0" && p.active)
        .count();
    assert_eq!(gpu0_active, 4);
    let gpu2: Vec<_> = t.nvlink.iter().filter(|p| p.gpu == "GPU2").collect();
    assert_eq!(gpu2.len(), 1);
    assert!(!gpu2[0].active && gpu2[0].link.is_none());
    assert_eq!(t.nvlink[0].rate_bytes_per_s, Some(14.062e9));
}

#[test]
fn h100_pcie_nvlink_status_counts_inactive_links() {
    let b = node("h100-pcie-2gpu-nvlink-bridge");
    let t = &b.topology;
    let inactive = t
        .nvlink
        .iter()
        .filter(|p| p.gpu == "GPU1" && !p.active)
        .count();
    assert_eq!(inactive, 6);
    assert_eq!(t.nvlink.iter().filter(|p| p.gpu == "GPU1").count(), 18);
}

#[test]
fn p2p_status_codes_per_pair() {
    let b = node("rtx2080ti-2gpu-autodl");
    let t = &b.topology;
    assert_eq!(class(t, "GPU0", "GPU1"), LinkClass::PcieSwitch); // PIX
    assert_eq!(t.p2p.len(), 2);
    assert!(t.p2p.iter().all(|c| c.status == "NS" && !c.supported));
    let b = node("l4-2gpu-p2p-cns");
    assert!(b.topology.p2p.iter().all(|c| c.status == "CNS"));
    let b = node("rtx5060ti-5gpu-epyc");
    assert_eq!(b.topology.p2p.len(), 20);
    assert!(b.topology.p2p.iter().all(|c| c.supported));
    assert_eq!(class(&b.topology, "GPU3", "GPU4"), LinkClass::PcieHost); // PHB
}

#[test]
fn rocm_two_xgmi_hives_across_sockets() {
    let b = node("amd-8gpu-two-xgmi-hives");
    let t = &b.topology;
    let l = t.link("GPU1", "GPU2").unwrap();
    assert_eq!(
        (l.class, l.xgmi_hops, l.weight),
        (LinkClass::DirectLink, Some(1), Some(15))
    );
    let l = t.link("GPU3", "GPU4").unwrap();
    assert_eq!(l.code.as_deref(), Some("PCIE"));
    assert_eq!(
        (l.class, l.pcie_hops, l.weight),
        (LinkClass::CrossSocket, Some(3), Some(72))
    );
    assert_eq!(t.device("GPU5").unwrap().numa_node, Some(1));
}

#[test]
fn rocm_numa_only_view_and_space_indexed_gpus() {
    let b = node("amd-8gpu-8numa");
    assert_eq!(b.topology.device("GPU0").unwrap().numa_node, Some(3));
    assert_eq!(b.topology.device("GPU7").unwrap().numa_node, Some(4));
    let b = node("mi210-4gpu-archer2");
    assert_eq!(b.topology.device("GPU2").unwrap().numa_node, Some(2));
    assert_eq!(class(&b.topology, "GPU0", "GPU3"), LinkClass::DirectLink);
}

#[test]
fn rocm_nodes_bandwidth_in_megabytes_per_second() {
    let b = node("mi250-8gcd-nodesbw");
    let t = &b.topology;
    // "GPU0 N/A 50000-200000 ..." : MB/s, 1 MB = 1e6 bytes.
    let l = t.link("GPU0", "GPU1").unwrap();
    assert_eq!(l.min_bandwidth_bytes_per_s, Some(50_000e6));
    assert_eq!(l.max_bandwidth_bytes_per_s, Some(200_000e6));
    assert_eq!(l.class, LinkClass::DirectLink);
    assert_eq!(class(t, "GPU0", "GPU3"), LinkClass::Unknown); // 0-0: no direct XGMI
}

#[test]
fn amd_smi_tables_by_bus_id() {
    let b = node("mi300x-8gpu-amdsmi");
    let t = &b.topology;
    assert_eq!(
        t.device("GPU3").unwrap().pci_bus_id.as_deref(),
        Some("0000:5c:00.0")
    );
    let l = t.link("GPU0", "GPU7").unwrap();
    assert_eq!(
        (l.class, l.xgmi_hops, l.weight),
        (LinkClass::DirectLink, Some(1), Some(15))
    );
    assert_eq!(l.max_bandwidth_bytes_per_s, Some(50_000e6));
    assert_eq!(t.p2p.len(), 56);
    // The blog capture stops after the WEIGHT table: no link type, so no class.
    let b = node("mi300x-8gpu-amdsmi-blog");
    let l = b.topology.link("GPU0", "GPU1").unwrap();
    assert_eq!(
        (l.class, l.code.clone(), l.weight),
        (LinkClass::Unknown, None, Some(15))
    );
    // MI355X: every table, no blank separators, weight 0.
    let b = node("mi355x-8gpu-oci");
    let l = b.topology.link("GPU6", "GPU7").unwrap();
    assert_eq!((l.class, l.weight), (LinkClass::DirectLink, Some(0)));
    assert!(
        b.transcripts[0]
            .notes
            .iter()
            .any(|n| n.text.starts_with("CACHE COHERANCY TABLE"))
    );
}

#[test]
fn detects_each_tool() {
    let cases = [
        ("l4-2gpu-cross-numa", Tool::NvidiaSmiTopo),
        ("l4-2gpu-p2p-cns", Tool::NvidiaSmiP2p),
        ("gb200-nvl", Tool::NvidiaSmiNvlink),
        ("mi300a-4apu", Tool::RocmSmiTopo),
        ("mi355x-8gpu-oci", Tool::AmdSmiTopology),
    ];
    for (n, tool) in cases {
        assert_eq!(node(n).transcripts[0].tool, tool, "{n}");
    }
}

#[test]
fn no_orphaned_snapshots() {
    let names: BTreeSet<String> = nodes()
        .into_iter()
        .map(|n| format!("captures__{}.snap", n.bundle.host.name))
        .collect();
    for e in std::fs::read_dir("tests/snapshots").unwrap() {
        let f = e.unwrap().file_name().to_string_lossy().into_owned();
        if f.starts_with("captures__") {
            assert!(
                names.contains(&f),
                "tests/snapshots/{f} has no capture node; delete it"
            );
        }
    }
}
