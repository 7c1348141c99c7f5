//! The tool table: every tool whose transcripts wire-report reads, with its
//! name, its detector, its parser and, where live collection runs it, its
//! command and transcript file. [`detect`](super::detect),
//! [`parse`](super::parse), [`Tool::as_str`], the "known tools" list of an
//! unrecognised file and the live collection's command lists all derive
//! from [`TOOLS`].
//!
//! Adding a tool: one [`Tool`] variant and one entry here (placed by how
//! specific its detector is), with its `looks_like_*` and `parse_*` in the
//! module of its kind, and its header line if it has one (the splitter of
//! pasted blocks reads the headers from here: there is no other list). This module only describes commands; running them
//! is `collect::live`'s business.

use super::{
    ParseError, Parsed, Tool, collective, copy, counters, ethtool, lsmod, mpi, nccl, numa, pcie,
    rdma, topology,
};

/// Recognises a tool's transcript from the whole text and its lines (each
/// without a trailing `\r`).
pub type Detector = fn(&str, &[&str]) -> bool;

/// Reads a transcript recognised by the tool's [`Detector`].
pub type Parser = fn(&str) -> Result<Parsed, ParseError>;

/// One tool: how to recognise its transcripts, read them and, where live
/// collection runs it, get them.
pub struct ToolSpec {
    pub tool: Tool,
    /// The name in bundles, problems and the report; the same as `tool`'s
    /// serde name (tested).
    pub name: &'static str,
    pub detect: Detector,
    pub parse: Parser,
    /// A line that starts this tool's output (its title, or its first
    /// row where every row looks alike, as lspci's devices), where it has
    /// one: its output pasted right after another tool's, with no command
    /// line between, is cut there ([`split`](super::split)).
    pub header: Option<Header>,
    /// The commands live collection runs for this tool's transcript; empty
    /// when it is only ever read from captures.
    pub live: &'static [LiveCommand],
}

/// A tool's header line.
pub struct Header {
    /// The bytes the trimmed line may start with: a line starting with
    /// none of any tool's is no header, and costs one lookup.
    pub first: &'static [u8],
    /// Whether the line (as written, and trimmed) is the header.
    pub is: fn(line: &str, trimmed: &str) -> bool,
    /// The characters of the rule the tool draws right above its title,
    /// the first one first (perftest's `-----`, dcgmi's `+-----+`): that
    /// line goes with the title.
    pub rule: Option<&'static str>,
}

/// When live collection runs a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Every collection, with the per-tool timeout: the node's inventory.
    Inventory,
    /// Only with `--benchmarks`, within the benchmark budget.
    Benchmark,
}

/// A command live collection runs, and where its transcript is saved.
pub struct LiveCommand {
    pub stage: Stage,
    /// Place within its stage, lowest first. The order is behaviour, not
    /// taste: where two transcripts describe the same thing the first one's
    /// facts are kept (topology conflicts, RDMA port fields), and a tool
    /// that hangs is not called again by the commands after it.
    pub order: u8,
    pub program: &'static str,
    pub args: &'static [&'static str],
    /// The transcript's file name beside `bundle.json`.
    pub file: &'static str,
}

impl LiveCommand {
    /// `nvidia-smi topo -m`: the program and its arguments as one line.
    pub fn command_line(&self) -> String {
        format!("{} {}", self.program, self.args.join(" "))
            .trim()
            .to_string()
    }
}

const fn inventory(
    order: u8,
    program: &'static str,
    args: &'static [&'static str],
    file: &'static str,
) -> LiveCommand {
    LiveCommand {
        stage: Stage::Inventory,
        order,
        program,
        args,
        file,
    }
}

/// Short settings: a node check, not a study.
const fn benchmark(
    order: u8,
    program: &'static str,
    args: &'static [&'static str],
    file: &'static str,
) -> LiveCommand {
    LiveCommand {
        stage: Stage::Benchmark,
        order,
        program,
        args,
        file,
    }
}

/// Every tool, in detection order: [`detect`](super::detect) answers with
/// the first whose detector accepts the text, so more specific signatures
/// come first.
pub static TOOLS: &[ToolSpec] = &[
    ToolSpec {
        tool: Tool::NvbandwidthJson,
        name: "nvbandwidth-json",
        detect: copy::looks_like_nvbandwidth_json,
        parse: copy::parse_nvbandwidth_json,
        header: None,
        live: &[],
    },
    ToolSpec {
        tool: Tool::BandwidthTest,
        name: "bandwidth-test",
        detect: copy::looks_like_bandwidth_test,
        parse: copy::parse_bandwidth_test,
        header: Some(Header {
            first: b"[",
            is: |_, t| t.starts_with("[CUDA Bandwidth Test]"),
            rule: None,
        }),
        live: &[],
    },
    ToolSpec {
        tool: Tool::Nvbandwidth,
        name: "nvbandwidth",
        detect: copy::looks_like_nvbandwidth,
        parse: copy::parse_nvbandwidth,
        header: Some(Header {
            first: b"n",
            is: |_, t| t.starts_with("nvbandwidth Version:"),
            rule: None,
        }),
        live: &[benchmark(
            1,
            "nvbandwidth",
            &[
                "-t",
                "host_to_device_memcpy_ce",
                "device_to_host_memcpy_ce",
                "device_to_device_memcpy_read_ce",
            ],
            "nvbandwidth.txt",
        )],
    },
    ToolSpec {
        tool: Tool::P2pBandwidthLatencyTest,
        name: "p2p-bandwidth-latency-test",
        detect: copy::looks_like_p2p_bandwidth_latency_test,
        parse: copy::parse_p2p_bandwidth_latency_test,
        header: Some(Header {
            first: b"[",
            is: |_, t| t.starts_with("[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]"),
            rule: None,
        }),
        live: &[benchmark(
            2,
            "p2pBandwidthLatencyTest",
            &[],
            "p2pBandwidthLatencyTest.txt",
        )],
    },
    ToolSpec {
        tool: Tool::RocmBandwidthTest,
        name: "rocm-bandwidth-test",
        detect: copy::looks_like_rocm_bandwidth_test,
        parse: copy::parse_rocm_bandwidth_test,
        header: Some(Header {
            first: b"R",
            is: |_, t| t.starts_with("RocmBandwidthTest Version:"),
            rule: None,
        }),
        live: &[benchmark(
            3,
            "rocm-bandwidth-test",
            &[],
            "rocm-bandwidth-test.txt",
        )],
    },
    ToolSpec {
        tool: Tool::Transferbench,
        name: "transferbench",
        detect: copy::looks_like_transferbench,
        parse: copy::parse_transferbench,
        header: Some(Header {
            first: b"TG",
            is: |_, t| t.starts_with("TransferBench v") || t == "GPU-GFX Scaling benchmark:",
            rule: None,
        }),
        live: &[],
    },
    // Its lines are its own (`device 0 reading device 1: ...`, `... MiB x
    // 20 iters: ... wrong bytes`): no other tool prints them.
    ToolSpec {
        tool: Tool::PeerCopyBw,
        name: "peer-copy-bw",
        detect: copy::looks_like_peer_copy_bw,
        parse: copy::parse_peer_copy_bw,
        header: Some(Header {
            first: b"d",
            is: |_, t| copy::is_pair_line(t),
            rule: None,
        }),
        live: &[],
    },
    ToolSpec {
        tool: Tool::NcclTests,
        name: "nccl-tests",
        detect: collective::looks_like_nccl_tests,
        parse: collective::parse_nccl_tests,
        header: Some(Header {
            first: b"#r",
            is: |_, t| {
                t.starts_with("# nThread ")
                    || t.starts_with("# Collective test starting:")
                    || t.starts_with("rccl-tests: Version")
            },
            rule: None,
        }),
        live: &[benchmark(
            4,
            "all_reduce_perf",
            &["-b", "8", "-e", "256M", "-f", "2", "-g", "1"],
            "all_reduce_perf.txt",
        )],
    },
    // After nccl-tests (whose runs interleave NCCL's lines and read them
    // too): a log of NCCL's own, its lines anywhere in an application's.
    ToolSpec {
        tool: Tool::NcclInfo,
        name: "nccl-info",
        detect: nccl::looks_like_nccl_info,
        parse: nccl::parse_nccl_info,
        header: None,
        live: &[],
    },
    // Signatures of their own (`node distances:`, `NUMANode L#0`, a
    // sysfs counter path or perfquery's header), ahead of the tables
    // whose rows are `name: count` (ethtool) or `name size count` (lsmod).
    ToolSpec {
        tool: Tool::Numactl,
        name: "numactl",
        detect: numa::looks_like_numactl,
        parse: numa::parse_numactl,
        header: None,
        live: &[],
    },
    ToolSpec {
        tool: Tool::Lstopo,
        name: "lstopo",
        detect: numa::looks_like_lstopo,
        parse: numa::parse_lstopo,
        header: None,
        live: &[],
    },
    ToolSpec {
        tool: Tool::RdmaCounters,
        name: "rdma-counters",
        detect: counters::looks_like_counters,
        parse: counters::parse_counters,
        header: None,
        live: &[],
    },
    ToolSpec {
        tool: Tool::Osu,
        name: "osu",
        detect: mpi::looks_like_osu,
        parse: mpi::parse_osu,
        header: Some(Header {
            first: b"#",
            is: |_, t| mpi::osu_title(t).is_some(),
            rule: None,
        }),
        live: &[],
    },
    // `ib_write_bw` runs live too, but as a server and a client at once
    // (loopback or a two-node pair), which one command line cannot say:
    // `collect::live::benchmarks` runs it.
    ToolSpec {
        tool: Tool::Perftest,
        name: "perftest",
        detect: rdma::looks_like_perftest,
        parse: rdma::parse_perftest,
        header: Some(Header {
            first: b"RSA",
            is: |_, t| rdma::is_perftest_title(t),
            rule: Some("-"),
        }),
        live: &[],
    },
    ToolSpec {
        tool: Tool::Ibstatus,
        name: "ibstatus",
        detect: rdma::looks_like_ibstatus,
        parse: rdma::parse_ibstatus,
        header: Some(Header {
            first: b"I",
            is: |l, _| l.starts_with("Infiniband device '"),
            rule: None,
        }),
        live: &[],
    },
    ToolSpec {
        tool: Tool::Ibstat,
        name: "ibstat",
        detect: rdma::looks_like_ibstat,
        parse: rdma::parse_ibstat,
        header: Some(Header {
            first: b"C",
            is: |l, _| l.starts_with("CA '") || l.starts_with("CA: '"),
            rule: None,
        }),
        live: &[inventory(8, "ibstat", &[], "ibstat.txt")],
    },
    ToolSpec {
        tool: Tool::IbvDevinfo,
        name: "ibv-devinfo",
        detect: rdma::looks_like_ibv_devinfo,
        parse: rdma::parse_ibv_devinfo,
        header: Some(Header {
            first: b"h",
            is: |l, _| l.starts_with("hca_id:"),
            rule: None,
        }),
        live: &[inventory(7, "ibv_devinfo", &["-v"], "ibv-devinfo-v.txt")],
    },
    ToolSpec {
        tool: Tool::IbvDevices,
        name: "ibv-devices",
        detect: rdma::looks_like_ibv_devices,
        parse: rdma::parse_ibv_devices,
        header: Some(Header {
            first: b"d",
            is: |_, t| t.starts_with("device") && t.contains("node GUID"),
            rule: None,
        }),
        live: &[],
    },
    ToolSpec {
        tool: Tool::ShowGids,
        name: "show-gids",
        detect: rdma::looks_like_show_gids,
        parse: rdma::parse_show_gids,
        header: Some(Header {
            first: b"D",
            is: |_, t| t.starts_with("DEV") && t.contains("PORT") && t.contains("GID"),
            rule: None,
        }),
        live: &[],
    },
    ToolSpec {
        tool: Tool::IbvDeviceStatistics,
        name: "ibv-device-statistics",
        detect: rdma::looks_like_device_statistics,
        parse: rdma::parse_device_statistics,
        header: None,
        live: &[],
    },
    ToolSpec {
        tool: Tool::NvidiaSmiQ,
        name: "nvidia-smi-q",
        detect: pcie::looks_like_nvidia_smi_q,
        parse: pcie::parse_nvidia_smi_q,
        header: Some(Header {
            first: b"=",
            is: |_, t| t.contains("NVSMI LOG"),
            rule: None,
        }),
        live: &[inventory(4, "nvidia-smi", &["-q"], "nvidia-smi-q.txt")],
    },
    ToolSpec {
        tool: Tool::Lspci,
        name: "lspci",
        detect: pcie::looks_like_lspci,
        parse: pcie::parse_lspci,
        header: Some(Header {
            // lspci prints its hex in lower case.
            first: b"0123456789abcdef",
            is: |l, _| pcie::is_lspci_device(l),
            rule: None,
        }),
        live: &[inventory(9, "lspci", &["-vvv"], "lspci-vvv.txt")],
    },
    ToolSpec {
        tool: Tool::AmdSmiTopology,
        name: "amd-smi-topology",
        detect: topology::amd::looks_like_amd_smi,
        parse: topology::amd::parse_amd_smi,
        header: Some(Header {
            first: b"A",
            is: |_, t| t == "ACCESS TABLE:",
            rule: None,
        }),
        live: &[inventory(
            6,
            "amd-smi",
            &["topology"],
            "amd-smi-topology.txt",
        )],
    },
    ToolSpec {
        tool: Tool::RocmSmiTopo,
        name: "rocm-smi-topo",
        detect: topology::amd::looks_like_rocm_smi,
        parse: topology::amd::parse_rocm_smi,
        header: Some(Header {
            first: b"=",
            is: |_, t| t.contains("ROCm System Management Interface"),
            rule: None,
        }),
        live: &[inventory(
            5,
            "rocm-smi",
            &["--showtopo"],
            "rocm-smi-showtopo.txt",
        )],
    },
    ToolSpec {
        tool: Tool::NvidiaSmiNvlink,
        name: "nvidia-smi-nvlink",
        detect: topology::nvidia::looks_like_nvlink_status,
        parse: topology::nvidia::parse_nvlink_status,
        header: Some(Header {
            first: b"G",
            is: |_, t| topology::nvidia::is_nvlink_gpu_line(t),
            rule: None,
        }),
        live: &[inventory(
            3,
            "nvidia-smi",
            &["nvlink", "--status"],
            "nvidia-smi-nvlink-status.txt",
        )],
    },
    ToolSpec {
        tool: Tool::DcgmiNvlink,
        name: "dcgmi-nvlink",
        detect: topology::dcgmi::looks_like_dcgmi_nvlink,
        parse: topology::dcgmi::parse_dcgmi_nvlink,
        header: Some(Header {
            first: b"|",
            is: |_, t| t == "|  NvLink Link Status  |",
            rule: Some("+-"),
        }),
        live: &[],
    },
    ToolSpec {
        tool: Tool::PpuSmiTopo,
        name: "ppu-smi-topo",
        detect: topology::ppu::looks_like_ppu_smi,
        parse: topology::ppu::parse_ppu_smi,
        header: Some(Header {
            first: b"P",
            is: |_, t| t.starts_with("PPU0") && t.contains("CPU Affinity"),
            rule: None,
        }),
        live: &[],
    },
    ToolSpec {
        tool: Tool::NvidiaSmiP2p,
        name: "nvidia-smi-p2p",
        detect: topology::nvidia::looks_like_p2p_status,
        parse: topology::nvidia::parse_p2p_status,
        header: Some(Header {
            first: b"G",
            is: |_, t| topology::nvidia::is_p2p_header(t),
            rule: None,
        }),
        live: &[inventory(
            2,
            "nvidia-smi",
            &["topo", "-p2p", "r"],
            "nvidia-smi-topo-p2p-r.txt",
        )],
    },
    ToolSpec {
        tool: Tool::NvidiaSmiTopo,
        name: "nvidia-smi-topo",
        detect: topology::nvidia::looks_like_topo_matrix,
        parse: topology::nvidia::parse_topo_matrix,
        header: Some(Header {
            first: b"G",
            is: |_, t| t.starts_with("GPU0") && t.contains("CPU Affinity"),
            rule: None,
        }),
        live: &[inventory(
            1,
            "nvidia-smi",
            &["topo", "-m"],
            "nvidia-smi-topo-m.txt",
        )],
    },
    // Near the end: a grep of its rows is only `name size count` lines.
    ToolSpec {
        tool: Tool::Lsmod,
        name: "lsmod",
        detect: lsmod::looks_like_lsmod,
        parse: lsmod::parse_lsmod,
        header: Some(Header {
            first: b"M",
            is: |_, t| lsmod::is_header(t),
            rule: None,
        }),
        live: &[],
    },
    // Last: a grep of its rows is only `name: count` lines. Live
    // collection runs it per RDMA interface, before and after
    // (`collect::live::rdma`), which one fixed command line cannot say.
    ToolSpec {
        tool: Tool::EthtoolStats,
        name: "ethtool-stats",
        detect: ethtool::looks_like_ethtool_stats,
        parse: ethtool::parse_ethtool_stats,
        header: None,
        live: &[],
    },
];

/// The commands live collection runs in `stage`, in their order.
pub fn live_commands(stage: Stage) -> Vec<&'static LiveCommand> {
    let mut cmds: Vec<&LiveCommand> = TOOLS
        .iter()
        .flat_map(|t| t.live)
        .filter(|c| c.stage == stage)
        .collect();
    cmds.sort_by_key(|c| c.order);
    cmds
}

/// The table entry of `tool` ([`Tool::spec`]).
pub(super) fn spec(tool: Tool) -> &'static ToolSpec {
    match TOOLS.iter().find(|s| s.tool == tool) {
        Some(s) => s,
        // Every variant has an entry: `every_tool_has_one_entry_named_as_serde_names_it`.
        None => unreachable!("{tool:?} has no entry in evidence::tools::TOOLS"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// The variants' serde names, from the JSON schema (so a variant
    /// without an entry is caught without listing the variants here).
    fn serde_names() -> BTreeSet<String> {
        fn walk(v: &serde_json::Value, names: &mut BTreeSet<String>) {
            match v {
                serde_json::Value::Object(m) => {
                    if let Some(c) = m.get("const").and_then(|c| c.as_str()) {
                        names.insert(c.to_string());
                    }
                    for e in m
                        .get("enum")
                        .and_then(|e| e.as_array())
                        .into_iter()
                        .flatten()
                    {
                        names.extend(e.as_str().map(String::from));
                    }
                    m.values().for_each(|x| walk(x, names));
                }
                serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, names)),
                _ => {}
            }
        }
        let mut names = BTreeSet::new();
        walk(
            &serde_json::to_value(schemars::schema_for!(Tool)).unwrap(),
            &mut names,
        );
        names
    }

    #[test]
    fn every_tool_has_one_entry_named_as_serde_names_it() {
        let names: BTreeSet<String> = TOOLS.iter().map(|s| s.name.to_string()).collect();
        assert_eq!(names.len(), TOOLS.len(), "a name is used twice");
        assert_eq!(names, serde_names());
        for s in TOOLS {
            assert_eq!(
                serde_json::to_string(&s.tool).unwrap(),
                format!("\"{}\"", s.name)
            );
        }
    }

    #[test]
    fn live_commands_have_distinct_places_and_files() {
        let cmds: Vec<&LiveCommand> = TOOLS.iter().flat_map(|t| t.live).collect();
        let files: BTreeSet<&str> = cmds.iter().map(|c| c.file).collect();
        assert_eq!(files.len(), cmds.len(), "two commands share a file");
        assert!(!files.contains("bundle.json"));
        let places: BTreeSet<(u8, bool)> = cmds
            .iter()
            .map(|c| (c.order, c.stage == Stage::Inventory))
            .collect();
        assert_eq!(places.len(), cmds.len(), "two commands share a place");
    }
}
