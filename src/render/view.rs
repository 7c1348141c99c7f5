//! Bundle -> display-ready view of one node. Every string here is what a
//! page shows; templates only lay them out. Text from transcripts stays
//! plain text here and is escaped by the templates; the only markup is our
//! own (SVG from plotters, markdown from `templates/explain/`).

use std::collections::{BTreeMap, BTreeSet};

use super::charts::{self, FitLine, NodeBox, Series};
use super::format::{bytes, gbs, secs, size_short};
use crate::bundle::Bundle;
use crate::diagnosis::{self, Diagnosed, Severity};
use crate::evidence::Source;
use crate::evidence::measurement::{Direction, Kind, Measurement, Statistic};
use crate::evidence::topology::{DeviceKind, LinkClass};
use crate::models::{ceiling, fit, injection, staging};

/// Where links point: separate pages, or anchors in one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Site,
    SingleFile,
}

pub struct Link {
    pub label: String,
    pub href: String,
}

pub struct FindingView {
    pub severity: &'static str,
    pub kind: &'static str,
    pub summary: String,
    pub explanation_html: String,
    pub evidence: Vec<Link>,
}

pub struct Cell {
    pub text: String,
    pub class: String,
    pub title: String,
}

pub struct MatrixView {
    pub columns: Vec<String>,
    pub rows: Vec<(String, Vec<Cell>)>,
}

pub struct ValueMatrix {
    pub title: String,
    pub unit: String,
    pub source: Link,
    pub columns: Vec<String>,
    pub rows: Vec<(String, Vec<(String, String)>)>,
}

pub struct ChartView {
    pub title: String,
    pub svg: String,
    pub note: String,
    pub source: Option<Link>,
}

pub struct ModelView {
    pub title: String,
    pub lines: Vec<String>,
}

pub struct SeriesView {
    pub title: String,
    pub source: Link,
    /// The expected ceiling of the path, or why there is none.
    pub ceiling: String,
    pub questions: Vec<(&'static str, String)>,
    pub values: Vec<String>,
    pub more: usize,
}

pub struct TranscriptLink {
    pub name: String,
    pub tool: &'static str,
    pub href: String,
    pub lines: usize,
    pub notes: Vec<String>,
}

pub struct TranscriptView {
    pub anchor: String,
    pub name: String,
    pub path: String,
    pub tool: &'static str,
    pub sha256: String,
    pub lines: Vec<(usize, String)>,
}

pub struct NodeView {
    pub name: String,
    pub slug: String,
    pub origin: &'static str,
    pub gpus: usize,
    pub nics: usize,
    /// `8`, or `not described` when no topology transcript names devices.
    pub gpus_shown: String,
    pub nics_shown: String,
    pub missing_short: String,
    pub shape: String,
    pub findings: Vec<FindingView>,
    pub critical: usize,
    pub warning: usize,
    pub info: usize,
    pub collected: Vec<String>,
    pub missing: Vec<String>,
    pub problems: Vec<Link>,
    /// Live probes: `name: status (message)`.
    pub probes: Vec<String>,
    /// The two-node check this node took part in, in words.
    pub pair: Option<String>,
    pub matrix: Option<MatrixView>,
    pub diagram_svg: String,
    pub value_matrices: Vec<ValueMatrix>,
    pub sweep_charts: Vec<ChartView>,
    pub ladder_svg: String,
    pub cliff: Option<ChartView>,
    pub models: Vec<ModelView>,
    pub interpretation: Vec<SeriesView>,
    pub transcripts: Vec<TranscriptLink>,
    pub transcript_views: Vec<TranscriptView>,
    pub bundle_href: String,
}

/// A directory-safe slug of a node name: letters, digits, `-`, `_`, `.`.
pub fn slug(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with('.') {
        format!("n{s}")
    } else {
        s
    }
}

struct Linker<'a> {
    mode: Mode,
    slug: &'a str,
    index: BTreeMap<&'a str, usize>,
}

impl Linker<'_> {
    fn href(&self, s: &Source) -> String {
        let Some(i) = self.index.get(s.file.as_str()) else {
            return String::new();
        };
        match self.mode {
            Mode::Site => format!("t{i}.html#{}-t{i}-L{}", self.slug, s.line),
            Mode::SingleFile => format!("#{}-t{i}-L{}", self.slug, s.line),
        }
    }

    fn link(&self, s: &Source) -> Link {
        let name = s.file.rsplit('/').next().unwrap_or(&s.file).to_string();
        Link {
            label: format!("{name}:{}", s.line),
            href: self.href(s),
        }
    }

    fn transcript_href(&self, i: usize) -> String {
        match self.mode {
            Mode::Site => format!("t{i}.html"),
            Mode::SingleFile => format!("#{}-t{i}", self.slug),
        }
    }
}

/// One function owns the markdown options.
pub fn markdown(md: &str) -> String {
    let parser = pulldown_cmark::Parser::new_ext(md, pulldown_cmark::Options::empty());
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, parser);
    out
}

/// `Two-node check: served ib_write_bw for n2 (paired by Slurm, job 7); ...`.
fn pair_text(p: &crate::collect::pair::PeerLink) -> String {
    use crate::collect::pair::Role;
    let peer = p
        .peer
        .as_deref()
        .or(p.address.as_deref())
        .unwrap_or("an unnamed peer");
    let side = match p.role {
        Role::Server => format!("served {} for {peer}", p.tool),
        Role::Client => format!(
            "ran the {} client against {peer}{}",
            p.tool,
            p.address
                .as_deref()
                .filter(|a| *a != peer)
                .map(|a| format!(" at {a}"))
                .unwrap_or_default()
        ),
    };
    let via = match (p.via.as_str(), &p.job) {
        ("slurm", Some(j)) => format!("paired by Slurm, job {j}"),
        ("slurm", None) => "paired by Slurm".to_string(),
        (v, _) => format!("paired by {v}"),
    };
    format!(
        "Two-node check: this node {side} ({via}); {}{}.",
        if p.ok {
            "completed"
        } else {
            "did not complete (see the probes)"
        },
        p.transcript
            .as_deref()
            .map(|t| format!("; its side's figures are in {t}"))
            .unwrap_or_default()
    )
}

pub fn node_view(b: &Bundle, mode: Mode) -> NodeView {
    let slug = slug(&b.host.name);
    let linker = Linker {
        mode,
        slug: &slug,
        index: b
            .transcripts
            .iter()
            .enumerate()
            .map(|(i, t)| (t.path.as_str(), i))
            .collect(),
    };
    let t = &b.topology;
    let gpus = t.gpus().count();
    let nics = t
        .devices
        .iter()
        .filter(|d| d.kind == DeviceKind::Nic)
        .count();
    let diagnosed = diagnosis::diagnose(b);
    let count = |s: Severity| diagnosed.iter().filter(|d| d.severity == s).count();
    NodeView {
        name: b.host.name.clone(),
        slug: slug.clone(),
        origin: match b.host.origin {
            crate::bundle::Origin::Ingested => "ingested from captured transcripts",
            crate::bundle::Origin::Live => "collected live on the node",
        },
        gpus,
        nics,
        gpus_shown: if t.devices.is_empty() {
            "not described".into()
        } else {
            gpus.to_string()
        },
        nics_shown: if t.devices.is_empty() {
            "not described".into()
        } else {
            nics.to_string()
        },
        missing_short: missing_kinds(b)
            .iter()
            .map(|k| k.0)
            .collect::<Vec<_>>()
            .join(", "),
        shape: shape(b),
        critical: count(Severity::Critical),
        warning: count(Severity::Warning),
        info: count(Severity::Info),
        findings: diagnosed.iter().map(|d| finding_view(d, &linker)).collect(),
        collected: collected(b),
        missing: missing(b),
        problems: b
            .problems
            .iter()
            .map(|p| {
                let src = Source {
                    file: p.file.clone().into(),
                    line: p.line.unwrap_or(1),
                };
                Link {
                    label: p.one_line(),
                    href: linker.href(&src),
                }
            })
            .collect(),
        pair: b.peer.as_ref().map(pair_text),
        probes: b
            .probes
            .iter()
            .map(|p| {
                let status = serde_json::to_value(p.status)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                if p.message.is_empty() {
                    format!("{}: {status} ({:.2} s)", p.name, p.duration_s)
                } else {
                    format!(
                        "{}: {status} ({:.2} s): {}",
                        p.name, p.duration_s, p.message
                    )
                }
            })
            .collect(),
        matrix: class_matrix(b),
        diagram_svg: diagram(b),
        value_matrices: value_matrices(b, &linker),
        sweep_charts: sweep_charts(b, &linker),
        ladder_svg: ladder(b),
        cliff: cliff(b),
        models: model_views(b),
        interpretation: interpretation(b, &linker),
        transcripts: b
            .transcripts
            .iter()
            .enumerate()
            .map(|(i, tr)| TranscriptLink {
                name: tr.path.rsplit('/').next().unwrap_or(&tr.path).to_string(),
                tool: tr.tool.as_str(),
                href: linker.transcript_href(i),
                lines: tr.text.lines().count(),
                notes: tr
                    .notes
                    .iter()
                    .map(|n| format!("line {}: {}", n.line, n.text))
                    .collect(),
            })
            .collect(),
        transcript_views: b
            .transcripts
            .iter()
            .enumerate()
            .map(|(i, tr)| TranscriptView {
                anchor: format!("{slug}-t{i}"),
                name: tr.path.rsplit('/').next().unwrap_or(&tr.path).to_string(),
                path: tr.path.clone(),
                tool: tr.tool.as_str(),
                sha256: tr.sha256.clone(),
                lines: tr
                    .text
                    .lines()
                    .enumerate()
                    .map(|(n, l)| (n + 1, l.to_string()))
                    .collect(),
            })
            .collect(),
        bundle_href: "bundle.json".into(),
    }
}

fn finding_view(d: &Diagnosed, linker: &Linker<'_>) -> FindingView {
    FindingView {
        severity: d.severity.as_str(),
        kind: d.finding.name(),
        summary: d.summary.clone(),
        explanation_html: markdown(diagnosis::explanation(&d.finding)),
        evidence: d.evidence.iter().map(|s| linker.link(s)).collect(),
    }
}

/// One sentence on how the GPUs are joined.
fn shape(b: &Bundle) -> String {
    let t = &b.topology;
    let gpu_links: Vec<_> = t.gpu_links().collect();
    if gpu_links.is_empty() {
        return if t.gpus().count() == 1 {
            "one GPU".into()
        } else {
            "GPU links not described".into()
        };
    }
    let mut by: BTreeMap<LinkClass, usize> = BTreeMap::new();
    for l in &gpu_links {
        *by.entry(l.class).or_default() += 1;
    }
    if by.len() == 1 {
        let (c, _) = by.iter().next().expect("one entry");
        let codes: BTreeSet<&str> = gpu_links.iter().filter_map(|l| l.code.as_deref()).collect();
        return format!(
            "every GPU pair {c} ({})",
            codes.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    by.iter()
        .map(|(c, n)| format!("{n} {c}"))
        .collect::<Vec<_>>()
        .join(", ")
        + " GPU pairs"
}

fn collected(b: &Bundle) -> Vec<String> {
    let mut tools: BTreeMap<&str, usize> = BTreeMap::new();
    for t in &b.transcripts {
        *tools.entry(t.tool.as_str()).or_default() += 1;
    }
    tools
        .into_iter()
        .map(|(t, n)| {
            if n > 1 {
                format!("{t} x{n}")
            } else {
                t.to_string()
            }
        })
        .collect()
}

/// Kinds of evidence the bundle lacks: (short name, what would supply it).
pub fn missing_kinds(b: &Bundle) -> Vec<(&'static str, &'static str)> {
    let mut m = Vec::new();
    let has = |f: &dyn Fn(Kind) -> bool| b.measurements.iter().any(|x| f(x.kind));
    if b.topology.links.is_empty() {
        m.push((
            "topology",
            "nvidia-smi topo -m, rocm-smi --showtopo, amd-smi topology",
        ));
    }
    if !has(&|k| matches!(k, Kind::P2pCopy | Kind::H2d | Kind::D2h | Kind::D2d)) {
        m.push((
            "copy bandwidth",
            "nvbandwidth, p2pBandwidthLatencyTest, rocm-bandwidth-test",
        ));
    }
    if b.rdma.is_empty() {
        m.push(("RDMA ports", "ibstat, ibv_devinfo, or live collect"));
    }
    if b.pcie.is_empty() {
        m.push((
            "PCIe link state",
            "lspci -vvv, nvidia-smi -q, or live collect",
        ));
    }
    if !has(&|k| {
        matches!(
            k,
            Kind::RdmaWrite | Kind::RdmaRead | Kind::RdmaSend | Kind::RdmaAtomic | Kind::Rdma
        )
    }) {
        m.push(("RDMA bandwidth", "perftest"));
    }
    m
}

fn missing(b: &Bundle) -> Vec<String> {
    missing_kinds(b)
        .into_iter()
        .map(|(k, how)| format!("{k} ({how})"))
        .collect()
}

fn class_matrix(b: &Bundle) -> Option<MatrixView> {
    let t = &b.topology;
    let gpus: Vec<&str> = t.gpus().map(|d| d.id.as_str()).collect();
    if gpus.is_empty() || t.links.is_empty() {
        return None;
    }
    let cols: Vec<&str> = t.devices.iter().map(|d| d.id.as_str()).collect();
    let rows = gpus
        .iter()
        .map(|g| {
            let cells = cols
                .iter()
                .map(|c| {
                    if c == g {
                        return Cell {
                            text: "X".into(),
                            class: "self".into(),
                            title: "self".into(),
                        };
                    }
                    match t.link(g, c) {
                        Some(l) => Cell {
                            text: l.code.clone().unwrap_or_else(|| "-".into()),
                            class: l.class.as_str().into(),
                            title: format!("{g}-{c}: {}", l.class),
                        },
                        None => Cell {
                            text: "".into(),
                            class: "unknown".into(),
                            title: "not described".into(),
                        },
                    }
                })
                .collect();
            (g.to_string(), cells)
        })
        .collect();
    let columns = cols
        .iter()
        .map(|c| match t.device(c).and_then(|d| d.name.clone()) {
            Some(n) if t.device(c).is_some_and(|d| d.kind == DeviceKind::Nic) => format!("{c} {n}"),
            _ => c.to_string(),
        })
        .collect();
    Some(MatrixView { columns, rows })
}

fn diagram(b: &Bundle) -> String {
    let t = &b.topology;
    if t.devices.is_empty() {
        return String::new();
    }
    let boxes: Vec<NodeBox> = t
        .devices
        .iter()
        .map(|d| NodeBox {
            id: d.id.clone(),
            label: match &d.name {
                Some(n) if d.kind == DeviceKind::Nic => format!("{} {n}", d.id),
                _ => d.id.clone(),
            },
            group: d.numa_node.map_or_else(
                || "NUMA node not stated".to_string(),
                |n| format!("NUMA node {n}"),
            ),
            is_gpu: d.kind == DeviceKind::Gpu,
        })
        .collect();
    // Each device's best links only, so the picture stays readable.
    let mut edges = Vec::new();
    for l in &t.links {
        if l.class == LinkClass::Unknown {
            continue;
        }
        let best_a = t
            .links
            .iter()
            .filter(|x| x.a == l.a || x.b == l.a)
            .map(|x| x.class)
            .min();
        let best_b = t
            .links
            .iter()
            .filter(|x| x.a == l.b || x.b == l.b)
            .map(|x| x.class)
            .min();
        if Some(l.class) != best_a && Some(l.class) != best_b {
            continue;
        }
        let measured = b
            .measurements
            .iter()
            .filter(|m| {
                m.kind == Kind::P2pCopy
                    && m.direction == Direction::Uni
                    && m.statistic == Statistic::Avg
            })
            .filter(|m| {
                m.src.as_deref() == Some(l.a.as_str()) && m.dst.as_deref() == Some(l.b.as_str())
            })
            .filter_map(|m| m.bandwidth_bytes_per_s)
            .fold(None, |a: Option<f64>, v| Some(a.map_or(v, |a| a.max(v))));
        let label = match measured {
            Some(v) => format!("{} measured", gbs(v)),
            None => String::new(),
        };
        edges.push(charts::Edge {
            a: l.a.clone(),
            b: l.b.clone(),
            class: l.class.as_str().to_string(),
            label,
        });
    }
    charts::node_diagram(&boxes, &edges)
}

/// Matrices of cells that name a source and a destination (copy tests).
fn value_matrices(b: &Bundle, linker: &Linker<'_>) -> Vec<ValueMatrix> {
    type Key = (String, String, Statistic, Direction, bool);
    let mut groups: BTreeMap<Key, Vec<&Measurement>> = BTreeMap::new();
    for m in &b.measurements {
        if !matches!(m.kind, Kind::P2pCopy | Kind::D2d | Kind::H2d | Kind::D2h)
            || m.size_bytes.is_some()
        {
            continue;
        }
        if m.src.is_none() || m.dst.is_none() || m.statistic == Statistic::Single {
            continue;
        }
        let lat = m.latency_s.is_some();
        groups
            .entry((
                m.source.file.to_string(),
                m.test.to_string(),
                m.statistic,
                m.direction,
                lat,
            ))
            .or_default()
            .push(m);
    }
    let mut out = Vec::new();
    for ((_, test, stat, dir, lat), cells) in groups {
        let mut srcs: Vec<String> = cells
            .iter()
            .filter_map(|m| m.src.as_ref().map(|s| s.to_string()))
            .collect();
        let mut dsts: Vec<String> = cells
            .iter()
            .filter_map(|m| m.dst.as_ref().map(|s| s.to_string()))
            .collect();
        let key = |s: &String| crate::evidence::topology::device_sort_key(s);
        srcs.sort_by_key(key);
        srcs.dedup();
        dsts.sort_by_key(key);
        dsts.dedup();
        let values: Vec<f64> = cells
            .iter()
            .filter_map(|m| {
                if lat {
                    m.latency_s
                } else {
                    m.bandwidth_bytes_per_s
                }
            })
            .collect();
        let max = values.iter().cloned().fold(0.0f64, f64::max);
        let rows = srcs
            .iter()
            .map(|s| {
                let row = dsts
                    .iter()
                    .map(|d| {
                        let c = cells.iter().find(|m| {
                            m.src.as_deref() == Some(s.as_str())
                                && m.dst.as_deref() == Some(d.as_str())
                        });
                        match c {
                            Some(m) => {
                                let v = if lat {
                                    m.latency_s.unwrap_or(0.0)
                                } else {
                                    m.bandwidth_bytes_per_s.unwrap_or(0.0)
                                };
                                let text = if lat {
                                    format!("{:.2}", v * 1e6)
                                } else {
                                    format!("{:.1}", v / 1e9)
                                };
                                (text, heat(v, max, lat))
                            }
                            None => (String::new(), String::new()),
                        }
                    })
                    .collect();
                (s.clone(), row)
            })
            .collect();
        out.push(ValueMatrix {
            title: format!(
                "{test} ({}, {})",
                format!("{stat:?}").to_lowercase(),
                if dir == Direction::Bi {
                    "bidirectional, sum of both"
                } else {
                    "unidirectional, row to column"
                }
            ),
            unit: if lat {
                "us".into()
            } else {
                "GB/s (1e9 bytes/s)".into()
            },
            source: linker.link(&cells[0].source),
            columns: dsts,
            rows,
        });
    }
    out
}

/// A background colour: darker for better (higher bandwidth, lower latency).
fn heat(v: f64, max: f64, lower_is_better: bool) -> String {
    if max <= 0.0 || v <= 0.0 {
        return String::new();
    }
    // Log scale over three decades below the best.
    let r = (v / max).log10().clamp(-3.0, 0.0) / 3.0 + 1.0;
    let r = if lower_is_better { 1.0 - r * 0.8 } else { r };
    let light = (95.0 - 50.0 * r).round() as u32;
    format!("background:hsl(210,70%,{light}%)")
}

/// Size sweeps: bandwidth vs size on log-log axes with the fit dashed and
/// m* marked; collectives as busbw vs size.
fn sweep_charts(b: &Bundle, linker: &Linker<'_>) -> Vec<ChartView> {
    let mut out = Vec::new();
    for s in fit::sweeps(&b.measurements).iter().take(12) {
        let series = Series {
            label: s.label(),
            points: s
                .points
                .iter()
                .map(|p| (p.size_bytes, p.size_bytes / p.time_s))
                .collect(),
        };
        let fitted = fit::fit_with_knees(&s.points, 3).ok();
        let lines: Vec<FitLine> = fitted
            .as_ref()
            .map(|f| {
                f.segments
                    .iter()
                    .map(|g| FitLine {
                        alpha_s: g.alpha_s,
                        beta_bytes_per_s: g.beta_bytes_per_s,
                        from_bytes: g.from_bytes,
                        to_bytes: g.to_bytes,
                    })
                    .collect()
            })
            .unwrap_or_default();
        let note = match &fitted {
            Some(f) => {
                let segs: Vec<String> = f
                    .segments
                    .iter()
                    .map(|g| {
                        format!(
                            "{} to {}: alpha {}, beta {}, m* {}, R^2 {:.3}",
                            size_short(g.from_bytes),
                            size_short(g.to_bytes),
                            secs(g.alpha_s),
                            gbs(g.beta_bytes_per_s),
                            size_short(g.m_star_bytes),
                            g.r_squared
                        )
                    })
                    .collect();
                let knees = if f.knees_bytes.is_empty() {
                    String::new()
                } else {
                    format!(
                        " Knees at {}.",
                        f.knees_bytes
                            .iter()
                            .map(|k| size_short(*k))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                format!(
                    "MODEL fit t(m) = alpha + m/beta, {}.{knees} {}",
                    segs.join("; "),
                    if s.from_latency {
                        "Bandwidth shown is size / measured time."
                    } else {
                        "Times are size / measured bandwidth."
                    }
                )
            }
            None => "No alpha-beta fit: the sweep does not support one.".into(),
        };
        let y = if s.direction == Direction::Bi {
            "GB/s both directions (1e9 bytes/s, log)"
        } else {
            "GB/s (1e9 bytes/s, log)"
        };
        out.push(ChartView {
            title: s.label(),
            svg: charts::sweep_chart(&s.label(), &[series], &lines, y),
            note,
            source: Some(linker.link(&s.source)),
        });
    }
    // Collectives: busbw vs size, out-of-place and in-place together.
    let mut coll: BTreeMap<(String, String), Vec<&Measurement>> = BTreeMap::new();
    for m in &b.measurements {
        if m.statistic == Statistic::Busbw && m.size_bytes.is_some_and(|s| s > 0) {
            coll.entry((m.source.file.to_string(), m.kind.as_str().to_string()))
                .or_default()
                .push(m);
        }
    }
    for ((_, kind), cells) in coll {
        let mut by_test: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
        for m in &cells {
            if let (Some(s), Some(bw)) = (m.size_bytes, m.bandwidth_bytes_per_s)
                && bw > 0.0
            {
                by_test
                    .entry(m.test.to_string())
                    .or_default()
                    .push((s as f64, bw));
            }
        }
        let series: Vec<Series> = by_test
            .into_iter()
            .map(|(label, points)| Series { label, points })
            .collect();
        if series.iter().all(|s| s.points.len() < 2) {
            continue;
        }
        let title = format!("{kind}: bus bandwidth vs message size");
        out.push(ChartView {
            svg: charts::sweep_chart(&title, &series, &[], "busbw GB/s (1e9 bytes/s, log)"),
            title,
            note: "busbw = algbw x the collective's factor, comparable with a link's bandwidth (nccl-tests).".into(),
            source: Some(linker.link(&cells[0].source)),
        });
    }
    out
}

/// This node's best figure per kind and transcript, on the ladder.
fn ladder(b: &Bundle) -> String {
    let mut best: BTreeMap<(String, &'static str), f64> = BTreeMap::new();
    for m in &b.measurements {
        let (Some(bw), true) = (
            m.bandwidth_bytes_per_s,
            matches!(
                m.statistic,
                Statistic::Avg | Statistic::Peak | Statistic::Busbw
            ),
        ) else {
            continue;
        };
        if m.statistic == Statistic::Busbw && m.size_bytes.is_none() {
            continue;
        }
        let file = m
            .source
            .file
            .rsplit('/')
            .next()
            .unwrap_or("")
            .chars()
            .take(18)
            .collect::<String>();
        let e = best.entry((file, m.kind.as_str())).or_insert(0.0);
        if bw > *e {
            *e = bw;
        }
    }
    let points: Vec<(String, f64)> = best
        .into_iter()
        .filter(|(_, v)| *v > 0.0)
        .map(|((f, k), v)| (format!("{k} {} ({f})", gbs(v)), v))
        .collect();
    charts::ladder_chart(&points)
}

/// Adapter rate from the bundle: the fastest active RDMA port.
fn nic_rate(b: &Bundle) -> Option<f64> {
    b.rdma
        .iter()
        .flat_map(|d| d.ports.iter())
        .filter(|p| p.active == Some(true))
        .filter_map(|p| p.rate_bytes_per_s)
        .fold(None, |a: Option<f64>, r| Some(a.map_or(r, |a| a.max(r))))
}

/// Scale-up bandwidth per GPU from the bundle: active NVLinks x their rate
/// of the first GPU that has any.
fn scaleup(b: &Bundle) -> Option<(f64, String)> {
    let t = &b.topology;
    for g in t.gpus() {
        let active: Vec<_> = t
            .nvlink
            .iter()
            .filter(|p| p.gpu == g.id && p.active)
            .collect();
        if let Some(r) = active.first().and_then(|p| p.rate_bytes_per_s) {
            return Some((
                r * active.len() as f64,
                format!("{} active NVLinks x {} ({})", active.len(), gbs(r), g.id),
            ));
        }
    }
    None
}

fn cliff(b: &Bundle) -> Option<ChartView> {
    let gpus = b.topology.gpus().count() as u32;
    let nics = b
        .topology
        .devices
        .iter()
        .filter(|d| d.kind == DeviceKind::Nic)
        .count() as u32;
    let rate = nic_rate(b)?;
    let (up, up_from) = scaleup(b)?;
    if gpus == 0 || nics == 0 {
        return None;
    }
    Some(ChartView {
        title: "Injection cliff (MODEL)".into(),
        svg: charts::cliff_chart(gpus, rate, up, nics),
        note: format!(
            "Adapter rate {} from the RDMA ports; scale-up {} from {up_from}.",
            gbs(rate),
            gbs(up)
        ),
        source: None,
    })
}

fn model_views(b: &Bundle) -> Vec<ModelView> {
    let mut out = Vec::new();
    let gpus = b.topology.gpus().count() as u32;
    let nics = b
        .topology
        .devices
        .iter()
        .filter(|d| d.kind == DeviceKind::Nic)
        .count() as u32;
    let rate = nic_rate(b);
    // Injection: needs GPU and adapter counts and an adapter rate.
    match (gpus, nics, rate) {
        (g, n, Some(r)) if g > 0 && n > 0 => {
            if let Ok(i) = injection::injection(g, n, r, scaleup(b).map_or(1.0, |s| s.0)) {
                let mut lines = vec![
                    format!("{g} GPUs, {n} adapters at {} each (from the RDMA ports).", gbs(r)),
                    format!("Node injection {}; per-GPU share {}.", gbs(i.node_injection_bytes_per_s), gbs(i.per_gpu_bytes_per_s)),
                ];
                if let Some((up, from)) = scaleup(b) {
                    lines.push(format!("Ratio to scale-up ({} from {from}): {:.4}.", gbs(up), i.ratio_to_scaleup));
                }
                out.push(ModelView { title: "Injection ceiling".into(), lines });
            }
        }
        _ => out.push(ModelView {
            title: "Injection ceiling".into(),
            lines: vec![format!(
                "Not computed: needs GPU and adapter counts (topology: {gpus} GPUs, {nics} adapters) and an adapter rate (RDMA ports: {}).",
                if rate.is_some() { "present" } else { "absent" }
            )],
        }),
    }
    // Staging: needs a PCIe ceiling and a network rate.
    let pcie = b.pcie.iter().find_map(|p| {
        let lanes = p.current_width_lanes?;
        let generation = p.current_generation.or_else(|| {
            p.current_speed_gt_per_s
                .and_then(ceiling::pcie_generation_of)
        })?;
        ceiling::pcie(generation, lanes).ok()
    });
    match (pcie, rate) {
        (Some(p), Some(r)) => {
            let m = 1e9;
            if let (Ok(s), Ok(d)) = (staging::staged_cost(m, p.per_direction_bytes_per_s, r), staging::direct_cost(m, p.per_direction_bytes_per_s, r)) {
                out.push(ModelView {
                    title: "Staged vs direct, 1 GB message".into(),
                    lines: vec![
                        format!("PCIe {} ({}), network {}.", gbs(p.per_direction_bytes_per_s), p.link, gbs(r)),
                        format!("Staged: {} serial, {} pipelined, {} through host memory.", secs(s.serial_s), secs(s.pipelined_s), bytes(s.host_memory_traffic_bytes)),
                        format!("Direct: {} serial, {} pipelined.", secs(d.serial_s), secs(d.pipelined_s)),
                    ],
                });
            }
        }
        (p, r) => out.push(ModelView {
            title: "Staged vs direct".into(),
            lines: vec![format!(
                "Not computed: needs a PCIe link state (lspci or nvidia-smi -q: {}) and an adapter rate (RDMA ports: {}).",
                if p.is_some() { "present" } else { "absent" },
                if r.is_some() { "present" } else { "absent" }
            )],
        }),
    }
    // Ceilings of the PCIe links seen.
    let mut lines = Vec::new();
    for p in &b.pcie {
        let now = p.current_width_lanes.zip(p.current_generation.or_else(|| {
            p.current_speed_gt_per_s
                .and_then(ceiling::pcie_generation_of)
        }));
        let cap = p.max_width_lanes.zip(
            p.max_generation
                .or_else(|| p.max_speed_gt_per_s.and_then(ceiling::pcie_generation_of)),
        );
        if let (Some((w, g)), Some((mw, mg))) = (now, cap)
            && let (Ok(c), Ok(m)) = (ceiling::pcie(g, w), ceiling::pcie(mg, mw))
        {
            lines.push(format!(
                "{}: now {} ({}), capable of {} ({}).",
                p.address,
                gbs(c.per_direction_bytes_per_s),
                c.link,
                gbs(m.per_direction_bytes_per_s),
                m.link
            ));
        }
    }
    if !lines.is_empty() {
        out.push(ModelView {
            title: "PCIe ceilings per direction".into(),
            lines,
        });
    }
    out
}

const QUESTION_LABELS: [&str; 7] = [
    "bytes or bits",
    "direction",
    "message size",
    "warm-up",
    "outstanding operations",
    "path",
    "what else was running",
];

fn interpretation(b: &Bundle, linker: &Linker<'_>) -> Vec<SeriesView> {
    type Key = (String, String, Statistic, Direction, bool);
    let mut groups: BTreeMap<Key, Vec<&Measurement>> = BTreeMap::new();
    for m in &b.measurements {
        groups
            .entry((
                m.source.file.to_string(),
                m.test.to_string(),
                m.statistic,
                m.direction,
                m.latency_s.is_some(),
            ))
            .or_default()
            .push(m);
    }
    let mut out = Vec::new();
    for ((_, test, stat, _, lat), cells) in groups {
        let first = cells[0];
        let q = &first.questions;
        let answers = [
            &q.unit,
            &q.direction,
            &q.message_size,
            &q.warm_up,
            &q.outstanding,
            &q.path,
            &q.context,
        ];
        let mut questions: Vec<(&'static str, String)> = Vec::new();
        for (i, label) in QUESTION_LABELS.iter().enumerate() {
            let get = |m: &Measurement| -> String {
                let q = &m.questions;
                [
                    &q.unit,
                    &q.direction,
                    &q.message_size,
                    &q.warm_up,
                    &q.outstanding,
                    &q.path,
                    &q.context,
                ][i]
                    .to_string()
            };
            let distinct: BTreeSet<String> = cells.iter().map(|m| get(m)).collect();
            let text = if distinct.len() == 1 {
                answers[i].to_string()
            } else if i == 2 {
                let sizes: Vec<u64> = cells.iter().filter_map(|m| m.size_bytes).collect();
                format!(
                    "a sweep from {} to {}",
                    bytes(sizes.iter().min().copied().unwrap_or(0) as f64),
                    bytes(sizes.iter().max().copied().unwrap_or(0) as f64)
                )
            } else {
                distinct.into_iter().collect::<Vec<_>>().join(" | ")
            };
            questions.push((label, text));
        }
        let shown = 48;
        let values: Vec<String> = cells
            .iter()
            .take(shown)
            .map(|m| {
                let who = match (&m.src, &m.dst) {
                    (Some(s), Some(d)) => format!("{s}->{d} "),
                    (Some(s), None) => format!("{s} "),
                    _ => String::new(),
                };
                let size = m
                    .size_bytes
                    .map(|s| format!("{}: ", size_short(s as f64)))
                    .unwrap_or_default();
                let value = if lat {
                    secs(m.latency_s.unwrap_or(0.0))
                } else {
                    gbs(m.bandwidth_bytes_per_s.unwrap_or(0.0))
                };
                let ceiling = match (m.bandwidth_bytes_per_s, diagnosis::ceiling_for(b, m)) {
                    (Some(v), Some(c)) => format!(
                        " = {:.0}% of {} ({})",
                        100.0 * v / c.bytes_per_s,
                        gbs(c.bytes_per_s),
                        c.from
                    ),
                    _ => String::new(),
                };
                format!("{who}{size}{value} [printed {}]{ceiling}", m.as_printed)
            })
            .collect();
        let ceiling = match diagnosis::ceiling_for(b, first) {
            Some(c) if !lat => format!("{} per the path's link facts ({}); ratios below", gbs(c.bytes_per_s), c.from),
            _ => "not known: this bundle lacks the link facts of this path (link generation, width or port rate)".to_string(),
        };
        out.push(SeriesView {
            title: format!(
                "{} {test} ({})",
                first.tool,
                format!("{stat:?}").to_lowercase()
            ),
            source: linker.link(&first.source),
            ceiling,
            questions,
            more: cells.len().saturating_sub(shown),
            values,
        });
    }
    out
}
