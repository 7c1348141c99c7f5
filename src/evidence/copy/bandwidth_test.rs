//! The CUDA sample `bandwidthTest`: host to device, device to host and
//! device to device copy bandwidth of one GPU, pinned or pageable host
//! memory, quick, range or shmoo mode.
//!
//! Units, read the way the sample's source computes them (NVIDIA
//! cuda-samples `bandwidthTest.cu`):
//! - releases that print `Bandwidth(MB/s)` compute
//!   `(1 << 10) * bytes / (ms * (1 << 20))`: one printed MB/s is
//!   1.024e6 bytes/s (neither 1e6 nor 2^20);
//! - releases that print `Bandwidth(GB/s)` compute `bytes / 1e9 / s`;
//! - device to device, in both, multiplies by `2.0f`: every byte is counted
//!   once read and once written, so the copy itself moved half the figure.

use super::super::answers::{DirectionNote, Unit};
use super::super::measurement::{Buffers, Direction, Kind, Measurement, Statistic, parse_number};
use super::super::{ParseError, Parsed, numbered_lines};
use crate::evidence::SplitWords;

/// Bytes per second in one printed `MB/s` of the MB/s releases.
const MB_1024: f64 = 1.024e6;

pub fn looks_like_bandwidth_test(text: &str, lines: &[&str]) -> bool {
    has!(text, "[CUDA Bandwidth Test]")
        || has!(text, "Transfer Size (Bytes)")
            && lines.iter().any(|l| {
                let t = l.trim();
                t.starts_with("Transfer Size (Bytes)") && t.contains("Bandwidth(")
            })
}

/// What the lines before a table said.
#[derive(Default)]
struct State {
    gpu: Option<String>,
    kind: Option<Kind>,
    pageable: Option<bool>,
    /// Bytes per second per printed unit, and the unit; set by a table
    /// header, cleared when the table ends.
    table: Option<(f64, &'static str, usize)>,
    rows: usize,
}

/// Parses `bandwidthTest` output (readable form); several runs may follow
/// each other.
pub fn parse_bandwidth_test(text: &str) -> Result<Parsed, ParseError> {
    let mut out = Parsed::default();
    let mut s = State::default();
    let mut last = 1;
    let last_written = numbered_lines(text)
        .filter(|(_, l)| !l.trim().is_empty())
        .last()
        .map(|(n, _)| n);
    for (n, l) in numbered_lines(text) {
        last = n;
        let t = l.trim();
        if let Some(rest) = t.strip_prefix("Device ")
            && let Some((idx, _name)) = rest.split_once(':')
            && let Ok(i) = idx.trim().parse::<u32>()
        {
            s.gpu = Some(format!("GPU{i}"));
            continue;
        }
        if let Some(k) = copy_kind(t) {
            end_table(&mut s, n, &mut out);
            s.kind = Some(k);
            continue;
        }
        if t.ends_with("Memory Transfers") {
            s.pageable = Some(t.starts_with("PAGEABLE"));
            continue;
        }
        if t.starts_with("Transfer Size (Bytes)") {
            s.table = if t.contains("Bandwidth(MB/s)") {
                Some((MB_1024, "MB/s", n))
            } else if t.contains("Bandwidth(GB/s)") {
                Some((1e9, "GB/s", n))
            } else if Some(n) == last_written && t.contains("Bandwidth(") {
                // `Bandwidth(MB/` as the paste's last line: cut, not misread.
                out.truncated(n, format!("the paste stops inside a table header (`{t}`)"));
                None
            } else {
                out.bad_row(
                    n,
                    "bandwidthTest: expected `Bandwidth(MB/s)` or `Bandwidth(GB/s)`",
                );
                None
            };
            s.rows = 0;
            continue;
        }
        if t.starts_with("Result = ") && !t.contains("PASS") {
            out.tool_error(n, format!("bandwidthTest: {t}"));
            continue;
        }
        let Some((factor, unit, _)) = s.table else {
            continue;
        };
        let toks: Vec<&str> = t.words().collect();
        match toks.as_slice() {
            [size, v] if size.parse::<u64>().is_ok() => match parse_number(v) {
                Some(value) => {
                    out.measurements.push(cell(
                        &s,
                        n,
                        size.parse().unwrap_or(0),
                        value,
                        v,
                        factor,
                        unit,
                    ));
                    s.rows += 1;
                }
                None => out.bad_row(
                    n,
                    format!("bandwidthTest: expected a bandwidth, found `{v}`"),
                ),
            },
            [] => end_table(&mut s, n, &mut out),
            _ => end_table(&mut s, n, &mut out),
        }
    }
    if s.table.is_some() {
        end_table(&mut s, last, &mut out);
    }
    if out.measurements.is_empty() && out.issues.is_empty() {
        return Err(ParseError::new(
            last,
            "a `Transfer Size (Bytes)  Bandwidth(...)` table with rows",
        ));
    }
    Ok(out)
}

/// `Host to Device Bandwidth, 1 Device(s)` and its kin.
fn copy_kind(t: &str) -> Option<Kind> {
    if !t.contains("Bandwidth, ") {
        return None;
    }
    Some(if t.starts_with("Host to Device") {
        Kind::H2d
    } else if t.starts_with("Device to Host") {
        Kind::D2h
    } else if t.starts_with("Device to Device") {
        Kind::D2d
    } else {
        return None;
    })
}

/// A table ends: one with a header and no row was cut.
fn end_table(s: &mut State, n: usize, out: &mut Parsed) {
    if let Some((_, _, hn)) = s.table.take()
        && s.rows == 0
    {
        out.truncated(
            n.max(hn),
            format!("the table headed at line {hn} has no rows"),
        );
    }
}

fn cell(
    s: &State,
    n: usize,
    size: u64,
    value: f64,
    printed: &str,
    factor: f64,
    unit: &'static str,
) -> Measurement {
    let kind = s.kind.unwrap_or(Kind::H2d);
    let name = match kind {
        Kind::D2h => "device to host",
        Kind::D2d => "device to device",
        _ => "host to device",
    };
    let memory = match s.pageable {
        Some(true) => "pageable",
        Some(false) => "pinned",
        None => "host memory of unstated kind",
    };
    let mut m = Measurement::new(
        "bandwidthTest",
        n,
        kind,
        format!("bandwidthTest {name}, {memory}"),
        Statistic::Avg,
    );
    let gpu = s.gpu.clone().map(Into::into);
    (m.src, m.dst) = match kind {
        Kind::D2h => (gpu, None),
        Kind::D2d => (gpu.clone(), gpu),
        _ => (None, gpu),
    };
    m.direction = Direction::Uni;
    m.size_bytes = Some(size);
    m.bandwidth_bytes_per_s = Some(value * factor);
    m.as_printed = crate::evidence::printed(printed, unit);
    m.buffers = match (kind, s.pageable) {
        (Kind::D2d, _) => Buffers::Device,
        (_, Some(true)) => Buffers::HostPageable,
        (_, Some(false)) => Buffers::HostPinned,
        (_, None) => Buffers::Host,
    };
    let q = &mut m.questions;
    q.unit = if unit == "MB/s" {
        Unit::BandwidthTestMegabytesPerS
    } else {
        Unit::GigabytesPerS
    };
    q.direction = if kind == Kind::D2d {
        DirectionNote::CountedTwice
    } else {
        DirectionNote::Plain
    };
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_megabytes_are_1024000_bytes_and_d2d_says_it_counts_twice() {
        let p = parse_bandwidth_test(
            " Device 0: Tesla P100\n Device to Device Bandwidth, 1 Device(s)\n PINNED Memory Transfers\n   Transfer Size (Bytes)        Bandwidth(MB/s)\n   33554432                     443837.7\n",
        )
        .unwrap();
        let m = &p.measurements[0];
        assert_eq!(m.bandwidth_bytes_per_s, Some(443837.7 * 1.024e6));
        assert_eq!(m.kind, Kind::D2d);
        assert_eq!(
            m.questions.direction,
            crate::evidence::answers::DirectionNote::CountedTwice
        );
    }

    #[test]
    fn a_header_without_rows_is_a_cut() {
        let p = parse_bandwidth_test(
            " Host to Device Bandwidth, 1 Device(s)\n PINNED Memory Transfers\n   Transfer Size (Bytes)\tBandwidth(GB/s)\n",
        )
        .unwrap();
        assert!(p.measurements.is_empty());
        assert_eq!(p.issues.len(), 1);
    }

    #[test]
    fn a_header_cut_as_the_last_line_is_truncated_and_elsewhere_unreadable() {
        // gearshifft #82: the second run's paste ends in `Bandwidth(MB/`.
        let head = " Host to Device Bandwidth, 1 Device(s)\n PINNED Memory Transfers\n   Transfer Size (Bytes)        Bandwidth(MB/s)\n   33554432                     3783.4\n\n Device to Device Bandwidth, 1 Device(s)\n PINNED Memory Transfers\n";
        let cut = format!("{head}   Transfer Size (Bytes)        Bandwidth(MB/\n");
        let p = parse_bandwidth_test(&cut).unwrap();
        assert_eq!(p.measurements.len(), 1);
        assert_eq!(p.issues.len(), 1);
        assert_eq!(p.issues[0].kind, crate::evidence::IssueKind::Truncated);
        assert_eq!(p.issues[0].line, 8);
        // The same header with rows after it is a row misread, not a cut.
        let odd = format!("{head}   Transfer Size (Bytes)        Bandwidth(KB/s)\n   1024   5.0\n");
        let p = parse_bandwidth_test(&odd).unwrap();
        assert_eq!(p.issues[0].kind, crate::evidence::IssueKind::Unreadable);
    }
}
