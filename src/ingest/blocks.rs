//! The blocks of one file as they are read, and what each line of the
//! file was used for: read, skipped (and why) or not understood. The
//! line account a transcript carries is counted from these uses.

use crate::bundle::{Block, LineAccount, Problem, ProblemKind};
use crate::evidence::{self, IssueKind, Tool, scan};

/// What one line of a file was used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Use {
    /// Not yet assigned (a blank line between blocks ends up here).
    Unset,
    Read,
    Skipped(&'static str),
    NotUnderstood,
}

/// The blocks of one file as they are read: facts, problems, lines.
pub(super) struct Blocks<'p> {
    pub(super) path: &'p str,
    /// Whether each line of the file is blank as a segment holds it
    /// ([`scan::Scan::blank_kept`]).
    pub(super) blank_kept: &'p [bool],
    pub(super) all: evidence::Parsed,
    pub(super) blocks: Vec<Block>,
    pub(super) problems: Vec<Problem>,
    pub(super) uses: Vec<Use>,
}

/// A block's text line by its file line number: what
/// `lines.zip(text.lines()).collect::<HashMap<_, _>>()` answers (the last
/// text of a number given twice), in a list over the numbers' range
/// instead of a hashed map.
#[derive(Default)]
pub(super) struct LineTexts<'t> {
    first: usize,
    texts: Vec<Option<&'t str>>,
}

impl<'t> LineTexts<'t> {
    pub(super) fn new(lines: &[usize], text: &'t str) -> LineTexts<'t> {
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

    pub(super) fn get(&self, n: usize) -> Option<&'t str> {
        self.texts
            .get(n.checked_sub(self.first)?)
            .copied()
            .flatten()
    }
}

impl Blocks<'_> {
    pub(super) fn set(&mut self, line: usize, u: Use) {
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
    pub(super) fn take(
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
    pub(super) fn silent(
        &mut self,
        line: usize,
        command: &str,
        listing: evidence::lsmod::ModuleListing,
    ) {
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
    pub(super) fn unread(&mut self, seg: &scan::Segment) {
        for &n in &seg.lines {
            if n >= 1 && self.uses.get(n - 1) == Some(&Use::Unset) && !self.blank_kept(n) {
                self.set(n, Use::NotUnderstood);
            }
        }
    }
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

/// Counts the lines' uses; an unassigned line is blank or not understood
/// (`blank[i]`: line `i + 1` is blank).
pub(super) fn line_account(uses: &[Use], blank: &[bool]) -> LineAccount {
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
