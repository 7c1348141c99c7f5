//! Measurement, RDMA and PCIe evidence from the real captures: values
//! checked by hand against the transcript lines (with every unit
//! conversion), known problems, snapshots, and truncated copies.

use std::path::{Path, PathBuf};
use wire_report::render::answers::answers;

use wire_report::bundle::{Bundle, ProblemKind};
use wire_report::evidence::measurement::{
    Buffers, CopyEngine, Direction, Kind, Measurement, NOT_STATED, P2p, Statistic, Verification,
};
use wire_report::evidence::{self, IssueKind, Tool};

fn node(name: &str) -> Bundle {
    let mut v = wire_report::inputs::ingest(&[Path::new("captures").join(name)]).unwrap();
    assert_eq!(v.len(), 1);
    v.remove(0).bundle
}

/// The single cell printed on `line` of the file whose name contains
/// `file`, with the given statistic (and source/destination when given).
fn cell<'b>(
    b: &'b Bundle,
    file: &str,
    line: usize,
    stat: Statistic,
    pair: Option<(&str, &str)>,
) -> &'b Measurement {
    let found: Vec<&Measurement> = b
        .measurements
        .iter()
        .filter(|m| m.source.file.contains(file) && m.source.line == line && m.statistic == stat)
        .filter(|m| {
            pair.is_none_or(|(s, d)| m.src.as_deref() == Some(s) && m.dst.as_deref() == Some(d))
        })
        .collect();
    assert_eq!(
        found.len(),
        1,
        "cells at {file}:{line} {stat:?} {pair:?}: {found:#?}"
    );
    found[0]
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn p2p_bandwidth_latency_test_by_hand() {
    let b = node("rtx2080ti-2gpu-autodl");
    // line 16: "     0 541.84   5.71" in "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)"
    let m = cell(
        &b,
        "p2pBandwidth",
        16,
        Statistic::Avg,
        Some(("GPU0", "GPU1")),
    );
    assert!(close(m.bandwidth_bytes_per_s.unwrap(), 5.71e9));
    assert_eq!(
        (m.kind, m.p2p, m.direction),
        (Kind::P2pCopy, P2p::Disabled, Direction::Uni)
    );
    assert_eq!(m.as_printed, "5.71 GB/s");
    // line 20: P2P=Enabled, but "Device=0 CANNOT Access Peer Device=1": staged.
    let m = cell(
        &b,
        "p2pBandwidth",
        20,
        Statistic::Avg,
        Some(("GPU0", "GPU1")),
    );
    assert_eq!(m.p2p, P2p::NoPeerAccess);
    assert!(
        answers(m)[5].contains("falls back to staging through host memory"),
        "{}",
        answers(m)[5]
    );
    // Two NVLink pairs: within a pair P2P is on, across them the tool
    // says CANNOT Access Peer, and the P2P=Enabled figure is the staged one.
    let a = node("a100-pcie-4gpu-nv12-pairs");
    // line 36: "     0 1502.40 275.07  21.62  21.60 " (P2P=Enabled Writes).
    let within = cell(
        &a,
        "p2pBandwidth",
        36,
        Statistic::Avg,
        Some(("GPU0", "GPU1")),
    );
    assert!(close(within.bandwidth_bytes_per_s.unwrap(), 275.07e9));
    assert_eq!(within.p2p, P2p::Enabled);
    let across = cell(
        &a,
        "p2pBandwidth",
        36,
        Statistic::Avg,
        Some(("GPU0", "GPU2")),
    );
    assert!(close(across.bandwidth_bytes_per_s.unwrap(), 21.62e9));
    assert_eq!(across.p2p, P2p::NoPeerAccess);
    assert!(answers(across)[5].contains("cannot access each other as peers"));
    // line 32: "     0   1.33  14.76" in the P2P=Disabled latency GPU block (us).
    let m = cell(
        &b,
        "p2pBandwidth",
        32,
        Statistic::Avg,
        Some(("GPU0", "GPU1")),
    );
    assert!(close(m.latency_s.unwrap(), 14.76e-6));
    // Diagonal: a copy within one GPU.
    let m = cell(
        &b,
        "p2pBandwidth",
        16,
        Statistic::Avg,
        Some(("GPU0", "GPU0")),
    );
    assert_eq!(m.kind, Kind::D2d);
    // Bidirectional matrix, line 24: "     0 533.91   6.12".
    let m = cell(
        &b,
        "p2pBandwidth",
        24,
        Statistic::Avg,
        Some(("GPU0", "GPU1")),
    );
    assert_eq!(m.direction, Direction::Bi);
    assert_eq!(answers(m)[2], NOT_STATED);
    // Editor line numbers stripped: line 15 is " 15      0   2.59   2.31   1.85   1.86".
    let b = node("nvlink-4gpu-latency");
    let m = cell(
        &b,
        "p2pBandwidth",
        15,
        Statistic::Avg,
        Some(("GPU0", "GPU3")),
    );
    assert!(close(m.latency_s.unwrap(), 1.86e-6));
}

#[test]
fn nvbandwidth_by_hand() {
    let b = node("h100-8gpu-azure-ndv5");
    // line 25: "2    372.05    370.90       N/A    370.90    372.96 ..."
    // (printed GPU(row) -> GPU(column), but a read test: GPU2 read from GPU4,
    // so the data moved GPU4 -> GPU2); nvbandwidth reports medians.
    let m = cell(
        &b,
        "nvbandwidth",
        25,
        Statistic::Median,
        Some(("GPU4", "GPU2")),
    );
    assert!(close(m.bandwidth_bytes_per_s.unwrap(), 372.96e9));
    assert_eq!((m.copy_engine, m.kind), (CopyEngine::Ce, Kind::P2pCopy));
    assert_eq!(m.test, "device_to_device_memcpy_read_ce");
    let sum = cell(&b, "nvbandwidth", 32, Statistic::Sum, None);
    assert!(close(sum.bandwidth_bytes_per_s.unwrap(), 20785.58e9));
    // `<-`: "memcpy CE CPU(row) <- GPU(column)", line 30 col 3 = 26.63: GPU3 to CPU0.
    let b = node("rtx4090-8gpu");
    let m = cell(
        &b,
        "nvbandwidth",
        30,
        Statistic::Median,
        Some(("GPU3", "CPU0")),
    );
    assert_eq!(m.kind, Kind::D2h);
    assert!(close(m.bandwidth_bytes_per_s.unwrap(), 26.63e9));
    // Latency in ns, v0.10: line 11 " 0       N/A    826.42".
    let b = node("h100-8gpu-acceptance");
    let m = cell(
        &b,
        "nvbandwidth",
        11,
        Statistic::Median,
        Some(("GPU0", "GPU1")),
    );
    assert!(close(m.latency_s.unwrap(), 826.42e-9));
    assert_eq!(
        (m.copy_engine, m.direction),
        (CopyEngine::Sm, Direction::Bi)
    );
    // SM host-to-device on one A100.
    let b = node("a100-sxm4-1gpu");
    let m = cell(
        &b,
        "nvbandwidth",
        13,
        Statistic::Median,
        Some(("CPU0", "GPU0")),
    );
    assert_eq!((m.kind, m.copy_engine), (Kind::H2d, CopyEngine::Sm));
}

#[test]
fn nvbandwidth_json_synthetic_fixture() {
    // SYNTHETIC: shaped after the `-j` schema (nvbandwidth.testcases[].
    // bandwidth_matrix); no real `-j` transcript exists in the corpus.
    let text = r#"{ "nvbandwidth": { "testcases": [
        { "name": "device_to_device_memcpy_write_ce", "status": "passed",
          "bandwidth_description": "memcpy CE GPU(row) <- GPU(column) bandwidth GB/s",
          "bandwidth_matrix": [["N/A", "373.22"], ["372.05", "N/A"]], "sum": 745.27 },
        { "name": "host_to_device_memcpy_sm", "status": "waived" } ] } }"#;
    assert_eq!(evidence::detect(text), Some(Tool::NvbandwidthJson));
    let p = evidence::parse(Tool::NvbandwidthJson, text).unwrap();
    assert_eq!(p.measurements.len(), 2);
    let m = &p.measurements[0];
    // A write test: row 0 wrote into column 1, whatever the arrow prints.
    assert_eq!(
        (m.src.as_deref(), m.dst.as_deref()),
        (Some("GPU0"), Some("GPU1"))
    );
    assert!(close(m.bandwidth_bytes_per_s.unwrap(), 373.22e9));
    assert_eq!(p.notes.len(), 1);
}

#[test]
fn rocm_bandwidth_test_by_hand() {
    let b = node("mi210-4gpu-archer2");
    // Agents 0-3 are CPUs, 4-7 GPUs. Uni peak, row 4 col 5 = 42.239 (line 64).
    let m = cell(
        &b,
        "rocm-bandwidth",
        64,
        Statistic::Peak,
        Some(("GPU0", "GPU1")),
    );
    assert!(close(m.bandwidth_bytes_per_s.unwrap(), 42.239e9));
    assert_eq!(m.kind, Kind::P2pCopy);
    // Row 0 col 4 = 26.977 (line 56): CPU0 to GPU0.
    let m = cell(
        &b,
        "rocm-bandwidth",
        56,
        Statistic::Peak,
        Some(("CPU0", "GPU0")),
    );
    assert_eq!((m.kind, m.buffers), (Kind::H2d, Buffers::Mixed));
    // Per-size sweep: "1 MB  41.880  25.038  41.760  25.110" (line 22).
    let b = node("amd-instinct-8gpu-sweep");
    let row: Vec<&Measurement> = b
        .measurements
        .iter()
        .filter(|m| m.source.line == 22)
        .collect();
    assert_eq!(row.len(), 4); // avg and peak bandwidth, avg and min time
    let avg_bw = row
        .iter()
        .find(|m| m.statistic == Statistic::Avg && m.bandwidth_bytes_per_s.is_some())
        .unwrap();
    assert!(close(avg_bw.bandwidth_bytes_per_s.unwrap(), 25.038e9));
    let avg_t = row
        .iter()
        .find(|m| m.statistic == Statistic::Avg && m.latency_s.is_some())
        .unwrap();
    assert!(close(avg_t.latency_s.unwrap(), 41.88e-6));
    assert_eq!(avg_t.size_bytes, Some(1 << 20));
    let peak = cell(&b, "rocm-bandwidth", 22, Statistic::Peak, None);
    assert!(close(peak.bandwidth_bytes_per_s.unwrap(), 25.110e9));
    assert_eq!(
        (peak.kind, peak.src.as_deref(), peak.dst.as_deref()),
        (Kind::H2d, Some("CPU@agent0"), Some("GPU@agent4"))
    );
    assert_eq!(answers(peak)[2], "1048576 bytes (1 MiB)");
    // No P2P between the two MI50s: the GPU-to-GPU cells are N/A and absent.
    let b = node("mi50-2gpu");
    assert!(!b.measurements.iter().any(|m| m.kind == Kind::P2pCopy));
}

#[test]
fn transferbench_by_hand() {
    let b = node("amd-transferbench-htod");
    // "Transfer 0, 0.535 GB/s, 7.840 ms, 4194304 bytes, P0 -> D0:1 -> G0,"
    let m = cell(&b, "transferbench", 26, Statistic::Avg, None);
    assert!(close(m.bandwidth_bytes_per_s.unwrap(), 0.535e9));
    assert_eq!(
        (m.kind, m.buffers, m.copy_engine),
        (Kind::H2d, Buffers::Mixed, CopyEngine::Ce)
    );
    assert_eq!(m.size_bytes, Some(4_194_304));
    assert!(answers(m)[3].contains("no warm-up"), "{}", answers(m)[3]);
    // Iteration 001 paid the setup: 0.180 GB/s (line 29).
    let it = cell(&b, "transferbench", 29, Statistic::Single, None);
    assert!(close(it.bandwidth_bytes_per_s.unwrap(), 0.180e9));
    let b = node("amd-transferbench-iterations");
    let m = cell(&b, "transferbench", 2, Statistic::Avg, None);
    assert_eq!(
        (m.src.as_deref(), m.dst.as_deref(), m.copy_engine),
        (Some("GPU0"), Some("GPU1"), CopyEngine::Sm)
    );
    let b = node("mi350x-8gpu");
    let m = cell(
        &b,
        "transferbench",
        6,
        Statistic::Avg,
        Some(("GPU2", "GPU1")),
    );
    assert!(close(m.bandwidth_bytes_per_s.unwrap(), 53.446e9));
    assert_eq!(m.size_bytes, Some(268_435_456));
}

#[test]
fn perftest_units_converted_exactly() {
    let b = node("cx3-qdr-graph500");
    // ib_write_bw MB/sec: "8388608  20000  3665.51  3665.25  0.000458" (line 40). MB = 2^20.
    let m = cell(&b, "perftest-bw-004", 40, Statistic::Avg, None);
    assert!(close(
        m.bandwidth_bytes_per_s.unwrap(),
        3665.25 * 1_048_576.0
    ));
    assert_eq!(
        (m.kind, m.size_bytes, m.iterations),
        (Kind::RdmaWrite, Some(8_388_608), Some(20000))
    );
    assert_eq!(m.as_printed, "3665.25 MB/sec");
    assert_eq!(m.queue_depth, Some(128));
    assert!(answers(m)[0].contains("2^20"));
    // ib_write_lat: "2  20000  0.88  6.84  0.98 ..." t_typical (line 17).
    let m = cell(&b, "perftest-lat-001", 17, Statistic::Typical, None);
    assert!(close(m.latency_s.unwrap(), 0.98e-6));
    assert!(answers(m)[1].contains("half the round trip"));
    let m = cell(&b, "perftest-lat-004", 19, Statistic::Avg, None);
    assert_eq!(m.kind, Kind::RdmaAtomic);
    assert!(answers(m)[1].contains("round trip"));
    assert!(answers(m)[6].contains("CPU frequency"));
    // --report_gbits: "8388608  10000  81.02  80.96 ..." Gb/sec = 1.25e8 bytes/s.
    let b = node("a100-gdr-pod-client");
    let m = cell(&b, "perftest", 53, Statistic::Avg, None);
    assert!(close(
        m.bandwidth_bytes_per_s.unwrap(),
        80.96 * 125_000_000.0
    ));
    assert_eq!((m.buffers, m.qps), (Buffers::Device, Some(2)));
    assert!(
        answers(m)[5].contains("NVIDIA A100-SXM4-80GB"),
        "{}",
        answers(m)[5]
    );
    // New MiB/sec header.
    let b = node("rtx4080-gdr");
    let m = cell(&b, "perftest", 36, Statistic::Avg, None);
    assert!(close(
        m.bandwidth_bytes_per_s.unwrap(),
        14948.67 * 1_048_576.0
    ));
    assert!(answers(m)[5].starts_with("server side"));
    // "BW peak won't be measured": the 0.00 peak is not kept.
    let b = node("roce-cx5-proxmox");
    assert_eq!(b.measurements.len(), 1);
    assert_eq!(b.measurements[0].direction, Direction::Bi);
    assert!(close(
        b.measurements[0].bandwidth_bytes_per_s.unwrap(),
        98.02 * 125_000_000.0
    ));
    // Server and client pasted together: one table each.
    let b = node("ib-loopback-superbench");
    let sides: Vec<bool> = b
        .measurements
        .iter()
        .map(|m| answers(m)[5].starts_with("server"))
        .collect();
    assert_eq!(sides, [false, false, true, true]);
    // A fragment without its header: the verb is not known.
    let b = node("mi355x-8gpu-oci");
    assert!(b.measurements.iter().all(|m| m.kind == Kind::Rdma));
}

#[test]
fn nccl_tests_by_hand() {
    let b = node("a100-sxm4-8gpu-superbench");
    // "8589934592 2147483648 float sum 63896 134.44 235.26 N/A 63959 134.30 235.03 N/A" (line 50)
    let all: Vec<&Measurement> = b
        .measurements
        .iter()
        .filter(|m| m.source.file.contains("allreduce") && m.source.line == 50)
        .collect();
    assert_eq!(all.len(), 6);
    let busbw = all
        .iter()
        .find(|m| m.statistic == Statistic::Busbw && m.test.ends_with("out-of-place"))
        .unwrap();
    assert!(close(busbw.bandwidth_bytes_per_s.unwrap(), 235.26e9));
    assert_eq!(
        (busbw.kind, busbw.size_bytes),
        (Kind::Allreduce, Some(8_589_934_592))
    );
    assert_eq!(busbw.verification, Verification::NotVerified); // validation: 0
    assert_eq!(
        (busbw.warmup_iterations, busbw.iterations),
        (Some(5), Some(20))
    );
    let t = all
        .iter()
        .find(|m| m.latency_s.is_some() && m.test.ends_with("in-place"))
        .unwrap();
    assert!(close(t.latency_s.unwrap(), 63959e-6));
    let avg = b
        .measurements
        .iter()
        .find(|m| m.test == "allreduce Avg bus bandwidth")
        .unwrap();
    assert!(close(avg.bandwidth_bytes_per_s.unwrap(), 68.4048e9));
    assert!(b.measurements.iter().any(|m| m.kind == Kind::Broadcast));
    // Two nodes, 16 ranks, #wrong 0: verified, and the path crosses the network.
    let b = node("h100-xe9680-2node");
    let m = b
        .measurements
        .iter()
        .find(|m| m.size_bytes == Some(8))
        .unwrap();
    assert_eq!(m.verification, Verification::Checked { errors: 0 });
    assert!(
        answers(m)[5].contains("16 ranks on 2 nodes"),
        "{}",
        answers(m)[5]
    );
    // Two ranks: all-reduce and send/recv cannot be told apart; said so.
    let b = node("h100-roce-moc");
    assert!(b.transcripts.iter().any(|t| {
        t.notes
            .iter()
            .any(|n| n.text.contains("allreduce or sendrecv"))
    }));
}

#[test]
fn osu_by_hand() {
    let b = node("mi250-gcd-pairs");
    // "16777216  142235.39" after HIP_VISIBLE_DEVICES=0,1, D D: MB = 1e6.
    let m = cell(&b, "osu", 7, Statistic::Avg, None);
    assert!(close(m.bandwidth_bytes_per_s.unwrap(), 142235.39e6));
    assert_eq!(
        (m.src.as_deref(), m.dst.as_deref(), m.buffers),
        (Some("GPU0"), Some("GPU1"), Buffers::Device)
    );
    assert_eq!(m.copy_engine, CopyEngine::Sm); // HSA_ENABLE_SDMA=0
    let m = cell(&b, "osu", 14, Statistic::Avg, None);
    assert_eq!(m.dst.as_deref(), Some("GPU2"));
    let b = node("gh200-cscs");
    let m = b
        .measurements
        .iter()
        .find(|m| m.source.file.contains("latency") && m.size_bytes == Some(1))
        .unwrap();
    assert!(close(m.latency_s.unwrap(), 3.00e-6));
    assert_eq!(m.verification, Verification::Checked { errors: 0 });
    let m = b
        .measurements
        .iter()
        .find(|m| m.source.file.contains("bibw") && m.size_bytes == Some(4_194_304))
        .unwrap();
    assert_eq!(m.direction, Direction::Bi);
    assert!(close(m.bandwidth_bytes_per_s.unwrap(), 46437.18e6));
}

#[test]
fn rdma_devices_and_ports_by_hand() {
    let b = node("a100-8nic-hdr200-azure");
    let d = b.rdma.iter().find(|d| d.name == "mlx5_0").unwrap();
    assert_eq!(
        (d.ca_type.as_deref(), d.firmware.as_deref()),
        (Some("MT4124"), Some("20.41.1000"))
    );
    let p = &d.ports[0];
    // ibstat "Rate: 200" (Gb/s) merged with ibstatus "200 Gb/sec (4X HDR)".
    assert!(close(p.rate_bytes_per_s.unwrap(), 25e9));
    assert_eq!(
        (p.width.as_deref(), p.speed.as_deref()),
        (Some("4X"), Some("HDR"))
    );
    assert_eq!((p.active, p.link_up), (Some(true), Some(true)));
    assert!(
        b.problems
            .iter()
            .any(|x| x.kind == ProblemKind::ToolError && x.message.contains("ibpanic"))
    );
    // tmux borders removed; port 2 Ethernet, Down.
    let b = node("cx3-qdr-graph500");
    let p = &b.rdma[0].ports[1];
    assert_eq!(
        (p.port, p.active, p.link_layer.as_deref()),
        (2, Some(false), Some("Ethernet"))
    );
    assert!(close(b.rdma[0].ports[0].rate_bytes_per_s.unwrap(), 5e9)); // Rate: 40
    // ibv_devinfo -v: port 2 of mlx4_1 is POLLING at 4X 2.5 Gbps, GID[0].
    let b = node("mlx4-cx3-heioy");
    let d = b.rdma.iter().find(|d| d.name == "mlx4_1").unwrap();
    let p = d.ports.iter().find(|p| p.port == 2).unwrap();
    assert_eq!(
        (p.link_up, p.width.as_deref(), p.speed.as_deref()),
        (Some(false), Some("4X (2)"), Some("2.5 Gbps (1)"))
    );
    assert_eq!(p.gids[0].gid, "fe80:0000:0000:0000:7cfe:9003:00a5:95c2");
    assert_eq!(p.active_mtu_bytes, Some(4096));
    // show_gids: RoCE v2 GID with IPv4, and the last row with no netdev.
    let b = node("roce-cx5-proxmox");
    let g = &b.rdma[0].ports[0].gids[3];
    assert_eq!(
        (g.ipv4.as_deref(), g.version.as_deref(), g.netdev.as_deref()),
        (Some("192.168.6.132"), Some("v2"), Some("mce0"))
    );
    assert_eq!(b.rdma[1].ports[0].gids[0].netdev, None);
    let b = node("mlx5-cx4-4dev");
    assert_eq!(b.rdma[0].node_guid.as_deref(), Some("ec0d9a0300894f0b"));
    let b = node("aws-efa");
    assert_eq!(b.rdma[0].transport.as_deref(), Some("unspecified (4)"));
}

#[test]
fn pcie_links_by_hand() {
    let b = node("rtx3060-mobile-laptop");
    let l = &b.pcie[0];
    assert_eq!(
        (l.max_speed_gt_per_s, l.max_width_lanes),
        (Some(16.0), Some(16))
    );
    assert_eq!(
        (l.current_speed_gt_per_s, l.current_width_lanes),
        (Some(8.0), Some(8))
    );
    assert!(l.speed_downgraded && l.width_downgraded);
    assert!(
        l.name
            .as_deref()
            .unwrap()
            .contains("GeForce RTX 3060 Mobile / Max-Q"),
        "{:?}",
        l.name
    );
    let b = node("tesla-t4");
    let l = &b.pcie[0];
    assert_eq!(
        (l.current_speed_gt_per_s, l.current_width_lanes, l.numa_node),
        (Some(8.0), Some(16), Some(2))
    );
    assert!(!l.speed_downgraded && !l.width_downgraded);
    let b = node("rtx4090-tinygrad");
    assert!(b.pcie[0].link_hidden);
    let b = node("rtx4060ti-2gpu");
    let l = &b.pcie[0];
    assert_eq!(
        (l.max_width_lanes, l.current_width_lanes),
        (Some(8), Some(4))
    );
    assert_eq!(
        (
            l.max_generation,
            l.current_generation,
            l.host_max_generation
        ),
        (Some(4), Some(4), Some(4))
    );
    assert_eq!(l.name.as_deref(), Some("NVIDIA GeForce RTX 4060 Ti"));
    let b = node("maxwell-gpu");
    let l = &b.pcie[0];
    assert_eq!(
        (l.max_generation, l.max_width_lanes, l.current_width_lanes),
        (Some(2), Some(16), Some(8))
    );
}

/// The problems the real captures are known to carry, and no others.
#[test]
fn only_the_known_problems() {
    let expected: &[(&str, usize, ProblemKind)] = &[
        ("ibstat-004-a100", 137, ProblemKind::ToolError),
        // NCCL WARN NET/OFI Couldn't open AV (aws-ofi-nccl #24).
        ("nccl-info-014-mpirun", 15, ProblemKind::ToolError),
        // Out of bounds values, then #wrong out-of-place and in-place.
        ("allreduce-2x-gh200", 37, ProblemKind::ToolError),
        ("allreduce-2x-gh200", 29, ProblemKind::ToolError),
        ("allreduce-2x-gh200", 29, ProblemKind::ToolError),
        ("nvbandwidth-004-v0.7", 18, ProblemKind::ToolError),
        ("nvbandwidth-004-v0.7", 20, ProblemKind::ToolError),
        // ib_write_bw stopped by `Completion with error at client`.
        (
            "perftest-bw-019-ib-write-bw-a-host-mlx5_3",
            42,
            ProblemKind::ToolError,
        ),
        // Old format: Out of bounds values, then the `error` column's 1e+00
        // over the float tolerance out-of-place and in-place.
        ("allgather-8xV100-4GiB", 6, ProblemKind::ToolError),
        ("allgather-8xV100-4GiB", 5, ProblemKind::ToolError),
        ("allgather-8xV100-4GiB", 5, ProblemKind::ToolError),
        // An iWARP adapter without a performance agent: every counter
        // `N/A (no PMA)`, each line named unreadable.
        ("rdma-counters-004-grep-s", 4, ProblemKind::Parse),
        ("rdma-counters-004-grep-s", 5, ProblemKind::Parse),
        ("rdma-counters-004-grep-s", 6, ProblemKind::Parse),
        ("rdma-counters-004-grep-s", 7, ProblemKind::Parse),
        ("rdma-counters-004-grep-s", 8, ProblemKind::Parse),
        ("rdma-counters-004-grep-s", 9, ProblemKind::Parse),
        ("rdma-counters-004-grep-s", 10, ProblemKind::Parse),
        ("rdma-counters-004-grep-s", 11, ProblemKind::Parse),
    ];
    let mut found: Vec<(String, usize, ProblemKind)> = Vec::new();
    let wild = crate::captures::wild_files();
    for n in wire_report::inputs::ingest(&[PathBuf::from("captures")]).unwrap() {
        for p in n.bundle.problems {
            if wild.contains(&p.file) {
                continue; // captures::captures_wild_read_as_checked
            }
            if p.kind == ProblemKind::Truncated && crate::cut_captures::is_cut_capture(&p.file) {
                continue; // cut_captures::cut_captures_are_flagged_as_cut
            }
            found.push((p.file, p.line.unwrap_or(0), p.kind));
        }
    }
    assert_eq!(found.len(), expected.len(), "{found:#?}");
    for (f, line, kind) in expected {
        assert!(
            found
                .iter()
                .any(|(ff, l, k)| ff.contains(f) && l == line && k == kind),
            "missing {f}:{line} {kind:?} in {found:#?}"
        );
    }
}

/// One compact line per cell, so a change in any parsed number shows in review.
#[test]
fn evidence_snapshots() {
    for n in wire_report::inputs::ingest(&[PathBuf::from("captures")]).unwrap() {
        let b = &n.bundle;
        if b.measurements.is_empty() && b.rdma.is_empty() && b.pcie.is_empty() {
            continue;
        }
        let mut s = String::new();
        for m in &b.measurements {
            let file = Path::new(m.source.file.as_str())
                .file_name()
                .unwrap()
                .to_string_lossy();
            s.push_str(&format!(
                "{file}:{} {} {}->{} {:?} size={:?} {:?} bw={:?} lat={:?} `{}` p2p={:?} buf={:?} ce={:?} ver={:?}\n",
                m.source.line,
                m.kind.as_str(),
                m.src.as_deref().unwrap_or("-"),
                m.dst.as_deref().unwrap_or("-"),
                m.direction,
                m.size_bytes,
                m.statistic,
                m.bandwidth_bytes_per_s,
                m.latency_s,
                m.as_printed,
                m.p2p,
                m.buffers,
                m.copy_engine,
                m.verification,
            ));
        }
        // The questions of the first cell of each transcript, in full.
        let mut seen = std::collections::BTreeSet::new();
        let firsts: Vec<&Measurement> = b
            .measurements
            .iter()
            .filter(|m| seen.insert(m.source.file.clone()))
            .collect();
        crate::common::in_snapshots(|| {
            insta::assert_snapshot!(format!("measurements__evidence__{}", b.host.name), s);
            insta::assert_json_snapshot!(
                format!("measurements__evidence_detail__{}", b.host.name),
                serde_json::json!({ "first_cells": firsts, "rdma": b.rdma, "pcie": b.pcie, "problems": b.problems })
            );
        });
    }
}

/// A copy of one capture of each kind, cut in the middle of its results,
/// keeps what it had and reports where it stopped.
#[test]
fn truncated_copies_keep_partial_results_and_say_where_they_stop() {
    let cases: &[(&str, &str, usize)] = &[
        ("rtx3090-4gpu", "p2pBandwidth", 40),
        ("h100-8gpu-azure-ndv5", "nvbandwidth", 26),
        ("mi210-4gpu-archer2", "rocm-bandwidth", 66),
        ("amd-instinct-8gpu-sweep", "rocm-bandwidth", 25),
        ("mi350x-8gpu", "transferbench", 7),
        ("cx3-qdr-graph500", "perftest-bw-004", 30),
        ("cx3-qdr-graph500", "perftest-lat-001", 25),
        ("a100-sxm4-8gpu-superbench", "allreduce", 40),
        ("gh200-cscs", "osu-003", 10),
        ("a100-8nic-hdr200-azure", "ibstatus", 12),
        ("mlx4-cx3-heioy", "ibv-devinfo-003", 25),
        ("cx3-qdr-graph500", "ibstat", 20),
        ("roce-cx5-proxmox", "show-gids", 5),
        ("tesla-t4", "lspci", 24),
        ("rtx4060ti-2gpu", "nvidia-smi-q", 60),
    ];
    for (dir, file, keep) in cases {
        let path = std::fs::read_dir(Path::new("captures").join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().contains(file))
            .unwrap_or_else(|| panic!("{dir}/{file}"));
        let text = std::fs::read_to_string(&path).unwrap();
        let cut: String = text.lines().take(*keep).map(|l| format!("{l}\n")).collect();
        let tool = evidence::detect(&cut)
            .unwrap_or_else(|| panic!("{} no longer recognised", path.display()));
        let p = evidence::parse(tool, &cut).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let kept = p.measurements.len() + p.rdma.len() + p.pcie.len();
        assert!(kept > 0, "{}: nothing kept", path.display());
        let t = p.issues.iter().find(|i| i.kind == IssueKind::Truncated);
        let t = t.unwrap_or_else(|| {
            panic!(
                "{} cut at {keep}: no truncation reported ({:?})",
                path.display(),
                p.issues
            )
        });
        assert!(
            t.line <= *keep,
            "{}: reported line {} past the cut",
            path.display(),
            t.line
        );
    }
}
