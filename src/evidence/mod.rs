//! Evidence: the typed facts a transcript holds, and the pure parsers that
//! turn text into them.
//!
//! Every parser takes `&str` and returns typed evidence or a [`ParseError`]
//! naming the line and what was expected there. Nothing here reads files,
//! runs commands or panics on bad input. [`detect`] picks the parser from the
//! content alone, never from a file name.

/// `$text.contains($needle)` for a literal a detector looks for in every
/// block the tool table is shown: the searcher ([`crate::read::literal`],
/// which picks the needle's bytes rarest in transcripts and scans 32
/// bytes a step) is built once for the process, where
/// `str::contains` sets one up on every call.
macro_rules! has {
    ($text:expr, $needle:literal) => {{
        static LITERAL: std::sync::LazyLock<$crate::evidence::grams::Literal> =
            std::sync::LazyLock::new(|| $crate::evidence::grams::Literal::new($needle));
        LITERAL.is_in(($text).as_bytes())
    }};
}

pub mod answers;
pub mod collective;
pub mod context;
pub mod copy;
pub mod counters;
pub mod ethtool;
mod grams;
pub mod lsmod;
pub mod measurement;
pub mod mpi;
pub mod nccl;
pub mod numa;
pub mod pcie;
pub mod qp;
pub mod rdma;
pub mod scan;
pub mod split;
pub mod text;
pub mod tools;
pub mod topology;
mod words;
pub(crate) use words::{SplitWords, key_value};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub(crate) use crate::read::{lines, push_lines};
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
    /// `peer_copy_bw`, the curriculum's own peer copy program (HIP or
    /// CUDA build; see `copy::peer_copy_bw`)
    PeerCopyBw,
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
    /// `dcgmi nvlink -s` (`--link-status`)
    DcgmiNvlink,
    /// `ppu-smi topo -mp`: devices and affinities only (see `topology::ppu`)
    PpuSmiTopo,
    /// `lsmod`, whole or through `grep`
    Lsmod,
    /// NCCL's or RCCL's own log, `NCCL_DEBUG=INFO` (see `nccl`)
    NcclInfo,
    /// `numactl -H` / `--hardware` (see `numa`)
    Numactl,
    /// lstopo, lstopo-no-graphics, hwloc-ls text (see `numa`)
    Lstopo,
    /// RDMA counter dumps: `grep .` over sysfs counters, `perfquery`
    /// (see `counters`)
    RdmaCounters,
    /// `ibv_display_local_infiniband_device_statistics`: sysfs RDMA
    /// counters every 10 s (see `rdma::statistics`)
    IbvDeviceStatistics,
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

    /// A view of `nvidia-smi` (only NVIDIA GPUs print one).
    pub fn is_nvidia_smi(self) -> bool {
        matches!(
            self,
            Tool::NvidiaSmiTopo | Tool::NvidiaSmiP2p | Tool::NvidiaSmiNvlink | Tool::NvidiaSmiQ
        )
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
    /// Kernel module listings (`lsmod`).
    pub modules: Vec<lsmod::ModuleListing>,
    /// NCCL/RCCL initialisations (`NCCL_DEBUG=INFO` logs).
    pub nccl: Vec<nccl::NcclInit>,
    /// NUMA topologies (`numactl -H`, lstopo).
    pub numa: Vec<numa::NumaTopology>,
    /// RDMA counter readings (sysfs dumps, perfquery).
    pub counters: Vec<counters::CounterDump>,
    pub notes: Vec<Note>,
    pub issues: Vec<Issue>,
    /// Lines a parser read context from that no single fact cites (a
    /// perftest run's GPU, its buffer registration, its server side):
    /// they count as read.
    pub context_lines: Vec<usize>,
    /// Lines of the tool's own that the parser passed over, with why:
    /// skipped unless a fact cites them (an NCCL log's many lines that
    /// are no fact of ours).
    pub skipped_lines: Vec<(usize, &'static str)>,
    /// Lines in the block that are not the tool's at all (an
    /// application's output between NCCL's lines): not understood.
    pub unread_lines: Vec<usize>,
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
            for p in &mut d.ports {
                f(&mut p.source);
                p.counters
                    .iter_mut()
                    .filter_map(|c| c.source.as_mut())
                    .for_each(&mut f);
            }
        }
        self.pcie.iter_mut().for_each(|p| f(&mut p.source));
        for i in &mut self.interfaces {
            f(&mut i.source);
            i.counters.iter_mut().for_each(|c| f(&mut c.source));
        }
        for m in &mut self.modules {
            f(&mut m.source);
            m.rows.iter_mut().for_each(|r| f(&mut r.source));
        }
        for n in &mut self.nccl {
            n.for_each_source(&mut f);
        }
        for n in &mut self.numa {
            n.for_each_source(&mut f);
        }
        for c in &mut self.counters {
            c.for_each_source(&mut f);
        }
    }

    /// Renumbers every line this reading names (facts, notes, issues)
    /// with `map`: from a scanned segment's lines to the original file's.
    /// A message that names a line in its text ("cut after line 12",
    /// "`Attached GPUs : 2` (line 8)") is renumbered too.
    pub fn map_lines(&mut self, map: impl Fn(usize) -> usize) {
        self.for_each_source(|s| s.line = map(s.line));
        for l in &mut self.context_lines {
            *l = map(*l);
        }
        for (l, _) in &mut self.skipped_lines {
            *l = map(*l);
        }
        for l in &mut self.unread_lines {
            *l = map(*l);
        }
        // A text that names no line stays as it is (no copy).
        for n in &mut self.notes {
            n.line = map(n.line);
            if n.text.contains("line") {
                n.text = map_line_refs(&n.text, &map);
            }
        }
        for i in &mut self.issues {
            i.line = map(i.line);
            if i.message.contains("line") {
                i.message = map_line_refs(&i.message, &map);
            }
        }
    }

    /// A row that could not be read: `Err` becomes a problem at its line
    /// (`tool: expected ...`) and `None`; the caller goes on with the next
    /// row. The one place every parser turns a row's error into a problem.
    pub fn row<T>(&mut self, tool: &str, r: Result<T, ParseError>) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.bad_row(e.line, format!("{tool}: expected {}", e.expected));
                None
            }
        }
    }

    /// A table or run that stops short: its complete rows were read, and
    /// `missing` (what the tool prints after line `after`) is not in the
    /// transcript. Flagged at `after` as
    /// "cut after line N: {missing} not in the transcript".
    pub fn cut(&mut self, after: usize, missing: impl std::fmt::Display) {
        self.truncated(
            after,
            format!("cut after line {after}: {missing} not in the transcript"),
        );
    }

    pub fn note(&mut self, line: usize, text: impl Into<String>) {
        self.notes.push(Note {
            line,
            text: text.into(),
        });
    }
}

/// `text` with every line number it names ("line 12", "lines 3") passed
/// through `map`, outside backtick quotes (a quoted row keeps its digits).
/// Messages name lines of the text their parser saw; after the scanner
/// those are renumbered to the original file's, like the facts.
pub fn map_line_refs(text: &str, map: &impl Fn(usize) -> usize) -> String {
    if !text.contains("line") {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut quoted = false;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '`' {
            quoted = !quoted;
        } else if !quoted {
            let word = ["line ", "lines "]
                .iter()
                .find(|w| rest.starts_with(**w))
                .filter(|_| !out.ends_with(|p: char| p.is_alphanumeric()));
            if let Some(w) = word {
                let digits = rest[w.len()..]
                    .bytes()
                    .take_while(u8::is_ascii_digit)
                    .count();
                if let Ok(n) = rest[w.len()..w.len() + digits].parse::<usize>() {
                    out.push_str(w);
                    out.push_str(&map(n).to_string());
                    rest = &rest[w.len() + digits..];
                    // A range: `lines 3-7`.
                    let end = rest.strip_prefix('-').map(|r| {
                        let d = r.bytes().take_while(u8::is_ascii_digit).count();
                        (r[..d].parse::<usize>(), d)
                    });
                    if let Some((Ok(m), d)) = end {
                        out.push('-');
                        out.push_str(&map(m).to_string());
                        rest = &rest[1 + d..];
                    }
                    continue;
                }
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// Recognises the tool that printed `text`, from its content. Returns `None`
/// for anything else; [`parse`] then is not attempted. More specific
/// signatures are tried first (the order of [`TOOLS`]).
pub fn detect(text: &str) -> Option<Tool> {
    // Split once; every signature looks at the same lines.
    let mut lines = Vec::new();
    push_lines(text, &mut lines);
    for l in &mut lines {
        *l = l.strip_suffix('\r').unwrap_or(l);
    }
    detect_in(text, &lines)
}

/// [`detect`] given `text` already split into `lines` (each without a
/// trailing `\r`, as `detect` splits it).
pub(crate) fn detect_in(text: &str, lines: &[&str]) -> Option<Tool> {
    // Most literals the detectors look for are ruled out by one pass.
    let _grams = grams::Scope::enter(text);
    TOOLS
        .iter()
        .find(|s| (s.detect)(text, lines))
        .map(|s| s.tool)
}

/// Runs the parser of `tool` over `text`.
pub fn parse(tool: Tool, text: &str) -> Result<Parsed, ParseError> {
    (tool.spec().parse)(text)
}

/// Two numbers a tool printed without a space between them (`35.9136.07`,
/// a 4-digit diagonal overflowing its field: `832.005.90`). Parsers let
/// such a token stand for both columns, so the row's other cells keep
/// their columns and only those two are lost.
pub(crate) fn is_glued(t: &str) -> bool {
    t.bytes().filter(|b| *b == b'.').count() >= 2
        && t.bytes().all(|b| b.is_ascii_digit() || b == b'.')
}

/// A value and its unit as the cell shows them (`12.5 GB/s`): what
/// `format!("{value} {unit}")` makes, without the formatter or, for most
/// figures, an allocation (one per cell).
pub(crate) fn printed(value: &str, unit: &str) -> text::Text {
    text::Text::concat(&[value, " ", unit])
}

/// `s.trim()`, inlined: ASCII spaces and tabs at either end are stripped
/// by a byte look, and `str::trim` (a call that decodes characters) runs
/// only where an end holds other whitespace or a non-ASCII character.
/// For the looks every line of every block gets.
#[inline]
pub(crate) fn trim(s: &str) -> &str {
    let t = trim_start(s);
    let b = t.as_bytes();
    let mut j = b.len();
    while j > 0 && matches!(b[j - 1], b' ' | b'\t') {
        j -= 1;
    }
    match j.checked_sub(1).map(|k| b[k]) {
        Some(c) if !c.is_ascii() || c.is_ascii_whitespace() || c == 0x0B => t.trim_end(),
        _ => &t[..j],
    }
}

/// `s.trim_start()`, inlined as [`trim`] is.
#[inline]
pub(crate) fn trim_start(s: &str) -> &str {
    let b = s.as_bytes();
    let i = blanks(b);
    match b.get(i) {
        Some(&c) if !c.is_ascii() || c.is_ascii_whitespace() || c == 0x0B => s.trim_start(),
        _ => &s[i..],
    }
}

/// How many ASCII spaces and tabs `b` starts with: the count
/// `take_while` makes, with a table row's long run of spaces stepped
/// over eight bytes at a time.
#[inline]
pub(crate) fn blanks(b: &[u8]) -> usize {
    const SPACES: u64 = u64::from_ne_bytes([b' '; 8]);
    let mut i = 0;
    while let Some(w) = b.get(i..i + 8) {
        if w != SPACES.to_ne_bytes() {
            break;
        }
        i += 8;
    }
    while b.get(i).is_some_and(|c| matches!(c, b' ' | b'\t')) {
        i += 1;
    }
    i
}

/// Already-split lines with their 1-based numbers.
pub(crate) fn numbered<'a>(lines: &'a [&'a str]) -> impl Iterator<Item = (usize, &'a str)> + 'a {
    lines.iter().enumerate().map(|(i, l)| (i + 1, *l))
}

/// Lines with their 1-based numbers, a trailing `\r` removed.
pub(crate) fn numbered_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    lines(text)
        .enumerate()
        .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
}

/// [`numbered_lines`] collected into a Vec sized once by a newline count,
/// so a long transcript's Vec is not grown and copied.
pub(crate) fn numbered_vec(text: &str) -> Vec<(usize, &str)> {
    let mut v = Vec::with_capacity(crate::read::count_byte(b'\n', text.as_bytes()) + 1);
    v.extend(numbered_lines(text));
    v
}

/// The text of every file under `captures/` (tests that check a fast path
/// against the plain one on every real transcript).
#[cfg(test)]
pub(crate) fn capture_texts() -> Vec<String> {
    let mut texts = Vec::new();
    let mut dirs = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("captures")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if let Ok(text) = std::fs::read_to_string(&p) {
                texts.push(text);
            }
        }
    }
    texts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn has_agrees_with_contains() {
        let hays = [
            "",
            "a",
            "Waiting",
            "x Waiting for client",
            "é Waiting for client é",
            "WaitinWaiting for client",
        ];
        for hay in hays {
            let want = hay.contains("Waiting for client");
            assert_eq!(has!(hay, "Waiting for client"), want, "{hay}");
            assert_eq!(has!(hay, "é"), hay.contains('é'), "{hay}");
        }
    }

    #[test]
    fn push_lines_lines_and_numbered_lines_split_as_str_lines_does() {
        for text in [
            "",
            "\n",
            "\n\n",
            "a",
            "a\n",
            "a\nb",
            "a\n\nb\n",
            "a\r\n",
            "a\r",
            "a\r\r\n",
            "\r\n\r\n",
            "\r",
            "a\rb\n",
            "x\r\ny\r",
            "\u{e9}\n\u{10000}\r\n",
        ] {
            let mut got = Vec::new();
            push_lines(text, &mut got);
            assert_eq!(got, text.lines().collect::<Vec<_>>(), "{text:?}");
            let mine: Vec<&str> = lines(text).collect();
            assert_eq!(mine, text.lines().collect::<Vec<_>>(), "{text:?}");
            let numbered: Vec<(usize, &str)> = numbered_vec(text);
            let want: Vec<(usize, &str)> = text
                .lines()
                .enumerate()
                .map(|(i, l)| (i + 1, l.strip_suffix('\r').unwrap_or(l)))
                .collect();
            assert_eq!(numbered, want, "{text:?}");
        }
    }

    #[test]
    fn trim_and_trim_start_are_str_s() {
        for s in [
            "",
            " ",
            "\t \t",
            "a",
            " a ",
            "\ta b\t ",
            " \u{a0}a\u{a0} ",
            "\u{3000}x",
            "x\u{3000}",
            " \r\n",
            "\x0bq\x0b",
            " \x0c",
            "\u{e9} ",
            " \u{e9}",
            "a\u{85}",
            "\u{10000}",
        ] {
            assert_eq!(trim(s), s.trim(), "{s:?}");
            assert_eq!(trim_start(s), s.trim_start(), "{s:?}");
        }
    }

    #[test]
    fn blanks_counts_as_take_while_does() {
        for n in 0..20 {
            for head in ["", "\t", " \t"] {
                for tail in ["", "x", "\t", " \u{a0}", "\n", "\u{e9}"] {
                    let s = format!("{head}{}{tail}", " ".repeat(n));
                    let want = s.bytes().take_while(|c| matches!(c, b' ' | b'\t')).count();
                    assert_eq!(blanks(s.as_bytes()), want, "{s:?}");
                }
            }
        }
    }

    #[test]
    fn line_numbers_in_messages_are_renumbered_outside_quotes() {
        let map = |l: usize| l + 10;
        assert_eq!(
            map_line_refs("`Attached GPUs : 2` (line 8) but 1", &map),
            "`Attached GPUs : 2` (line 18) but 1"
        );
        assert_eq!(
            map_line_refs("cut after line 3: rows 4-7 not in the transcript", &map),
            "cut after line 13: rows 4-7 not in the transcript"
        );
        assert_eq!(
            map_line_refs("lines 2-5 and line 9", &map),
            "lines 12-15 and line 19"
        );
        // A quoted row keeps its text; `pipeline 3` is not a line.
        assert_eq!(
            map_line_refs("found `line 4 of 8` in pipeline 3", &map),
            "found `line 4 of 8` in pipeline 3"
        );
        assert_eq!(
            map_line_refs("a line without a number", &map),
            "a line without a number"
        );
    }

    #[test]
    fn map_lines_renumbers_messages_too() {
        let mut p = Parsed::default();
        p.cut(4, "rows GPU3..GPU7");
        p.note(2, "named at line 2");
        let x: Option<u8> = p.row("tool", Err(ParseError::new(3, "a number")));
        assert_eq!(x, None);
        p.map_lines(|l| l + 1);
        assert_eq!(p.issues[0].line, 5);
        assert_eq!(
            p.issues[0].message,
            "cut after line 5: rows GPU3..GPU7 not in the transcript"
        );
        assert_eq!(p.notes[0].text, "named at line 3");
        assert_eq!(
            (p.issues[1].line, p.issues[1].kind),
            (4, IssueKind::Unreadable)
        );
        assert_eq!(p.issues[1].message, "tool: expected a number");
    }
}
