//! What the bundle holds for each step: which devices the node is known
//! to have ([`Known`]), whether a step applies to it, and whether the
//! evidence the step reads is there ([`evidence_for`]).

use super::Step;
use crate::bundle::{Bundle, Origin};
use crate::diagnosis::gpudirect;
use crate::evidence::Tool;
use crate::evidence::lsmod::{self, Said};
use crate::evidence::measurement::{Buffers, Direction, Kind, P2p};
use crate::facts::NodeFacts;
use crate::facts::affinity::bindings;

/// Whether the node has some kind of device, as far as the evidence says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Known {
    /// This many, from a listing of the node's devices (a topology
    /// matrix, `nvidia-smi -q`'s attached count, a live collection).
    Listed(usize),
    /// At least this many: the devices some benchmark used or named
    /// (`GPU7` means eight), which says nothing of the others.
    AtLeast(usize),
    /// None, and the evidence says so (why).
    Absent(&'static str),
    Unknown,
}

impl Known {
    fn absent(self) -> Option<&'static str> {
        match self {
            Known::Absent(why) => Some(why),
            _ => None,
        }
    }
}

/// Lower-case words of an lspci device name that make it an RDMA-capable
/// network adapter rather than any Ethernet port.
const RDMA_ADAPTER_WORDS: [&str; 6] = [
    "mellanox",
    "connectx",
    "bluefield",
    "infiniband",
    "elastic fabric",
    "omni-path",
];

/// Whether an `lspci` listing shows the whole machine (bridges and
/// devices of several kinds, not one grepped device): then a kind of
/// device it does not list is not there.
fn whole_bus_listed(b: &Bundle) -> bool {
    const A_MACHINE: usize = 8;
    b.pcie.len() >= A_MACHINE && b.pcie.iter().any(|p| p.role.as_deref() == Some("bridge"))
}

fn rdma_adapter_on_bus(p: &crate::evidence::pcie::PcieLink) -> bool {
    matches!(p.role.as_deref(), Some("nic") | None)
        && p.name.as_deref().is_some_and(|n| {
            let n = n.to_ascii_lowercase();
            RDMA_ADAPTER_WORDS.iter().any(|w| n.contains(w))
        })
}

pub(super) fn gpus(b: &Bundle, facts: &NodeFacts) -> Known {
    let on_bus = b
        .pcie
        .iter()
        .filter(|p| p.role.as_deref() == Some("gpu"))
        .map(|p| p.address.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    // `GPU7` in a benchmark means the node has at least eight.
    let highest_seen = facts
        .measured_gpus
        .iter()
        .chain(&facts.gpus)
        .filter_map(|g| g.strip_prefix("GPU")?.parse::<usize>().ok())
        .map(|i| i + 1)
        .max()
        .unwrap_or(0);
    let listed = [
        facts.described.then_some(facts.gpus.len()),
        facts.attached_gpus,
        (b.host.origin == Origin::Live).then_some(on_bus),
    ]
    .into_iter()
    .flatten()
    .max();
    let seen = facts.gpu_count().max(on_bus).max(highest_seen);
    match (listed, seen) {
        (Some(n), seen) if n >= seen && n > 0 => Known::Listed(n),
        (_, 0) if b.host.origin == Origin::Live => {
            Known::Absent("the live collection found no GPU on the PCIe bus")
        }
        (_, 0) if whole_bus_listed(b) => {
            Known::Absent("lspci lists the machine's devices, and no GPU among them")
        }
        (_, 0) => Known::Unknown,
        (_, n) => Known::AtLeast(n),
    }
}

fn adapters(b: &Bundle, facts: &NodeFacts) -> Known {
    let on_bus = b.pcie.iter().filter(|p| rdma_adapter_on_bus(p)).count();
    let named_by_nccl = b
        .nccl
        .iter()
        .flat_map(|i| &i.adapters)
        .map(|a| a.name.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let n = [
        facts.nics.len(),
        b.rdma.len(),
        facts.measured_adapters.len(),
        on_bus,
        named_by_nccl,
    ]
    .into_iter()
    .max()
    .unwrap_or(0);
    let matrix_read = b
        .transcripts
        .iter()
        .flat_map(|t| &t.blocks)
        .any(|x| x.tool == Tool::NvidiaSmiTopo);
    match n {
        0 if b.host.origin == Origin::Live => {
            Known::Absent("the live collection found no RDMA adapter")
        }
        0 if matrix_read && !facts.gpus.is_empty() => {
            Known::Absent("nvidia-smi topo -m lists no network adapter beside the GPUs")
        }
        0 if whole_bus_listed(b) => {
            Known::Absent("lspci lists the machine's devices, and no RDMA adapter among them")
        }
        0 => Known::Unknown,
        n => Known::AtLeast(n),
    }
}

/// What each step needs to run, and whether the bundle has it: `Err`
/// with why the step does not apply, `Ok(true)` when its evidence is
/// there.
pub(super) fn evidence_for(
    step: Step,
    b: &Bundle,
    facts: &NodeFacts,
) -> Result<bool, &'static str> {
    let (g, a) = (gpus(b, facts), adapters(b, facts));
    let no_devices = || match (g.absent(), a.absent()) {
        (Some(_), Some(_)) => Err("no GPU and no RDMA adapter on this node"),
        _ => Ok(()),
    };
    // One GPU only where a listing of the node says so: a benchmark that
    // used one GPU says nothing of the others.
    let pairs = || match g {
        Known::Absent(why) => Err(why),
        Known::Listed(1) => Err("one GPU: no GPU pair"),
        _ => Ok(()),
    };
    let adapter = || a.absent().map_or(Ok(()), Err);
    match step {
        Step::GpuLinks => {
            pairs()?;
            Ok(facts.gpu_pairs() > 0)
        }
        Step::PeerPath => {
            pairs()?;
            Ok(peer_path_seen(b))
        }
        Step::NicPlacement => {
            g.absent().map_or(Ok(()), Err)?;
            adapter()?;
            let t = &b.topology;
            Ok(facts
                .gpus
                .iter()
                .any(|gpu| facts.nics.iter().any(|n| t.link(gpu, &n.id).is_some()))
                || crate::diagnosis::numa_placement::places_gpus_and_adapters(b))
        }
        Step::PcieLinks => {
            no_devices()?;
            Ok(pcie_links_seen(b, g, a))
        }
        Step::Gpudirect => {
            g.absent().map_or(Ok(()), Err)?;
            adapter()?;
            Ok(peer_memory_seen(b))
        }
        Step::RdmaPorts => {
            adapter()?;
            Ok(b.rdma.iter().any(|d| !d.ports.is_empty()))
        }
        Step::Counters => {
            adapter()?;
            Ok(two_readings(b))
        }
        Step::BandwidthVsCeiling => {
            no_devices()?;
            Ok(ceilings_seen(b, facts))
        }
        Step::Affinity => {
            if b.measurements.is_empty() && b.host.origin != Origin::Live {
                return Err("no figure here: binding matters to the process that measures");
            }
            Ok(!bindings(b).is_empty())
        }
        Step::Results => {
            let failed = b
                .problems
                .iter()
                .any(|p| p.kind == crate::bundle::ProblemKind::ToolError);
            if b.measurements.is_empty() && !failed {
                return Err("no figure in this evidence");
            }
            // A run whose transcript stops early did not show its end (a
            // last summary line, a data check): not known to be whole.
            Ok(!b.problems.iter().any(|p| {
                p.kind == crate::bundle::ProblemKind::Truncated
                    && b.measurements.iter().any(|m| *m.source.file == *p.file)
            }))
        }
    }
}

/// Whether the PCIe links step has its evidence: every GPU's link (as
/// many GPU links as GPUs), and an adapter's where the node has adapters:
/// one NIC's line does not speak for the GPUs.
fn pcie_links_seen(b: &Bundle, g: Known, a: Known) -> bool {
    let stated = |p: &&crate::evidence::pcie::PcieLink| {
        p.current_width_lanes.is_some()
            || p.current_speed_gt_per_s.is_some()
            || p.current_generation.is_some()
    };
    let gpu_links = b
        .pcie
        .iter()
        .filter(stated)
        .filter(|p| p.role.as_deref() == Some("gpu"))
        .count();
    let nic_links = b
        .pcie
        .iter()
        .filter(stated)
        .filter(|p| p.role.as_deref() == Some("nic") || rdma_adapter_on_bus(p))
        .count();
    let gpus_covered = match g {
        Known::Listed(n) | Known::AtLeast(n) => gpu_links >= n,
        Known::Absent(_) | Known::Unknown => true,
    };
    let nics_covered = match a {
        Known::Listed(_) | Known::AtLeast(_) => nic_links > 0,
        Known::Absent(_) | Known::Unknown => true,
    };
    gpus_covered && nics_covered && b.pcie.iter().any(|p| stated(&p))
}

/// Whether the bandwidth step has its evidence: every copy and RDMA
/// figure against its path's ceiling (one figure with a ceiling does not
/// speak for the others).
fn ceilings_seen(b: &Bundle, facts: &NodeFacts) -> bool {
    let with_a_path: Vec<_> = b
        .measurements
        .iter()
        .filter(|m| m.bandwidth_bytes_per_s.is_some() && m.src != m.dst)
        .filter(|m| {
            matches!(
                m.kind,
                Kind::P2pCopy
                    | Kind::H2d
                    | Kind::D2h
                    | Kind::RdmaWrite
                    | Kind::RdmaRead
                    | Kind::RdmaSend
                    | Kind::RdmaAtomic
                    | Kind::Rdma
            )
        })
        .collect();
    !with_a_path.is_empty() && with_a_path.iter().all(|m| facts.ceiling(m).is_some())
}

/// Whether anything says how the GPU pairs copy: a tool's peer status,
/// bandwidth with P2P enabled and disabled side by side (the staging
/// rules read those), or P2P-enabled copies that are all faster than any
/// host path could carry (above a PCIe Gen5 x16 link's 63 GB/s in one
/// direction, so none can have been staged). One slow pair among fast
/// ones is not a pass: it may be the staged one.
fn peer_path_seen(b: &Bundle) -> bool {
    const FASTER_THAN_ANY_HOST_PATH: f64 = 64e9;
    let peer_bandwidth = |m: &&crate::evidence::measurement::Measurement| {
        m.kind == Kind::P2pCopy
            && m.direction == Direction::Uni
            && m.src != m.dst
            && m.bandwidth_bytes_per_s.is_some()
    };
    let p2p = |want: P2p| {
        b.measurements
            .iter()
            .filter(peer_bandwidth)
            .any(|m| m.p2p == want)
    };
    let mut enabled = b
        .measurements
        .iter()
        .filter(peer_bandwidth)
        .filter(|m| m.p2p != P2p::Disabled)
        .peekable();
    let all_fast = enabled.peek().is_some()
        && enabled.all(|m| {
            m.bandwidth_bytes_per_s
                .is_some_and(|x| x > FASTER_THAN_ANY_HOST_PATH)
        });
    // NCCL's log names each channel's transport between GPUs of a node.
    let nccl = b.nccl.iter().flat_map(|i| &i.paths).any(|p| {
        matches!(
            p.transport,
            crate::evidence::nccl::NcclTransport::P2p | crate::evidence::nccl::NcclTransport::Shm
        )
    });
    // A pair the tool says cannot peer was asked for P2P all the same.
    let asked = p2p(P2p::Enabled) || p2p(P2p::NoPeerAccess);
    !b.topology.p2p.is_empty() || (asked && p2p(P2p::Disabled)) || all_fast || nccl
}

/// Whether the peer-memory question has an answer: a live collection's
/// module list, a listing that shows a peer-memory module or rules out
/// NVIDIA's two, or perftest run with GPU buffers.
fn peer_memory_seen(b: &Bundle) -> bool {
    let listed = |m: &str| lsmod::state(&b.modules, m);
    // NCCL says per adapter whether GPU Direct RDMA is on, and marks its
    // NET channels `/GDRDMA` when it is.
    let nccl = b.nccl.iter().any(|i| {
        !i.gpu_direct.is_empty()
            || i.paths.iter().any(|p| {
                p.transport == crate::evidence::nccl::NcclTransport::Net && p.via.contains("NET/IB")
            })
    });
    nccl || b.system.is_some()
        || gpudirect::PEER_MEMORY_MODULES
            .iter()
            .any(|m| matches!(listed(m), Some(Said::Loaded(_))))
        || gpudirect::NVIDIA_PEER_MEMORY_MODULES
            .iter()
            .all(|m| listed(m).is_some())
        || b.measurements.iter().any(|m| {
            m.buffers == Buffers::Device
                && matches!(
                    m.kind,
                    Kind::RdmaWrite | Kind::RdmaRead | Kind::RdmaSend | Kind::RdmaAtomic
                )
        })
}

/// Whether counters were read twice: a live collection reads every port
/// counter at its start and end; transcripts need two readings.
fn two_readings(b: &Bundle) -> bool {
    let live_ports = b.host.origin == Origin::Live
        && b.rdma
            .iter()
            .flat_map(|d| &d.ports)
            .any(|p| !p.counters.is_empty());
    live_ports
        || b.interfaces.iter().any(|i| i.readings >= 2)
        || !crate::evidence::counters::growth(&b.counters).is_empty()
        || b.rdma
            .iter()
            .flat_map(|d| &d.ports)
            .flat_map(|p| &p.counters)
            .any(|c| c.start != c.end)
}

/// Whether every RDMA device is AWS EFA, which reaches GPU memory
/// through its own driver (no peer-memory module to look for).
pub(super) fn efa_only(b: &Bundle) -> bool {
    !b.rdma.is_empty() && b.rdma.iter().all(|d| gpudirect::has_own_gpu_path(&d.name))
}
