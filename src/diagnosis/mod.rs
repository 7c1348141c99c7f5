//! Diagnosis: evidence plus models become findings. A finding is a kind
//! plus numbers plus the transcript lines it rests on; no prose here
//! ([`finding`]). Render writes each finding's summary and picks its
//! explanation from `templates/explain/<kind>.md` by an exhaustive match,
//! so a new kind without words does not compile.
//!
//! The rules follow the seed's diagnosis flow (sections 3.5, 3.7, 6.2):
//! placement first (host hops inside a group), then the GPU-to-adapter
//! path, then whether the direct path is really used, then injection, then
//! the links themselves (PCIe trained down, NVLinks or RDMA ports down),
//! then the numbers' own traps (bits vs bytes, uni vs bidirectional).
//! They read the node's [`NodeFacts`], computed once by the caller.
//!
//! - [`topology`]: how GPUs and adapters sit (host hops, far adapters, injection share)
//! - [`links`]: PCIe links, NVLinks and RDMA ports that run below what they can
//! - [`measurements`]: what the figures themselves say (staging, wrong data,
//!   failures, ceilings, unit traps)

mod finding;
mod links;
mod measurements;
mod topology;

use crate::bundle::Bundle;
use crate::evidence::Source;
use crate::facts::NodeFacts;

pub use finding::{Diagnosed, Finding, PcieSpeed, Severity};

/// A measurement below this fraction of its path's ceiling is flagged.
pub const FAR_BELOW: f64 = 0.25;

/// Runs every rule over one node's bundle. Deterministic: findings come
/// out in a stable order (severity, then the order the rules run in).
pub fn diagnose(b: &Bundle) -> Vec<Diagnosed> {
    diagnose_with(b, &NodeFacts::of(b))
}

/// [`diagnose`], with the node's facts already computed.
pub fn diagnose_with(b: &Bundle, facts: &NodeFacts) -> Vec<Diagnosed> {
    let mut out = Vec::new();
    topology::host_hops(b, facts, &mut out);
    measurements::silent_staging(b, &mut out);
    topology::nic_sockets(b, facts, &mut out);
    topology::injection_share(facts, &mut out);
    links::pcie_links(b, &mut out);
    links::nvlinks(b, facts, &mut out);
    links::rdma_ports(b, facts, &mut out);
    measurements::wrong_results(b, &mut out);
    measurements::tool_failures(b, &mut out);
    measurements::far_below_ceiling(b, facts, &mut out);
    measurements::unit_traps(b, &mut out);
    out.sort_by_key(|d| d.severity);
    out
}

fn push(out: &mut Vec<Diagnosed>, severity: Severity, finding: Finding, evidence: Vec<Source>) {
    out.push(Diagnosed {
        severity,
        finding,
        evidence,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{Host, Origin};
    use crate::evidence::measurement::{Kind, Measurement, P2p, Statistic};

    fn cell(p2p: P2p, bw: f64, line: usize) -> Measurement {
        let mut m = Measurement::new(
            "p2pBandwidthLatencyTest",
            line,
            Kind::P2pCopy,
            "t",
            Statistic::Avg,
        );
        m.src = Some("GPU0".into());
        m.dst = Some("GPU1".into());
        m.p2p = p2p;
        m.bandwidth_bytes_per_s = Some(bw);
        m
    }

    #[test]
    fn p2p_enabled_close_to_disabled_is_silent_staging() {
        let mut b = Bundle::new(Host {
            name: "n".into(),
            origin: Origin::Ingested,
        });
        b.measurements.push(cell(P2p::Disabled, 5.71e9, 16));
        b.measurements.push(cell(P2p::Enabled, 5.72e9, 20));
        let d = diagnose(&b);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].severity, Severity::Critical);
        assert!(matches!(
            d[0].finding,
            Finding::SilentStaging { pairs: 1, .. }
        ));
        assert_eq!(d[0].evidence.len(), 2);
        // A real NVLink pair: enabled far above disabled, nothing to say.
        let mut b = Bundle::new(Host {
            name: "n".into(),
            origin: Origin::Ingested,
        });
        b.measurements.push(cell(P2p::Disabled, 20e9, 16));
        b.measurements.push(cell(P2p::Enabled, 250e9, 20));
        assert!(diagnose(&b).is_empty());
    }
}
