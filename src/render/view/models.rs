//! The models section in words: the injection ceiling, staged vs direct at
//! two sizes, and the PCIe ceilings, fed from `facts::model_inputs` (the
//! bundle's link facts, else the product tables, named as such), or why
//! one could not be computed. The charts are in [`super::model_figures`].

use super::model_figures::short_from;
use crate::bundle::Bundle;
use crate::facts::NodeFacts;
use crate::facts::model_inputs;
use crate::models::{ceiling, injection, staging};
use crate::render::format::{bytes, gbs, secs};

pub struct ModelView {
    pub title: String,
    pub lines: Vec<String>,
}

/// Staged against direct at 1 GB (bandwidth decides) and at 4 KiB (the
/// per-step latency decides: five steps staged, three direct).
fn staging_view(pcie: f64, pcie_from: &str, r: f64, r_from: &str) -> Option<ModelView> {
    let hop = staging::ASSUMED_HOP_LATENCY_S;
    let mut lines = vec![format!(
        "PCIe {} ({pcie_from}), network {} ({r_from}), {} per store-and-forward step (assumed; `wire-report model staging --hop-latency-us` takes your node's): 5 steps staged, 3 direct.",
        gbs(pcie),
        gbs(r),
        secs(hop)
    )];
    for m in [1e9, 4096.0] {
        let s = staging::staged_cost_with_latency(m, pcie, r, hop).ok()?;
        let d = staging::direct_cost_with_latency(m, pcie, r, hop).ok()?;
        lines.push(format!(
            "{}: staged {} serial, {} pipelined, {} through host memory; direct {} serial, {} pipelined (staged pays {} more in fixed step latency).",
            bytes(m),
            secs(s.serial_s),
            secs(s.pipelined_s),
            bytes(s.host_memory_traffic_bytes),
            secs(d.serial_s),
            secs(d.pipelined_s),
            secs(2.0 * hop)
        ));
    }
    Some(ModelView {
        title: "Staged vs direct, 1 GB and 4 KiB messages".into(),
        lines,
    })
}

/// The title of a model that could not be computed: its line says what it
/// needs, and the page lists it once with the missing evidence.
pub(super) const NOT_SHOWN: &str = "not computed";

/// The models computed, and for each one not computed, what it needs.
pub(super) fn models(b: &Bundle, facts: &NodeFacts) -> (Vec<ModelView>, Vec<String>) {
    let (shown, not): (Vec<ModelView>, Vec<ModelView>) = model_views(b, facts)
        .into_iter()
        .partition(|m| m.title != NOT_SHOWN);
    (shown, not.into_iter().flat_map(|m| m.lines).collect())
}

fn model_views(b: &Bundle, facts: &NodeFacts) -> Vec<ModelView> {
    let mut out = Vec::new();
    let g = model_inputs::gpu_side(b, facts);
    let a = model_inputs::adapter_side(b, facts);
    // Injection and staging: GPUs and adapters, their rates from the bundle
    // or the product tables (model_inputs says which).
    match (&g, &a) {
        (Some(g), Some(a)) => {
            if let Ok(i) = injection::injection(
                g.gpus,
                a.adapters,
                a.rate.bytes_per_s,
                g.scaleup.bytes_per_s,
            ) {
                out.push(ModelView {
                    title: "Injection ceiling".into(),
                    lines: vec![
                        format!(
                            "{} GPUs, {} adapters at {} each ({}).",
                            g.gpus,
                            a.adapters,
                            gbs(a.rate.bytes_per_s),
                            short_from(&a.rate)
                        ),
                        format!(
                            "Node injection {}; per-GPU share {}.",
                            gbs(i.node_injection_bytes_per_s),
                            gbs(i.per_gpu_bytes_per_s)
                        ),
                        format!(
                            "Ratio to scale-up ({} from {}): {:.4}.",
                            gbs(g.scaleup.bytes_per_s),
                            short_from(&g.scaleup),
                            i.ratio_to_scaleup
                        ),
                    ],
                });
            }
            if let Some(v) = staging_view(
                g.pcie.bytes_per_s,
                short_from(&g.pcie),
                a.rate.bytes_per_s,
                short_from(&a.rate),
            ) {
                out.push(v);
            }
        }
        _ => out.push(ModelView {
            title: NOT_SHOWN.into(),
            lines: vec![format!(
                "the injection ceiling and staged vs direct need GPUs and network adapters ({} GPUs, {} adapters in the evidence)",
                facts.gpu_count(),
                a.as_ref().map_or(0, |a| a.adapters)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::Fabric;

    #[test]
    fn an_amd_node_with_adapters_gets_its_cliff_from_xgmi() {
        use crate::bundle::{Bundle, Host, Origin};
        use crate::evidence::Source;
        use crate::evidence::rdma::{RdmaDevice, RdmaPort};
        // The topology is a real capture (8x MI300X, amd-smi); the one
        // adapter beside it is synthetic: no shipped AMD capture has both.
        let text = include_str!(
            "../../../captures/mi300x-8gpu-amdsmi/amd-smi-topology-001-mi300x-8gpu-full-bdf-tables.txt"
        );
        let mut b = Bundle::new(Host {
            name: "synthetic-mi300x-1nic".into(),
            origin: Origin::Ingested,
        });
        b.topology = crate::evidence::topology::amd::parse_amd_smi(text)
            .unwrap()
            .topology;
        // amd-smi lists no adapter: the RDMA evidence's adapter is the node's.
        b.rdma.push(RdmaDevice {
            name: "mlx5_0".into(),
            ca_type: None,
            firmware: None,
            node_guid: None,
            transport: None,
            board_id: None,
            ports: vec![RdmaPort {
                port: 1,
                active: Some(true),
                rate_bytes_per_s: Some(400e9 / 8.0),
                rate_as_printed: Some("400".into()),
                link_layer: Some("InfiniBand".into()),
                width: Some("4X".into()),
                speed: Some("NDR".into()),
                ..RdmaPort::default()
            }],
            source: Source::line(1),
        });
        let facts = NodeFacts::of(&b);
        let up = facts.scaleup.as_ref().expect("scale-up from xGMI");
        assert_eq!((up.fabric, up.bytes_per_s), (Fabric::Xgmi, 350e9));
        let c = super::super::model_figures::cliff(&b, &facts).expect("a cliff for an AMD node");
        assert!(c.note.contains("7 direct xGMI peers"), "{}", c.note);
        assert!(!c.note.contains("product table"), "{}", c.note);
        let (views, _) = models(&b, &facts);
        let inj = views
            .iter()
            .find(|v| v.title == "Injection ceiling")
            .unwrap();
        assert!(
            inj.lines
                .iter()
                .any(|l| l.contains("Ratio to scale-up (350.0 GB/s from xGMI bandwidth)")),
            "{:?}",
            inj.lines
        );
    }

    #[test]
    fn the_staging_panel_shows_the_step_latency_at_4_kib() {
        let p = ceiling::pcie(4, 16).unwrap();
        let v = staging_view(
            p.per_direction_bytes_per_s,
            "PCIe link state",
            25e9,
            "RDMA ports",
        )
        .unwrap();
        assert!(
            v.lines[0].contains("2.000 us per store-and-forward step (assumed"),
            "{}",
            v.lines[0]
        );
        let small = v
            .lines
            .iter()
            .find(|l| l.starts_with("4096 bytes"))
            .expect("4 KiB line");
        // 4 KiB: staged 5 x 2 us plus a few ns of bytes; direct 3 x 2 us.
        let s = staging::staged_cost_with_latency(4096.0, p.per_direction_bytes_per_s, 25e9, 2e-6)
            .unwrap();
        let d = staging::direct_cost_with_latency(4096.0, p.per_direction_bytes_per_s, 25e9, 2e-6)
            .unwrap();
        assert!(s.serial_s > d.serial_s + 3.9e-6);
        assert!(
            small.contains(&format!("staged {} serial", secs(s.serial_s))),
            "{small}"
        );
        assert!(
            small.contains(&format!("direct {} serial", secs(d.serial_s))),
            "{small}"
        );
        assert!(small.contains("staged pays 4.000 us more"), "{small}");
    }
}
