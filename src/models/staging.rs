//! Staged versus direct transfer of `m` bytes from a GPU on one node to a
//! GPU on another (seed section 2.3).
//!
//! Staged: GPU to host buffer (PCIe), host buffer to the adapter (PCIe
//! again), the wire, adapter to host buffer (PCIe), host buffer to GPU
//! (PCIe again): four PCIe crossings, two per side. Direct (GPUDirect RDMA
//! or the peer-to-peer DMA path): the adapter reads and writes GPU memory,
//! one PCIe crossing per side.
//!
//! Two bounds for each: the serial sum of the segments (no overlap, as for
//! a single small message), and the pipelined bound (chunks overlap
//! perfectly; time is set by the busiest resource; each side's PCIe
//! carries two crossings when staged).
//!
//! Each store-and-forward step also costs a fixed latency (a copy's
//! launch and completion, a DMA's doorbell): `hop_latency_s` per step,
//! five steps staged (four PCIe crossings and the wire) against three
//! direct. Serially every step pays it; pipelined, the first chunk still
//! pays every step once. So at small sizes, where the seed says
//! pipelining hides almost nothing, staged is slower by two hops' latency
//! even when PCIe is wide (seed section 2.3, "Latency").

use serde::Serialize;

use super::{ModelError, positive};

/// The per-step latency assumed when none is given: 2 us, the order of a
/// copy's launch and completion on a PCIe GPU (seed section 2.3). The CLI
/// takes `--hop-latency-us`; the site says it is assumed.
pub const ASSUMED_HOP_LATENCY_S: f64 = 2e-6;

/// The cost of one path.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PathCost {
    /// Every segment one after the other.
    pub serial_s: f64,
    /// Perfect chunk pipelining: the busiest resource's time.
    pub pipelined_s: f64,
    /// Bytes moved through host memory (writes plus reads): about 4m
    /// staged (a write and a read on each side), 0 direct.
    pub host_memory_traffic_bytes: f64,
    /// PCIe crossings in total, both sides.
    pub pcie_crossings: u32,
}

fn check(m_bytes: f64, pcie: f64, net: f64) -> Result<(), ModelError> {
    positive("message size (bytes)", m_bytes)?;
    positive("PCIe bandwidth (bytes/s)", pcie)?;
    positive("network bandwidth (bytes/s)", net)?;
    Ok(())
}

/// Host-staged path, without a fixed cost per step.
pub fn staged_cost(
    m_bytes: f64,
    pcie_bytes_per_s: f64,
    net_bytes_per_s: f64,
) -> Result<PathCost, ModelError> {
    staged_cost_with_latency(m_bytes, pcie_bytes_per_s, net_bytes_per_s, 0.0)
}

/// Direct path, without a fixed cost per step.
pub fn direct_cost(
    m_bytes: f64,
    pcie_bytes_per_s: f64,
    net_bytes_per_s: f64,
) -> Result<PathCost, ModelError> {
    direct_cost_with_latency(m_bytes, pcie_bytes_per_s, net_bytes_per_s, 0.0)
}

fn check_latency(hop_latency_s: f64) -> Result<(), ModelError> {
    if hop_latency_s.is_finite() && hop_latency_s >= 0.0 {
        Ok(())
    } else {
        Err(ModelError::Undefined(format!(
            "a per-hop latency is zero or more seconds, not {hop_latency_s}"
        )))
    }
}

/// Host-staged path: five store-and-forward steps of `hop_latency_s` each.
pub fn staged_cost_with_latency(
    m_bytes: f64,
    pcie_bytes_per_s: f64,
    net_bytes_per_s: f64,
    hop_latency_s: f64,
) -> Result<PathCost, ModelError> {
    check(m_bytes, pcie_bytes_per_s, net_bytes_per_s)?;
    check_latency(hop_latency_s)?;
    let pcie = m_bytes / pcie_bytes_per_s;
    let wire = m_bytes / net_bytes_per_s;
    let fixed = 5.0 * hop_latency_s;
    Ok(PathCost {
        serial_s: 4.0 * pcie + wire + fixed,
        pipelined_s: (2.0 * pcie).max(wire) + fixed,
        host_memory_traffic_bytes: 4.0 * m_bytes,
        pcie_crossings: 4,
    })
}

/// Direct path (GPUDirect RDMA / peer-to-peer DMA): three steps of
/// `hop_latency_s` each.
pub fn direct_cost_with_latency(
    m_bytes: f64,
    pcie_bytes_per_s: f64,
    net_bytes_per_s: f64,
    hop_latency_s: f64,
) -> Result<PathCost, ModelError> {
    check(m_bytes, pcie_bytes_per_s, net_bytes_per_s)?;
    check_latency(hop_latency_s)?;
    let pcie = m_bytes / pcie_bytes_per_s;
    let wire = m_bytes / net_bytes_per_s;
    let fixed = 3.0 * hop_latency_s;
    Ok(PathCost {
        serial_s: 2.0 * pcie + wire + fixed,
        pipelined_s: pcie.max(wire) + fixed,
        host_memory_traffic_bytes: 0.0,
        pcie_crossings: 2,
    })
}

/// A copy between two GPUs of one node staged through host memory, as
/// when peer access is disabled: the source GPU's PCIe link to a host
/// buffer, then the host buffer over the destination GPU's link; two
/// steps of `hop_latency_s`, `2m` through host memory. Pipelined, the two
/// links run at once and the copy takes one link's time.
pub fn peer_staged_cost(
    m_bytes: f64,
    pcie_bytes_per_s: f64,
    hop_latency_s: f64,
) -> Result<PathCost, ModelError> {
    check(m_bytes, pcie_bytes_per_s, pcie_bytes_per_s)?;
    check_latency(hop_latency_s)?;
    let pcie = m_bytes / pcie_bytes_per_s;
    Ok(PathCost {
        serial_s: 2.0 * pcie + 2.0 * hop_latency_s,
        pipelined_s: pcie + 2.0 * hop_latency_s,
        host_memory_traffic_bytes: 2.0 * m_bytes,
        pcie_crossings: 2,
    })
}

/// A direct peer copy between two GPUs over the link that joins them
/// (NVLink, xGMI, or PCIe peer-to-peer): one step, nothing through host
/// memory; serial and pipelined are the same.
pub fn peer_direct_cost(
    m_bytes: f64,
    link_bytes_per_s: f64,
    hop_latency_s: f64,
) -> Result<PathCost, ModelError> {
    positive("message size (bytes)", m_bytes)?;
    positive("link bandwidth (bytes/s)", link_bytes_per_s)?;
    check_latency(hop_latency_s)?;
    let t = m_bytes / link_bytes_per_s + hop_latency_s;
    Ok(PathCost {
        serial_s: t,
        pipelined_s: t,
        host_memory_traffic_bytes: 0.0,
        pcie_crossings: 0,
    })
}

/// The PCIe bandwidth below which the staged path is limited by PCIe
/// rather than by the wire, even perfectly pipelined: each side's PCIe
/// carries the message twice, so PCIe binds once `2m / B_pcie > m / B_net`,
/// that is below `2 * B_net`. Above it, staging costs latency, host memory
/// bandwidth and CPU time, not bandwidth. (The direct path's crossover is
/// `B_net` itself.)
pub fn crossover_pcie(net_bytes_per_s: f64) -> Result<f64, ModelError> {
    positive("network bandwidth (bytes/s)", net_bytes_per_s)?;
    Ok(2.0 * net_bytes_per_s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reproduces_the_seed_round_numbers_exactly() {
        // 1 GB, PCIe 20 GB/s, network 10 GB/s (GB = 1e9 bytes).
        let s = staged_cost(1e9, 20e9, 10e9).unwrap();
        let d = direct_cost(1e9, 20e9, 10e9).unwrap();
        assert!((s.serial_s - 0.30).abs() < 1e-15, "{}", s.serial_s);
        assert!((d.serial_s - 0.20).abs() < 1e-15, "{}", d.serial_s);
        // Pipelined: PCIe is comfortably wider than the wire, both are wire-bound.
        assert_eq!(s.pipelined_s, 0.1);
        assert_eq!(d.pipelined_s, 0.1);
        assert_eq!(s.host_memory_traffic_bytes, 4e9);
        assert_eq!(d.host_memory_traffic_bytes, 0.0);
        assert_eq!(crossover_pcie(10e9).unwrap(), 20e9);
    }

    #[test]
    fn narrow_pcie_halves_staged_throughput() {
        // PCIe equal to the wire: staged pipelined is PCIe-bound at twice the time.
        let s = staged_cost(1e9, 10e9, 10e9).unwrap();
        let d = direct_cost(1e9, 10e9, 10e9).unwrap();
        assert_eq!(s.pipelined_s, 2.0 * d.pipelined_s);
    }

    #[test]
    fn at_4_kib_staged_pays_two_more_hops_than_direct() {
        // PCIe 20 GB/s, network 10 GB/s, 2 us per hop: the bandwidth terms
        // pipeline to the same wire time, the fixed costs do not.
        let s = staged_cost_with_latency(4096.0, 20e9, 10e9, 2e-6).unwrap();
        let d = direct_cost_with_latency(4096.0, 20e9, 10e9, 2e-6).unwrap();
        assert!((s.pipelined_s - d.pipelined_s - 4e-6).abs() < 1e-12);
        assert!(s.pipelined_s > 1.3 * d.pipelined_s);
        assert!(staged_cost_with_latency(1.0, 1.0, 1.0, -1.0).is_err());
    }

    #[test]
    fn a_staged_peer_copy_crosses_two_links_and_a_direct_one_none() {
        // 1 GB over 25 GB/s PCIe: 80 ms serial, 40 ms pipelined, plus two
        // 2 us steps; direct over a 50 GB/s pair link: 20 ms and one step.
        let s = peer_staged_cost(1e9, 25e9, 2e-6).unwrap();
        assert!((s.serial_s - 0.080004).abs() < 1e-12, "{}", s.serial_s);
        assert!((s.pipelined_s - 0.040004).abs() < 1e-12);
        assert_eq!(s.host_memory_traffic_bytes, 2e9);
        let d = peer_direct_cost(1e9, 50e9, 2e-6).unwrap();
        assert!((d.serial_s - 0.020002).abs() < 1e-12);
        assert_eq!(d.serial_s, d.pipelined_s);
        assert!(peer_direct_cost(1e9, 0.0, 2e-6).is_err());
    }

    #[test]
    fn rejects_non_positive_inputs() {
        assert!(matches!(
            staged_cost(0.0, 1.0, 1.0),
            Err(ModelError::NotPositive { .. })
        ));
        assert!(
            direct_cost(1.0, -5.0, 1.0)
                .unwrap_err()
                .to_string()
                .contains("PCIe bandwidth")
        );
        assert!(crossover_pcie(f64::NAN).is_err());
    }
}
