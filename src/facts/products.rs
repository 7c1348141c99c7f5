//! Product tables: the rates of parts that a transcript names without
//! stating them, for the models (the injection cliff, staged vs direct)
//! when the bundle lacks the figure itself. One row per part, each with
//! the public document its numbers come from. Every figure taken from here
//! is shown as "product table" beside the chart that uses it, never as a
//! measurement or a link fact of the node.
//!
//! Rates are per direction, in bytes per second (GB/s = 1e9 bytes/s). A
//! name matches the first row whose pattern it contains (case-insensitive),
//! so more specific rows come first (`GH200` before `H200`).

/// One GPU model: what it has to its neighbours inside the node, and the
/// PCIe link to its host.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpuRow {
    /// A part of the name the tools print (`H100 80GB HBM3`, `MI300X`).
    pub pattern: &'static str,
    /// The part as people call it.
    pub part: &'static str,
    /// Scale-up bandwidth per GPU per direction over its board links
    /// (NVLink, xGMI); `None` for a PCIe card whose links are optional.
    pub scaleup_bytes_per_s: Option<f64>,
    /// How the scale-up figure is made (`18 NVLink4 links x 25 GB/s`).
    pub scaleup_derivation: &'static str,
    /// The host link: PCIe generation and lanes.
    pub pcie: (u32, u32),
    /// The compute adapter the part's reference system (DGX, HGX, the
    /// vendor's platform) ships with; none for a PCIe card.
    pub adapter: Option<AdapterRow>,
    pub source: &'static str,
}

const GB: f64 = 1e9;

/// GPU models, specific rows first.
pub const GPUS: [GpuRow; 24] = [
    GpuRow {
        pattern: "GH200",
        part: "GH200 Grace Hopper",
        scaleup_bytes_per_s: Some(450.0 * GB),
        scaleup_derivation: "NVLink 900 GB/s both directions = 450 GB/s per direction",
        pcie: (5, 16),
        adapter: Some(NDR_CX7),
        source: "NVIDIA GH200 Grace Hopper Superchip data sheet",
    },
    GpuRow {
        pattern: "GB200",
        part: "GB200 (Blackwell)",
        scaleup_bytes_per_s: Some(900.0 * GB),
        scaleup_derivation: "18 NVLink5 links x 50 GB/s per direction",
        pcie: (5, 16),
        adapter: Some(NDR_CX7),
        source: "NVIDIA Blackwell architecture technical brief: 1.8 TB/s NVLink per GPU",
    },
    GpuRow {
        pattern: "B300",
        part: "B300 (Blackwell Ultra)",
        scaleup_bytes_per_s: Some(900.0 * GB),
        scaleup_derivation: "18 NVLink5 links x 50 GB/s per direction",
        pcie: (6, 16),
        adapter: Some(CX8),
        source: "NVIDIA HGX B300 data sheet: 1.8 TB/s NVLink per GPU",
    },
    GpuRow {
        pattern: "B200",
        part: "B200 (Blackwell)",
        scaleup_bytes_per_s: Some(900.0 * GB),
        scaleup_derivation: "18 NVLink5 links x 50 GB/s per direction",
        pcie: (5, 16),
        adapter: Some(NDR_CX7),
        source: "NVIDIA Blackwell architecture technical brief: 1.8 TB/s NVLink per GPU",
    },
    GpuRow {
        pattern: "H100 PCIe",
        part: "H100 PCIe",
        scaleup_bytes_per_s: None,
        scaleup_derivation: "NVLink only through an optional bridge",
        pcie: (5, 16),
        adapter: None,
        source: "NVIDIA H100 PCIe product brief PB-11133",
    },
    GpuRow {
        pattern: "H100 NVL",
        part: "H100 NVL",
        scaleup_bytes_per_s: None,
        scaleup_derivation: "NVLink only through an optional bridge",
        pcie: (5, 16),
        adapter: None,
        source: "NVIDIA H100 NVL product brief",
    },
    GpuRow {
        pattern: "H800",
        part: "H800 SXM5",
        scaleup_bytes_per_s: Some(200.0 * GB),
        scaleup_derivation: "8 NVLink4 links x 25 GB/s per direction (400 GB/s both directions)",
        pcie: (5, 16),
        adapter: Some(NDR_CX7),
        source: "NVIDIA H800 SXM5 product specifications: NVLink 400 GB/s",
    },
    GpuRow {
        pattern: "H100",
        part: "H100 SXM5",
        scaleup_bytes_per_s: Some(450.0 * GB),
        scaleup_derivation: "18 NVLink4 links x 25 GB/s per direction",
        pcie: (5, 16),
        adapter: Some(NDR_CX7),
        source: "NVIDIA H100 Tensor Core GPU datasheet (SXM5): NVLink 900 GB/s",
    },
    GpuRow {
        pattern: "H200",
        part: "H200 SXM",
        scaleup_bytes_per_s: Some(450.0 * GB),
        scaleup_derivation: "18 NVLink4 links x 25 GB/s per direction",
        pcie: (5, 16),
        adapter: Some(NDR_CX7),
        source: "NVIDIA H200 Tensor Core GPU datasheet: NVLink 900 GB/s",
    },
    GpuRow {
        pattern: "H20",
        part: "H20",
        scaleup_bytes_per_s: Some(450.0 * GB),
        scaleup_derivation: "18 NVLink4 links x 25 GB/s per direction (900 GB/s both directions)",
        pcie: (5, 16),
        adapter: Some(NDR_CX7),
        source: "NVIDIA HGX H20 product specifications: NVLink 900 GB/s",
    },
    GpuRow {
        pattern: "A800",
        part: "A800 SXM4",
        scaleup_bytes_per_s: Some(200.0 * GB),
        scaleup_derivation: "8 NVLink3 links x 25 GB/s per direction (400 GB/s both directions)",
        pcie: (4, 16),
        adapter: Some(HDR_CX6),
        source: "NVIDIA A800 product specifications: NVLink 400 GB/s",
    },
    GpuRow {
        pattern: "A100-PCIE",
        part: "A100 PCIe",
        scaleup_bytes_per_s: None,
        scaleup_derivation: "NVLink only through an optional bridge",
        pcie: (4, 16),
        adapter: None,
        source: "NVIDIA A100 PCIe product brief PB-10137",
    },
    GpuRow {
        pattern: "A100 80GB PCIe",
        part: "A100 PCIe",
        scaleup_bytes_per_s: None,
        scaleup_derivation: "NVLink only through an optional bridge",
        pcie: (4, 16),
        adapter: None,
        source: "NVIDIA A100 PCIe product brief PB-10137",
    },
    GpuRow {
        pattern: "A100",
        part: "A100 SXM4",
        scaleup_bytes_per_s: Some(300.0 * GB),
        scaleup_derivation: "12 NVLink3 links x 25 GB/s per direction",
        pcie: (4, 16),
        adapter: Some(HDR_CX6),
        source: "NVIDIA A100 Tensor Core GPU architecture whitepaper: 12 NVLinks, 600 GB/s",
    },
    GpuRow {
        pattern: "V100-SXM",
        part: "V100 SXM2",
        scaleup_bytes_per_s: Some(150.0 * GB),
        scaleup_derivation: "6 NVLink2 links x 25 GB/s per direction",
        pcie: (3, 16),
        adapter: Some(EDR_CX4),
        source: "NVIDIA Tesla V100 GPU architecture whitepaper: six NVLink 2.0 links, 300 GB/s",
    },
    GpuRow {
        pattern: "P100-SXM",
        part: "P100 SXM2",
        scaleup_bytes_per_s: Some(80.0 * GB),
        scaleup_derivation: "4 NVLink1 links x 20 GB/s per direction",
        pcie: (3, 16),
        adapter: Some(EDR_CX4),
        source: "NVIDIA Tesla P100 whitepaper: four NVLink 1.0 links, 160 GB/s",
    },
    GpuRow {
        pattern: "MI300X",
        part: "Instinct MI300X",
        scaleup_bytes_per_s: Some(448.0 * GB),
        scaleup_derivation: "7 xGMI peers x 64 GB/s per direction (128 GB/s per link both directions)",
        pcie: (5, 16),
        adapter: Some(NDR_CX7),
        source: "AMD Instinct MI300X data sheet: 7 Infinity Fabric links, 128 GB/s each",
    },
    GpuRow {
        pattern: "MI250X",
        part: "Instinct MI250X (per OAM, two GCDs)",
        scaleup_bytes_per_s: Some(400.0 * GB),
        scaleup_derivation: "8 Infinity Fabric links x 50 GB/s per direction, per OAM module",
        pcie: (4, 16),
        adapter: Some(HDR_CX6),
        source: "AMD Instinct MI250X data sheet: 8 Infinity Fabric links, 100 GB/s each",
    },
    // PCIe cards without board links: their scale-up path is PCIe.
    GpuRow {
        pattern: "RTX 50",
        part: "GeForce RTX 50 series",
        scaleup_bytes_per_s: None,
        scaleup_derivation: "no NVLink: peers are reached over PCIe",
        pcie: (5, 16),
        adapter: None,
        source: "NVIDIA GeForce RTX 50 series specifications: PCIe Gen 5",
    },
    GpuRow {
        pattern: "RTX 40",
        part: "GeForce RTX 40 series",
        scaleup_bytes_per_s: None,
        scaleup_derivation: "no NVLink: peers are reached over PCIe",
        pcie: (4, 16),
        adapter: None,
        source: "NVIDIA GeForce RTX 40 series specifications: PCIe Gen 4",
    },
    GpuRow {
        pattern: "RTX 30",
        part: "GeForce RTX 30 series",
        scaleup_bytes_per_s: None,
        scaleup_derivation: "no NVLink on most cards: peers are reached over PCIe",
        pcie: (4, 16),
        adapter: None,
        source: "NVIDIA GeForce RTX 30 series specifications: PCIe Gen 4",
    },
    GpuRow {
        pattern: "A40",
        part: "A40",
        scaleup_bytes_per_s: None,
        scaleup_derivation: "NVLink only through an optional bridge",
        pcie: (4, 16),
        adapter: None,
        source: "NVIDIA A40 data sheet: PCIe Gen4 x16",
    },
    GpuRow {
        pattern: "L4",
        part: "L4",
        scaleup_bytes_per_s: None,
        scaleup_derivation: "no NVLink: peers are reached over PCIe",
        pcie: (4, 16),
        adapter: None,
        source: "NVIDIA L4 data sheet: PCIe Gen4 x16",
    },
    GpuRow {
        pattern: "T4",
        part: "T4",
        scaleup_bytes_per_s: None,
        scaleup_derivation: "no NVLink: peers are reached over PCIe",
        pcie: (3, 16),
        adapter: None,
        source: "NVIDIA T4 data sheet: PCIe Gen3 x16",
    },
];

/// An NVLink generation as `nvidia-smi topo -m` lets it be told when no
/// transcript names the GPU: by the links one GPU has in all (the sum of
/// its `NV#` cells). Each row is the part that count identifies, with the
/// adapter its reference system (DGX) ships with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkRow {
    pub links: u32,
    pub generation: u32,
    pub per_link_bytes_per_s: f64,
    /// The parts built with that many links of that generation.
    pub parts: &'static str,
    /// What another part with the same count would change.
    pub caveat: &'static str,
    pub pcie: (u32, u32),
    /// The reference system's compute adapter.
    pub adapter: AdapterRow,
    pub source: &'static str,
}

/// NVLink counts per GPU, by generation; the first row of a count wins.
pub const LINKS: [LinkRow; 5] = [
    LinkRow {
        links: 4,
        generation: 1,
        per_link_bytes_per_s: 20.0 * GB,
        parts: "P100 SXM2 (DGX-1)",
        caveat: "",
        pcie: (3, 16),
        adapter: EDR_CX4,
        source: "NVIDIA Tesla P100 whitepaper; NVIDIA DGX-1 data sheet (4x InfiniBand EDR 100 Gb/s)",
    },
    LinkRow {
        links: 6,
        generation: 2,
        per_link_bytes_per_s: 25.0 * GB,
        parts: "V100 SXM2 (DGX-1, DGX-2)",
        caveat: "",
        pcie: (3, 16),
        adapter: EDR_CX4,
        source: "NVIDIA Tesla V100 whitepaper; NVIDIA DGX-1 data sheet (4x InfiniBand EDR 100 Gb/s)",
    },
    LinkRow {
        links: 8,
        generation: 4,
        per_link_bytes_per_s: 25.0 * GB,
        parts: "H800 SXM5",
        caveat: "an A800 has 8 NVLink3 links at the same rate",
        pcie: (5, 16),
        adapter: NDR_CX7,
        source: "NVIDIA H800 product specifications (NVLink 400 GB/s); HGX H100-class systems ship ConnectX-7 NDR",
    },
    LinkRow {
        links: 12,
        generation: 3,
        per_link_bytes_per_s: 25.0 * GB,
        parts: "A100 SXM4 (DGX A100)",
        caveat: "",
        pcie: (4, 16),
        adapter: HDR_CX6,
        source: "NVIDIA A100 architecture whitepaper; NVIDIA DGX A100 data sheet (8x ConnectX-6 HDR 200 Gb/s)",
    },
    LinkRow {
        links: 18,
        generation: 4,
        per_link_bytes_per_s: 25.0 * GB,
        parts: "H100 / H200 SXM5 (DGX H100)",
        caveat: "a Blackwell part (B200, B300) has 18 NVLink5 links at twice the rate",
        pcie: (5, 16),
        adapter: NDR_CX7,
        source: "NVIDIA H100 datasheet; NVIDIA DGX H100 data sheet (8x ConnectX-7 NDR 400 Gb/s)",
    },
];

/// One network adapter model and its data rate per port per direction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdapterRow {
    /// A part of what a transcript prints for it: its PCI device id as
    /// `ibstat` shows the CA type (`MT4129`), or its name (`ConnectX-7`).
    pub patterns: [&'static str; 2],
    pub part: &'static str,
    pub bytes_per_s: f64,
    pub source: &'static str,
}

const EDR_CX4: AdapterRow = AdapterRow {
    patterns: ["MT4115", "ConnectX-4"],
    part: "ConnectX-4 EDR InfiniBand 100 Gb/s",
    bytes_per_s: 12.5 * GB,
    source: "NVIDIA ConnectX-4 VPI adapter product brief: EDR 100 Gb/s",
};
const HDR_CX6: AdapterRow = AdapterRow {
    patterns: ["MT4123", "ConnectX-6"],
    part: "ConnectX-6 HDR InfiniBand 200 Gb/s",
    bytes_per_s: 25.0 * GB,
    source: "NVIDIA ConnectX-6 VPI adapter product brief: HDR 200 Gb/s",
};
const CX8: AdapterRow = AdapterRow {
    patterns: ["MT4131", "ConnectX-8"],
    part: "ConnectX-8 SuperNIC 800 Gb/s",
    bytes_per_s: 100.0 * GB,
    source: "NVIDIA ConnectX-8 SuperNIC product brief: 800 Gb/s",
};
const NDR_CX7: AdapterRow = AdapterRow {
    patterns: ["MT4129", "ConnectX-7"],
    part: "ConnectX-7 NDR InfiniBand 400 Gb/s",
    bytes_per_s: 50.0 * GB,
    source: "NVIDIA ConnectX-7 adapter product brief: NDR 400 Gb/s",
};

/// Adapter models by what a transcript prints.
pub const ADAPTERS: [AdapterRow; 7] = [
    AdapterRow {
        patterns: ["MT41692", "BlueField-3"],
        part: "BlueField-3 DPU 400 Gb/s",
        bytes_per_s: 50.0 * GB,
        source: "NVIDIA BlueField-3 DPU product brief: 400 Gb/s",
    },
    CX8,
    NDR_CX7,
    AdapterRow {
        patterns: ["MT4125", "ConnectX-6 Dx"],
        part: "ConnectX-6 Dx Ethernet 100 Gb/s",
        bytes_per_s: 12.5 * GB,
        source: "NVIDIA ConnectX-6 Dx product brief: up to 2x 100 GbE",
    },
    HDR_CX6,
    AdapterRow {
        patterns: ["MT4119", "ConnectX-5"],
        part: "ConnectX-5 EDR InfiniBand 100 Gb/s",
        bytes_per_s: 12.5 * GB,
        source: "NVIDIA ConnectX-5 VPI adapter product brief: EDR 100 Gb/s",
    },
    EDR_CX4,
];

fn contains(hay: &str, pattern: &str) -> bool {
    hay.to_ascii_lowercase()
        .contains(&pattern.to_ascii_lowercase())
}

/// The row of a GPU model name, if the table has one.
pub fn gpu(name: &str) -> Option<&'static GpuRow> {
    GPUS.iter().find(|r| contains(name, r.pattern))
}

/// The NVLink generation one GPU's total link count identifies.
pub fn by_links(links: u32) -> Option<&'static LinkRow> {
    LINKS.iter().find(|r| r.links == links)
}

/// The adapter model a CA type, board id or name belongs to.
pub fn adapter(printed: &str) -> Option<&'static AdapterRow> {
    ADAPTERS
        .iter()
        .find(|r| r.patterns.iter().any(|p| contains(printed, p)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sxm_parts_get_their_nvlink_bandwidth_per_direction() {
        let per = |n: &str| gpu(n).and_then(|r| r.scaleup_bytes_per_s);
        assert_eq!(per("NVIDIA H100 80GB HBM3"), Some(450e9));
        assert_eq!(per("NVIDIA H800"), Some(200e9));
        assert_eq!(per("NVIDIA H200"), Some(450e9));
        assert_eq!(per("NVIDIA GH200 120GB"), Some(450e9));
        assert_eq!(per("NVIDIA GB200"), Some(900e9));
        assert_eq!(per("NVIDIA A100-SXM4-80GB"), Some(300e9));
        assert_eq!(per("Tesla V100-SXM2-32GB"), Some(150e9));
        assert_eq!(per("AMD Instinct MI300X"), Some(448e9));
        // PCIe cards name no board links: their PCIe link is the path.
        assert_eq!(per("NVIDIA A100-PCIE-40GB"), None);
        assert_eq!(gpu("NVIDIA GeForce RTX 4080").unwrap().pcie, (4, 16));
        assert_eq!(gpu("NVIDIA GeForce RTX 5090").unwrap().pcie, (5, 16));
        assert!(gpu("Tesla K80").is_none());
    }

    #[test]
    fn a_topology_link_count_names_its_generation_and_reference_adapter() {
        let r = by_links(6).unwrap();
        assert_eq!((r.generation, r.per_link_bytes_per_s), (2, 25e9));
        assert_eq!(r.adapter.bytes_per_s, 12.5e9);
        assert_eq!(by_links(18).unwrap().adapter.bytes_per_s, 50e9);
        assert!(by_links(18).unwrap().caveat.contains("twice"));
        assert!(by_links(7).is_none());
    }

    #[test]
    fn adapters_are_found_by_ca_type_or_name() {
        assert_eq!(adapter("MT4129").unwrap().bytes_per_s, 50e9);
        assert_eq!(adapter("MT41692").unwrap().part, "BlueField-3 DPU 400 Gb/s");
        assert_eq!(
            adapter("Mellanox ConnectX-6 Dx").unwrap().bytes_per_s,
            12.5e9
        );
        assert_eq!(adapter("ConnectX-6").unwrap().bytes_per_s, 25e9);
        assert!(adapter("efa_0").is_none());
        for r in ADAPTERS.iter().chain(LINKS.iter().map(|l| &l.adapter)) {
            assert!(!r.source.is_empty() && r.bytes_per_s > 0.0);
        }
    }
}
