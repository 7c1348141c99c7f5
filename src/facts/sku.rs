//! Facts about GPU models that no transcript states: how many NVLinks a
//! part is built with, and whether they arrive on the board (SXM, OAM) or
//! through an optional bridge (PCIe cards). One row per part, each with
//! the document it comes from; a name matches the first row whose pattern
//! it contains (case-insensitive), so more specific rows come first.

/// How a part's NVLinks reach other GPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NvlinkWiring {
    /// Through the baseboard: every designed link is expected up.
    Board,
    /// Through an optional bridge card: a GPU without one has none active.
    Bridge,
}

/// One GPU model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sku {
    /// A part of the name nvidia-smi prints (`H100 PCIe`).
    pub pattern: &'static str,
    /// NVLinks the part is designed with (nvidia-smi may list more).
    pub nvlinks: usize,
    pub wiring: NvlinkWiring,
    /// Where the link count comes from.
    pub source: &'static str,
}

const SKUS: [Sku; 8] = [
    Sku {
        pattern: "H100 PCIe",
        nvlinks: 12,
        wiring: NvlinkWiring::Bridge,
        source: "NVIDIA H100 PCIe product brief PB-11133: NVLink 600 GB/s bidirectional = 12 links x 50 GB/s",
    },
    Sku {
        pattern: "H100 NVL",
        nvlinks: 12,
        wiring: NvlinkWiring::Bridge,
        source: "NVIDIA H100 NVL product brief: NVLink 600 GB/s bidirectional = 12 links x 50 GB/s",
    },
    Sku {
        pattern: "H100",
        nvlinks: 18,
        wiring: NvlinkWiring::Board,
        source: "NVIDIA H100 Tensor Core GPU datasheet (SXM5): NVLink 900 GB/s = 18 links x 50 GB/s",
    },
    Sku {
        pattern: "A100-PCIE",
        nvlinks: 12,
        wiring: NvlinkWiring::Bridge,
        source: "NVIDIA A100 PCIe product brief PB-10137: NVLink bridge 600 GB/s = 12 links x 50 GB/s",
    },
    Sku {
        pattern: "A100-SXM",
        nvlinks: 12,
        wiring: NvlinkWiring::Board,
        source: "NVIDIA A100 Tensor Core GPU architecture whitepaper: 12 third-generation NVLinks, 600 GB/s",
    },
    Sku {
        pattern: "RTX A6000",
        nvlinks: 4,
        wiring: NvlinkWiring::Bridge,
        source: "NVIDIA RTX A6000 datasheet: NVLink bridge for two cards, 112.5 GB/s bidirectional = 4 links",
    },
    Sku {
        pattern: "V100-SXM2",
        nvlinks: 6,
        wiring: NvlinkWiring::Board,
        source: "NVIDIA Tesla V100 GPU architecture whitepaper: six NVLink 2.0 links, 300 GB/s",
    },
    Sku {
        pattern: "P100-SXM2",
        nvlinks: 4,
        wiring: NvlinkWiring::Board,
        source: "NVIDIA Tesla P100 whitepaper: four NVLink 1.0 links, 160 GB/s",
    },
];

/// The row of a GPU model name, if the table has one.
pub fn of(name: &str) -> Option<&'static Sku> {
    let n = name.to_ascii_lowercase();
    SKUS.iter()
        .find(|s| n.contains(&s.pattern.to_ascii_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcie_and_sxm_parts_of_one_generation_differ() {
        assert_eq!(of("NVIDIA H100 PCIe").unwrap().nvlinks, 12);
        assert_eq!(of("NVIDIA H100 80GB HBM3").unwrap().nvlinks, 18);
        assert_eq!(of("NVIDIA RTX A6000").unwrap().wiring, NvlinkWiring::Bridge);
        assert_eq!(of("Tesla V100-SXM2-32GB").unwrap().nvlinks, 6);
        assert!(of("NVIDIA GeForce RTX 4090").is_none());
    }
}
