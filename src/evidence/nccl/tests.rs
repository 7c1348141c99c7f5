use super::*;
use crate::evidence::{Tool, detect};

const ROCE_1537: &str = include_str!(
    "../../../captures/roce-2hca-gdr-disabled/nccl-info-009-roce-gdr-disabled-for-hca.txt"
);
const SWAT_1412: &str = include_str!(
    "../../../captures/nccl-1412-swat-16rank/nccl-info-002-init-complete-commid-16ranks.txt"
);
const SHM_1817: &str =
    include_str!("../../../captures/sh9-8gpu-p2p-vs-shm/nccl-info-007-shm-direct-8gpu.txt");
const GDR_429: &str = include_str!(
    "../../../captures/machine-2node-ib-gdrdma/nccl-info-013-p2p-direct-pointer-net-ib-gdrdma-busid.txt"
);
const EFA_24: &str = include_str!(
    "../../../captures/aws-efa-horovod-ring/nccl-info-014-mpirun-tag-output-ring-aws-libfabric.txt"
);
const SHARP_1584: &str = include_str!(
    "../../../captures/h100-8gpu-ib-sharp-bare/nccl-info-017-bare-lines-ib-sharp-init-start.txt"
);
const RCCL_1026: &str = include_str!(
    "../../../captures/mi250x-rccl-socket/nccl-info-016-rccl-p2p-ipc-net-socket-comm-suffix.txt"
);

fn one(text: &str) -> NcclInit {
    assert_eq!(detect(text), Some(Tool::NcclInfo));
    let p = parse_nccl_info(text).unwrap();
    let [n] = &p.nccl[..] else {
        panic!("{:#?}", p.nccl)
    };
    n.clone()
}

#[test]
fn bus_ids_are_made_as_int64_to_bus_id_makes_them() {
    assert_eq!(bus_id("1b000").as_deref(), Some("0000:1b:00.0"));
    assert_eq!(bus_id("7000").as_deref(), Some("0000:07:00.0"));
    assert_eq!(bus_id("10c8000").as_deref(), Some("0010:c8:00.0"));
    assert_eq!(bus_id("zz"), None);
}

#[test]
fn reads_roce_adapters_the_network_and_gdr_disabled_for_each_hca() {
    let n = one(ROCE_1537);
    let names: Vec<(&str, Option<u32>, Option<&str>, usize)> = n
        .adapters
        .iter()
        .map(|a| {
            (
                a.name.as_str(),
                a.port,
                a.link_layer.as_deref(),
                a.source.line,
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            ("mlx5_0", Some(1), Some("RoCE"), 2),
            ("mlx5_1", Some(1), Some("RoCE"), 2)
        ]
    );
    assert_eq!(n.net.as_deref(), Some("IB"));
    assert_eq!(n.net_source.as_ref().map(|s| s.line), Some(4));
    assert_eq!(n.ranks, Some(16));
    let d = &n.devices[0];
    assert_eq!(
        (
            d.rank,
            d.cuda_dev,
            d.bus_id.as_str(),
            d.host.as_deref(),
            d.source.line
        ),
        (0, 0, "0000:1c:00.0", Some("hostname1"), 5)
    );
    assert!(!d.complete);
    let gdr: Vec<(&str, bool, usize)> = n
        .gpu_direct
        .iter()
        .map(|g| (g.adapter.as_str(), g.enabled, g.source.line))
        .collect();
    assert_eq!(gdr, [("mlx5_0", false, 6), ("mlx5_1", false, 7)]);
}

#[test]
fn interleaved_ranks_of_one_comm_id_are_one_init() {
    let n = one(SWAT_1412);
    assert_eq!(n.ranks, Some(16));
    assert_eq!(n.comm_id.as_deref(), Some("0x49bbd7790311d5eb"));
    let devs: Vec<(u32, &str, usize)> = n
        .devices
        .iter()
        .map(|d| (d.rank, d.bus_id.as_str(), d.source.line))
        .collect();
    assert_eq!(
        devs,
        [
            (6, "0000:c8:00.0", 3),
            (4, "0000:88:00.0", 5),
            (0, "0000:07:00.0", 6),
            (1, "0000:0b:00.0", 8),
            (5, "0000:8b:00.0", 9)
        ]
    );
    assert!(n.devices.iter().all(|d| d.complete));
}

#[test]
fn shm_paths_between_the_gpus_of_one_node_are_read_per_channel() {
    let n = one(SHM_1817);
    assert_eq!(n.paths.len(), 11);
    let p = &n.paths[0];
    assert_eq!(
        (
            p.channel,
            p.src_rank,
            p.dst_rank,
            p.transport,
            p.via.as_str(),
            p.source.line
        ),
        (1, 7, 2, NcclTransport::Shm, "SHM/direct/direct", 1)
    );
    assert!(n.paths.iter().all(|p| p.transport == NcclTransport::Shm));
}

#[test]
fn old_bus_id_brackets_and_gdrdma_sides_are_read() {
    let n = one(GDR_429);
    type Net<'a> = (u32, u32, Option<&'a str>, &'a str, Option<&'a str>);
    let net: Vec<Net<'_>> = n
        .paths
        .iter()
        .filter(|p| p.transport == NcclTransport::Net)
        .map(|p| {
            (
                p.src_rank,
                p.dst_rank,
                p.side.as_deref(),
                p.via.as_str(),
                p.host.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        net[0],
        (7, 14, Some("receive"), "NET/IB/0/GDRDMA", Some("machine-1"))
    );
    assert!(n.paths.iter().all(|p| !p.net_without_gdr()));
    // No `Using network` line: the network is the channels'.
    assert_eq!(n.net.as_deref(), Some("IB"));
    assert_eq!(n.net_source.as_ref().map(|s| s.line), Some(4));
}

#[test]
fn mpirun_tagged_ring_lines_without_brackets_and_a_spaced_network_name() {
    let text = EFA_24
        .lines()
        .map(crate::evidence::scan::strip_prefixes)
        .collect::<Vec<_>>()
        .join("\n");
    let p = parse_nccl_info(&text).unwrap();
    let n = &p.nccl[0];
    let libfabric = n.paths.iter().find(|p| p.via.starts_with("NET/")).unwrap();
    assert_eq!(
        (
            libfabric.src_rank,
            libfabric.dst_rank,
            libfabric.via.as_str()
        ),
        (7, 8, "NET/AWS Libfabric/0")
    );
    assert_eq!(n.net.as_deref(), Some("AWS Libfabric"));
    assert!(libfabric.net_without_gdr());
    assert!(
        p.issues
            .iter()
            .any(|i| i.message.contains("Couldn't open AV"))
    );
}

#[test]
fn a_log_with_its_prefixes_cut_off_still_reads() {
    let n = one(SHARP_1584);
    assert_eq!(n.version.as_deref(), Some("2.24.3"));
    assert_eq!(n.version_source.as_ref().map(|s| s.line), Some(5));
    assert_eq!(n.adapters.len(), 8);
    assert_eq!(n.adapters[7].name, "ibp7");
    assert_eq!(n.adapters[7].link_layer.as_deref(), Some("IB"));
    assert_eq!(n.net.as_deref(), Some("IBext_v8"));
    assert_eq!(n.devices[0].bus_id, "0000:1a:00.0");
    assert_eq!(n.nvls, Some(true));
}

#[test]
fn rccl_channel_lines_with_their_comm_suffix() {
    let n = one(RCCL_1026);
    let p = n
        .paths
        .iter()
        .find(|p| p.transport == NcclTransport::P2p)
        .unwrap();
    assert_eq!(p.via, "P2P/IPC");
    assert_eq!(n.net.as_deref(), Some("Socket"));
}

#[test]
fn version_lines_of_nccl_and_rccl() {
    assert_eq!(
        version("NCCL version 2.18.3+cuda12.1"),
        Some(("2.18.3".into(), false))
    );
    assert_eq!(
        version("RCCL version : 2.21.5-HEAD:9a0e6a1"),
        Some(("2.21.5".into(), true))
    );
    assert_eq!(
        version("RCCL version 2.6.4+hip3.5"),
        Some(("2.6.4".into(), true))
    );
    assert_eq!(version("NCCL version mismatch"), None);
}

#[test]
fn merged_and_railed_adapter_lists() {
    let a = adapters("NET/IB : Using [0]={[0] mlx5_0:1/IB, [1] mlx5_1:1/RoCE} [1]mlx5_2:1:3/IB [RO]; OOB eth0:1.2.3.4<0>")
        .unwrap();
    let names: Vec<&str> = a.iter().map(|x| x.0.as_str()).collect();
    assert_eq!(names, ["mlx5_0", "mlx5_1", "mlx5_2"]);
    assert_eq!(a[1].2.as_deref(), Some("RoCE"));
    assert_eq!(a[2].1, Some(1));
}

#[test]
fn older_gdr_lines_name_the_adapter_from_the_list() {
    let text = "\
n1:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:10.0.0.1<0>
n1:1:2 [0] NCCL INFO GPU Direct RDMA Disabled for GPU 1b000 / HCA 1 (distance 4 > 3)
n1:1:2 [0] NCCL INFO Channel 00 : 0[1b000] -> 1[1b000] [send] via NET/IB/1
n1:1:2 [0] NCCL INFO comm 0x55 rank 0 nranks 2 cudaDev 0 busId 1b000 - Init COMPLETE
hello from the application
";
    let p = parse_nccl_info(text).unwrap();
    let n = &p.nccl[0];
    let g = &n.gpu_direct[0];
    assert_eq!(
        (g.adapter.as_str(), g.enabled, g.gpu_bus_id.as_deref()),
        ("mlx5_1", false, Some("0000:1b:00.0"))
    );
    assert_eq!(g.why.as_deref(), Some("distance 4 > 3"));
    assert!(n.paths[0].net_without_gdr());
    assert_eq!(p.unread_lines, [5]);
}

#[test]
fn two_communicators_in_one_log_are_two_inits() {
    let text = "\
h:1:1 [0] NCCL INFO NCCL version 2.10.3+cuda11.4
h:1:1 [0] NCCL INFO Channel 00 : 0[1b000] -> 1[1c000] via P2P/IPC
h:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1b000 - Init COMPLETE
h:2:2 [1] NCCL INFO comm 0x2 rank 1 nranks 2 cudaDev 1 busId 1c000 - Init COMPLETE
h:1:1 [0] NCCL INFO Channel 00 : 0[1b000] -> 1[1c000] via SHM/direct/direct
h:1:1 [0] NCCL INFO comm 0x3 rank 0 nranks 2 cudaDev 0 busId 1b000 - Init COMPLETE
h:2:2 [1] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>
";
    let p = parse_nccl_info(text).unwrap();
    assert_eq!(p.nccl.len(), 2);
    assert_eq!(p.nccl[0].devices.len(), 2);
    assert_eq!(p.nccl[0].paths[0].transport, NcclTransport::P2p);
    assert_eq!(p.nccl[1].paths[0].transport, NcclTransport::Shm);
    // The version line is the process's: both inits are 2.10.3, citing it.
    assert_eq!(p.nccl[1].version.as_deref(), Some("2.10.3"));
    assert_eq!(p.nccl[1].version_source.as_ref().map(|s| s.line), Some(1));
    assert_eq!(
        p.skipped_lines,
        [(7, "an NCCL log line with no fact read here")]
    );
}

#[test]
fn a_torchrun_prefixed_and_quoted_log_reads_the_same_facts() {
    let plain = SHM_1817;
    let wrapped: String = plain
        .lines()
        .enumerate()
        .map(|(i, l)| format!("> [rank{}]: {l}\n", i % 8))
        .collect();
    let a = crate::ingest::read_transcript("a.txt", plain.as_bytes());
    let b = crate::ingest::read_transcript("a.txt", wrapped.as_bytes());
    assert_eq!(a.nccl, b.nccl);
    assert_eq!(a.nccl[0].paths.len(), 11);
}

#[test]
fn an_info_line_after_a_warning_on_one_line_is_read_as_info() {
    // Two ranks' writes on one line: the INFO marker is the line's, as it
    // was before the marker search was one pass.
    let l = "n1:1:1 [0] NCCL WARN Cuda failure 'oom'n1:2:2 [1] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC";
    let line = super::grammar::split_line(l);
    assert!(!line.warn);
    assert_eq!(line.msg, "Channel 00/0 : 0[0] -> 1[1] via P2P/IPC");
    let w = super::grammar::split_line("n1:1:1 [0] NCCL WARN oops NCCL version");
    assert!(w.warn && w.marked);
    assert!(!super::grammar::split_line("no marker NCCL version 2.18").marked);
}
