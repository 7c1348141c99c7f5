//! Scale-up bandwidth of one GPU: what it has to its neighbours inside the
//! node, from NVLink (`nvidia-smi nvlink --status`: active links times
//! their rate) or, on AMD nodes, from xGMI (the driver's maximum bandwidth
//! to each peer one xGMI hop away, summed). The injection model and the
//! cliff compare the network share of a GPU with it (seed section 3.6).

use std::collections::BTreeMap;

use super::GpuNvlinks;
use crate::evidence::topology::{LinkClass, Topology};

/// Which fabric the scale-up figure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fabric {
    /// Active NVLinks times the per-link rate.
    Nvlink,
    /// Direct xGMI peers, each at the maximum bandwidth KFD reports for
    /// the pair (rocm-smi `--shownodesbw`, amd-smi's NUMA BW table).
    Xgmi,
}

/// Scale-up bandwidth of one GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct ScaleUp {
    pub bytes_per_s: f64,
    pub gpu: String,
    /// Active NVLinks, or direct xGMI peers.
    pub active_links: usize,
    /// The NVLink rate, or the mean of the xGMI peers' maximum bandwidths
    /// (`bytes_per_s / active_links`).
    pub per_link_bytes_per_s: f64,
    pub fabric: Fabric,
}

/// The first GPU (topology order) with active NVLinks that state a rate,
/// else the first with direct xGMI peers whose bandwidth is given.
pub(super) fn of(
    gpus: &[String],
    nvlinks: &BTreeMap<String, GpuNvlinks>,
    t: &Topology,
) -> Option<ScaleUp> {
    gpus.iter()
        .find_map(|g| {
            let n = nvlinks.get(g)?;
            let r = n.first_active_rate_bytes_per_s?;
            Some(ScaleUp {
                bytes_per_s: r * n.active as f64,
                gpu: g.clone(),
                active_links: n.active,
                per_link_bytes_per_s: r,
                fabric: Fabric::Nvlink,
            })
        })
        .or_else(|| gpus.iter().find_map(|g| xgmi(g, t)))
}

/// One GPU's direct xGMI peers (class direct-link, no NVLink count, a
/// maximum bandwidth above zero), their maxima summed.
fn xgmi(gpu: &str, t: &Topology) -> Option<ScaleUp> {
    let peers: Vec<f64> = t
        .gpu_links()
        .filter(|l| l.a == gpu || l.b == gpu)
        .filter(|l| l.class == LinkClass::DirectLink && l.nvlinks.is_none())
        .filter_map(|l| l.max_bandwidth_bytes_per_s.filter(|b| *b > 0.0))
        .collect();
    if peers.is_empty() {
        return None;
    }
    let sum: f64 = peers.iter().sum();
    Some(ScaleUp {
        bytes_per_s: sum,
        gpu: gpu.to_string(),
        active_links: peers.len(),
        per_link_bytes_per_s: sum / peers.len() as f64,
        fabric: Fabric::Xgmi,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::topology::amd::parse_amd_smi;

    #[test]
    fn an_mi300x_scales_up_over_seven_direct_xgmi_peers() {
        // Real capture: amd-smi topology on 8x MI300X, 50000-50000 MB/s to
        // each peer, every peer one xGMI hop away.
        let text = include_str!(
            "../../captures/mi300x-8gpu-amdsmi/amd-smi-topology-001-mi300x-8gpu-full-bdf-tables.txt"
        );
        let t = parse_amd_smi(text).unwrap().topology;
        let gpus: Vec<String> = t.gpus().map(|d| d.id.clone()).collect();
        let s = of(&gpus, &BTreeMap::new(), &t).expect("xGMI scale-up");
        assert_eq!(s.fabric, Fabric::Xgmi);
        assert_eq!(s.gpu, "GPU0");
        assert_eq!(s.active_links, 7);
        assert_eq!(s.bytes_per_s, 7.0 * 50e9);
        assert_eq!(s.per_link_bytes_per_s, 50e9);
    }

    #[test]
    fn nvlink_comes_first_and_no_bandwidth_gives_no_xgmi_figure() {
        // Real capture: a weight table alone gives classes, no bandwidth.
        let text = include_str!(
            "../../captures/mi250x-8gcd/rocm-topo-010-mi250x-8gcd-weight-15-30-45-truncated.txt"
        );
        let t = crate::evidence::topology::amd::parse_rocm_smi(text)
            .unwrap()
            .topology;
        let gpus: Vec<String> = t.gpus().map(|d| d.id.clone()).collect();
        assert_eq!(of(&gpus, &BTreeMap::new(), &t), None);
        let nv = GpuNvlinks {
            listed: 4,
            active: 4,
            first_active_rate_bytes_per_s: Some(25e9),
            link_rate_bytes_per_s: Some(25e9),
            ..GpuNvlinks::default()
        };
        let s = of(&gpus, &BTreeMap::from([("GPU1".to_string(), nv)]), &t).unwrap();
        assert_eq!(
            (s.fabric, s.gpu.as_str(), s.bytes_per_s),
            (Fabric::Nvlink, "GPU1", 100e9)
        );
    }
}
