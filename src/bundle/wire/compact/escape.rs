//! Finding the characters JSON escapes in a string: eight bytes a step
//! by word arithmetic, in safe code. An SSE2 test of sixteen bytes a step,
//! in `unsafe` code of our own, was removed: it saved 1.8 M of 104 M
//! instructions (1.7%) of `collect --from captures/` (callgrind), not worth
//! the unsafe block. (Letting the compiler vectorise a 32-byte test saved
//! nothing: a transcript has a `\n` to escape every line.)

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;
const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;

/// The high bit of each byte of `w` (eight bytes of a string, in order from
/// the lowest) that JSON escapes: a control character (below 0x20), `"` or
/// `\`. Bytes of a multi-byte character (0x80 and up) never are. For the
/// low seven bits `t` of a byte, `t + 0x60` has its high bit set when
/// `t >= 0x20`, and `(t ^ c) + 0x7f` when `t != c`; no sum carries into the
/// next byte (each stays below 0x100). A byte is plain when all three are
/// set, or when its own high bit is.
pub(super) fn escaped_bytes(w: u64) -> u64 {
    let t = w & LOW7;
    let printable = t + ONES * 0x60;
    let not_quote = (t ^ (ONES * u64::from(b'"'))) + LOW7;
    let not_backslash = (t ^ (ONES * u64::from(b'\\'))) + LOW7;
    !((printable & not_quote & not_backslash) | w) & HIGH
}

pub(super) fn is_escaped(c: u8) -> bool {
    c < 0x20 || c == b'"' || c == b'\\'
}

/// The first byte at or after `i` that JSON escapes.
pub(super) fn next_escaped(b: &[u8], mut i: usize) -> Option<usize> {
    let word = |c: &[u8]| u64::from_le_bytes(c.try_into().expect("a chunk of 8 bytes"));
    // Two words a step while both are plain (most of a transcript's text).
    while let Some(chunk) = b.get(i..i + 16) {
        if escaped_bytes(word(&chunk[..8])) | escaped_bytes(word(&chunk[8..])) != 0 {
            break;
        }
        i += 16;
    }
    while let Some(chunk) = b.get(i..i + 8) {
        let w = u64::from_le_bytes(chunk.try_into().expect("a chunk of 8 bytes"));
        let m = escaped_bytes(w);
        if m != 0 {
            return Some(i + (m.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    b[i..].iter().position(|&c| is_escaped(c)).map(|k| i + k)
}

/// Whether `b` is at most 16 bytes with nothing to escape (most keys, ids
/// and printed values): two words read from its ends, overlapping.
#[inline]
pub(super) fn plain_short(b: &[u8]) -> bool {
    let n = b.len();
    let word = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"));
    let half = |at: usize| {
        u64::from(u32::from_le_bytes(
            b[at..at + 4].try_into().expect("4 bytes"),
        ))
    };
    let escaped = match n {
        17.. => return false,
        8.. => escaped_bytes(word(0)) | escaped_bytes(word(n - 8)),
        4.. => escaped_bytes(half(0) | (half(n - 4) << 32)),
        _ => return !b.iter().any(|&c| is_escaped(c)),
    };
    escaped == 0
}
