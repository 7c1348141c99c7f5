//! Topology evidence: which devices a node has and which tier of the
//! interconnect ladder joins each pair of them.
//!
//! Owns the vendor-neutral types ([`Topology`], [`Device`], [`Link`],
//! [`LinkClass`]), the mapping from vendor codes to classes, and the merge of
//! several transcripts of one node (in `merge`). The parsers for each tool
//! live in the submodules; they take `&str` and never touch the filesystem.

pub mod amd;
pub mod dcgmi;
mod matrix;
mod merge;
pub mod nvidia;
pub mod ppu;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::evidence::Source;
use crate::evidence::text::Text;

/// Where a pair's traffic travels, from best to worst. The order of the
/// variants is the order of the ladder: [`LinkClass::Unknown`] sorts last
/// because a path nobody has described cannot be assumed to be good.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum LinkClass {
    /// The device itself (the diagonal of a matrix).
    #[serde(rename = "self")]
    SelfLink,
    /// A scale-up link: NVLink (NV#) or AMD xGMI.
    DirectLink,
    /// PCIe through one or more switches, not crossing the host bridge (PIX, PXB).
    PcieSwitch,
    /// PCIe through a host bridge or between host bridges of one NUMA node (PHB, NODE).
    PcieHost,
    /// PCIe plus the link between CPU sockets / NUMA nodes (SYS, SOC).
    CrossSocket,
    /// The transcript does not say, or printed a code we do not know.
    Unknown,
}

impl LinkClass {
    pub const ALL: [LinkClass; 6] = [
        LinkClass::SelfLink,
        LinkClass::DirectLink,
        LinkClass::PcieSwitch,
        LinkClass::PcieHost,
        LinkClass::CrossSocket,
        LinkClass::Unknown,
    ];

    /// The name used in JSON and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            LinkClass::SelfLink => "self",
            LinkClass::DirectLink => "direct-link",
            LinkClass::PcieSwitch => "pcie-switch",
            LinkClass::PcieHost => "pcie-host",
            LinkClass::CrossSocket => "cross-socket",
            LinkClass::Unknown => "unknown",
        }
    }

    pub fn parse(s: &str) -> Option<LinkClass> {
        LinkClass::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

impl std::fmt::Display for LinkClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What kind of device a row of a topology matrix describes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum DeviceKind {
    Gpu,
    Nic,
}

/// An inclusive range of CPU numbers, as in `0-19` (first 0, last 19) or `6`
/// (first 6, last 6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CpuRange {
    pub first: u32,
    pub last: u32,
}

/// Parses a Linux CPU list such as `0-19,80-99` or `6,14,22,30`. Ranges must
/// ascend and not overlap, which is what lets an affinity column that ran
/// into the next column be split unambiguously.
pub fn parse_cpu_list(s: &str) -> Option<Vec<CpuRange>> {
    let mut out: Vec<CpuRange> = Vec::new();
    for part in s.split(',') {
        let (first, last) = match part.split_once('-') {
            Some((a, b)) => (parse_plain_u32(a)?, parse_plain_u32(b)?),
            None => {
                let v = parse_plain_u32(part)?;
                (v, v)
            }
        };
        if last < first {
            return None;
        }
        if let Some(prev) = out.last()
            && first <= prev.last
        {
            return None;
        }
        out.push(CpuRange { first, last });
    }
    if out.is_empty() { None } else { Some(out) }
}

/// A decimal number with no sign and no leading zero (other than `0` itself).
pub(crate) fn parse_plain_u32(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || (s.len() > 1 && s.starts_with('0'))
    {
        return None;
    }
    s.parse().ok()
}

/// One GPU or network adapter of the node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Device {
    /// `GPU0`, `GPU1`... and `NIC0`, `NIC1`... in the order the transcript lists them.
    pub id: String,
    pub kind: DeviceKind,
    /// The adapter name (`mlx5_bond_0`), the GPU model (`NVIDIA H100 PCIe`) or
    /// the PCI bus id, when the transcript gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pci_bus_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// The NUMA node of the CPUs closest to the device (`NUMA Affinity`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa_node: Option<u32>,
    /// CPUs closest to the device (`CPU Affinity`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_affinity: Option<Vec<CpuRange>>,
    /// The NUMA node of the GPU's own memory (`GPU NUMA ID`), on systems that
    /// expose GPU memory as a NUMA node (Grace Hopper and the like).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_numa_node: Option<u32>,
    pub source: Source,
}

impl Device {
    pub fn new(id: impl Into<String>, kind: DeviceKind, source: Source) -> Device {
        Device {
            id: id.into(),
            kind,
            name: None,
            pci_bus_id: None,
            uuid: None,
            numa_node: None,
            cpu_affinity: None,
            gpu_numa_node: None,
            source,
        }
    }
}

/// One unordered pair of devices (`a` sorts before `b` in device order).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Link {
    pub a: String,
    pub b: String,
    pub class: LinkClass,
    /// The code exactly as printed (`NV12`, `PXB`, `SOC`, `XGMI`, `PCIE`);
    /// absent when the transcript printed no link type for the pair.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Number of bonded NVLinks (`NV12` -> 12).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvlinks: Option<u32>,
    /// rocm-smi / amd-smi hop count, for a pair whose link type is XGMI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xgmi_hops: Option<u32>,
    /// rocm-smi / amd-smi hop count, for a pair whose link type is PCIE.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie_hops: Option<u32>,
    /// rocm-smi / amd-smi link weight (the KFD io-link weight).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<u32>,
    /// Minimum and maximum XGMI bandwidth from `rocm-smi --shownodesbw` or
    /// amd-smi's NUMA BW table, printed in MB/s and converted here (1 MB = 1e6
    /// bytes). Both 0 means no direct XGMI link.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_bandwidth_bytes_per_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bandwidth_bytes_per_s: Option<f64>,
    /// The class of the PCIe path alone, from the sysfs device tree (live
    /// collection), kept beside a vendor tool's class when both exist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcie_class: Option<LinkClass>,
    /// Every transcript line that contributed to this pair.
    pub sources: Vec<Source>,
}

impl Link {
    pub fn new(a: &str, b: &str, class: LinkClass, source: Source) -> Link {
        Link::with_sources(a, b, class, vec![source])
    }

    /// [`Link::new`] with its sources made by the caller (a pair told by
    /// two rows: its Vec sized once, not grown from one).
    pub fn with_sources(a: &str, b: &str, class: LinkClass, sources: Vec<Source>) -> Link {
        Link {
            a: a.to_string(),
            b: b.to_string(),
            class,
            code: None,
            nvlinks: None,
            xgmi_hops: None,
            pcie_hops: None,
            weight: None,
            min_bandwidth_bytes_per_s: None,
            max_bandwidth_bytes_per_s: None,
            pcie_class: None,
            sources,
        }
    }
}

/// Whether one device can reach another's memory peer-to-peer, as a tool
/// reported it. Directional: `nvidia-smi topo -p2p r` may differ from `w`,
/// and amd-smi's ACCESS table is a full matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct P2pCell {
    pub src: String,
    pub dst: String,
    /// As printed: `OK`, `NS`, `CNS`, `GNS`, `TNS`, `U` (nvidia-smi),
    /// `ENABLED` / `DISABLED` (amd-smi), `True` / `False` (rocm-smi
    /// --showtopoaccess) or `1` / `0` (rocm_bandwidth_test's access matrix).
    pub status: String,
    pub supported: bool,
    pub source: Source,
}

#[cfg(test)]
impl P2pCell {
    /// The cell as `(src, dst, status, supported, line)`, for tests to
    /// compare with what the transcript says.
    pub fn row(&self) -> (&str, &str, &str, bool, usize) {
        let c = self;
        (&c.src, &c.dst, &c.status, c.supported, c.source.line)
    }
}

/// One NVLink of one GPU from `nvidia-smi nvlink --status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NvlinkPort {
    pub gpu: String,
    /// The link number; absent when the tool only said that every link of
    /// the GPU is inactive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<u32>,
    pub active: bool,
    /// Per-link rate as nvidia-smi prints it (`26.562 GB/s`), converted with
    /// GB = 1e9 bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_bytes_per_s: Option<f64>,
    pub as_printed: String,
    pub source: Source,
}

/// Everything known about how a node's devices are connected.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Topology {
    pub devices: Vec<Device>,
    pub links: Vec<Link>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub p2p: Vec<P2pCell>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nvlink: Vec<NvlinkPort>,
}

/// Two transcripts of one node that describe the same thing differently.
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    pub what: String,
    pub kept: Source,
    pub other: Source,
}

impl Topology {
    pub fn device(&self, id: &str) -> Option<&Device> {
        self.devices.iter().find(|d| d.id == id)
    }

    pub fn gpus(&self) -> impl Iterator<Item = &Device> {
        self.devices.iter().filter(|d| d.kind == DeviceKind::Gpu)
    }

    /// The links between two GPUs (not GPU-NIC, not self).
    pub fn gpu_links(&self) -> impl Iterator<Item = &Link> {
        let is_gpu = |id: &str| self.device(id).is_some_and(|d| d.kind == DeviceKind::Gpu);
        self.links
            .iter()
            .filter(move |l| is_gpu(&l.a) && is_gpu(&l.b))
    }

    /// The link of an unordered pair, whichever way round it is stored.
    pub fn link(&self, x: &str, y: &str) -> Option<&Link> {
        self.links
            .iter()
            .find(|l| (l.a == x && l.b == y) || (l.a == y && l.b == x))
    }

    pub fn is_empty(&self) -> bool {
        self.devices.is_empty()
            && self.links.is_empty()
            && self.p2p.is_empty()
            && self.nvlink.is_empty()
    }

    /// Points every source at `file` (parsers only know line numbers).
    pub fn set_file(&mut self, file: &Text) {
        self.for_each_source(|s| s.file = file.clone());
    }

    /// Calls `f` on the source of every device, link, p2p and NVLink fact.
    pub fn for_each_source(&mut self, mut f: impl FnMut(&mut Source)) {
        let all = self
            .devices
            .iter_mut()
            .map(|d| &mut d.source)
            .chain(self.links.iter_mut().flat_map(|l| l.sources.iter_mut()))
            .chain(self.p2p.iter_mut().map(|p| &mut p.source))
            .chain(self.nvlink.iter_mut().map(|n| &mut n.source));
        for s in all {
            f(s);
        }
    }

    /// Canonical order: devices GPUs first then NICs, each by number; links
    /// and cells by device order. Keeps output deterministic.
    pub fn sort(&mut self) {
        // Parsers push devices in the tool's order, nearly always this one
        // already: the keys (no String a device) are checked before a sort.
        if !self.devices.iter().map(device_key).is_sorted() {
            self.devices.sort_by_cached_key(|d| device_sort_key(&d.id));
        }
        let devs: Vec<((u8, u64), &str)> = self.devices.iter().map(device_key).collect();
        // Each id's place is the last device of that id: equal ids are
        // neighbours in device order.
        let mut last: Vec<usize> = (0..devs.len()).collect();
        for i in (1..devs.len()).rev() {
            if devs[i - 1].1 == devs[i].1 {
                last[i - 1] = last[i];
            }
        }
        let places = Places { devs, last };
        // Each link from its earlier device, ordered by the pair's places.
        // Links come a device's pairs after another: the place found last
        // (or the next one; for a row's first pair, the one after its
        // device) is tried before a binary search.
        let (mut ga, mut gb) = (0, 0);
        let mut keys = Vec::with_capacity(self.links.len());
        for l in &mut self.links {
            let pa = places.find(&l.a, [ga, ga.wrapping_add(1)]);
            let pb = places.find(&l.b, [gb, pa.wrapping_add(1)]);
            (ga, gb) = (pa, pb.wrapping_add(1));
            if pb < pa {
                std::mem::swap(&mut l.a, &mut l.b);
            }
            keys.push((pa.min(pb), pa.max(pb)));
        }
        sort_by_keys(&mut self.links, keys);
        let (mut gs, mut gd) = (0, 0);
        let keys = (self.p2p.iter())
            .map(|p| {
                let ps = places.find(&p.src, [gs, gs.wrapping_add(1)]);
                let pd = places.find(&p.dst, [gd, 0]);
                (gs, gd) = (ps, pd.wrapping_add(1));
                (ps, pd)
            })
            .collect();
        sort_by_keys(&mut self.p2p, keys);
        let mut g = 0;
        let keys = (self.nvlink.iter())
            .map(|n| {
                g = places.find(&n.gpu, [g, g.wrapping_add(1)]);
                (g, n.link.unwrap_or(u32::MAX))
            })
            .collect();
        sort_by_keys(&mut self.nvlink, keys);
    }
}

/// The devices' ids (with their rank and number) in device order, and for
/// each the last place of its id.
struct Places<'a> {
    devs: Vec<((u8, u64), &'a str)>,
    last: Vec<usize>,
}

impl Places<'_> {
    /// The place of `id` (`usize::MAX`, last, for an id no device has):
    /// the two guesses are tried first, then a binary search in device
    /// order (the id's rank and number worked out once, not per step).
    fn find(&self, id: &str, guesses: [usize; 2]) -> usize {
        for g in guesses {
            if self.devs.get(g).is_some_and(|d| d.1 == id) {
                return self.last[g];
            }
        }
        let key = rank_and_number(id);
        (self.devs)
            .binary_search_by(|(k, d)| k.cmp(&key).then_with(|| (*d).cmp(id)))
            .map_or(usize::MAX, |j| self.last[j])
    }
}

/// Sorts `v` stably by `keys` (one per element, in order), as
/// `sort_by_cached_key` would; a Vec already in order is not touched.
fn sort_by_keys<T, K: Ord + Copy>(v: &mut Vec<T>, keys: Vec<K>) {
    if keys.is_sorted() {
        return;
    }
    let mut pairs: Vec<(K, T)> = keys.into_iter().zip(v.drain(..)).collect();
    pairs.sort_by_key(|p| p.0);
    v.extend(pairs.into_iter().map(|p| p.1));
}

/// A device's place in device order ([`device_sort_key`]'s, without making
/// its String).
fn device_key(d: &Device) -> ((u8, u64), &str) {
    (rank_and_number(&d.id), &d.id)
}

/// The rank (GPUs and PPUs, NICs, the rest) and number of a device id.
fn rank_and_number(id: &str) -> (u8, u64) {
    // PPUs (`ppu-smi`) are accelerators in GPUs' place.
    let (rank, rest) = if let Some(r) = id.strip_prefix("GPU").or_else(|| id.strip_prefix("PPU")) {
        (0, r)
    } else if let Some(r) = id.strip_prefix("NIC") {
        (1, r)
    } else {
        (2, id)
    };
    (rank, rest.parse().unwrap_or(u64::MAX))
}

/// `GPU10` after `GPU9`, GPUs before NICs.
pub fn device_sort_key(id: &str) -> (u8, u64, String) {
    let (rank, number) = rank_and_number(id);
    (rank, number, id.to_string())
}

/// The worst class over every pair of `gpus`, and the pair that has it
/// (the first such pair in device order). A pair the topology does not
/// describe counts as [`LinkClass::Unknown`].
pub fn worst_class_in_group<'t>(
    topo: &'t Topology,
    gpus: &[String],
) -> Option<(LinkClass, String, String, Option<&'t Link>)> {
    let mut worst: Option<(LinkClass, String, String, Option<&Link>)> = None;
    for (i, x) in gpus.iter().enumerate() {
        for y in &gpus[i + 1..] {
            let link = topo.link(x, y);
            let class = link.map_or(LinkClass::Unknown, |l| l.class);
            if worst.as_ref().is_none_or(|w| class > w.0) {
                worst = Some((class, x.clone(), y.clone(), link));
            }
        }
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cpu_lists_and_rejects_descending_ranges() {
        assert_eq!(
            parse_cpu_list("0-19,80-99"),
            Some(vec![
                CpuRange { first: 0, last: 19 },
                CpuRange {
                    first: 80,
                    last: 99
                }
            ])
        );
        assert_eq!(parse_cpu_list("6,14").unwrap().len(), 2);
        assert_eq!(parse_cpu_list("92-13"), None);
        assert_eq!(parse_cpu_list("0-45,40-50"), None);
        assert_eq!(parse_cpu_list("N/A"), None);
        assert_eq!(parse_cpu_list(""), None);
    }

    /// The sort as it was written before its fast paths (a String key per
    /// device, a binary search by id per end): the oracle of the test below.
    fn sort_reference(t: &mut Topology) {
        t.devices.sort_by_cached_key(|d| device_sort_key(&d.id));
        let mut order: Vec<(&str, usize)> = (t.devices.iter().enumerate())
            .map(|(i, d)| (d.id.as_str(), i))
            .collect();
        order.sort_unstable_by(|x, y| x.0.cmp(y.0).then(y.1.cmp(&x.1)));
        order.dedup_by(|later, first| later.0 == first.0);
        let pos = |id: &str| {
            (order.binary_search_by(|(k, _)| (*k).cmp(id))).map_or(usize::MAX, |j| order[j].1)
        };
        for l in &mut t.links {
            if pos(&l.b) < pos(&l.a) {
                std::mem::swap(&mut l.a, &mut l.b);
            }
        }
        t.links.sort_by_cached_key(|l| (pos(&l.a), pos(&l.b)));
        t.p2p.sort_by_cached_key(|p| (pos(&p.src), pos(&p.dst)));
        (t.nvlink).sort_by_cached_key(|n| (pos(&n.gpu), n.link.unwrap_or(u32::MAX)));
    }

    proptest::proptest! {
        #[test]
        fn sort_agrees_with_the_reference(
            devs in proptest::collection::vec(0usize..9, 0..8),
            pairs in proptest::collection::vec((0usize..10, 0usize..10, proptest::option::of(0u32..3)), 0..24),
            sorted in proptest::bool::ANY,
        ) {
            const IDS: [&str; 10] =
                ["GPU0", "GPU1", "GPU10", "GPU2", "NIC0", "NIC1", "PPU3", "mlx5_0", "GPUx", "X"];
            let mut t = Topology::default();
            let mut devs = devs;
            if sorted {
                devs.sort_by_key(|&i| device_sort_key(IDS[i]));
            }
            for &i in &devs {
                t.devices.push(Device::new(IDS[i], DeviceKind::Gpu, Source::line(i)));
            }
            for (k, &(a, b, link)) in pairs.iter().enumerate() {
                let (a, b) = (IDS[a], IDS[b]);
                t.links.push(Link::new(a, b, LinkClass::Unknown, Source::line(k)));
                t.p2p.push(P2pCell {
                    src: a.into(),
                    dst: b.into(),
                    status: "OK".into(),
                    supported: true,
                    source: Source::line(k),
                });
                t.nvlink.push(NvlinkPort {
                    gpu: a.into(),
                    link,
                    active: true,
                    rate_bytes_per_s: None,
                    as_printed: String::new(),
                    source: Source::line(k),
                });
            }
            let mut want = t.clone();
            sort_reference(&mut want);
            t.sort();
            proptest::prop_assert_eq!(t, want);
        }
    }

    #[test]
    fn sort_orders_devices_then_links_from_the_earlier_device() {
        let mut t = Topology::default();
        for id in ["NIC0", "GPU10", "GPU2"] {
            let kind = if id.starts_with("GPU") {
                DeviceKind::Gpu
            } else {
                DeviceKind::Nic
            };
            t.devices.push(Device::new(id, kind, Source::line(1)));
        }
        for (a, b) in [
            ("NIC0", "GPU2"),
            ("GPU10", "GPU2"),
            ("GPU2", "X"),
            ("GPU2", "GPU10"),
        ] {
            t.links
                .push(Link::new(a, b, LinkClass::Unknown, Source::line(2)));
        }
        t.sort();
        let ids: Vec<&str> = t.devices.iter().map(|d| d.id.as_str()).collect();
        assert_eq!(ids, ["GPU2", "GPU10", "NIC0"]);
        let pairs: Vec<(&str, &str)> = t
            .links
            .iter()
            .map(|l| (l.a.as_str(), l.b.as_str()))
            .collect();
        // Equal pairs keep their order; an unknown device goes last.
        assert_eq!(
            pairs,
            [
                ("GPU2", "GPU10"),
                ("GPU2", "GPU10"),
                ("GPU2", "NIC0"),
                ("GPU2", "X")
            ]
        );
    }

    #[test]
    fn class_order_follows_the_ladder() {
        assert!(LinkClass::DirectLink < LinkClass::PcieSwitch);
        assert!(LinkClass::PcieHost < LinkClass::CrossSocket);
        assert!(LinkClass::CrossSocket < LinkClass::Unknown);
        for c in LinkClass::ALL {
            assert_eq!(LinkClass::parse(c.as_str()), Some(c));
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.as_str()));
        }
    }
}
