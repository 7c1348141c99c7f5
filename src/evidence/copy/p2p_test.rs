//! The CUDA sample `p2pBandwidthLatencyTest`.

use super::*;
#[allow(unused_imports)]
use crate::evidence::SplitWords;

pub fn looks_like_p2p_bandwidth_latency_test(text: &str, _lines: &[&str]) -> bool {
    // (Each signature holds `P2P`; the block's grams rule most out without
    // a search, which a short `P2P` searched first could not.)
    has!(text, "P2P (Peer-to-Peer) GPU Bandwidth Latency Test")
        || has!(text, "P2P Connectivity Matrix")
        || (has!(text, "P2P=Disabled") && has!(text, "Matrix ("))
        // One matrix pasted on its own: `Bidirectional P2P=Enabled
        // Bandwidth Matrix (GB/s)` over a `D\D` header.
        || (has!(text, "P2P=Enabled") && has!(text, "Matrix (") && has!(text, "D\\D"))
}

/// Some captures carry an editor's line numbers (` 1 `, ` 2 `...) in front of
/// every line. When every non-blank line starts with its own 1-based number,
/// the numbers are removed; otherwise lines are kept as they are.
fn strip_editor_line_numbers(lines: Vec<(usize, &str)>) -> Vec<(usize, &str)> {
    let numbered = lines
        .iter()
        .filter(|(_, l)| !l.trim().is_empty())
        .all(|(n, l)| {
            let t = l.trim_start();
            let digits: String = t.chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<usize>().ok() == Some(*n)
                && (t.len() == digits.len() || t[digits.len()..].starts_with(' '))
        });
    if !numbered || lines.is_empty() {
        return lines;
    }
    lines
        .into_iter()
        .map(|(n, l)| {
            let t = l.trim_start();
            let d = t.chars().take_while(char::is_ascii_digit).count();
            (n, t[d..].strip_prefix(' ').unwrap_or(&t[d..]))
        })
        .collect()
}

/// The header of one p2pBandwidthLatencyTest matrix.
struct P2pMatrixHead {
    test: String,
    direction: Direction,
    p2p: P2p,
    latency: bool,
}

fn p2p_matrix_head(l: &str) -> Option<P2pMatrixHead> {
    let t = l.trim();
    if !t.ends_with("Matrix (GB/s)") && !t.ends_with("Matrix (us)") {
        return None;
    }
    let p2p = if t.contains("P2P=Enabled") {
        P2p::Enabled
    } else if t.contains("P2P=Disabled") {
        P2p::Disabled
    } else {
        return None;
    };
    Some(P2pMatrixHead {
        test: t.to_string(),
        direction: if t.starts_with("Bidirectional") {
            Direction::Bi
        } else {
            Direction::Uni
        },
        p2p,
        latency: t.ends_with("(us)"),
    })
}

/// Which ordered pairs can access each other (from the "CAN/CANNOT Access
/// Peer" lines or the connectivity matrix).
type Access = std::collections::BTreeMap<(u32, u32), bool>;

/// Parses the CUDA sample's output: device list, peer access lines, the
/// connectivity matrix, the four bandwidth matrices and the two latency
/// matrices (each with a GPU and a CPU block).
pub fn parse_p2p_bandwidth_latency_test(text: &str) -> Result<Parsed, ParseError> {
    let lines = strip_editor_line_numbers(crate::evidence::numbered_vec(text));
    let mut out = Parsed::default();
    let mut gpus = Ids::new("GPU");
    let mut access = Access::default();
    let mut i = 0;
    let mut seen_matrix = false;
    let mut heads = 0;
    while i < lines.len() {
        let (_, l) = lines[i];
        let t = l.trim();
        if let Some(rest) = t.strip_prefix("Device=") {
            read_access_line(rest, &mut access);
            i += 1;
        } else if t == "P2P Connectivity Matrix" {
            i = read_connectivity(&lines, i, &mut access, &mut out);
        } else if let Some(head) = p2p_matrix_head(l) {
            seen_matrix = true;
            heads += 1;
            i = read_matrix(&lines, i, &head, &access, &mut gpus, &mut out);
        } else {
            i += 1;
        }
    }
    // The sample opens with its banner and device list; without them the
    // paste starts part-way (a matrix on its own).
    // (A text without it is not searched line by line.)
    let banner = has!(text, "P2P (Peer-to-Peer) GPU Bandwidth Latency Test")
        && (lines.iter()).any(|(_, l)| l.contains("P2P (Peer-to-Peer) GPU Bandwidth Latency Test"));
    // With its banner, the sample prints six matrices (four bandwidth,
    // two latency); fewer, at the transcript's end, is a cut.
    if banner
        && heads < 6
        && !out
            .issues
            .iter()
            .any(|i| i.kind == crate::evidence::IssueKind::Truncated)
        && let Some((n, _)) = lines.iter().rev().find(|(_, l)| !l.trim().is_empty())
    {
        out.cut(
            *n,
            format!(
                "{} of the sample's 6 bandwidth and latency matrices",
                6 - heads
            ),
        );
    }
    if !banner && let Some((n, _)) = lines.iter().find(|(_, l)| !l.trim().is_empty()) {
        out.truncated(
            *n,
            format!("cut before line {n}: the test's banner and device list (`[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]`) not in the transcript"),
        );
    }
    if !seen_matrix && out.measurements.is_empty() {
        let last = lines.last().map_or(1, |x| x.0);
        out.truncated(
            last,
            "no bandwidth or latency matrix (the run stopped or was cut before them)",
        );
    }
    Ok(out)
}

/// `Device=0 CANNOT Access Peer Device=1` (`rest` follows the first `Device=`).
fn read_access_line(rest: &str, access: &mut Access) {
    let parts: Vec<&str> = rest.words().collect();
    if let [a, verb, _, _, b] = parts.as_slice()
        && let (Ok(a), Some(Ok(b))) = (
            a.parse::<u32>(),
            b.strip_prefix("Device=").map(str::parse::<u32>),
        )
    {
        access.insert((a, b), *verb == "CAN");
    }
}

/// Reads the connectivity matrix whose title is at `start`; the peer access
/// lines, when printed, take precedence. Returns the position after it.
fn read_connectivity(
    lines: &[(usize, &str)],
    start: usize,
    access: &mut Access,
    out: &mut Parsed,
) -> usize {
    let (n, _) = lines[start];
    let m = read_index_matrix(lines, start + 1, "D\\D", false);
    for r in &m.rows {
        for (col, v) in r.cells.iter().enumerate() {
            access
                .entry((r.index as u32, col as u32))
                .or_insert(*v == "1");
        }
    }
    for e in &m.bad {
        out.row::<()>("p2p-bandwidth-latency-test", Err(e.clone()));
    }
    if m.rows.is_empty() {
        out.truncated(n, "the P2P connectivity matrix has no rows");
    } else if let Some(missing) = m.missing_rows() {
        let at = m.last_line().unwrap_or(n);
        out.cut(at, format!("{missing} of the P2P connectivity matrix"));
    }
    m.next
}

/// Reads the bandwidth or latency matrix whose title is at `start` (a
/// latency matrix has a GPU and a CPU block); returns the position after it.
fn read_matrix(
    lines: &[(usize, &str)],
    start: usize,
    head: &P2pMatrixHead,
    access: &Access,
    gpus: &mut Ids,
    out: &mut Parsed,
) -> usize {
    let (n, _) = lines[start];
    let mut j = start + 1;
    let blocks: &[&str] = if head.latency {
        &["GPU", "CPU"]
    } else {
        &["D\\D"]
    };
    for block in blocks {
        // Skip blank lines between the GPU and CPU blocks.
        while j < lines.len() && lines[j].1.trim().is_empty() {
            j += 1;
        }
        let m = read_index_matrix(lines, j, block, false);
        let next = m.next;
        if m.ncols == 0 {
            let at = lines.get(next.saturating_sub(1)).map_or(n, |x| x.0);
            out.cut(at, format!("the {block} block of `{}`", head.test));
        } else if let Some(missing) = m.missing_rows() {
            let at = m
                .last_line()
                .or_else(|| lines.get(next.saturating_sub(1)).map(|x| x.0))
                .unwrap_or(n);
            out.cut(at, format!("{missing} of `{}` ({block} block)", head.test));
        }
        let test: Text = if head.latency {
            format!("{} {block}", head.test).into()
        } else {
            head.test.clone().into()
        };
        for e in &m.bad {
            out.row::<()>("p2p-bandwidth-latency-test", Err(e.clone()));
        }
        // Room for a cell per printed value (at most one each), so the
        // measurements are not moved at each doubling.
        out.measurements
            .reserve(m.rows.iter().map(|r| r.cells.len()).sum());
        for r in &m.rows {
            let cells = matrix_row(r, head, block, &test, access, gpus, out);
            out.measurements.extend(cells);
        }
        j = next;
    }
    j
}

/// The cells of one matrix row; a cell that is not a number is a problem
/// at the row's line, and the row's other cells are read.
fn matrix_row(
    r: &IndexRow<'_>,
    head: &P2pMatrixHead,
    block: &str,
    test: &Text,
    access: &Access,
    gpus: &mut Ids,
    out: &mut Parsed,
) -> Vec<Measurement> {
    let (row, line) = (r.index as u32, r.line);
    let mut cells = Vec::with_capacity(r.cells.len());
    for (col, v) in r.cells.iter().enumerate() {
        let Some(value) = parse_number(v) else {
            out.bad_row(
                line,
                format!(
                    "p2p-bandwidth-latency-test: expected a number in column {col}, found `{v}`"
                ),
            );
            continue;
        };
        let col = col as u32;
        let kind = if row == col { Kind::D2d } else { Kind::P2pCopy };
        let mut m = Measurement::new(
            "p2pBandwidthLatencyTest",
            line,
            kind,
            test.clone(),
            Statistic::Avg,
        );
        m.src = Some(gpus.get(row as usize));
        m.dst = Some(gpus.get(col as usize));
        m.direction = head.direction;
        let can = access.get(&(row, col)).copied();
        // A `P2P=Enabled` figure of a pair that cannot access each other:
        // the sample only enables peer access where it can, so the copy
        // went through host memory (the sample's own NOTE says so).
        m.p2p = match (head.p2p, can) {
            (P2p::Enabled, Some(false)) if row != col => P2p::NoPeerAccess,
            (p2p, _) => p2p,
        };
        m.buffers = Buffers::Device;
        if head.latency {
            m.latency_s = Some(value * 1e-6);
            m.as_printed = crate::evidence::printed(v, "us");
        } else {
            m.bandwidth_bytes_per_s = Some(value * GB);
            m.as_printed = crate::evidence::printed(v, "GB/s");
        }
        p2p_questions(&mut m, head.latency, block, can);
        cells.push(m);
    }
    cells
}

fn p2p_questions(m: &mut Measurement, latency: bool, block: &str, can: Option<bool>) {
    let q = &mut m.questions;
    q.unit = if latency {
        Unit::Microseconds
    } else {
        Unit::GigabytesPerS
    };
    q.direction = DirectionNote::RowToColumn;
    if latency {
        q.outstanding = Outstanding::OneTransfer {
            timer: if block == "CPU" {
                Timer::Cpu
            } else {
                Timer::Gpu
            },
        };
    }
    q.path = if m.src == m.dst {
        Path::WithinGpu
    } else {
        Path::GpuToGpu { access: can }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_editor_line_numbers_only_when_every_line_has_them() {
        let l = vec![(1, "  1 P2P=Disabled"), (2, "  2    GPU 0"), (3, "  3")];
        let s = strip_editor_line_numbers(l);
        assert_eq!(s[0].1, "P2P=Disabled");
        assert_eq!(s[1].1, "   GPU 0");
        let l = vec![(1, "  1 a"), (2, "  7 b")];
        assert_eq!(strip_editor_line_numbers(l.clone()), l);
    }

    /// The `P2P=Enabled` figure of each ordered pair, by (row, column).
    fn enabled_cells(p: &Parsed, test: &str) -> Vec<(String, String, P2p, Path)> {
        (p.measurements.iter())
            .filter(|m| m.test.as_str() == test)
            .map(|m| {
                let id = |x: &Option<Text>| x.as_deref().unwrap_or_default().to_string();
                (id(&m.src), id(&m.dst), m.p2p, m.questions.path.clone())
            })
            .collect()
    }

    // Cut from captures/a100-pcie-4gpu-nv12-pairs (two NVLink pairs; the
    // pairs across them cannot peer).
    const A100_PAIRS: &str = "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]
Device: 0, NVIDIA A100 80GB PCIe, pciBusID: 0, pciDeviceID: 0, pciDomainID:1
Device: 1, NVIDIA A100 80GB PCIe, pciBusID: 0, pciDeviceID: 0, pciDomainID:2
Device: 2, NVIDIA A100 80GB PCIe, pciBusID: 0, pciDeviceID: 0, pciDomainID:3
Device=0 CAN Access Peer Device=1
Device=0 CANNOT Access Peer Device=2
Device=1 CAN Access Peer Device=0
Device=1 CANNOT Access Peer Device=2
Device=2 CANNOT Access Peer Device=0
Device=2 CANNOT Access Peer Device=1
Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)
   D\\D     0      1      2
     0 1508.20  21.51  21.63
     1  21.40 1509.66  21.68
     2  21.48  21.55 1509.66
Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)
   D\\D     0      1      2
     0 1502.40 275.07  21.62
     1 275.51 1521.42  21.69
     2  21.46  21.72 1508.20
";

    #[test]
    fn a_p2p_enabled_figure_of_a_pair_that_cannot_peer_is_staged() {
        let p = parse_p2p_bandwidth_latency_test(A100_PAIRS).unwrap();
        let on = enabled_cells(
            &p,
            "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)",
        );
        assert_eq!(on.len(), 9);
        let cell = |a: &str, b: &str| {
            on.iter()
                .find(|c| c.0 == a && c.1 == b)
                .map(|c| (c.2, c.3.clone()))
                .unwrap()
        };
        let no = Path::GpuToGpu {
            access: Some(false),
        };
        let yes = Path::GpuToGpu { access: Some(true) };
        assert_eq!(cell("GPU0", "GPU1"), (P2p::Enabled, yes));
        assert_eq!(cell("GPU0", "GPU2"), (P2p::NoPeerAccess, no.clone()));
        assert_eq!(cell("GPU2", "GPU1"), (P2p::NoPeerAccess, no));
        assert_eq!(cell("GPU1", "GPU1"), (P2p::Enabled, Path::WithinGpu));
        // The P2P=Disabled matrix stays disabled, pair by pair.
        let off = enabled_cells(&p, "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)");
        assert!(off.iter().all(|c| c.2 == P2p::Disabled));
        // Only the cut (the four matrices after these two) is said.
        assert_eq!(p.issues.len(), 1, "{:?}", p.issues);
        assert_eq!(p.issues[0].kind, crate::evidence::IssueKind::Truncated);
    }

    #[test]
    fn an_all_zero_connectivity_matrix_is_read_and_stages_every_pair() {
        // The matrix alone (no access lines), no pair able to peer, as
        // printed with its tab after the row label; once with the
        // sample's 1 on the diagonal, once all zeros.
        for diagonal in ["1", "0"] {
            let text = format!(
                "[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]
Device: 0, NVIDIA GeForce RTX 2080 Ti, pciBusID: b4, pciDeviceID: 0, pciDomainID:0
Device: 1, NVIDIA GeForce RTX 2080 Ti, pciBusID: b5, pciDeviceID: 0, pciDomainID:0
P2P Connectivity Matrix
     D\\D     0     1
     0\t     {diagonal}     0
     1\t     0     {diagonal}
Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)
   D\\D     0      1
     0 538.62   5.72
     1   5.72 532.54
"
            );
            let p = parse_p2p_bandwidth_latency_test(&text).unwrap();
            let on = enabled_cells(
                &p,
                "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)",
            );
            let across: Vec<_> = on.iter().filter(|c| c.0 != c.1).collect();
            assert_eq!(across.len(), 2);
            assert!(across.iter().all(|c| c.2 == P2p::NoPeerAccess
                && c.3
                    == Path::GpuToGpu {
                        access: Some(false)
                    }));
            // Only the cut (the five matrices after this one) is said.
            assert!(
                p.issues
                    .iter()
                    .all(|i| i.kind == crate::evidence::IssueKind::Truncated),
                "{:?}",
                p.issues
            );
        }
    }
}
