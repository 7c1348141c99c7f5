//! Copy-bandwidth transcripts inside one node: the CUDA sample
//! `p2pBandwidthLatencyTest`, `nvbandwidth` (text and `-j` JSON),
//! `rocm-bandwidth-test` and `TransferBench`.
//!
//! All four print GB/s meaning 1e9 bytes per second; latency in
//! microseconds (p2pBandwidthLatencyTest) or nanoseconds (nvbandwidth's
//! latency tests).

use super::measurement::{
    Buffers, CopyEngine, Direction, GB, Ids, Kind, Measurement, NOT_STATED, P2p, Statistic, Text,
    Verification, describe_size, parse_binary_size, parse_number,
};
use super::{ParseError, Parsed, numbered_lines};

// ---------------------------------------------------------------------------
// p2pBandwidthLatencyTest

pub fn looks_like_p2p_bandwidth_latency_test(text: &str, _lines: &[&str]) -> bool {
    text.contains("P2P (Peer-to-Peer) GPU Bandwidth Latency Test")
        || text.contains("P2P Connectivity Matrix")
        || (text.contains("P2P=Disabled") && text.contains("Matrix ("))
}

/// Some captures carry an editor's line numbers (` 1 `, ` 2 `...) in front of
/// every line. When every non-blank line starts with its own 1-based number,
/// the numbers are removed; otherwise lines are kept as they are.
fn strip_editor_line_numbers(lines: Vec<(usize, &str)>) -> Vec<(usize, &str)> {
    let numbered = lines
        .iter()
        .filter(|(_, l)| !l.trim().is_empty())
        .all(|(n, l)| {
            let t = l.trim_start();
            let digits: String = t.chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<usize>().ok() == Some(*n)
                && (t.len() == digits.len() || t[digits.len()..].starts_with(' '))
        });
    if !numbered || lines.is_empty() {
        return lines;
    }
    lines
        .into_iter()
        .map(|(n, l)| {
            let t = l.trim_start();
            let d = t.chars().take_while(char::is_ascii_digit).count();
            (n, t[d..].strip_prefix(' ').unwrap_or(&t[d..]))
        })
        .collect()
}

/// The header of one p2pBandwidthLatencyTest matrix.
struct P2pMatrixHead {
    test: String,
    direction: Direction,
    p2p: P2p,
    latency: bool,
}

fn p2p_matrix_head(l: &str) -> Option<P2pMatrixHead> {
    let t = l.trim();
    if !t.ends_with("Matrix (GB/s)") && !t.ends_with("Matrix (us)") {
        return None;
    }
    let p2p = if t.contains("P2P=Enabled") {
        P2p::Enabled
    } else if t.contains("P2P=Disabled") {
        P2p::Disabled
    } else {
        return None;
    };
    Some(P2pMatrixHead {
        test: t.to_string(),
        direction: if t.starts_with("Bidirectional") {
            Direction::Bi
        } else {
            Direction::Uni
        },
        p2p,
        latency: t.ends_with("(us)"),
    })
}

/// Parses the CUDA sample's output: device list, peer access lines, the
/// connectivity matrix, the four bandwidth matrices and the two latency
/// matrices (each with a GPU and a CPU block).
pub fn parse_p2p_bandwidth_latency_test(text: &str) -> Result<Parsed, ParseError> {
    let lines = strip_editor_line_numbers(numbered_lines(text).collect());
    let mut out = Parsed::default();
    let mut gpus = Ids::new("GPU");
    // Which ordered pairs can access each other (from the "CAN/CANNOT Access
    // Peer" lines or the connectivity matrix).
    let mut access: std::collections::BTreeMap<(u32, u32), bool> = Default::default();
    let mut i = 0;
    let mut seen_matrix = false;
    while i < lines.len() {
        let (n, l) = lines[i];
        let t = l.trim();
        if let Some(rest) = t.strip_prefix("Device=") {
            // Device=0 CANNOT Access Peer Device=1
            let parts: Vec<&str> = rest.split_whitespace().collect();
            if let [a, verb, _, _, b] = parts.as_slice()
                && let (Ok(a), Some(Ok(b))) = (
                    a.parse::<u32>(),
                    b.strip_prefix("Device=").map(str::parse::<u32>),
                )
            {
                access.insert((a, b), *verb == "CAN");
            }
            i += 1;
            continue;
        }
        if t == "P2P Connectivity Matrix" {
            let (rows, next) = read_index_matrix(&lines, i + 1, "D\\D", false);
            for r in &rows {
                for (col, v) in r.cells.iter().enumerate() {
                    access
                        .entry((r.index as u32, col as u32))
                        .or_insert(*v == "1");
                }
            }
            if rows.is_empty() {
                out.truncated(n, "the P2P connectivity matrix has no rows");
            }
            i = next;
            continue;
        }
        let Some(head) = p2p_matrix_head(l) else {
            i += 1;
            continue;
        };
        seen_matrix = true;
        let mut j = i + 1;
        let blocks: &[&str] = if head.latency {
            &["GPU", "CPU"]
        } else {
            &["D\\D"]
        };
        for block in blocks {
            // Skip blank lines between the GPU and CPU blocks.
            while j < lines.len() && lines[j].1.trim().is_empty() {
                j += 1;
            }
            let (rows, next) = read_index_matrix(&lines, j, block, false);
            let expected = rows.first().map_or(0, |r| r.cells.len());
            if rows.is_empty() || rows.len() < expected {
                let at = lines.get(next.saturating_sub(1)).map_or(n, |x| x.0);
                out.truncated(
                    at,
                    format!(
                        "`{}` ({block} block) stops after {} of its rows",
                        head.test,
                        rows.len()
                    ),
                );
            }
            let test: Text = if head.latency {
                format!("{} {block}", head.test).into()
            } else {
                head.test.clone().into()
            };
            for r in &rows {
                let (row, line) = (&(r.index as u32), &r.line);
                for (col, v) in r.cells.iter().enumerate() {
                    let Some(value) = parse_number(v) else {
                        return Err(ParseError::new(
                            *line,
                            format!("a number in column {col}, found `{v}`"),
                        ));
                    };
                    let col = col as u32;
                    let kind = if *row == col {
                        Kind::D2d
                    } else {
                        Kind::P2pCopy
                    };
                    let mut m = Measurement::new(
                        "p2pBandwidthLatencyTest",
                        *line,
                        kind,
                        test.clone(),
                        Statistic::Avg,
                    );
                    m.src = Some(gpus.get(*row as usize));
                    m.dst = Some(gpus.get(col as usize));
                    m.direction = head.direction;
                    m.p2p = head.p2p;
                    m.buffers = Buffers::Device;
                    if head.latency {
                        m.latency_s = Some(value * 1e-6);
                        m.as_printed = format!("{v} us");
                    } else {
                        m.bandwidth_bytes_per_s = Some(value * GB);
                        m.as_printed = format!("{v} GB/s");
                    }
                    let can = access.get(&(*row, col)).copied();
                    p2p_questions(&mut m, head.latency, block, can);
                    out.measurements.push(m);
                }
            }
            j = next;
        }
        i = j;
    }
    if !seen_matrix && out.measurements.is_empty() {
        let last = lines.last().map_or(1, |x| x.0);
        out.truncated(
            last,
            "no bandwidth or latency matrix (the run stopped or was cut before them)",
        );
    }
    Ok(out)
}

fn p2p_questions(m: &mut Measurement, latency: bool, block: &str, can: Option<bool>) {
    let q = &mut m.questions;
    q.unit = if latency {
        "microseconds (us), as printed".into()
    } else {
        "GB/s = 1e9 bytes per second, as printed".into()
    };
    q.direction = match m.direction {
        Direction::Uni => "unidirectional: row device copies to column device".into(),
        Direction::Bi => "bidirectional: both directions at once, figure is the sum of both".into(),
    };
    q.message_size = NOT_STATED.into();
    q.warm_up = NOT_STATED.into();
    q.outstanding = match (latency, block) {
        (true, "CPU") => "one transfer at a time, timed on the CPU".into(),
        (true, _) => "one transfer at a time, timed on the GPU".into(),
        (false, _) => NOT_STATED.into(),
    };
    q.path = if m.src == m.dst {
        "within one GPU's memory".into()
    } else {
        match (m.p2p, can) {
            (P2p::Disabled, _) => "P2P disabled: staged through host memory by design".into(),
            (P2p::Enabled, Some(false)) => {
                "P2P requested but the pair cannot access each other as peers (CANNOT Access Peer / connectivity 0): the copy falls back to staging through host memory".into()
            }
            (P2p::Enabled, Some(true)) => "direct peer access between the pair".into(),
            _ => "P2P requested; whether the pair can access each other is not stated".into(),
        }
    };
    q.context = NOT_STATED.into();
}

/// One row of an index-labelled matrix: `<index> <cells...>`.
struct IndexRow<'a> {
    index: usize,
    line: usize,
    cells: Vec<&'a str>,
}

/// Reads an index-labelled matrix: a header line starting with `label`
/// (`D\D`, `GPU`, `CPU`, `D/D`) then rows `<index> <values...>`. With
/// `spaced`, blank lines before the header and between rows are skipped
/// (rocm-bandwidth-test prints them). Returns the rows and the position
/// after the matrix.
fn read_index_matrix<'a>(
    lines: &[(usize, &'a str)],
    start: usize,
    label: &str,
    spaced: bool,
) -> (Vec<IndexRow<'a>>, usize) {
    let skip_blank = |mut i: usize| {
        while spaced && i < lines.len() && lines[i].1.trim().is_empty() {
            i += 1;
        }
        i
    };
    let mut rows = Vec::new();
    let start = skip_blank(start);
    let Some((_, head)) = lines.get(start) else {
        return (rows, start);
    };
    let head: Vec<&str> = head.split_whitespace().collect();
    if head.first() != Some(&label) {
        return (rows, start);
    }
    let ncols = head.len() - 1;
    let mut i = start + 1;
    loop {
        let j = skip_blank(i);
        let Some((n, l)) = lines.get(j) else {
            return (rows, i);
        };
        let toks: Vec<&str> = l.split_whitespace().collect();
        match toks.split_first() {
            Some((idx, cells)) if cells.len() == ncols && idx.parse::<usize>().is_ok() => {
                rows.push(IndexRow {
                    index: idx.parse().unwrap_or(0),
                    line: *n,
                    cells: cells.to_vec(),
                });
                i = j + 1;
            }
            _ => return (rows, i),
        }
    }
}

// ---------------------------------------------------------------------------
// nvbandwidth

pub fn looks_like_nvbandwidth(text: &str, lines: &[&str]) -> bool {
    text.contains("nvbandwidth Version:")
        || crate::evidence::numbered(lines).any(|(_, l)| {
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
    let toks: Vec<&str> = t.split_whitespace().collect();
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

/// Parses nvbandwidth's text output, v0.2 to v0.10: several `Running <test>.`
/// blocks, each a matrix (or `Waived`/an error), a `SUM` line and, in newer
/// versions, `COEFFICIENT_OF_VARIATION`. Runs pasted one after another are
/// read in turn.
pub fn parse_nvbandwidth(text: &str) -> Result<Parsed, ParseError> {
    let mut ends = Endpoints::new();
    let lines: Vec<(usize, &str)> = numbered_lines(text).collect();
    let mut out = Parsed::default();
    let mut test: Option<(String, usize)> = None;
    let mut finished = true;
    let mut i = 0;
    while i < lines.len() {
        let (n, l) = lines[i];
        let t = l.trim();
        if let Some(name) = t.strip_prefix("Running ").and_then(|r| r.strip_suffix('.')) {
            if !finished && let Some((prev, at)) = &test {
                out.truncated(*at, format!("test `{prev}` printed no SUM line"));
            }
            test = Some((name.to_string(), n));
            finished = false;
            i += 1;
            continue;
        }
        if t.starts_with("Waived") {
            if let Some((name, _)) = &test {
                out.note(
                    n,
                    format!("test `{name}` was waived by nvbandwidth (not supported here)"),
                );
            }
            finished = true;
            i += 1;
            continue;
        }
        if t.starts_with("ASSERT") || t.contains("Invalid value when checking the pattern") {
            let name = test.as_ref().map_or("?", |x| x.0.as_str()).to_string();
            if t.starts_with("ASSERT") {
                out.tool_error(n, format!("nvbandwidth aborted `{name}`: {t}"));
            } else {
                out.tool_error(
                    n,
                    format!("nvbandwidth's data check failed in `{name}`: {t}"),
                );
            }
            finished = true;
            i += 1;
            continue;
        }
        if let Some(rest) = t.strip_prefix("SUM ") {
            let mut parts = rest.split_whitespace();
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
            m.questions.direction = "total over every pair of the matrix".into();
            out.measurements.push(m);
            finished = true;
            i += 1;
            continue;
        }
        let Some(head) = nvb_head(l) else {
            i += 1;
            continue;
        };
        let Some((name, _)) = test.clone() else {
            return Err(ParseError::new(
                n,
                "a `Running <test>.` line before the matrix",
            ));
        };
        // Column header, then rows `<i> v v v`.
        let Some((hn, hl)) = lines.get(i + 1) else {
            out.truncated(n, format!("`{name}` stops after its description line"));
            break;
        };
        let cols: Vec<&str> = hl.split_whitespace().collect();
        if cols.is_empty() || cols.iter().any(|c| c.parse::<usize>().is_err()) {
            return Err(ParseError::new(*hn, "a header of column numbers"));
        }
        let mut j = i + 2;
        let mut rows = 0;
        while let Some((rn, rl)) = lines.get(j) {
            let toks: Vec<&str> = rl.split_whitespace().collect();
            let Some((idx, cells)) = toks.split_first() else {
                break;
            };
            let Ok(row) = idx.parse::<usize>() else { break };
            if cells.len() != cols.len() {
                return Err(ParseError::new(
                    *rn,
                    format!(
                        "{} values after row {row}, found {}",
                        cols.len(),
                        cells.len()
                    ),
                ));
            }
            for (c, v) in cols.iter().zip(cells) {
                if *v == "N/A" {
                    continue;
                }
                let value = parse_number(v)
                    .ok_or_else(|| ParseError::new(*rn, format!("a number or N/A, found `{v}`")))?;
                let col: usize = c.parse().unwrap_or(0);
                let r = ends.get(&head.row_kind, row);
                let k = ends.get(&head.col_kind, col);
                let (src, dst) = if head.arrow == "<-" { (k, r) } else { (r, k) };
                let mut m = Measurement::new(
                    "nvbandwidth",
                    *rn,
                    nvbandwidth_kind(&name),
                    &name,
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
                nvb_fill(&mut m, &name, head.latency_ns, value, v);
                out.measurements.push(m);
            }
            rows += 1;
            j += 1;
        }
        if rows == 0 {
            let at = lines.get(j.saturating_sub(1)).map_or(n, |x| x.0);
            out.truncated(at, format!("`{name}` stops after its column header"));
        }
        i = j;
    }
    if !finished && let Some((name, at)) = &test {
        let last = lines.last().map_or(*at, |x| x.0);
        if !out.issues.iter().any(|x| x.line >= *at) {
            out.truncated(last, format!("test `{name}` printed no SUM line"));
        }
    }
    Ok(out)
}

fn nvb_fill(m: &mut Measurement, test: &str, latency_ns: bool, value: f64, printed: &str) {
    if latency_ns {
        m.latency_s = Some(value * 1e-9);
        m.as_printed = format!("{printed} ns");
    } else {
        m.bandwidth_bytes_per_s = Some(value * GB);
        m.as_printed = format!("{printed} GB/s");
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
        "nanoseconds, as printed".into()
    } else {
        "GB/s = 1e9 bytes per second, as printed".into()
    };
    q.direction = match m.direction {
        Direction::Uni => {
            "unidirectional, in the direction of the arrow in the matrix title".into()
        }
        Direction::Bi => "bidirectional (<->): both directions at once".into(),
    };
    q.message_size = NOT_STATED.into();
    q.warm_up = NOT_STATED.into();
    q.outstanding = NOT_STATED.into();
    q.path = match m.kind {
        Kind::P2pCopy => format!(
            "GPU to GPU with peer access, by {}",
            if m.copy_engine == CopyEngine::Sm {
                "SM copy kernels"
            } else {
                "copy engines"
            }
        )
        .into(),
        Kind::H2d | Kind::D2h => "host memory over PCIe (or C2C) and the GPU".into(),
        _ => "within one GPU".into(),
    };
    q.context = NOT_STATED.into();
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
                let (src, dst) = if arrow == "<-" { (b, a) } else { (a, b) };
                let mut m = Measurement::new(
                    "nvbandwidth",
                    line,
                    nvbandwidth_kind(&name),
                    &name,
                    Statistic::Avg,
                );
                m.src = Some(src.into());
                m.dst = Some(dst.into());
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
    Ok(out)
}

/// The 1-based line on which `needle` first appears (1 if it does not).
fn line_of(text: &str, needle: &str) -> usize {
    text.find(needle)
        .map_or(1, |p| text[..p].matches('\n').count() + 1)
}

// ---------------------------------------------------------------------------
// rocm-bandwidth-test

pub fn looks_like_rocm_bandwidth_test(text: &str, _lines: &[&str]) -> bool {
    text.contains("RocmBandwidthTest Version")
        || text.contains("Inter-Device Access")
        || text.contains("Unidirectional Benchmark Result")
        || text.contains("Bidirectional Benchmark Result")
        || text.contains("Bdirectional Benchmark Result")
}

/// Parses rocm-bandwidth-test: the device list (CPU and GPU agents), the
/// access and NUMA-distance matrices, the peak unidirectional and
/// bidirectional matrices of `-a/-A`, and the per-size tables of `-s/-d` runs
/// (including the tool's "Bdirectional" spelling).
pub fn parse_rocm_bandwidth_test(text: &str) -> Result<Parsed, ParseError> {
    let lines: Vec<(usize, &str)> = numbered_lines(text).collect();
    let mut out = Parsed::default();
    // Agent index -> id (CPU0, GPU0...), in the order the tool lists them.
    let mut agents: Vec<Text> = Vec::new();
    let (mut cpus, mut gpus) = (0, 0);
    let mut access: std::collections::BTreeMap<(usize, usize), bool> = Default::default();
    let mut i = 0;
    // A `-s/-d` sweep: direction, and (agent, is CPU) of source and destination.
    type Sweep = (Direction, Endpoint, Endpoint);
    let mut sweep: Option<Sweep> = None;
    // `Launch Command is: ... -m <sizes>` replaces the default size list.
    let custom_sizes = lines
        .iter()
        .any(|(_, l)| l.contains("Launch Command is:") && l.split_whitespace().any(|w| w == "-m"));
    while i < lines.len() {
        let (n, l) = lines[i];
        let t = l.trim();
        if let Some(rest) = t.strip_prefix("Device:") {
            // `Device: 4,  ,  GPU-ab43...,  c9:0.0` or `Device: 0,  AMD EPYC ...`
            let fields: Vec<&str> = rest.split(',').map(str::trim).collect();
            let is_gpu = fields.iter().any(|f| f.starts_with("GPU-")) || fields.len() >= 4;
            if is_gpu {
                agents.push(format!("GPU{gpus}").into());
                gpus += 1;
            } else {
                agents.push(format!("CPU{cpus}").into());
                cpus += 1;
            }
            i += 1;
            continue;
        }
        let matrix = match t {
            "Inter-Device Access" => Some("access"),
            "Inter-Device Numa Distance" => Some("numa"),
            "Unidirectional copy peak bandwidth GB/s" => Some("uni"),
            "Bidirectional copy peak bandwidth GB/s" => Some("bi"),
            _ => None,
        };
        if let Some(which) = matrix {
            let (rows, next) = read_index_matrix(&lines, i + 1, "D/D", true);
            let ncols = rows.first().map_or(0, |r| r.cells.len());
            if rows.is_empty() {
                out.truncated(n, format!("`{t}` has no rows"));
            } else if rows.len() < ncols {
                let at = rows.last().map_or(n, |r| r.line);
                out.truncated(
                    at,
                    format!("`{t}` stops after {} of its {ncols} rows", rows.len()),
                );
            }
            let title: Text = t.to_string().into();
            for r in &rows {
                let (row, rn) = (&r.index, &r.line);
                for (col, v) in r.cells.iter().enumerate() {
                    match which {
                        "access" => {
                            access.insert((*row, col), *v == "1");
                        }
                        "numa" => {}
                        _ => {
                            if *v == "N/A" {
                                continue;
                            }
                            let value = parse_number(v).ok_or_else(|| {
                                ParseError::new(*rn, format!("a number or N/A, found `{v}`"))
                            })?;
                            let dir = if which == "bi" {
                                Direction::Bi
                            } else {
                                Direction::Uni
                            };
                            let (src, dst) = (agent(&agents, *row), agent(&agents, col));
                            let mut m = rbt_cell(*rn, &title, &src, &dst, dir, Statistic::Peak);
                            m.bandwidth_bytes_per_s = Some(value * GB);
                            m.as_printed = format!("{v} GB/s");
                            if let Some(false) = access.get(&(*row, col)) {
                                m.questions.path = format!(
                                    "{} (the access matrix says {src} cannot access {dst} directly)",
                                    m.questions.path
                                ).into();
                            }
                            out.measurements.push(m);
                        }
                    }
                }
            }
            i = next;
            continue;
        }
        if t.contains("Benchmark Result") {
            let dir = if t.contains("Unidirectional") {
                Direction::Uni
            } else {
                Direction::Bi
            };
            // Next two banner lines carry the source and destination.
            let src = lines.get(i + 1).and_then(|x| banner_device(x.1, "Src"));
            let dst = lines.get(i + 2).and_then(|x| banner_device(x.1, "Dst"));
            match (src, dst) {
                (Some(s), Some(d)) => sweep = Some((dir, s, d)),
                _ => {
                    return Err(ParseError::new(
                        n + 1,
                        "`Src Device Id: <n> Src Device Type: <Cpu|Gpu>` and `Dst ...` banner lines",
                    ));
                }
            }
            i += 3;
            continue;
        }
        if t.starts_with("Data Size") {
            let Some((dir, s, d)) = sweep else {
                return Err(ParseError::new(
                    n,
                    "a `Benchmark Result` banner before the size table",
                ));
            };
            let test: Text = if dir == Direction::Uni {
                "Unidirectional Benchmark".into()
            } else {
                "Bidirectional Benchmark".into()
            };
            let mut j = i + 1;
            let mut rows = 0;
            let mut last_size = 0;
            while let Some((rn, rl)) = lines.get(j) {
                let toks: Vec<&str> = rl.split_whitespace().collect();
                if toks.len() != 6 {
                    break;
                }
                let size = parse_binary_size(toks[0], toks[1]).ok_or_else(|| {
                    ParseError::new(
                        *rn,
                        format!("a size like `16 MB`, found `{} {}`", toks[0], toks[1]),
                    )
                })?;
                last_size = size;
                let nums: Vec<f64> = toks[2..].iter().filter_map(|x| parse_number(x)).collect();
                if nums.len() != 4 {
                    return Err(ParseError::new(
                        *rn,
                        "four numbers: Avg Time(us) Avg BW(GB/s) Min Time(us) Peak BW(GB/s)",
                    ));
                }
                let (src, dst) = (sweep_agent(&agents, s), sweep_agent(&agents, d));
                for (stat, bw, printed) in [
                    (Statistic::Avg, nums[1], toks[3]),
                    (Statistic::Peak, nums[3], toks[5]),
                ] {
                    let mut m = rbt_cell(*rn, &test, &src, &dst, dir, stat);
                    m.size_bytes = Some(size);
                    m.bandwidth_bytes_per_s = Some(bw * GB);
                    m.as_printed = format!("{printed} GB/s");
                    m.questions.message_size = describe_size(size).into();
                    out.measurements.push(m);
                }
                for (stat, us, printed) in [
                    (Statistic::Avg, nums[0], toks[2]),
                    (Statistic::Min, nums[2], toks[4]),
                ] {
                    let mut m = rbt_cell(*rn, &test, &src, &dst, dir, stat);
                    m.size_bytes = Some(size);
                    m.latency_s = Some(us * 1e-6);
                    m.as_printed = format!("{printed} us");
                    m.questions.unit = "microseconds per copy, as printed".into();
                    m.questions.message_size = describe_size(size).into();
                    out.measurements.push(m);
                }
                rows += 1;
                j += 1;
            }
            if rows == 0 {
                out.truncated(n, "the size table has no rows");
            } else if j >= lines.len() && !custom_sizes && last_size < DEFAULT_LAST_SIZE {
                // Without -m the tool sweeps up to 512 MB; a table that ends
                // the file below that was cut.
                let at = lines.get(j - 1).map_or(n, |x| x.0);
                out.truncated(
                    at,
                    format!(
                        "the size table stops at {} (the default sweep ends at 512 MB)",
                        describe_size(last_size)
                    ),
                );
            }
            i = j;
            continue;
        }
        i += 1;
    }
    Ok(out)
}

/// The largest size of rocm-bandwidth-test's default sweep (512 MB).
const DEFAULT_LAST_SIZE: u64 = 512 << 20;

/// Without a device list (some captures omit it), agent `k` keeps its number.
fn agent(agents: &[Text], k: usize) -> Text {
    agents
        .get(k)
        .cloned()
        .unwrap_or_else(|| format!("agent{k}").into())
}

/// An agent number and whether it is a CPU.
type Endpoint = (usize, bool);

/// `=== Src Device Id: 0 Src Device Type: Cpu ===` -> (0, is CPU).
fn banner_device(l: &str, which: &str) -> Option<Endpoint> {
    let t = l.trim().trim_matches('=').trim();
    let rest = t
        .strip_prefix(which)?
        .trim_start()
        .strip_prefix("Device Id:")?;
    let id = rest.split_whitespace().next()?.parse().ok()?;
    let (_, ty) = rest.split_once("Device Type:")?;
    Some((id, ty.trim().eq_ignore_ascii_case("cpu")))
}

/// The id of a sweep endpoint: from the device list when the capture has
/// one, else `CPU@agent<k>` / `GPU@agent<k>` (the tool's agent number).
fn sweep_agent(agents: &[Text], (k, cpu): Endpoint) -> Text {
    match agents.get(k) {
        Some(a) => a.clone(),
        None => format!("{}@agent{k}", if cpu { "CPU" } else { "GPU" }).into(),
    }
}

fn rbt_cell(
    line: usize,
    test: &Text,
    src: &Text,
    dst: &Text,
    dir: Direction,
    stat: Statistic,
) -> Measurement {
    let kind = match (src.starts_with("CPU"), dst.starts_with("CPU")) {
        (true, false) => Kind::H2d,
        (false, true) => Kind::D2h,
        (true, true) => Kind::H2h,
        (false, false) if src == dst => Kind::D2d,
        _ => Kind::P2pCopy,
    };
    let mut m = Measurement::new("rocm-bandwidth-test", line, kind, test.clone(), stat);
    m.src = Some(src.clone());
    m.dst = Some(dst.clone());
    m.direction = dir;
    m.copy_engine = CopyEngine::Ce;
    m.buffers = match kind {
        Kind::H2d | Kind::D2h => Buffers::Mixed,
        Kind::H2h => Buffers::Host,
        _ => Buffers::Device,
    };
    m.verification = Verification::Unknown;
    let q = &mut m.questions;
    q.unit = "GB/s = 1e9 bytes per second, as printed".into();
    q.direction = match dir {
        Direction::Uni => "unidirectional: row agent copies to column agent".into(),
        Direction::Bi => "bidirectional: both directions at once, figure is the sum of both".into(),
    };
    q.message_size = NOT_STATED.into();
    q.warm_up = NOT_STATED.into();
    q.outstanding = NOT_STATED.into();
    q.path = match kind {
        Kind::H2d | Kind::D2h => {
            "host memory of a CPU agent (NUMA node) and a GPU, by DMA engines".into()
        }
        Kind::D2d => "within one GPU".into(),
        Kind::H2h => "between host memory of two CPU agents".into(),
        _ => "GPU to GPU by DMA engines (xGMI or PCIe: see the topology)".into(),
    };
    q.context = NOT_STATED.into();
    m
}

// ---------------------------------------------------------------------------
// TransferBench

pub fn looks_like_transferbench(text: &str, _lines: &[&str]) -> bool {
    text.contains("TransferBench v")
        || (text.contains("Test 1:") && text.contains("Aggregate (CPU)"))
        || (text.contains("Summary: [") && text.contains("bytes per Transfer]"))
}

/// TransferBench memory names: `G0` GPU 0 device memory, `C0`/`P0` host
/// memory (pageable / pinned... P is pinned host memory, C coarse-grained
/// host), `F0` fine-grained GPU memory.
fn tb_mem(s: &str) -> (String, Buffers) {
    let s = s.trim();
    let (kind, idx) = s.split_at(s.find(|c: char| c.is_ascii_digit()).unwrap_or(s.len()));
    match kind {
        "G" | "F" | "GPU" => (
            format!(
                "GPU{}",
                idx.trim_start_matches('0').parse::<u32>().unwrap_or(0)
            ),
            Buffers::Device,
        ),
        "P" => (format!("CPU{idx}"), Buffers::HostPinned),
        "C" | "B" | "D" => (format!("CPU{idx}"), Buffers::Host),
        _ => (s.to_string(), Buffers::Unknown),
    }
}

/// Parses TransferBench: the CSV-ish output (`OUTPUT_TO_CSV=1`), the
/// pipe-delimited `SHOW_ITERATIONS` output, and the all-to-all summary matrix.
pub fn parse_transferbench(text: &str) -> Result<Parsed, ParseError> {
    let lines: Vec<(usize, &str)> = numbered_lines(text).collect();
    let mut out = Parsed::default();
    // Environment values that answer questions.
    let mut warmups: Option<u64> = None;
    let mut iterations: Option<u64> = None;
    let mut validate: Option<bool> = None;
    let mut current: Option<Measurement> = None;
    let mut a2a_bytes: Option<u64> = None;
    let mut i = 0;
    while i < lines.len() {
        let (n, l) = lines[i];
        let t = l.trim();
        let fields: Vec<&str> = if t.contains('|') {
            t.split('|').map(str::trim).collect()
        } else {
            t.split(',').map(str::trim).collect()
        };
        let key = fields.first().copied().unwrap_or("");
        match key {
            "NUM_WARMUPS" => warmups = fields.get(1).and_then(|v| v.parse().ok()),
            "NUM_ITERATIONS" => iterations = fields.get(1).and_then(|v| v.parse().ok()),
            "ALWAYS_VALIDATE" => validate = fields.get(1).map(|v| *v != "0"),
            _ => {}
        }
        if let Some(rest) = t.strip_prefix("Summary: [") {
            a2a_bytes = rest.split_whitespace().next().and_then(|v| v.parse().ok());
        }
        if key.starts_with("Transfer ") && fields.len() >= 4 {
            // Transfer 0, 0.535 GB/s, 7.840 ms, 4194304 bytes, P0 -> D0:1 -> G0
            let bw = fields
                .get(1)
                .and_then(|v| v.strip_suffix("GB/s"))
                .and_then(|v| parse_number(v.trim()));
            let bytes = fields
                .get(3)
                .and_then(|v| v.strip_suffix("bytes"))
                .and_then(|v| v.trim().parse::<u64>().ok());
            let route = fields.get(4).copied().unwrap_or("");
            let hops: Vec<&str> = route.split("->").map(str::trim).collect();
            let (Some(bw), Some(bytes), [src, exe, dst]) = (bw, bytes, hops.as_slice()) else {
                return Err(ParseError::new(
                    n,
                    "`Transfer N | <GB/s> | <ms> | <bytes> bytes | SRC -> EXE -> DST`",
                ));
            };
            let (s, sb) = tb_mem(src);
            let (d, db) = tb_mem(dst);
            let kind = match (s.starts_with("CPU"), d.starts_with("CPU")) {
                (true, false) => Kind::H2d,
                (false, true) => Kind::D2h,
                (true, true) => Kind::H2h,
                _ if s == d => Kind::D2d,
                _ => Kind::P2pCopy,
            };
            let mut m = Measurement::new("TransferBench", n, kind, key.to_string(), Statistic::Avg);
            m.src = Some(s.into());
            m.dst = Some(d.into());
            m.size_bytes = Some(bytes);
            m.bandwidth_bytes_per_s = Some(bw * GB);
            m.as_printed = format!("{} GB/s", fields[1].trim_end_matches("GB/s").trim());
            m.buffers = if sb == db { sb } else { Buffers::Mixed };
            m.copy_engine = if exe.starts_with('D') {
                CopyEngine::Ce
            } else if exe.starts_with('G') {
                CopyEngine::Sm
            } else {
                CopyEngine::Unknown
            };
            m.iterations = iterations;
            m.warmup_iterations = warmups;
            m.verification = match validate {
                Some(true) => Verification::Checked { errors: 0 },
                _ => Verification::Unknown,
            };
            let q = &mut m.questions;
            q.unit = "GB/s = 1e9 bytes per second, as printed".into();
            q.direction = "unidirectional: source to destination of the transfer".into();
            q.message_size = describe_size(bytes).into();
            q.warm_up = match warmups {
                Some(0) => "no warm-up iterations (NUM_WARMUPS=0): the first iteration's setup cost is in the average".into(),
                Some(w) => format!("{w} warm-up iteration(s) outside the timing (NUM_WARMUPS)").into(),
                None => NOT_STATED.into(),
            };
            q.outstanding = format!("executor {exe}").into();
            q.path = format!("{route} (source -> executor -> destination)").into();
            q.context = NOT_STATED.into();
            if let Some(prev) = current.take() {
                out.measurements.push(prev);
            }
            current = Some(m);
        } else if key.starts_with("Iter ") {
            // Per-iteration rows: kept as Single cells of the transfer above.
            if let Some(base) = &current {
                let bw = fields
                    .get(1)
                    .and_then(|v| v.strip_suffix("GB/s"))
                    .and_then(|v| parse_number(v.trim()));
                if let Some(bw) = bw {
                    let mut m = base.clone();
                    m.source = super::Source::line(n);
                    m.statistic = Statistic::Single;
                    m.test = format!("{} {key}", base.test).into();
                    m.bandwidth_bytes_per_s = Some(bw * GB);
                    m.as_printed = format!("{} GB/s", fields[1].trim_end_matches("GB/s").trim());
                    out.measurements.push(m);
                }
            }
        } else if t.starts_with("SRC\\DST") {
            let (cells, next) = read_a2a(&lines, i, a2a_bytes, &mut out)?;
            out.measurements.extend(cells);
            i = next;
            continue;
        }
        i += 1;
    }
    if let Some(m) = current {
        out.measurements.push(m);
    }
    Ok(out)
}

fn read_a2a(
    lines: &[(usize, &str)],
    start: usize,
    bytes: Option<u64>,
    out: &mut Parsed,
) -> Result<(Vec<Measurement>, usize), ParseError> {
    let (hn, head) = lines[start];
    // `SRC\DST  GPU 00  GPU 01 ... STotal Actual`
    let ncols = head.matches("GPU ").count();
    if ncols == 0 {
        return Err(ParseError::new(hn, "`GPU NN` column names"));
    }
    let mut cells = Vec::new();
    let mut i = start + 1;
    let mut rows = 0;
    while let Some((n, l)) = lines.get(i) {
        let toks: Vec<&str> = l.split_whitespace().collect();
        if toks.len() < 2 || toks[0] != "GPU" {
            break;
        }
        let row: u32 = toks[1]
            .parse()
            .map_err(|_| ParseError::new(*n, "a GPU number after `GPU`"))?;
        let vals = &toks[2..];
        if vals.len() < ncols {
            return Err(ParseError::new(
                *n,
                format!("{ncols} values after GPU {row}"),
            ));
        }
        for (c, v) in vals[..ncols].iter().enumerate() {
            if *v == "N/A" {
                continue;
            }
            let value = parse_number(v)
                .ok_or_else(|| ParseError::new(*n, format!("a number or N/A, found `{v}`")))?;
            let mut m = Measurement::new("TransferBench", *n, Kind::P2pCopy, "a2a", Statistic::Avg);
            m.src = Some(format!("GPU{row}").into());
            m.dst = Some(format!("GPU{c}").into());
            m.size_bytes = bytes;
            m.bandwidth_bytes_per_s = Some(value * GB);
            m.as_printed = format!("{v} GB/s");
            m.buffers = Buffers::Device;
            m.copy_engine = CopyEngine::Sm;
            let q = &mut m.questions;
            q.unit = "GB/s = 1e9 bytes per second, as printed".into();
            q.direction = "unidirectional per pair, all pairs at once (all-to-all)".into();
            q.message_size = bytes.map_or(NOT_STATED.into(), describe_size);
            q.path = "GPU to GPU, GFX (SM) executors".into();
            q.context = "every other GPU pair transferring at the same time (all-to-all)".into();
            cells.push(m);
        }
        rows += 1;
        i += 1;
    }
    if rows < ncols {
        out.truncated(
            lines.get(i.saturating_sub(1)).map_or(hn, |x| x.0),
            format!("the all-to-all matrix has {rows} of {ncols} rows"),
        );
    }
    Ok((cells, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_editor_line_numbers_only_when_every_line_has_them() {
        let l = vec![(1, "  1 P2P=Disabled"), (2, "  2    GPU 0"), (3, "  3")];
        let s = strip_editor_line_numbers(l);
        assert_eq!(s[0].1, "P2P=Disabled");
        assert_eq!(s[1].1, "   GPU 0");
        let l = vec![(1, "  1 a"), (2, "  7 b")];
        assert_eq!(strip_editor_line_numbers(l.clone()), l);
    }

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

    #[test]
    fn transferbench_memory_names() {
        assert_eq!(tb_mem("G0"), ("GPU0".into(), Buffers::Device));
        assert_eq!(tb_mem("P0"), ("CPU0".into(), Buffers::HostPinned));
        assert_eq!(tb_mem("G1").0, "GPU1");
    }
}
