//! `rocm-bandwidth-test`: `-a/-A` matrices and `-s/-d` per-size sweeps.

#[allow(unused_imports)]
use super::*;

pub fn looks_like_rocm_bandwidth_test(text: &str, _lines: &[&str]) -> bool {
    text.contains("RocmBandwidthTest Version")
        || text.contains("Inter-Device Access")
        || text.contains("Unidirectional Benchmark Result")
        || text.contains("Bidirectional Benchmark Result")
        || text.contains("Bdirectional Benchmark Result")
}

/// Parses rocm-bandwidth-test: the device list (CPU and GPU agents), the
/// access and NUMA-distance matrices, the peak unidirectional and
/// bidirectional matrices of `-a/-A`, and the per-size tables of `-s/-d` runs
/// (including the tool's "Bdirectional" spelling).
pub fn parse_rocm_bandwidth_test(text: &str) -> Result<Parsed, ParseError> {
    let lines: Vec<(usize, &str)> = numbered_lines(text).collect();
    let mut out = Parsed::default();
    // Agent index -> id (CPU0, GPU0...), in the order the tool lists them.
    let mut agents: Vec<Text> = Vec::new();
    let (mut cpus, mut gpus) = (0, 0);
    let mut access: std::collections::BTreeMap<(usize, usize), bool> = Default::default();
    let mut i = 0;
    // A `-s/-d` sweep: direction, and (agent, is CPU) of source and destination.
    type Sweep = (Direction, Endpoint, Endpoint);
    let mut sweep: Option<Sweep> = None;
    // `Launch Command is: ... -m <sizes>` replaces the default size list.
    let custom_sizes = lines
        .iter()
        .any(|(_, l)| l.contains("Launch Command is:") && l.split_whitespace().any(|w| w == "-m"));
    while i < lines.len() {
        let (n, l) = lines[i];
        let t = l.trim();
        if let Some(rest) = t.strip_prefix("Device:") {
            // `Device: 4,  ,  GPU-ab43...,  c9:0.0` or `Device: 0,  AMD EPYC ...`
            let fields: Vec<&str> = rest.split(',').map(str::trim).collect();
            let is_gpu = fields.iter().any(|f| f.starts_with("GPU-")) || fields.len() >= 4;
            if is_gpu {
                agents.push(format!("GPU{gpus}").into());
                gpus += 1;
            } else {
                agents.push(format!("CPU{cpus}").into());
                cpus += 1;
            }
            i += 1;
            continue;
        }
        let matrix = match t {
            "Inter-Device Access" => Some("access"),
            "Inter-Device Numa Distance" => Some("numa"),
            "Unidirectional copy peak bandwidth GB/s" => Some("uni"),
            "Bidirectional copy peak bandwidth GB/s" => Some("bi"),
            _ => None,
        };
        if let Some(which) = matrix {
            let (rows, next) = read_index_matrix(&lines, i + 1, "D/D", true);
            let ncols = rows.first().map_or(0, |r| r.cells.len());
            if rows.is_empty() {
                out.truncated(n, format!("`{t}` has no rows"));
            } else if rows.len() < ncols {
                let at = rows.last().map_or(n, |r| r.line);
                out.truncated(
                    at,
                    format!("`{t}` stops after {} of its {ncols} rows", rows.len()),
                );
            }
            let title: Text = t.to_string().into();
            for r in &rows {
                let (row, rn) = (&r.index, &r.line);
                for (col, v) in r.cells.iter().enumerate() {
                    match which {
                        "access" => {
                            access.insert((*row, col), *v == "1");
                        }
                        "numa" => {}
                        _ => {
                            if *v == "N/A" {
                                continue;
                            }
                            let value = parse_number(v).ok_or_else(|| {
                                ParseError::new(*rn, format!("a number or N/A, found `{v}`"))
                            })?;
                            let dir = if which == "bi" {
                                Direction::Bi
                            } else {
                                Direction::Uni
                            };
                            let (src, dst) = (agent(&agents, *row), agent(&agents, col));
                            let mut m = rbt_cell(*rn, &title, &src, &dst, dir, Statistic::Peak);
                            m.bandwidth_bytes_per_s = Some(value * GB);
                            m.as_printed = format!("{v} GB/s");
                            if let Some(false) = access.get(&(*row, col)) {
                                m.questions.path = format!(
                                    "{} (the access matrix says {src} cannot access {dst} directly)",
                                    m.questions.path
                                ).into();
                            }
                            out.measurements.push(m);
                        }
                    }
                }
            }
            i = next;
            continue;
        }
        if t.contains("Benchmark Result") {
            let dir = if t.contains("Unidirectional") {
                Direction::Uni
            } else {
                Direction::Bi
            };
            // Next two banner lines carry the source and destination.
            let src = lines.get(i + 1).and_then(|x| banner_device(x.1, "Src"));
            let dst = lines.get(i + 2).and_then(|x| banner_device(x.1, "Dst"));
            match (src, dst) {
                (Some(s), Some(d)) => sweep = Some((dir, s, d)),
                _ => {
                    return Err(ParseError::new(
                        n + 1,
                        "`Src Device Id: <n> Src Device Type: <Cpu|Gpu>` and `Dst ...` banner lines",
                    ));
                }
            }
            i += 3;
            continue;
        }
        if t.starts_with("Data Size") {
            let Some((dir, s, d)) = sweep else {
                return Err(ParseError::new(
                    n,
                    "a `Benchmark Result` banner before the size table",
                ));
            };
            let test: Text = if dir == Direction::Uni {
                "Unidirectional Benchmark".into()
            } else {
                "Bidirectional Benchmark".into()
            };
            let mut j = i + 1;
            let mut rows = 0;
            let mut last_size = 0;
            while let Some((rn, rl)) = lines.get(j) {
                let toks: Vec<&str> = rl.split_whitespace().collect();
                if toks.len() != 6 {
                    break;
                }
                let size = parse_binary_size(toks[0], toks[1]).ok_or_else(|| {
                    ParseError::new(
                        *rn,
                        format!("a size like `16 MB`, found `{} {}`", toks[0], toks[1]),
                    )
                })?;
                last_size = size;
                let nums: Vec<f64> = toks[2..].iter().filter_map(|x| parse_number(x)).collect();
                if nums.len() != 4 {
                    return Err(ParseError::new(
                        *rn,
                        "four numbers: Avg Time(us) Avg BW(GB/s) Min Time(us) Peak BW(GB/s)",
                    ));
                }
                let (src, dst) = (sweep_agent(&agents, s), sweep_agent(&agents, d));
                for (stat, bw, printed) in [
                    (Statistic::Avg, nums[1], toks[3]),
                    (Statistic::Peak, nums[3], toks[5]),
                ] {
                    let mut m = rbt_cell(*rn, &test, &src, &dst, dir, stat);
                    m.size_bytes = Some(size);
                    m.bandwidth_bytes_per_s = Some(bw * GB);
                    m.as_printed = format!("{printed} GB/s");
                    m.questions.message_size = describe_size(size);
                    out.measurements.push(m);
                }
                for (stat, us, printed) in [
                    (Statistic::Avg, nums[0], toks[2]),
                    (Statistic::Min, nums[2], toks[4]),
                ] {
                    let mut m = rbt_cell(*rn, &test, &src, &dst, dir, stat);
                    m.size_bytes = Some(size);
                    m.latency_s = Some(us * 1e-6);
                    m.as_printed = format!("{printed} us");
                    m.questions.unit = "microseconds per copy, as printed".into();
                    m.questions.message_size = describe_size(size);
                    out.measurements.push(m);
                }
                rows += 1;
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
            i = j;
            continue;
        }
        i += 1;
    }
    Ok(out)
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
    let id = rest.split_whitespace().next()?.parse().ok()?;
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
    q.unit = "GB/s = 1e9 bytes per second, as printed".into();
    q.direction = match dir {
        Direction::Uni => "unidirectional: row agent copies to column agent".into(),
        Direction::Bi => "bidirectional: both directions at once, figure is the sum of both".into(),
    };
    q.message_size = NOT_STATED.into();
    q.warm_up = NOT_STATED.into();
    q.outstanding = NOT_STATED.into();
    q.path = match kind {
        Kind::H2d | Kind::D2h => {
            "host memory of a CPU agent (NUMA node) and a GPU, by DMA engines".into()
        }
        Kind::D2d => "within one GPU".into(),
        Kind::H2h => "between host memory of two CPU agents".into(),
        _ => "GPU to GPU by DMA engines (xGMI or PCIe: see the topology)".into(),
    };
    q.context = NOT_STATED.into();
    m
}
