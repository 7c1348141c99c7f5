//! `nvbandwidth`: text output (v0.2 to v0.10) and `-j` JSON.

use super::*;
#[allow(unused_imports)]
use crate::evidence::SplitWords;

pub fn looks_like_nvbandwidth(text: &str, lines: &[&str]) -> bool {
    has!(text, "nvbandwidth Version:")
        // (`memcpy ` first: the block's grams rule it out without a search.)
        || has!(text, "memcpy ")
            && has!(text, "(row)")
            && crate::evidence::numbered(lines).any(|(_, l)| {
                let t = l.trim();
                (t.starts_with("memcpy CE ") || t.starts_with("memcpy SM ")) && t.contains("(row)")
            })
}

pub fn looks_like_nvbandwidth_json(text: &str, _lines: &[&str]) -> bool {
    let t = text.trim_start();
    t.starts_with('{') && t.contains("\"nvbandwidth\"") && t.contains("\"testcases\"")
}

/// Which endpoints an nvbandwidth test name moves between.
fn nvbandwidth_kind(test: &str) -> Kind {
    if test.starts_with("host_to_device") || test.starts_with("host_to_all") {
        Kind::H2d
    } else if test.starts_with("device_to_host") || test.starts_with("all_to_host") {
        Kind::D2h
    } else if test.starts_with("device_local") {
        Kind::D2d
    } else if test.starts_with("host_device_latency") {
        Kind::H2d
    } else {
        Kind::P2pCopy
    }
}

/// The matrix description line: `memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)`
/// or `Device to Device Latency SM GPU(row) <-> GPU(column) (ns)`.
struct NvbHead {
    engine: CopyEngine,
    row_kind: String,
    col_kind: String,
    /// `->` row sends to column; `<-` column sends to row; `<->` both.
    arrow: String,
    latency_ns: bool,
}

fn nvb_head(l: &str) -> Option<NvbHead> {
    let t = l.trim();
    if !t.contains("(row)") || !t.contains("(column)") {
        return None;
    }
    let engine = if t.contains(" CE ") {
        CopyEngine::Ce
    } else if t.contains(" SM ") {
        CopyEngine::Sm
    } else {
        CopyEngine::Unknown
    };
    let toks: Vec<&str> = t.words().collect();
    let row = toks.iter().position(|x| x.ends_with("(row)"))?;
    let arrow = toks.get(row + 1)?.to_string();
    let col = toks.get(row + 2)?;
    if !["->", "<-", "<->"].contains(&arrow.as_str()) || !col.ends_with("(column)") {
        return None;
    }
    Some(NvbHead {
        engine,
        row_kind: toks[row].trim_end_matches("(row)").to_string(),
        col_kind: col.trim_end_matches("(column)").to_string(),
        arrow,
        latency_ns: t.ends_with("(ns)"),
    })
}

/// Endpoint ids of nvbandwidth matrices, made once per transcript.
struct Endpoints {
    cpus: Ids,
    gpus: Ids,
}

impl Endpoints {
    fn new() -> Endpoints {
        Endpoints {
            cpus: Ids::new("CPU"),
            gpus: Ids::new("GPU"),
        }
    }

    fn get(&mut self, kind: &str, idx: usize) -> Text {
        if kind == "CPU" {
            self.cpus.get(idx)
        } else {
            self.gpus.get(idx)
        }
    }
}

/// Which test the transcript is in: the last `Running <test>.` (and its
/// line), and whether that test has finished (a SUM line, `Waived` or an
/// error).
struct Progress {
    test: Option<(String, usize)>,
    finished: bool,
}

impl Progress {
    /// Reads a line that starts, waives, fails or closes a test. Returns
    /// false for any other line.
    fn read_line(&mut self, t: &str, n: usize, out: &mut Parsed) -> bool {
        if let Some(name) = t.strip_prefix("Running ").and_then(|r| r.strip_suffix('.')) {
            if !self.finished
                && let Some((prev, at)) = &self.test
            {
                out.truncated(*at, format!("test `{prev}` printed no SUM line"));
            }
            self.test = Some((name.to_string(), n));
            self.finished = false;
        } else if t.starts_with("Waived") {
            if let Some((name, _)) = &self.test {
                out.note(
                    n,
                    format!("test `{name}` was waived by nvbandwidth (not supported here)"),
                );
            }
            self.finished = true;
        } else if t.starts_with("ASSERT") || t.contains("Invalid value when checking the pattern") {
            let name = self.test.as_ref().map_or("?", |x| x.0.as_str()).to_string();
            if t.starts_with("ASSERT") {
                out.tool_error(n, format!("nvbandwidth aborted `{name}`: {t}"));
            } else {
                out.tool_error(
                    n,
                    format!("nvbandwidth's data check failed in `{name}`: {t}"),
                );
            }
            self.finished = true;
        } else if let Some(rest) = t.strip_prefix("SUM ") {
            if let Some(m) = out.row("nvbandwidth", sum_cell(rest, n)) {
                out.measurements.push(m);
            }
            self.finished = true;
        } else {
            return false;
        }
        true
    }

    /// At the end of the transcript: a test that never finished was cut,
    /// unless a problem after its start already says so.
    fn finish(&self, lines: &[(usize, &str)], out: &mut Parsed) {
        if !self.finished
            && let Some((name, at)) = &self.test
        {
            let last = lines.last().map_or(*at, |x| x.0);
            if !out
                .issues
                .iter()
                .any(|x| x.line >= *at && x.kind != crate::evidence::IssueKind::Unreadable)
            {
                out.cut(last, format!("the rest of test `{name}` and its SUM line"));
            }
        }
    }
}

/// Parses nvbandwidth's text output, v0.2 to v0.10: several `Running <test>.`
/// blocks, each a matrix (or `Waived`/an error), a `SUM` line and, in newer
/// versions, `COEFFICIENT_OF_VARIATION`. Runs pasted one after another are
/// read in turn.
pub fn parse_nvbandwidth(text: &str) -> Result<Parsed, ParseError> {
    let mut ends = Endpoints::new();
    let lines: Vec<(usize, &str)> = crate::evidence::numbered_vec(text);
    let mut out = Parsed::default();
    let mut progress = Progress {
        test: None,
        finished: true,
    };
    let mut i = 0;
    while i < lines.len() {
        let (n, l) = lines[i];
        if progress.read_line(l.trim(), n, &mut out) {
            i += 1;
            continue;
        }
        let Some(head) = nvb_head(l) else {
            i += 1;
            continue;
        };
        let Some((name, _)) = progress.test.clone() else {
            // Which test this is was not read: its cells are not.
            out.bad_row(
                n,
                "nvbandwidth: expected a `Running <test>.` line before the matrix; its rows are not read",
            );
            i += 1;
            continue;
        };
        match read_matrix(&lines, i, &head, &name, &mut ends, &mut out) {
            Some(next) => i = next,
            None => break,
        }
    }
    progress.finish(&lines, &mut out);
    // The version header and device list, and no test after them.
    if progress.test.is_none()
        && out.measurements.is_empty()
        && let Some((n, _)) = lines.iter().rev().find(|(_, l)| !l.trim().is_empty())
    {
        out.cut(*n, "the tests (`Running <test>.` and their matrices)");
    }
    set_statistic(text, &mut out);
    Ok(out)
}

/// The matrix cells' statistic, from the whole transcript ([`statistic_of`]).
fn set_statistic(text: &str, out: &mut Parsed) {
    let st = statistic_of(text);
    for m in out.measurements.iter_mut() {
        if m.statistic != Statistic::Sum {
            m.statistic = st;
        }
    }
}

/// `SUM <test> <value>`: the total over the matrix.
fn sum_cell(rest: &str, n: usize) -> Result<Measurement, ParseError> {
    let mut parts = rest.words();
    let (Some(name), Some(v)) = (parts.next(), parts.next()) else {
        return Err(ParseError::new(n, "`SUM <test> <value>`"));
    };
    let value = parse_number(v)
        .ok_or_else(|| ParseError::new(n, format!("a number after SUM, found `{v}`")))?;
    let latency = name.contains("latency");
    let mut m = Measurement::new(
        "nvbandwidth",
        n,
        nvbandwidth_kind(name),
        name.to_string(),
        Statistic::Sum,
    );
    nvb_fill(&mut m, name, latency, value, v);
    m.questions.direction = DirectionNote::MatrixTotal;
    Ok(m)
}

/// Reads the matrix whose description line is at `start`: a header of
/// column numbers, then rows `<i> v v v`. Returns the position after it, or
/// `None` when the transcript ends at the description line.
fn read_matrix(
    lines: &[(usize, &str)],
    start: usize,
    head: &NvbHead,
    name: &str,
    ends: &mut Endpoints,
    out: &mut Parsed,
) -> Option<usize> {
    let (n, _) = lines[start];
    let Some((hn, hl)) = lines.get(start + 1) else {
        out.cut(n, format!("the matrix of `{name}`"));
        return None;
    };
    let cols: Vec<&str> = hl.words().collect();
    if cols.is_empty() || cols.iter().any(|c| c.parse::<usize>().is_err()) {
        out.bad_row(
            *hn,
            "nvbandwidth: expected a header of column numbers; the matrix under it is not read",
        );
        return Some(start + 1);
    }
    // One shared name for every cell of the matrix.
    let test: Text = name.to_string().into();
    let mut j = start + 2;
    let mut rows = 0;
    // Room for a square matrix's cells before its rows (the measurements
    // are not moved at each doubling), and one buffer for every row's words.
    out.measurements.reserve(cols.len() * cols.len());
    let mut toks: Vec<&str> = Vec::with_capacity(cols.len() + 1);
    while let Some((rn, rl)) = lines.get(j) {
        toks.clear();
        toks.extend(rl.words());
        let Some((idx, cells)) = toks.split_first() else {
            break;
        };
        let Ok(row) = idx.parse::<usize>() else { break };
        // A row that cannot be read is a problem at its line; the rows
        // after it are read.
        let cells = matrix_row((*rn, row), cells, &cols, head, &test, ends, out);
        out.measurements.extend(cells);
        rows += 1;
        j += 1;
    }
    if rows == 0 {
        let at = lines.get(j.saturating_sub(1)).map_or(n, |x| x.0);
        out.cut(at, format!("the rows of `{name}`"));
    }
    Some(j)
}

/// The cells of matrix row `row` (line `rn`); `N/A` cells are skipped.
fn matrix_row(
    (rn, row): (usize, usize),
    cells: &[&str],
    cols: &[&str],
    head: &NvbHead,
    test: &Text,
    ends: &mut Endpoints,
    problems: &mut Parsed,
) -> Vec<Measurement> {
    let mut cells = cells.to_vec();
    // Two values glued (`52.7752.70`): the token stands for both columns.
    if cells.len() + 1 == cols.len()
        && let Some(g) = cells.iter().position(|x| crate::evidence::is_glued(x))
    {
        cells.insert(g, cells[g]);
    }
    if cells.len() != cols.len() {
        problems.bad_row(
            rn,
            format!(
                "nvbandwidth: expected {} values after row {row}, found {}",
                cols.len(),
                cells.len()
            ),
        );
        return Vec::new();
    }
    let mut out = Vec::new();
    for (c, v) in cols.iter().zip(&cells) {
        if *v == "N/A" {
            continue;
        }
        let value = parse_number(v)
            .ok_or_else(|| ParseError::new(rn, format!("a number or N/A, found `{v}`")));
        let Some(value) = problems.row("nvbandwidth", value) else {
            continue;
        };
        let col: usize = c.parse().unwrap_or(0);
        let r = ends.get(&head.row_kind, row);
        let k = ends.get(&head.col_kind, col);
        let (src, dst) = moves(test, &head.arrow, r, k);
        let mut m = Measurement::new(
            "nvbandwidth",
            rn,
            nvbandwidth_kind(test),
            test.clone(),
            Statistic::Avg,
        );
        if src == dst && head.row_kind == "GPU" && head.col_kind == "GPU" {
            m.kind = Kind::D2d;
        }
        m.src = Some(src);
        m.dst = Some(dst);
        m.direction = if head.arrow == "<->" {
            Direction::Bi
        } else {
            Direction::Uni
        };
        m.copy_engine = head.engine;
        nvb_fill(&mut m, test, head.latency_ns, value, v);
        out.push(m);
    }
    out
}

/// Which way the data of a cell moves: `(src, dst)` from the row's and the
/// column's endpoint. The test decides, not the printed arrow: in every
/// version (v0.2 to v0.10) the `*_read_*` tests print `GPU(row) ->
/// GPU(column)` but copy from the column's GPU into the row's (nvbandwidth's
/// testcases: `value(src, peer) = doMemcpy(peer, src)`, issued in the row's
/// context); `*_write_*` and the other unidirectional tests copy from the
/// row's endpoint to the column's, or the other way when the arrow is `<-`
/// (`device_to_host`: `CPU(row) <- GPU(column)`).
fn moves<T>(test: &str, arrow: &str, row: T, col: T) -> (T, T) {
    let uni = !test.contains("bidirectional");
    if uni && test.contains("_read_") {
        (col, row)
    } else if uni && test.contains("_write_") {
        (row, col)
    } else if arrow == "<-" {
        (col, row)
    } else {
        (row, col)
    }
}

/// nvbandwidth reports the median of its samples unless run with `-m`
/// (`--useMean`); a pasted command line that shows the flag says so.
fn statistic_of(text: &str) -> Statistic {
    let mean = text.lines().any(|l| {
        let l = l.trim();
        l.contains("nvbandwidth")
            && !l.starts_with("nvbandwidth Version")
            && (l.contains("--useMean") || l.words().any(|t| t == "-m"))
    });
    if mean {
        Statistic::Avg
    } else {
        Statistic::Median
    }
}

fn nvb_fill(m: &mut Measurement, test: &str, latency_ns: bool, value: f64, printed: &str) {
    if latency_ns {
        m.latency_s = Some(value * 1e-9);
        m.as_printed = crate::evidence::printed(printed, "ns");
    } else {
        m.bandwidth_bytes_per_s = Some(value * GB);
        m.as_printed = crate::evidence::printed(printed, "GB/s");
    }
    m.buffers = match m.kind {
        Kind::H2d | Kind::D2h => Buffers::Mixed,
        _ => Buffers::Device,
    };
    if m.copy_engine == CopyEngine::Unknown {
        m.copy_engine = if test.ends_with("_ce") {
            CopyEngine::Ce
        } else if test.ends_with("_sm") {
            CopyEngine::Sm
        } else {
            CopyEngine::Unknown
        };
    }
    m.p2p = if m.kind == Kind::P2pCopy {
        P2p::Enabled
    } else {
        P2p::Unknown
    };
    let q = &mut m.questions;
    q.unit = if latency_ns {
        Unit::Nanoseconds
    } else {
        Unit::GigabytesPerS
    };
    q.direction = match m.direction {
        Direction::Uni if test.contains("_read_") => DirectionNote::ColumnToRow,
        Direction::Uni => DirectionNote::TitleArrow,
        Direction::Bi => DirectionNote::Plain,
        Direction::NotStated => DirectionNote::Plain,
    };
    q.path = match m.kind {
        // nvbandwidth runs its peer tests only where peer access is on.
        Kind::P2pCopy => Path::GpuToGpu { access: Some(true) },
        Kind::H2d | Kind::D2h => Path::HostGpu { access: None },
        _ => Path::WithinGpu,
    };
}

/// Parses `nvbandwidth -j`: `{"nvbandwidth": {"testcases": [{"name",
/// "status", "bandwidth_description", "bandwidth_matrix": [[...]], "sum"}]}}`.
pub fn parse_nvbandwidth_json(text: &str) -> Result<Parsed, ParseError> {
    let mut ends = Endpoints::new();
    let v: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| ParseError::new(e.line(), format!("valid JSON ({e})")))?;
    let cases = v
        .pointer("/nvbandwidth/testcases")
        .and_then(|c| c.as_array())
        .ok_or_else(|| ParseError::new(1, "a `nvbandwidth.testcases` array"))?;
    let mut out = Parsed::default();
    for case in cases {
        let name = case
            .get("name")
            .and_then(|x| x.as_str())
            .unwrap_or("?")
            .to_string();
        let status = case.get("status").and_then(|x| x.as_str()).unwrap_or("");
        let line = line_of(text, &format!("\"{name}\""));
        if status != "passed" {
            if status == "waived" {
                out.note(line, format!("test `{name}` was waived by nvbandwidth"));
            } else {
                out.tool_error(
                    line,
                    format!("nvbandwidth test `{name}` has status `{status}`"),
                );
            }
            continue;
        }
        let desc = case
            .get("bandwidth_description")
            .and_then(|x| x.as_str())
            .unwrap_or("");
        let head = nvb_head(&desc.replace("bandwidth GB/s", "bandwidth (GB/s)"));
        let Some(matrix) = case.get("bandwidth_matrix").and_then(|x| x.as_array()) else {
            return Err(ParseError::new(
                line,
                format!("a bandwidth_matrix for `{name}`"),
            ));
        };
        for (r, row) in matrix.iter().enumerate() {
            let Some(row) = row.as_array() else {
                return Err(ParseError::new(line, "matrix rows as arrays"));
            };
            for (c, cell) in row.iter().enumerate() {
                let s = cell
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| cell.to_string());
                if s == "N/A" {
                    continue;
                }
                let value = parse_number(&s).ok_or_else(|| {
                    ParseError::new(line, format!("a number or N/A in `{name}`, found `{s}`"))
                })?;
                let (rk, ck, arrow, engine) = head
                    .as_ref()
                    .map(|h| {
                        (
                            h.row_kind.clone(),
                            h.col_kind.clone(),
                            h.arrow.clone(),
                            h.engine,
                        )
                    })
                    .unwrap_or(("GPU".into(), "GPU".into(), "->".into(), CopyEngine::Unknown));
                let (a, b) = (ends.get(&rk, r), ends.get(&ck, c));
                let (src, dst) = moves(&name, &arrow, a, b);
                let mut m = Measurement::new(
                    "nvbandwidth",
                    line,
                    nvbandwidth_kind(&name),
                    &name,
                    Statistic::Avg,
                );
                m.src = Some(src);
                m.dst = Some(dst);
                m.direction = if arrow == "<->" {
                    Direction::Bi
                } else {
                    Direction::Uni
                };
                m.copy_engine = engine;
                nvb_fill(&mut m, &name, false, value, &s);
                out.measurements.push(m);
            }
        }
    }
    set_statistic(text, &mut out);
    Ok(out)
}

/// The 1-based line on which `needle` first appears (1 if it does not).
fn line_of(text: &str, needle: &str) -> usize {
    text.find(needle)
        .map_or(1, |p| text[..p].matches('\n').count() + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_nvbandwidth_arrows() {
        let h = nvb_head("memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)").unwrap();
        assert_eq!(
            (h.row_kind.as_str(), h.arrow.as_str(), h.col_kind.as_str()),
            ("CPU", "<-", "GPU")
        );
        assert_eq!(h.engine, CopyEngine::Ce);
        let h = nvb_head("Device to Device Latency SM GPU(row) <-> GPU(column) (ns)").unwrap();
        assert!(h.latency_ns);
        assert_eq!(h.engine, CopyEngine::Sm);
    }

    /// The cell of `test` that reads `printed`: (src, dst, statistic).
    fn cell(p: &Parsed, test: &str, printed: &str) -> (String, String, Statistic) {
        let m = p
            .measurements
            .iter()
            .find(|m| m.test.as_str() == test && m.as_printed.starts_with(printed))
            .unwrap_or_else(|| panic!("no {test} cell printed {printed}"));
        let id = |t: &Option<Text>| t.as_ref().map(|t| t.to_string()).unwrap_or_default();
        (id(&m.src), id(&m.dst), m.statistic)
    }

    #[test]
    fn read_ce_moves_data_from_the_column_to_the_row_whatever_the_arrow() {
        // Real v0.4 capture: `memcpy CE GPU(row) -> GPU(column)`; row 2,
        // column 4 reads 372.96: GPU2 read from GPU4.
        let text = include_str!(
            "../../../captures/h100-8gpu-azure-ndv5/nvbandwidth-001-v0.4-8x-h100-azure-ndv5-d2d-read-ce.txt"
        );
        let p = parse_nvbandwidth(text).unwrap();
        let (src, dst, st) = cell(&p, "device_to_device_memcpy_read_ce", "372.96");
        assert_eq!(
            (src.as_str(), dst.as_str(), st),
            ("GPU4", "GPU2", Statistic::Median)
        );
        // Real v0.10.0 capture, same rule.
        let text = include_str!(
            "../../../captures/h100-8gpu-acceptance/nvbandwidth-007-v0.10.0-8x-h100-d2d-latency-sm-and-read-ce.txt"
        );
        let p = parse_nvbandwidth(text).unwrap();
        let read: Vec<_> = p
            .measurements
            .iter()
            .filter(|m| {
                m.test.as_str() == "device_to_device_memcpy_read_ce"
                    && m.statistic == Statistic::Median
            })
            .collect();
        assert!(!read.is_empty());
        assert!(read.iter().all(|m| {
            m.questions.direction == crate::evidence::answers::DirectionNote::ColumnToRow
        }));
    }

    #[test]
    fn device_to_host_follows_its_arrow_and_every_cell_is_a_median() {
        // Real v0.2 capture: `memcpy CE CPU(row) <- GPU(column)`.
        let text = include_str!(
            "../../../captures/rtx4090-8gpu/nvbandwidth-006-v0.2-8x-rtx4090-full-run-truncated.txt"
        );
        let p = parse_nvbandwidth(text).unwrap();
        let (src, dst, st) = cell(&p, "device_to_host_memcpy_ce", "26.77");
        assert!(
            src.starts_with("GPU") && !dst.starts_with("GPU"),
            "{src} -> {dst}"
        );
        assert_eq!(st, Statistic::Median);
        assert!(
            p.measurements
                .iter()
                .all(|m| matches!(m.statistic, Statistic::Median | Statistic::Sum))
        );
    }

    #[test]
    fn write_ce_moves_data_from_the_row_to_the_column_and_dash_m_means_mean() {
        // SYNTHETIC (the shape of `nvbandwidth -j`, numbers made up): row 0
        // wrote into column 1.
        let json = r#"{"nvbandwidth": {"testcases": [{"name": "device_to_device_memcpy_write_ce",
            "status": "passed", "bandwidth_description": "memcpy CE GPU(row) <- GPU(column) bandwidth GB/s",
            "bandwidth_matrix": [["N/A", "11.5"], ["22.5", "N/A"]]}]}}"#;
        let p = parse_nvbandwidth_json(json).unwrap();
        let (src, dst, st) = cell(&p, "device_to_device_memcpy_write_ce", "11.5");
        assert_eq!(
            (src.as_str(), dst.as_str(), st),
            ("GPU0", "GPU1", Statistic::Median)
        );
        assert_eq!(
            statistic_of("$ ./nvbandwidth -t device_local_copy -m\n"),
            Statistic::Avg
        );
        assert_eq!(statistic_of("$ nvbandwidth --useMean\n"), Statistic::Avg);
        assert_eq!(
            statistic_of("nvbandwidth Version: v0.8\n"),
            Statistic::Median
        );
    }
}
