//! Every real transcript in `captures/` parses with no problem, its topology
//! is snapshot-tested, and chosen cells are checked by hand against the
//! transcript text.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use wire_report::render::answers::answers;

use wire_report::bundle::{Bundle, ProblemKind};
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
    let wild = wild_files();
    for n in &nodes {
        // The captures-wild pastes are cut and damaged on purpose; their
        // problems are listed in `captures_wild_read_as_checked`.
        // A capture cut short is flagged, and only that (see
        // `cut_captures::cut_captures_are_flagged_as_cut`).
        let problems: Vec<_> = n
            .bundle
            .problems
            .iter()
            .filter(|p| !wild.contains(&p.file))
            .filter(|p| {
                !(p.kind == ProblemKind::Truncated && crate::cut_captures::is_cut_capture(&p.file))
            })
            .collect();
        assert!(
            problems.is_empty(),
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

/// The captures copied from the team's `captures-wild/` set (pasted
/// transcripts as found in issues and notes), as `captures/<node>/<file>`
/// paths; their expectations are in [`captures_wild_read_as_checked`].
pub fn wild_files() -> BTreeSet<String> {
    std::fs::read_to_string("captures/SOURCES.tsv")
        .unwrap()
        .lines()
        .skip(1)
        .filter_map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            (c.len() > 1 && c[1].starts_with("captures-wild/"))
                .then(|| format!("captures/{}", c[0]))
        })
        .collect()
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
            // A paste of several commands is read block by block; a plain
            // transcript is one block, recognised whole.
            if t.blocks.len() == 1 {
                let block_text: String = text
                    .lines()
                    .skip(t.blocks[0].first_line - 1)
                    .take(t.blocks[0].last_line + 1 - t.blocks[0].first_line)
                    .map(|l| format!("{}\n", evidence::scan::strip_prefixes(l)))
                    .collect();
                assert_eq!(evidence::detect(&block_text), Some(t.tool), "{}", t.path);
            }
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

/// Every NCCL/RCCL INFO log's facts (the bundle's `nccl` section) and
/// how its lines were accounted, one snapshot per node.
#[test]
fn nccl_snapshots() {
    let all = wire_report::inputs::ingest(&[PathBuf::from("captures")]).unwrap();
    let mut seen = 0;
    for n in all.iter().filter(|n| !n.bundle.nccl.is_empty()) {
        seen += 1;
        let lines: Vec<_> = n
            .bundle
            .transcripts
            .iter()
            .map(|t| (t.path.as_str(), t.tool.as_str(), &t.lines))
            .collect();
        crate::common::in_snapshots(|| {
            insta::assert_json_snapshot!(
                format!("nccl__{}", n.bundle.host.name),
                serde_json::json!({ "nccl": n.bundle.nccl, "lines": lines, "problems": n.bundle.problems })
            );
        });
    }
    assert!(seen >= 17, "{seen} nodes with an NCCL log");
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
    // The blog capture stops after the WEIGHT table: no link type, but KFD
    // weighs one xGMI hop 15, so the class comes from the weight.
    let b = node("mi300x-8gpu-amdsmi-blog");
    let l = b.topology.link("GPU0", "GPU1").unwrap();
    assert_eq!(
        (l.class, l.code.clone(), l.weight),
        (LinkClass::DirectLink, None, Some(15))
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

/// A captures-wild node: its name, the tool it reads as, how many facts,
/// its problems (line, kind).
type Wild = (
    &'static str,
    Option<&'static str>,
    usize,
    &'static [(usize, &'static str)],
);

/// What each `captures-wild/` node reads as (checked by eye against each
/// transcript): node, tool, facts, problems (line, kind).
const WILD_EXPECTED: &[Wild] = &[
    // Beside the wild run (3 cells): the same comment's topology (2
    // GPUs, 1 link) and its node-1 run (2 cells), cut at line 20.
    (
        "p100-pcie-gearshifft",
        Some("bandwidth-test"),
        8,
        &[(20, "truncated")],
    ),
    ("a100-80gb-pcie-dell", Some("bandwidth-test"), 4, &[]),
    ("cx5-rdma0-proxmox-ceph", Some("ibstat"), 1, &[]),
    ("cx7-hdr200-one-port", Some("ibstatus"), 1, &[]),
    ("cx4-vpi-rdma-manual", Some("ibstat"), 2, &[]),
    ("cx6-irdma-versity-h1", Some("ibv-devinfo"), 4, &[]),
    ("hiroce-mlx5-bond", Some("show-gids"), 2, &[]),
    ("cx7-4nic-lnk-grep", Some("lspci"), 4, &[]),
    (
        "rtx5090-2gpu-nccl-failure",
        Some("nccl-tests"),
        0,
        &[(16, "truncated"), (11, "tool-error")],
    ),
    ("rtx5090-1gpu-alltoall", Some("nccl-tests"), 7, &[]),
    (
        "gb200-oke-mnnvl",
        Some("nccl-tests"),
        199,
        &[(2, "truncated")],
    ),
    (
        "h100-8gpu-nvbandwidth-sm",
        Some("nvbandwidth"),
        16,
        &[(1, "truncated"), (9, "truncated")],
    ),
    ("tesla-m2090", Some("nvidia-smi-q"), 1, &[]),
    ("dgx1-v100-4nic", Some("nvidia-smi-topo"), 78, &[]),
    ("rtx4090-8gpu-2nic", Some("nvidia-smi-topo"), 55, &[]),
    ("nv12-8gpu-10nic-epyc", Some("nvidia-smi-topo"), 171, &[]),
    (
        "dgx1-v100-32gb",
        Some("nvidia-smi-nvlink"),
        2,
        &[(11, "truncated")],
    ),
    ("a100-sxm4-80gb-azure-hc", Some("nvidia-smi-nvlink"), 1, &[]),
    (
        "hgx-h100-nvlink-remote",
        Some("nvidia-smi-nvlink"),
        2,
        &[(24, "parse")],
    ),
    // Pasted without its title line: cut at the start (line 1).
    ("osu-bw-rdma-fragment", Some("osu"), 23, &[(1, "truncated")]),
    ("gh200-eessi-2node", Some("osu"), 46, &[]),
    ("ppu-16-topo", Some("ppu-smi-topo"), 16, &[]),
    // Only one matrix, without the sample's banner: cut at the start.
    (
        "k80-8gpu",
        Some("p2p-bandwidth-latency-test"),
        64,
        &[(1, "truncated")],
    ),
    ("cx7-ndr-ib-read", Some("perftest"), 2, &[]),
    ("soft-roce-rxe2-ipv6", Some("perftest"), 1, &[]),
    ("soft-roce-rxe0-two-nodes", Some("perftest"), 14, &[]),
    (
        "radeon-pro-vii-2gpu",
        Some("rocm-bandwidth-test"),
        0,
        // Line 38, the last, is row 0 cut mid-row (2 of 3 cells).
        &[(38, "parse"), (38, "truncated")],
    ),
    ("mi300a-2apu-apptainer", Some("rocm-smi-topo"), 3, &[]),
    (
        "transferbench-scaling-preset",
        Some("transferbench"),
        72,
        &[(19, "truncated")],
    ),
];

/// Every capture from `captures-wild/` (real pastes from issues and notes):
/// what it reads as today, and the problems it raises, per node. A file
/// that reads as `None` is NOT read yet (a tool or variant not supported:
/// bandwidthTest, `nvlink --status` without UUIDs, `nvlink -R`, header-less
/// fragments, a glued perftest row...); its problem says why. Facts count
/// devices, links, cells, adapters and PCIe links.
#[test]
fn captures_wild_read_as_checked() {
    let expected = WILD_EXPECTED;
    let listed: BTreeSet<String> = wild_files()
        .iter()
        .map(|f| f.split('/').nth(1).unwrap().to_string())
        .collect();
    assert_eq!(
        listed.len(),
        expected.len(),
        "one expectation per wild node"
    );
    for (name, tool, facts, problems) in expected {
        assert!(listed.contains(*name), "{name} is not a captures-wild node");
        let b = node(name);
        assert_eq!(
            b.transcripts.first().map(|t| t.tool.as_str()),
            *tool,
            "{name}"
        );
        let n = b.topology.devices.len()
            + b.topology.links.len()
            + b.measurements.len()
            + b.rdma.len()
            + b.pcie.len();
        assert_eq!(n, *facts, "{name}");
        let got: Vec<(usize, String)> = b
            .problems
            .iter()
            .map(|p| {
                let kind = serde_json::to_value(p.kind).unwrap();
                (p.line.unwrap_or(0), kind.as_str().unwrap().to_string())
            })
            .collect();
        let want: Vec<(usize, String)> =
            problems.iter().map(|(l, k)| (*l, k.to_string())).collect();
        assert_eq!(got, want, "{name}");
    }
}

/// Values read from captures-wild files, each checked by eye against the
/// line of the transcript named in the comment.
#[test]
fn captures_wild_values_checked_by_hand() {
    let find = |name: &str, printed: &str| {
        let b = node(name);
        b.measurements
            .into_iter()
            .find(|m| m.as_printed == printed)
            .unwrap_or_else(|| panic!("{name}: no `{printed}`"))
    };
    // nccl-tests-004 line 11: "33554432 8388608 float none -1 19.56 1715.44
    // 0.00 0 0.78 43046.10 0.00 N/A": in-place algbw 43046.10 GB/s, 32 MiB,
    // after a "[sudo] password for m2:" line.
    let m = find("rtx5090-1gpu-alltoall", "43046.10 GB/s");
    assert_eq!((m.source.line, m.size_bytes), (11, Some(33_554_432)));
    assert_eq!(m.bandwidth_bytes_per_s, Some(43046.10e9));
    // osu-004 line 59: "4194304  43436.60" in the osu_bibw table (MB = 1e6).
    let m = find("gh200-eessi-2node", "43436.60 MB/s");
    assert_eq!((m.source.line, m.size_bytes), (59, Some(4_194_304)));
    assert!((m.bandwidth_bytes_per_s.unwrap() - 43436.60e6).abs() < 1.0);
    // perftest-bw-002 line 24: "65536 1000 328.64 328.61 0.626777" in Gb/sec.
    let m = find("cx7-ndr-ib-read", "328.61 Gb/sec");
    assert_eq!((m.source.line, m.size_bytes), (24, Some(65_536)));
    assert!((m.bandwidth_bytes_per_s.unwrap() - 328.61e9 / 8.0).abs() < 1.0);
    // perftest-bw-004 line 31 (dedented, server side): BW peak 0.00 is not a
    // measurement, average 6.19 Gb/sec is.
    let m = find("soft-roce-rxe2-ipv6", "6.19 Gb/sec");
    assert_eq!(m.source.line, 31);
    // ibstat-002: CA 'rdma0' (renamed by udev) line 2, Rate 100 (Gb/s) line 12.
    let b = node("cx5-rdma0-proxmox-ceph");
    assert_eq!(b.rdma[0].name, "rdma0");
    assert_eq!(b.rdma[0].ports[0].rate_bytes_per_s, Some(12.5e9));
    // ibv-devinfo-002: `ibv_devinfo -v -l` lists 4 HCAs (lines 2-6), then a
    // prompt and `ibv_devinfo -v -d mlx5_0` with one port.
    let b = node("cx6-irdma-versity-h1");
    let names: Vec<&str> = b.rdma.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["mlx5_0", "mlx5_1", "irdma0", "irdma1"]);
    assert_eq!(b.rdma[0].ports.len(), 1);
    assert_eq!(b.transcripts[0].blocks.len(), 1);
    // p2pBandwidthLatencyTest-002, the bidirectional matrix alone: line 3
    // "0 173.93 22.20 ...", GPU0<->GPU1 22.20 GB/s.
    let b = node("k80-8gpu");
    let m = b
        .measurements
        .iter()
        .find(|m| m.source.line == 3 && m.dst.as_deref() == Some("GPU1"))
        .unwrap();
    assert_eq!(
        (m.src.as_deref(), m.as_printed.as_str()),
        (Some("GPU0"), "22.20 GB/s")
    );
    // perftest-lat-002 line 26: t_stdev and the 99% percentile are glued
    // ("2465.901216.65"); the row is read whole, both values cut apart at
    // perftest's two decimals, and nothing on it is a problem.
    let m = find("soft-roce-rxe0-two-nodes", "453.06 usec");
    assert_eq!(m.source.line, 26);
    for printed in ["2465.90 usec", "1216.65 usec"] {
        assert_eq!(find("soft-roce-rxe0-two-nodes", printed).source.line, 26);
    }
    assert!(
        node("soft-roce-rxe0-two-nodes")
            .problems
            .iter()
            .all(|p| p.line != Some(26))
    );
    // osu-002 line 25, no title line: "4194304 9170.23" MB/s.
    let m = find("osu-bw-rdma-fragment", "9170.23 MB/s");
    assert_eq!((m.source.line, m.size_bytes), (25, Some(4_194_304)));
    assert!(m.test.contains("not stated"));
    // nvlink-status-002, no UUIDs: GPU 0 has 6 links at 25.781 GB/s
    // (lines 4-9); GPUs 1-6 were snipped by the author.
    let b = node("dgx1-v100-32gb");
    let gpu0: Vec<_> = b
        .topology
        .nvlink
        .iter()
        .filter(|p| p.gpu == "GPU0")
        .collect();
    assert_eq!(gpu0.len(), 6);
    assert!(gpu0.iter().all(|p| p.rate_bytes_per_s == Some(25.781e9)));
    // The `[snip]` (line 11) is flagged as a cut.
    assert!(
        b.problems
            .iter()
            .any(|p| p.line == Some(11) && p.kind == ProblemKind::Truncated)
    );
    // nccl-tests-004: `sudo ./build/./alltoall_perf` (line 2) names the
    // collective the single-GPU numbers cannot tell.
    let m = find("rtx5090-1gpu-alltoall", "43046.10 GB/s");
    assert_eq!(m.kind.as_str(), "alltoall");
    // nccl-tests-002 line 11: "Test NCCL failure common.cu:392" is the
    // tool's own error, not only "no rows".
    let b = node("rtx5090-2gpu-nccl-failure");
    assert!(
        b.problems
            .iter()
            .any(|p| p.line == Some(11) && p.message.contains("common.cu:392"))
    );
    // nvidia-smi-q-002 run as `nvidia-smi -i 0 -q` (line 1): one GPU of
    // the two attached, on purpose: not a cut.
    assert!(node("tesla-m2090").problems.is_empty());
    // ibv-devinfo-002 line 133: "phys_state: LINK_UP (5)" is link up.
    assert_eq!(
        node("cx6-irdma-versity-h1").rdma[0].ports[0].link_up,
        Some(true)
    );
    // nccl-tests-006, `kubectl logs --tail` without the table header: line
    // 34 "34359738368 8589934592 float sum -1 70981 484.07 847.12 0 ..."
    // is read under the standard columns (and the cut is flagged).
    let m = find("gb200-oke-mnnvl", "847.12 GB/s");
    assert_eq!((m.source.line, m.size_bytes), (34, Some(34_359_738_368)));
    assert!(
        node("gb200-oke-mnnvl")
            .problems
            .iter()
            .any(|p| p.line == Some(2))
    );
    // bandwidthTest-002 (MB/s release) line 11 "33554432 12150.7": one
    // printed MB/s is 1.024e6 bytes/s (1024*bytes/(ms*2^20) in its source);
    // line 21 device to device 443837.7 counts every byte twice.
    let m = find("p100-pcie-gearshifft", "12150.7 MB/s");
    assert_eq!((m.source.line, m.size_bytes), (11, Some(33_554_432)));
    assert!((m.bandwidth_bytes_per_s.unwrap() - 12150.7 * 1.024e6).abs() < 1.0);
    let m = find("p100-pcie-gearshifft", "443837.7 MB/s");
    assert!(answers(&m)[1].contains("twice"));
    // bandwidthTest-004: two runs; pageable H2D 3.3 GB/s at line 31.
    let m = find("a100-80gb-pcie-dell", "3.3 GB/s");
    assert_eq!(m.source.line, 31);
    assert_eq!(m.bandwidth_bytes_per_s, Some(3.3e9));
}
