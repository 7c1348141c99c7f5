//! Evidence: the typed facts a transcript holds, and the pure parsers that
//! turn text into them.
//!
//! Every parser takes `&str` and returns typed evidence or a [`ParseError`]
//! naming the line and what was expected there. Nothing here reads files,
//! runs commands or panics on bad input. [`detect`] picks the parser from the
//! content alone, never from a file name.

pub mod collective;
pub mod copy;
pub mod measurement;
pub mod mpi;
pub mod pcie;
pub mod rdma;
pub mod text;
pub mod topology;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use measurement::Measurement;
use pcie::PcieLink;
use rdma::RdmaDevice;
use topology::Topology;

/// A transcript line that a fact came from. `line` is 1-based.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Source {
    /// The transcript's path as recorded in `transcripts[].path`.
    pub file: text::Text,
    pub line: usize,
}

impl Source {
    /// A source whose file is filled in later by [`Topology::set_file`].
    pub fn line(line: usize) -> Source {
        Source {
            file: text::Text::default(),
            line,
        }
    }
}

/// A transcript that could not be read as the tool it looked like.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {expected}")]
pub struct ParseError {
    pub line: usize,
    /// What the parser expected there, in words a person can act on.
    pub expected: String,
}

impl ParseError {
    pub fn new(line: usize, expected: impl Into<String>) -> ParseError {
        ParseError {
            line,
            expected: expected.into(),
        }
    }
}

/// A remark about a transcript that is not a problem: text the parser
/// recognised and deliberately skipped (an author's `...` elision, a table
/// we do not use).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Note {
    pub line: usize,
    pub text: String,
}

/// The tools whose transcripts wire-report can read.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Tool {
    /// `nvidia-smi topo -m`
    NvidiaSmiTopo,
    /// `nvidia-smi topo -p2p r|w|n|a|p`
    NvidiaSmiP2p,
    /// `nvidia-smi nvlink --status`
    NvidiaSmiNvlink,
    /// `rocm-smi --showtopo` and its sub-views
    RocmSmiTopo,
    /// `amd-smi topology`
    AmdSmiTopology,
    /// CUDA sample `p2pBandwidthLatencyTest`
    P2pBandwidthLatencyTest,
    /// `nvbandwidth` text output
    Nvbandwidth,
    /// `nvbandwidth -j` JSON output
    NvbandwidthJson,
    /// `rocm-bandwidth-test`
    RocmBandwidthTest,
    /// `TransferBench`
    Transferbench,
    /// perftest `ib_*_bw` / `ib_*_lat`
    Perftest,
    /// nccl-tests / rccl-tests `*_perf`
    NcclTests,
    /// OSU micro-benchmarks (`osu_bw`, `osu_bibw`, `osu_latency`)
    Osu,
    /// `ibv_devinfo` (plain, `-v`, `-l`)
    IbvDevinfo,
    /// `ibv_devices`
    IbvDevices,
    /// `ibstat`
    Ibstat,
    /// `ibstatus`
    Ibstatus,
    /// `show_gids`
    ShowGids,
    /// `lspci -vvv`
    Lspci,
    /// `nvidia-smi -q`
    NvidiaSmiQ,
}

impl Tool {
    pub const ALL: [Tool; 20] = [
        Tool::NvidiaSmiTopo,
        Tool::NvidiaSmiP2p,
        Tool::NvidiaSmiNvlink,
        Tool::RocmSmiTopo,
        Tool::AmdSmiTopology,
        Tool::P2pBandwidthLatencyTest,
        Tool::Nvbandwidth,
        Tool::NvbandwidthJson,
        Tool::RocmBandwidthTest,
        Tool::Transferbench,
        Tool::Perftest,
        Tool::NcclTests,
        Tool::Osu,
        Tool::IbvDevinfo,
        Tool::IbvDevices,
        Tool::Ibstat,
        Tool::Ibstatus,
        Tool::ShowGids,
        Tool::Lspci,
        Tool::NvidiaSmiQ,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Tool::NvidiaSmiTopo => "nvidia-smi-topo",
            Tool::NvidiaSmiP2p => "nvidia-smi-p2p",
            Tool::NvidiaSmiNvlink => "nvidia-smi-nvlink",
            Tool::RocmSmiTopo => "rocm-smi-topo",
            Tool::AmdSmiTopology => "amd-smi-topology",
            Tool::P2pBandwidthLatencyTest => "p2p-bandwidth-latency-test",
            Tool::Nvbandwidth => "nvbandwidth",
            Tool::NvbandwidthJson => "nvbandwidth-json",
            Tool::RocmBandwidthTest => "rocm-bandwidth-test",
            Tool::Transferbench => "transferbench",
            Tool::Perftest => "perftest",
            Tool::NcclTests => "nccl-tests",
            Tool::Osu => "osu",
            Tool::IbvDevinfo => "ibv-devinfo",
            Tool::IbvDevices => "ibv-devices",
            Tool::Ibstat => "ibstat",
            Tool::Ibstatus => "ibstatus",
            Tool::ShowGids => "show-gids",
            Tool::Lspci => "lspci",
            Tool::NvidiaSmiQ => "nvidia-smi-q",
        }
    }
}

/// Something a transcript says that is not a fact about the node's wiring
/// but matters: it was cut short, or the tool itself reported a failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    pub line: usize,
    pub kind: IssueKind,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IssueKind {
    /// The transcript stops in the middle of a table or test.
    Truncated,
    /// The tool printed an error or a failed check.
    ToolError,
}

/// What one transcript yielded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    pub topology: Topology,
    pub measurements: Vec<Measurement>,
    pub rdma: Vec<RdmaDevice>,
    pub pcie: Vec<PcieLink>,
    pub notes: Vec<Note>,
    pub issues: Vec<Issue>,
}

impl Parsed {
    pub fn truncated(&mut self, line: usize, message: impl Into<String>) {
        self.issues.push(Issue {
            line,
            kind: IssueKind::Truncated,
            message: message.into(),
        });
    }

    pub fn tool_error(&mut self, line: usize, message: impl Into<String>) {
        self.issues.push(Issue {
            line,
            kind: IssueKind::ToolError,
            message: message.into(),
        });
    }

    pub fn note(&mut self, line: usize, text: impl Into<String>) {
        self.notes.push(Note {
            line,
            text: text.into(),
        });
    }
}

/// Recognises the tool that printed `text`, from its content. Returns `None`
/// for anything else; [`parse`] then is not attempted. More specific
/// signatures are tried first.
pub fn detect(text: &str) -> Option<Tool> {
    // Split once; every signature below looks at the same lines.
    let lines: Vec<&str> = text
        .lines()
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    if copy::looks_like_nvbandwidth_json(text, &lines) {
        Some(Tool::NvbandwidthJson)
    } else if copy::looks_like_nvbandwidth(text, &lines) {
        Some(Tool::Nvbandwidth)
    } else if copy::looks_like_p2p_bandwidth_latency_test(text, &lines) {
        Some(Tool::P2pBandwidthLatencyTest)
    } else if copy::looks_like_rocm_bandwidth_test(text, &lines) {
        Some(Tool::RocmBandwidthTest)
    } else if copy::looks_like_transferbench(text, &lines) {
        Some(Tool::Transferbench)
    } else if collective::looks_like_nccl_tests(text, &lines) {
        Some(Tool::NcclTests)
    } else if mpi::looks_like_osu(text, &lines) {
        Some(Tool::Osu)
    } else if rdma::looks_like_perftest(text, &lines) {
        Some(Tool::Perftest)
    } else if rdma::looks_like_ibstatus(text, &lines) {
        Some(Tool::Ibstatus)
    } else if rdma::looks_like_ibstat(text, &lines) {
        Some(Tool::Ibstat)
    } else if rdma::looks_like_ibv_devinfo(text, &lines) {
        Some(Tool::IbvDevinfo)
    } else if rdma::looks_like_ibv_devices(text, &lines) {
        Some(Tool::IbvDevices)
    } else if rdma::looks_like_show_gids(text, &lines) {
        Some(Tool::ShowGids)
    } else if pcie::looks_like_nvidia_smi_q(text, &lines) {
        Some(Tool::NvidiaSmiQ)
    } else if pcie::looks_like_lspci(text, &lines) {
        Some(Tool::Lspci)
    } else if topology::amd::looks_like_amd_smi(text, &lines) {
        Some(Tool::AmdSmiTopology)
    } else if topology::amd::looks_like_rocm_smi(text, &lines) {
        Some(Tool::RocmSmiTopo)
    } else if topology::nvidia::looks_like_nvlink_status(text, &lines) {
        Some(Tool::NvidiaSmiNvlink)
    } else if topology::nvidia::looks_like_p2p_status(text, &lines) {
        Some(Tool::NvidiaSmiP2p)
    } else if topology::nvidia::looks_like_topo_matrix(text, &lines) {
        Some(Tool::NvidiaSmiTopo)
    } else {
        None
    }
}

/// Runs the parser of `tool` over `text`.
pub fn parse(tool: Tool, text: &str) -> Result<Parsed, ParseError> {
    match tool {
        Tool::NvidiaSmiTopo => topology::nvidia::parse_topo_matrix(text),
        Tool::NvidiaSmiP2p => topology::nvidia::parse_p2p_status(text),
        Tool::NvidiaSmiNvlink => topology::nvidia::parse_nvlink_status(text),
        Tool::RocmSmiTopo => topology::amd::parse_rocm_smi(text),
        Tool::AmdSmiTopology => topology::amd::parse_amd_smi(text),
        Tool::P2pBandwidthLatencyTest => copy::parse_p2p_bandwidth_latency_test(text),
        Tool::Nvbandwidth => copy::parse_nvbandwidth(text),
        Tool::NvbandwidthJson => copy::parse_nvbandwidth_json(text),
        Tool::RocmBandwidthTest => copy::parse_rocm_bandwidth_test(text),
        Tool::Transferbench => copy::parse_transferbench(text),
        Tool::Perftest => rdma::parse_perftest(text),
        Tool::NcclTests => collective::parse_nccl_tests(text),
        Tool::Osu => mpi::parse_osu(text),
        Tool::IbvDevinfo => rdma::parse_ibv_devinfo(text),
        Tool::IbvDevices => rdma::parse_ibv_devices(text),
        Tool::Ibstat => rdma::parse_ibstat(text),
        Tool::Ibstatus => rdma::parse_ibstatus(text),
        Tool::ShowGids => rdma::parse_show_gids(text),
        Tool::Lspci => pcie::parse_lspci(text),
        Tool::NvidiaSmiQ => pcie::parse_nvidia_smi_q(text),
    }
}

/// Already-split lines with their 1-based numbers.
pub(crate) fn numbered<'a>(lines: &'a [&'a str]) -> impl Iterator<Item = (usize, &'a str)> + 'a {
    lines.iter().enumerate().map(|(i, l)| (i + 1, *l))
}

/// Lines with their 1-based numbers, a trailing `\r` removed.
pub(crate) fn numbered_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
}
