//! Diagnosis: evidence plus models become findings. A finding is a kind
//! plus numbers plus the transcript lines it rests on; no prose here. The
//! explanation of each kind lives in `templates/explain/<kind>.md`, chosen
//! by an exhaustive match in [`explanation`], so a new kind without an
//! explanation does not compile.
//!
//! The rules follow the seed's diagnosis flow (sections 3.5, 3.7, 6.2):
//! placement first (host hops inside a group), then the GPU-to-adapter
//! path, then whether the direct path is really used, then injection, then
//! the links themselves (PCIe trained down, NVLinks or RDMA ports down),
//! then the numbers' own traps (bits vs bytes, uni vs bidirectional).

use serde::Serialize;

use crate::bundle::{Bundle, ProblemKind};
use crate::evidence::Source;
use crate::evidence::measurement::{Direction, Kind, Measurement, P2p, Statistic, Verification};
use crate::evidence::topology::{DeviceKind, LinkClass};
use crate::models::injection;

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    /// Costs bandwidth or correctness now.
    Critical,
    /// Likely costs performance, or needs a look.
    Warning,
    /// Worth knowing when reading the numbers.
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// What was found, with the numbers that make it concrete.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Finding {
    /// Some GPU pairs have a direct link and others do not: a group that
    /// spans one of the others runs its collectives a tier down.
    HostHopInGroup {
        a: String,
        b: String,
        class: LinkClass,
        code: String,
        direct_pairs: usize,
        other_pairs: usize,
    },
    /// P2P-enabled bandwidth of a pair is within a few percent of
    /// P2P-disabled: the copy is staged through the host either way.
    SilentStaging {
        src: String,
        dst: String,
        enabled_bytes_per_s: f64,
        disabled_bytes_per_s: f64,
    },
    /// A measured pair far below the ceiling of its path.
    FarBelowCeiling {
        what: String,
        measured_bytes_per_s: f64,
        ceiling_bytes_per_s: f64,
    },
    /// The closest adapter of a GPU is across the socket boundary.
    NicOnOtherSocket {
        gpu: String,
        nic: String,
        code: String,
    },
    /// Fewer adapters than GPUs: each GPU gets a share of one.
    InjectionShare {
        gpus: usize,
        nics: usize,
        nic_bytes_per_s: Option<f64>,
        per_gpu_bytes_per_s: Option<f64>,
    },
    /// A PCIe link runs narrower than it can.
    PcieWidthDown {
        device: String,
        current_lanes: u32,
        max_lanes: u32,
    },
    /// A PCIe link runs slower than it can (may be idle power saving).
    PcieSpeedDown {
        device: String,
        current: String,
        max: String,
    },
    /// NVLinks reported inactive.
    NvlinksInactive {
        gpu: String,
        inactive: usize,
        total: Option<usize>,
    },
    /// An RDMA port that is not ACTIVE / LinkUp.
    RdmaPortDown {
        device: String,
        port: u32,
        state: String,
        physical_state: String,
    },
    /// An RDMA port slower than the fastest of its kind in the node.
    RdmaPortBelowRate {
        device: String,
        port: u32,
        rate_bytes_per_s: f64,
        best_bytes_per_s: f64,
    },
    /// A collective or a copy that reported wrong data.
    WrongResults {
        tool: String,
        what: String,
        errors: u64,
    },
    /// The tool itself failed (a data check, a crash, a missing device).
    ToolFailed { tool: String, message: String },
    /// Figures printed in bits: easy to compare against bytes by mistake.
    BitsNotBytes {
        tool: String,
        example_as_printed: String,
        example_bytes_per_s: f64,
    },
    /// Bidirectional figures are the sum of both directions.
    BidirectionalSum {
        tool: String,
        test: String,
        example_bytes_per_s: f64,
    },
    /// A transcript stops early: what is missing was not measured.
    Truncated { file: String, message: String },
}

/// A finding with its severity, a one-line summary (escaped when shown) and
/// the lines it rests on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnosed {
    pub severity: Severity,
    pub finding: Finding,
    /// One sentence with the numbers, for people.
    pub summary: String,
    pub evidence: Vec<Source>,
}

impl Finding {
    /// The kind's name, as in `templates/explain/<name>.md`.
    pub fn name(&self) -> &'static str {
        match self {
            Finding::HostHopInGroup { .. } => "host-hop-in-group",
            Finding::SilentStaging { .. } => "silent-staging",
            Finding::FarBelowCeiling { .. } => "far-below-ceiling",
            Finding::NicOnOtherSocket { .. } => "nic-on-other-socket",
            Finding::InjectionShare { .. } => "injection-share",
            Finding::PcieWidthDown { .. } => "pcie-width-down",
            Finding::PcieSpeedDown { .. } => "pcie-speed-down",
            Finding::NvlinksInactive { .. } => "nvlinks-inactive",
            Finding::RdmaPortDown { .. } => "rdma-port-down",
            Finding::RdmaPortBelowRate { .. } => "rdma-port-below-rate",
            Finding::WrongResults { .. } => "wrong-results",
            Finding::ToolFailed { .. } => "tool-failed",
            Finding::BitsNotBytes { .. } => "bits-not-bytes",
            Finding::BidirectionalSum { .. } => "bidirectional-sum",
            Finding::Truncated { .. } => "truncated",
        }
    }
}

/// The markdown explaining a kind: what it means and what to do.
pub fn explanation(f: &Finding) -> &'static str {
    match f {
        Finding::HostHopInGroup { .. } => {
            include_str!("../../templates/explain/host-hop-in-group.md")
        }
        Finding::SilentStaging { .. } => include_str!("../../templates/explain/silent-staging.md"),
        Finding::FarBelowCeiling { .. } => {
            include_str!("../../templates/explain/far-below-ceiling.md")
        }
        Finding::NicOnOtherSocket { .. } => {
            include_str!("../../templates/explain/nic-on-other-socket.md")
        }
        Finding::InjectionShare { .. } => {
            include_str!("../../templates/explain/injection-share.md")
        }
        Finding::PcieWidthDown { .. } => include_str!("../../templates/explain/pcie-width-down.md"),
        Finding::PcieSpeedDown { .. } => include_str!("../../templates/explain/pcie-speed-down.md"),
        Finding::NvlinksInactive { .. } => {
            include_str!("../../templates/explain/nvlinks-inactive.md")
        }
        Finding::RdmaPortDown { .. } => include_str!("../../templates/explain/rdma-port-down.md"),
        Finding::RdmaPortBelowRate { .. } => {
            include_str!("../../templates/explain/rdma-port-below-rate.md")
        }
        Finding::WrongResults { .. } => include_str!("../../templates/explain/wrong-results.md"),
        Finding::ToolFailed { .. } => include_str!("../../templates/explain/tool-failed.md"),
        Finding::BitsNotBytes { .. } => include_str!("../../templates/explain/bits-not-bytes.md"),
        Finding::BidirectionalSum { .. } => {
            include_str!("../../templates/explain/bidirectional-sum.md")
        }
        Finding::Truncated { .. } => include_str!("../../templates/explain/truncated.md"),
    }
}

fn gbs(b: f64) -> String {
    format!("{:.2} GB/s", b / 1e9)
}

/// P2P-enabled within this fraction of P2P-disabled is the staging
/// fingerprint (seed section 3.5: the fallback works and is slow).
const STAGING_SIMILARITY: f64 = 0.10;
/// A measurement below this fraction of its path's ceiling is flagged.
pub const FAR_BELOW: f64 = 0.25;

/// Runs every rule over one node's bundle. Deterministic: findings come
/// out in a stable order (severity, then the order the rules run in).
pub fn diagnose(b: &Bundle) -> Vec<Diagnosed> {
    let mut out = Vec::new();
    host_hops(b, &mut out);
    silent_staging(b, &mut out);
    nic_sockets(b, &mut out);
    injection_share(b, &mut out);
    pcie_links(b, &mut out);
    nvlinks(b, &mut out);
    rdma_ports(b, &mut out);
    wrong_results(b, &mut out);
    tool_failures(b, &mut out);
    far_below_ceiling(b, &mut out);
    unit_traps(b, &mut out);
    out.sort_by_key(|d| d.severity);
    out
}

fn push(
    out: &mut Vec<Diagnosed>,
    severity: Severity,
    finding: Finding,
    summary: String,
    evidence: Vec<Source>,
) {
    out.push(Diagnosed {
        severity,
        finding,
        summary,
        evidence,
    });
}

fn host_hops(b: &Bundle, out: &mut Vec<Diagnosed>) {
    let t = &b.topology;
    let gpu_pairs: Vec<_> = t.gpu_links().collect();
    let direct = gpu_pairs
        .iter()
        .filter(|l| l.class == LinkClass::DirectLink)
        .count();
    let others: Vec<_> = gpu_pairs
        .iter()
        .filter(|l| l.class > LinkClass::DirectLink && l.class != LinkClass::Unknown)
        .collect();
    if others.is_empty() {
        return;
    }
    // Report the worst pair; the matrix on the page shows the rest.
    let worst = others.iter().max_by_key(|l| l.class).expect("non-empty");
    let severity = if direct > 0 {
        Severity::Warning
    } else {
        Severity::Info
    };
    let code = worst.code.clone().unwrap_or_default();
    let summary = if direct > 0 {
        format!(
            "{} of {} GPU pairs have a direct link and {} do not; the worst, {}-{}, is {} ({code}). A group spanning it runs its collectives a tier down.",
            direct,
            gpu_pairs.len(),
            others.len(),
            worst.a,
            worst.b,
            worst.class
        )
    } else {
        format!(
            "No GPU pair has a direct link: every pair goes through PCIe; the worst, {}-{}, is {} ({code}).",
            worst.a, worst.b, worst.class
        )
    };
    push(
        out,
        severity,
        Finding::HostHopInGroup {
            a: worst.a.clone(),
            b: worst.b.clone(),
            class: worst.class,
            code,
            direct_pairs: direct,
            other_pairs: others.len(),
        },
        summary,
        worst.sources.clone(),
    );
}

fn key(m: &Measurement) -> Option<(String, String, String, Direction)> {
    Some((
        m.source.file.to_string(),
        m.src.as_ref()?.to_string(),
        m.dst.as_ref()?.to_string(),
        m.direction,
    ))
}

fn silent_staging(b: &Bundle, out: &mut Vec<Diagnosed>) {
    use std::collections::BTreeMap;
    // Pair -> (enabled, disabled) unidirectional bandwidths, same transcript.
    // Pair -> (P2P enabled, P2P disabled) cells.
    type Pair<'a> = (Option<&'a Measurement>, Option<&'a Measurement>);
    let mut pairs: BTreeMap<(String, String, String, Direction), Pair<'_>> = BTreeMap::new();
    for m in &b.measurements {
        if m.kind != Kind::P2pCopy
            || m.bandwidth_bytes_per_s.is_none()
            || m.direction != Direction::Uni
        {
            continue;
        }
        let Some(k) = key(m) else { continue };
        let e = pairs.entry(k).or_default();
        match m.p2p {
            P2p::Enabled => e.0 = Some(m),
            P2p::Disabled => e.1 = Some(m),
            P2p::Unknown => {}
        }
    }
    let mut flagged = 0;
    for ((_, src, dst, _), (en, dis)) in &pairs {
        let (Some(en), Some(dis)) = (en, dis) else {
            continue;
        };
        let (e, d) = (
            en.bandwidth_bytes_per_s.unwrap_or(0.0),
            dis.bandwidth_bytes_per_s.unwrap_or(0.0),
        );
        if d <= 0.0 || (e - d).abs() > STAGING_SIMILARITY * d {
            continue;
        }
        flagged += 1;
        // One finding per node is enough to make the point; the matrices show the rest.
        if flagged > 1 {
            continue;
        }
        push(
            out,
            Severity::Critical,
            Finding::SilentStaging {
                src: src.clone(),
                dst: dst.clone(),
                enabled_bytes_per_s: e,
                disabled_bytes_per_s: d,
            },
            format!(
                "{src} to {dst}: {} with P2P enabled against {} with it disabled. The enabled copy is staged through host memory too.",
                gbs(e),
                gbs(d)
            ),
            vec![en.source.clone(), dis.source.clone()],
        );
    }
    if flagged > 1
        && let Some(last) = out.last_mut()
        && let Finding::SilentStaging { .. } = last.finding
    {
        last.summary.push_str(&format!(
            " {} pairs in all show the same fingerprint.",
            flagged
        ));
    }
}

fn nic_sockets(b: &Bundle, out: &mut Vec<Diagnosed>) {
    let t = &b.topology;
    let nics: Vec<&str> = t
        .devices
        .iter()
        .filter(|d| d.kind == DeviceKind::Nic)
        .map(|d| d.id.as_str())
        .collect();
    if nics.is_empty() {
        return;
    }
    for g in t.gpus() {
        let best = nics
            .iter()
            .filter_map(|n| t.link(&g.id, n).map(|l| (l, *n)))
            .min_by_key(|(l, _)| l.class);
        let Some((l, nic)) = best else { continue };
        if l.class == LinkClass::CrossSocket {
            let name = t
                .device(nic)
                .and_then(|d| d.name.clone())
                .unwrap_or_else(|| nic.to_string());
            let code = l.code.clone().unwrap_or_default();
            push(
                out,
                Severity::Warning,
                Finding::NicOnOtherSocket {
                    gpu: g.id.clone(),
                    nic: name.clone(),
                    code: code.clone(),
                },
                format!(
                    "{}'s closest adapter, {name} ({nic}), is across the socket boundary ({code}): no fast GPUDirect path.",
                    g.id
                ),
                l.sources.clone(),
            );
        }
    }
}

fn injection_share(b: &Bundle, out: &mut Vec<Diagnosed>) {
    let t = &b.topology;
    let gpus = t.gpus().count();
    // Adapters: from the topology, or else the RDMA devices with an active port.
    let topo_nics = t
        .devices
        .iter()
        .filter(|d| d.kind == DeviceKind::Nic)
        .count();
    let nics = if topo_nics > 0 { topo_nics } else { 0 };
    if gpus < 2 || nics == 0 || nics >= gpus {
        return;
    }
    let rate = b
        .rdma
        .iter()
        .flat_map(|d| d.ports.iter())
        .filter(|p| p.active == Some(true))
        .filter_map(|p| p.rate_bytes_per_s)
        .fold(None, |a: Option<f64>, r| Some(a.map_or(r, |a| a.max(r))));
    let per_gpu = rate
        .and_then(|r| injection::injection(gpus as u32, nics as u32, r, 1.0).ok())
        .map(|i| i.per_gpu_bytes_per_s);
    let summary = match per_gpu {
        Some(p) => format!(
            "{gpus} GPUs share {nics} adapter(s): each GPU can inject {} (MODEL) into the network.",
            gbs(p)
        ),
        None => format!(
            "{gpus} GPUs share {nics} adapter(s): each GPU gets {nics}/{gpus} of one adapter's rate (MODEL)."
        ),
    };
    let evidence = t
        .devices
        .iter()
        .filter(|d| d.kind == DeviceKind::Nic)
        .map(|d| d.source.clone())
        .take(1)
        .collect();
    push(
        out,
        Severity::Warning,
        Finding::InjectionShare {
            gpus,
            nics,
            nic_bytes_per_s: rate,
            per_gpu_bytes_per_s: per_gpu,
        },
        summary,
        evidence,
    );
}

fn pcie_links(b: &Bundle, out: &mut Vec<Diagnosed>) {
    for p in &b.pcie {
        let name = p
            .name
            .clone()
            .map(|n| format!("{} ({n})", p.address))
            .unwrap_or_else(|| p.address.clone());
        if let (Some(c), Some(m)) = (p.current_width_lanes, p.max_width_lanes)
            && c < m
        {
            push(
                out,
                Severity::Critical,
                Finding::PcieWidthDown {
                    device: name.clone(),
                    current_lanes: c,
                    max_lanes: m,
                },
                format!(
                    "{name} runs at x{c} of x{m} lanes: at most {}% of its PCIe bandwidth.",
                    c * 100 / m
                ),
                vec![p.source.clone()],
            );
        }
        let speed = match (
            p.current_speed_gt_per_s,
            p.max_speed_gt_per_s,
            p.current_generation,
            p.max_generation,
        ) {
            (Some(c), Some(m), _, _) if c < m => Some((format!("{c} GT/s"), format!("{m} GT/s"))),
            (_, _, Some(c), Some(m)) if c < m => Some((format!("Gen{c}"), format!("Gen{m}"))),
            _ => None,
        };
        if let Some((c, m)) = speed {
            push(
                out,
                Severity::Warning,
                Finding::PcieSpeedDown {
                    device: name.clone(),
                    current: c.clone(),
                    max: m.clone(),
                },
                format!(
                    "{name} links at {c} of {m}. GPUs drop speed when idle; check again under load before replacing anything."
                ),
                vec![p.source.clone()],
            );
        }
    }
}

fn nvlinks(b: &Bundle, out: &mut Vec<Diagnosed>) {
    use std::collections::BTreeMap;
    let mut per_gpu: BTreeMap<&str, Vec<&crate::evidence::topology::NvlinkPort>> = BTreeMap::new();
    for p in &b.topology.nvlink {
        per_gpu.entry(p.gpu.as_str()).or_default().push(p);
    }
    let any_active = b.topology.nvlink.iter().any(|p| p.active);
    for (gpu, ports) in per_gpu {
        let inactive = ports.iter().filter(|p| !p.active).count();
        if inactive == 0 {
            continue;
        }
        let all_reported_off = ports.iter().all(|p| p.link.is_none());
        let total = if all_reported_off {
            None
        } else {
            Some(ports.len())
        };
        // No NVLink anywhere in the node (PCIe cards): informational.
        let severity = if any_active {
            Severity::Warning
        } else {
            Severity::Info
        };
        let summary = match total {
            Some(t) => format!("{gpu}: {inactive} of {t} NVLinks inactive."),
            None => format!("{gpu}: every NVLink inactive (NVML could not read any link)."),
        };
        push(
            out,
            severity,
            Finding::NvlinksInactive {
                gpu: gpu.to_string(),
                inactive,
                total,
            },
            summary,
            ports
                .iter()
                .filter(|p| !p.active)
                .take(3)
                .map(|p| p.source.clone())
                .collect(),
        );
    }
}

fn rdma_ports(b: &Bundle, out: &mut Vec<Diagnosed>) {
    for d in &b.rdma {
        for p in &d.ports {
            let down = p.active == Some(false) || p.link_up == Some(false);
            if down {
                let state = p.state.clone().unwrap_or_else(|| "not stated".into());
                let phys = p
                    .physical_state
                    .clone()
                    .unwrap_or_else(|| "not stated".into());
                push(
                    out,
                    Severity::Warning,
                    Finding::RdmaPortDown {
                        device: d.name.clone(),
                        port: p.port,
                        state: state.clone(),
                        physical_state: phys.clone(),
                    },
                    format!(
                        "{} port {}: state {state}, physical state {phys}. No number measured through it means anything until it is Active / LinkUp.",
                        d.name, p.port
                    ),
                    vec![p.source.clone()],
                );
            }
        }
    }
    // Below the best rate among active ports of the same link layer.
    let active: Vec<(&str, &crate::evidence::rdma::RdmaPort)> = b
        .rdma
        .iter()
        .flat_map(|d| d.ports.iter().map(move |p| (d.name.as_str(), p)))
        .filter(|(_, p)| p.active == Some(true) && p.rate_bytes_per_s.is_some())
        .collect();
    for (name, p) in &active {
        let best = active
            .iter()
            .filter(|(_, q)| q.link_layer == p.link_layer)
            .filter_map(|(_, q)| q.rate_bytes_per_s)
            .fold(0.0f64, f64::max);
        let rate = p.rate_bytes_per_s.unwrap_or(0.0);
        if rate < best {
            push(
                out,
                Severity::Warning,
                Finding::RdmaPortBelowRate {
                    device: name.to_string(),
                    port: p.port,
                    rate_bytes_per_s: rate,
                    best_bytes_per_s: best,
                },
                format!(
                    "{name} port {} is active at {} while other {} ports run at {}.",
                    p.port,
                    gbs(rate),
                    p.link_layer.clone().unwrap_or_default(),
                    gbs(best)
                ),
                vec![p.source.clone()],
            );
        }
    }
}

fn wrong_results(b: &Bundle, out: &mut Vec<Diagnosed>) {
    use std::collections::BTreeMap;
    let mut per: BTreeMap<(String, String), (u64, Source)> = BTreeMap::new();
    for m in &b.measurements {
        if let Verification::Checked { errors } = m.verification
            && errors > 0
        {
            let e = per
                .entry((m.tool.to_string(), m.test.to_string()))
                .or_insert((0, m.source.clone()));
            e.0 += errors;
        }
    }
    for ((tool, what), (errors, src)) in per {
        push(
            out,
            Severity::Critical,
            Finding::WrongResults {
                tool: tool.clone(),
                what: what.clone(),
                errors,
            },
            format!(
                "{tool} `{what}` reported {errors} wrong value(s): its bandwidth figures describe a run that corrupted data."
            ),
            vec![src],
        );
    }
}

fn tool_failures(b: &Bundle, out: &mut Vec<Diagnosed>) {
    for p in &b.problems {
        let src = Source {
            file: p.file.clone().into(),
            line: p.line.unwrap_or(1),
        };
        let tool = b
            .transcripts
            .iter()
            .find(|t| t.path == p.file)
            .map(|t| t.tool.as_str().to_string())
            .unwrap_or_default();
        match p.kind {
            ProblemKind::ToolError => push(
                out,
                Severity::Critical,
                Finding::ToolFailed {
                    tool: tool.clone(),
                    message: p.message.clone(),
                },
                format!("{tool}: {}", p.message),
                vec![src],
            ),
            ProblemKind::Truncated => push(
                out,
                Severity::Info,
                Finding::Truncated {
                    file: p.file.clone(),
                    message: p.message.clone(),
                },
                format!("{}: {}", short(&p.file), p.message),
                vec![src],
            ),
            _ => {}
        }
    }
}

/// The ceiling of the path a measurement took, when the bundle states the
/// link facts it needs: an RDMA port's rate, or a direct link's NVLink count
/// and per-link rate (from `nvidia-smi nvlink --status`), or an XGMI pair's
/// maximum bandwidth (from rocm-smi / amd-smi). Bidirectional figures are
/// compared with both directions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathCeiling {
    pub bytes_per_s: f64,
    /// How it was obtained, for the page.
    pub from: String,
}

pub fn ceiling_for(b: &Bundle, m: &Measurement) -> Option<PathCeiling> {
    let both = if m.direction == Direction::Bi {
        2.0
    } else {
        1.0
    };
    match m.kind {
        Kind::RdmaWrite | Kind::RdmaRead | Kind::RdmaSend | Kind::RdmaAtomic | Kind::Rdma => {
            let dev = m.src.as_ref()?;
            let d = b.rdma.iter().find(|d| d.name == dev.as_str())?;
            let p = d
                .ports
                .iter()
                .find(|p| p.active == Some(true))
                .or(d.ports.first())?;
            let r = p.rate_bytes_per_s?;
            Some(PathCeiling {
                bytes_per_s: r * both,
                from: format!(
                    "{dev} port {} rate {} Gb/s",
                    p.port,
                    p.rate_as_printed.clone().unwrap_or_default()
                ),
            })
        }
        Kind::P2pCopy => {
            let (s, d) = (m.src.as_ref()?, m.dst.as_ref()?);
            let l = b.topology.link(s, d)?;
            if let Some(n) = l.nvlinks {
                let per = b
                    .topology
                    .nvlink
                    .iter()
                    .filter(|p| p.gpu == s.as_str() && p.active)
                    .find_map(|p| p.rate_bytes_per_s)?;
                return Some(PathCeiling {
                    bytes_per_s: f64::from(n) * per * both,
                    from: format!(
                        "{n} NVLinks x {:.3} GB/s (nvidia-smi nvlink --status)",
                        per / 1e9
                    ),
                });
            }
            let max = l.max_bandwidth_bytes_per_s.filter(|x| *x > 0.0)?;
            Some(PathCeiling {
                bytes_per_s: max * both,
                from: "XGMI max bandwidth reported by the driver".into(),
            })
        }
        _ => None,
    }
}

fn far_below_ceiling(b: &Bundle, out: &mut Vec<Diagnosed>) {
    use std::collections::BTreeMap;
    // Best figure per series, with its ceiling.
    type Series = (String, String, Option<String>, Option<String>);
    let mut best: BTreeMap<Series, (&Measurement, PathCeiling)> = BTreeMap::new();
    for m in &b.measurements {
        if !matches!(m.statistic, Statistic::Avg | Statistic::Peak) {
            continue;
        }
        let Some(bw) = m.bandwidth_bytes_per_s else {
            continue;
        };
        let Some(c) = ceiling_for(b, m) else { continue };
        let k = (
            m.source.file.to_string(),
            m.test.to_string(),
            m.src.as_ref().map(|x| x.to_string()),
            m.dst.as_ref().map(|x| x.to_string()),
        );
        match best.get(&k) {
            Some((prev, _)) if prev.bandwidth_bytes_per_s.unwrap_or(0.0) >= bw => {}
            _ => {
                best.insert(k, (m, c));
            }
        }
    }
    for ((_, test, src, dst), (m, c)) in best {
        let bw = m.bandwidth_bytes_per_s.unwrap_or(0.0);
        if bw >= FAR_BELOW * c.bytes_per_s {
            continue;
        }
        let what = format!(
            "{test} {}{}",
            src.unwrap_or_default(),
            dst.map(|d| format!("->{d}")).unwrap_or_default()
        );
        push(
            out,
            Severity::Warning,
            Finding::FarBelowCeiling {
                what: what.clone(),
                measured_bytes_per_s: bw,
                ceiling_bytes_per_s: c.bytes_per_s,
            },
            format!(
                "{what}: best {} is {:.0}% of the path's ceiling {} ({}).",
                gbs(bw),
                100.0 * bw / c.bytes_per_s,
                gbs(c.bytes_per_s),
                c.from
            ),
            vec![m.source.clone()],
        );
    }
}

fn short(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn unit_traps(b: &Bundle, out: &mut Vec<Diagnosed>) {
    use std::collections::BTreeMap;
    // The largest figure of each transcript printed in bits, and of each
    // bidirectional test between two different endpoints: one finding each.
    let mut bits: BTreeMap<String, &Measurement> = BTreeMap::new();
    let mut bi: BTreeMap<(String, String), &Measurement> = BTreeMap::new();
    let bigger =
        |a: &Measurement, b: &Measurement| b.bandwidth_bytes_per_s > a.bandwidth_bytes_per_s;
    for m in &b.measurements {
        if m.bandwidth_bytes_per_s.is_none() {
            continue;
        }
        if m.as_printed.contains("Gb/sec") {
            let e = bits.entry(m.source.file.to_string()).or_insert(m);
            if bigger(e, m) {
                *e = m;
            }
        }
        if m.direction == Direction::Bi && m.statistic != Statistic::Sum && m.src != m.dst {
            let e = bi
                .entry((m.source.file.to_string(), m.test.to_string()))
                .or_insert(m);
            if bigger(e, m) {
                *e = m;
            }
        }
    }
    for m in bits.into_values() {
        let bw = m.bandwidth_bytes_per_s.unwrap_or(0.0);
        push(
            out,
            Severity::Info,
            Finding::BitsNotBytes {
                tool: m.tool.to_string(),
                example_as_printed: m.as_printed.clone(),
                example_bytes_per_s: bw,
            },
            format!(
                "{} reports bits: {} is {} (bytes). Compare like with like.",
                m.tool,
                m.as_printed,
                gbs(bw)
            ),
            vec![m.source.clone()],
        );
    }
    for m in bi.into_values() {
        let bw = m.bandwidth_bytes_per_s.unwrap_or(0.0);
        push(
            out,
            Severity::Info,
            Finding::BidirectionalSum {
                tool: m.tool.to_string(),
                test: m.test.to_string(),
                example_bytes_per_s: bw,
            },
            format!(
                "`{}` figures are bidirectional (up to {} here): the sum of both directions, twice what one direction carries.",
                m.test,
                gbs(bw)
            ),
            vec![m.source.clone()],
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{Host, Origin};
    use crate::evidence::measurement::{Kind, Measurement, Statistic};

    fn cell(p2p: P2p, bw: f64, line: usize) -> Measurement {
        let mut m = Measurement::new(
            "p2pBandwidthLatencyTest",
            line,
            Kind::P2pCopy,
            "t",
            Statistic::Avg,
        );
        m.src = Some("GPU0".into());
        m.dst = Some("GPU1".into());
        m.p2p = p2p;
        m.bandwidth_bytes_per_s = Some(bw);
        m
    }

    #[test]
    fn p2p_enabled_close_to_disabled_is_silent_staging() {
        let mut b = Bundle::new(Host {
            name: "n".into(),
            origin: Origin::Ingested,
        });
        b.measurements.push(cell(P2p::Disabled, 5.71e9, 16));
        b.measurements.push(cell(P2p::Enabled, 5.72e9, 20));
        let d = diagnose(&b);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].severity, Severity::Critical);
        assert!(matches!(d[0].finding, Finding::SilentStaging { .. }));
        assert_eq!(d[0].evidence.len(), 2);
        // A real NVLink pair: enabled far above disabled, nothing to say.
        let mut b = Bundle::new(Host {
            name: "n".into(),
            origin: Origin::Ingested,
        });
        b.measurements.push(cell(P2p::Disabled, 20e9, 16));
        b.measurements.push(cell(P2p::Enabled, 250e9, 20));
        assert!(diagnose(&b).is_empty());
    }

    #[test]
    fn every_kind_has_an_explanation_with_what_to_do() {
        let kinds = [
            Finding::Truncated {
                file: String::new(),
                message: String::new(),
            },
            Finding::ToolFailed {
                tool: String::new(),
                message: String::new(),
            },
        ];
        for k in kinds {
            let md = explanation(&k);
            assert!(md.contains("What to do"), "{}", k.name());
        }
    }
}
