//! AMD topology transcripts: `rocm-smi --showtopo` (and its sub-views
//! `--showtopoweight`, `--showtopohops`, `--showtopotype`, `--showtoponuma`,
//! `--shownodesbw`) and `amd-smi topology`.
//!
//! Both tools print the KFD topology: a link type (XGMI or PCIE), a hop count
//! and a weight per pair, and per GPU its NUMA node. The class of a pair
//! follows [`amd_class`].

use std::collections::BTreeMap;

use super::matrix::{Matrix, read_matrix};
use super::nvidia::is_gpu_label;
use super::{Device, DeviceKind, Link, LinkClass, P2pCell, Topology, parse_plain_u32};
use crate::evidence::{Note, ParseError, Parsed, Source, numbered_lines};

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
    text.contains("ROCm System Management Interface")
        || crate::evidence::numbered(lines).any(|(_, l)| {
            banner(l).is_some_and(|b| {
                b.ends_with("between two GPUs") || b == "Numa Nodes" || b == "Bandwidth"
            })
        })
}

pub fn looks_like_amd_smi(_text: &str, lines: &[&str]) -> bool {
    crate::evidence::numbered(lines).any(|(_, l)| {
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
    /// Checks that a table names the same devices as the ones before it.
    fn adopt_labels(&mut self, m: &Matrix<'_>) -> Result<(), ParseError> {
        let labels: Vec<String> = m.rows.iter().map(|r| r.label.to_string()).collect();
        let header: Vec<&str> = m.header.split_whitespace().collect();
        if header != labels.iter().map(String::as_str).collect::<Vec<_>>() {
            return Err(ParseError::new(
                m.header_line,
                format!(
                    "a header naming the row devices in order ({})",
                    labels.join(" ")
                ),
            ));
        }
        if self.labels.is_empty() {
            self.labels = labels;
            self.label_lines = m.rows.iter().map(|r| r.line).collect();
        } else if self.labels != labels {
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

    fn numbers(
        m: &Matrix<'_>,
        what: &str,
        into: &mut BTreeMap<(usize, usize), (u32, usize)>,
    ) -> Result<(), ParseError> {
        for (i, row) in m.rows.iter().enumerate() {
            for (j, v) in row.cells.iter().enumerate() {
                if i == j {
                    continue;
                }
                let n = parse_plain_u32(v).ok_or_else(|| {
                    ParseError::new(row.line, format!("a {what} number, found `{v}`"))
                })?;
                into.insert((i, j), (n, row.line));
            }
        }
        Ok(())
    }

    fn codes(&mut self, m: &Matrix<'_>) -> Result<(), ParseError> {
        for (i, row) in m.rows.iter().enumerate() {
            for (j, v) in row.cells.iter().enumerate() {
                if i == j {
                    continue;
                }
                if !v.chars().all(|c| c.is_ascii_alphanumeric()) {
                    return Err(ParseError::new(
                        row.line,
                        format!("a link type such as XGMI or PCIE, found `{v}`"),
                    ));
                }
                self.code.insert((i, j), (v.to_string(), row.line));
            }
        }
        Ok(())
    }

    /// `50000-200000` (MB/s, from KFD's amdgpu_amdkfd_get_xgmi_bandwidth_mbytes).
    fn bandwidths(&mut self, m: &Matrix<'_>) -> Result<(), ParseError> {
        for (i, row) in m.rows.iter().enumerate() {
            for (j, v) in row.cells.iter().enumerate() {
                if i == j || *v == "N/A" {
                    continue;
                }
                let pair = v
                    .split_once('-')
                    .and_then(|(a, b)| Some((parse_plain_u32(a)?, parse_plain_u32(b)?)))
                    .ok_or_else(|| {
                        ParseError::new(
                            row.line,
                            format!("a min-max bandwidth like 50000-200000, found `{v}`"),
                        )
                    })?;
                let mb = 1e6;
                self.bandwidth.insert(
                    (i, j),
                    ((f64::from(pair.0) * mb, f64::from(pair.1) * mb), row.line),
                );
            }
        }
        Ok(())
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
                let mut lines: Vec<usize> = [
                    code.map(|c| c.1),
                    hops.map(|h| h.1),
                    weight.map(|w| w.1),
                    bw.map(|b| b.1),
                ]
                .into_iter()
                .flatten()
                .collect();
                if lines.is_empty() {
                    continue;
                }
                lines.sort_unstable();
                lines.dedup();
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

/// Parses `rocm-smi --showtopo` and its sub-views.
pub fn parse_rocm_smi(text: &str) -> Result<Parsed, ParseError> {
    let lines: Vec<(usize, &str)> = numbered_lines(text).collect();
    let sections = split_sections(
        &lines,
        banner,
        "a `==== ROCm System Management Interface ====` banner",
    )?;
    let mut pairs = Pairs::default();
    let mut notes = Vec::new();
    fn gpu_matrix<'a>(body: &[(usize, &'a str)], what: &str) -> Result<Matrix<'a>, ParseError> {
        read_matrix(
            body,
            |toks| !toks.is_empty() && toks.iter().all(|t| is_gpu_label(t)),
            |first, _| is_gpu_label(first),
            Some(&["0", "N/A"]),
            what,
        )
    }
    for Section { name, line, body } in &sections {
        let has_content = body.iter().any(|(_, l)| !l.trim().is_empty());
        match *name {
            "ROCm System Management Interface" | "End of ROCm SMI Log" => {}
            _ if !has_content => notes.push(Note {
                line: *line,
                text: format!(
                    "section `{name}` is empty (the capture ends or the tool printed nothing)"
                ),
            }),
            "Weight between two GPUs" => {
                let m = gpu_matrix(body, "weight")?;
                pairs.adopt_labels(&m)?;
                Pairs::numbers(&m, "weight", &mut pairs.weight)?;
            }
            "Hops between two GPUs" => {
                let m = gpu_matrix(body, "hops")?;
                pairs.adopt_labels(&m)?;
                Pairs::numbers(&m, "hop count", &mut pairs.hops)?;
            }
            "Link Type between two GPUs" => {
                let m = gpu_matrix(body, "link type")?;
                pairs.adopt_labels(&m)?;
                pairs.codes(&m)?;
            }
            "Bandwidth" => {
                let m = gpu_matrix(body, "bandwidth")?;
                pairs.adopt_labels(&m)?;
                pairs.bandwidths(&m)?;
                for (n, l) in &body[..] {
                    let t = l.trim();
                    if t.starts_with("Format:") && !t.contains("Units: mps") {
                        return Err(ParseError::new(*n, "`Format: min-max; Units: mps`"));
                    }
                }
            }
            "Numa Nodes" => {
                for (n, l) in body {
                    if l.trim().is_empty() {
                        continue;
                    }
                    let (idx, rest) = rocm_gpu_index(l).ok_or_else(|| {
                        ParseError::new(*n, "`GPU[<n>] : (Topology) Numa Node: <node>`")
                    })?;
                    let rest = rest.trim_start().trim_start_matches(':').trim();
                    if let Some(v) = rest.strip_prefix("(Topology) Numa Node:") {
                        let v = v.trim();
                        let node = parse_plain_u32(v).ok_or_else(|| {
                            ParseError::new(*n, format!("a NUMA node number, found `{v}`"))
                        })?;
                        pairs.numa.insert(idx as usize, (node, *n));
                    } else if !rest.starts_with("(Topology) Numa Affinity:") {
                        return Err(ParseError::new(
                            *n,
                            "`(Topology) Numa Node:` or `(Topology) Numa Affinity:`",
                        ));
                    }
                }
            }
            other => notes.push(Note {
                line: *line,
                text: format!("section `{other}` is not a topology view; skipped"),
            }),
        }
    }
    // GPUs are counted by the lines that name them, never by an index
    // read from the text (`GPU[4294967295]` would size every pair list).
    let count = pairs.labels.len().max(pairs.numa.len());
    if let Some((&idx, &(_, n))) = pairs.numa.iter().find(|(k, _)| **k >= count) {
        return Err(ParseError::new(
            n,
            format!("GPU indices below the number of GPUs listed ({count}); found GPU[{idx}]"),
        ));
    }
    if count == 0 {
        return Err(ParseError::new(
            lines.len().max(1),
            "a topology section (Weight, Hops, Link Type, Numa Nodes or Bandwidth) with GPU rows",
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
    let ids: Vec<String> = (0..count).map(|i| format!("GPU{i}")).collect();
    Ok(Parsed {
        topology: pairs.into_topology(ids, false),
        notes,
        ..Parsed::default()
    })
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
    let lines: Vec<(usize, &str)> = numbered_lines(text).collect();
    let tables = split_sections(
        &lines,
        |l| l.trim().strip_suffix(" TABLE:"),
        "an `ACCESS TABLE:` (or other `... TABLE:`) line",
    )?;
    let mut pairs = Pairs::default();
    let mut notes = Vec::new();
    for Section { name, line, body } in &tables {
        let m = read_matrix(
            body,
            |toks| !toks.is_empty() && toks.iter().all(|t| is_bdf(t)),
            |first, _| is_bdf(first),
            None,
            &format!("{name} table"),
        )?;
        pairs.adopt_labels(&m)?;
        match *name {
            "ACCESS" => {
                for (i, row) in m.rows.iter().enumerate() {
                    for (j, v) in row.cells.iter().enumerate() {
                        if i == j {
                            continue;
                        }
                        let supported = match *v {
                            "ENABLED" => true,
                            "DISABLED" => false,
                            _ => {
                                return Err(ParseError::new(
                                    row.line,
                                    format!("ENABLED or DISABLED, found `{v}`"),
                                ));
                            }
                        };
                        pairs.access.push(P2pCell {
                            src: format!("GPU{i}"),
                            dst: format!("GPU{j}"),
                            status: v.to_string(),
                            supported,
                            source: Source::line(row.line),
                        });
                    }
                }
            }
            "WEIGHT" => Pairs::numbers(&m, "weight", &mut pairs.weight)?,
            "HOPS" => Pairs::numbers(&m, "hop count", &mut pairs.hops)?,
            "LINK TYPE" => pairs.codes(&m)?,
            "NUMA BW" => pairs.bandwidths(&m)?,
            other => notes.push(Note {
                line: *line,
                text: format!("{other} TABLE is not used for topology; skipped"),
            }),
        }
        // Anything after the rows must be blank (a lone space counts).
        if let Some((n, l)) = body[m.end..].iter().find(|(_, l)| !l.trim().is_empty()) {
            return Err(ParseError::new(
                *n,
                format!(
                    "a blank line or the next `... TABLE:` line, found `{}`",
                    l.trim()
                ),
            ));
        }
    }
    if pairs.labels.is_empty() {
        return Err(ParseError::new(1, "an amd-smi topology table"));
    }
    let ids: Vec<String> = (0..pairs.labels.len()).map(|i| format!("GPU{i}")).collect();
    Ok(Parsed {
        topology: pairs.into_topology(ids, true),
        notes,
        ..Parsed::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_amd_pairs_by_type_numa_and_hops() {
        assert_eq!(
            amd_class(Some("XGMI"), Some(1), (None, None), None, None),
            LinkClass::DirectLink
        );
        assert_eq!(
            amd_class(Some("PCIE"), Some(3), (Some(0), Some(0)), None, None),
            LinkClass::CrossSocket
        );
        assert_eq!(
            amd_class(Some("PCIE"), Some(2), (Some(0), Some(1)), None, None),
            LinkClass::CrossSocket
        );
        assert_eq!(
            amd_class(Some("PCIE"), Some(2), (None, None), None, None),
            LinkClass::PcieHost
        );
        assert_eq!(
            amd_class(Some("PCIE"), None, (Some(1), Some(1)), None, None),
            LinkClass::PcieHost
        );
        assert_eq!(
            amd_class(Some("PCIE"), None, (None, None), None, None),
            LinkClass::Unknown
        );
        assert_eq!(
            amd_class(None, None, (None, None), Some(5e10), None),
            LinkClass::DirectLink
        );
        assert_eq!(
            amd_class(None, None, (None, None), Some(0.0), None),
            LinkClass::Unknown
        );
        assert_eq!(
            amd_class(Some("NVLINK"), None, (None, None), None, None),
            LinkClass::Unknown
        );
    }

    #[test]
    fn xgmi_two_hops_away_and_weight_only_pairs() {
        // Two xGMI hops: through another GPU, not a direct link.
        assert_eq!(
            amd_class(Some("XGMI"), Some(2), (None, None), None, Some(30)),
            LinkClass::Unknown
        );
        // A weight table alone: 15 is one xGMI hop; 30 and 45 are two and
        // three; 72 is a PCIe path across sockets.
        assert_eq!(
            amd_class(None, None, (None, None), None, Some(15)),
            LinkClass::DirectLink
        );
        for w in [30, 45, 40, 72] {
            assert_eq!(
                amd_class(None, None, (None, None), None, Some(w)),
                LinkClass::Unknown,
                "{w}"
            );
        }
    }

    #[test]
    fn reads_both_numa_line_styles() {
        assert_eq!(rocm_gpu_index("GPU[12]\t\t: x").map(|g| g.0), Some(12));
        assert_eq!(rocm_gpu_index("GPU 3          : x").map(|g| g.0), Some(3));
        assert_eq!(rocm_gpu_index("CPU 3"), None);
    }
}
