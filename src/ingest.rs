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

use crate::bundle::{Block, LineAccount, Problem, ProblemKind, Transcript};
use crate::evidence::measurement::Measurement;
use crate::evidence::pcie::PcieLink;
use crate::evidence::rdma::RdmaDevice;
use crate::evidence::text::Text;
use crate::evidence::topology::Topology;
use crate::evidence::{self, IssueKind, Tool, scan};

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

/// What one line of a file was used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Use {
    /// Not yet assigned (a blank line between blocks ends up here).
    Unset,
    Read,
    Skipped(&'static str),
    NotUnderstood,
}

/// The blocks of one file as they are read: facts, problems, lines.
struct Blocks<'p> {
    path: &'p str,
    /// Whether each line of the file is blank as a segment holds it
    /// ([`scan::Scan::blank_kept`]).
    blank_kept: &'p [bool],
    all: evidence::Parsed,
    blocks: Vec<Block>,
    problems: Vec<Problem>,
    uses: Vec<Use>,
}

/// A block's text line by its file line number: what
/// `lines.zip(text.lines()).collect::<HashMap<_, _>>()` answers (the last
/// text of a number given twice), in a list over the numbers' range
/// instead of a hashed map.
#[derive(Default)]
struct LineTexts<'t> {
    first: usize,
    texts: Vec<Option<&'t str>>,
}

impl<'t> LineTexts<'t> {
    fn new(lines: &[usize], text: &'t str) -> LineTexts<'t> {
        let pairs = || lines.iter().copied().zip(evidence::lines(text));
        let (Some(first), Some(last)) = (pairs().map(|p| p.0).min(), pairs().map(|p| p.0).max())
        else {
            return LineTexts::default();
        };
        let mut texts = vec![None; last - first + 1];
        for (n, t) in pairs() {
            texts[n - first] = Some(t);
        }
        LineTexts { first, texts }
    }

    fn get(&self, n: usize) -> Option<&'t str> {
        self.texts
            .get(n.checked_sub(self.first)?)
            .copied()
            .flatten()
    }
}

impl Blocks<'_> {
    fn set(&mut self, line: usize, u: Use) {
        if let Some(x) = line.checked_sub(1).and_then(|i| self.uses.get_mut(i)) {
            *x = u;
        }
    }

    /// Whether line `n` of the file is blank in the segment that holds it
    /// (a segment's text has one line per entry of its `lines`).
    fn blank_kept(&self, n: usize) -> bool {
        n.checked_sub(1)
            .and_then(|i| self.blank_kept.get(i))
            .copied()
            .unwrap_or(true)
    }

    /// A block its tool's parser read (or rejected). `loose` are the lines
    /// of text no tool recognised that were read along with the block (an
    /// environment dump before a run): read only where a fact cites them.
    fn take(
        &mut self,
        seg: &scan::Segment,
        tool: Tool,
        parsed: Result<evidence::Parsed, evidence::ParseError>,
        loose: &[usize],
    ) {
        let mut p = match parsed {
            Ok(p) => p,
            Err(e) => {
                self.problems.push(Problem {
                    file: self.path.to_string(),
                    line: Some(seg.original(e.line)),
                    kind: ProblemKind::Parse,
                    message: format!(
                        "{}: expected {}",
                        tool.as_str(),
                        evidence::map_line_refs(&e.expected, &|l| seg.original(l))
                    ),
                });
                self.unread(seg);
                return;
            }
        };
        evidence::context::apply(tool, seg.command.as_deref(), &seg.text, &mut p);
        p.map_lines(|l| seg.original(l));
        // A line a fact cites is read, even when a note is attached to it.
        for &n in &seg.lines {
            let u = if self.blank_kept(n) {
                Use::Skipped("blank")
            } else {
                Use::Read
            };
            self.set(n, u);
        }
        // Lines the parser noted and passed over are skipped, unless a
        // fact cites them (a note may sit on a row that was read).
        let mut cited = Vec::new();
        let passed = !p.skipped_lines.is_empty() || !p.unread_lines.is_empty();
        if !p.notes.is_empty() || !loose.is_empty() || passed {
            cited = vec![false; self.uses.len()];
            p.for_each_source(|s| {
                if let Some(c) = s.line.checked_sub(1).and_then(|i| cited.get_mut(i)) {
                    *c = true;
                }
            });
            // Lines the parser read a run's context from count as cited.
            for &l in &p.context_lines {
                if let Some(c) = l.checked_sub(1).and_then(|i| cited.get_mut(i)) {
                    *c = true;
                }
            }
        }
        for note in &p.notes {
            let i = note.line.wrapping_sub(1);
            if cited.get(i) == Some(&false) && self.uses.get(i) == Some(&Use::Read) {
                self.uses[i] = Use::Skipped("passed over by the parser (see notes)");
            }
        }
        // Lines the parser named as its tool's own with nothing read, or
        // as not its tool's at all: skipped or not understood, unless a
        // fact cites them.
        for &(n, why) in &p.skipped_lines {
            let i = n.wrapping_sub(1);
            if cited.get(i) == Some(&false) && self.uses.get(i) == Some(&Use::Read) {
                self.uses[i] = Use::Skipped(why);
            }
        }
        for &n in &p.unread_lines {
            let i = n.wrapping_sub(1);
            if cited.get(i) == Some(&false) && self.uses.get(i) == Some(&Use::Read) {
                self.uses[i] = Use::NotUnderstood;
            }
        }
        // Text before the tool's title (or between its runs) is read only
        // where a fact cites it or the parser read context from it: the
        // tool's own setup lines are skipped,
        // anything else (an environment dump, an MPI warning) was not
        // understood.
        // The block's text line of each file line, found once (an
        // environment dump can run to thousands of lines).
        let text_of = if loose.is_empty() {
            LineTexts::default()
        } else {
            LineTexts::new(&seg.lines, &seg.text)
        };
        for &n in loose {
            let i = n.wrapping_sub(1);
            if cited.get(i) == Some(&false) && self.uses.get(i) == Some(&Use::Read) {
                self.uses[i] = match text_of.get(n) {
                    Some(t) => loose_use(tool, t),
                    None => Use::NotUnderstood,
                };
            }
        }
        for i in &p.issues {
            if i.kind == IssueKind::Unreadable {
                self.set(i.line, Use::NotUnderstood);
            }
        }
        let (first_line, last_line) = seg.range();
        self.blocks.push(Block {
            tool,
            first_line,
            last_line,
            command: seg.command.clone(),
        });
        merge_parsed(&mut self.all, p, self.path, &mut self.problems);
    }

    /// A command that printed nothing and still says something (an empty
    /// `lsmod | grep nv_peer_mem`): a block of its own line.
    fn silent(&mut self, line: usize, command: &str, listing: evidence::lsmod::ModuleListing) {
        self.set(line, Use::Read);
        self.blocks.push(Block {
            tool: Tool::Lsmod,
            first_line: line,
            last_line: line,
            command: Some(command.to_string()),
        });
        let mut p = evidence::Parsed::default();
        p.modules.push(listing);
        merge_parsed(&mut self.all, p, self.path, &mut self.problems);
    }

    /// Lines no parser read: not understood, unless already accounted.
    fn unread(&mut self, seg: &scan::Segment) {
        for &n in &seg.lines {
            if n >= 1 && self.uses.get(n - 1) == Some(&Use::Unset) && !self.blank_kept(n) {
                self.set(n, Use::NotUnderstood);
            }
        }
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

/// What a line of unrecognised text read along with `tool`'s block is,
/// when no fact cites it.
fn loose_use(tool: Tool, line: &str) -> Use {
    let t = line.trim();
    if t.len() >= 3 && t.bytes().all(|b| matches!(b, b'-' | b'.' | b'*' | b'=')) {
        return Use::Skipped("a rule line");
    }
    if t.starts_with("export ") && t.contains('=') {
        return Use::Skipped("a shell setting");
    }
    if scan::is_command(t) {
        return Use::Skipped("a command line");
    }
    // perftest's own setup lines; nccl-tests' version line.
    let own = match tool {
        Tool::Perftest => evidence::rdma::is_perftest_setup(t),
        Tool::NcclTests => t.starts_with("# nccl-tests version") || t.starts_with("# rccl-tests"),
        _ => false,
    };
    if own {
        Use::Skipped("the tool's own setup line, no figure in it")
    } else {
        Use::NotUnderstood
    }
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

/// Counts the lines' uses; an unassigned line is blank or not understood
/// (`blank[i]`: line `i + 1` is blank).
fn line_account(uses: &[Use], blank: &[bool]) -> LineAccount {
    let mut a = LineAccount::default();
    for (i, (u, blank)) in uses.iter().zip(blank).enumerate() {
        let u = match *u {
            Use::Unset if *blank => Use::Skipped("blank"),
            Use::Unset => Use::NotUnderstood,
            u => u,
        };
        match u {
            Use::Read => a.read += 1,
            Use::Skipped(reason) => {
                a.skipped += 1;
                match a.skipped_by_reason.iter_mut().find(|x| x.0 == reason) {
                    Some(x) => x.1 += 1,
                    None => a.skipped_by_reason.push((reason.to_string(), 1)),
                }
            }
            _ => {
                a.not_understood += 1;
                a.not_understood_lines.push(i + 1);
            }
        }
    }
    a.skipped_by_reason.sort();
    a
}

/// Folds another block's facts into the file's.
fn merge_parsed(
    into: &mut evidence::Parsed,
    p: evidence::Parsed,
    path: &str,
    problems: &mut Vec<Problem>,
) {
    for c in into.topology.merge(p.topology) {
        problems.push(Problem {
            file: path.to_string(),
            line: Some(c.other.line),
            kind: ProblemKind::Conflict,
            message: format!("disagrees with line {}: {}", c.kept.line, c.what),
        });
    }
    // Most files are one block: its cells move in whole, not copied over.
    if into.measurements.is_empty() {
        into.measurements = p.measurements;
    } else {
        into.measurements.extend(p.measurements);
    }
    crate::bundle::merge_rdma(&mut into.rdma, p.rdma);
    into.pcie.extend(p.pcie);
    if !p.interfaces.is_empty() {
        into.interfaces.extend(p.interfaces);
        evidence::ethtool::settle(&mut into.interfaces, None);
    }
    into.modules.extend(p.modules);
    into.nccl.extend(p.nccl);
    into.numa.extend(p.numa);
    into.counters.extend(p.counters);
    into.notes.extend(p.notes);
    into.issues.extend(p.issues);
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

/// `text` without the UTF-8 byte-order mark Windows editors put first
/// (not whitespace to Rust, so a matrix header after it is not seen).
pub fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// The text of a transcript's bytes as editors and shells save it: UTF-8
/// with or without a byte-order mark, UTF-16 with one (PowerShell's `>`)
/// or without (told by its NUL high bytes),
/// and old Mac line ends (CR alone, no LF anywhere) made LF, one line for
/// one line. Anything else is an error with its line and why.
fn decode(bytes: &[u8]) -> Result<std::borrow::Cow<'_, str>, (usize, String)> {
    use std::borrow::Cow;
    type Unit = fn([u8; 2]) -> u16;
    let (le, be): (Unit, Unit) = (u16::from_le_bytes, u16::from_be_bytes);
    // UTF-16 saved without its mark: ASCII text with every other byte NUL.
    let head = &bytes[..bytes.len().min(512)];
    let nul_at = |odd: usize| head.len() >= 4 && head.iter().skip(odd).step_by(2).all(|b| *b == 0);
    let utf16 = match bytes {
        [0xff, 0xfe, rest @ ..] => Some((rest, le, "LE")),
        [0xfe, 0xff, rest @ ..] => Some((rest, be, "BE")),
        _ if bytes.len().is_multiple_of(2) && nul_at(1) => Some((bytes, le, "LE")),
        _ if bytes.len().is_multiple_of(2) && nul_at(0) => Some((bytes, be, "BE")),
        _ => None,
    };
    let text: Cow<str> = if let Some((rest, unit, order)) = utf16 {
        let units = rest.chunks(2).map(|c| match c {
            [a, b] => unit([*a, *b]),
            // An odd last byte: a cut file; the replacement names it below.
            _ => 0xd800,
        });
        let mut s = String::with_capacity(rest.len() / 2);
        for c in char::decode_utf16(units) {
            match c {
                Ok(c) => s.push(c),
                Err(_) => {
                    let line = s.matches('\n').count() + 1;
                    return Err((
                        line,
                        format!("expected UTF-16 {order} text; found a broken character"),
                    ));
                }
            }
        }
        Cow::Owned(s)
    } else {
        match std::str::from_utf8(bytes) {
            Ok(t) => Cow::Borrowed(without_bom(t)),
            Err(e) => {
                let line = bytes[..e.valid_up_to()]
                    .iter()
                    .filter(|b| **b == b'\n')
                    .count()
                    + 1;
                return Err((
                    line,
                    "expected UTF-8 or UTF-16 text; this looks like a binary file".into(),
                ));
            }
        }
    };
    if text.contains('\r') && !text.contains('\n') {
        return Ok(Cow::Owned(text.replace('\r', "\n")));
    }
    Ok(text)
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
    fn line_texts_answer_as_a_hash_map_of_the_pairs() {
        let text = "a\nb\r\n\nc\nd";
        for lines in [
            &[][..],
            &[3],
            &[4, 5, 9, 10],
            &[7, 2, 7],
            &[1, 2, 3, 4, 5, 6, 7],
        ] {
            let want: std::collections::HashMap<usize, &str> =
                lines.iter().copied().zip(text.lines()).collect();
            let got = LineTexts::new(lines, text);
            for n in 0..14 {
                assert_eq!(got.get(n), want.get(&n).copied(), "{lines:?} {n}");
            }
        }
    }

    #[test]
    fn binary_junk_becomes_a_problem_with_a_line() {
        let b = read_transcript("junk.bin", b"line one\n\xff\xfe\x00");
        assert_eq!(b.problems.len(), 1);
        assert_eq!(
            b.problems[0].one_line(),
            "junk.bin:2: expected UTF-8 or UTF-16 text; this looks like a binary file"
        );
        assert!(b.transcript.is_none());
    }

    #[test]
    fn garbled_matrix_names_the_line() {
        let b = read_transcript(
            "topo.txt",
            b"\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV4\t0-3\nGPU1\tNV4\n\nLegend:\n  X = Self\n  PIX  = Connection traversing at most a single PCIe bridge\n  NV#  = Connection traversing a bonded set of # NVLinks\n",
        );
        assert_eq!(b.problems.len(), 1, "{:?}", b.problems);
        assert!(
            b.problems[0]
                .one_line()
                .starts_with("topo.txt:3: nvidia-smi-topo: expected 2 cells")
        );
    }

    #[test]
    fn silent_commands_out_of_line_order_never_panic() {
        // Synthetic: a scan whose silent commands are not in line order
        // (no scanner makes one today); each starts a run of its own.
        let mut scan = scan::scan("a\nb\nc\nd\ne\nf\n");
        scan.silent = vec![
            (5, "lsmod | grep nv_peer_mem".into()),
            (3, "lsmod | grep nvidia_peermem".into()),
        ];
        assert_eq!(silent_session(&scan).len(), 2);
    }

    #[test]
    fn sha256_matches_a_known_digest() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
