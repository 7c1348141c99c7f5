//! MPI point-to-point benchmarks: the OSU micro-benchmarks `osu_bw`,
//! `osu_bibw` and `osu_latency` (v5 to v7 headers, host or device buffers,
//! the `Validation` column, several runs in one file with shell lines in
//! between).
//!
//! OSU prints MB/s with MB = 1e6 bytes (`osu_bw.c` divides the byte count by
//! 1e6) and latency in microseconds, one way (half the ping-pong).

use super::measurement::{
    Buffers, CopyEngine, Direction, Kind, MB_DECIMAL, Measurement, NOT_STATED, P2p, Statistic,
    Verification, describe_size, parse_number,
};
use super::{ParseError, Parsed, numbered_lines};

pub fn looks_like_osu(_text: &str, lines: &[&str]) -> bool {
    crate::evidence::numbered(lines).any(|(_, l)| l.trim_start().starts_with("# OSU MPI"))
}

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
}

/// OMB's default largest message (1 << 22 bytes, `MAX_MESSAGE_SIZE`).
const DEFAULT_MAX_SIZE: u64 = 1 << 22;

/// Parses OSU output. `export CUDA_VISIBLE_DEVICES=a,b` (or
/// `HIP_VISIBLE_DEVICES`) before a device-buffer run names the GPU pair.
pub fn parse_osu(text: &str) -> Result<Parsed, ParseError> {
    let mut out = Parsed::default();
    let mut run: Option<Run> = None;
    let mut visible: Option<(String, String)> = None;
    let mut sdma_off = false;
    let mut columns: Option<(bool, bool)> = None; // (bandwidth, validation)
    for (n, l) in numbered_lines(text) {
        let t = l.trim();
        {
            let rest = t.strip_prefix("export ").unwrap_or(t);
            for (var, val) in rest.split_whitespace().filter_map(|kv| kv.split_once('=')) {
                if var == "CUDA_VISIBLE_DEVICES"
                    || var == "HIP_VISIBLE_DEVICES"
                    || var == "ROCR_VISIBLE_DEVICES"
                {
                    let ids: Vec<&str> = val.split(',').collect();
                    if let [a, b] = ids.as_slice() {
                        visible = Some((format!("GPU{a}"), format!("GPU{b}")));
                    }
                }
                if var == "HSA_ENABLE_SDMA" && val == "0" {
                    sdma_off = true;
                }
            }
        }
        if let Some(title) = t.strip_prefix("# OSU MPI") {
            if let Some(r) = run.take() {
                finish(&mut out, r);
            }
            let title = format!("OSU MPI{title}");
            run = Some(Run {
                bidir: title.contains("Bi-Directional"),
                title,
                line: n,
                visible: visible.clone(),
                sdma_off,
                ..Run::default()
            });
            columns = None;
            continue;
        }
        let Some(r) = run.as_mut() else { continue };
        if t.starts_with("# Send Buffer on") {
            let dev = t.matches("DEVICE").count();
            let host = t.matches("HOST").count();
            r.buffers = Some(match (dev, host) {
                (2, 0) => Buffers::Device,
                (0, 2) => Buffers::Host,
                (1, 1) => Buffers::Mixed,
                _ => Buffers::Unknown,
            });
            continue;
        }
        if t.starts_with("# Size") {
            columns = Some((t.contains("Bandwidth"), t.contains("Validation")));
            continue;
        }
        let Some((bw, validation)) = columns else {
            continue;
        };
        let toks: Vec<&str> = t.split_whitespace().collect();
        let Some(size) = toks.first().and_then(|x| x.parse::<u64>().ok()) else {
            continue;
        };
        let expected = 2 + usize::from(validation);
        if toks.len() != expected {
            return Err(ParseError::new(
                n,
                format!(
                    "{expected} columns (size, value{}), found {}",
                    if validation { ", validation" } else { "" },
                    toks.len()
                ),
            ));
        }
        let value = parse_number(toks[1])
            .ok_or_else(|| ParseError::new(n, format!("a number, found `{}`", toks[1])))?;
        let kind = Kind::MpiPt2pt;
        let mut m = Measurement::new("osu", n, kind, &r.title, Statistic::Avg);
        m.size_bytes = Some(size);
        m.direction = if r.bidir {
            Direction::Bi
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
            m.bandwidth_bytes_per_s = Some(value * MB_DECIMAL);
            m.as_printed = format!("{} MB/s", toks[1]);
        } else {
            m.latency_s = Some(value * 1e-6);
            m.as_printed = format!("{} us", toks[1]);
        }
        m.verification = if validation {
            match toks[2] {
                "Pass" => Verification::Checked { errors: 0 },
                _ => Verification::Checked { errors: 1 },
            }
        } else {
            Verification::Unknown
        };
        if validation && toks[2] != "Pass" {
            out.tool_error(n, format!("OSU validation `{}` at {size} bytes", toks[2]));
        }
        let q = &mut m.questions;
        q.unit = if bw {
            "MB/s as printed; OSU's MB is 1e6 bytes".into()
        } else {
            "microseconds, as printed".into()
        };
        q.direction = match (bw, r.bidir) {
            (false, _) => "one way: half of a ping-pong round trip".into(),
            (true, true) => "bidirectional: both directions at once, the figure is the sum".into(),
            (true, false) => "unidirectional".into(),
        };
        q.message_size = describe_size(size);
        q.warm_up = NOT_STATED.into();
        q.outstanding = if bw {
            NOT_STATED.into()
        } else {
            "one message in flight (ping-pong)".into()
        };
        q.path = match (&m.src, m.buffers) {
            (Some(a), _) => format!(
                "MPI between {a} and {} (from the *_VISIBLE_DEVICES line before the run), device buffers",
                m.dst.clone().unwrap_or_default()
            ).into(),
            (None, Buffers::Device) => "MPI, device buffers".into(),
            (None, Buffers::Host) => "MPI, host buffers".into(),
            _ => "MPI; buffer location not printed".into(),
        };
        if r.sdma_off {
            q.context = "HSA_ENABLE_SDMA=0: copies by shader kernels, not SDMA engines".into();
        }
        out.measurements.push(m);
        r.rows += 1;
        r.last_size = size;
        r.last_line = n;
    }
    if let Some(r) = run.take() {
        // A default sweep (several rows from 1 byte up) that ends the file
        // below OMB's default maximum was cut. A single row is a chosen
        // size (`-m 1:1`) and is not flagged.
        let last_text = numbered_lines(text)
            .filter(|(_, l)| !l.trim().is_empty())
            .last()
            .map(|(n, _)| n);
        if r.rows >= 2 && r.last_size < DEFAULT_MAX_SIZE && last_text == Some(r.last_line) {
            out.truncated(
                r.last_line,
                format!(
                    "`{}` stops at {} bytes; the default sweep ends at {DEFAULT_MAX_SIZE}",
                    r.title, r.last_size
                ),
            );
        }
        finish(&mut out, r);
    }
    Ok(out)
}

fn finish(out: &mut Parsed, r: Run) {
    if r.rows == 0 {
        out.truncated(r.line, format!("`{}` printed no result rows", r.title));
    }
}
