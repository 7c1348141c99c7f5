//! The labelled square matrix every topology tool prints: a header of
//! device names, then one row per device starting with its label.

use crate::evidence::ParseError;

/// A square matrix of codes: row labels, and for each row its cells and any
/// tokens after them.
pub(super) struct Matrix<'a> {
    pub header_line: usize,
    pub header: &'a str,
    pub rows: Vec<Row<'a>>,
    /// First line after the matrix.
    pub end: usize,
}

pub(super) struct Row<'a> {
    pub line: usize,
    pub label: &'a str,
    pub cells: Vec<&'a str>,
    pub rest: Vec<&'a str>,
}

/// Reads a matrix whose header is the first line accepted by `is_header`;
/// rows follow until a blank line or a line whose first token is not a
/// device label.
pub(super) fn read_matrix<'a>(
    lines: &[(usize, &'a str)],
    is_header: impl Fn(&[&str]) -> bool,
    is_label: impl Fn(&str, &[&str]) -> bool,
    diagonal: Option<&[&str]>,
    what: &str,
) -> Result<Matrix<'a>, ParseError> {
    let hi = lines
        .iter()
        .position(|(_, l)| is_header(&l.split_whitespace().collect::<Vec<_>>()))
        .ok_or_else(|| ParseError::new(1, format!("a {what} header line naming the devices")))?;
    let (header_line, header) = lines[hi];
    let mut raw: Vec<(usize, Vec<&str>)> = Vec::new();
    let mut end = lines.len();
    for (idx, (n, l)) in lines.iter().enumerate().skip(hi + 1) {
        let toks: Vec<&str> = l.split_whitespace().collect();
        let Some(first) = toks.first() else {
            end = idx;
            break;
        };
        if !is_label(first, &toks) {
            end = idx;
            break;
        }
        raw.push((*n, toks));
    }
    if raw.is_empty() {
        return Err(ParseError::new(
            header_line + 1,
            format!("{what} rows starting with GPU0 after the header"),
        ));
    }
    let n = raw.len();
    let mut rows = Vec::with_capacity(n);
    for (i, (line, toks)) in raw.into_iter().enumerate() {
        if toks.len() < n + 1 {
            return Err(ParseError::new(
                line,
                format!(
                    "{} cells after `{}` (one per device row), found {}",
                    n,
                    toks[0],
                    toks.len() - 1
                ),
            ));
        }
        if let Some(diag) = diagonal
            && !diag.contains(&toks[i + 1])
        {
            return Err(ParseError::new(
                line,
                format!(
                    "`{}` on the diagonal in column {}, found `{}`",
                    diag.join("` or `"),
                    i + 1,
                    toks[i + 1]
                ),
            ));
        }
        rows.push(Row {
            line,
            label: toks[0],
            cells: toks[1..=n].to_vec(),
            rest: toks[n + 1..].to_vec(),
        });
    }
    Ok(Matrix {
        header_line,
        header,
        rows,
        end,
    })
}
