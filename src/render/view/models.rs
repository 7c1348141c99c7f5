//! The models section: the injection cliff chart and the analytic models
//! (injection ceiling, staged vs direct, PCIe ceilings) fed from the
//! bundle's link facts, or why one could not be computed.

use super::ChartView;
use crate::bundle::Bundle;
use crate::evidence::topology::DeviceKind;
use crate::models::{ceiling, injection, staging};
use crate::render::charts;
use crate::render::format::{bytes, gbs, secs};

pub struct ModelView {
    pub title: String,
    pub lines: Vec<String>,
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

pub(super) fn cliff(b: &Bundle) -> Option<ChartView> {
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

pub(super) fn model_views(b: &Bundle) -> Vec<ModelView> {
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
