//! MPI point-to-point benchmarks: the OSU micro-benchmarks `osu_bw`,
//! `osu_bibw` and `osu_latency` (v5 to v7 headers, host or device buffers,
//! the `Validation` column, several runs in one file with shell lines in
//! between).
//!
//! OSU prints MB/s with MB = 1e6 bytes (`osu_bw.c` divides the byte count by
//! 1e6) and latency in microseconds, one way (half the ping-pong).

use super::answers::{Context, DirectionNote, Outstanding, Path, Unit};
use super::measurement::{
    Buffers, CopyEngine, Direction, Kind, MB_DECIMAL, Measurement, P2p, Statistic, Verification,
    parse_number,
};
use super::{ParseError, Parsed, numbered_lines};
use crate::evidence::SplitWords;

pub fn looks_like_osu(text: &str, lines: &[&str]) -> bool {
    // Either line below holds `# OSU MPI`, or `# Size` and a unit: no line
    // pass without. (The units first: long literals the block's grams rule
    // out without a search.)
    (has!(text, "# OSU MPI")
        || (has!(text, "Bandwidth (MB/s)") || has!(text, "Latency(us)") || has!(text, "Latency (us)"))
            && has!(text, "# Size"))
        && crate::evidence::numbered(lines).any(|(_, l)| {
        let t = l.trim_start();
        t.starts_with("# OSU MPI")
            // A table pasted without its title line.
            || (t.starts_with("# Size")
                && (t.contains("Bandwidth (MB/s)") || t.contains("Latency(us)") || t.contains("Latency (us)")))
    })
}

/// One OSU run: its `# OSU MPI ...` title and what the lines after it said.
#[derive(Clone, Default)]
struct Run {
    title: String,
    line: usize,
    bidir: bool,
    buffers: Option<Buffers>,
    visible: Option<(String, String)>,
    sdma_off: bool,
    rows: usize,
    last_size: u64,
    last_line: usize,
    /// The title line was not pasted (a fragment).
    untitled: bool,
}

/// The title of a run pasted without its title line.
const UNTITLED: &str = " test (title not stated by the transcript)";

impl Run {
    /// A run from its title line (`rest` is what follows `# OSU MPI`), with
    /// the environment set before it.
    fn new(rest: &str, line: usize, env: &Env) -> Run {
        let title = format!("OSU MPI{rest}");
        Run {
            bidir: title.contains("Bi-Directional"),
            title,
            line,
            visible: env.visible.clone(),
            sdma_off: env.sdma_off,
            ..Run::default()
        }
    }
}

/// Environment variables set on the shell lines between runs.
#[derive(Default)]
struct Env {
    /// The GPU pair of `CUDA_VISIBLE_DEVICES=a,b` (or HIP_, ROCR_).
    visible: Option<(String, String)>,
    /// `HSA_ENABLE_SDMA=0`.
    sdma_off: bool,
}

impl Env {
    fn read_line(&mut self, t: &str) {
        let rest = t.strip_prefix("export ").unwrap_or(t);
        for (var, val) in rest.words().filter_map(|kv| kv.split_once('=')) {
            if var == "CUDA_VISIBLE_DEVICES"
                || var == "HIP_VISIBLE_DEVICES"
                || var == "ROCR_VISIBLE_DEVICES"
            {
                let ids: Vec<&str> = val.split(',').collect();
                if let [a, b] = ids.as_slice() {
                    self.visible = Some((format!("GPU{a}"), format!("GPU{b}")));
                }
            }
            if var == "HSA_ENABLE_SDMA" && val == "0" {
                self.sdma_off = true;
            }
        }
    }
}

/// What the `# Size ...` header says the table holds.
#[derive(Clone, Copy)]
struct Columns {
    bandwidth: bool,
    validation: bool,
}

/// One result row: `<size> <value> [<validation>]`.
struct Row<'a> {
    size: u64,
    value: f64,
    printed: &'a str,
    validation: Option<&'a str>,
}

/// OMB's default largest message (1 << 22 bytes, `MAX_MESSAGE_SIZE`).
const DEFAULT_MAX_SIZE: u64 = 1 << 22;

/// Parses OSU output. `export CUDA_VISIBLE_DEVICES=a,b` (or
/// `HIP_VISIBLE_DEVICES`) before a device-buffer run names the GPU pair.
pub fn parse_osu(text: &str) -> Result<Parsed, ParseError> {
    let mut out = Parsed::default();
    let mut run: Option<Run> = None;
    let mut env = Env::default();
    let mut columns: Option<Columns> = None;
    for (n, l) in numbered_lines(text) {
        let t = l.trim();
        env.read_line(t);
        if let Some(title) = t.strip_prefix("# OSU MPI") {
            if let Some(r) = run.take() {
                finish(&mut out, r);
            }
            run = Some(Run::new(title, n, &env));
            columns = None;
            continue;
        }
        // A table pasted without its `# OSU MPI ...` title: read, with
        // the test's name and direction marked as not stated.
        if run.is_none() && (t.starts_with("# Send Buffer on") || t.starts_with("# Size")) {
            let mut r = Run::new(UNTITLED, n, &env);
            r.untitled = true;
            run = Some(r);
            out.truncated(
                n,
                format!("cut before line {n}: the `# OSU MPI ... Test` title line (which test, which version) not in the transcript"),
            );
        }
        let Some(r) = run.as_mut() else { continue };
        if t.starts_with("# Send Buffer on") {
            r.buffers = Some(buffers_of(t));
            continue;
        }
        if t.starts_with("# Size") {
            columns = Some(Columns {
                bandwidth: t.contains("Bandwidth"),
                validation: t.contains("Validation"),
            });
            continue;
        }
        let Some(cols) = columns else {
            continue;
        };
        // A row that cannot be read is a problem at its line; the rows
        // after it are read.
        let Some(row) = out.row("osu", read_row(t, n, cols)).flatten() else {
            continue;
        };
        if let Some(v) = row.validation
            && v != "Pass"
        {
            out.tool_error(n, format!("OSU validation `{v}` at {} bytes", row.size));
        }
        out.measurements.push(osu_cell(n, r, cols, &row));
        r.rows += 1;
        r.last_size = row.size;
        r.last_line = n;
    }
    if let Some(r) = run.take() {
        check_cut(text, &r, &mut out);
        finish(&mut out, r);
    }
    Ok(out)
}

/// `# Send Buffer on DEVICE (D) and Receive Buffer on HOST (H)`.
fn buffers_of(t: &str) -> Buffers {
    let dev = t.matches("DEVICE").count();
    let host = t.matches("HOST").count();
    match (dev, host) {
        (2, 0) => Buffers::Device,
        (0, 2) => Buffers::Host,
        (1, 1) => Buffers::Mixed,
        _ => Buffers::Unknown,
    }
}

/// Reads one line after the `# Size` header. `Ok(None)` when it does not
/// start with a size (shell lines, notices); an error when a row has the
/// wrong number of columns or a value that is not a number.
fn read_row(t: &str, n: usize, cols: Columns) -> Result<Option<Row<'_>>, ParseError> {
    // The first three words kept in an array, all of them counted: no Vec
    // a row (a row has at most three).
    let (mut toks, mut len) = ([""; 3], 0);
    for w in t.words() {
        if let Some(slot) = toks.get_mut(len) {
            *slot = w;
        }
        len += 1;
    }
    let Some(size) = (len > 0).then(|| toks[0].parse::<u64>().ok()).flatten() else {
        return Ok(None);
    };
    let expected = 2 + usize::from(cols.validation);
    if len != expected {
        return Err(ParseError::new(
            n,
            format!(
                "{expected} columns (size, value{}), found {}",
                if cols.validation { ", validation" } else { "" },
                len
            ),
        ));
    }
    let value = parse_number(toks[1])
        .ok_or_else(|| ParseError::new(n, format!("a number, found `{}`", toks[1])))?;
    Ok(Some(Row {
        size,
        value,
        printed: toks[1],
        validation: cols.validation.then(|| toks[2]),
    }))
}

/// The cell of one row of run `r`.
fn osu_cell(n: usize, r: &Run, cols: Columns, row: &Row<'_>) -> Measurement {
    let bw = cols.bandwidth;
    let kind = Kind::MpiPt2pt;
    let mut m = Measurement::new("osu", n, kind, &r.title, Statistic::Avg);
    m.size_bytes = Some(row.size);
    // Without a title line a bandwidth table could be osu_bw's or
    // osu_bibw's: the direction is not stated.
    m.direction = if r.bidir {
        Direction::Bi
    } else if bw && r.untitled {
        Direction::NotStated
    } else {
        Direction::Uni
    };
    m.buffers = r.buffers.unwrap_or(Buffers::Unknown);
    if m.buffers == Buffers::Device
        && let Some((a, b)) = &r.visible
    {
        m.src = Some(a.clone().into());
        m.dst = Some(b.clone().into());
    }
    m.copy_engine = if r.sdma_off {
        CopyEngine::Sm
    } else {
        CopyEngine::Unknown
    };
    m.p2p = P2p::Unknown;
    if bw {
        m.bandwidth_bytes_per_s = Some(row.value * MB_DECIMAL);
        m.as_printed = crate::evidence::printed(row.printed, "MB/s");
    } else {
        m.latency_s = Some(row.value * 1e-6);
        m.as_printed = crate::evidence::printed(row.printed, "us");
    }
    m.verification = match row.validation {
        Some("Pass") => Verification::Checked { errors: 0 },
        Some(_) => Verification::Failed,
        None => Verification::Unknown,
    };
    osu_questions(&mut m, r, bw);
    m
}

fn osu_questions(m: &mut Measurement, r: &Run, bw: bool) {
    let q = &mut m.questions;
    q.unit = if bw {
        Unit::MegabytesPerS
    } else {
        Unit::Microseconds
    };
    q.direction = match (bw, r.bidir) {
        (false, _) => DirectionNote::HalfRoundTrip,
        (true, false) if r.untitled => DirectionNote::Untitled,
        (true, _) => DirectionNote::Plain,
    };
    if !bw {
        q.outstanding = Outstanding::PingPong;
    }
    q.path = Path::Mpi;
    if r.sdma_off {
        q.context = Context::ShaderCopies;
    }
}

/// A default sweep (several rows from 1 byte up) that ends the file below
/// OMB's default maximum was cut. A single row is a chosen size (`-m 1:1`)
/// and is not flagged.
fn check_cut(text: &str, r: &Run, out: &mut Parsed) {
    let last_text = numbered_lines(text)
        .filter(|(_, l)| !l.trim().is_empty())
        .last()
        .map(|(n, _)| n);
    if r.rows >= 2 && r.last_size < DEFAULT_MAX_SIZE && last_text == Some(r.last_line) {
        out.cut(
            r.last_line,
            format!(
                "the sizes of `{}` above {} bytes (the default sweep ends at {DEFAULT_MAX_SIZE})",
                r.title, r.last_size
            ),
        );
    }
}

fn finish(out: &mut Parsed, r: Run) {
    if r.rows == 0 {
        out.truncated(r.line, format!("`{}` printed no result rows", r.title));
    }
}
