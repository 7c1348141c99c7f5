//! perftest `ib_*_bw` and `ib_*_lat` transcripts.

use super::*;
#[allow(unused_imports)]
use crate::evidence::SplitWords;
use crate::evidence::answers::{
    Context, DirectionNote, GpuRegistration, Outstanding, Path, RdmaPath, Side, Unit,
};
use std::borrow::Cow;

pub fn looks_like_perftest(text: &str, lines: &[&str]) -> bool {
    // A `#bytes` line with a unit or a title beside `Connection type`: no
    // line pass without. (Long literals first: the block's grams rule them
    // out without a search.)
    (has!(text, "Connection type")
        || (has!(text, "BW average[") || has!(text, "t_min[usec]")) && has!(text, "#bytes"))
        && crate::evidence::numbered(lines).any(|(_, l)| {
            let t = l.trim();
            (t.starts_with("#bytes") && (t.contains("BW average[") || t.contains("t_min[usec]")))
                || ((t.ends_with("BW Test") || t.ends_with("Latency Test"))
                    && has!(text, "Connection type"))
        })
}

/// Added to a `Failed status 10` error right after 64 KiB. perftest sizes
/// its buffers for `-s` (`DEF_SIZE_BW`, 65536, unless given) or, with
/// `-a`, for `MAX_SIZE` (8 MiB) (`perftest_parameters.c`: `if
/// (user_param->test_method == RUN_ALL) user_param->size = MAX_SIZE;`,
/// then `alloc_ctx`'s `BUFF_SIZE(ctx->size, ...)`); status 10 is
/// `IBV_WC_REM_ACCESS_ERR` in libibverbs' `enum ibv_wc_status`.
const STATUS_10_AFTER_DEFAULT: &str = "; status 10 is a remote access error, right after 64 KiB \
    (perftest's default size): with -a on the client only, the server's buffer is sized for \
    the default message; start the server with -a too";

/// A pasted perftest command line (`root@host:/# ib_write_bw -a ...`):
/// whether it asks for GPU buffers, and for DMA-BUF registration.
fn command_line(t: &str) -> Option<(bool, bool)> {
    // After a prompt (`[root@h ~]#`, `$`) or none, and `sudo` with its
    // flags: prose naming the program (`I ran ib_write_bw`) is no command.
    // The program's name is a piece of the line: a line without `ib_`
    // (nearly every line this is asked of) is none, without splitting it.
    if !has!(t, "ib_") {
        return None;
    }
    let cmd = crate::evidence::scan::prompt_command(t.trim()).unwrap_or(t);
    let toks: Vec<&str> = cmd.words().collect();
    let at = match toks.first() {
        Some(&"sudo") => 1 + toks[1..].iter().take_while(|w| w.starts_with('-')).count(),
        _ => 0,
    };
    let name = toks.get(at)?.rsplit('/').next()?;
    let program = name.starts_with("ib_")
        && (name.ends_with("_bw") || name.ends_with("_lat"))
        && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
    if !program {
        return None;
    }
    let args = &toks[at + 1..];
    const GPU: [&str; 6] = ["cuda", "rocm", "neuron", "hl", "mlu", "opencl"];
    let gpu = args.iter().any(|a| {
        a.strip_prefix("--use_")
            .is_some_and(|r| GPU.iter().any(|g| r.starts_with(g)))
    });
    let dmabuf = args
        .iter()
        .any(|a| a.starts_with("--use_") && a.contains("dmabuf"));
    Some((gpu, dmabuf))
}

/// What the header block of one perftest run said.
#[derive(Debug, Default, Clone)]
struct PerftestRun<'a> {
    title: Option<String>,
    server: bool,
    /// `key : value` pairs, borrowed from the text (a key broken over two
    /// pieces is joined, so owned).
    fields: Vec<(Cow<'a, str>, Cow<'a, str>)>,
    gpu: Option<String>,
    gpu_kind: Option<&'static str>,
    cpu_freq_warning: bool,
    no_peak: bool,
    /// How the GPU buffer was registered (DMA-BUF or peer memory).
    registration: GpuRegistration,
    /// `CUDA device integrated: 1`: the "GPU buffer" is host memory
    /// (`cuMemAllocHost`), registered like any other.
    integrated_gpu: bool,
    /// The run's command line, when pasted: whether it asked for GPU
    /// buffers (`--use_cuda`, `--use_rocm`...).
    command_gpu: Option<bool>,
}

impl PerftestRun<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_ref())
    }

    fn kind(&self) -> Kind {
        let t = self.title.as_deref().unwrap_or("");
        if t.starts_with("RDMA_Write") {
            Kind::RdmaWrite
        } else if t.starts_with("RDMA_Read") {
            Kind::RdmaRead
        } else if t.starts_with("Send") {
            Kind::RdmaSend
        } else if t.starts_with("Atomic") {
            Kind::RdmaAtomic
        } else {
            Kind::Rdma
        }
    }
}

/// Splits ` Dual-port       : OFF\t\tDevice         : mlx5_0` into pairs.
/// Whether `t` holds a `key : value` field (` : `, `\t: ` or `\t : `): a
/// `:` with a blank before it and a space after, found by `:`s alone.
fn is_field_line(t: &str) -> bool {
    let b = t.as_bytes();
    crate::read::byte_indices(b':', b)
        .any(|i| i > 0 && matches!(b[i - 1], b' ' | b'\t') && b.get(i + 1) == Some(&b' '))
}

fn header_pairs<'a>(l: &'a str) -> Vec<(Cow<'a, str>, Cow<'a, str>)> {
    let mut out = Vec::new();
    let mut key: Option<Cow<'a, str>> = None;
    // Pieces, keys and values are borrowed from the line; only a key
    // broken over two pieces is joined into a String.
    let mut piece = |p: &'a str| {
        let p = crate::evidence::trim(p);
        if p.is_empty() {
            return;
        }
        if let Some(v) = p.strip_prefix(':') {
            if let Some(k) = key.take() {
                out.push((k, Cow::Borrowed(crate::evidence::trim(v))));
            }
        } else if let Some((k, v)) = split_key(p) {
            let (k, v) = (crate::evidence::trim(k), crate::evidence::trim(v));
            out.push((Cow::Borrowed(k), Cow::Borrowed(v)));
        } else {
            match &mut key {
                Some(k) => {
                    let k = k.to_mut();
                    k.push(' ');
                    k.push_str(p);
                }
                None => key = Some(Cow::Borrowed(p)),
            }
        }
    };
    // `l.split('\t')`, each tab found by memchr (no char searcher).
    let mut from = 0;
    let ends = crate::read::byte_indices(b'\t', l.as_bytes()).chain([l.len()]);
    for end in ends {
        let chunk = &l[from..end];
        from = end + 1;
        // `chunk.split("  ")` (two spaces, matched left to right without
        // overlap), without building a substring searcher per chunk.
        let b = chunk.as_bytes();
        let (mut start, mut i) = (0, 0);
        while i + 1 < b.len() {
            if b[i] == b' ' && b[i + 1] == b' ' {
                // (An empty piece, between two runs of spaces, says nothing.)
                if start < i {
                    piece(&chunk[start..i]);
                }
                i += 2;
                start = i;
            } else {
                i += 1;
            }
        }
        piece(&chunk[start..]);
    }
    out
}

/// `p.split_once(" : ").or_else(|| p.split_once(" :"))` in one pass over
/// the colons (memchr), without building two substring searchers a piece.
fn split_key(p: &str) -> Option<(&str, &str)> {
    let b = p.as_bytes();
    let mut first = None;
    for i in crate::read::byte_indices(b':', b) {
        if i == 0 || b[i - 1] != b' ' {
            continue;
        }
        if b.get(i + 1) == Some(&b' ') {
            return Some((&p[..i - 1], &p[i + 2..]));
        }
        first.get_or_insert(i);
    }
    first.map(|i| (&p[..i - 1], &p[i + 1..]))
}

/// perftest stopped mid-run (`Completion with error at client`, then
/// `Failed status 10: ...` and `Failed to complete run_iter_bw ...`): one
/// failure, said with its detail lines (up to three, from `after`), and
/// what status 10 after the default 64 KiB size (`last_size`) means.
fn completion_error(t: &str, after: &[(usize, &str)], last_size: Option<u64>) -> String {
    let detail: Vec<&str> = after
        .iter()
        .take(3)
        .map(|(_, l)| l.trim())
        .filter(|l| l.starts_with("Failed"))
        .collect();
    let mut message = format!("perftest: {t}");
    for d in &detail {
        message.push_str("; ");
        message.push_str(d);
    }
    if detail.iter().any(|d| d.starts_with("Failed status 10:")) && last_size == Some(65536) {
        message.push_str(STATUS_10_AFTER_DEFAULT);
    }
    message
}

/// Parses perftest bandwidth and latency transcripts: one or more runs
/// (server and client output pasted together), each a header block and a
/// results table. Bandwidth units are read from the table header: `MB/sec`
/// and `MiB/sec` are 2^20 bytes, `Gb/sec` is 1e9 bits (see
/// [`super::measurement::MIB`] and [`GBIT_BYTES`] for the perftest source
/// lines).
pub fn parse_perftest(text: &str) -> Result<Parsed, ParseError> {
    // Sized once: one slot per line (a newline count), not grown.
    let mut lines: Vec<(usize, &str)> =
        Vec::with_capacity(crate::read::byte_indices(b'\n', text.as_bytes()).count() + 1);
    lines.extend(numbered_lines(text));
    let mut out = Parsed::default();
    let mut run = PerftestRun::default();
    let mut waiting = false;
    let mut i = 0;
    let mut tables = 0;
    // The title line of a run whose table has not been read yet.
    let mut open_run: Option<usize> = None;
    // The first cell of the last table read: a stopped run's own rows.
    let mut first_cell = 0;
    // Two runs written into one log line by line (a loopback's server and
    // client): the older run, titled before the newer one and not yet given
    // its table ...
    let mut older_run: Option<PerftestRun<'_>> = None;
    // ... and a results header with its rows not under it (another header
    // follows at once): its rows are the block of rows that comes later
    // without a header of its own.
    let mut rows_later: Option<(usize, PerftestRun<'_>)> = None;
    // Literals the text lacks are not searched for line by line.
    let any_wait = has!(text, "Waiting for client to connect");
    let any_no_peak = has!(text, "BW peak won't be measured");
    let any_dmabuf = has!(text, "ibv_reg_dmabuf_mr");
    let any_rocm = has!(text, "ROCm device");
    let any_address = has!(text, "address:");
    let any_command = has!(text, "ib_");
    while i < lines.len() {
        let (_, l) = lines[i];
        let t = crate::evidence::trim(l);
        // Each literal searched for once per line, for the context test
        // and the branches below alike.
        let wait = any_wait && has!(t, "Waiting for client to connect");
        let no_peak = any_no_peak && has!(t, "BW peak won't be measured");
        let dmabuf = any_dmabuf && has!(t, "ibv_reg_dmabuf_mr");
        if super::is_perftest_context(t, wait, no_peak, dmabuf) {
            out.context_lines.push(lines[i].0);
        }
        if wait {
            waiting = true;
        } else if t.starts_with("Completion with error") {
            let last_size = out.measurements[first_cell..]
                .last()
                .and_then(|m| m.size_bytes);
            let message = completion_error(t, &lines[i + 1..], last_size);
            out.tool_error(lines[i].0, message);
        } else if no_peak {
            run.no_peak = true;
        } else if t.ends_with("BW Test") || t.ends_with("Latency Test") {
            // A title while another run waits for its table: both print
            // into the paste at once.
            older_run = open_run.map(|_| run.clone());
            open_run = Some(lines[i].0);
            run = PerftestRun {
                title: Some(t.to_string()),
                server: waiting,
                no_peak: run.no_peak,
                gpu: run.gpu.take(),
                gpu_kind: run.gpu_kind.take(),
                registration: std::mem::take(&mut run.registration),
                integrated_gpu: run.integrated_gpu,
                command_gpu: run.command_gpu.take(),
                ..PerftestRun::default()
            };
            waiting = false;
        } else if let Some(rest) = t
            .strip_prefix("[pid = ")
            .and_then(|r| r.split_once("device name = ["))
        {
            run.gpu = Some(rest.1.trim_end_matches(']').to_string());
            run.gpu_kind = Some("CUDA");
        } else if t == "initializing CUDA" {
            run.gpu_kind = Some("CUDA");
        } else if t == "CUDA device integrated: 1" {
            run.integrated_gpu = true;
        } else if t.starts_with("using DMA-BUF") || dmabuf {
            run.registration = GpuRegistration::DmaBuf;
        } else if t.starts_with("allocated GPU buffer of a") && t.ends_with("CUDA_MEM_DEVICE") {
            // perftest prints `using DMA-BUF ...` before this line when it
            // exports one; without it the buffer goes to `ibv_reg_mr`.
            if run.registration == GpuRegistration::NotStated && !run.integrated_gpu {
                run.registration = GpuRegistration::PeerMemory;
            }
        } else if let Some(gpu) = any_command.then(|| command_line(t)).flatten() {
            run.command_gpu = Some(gpu.0);
            if gpu.1 {
                run.registration = GpuRegistration::DmaBuf;
            }
        } else if t.starts_with("initializing ROCm") || (any_rocm && has!(t, "ROCm device")) {
            run.gpu_kind = Some("ROCm");
        } else if is_field_line(t) {
            if !(t.starts_with('#') || (any_address && has!(t, "address:"))) {
                run.fields.extend(header_pairs(l));
            }
        } else if t.starts_with("#bytes") {
            tables += 1;
            open_run = None;
            first_cell = out.measurements.len();
            let next_line = lines[i + 1..].iter().find(|(_, l)| !l.trim().is_empty());
            if rows_later.is_none()
                && next_line.is_some_and(|(_, l)| crate::evidence::trim(l).starts_with("#bytes"))
            {
                // Interleaved: this header's rows come after the next
                // table's; this one goes with the older run when two
                // were titled.
                table_head(lines[i].0, l)?;
                let mine = older_run.take().unwrap_or_else(|| run.clone());
                rows_later = Some((i, mine));
                i += 1;
                continue;
            }
            older_run = None;
            let next = perftest_table(&lines, i, i + 1, &run, &mut out)?;
            i = next;
            run.no_peak = false;
            run.registration = GpuRegistration::NotStated;
            run.integrated_gpu = false;
            run.command_gpu = None;
            continue;
        } else if rows_later.is_some() && is_data_row(t) {
            // The interleaved header's rows, below the other run's table.
            if let Some((head_at, mine)) = rows_later.take() {
                i = perftest_table(&lines, head_at, i, &mine, &mut out)?;
                continue;
            }
        }
        i += 1;
    }
    if let Some((head_at, _)) = rows_later {
        out.truncated(lines[head_at].0, "the results table has no rows");
    }
    // A later run (the client after the server) that stops before its
    // table.
    if tables > 0
        && let Some(at) = open_run
        && let Some((n, _)) = lines.iter().rev().find(|(_, l)| !l.trim().is_empty())
    {
        out.cut(
            *n,
            format!("the results table of the run titled at line {at}"),
        );
    }
    if tables == 0 {
        let last = lines.last().map_or(1, |x| x.0);
        out.truncated(
            last,
            "a perftest run with no results table (cut before the results)",
        );
    }
    Ok(out)
}

/// The header line of a results table.
#[derive(Clone)]
struct TableHead {
    /// Column names, units stripped.
    cols: Vec<String>,
    /// A latency table (`t_min[usec]`...) rather than a bandwidth one.
    latency: bool,
    /// Bytes per second in one printed bandwidth unit, and that unit.
    bw_factor: Option<(f64, &'static str)>,
}

/// Reads the `#bytes ...` header line: the columns and the bandwidth unit.
fn table_head(hn: usize, head: &str) -> Result<TableHead, ParseError> {
    let cols: Vec<String> = perftest_columns(head);
    let latency = cols.iter().any(|c| c.starts_with("t_"));
    let bw_factor = if head.contains("[Gb/sec]") {
        Some((GBIT_BYTES, "Gb/sec"))
    } else if head.contains("[MB/sec]") {
        Some((MIB, "MB/sec"))
    } else if head.contains("[MiB/sec]") {
        Some((MIB, "MiB/sec"))
    } else {
        None
    };
    if !latency && bw_factor.is_none() {
        return Err(ParseError::new(
            hn,
            "a `BW average[MB/sec]`, `[MiB/sec]` or `[Gb/sec]` column, or `t_min[usec]`",
        ));
    }
    Ok(TableHead {
        cols,
        latency,
        bw_factor,
    })
}

/// Where and how a results table ended.
struct TableEnd {
    /// The position after the table's last row.
    next: usize,
    rows: usize,
    /// Ended by a dashes line or another non-row line, not by the file's end.
    closed: bool,
    /// perftest warned about the CPU frequency before or inside the table.
    cpu_warning: bool,
}

/// A results row: a size in bytes, then at least one more number.
fn is_data_row(t: &str) -> bool {
    let mut w = t.words();
    w.next().is_some_and(|x| x.parse::<u64>().is_ok())
        && w.next().is_some_and(|x| x.parse::<f64>().is_ok())
}

/// Reads the results table whose header is at `start` and whose rows
/// begin at `rows` (the line after it, unless two runs were pasted
/// interleaved); returns the position after it.
fn perftest_table(
    lines: &[(usize, &str)],
    start: usize,
    rows: usize,
    run: &PerftestRun<'_>,
    out: &mut Parsed,
) -> Result<usize, ParseError> {
    let (hn, head) = lines[start];
    let head = table_head(hn, head)?;
    // Everything a cell says that does not change from row to row.
    let title: Text = match &run.title {
        Some(t) => t.clone().into(),
        None => "perftest (header not captured)".into(),
    };
    let mut template = Measurement::new("perftest", hn, run.kind(), title, Statistic::Avg);
    perftest_cell(
        &mut template,
        run,
        head.latency,
        head.bw_factor.map(|x| x.1),
    );
    let end = read_table_rows(lines, rows, &head, &template, run, out)?;
    let i = end.next;
    if end.rows == 0 || !end.closed {
        let at = lines.get(i.saturating_sub(1)).map_or(hn, |x| x.0);
        if end.rows == 0 {
            out.truncated(at, "the results table has no rows");
        } else if i >= lines.len() {
            out.truncated(
                at,
                "the results table is not closed by a dashes line (cut short?)",
            );
        }
    }
    if end.cpu_warning {
        out.note(hn, "perftest warned that CPU frequency is not at its maximum: cycle-based timings may be skewed");
    }
    Ok(i)
}

/// Reads rows from `start` until a dashes line, a line that is not a row,
/// or the end of the transcript.
fn read_table_rows(
    lines: &[(usize, &str)],
    start: usize,
    head: &TableHead,
    template: &Measurement,
    run: &PerftestRun<'_>,
    out: &mut Parsed,
) -> Result<TableEnd, ParseError> {
    let mut end = TableEnd {
        next: start,
        rows: 0,
        closed: false,
        cpu_warning: run.cpu_freq_warning,
    };
    // Room for the rows ahead (lines that start with a digit: at least as
    // many as the rows read), so a long table's measurements are not moved
    // again at each doubling.
    let ahead = lines[end.next.min(lines.len())..]
        .iter()
        .take_while(|(_, l)| {
            let t = l.trim_start();
            t.as_bytes().first().is_some_and(u8::is_ascii_digit) || t.starts_with("Conflicting")
        })
        .count();
    out.measurements
        .reserve(ahead * head.cols.len().saturating_sub(2));
    // One buffer for every row's words (not a growing Vec per row).
    let mut toks: Vec<&str> = Vec::with_capacity(head.cols.len() + 1);
    while let Some((n, l)) = lines.get(end.next) {
        let t = crate::evidence::trim(l);
        if t.starts_with("Conflicting CPU frequency values detected") {
            end.cpu_warning = true;
            end.next += 1;
            continue;
        }
        if t.starts_with("---") {
            end.closed = true;
            break;
        }
        toks.clear();
        toks.extend(t.words());
        // Anything that is not a data row ends the table (a server's
        // "Waiting for client" banner, a blank line).
        if toks.first().is_none_or(|x| x.parse::<u64>().is_err()) {
            end.closed = true;
            break;
        }
        // A row that cannot be read (or only in part) is a problem at its
        // line; the table goes on.
        // Its cells go straight into the parse's measurements (reserved
        // above), not through a Vec a row.
        let cells = &mut out.measurements;
        let bad = table_row(*n, &toks, head, template, run, end.cpu_warning, cells);
        if let Some(e) = bad {
            out.bad_row(e.line, format!("perftest: expected {}", e.expected));
        }
        end.rows += 1;
        end.next += 1;
    }
    Ok(end)
}

/// The cells of one data row (line `n`), pushed onto `cells`: one per known
/// statistic column; returns why the row could not be read in full (a row
/// that cannot be read pushes none). A row with fewer cells than
/// columns (two values glued together: `2465.901216.65`) keeps the cells
/// left of the first one that is not a plain number; the rest are lost.
fn table_row(
    n: usize,
    toks: &[&str],
    head: &TableHead,
    template: &Measurement,
    run: &PerftestRun<'_>,
    cpu_warning: bool,
    cells: &mut Vec<Measurement>,
) -> Option<ParseError> {
    let cols = &head.cols;
    // A row whose cells cannot all be read keeps none of them.
    let at = cells.len();
    if toks.len() == cols.len() {
        let read = table_cells(n, toks, head, template, run, cpu_warning, cells);
        return read.err().inspect(|_| cells.truncate(at));
    }
    let wrong = ParseError::new(
        n,
        format!(
            "{} columns ({}), found {}",
            cols.len(),
            cols.join(" "),
            toks.len()
        ),
    );
    if toks.len() > cols.len() {
        return Some(wrong);
    }
    let plain = |t: &&&str| t.bytes().filter(|b| *b == b'.').count() <= 1;
    let k = toks.iter().take_while(|t| plain(t)).count();
    let kept = TableHead {
        cols: cols[..k].to_vec(),
        ..head.clone()
    };
    if table_cells(n, &toks[..k], &kept, template, run, cpu_warning, cells).is_err() {
        cells.truncate(at);
    }
    let lost = cols[k..].join(", ");
    let e = ParseError::new(
        n,
        format!(
            "{} columns ({}), found {}; `{}` is not one number: {lost} not read",
            cols.len(),
            cols.join(" "),
            toks.len(),
            toks.get(k).unwrap_or(&"")
        ),
    );
    Some(e)
}

/// The cells of a row whose tokens line up with `head`'s columns, pushed
/// onto `cells` (the caller drops them when this fails part-way).
fn table_cells(
    n: usize,
    toks: &[&str],
    head: &TableHead,
    template: &Measurement,
    run: &PerftestRun<'_>,
    cpu_warning: bool,
    cells: &mut Vec<Measurement>,
) -> Result<(), ParseError> {
    let cols = &head.cols;
    if toks.len() < 2 {
        return Err(ParseError::new(n, "a byte count and an iteration count"));
    }
    let size: u64 = toks[0]
        .parse()
        .map_err(|_| ParseError::new(n, format!("a byte count, found `{}`", toks[0])))?;
    let iters: u64 = toks[1]
        .parse()
        .map_err(|_| ParseError::new(n, format!("an iteration count, found `{}`", toks[1])))?;
    for (c, v) in cols.iter().zip(toks).skip(2) {
        let value = parse_number(v)
            .ok_or_else(|| ParseError::new(n, format!("a number in `{c}`, found `{v}`")))?;
        let (stat, is_bw) = match c.as_str() {
            "BW peak" => (Statistic::Peak, true),
            "BW average" => (Statistic::Avg, true),
            "t_min" => (Statistic::Min, false),
            "t_max" => (Statistic::Max, false),
            "t_typical" => (Statistic::Typical, false),
            "t_avg" => (Statistic::Avg, false),
            "t_stdev" => (Statistic::Stdev, false),
            "99% percentile" => (Statistic::P99, false),
            "99.9% percentile" => (Statistic::P999, false),
            _ => continue,
        };
        // A peak of 0.00 is not a measurement: the run said it would not
        // measure peak, or this is a server's side.
        if stat == Statistic::Peak && (run.no_peak || value == 0.0) {
            continue;
        }
        let mut m = template.clone();
        m.source = Source::line(n);
        m.statistic = stat;
        m.size_bytes = Some(size);
        m.iterations = Some(iters);
        if cpu_warning {
            m.questions.context = Context::CpuFrequencyWarning;
        }
        if is_bw {
            // A latency table with a `BW` column in a unit we do not know
            // (`BW average[usec]`): that cell is not read, the row is.
            let Some((f, unit)) = head.bw_factor else {
                continue;
            };
            m.bandwidth_bytes_per_s = Some(value * f);
            m.as_printed = crate::evidence::printed(v, unit);
        } else {
            m.latency_s = Some(value * 1e-6);
            m.as_printed = crate::evidence::printed(v, "usec");
        }
        cells.push(m);
    }
    Ok(())
}

/// Column names of a perftest table header, units stripped:
/// `#bytes #iterations BW peak[MB/sec] ...` -> `#bytes`, `#iterations`, `BW peak`...
fn perftest_columns(head: &str) -> Vec<String> {
    let mut cols = Vec::new();
    let mut cur = String::new();
    for tok in head.words() {
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(tok);
        if tok.starts_with('#') || tok.ends_with(']') {
            let name = cur.split('[').next().unwrap_or("").trim().to_string();
            cols.push(name);
            cur.clear();
        }
    }
    cols
}

fn perftest_cell(m: &mut Measurement, run: &PerftestRun<'_>, latency: bool, unit: Option<&str>) {
    let dev = run.get("Device").map(str::to_string);
    m.src = dev.clone().map(Text::from);
    m.direction = if run.title.as_deref().unwrap_or("").contains("Bidirectional") {
        Direction::Bi
    } else {
        Direction::Uni
    };
    m.qps = run.get("Number of qps").and_then(|v| v.parse().ok());
    m.queue_depth = run.get("TX depth").and_then(|v| v.parse().ok());
    m.buffers = match (run.gpu_kind, run.command_gpu) {
        // A registration (DMA-BUF, peer memory) is said only of GPU memory.
        _ if run.registration != GpuRegistration::NotStated => Buffers::Device,
        (Some(_), _) | (None, Some(true)) => Buffers::Device,
        // No GPU memory asked for on the pasted command line: host memory.
        (None, Some(false)) => Buffers::Host,
        (None, None) => Buffers::Unknown,
    };
    m.p2p = P2p::Unknown;
    m.copy_engine = CopyEngine::Unknown;
    let q = &mut m.questions;
    q.unit = match (latency, unit) {
        (true, _) => Unit::Microseconds,
        (false, Some("Gb/sec")) => Unit::GigabitsPerS,
        (false, Some(u)) => Unit::MebibytesPerS {
            printed: u.to_string().into(),
        },
        _ => Unit::NotStated,
    };
    q.direction = match latency {
        true if matches!(m.kind, Kind::RdmaRead | Kind::RdmaAtomic) => DirectionNote::RoundTrip,
        true => DirectionNote::HalfRoundTrip,
        false => DirectionNote::Plain,
    };
    q.outstanding = Outstanding::QueuePairs;
    q.path = Path::Rdma(Box::new(RdmaPath {
        side: if run.server {
            Side::Server
        } else {
            Side::Client
        },
        device: dev.map(Text::from),
        link_type: run.get("Link type").map(|v| Text::from(v.to_string())),
        mtu: run.get("Mtu").map(|v| Text::from(v.to_string())),
        gpu_memory: run.gpu_kind.map(Text::from),
        gpu: run.gpu.clone().map(Text::from),
        registration: run.registration,
    }));
}

/// `RDMA_Write BW Test`, `Send Latency Test`, `Atomic FETCH_AND_ADD ...`.
pub(crate) fn is_title(t: &str) -> bool {
    (t.ends_with(" BW Test") || t.ends_with(" Latency Test"))
        && (t.starts_with("RDMA_") || t.starts_with("Send") || t.starts_with("Atomic"))
}

#[cfg(test)]
mod tests;
