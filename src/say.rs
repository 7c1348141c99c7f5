//! Everything the program says on standard error: progress, warnings,
//! what it wrote, the final error. Three rules live here.
//!
//! How much is said is one setting for the whole run ([`set_level`], from
//! the global `-q` / `-v`): errors always; warnings, progress, what was
//! written and the closing summary unless quiet ([`info`], [`warn`]);
//! what each file read gave only when verbose ([`detail`]).
//!
//! Saying never stops the work: `eprintln!` panics when stderr is closed or
//! full (`2>&1 | head -1` whose reader has gone, `2>/dev/full`), which lost
//! the bundle of a `collect --from` at its first progress line. A message
//! that cannot be written is dropped; the output and the exit code stand.
//!
//! Text from the input (folder, file and node names, transcript lines) is
//! shown through [`visible`]: an escape sequence in a file name must not
//! set the terminal's title or clear it, and a newline must not forge a
//! `wrote ...` line of its own.

use std::borrow::Cow;
use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};

/// How much the program says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Errors only (`-q`).
    Quiet,
    Normal,
    /// Also what each file read gave (`-v`).
    Verbose,
}

static LEVEL: AtomicU8 = AtomicU8::new(Level::Normal as u8);

/// Sets how much the run says (once, from the command line).
pub fn set_level(level: Level) {
    LEVEL.store(level as u8, Ordering::Relaxed);
}

/// How much the run says.
pub fn level() -> Level {
    match LEVEL.load(Ordering::Relaxed) {
        0 => Level::Quiet,
        1 => Level::Normal,
        _ => Level::Verbose,
    }
}

/// Whether only errors are said (`-q`).
pub fn quiet() -> bool {
    level() == Level::Quiet
}

/// A line of progress or of what was written, and the closing summary:
/// not under `-q`.
pub fn info(args: fmt::Arguments) {
    if !quiet() {
        line(args);
    }
}

/// A line of detail (what one file read gave): only under `-v`.
pub fn detail(args: fmt::Arguments) {
    if level() == Level::Verbose {
        line(args);
    }
}

/// One line on stderr whatever the level (an error), shown through [`visible`] (our own messages hold no
/// control characters, so any there came from the input); a write error is
/// ignored (see the module doc).
pub fn line(args: fmt::Arguments) {
    let text = args.to_string();
    let mut err = std::io::stderr().lock();
    let _ = err
        .write_all(visible(&text).as_bytes())
        .and_then(|_| err.write_all(b"\n"));
}

/// Text without its line end on stderr (a progress line's erasure).
pub fn raw(text: &str) {
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// `warning: ...` on stderr, unless quiet (what it warns of stays in
/// the bundle, and in the exit status where it counts).
pub fn warn(args: fmt::Arguments) {
    if !quiet() {
        line(format_args!("warning: {args}"));
    }
}

/// `s` with every control character (C0, DEL, C1: ESC, BEL, CR, LF, NUL)
/// and every bidirectional override shown as a Rust escape (`\u{1b}`), so
/// it reads as what it is and does nothing to a terminal or a document.
/// Borrowed when there is nothing to show.
pub fn visible(s: &str) -> Cow<'_, str> {
    if !s.chars().any(hidden) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if hidden(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A character that acts instead of printing: controls, and the Unicode
/// bidirectional embeddings, overrides and isolates (U+202A..U+202E,
/// U+2066..U+2069) that reorder what a reader sees.
pub fn hidden(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_and_bidi_overrides_are_shown_not_obeyed() {
        assert_eq!(visible("node-1"), "node-1");
        assert_eq!(
            visible("a\u{1b}]2;T\u{7}\nb\u{202e}c\r\0"),
            "a\\u{1b}]2;T\\u{7}\\u{a}b\\u{202e}c\\u{d}\\u{0}"
        );
    }
}
