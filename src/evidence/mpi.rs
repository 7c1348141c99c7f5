//! The OSU micro-benchmarks: point-to-point `osu_bw`, `osu_bibw` and
//! `osu_latency` (v5 to v7 headers, host or device buffers, the
//! `Validation` column, several runs in one file with shell lines in
//! between), and the collective latency tests (`osu_allreduce`,
//! `osu_reduce`, ...; MPI, or NCCL and RCCL in OMB's `xccl` build): the
//! time of one collective, `Avg Latency(us)` and, with `-f`, `Min` and
//! `Max` and the `Iterations` it averaged.
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
    (has!(text, "# OSU ")
        || (has!(text, "Bandwidth (MB/s)") || has!(text, "Latency(us)") || has!(text, "Latency (us)"))
            && has!(text, "# Size"))
        && crate::evidence::numbered(lines).any(|(_, l)| {
        let t = l.trim_start();
        osu_title(t).is_some()
            // A table pasted without its title line.
            || (t.starts_with("# Size")
                && (t.contains("Bandwidth (MB/s)") || t.contains("Latency(us)") || t.contains("Latency (us)")))
    })
}

/// One OSU run: its `# OSU MPI ...` title and what the lines after it said.
#[derive(Clone, Default)]
struct Run {
    title: String,
    /// The collective the title names; none for point-to-point.
    collective: Option<Kind>,
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
const UNTITLED: &str = "MPI test (title not stated by the transcript)";

/// What follows `# OSU ` in a title line: `MPI-CUDA Bandwidth Test v7.2`,
/// `NCCL-CUDA Allreduce Latency Test v7.4`.
pub(crate) fn osu_title(t: &str) -> Option<&str> {
    let rest = t.strip_prefix("# OSU ")?;
    ["MPI", "NCCL", "RCCL"]
        .iter()
        .any(|lib| rest.starts_with(lib))
        .then_some(rest)
}

/// The collective a title names (`Allreduce Latency Test`), by its word.
fn collective_kind(title: &str) -> Option<Kind> {
    // Non-blocking tests print overlap columns, read as before (not at
    // all); a neighbourhood collective is not the global one.
    if title.contains("Non-blocking") {
        return None;
    }
    if title.contains("Neighborhood") {
        return Some(Kind::Collective);
    }
    title.words().find_map(|w| match w {
        "Allreduce" => Some(Kind::Allreduce),
        "Reduce_scatter" | "Reduce_scatter_block" => Some(Kind::Reducescatter),
        "Reduce" => Some(Kind::Reduce),
        "Allgather" | "Allgatherv" => Some(Kind::Allgather),
        "All-to-All" | "Alltoall" | "Alltoallv" => Some(Kind::Alltoall),
        "Broadcast" | "Bcast" => Some(Kind::Broadcast),
        "Gather" | "Gatherv" | "Scatter" | "Scatterv" | "Barrier" => Some(Kind::Collective),
        _ => None,
    })
}

impl Run {
    /// A run from its title line (`rest` is what follows `# OSU MPI`), with
    /// the environment set before it.
    fn new(rest: &str, line: usize, env: &Env) -> Run {
        let title = format!("OSU {rest}");
        Run {
            collective: collective_kind(&title),
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
    /// A collective's latency columns, in OSU's order (`Avg`, then `Min`
    /// and `Max` with `-f`), whether `Iterations` follows them, and how
    /// many columns after those are not read (OMB 7's `Pn Tail Lat(us)`,
    /// `Transmit Size`).
    collective: Option<(&'static [Statistic], bool, usize)>,
}

impl Columns {
    /// The columns of header `t` of a run of a collective test or not.
    fn of(t: &str, collective: bool) -> Columns {
        let collective = (collective && t.contains("Avg Latency")).then(|| {
            let stats: &'static [Statistic] =
                if t.contains("Min Latency") && t.contains("Max Latency") {
                    &[Statistic::Avg, Statistic::Min, Statistic::Max]
                } else {
                    &[Statistic::Avg]
                };
            let unread = t.matches("Tail Lat").count() + t.matches("Transmit Size").count();
            (stats, t.contains("Iterations"), unread)
        });
        Columns {
            bandwidth: t.contains("Bandwidth"),
            validation: t.contains("Validation"),
            collective,
        }
    }
}

/// One result row: `<size> <value> [<validation>]`.
struct Row<'a> {
    size: u64,
    value: f64,
    printed: &'a str,
    validation: Option<&'a str>,
}

/// OMB's default largest message (1 << 22 bytes, `MAX_MESSAGE_SIZE`);
/// its collective tests stop at 1 << 20 (`MAX_MSG_SIZE_COLL`).
const DEFAULT_MAX_SIZE: u64 = 1 << 22;
const DEFAULT_MAX_SIZE_COLLECTIVE: u64 = 1 << 20;

/// The size a row starts with.
fn words_size(t: &str) -> u64 {
    t.words().next().and_then(|w| w.parse().ok()).unwrap_or(0)
}

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
        if let Some(title) = osu_title(t) {
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
            columns = Some(Columns::of(t, r.collective.is_some()));
            continue;
        }
        let Some(cols) = columns else {
            continue;
        };
        if let Some(shape) = cols.collective {
            if let Some(cells) = out
                .row("osu", collective_row(t, n, r, shape, cols.validation))
                .flatten()
            {
                if let Some(v) = cells.first().map(|m| &m.verification)
                    && *v == Verification::Failed
                {
                    out.tool_error(
                        n,
                        format!("OSU validation failed at {} bytes", words_size(t)),
                    );
                }
                out.measurements.extend(cells);
                r.rows += 1;
                r.last_size = words_size(t);
                r.last_line = n;
            }
            continue;
        }
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

/// The cells of one row of a collective's latency table: one per latency
/// column. `Ok(None)` when the line does not start with a size.
fn collective_row(
    t: &str,
    n: usize,
    r: &Run,
    (stats, iterations, unread): (&[Statistic], bool, usize),
    validation: bool,
) -> Result<Option<Vec<Measurement>>, ParseError> {
    let words: Vec<&str> = t.words().collect();
    let Some(size) = words.first().and_then(|w| w.parse::<u64>().ok()) else {
        return Ok(None);
    };
    // size, latencies, [iterations], [validation], [unread columns]
    let at_iters = 1 + stats.len();
    let at_valid = at_iters + usize::from(iterations);
    let expected = at_valid + usize::from(validation) + unread;
    if words.len() != expected {
        return Err(ParseError::new(
            n,
            format!(
                "{expected} columns (size, {} latencies{}{}), found {}",
                stats.len(),
                if iterations { ", iterations" } else { "" },
                if validation { ", validation" } else { "" },
                words.len()
            ),
        ));
    }
    let iters = match iterations {
        true => Some(words[at_iters].parse::<u64>().map_err(|_| {
            ParseError::new(
                n,
                format!("an iteration count, found `{}`", words[at_iters]),
            )
        })?),
        false => None,
    };
    let verification = match validation.then(|| words[at_valid]) {
        Some("Pass") => Verification::Checked { errors: 0 },
        Some(_) => Verification::Failed,
        None => Verification::Unknown,
    };
    let mut cells = Vec::with_capacity(stats.len());
    for (&stat, printed) in stats.iter().zip(&words[1..]) {
        let v = parse_number(printed)
            .ok_or_else(|| ParseError::new(n, format!("a number, found `{printed}`")))?;
        let mut m = Measurement::new(
            "osu",
            n,
            r.collective.unwrap_or(Kind::Collective),
            &r.title,
            stat,
        );
        m.size_bytes = Some(size);
        m.direction = Direction::Uni;
        m.buffers = r.buffers.unwrap_or(Buffers::Unknown);
        m.latency_s = Some(v * 1e-6);
        m.as_printed = crate::evidence::printed(printed, "us");
        m.iterations = iters;
        m.verification = verification.clone();
        let q = &mut m.questions;
        q.unit = Unit::Microseconds;
        q.direction = DirectionNote::Collective;
        q.outstanding = Outstanding::OneCollective;
        q.path = Path::Mpi;
        cells.push(m);
    }
    Ok(Some(cells))
}

/// The cell of one row of run `r`.
fn osu_cell(n: usize, r: &Run, cols: Columns, row: &Row<'_>) -> Measurement {
    let bw = cols.bandwidth;
    let kind = r.collective.unwrap_or(Kind::MpiPt2pt);
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
    let max = match r.collective {
        None => DEFAULT_MAX_SIZE,
        // OMB lowers the largest size of these to 512 MiB over the ranks
        // (`check_mem_limit`), saying so on stderr only: an early end is
        // no sign of a cut.
        Some(Kind::Allgather | Kind::Alltoall | Kind::Collective) => 0,
        Some(_) => DEFAULT_MAX_SIZE_COLLECTIVE,
    };
    if r.rows >= 2 && r.last_size < max && last_text == Some(r.last_line) {
        out.cut(
            r.last_line,
            format!(
                "the sizes of `{}` above {} bytes (the default sweep ends at {max})",
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

#[cfg(test)]
mod tests {
    use super::*;

    const REDUCE: &str = include_str!(
        "../../captures/osu-reduce-cuda-192rank-efa/osu-005-osu-reduce-cuda-v7.3-192-ranks-full-stats-cut.txt"
    );

    #[test]
    fn a_collective_latency_table_is_a_collective_with_avg_min_and_max() {
        let p = parse_osu(REDUCE).unwrap();
        // 11 sizes, three latencies each.
        assert_eq!(p.measurements.len(), 33);
        let first: Vec<_> = p.measurements[..3]
            .iter()
            .map(|m| (m.kind, m.statistic, m.latency_s, m.iterations))
            .collect();
        assert_eq!(
            first,
            [
                (Kind::Reduce, Statistic::Avg, Some(53.34e-6), Some(1000)),
                (Kind::Reduce, Statistic::Min, Some(24.80e-6), Some(1000)),
                (Kind::Reduce, Statistic::Max, Some(158.96e-6), Some(1000)),
            ]
        );
        assert!(
            p.measurements
                .iter()
                .all(|m| m.bandwidth_bytes_per_s.is_none()
                    && m.questions.direction == DirectionNote::Collective)
        );
        // The table stops at 1 KiB, below the default 1 MiB: cut.
        assert!(
            p.issues
                .iter()
                .any(|i| i.line == 16 && i.message.contains("above 1024 bytes"))
        );
    }

    #[test]
    fn a_point_to_point_latency_with_an_avg_header_stays_point_to_point() {
        let text = "# OSU MPI Latency Test v7.5\n# Size      Avg Latency(us)        Validation\n1                       2.41              Pass\n";
        let p = parse_osu(text).unwrap();
        assert_eq!(p.measurements.len(), 1);
        assert_eq!(p.measurements[0].kind, Kind::MpiPt2pt);
        assert_eq!(
            p.measurements[0].questions.direction,
            DirectionNote::HalfRoundTrip
        );
    }

    #[test]
    fn collectives_are_named_by_their_word_in_the_title() {
        for (title, kind) in [
            ("OSU MPI Allreduce Latency Test v7.1", Kind::Allreduce),
            ("OSU NCCL-CUDA Allreduce Latency Test v7.4", Kind::Allreduce),
            ("OSU MPI Reduce_scatter Latency Test", Kind::Reducescatter),
            (
                "OSU MPI All-to-All Personalized Exchange Latency Test",
                Kind::Alltoall,
            ),
            ("OSU MPI Broadcast Latency Test", Kind::Broadcast),
            ("OSU MPI Barrier Latency Test", Kind::Collective),
        ] {
            assert_eq!(collective_kind(title), Some(kind), "{title}");
        }
        assert_eq!(collective_kind("OSU MPI-CUDA Bandwidth Test v7.2"), None);
        assert_eq!(
            osu_title("# OSU NCCL-CUDA Allreduce Latency Test"),
            Some("NCCL-CUDA Allreduce Latency Test")
        );
        assert_eq!(osu_title("# OSU something else"), None);
    }

    /// Synthetic (the columns OMB 7.4's `print_only_header` prints with
    /// `-f -c`; no real paste of it found): the validation column is read.
    #[test]
    fn a_collective_with_a_validation_column_keeps_its_rows_and_reports_a_failure() {
        let text = "# OSU MPI Allreduce Latency Test v7.4\n# Size       Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations  Validation\n4                       1.23              1.10              1.50        1000        Pass\n8                       1.25              1.11              1.52        1000        Fail\n";
        let p = parse_osu(text).unwrap();
        assert_eq!(p.measurements.len(), 6);
        assert_eq!(
            p.measurements[0].verification,
            Verification::Checked { errors: 0 }
        );
        assert_eq!(p.measurements[3].verification, Verification::Failed);
        assert!(
            p.issues
                .iter()
                .any(|i| i.line == 4 && i.message.contains("validation failed"))
        );
    }

    #[test]
    fn an_alltoall_that_ends_early_is_not_called_cut_nor_a_non_blocking_test_a_collective() {
        // OMB stops an all-to-all at 512 MiB over the ranks (stderr only).
        let text = "# OSU MPI All-to-All Personalized Exchange Latency Test v7.3\n# Size       Avg Latency(us)\n1                      10.00\n524288               900.00\n";
        let p = parse_osu(text).unwrap();
        assert_eq!(p.measurements.len(), 2);
        assert_eq!(p.measurements[0].kind, Kind::Alltoall);
        assert!(
            p.issues.is_empty(),
            "{:?}",
            p.issues.iter().map(|i| &i.message).collect::<Vec<_>>()
        );
        assert_eq!(
            collective_kind("OSU MPI Non-blocking Allreduce Latency Test"),
            None
        );
        assert_eq!(
            collective_kind("OSU MPI Neighborhood Allgather Latency Test"),
            Some(Kind::Collective)
        );
    }
}
