//! Recognising nccl-tests (and rccl-tests) output from its text, the
//! whole run or a header-less fragment of its table; asked of every block
//! no earlier tool took, so most lines are ruled out by a byte look.

use super::*;

/// The table's column header (with its `#` or without), `# nThread`, or
/// a header-less fragment: two rows of a known shape, or one followed by
/// `Avg bus bandwidth`. One pass over the lines.
pub fn looks_like_nccl_tests(text: &str, lines: &[&str]) -> bool {
    if has!(text, "# nThread ") || text.trim_start().starts_with("nThread ") {
        return true;
    }
    let mut rows = 0;
    for l in lines {
        // Most lines (every block no earlier tool took comes here) are
        // ruled out by their first byte past blanks, before trimming: a
        // header starts `#` or `size`, a row a digit, an MPI prefix `[`.
        // Any other whitespace or a non-ASCII byte takes the full look.
        let first = l
            .as_bytes()
            .get(crate::evidence::blanks(l.as_bytes()))
            .copied();
        if !matches!(
            first,
            Some(b'#' | b's' | b'0'..=b'9' | b'[' | b'\n'..=b'\r' | 0x80..)
        ) {
            continue;
        }
        let t = crate::evidence::trim(strip_mpi_prefix(l));
        let h = t.strip_prefix('#').map_or(t, str::trim_start);
        if old::column_names(h).is_some() {
            return true;
        }
        if may_be_row(t) && is_standard_row(t) {
            rows += 1;
            if rows == 2 {
                return true;
            }
        }
    }
    rows == 1 && has!(text, "Avg bus bandwidth")
}

/// Whether `t` (trimmed) may pass [`is_standard_row`], judged by bytes
/// without splitting: a number, a number (perhaps `+`-signed), then a
/// type name (every one starts with one of `iuhfdbc`). Only a no is
/// sure: a non-ASCII byte where it matters (it may be whitespace) is a
/// yes, and the full look decides.
fn may_be_row(t: &str) -> bool {
    let ws = |c: u8| matches!(c, b' ' | b'\t' | b'\n'..=b'\r');
    let mut b = t.as_bytes();
    for k in 0..2 {
        let sign = usize::from(k == 1 && b.first() == Some(&b'+'));
        let digits = b[sign..].iter().take_while(|c| c.is_ascii_digit()).count();
        b = &b[sign + digits..];
        match b.first() {
            Some(c) if !c.is_ascii() => return true,
            Some(&c) if digits > 0 && ws(c) => {}
            _ => return false,
        }
        let blanks = b.iter().take_while(|c| ws(**c)).count();
        b = &b[blanks..];
    }
    match b.first() {
        Some(c) if !c.is_ascii() => true,
        Some(c) => b"iuhfdbc".contains(c),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// `may_be_row` only ever rules out what `is_standard_row` rules
        /// out: rows shaped as nccl-tests prints them (size, count, type,
        /// redop, root, then numbers; 11 to 13 tokens), each token drawn
        /// from valid and invalid spellings, with ASCII and Unicode blanks
        /// between them.
        #[test]
        fn may_be_row_never_refuses_a_row(
            head in (
                prop::sample::select(vec!["1024", "0", "+1", "é1", "x"]),
                prop::sample::select(vec!["256", "+256", "-1", "x", "é"]),
                prop::sample::select(vec!["float", "int8", "char", "half", "bfloat16", "x", "é"]),
                prop::sample::select(vec!["sum", "prod", "-1"]),
                prop::sample::select(vec!["-1", "0", "x"]),
            ),
            tail in prop::collection::vec(
                prop::sample::select(vec!["1.5", "60.64", "0", "N/A", "2e-07", "1e+00", "x"]),
                6..9,
            ),
            seps in prop::collection::vec(
                prop::sample::select(vec![" ", "  ", "\t", "\u{a0}", "\u{2003}", "\u{b}"]),
                13,
            ),
        ) {
            let toks = [head.0, head.1, head.2, head.3, head.4]
                .into_iter()
                .chain(tail.iter().copied());
            let mut t = String::new();
            for (i, w) in toks.enumerate() {
                if i > 0 {
                    t.push_str(seps[i]);
                }
                t.push_str(w);
            }
            let t = t.trim();
            prop_assert!(!is_standard_row(t) || may_be_row(t), "{t:?}");
        }
    }

    #[test]
    fn real_rows_pass_and_other_lines_do_not() {
        let row = "     8388608       2097152     float     sum      -1    60.64  138.33  242.08      0    60.45  138.77  242.85      0";
        assert!(may_be_row(row.trim()) && is_standard_row(row.trim()));
        assert!(!may_be_row("size count type"));
        assert!(!may_be_row("-1 2 float"));
    }
}
