//! Collective benchmarks: nccl-tests and rccl-tests `*_perf` output.
//!
//! nccl-tests prints algbw and busbw in GB/s with GB = 1e9 bytes (it
//! divides by 1.0E9 in `common.cu`), and time in microseconds. busbw is
//! algbw times a per-collective factor (2(n-1)/n for all-reduce, (n-1)/n for
//! all-gather, reduce-scatter and all-to-all, 1 for broadcast, reduce and
//! send/recv), which is what lets the collective be identified when the
//! transcript does not name it.

use super::answers::{DirectionNote, MessageSize, Outstanding, Path, Unit};
use super::measurement::{
    Buffers, CopyEngine, Direction, GB, Kind, Measurement, P2p, Statistic, Text, Verification,
    parse_number,
};
use super::{ParseError, Parsed, Source, numbered_lines};
use crate::evidence::SplitWords;

mod detect;
pub use detect::looks_like_nccl_tests;

mod old;
#[cfg(test)]
mod old_tests;
use old::{column_names, is_old_row, non_finite, over_tolerance, tolerance, unhashed_header};

/// Removes an MPI output prefix such as `[1,0]<stdout>:`.
fn strip_mpi_prefix(l: &str) -> &str {
    let t = super::trim_start(l);
    if t.starts_with('[')
        && let Some(end) = t.find(">:")
        && t[..end].contains("]<std")
    {
        return &t[end + 2..];
    }
    l
}

#[derive(Default)]
struct Header {
    warmup: Option<u64>,
    iters: Option<u64>,
    validation: Option<bool>,
    ranks: usize,
    hosts: std::collections::BTreeSet<String>,
    gpu: Option<String>,
}

/// Identifies the collective from the columns and the busbw/algbw ratio.
/// Returns the kind and, when it could not be identified, why.
fn identify(
    redop: Option<&str>,
    root: Option<i64>,
    ratio: Option<f64>,
    n: usize,
) -> (Kind, Option<String>) {
    let n_f = n as f64;
    let near = |a: f64, b: f64| (a - b).abs() < 0.01 * b.max(0.01);
    let has_op = redop.is_some_and(|r| r != "none");
    if let Some(r) = root
        && r >= 0
    {
        return (
            if has_op {
                Kind::Reduce
            } else {
                Kind::Broadcast
            },
            None,
        );
    }
    let Some(ratio) = ratio else {
        return (
            Kind::Collective,
            Some("no row with a non-zero algbw to tell the collective by".into()),
        );
    };
    if n < 2 {
        return (
            Kind::Collective,
            Some("the number of ranks is not printed".into()),
        );
    }
    let ar = 2.0 * (n_f - 1.0) / n_f;
    let ag = (n_f - 1.0) / n_f;
    let candidates: Vec<Kind> = [
        (Kind::Allreduce, ar, true),
        (Kind::Reducescatter, ag, true),
        (Kind::Allgather, ag, false),
        (Kind::Alltoall, ag, false),
        (Kind::Sendrecv, 1.0, true),
        (Kind::Sendrecv, 1.0, false),
    ]
    .into_iter()
    .filter(|(_, f, op)| near(ratio, *f) && (*op == has_op || redop.is_none()))
    .map(|(k, _, _)| k)
    .collect();
    let mut uniq = candidates.clone();
    uniq.dedup();
    match uniq.as_slice() {
        [k] => (*k, None),
        [] => (
            Kind::Collective,
            Some(format!(
                "busbw/algbw = {ratio:.3} with {n} ranks matches no known collective"
            )),
        ),
        many => (
            Kind::Collective,
            Some(format!(
                "busbw/algbw = {ratio:.3} with {n} ranks fits {} equally; the transcript does not name the test",
                many.iter()
                    .map(|k| k.as_str())
                    .collect::<Vec<_>>()
                    .join(" or ")
            )),
        ),
    }
}

impl Header {
    /// `# nThread 1 nGpus 1 ... warmup iters: 5 iters: 20 agg iters: 1
    /// validation: 1 graph: 0`.
    fn read_threads_line(&mut self, rest: &str) {
        let toks: Vec<&str> = rest.words().collect();
        let after = |key: &str| {
            toks.windows(2)
                .find(|w| w[0] == key)
                .and_then(|w| w[1].parse::<u64>().ok())
        };
        self.warmup = toks
            .windows(3)
            .find(|w| w[0] == "warmup" && w[1] == "iters:")
            .and_then(|w| w[2].parse().ok());
        // `warmup iters: 5 iters: 20 agg iters: 1`: the plain `iters:`.
        self.iters = toks
            .windows(3)
            .find(|w| w[1] == "iters:" && w[0] != "warmup" && w[0] != "agg")
            .and_then(|w| w[2].parse().ok());
        self.validation = after("validation:").map(|v| v != 0);
    }

    /// `#  Rank  0 Group  0 Pid 1234 on host-a device  0 [0x1b] NVIDIA H100`:
    /// one rank, its host and its GPU's name.
    fn read_rank_line(&mut self, rest: &str) {
        self.ranks += 1;
        if let Some((_, after)) = rest.split_once(" on ") {
            if let Some(host) = after.words().next() {
                self.hosts.insert(host.to_string());
            }
            if let Some((_, name)) = after.split_once(']') {
                let name = name.trim();
                if !name.is_empty() {
                    self.gpu = Some(name.to_string());
                }
            }
        }
    }
}

/// One data row of the results table: the size, the optional redop and root
/// columns, and the 8 timing columns (time, algbw, busbw, #wrong for
/// out-of-place, then the same for in-place).
struct Row<'a> {
    line: usize,
    size: u64,
    /// The datatype column (`float`, `half`...).
    dtype: &'a str,
    redop: Option<&'a str>,
    root: Option<i64>,
    vals: [&'a str; 8],
}

/// What one pass over the transcript found.
struct Scan<'a> {
    header: Header,
    /// The table's column header: its line and its column names.
    cols: Option<(usize, Vec<String>)>,
    rows: Vec<Row<'a>>,
    /// `# Avg bus bandwidth : <v>`, its line and the text after the colon.
    avg_busbw: Option<(usize, String)>,
    /// `# Out of bounds values : <n> OK`, its line and the text after the colon.
    oob: Option<(usize, String)>,
    last_line: usize,
    /// No column header: the first row's line, rows read as
    /// [`STANDARD_HEADER`].
    headless: Option<usize>,
    /// Rows that could not be read, each at its line.
    bad: Vec<ParseError>,
    /// The header is the 2017 one (`bytes N type op ...`): times in ms.
    time_ms: bool,
}

/// Parses one nccl-tests / rccl-tests run, with NCCL INFO lines, MPI
/// prefixes and launcher warnings interleaved anywhere.
pub fn parse_nccl_tests(text: &str) -> Result<Parsed, ParseError> {
    let mut out = Parsed::default();
    let scan = scan_nccl_tests(text)?;
    // NCCL's own lines in the run say which paths it took.
    if has!(text, "NCCL INFO") {
        super::nccl::read_into(text, &mut out, false);
    }
    let Some((header_line, _)) = scan.cols else {
        return Err(ParseError::new(
            scan.last_line,
            "a `#  size  count  type ... algbw  busbw` table header",
        ));
    };
    if scan.rows.is_empty() {
        out.truncated(scan.last_line, "the results table has no rows");
        return Ok(out);
    }
    if let Some(first) = scan.headless {
        let old = scan
            .rows
            .first()
            .is_some_and(|r| r.vals[3].contains('e') || non_finite(r.vals[3]));
        let cols = if old {
            "size count type [redop or root] time algbw busbw error (the format before #wrong)"
        } else {
            "size count type redop root time algbw busbw #wrong"
        };
        out.truncated(
            first,
            format!("the table's column header is not in the transcript (cut above this row); columns read as nccl-tests prints them: {cols}, out-of-place then in-place"),
        );
    }
    // Without the header the time's unit is the one that makes each row's
    // size over its time its algbw (the 2017 format printed ms).
    let time_ms = scan.time_ms || (scan.headless.is_some() && times_are_ms(&scan.rows));
    let kind = identify_run(&scan.rows, &scan.header, header_line, &mut out);
    let cells = RowCells::new(&scan.header, kind, header_line, time_ms);
    // Room for six cells a row and the `Avg bus bandwidth` cell up front:
    // a long table's measurements (large structs) are not moved again each
    // time the Vec doubles, nor all at once for the last cell.
    out.measurements.reserve(scan.rows.len() * 6 + 1);
    for r in &scan.rows {
        let row = cells.row(r, &mut out);
        out.measurements.extend(row);
    }
    for e in scan.bad {
        out.row::<()>("nccl-tests", Err(e));
    }
    report_wrong_values(scan.oob.as_ref(), &scan.rows, &mut out);
    push_avg_busbw(scan.avg_busbw, &scan.header, kind, scan.last_line, &mut out);
    Ok(out)
}

/// Whether the rows' out-of-place times are in milliseconds: for most rows
/// with a size, a time and an algbw, size over the time read as ms is
/// nearer the printed algbw than size over the time read as us (they are
/// a factor of 1000 apart; rounding moves a ratio by far less).
fn times_are_ms(rows: &[Row<'_>]) -> bool {
    let (mut ms, mut us) = (0, 0);
    for r in rows {
        let (Some(t), Some(alg)) = (parse_number(r.vals[0]), parse_number(r.vals[1])) else {
            continue;
        };
        if r.size == 0 || t <= 0.0 || alg <= 0.0 {
            continue;
        }
        let off = |seconds: f64| (r.size as f64 / (t * seconds) / GB / alg).log10().abs();
        if off(1e-3) < off(1e-6) {
            ms += 1;
        } else {
            us += 1;
        }
    }
    ms > us
}

/// Reads every line: the `#` header lines, the table's rows and the trailer.
/// NCCL/RCCL INFO and WARN lines are skipped wherever they are.
fn scan_nccl_tests(text: &str) -> Result<Scan<'_>, ParseError> {
    let mut scan = Scan {
        header: Header::default(),
        cols: None,
        rows: Vec::new(),
        avg_busbw: None,
        oob: None,
        last_line: 1,
        headless: None,
        bad: Vec::new(),
        time_ms: false,
    };
    // One buffer for every row's words (not a growing Vec per row).
    let mut toks: Vec<&str> = Vec::with_capacity(16);
    for (n, raw) in numbered_lines(text) {
        scan.last_line = n;
        let l = strip_mpi_prefix(raw);
        let t = super::trim(l);
        if has!(t, "CCL ") && (has!(t, " INFO ") || has!(t, " WARN ")) {
            continue;
        }
        if let Some(rest) = t.strip_prefix('#').or_else(|| unhashed_header(t)) {
            read_comment_line(rest.trim(), n, &mut scan);
            continue;
        }
        if scan.cols.is_none() && is_standard_row(t) {
            // The table's header was cut off (a `kubectl logs --tail`):
            // rows of the standard shape are read under the header
            // nccl-tests prints, and the reading says so.
            scan.cols = Some((n, STANDARD_HEADER.iter().map(|c| c.to_string()).collect()));
            scan.headless = Some(n);
        }
        let Some((_, names)) = &scan.cols else {
            continue;
        };
        // A row that cannot be read is a problem at its line; the rows
        // before and after it are read.
        match read_row(t, n, names, &mut toks) {
            Ok(Some(row)) => scan.rows.push(row),
            Ok(None) => {}
            Err(e) => scan.bad.push(e),
        }
    }
    Ok(scan)
}

/// The column header nccl-tests prints (2.x, with redop and root).
const STANDARD_HEADER: [&str; 13] = [
    "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
    "busbw", "#wrong",
];

/// A data row of the standard 13 columns: `8 2 float sum -1 21.57 0.00
/// 0.00 0 21.24 0.00 0.00 0`; the type names a datatype nccl-tests knows.
/// Or one of the format before `#wrong` ([`is_old_row`]).
fn is_standard_row(t: &str) -> bool {
    // Rows start with their size: other lines cost one byte's look.
    if !t.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        return false;
    }
    const TYPES: &[&str] = &[
        "int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double",
        "bfloat16", "f8e4m3", "f8e5m2",
    ];
    // 11 to 13 columns, a datatype third: checked before splitting for good.
    let n = t.words().take(14).count();
    let dtype = t.words().nth(2).unwrap_or("");
    if !(11..=13).contains(&n) || !(TYPES.contains(&dtype) || tolerance(dtype).is_some()) {
        return false;
    }
    let toks: Vec<&str> = t.words().collect();
    (toks.len() == 13
        && toks[0].parse::<u64>().is_ok()
        && toks[1].parse::<u64>().is_ok()
        && TYPES.contains(&toks[2])
        && toks[4].parse::<i64>().is_ok())
        || is_old_row(&toks)
}

/// A `#` line (or one pasted without its `#`): `nThread`, a rank line,
/// the table's column header, or one of the trailer lines.
fn read_comment_line(rest: &str, n: usize, scan: &mut Scan<'_>) {
    if let Some(counts) = rest.strip_prefix("nThread") {
        scan.header.read_threads_line(counts);
    } else if rest.starts_with("Rank") && rest.contains(" on ") && rest.contains(" device ") {
        scan.header.read_rank_line(rest);
    } else if let Some((names, ms)) = column_names(rest) {
        scan.cols = Some((n, names));
        scan.time_ms = ms;
    } else if let Some(v) = rest.strip_prefix("Avg bus bandwidth") {
        scan.avg_busbw = Some((n, v.trim_start_matches([' ', ':']).trim().to_string()));
    } else if let Some(v) = rest.strip_prefix("Out of bounds values") {
        scan.oob = Some((n, v.trim_start_matches([' ', ':']).trim().to_string()));
    }
}

/// Reads one line after the table header. `Ok(None)` when the line is not a
/// data row (launcher noise, a blank line); an error when it looks like a
/// row but has too many columns between the type and the timings.
/// `toks` is a buffer for the row's words.
fn read_row<'a>(
    t: &'a str,
    n: usize,
    names: &[String],
    toks: &mut Vec<&'a str>,
) -> Result<Option<Row<'a>>, ParseError> {
    toks.clear();
    toks.extend(t.words());
    // Two values the tool printed without a space (`35.9136.07`): the
    // token stands for both columns, so the others stay aligned and only
    // those two cells are lost.
    if let Some(g) = toks.iter().position(|x| super::is_glued(x)) {
        toks.insert(g, toks[g]);
    }
    // Data rows start with the size and have 8 trailing values. (The
    // size is parsed once, here.)
    let size = match toks.first().map(|t| t.parse::<u64>()) {
        Some(Ok(size)) if toks[1..].first().is_some_and(|c| c.parse::<u64>().is_ok()) => size,
        _ => return Ok(None),
    };
    if toks.len() < 11 {
        // A row cut short, or one missing columns: the size and count say
        // it is a row.
        if toks.len() >= 4 && toks[2].bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(ParseError::new(
                n,
                format!(
                    "size, count, type, [redop], [root] and 8 timing columns; found {} values",
                    toks.len()
                ),
            ));
        }
        return Ok(None);
    }
    let mid = &toks[3..toks.len() - 8];
    let has_redop = names.iter().any(|c| c == "redop");
    let has_root = names.iter().any(|c| c == "root");
    let (redop, root) = match (mid, has_redop, has_root) {
        ([op, r], _, _) => (Some(*op), r.parse().ok()),
        ([x], true, false) => (Some(*x), None),
        ([x], false, true) => (None, x.parse().ok()),
        ([x], true, true) => match x.parse::<i64>() {
            Ok(r) => (None, Some(r)),
            Err(_) => (Some(*x), None),
        },
        ([], _, _) => (None, None),
        _ => {
            return Err(ParseError::new(
                n,
                format!(
                    "size, count, type, [redop], [root] and 8 timing columns; found {} values",
                    toks.len()
                ),
            ));
        }
    };
    // The last 8 words, copied into the row (no Vec between).
    let vals: &[&'a str] = &toks[toks.len() - 8..];
    Ok(Some(Row {
        line: n,
        size,
        dtype: toks[2],
        redop,
        root,
        vals: <[&'a str; 8]>::try_from(vals).map_err(|_| ParseError::new(n, "8 timing columns"))?,
    }))
}

/// Names the collective from the first row's columns and the busbw/algbw
/// ratio; notes on the table header why when it cannot.
fn identify_run(rows: &[Row<'_>], h: &Header, header_line: usize, out: &mut Parsed) -> Kind {
    // The ratio at the largest size with a usable algbw identifies the collective.
    let ratio = rows
        .iter()
        .rev()
        .filter_map(|r| Some((parse_number(r.vals[1])?, parse_number(r.vals[2])?)))
        .find(|(a, _)| *a >= 0.1)
        .map(|(a, b)| b / a);
    let first = &rows[0];
    let (kind, why) = identify(first.redop, first.root, ratio, h.ranks);
    if let Some(why) = why {
        out.note(header_line, format!("collective not identified: {why}"));
    }
    kind
}

/// Makes the cells of table rows: algbw, busbw and time, out-of-place then
/// in-place.
struct RowCells {
    /// What every cell of one half (0: out-of-place, 1: in-place) and
    /// statistic shares, its test name too; rows only change numbers.
    templates: Vec<(usize, Statistic, Measurement)>,
    validation: Option<bool>,
    /// The time column's unit, as printed, and its seconds.
    time_unit: (&'static str, f64),
}

impl RowCells {
    fn new(h: &Header, kind: Kind, header_line: usize, time_ms: bool) -> RowCells {
        let tests: [Text; 2] = [
            format!("{} out-of-place", kind.as_str()).into(),
            format!("{} in-place", kind.as_str()).into(),
        ];
        let stats: Vec<(Statistic, Measurement)> =
            [Statistic::Algbw, Statistic::Busbw, Statistic::Avg]
                .into_iter()
                .map(|stat| {
                    let mut m =
                        Measurement::new("nccl-tests", header_line, kind, kind.as_str(), stat);
                    m.iterations = h.iters;
                    m.warmup_iterations = h.warmup;
                    m.buffers = Buffers::Device;
                    m.p2p = P2p::Unknown;
                    m.copy_engine = CopyEngine::Unknown;
                    m.direction = Direction::Uni;
                    nccl_questions(&mut m, h);
                    if stat == Statistic::Avg {
                        m.questions.unit = if time_ms {
                            Unit::Milliseconds
                        } else {
                            Unit::Microseconds
                        };
                    }
                    (stat, m)
                })
                .collect();
        let mut templates = Vec::with_capacity(6);
        for (pi, test) in tests.into_iter().enumerate() {
            for (stat, m) in &stats {
                let mut m = m.clone();
                m.test = test.clone();
                templates.push((pi, *stat, m));
            }
        }
        RowCells {
            templates,
            validation: h.validation,
            time_unit: if time_ms { ("ms", 1e-3) } else { ("us", 1e-6) },
        }
    }

    /// One row's six cells. A bandwidth or a time that is not a number
    /// loses that cell (a problem at the row's line), not the row.
    fn row(&self, r: &Row<'_>, out: &mut Parsed) -> Vec<Measurement> {
        let mut cells = Vec::with_capacity(6);
        for (pi, off) in [(0usize, 0usize), (1, 4)] {
            let (time, alg, bus, wrong) = (
                &r.vals[off],
                &r.vals[off + 1],
                &r.vals[off + 2],
                &r.vals[off + 3],
            );
            let verification = verification(wrong, r.dtype, self.validation);
            let mk = |stat: Statistic| {
                let mut m = self
                    .templates
                    .iter()
                    .find(|t| t.0 == pi && t.1 == stat)
                    .map(|t| t.2.clone())
                    .expect("a template per statistic");
                m.source = Source::line(r.line);
                m.size_bytes = Some(r.size);
                m.verification = verification.clone();
                m
            };
            for (stat, v) in [(Statistic::Algbw, alg), (Statistic::Busbw, bus)] {
                let Some(value) = out.row(
                    "nccl-tests",
                    parse_number(v).ok_or_else(|| {
                        ParseError::new(r.line, format!("a bandwidth in GB/s, found `{v}`"))
                    }),
                ) else {
                    continue;
                };
                let mut m = mk(stat);
                m.bandwidth_bytes_per_s = Some(value * GB);
                m.as_printed = crate::evidence::printed(v, "GB/s");
                cells.push(m);
            }
            let (unit, seconds) = self.time_unit;
            let Some(t) = out.row(
                "nccl-tests",
                parse_number(time).ok_or_else(|| {
                    ParseError::new(r.line, format!("a time in {unit}, found `{time}`"))
                }),
            ) else {
                continue;
            };
            let mut m = mk(Statistic::Avg);
            m.latency_s = Some(t * seconds);
            m.as_printed = crate::evidence::printed(time, unit);
            cells.push(m);
        }
        cells
    }
}

/// What the `#wrong` column says about one half of a row.
fn verification(wrong: &str, dtype: &str, validation: Option<bool>) -> Verification {
    match (wrong.parse::<u64>(), validation) {
        (Ok(w), _) => Verification::Checked { errors: w },
        (Err(_), Some(false)) => Verification::NotVerified,
        (Err(_), _) if wrong == "N/A" => Verification::NotVerified,
        // Old format: the largest deviation from the expected values; one
        // clearly over the tool's tolerance is a wrong result.
        (Err(_), _) => match over_tolerance(wrong, dtype) {
            Some(true) => Verification::Failed,
            Some(false) => Verification::Checked { errors: 0 },
            None => Verification::Unknown,
        },
    }
}

/// Tool errors for out-of-bounds values and for rows with wrong elements.
fn report_wrong_values(oob: Option<&(usize, String)>, rows: &[Row<'_>], out: &mut Parsed) {
    if let Some((n, oob)) = oob
        && !oob.ends_with("OK")
    {
        out.tool_error(
            *n,
            format!("nccl-tests reported out-of-bounds values: {oob}"),
        );
    }
    for r in rows {
        for (off, half) in [(3usize, "out-of-place"), (7, "in-place")] {
            let v = r.vals[off];
            if let Ok(w) = v.parse::<u64>()
                && w > 0
            {
                out.tool_error(
                    r.line,
                    format!("{w} wrong elements at size {} (#wrong)", r.size),
                );
            } else if non_finite(v) {
                out.tool_error(
                    r.line,
                    format!(
                        "{half} largest error {v} at size {}: not a finite deviation, the data check failed",
                        r.size
                    ),
                );
            } else if v.parse::<u64>().is_err() && over_tolerance(v, r.dtype) == Some(true) {
                out.tool_error(
                    r.line,
                    format!(
                        "{half} largest error {v} at size {} is over nccl-tests' tolerance for {} ({:e}): wrong results",
                        r.size,
                        r.dtype,
                        tolerance(r.dtype).unwrap_or(0.0)
                    ),
                );
            }
        }
    }
}

/// The `Avg bus bandwidth` cell; without that line the run was cut.
fn push_avg_busbw(
    avg_busbw: Option<(usize, String)>,
    h: &Header,
    kind: Kind,
    last_line: usize,
    out: &mut Parsed,
) {
    let Some((n, v)) = avg_busbw else {
        out.cut(
            last_line,
            "the rest of the run and its `Avg bus bandwidth` line (the run did not finish, or the paste was cut)",
        );
        return;
    };
    let value = parse_number(&v).ok_or_else(|| {
        ParseError::new(
            n,
            format!("a number after `Avg bus bandwidth :`, found `{v}`"),
        )
    });
    let Some(value) = out.row("nccl-tests", value) else {
        return;
    };
    let mut m = Measurement::new(
        "nccl-tests",
        n,
        kind,
        format!("{} Avg bus bandwidth", kind.as_str()),
        Statistic::Busbw,
    );
    m.bandwidth_bytes_per_s = Some(value * GB);
    m.as_printed = crate::evidence::printed(&v, "GB/s");
    m.iterations = h.iters;
    m.warmup_iterations = h.warmup;
    m.buffers = Buffers::Device;
    nccl_questions(&mut m, h);
    m.questions.message_size = MessageSize::SweepAverage;
    out.measurements.push(m);
}

fn nccl_questions(m: &mut Measurement, h: &Header) {
    let q = &mut m.questions;
    q.unit = Unit::GigabytesPerS;
    q.direction = DirectionNote::Collective;
    if h.iters.is_some() {
        q.outstanding = Outstanding::OneCollective;
    }
    if !h.hosts.is_empty() {
        q.path = Path::Ranks {
            ranks: u32::try_from(h.ranks).unwrap_or(u32::MAX),
            nodes: u32::try_from(h.hosts.len()).unwrap_or(u32::MAX),
            gpu: h.gpu.clone().map(Text::from),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifies_collectives_by_factor() {
        assert_eq!(
            identify(Some("sum"), Some(-1), Some(1.75), 8).0,
            Kind::Allreduce
        );
        assert_eq!(identify(None, Some(0), Some(1.0), 8).0, Kind::Broadcast);
        assert_eq!(identify(Some("sum"), Some(0), Some(1.0), 8).0, Kind::Reduce);
        assert_eq!(
            identify(Some("sum"), Some(-1), Some(1.0), 8).0,
            Kind::Sendrecv
        );
        // 2 ranks: all-reduce's factor is 1, the same as send/recv.
        let (k, why) = identify(Some("sum"), Some(-1), Some(1.0), 2);
        assert_eq!(k, Kind::Collective);
        assert!(why.unwrap().contains("allreduce or sendrecv"));
        assert_eq!(identify(None, None, Some(0.875), 8).0, Kind::Collective);
    }

    #[test]
    fn strips_mpi_prefixes() {
        assert_eq!(strip_mpi_prefix("[1,0]<stdout>:#  Rank 0"), "#  Rank 0");
        assert_eq!(strip_mpi_prefix("[host:1] help"), "[host:1] help");
    }
}
