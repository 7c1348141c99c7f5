//! The labelled square matrix every topology tool prints: a header of
//! device names, then one row per device starting with its label.

use crate::evidence::ParseError;
use crate::evidence::SplitWords;

/// A square matrix of codes: row labels, and for each row its cells and any
/// tokens after them.
pub(super) struct Matrix<'a> {
    pub header_line: usize,
    pub header: &'a str,
    pub rows: Vec<Row<'a>>,
    /// First line after the matrix.
    pub end: usize,
    /// Devices the header names whose rows are not in the transcript (a
    /// matrix cut short): their labels, in header order. Rows read have
    /// a cell for each of their columns too.
    pub missing: Vec<&'a str>,
    /// The last row, cut mid-row (too few cells): not read.
    pub cut_row: Option<ParseError>,
    /// Rows not read, at their lines ([`Row::bad`]).
    pub bad: Vec<ParseError>,
}

impl Matrix<'_> {
    /// Every device label, the rows' then the missing ones.
    pub fn labels(&self) -> Vec<&str> {
        let mut l: Vec<&str> = self.rows.iter().map(|r| r.label).collect();
        l.extend(self.missing.iter().copied());
        l
    }

    /// Problems for the rows not read ([`Row::bad`], a last row cut
    /// mid-row), and the cut of a matrix whose header names rows that are
    /// not in the transcript.
    pub fn flag_cut(&self, tool: &str, what: &str, out: &mut crate::evidence::Parsed) {
        for e in self.bad.iter().chain(&self.cut_row) {
            out.row::<()>(tool, Err(e.clone()));
        }
        if let (Some(first), Some(last)) = (self.missing.first(), self.missing.last()) {
            let at = self
                .cut_row
                .as_ref()
                .map(|e| e.line)
                .or_else(|| self.rows.last().map(|r| r.line))
                .unwrap_or(self.header_line);
            let rows = if first == last {
                format!("row {first}")
            } else {
                format!("rows {first}..{last}")
            };
            out.cut(at, format!("{rows} of the {what}"));
        }
    }
}

pub(super) struct Row<'a> {
    pub line: usize,
    pub label: &'a str,
    pub cells: Vec<&'a str>,
    pub rest: Vec<&'a str>,
    /// Not read (too short, or off its diagonal): its cells are `?`.
    pub bad: bool,
}

impl<'a> Row<'a> {
    /// A row known only by its label (cut from the transcript): no cells.
    pub fn not_read(line: usize, label: &'a str) -> Self {
        Row {
            line,
            label,
            cells: Vec::new(),
            rest: Vec::new(),
            bad: true,
        }
    }
}

/// The most devices one matrix is read with: more than any node has (a
/// DGX with its switches and adapters is under 40). Each row holds a cell
/// per device, so a matrix costs the square of its width; the rows after
/// this many start the next matrix.
pub(super) const MAX_DEVICES: usize = 512;

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
    // One buffer for the words of every line looked at (not one per line).
    let mut words: Vec<&str> = Vec::new();
    let hi = lines
        .iter()
        .position(|(_, l)| {
            words.clear();
            words.extend(l.words());
            is_header(&words)
        })
        .ok_or_else(|| ParseError::new(1, format!("a {what} header line naming the devices")))?;
    let (header_line, header) = lines[hi];
    // The header names the devices: more of them than rows, with rows
    // wide enough for all, is a matrix cut short (the header is the
    // authority on its width). A header whose separators were lost
    // (`GPU0GPU1`) names none, and the rows decide. A header with no row
    // after it at all is a matrix cut after its header.
    let head_labels: Vec<&'a str> = header
        .words()
        .take_while(|t| !matches!(*t, "CPU" | "NUMA" | "GPU" | "Affinity") && is_label(t, &[t, t]))
        .take(MAX_DEVICES)
        .collect();
    let mut raw: Vec<(usize, Vec<&str>)> = Vec::new();
    let mut end = lines.len();
    let mut idx = hi + 1;
    while let Some((n, l)) = lines.get(idx) {
        // Sized for a row as wide as the header (label, cells and a few
        // columns after): a row's Vec is kept, so it is not grown.
        let mut toks: Vec<&str> = Vec::with_capacity(head_labels.len() + 4);
        toks.extend(l.words());
        let Some(first) = toks.first() else {
            // A double-spaced paste (a blank line after every line, as
            // some web pages and mail clients show it): the row the
            // header names next, below the blank lines, goes on.
            match next_row_below_blanks(lines, idx, header, &raw, &is_header) {
                Some(i) => {
                    idx = i;
                    continue;
                }
                None => {
                    end = idx;
                    break;
                }
            }
        };
        // A line that is not a row, a second matrix's header (a log that
        // printed the matrix once per job) or a row past the cap ends this
        // matrix: a repeated block costs memory in proportion to itself,
        // not to the square of the whole log.
        if !is_label(first, &toks) || is_header(&toks) || raw.len() >= MAX_DEVICES {
            end = idx;
            break;
        }
        raw.push((*n, toks));
        idx += 1;
    }
    if raw.is_empty() && head_labels.is_empty() {
        return Err(ParseError::new(
            header_line + 1,
            format!("{what} rows starting with GPU0 after the header"),
        ));
    }
    let mut n = raw.len();
    let mut cut_row = None;
    if head_labels.len() > n && lines.get(end).is_none_or(|(_, l)| l.trim().is_empty()) {
        let w = head_labels.len();
        if raw.last().is_some_and(|(_, t)| t.len() < w + 1) {
            // The last row stops mid-row (the transcript's end).
            let (line, toks) = raw.pop().unwrap_or_default();
            cut_row = Some(ParseError::new(
                line,
                format!(
                    "{w} cells after `{}` (one per device), found {} (cut mid-row)",
                    toks.first().unwrap_or(&""),
                    toks.len().saturating_sub(1)
                ),
            ));
        }
        if raw.iter().all(|(_, t)| t.len() > w) {
            n = w;
        }
    }
    if n == 0 {
        return Err(ParseError::new(
            header_line + 1,
            format!("{what} rows starting with GPU0 after the header"),
        ));
    }
    let missing = if n > raw.len() {
        head_labels[raw.len()..n].to_vec()
    } else {
        if let Some(e) = cut_row.take() {
            return Err(e);
        }
        Vec::new()
    };
    // Every row is kept, read or not: one readable row (a one-GPU node,
    // or a matrix whose other rows are damaged) still names its devices
    // and tells its own pairs.
    let (rows, bad) = read_rows(raw, n, diagonal);
    Ok(Matrix {
        header_line,
        header,
        rows,
        end,
        missing,
        cut_row,
        bad,
    })
}

/// The index of the next row when only blank lines stand between line
/// index `blank` and it (a double-spaced paste): a row whose label is the
/// one the header names after the rows `read` (the header read with its
/// whitespace removed, as a header whose separators were lost must be).
/// The header of another matrix is no row.
fn next_row_below_blanks(
    lines: &[(usize, &str)],
    blank: usize,
    header: &str,
    read: &[(usize, Vec<&str>)],
    is_header: &impl Fn(&[&str]) -> bool,
) -> Option<usize> {
    let i = blank
        + lines[blank..]
            .iter()
            .position(|(_, l)| !l.trim().is_empty())?;
    let toks: Vec<&str> = lines[i].1.words().collect();
    if is_header(&toks) {
        return None;
    }
    let mut named: String = read.iter().map(|(_, t)| t[0]).collect();
    named.push_str(toks.first()?);
    let squeezed: String = header.words().collect();
    squeezed.starts_with(&named).then_some(i)
}

/// The rows of a matrix `n` devices wide. A row too short, or off its
/// diagonal, is not read; it keeps its place (its cells `?`, `bad` set)
/// so the rows after it keep their columns, and its error is returned.
fn read_rows<'a>(
    raw: Vec<(usize, Vec<&'a str>)>,
    n: usize,
    diagonal: Option<&[&str]>,
) -> (Vec<Row<'a>>, Vec<ParseError>) {
    let mut rows = Vec::with_capacity(n);
    let mut bad = Vec::new();
    for (i, (line, toks)) in raw.into_iter().enumerate() {
        let e = if toks.len() < n + 1 {
            Some(ParseError::new(
                line,
                format!(
                    "{} cells after `{}` (one per device row), found {}",
                    n,
                    toks[0],
                    toks.len() - 1
                ),
            ))
        } else {
            diagonal
                .filter(|diag| !diag.contains(&toks[i + 1]))
                .map(|diag| {
                    ParseError::new(
                        line,
                        format!(
                            "`{}` on the diagonal in column {}, found `{}`",
                            diag.join("` or `"),
                            i + 1,
                            toks[i + 1]
                        ),
                    )
                })
        };
        if let Some(e) = e {
            bad.push(e);
            rows.push(Row {
                line,
                label: toks[0],
                cells: vec!["?"; n],
                rest: Vec::new(),
                bad: true,
            });
            continue;
        }
        // The row's own Vec becomes its cells (no copy of them).
        let mut cells = toks;
        let rest = cells.split_off(n + 1);
        let label = cells.remove(0);
        rows.push(Row {
            line,
            label,
            cells,
            rest,
            bad: false,
        });
    }
    (rows, bad)
}

#[cfg(test)]
mod tests {
    use crate::evidence::{IssueKind, Tool, parse};

    #[test]
    fn a_matrix_printed_once_per_job_is_read_block_by_block_in_linear_memory() {
        // The shipped 112-byte L4 `topo -m` (no legend), as a log that
        // printed it once per job: each block is its own 2x2 matrix, never
        // one matrix as wide as every row of every block (which asked for
        // the square of the log's rows: 6 GiB at 1 MB).
        let block = include_str!(
            "../../../captures/l4-2gpu-cross-numa/nvidia-topo-015-2x-l4-cross-numa-sys-no-legend.txt"
        );
        let log = block.repeat(3000);
        let lines: Vec<(usize, &str)> = crate::evidence::numbered_vec(&log);
        let m = super::read_matrix(
            &lines,
            |t| t.first().is_some_and(|t| t.starts_with("GPU0")) && !t.contains(&"X"),
            |first, _| first.starts_with("GPU"),
            Some(&["X"]),
            "topology matrix",
        )
        .unwrap();
        assert_eq!(m.labels(), ["GPU0", "GPU1"]);
        assert_eq!(m.end, 3, "the next block's header ends the first");
        let p = parse(Tool::NvidiaSmiTopo, &log).unwrap();
        assert_eq!(p.topology.devices.len(), 2);
        assert!(p.issues.is_empty(), "{:?}", &p.issues[..1]);
        // A header naming more devices than any node has is read as wide
        // as the cap, not as wide as itself.
        let wide: String = (0..5000).map(|i| format!("\tGPU{i}")).collect();
        let lines = [(1, wide.as_str())];
        let m =
            super::read_matrix(&lines, |_| true, |f, _| f.starts_with("GPU"), None, "m").unwrap();
        assert_eq!(m.labels().len(), super::MAX_DEVICES);
    }

    #[test]
    fn rows_after_a_blank_line_are_read_not_called_cut() {
        // Synthetic: a double-spaced paste (a blank line after every
        // line): the rows are in the transcript, below the header.
        let text = "\tGPU0\tGPU1\tCPU Affinity\n\nGPU0\t X \tNV12\t0-63\n\nGPU1\tNV12\t X \t0-63\n";
        let p = parse(Tool::NvidiaSmiTopo, text).unwrap();
        assert!(p.issues.is_empty(), "rows GPU0 and GPU1 are there, not cut");
        // Both rows are read, at their lines (3 and 5), and their link.
        let rows: Vec<(&str, usize)> = p
            .topology
            .devices
            .iter()
            .map(|d| (d.id.as_str(), d.source.line))
            .collect();
        assert_eq!(rows, [("GPU0", 3), ("GPU1", 5)]);
        let link = p.topology.link("GPU0", "GPU1").unwrap();
        assert_eq!(link.code.as_deref(), Some("NV12"));
        // A header alone, then another matrix's header: still cut.
        let two =
            "\tGPU0\tGPU1\tCPU Affinity\n\n\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV12\t0-63\n";
        let p = parse(Tool::NvidiaSmiTopo, two).unwrap();
        assert!(
            p.issues.iter().any(|i| i.kind == IssueKind::Truncated),
            "{:?}",
            p.issues
        );
    }
}
