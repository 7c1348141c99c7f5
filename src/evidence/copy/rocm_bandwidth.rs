//! `rocm-bandwidth-test`: `-a/-A` matrices and `-s/-d` per-size sweeps.

use super::*;
#[allow(unused_imports)]
use crate::evidence::SplitWords;

pub fn looks_like_rocm_bandwidth_test(text: &str, _lines: &[&str]) -> bool {
    has!(text, "RocmBandwidthTest Version")
        || has!(text, "Inter-Device Access")
        // Version 1.0.0's matrices pasted without the version line.
        || has!(text, "irectional peak bandwidth GB/s") && has!(text, "D/D")
        // All three end so: one search rules them out.
        || has!(text, "irectional Benchmark Result")
            && (has!(text, "Unidirectional Benchmark Result")
                || has!(text, "Bidirectional Benchmark Result")
                || has!(text, "Bdirectional Benchmark Result"))
}

/// The agents of the device list, and what the access matrix says of them.
#[derive(Default)]
struct Agents {
    /// Agent index -> id (CPU0, GPU0...), in the order the tool lists them.
    ids: Vec<Text>,
    cpus: usize,
    gpus: usize,
    access: std::collections::BTreeMap<(usize, usize), bool>,
}

impl Agents {
    /// `Device: 4,  ,  GPU-ab43...,  c9:0.0` or `Device: 0,  AMD EPYC ...`;
    /// version 1.0.0 names a GPU by its PCI device id alone (`Device: 1,
    /// Device 67df`).
    fn read_device_line(&mut self, rest: &str) {
        let fields: Vec<&str> = rest.split(',').map(str::trim).collect();
        let pci_id = |f: &str| {
            f.strip_prefix("Device ")
                .is_some_and(|id| id.len() == 4 && id.bytes().all(|b| b.is_ascii_hexdigit()))
        };
        let is_gpu = fields.iter().any(|f| f.starts_with("GPU-") || pci_id(f)) || fields.len() >= 4;
        if is_gpu {
            self.ids.push(format!("GPU{}", self.gpus).into());
            self.gpus += 1;
        } else {
            self.ids.push(format!("CPU{}", self.cpus).into());
            self.cpus += 1;
        }
    }
}

/// The `-a/-A` matrices, by their title line.
#[derive(Clone, Copy, PartialEq)]
enum Matrix {
    Access,
    Numa,
    Uni,
    Bi,
}

impl Matrix {
    fn from_title(t: &str) -> Option<Matrix> {
        match t {
            "Inter-Device Access" => Some(Matrix::Access),
            "Inter-Device Numa Distance" => Some(Matrix::Numa),
            "Unidirectional copy peak bandwidth GB/s" => Some(Matrix::Uni),
            "Bidirectional copy peak bandwidth GB/s" => Some(Matrix::Bi),
            // Version 1.0.0's titles, its "Bdirectional" spelling included
            // (ROCm issue #406, a run of 2018).
            "Device Access" => Some(Matrix::Access),
            "Device Numa Distance" => Some(Matrix::Numa),
            "Unidirectional peak bandwidth GB/s" => Some(Matrix::Uni),
            "Bidirectional peak bandwidth GB/s" | "Bdirectional peak bandwidth GB/s" => {
                Some(Matrix::Bi)
            }
            _ => None,
        }
    }
}

/// A `-s/-d` sweep: direction, and (agent, is CPU) of source and destination.
type Sweep = (Direction, Endpoint, Endpoint);

/// Parses rocm-bandwidth-test: the device list (CPU and GPU agents), the
/// access and NUMA-distance matrices, the peak unidirectional and
/// bidirectional matrices of `-a/-A`, and the per-size tables of `-s/-d` runs
/// (including the tool's "Bdirectional" spelling).
pub fn parse_rocm_bandwidth_test(text: &str) -> Result<Parsed, ParseError> {
    let lines: Vec<(usize, &str)> = crate::evidence::numbered_vec(text);
    let mut out = Parsed::default();
    let mut agents = Agents::default();
    let mut sweep: Option<Sweep> = None;
    // `Launch Command is: ... -m <sizes>` replaces the default size list.
    // (A text without that line is not searched line by line.)
    let custom_sizes = has!(text, "Launch Command is:")
        && (lines.iter())
            .any(|(_, l)| l.contains("Launch Command is:") && l.words().any(|w| w == "-m"));
    let mut i = 0;
    while i < lines.len() {
        let (n, l) = lines[i];
        let t = l.trim();
        if let Some(rest) = t.strip_prefix("Device:") {
            agents.read_device_line(rest);
            i += 1;
        } else if let Some(which) = Matrix::from_title(t) {
            i = read_matrix(&lines, i, which, &mut agents, &mut out);
        } else if t.contains("Benchmark Result") {
            sweep = out.row("rocm-bandwidth-test", read_banner(&lines, i));
            i += 3;
        } else if t.starts_with("Data Size") {
            let Some(sweep) = sweep else {
                // Whose sweep this is was not read: its rows are not.
                out.bad_row(
                    n,
                    "rocm-bandwidth-test: expected a `Benchmark Result` banner naming source and destination before the size table; its rows are not read",
                );
                i += 1;
                continue;
            };
            i = read_size_table(&lines, i, sweep, &agents.ids, custom_sizes, &mut out);
        } else {
            i += 1;
        }
    }
    if out.measurements.is_empty()
        && out.issues.is_empty()
        && let Some((n, _)) = lines.iter().rev().find(|(_, l)| !l.trim().is_empty())
    {
        out.cut(*n, "the bandwidth results (peak matrices or size tables)");
    }
    Ok(out)
}

/// Reads the matrix whose title is at `start`; returns the position after it.
fn read_matrix(
    lines: &[(usize, &str)],
    start: usize,
    which: Matrix,
    agents: &mut Agents,
    out: &mut Parsed,
) -> usize {
    let (n, l) = lines[start];
    let t = l.trim();
    let m = read_index_matrix(lines, start + 1, "D/D", true);
    for e in &m.bad {
        out.row::<()>("rocm-bandwidth-test", Err(e.clone()));
    }
    if m.ncols == 0 {
        out.truncated(n, format!("`{t}` has no rows"));
    } else if let Some(missing) = m.missing_rows() {
        let at = m.last_line().unwrap_or(n);
        out.cut(at, format!("{missing} of `{t}`"));
    }
    let (rows, next) = (m.rows, m.next);
    let title: Text = t.to_string().into();
    for r in &rows {
        match which {
            Matrix::Access => {
                for (col, v) in r.cells.iter().enumerate() {
                    agents.access.insert((r.index, col), *v == "1");
                    // Between two GPUs the matrix is their peer access,
                    // as nvidia-smi topo -p2p or amd-smi's ACCESS table say it.
                    let (src, dst) = (agent(&agents.ids, r.index), agent(&agents.ids, col));
                    if col != r.index && src.starts_with("GPU") && dst.starts_with("GPU") {
                        out.topology.p2p.push(crate::evidence::topology::P2pCell {
                            src: src.to_string(),
                            dst: dst.to_string(),
                            status: v.to_string(),
                            supported: *v == "1",
                            source: crate::evidence::Source::line(r.line),
                        });
                    }
                }
            }
            Matrix::Numa => {}
            Matrix::Uni | Matrix::Bi => {
                let cells = peak_row(r, which, &title, agents, out);
                out.measurements.extend(cells);
            }
        }
    }
    next
}

/// The cells of one row of a peak bandwidth matrix; `N/A` cells are skipped.
fn peak_row(
    r: &IndexRow<'_>,
    which: Matrix,
    title: &Text,
    agents: &Agents,
    out: &mut Parsed,
) -> Vec<Measurement> {
    let (row, rn) = (r.index, r.line);
    let dir = if which == Matrix::Bi {
        Direction::Bi
    } else {
        Direction::Uni
    };
    let mut cells = Vec::new();
    for (col, v) in r.cells.iter().enumerate() {
        if *v == "N/A" {
            continue;
        }
        let value = parse_number(v)
            .ok_or_else(|| ParseError::new(rn, format!("a number or N/A, found `{v}`")));
        let Some(value) = out.row("rocm-bandwidth-test", value) else {
            continue;
        };
        let (src, dst) = (agent(&agents.ids, row), agent(&agents.ids, col));
        let mut m = rbt_cell(rn, title, &src, &dst, dir, Statistic::Peak);
        m.bandwidth_bytes_per_s = Some(value * GB);
        m.as_printed = crate::evidence::printed(v, "GB/s");
        if let (Some(false), Path::GpuToGpu { access } | Path::HostGpu { access }) =
            (agents.access.get(&(row, col)), &mut m.questions.path)
        {
            *access = Some(false);
        }
        cells.push(m);
    }
    cells
}

/// The two banner lines after `Unidirectional/Bidirectional Benchmark
/// Result` (at `start`) carry the source and destination.
fn read_banner(lines: &[(usize, &str)], start: usize) -> Result<Sweep, ParseError> {
    let (n, t) = lines[start];
    let dir = if t.contains("Unidirectional") {
        Direction::Uni
    } else {
        Direction::Bi
    };
    let src = lines.get(start + 1).and_then(|x| banner_device(x.1, "Src"));
    let dst = lines.get(start + 2).and_then(|x| banner_device(x.1, "Dst"));
    match (src, dst) {
        (Some(s), Some(d)) => Ok((dir, s, d)),
        _ => Err(ParseError::new(
            n + 1,
            "`Src Device Id: <n> Src Device Type: <Cpu|Gpu>` and `Dst ...` banner lines",
        )),
    }
}

/// Reads the size table whose `Data Size` header is at `start`; returns the
/// position after it.
fn read_size_table(
    lines: &[(usize, &str)],
    start: usize,
    sweep: Sweep,
    agents: &[Text],
    custom_sizes: bool,
    out: &mut Parsed,
) -> usize {
    let (n, _) = lines[start];
    let mut j = start + 1;
    let mut rows = 0;
    let mut last_size = 0;
    while let Some((rn, rl)) = lines.get(j) {
        let toks: Vec<&str> = rl.words().collect();
        // A row starts with a size (`16 MB`); one of the wrong width (cut
        // mid-row, a cell lost) is a problem and the table goes on.
        let sized = toks.len() >= 2 && parse_binary_size(toks[0], toks[1]).is_some();
        if toks.len() != 6 && !sized {
            break;
        }
        let row = if toks.len() == 6 {
            size_row(*rn, &toks, sweep, agents)
        } else {
            Err(ParseError::new(
                *rn,
                format!(
                    "a size and four numbers: Avg Time(us) Avg BW(GB/s) Min Time(us) Peak BW(GB/s); found {} values",
                    toks.len()
                ),
            ))
        };
        if let Some((size, cells)) = out.row("rocm-bandwidth-test", row) {
            out.measurements.extend(cells);
            last_size = size;
            rows += 1;
        }
        j += 1;
    }
    if rows == 0 {
        out.truncated(n, "the size table has no rows");
    } else if j >= lines.len() && !custom_sizes && last_size < DEFAULT_LAST_SIZE {
        // Without -m the tool sweeps up to 512 MB; a table that ends
        // the file below that was cut.
        let at = lines.get(j - 1).map_or(n, |x| x.0);
        out.truncated(
            at,
            format!(
                "the size table stops at {} (the default sweep ends at 512 MB)",
                describe_size(last_size)
            ),
        );
    }
    j
}

/// One row of a size table, `<size> <unit> <avg us> <avg GB/s> <min us>
/// <peak GB/s>`: its size and its four cells.
fn size_row(
    rn: usize,
    toks: &[&str],
    (dir, s, d): Sweep,
    agents: &[Text],
) -> Result<(u64, Vec<Measurement>), ParseError> {
    let test: Text = if dir == Direction::Uni {
        "Unidirectional Benchmark".into()
    } else {
        "Bidirectional Benchmark".into()
    };
    let size = parse_binary_size(toks[0], toks[1]).ok_or_else(|| {
        ParseError::new(
            rn,
            format!("a size like `16 MB`, found `{} {}`", toks[0], toks[1]),
        )
    })?;
    let nums: Vec<f64> = toks[2..].iter().filter_map(|x| parse_number(x)).collect();
    if nums.len() != 4 {
        return Err(ParseError::new(
            rn,
            "four numbers: Avg Time(us) Avg BW(GB/s) Min Time(us) Peak BW(GB/s)",
        ));
    }
    let (src, dst) = (sweep_agent(agents, s), sweep_agent(agents, d));
    let mut cells = Vec::new();
    for (stat, bw, printed) in [
        (Statistic::Avg, nums[1], toks[3]),
        (Statistic::Peak, nums[3], toks[5]),
    ] {
        let mut m = rbt_cell(rn, &test, &src, &dst, dir, stat);
        m.size_bytes = Some(size);
        m.bandwidth_bytes_per_s = Some(bw * GB);
        m.as_printed = crate::evidence::printed(printed, "GB/s");
        cells.push(m);
    }
    for (stat, us, printed) in [
        (Statistic::Avg, nums[0], toks[2]),
        (Statistic::Min, nums[2], toks[4]),
    ] {
        let mut m = rbt_cell(rn, &test, &src, &dst, dir, stat);
        m.size_bytes = Some(size);
        m.latency_s = Some(us * 1e-6);
        m.as_printed = crate::evidence::printed(printed, "us");
        m.questions.unit = Unit::Microseconds;
        cells.push(m);
    }
    Ok((size, cells))
}

/// The largest size of rocm-bandwidth-test's default sweep (512 MB).
const DEFAULT_LAST_SIZE: u64 = 512 << 20;

/// Without a device list (some captures omit it), agent `k` keeps its number.
fn agent(agents: &[Text], k: usize) -> Text {
    agents
        .get(k)
        .cloned()
        .unwrap_or_else(|| format!("agent{k}").into())
}

/// An agent number and whether it is a CPU.
type Endpoint = (usize, bool);

/// `=== Src Device Id: 0 Src Device Type: Cpu ===` -> (0, is CPU).
fn banner_device(l: &str, which: &str) -> Option<Endpoint> {
    let t = l.trim().trim_matches('=').trim();
    let rest = t
        .strip_prefix(which)?
        .trim_start()
        .strip_prefix("Device Id:")?;
    let id = rest.words().next()?.parse().ok()?;
    let (_, ty) = rest.split_once("Device Type:")?;
    Some((id, ty.trim().eq_ignore_ascii_case("cpu")))
}

/// The id of a sweep endpoint: from the device list when the capture has
/// one, else `CPU@agent<k>` / `GPU@agent<k>` (the tool's agent number).
fn sweep_agent(agents: &[Text], (k, cpu): Endpoint) -> Text {
    match agents.get(k) {
        Some(a) => a.clone(),
        None => format!("{}@agent{k}", if cpu { "CPU" } else { "GPU" }).into(),
    }
}

fn rbt_cell(
    line: usize,
    test: &Text,
    src: &Text,
    dst: &Text,
    dir: Direction,
    stat: Statistic,
) -> Measurement {
    let kind = match (src.starts_with("CPU"), dst.starts_with("CPU")) {
        (true, false) => Kind::H2d,
        (false, true) => Kind::D2h,
        (true, true) => Kind::H2h,
        (false, false) if src == dst => Kind::D2d,
        _ => Kind::P2pCopy,
    };
    let mut m = Measurement::new("rocm-bandwidth-test", line, kind, test.clone(), stat);
    m.src = Some(src.clone());
    m.dst = Some(dst.clone());
    m.direction = dir;
    m.copy_engine = CopyEngine::Ce;
    m.buffers = match kind {
        Kind::H2d | Kind::D2h => Buffers::Mixed,
        Kind::H2h => Buffers::Host,
        _ => Buffers::Device,
    };
    m.verification = Verification::Unknown;
    let q = &mut m.questions;
    q.unit = Unit::GigabytesPerS;
    q.direction = DirectionNote::RowToColumn;
    q.path = match kind {
        Kind::H2d | Kind::D2h => Path::HostGpu { access: None },
        Kind::D2d => Path::WithinGpu,
        Kind::H2h => Path::HostHost,
        _ => Path::GpuToGpu { access: None },
    };
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    // captures/rx480-2gpu-xeon-e5v2 (version 1.0.0, two RX 480 on a Xeon
    // E5-2650 v2), its blank lines between rows removed.
    const V1_0_0: &str = "          RocmBandwidthTest Version: 1.0.0

          Device: 0,  Intel(R) Xeon(R) CPU E5-2650 v2 @ 2.60GHz
          Device: 1,  Device 67df
          Device: 2,  Device 67df

          Device Access

          D/D       0         1         2
          0         1         1         1
          1         1         1         0
          2         1         0         1

          Unidirectional peak bandwidth GB/s

          D/D       0           1           2
          0         N/A         10.175722   9.879670
          1         5.053346    29.020790   N/A
          2         4.910341    N/A         28.803466

          Bdirectional peak bandwidth GB/s

          D/D       0           1           2
          0         N/A         15.702547   15.661749
          1         15.367413   N/A         N/A
          2         15.564688   N/A         N/A
";

    #[test]
    fn reads_version_1_0_0_titles_typo_and_pci_id_device_names() {
        assert!(looks_like_rocm_bandwidth_test(V1_0_0, &[]));
        let p = parse_rocm_bandwidth_test(V1_0_0).unwrap();
        assert!(p.issues.is_empty(), "{:?}", p.issues);
        let cells: Vec<_> = (p.measurements.iter())
            .map(|m| {
                (
                    m.source.line,
                    m.src.as_deref().unwrap_or_default().to_string(),
                    m.dst.as_deref().unwrap_or_default().to_string(),
                    m.kind,
                    m.direction,
                    m.as_printed.to_string(),
                )
            })
            .collect();
        let cell = |line, src: &str, dst: &str| {
            cells
                .iter()
                .find(|c| c.0 == line && c.1 == src && c.2 == dst)
                .map(|c| (c.3, c.4, c.5.as_str()))
        };
        // `Device 67df` is a GPU: CPU0 -> GPU0 is a host-to-device copy.
        assert_eq!(
            cell(17, "CPU0", "GPU0"),
            Some((Kind::H2d, Direction::Uni, "10.175722 GB/s"))
        );
        assert_eq!(
            cell(18, "GPU0", "GPU0"),
            Some((Kind::D2d, Direction::Uni, "29.020790 GB/s"))
        );
        // "Bdirectional" is the bidirectional matrix.
        assert_eq!(
            cell(26, "GPU1", "CPU0"),
            Some((Kind::D2h, Direction::Bi, "15.564688 GB/s"))
        );
        // N/A cells (the GPUs cannot reach each other) are not figures.
        assert_eq!(cell(18, "GPU0", "GPU1"), None);
        assert_eq!(cells.len(), 6 + 4);
        // The access matrix between the two GPUs is their peer access:
        // `0` both ways (lines 11 and 12), nothing for a CPU or a GPU itself.
        let p2p: Vec<_> = p
            .topology
            .p2p
            .iter()
            .map(crate::evidence::topology::P2pCell::row)
            .collect();
        assert_eq!(
            p2p,
            [
                ("GPU0", "GPU1", "0", false, 11),
                ("GPU1", "GPU0", "0", false, 12)
            ]
        );
    }
}
