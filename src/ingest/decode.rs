//! Text decoding: a transcript's bytes as editors and shells save them
//! (UTF-8 with or without a byte-order mark, UTF-16, old Mac line ends)
//! made one `str` to read.

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
pub(super) fn decode(bytes: &[u8]) -> Result<std::borrow::Cow<'_, str>, (usize, String)> {
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
