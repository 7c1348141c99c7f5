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
//! - [`gpudirect`]: whether the GPU-to-adapter path exists and what it delivers
//! - [`numa_placement`]: GPUs and adapters under different NUMA nodes, by lstopo
//! - [`affinity`]: a process bound away from the NUMA node of its GPUs
//! - [`links`]: PCIe links, NVLinks and RDMA ports that run below what they can
//! - [`measurements`]: what the figures themselves say (staging, wrong data,
//!   failures, ceilings, unit traps)

mod affinity;
pub mod checks;
mod finding;
pub(crate) mod gpudirect;
mod links;
mod measurements;
mod nccl;
pub(crate) mod numa_placement;
pub mod severity;
mod topology;

use crate::bundle::Bundle;
use crate::evidence::Source;
use crate::facts::NodeFacts;

pub use checks::{Check, State, Step, Verdict};
pub use finding::{Diagnosed, Finding, PcieSpeed, Severity};
pub use severity::Why;

/// A measurement below this fraction of its path's ceiling is flagged.
pub const FAR_BELOW: f64 = 0.25;

/// Runs every rule over one node's bundle. Deterministic: findings come
/// out in a stable order (severity, then the order the rules run in).
pub fn diagnose(b: &Bundle) -> Vec<Diagnosed> {
    diagnose_with(b, &NodeFacts::of(b))
}

/// A node's findings, the checks of the diagnosis flow, and the verdict
/// they give together: what every page, the fleet index, the markdown
/// summary and `wire-report check` say of a node.
#[derive(Debug, Clone, PartialEq)]
pub struct Assessment {
    pub findings: Vec<Diagnosed>,
    pub checks: Vec<Check>,
    pub verdict: Verdict,
}

/// Diagnoses one node and runs its checks.
pub fn assess(b: &Bundle, facts: &NodeFacts) -> Assessment {
    let findings = diagnose_with(b, facts);
    let checks = checks::checks(b, facts, &findings);
    let verdict = Verdict::of(&findings, &checks);
    Assessment {
        findings,
        checks,
        verdict,
    }
}

/// [`diagnose`], with the node's facts already computed.
pub fn diagnose_with(b: &Bundle, facts: &NodeFacts) -> Vec<Diagnosed> {
    let mut out = Vec::new();
    topology::host_hops(b, facts, &mut out);
    measurements::silent_staging(b, facts, &mut out);
    topology::nic_sockets(b, facts, &mut out);
    numa_placement::lstopo_placement(b, &mut out);
    gpudirect::peer_memory(b, facts, &mut out);
    gpudirect::gpu_vs_host_buffers(b, &mut out);
    affinity::process_affinity(b, &mut out);
    topology::injection_share(facts, &mut out);
    links::pcie_links(b, &mut out);
    links::switch_uplinks(facts, &mut out);
    links::nvlinks(b, facts, &mut out);
    links::nvlinks_in_matrix(b, facts, &mut out);
    links::rdma_ports(b, facts, &mut out);
    links::port_counters(b, &mut out);
    nccl::nccl_paths(b, facts, &mut out);
    measurements::wrong_results(b, &mut out);
    measurements::tool_failures(b, &mut out);
    measurements::far_below_ceiling(b, facts, &mut out);
    measurements::unit_traps(b, &mut out);
    weak_figures_stay_info(b, facts, &mut out);
    // Most severe first; among equals, the hardware before notes about
    // the evidence (a cut transcript is never a node's top finding while
    // a hardware finding exists).
    out.sort_by_key(|d| (d.severity, d.why.row().about == severity::About::Evidence));
    out
}

/// A finding that judges figures (staging, a peer path slower than the
/// host's, a figure far below its ceiling, GPU buffers below host ones)
/// rests on them: where a figure it cites is graded C (seed section
/// 5.2: its unit, direction or size unknown, or far from saturation), it
/// is said as info, with why. Wrong data is never lowered: the failed
/// check is the finding.
fn weak_figures_stay_info(b: &Bundle, facts: &NodeFacts, out: &mut [Diagnosed]) {
    for d in out.iter_mut() {
        let judges_figures = matches!(
            d.finding,
            Finding::SilentStaging { .. }
                | Finding::PeerSlowerThanStaged { .. }
                | Finding::FarBelowCeiling { .. }
                | Finding::GpuBuffersBelowHost { .. }
        );
        if !judges_figures || d.severity == Severity::Info {
            continue;
        }
        let cited: Vec<bool> = b
            .measurements
            .iter()
            .zip(&facts.trust)
            .filter(|(m, _)| d.evidence.contains(&m.source))
            .map(|(_, t)| t.is_weak())
            .collect();
        // One weak figure is enough: a comparison is as weak as its
        // weakest side.
        if cited.iter().any(|weak| *weak) {
            d.severity = Severity::Info;
            d.weak_figures = true;
        }
    }
}

/// Records a finding with the severity its row of the table gives.
fn push(out: &mut Vec<Diagnosed>, why: Why, finding: Finding, evidence: Vec<Source>) {
    out.push(Diagnosed {
        severity: why.severity(),
        why,
        weak_figures: false,
        finding,
        evidence,
    });
}

#[cfg(test)]
mod tests;
