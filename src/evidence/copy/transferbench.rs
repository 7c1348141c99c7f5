//! `TransferBench`: CSV, pipe-delimited and all-to-all summary outputs.

use super::*;
#[allow(unused_imports)]
use crate::evidence::SplitWords;

pub fn looks_like_transferbench(text: &str, _lines: &[&str]) -> bool {
    has!(text, "TransferBench v")
        || super::transferbench_presets::is_scaling(text)
        || super::transferbench_presets::is_p2p(text)
        || (has!(text, "Test 1:") && has!(text, "Aggregate (CPU)"))
        || (has!(text, "Summary: [") && has!(text, "bytes per Transfer]"))
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

/// Environment values that answer questions.
#[derive(Default)]
struct Settings {
    warmups: Option<u64>,
    iterations: Option<u64>,
    validate: Option<bool>,
}

impl Settings {
    /// `NUM_WARMUPS`, `NUM_ITERATIONS` and `ALWAYS_VALIDATE` lines.
    fn read(&mut self, key: &str, fields: &[&str]) {
        match key {
            "NUM_WARMUPS" => self.warmups = fields.get(1).and_then(|v| v.parse().ok()),
            "NUM_ITERATIONS" => self.iterations = fields.get(1).and_then(|v| v.parse().ok()),
            "ALWAYS_VALIDATE" => self.validate = fields.get(1).map(|v| *v != "0"),
            _ => {}
        }
    }
}

/// Parses TransferBench: the CSV-ish output (`OUTPUT_TO_CSV=1`), the
/// pipe-delimited `SHOW_ITERATIONS` output, and the all-to-all summary matrix.
pub fn parse_transferbench(text: &str) -> Result<Parsed, ParseError> {
    // The `scaling` and `p2p` presets print tables of their own.
    if super::transferbench_presets::is_scaling(text) {
        return Ok(super::transferbench_presets::parse_scaling(text));
    }
    if super::transferbench_presets::is_p2p(text) {
        return Ok(super::transferbench_presets::parse_p2p(text));
    }
    let lines: Vec<(usize, &str)> = crate::evidence::numbered_vec(text);
    let mut out = Parsed::default();
    let mut settings = Settings::default();
    // The last transfer's cell: its iteration rows follow it.
    let mut current: Option<Measurement> = None;
    let mut a2a_bytes: Option<u64> = None;
    let mut i = 0;
    // One buffer for every line's fields (not a Vec a line).
    let mut fields: Vec<&str> = Vec::new();
    while i < lines.len() {
        let (n, l) = lines[i];
        let t = crate::evidence::trim(l);
        let sep = if crate::read::find_byte(b'|', t.as_bytes()).is_some() {
            b'|'
        } else {
            b','
        };
        split_trimmed(t, sep, &mut fields);
        let key = fields.first().copied().unwrap_or("");
        settings.read(key, &fields);
        if let Some(rest) = t.strip_prefix("Summary: [") {
            a2a_bytes = rest.words().next().and_then(|v| v.parse().ok());
            // The summary first: the banner and settings above it (warm-up,
            // iterations, validation) were cut.
            if lines[..i].iter().all(|(_, l)| l.trim().is_empty()) {
                out.truncated(
                    n,
                    format!("cut before line {n}: TransferBench's banner and settings (NUM_WARMUPS, NUM_ITERATIONS) not in the transcript"),
                );
            }
        }
        if key.starts_with("Transfer ") && fields.len() >= 4 {
            // A transfer row that cannot be read is a problem at its line;
            // its iteration rows are not given to the transfer before it.
            let m = out.row("TransferBench", transfer_cell(n, key, &fields, &settings));
            if let Some(prev) = current.take() {
                out.measurements.push(prev);
            }
            current = m;
        } else if key.starts_with("Iter ") {
            // Per-iteration rows: kept as Single cells of the transfer above.
            if let Some(base) = &current
                && let Some(m) = iteration_cell(n, key, &fields, base)
            {
                out.measurements.push(m);
            }
        } else if t.starts_with("SRC\\DST") {
            let (cells, next) = read_a2a(&lines, i, a2a_bytes, &mut out);
            out.measurements.extend(cells);
            i = next;
            continue;
        }
        i += 1;
    }
    if let Some(m) = current {
        out.measurements.push(m);
    }
    // The banner and settings, and no test after them.
    if out.measurements.is_empty()
        && out.issues.is_empty()
        && let Some((n, _)) = lines.iter().rev().find(|(_, l)| !l.trim().is_empty())
    {
        out.cut(*n, "the tests after TransferBench's settings");
    }
    Ok(out)
}

/// `t.split(sep).map(str::trim)` into `out` (cleared first): each
/// separator found by memchr, each piece trimmed by a byte look.
fn split_trimmed<'a>(t: &'a str, sep: u8, out: &mut Vec<&'a str>) {
    out.clear();
    let mut from = 0;
    for at in crate::read::byte_indices(sep, t.as_bytes()) {
        out.push(crate::evidence::trim(&t[from..at]));
        from = at + 1;
    }
    out.push(crate::evidence::trim(&t[from..]));
}

/// One transfer row, `Transfer 0, 0.535 GB/s, 7.840 ms, 4194304 bytes,
/// P0 -> D0:1 -> G0` (or `|`-separated): its cell.
fn transfer_cell(
    n: usize,
    key: &str,
    fields: &[&str],
    settings: &Settings,
) -> Result<Measurement, ParseError> {
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
    m.as_printed = crate::evidence::printed(fields[1].trim_end_matches("GB/s").trim(), "GB/s");
    m.buffers = if sb == db { sb } else { Buffers::Mixed };
    m.copy_engine = if exe.starts_with('D') {
        CopyEngine::Ce
    } else if exe.starts_with('G') {
        CopyEngine::Sm
    } else {
        CopyEngine::Unknown
    };
    m.iterations = settings.iterations;
    m.warmup_iterations = settings.warmups;
    m.verification = match settings.validate {
        Some(true) => Verification::Checked { errors: 0 },
        _ => Verification::Unknown,
    };
    let q = &mut m.questions;
    q.unit = Unit::GigabytesPerS;
    q.direction = DirectionNote::SourceToDestination;
    q.outstanding = Outstanding::Executor {
        executor: exe.to_string().into(),
    };
    q.path = Path::Transfer {
        route: route.to_string().into(),
    };
    Ok(m)
}

/// One `Iter N | <GB/s> | ...` row after a transfer: a Single cell of that
/// transfer, or `None` when the bandwidth is not a number.
fn iteration_cell(n: usize, key: &str, fields: &[&str], base: &Measurement) -> Option<Measurement> {
    let bw = fields
        .get(1)
        .and_then(|v| v.strip_suffix("GB/s"))
        .and_then(|v| parse_number(v.trim()))?;
    let mut m = base.clone();
    m.source = crate::evidence::Source::line(n);
    m.statistic = Statistic::Single;
    m.test = format!("{} {key}", base.test).into();
    m.bandwidth_bytes_per_s = Some(bw * GB);
    m.as_printed = crate::evidence::printed(fields[1].trim_end_matches("GB/s").trim(), "GB/s");
    Some(m)
}

fn read_a2a(
    lines: &[(usize, &str)],
    start: usize,
    bytes: Option<u64>,
    out: &mut Parsed,
) -> (Vec<Measurement>, usize) {
    let (hn, head) = lines[start];
    // `SRC\DST  GPU 00  GPU 01 ... STotal Actual`
    let ncols = head.matches("GPU ").count();
    if ncols == 0 {
        out.bad_row(
            hn,
            "TransferBench: expected `GPU NN` column names; the matrix under it is not read",
        );
        return (Vec::new(), start + 1);
    }
    let mut cells = Vec::new();
    let mut i = start + 1;
    let mut rows = 0;
    while let Some((n, l)) = lines.get(i) {
        let mut toks: Vec<&str> = l.words().collect();
        if toks.len() < 2 || toks[0] != "GPU" {
            break;
        }
        i += 1;
        rows += 1;
        // A row that cannot be read is a problem at its line; the rows
        // after it are read.
        let Ok(row) = toks[1].parse::<u32>() else {
            out.bad_row(*n, "TransferBench: expected a GPU number after `GPU`");
            continue;
        };
        // Two values glued: the token stands for both columns.
        // (STotal and Actual follow the matrix, so the count alone would
        // not show the loss.)
        if let Some(g) = toks
            .iter()
            .skip(2)
            .position(|x| crate::evidence::is_glued(x))
        {
            toks.insert(g + 2, toks[g + 2]);
        }
        let vals = &toks[2..];
        if vals.len() < ncols {
            out.bad_row(
                *n,
                format!(
                    "TransferBench: expected {ncols} values after GPU {row}, found {}",
                    vals.len()
                ),
            );
            continue;
        }
        for (c, v) in vals[..ncols].iter().enumerate() {
            if *v == "N/A" {
                continue;
            }
            let value = parse_number(v)
                .ok_or_else(|| ParseError::new(*n, format!("a number or N/A, found `{v}`")));
            let Some(value) = out.row("TransferBench", value) else {
                continue;
            };
            let mut m = Measurement::new("TransferBench", *n, Kind::P2pCopy, "a2a", Statistic::Avg);
            m.src = Some(format!("GPU{row}").into());
            m.dst = Some(format!("GPU{c}").into());
            m.size_bytes = bytes;
            m.bandwidth_bytes_per_s = Some(value * GB);
            m.as_printed = crate::evidence::printed(v, "GB/s");
            m.buffers = Buffers::Device;
            m.copy_engine = CopyEngine::Sm;
            let q = &mut m.questions;
            q.unit = Unit::GigabytesPerS;
            q.direction = DirectionNote::AllPairsAtOnce;
            q.path = Path::GpuToGpu { access: None };
            q.context = Context::AllPairsAtOnce;
            cells.push(m);
        }
    }
    if rows < ncols {
        out.cut(
            lines.get(i.saturating_sub(1)).map_or(hn, |x| x.0),
            format!(
                "rows GPU {rows:02}..GPU {:02} of the all-to-all matrix",
                ncols - 1
            ),
        );
    }
    (cells, i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_trimmed_is_split_then_trim() {
        let mut got = Vec::new();
        for t in [
            "",
            ",",
            "a",
            " Transfer 0 , 0.535 GB/s,7.840 ms ,",
            "\u{a0}x\u{3000}|\ty | z\r",
            "||",
            "\u{e9} , \u{e9}",
        ] {
            for sep in [b',', b'|'] {
                split_trimmed(t, sep, &mut got);
                let want: Vec<&str> = t.split(char::from(sep)).map(str::trim).collect();
                assert_eq!(got, want, "{t:?}");
            }
        }
    }

    #[test]
    fn transferbench_memory_names() {
        assert_eq!(tb_mem("G0"), ("GPU0".into(), Buffers::Device));
        assert_eq!(tb_mem("P0"), ("CPU0".into(), Buffers::HostPinned));
        assert_eq!(tb_mem("G1").0, "GPU1");
    }
}
