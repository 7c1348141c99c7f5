//! NVIDIA topology transcripts: `nvidia-smi topo -m`, `nvidia-smi topo -p2p`
//! and `nvidia-smi nvlink --status`.
//!
//! The matrix parsers work on whitespace tokens rather than on column
//! positions: captures in the wild have tabs expanded to spaces, headers whose
//! tabs were lost (`GPU0GPU1GPU2`), and affinity columns that ran into each
//! other. Row labels are the authority on device order; the header is checked
//! against them.

use super::matrix::{Matrix, Row, read_matrix};
use super::{
    CpuRange, Device, DeviceKind, Link, LinkClass, NvlinkPort, P2pCell, Topology, parse_cpu_list,
    parse_plain_u32,
};
use crate::evidence::SplitWords;
use crate::evidence::{Note, ParseError, Parsed, Source, numbered_lines};

const TOPO_CODES: [&str; 7] = ["PIX", "PXB", "PHB", "NODE", "SYS", "SOC", "X"];
const P2P_CODES: [&str; 8] = ["X", "OK", "NS", "CNS", "GNS", "TNS", "U", "DR"];

/// Maps an `nvidia-smi topo -m` cell to its class. NV# is a bonded set of
/// NVLinks; PIX/PXB stay below the host bridge; PHB/NODE cross a host bridge
/// (or host bridges of one NUMA node); SYS (and SOC, its name before driver
/// ~384) crosses the inter-socket link.
pub fn class_of_code(code: &str) -> (LinkClass, Option<u32>) {
    if let Some(n) = code.strip_prefix("NV").and_then(parse_plain_u32) {
        return (LinkClass::DirectLink, Some(n));
    }
    let class = match code {
        "X" => LinkClass::SelfLink,
        "PIX" | "PXB" => LinkClass::PcieSwitch,
        "PHB" | "NODE" => LinkClass::PcieHost,
        "SYS" | "SOC" => LinkClass::CrossSocket,
        _ => LinkClass::Unknown,
    };
    (class, None)
}

fn is_topo_code(t: &str) -> bool {
    TOPO_CODES.contains(&t) || t.strip_prefix("NV").and_then(parse_plain_u32).is_some()
}

pub(super) fn is_code_shaped(t: &str) -> bool {
    t.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && t.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

pub(super) fn is_gpu_label(t: &str) -> bool {
    t.strip_prefix("GPU").and_then(parse_plain_u32).is_some()
}

/// A NIC row label: `NIC3`, or an adapter name such as `mlx5_0` in older
/// drivers that printed names instead of a legend.
fn is_nic_label(t: &str) -> bool {
    !is_gpu_label(t)
        && t.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
}

fn row_label(first: &str, toks: &[&str]) -> bool {
    is_gpu_label(first) || (is_nic_label(first) && toks.len() > 1)
}

/// Trailing columns of `nvidia-smi topo -m`, in the order drivers print them.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Extra {
    CpuAffinity,
    NumaAffinity,
    GpuNumaId,
}

/// Splits the header text that follows the device names into the known
/// trailing columns. Works on the header with all whitespace removed, since
/// some captures lost the separators.
fn trailing_columns(rest: &str) -> Result<Vec<Extra>, String> {
    let mut out = Vec::new();
    let mut s = rest;
    while !s.is_empty() {
        let (col, name) = [
            (Extra::CpuAffinity, "CPUAffinity"),
            (Extra::NumaAffinity, "NUMAAffinity"),
            (Extra::GpuNumaId, "GPUNUMAID"),
        ]
        .into_iter()
        .find(|(_, name)| s.starts_with(name))
        .ok_or_else(|| {
            format!("a known column (CPU Affinity, NUMA Affinity, GPU NUMA ID) at `{s}`")
        })?;
        out.push(col);
        s = &s[name.len()..];
    }
    Ok(out)
}

fn parse_numa(v: &str) -> Option<Option<u32>> {
    if v == "N/A" {
        Some(None)
    } else {
        parse_plain_u32(v).map(Some)
    }
}

fn parse_affinity(v: &str) -> Option<Option<Vec<CpuRange>>> {
    if v == "N/A" {
        Some(None)
    } else {
        parse_cpu_list(v).map(Some)
    }
}

/// Assigns the values after a row's cells to the trailing columns. When one
/// value is missing and the CPU list ran into the NUMA column
/// (`0-45,92-1370` for `0-45,92-137` and `0`), the split is accepted only if
/// exactly one split point gives a valid ascending CPU list.
fn assign_extras(
    dev: &mut Device,
    cols: &[Extra],
    vals: &[&str],
    line: usize,
) -> Result<(), ParseError> {
    let mut vals: Vec<String> = vals.iter().map(|s| s.to_string()).collect();
    if vals.len() + 1 == cols.len()
        && let Some(ci) = cols.iter().position(|c| *c == Extra::CpuAffinity)
        && cols.get(ci + 1) == Some(&Extra::NumaAffinity)
        && ci < vals.len()
    {
        let glued = vals[ci].clone();
        let splits: Vec<(String, String)> = (1..glued.len())
            .filter(|&k| glued.is_char_boundary(k))
            .map(|k| (glued[..k].to_string(), glued[k..].to_string()))
            .filter(|(cpu, numa)| parse_cpu_list(cpu).is_some() && parse_plain_u32(numa).is_some())
            .collect();
        match splits.as_slice() {
            [(cpu, numa)] => {
                vals[ci] = cpu.clone();
                vals.insert(ci + 1, numa.clone());
            }
            [] => {
                return Err(ParseError::new(
                    line,
                    format!(
                        "{} values after the matrix cells, found {}",
                        cols.len(),
                        vals.len()
                    ),
                ));
            }
            many => {
                return Err(ParseError::new(
                    line,
                    format!(
                        "CPU and NUMA affinity separated; `{glued}` can be split {} ways",
                        many.len()
                    ),
                ));
            }
        }
    }
    if vals.len() > cols.len() || (vals.len() < cols.len() && dev.kind == DeviceKind::Gpu) {
        return Err(ParseError::new(
            line,
            format!(
                "{} values after the matrix cells, found {}",
                cols.len(),
                vals.len()
            ),
        ));
    }
    for (col, v) in cols.iter().zip(&vals) {
        match col {
            Extra::CpuAffinity => {
                dev.cpu_affinity = parse_affinity(v).ok_or_else(|| {
                    ParseError::new(
                        line,
                        format!("a CPU list like 0-19,80-99 or N/A, found `{v}`"),
                    )
                })?
            }
            Extra::NumaAffinity => {
                dev.numa_node = parse_numa(v).ok_or_else(|| {
                    ParseError::new(line, format!("a NUMA node number or N/A, found `{v}`"))
                })?
            }
            Extra::GpuNumaId => {
                dev.gpu_numa_node = parse_numa(v).ok_or_else(|| {
                    ParseError::new(line, format!("a GPU NUMA id or N/A, found `{v}`"))
                })?
            }
        }
    }
    Ok(())
}

/// Parses `nvidia-smi topo -m` of any driver era.
pub fn parse_topo_matrix(text: &str) -> Result<Parsed, ParseError> {
    let mut lines: Vec<(usize, &str)> = crate::evidence::numbered_vec(text);
    // Rows pasted without their header: the header the rows imply.
    let implied = implied_header(&lines);
    if let Some((at, h)) = &implied {
        lines.insert(*at, (0, h.as_str()));
    }
    let mut out = parse_topo_lines(&lines)?;
    if let Some((at, _)) = implied {
        let first = lines.get(at + 1).map_or(1, |l| l.0);
        out.note(
            first,
            "no header line: the columns are taken to be the rows' devices in their order \
             (`topo -m` prints a square matrix), then the affinity columns",
        );
    }
    Ok(out)
}

/// The header of `topo -m` rows pasted without it (`GPU0  X  NV12 ...`
/// first): the row labels in order, then as many affinity columns as the
/// widest row has past its cells. Its index in `lines` and its text;
/// `None` where a header is there or the first line is no GPU0 row.
fn implied_header(lines: &[(usize, &str)]) -> Option<(usize, String)> {
    let at = lines.iter().position(|(_, l)| !l.trim().is_empty())?;
    let mut first = lines[at].1.words();
    if first.next() != Some("GPU0") || first.next() != Some("X") {
        return None;
    }
    let rows: Vec<Vec<&str>> = lines[at..]
        .iter()
        .map(|(_, l)| l.words().collect::<Vec<&str>>())
        .take_while(|w| w.first().is_some_and(|f| row_label(f, w)))
        .collect();
    let labels: Vec<&str> = rows.iter().map(|w| w[0]).collect();
    let extra = rows
        .iter()
        .map(|w| w.len().saturating_sub(1 + labels.len()))
        .max()?;
    const AFFINITY: [&str; 3] = ["CPU Affinity", "NUMA Affinity", "GPU NUMA ID"];
    let mut h = String::new();
    for c in labels.iter().chain(&AFFINITY[..extra.min(AFFINITY.len())]) {
        h.push('\t');
        h.push_str(c);
    }
    Some((at, h))
}

/// [`parse_topo_matrix`] over numbered lines.
fn parse_topo_lines(lines: &[(usize, &str)]) -> Result<Parsed, ParseError> {
    let m = read_matrix(
        lines,
        |toks| toks.first().is_some_and(|t| t.starts_with("GPU0")) && !toks.contains(&"X"),
        row_label,
        Some(&["X"]),
        "topology matrix",
    )?;
    let cols = header_columns(&m)?;
    let nic_names = nic_legend(&lines[m.end..]);
    check_codes(&m)?;
    let mut out = Parsed::default();
    m.flag_cut("nvidia-smi-topo", "topology matrix", &mut out);
    let mut topo = Topology::default();
    let mut nic_count = 0;
    for row in &m.rows {
        // Trailing columns that cannot be read are a problem at the row's
        // line; the device and its links are kept.
        let (dev, bad) = row_device(row, &cols, &nic_names, &mut nic_count);
        if let Some(e) = bad {
            out.row::<()>("nvidia-smi-topo", Err(e));
        }
        topo.devices.push(dev);
    }
    // Devices the header names whose rows were cut: known by the header
    // alone (no affinity); their pairs with the rows read are told by
    // those rows' cells.
    for label in &m.missing {
        let row = Row::not_read(m.header_line, label);
        topo.devices
            .push(row_device(&row, &cols, &nic_names, &mut nic_count).0);
    }
    let ids: Vec<String> = topo.devices.iter().map(|d| d.id.clone()).collect();
    out.notes = pair_links(&m, &ids, &mut topo);
    topo.sort();
    out.topology = topo;
    if m.missing.is_empty() {
        legend_cut(&lines[m.end..], "NV#", &mut out);
    }
    Ok(out)
}

/// The legend nvidia-smi prints under a matrix ends with a known line:
/// `NV#  = Connection traversing a bonded set of # NVLinks` under
/// `topo -m`, `U    = Unknown` under `topo -p2p`. A legend that starts and
/// stops before that line, at the transcript's end, was cut.
fn legend_cut(after: &[(usize, &str)], last: &str, out: &mut Parsed) {
    let Some(start) = after.iter().position(|(_, l)| l.trim() == "Legend:") else {
        return;
    };
    let legend = &after[start..];
    let has_last = legend.iter().any(|(_, l)| l.trim_start().starts_with(last));
    let last_text = legend.iter().rev().find(|(_, l)| !l.trim().is_empty());
    if !has_last && let Some((n, _)) = last_text {
        out.cut(
            *n,
            format!("the rest of the legend (its `{}` line)", last.trim()),
        );
    }
}

/// The header, whitespace removed, must spell the row labels in order; what
/// follows them names the trailing columns.
fn header_columns(m: &Matrix<'_>) -> Result<Vec<Extra>, ParseError> {
    let squeezed: String = m.header.words().collect();
    let labels: String = m.labels().concat();
    let Some(rest) = squeezed.strip_prefix(&labels) else {
        return Err(ParseError::new(
            m.header_line,
            format!(
                "a header naming the row devices in order ({})",
                m.labels().join(" ")
            ),
        ));
    };
    trailing_columns(rest).map_err(|e| ParseError::new(m.header_line, e))
}

/// NIC legend after the matrix: `NIC0: mlx5_0`.
fn nic_legend(lines: &[(usize, &str)]) -> std::collections::BTreeMap<String, String> {
    let mut nic_names = std::collections::BTreeMap::new();
    let mut in_nic_legend = false;
    for (_, l) in lines {
        let t = l.trim();
        if t == "NIC Legend:" {
            in_nic_legend = true;
        } else if in_nic_legend && let Some((k, v)) = t.split_once(':') {
            nic_names.insert(k.trim().to_string(), v.trim().to_string());
        }
    }
    nic_names
}

/// Codes are upper-case words (X, NV12, PXB...); anything else means the
/// row is short and the next column slid into the matrix.
fn check_codes(m: &Matrix<'_>) -> Result<(), ParseError> {
    let n = m.rows.len();
    for row in m.rows.iter().filter(|r| !r.bad) {
        if let Some((j, bad)) = row
            .cells
            .iter()
            .enumerate()
            .find(|(_, c)| !is_code_shaped(c))
        {
            return Err(ParseError::new(
                row.line,
                format!(
                    "{n} link codes after `{}` (one per device row); `{bad}` in column {} is not a link code",
                    row.label,
                    j + 1
                ),
            ));
        }
    }
    Ok(())
}

/// The device a matrix row describes, with its trailing columns. A NIC
/// labelled by adapter name (older drivers) gets the next `NIC<n>` id and
/// keeps the name; `nic_count` counts the NIC rows so far.
fn row_device(
    row: &Row<'_>,
    cols: &[Extra],
    nic_names: &std::collections::BTreeMap<String, String>,
    nic_count: &mut usize,
) -> (Device, Option<ParseError>) {
    let mut dev = if is_gpu_label(row.label) {
        Device::new(row.label, DeviceKind::Gpu, Source::line(row.line))
    } else {
        let id = if row
            .label
            .strip_prefix("NIC")
            .and_then(parse_plain_u32)
            .is_some()
        {
            row.label.to_string()
        } else {
            format!("NIC{nic_count}")
        };
        let mut d = Device::new(id, DeviceKind::Nic, Source::line(row.line));
        d.name = Some(
            nic_names
                .get(row.label)
                .cloned()
                .unwrap_or_else(|| row.label.to_string()),
        );
        *nic_count += 1;
        d
    };
    if row.bad {
        return (dev, None);
    }
    let bad = assign_extras(&mut dev, cols, &row.rest, row.line).err();
    (dev, bad)
}

/// One link per device pair, from the cell above the diagonal and the one
/// below it. Returns a note for every pair printed differently each way.
/// A device whose row was cut ([`Matrix::missing`]) pairs by the read
/// rows' cells alone.
fn pair_links(m: &Matrix<'_>, ids: &[String], topo: &mut Topology) -> Vec<Note> {
    let mut notes = Vec::new();
    // Room for every pair up front (row i pairs with the devices after
    // it): the links are not moved at each doubling.
    let n = ids.len().min(m.rows.len() + m.missing.len());
    topo.links
        .reserve((0..m.rows.len()).map(|i| n.saturating_sub(i + 1)).sum());
    let cut = Row::not_read(m.header_line, "");
    for i in 0..m.rows.len() {
        for j in i + 1..n {
            let (ri, rj) = (&m.rows[i], m.rows.get(j).unwrap_or(&cut));
            // A row not read: the pair is told by the other row alone.
            let (code, back) = match (ri.bad, rj.bad) {
                (true, true) => continue,
                (true, false) => (rj.cells[i], rj.cells[i]),
                (false, true) => (ri.cells[j], ri.cells[j]),
                (false, false) => (ri.cells[j], rj.cells[i]),
            };
            if code != back {
                notes.push(Note {
                    line: m.rows[j].line,
                    text: format!(
                        "{}-{} printed as `{code}` one way and `{back}` the other; the worse is kept",
                        ids[i], ids[j]
                    ),
                });
            }
            let (c1, n1) = class_of_code(code);
            let (c2, n2) = class_of_code(back);
            let (class, code, nvlinks) = if c2 > c1 {
                (c2, back, n2)
            } else {
                (c1, code, n1)
            };
            // The read rows' lines, in a Vec sized for both; one row at
            // least was read (both bad is skipped above).
            let mut sources = Vec::with_capacity(2);
            let read = [ri, rj].into_iter().filter(|r| !r.bad);
            sources.extend(read.map(|r| Source::line(r.line)));
            if sources.is_empty() {
                sources.push(Source::line(ri.line));
            }
            let mut link = Link::with_sources(&ids[i], &ids[j], class, sources);
            link.code = Some(code.to_string());
            link.nvlinks = nvlinks;
            topo.links.push(link);
        }
    }
    notes
}

/// Parses `nvidia-smi topo -p2p <r|w|n|a|p>`. Which capability was asked is
/// not printed, so the cells keep the row/column reading of the matrix:
/// `src` is the row, `dst` the column.
pub fn parse_p2p_status(text: &str) -> Result<Parsed, ParseError> {
    let lines: Vec<(usize, &str)> = crate::evidence::numbered_vec(text);
    let m = read_matrix(
        &lines,
        |toks| !toks.is_empty() && toks.iter().all(|t| is_gpu_label(t)),
        row_label,
        Some(&["X"]),
        "P2P status",
    )?;
    let header: Vec<&str> = m.header.words().collect();
    let labels: Vec<&str> = m.labels();
    if header != labels {
        return Err(ParseError::new(
            m.header_line,
            format!(
                "a header naming the row devices in order ({})",
                labels.join(" ")
            ),
        ));
    }
    let mut out = Parsed::default();
    m.flag_cut("nvidia-smi-p2p", "P2P status matrix", &mut out);
    let mut topo = Topology::default();
    for row in &m.rows {
        if !is_gpu_label(row.label) {
            return Err(ParseError::new(row.line, "a row label GPU<n>"));
        }
        if !row.rest.is_empty() {
            out.bad_row(
                row.line,
                format!(
                    "nvidia-smi-p2p: expected {} status codes, found {}",
                    labels.len(),
                    labels.len() + row.rest.len()
                ),
            );
            continue;
        }
        topo.devices.push(Device::new(
            row.label,
            DeviceKind::Gpu,
            Source::line(row.line),
        ));
        if row.bad {
            continue;
        }
        for (j, code) in row.cells.iter().enumerate() {
            if labels[j] == row.label {
                continue;
            }
            if !code.chars().all(|c| c.is_ascii_uppercase()) {
                out.bad_row(
                    row.line,
                    format!("nvidia-smi-p2p: expected a P2P status code (OK, NS, CNS, GNS, TNS, U), found `{code}`"),
                );
                continue;
            }
            topo.p2p.push(P2pCell {
                src: row.label.to_string(),
                dst: labels[j].to_string(),
                status: code.to_string(),
                supported: *code == "OK",
                source: Source::line(row.line),
            });
        }
    }
    // GPUs whose rows were cut are known by the header alone.
    for label in &m.missing {
        topo.devices.push(Device::new(
            *label,
            DeviceKind::Gpu,
            Source::line(m.header_line),
        ));
    }
    topo.sort();
    out.topology = topo;
    if m.missing.is_empty() {
        legend_cut(&lines[m.end..], "U ", &mut out);
    }
    Ok(out)
}

/// `GPU 0: <name> (UUID: ...)`, or `GPU 0: Tesla V100-SXM2-32GB` as older
/// drivers print it in `nvlink --status`: (index, name, uuid if printed).
fn parse_gpu_line(l: &str) -> Option<(u32, String, Option<String>)> {
    let rest = l.trim().strip_prefix("GPU ")?;
    let (idx, rest) = rest.split_once(':')?;
    let idx = parse_plain_u32(idx.trim())?;
    match rest.rsplit_once("(UUID:") {
        Some((name, uuid)) => {
            let uuid = uuid.trim().strip_suffix(')')?.trim();
            Some((idx, name.trim().to_string(), Some(uuid.to_string())))
        }
        None if !rest.trim().is_empty() && !rest.contains(':') => {
            Some((idx, rest.trim().to_string(), None))
        }
        None => None,
    }
}

/// Parses `nvidia-smi nvlink --status` (`-s`): per GPU, each link's rate or
/// `<inactive>`, or the NVML line saying every link is inactive.
pub fn parse_nvlink_status(text: &str) -> Result<Parsed, ParseError> {
    let mut topo = Topology::default();
    let mut notes = Vec::new();
    let mut elided = Vec::new();
    let mut gpu: Option<String> = None;
    let mut parsed_issues: Vec<(usize, String)> = Vec::new();
    for (n, l) in numbered_lines(text) {
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        if let Some((idx, name, uuid)) = parse_gpu_line(l) {
            let id = format!("GPU{idx}");
            let mut d = Device::new(&id, DeviceKind::Gpu, Source::line(n));
            d.name = Some(name);
            d.uuid = uuid;
            topo.devices.push(d);
            gpu = Some(id);
            continue;
        }
        if t == "..." || t == "[snip]" {
            // Passed over (a note) and flagged as a cut below.
            notes.push(Note {
                line: n,
                text: "elided by whoever captured it; links after this line are not listed".into(),
            });
            elided.push((n, t));
            continue;
        }
        let Some(g) = gpu.clone() else {
            return Err(ParseError::new(
                n,
                "a `GPU <n>: <name> (UUID: ...)` line first",
            ));
        };
        if t.contains("Unable to retrieve NVLink information")
            && t.to_ascii_lowercase().contains("inactive")
        {
            topo.nvlink.push(NvlinkPort {
                gpu: g,
                link: None,
                active: false,
                rate_bytes_per_s: None,
                as_printed: t.to_string(),
                source: Source::line(n),
            });
            continue;
        }
        // A line that cannot be read is a problem at its line; the GPUs
        // and links around it are still read.
        let parsed = t.strip_prefix("Link ").and_then(|r| r.split_once(':'));
        let Some((num, val)) = parsed else {
            parsed_issues.push((
                n,
                "`Link <n>: <rate> GB/s` or `Link <n>: <inactive>`".into(),
            ));
            continue;
        };
        let Some(link) = parse_plain_u32(num.trim()) else {
            parsed_issues.push((n, format!("a link number, found `{}`", num.trim())));
            continue;
        };
        let val = val.trim();
        let (active, rate) = if val == "<inactive>" {
            (false, None)
        } else if let Some(r) = val
            .strip_suffix("GB/s")
            .and_then(|r| r.trim().parse::<f64>().ok())
        {
            (true, Some(r * 1e9))
        } else if let Some(remote) = val.strip_prefix("Remote Device ") {
            // `nvidia-smi nvlink -R`: the link is up and goes to `remote`
            // (a switch or GPU bus id and its link number); no rate.
            if remote.matches(':').count() < 3 {
                parsed_issues.push((
                    n,
                    format!("`Remote Device <bus id>: Link <n>`, found `{val}` (cut?)"),
                ));
                continue;
            }
            (true, None)
        } else {
            parsed_issues.push((
                n,
                format!("a rate like `26.562 GB/s` or `<inactive>`, found `{val}`"),
            ));
            continue;
        };
        topo.nvlink.push(NvlinkPort {
            gpu: g,
            link: Some(link),
            active,
            rate_bytes_per_s: rate,
            as_printed: val.to_string(),
            source: Source::line(n),
        });
    }
    if topo.devices.is_empty() {
        return Err(ParseError::new(1, "a `GPU <n>: <name> (UUID: ...)` line"));
    }
    topo.sort();
    let mut out = Parsed {
        topology: topo,
        notes,
        ..Parsed::default()
    };
    for (n, expected) in parsed_issues {
        out.bad_row(n, format!("nvidia-smi-nvlink: expected {expected}"));
    }
    // An author's `...` or `[snip]`: a cut inside the transcript.
    for (n, t) in elided {
        out.truncated(
            n,
            format!("cut at line {n} by whoever captured it (`{t}`): the links it stands for not in the transcript"),
        );
    }
    Ok(out)
}

mod detect;
pub(crate) use detect::{is_nvlink_gpu_line, is_p2p_header, is_p2p_row};
pub use detect::{looks_like_nvlink_status, looks_like_p2p_status, looks_like_topo_matrix};

#[cfg(test)]
mod tests;
