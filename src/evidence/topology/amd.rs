//! AMD topology transcripts: `rocm-smi --showtopo` (and its sub-views
//! `--showtopoweight`, `--showtopohops`, `--showtopotype`, `--showtoponuma`,
//! `--shownodesbw`) and `amd-smi topology`.
//!
//! Both tools print the KFD topology: a link type (XGMI or PCIE), a hop count
//! and a weight per pair, and per GPU its NUMA node. The class of a pair
//! follows [`amd_class`].

use crate::evidence::SplitWords;
use std::collections::BTreeMap;

use super::matrix::{Matrix, read_matrix};
use super::nvidia::is_gpu_label;
use super::{Device, DeviceKind, Link, LinkClass, P2pCell, Topology, parse_plain_u32};
use crate::evidence::{Note, ParseError, Parsed, Source};

/// The class of an AMD pair. The rule, in order:
/// 1. link type `XGMI` -> `direct-link` when the pair is one xGMI hop apart
///    (or the hop count is not given); two or more hops reach the peer
///    through other GPUs' xGMI links, which is not a direct link, and no
///    class of ours names that path -> `unknown`.
/// 2. link type `PCIE` -> `cross-socket` when the two GPUs' NUMA nodes are
///    known and differ (the same boundary nvidia-smi calls SYS), or when the
///    hop count is 3 or more (KFD routes a PCIe peer through CPU nodes:
///    GPU-CPU-GPU is 2 hops, GPU-CPU-CPU-GPU is 3); otherwise `pcie-host`
///    when the NUMA nodes are equal or the hop count is 2 or less. KFD does
///    not describe PCIe switches, so an AMD pair is never `pcie-switch`.
/// 3. no link type, but a min-max XGMI bandwidth above zero -> `direct-link`
///    (KFD reports that bandwidth for direct XGMI peers only; 0-0 means the
///    pair has no direct XGMI link, not which path it takes).
/// 4. no link type, only a weight (a `--showtopoweight` table alone):
///    KFD weighs an xGMI io-link 15 per xGMI hop (`kfd_topology.c`:
///    `weight = 15 * num_hops_xgmi`) and a PCIe path as the sum of its
///    links (20 per GPU-CPU link plus the NUMA distance between CPU nodes:
///    the shipped captures show 52 and 72 for three hops). So 15 -> one
///    xGMI hop, `direct-link`; 30, 45 (two, three xGMI hops) are not
///    direct -> `unknown`, as is any other weight.
/// 5. anything else -> `unknown`.
pub fn amd_class(
    code: Option<&str>,
    hops: Option<u32>,
    numa: (Option<u32>, Option<u32>),
    max_bandwidth_bytes_per_s: Option<f64>,
    weight: Option<u32>,
) -> LinkClass {
    match code {
        Some("XGMI") if hops.is_some_and(|h| h >= 2) => LinkClass::Unknown,
        Some("XGMI") => LinkClass::DirectLink,
        Some("PCIE") => {
            let numa_differs = matches!(numa, (Some(a), Some(b)) if a != b);
            let numa_same = matches!(numa, (Some(a), Some(b)) if a == b);
            if numa_differs || hops.is_some_and(|h| h >= 3) {
                LinkClass::CrossSocket
            } else if numa_same || hops.is_some_and(|h| h <= 2) {
                LinkClass::PcieHost
            } else {
                LinkClass::Unknown
            }
        }
        Some(_) => LinkClass::Unknown,
        None if max_bandwidth_bytes_per_s.is_some_and(|b| b > 0.0) => LinkClass::DirectLink,
        None if weight == Some(15) => LinkClass::DirectLink,
        None => LinkClass::Unknown,
    }
}

pub fn looks_like_rocm_smi(text: &str, lines: &[&str]) -> bool {
    has!(text, "ROCm System Management Interface")
        || has!(text, "==")
            && crate::evidence::numbered(lines).any(|(_, l)| {
                banner(l).is_some_and(|b| {
                    b.ends_with("between two GPUs") || b == "Numa Nodes" || b == "Bandwidth"
                })
            })
}

pub fn looks_like_amd_smi(text: &str, lines: &[&str]) -> bool {
    // Each of the titles below ends so: no line pass without it.
    has!(text, " TABLE:")
        && crate::evidence::numbered(lines).any(|(_, l)| {
            let t = l.trim();
            matches!(
                t,
                "ACCESS TABLE:" | "WEIGHT TABLE:" | "HOPS TABLE:" | "LINK TYPE TABLE:"
            )
        })
}

/// `===== Weight between two GPUs =====` -> `Weight between two GPUs`.
fn banner(l: &str) -> Option<&str> {
    let t = l.trim();
    if !t.starts_with("==") || !t.ends_with("==") {
        return None;
    }
    Some(t.trim_matches('=').trim())
}

/// A titled part of a transcript: its heading's text and line, and the
/// lines under it.
struct Section<'a> {
    name: &'a str,
    line: usize,
    body: Vec<(usize, &'a str)>,
}

/// Splits `lines` at every line `heading` accepts. Non-blank text before the
/// first heading is an error (`expected` says what should come first).
fn split_sections<'a>(
    lines: &[(usize, &'a str)],
    heading: impl Fn(&'a str) -> Option<&'a str>,
    expected: &str,
) -> Result<Vec<Section<'a>>, ParseError> {
    let mut out: Vec<Section<'a>> = Vec::new();
    for &(n, l) in lines {
        if let Some(name) = heading(l) {
            out.push(Section {
                name,
                line: n,
                body: Vec::new(),
            });
        } else if let Some(s) = out.last_mut() {
            s.body.push((n, l));
        } else if !l.trim().is_empty() {
            return Err(ParseError::new(n, expected));
        }
    }
    Ok(out)
}

/// The per-pair facts of one node, before classes are decided.
#[derive(Default)]
struct Pairs {
    labels: Vec<String>,
    label_lines: Vec<usize>,
    code: BTreeMap<(usize, usize), (String, usize)>,
    hops: BTreeMap<(usize, usize), (u32, usize)>,
    weight: BTreeMap<(usize, usize), (u32, usize)>,
    bandwidth: BTreeMap<(usize, usize), ((f64, f64), usize)>,
    access: Vec<P2pCell>,
    numa: BTreeMap<usize, (u32, usize)>,
}

impl Pairs {
    /// A peer-access matrix (amd-smi's ACCESS table: `ENABLED` or
    /// `DISABLED`; rocm-smi's link accessibility: `True` or `False`): one
    /// cell per ordered pair of GPUs, as printed.
    fn access(&mut self, m: &Matrix<'_>, [yes, no]: [&str; 2], tool: &str, out: &mut Parsed) {
        // Each GPU's name made once per table, cloned per cell.
        let n = m
            .rows
            .iter()
            .map(|r| r.cells.len())
            .fold(m.rows.len(), usize::max);
        let gpu: Vec<String> = (0..n).map(|i| format!("GPU{i}")).collect();
        for (i, row) in m.rows.iter().enumerate().filter(|(_, r)| !r.bad) {
            for (j, v) in row.cells.iter().enumerate() {
                if i == j {
                    continue;
                }
                let supported = match *v {
                    v if v == yes => true,
                    v if v == no => false,
                    _ => {
                        out.bad_row(
                            row.line,
                            format!("{tool}: expected {yes} or {no}, found `{v}`"),
                        );
                        continue;
                    }
                };
                self.access.push(P2pCell {
                    src: gpu[i].clone(),
                    dst: gpu[j].clone(),
                    status: v.to_string(),
                    supported,
                    source: Source::line(row.line),
                });
            }
        }
    }

    /// Checks that a table names the same devices as the ones before it.
    fn adopt_labels(&mut self, m: &Matrix<'_>) -> Result<(), ParseError> {
        // A matrix cut short names its missing rows' devices in its header.
        // Compared as borrowed words; Strings only for the first table's.
        let labels: Vec<&str> = m.labels();
        if !m.header.words().eq(labels.iter().copied()) {
            return Err(ParseError::new(
                m.header_line,
                format!(
                    "a header naming the row devices in order ({})",
                    labels.join(" ")
                ),
            ));
        }
        if self.labels.is_empty() {
            self.labels = labels.iter().map(|l| l.to_string()).collect();
            // A device whose row was cut is named by the header.
            self.label_lines = m.rows.iter().map(|r| r.line).collect();
            self.label_lines
                .extend(m.missing.iter().map(|_| m.header_line));
        } else if !self
            .labels
            .iter()
            .map(String::as_str)
            .eq(labels.iter().copied())
        {
            return Err(ParseError::new(
                m.header_line,
                format!(
                    "the same devices as the tables above ({})",
                    self.labels.join(" ")
                ),
            ));
        }
        Ok(())
    }

    /// A cell that is not a number is a problem at its row's line; the
    /// other cells are read.
    fn numbers(
        m: &Matrix<'_>,
        what: &str,
        into: &mut BTreeMap<(usize, usize), (u32, usize)>,
        out: &mut Parsed,
    ) {
        for (i, row) in m.rows.iter().enumerate().filter(|(_, r)| !r.bad) {
            for (j, v) in row.cells.iter().enumerate() {
                if i == j {
                    continue;
                }
                let Some(n) = parse_plain_u32(v) else {
                    out.bad_row(row.line, format!("expected a {what} number, found `{v}`"));
                    continue;
                };
                into.insert((i, j), (n, row.line));
            }
        }
    }

    fn codes(&mut self, m: &Matrix<'_>, out: &mut Parsed) {
        for (i, row) in m.rows.iter().enumerate().filter(|(_, r)| !r.bad) {
            for (j, v) in row.cells.iter().enumerate() {
                if i == j {
                    continue;
                }
                if !v.chars().all(|c| c.is_ascii_alphanumeric()) {
                    out.bad_row(
                        row.line,
                        format!("expected a link type such as XGMI or PCIE, found `{v}`"),
                    );
                    continue;
                }
                self.code.insert((i, j), (v.to_string(), row.line));
            }
        }
    }

    /// `50000-200000` (MB/s, from KFD's amdgpu_amdkfd_get_xgmi_bandwidth_mbytes).
    fn bandwidths(&mut self, m: &Matrix<'_>, out: &mut Parsed) {
        for (i, row) in m.rows.iter().enumerate().filter(|(_, r)| !r.bad) {
            for (j, v) in row.cells.iter().enumerate() {
                if i == j || *v == "N/A" {
                    continue;
                }
                let Some(pair) = v
                    .split_once('-')
                    .and_then(|(a, b)| Some((parse_plain_u32(a)?, parse_plain_u32(b)?)))
                else {
                    out.bad_row(
                        row.line,
                        format!("expected a min-max bandwidth like 50000-200000, found `{v}`"),
                    );
                    continue;
                };
                let mb = 1e6;
                self.bandwidth.insert(
                    (i, j),
                    ((f64::from(pair.0) * mb, f64::from(pair.1) * mb), row.line),
                );
            }
        }
    }

    fn into_topology(self, ids: Vec<String>, names_are_bdf: bool) -> Topology {
        let mut topo = Topology::default();
        for (i, id) in ids.iter().enumerate() {
            let line = self.label_lines.get(i).copied().unwrap_or(1);
            let mut d = Device::new(id, DeviceKind::Gpu, Source::line(line));
            if names_are_bdf {
                d.name = Some(self.labels[i].clone());
                d.pci_bus_id = Some(self.labels[i].clone());
            }
            if let Some((n, l)) = self.numa.get(&i) {
                d.numa_node = Some(*n);
                d.source = Source::line(*l);
            }
            topo.devices.push(d);
        }
        for i in 0..ids.len() {
            for j in i + 1..ids.len() {
                let code = self.code.get(&(i, j));
                let hops = self.hops.get(&(i, j));
                let weight = self.weight.get(&(i, j));
                let bw = self.bandwidth.get(&(i, j));
                // The pair's lines, sorted and deduplicated in an array: no
                // Vec per pair.
                let mut buf = [0usize; 4];
                let mut k = 0;
                for l in [
                    code.map(|c| c.1),
                    hops.map(|h| h.1),
                    weight.map(|w| w.1),
                    bw.map(|b| b.1),
                ]
                .into_iter()
                .flatten()
                {
                    buf[k] = l;
                    k += 1;
                }
                if k == 0 {
                    continue;
                }
                buf[..k].sort_unstable();
                let mut lines = [0usize; 4];
                let mut u = 0;
                for &l in &buf[..k] {
                    if u == 0 || lines[u - 1] != l {
                        lines[u] = l;
                        u += 1;
                    }
                }
                let lines = &lines[..u];
                let numa = (
                    self.numa.get(&i).map(|n| n.0),
                    self.numa.get(&j).map(|n| n.0),
                );
                let class = amd_class(
                    code.map(|c| c.0.as_str()),
                    hops.map(|h| h.0),
                    numa,
                    bw.map(|b| b.0.1),
                    weight.map(|w| w.0),
                );
                let mut link = Link::new(&ids[i], &ids[j], class, Source::line(lines[0]));
                link.sources
                    .extend(lines[1..].iter().map(|l| Source::line(*l)));
                link.code = code.map(|c| c.0.clone());
                match code.map(|c| c.0.as_str()) {
                    Some("XGMI") => link.xgmi_hops = hops.map(|h| h.0),
                    Some("PCIE") => link.pcie_hops = hops.map(|h| h.0),
                    _ => {}
                }
                link.weight = weight.map(|w| w.0);
                link.min_bandwidth_bytes_per_s = bw.map(|b| b.0.0);
                link.max_bandwidth_bytes_per_s = bw.map(|b| b.0.1);
                topo.links.push(link);
            }
        }
        topo.p2p = self.access;
        topo.sort();
        topo
    }
}

/// `GPU[3]` or `GPU 3` at the start of a rocm-smi per-device line.
fn rocm_gpu_index(l: &str) -> Option<(u32, &str)> {
    let rest = l.trim_start().strip_prefix("GPU")?;
    let (idx, rest) = if let Some(r) = rest.strip_prefix('[') {
        let (i, r) = r.split_once(']')?;
        (i, r)
    } else {
        let r = rest.trim_start();
        let end = r.find(|c: char| !c.is_ascii_digit())?;
        (&r[..end], &r[end..])
    };
    Some((parse_plain_u32(idx)?, rest))
}

/// A rocm-smi matrix between GPUs (`GPU0 GPU1 ...` header and row
/// labels) whose diagonal is one of `diagonal`.
fn gpu_matrix<'a>(
    body: &[(usize, &'a str)],
    what: &str,
    diagonal: &[&str],
) -> Result<Matrix<'a>, ParseError> {
    read_matrix(
        body,
        |toks| !toks.is_empty() && toks.iter().all(|t| is_gpu_label(t)),
        |first, _| is_gpu_label(first),
        Some(diagonal),
        what,
    )
}

/// The diagonal of rocm-smi's weight, hops, type and bandwidth matrices.
const ZERO: &[&str] = &["0", "N/A"];

/// Parses `rocm-smi --showtopo` and its sub-views.
pub fn parse_rocm_smi(text: &str) -> Result<Parsed, ParseError> {
    let lines: Vec<(usize, &str)> = crate::evidence::numbered_vec(text);
    let sections = split_sections(
        &lines,
        banner,
        "a `==== ROCm System Management Interface ====` banner",
    )?;
    let mut pairs = Pairs::default();
    let mut notes = Vec::new();
    let mut out = Parsed::default();
    for Section { name, line, body } in &sections {
        let has_content = body.iter().any(|(_, l)| !l.trim().is_empty());
        match *name {
            "ROCm System Management Interface" => {}
            "End of ROCm SMI Log" => {
                // A longer log goes on after rocm-smi's (`ulimit soft: ...`).
                for (n, l) in body.iter().filter(|(_, l)| !l.trim().is_empty()) {
                    notes.push(Note {
                        line: *n,
                        text: format!("after rocm-smi's end banner, not its output: {}", l.trim()),
                    });
                }
            }
            _ if !has_content => notes.push(Note {
                line: *line,
                text: format!(
                    "section `{name}` is empty (the capture ends or the tool printed nothing)"
                ),
            }),
            // A table that cannot be read is a problem at its line; the
            // other sections are read.
            "Weight between two GPUs" => {
                let m = gpu_matrix(body, "weight", ZERO)
                    .and_then(|m| pairs.adopt_labels(&m).map(|_| m));
                if let Some(m) = out.row("rocm-smi-topo", m) {
                    m.flag_cut("rocm-smi-topo", "weight matrix", &mut out);
                    Pairs::numbers(&m, "weight", &mut pairs.weight, &mut out);
                }
            }
            "Hops between two GPUs" => {
                let m =
                    gpu_matrix(body, "hops", ZERO).and_then(|m| pairs.adopt_labels(&m).map(|_| m));
                if let Some(m) = out.row("rocm-smi-topo", m) {
                    m.flag_cut("rocm-smi-topo", "hops matrix", &mut out);
                    Pairs::numbers(&m, "hop count", &mut pairs.hops, &mut out);
                }
            }
            "Link Type between two GPUs" => {
                let m = gpu_matrix(body, "link type", ZERO)
                    .and_then(|m| pairs.adopt_labels(&m).map(|_| m));
                if let Some(m) = out.row("rocm-smi-topo", m) {
                    m.flag_cut("rocm-smi-topo", "link type matrix", &mut out);
                    pairs.codes(&m, &mut out);
                }
            }
            "Bandwidth" => {
                let unit = body.iter().find(|(_, l)| {
                    let t = l.trim();
                    t.starts_with("Format:") && !t.contains("Units: mps")
                });
                if let Some((n, _)) = unit {
                    out.bad_row(
                        *n,
                        "rocm-smi-topo: expected `Format: min-max; Units: mps`; the bandwidth table is not read",
                    );
                    continue;
                }
                let m = gpu_matrix(body, "bandwidth", ZERO)
                    .and_then(|m| pairs.adopt_labels(&m).map(|_| m));
                if let Some(m) = out.row("rocm-smi-topo", m) {
                    m.flag_cut("rocm-smi-topo", "bandwidth matrix", &mut out);
                    pairs.bandwidths(&m, &mut out);
                }
            }
            "Link accessibility between two GPUs" => {
                let m = gpu_matrix(body, "accessibility", &["True"])
                    .and_then(|m| pairs.adopt_labels(&m).map(|_| m));
                if let Some(m) = out.row("rocm-smi-topo", m) {
                    m.flag_cut("rocm-smi-topo", "accessibility matrix", &mut out);
                    pairs.access(&m, ["True", "False"], "rocm-smi-topo", &mut out);
                }
            }
            "Numa Nodes" => read_numa(body, &mut pairs, &mut out),
            other => notes.push(Note {
                line: *line,
                text: format!("section `{other}` is not a topology view; skipped"),
            }),
        }
    }
    let ids = numa_labels(&mut pairs, &mut out);
    let count = pairs.labels.len().max(pairs.numa.len());
    if count == 0 {
        return Err(ParseError::new(
            lines.len().max(1),
            "a topology section (Weight, Hops, Link Type, Link accessibility, Numa Nodes or Bandwidth) with GPU rows",
        ));
    }
    if !pairs.labels.is_empty() {
        let expect: Vec<String> = (0..pairs.labels.len()).map(|i| format!("GPU{i}")).collect();
        if pairs.labels != expect {
            return Err(ParseError::new(
                pairs.label_lines[0],
                format!("GPUs numbered from GPU0 in order ({})", expect.join(" ")),
            ));
        }
    }
    let ids = ids.unwrap_or_else(|| (0..count).map(|i| format!("GPU{i}")).collect());
    flag_unclosed(&sections, &lines, &mut out);
    out.topology = pairs.into_topology(ids, false);
    out.notes = notes;
    Ok(out)
}

/// rocm-smi closes its output with `End of ROCm SMI Log`: a transcript
/// that opens with the banner and lacks it was cut.
fn flag_unclosed(sections: &[Section<'_>], lines: &[(usize, &str)], out: &mut Parsed) {
    let opened = sections
        .iter()
        .any(|s| s.name == "ROCm System Management Interface");
    let closed = sections.iter().any(|s| s.name == "End of ROCm SMI Log");
    if opened
        && !closed
        && let Some((n, _)) = lines.iter().rev().find(|(_, l)| !l.trim().is_empty())
    {
        out.cut(
            *n,
            "the rest of rocm-smi's output (up to its `End of ROCm SMI Log` line)",
        );
    }
}

/// The `Numa Nodes` section: `GPU[k] : (Topology) Numa Node: <node>`. A
/// line that cannot be read is a problem at its line.
fn read_numa(body: &[(usize, &str)], pairs: &mut Pairs, out: &mut Parsed) {
    for (n, l) in body {
        if l.trim().is_empty() {
            continue;
        }
        // A line that cannot be read is a problem at its line.
        let Some((idx, rest)) = rocm_gpu_index(l) else {
            out.bad_row(
                *n,
                "rocm-smi-topo: expected `GPU[<n>] : (Topology) Numa Node: <node>`",
            );
            continue;
        };
        let rest = rest.trim_start().trim_start_matches(':').trim();
        if let Some(v) = rest.strip_prefix("(Topology) Numa Node:") {
            let v = v.trim();
            let Some(node) = parse_plain_u32(v) else {
                out.bad_row(
                    *n,
                    format!("rocm-smi-topo: expected a NUMA node number, found `{v}`"),
                );
                continue;
            };
            pairs.numa.insert(idx as usize, (node, *n));
        } else if !rest.starts_with("(Topology) Numa Affinity:") {
            out.bad_row(
                *n,
                "rocm-smi-topo: expected `(Topology) Numa Node:` or `(Topology) Numa Affinity:`",
            );
        }
    }
}

/// GPUs are counted by the lines that name them, never by an index read
/// from the text (`GPU[4294967295]` would size every pair list). Without
/// a matrix, the `GPU[k]` index is a label (a filtered view, `rocm-smi -d
/// 2 --showtoponuma`, lists GPU 2 alone): the GPUs are the ones listed,
/// in index order, and their ids are returned. With one, an index beyond
/// the matrix's GPUs is a problem at its line.
fn numa_labels(pairs: &mut Pairs, out: &mut Parsed) -> Option<Vec<String>> {
    if pairs.labels.is_empty() {
        let numa = std::mem::take(&mut pairs.numa);
        let ids = numa.keys().map(|k| format!("GPU{k}")).collect();
        pairs.numa = numa.into_values().enumerate().collect();
        return Some(ids);
    }
    let n = pairs.labels.len();
    for (idx, (_, line)) in pairs.numa.iter().filter(|(k, _)| **k >= n) {
        out.bad_row(
            *line,
            format!(
                "rocm-smi-topo: expected a GPU of the matrices above (GPU0..GPU{}), found GPU[{idx}]",
                n - 1
            ),
        );
    }
    pairs.numa.retain(|k, _| *k < n);
    None
}

fn is_bdf(t: &str) -> bool {
    let b = t.as_bytes();
    b.len() == 12
        && b[4] == b':'
        && b[7] == b':'
        && b[10] == b'.'
        && t.chars()
            .enumerate()
            .all(|(i, c)| matches!(i, 4 | 7 | 10) || c.is_ascii_hexdigit())
}

/// Parses `amd-smi topology`: tables headed `<NAME> TABLE:` with rows and
/// columns labelled by PCI bus id. GPUs are numbered in the order printed.
pub fn parse_amd_smi(text: &str) -> Result<Parsed, ParseError> {
    let lines: Vec<(usize, &str)> = crate::evidence::numbered_vec(text);
    let tables = split_sections(
        &lines,
        |l| l.trim().strip_suffix(" TABLE:"),
        "an `ACCESS TABLE:` (or other `... TABLE:`) line",
    )?;
    let mut pairs = Pairs::default();
    let mut notes = Vec::new();
    let mut out = Parsed::default();
    for Section { name, line, body } in &tables {
        // A table that cannot be read is a problem at its line; the other
        // tables are read.
        let m = read_matrix(
            body,
            |toks| !toks.is_empty() && toks.iter().all(|t| is_bdf(t)),
            |first, _| is_bdf(first),
            None,
            &format!("{name} table"),
        )
        .and_then(|m| pairs.adopt_labels(&m).map(|_| m));
        let Some(m) = out.row("amd-smi-topology", m) else {
            continue;
        };
        m.flag_cut("amd-smi-topology", &format!("{name} TABLE"), &mut out);
        match *name {
            "ACCESS" => pairs.access(&m, ["ENABLED", "DISABLED"], "amd-smi-topology", &mut out),
            "WEIGHT" => Pairs::numbers(&m, "weight", &mut pairs.weight, &mut out),
            "HOPS" => Pairs::numbers(&m, "hop count", &mut pairs.hops, &mut out),
            "LINK TYPE" => pairs.codes(&m, &mut out),
            "NUMA BW" => pairs.bandwidths(&m, &mut out),
            other => notes.push(Note {
                line: *line,
                text: format!("{other} TABLE is not used for topology; skipped"),
            }),
        }
        // Anything after the rows must be blank (a lone space counts).
        if let Some((n, l)) = body[m.end..].iter().find(|(_, l)| !l.trim().is_empty()) {
            out.bad_row(
                *n,
                format!(
                    "amd-smi-topology: expected a blank line or the next `... TABLE:` line, found `{}`",
                    l.trim()
                ),
            );
        }
    }
    if pairs.labels.is_empty() {
        return Err(ParseError::new(1, "an amd-smi topology table"));
    }
    amd_smi_cut(&tables, &lines, &mut out);
    let ids: Vec<String> = (0..pairs.labels.len()).map(|i| format!("GPU{i}")).collect();
    out.topology = pairs.into_topology(ids, true);
    out.notes = notes;
    Ok(out)
}

/// `amd-smi topology` prints its tables in one order (ACCESS, WEIGHT,
/// HOPS, LINK TYPE, NUMA BW, then newer ones). Tables that are that
/// order's first few, ending before LINK TYPE, at the transcript's end,
/// were cut, unless the command chose them (`amd-smi topology -a -w`):
/// the flag says both.
fn amd_smi_cut(tables: &[Section<'_>], lines: &[(usize, &str)], out: &mut Parsed) {
    const ORDER: [&str; 5] = ["ACCESS", "WEIGHT", "HOPS", "LINK TYPE", "NUMA BW"];
    let names: Vec<&str> = tables.iter().map(|t| t.name).collect();
    let k = names.len();
    if k == 0 || k >= 4 || names[..] != ORDER[..k] {
        return;
    }
    if let Some((n, _)) = lines.iter().rev().find(|(_, l)| !l.trim().is_empty()) {
        out.cut(
            *n,
            format!(
                "the tables after {} TABLE ({} TABLE; unless the command chose its tables)",
                names[k - 1],
                ORDER[k..].join(" TABLE, ")
            ),
        );
    }
}

#[cfg(test)]
mod tests;
