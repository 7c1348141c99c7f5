//! Facts about one node, derived from its bundle once: its GPUs and
//! adapters, the fastest active RDMA port, the port a path through each
//! adapter runs on, the NVLinks of each GPU, the scale-up bandwidth per GPU,
//! how the GPU pairs are joined, and the ceiling of each copy path.
//!
//! [`NodeFacts::of`] is the only place these folds are written; the
//! diagnosis, the node's views (the models' inputs among them), the fleet
//! and the ticket summary read them from here, each node's facts computed
//! once (`render::analyse`). Facts are numbers, ids and enums: no prose
//! (render writes the words), no judgement (the diagnosis decides what
//! matters). The diff compares raw observations and needs none of them.

pub mod affinity;
mod host_path;
mod injection;
pub mod ladder;
pub mod model_inputs;
mod names;
pub mod ports;
pub mod products;
pub mod scaleup;
pub mod sku;
pub mod switches;
pub mod trust;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::bundle::Bundle;
use crate::evidence::Source;
use crate::evidence::measurement::{Direction, Kind, Measurement};
use crate::evidence::rdma::RdmaPort;
use crate::evidence::topology::{DeviceKind, Link, LinkClass};
use crate::models::ceiling;
pub(crate) use host_path::bus_key;
pub use ladder::{LadderPoint, LadderScope, ladder_points};
pub use names::NamedGpu;
pub use scaleup::{Fabric, ScaleUp};

/// What one bundle says about its node, computed once.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeFacts {
    /// Whether a topology transcript named any device; when not, device
    /// counts are unknown rather than zero.
    pub described: bool,
    /// GPU ids, in topology order.
    pub gpus: Vec<String>,
    /// Network adapters the topology names, in its order.
    pub nics: Vec<Nic>,
    /// Each GPU's model name, where a transcript gives one.
    pub gpu_names: BTreeMap<String, String>,
    /// Whether direct GPU links (NVLink, xGMI) join every GPU into one
    /// group: then a pair without one can still be routed around.
    pub direct_links_join_all: bool,
    /// GPU pairs (both ends GPUs) the topology describes, by class.
    pub gpu_pairs_by_class: BTreeMap<LinkClass, usize>,
    /// The rate of every active RDMA port that states one, in bundle order.
    pub active_port_rates_bytes_per_s: Vec<f64>,
    /// The fastest of those: the adapter rate the models use.
    pub fastest_port_bytes_per_s: Option<f64>,
    /// The fastest active port of each link layer (`InfiniBand`, `Ethernet`,
    /// or not stated) on each adapter kind (CA type, or not stated): ports
    /// of one kind and layer are expected to train alike.
    pub fastest_port_by_kind: BTreeMap<ports::PortKind, f64>,
    /// Per RDMA adapter name: the port a path through it runs on (the first
    /// active one, else the first), or none when it lists no port. Of two
    /// adapters with one name, the first.
    pub adapters: BTreeMap<String, Option<AdapterPort>>,
    /// NVLinks of each GPU that `nvidia-smi nvlink --status` lists.
    pub nvlinks: BTreeMap<String, GpuNvlinks>,
    /// Scale-up bandwidth per GPU, from NVLink or xGMI ([`scaleup`]).
    pub scaleup: Option<ScaleUp>,
    /// The adapters that carry the job's traffic and their summed rate.
    pub injection: Option<NodeInjection>,
    /// The ceiling of a copy from one device to another (unidirectional),
    /// for every pair the topology links; `None` where the link facts do
    /// not give one.
    p2p_ceilings: BTreeMap<(String, String), Option<PathCeiling>>,
    /// GPUs any transcript names by model (see [`names`]), by index.
    pub named_gpus: Vec<NamedGpu>,
    /// GPU ids (`GPU0`...) that measurements name as source or destination.
    pub measured_gpus: BTreeSet<String>,
    /// GPUs `nvidia-smi -q` says are attached, when it says.
    pub attached_gpus: Option<usize>,
    /// GPUs an NCCL log names on one host (the most on any host it
    /// names: a log holds every rank's lines).
    pub nccl_gpus: usize,
    /// RDMA adapters that RDMA measurements ran on (perftest's `Device`).
    pub measured_adapters: BTreeSet<String>,
    /// PCIe switches the live sysfs tree shows ([`switches`]).
    pub switches: Vec<switches::Switch>,
    /// The PCIe link of each GPU whose link the evidence gives, as the
    /// ceiling of its copies to and from the host ([`host_path`]).
    gpu_pcie: BTreeMap<String, PathCeiling>,
    /// The trust grade of each measurement, index for index with
    /// `bundle.measurements` ([`trust::grades`]).
    pub trust: Vec<trust::Trust>,
}

/// A network adapter of the topology.
#[derive(Debug, Clone, PartialEq)]
pub struct Nic {
    /// `NIC0`...
    pub id: String,
    /// The adapter name (`mlx5_0`), when the transcript gives one.
    pub name: Option<String>,
    pub source: Source,
}

/// The port of an RDMA adapter a path through it runs on.
#[derive(Debug, Clone, PartialEq)]
pub struct AdapterPort {
    pub port: u32,
    pub rate_bytes_per_s: Option<f64>,
    /// As the tool printed it, in Gb/s.
    pub rate_as_printed: Option<String>,
    /// The link the rate was read as (`InfiniBand 4X QDR (40 Gb/s)`),
    /// whose line encoding gave `rate_bytes_per_s`.
    pub link: Option<String>,
}

/// One GPU's NVLinks.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GpuNvlinks {
    /// Links listed, and how many of them are active.
    pub listed: usize,
    pub active: usize,
    /// Links listed without a number: the tool could not read them.
    pub unnumbered: usize,
    /// The rate of the first active link (none when it states none).
    pub first_active_rate_bytes_per_s: Option<f64>,
    /// The first rate an active link states: the per-link rate of a path.
    pub link_rate_bytes_per_s: Option<f64>,
}

/// What the node can inject into the network: the compute adapters (the
/// topology's adapters whose RDMA port is of the fastest link layer and at
/// least half the fastest rate, so a 25 GbE management or storage port
/// beside 200 Gb/s InfiniBand rails does not count), each at its own data
/// rate, summed. A topology that lists no adapter (AMD's tools) takes the
/// adapters of the RDMA evidence. Where the topology names adapters but
/// none that the RDMA evidence rates, every topology adapter at the
/// fastest port's rate.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeInjection {
    pub adapters: usize,
    pub node_bytes_per_s: f64,
    /// Whether each adapter's own rate was summed (else count x fastest).
    pub summed: bool,
}

/// The ceiling of the path a measurement took, when the bundle states the
/// link facts it needs: an RDMA port's rate, or a direct link's NVLink count
/// and per-link rate (from `nvidia-smi nvlink --status`), or an XGMI pair's
/// maximum bandwidth (from rocm-smi / amd-smi). Bidirectional figures are
/// compared with both directions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PathCeiling {
    pub bytes_per_s: f64,
    /// Which link facts gave it.
    pub from: CeilingSource,
}

/// Where a path's ceiling came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum CeilingSource {
    /// The rate of an RDMA adapter's port.
    RdmaPort {
        device: String,
        port: u32,
        rate_as_printed: Option<String>,
        /// The link the rate was read as, with its encoding applied.
        link: Option<String>,
    },
    /// Bonded NVLinks times the per-link rate of the source GPU.
    Nvlinks {
        links: u32,
        per_link_bytes_per_s: f64,
    },
    /// The XGMI maximum bandwidth the driver reports for the pair.
    XgmiMax,
    /// A GPU's PCIe link (host copies cross it), at its negotiated width
    /// and the top speed it can run: GPUs slow their links when idle, so
    /// the speed read while idle is not the one a copy runs at.
    Pcie {
        /// The GPU's address, or `every GPU` when all GPU links read alike
        /// and the GPU cannot be told by its address.
        address: String,
        /// `PCIe Gen4 x16`.
        link: String,
    },
}

impl NodeFacts {
    /// Every fact of one node, each fold written once.
    pub fn of(b: &Bundle) -> NodeFacts {
        let t = &b.topology;
        let gpus: Vec<String> = t.gpus().map(|d| d.id.clone()).collect();
        let nics: Vec<Nic> = t
            .devices
            .iter()
            .filter(|d| d.kind == DeviceKind::Nic)
            .map(|d| Nic {
                id: d.id.clone(),
                name: d.name.clone(),
                source: d.source.clone(),
            })
            .collect();
        let mut gpu_pairs_by_class = BTreeMap::new();
        for l in t.gpu_links() {
            *gpu_pairs_by_class.entry(l.class).or_default() += 1;
        }
        let active_port_rates_bytes_per_s: Vec<f64> = b
            .rdma
            .iter()
            .flat_map(|d| d.ports.iter())
            .filter(|p| p.active == Some(true))
            .filter_map(port_data_rate)
            .collect();
        let fastest_port_bytes_per_s = active_port_rates_bytes_per_s
            .iter()
            .fold(None, |a: Option<f64>, &r| Some(a.map_or(r, |a| a.max(r))));
        let nvlinks = nvlinks(b);
        let scaleup = scaleup::of(&gpus, &nvlinks, t);
        let mut p2p_ceilings = BTreeMap::new();
        for l in &t.links {
            for (s, d) in [(&l.a, &l.b), (&l.b, &l.a)] {
                p2p_ceilings
                    .entry((s.clone(), d.clone()))
                    .or_insert_with(|| link_ceiling(l, nvlinks.get(s.as_str())));
            }
        }
        let adapters = adapters(b);
        let injection = injection::injection(&nics, &adapters, b, fastest_port_bytes_per_s);
        let gpu_names = t
            .gpus()
            .filter_map(|d| Some((d.id.clone(), d.name.clone()?)))
            .collect();
        let direct_links_join_all = joined(&gpus, t.gpu_links());
        NodeFacts {
            described: !t.devices.is_empty(),
            gpu_names,
            direct_links_join_all,
            gpus,
            nics,
            gpu_pairs_by_class,
            active_port_rates_bytes_per_s,
            fastest_port_bytes_per_s,
            fastest_port_by_kind: ports::fastest_port_by_kind(b),
            adapters,
            injection,
            nvlinks,
            scaleup,
            p2p_ceilings,
            named_gpus: names::named_gpus(&b.transcripts),
            measured_gpus: measured_gpus(b),
            attached_gpus: names::attached_gpus(&b.transcripts),
            nccl_gpus: nccl_gpus(b),
            switches: switches::switches(b),
            gpu_pcie: host_path::gpu_pcie_ceilings(b),
            trust: trust::grades(b),
            measured_adapters: b
                .measurements
                .iter()
                .filter(|m| {
                    matches!(
                        m.kind,
                        Kind::RdmaWrite
                            | Kind::RdmaRead
                            | Kind::RdmaSend
                            | Kind::RdmaAtomic
                            | Kind::Rdma
                    )
                })
                .filter_map(|m| m.src.as_ref().map(|s| s.to_string()))
                .collect(),
        }
    }

    /// The SKU table's row for a GPU, when its model is named and listed.
    pub fn sku(&self, gpu: &str) -> Option<&'static sku::Sku> {
        sku::of(self.gpu_names.get(gpu)?)
    }

    /// A GPU's model as any transcript names it: the topology's name for
    /// it, else the name a benchmark's device list gives its index.
    pub fn gpu_model(&self, gpu: &str) -> Option<&str> {
        if let Some(n) = self.gpu_names.get(gpu) {
            return Some(n);
        }
        let index: u32 = gpu.strip_prefix("GPU")?.parse().ok()?;
        self.named_gpus
            .iter()
            .find(|g| g.index == index)
            .map(|g| g.model.as_str())
    }

    /// How many GPUs any evidence shows: the topology's, the models
    /// named, the GPUs measurements name, or what `nvidia-smi -q` says is
    /// attached.
    pub fn gpu_count(&self) -> usize {
        [
            self.gpus.len(),
            self.named_gpus.len(),
            self.measured_gpus.len(),
            self.attached_gpus.unwrap_or(0),
            self.nccl_gpus,
        ]
        .into_iter()
        .max()
        .unwrap_or(0)
    }

    /// A GPU's PCIe link as the ceiling of its host copies, when the
    /// evidence states one (the first GPU's, by bus id).
    pub fn gpu_pcie_link(&self) -> Option<&PathCeiling> {
        self.gpu_pcie.values().next()
    }

    /// GPU pairs the topology describes.
    pub fn gpu_pairs(&self) -> usize {
        self.gpu_pairs_by_class.values().sum()
    }

    /// The ceiling of the path a measurement took, when the link facts give one.
    pub fn ceiling(&self, m: &Measurement) -> Option<PathCeiling> {
        let both = if m.direction == Direction::Bi {
            2.0
        } else {
            1.0
        };
        match m.kind {
            Kind::RdmaWrite | Kind::RdmaRead | Kind::RdmaSend | Kind::RdmaAtomic | Kind::Rdma => {
                let dev = m.src.as_ref()?;
                let p = self.adapters.get(dev.as_str())?.as_ref()?;
                let r = p.rate_bytes_per_s?;
                Some(PathCeiling {
                    bytes_per_s: r * both,
                    from: CeilingSource::RdmaPort {
                        device: dev.to_string(),
                        port: p.port,
                        rate_as_printed: p.rate_as_printed.clone(),
                        link: p.link.clone(),
                    },
                })
            }
            Kind::H2d | Kind::D2h => {
                let gpu = [m.src.as_deref(), m.dst.as_deref()]
                    .into_iter()
                    .flatten()
                    .find(|e| e.starts_with("GPU"))?;
                let c = self
                    .gpu_pcie
                    .get(gpu)
                    .or_else(|| self.gpu_pcie.get(host_path::EVERY_GPU))?;
                Some(PathCeiling {
                    bytes_per_s: c.bytes_per_s * both,
                    from: c.from.clone(),
                })
            }
            Kind::P2pCopy => {
                let key = (m.src.as_ref()?.to_string(), m.dst.as_ref()?.to_string());
                let c = self.p2p_ceilings.get(&key)?.as_ref()?;
                Some(PathCeiling {
                    bytes_per_s: c.bytes_per_s * both,
                    from: c.from.clone(),
                })
            }
            _ => None,
        }
    }
}

/// Whether the direct links among `gpus` connect them all (two or more).
fn joined<'a>(gpus: &[String], links: impl Iterator<Item = &'a Link>) -> bool {
    let direct: Vec<&Link> = links.filter(|l| l.class == LinkClass::DirectLink).collect();
    let Some(first) = gpus.first() else {
        return false;
    };
    let mut seen = BTreeSet::from([first.as_str()]);
    let mut grew = true;
    while grew {
        grew = false;
        for l in &direct {
            let (a, b) = (seen.contains(l.a.as_str()), seen.contains(l.b.as_str()));
            if a != b {
                seen.insert(if a { l.b.as_str() } else { l.a.as_str() });
                grew = true;
            }
        }
    }
    gpus.len() > 1 && gpus.iter().all(|g| seen.contains(g.as_str()))
}

/// The most GPUs (CUDA devices) an NCCL log names on one host.
fn nccl_gpus(b: &Bundle) -> usize {
    let mut per_host: BTreeMap<Option<&str>, BTreeSet<u32>> = BTreeMap::new();
    for d in b.nccl.iter().flat_map(|i| &i.devices) {
        per_host
            .entry(d.host.as_deref())
            .or_default()
            .insert(d.cuda_dev);
    }
    per_host.values().map(BTreeSet::len).max().unwrap_or(0)
}

/// GPU ids that measurements name at either end.
fn measured_gpus(b: &Bundle) -> BTreeSet<String> {
    b.measurements
        .iter()
        .flat_map(|m| [m.src.as_ref(), m.dst.as_ref()])
        .flatten()
        .map(|e| e.to_string())
        .filter(|e| {
            e.strip_prefix("GPU")
                .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        })
        .collect()
}

/// Each GPU's NVLinks, by GPU id.
fn nvlinks(b: &Bundle) -> BTreeMap<String, GpuNvlinks> {
    let mut out: BTreeMap<String, GpuNvlinks> = BTreeMap::new();
    for p in &b.topology.nvlink {
        let n = out.entry(p.gpu.clone()).or_default();
        n.listed += 1;
        if p.link.is_none() {
            n.unnumbered += 1;
        }
        if p.active {
            if n.active == 0 {
                n.first_active_rate_bytes_per_s = p.rate_bytes_per_s;
            }
            n.active += 1;
            if n.link_rate_bytes_per_s.is_none() {
                n.link_rate_bytes_per_s = p.rate_bytes_per_s;
            }
        }
    }
    out
}

/// The unidirectional ceiling of a copy from one end of a link, whose
/// NVLinks (when it has any) run at the per-link rate of `src`.
fn link_ceiling(l: &Link, src: Option<&GpuNvlinks>) -> Option<PathCeiling> {
    if let Some(n) = l.nvlinks {
        let per = src?.link_rate_bytes_per_s?;
        return Some(PathCeiling {
            bytes_per_s: f64::from(n) * per,
            from: CeilingSource::Nvlinks {
                links: n,
                per_link_bytes_per_s: per,
            },
        });
    }
    let max = l.max_bandwidth_bytes_per_s.filter(|x| *x > 0.0)?;
    Some(PathCeiling {
        bytes_per_s: max,
        from: CeilingSource::XgmiMax,
    })
}

/// Per adapter name, the port a path through it runs on: its fastest
/// active port (a ceiling is an upper bound, so the fastest never makes a
/// path look slower than it is), else the first port.
fn adapters(b: &Bundle) -> BTreeMap<String, Option<AdapterPort>> {
    let mut out = BTreeMap::new();
    for d in &b.rdma {
        out.entry(d.name.clone()).or_insert_with(|| {
            let fastest = d
                .ports
                .iter()
                .filter(|p| p.active == Some(true))
                .max_by(|x, y| {
                    let (x, y) = (port_data_rate(x), port_data_rate(y));
                    x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal)
                });
            fastest.or(d.ports.first()).map(|p| AdapterPort {
                port: p.port,
                rate_bytes_per_s: port_data_rate(p),
                rate_as_printed: p.rate_as_printed.clone(),
                link: port_ceiling(p).map(|c| c.link),
            })
        });
    }
    out
}

/// The data rate of an RDMA port per direction, after the line encoding
/// of its speed ([`ceiling::rdma_port`]): 4X QDR's `40` is 4 GB/s, not 5.
pub fn port_data_rate(p: &RdmaPort) -> Option<f64> {
    port_ceiling(p).map(|c| c.per_direction_bytes_per_s)
}

/// An RDMA port's ceiling from what its transcript states.
fn port_ceiling(p: &RdmaPort) -> Option<ceiling::Ceiling> {
    let gbit = p.rate_bytes_per_s.map(|r| r * 8.0 / 1e9);
    ceiling::rdma_port(
        gbit,
        p.link_layer.as_deref(),
        p.width.as_deref(),
        p.speed.as_deref(),
        p.rate_as_printed.as_deref(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{Host, Origin};
    use crate::evidence::measurement::Statistic;
    use crate::evidence::topology::{Device, NvlinkPort};

    fn src() -> Source {
        Source {
            file: "t".into(),
            line: 1,
        }
    }

    fn port(gpu: &str, link: u32, active: bool, rate: Option<f64>) -> NvlinkPort {
        NvlinkPort {
            gpu: gpu.into(),
            link: Some(link),
            active,
            rate_bytes_per_s: rate,
            as_printed: String::new(),
            source: src(),
        }
    }

    #[test]
    fn nvlink_pairs_get_links_times_the_source_gpus_rate_both_ways() {
        let mut b = Bundle::new(Host {
            name: "n".into(),
            origin: Origin::Ingested,
        });
        let t = &mut b.topology;
        t.devices.push(Device::new("GPU0", DeviceKind::Gpu, src()));
        t.devices.push(Device::new("GPU1", DeviceKind::Gpu, src()));
        let mut l = Link::new("GPU0", "GPU1", LinkClass::DirectLink, src());
        l.nvlinks = Some(4);
        t.links.push(l);
        t.nvlink.push(port("GPU0", 0, false, Some(1e9)));
        t.nvlink.push(port("GPU0", 1, true, Some(25e9)));
        t.nvlink.push(port("GPU0", 2, true, Some(25e9)));
        let f = NodeFacts::of(&b);
        assert_eq!(f.gpus, ["GPU0", "GPU1"]);
        assert_eq!(f.gpu_pairs(), 1);
        let up = f.scaleup.as_ref().unwrap();
        assert_eq!((up.bytes_per_s, up.active_links), (50e9, 2));
        let mut m = Measurement::new("t", 1, Kind::P2pCopy, "t", Statistic::Avg);
        m.src = Some("GPU0".into());
        m.dst = Some("GPU1".into());
        assert_eq!(f.ceiling(&m).unwrap().bytes_per_s, 100e9);
        m.direction = Direction::Bi;
        assert_eq!(f.ceiling(&m).unwrap().bytes_per_s, 200e9);
        // GPU1 lists no NVLink rate: no ceiling from its side.
        std::mem::swap(&mut m.src, &mut m.dst);
        assert_eq!(f.ceiling(&m), None);
    }

    #[test]
    fn injection_sums_the_compute_adapters_and_leaves_out_a_slow_other_layer() {
        use crate::evidence::rdma::{RdmaDevice, RdmaPort};
        let mut b = Bundle::new(Host {
            name: "n".into(),
            origin: Origin::Ingested,
        });
        let mut add = |name: &str, gbit: f64, layer: &str| {
            let mut d = Device::new(format!("NIC{}", b.rdma.len()), DeviceKind::Nic, src());
            d.name = Some(name.into());
            b.topology.devices.push(d);
            b.rdma.push(RdmaDevice {
                ports: vec![RdmaPort {
                    port: 1,
                    active: Some(true),
                    rate_bytes_per_s: Some(gbit * 1e9 / 8.0),
                    link_layer: Some(layer.into()),
                    ..RdmaPort::default()
                }],
                ..RdmaDevice::new(name, src())
            });
        };
        add("mlx5_0", 200.0, "InfiniBand");
        add("mlx5_1", 100.0, "InfiniBand");
        add("mlx5_2", 25.0, "Ethernet");
        let i = NodeFacts::of(&b).injection.unwrap();
        // 25 + 12.5 GB/s; the 25 GbE port is not a compute rail.
        assert_eq!(
            (i.adapters, i.node_bytes_per_s, i.summed),
            (2, 37.5e9, true)
        );
    }
}
