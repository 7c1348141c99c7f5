//! Quoted-printable mail encoding (RFC 2045 section 6.7) taken off a
//! transcript that was relayed through email before it was pasted: soft
//! line breaks (`=` at the end of a line the encoder wrapped) are joined,
//! and `=XX` escapes (`=3D` for `=`, `=20` for a space) decoded, while
//! every decoded line keeps the number of the original line it starts on.
//!
//! Only text that is plainly quoted-printable is decoded ([`decode`]):
//! every `=` in it is a soft break or an upper-case `=XX` escape, as the
//! RFC requires of an encoder, and the soft breaks all fall at one wrap
//! width. A normal transcript has `=` followed by other things
//! (`size=16M`, `DEVSEL=fast`, `=====`), and a lone `=` at a line's end in
//! one stays as it is.
//!
//! Pure and bounded: the decoded text is never longer than the input.

use super::scan::{self, Scan, Segment, Skip, SkipReason};
use std::borrow::Cow;

/// A soft-broken line can end up to this many bytes short of the wrap
/// width: an encoder breaks before a 3-byte `=XX` escape rather than
/// inside it.
const WRAP_SLACK: usize = 3;

/// Mail is wrapped at 76 (RFC 2045) or a little less; a "wrap width" far
/// below that is not a mail encoder's.
const MIN_WIDTH: usize = 40;

/// The text with its quoted-printable encoding taken off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// The decoded text, one `\n` after each line.
    pub text: String,
    /// `lines[i]` is the original 1-based line number that decoded line
    /// `i + 1` starts on.
    pub lines: Vec<usize>,
    /// Original lines joined onto the line before them by a soft break.
    pub joined: Vec<usize>,
}

/// Whether `text` is plainly quoted-printable, and if so its decoding.
/// Reads every line: the scanner asks only about a text with a line
/// that ends in `=` (blanks after it allowed).
pub fn decode(text: &str) -> Option<Decoded> {
    if refused_at_a_glance(text) {
        return None;
    }
    // An escape sequence encoded (`=1B[4m`) comes back with the decoding:
    // it goes as it does from text read plain (no line moves).
    let mut d = decode_checked(text)?;
    if let Some(plain) = super::scan::strip_terminal_escapes(&d.text) {
        d.text = plain;
    }
    Some(d)
}

/// Whether some `=` in `text` is followed by what neither an escape
/// (`=3D`) nor a soft break (`=` then blanks to the line's end) can be:
/// a byte that is not upper-case hex, and past any blanks after the `=`
/// more of the line. [`decode`] refuses such a text at that `=` (no
/// prefix the scanner takes off holds a `=`), and most texts (`=====`,
/// `size=16M`, `X    = Self`) are refused so by one memchr pass instead
/// of reading every line.
fn refused_at_a_glance(text: &str) -> bool {
    let b = text.as_bytes();
    crate::read::byte_indices(b'=', b).any(|at| {
        let after = &b[at + 1..];
        after.first().is_some_and(|c| !is_upper_hex(c))
            && after
                .get(super::blanks(after))
                .is_some_and(|c| !matches!(c, b'\r' | b'\n'))
    })
}

/// [`decode`] without its first look.
fn decode_checked(text: &str) -> Option<Decoded> {
    let outer = scan::common_indent(text.lines());
    let mut soft = Vec::new();
    let mut escapes = 0usize;
    // Whether the line before was soft-broken, and whether the line it
    // started on had a prefix (see [`content`]).
    let (mut open, mut prefixed) = (false, false);
    for l in text.lines() {
        let (_, c, stripped) = content(l, outer, !open || prefixed);
        let c = unpadded(c);
        if !open {
            prefixed = stripped;
        }
        let b = c.as_bytes();
        open = b.ends_with(b"=");
        let mut i = 0;
        while let Some(k) = b[i..].iter().position(|&c| c == b'=') {
            let at = i + k;
            if at + 1 == b.len() {
                soft.push(b.len());
                break;
            }
            if !b
                .get(at + 1..at + 3)
                .is_some_and(|x| x.iter().all(is_upper_hex))
            {
                return None;
            }
            escapes += 1;
            i = at + 3;
        }
    }
    let width = soft.iter().copied().max()?;
    let one_width = soft.iter().all(|&w| w + WRAP_SLACK >= width);
    if width < MIN_WIDTH || !one_width || !(soft.len() >= 2 || escapes >= 1) {
        return None;
    }
    Some(decode_lines(text, outer))
}

/// A line split into what the scanner takes off its front (the paste's
/// common indentation, `[rank 0] `, `> `, a timestamp...; added after the
/// mail was decoded, or before it was quoted in a reply) and the encoded
/// content after it, and whether a prefix beyond the indentation came off;
/// a trailing `\r` is dropped. Without `prefixes` only
/// the common indentation comes off: a continuation of a line that had no
/// prefix got none added, and what looks like one (`0: `, `> `) is text.
fn content(l: &str, outer: usize, prefixes: bool) -> (&str, &str, bool) {
    let l = l.strip_suffix('\r').unwrap_or(l);
    let body = l.get(outer..).filter(|_| !l.trim().is_empty()).unwrap_or(l);
    let c = if prefixes {
        scan::strip_prefixes(body)
    } else {
        body
    };
    (&l[..l.len() - c.len()], c, c.len() < body.len())
}

/// An encoded line without the spaces and tabs a mail transport added
/// after its soft break: RFC 2045 section 6.7 rule 3 has the encoder
/// write none at a line's end, so a decoder deletes them (`=  ` is a soft
/// break). Any other line is kept as it is.
fn unpadded(c: &str) -> &str {
    let t = c.trim_end_matches([' ', '\t']);
    if t.len() < c.len() && t.ends_with('=') {
        t
    } else {
        c
    }
}

fn is_upper_hex(c: &u8) -> bool {
    c.is_ascii_digit() || (b'A'..=b'F').contains(c)
}

fn hex(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Decodes text [`decode`] found plainly quoted-printable. A decoded line
/// keeps the prefix of the line it starts on (the scanner takes it off);
/// a continuation's prefix goes. `=0A` and `=0D` stay as printed: a line
/// break inside a decoded line would break the map to the original lines.
fn decode_lines(text: &str, outer: usize) -> Decoded {
    let mut out = Decoded {
        text: String::with_capacity(text.len()),
        lines: Vec::new(),
        joined: Vec::new(),
    };
    let mut cur: Vec<u8> = Vec::new();
    let (mut open, mut prefixed) = (false, false);
    for (i, l) in text.lines().enumerate() {
        let (prefix, c, stripped) = content(l, outer, !open || prefixed);
        let b = unpadded(c).as_bytes();
        if open {
            out.joined.push(i + 1);
        } else {
            out.lines.push(i + 1);
            prefixed = stripped;
            cur.extend_from_slice(prefix.as_bytes());
        }
        let (body, soft) = match b.strip_suffix(b"=") {
            Some(body) => (body, true),
            None => (b, false),
        };
        let mut j = 0;
        while j < body.len() {
            let v = (body[j] == b'=')
                .then(|| Some(hex(*body.get(j + 1)?)? << 4 | hex(*body.get(j + 2)?)?))
                .flatten()
                .filter(|v| *v != b'\n' && *v != b'\r');
            match v {
                Some(v) => {
                    cur.push(v);
                    j += 3;
                }
                None => {
                    cur.push(body[j]);
                    j += 1;
                }
            }
        }
        open = soft;
        if !soft {
            out.text.push_str(&String::from_utf8_lossy(&cur));
            out.text.push('\n');
            cur.clear();
        }
    }
    if open {
        out.text.push_str(&String::from_utf8_lossy(&cur));
        out.text.push('\n');
    }
    out
}

impl Decoded {
    /// The scan of the decoded text, every line numbered as in
    /// `original`; each line a soft break joined onto the one before is a
    /// [`SkipReason::SoftLineBreak`]. A prompt line is kept decoded and
    /// whole, numbered as the original line it starts on.
    pub fn scan<'a>(&self, original: &'a str) -> Scan<'a> {
        let at = |n: usize| self.lines.get(n.wrapping_sub(1)).copied().unwrap_or(n);
        let inner = scan::scan(&self.text);
        let orig: Vec<&str> = original.lines().collect();
        let segments = inner
            .segments
            .into_iter()
            .map(|s| Segment {
                command: s.command,
                prompt_line: s
                    .prompt_line
                    .map(|(n, l)| (at(n), Cow::Owned(l.into_owned()))),
                text: Cow::Owned(s.text.into_owned()),
                lines: s.lines.iter().map(|&n| at(n)).collect(),
            })
            .collect();
        let mut skipped: Vec<Skip> = inner
            .skipped
            .iter()
            .map(|s| Skip {
                line: at(s.line),
                reason: s.reason,
            })
            .chain(self.joined.iter().map(|&line| Skip {
                line,
                reason: SkipReason::SoftLineBreak,
            }))
            .collect();
        skipped.sort_by_key(|s| s.line);
        // Blank flags per original line: a decoded line's flag lands on the
        // line it starts on; a joined line keeps its own.
        let blank: Vec<bool> = orig.iter().map(|l| l.trim().is_empty()).collect();
        let mut blank_kept = blank.clone();
        for (i, &b) in inner.blank_kept.iter().enumerate() {
            if let Some(x) = at(i + 1).checked_sub(1).and_then(|o| blank_kept.get_mut(o)) {
                *x = b;
            }
        }
        let silent = inner
            .silent
            .iter()
            .map(|(n, c)| (at(*n), c.clone()))
            .collect();
        Scan {
            segments,
            skipped,
            blank,
            blank_kept,
            silent,
            whole_lines: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joins_soft_breaks_and_decodes_escapes_keeping_line_numbers() {
        // Synthetic, in the shape of the mail-relayed lspci capture: both
        // soft-broken lines 42 bytes wide (at least `MIN_WIDTH`).
        let text = "01:00.0 VGA: NVIDIA GA106M [GeForce RTX 3=\n060 Mobile]\n\tRegion 0: [size=3D16M]\n\tLnkSta: Speed 8GT/s, Width x8, TrErr- DL=\nActive-\n";
        let d = decode(text).unwrap();
        assert_eq!(
            d.text,
            "01:00.0 VGA: NVIDIA GA106M [GeForce RTX 3060 Mobile]\n\tRegion 0: [size=16M]\n\tLnkSta: Speed 8GT/s, Width x8, TrErr- DLActive-\n"
        );
        assert_eq!(d.lines, [1, 3, 4]);
        assert_eq!(d.joined, [2, 5]);
    }

    #[test]
    fn a_soft_break_padded_by_the_transport_is_joined() {
        // Synthetic: the test above with blanks after each soft break's
        // `=` (spaces on one, a space and a tab on the other).
        let text = "01:00.0 VGA: NVIDIA GA106M [GeForce RTX 3=  \n060 Mobile]\n\tRegion 0: [size=3D16M]\n\tLnkSta: Speed 8GT/s, Width x8, TrErr- DL= \t\nActive-\n";
        let d = decode(text).unwrap();
        assert_eq!(
            d.text,
            "01:00.0 VGA: NVIDIA GA106M [GeForce RTX 3060 Mobile]\n\tRegion 0: [size=16M]\n\tLnkSta: Speed 8GT/s, Width x8, TrErr- DLActive-\n"
        );
        assert_eq!((d.lines, d.joined), (vec![1, 3, 4], vec![2, 5]));
        // Blanks after a `=` that is text, not a break: not mail.
        assert!(decode("X    = \nPIX  = Connection traversing\n").is_none());
    }

    /// The first look refuses only texts the full reading refuses: every
    /// capture, and texts made of `=` in each position and neighbour.
    #[test]
    fn refused_at_a_glance_only_where_decode_refuses() {
        let mut texts: Vec<String> = Vec::new();
        let parts = [
            "=", "=3D", "=3d", "= ", "=\t", "=\r", "=\r\n", "=\n", "==", "=A", "=\u{e9}", "x",
        ];
        for a in parts {
            for b in parts {
                let wide = "0123456789".repeat(5);
                texts.push(format!("{a}{b}\n"));
                texts.push(format!("{wide}{a}\n{wide}{b}\n[rank 0] {wide}{a}\n"));
                texts.push(format!("> {wide}{a}{b}\n{wide}{b}"));
            }
        }
        texts.extend(crate::evidence::capture_texts());
        let mut refused = 0;
        for t in &texts {
            if refused_at_a_glance(t) {
                refused += 1;
                assert_eq!(decode_checked(t), None, "{t:?}");
            }
        }
        assert!(refused > 50);
    }

    #[test]
    fn leaves_text_that_is_not_quoted_printable() {
        // A lone `=` at a line's end, with `=` used as text elsewhere.
        assert!(decode("a = b =\nsize=16M\n").is_none());
        // Two soft-break-shaped lines of very different widths.
        assert!(
            decode("short=\nx\na much longer line that ends in an equals sign =\ny\n").is_none()
        );
        // A ruler of `=` signs.
        assert!(decode("=====\n====\n").is_none());
        // Lower-case hex is not what an encoder writes.
        assert!(decode("x=3d=\ny\n").is_none());
        // No soft break at all.
        assert!(decode("size=3D16M\n").is_none());
    }

    #[test]
    fn prefixes_added_around_the_mail_stay_on_the_first_part_only() {
        let text = "    > [rank 0] 01:00.0 VGA compatible controller: GeForce RTX 3=\n    > [rank 0] 060 x=3Dy\n";
        let d = decode(text).unwrap();
        assert_eq!(
            d.text,
            "    > [rank 0] 01:00.0 VGA compatible controller: GeForce RTX 3060 x=y\n"
        );
    }

    #[test]
    fn a_continuation_that_looks_like_a_prefix_keeps_it_when_the_mail_had_none() {
        // Synthetic: a wrap right before `0: `, `> ` or a timestamp; the
        // line it continues has no prefix, so none was added around the
        // mail and the continuation is text.
        let head = "        Region 0: Memory at fb000000 (32-bit, non-prefetchable) Region=\n";
        for rest in ["0: x=3Dy", "> x=3Dy", "2024-05-01T12:00:00Z x=3Dy"] {
            let d = decode(&format!("{head}{rest}\n")).unwrap();
            let want = format!(
                "        Region 0: Memory at fb000000 (32-bit, non-prefetchable) Region{}\n",
                rest.replace("=3D", "=")
            );
            assert_eq!(d.text, want);
            // The same pasted indented: the indentation is no prefix of the mail.
            let d = decode(&format!("    {head}    {rest}\n")).unwrap();
            assert_eq!(
                d.text,
                want.replacen("        Region", "            Region", 1)
            );
        }
    }

    #[test]
    fn a_prompt_line_is_kept_decoded_and_whole() {
        // Synthetic: a command line the encoder wrapped, with an escape;
        // a segment joined to the one before reads its prompt line (perftest
        // reads `--use_cuda_dmabuf` there).
        let text = "$ ib_write_bw -d mlx5_0 --use_cuda=3D0 -a --report_gbits 10.0.0.2 --use_cuda=\n_dmabuf\n RDMA_Write BW Test\n";
        let s = scan::scan(text);
        let (n, l) = s.segments[0].prompt_line.clone().unwrap();
        assert_eq!(n, 1);
        assert_eq!(
            l,
            "$ ib_write_bw -d mlx5_0 --use_cuda=0 -a --report_gbits 10.0.0.2 --use_cuda_dmabuf"
        );
    }

    #[test]
    fn a_line_break_escape_stays_as_printed() {
        let d = decode("a line long enough to be wrapped: ab=0Acd=3D=\nef\n").unwrap();
        assert_eq!(d.text, "a line long enough to be wrapped: ab=0Acd=ef\n");
    }

    #[test]
    fn odd_inputs_decode_to_one_line_per_original_start_or_not_at_all() {
        assert!(decode("=\n=\n").is_none()); // no wrap width to speak of
        for text in [
            "x".repeat(60) + "=\n=\n",
            "\u{e9}".repeat(30) + "=\nx=C3=A9\n",
            "y".repeat(50) + "=\r\n" + &"z".repeat(49) + "=",
        ] {
            if let Some(d) = decode(&text) {
                assert_eq!(d.text.lines().count(), d.lines.len(), "{text:?}");
                assert_eq!(d.lines.len() + d.joined.len(), text.lines().count());
            }
        }
    }
}
