//! Copy-bandwidth transcripts inside one node: the CUDA sample
//! `p2pBandwidthLatencyTest`, `nvbandwidth` (text and `-j` JSON),
//! `rocm-bandwidth-test`, `TransferBench` and the curriculum's own
//! `peer_copy_bw`.
//!
//! All five print GB/s meaning 1e9 bytes per second; latency in
//! microseconds (p2pBandwidthLatencyTest) or nanoseconds (nvbandwidth's
//! latency tests).

use super::answers::{Context, DirectionNote, Outstanding, Path, Timer, Unit};
use super::measurement::{
    Buffers, CopyEngine, Direction, GB, Ids, Kind, Measurement, P2p, Statistic, Text, Verification,
    describe_size, parse_binary_size, parse_number,
};
use super::{ParseError, Parsed};
use crate::evidence::SplitWords;

mod bandwidth_test;
mod nvbandwidth;
mod p2p_test;
mod peer_copy_bw;
mod rocm_bandwidth;
mod transferbench;
mod transferbench_presets;

pub use bandwidth_test::{looks_like_bandwidth_test, parse_bandwidth_test};
pub use nvbandwidth::{
    looks_like_nvbandwidth, looks_like_nvbandwidth_json, parse_nvbandwidth, parse_nvbandwidth_json,
};
pub use p2p_test::{looks_like_p2p_bandwidth_latency_test, parse_p2p_bandwidth_latency_test};
pub use peer_copy_bw::{is_pair_line, looks_like_peer_copy_bw, parse_peer_copy_bw};
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
) -> IndexMatrix<'a> {
    let skip_blank = |mut i: usize| {
        while spaced && i < lines.len() && lines[i].1.trim().is_empty() {
            i += 1;
        }
        i
    };
    let mut m = IndexMatrix {
        rows: Vec::new(),
        next: skip_blank(start),
        ncols: 0,
        bad: Vec::new(),
    };
    let Some((_, head)) = lines.get(m.next) else {
        return m;
    };
    let head: Vec<&str> = head.words().collect();
    if head.first() != Some(&label) {
        return m;
    }
    m.ncols = head.len() - 1;
    m.next += 1;
    loop {
        let j = skip_blank(m.next);
        let Some((n, l)) = lines.get(j) else {
            return m;
        };
        // Sized for the header's row (label, cells, one glued token
        // doubled): a row read keeps this Vec as its cells.
        let mut toks: Vec<&str> = Vec::with_capacity(m.ncols + 2);
        toks.extend(l.words());
        // Two cells printed without a space (`832.005.90`, a 4-digit
        // diagonal overflowing its field): the token stands for both, so
        // the others keep their columns and only those two are lost.
        if toks.len() == m.ncols
            && let Some(g) = toks.iter().position(|x| super::is_glued(x))
        {
            toks.insert(g, toks[g]);
        }
        match toks.split_first() {
            Some((idx, cells)) if idx.parse::<usize>().is_ok() && !cells.is_empty() => {
                // A row with the wrong number of cells (cut mid-row, a
                // cell lost or two glued) is not read; the rows after it
                // are.
                if cells.len() == m.ncols {
                    let index = idx.parse().unwrap_or(0);
                    toks.remove(0);
                    m.rows.push(IndexRow {
                        index,
                        line: *n,
                        cells: toks,
                    });
                } else {
                    m.bad.push(ParseError::new(
                        *n,
                        format!(
                            "{} cells after row label `{idx}` (one per column), found {}",
                            m.ncols,
                            cells.len()
                        ),
                    ));
                }
                m.next = j + 1;
            }
            _ => return m,
        }
    }
}

/// What [`read_index_matrix`] read.
pub(super) struct IndexMatrix<'a> {
    pub rows: Vec<IndexRow<'a>>,
    /// The position after the matrix.
    pub next: usize,
    /// Columns named by the header.
    pub ncols: usize,
    /// Rows that could not be read, at their lines.
    pub bad: Vec<ParseError>,
}

impl IndexMatrix<'_> {
    /// The last line the matrix covers (a row, read or not), if any.
    pub fn last_line(&self) -> Option<usize> {
        let read = self.rows.last().map(|r| r.line);
        let bad = self.bad.last().map(|e| e.line);
        read.max(bad)
    }

    /// Row indices `0..ncols` printed neither as a row nor as an
    /// unreadable one: `2..7`, or `3, 5`.
    pub fn missing_rows(&self) -> Option<String> {
        let have = self.rows.len() + self.bad.len();
        (have < self.ncols).then(|| {
            if self.rows.iter().enumerate().all(|(i, r)| r.index == i) {
                format!("rows {}..{}", have, self.ncols - 1)
            } else {
                format!("{} of its {} rows", self.ncols - have, self.ncols)
            }
        })
    }
}
