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

use crate::bundle::{LineAccount, Problem, ProblemKind, Transcript};
use crate::evidence::measurement::Measurement;
use crate::evidence::pcie::PcieLink;
use crate::evidence::rdma::RdmaDevice;
use crate::evidence::text::Text;
use crate::evidence::topology::Topology;
use crate::evidence::{self, IssueKind, Tool, scan};

mod blocks;
mod decode;
use blocks::{Blocks, Use, line_account};
use decode::decode;
pub use decode::without_bom;

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
    /// Network interface counters (`ethtool -S`).
    pub interfaces: Vec<crate::evidence::ethtool::InterfaceStats>,
    /// Kernel module listings (`lsmod`).
    pub modules: Vec<crate::evidence::lsmod::ModuleListing>,
    /// NCCL/RCCL initialisations (`NCCL_DEBUG=INFO` logs).
    pub nccl: Vec<crate::evidence::nccl::NcclInit>,
    /// NUMA topologies (`numactl -H`, lstopo).
    pub numa: Vec<crate::evidence::numa::NumaTopology>,
    /// RDMA counter readings (sysfs dumps, perfquery).
    pub counters: Vec<crate::evidence::counters::CounterDump>,
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
    let decoded = match decode(bytes) {
        Ok(t) => t,
        Err((line, message)) => {
            return Reading::failed(path, Some(line), ProblemKind::Unreadable, message);
        }
    };
    let text: &str = &decoded;
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
    // `find('\0')` would look a byte at a time; the kit reads words.
    if let Some(nul) = crate::read::find_byte(0, text.as_bytes()) {
        let line = text[..nul].matches('\n').count() + 1;
        return Reading::failed(
            path,
            Some(line),
            ProblemKind::Unreadable,
            "expected text; found a NUL byte (binary file?)".into(),
        );
    }
    let plain = evidence::scan::strip_terminal_escapes(text);
    let text = plain.as_deref().unwrap_or(text);
    match evidence::scan::tabs_from_listchars(text) {
        Some(tabbed) => read_blocks(path, bytes, &tabbed),
        None => read_blocks(path, bytes, text),
    }
}

/// Scans `text` into blocks, parses each recognised one, and merges what
/// they yield, every line renumbered to the file's.
///
/// Neighbouring segments of the same tool are read as one block, with the
/// command lines between them (a session of several `osu_bw` runs, each
/// after its `export CUDA_VISIBLE_DEVICES=a,b`); text no tool recognises
/// goes with the block after it. When the tool's parser rejects such a
/// block, each segment is read alone and the rest is not understood.
fn read_blocks(path: &str, bytes: &[u8], text: &str) -> Reading {
    let mut scan = scan::scan(text);
    // Two tools pasted back to back without a command line are two blocks;
    // each block's tool is recognised as it is split off.
    let mut detected = Vec::with_capacity(scan.segments.len());
    // The scanner's lines of a text read whole are not split again.
    let whole = std::mem::take(&mut scan.whole_lines);
    for (i, seg) in std::mem::take(&mut scan.segments).into_iter().enumerate() {
        let split = (i == 0 && !whole.is_empty()).then_some(&whole[..]);
        evidence::split::split_and_detect_lines(seg, split, &mut detected);
    }
    let (segments, tools): (Vec<scan::Segment>, Vec<Option<Tool>>) = detected.into_iter().unzip();
    scan.segments = segments;
    let mut b = Blocks {
        path,
        blank_kept: &scan.blank_kept,
        all: evidence::Parsed::default(),
        blocks: Vec::new(),
        problems: Vec::new(),
        uses: vec![Use::Unset; scan.blank.len()],
    };
    for s in &scan.skipped {
        b.set(s.line, Use::Skipped(s.reason.as_str()));
    }
    let fenced = after_fence(&scan);
    for group in groups(&tools, &fenced) {
        let tool = group.iter().find_map(|&i| tools[i]);
        let Some(tool) = tool else {
            group.iter().for_each(|&i| b.unread(&scan.segments[i]));
            continue;
        };
        if let [i] = group[..] {
            let seg = &scan.segments[i];
            b.take(seg, tool, parse_block(tool, &seg.text), &[]);
            continue;
        }
        let mut joined = scan.segments[group[0]].clone();
        for &i in &group[1..] {
            joined.append(&scan.segments[i]);
        }
        if evidence::detect(&joined.text) == Some(tool)
            && let Ok(parsed) = evidence::parse(tool, &joined.text)
        {
            let loose: Vec<usize> = group
                .iter()
                .filter(|&&i| tools[i].is_none())
                .flat_map(|&i| scan.segments[i].lines.iter().copied())
                .collect();
            b.take(&joined, tool, Ok(parsed), &loose);
            continue;
        }
        for &i in &group {
            let seg = &scan.segments[i];
            match tools[i] {
                Some(t) => b.take(seg, t, parse_block(t, &seg.text), &[]),
                None => b.unread(seg),
            }
        }
    }
    let read = b.blocks.len();
    for (line, command) in silent_session(&scan) {
        if let Some(listing) = evidence::lsmod::empty_listing(command, *line) {
            b.silent(*line, command, listing);
        }
    }
    if b.blocks.len() > read {
        b.blocks.sort_by_key(|k| k.first_line);
    }
    if b.blocks.is_empty() {
        if b.problems.is_empty() {
            // Named at the first line of text (past prompts and fences).
            let first = scan.segments.first().map_or(1, |s| s.range().0.max(1));
            return Reading::failed(
                path,
                Some(first),
                ProblemKind::Unrecognized,
                format!("expected a transcript of a known tool ({})", known_tools()),
            );
        }
        return Reading {
            problems: b.problems,
            ..Reading::default()
        };
    }
    let account = line_account(&b.uses, &scan.blank);
    let mut r = read_parsed(path, bytes, text, b.blocks[0].tool, b.all);
    b.problems.append(&mut r.problems);
    r.problems = b.problems;
    if let Some(t) = &mut r.transcript {
        t.blocks = b.blocks;
        t.lines = account;
    }
    r
}

/// The command lines that printed nothing, less those in a run of such
/// lines (nothing printed between them) where one of them always prints
/// (`$ lsmod` then `$ lsmod | grep scull`): such a run lists commands to
/// type, as a how-to does, and says nothing of what they printed.
fn silent_session<'s>(scan: &'s scan::Scan<'_>) -> Vec<&'s (usize, String)> {
    // Most texts have no silent command: the printed lines are not
    // gathered for nothing.
    if scan.silent.is_empty() {
        return Vec::new();
    }
    let printed: std::collections::BTreeSet<usize> = scan
        .segments
        .iter()
        .flat_map(|s| s.lines.iter().copied())
        .collect();
    let mut out = Vec::new();
    let mut run: Vec<&(usize, String)> = Vec::new();
    let mut end_run = |run: &mut Vec<&'s (usize, String)>| {
        if !run.iter().any(|(_, c)| evidence::lsmod::prints_always(c)) {
            out.extend(run.iter().copied());
        }
        run.clear();
    };
    for s in &scan.silent {
        if let Some(&(last, _)) = run.last()
            && (s.0 <= *last || printed.range(last + 1..s.0).next().is_some())
        {
            end_run(&mut run);
        }
        run.push(s);
    }
    end_run(&mut run);
    out
}

/// The most lines, blank ones aside, that may follow a block's last
/// readable line and be taken for a stray tail ("Thanks!", a signature)
/// rather than the tool's output.
const STRAY_TAIL_LINES: usize = 3;

/// `tool`'s parser over a block; where it rejects the block at one of its
/// last few lines ([`STRAY_TAIL_LINES`]: a sentence typed after the
/// output, "Any idea?"), the lines before are read and that line is a row
/// not understood, not a rejection of the whole block.
fn parse_block(tool: Tool, text: &str) -> Result<evidence::Parsed, evidence::ParseError> {
    let e = match evidence::parse(tool, text) {
        Ok(p) => return Ok(p),
        Err(e) => e,
    };
    let lines: Vec<&str> = text.lines().collect();
    let tail = e.line.checked_sub(1).and_then(|i| lines.get(i..));
    let stray = tail.is_some_and(|t| {
        e.line > 1
            && !t.is_empty()
            && t.iter().filter(|l| !l.trim().is_empty()).count() <= STRAY_TAIL_LINES
            && lines[..e.line - 1].iter().any(|l| !l.trim().is_empty())
    });
    if !stray {
        return Err(e);
    }
    let head: String = lines[..e.line - 1]
        .iter()
        .map(|l| format!("{l}\n"))
        .collect();
    let Ok(mut p) = evidence::parse(tool, &head) else {
        return Err(e);
    };
    let first_stray = e.line;
    let _: Option<()> = p.row(tool.as_str(), Err(e));
    p.unread_lines.extend(first_stray..=lines.len());
    Ok(p)
}

/// For each segment, whether a code fence is the last line before it
/// (blank lines aside): the text after a closing fence.
fn after_fence(scan: &scan::Scan) -> Vec<bool> {
    let fences: Vec<usize> = scan
        .skipped
        .iter()
        .filter(|s| s.reason == scan::SkipReason::Fence)
        .map(|s| s.line)
        .collect();
    scan.segments
        .iter()
        .map(|seg| {
            let mut n = seg.range().0;
            while n > 1 {
                n -= 1;
                if fences.binary_search(&n).is_ok() {
                    return true;
                }
                if !scan.blank.get(n - 1).copied().unwrap_or(true) {
                    return false;
                }
            }
            false
        })
        .collect()
}

/// Runs of segment indices read together: neighbours of one tool, with
/// the unrecognised segments before them. Unrecognised text at the end
/// goes with the last block, unless a code fence ended that block
/// (`fenced[i]`: segment `i` starts after a fence).
fn groups(tools: &[Option<Tool>], fenced: &[bool]) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut cur: Vec<usize> = Vec::new();
    let mut cur_tool: Option<Tool> = None;
    let mut waiting: Vec<usize> = Vec::new();
    for (i, t) in tools.iter().enumerate() {
        match *t {
            None => waiting.push(i),
            Some(t) if cur_tool.is_none() || cur_tool == Some(t) => {
                cur.append(&mut waiting);
                cur.push(i);
                cur_tool = Some(t);
            }
            Some(t) => {
                out.push(std::mem::take(&mut cur));
                cur.append(&mut waiting);
                cur.push(i);
                cur_tool = Some(t);
            }
        }
    }
    // The prose after a closing fence ("Any idea?") is read alone.
    let apart = waiting
        .iter()
        .position(|&i| fenced.get(i).copied().unwrap_or(false))
        .unwrap_or(waiting.len());
    cur.extend(waiting.drain(..apart));
    if !cur.is_empty() {
        out.push(cur);
    }
    if !waiting.is_empty() {
        out.push(waiting);
    }
    out
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
    parsed.for_each_source(|s| s.file = file.clone());
    let problems = parsed
        .issues
        .iter()
        .map(|i| Problem {
            file: path.to_string(),
            line: Some(i.line),
            kind: match i.kind {
                IssueKind::Truncated => ProblemKind::Truncated,
                IssueKind::ToolError => ProblemKind::ToolError,
                IssueKind::Unreadable => ProblemKind::Parse,
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
            blocks: Vec::new(),
            lines: LineAccount::default(),
        }),
        topology: parsed.topology,
        measurements: parsed.measurements,
        rdma: parsed.rdma,
        pcie: parsed.pcie,
        interfaces: parsed.interfaces,
        modules: parsed.modules,
        nccl: parsed.nccl,
        numa: parsed.numa,
        counters: parsed.counters,
        problems,
    }
}

/// Whether `text` is a wire-report bundle rather than a transcript.
pub fn is_bundle(text: &str) -> bool {
    without_bom(text).trim_start().starts_with('{') && text.contains("\"schema_version\"")
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
mod tests;
