//! The models' pictures on a node's page: the injection cliff (seed
//! section 3.6) and staged vs direct, GPU to GPU inside the node and GPU
//! to a GPU on another node through the adapters (seed section 2.3). Their
//! inputs come from `facts::model_inputs`, which says for each rate whether
//! the bundle gave it or a product table did; the legends say "product
//! table" where it did, and the note under each chart names the row.
//! Preparing the data ([`cliff_data`], [`peer_curves`], [`wire_curves`]) is
//! pure; `render::model_charts` draws it.

use super::ChartView;
use crate::bundle::Bundle;
use crate::evidence::measurement::{Buffers, Direction, Kind, P2p};
use crate::facts::model_inputs::{self, AdapterSide, Assumption, Counted, GpuSide, Rate, RateFrom};
use crate::facts::{Fabric, NodeFacts};
use crate::models::staging;
use crate::render::charts::{self, Cliff, Curve, Mark};
use crate::render::format::{gbs, secs, size_short};

/// `product table`, `assumed`, or what in the bundle gave a rate: short,
/// for legends.
pub(super) fn short_from(r: &Rate) -> &'static str {
    match &r.from {
        RateFrom::RdmaPorts { .. } => "RDMA ports",
        RateFrom::LinkFacts(s) if s.fabric == Fabric::Nvlink => "NVLink status",
        RateFrom::LinkFacts(_) => "xGMI bandwidth",
        RateFrom::GpuPcie { .. } | RateFrom::OtherPcie { .. } => "PCIe link state",
        RateFrom::Assumed(_) => "assumed",
        _ => "product table",
    }
}

/// Where a rate comes from, in full: the row and its document.
pub(super) fn rate_words(r: &Rate) -> String {
    match &r.from {
        RateFrom::RdmaPorts { summed: true } => {
            "the RDMA ports' data rates (the mean of the compute adapters)".into()
        }
        RateFrom::RdmaPorts { summed: false } => "the fastest active RDMA port's data rate".into(),
        RateFrom::LinkFacts(s) => match s.fabric {
            Fabric::Nvlink => format!(
                "{} active NVLinks x {} ({}), from the NVLink status",
                s.active_links,
                gbs(s.per_link_bytes_per_s),
                s.gpu
            ),
            Fabric::Xgmi => format!(
                "{} direct xGMI peers at {} each on average ({}), from the driver's bandwidth table",
                s.active_links,
                gbs(s.per_link_bytes_per_s),
                s.gpu
            ),
        },
        RateFrom::GpuPcie { link } => format!("the GPU's PCIe link in the bundle ({link})"),
        RateFrom::OtherPcie { address, link } => {
            format!("a PCIe link in the bundle ({address}, {link}; not known to be a GPU's)")
        }
        RateFrom::TopologyNvlinks { links, row } => format!(
            "{links} NVLinks per GPU in the topology x {} per link: product table, NVLink{} as on {}{}; {}",
            gbs(row.per_link_bytes_per_s),
            row.generation,
            row.parts,
            if row.caveat.is_empty() {
                String::new()
            } else {
                format!(" ({})", row.caveat)
            },
            row.source
        ),
        RateFrom::Gpu(row) => format!("product table: {}, {}; {}", row.part, row.scaleup_derivation, row.source),
        RateFrom::Generation(row) => format!(
            "product table: the reference system of {} ({} links per GPU in the topology); {}",
            row.parts, row.links, row.source
        ),
        RateFrom::Adapter(a) => format!("product table: {}; {}", a.part, a.source),
        RateFrom::Assumed(a) => match a {
            Assumption::PcieGen4x16 => {
                "assumed PCIe Gen4 x16: no GPU model and no PCIe link state in the evidence".into()
            }
            Assumption::HdrAdapter => "assumed ConnectX-6 HDR 200 Gb/s (product table): no adapter rate, adapter model or GPU generation in the evidence".into(),
            Assumption::NvlinkRate => "assumed 25 GB/s per NVLink (generations 2 to 4): the topology's link count names no generation".into(),
        },
    }
}

/// A GPU's PCIe figure in words, for a row taken from a GPU model (its
/// scale-up derivation does not describe PCIe).
fn pcie_words(r: &Rate) -> String {
    match &r.from {
        RateFrom::Gpu(row) => format!(
            "product table: {} on PCIe Gen{} x{}; {}",
            row.part, row.pcie.0, row.pcie.1, row.source
        ),
        RateFrom::Generation(row) => format!(
            "product table: PCIe Gen{} x{} of {}; {}",
            row.pcie.0, row.pcie.1, row.parts, row.source
        ),
        _ => rate_words(r),
    }
}

/// An adapter's figure in words, for a row taken from a GPU model.
fn adapter_words(r: &Rate) -> String {
    match &r.from {
        RateFrom::Gpu(row) => format!(
            "product table: {}, the adapter of the {} reference system; {}",
            row.adapter.map_or("", |a| a.part),
            row.part,
            row.adapter.map_or("", |a| a.source)
        ),
        RateFrom::Generation(row) => format!(
            "product table: {}, the adapter of the reference system of {}; {}",
            row.adapter.part, row.parts, row.source
        ),
        _ => rate_words(r),
    }
}

fn counted_words(a: &AdapterSide) -> &'static str {
    match a.counted {
        Counted::ComputeAdapters => "compute adapters of the RDMA ports",
        Counted::Topology => {
            "adapters the topology lists (storage and management ones counted too)"
        }
        Counted::RdmaDevices => "adapters the RDMA evidence lists",
        Counted::Measured => "adapters RDMA tests ran on (others may exist)",
    }
}

fn adapters(n: u32) -> String {
    format!("{n} adapter{}", if n == 1 { "" } else { "s" })
}

fn gpus(n: u32) -> String {
    format!("{n} GPU{}", if n == 1 { "" } else { "s" })
}

/// The cliff's data: per-GPU share for 1 to twice as many adapters as
/// GPUs, the scale-up line, this node's point.
pub fn cliff_data(g: &GpuSide, a: &AdapterSide) -> Cliff {
    let max = (g.gpus * 2).max(a.adapters + 1).max(4);
    let share = |n: u32| f64::from(n) * a.rate.bytes_per_s / f64::from(g.gpus);
    let node = share(a.adapters);
    let below = g.scaleup.bytes_per_s / node;
    Cliff {
        gpus: g.gpus,
        share: (1..=max).map(|n| (n, share(n))).collect(),
        scaleup_bytes_per_s: g.scaleup.bytes_per_s,
        node: (a.adapters, node),
        share_label: format!(
            "per-GPU share = adapters x {} ({}) / {}",
            gbs(a.rate.bytes_per_s),
            short_from(&a.rate),
            gpus(g.gpus)
        ),
        scaleup_label: format!(
            "scale-up per GPU {} ({}{})",
            gbs(g.scaleup.bytes_per_s),
            short_from(&g.scaleup),
            if g.direct_links {
                ""
            } else {
                ", PCIe: no NVLink or xGMI"
            }
        ),
        node_label: format!(
            "this node: {}, {} per GPU, {below:.0}x below scale-up",
            adapters(a.adapters),
            gbs(node)
        ),
        title: format!(
            "injection cliff: {} shared by {} against scale-up",
            adapters(a.adapters),
            gpus(g.gpus)
        ),
        desc: format!(
            "MODEL: per-GPU share {} one direction against scale-up {}, {below:.0}x lower; adapter rate from {}, scale-up from {}",
            gbs(node),
            gbs(g.scaleup.bytes_per_s),
            short_from(&a.rate),
            short_from(&g.scaleup)
        ),
    }
}

/// The injection cliff, on any node whose evidence shows GPUs and adapters.
pub(super) fn cliff(b: &Bundle, facts: &NodeFacts) -> Option<ChartView> {
    let g = model_inputs::gpu_side(b, facts)?;
    let a = model_inputs::adapter_side(b, facts)?;
    let data = cliff_data(&g, &a);
    Some(ChartView {
        title: "Injection cliff (MODEL)".into(),
        svg: charts::cliff_chart(&data),
        note: format!(
            "MODEL (seed 3.6): per-GPU share = n_adapters x B_adapter / n_GPU, one direction. {}; {}: {}. Adapter rate {}: {}. Scale-up {}: {}.",
            gpus(g.gpus),
            adapters(a.adapters),
            counted_words(&a),
            gbs(a.rate.bytes_per_s),
            adapter_words(&a.rate),
            gbs(g.scaleup.bytes_per_s),
            if g.direct_links {
                rate_words(&g.scaleup)
            } else {
                format!(
                    "no NVLink or xGMI in the evidence, so the GPU's PCIe link: {}",
                    pcie_words(&g.scaleup)
                )
            }
        ),
        source: None,
    })
}

/// Message sizes of the staged-vs-direct charts: 1 KiB to 1 GiB, by 2.
fn sizes() -> impl Iterator<Item = f64> {
    (10..=30).map(|e| 2f64.powi(e))
}

fn curve(label: String, colour: usize, mark: Mark, f: impl Fn(f64) -> Option<f64>) -> Curve {
    Curve {
        label,
        points: sizes().filter_map(|m| Some((m, f(m)?))).collect(),
        colour,
        mark,
    }
}

/// GPU to GPU inside the node: staged through host memory (peer access
/// disabled) against a direct copy over the best pair's link.
pub fn peer_curves(pcie: f64, pair: f64, hop: f64) -> Vec<Curve> {
    let st = |m| staging::peer_staged_cost(m, pcie, hop).ok();
    let di = |m| staging::peer_direct_cost(m, pair, hop).ok();
    vec![
        curve(
            "staged through host, serial (MODEL)".into(),
            1,
            Mark::Line,
            move |m| st(m).map(|c| c.serial_s),
        ),
        curve(
            "staged through host, pipelined (MODEL)".into(),
            1,
            Mark::Dashed,
            move |m| st(m).map(|c| c.pipelined_s),
        ),
        curve("direct peer copy (MODEL)".into(), 0, Mark::Line, move |m| {
            di(m).map(|c| c.serial_s)
        }),
    ]
}

/// GPU to a GPU on another node: staged through host memory on both sides
/// against GPUDirect RDMA.
pub fn wire_curves(pcie: f64, net: f64, hop: f64) -> Vec<Curve> {
    let st = |m| staging::staged_cost_with_latency(m, pcie, net, hop).ok();
    let di = |m| staging::direct_cost_with_latency(m, pcie, net, hop).ok();
    vec![
        curve("staged, serial (MODEL)".into(), 1, Mark::Line, move |m| {
            st(m).map(|c| c.serial_s)
        }),
        curve(
            "staged, pipelined (MODEL)".into(),
            1,
            Mark::Dashed,
            move |m| st(m).map(|c| c.pipelined_s),
        ),
        curve(
            "direct (GPUDirect RDMA), serial (MODEL)".into(),
            0,
            Mark::Line,
            move |m| di(m).map(|c| c.serial_s),
        ),
        curve(
            "direct, pipelined (MODEL)".into(),
            0,
            Mark::Dashed,
            move |m| di(m).map(|c| c.pipelined_s),
        ),
    ]
}

/// The node's measured one-direction figures over the model, as time per
/// message (size / bandwidth): GPU peer copies with P2P on and off, or
/// RDMA with GPU and host buffers.
fn measured(b: &Bundle, peer: bool) -> Vec<Curve> {
    let mut on = Vec::new();
    let mut off = Vec::new();
    for m in &b.measurements {
        let (Some(bw), Direction::Uni) =
            (m.bandwidth_bytes_per_s.filter(|v| *v > 0.0), m.direction)
        else {
            continue;
        };
        // p2pBandwidthLatencyTest prints no size: its figures sit at the
        // buffer it always copies (`facts::trust::tool_buffer_bytes`).
        let size = m.size_bytes.map(|s| s as f64).or_else(|| {
            let tool: &str = m.tool.as_ref();
            (tool == "p2pBandwidthLatencyTest")
                .then(|| crate::facts::trust::tool_buffer_bytes(tool))
                .flatten()
                .map(|s| s as f64)
        });
        // The model's sizes only: 1 KiB to 1 GiB.
        let Some(size) = size.filter(|s| (1024.0..=1073741824.0).contains(s)) else {
            continue;
        };
        let point = (size, size / bw);
        match m.kind {
            Kind::P2pCopy if peer && m.src != m.dst => match m.p2p {
                P2p::Disabled | P2p::NoPeerAccess => off.push(point),
                _ => on.push(point),
            },
            Kind::RdmaWrite | Kind::RdmaRead | Kind::RdmaSend if !peer => match m.buffers {
                Buffers::Device => on.push(point),
                Buffers::Host | Buffers::HostPinned | Buffers::HostPageable => off.push(point),
                _ => {}
            },
            _ => {}
        }
    }
    let (on_label, off_label) = if peer {
        (
            "measured: peer copy, P2P enabled",
            "measured: P2P disabled (staged)",
        )
    } else {
        (
            "measured: RDMA from GPU buffers",
            "measured: RDMA from host buffers (no GPU)",
        )
    };
    [(on, on_label, 2), (off, off_label, 4)]
        .into_iter()
        .filter(|(p, _, _)| !p.is_empty())
        .map(|(points, label, colour)| Curve {
            label: label.into(),
            points,
            colour,
            mark: Mark::Dot,
        })
        .collect()
}

/// The time at `m` bytes of a curve, for the desc.
fn at(c: &Curve, m: f64) -> String {
    c.points
        .iter()
        .find(|p| p.0 == m)
        .map_or("-".into(), |p| secs(p.1))
}

/// Staged vs direct, GPU to GPU (two GPUs or more) and GPU to another
/// node (GPUs and adapters), with the node's measured figures over them.
pub(super) fn staged(b: &Bundle, facts: &NodeFacts) -> Vec<ChartView> {
    let Some(g) = model_inputs::gpu_side(b, facts) else {
        return Vec::new();
    };
    let hop = staging::ASSUMED_HOP_LATENCY_S;
    let mut out = Vec::new();
    let steps = format!(
        "{} per store-and-forward step (assumed; `wire-report model staging --hop-latency-us` takes your node's)",
        secs(hop)
    );
    if g.gpus >= 2 {
        let mut curves = peer_curves(g.pcie.bytes_per_s, g.pair.bytes_per_s, hop);
        let desc = format!(
            "MODEL: 1 GiB staged {} serial, direct {}; 4 KiB staged {}, direct {}; PCIe {} ({}), pair link {} ({})",
            at(&curves[0], 1073741824.0),
            at(&curves[2], 1073741824.0),
            at(&curves[0], 4096.0),
            at(&curves[2], 4096.0),
            gbs(g.pcie.bytes_per_s),
            short_from(&g.pcie),
            gbs(g.pair.bytes_per_s),
            short_from(&g.pair)
        );
        curves.extend(measured(b, true));
        out.push(ChartView {
            title: "Staged vs direct, GPU to GPU (MODEL)".into(),
            svg: charts::staged_chart(
                "MODEL: GPU to GPU, staged through host vs direct",
                "staged vs direct: GPU to GPU inside the node",
                &desc,
                &curves,
            ),
            note: format!(
                "MODEL (seed 2.3): staged = the source GPU's PCIe link to a host buffer, then the host buffer over the destination's link (2 steps, 2m through host memory); direct = one copy over the pair's link. PCIe {}: {}. Pair link {}: {}. {steps}. Measured points are size / bandwidth of one-direction copies{}.",
                gbs(g.pcie.bytes_per_s),
                pcie_words(&g.pcie),
                gbs(g.pair.bytes_per_s),
                if g.direct_links { rate_words(&g.pair) } else { format!("PCIe peer-to-peer, {}", pcie_words(&g.pair)) },
                if b.measurements.iter().any(|m| m.tool.as_ref() as &str == "p2pBandwidthLatencyTest") {
                    "; p2pBandwidthLatencyTest's at its 40,000,000-byte transfer (10,000,000 ints, from the CUDA sample's source)"
                } else {
                    ""
                }
            ),
            source: None,
        });
    }
    if let Some(a) = model_inputs::adapter_side(b, facts) {
        let net = a.rate.bytes_per_s;
        let mut curves = wire_curves(g.pcie.bytes_per_s, net, hop);
        let desc = format!(
            "MODEL: 1 GiB staged {} serial, direct {}; 4 KiB staged {}, direct {}; PCIe {} ({}), network {} ({})",
            at(&curves[0], 1073741824.0),
            at(&curves[2], 1073741824.0),
            at(&curves[0], 4096.0),
            at(&curves[2], 4096.0),
            gbs(g.pcie.bytes_per_s),
            short_from(&g.pcie),
            gbs(net),
            short_from(&a.rate)
        );
        curves.extend(measured(b, false));
        out.push(ChartView {
            title: "Staged vs direct, GPU to another node (MODEL)".into(),
            svg: charts::staged_chart(
                "MODEL: GPU to a GPU on another node, staged vs GPUDirect",
                "staged vs direct: GPU to a GPU on another node through the adapter",
                &desc,
                &curves,
            ),
            note: format!(
                "MODEL (seed 2.3): staged crosses PCIe four times (twice per side) in 5 steps and moves 4m through host memory; direct crosses it twice in 3 steps. PCIe {}: {}. Network {} per adapter: {}. {steps}. At {} the fixed steps decide; at {} bandwidth does. Measured points are size / bandwidth of one-direction RDMA tests (many messages in flight, so compare them with the pipelined bounds).",
                gbs(g.pcie.bytes_per_s),
                pcie_words(&g.pcie),
                gbs(net),
                adapter_words(&a.rate),
                size_short(4096.0),
                size_short(1073741824.0),
            ),
            source: None,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn node(dir: &str) -> Bundle {
        let path = PathBuf::from(format!("{}/captures/{dir}", env!("CARGO_MANIFEST_DIR")));
        crate::inputs::load_nodes(&[path]).unwrap().remove(0)
    }

    #[test]
    fn a_dgx1_topology_gets_a_cliff_with_its_product_table_rates_named() {
        let b = node("dgx1v-v100-8gpu-1nic");
        let f = NodeFacts::of(&b);
        let c = cliff(&b, &f).expect("a cliff for 8 GPUs and 1 adapter");
        assert!(
            c.note.contains("product table: ConnectX-4 EDR"),
            "{}",
            c.note
        );
        assert!(c.note.contains("NVLink2 as on V100 SXM2"), "{}", c.note);
        assert!(
            c.svg
                .contains("<title>injection cliff: 1 adapter shared by 8 GPUs"),
            "{}",
            &c.svg[..300]
        );
        assert!(c.svg.contains("(product table)"));
        let g = model_inputs::gpu_side(&b, &f).unwrap();
        let a = model_inputs::adapter_side(&b, &f).unwrap();
        let d = cliff_data(&g, &a);
        // One EDR adapter for eight GPUs: 1.5625 GB/s each, 96x below 150 GB/s.
        assert_eq!(d.node, (1, 12.5e9 / 8.0));
        assert_eq!(d.share.len(), 16);
        assert!(d.desc.contains("96x lower"), "{}", d.desc);
    }

    #[test]
    fn staged_is_slower_than_direct_at_every_size_and_by_two_steps_when_small() {
        let c = wire_curves(25e9, 12.5e9, 2e-6);
        for (s, d) in c[0].points.iter().zip(&c[2].points) {
            assert!(s.1 > d.1);
        }
        let small = c[1].points[0].1 - c[3].points[0].1;
        assert!((small - 4e-6).abs() < 1e-9, "{small}");
        assert_eq!(c[0].points.first().unwrap().0, 1024.0);
        assert_eq!(c[0].points.last().unwrap().0, 1073741824.0);
    }

    #[test]
    fn p2p_enabled_and_disabled_figures_sit_over_the_peer_model() {
        let b = node("rtx3090-4gpu");
        let f = NodeFacts::of(&b);
        let charts = staged(&b, &f);
        assert_eq!(charts.len(), 1, "no adapter: the GPU-to-GPU chart only");
        let svg = &charts[0].svg;
        assert!(svg.contains("measured: P2P disabled (staged)"), "{svg}");
        assert!(svg.contains("<title>staged vs direct: GPU to GPU"));
        assert!(charts[0].note.contains("40,000,000-byte"));
        // GeForce: no NVLink, the pair's link is PCIe from the product table.
        assert!(
            charts[0].note.contains("PCIe peer-to-peer"),
            "{}",
            charts[0].note
        );
    }
}
