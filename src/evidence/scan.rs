//! The scanner: any pasted text in, the tool blocks in it out, each with the
//! original line number of every line it hands a parser.
//!
//! People paste transcripts with shell prompts and command lines, MPI and
//! launcher prefixes (`[rank 0] `, `[1,0]<stdout>:`), quoting (`> `),
//! markdown fences, timestamps (kubectl `--timestamps`), common
//! indentation, CRLF, and several commands in one paste. The scanner takes
//! those off, line by line, and remembers for every line it keeps where it
//! came from, so every fact still names the line of the file the user
//! gave. Lines it takes out are [`Skip`]s with a reason; a prompt's command
//! is kept on its block (it says which collective, which GPU, which flags).
//!
//! Blocks are separated by command lines and code fences: each run of
//! text between two of them is one candidate block, and the tool is
//! recognised from the block's own content ([`detect`](super::detect)). A
//! block no tool recognises is left to the caller to account as not
//! understood (the prose after a closing fence is never read with the
//! block the fence closed).
//!
//! Pure and allocation-bounded: the output is never larger than the input
//! plus one line map entry per line.

use std::borrow::Cow;

/// A line the scanner took out of the text a parser sees, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipReason {
    /// A shell prompt, with or without a command after it.
    Prompt,
    /// A markdown code fence (```` ``` ```` or `~~~`).
    Fence,
    /// `[sudo] password for ...`
    Password,
    /// A launcher's own message (`srun: job 12 queued and waiting for
    /// resources`), not the tool's output.
    Launcher,
    /// The rest of a line a mail encoder wrapped (quoted-printable soft
    /// line break, [`super::qp`]): read as part of the line above.
    SoftLineBreak,
}

impl SkipReason {
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::Prompt => "shell prompt or command line",
            SkipReason::Fence => "markdown code fence",
            SkipReason::Password => "sudo password prompt",
            SkipReason::Launcher => "launcher message (srun: ...)",
            SkipReason::SoftLineBreak => {
                "quoted-printable soft line break (read with the line above)"
            }
        }
    }
}

/// One line taken out, by its 1-based line number in the original text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Skip {
    pub line: usize,
    pub reason: SkipReason,
}

/// A run of lines between two command lines: what a parser is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment<'a> {
    /// The command line that introduced it (prompt removed), if any.
    pub command: Option<String>,
    /// That line as pasted (prefixes off, prompt kept), and its number.
    pub prompt_line: Option<(usize, Cow<'a, str>)>,
    /// The text with prefixes, quotes, common indentation and `\r` taken
    /// off; borrowed when nothing had to change.
    pub text: Cow<'a, str>,
    /// `lines[i]` is the original 1-based line number of line `i + 1` of
    /// `text`.
    pub lines: Vec<usize>,
}

impl<'a> Segment<'a> {
    /// The original line of `line` (1-based in [`Segment::text`]); a line
    /// past the end (a parser naming "the end") maps to the last line.
    pub fn original(&self, line: usize) -> usize {
        let i = line
            .saturating_sub(1)
            .min(self.lines.len().saturating_sub(1));
        self.lines.get(i).copied().unwrap_or(line)
    }

    /// `context`, this segment's prompt line and this segment as one
    /// text: what preceded a command (`export CUDA_VISIBLE_DEVICES=0,1`,
    /// a launcher's banner) read with its output.
    pub fn after(&self, context: &Segment<'a>) -> Segment<'a> {
        let mut joined = context.clone();
        joined.append(self);
        joined
    }

    /// `next` appended to this segment in place, as [`Segment::after`]
    /// joins them: a group of many segments is joined in linear time.
    pub fn append(&mut self, next: &Segment<'a>) {
        let text = self.text.to_mut();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        if let Some((n, l)) = &next.prompt_line {
            text.push_str(l.trim());
            text.push('\n');
            self.lines.push(*n);
        }
        text.push_str(&next.text);
        self.lines.extend(&next.lines);
        if self.command.is_none() {
            self.command = next.command.clone();
        }
    }

    /// Original line numbers of the segment's first and last lines.
    pub fn range(&self) -> (usize, usize) {
        (
            self.lines.first().copied().unwrap_or(0),
            self.lines.last().copied().unwrap_or(0),
        )
    }
}

/// What the scanner made of a text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan<'a> {
    pub segments: Vec<Segment<'a>>,
    pub skipped: Vec<Skip>,
    /// `blank[i]`: whether line `i + 1` of the text is blank (whitespace
    /// only, as pasted); one entry per line of the text.
    pub blank: Vec<bool>,
    /// `blank_kept[i]`: whether line `i + 1` is blank once its prefixes
    /// and `\r` are off, as a segment holds it (one entry per line).
    pub blank_kept: Vec<bool>,
    /// Command lines that printed nothing before the next command or the
    /// end (`lsmod | grep nv_peer_mem`), with their line: an empty grep
    /// says something too.
    pub silent: Vec<(usize, String)>,
    /// The lines of `segments[0]` when it borrows the whole text (as
    /// [`super::push_lines`] splits it), so that the splitter need not
    /// split the text again; empty otherwise.
    pub whole_lines: Vec<&'a str>,
}

/// Splits `text` into segments at command lines, with every line's prefix
/// taken off and its original number kept.
pub fn scan(text: &str) -> Scan<'_> {
    // One entry per line in each list: sized once by a newline count
    // (memchr), not grown.
    let n_lines = crate::read::byte_indices(b'\n', text.as_bytes()).count() + 1;
    let mut out = Scan {
        blank: Vec::with_capacity(n_lines),
        blank_kept: Vec::with_capacity(n_lines),
        ..Scan::default()
    };
    // Whether a line ends in `=` (blanks after it taken off): perhaps a
    // quoted-printable soft break, decided once (`qp`) after the loop.
    let mut soft = false;
    let mut cur: Vec<(usize, &str)> = Vec::with_capacity(n_lines);
    let mut command: Option<(String, usize, &str)> = None;
    // The command-line checks' byte searches, made over the text.
    let mut finds = command::Finds::new(text.as_bytes());
    // (memchr: `contains` looks at the text a byte at a time.)
    let mut changed = crate::read::find_byte(b'\r', text.as_bytes()).is_some();
    // Indentation of the whole paste comes off first (a quoted block
    // inside an indented one: `    > Running ...`).
    let outer = common_indent(super::lines(text));
    // Then a mark every line carries (pdsh's `host: `, a `% `).
    let shared = shared_prefix(text, outer);
    changed |= shared.is_some();
    for (i, raw) in super::lines(text).enumerate() {
        let n = i + 1;
        let end = trim_end(raw);
        out.blank.push(end.is_empty());
        soft |= end.ends_with('=');
        let raw = match outer {
            0 => raw,
            _ => raw.get(outer..).filter(|_| !end.is_empty()).unwrap_or(raw),
        };
        let raw = match shared {
            Some(mark) => strip_mark(raw, mark),
            None => raw,
        };
        let line = strip_prefixes(raw.strip_suffix('\r').unwrap_or(raw));
        if line.len() != raw.len() || outer > 0 {
            changed = true;
        }
        // A line nothing was taken off is the raw line, whose end was
        // trimmed above: only its start is left to trim.
        let t = if outer == 0 && shared.is_none() && line.len() == raw.len() {
            super::trim_start(end)
        } else {
            super::trim(line)
        };
        out.blank_kept.push(t.is_empty());
        // Each skipped form is looked for where the line starts with its
        // first byte.
        let first = t.as_bytes().first().copied().unwrap_or(b' ');
        if matches!(first, b'`' | b'~') && (t.starts_with("```") || t.starts_with("~~~")) {
            out.skipped.push(Skip {
                line: n,
                reason: SkipReason::Fence,
            });
            changed = true;
            // A fence ends the block it closes (the prose after it, "Any
            // idea?", is not the tool's); a command line right before an
            // opening fence keeps its output.
            if !cur.iter().all(|&(k, _)| out.blank_kept[k - 1]) {
                flush(&mut out, &mut cur, command.take(), text, changed);
            }
            continue;
        }
        if first == b'[' && t.starts_with("[sudo] password for") {
            out.skipped.push(Skip {
                line: n,
                reason: SkipReason::Password,
            });
            changed = true;
            continue;
        }
        if first == b's' && t.starts_with("srun: ") {
            out.skipped.push(Skip {
                line: n,
                reason: SkipReason::Launcher,
            });
            changed = true;
            continue;
        }
        if let Some(cmd) = command::prompt_command_in(t, &mut finds) {
            out.skipped.push(Skip {
                line: n,
                reason: SkipReason::Prompt,
            });
            // The text is no longer one segment: nothing is borrowed whole.
            changed = true;
            flush(&mut out, &mut cur, command.take(), text, changed);
            command = Some((cmd.to_string(), n, line));
            continue;
        }
        cur.push((n, line));
    }
    // Mail-relayed text: decoded, line numbers kept (`qp`).
    if soft && let Some(d) = super::qp::decode(text) {
        return d.scan(text);
    }
    flush(&mut out, &mut cur, command, text, changed);
    out
}

/// `text` without the terminal's escape sequences (`ESC [ 4 m` ...
/// `ESC [ 0 m`: nvidia-smi underlines `topo -m`'s header even when its
/// output goes to a file), or `None` when it has none. Only the escapes
/// go: every line keeps its place, so line numbers still point into the
/// file as written.
pub fn strip_terminal_escapes(text: &str) -> Option<String> {
    if !text.contains('\u{1b}') {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        // CSI: `ESC [`, parameters and intermediates, one final byte.
        if chars.peek() == Some(&'[') {
            chars.next();
            while let Some(&p) = chars.peek() {
                if p == '\n' {
                    break;
                }
                chars.next();
                if ('@'..='~').contains(&p) {
                    break;
                }
            }
        }
    }
    Some(out)
}

/// `text` with the tabs an editor drew as arrows made tabs again, or
/// `None` when it has none. Copied from vim with `:set list` (its
/// `listchars`, `tab:→\ ` or `tab:»·`), a tab is an arrow and the blanks
/// or dots that filled it to the next tab stop; a `¬` or `↵` it drew at
/// each line's end goes too. Only a text with no tab of its own and an
/// arrow on two lines or more is taken for such a copy; every line keeps
/// its place.
pub fn tabs_from_listchars(text: &str) -> Option<String> {
    const ARROWS: [char; 5] = ['→', '»', '▸', '›', '⇥'];
    const FILL: [char; 3] = [' ', '·', '─'];
    // Every arrow is outside ASCII: a plain text is passed by at once.
    if text.is_ascii() || text.contains('\t') || !text.contains(ARROWS) {
        return None;
    }
    let drawn = text.lines().filter(|l| l.contains(ARROWS)).count();
    if drawn < 2 {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(b) => (b.strip_suffix('\r').unwrap_or(b), &line[b.len()..]),
            None => (line, ""),
        };
        let body = body.trim_end_matches(['¬', '↵']);
        let mut chars = body.chars().peekable();
        while let Some(c) = chars.next() {
            if ARROWS.contains(&c) {
                while chars.peek().is_some_and(|f| FILL.contains(f)) {
                    chars.next();
                }
                out.push('\t');
            } else {
                out.push(c);
            }
        }
        out.push_str(end);
    }
    Some(out)
}

/// `s.trim_end()`, without decoding a character where `s` ends in a
/// plain ASCII byte that is not whitespace (most lines).
fn trim_end(s: &str) -> &str {
    match s.as_bytes().last() {
        Some(&c) if c.is_ascii() && !c.is_ascii_whitespace() && c != 0x0B => s,
        None => s,
        _ => s.trim_end(),
    }
}

/// Ends the current segment (if it holds any non-blank line).
fn flush<'a>(
    out: &mut Scan<'a>,
    cur: &mut Vec<(usize, &'a str)>,
    command: Option<(String, usize, &'a str)>,
    whole: &'a str,
    changed: bool,
) {
    // Whether a line is blank was found as it was scanned
    // (`blank_kept[n - 1]` is `l.trim().is_empty()`): not trimmed again.
    let blank_kept = &out.blank_kept;
    let blank = |n: usize| blank_kept[n - 1];
    if cur.iter().all(|&(n, _)| blank(n)) {
        cur.clear();
        if let Some((c, n, _)) = command.filter(|c| !c.0.is_empty()) {
            out.silent.push((n, c));
        }
        return;
    }
    let indent = indent_of(cur.iter().map(|&(n, l)| (l, blank(n))));
    let lines: Vec<usize> = cur.iter().map(|(n, _)| *n).collect();
    let text = if !changed && indent == 0 && out.segments.is_empty() {
        // Unchanged: every line of the text, as pasted (no `\r`).
        out.whole_lines = cur.iter().map(|&(_, l)| l).collect();
        Cow::Borrowed(whole)
    } else {
        let mut s = String::with_capacity(cur.iter().map(|(_, l)| l.len() + 1).sum());
        for &(n, l) in cur.iter() {
            if blank(n) {
                s.push('\n');
                continue;
            }
            s.push_str(&l[indent.min(l.len())..]);
            s.push('\n');
        }
        Cow::Owned(s)
    };
    cur.clear();
    let (command, prompt_line) = match command {
        Some((c, n, l)) => ((!c.is_empty()).then_some(c), Some((n, Cow::Borrowed(l)))),
        None => (None, None),
    };
    out.segments.push(Segment {
        command,
        prompt_line,
        text,
        lines,
    });
}

/// A mark at the start of every non-blank line of `text` (past `outer`
/// bytes of indentation) that no per-line stripper takes off: pdsh's and
/// clush's `host: ` (one host), or a `%` comment mark. Command lines
/// (`$ pdsh -w gpu07 ibstat`) need not carry it. Only a mark on every
/// line counts, so a field name at the margin (`CA type: `, one line of
/// many) is never taken for one. Returns the mark without its blank
/// (`gpu07:`, `%`).
fn shared_prefix(text: &str, outer: usize) -> Option<&str> {
    fn body(l: &str, outer: usize) -> Option<&str> {
        let l = l.get(outer..).unwrap_or(l);
        (!l.trim().is_empty()).then_some(l)
    }
    let body = |l| body(l, outer);
    let first = super::lines(text)
        .find_map(|l| body(l).filter(|b| command::prompt_command(b.trim()).is_none()))?;
    let mark = if first.starts_with('%') {
        "%"
    } else {
        let (host, rest) = first.split_once(':')?;
        let ok = host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
            && host
                .as_bytes()
                .first()
                .is_some_and(u8::is_ascii_alphanumeric)
            && (rest.is_empty() || rest.starts_with(' '));
        if !ok {
            return None;
        }
        &first[..host.len() + 1]
    };
    let mut marked = 0;
    for l in super::lines(text).filter_map(body) {
        if l.starts_with(mark) {
            marked += 1;
        } else if command::prompt_command(l.trim()).is_none() {
            return None;
        }
    }
    (marked >= 2).then_some(mark)
}

/// `line` without `mark` and the one blank after it.
fn strip_mark<'a>(line: &'a str, mark: &str) -> &'a str {
    match line.strip_prefix(mark) {
        Some(rest) => rest.strip_prefix(' ').unwrap_or(rest),
        None => line,
    }
}

/// Bytes of leading whitespace that every non-blank line shares.
pub(super) fn common_indent<'a>(lines: impl Iterator<Item = &'a str>) -> usize {
    indent_of(lines.map(|l| (l, super::trim(l).is_empty())))
}

/// [`common_indent`] of lines each given with whether it is blank.
fn indent_of<'a>(lines: impl Iterator<Item = (&'a str, bool)>) -> usize {
    let mut common: Option<&str> = None;
    for (l, blank) in lines {
        if blank {
            continue;
        }
        // Spaces and tabs only: a byte count never splits a character.
        let ws = &l[..l.bytes().take_while(|b| *b == b' ' || *b == b'\t').count()];
        common = Some(match common {
            None => ws,
            Some(c) => {
                let k = c
                    .bytes()
                    .zip(ws.bytes())
                    .take_while(|(a, b)| a == b)
                    .count();
                &c[..k]
            }
        });
        if common == Some("") {
            return 0;
        }
    }
    common.map_or(0, str::len)
}

mod command;
mod prefixes;

#[cfg(test)]
use command::first_word;
pub use command::prompt_command;
pub(crate) use command::{DEVICE_TOOLS, is_command};
pub use prefixes::strip_prefixes;

#[cfg(test)]
mod tests;
