//! [`str::split_whitespace`] for parsers, by a byte look.
//!
//! `SplitWhitespace` decodes every character and asks `char::is_whitespace`
//! of it (about 20 instructions a byte); parsers split every row of every
//! table into words, so that was about 8% of an ingest. [`Words`] looks at
//! ASCII bytes directly and decodes a character only where a byte is not
//! ASCII, so it yields the same pieces (tested below against the standard
//! library, with Unicode blanks too).

/// The words of `s`: what `s.split_whitespace()` yields.
#[inline]
pub(crate) fn words(s: &str) -> Words<'_> {
    Words { rest: s }
}

/// `s.split_whitespace()` as a method, for parsers: `t.words()`.
pub(crate) trait SplitWords {
    fn words(&self) -> Words<'_>;
}

impl SplitWords for str {
    #[inline]
    fn words(&self) -> Words<'_> {
        words(self)
    }
}

/// The iterator of [`words`].
#[derive(Clone, Debug)]
pub(crate) struct Words<'a> {
    rest: &'a str,
}

/// ASCII whitespace as `char::is_whitespace` has it: tab, newline,
/// vertical tab, form feed, carriage return and space.
#[inline]
fn is_blank(b: u8) -> bool {
    b == b' ' || (b'\t'..=b'\r').contains(&b)
}

/// Eight bytes that are all spaces.
const SPACES: u64 = u64::from_ne_bytes([b' '; 8]);
const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);

/// The eight bytes at `i` as one little-endian word (the first byte
/// lowest), when there are eight.
#[inline]
fn chunk(b: &[u8], i: usize) -> Option<u64> {
    let s = b.get(i..i + 8)?;
    Some(u64::from_le_bytes(s.try_into().ok()?))
}

/// A word whose lowest set bit is in the first byte of `x` that is not
/// inside a word for sure: at most a space (`0x00..=0x20`) or not ASCII
/// (bytes above the first such may be marked wrongly: only the lowest
/// mark is used).
#[inline]
fn stops(x: u64) -> u64 {
    (x.wrapping_sub(ONES * 0x21) & !x | x) & HIGH
}

impl<'a> Words<'a> {
    /// The length in bytes of the character at `i` when it is whitespace
    /// (only called on a byte that is not ASCII).
    #[cold]
    fn wide_blank(&self, i: usize) -> Option<usize> {
        let c = self.rest[i..].chars().next()?;
        c.is_whitespace().then_some(c.len_utf8())
    }

    /// The length of the (non-ASCII) character at `i`.
    #[cold]
    fn wide_len(&self, i: usize) -> usize {
        self.rest[i..].chars().next().map_or(1, char::len_utf8)
    }
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a str;

    // Inlined into the loops that split rows: a call a word cost as much
    // as the look at its bytes (registers saved and restored each time).
    #[inline(always)]
    fn next(&mut self) -> Option<&'a str> {
        let b = self.rest.as_bytes();
        let mut i = 0;
        // Blanks before the word: eight spaces a step (column padding),
        // then a byte at a time.
        while i < b.len() {
            if let Some(x) = chunk(b, i) {
                let other = x ^ SPACES;
                if other == 0 {
                    i += 8;
                    continue;
                }
                i += (other.trailing_zeros() / 8) as usize;
            }
            let c = b[i];
            if c.is_ascii() {
                if !is_blank(c) {
                    break;
                }
                i += 1;
            } else {
                match self.wide_blank(i) {
                    Some(n) => i += n,
                    None => break,
                }
            }
        }
        if i == b.len() {
            self.rest = "";
            return None;
        }
        let start = i;
        // The word: up to the next blank (left for the next call). Eight
        // bytes a step while none is a space, a control byte or non-ASCII;
        // the byte that stops a step is looked at alone.
        while i < b.len() {
            if let Some(x) = chunk(b, i) {
                let stop = stops(x);
                if stop == 0 {
                    i += 8;
                    continue;
                }
                i += (stop.trailing_zeros() / 8) as usize;
            }
            let c = b[i];
            if c.is_ascii() {
                if is_blank(c) {
                    break;
                }
                i += 1;
            } else {
                if self.wide_blank(i).is_some() {
                    break;
                }
                i += self.wide_len(i);
            }
        }
        // One split (one boundary check at each end of the word).
        let (head, rest) = self.rest.split_at(i);
        self.rest = rest;
        Some(&head[start..])
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.rest.len().div_ceil(2)))
    }
}

impl std::iter::FusedIterator for Words<'_> {}

/// A `key: value` line split at its first colon, both sides trimmed: what
/// `t.split_once(':')` and two `trim()`s give, the colon found by memchr
/// and the trims by a byte look ([`super::trim`]).
pub(crate) fn key_value(t: &str) -> Option<(&str, &str)> {
    let colon = crate::read::find_byte(b':', t.as_bytes())?;
    Some((super::trim(&t[..colon]), super::trim(&t[colon + 1..])))
}

#[cfg(test)]
mod tests {
    #[test]
    fn key_value_is_split_once_and_trim() {
        for t in [
            "",
            ":",
            "a:b",
            " a : b ",
            "a::b",
            "no colon",
            "\u{a0}k\u{a0}:\u{3000}v\u{3000}",
            "\tState:\tActive\r",
            "é: ü",
            "k:",
            ":v",
        ] {
            let want = t.split_once(':').map(|(k, v)| (k.trim(), v.trim()));
            assert_eq!(super::key_value(t), want, "{t:?}");
        }
    }

    use super::*;
    use proptest::prelude::*;

    fn same(s: &str) {
        let ours: Vec<&str> = words(s).collect();
        let std: Vec<&str> = s.split_whitespace().collect();
        assert_eq!(ours, std, "{s:?}");
    }

    #[test]
    fn splits_as_split_whitespace() {
        for s in [
            "",
            " ",
            "a",
            "  a  b\tc\r\n",
            "\u{b}x\u{c}y\u{85}z\u{a0}w\u{3000}v\u{2028}",
            "é è\u{00a0}ü",
            "8 2 float sum -1 21.57 0.00 0.00 0",
            "\u{feff}GPU0\tX",
            "x\u{200b}y",
            // Eight-byte steps: runs longer than a step, a stop inside one.
            "           8             2     float     sum      -1    21.57",
            "abcdefghijklmnopq rstuvwxyz0123456789\t\t\tlast",
            "        \t        \u{a0}        x",
            "\x00\x01abcdefgh\x7f\x1fijklmnop\x0b",
            "abcdefg\u{e9}hijklmnop\u{3000}qrstuvwxyz\u{85}",
            "0123456 \u{2003}89abcdef",
            "               ",
            "12345678",
            "1234567\r\n",
        ] {
            same(s);
        }
    }

    proptest! {
        #[test]
        fn agrees_with_split_whitespace(
            s in "([ \t\r\n\u{b}\u{c}a-z0-9.\u{85}\u{a0}\u{2003}\u{3000}\u{e9}\u{200b}\u{feff}]){0,80}"
        ) {
            same(&s);
        }

        /// Table-like rows: blank runs and words longer than a step.
        #[test]
        fn agrees_on_padded_columns(
            s in "(( {1,12}|\t|\u{a0}|\u{3000})[a-z0-9.\u{e9}\u{85}\u{0}\u{1f}\u{7f}]{0,12}){0,10}"
        ) {
            same(&s);
        }
    }
}
