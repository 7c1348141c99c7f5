//! Reading one transcript: bytes in, a [`Reading`] out (pure; no I/O).
//!
//! The tool is recognised from the content, its parser runs, and every
//! fact it yields carries the file it came from. What could not be read
//! becomes a [`Problem`] in the reading. [`Bundle::absorb`] merges a
//! reading into a node's bundle; live collection and `collect --from`
//! both go through here.
//!
//! [`Bundle::absorb`]: crate::bundle::Bundle::absorb

use sha2::{Digest, Sha256};

use crate::bundle::{Problem, ProblemKind, Transcript};
use crate::evidence::measurement::Measurement;
use crate::evidence::pcie::PcieLink;
use crate::evidence::rdma::RdmaDevice;
use crate::evidence::text::Text;
use crate::evidence::topology::Topology;
use crate::evidence::{self, IssueKind, Tool};

/// What one file yielded: its transcript and evidence when a parser read
/// it, and its problems either way.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reading {
    /// The recognised transcript; `None` when nothing was read.
    pub transcript: Option<Transcript>,
    /// Devices and links, each with `Source.file` set to this file.
    pub topology: Topology,
    pub measurements: Vec<Measurement>,
    pub rdma: Vec<RdmaDevice>,
    pub pcie: Vec<PcieLink>,
    /// Why the file, or lines of it, could not be read.
    pub problems: Vec<Problem>,
}

impl Reading {
    fn failed(path: &str, line: Option<usize>, kind: ProblemKind, message: String) -> Reading {
        Reading {
            problems: vec![Problem {
                file: path.to_string(),
                line,
                kind,
                message,
            }],
            ..Reading::default()
        }
    }

    /// The first problem, in its one-line form (why a file was not read).
    pub fn first_problem(&self) -> Option<String> {
        self.problems.first().map(Problem::one_line)
    }
}

/// Recognises and parses the transcript `bytes`, shown as `path`. A
/// wire-report bundle yields an empty reading (it is not a transcript).
pub fn read_transcript(path: &str, bytes: &[u8]) -> Reading {
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let line = bytes[..e.valid_up_to()]
                .iter()
                .filter(|b| **b == b'\n')
                .count()
                + 1;
            return Reading::failed(
                path,
                Some(line),
                ProblemKind::Unreadable,
                "expected UTF-8 text; this looks like a binary file".into(),
            );
        }
    };
    if text.trim().is_empty() {
        return Reading::failed(
            path,
            Some(1),
            ProblemKind::Unrecognized,
            "expected a transcript; the file is empty".into(),
        );
    }
    if is_bundle(text) {
        return Reading::default();
    }
    if let Some(nul) = text.find('\0') {
        let line = text[..nul].matches('\n').count() + 1;
        return Reading::failed(
            path,
            Some(line),
            ProblemKind::Unreadable,
            "expected text; found a NUL byte (binary file?)".into(),
        );
    }
    let Some(tool) = evidence::detect(text) else {
        return Reading::failed(
            path,
            Some(1),
            ProblemKind::Unrecognized,
            format!("expected a transcript of a known tool ({})", known_tools()),
        );
    };
    match evidence::parse(tool, text) {
        Ok(parsed) => read_parsed(path, bytes, text, tool, parsed),
        Err(e) => Reading::failed(
            path,
            Some(e.line),
            ProblemKind::Parse,
            format!("{}: expected {}", tool.as_str(), e.expected),
        ),
    }
}

/// A parser's output as a reading: the file named on every fact.
fn read_parsed(
    path: &str,
    bytes: &[u8],
    text: &str,
    tool: Tool,
    mut parsed: evidence::Parsed,
) -> Reading {
    let file = Text::from(path.to_string());
    parsed.topology.set_file(&file);
    for m in &mut parsed.measurements {
        m.source.file = file.clone();
    }
    for d in &mut parsed.rdma {
        d.source.file = file.clone();
        for p in &mut d.ports {
            p.source.file = file.clone();
        }
    }
    for p in &mut parsed.pcie {
        p.source.file = file.clone();
    }
    let problems = parsed
        .issues
        .iter()
        .map(|i| Problem {
            file: path.to_string(),
            line: Some(i.line),
            kind: match i.kind {
                IssueKind::Truncated => ProblemKind::Truncated,
                IssueKind::ToolError => ProblemKind::ToolError,
            },
            message: i.message.clone(),
        })
        .collect();
    Reading {
        transcript: Some(Transcript {
            path: path.to_string(),
            tool,
            sha256: sha256_hex(bytes),
            text: text.to_string(),
            notes: parsed.notes,
        }),
        topology: parsed.topology,
        measurements: parsed.measurements,
        rdma: parsed.rdma,
        pcie: parsed.pcie,
        problems,
    }
}

/// Whether `text` is a wire-report bundle rather than a transcript.
pub fn is_bundle(text: &str) -> bool {
    text.trim_start().starts_with('{') && text.contains("\"schema_version\"")
}

fn known_tools() -> String {
    let mut tools: Vec<Tool> = Tool::all().collect();
    tools.sort();
    tools
        .iter()
        .map(|t| t.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// SHA-256 of `bytes`, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in digest {
        s.push(char::from(HEX[usize::from(b >> 4)]));
        s.push(char::from(HEX[usize::from(b & 15)]));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_junk_becomes_a_problem_with_a_line() {
        let b = read_transcript("junk.bin", b"line one\n\xff\xfe\x00");
        assert_eq!(b.problems.len(), 1);
        assert_eq!(
            b.problems[0].one_line(),
            "junk.bin:2: expected UTF-8 text; this looks like a binary file"
        );
        assert!(b.transcript.is_none());
    }

    #[test]
    fn garbled_matrix_names_the_line() {
        let b = read_transcript(
            "topo.txt",
            b"\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV4\t0-3\nGPU1\tNV4\n\nLegend:\n  X = Self\n  PIX  = Connection traversing at most a single PCIe bridge\n",
        );
        assert_eq!(b.problems.len(), 1, "{:?}", b.problems);
        assert!(
            b.problems[0]
                .one_line()
                .starts_with("topo.txt:3: nvidia-smi-topo: expected 2 cells")
        );
    }

    #[test]
    fn sha256_matches_a_known_digest() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
