//! Copy-bandwidth transcripts inside one node: the CUDA sample
//! `p2pBandwidthLatencyTest`, `nvbandwidth` (text and `-j` JSON),
//! `rocm-bandwidth-test` and `TransferBench`.
//!
//! All four print GB/s meaning 1e9 bytes per second; latency in
//! microseconds (p2pBandwidthLatencyTest) or nanoseconds (nvbandwidth's
//! latency tests).

use super::answers::{Context, DirectionNote, Outstanding, Path, Timer, Unit};
use super::measurement::{
    Buffers, CopyEngine, Direction, GB, Ids, Kind, Measurement, P2p, Statistic, Text, Verification,
    describe_size, parse_binary_size, parse_number,
};
use super::{ParseError, Parsed, numbered_lines};

mod bandwidth_test;
mod nvbandwidth;
mod p2p_test;
mod rocm_bandwidth;
mod transferbench;

pub use bandwidth_test::{looks_like_bandwidth_test, parse_bandwidth_test};
pub use nvbandwidth::{
    looks_like_nvbandwidth, looks_like_nvbandwidth_json, parse_nvbandwidth, parse_nvbandwidth_json,
};
pub use p2p_test::{looks_like_p2p_bandwidth_latency_test, parse_p2p_bandwidth_latency_test};
pub use rocm_bandwidth::{looks_like_rocm_bandwidth_test, parse_rocm_bandwidth_test};
pub use transferbench::{looks_like_transferbench, parse_transferbench};

/// One row of an index-labelled matrix: `<index> <cells...>`.
pub(super) struct IndexRow<'a> {
    pub index: usize,
    pub line: usize,
    pub cells: Vec<&'a str>,
}

/// Reads an index-labelled matrix: a header line starting with `label`
/// (`D\D`, `GPU`, `CPU`, `D/D`) then rows `<index> <values...>`. With
/// `spaced`, blank lines before the header and between rows are skipped
/// (rocm-bandwidth-test prints them). Returns the rows and the position
/// after the matrix.
pub(super) fn read_index_matrix<'a>(
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
