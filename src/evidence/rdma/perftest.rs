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

impl<'a> PerftestRun<'a> {
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

    /// Reads a line of the run's setup (its GPU, how the buffer was
    /// registered, its command, a `key : value` field): whether it was one.
    fn read_setup(&mut self, t: &str, l: &'a str, dmabuf: bool, lit: &Literals) -> bool {
        if let Some(rest) = t
            .strip_prefix("[pid = ")
            .and_then(|r| r.split_once("device name = ["))
        {
            self.gpu = Some(rest.1.trim_end_matches(']').to_string());
            self.gpu_kind = Some("CUDA");
        } else if t == "initializing CUDA" {
            self.gpu_kind = Some("CUDA");
        } else if t == "CUDA device integrated: 1" {
            self.integrated_gpu = true;
        } else if t.starts_with("using DMA-BUF") || dmabuf {
            self.registration = GpuRegistration::DmaBuf;
        } else if t.starts_with("allocated GPU buffer of a") && t.ends_with("CUDA_MEM_DEVICE") {
            // perftest prints `using DMA-BUF ...` before this line when it
            // exports one; without it the buffer goes to `ibv_reg_mr`.
            if self.registration == GpuRegistration::NotStated && !self.integrated_gpu {
                self.registration = GpuRegistration::PeerMemory;
            }
        } else if let Some(gpu) = lit.command.then(|| command_line(t)).flatten() {
            self.command_gpu = Some(gpu.0);
            if gpu.1 {
                self.registration = GpuRegistration::DmaBuf;
            }
        } else if t.starts_with("initializing ROCm") || (lit.rocm && has!(t, "ROCm device")) {
            self.gpu_kind = Some("ROCm");
        } else if is_field_line(t) {
            if !(t.starts_with('#') || (lit.address && has!(t, "address:"))) {
                self.fields.extend(header_pairs(l));
            }
        } else {
            return false;
        }
        true
    }

    /// The run a title line `t` starts, keeping what the setup lines
    /// before it said of the GPU (perftest prints them before its title).
    fn titled(&mut self, t: &str, server: bool) -> PerftestRun<'a> {
        PerftestRun {
            title: Some(t.to_string()),
            server,
            no_peak: self.no_peak,
            gpu: self.gpu.take(),
            gpu_kind: self.gpu_kind.take(),
            registration: std::mem::take(&mut self.registration),
            integrated_gpu: self.integrated_gpu,
            command_gpu: self.command_gpu.take(),
            ..PerftestRun::default()
        }
    }
}

/// Whether the text holds literals some lines are searched for: those
/// the text lacks are not searched for line by line.
struct Literals {
    rocm: bool,
    address: bool,
    command: bool,
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
    let lit = Literals {
        rocm: has!(text, "ROCm device"),
        address: has!(text, "address:"),
        command: has!(text, "ib_"),
    };
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
            run = run.titled(t, waiting);
            waiting = false;
        } else if run.read_setup(t, l, dmabuf, &lit) {
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

mod table;

use table::{is_data_row, perftest_table, table_head};
#[cfg(test)]
use table::{perftest_columns, two_decimal_values, unglued};

#[cfg(test)]
mod tests;
