//! Evidence: the typed facts a transcript holds, and the pure parsers that
//! turn text into them.
//!
//! Every parser takes `&str` and returns typed evidence or a [`ParseError`]
//! naming the line and what was expected there. Nothing here reads files,
//! runs commands or panics on bad input. [`detect`] picks the parser from the
//! content alone, never from a file name.

pub mod answers;
pub mod collective;
pub mod context;
pub mod copy;
pub mod ethtool;
pub mod measurement;
pub mod mpi;
pub mod pcie;
pub mod rdma;
pub mod scan;
pub mod text;
pub mod tools;
pub mod topology;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use measurement::Measurement;
use pcie::PcieLink;
use rdma::RdmaDevice;
pub use tools::{TOOLS, ToolSpec};
use topology::Topology;

/// A transcript line that a fact came from. `line` is 1-based. Its serde
/// form (`[file_index, line]` inside a version 2 or 3 bundle, `{file, line}`
/// elsewhere) is in `bundle::wire`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
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

/// The tools whose transcripts wire-report can read. Each has one entry in
/// [`TOOLS`] (its name, detector, parser and live commands); the serde
/// names are the bundle's, so a variant is never renamed.
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
    /// CUDA sample `bandwidthTest`
    BandwidthTest,
    /// `ethtool -S <interface>`
    EthtoolStats,
}

impl Tool {
    /// Every tool, in detection order (the order of [`TOOLS`]).
    pub fn all() -> impl Iterator<Item = Tool> {
        TOOLS.iter().map(|s| s.tool)
    }

    /// Its entry in [`TOOLS`]: detector, parser, live commands.
    pub fn spec(self) -> &'static ToolSpec {
        tools::spec(self)
    }

    /// The name in bundles, problems and the report (its serde name).
    pub fn as_str(self) -> &'static str {
        self.spec().name
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
    /// A row (or part of one) the parser could not read; the rest of the
    /// transcript was read.
    Unreadable,
}

/// What one transcript yielded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    pub topology: Topology,
    pub measurements: Vec<Measurement>,
    pub rdma: Vec<RdmaDevice>,
    pub pcie: Vec<PcieLink>,
    /// Network interface counters (`ethtool -S`).
    pub interfaces: Vec<ethtool::InterfaceStats>,
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

    /// A row that could not be read (or only in part): a problem at its
    /// line, and the parser goes on.
    pub fn bad_row(&mut self, line: usize, message: impl Into<String>) {
        self.issues.push(Issue {
            line,
            kind: IssueKind::Unreadable,
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

    /// Calls `f` on every fact's source (its file and line).
    pub fn for_each_source(&mut self, mut f: impl FnMut(&mut Source)) {
        self.topology.for_each_source(&mut f);
        self.measurements.iter_mut().for_each(|m| f(&mut m.source));
        for d in &mut self.rdma {
            f(&mut d.source);
            d.ports.iter_mut().for_each(|p| f(&mut p.source));
        }
        self.pcie.iter_mut().for_each(|p| f(&mut p.source));
        for i in &mut self.interfaces {
            f(&mut i.source);
            i.counters.iter_mut().for_each(|c| f(&mut c.source));
        }
    }

    /// Renumbers every line this reading names (facts, notes, issues)
    /// with `map`: from a scanned segment's lines to the original file's.
    pub fn map_lines(&mut self, map: impl Fn(usize) -> usize) {
        self.for_each_source(|s| s.line = map(s.line));
        self.notes.iter_mut().for_each(|n| n.line = map(n.line));
        self.issues.iter_mut().for_each(|i| i.line = map(i.line));
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
/// signatures are tried first (the order of [`TOOLS`]).
pub fn detect(text: &str) -> Option<Tool> {
    // Split once; every signature looks at the same lines.
    let lines: Vec<&str> = text
        .lines()
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    TOOLS
        .iter()
        .find(|s| (s.detect)(text, &lines))
        .map(|s| s.tool)
}

/// Runs the parser of `tool` over `text`.
pub fn parse(tool: Tool, text: &str) -> Result<Parsed, ParseError> {
    (tool.spec().parse)(text)
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
