//! The tier ladder of seed section 2.1, as data. ILLUSTRATIVE orders of
//! magnitude, chosen to show the ratio between tiers, which is stable
//! across hardware generations. No band is a specification of any part.

use serde::Serialize;

/// One rung: a band of bandwidth and of latency, each as low and high
/// bounds (an order of magnitude wide, or so).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Tier {
    pub name: &'static str,
    pub where_it_is: &'static str,
    pub bandwidth_low_bytes_per_s: f64,
    pub bandwidth_high_bytes_per_s: f64,
    pub latency_low_s: f64,
    pub latency_high_s: f64,
    pub reached_by: &'static str,
}

/// Always shown with the tiers.
pub const LABEL: &str = "Illustrative orders of magnitude, not the specification of any part";

/// Top (fastest) to bottom.
pub const TIERS: [Tier; 8] = [
    Tier {
        name: "registers / shared memory",
        where_it_is: "inside a compute unit",
        bandwidth_low_bytes_per_s: 1e13,
        bandwidth_high_bytes_per_s: 1e14,
        latency_low_s: 1e-9,
        latency_high_s: 5e-9,
        reached_by: "an instruction",
    },
    Tier {
        name: "last-level cache",
        where_it_is: "on the package",
        bandwidth_low_bytes_per_s: 1e12,
        bandwidth_high_bytes_per_s: 1e13,
        latency_low_s: 1e-8,
        latency_high_s: 1e-7,
        reached_by: "implicitly, on a miss",
    },
    Tier {
        name: "HBM",
        where_it_is: "on the package",
        bandwidth_low_bytes_per_s: 1e12,
        bandwidth_high_bytes_per_s: 1e13,
        latency_low_s: 1e-7,
        latency_high_s: 1e-6,
        reached_by: "load and store",
    },
    Tier {
        name: "scale-up link (NVLink, xGMI)",
        where_it_is: "GPU to GPU inside a node",
        bandwidth_low_bytes_per_s: 1e11,
        bandwidth_high_bytes_per_s: 1e12,
        latency_low_s: 1e-6,
        latency_high_s: 2e-6,
        reached_by: "load/store or a DMA copy",
    },
    Tier {
        name: "PCIe",
        where_it_is: "GPU to host or to a NIC inside a node",
        bandwidth_low_bytes_per_s: 1e10,
        bandwidth_high_bytes_per_s: 1e11,
        latency_low_s: 1e-6,
        latency_high_s: 2e-6,
        reached_by: "DMA",
    },
    Tier {
        name: "scale-out RDMA fabric (InfiniBand, RoCE, EFA)",
        where_it_is: "between nodes, per adapter",
        bandwidth_low_bytes_per_s: 1e10,
        bandwidth_high_bytes_per_s: 1e11,
        latency_low_s: 2e-6,
        latency_high_s: 5e-6,
        reached_by: "DMA posted through verbs",
    },
    Tier {
        name: "datacenter Ethernet over TCP",
        where_it_is: "between nodes",
        bandwidth_low_bytes_per_s: 1e9,
        bandwidth_high_bytes_per_s: 1e10,
        latency_low_s: 1e-5,
        latency_high_s: 1e-4,
        reached_by: "kernel sockets",
    },
    Tier {
        name: "networked storage",
        where_it_is: "rack and beyond",
        bandwidth_low_bytes_per_s: 1e8,
        bandwidth_high_bytes_per_s: 1e10,
        latency_low_s: 1e-4,
        latency_high_s: 1e-2,
        reached_by: "filesystem calls",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tiers_descend_and_their_bands_are_well_formed() {
        for t in TIERS {
            assert!(
                t.bandwidth_low_bytes_per_s < t.bandwidth_high_bytes_per_s,
                "{}",
                t.name
            );
            assert!(t.latency_low_s < t.latency_high_s, "{}", t.name);
        }
        for w in TIERS.windows(2) {
            assert!(w[0].bandwidth_high_bytes_per_s >= w[1].bandwidth_high_bytes_per_s);
            assert!(w[0].latency_low_s <= w[1].latency_low_s);
        }
    }
}
