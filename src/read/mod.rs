//! The reading kit: the byte-level searches the readers share, behind
//! names that read like `std`'s. Parsers use plain `&str` methods and
//! these; this is the one home of byte-level search code (memchr), so a
//! reader learns it once.
//!
//! What it buys, and why each is not plain `std`:
//! - [`lines`], [`push_lines`]: `str::lines`' pieces, each `\n` found by
//!   memchr (a few instructions a line, where `lines` spends a couple of
//!   hundred on each).
//! - [`find_byte`], [`rfind_byte`], [`find_byte2`], [`byte_indices`],
//!   [`count_byte`]: memchr's vectorised scans, where `str::find(char)`
//!   sets up a searcher per call and `contains` on a text may step a
//!   byte at a time.
//! - [`literal`]: a searcher for a literal looked for in every block,
//!   built once per process and tuned to the bytes that are rare in
//!   transcripts (`evidence`'s `has!` macro and its gram filter use it).
//!
//! Each function gives exactly the answer of the `std` form its doc names
//! (tested below and by the parsers' agreement tests).

mod rank;

pub(crate) use rank::finder as literal;

/// `hay.iter().position(|&b| b == byte)`.
#[inline]
pub(crate) fn find_byte(byte: u8, hay: &[u8]) -> Option<usize> {
    memchr::memchr(byte, hay)
}

/// `hay.iter().rposition(|&b| b == byte)`.
#[inline]
pub(crate) fn rfind_byte(byte: u8, hay: &[u8]) -> Option<usize> {
    memchr::memrchr(byte, hay)
}

/// `hay.iter().position(|&b| b == a || b == b2)`.
#[inline]
pub(crate) fn find_byte2(a: u8, b2: u8, hay: &[u8]) -> Option<usize> {
    memchr::memchr2(a, b2, hay)
}

/// The index of every `byte` in `hay`, in order:
/// `hay.iter().enumerate().filter(|p| *p.1 == byte).map(|p| p.0)`.
#[inline]
pub(crate) fn byte_indices(byte: u8, hay: &[u8]) -> memchr::Memchr<'_> {
    memchr::memchr_iter(byte, hay)
}

/// `hay.iter().filter(|&&b| b == byte).count()`.
#[inline]
pub(crate) fn count_byte(byte: u8, hay: &[u8]) -> usize {
    memchr::memchr_iter(byte, hay).count()
}

/// The lines of `text` as [`str::lines`] gives them (split at `\n`, a
/// `\r` right before it dropped, no empty piece after a final `\n`),
/// pushed onto `out`.
pub(crate) fn push_lines<'a>(text: &'a str, out: &mut Vec<&'a str>) {
    let mut start = 0;
    for nl in byte_indices(b'\n', text.as_bytes()) {
        let line = &text[start..nl];
        out.push(line.strip_suffix('\r').unwrap_or(line));
        start = nl + 1;
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
}

/// [`str::lines`], each `\n` found by memchr.
pub(crate) struct Lines<'a> {
    rest: &'a str,
}

/// `text.lines()` through [`Lines`]: the same pieces.
pub(crate) fn lines(text: &str) -> Lines<'_> {
    Lines { rest: text }
}

impl<'a> Iterator for Lines<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.rest.is_empty() {
            return None;
        }
        let line = match find_byte(b'\n', self.rest.as_bytes()) {
            Some(nl) => {
                let line = &self.rest[..nl];
                self.rest = &self.rest[nl + 1..];
                line.strip_suffix('\r').unwrap_or(line)
            }
            None => std::mem::take(&mut self.rest),
        };
        Some(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every search answers as its `std` form does, on texts with the
    /// byte at either end, twice, nowhere, and past 32 bytes (memchr's
    /// vector step).
    #[test]
    fn searches_answer_as_std_does() {
        let long = format!("{}:x{}:", " ".repeat(40), "y".repeat(33));
        for t in [
            "",
            ":",
            "a:b:c",
            "abc",
            ":abc",
            "abc:",
            "é:ü",
            long.as_str(),
        ] {
            let h = t.as_bytes();
            assert_eq!(find_byte(b':', h), h.iter().position(|&b| b == b':'));
            assert_eq!(rfind_byte(b':', h), h.iter().rposition(|&b| b == b':'));
            let either = h.iter().position(|&b| b == b':' || b == b'b');
            assert_eq!(find_byte2(b':', b'b', h), either);
            let all: Vec<usize> = (0..h.len()).filter(|&i| h[i] == b':').collect();
            assert_eq!(byte_indices(b':', h).collect::<Vec<_>>(), all);
            assert_eq!(count_byte(b':', h), all.len());
        }
    }

    #[test]
    fn lines_are_str_lines() {
        for t in [
            "",
            "\n",
            "a",
            "a\n",
            "a\r\nb",
            "a\n\nb\r\n",
            "\r\n\r",
            "x\ry\n",
        ] {
            let want: Vec<&str> = t.lines().collect();
            assert_eq!(lines(t).collect::<Vec<_>>(), want, "{t:?}");
            let mut pushed = Vec::new();
            push_lines(t, &mut pushed);
            assert_eq!(pushed, want, "{t:?}");
        }
    }
}
