//! The numbers the node's models need (the injection cliff, staged vs
//! direct): how many GPUs and adapters, each adapter's rate, a GPU's
//! scale-up bandwidth, the bandwidth of its best direct pair, and its PCIe
//! link. Each rate says where it came from: the bundle's own link facts
//! first, then the product tables ([`products`]) for the parts a transcript
//! names or its topology identifies, and last a stated assumption. The
//! page names every rate that did not come from the bundle, so a model
//! drawn from a table is never read as this node's fact.

use std::collections::BTreeMap;

use super::products::{self, AdapterRow, GpuRow, LinkRow};
use super::{NodeFacts, ScaleUp};
use crate::bundle::Bundle;
use crate::evidence::topology::Topology;
use crate::models::ceiling;

/// Where a rate comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum RateFrom {
    /// The bundle's RDMA ports (their data rates, summed over the compute
    /// adapters when `summed`).
    RdmaPorts { summed: bool },
    /// NVLink status or xGMI pair bandwidths in the bundle.
    LinkFacts(ScaleUp),
    /// A GPU's PCIe link as lspci or `nvidia-smi -q` states it.
    GpuPcie { link: String },
    /// Another PCIe link of the bundle (the first with width and speed).
    OtherPcie { address: String, link: String },
    /// The topology's NVLinks per GPU times the product table's per-link
    /// rate of the generation that count identifies.
    TopologyNvlinks { links: u32, row: &'static LinkRow },
    /// The product table's row of a GPU a transcript names.
    Gpu(&'static GpuRow),
    /// The product table's row of the NVLink generation the topology's
    /// link count identifies (its PCIe link, its reference adapter).
    Generation(&'static LinkRow),
    /// The product table's row of an adapter a transcript names.
    Adapter(&'static AdapterRow),
    /// Nothing in the evidence gives it: a stated assumption.
    Assumed(Assumption),
}

/// What is assumed when the evidence gives nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Assumption {
    /// PCIe Gen4 x16: no GPU model and no PCIe link state.
    PcieGen4x16,
    /// A ConnectX-6 HDR 200 Gb/s adapter (product table): no adapter rate
    /// or model, and no GPU generation with a reference system.
    HdrAdapter,
    /// 25 GB/s per NVLink (generations 2 to 4): a link count no row has.
    NvlinkRate,
}

/// A rate per direction and where it comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct Rate {
    pub bytes_per_s: f64,
    pub from: RateFrom,
}

impl Rate {
    /// Whether the figure comes from a product table or an assumption,
    /// not from this node's evidence.
    pub fn from_tables(&self) -> bool {
        !matches!(
            self.from,
            RateFrom::RdmaPorts { .. }
                | RateFrom::LinkFacts(_)
                | RateFrom::GpuPcie { .. }
                | RateFrom::OtherPcie { .. }
        )
    }
}

/// How the adapters were counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    /// The compute adapters of the RDMA ports ([`super::NodeInjection`]).
    ComputeAdapters,
    /// Every adapter the topology lists (storage and management ones too).
    Topology,
    /// The adapters the RDMA evidence lists.
    RdmaDevices,
    /// The adapters RDMA measurements ran on.
    Measured,
}

/// The GPU side of the models.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuSide {
    pub gpus: u32,
    /// What one GPU has to its neighbours; its PCIe link when it has no
    /// NVLink or xGMI.
    pub scaleup: Rate,
    /// Whether the GPUs have direct links (NVLink, xGMI) at all.
    pub direct_links: bool,
    /// A direct copy between the best-joined pair of GPUs.
    pub pair: Rate,
    pub pcie: Rate,
}

/// The adapter side of the models.
#[derive(Debug, Clone, PartialEq)]
pub struct AdapterSide {
    pub adapters: u32,
    pub counted: Counted,
    /// One adapter's data rate (the mean when each was summed).
    pub rate: Rate,
}

/// The product table's row of the first GPU any transcript names.
pub(super) fn gpu_row(facts: &NodeFacts) -> Option<&'static GpuRow> {
    facts
        .gpus
        .iter()
        .filter_map(|g| facts.gpu_model(g))
        .chain(facts.named_gpus.iter().map(|g| g.model.as_str()))
        .find_map(products::gpu)
}

/// NVLinks per GPU from the topology's `NV#` cells: (links of one GPU,
/// links of its best pair). Summed over a GPU's peers where the links are
/// point to point (DGX-1: NV1 and NV2 to four peers, 6 in all); where the
/// sum passes 18, the most any part has, the GPUs meet in NVSwitches and
/// every pair shows all of a GPU's links (NV18 to each of seven peers).
pub fn nvlinks_per_gpu(t: &Topology) -> Option<(u32, u32)> {
    let mut sum: BTreeMap<&str, u32> = BTreeMap::new();
    let mut best_pair = 0;
    for l in t.gpu_links() {
        let Some(n) = l.nvlinks.filter(|n| *n > 0) else {
            continue;
        };
        *sum.entry(l.a.as_str()).or_default() += n;
        *sum.entry(l.b.as_str()).or_default() += n;
        best_pair = best_pair.max(n);
    }
    let most = sum.values().copied().max()?;
    Some(if most > 18 {
        (best_pair, best_pair)
    } else {
        (most, best_pair)
    })
}

/// The GPU side: `None` when no evidence shows a GPU.
pub fn gpu_side(b: &Bundle, facts: &NodeFacts) -> Option<GpuSide> {
    let gpus = facts.gpu_count() as u32;
    if gpus == 0 {
        return None;
    }
    let row = gpu_row(facts);
    let links = nvlinks_per_gpu(&b.topology);
    let generation = links.and_then(|(n, _)| products::by_links(n));
    let pcie = pcie(b, facts, row, generation);
    let scaleup = if let Some(s) = &facts.scaleup {
        Some(Rate {
            bytes_per_s: s.bytes_per_s,
            from: RateFrom::LinkFacts(s.clone()),
        })
    } else if let Some(r) = row.filter(|r| r.scaleup_bytes_per_s.is_some()) {
        r.scaleup_bytes_per_s.map(|v| Rate {
            bytes_per_s: v,
            from: RateFrom::Gpu(r),
        })
    } else if let Some((n, _)) = links {
        Some(match generation {
            Some(g) => Rate {
                bytes_per_s: f64::from(n) * g.per_link_bytes_per_s,
                from: RateFrom::TopologyNvlinks { links: n, row: g },
            },
            None => Rate {
                bytes_per_s: f64::from(n) * 25e9,
                from: RateFrom::Assumed(Assumption::NvlinkRate),
            },
        })
    } else {
        None
    };
    let direct_links = scaleup.is_some();
    let scaleup = scaleup.unwrap_or_else(|| pcie.clone());
    // A pair joined by fewer links than a GPU has gets their share.
    let pair = match (links, &scaleup.from) {
        // Each xGMI peer is one link: a pair gets one peer's bandwidth.
        (_, RateFrom::LinkFacts(s)) if s.fabric == super::Fabric::Xgmi => Rate {
            bytes_per_s: s.per_link_bytes_per_s,
            from: scaleup.from.clone(),
        },
        (Some((total, pair)), _) if direct_links && pair < total => Rate {
            bytes_per_s: scaleup.bytes_per_s * f64::from(pair) / f64::from(total),
            from: scaleup.from.clone(),
        },
        _ => scaleup.clone(),
    };
    Some(GpuSide {
        gpus,
        scaleup,
        direct_links,
        pair,
        pcie,
    })
}

/// A GPU's PCIe link: the bundle's, else the GPU's product row, else the
/// generation's, else another link of the bundle, else assumed Gen4 x16.
fn pcie(
    b: &Bundle,
    facts: &NodeFacts,
    row: Option<&'static GpuRow>,
    generation: Option<&'static LinkRow>,
) -> Rate {
    if let Some(c) = facts.gpu_pcie_link() {
        let link = match &c.from {
            super::CeilingSource::Pcie { link, .. } => link.clone(),
            _ => String::new(),
        };
        return Rate {
            bytes_per_s: c.bytes_per_s,
            from: RateFrom::GpuPcie { link },
        };
    }
    let table = |(g, l): (u32, u32)| ceiling::pcie(g, l).map(|c| c.per_direction_bytes_per_s);
    if let Some(r) = row
        && let Ok(v) = table(r.pcie)
    {
        return Rate {
            bytes_per_s: v,
            from: RateFrom::Gpu(r),
        };
    }
    if let Some(g) = generation
        && let Ok(v) = table(g.pcie)
    {
        return Rate {
            bytes_per_s: v,
            from: RateFrom::Generation(g),
        };
    }
    let other = b.pcie.iter().find_map(|p| {
        let lanes = p.current_width_lanes?;
        let generation = p.current_generation.or_else(|| {
            p.current_speed_gt_per_s
                .and_then(ceiling::pcie_generation_of)
        })?;
        Some((p.address.clone(), ceiling::pcie(generation, lanes).ok()?))
    });
    if let Some((address, c)) = other {
        return Rate {
            bytes_per_s: c.per_direction_bytes_per_s,
            from: RateFrom::OtherPcie {
                address,
                link: c.link,
            },
        };
    }
    Rate {
        bytes_per_s: table((4, 16)).unwrap_or(31.5e9),
        from: RateFrom::Assumed(Assumption::PcieGen4x16),
    }
}

/// The adapter side: `None` when no evidence shows an adapter.
pub fn adapter_side(b: &Bundle, facts: &NodeFacts) -> Option<AdapterSide> {
    if let Some(i) = facts.injection.as_ref().filter(|i| i.adapters > 0) {
        return Some(AdapterSide {
            adapters: i.adapters as u32,
            counted: Counted::ComputeAdapters,
            rate: Rate {
                bytes_per_s: i.node_bytes_per_s / i.adapters as f64,
                from: RateFrom::RdmaPorts { summed: i.summed },
            },
        });
    }
    let (adapters, counted) = if !facts.nics.is_empty() {
        (facts.nics.len(), Counted::Topology)
    } else if !b.rdma.is_empty() {
        (b.rdma.len(), Counted::RdmaDevices)
    } else {
        (facts.measured_adapters.len(), Counted::Measured)
    };
    if adapters == 0 {
        return None;
    }
    Some(AdapterSide {
        adapters: adapters as u32,
        counted,
        rate: adapter_rate(b, facts),
    })
}

/// One adapter's rate when the node's compute adapters are not rated: the
/// fastest port the RDMA evidence rates, else a product row of a named
/// adapter, else the reference system's adapter of the GPU generation,
/// else assumed.
fn adapter_rate(b: &Bundle, facts: &NodeFacts) -> Rate {
    if let Some(r) = facts.fastest_port_bytes_per_s {
        return Rate {
            bytes_per_s: r,
            from: RateFrom::RdmaPorts { summed: false },
        };
    }
    let printed = b
        .rdma
        .iter()
        .flat_map(|d| [d.ca_type.as_deref(), d.board_id.as_deref(), Some(&d.name)])
        .flatten()
        .chain(facts.nics.iter().filter_map(|n| n.name.as_deref()));
    if let Some(a) = printed.filter_map(products::adapter).next() {
        return Rate {
            bytes_per_s: a.bytes_per_s,
            from: RateFrom::Adapter(a),
        };
    }
    if let Some(r) = gpu_row(facts).filter(|r| r.adapter.is_some())
        && let Some(a) = r.adapter
    {
        return Rate {
            bytes_per_s: a.bytes_per_s,
            from: RateFrom::Gpu(r),
        };
    }
    let generation = nvlinks_per_gpu(&b.topology).and_then(|(n, _)| products::by_links(n));
    if let Some(g) = generation {
        return Rate {
            bytes_per_s: g.adapter.bytes_per_s,
            from: RateFrom::Generation(g),
        };
    }
    Rate {
        bytes_per_s: 25e9,
        from: RateFrom::Assumed(Assumption::HdrAdapter),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn node(dir: &str) -> Bundle {
        let mut v = crate::inputs::load_nodes(&[PathBuf::from(format!(
            "{}/captures/{dir}",
            env!("CARGO_MANIFEST_DIR")
        ))])
        .unwrap();
        v.remove(0)
    }

    #[test]
    fn a_dgx1_topology_alone_gives_nvlink2_rates_named_as_product_table() {
        let b = node("dgx1v-v100-8gpu-1nic");
        let f = NodeFacts::of(&b);
        let g = gpu_side(&b, &f).unwrap();
        assert_eq!(nvlinks_per_gpu(&b.topology), Some((6, 2)));
        assert_eq!(g.gpus, 8);
        assert_eq!(g.scaleup.bytes_per_s, 150e9);
        assert!(g.scaleup.from_tables());
        assert!(matches!(
            g.scaleup.from,
            RateFrom::TopologyNvlinks { links: 6, row } if row.generation == 2
        ));
        // The best pair (NV2) has a third of the GPU's six links.
        assert_eq!(g.pair.bytes_per_s, 50e9);
        let a = adapter_side(&b, &f).unwrap();
        assert_eq!((a.adapters, a.counted), (1, Counted::Topology));
        // The DGX-1's reference adapter: EDR 100 Gb/s.
        assert_eq!(a.rate.bytes_per_s, 12.5e9);
        assert!(a.rate.from_tables());
    }

    #[test]
    fn an_nvswitch_topology_counts_the_links_of_one_pair() {
        let b = node("h800-8gpu-10nic");
        assert_eq!(nvlinks_per_gpu(&b.topology), Some((18, 18)));
        let g = gpu_side(&b, &NodeFacts::of(&b)).unwrap();
        assert_eq!((g.scaleup.bytes_per_s, g.pair.bytes_per_s), (450e9, 450e9));
    }

    #[test]
    fn rated_ports_come_before_any_table() {
        let b = node("h100-8nic-ndr400");
        let f = NodeFacts::of(&b);
        let a = adapter_side(&b, &f).unwrap();
        assert_eq!(a.counted, Counted::ComputeAdapters);
        assert!(!a.rate.from_tables());
        // No GPU in that capture: no GPU side.
        assert!(gpu_side(&b, &f).is_none());
    }

    #[test]
    fn a_pcie_card_without_links_scales_up_over_pcie() {
        let b = node("rtx4080-gdr");
        let f = NodeFacts::of(&b);
        let g = gpu_side(&b, &f).unwrap();
        assert!(!g.direct_links);
        assert_eq!(g.scaleup, g.pcie);
        assert!(matches!(g.pcie.from, RateFrom::Gpu(r) if r.pcie == (4, 16)));
    }
}
