//! Evidence: the typed facts a transcript holds, and the pure parsers that
//! turn text into them.
//!
//! Every parser takes `&str` and returns typed evidence or a [`ParseError`]
//! naming the line and what was expected there. Nothing here reads files,
//! runs commands or panics on bad input. [`detect`] picks the parser from the
//! content alone, never from a file name.

pub mod topology;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use topology::Topology;

/// A transcript line that a fact came from. `line` is 1-based.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Source {
    /// The transcript's path as recorded in `transcripts[].path`.
    pub file: String,
    pub line: usize,
}

impl Source {
    /// A source whose file is filled in later by [`Topology::set_file`].
    pub fn line(line: usize) -> Source {
        Source {
            file: String::new(),
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
}

impl Tool {
    pub fn as_str(self) -> &'static str {
        match self {
            Tool::NvidiaSmiTopo => "nvidia-smi-topo",
            Tool::NvidiaSmiP2p => "nvidia-smi-p2p",
            Tool::NvidiaSmiNvlink => "nvidia-smi-nvlink",
            Tool::RocmSmiTopo => "rocm-smi-topo",
            Tool::AmdSmiTopology => "amd-smi-topology",
        }
    }
}

/// What one transcript yielded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    pub topology: Topology,
    pub notes: Vec<Note>,
}

/// Recognises the tool that printed `text`, from its content. Returns `None`
/// for anything else; [`parse`] then is not attempted.
pub fn detect(text: &str) -> Option<Tool> {
    if topology::amd::looks_like_amd_smi(text) {
        Some(Tool::AmdSmiTopology)
    } else if topology::amd::looks_like_rocm_smi(text) {
        Some(Tool::RocmSmiTopo)
    } else if topology::nvidia::looks_like_nvlink_status(text) {
        Some(Tool::NvidiaSmiNvlink)
    } else if topology::nvidia::looks_like_p2p_status(text) {
        Some(Tool::NvidiaSmiP2p)
    } else if topology::nvidia::looks_like_topo_matrix(text) {
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
    }
}

/// Lines with their 1-based numbers, a trailing `\r` removed.
pub(crate) fn numbered_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
}
