//! The diagnosis flow as a fixed list of checks (seed sections 3.5, 3.7,
//! 5.1, 6.x), and the node's verdict from them. A node is `ok` only where
//! every check that applies to it ran and found nothing worse than info:
//! a node whose topology, adapters and links were never seen is not
//! healthy, it is unexamined (`incomplete`). DCGM's pass / skip / fail
//! states are the model.
//!
//! [`STEPS`] is the one list: each step's id, what it looks at, and the
//! command whose transcript would let it run. [`checks`] decides, from
//! the bundle and its facts, whether each step applies (a node without an
//! adapter has no adapter placement to check), whether its evidence is
//! there, and what the rules found for it.

use serde::Serialize;

use super::{Diagnosed, Finding, Severity, gpudirect};
use crate::bundle::{Bundle, Origin};
use crate::evidence::Tool;
use crate::evidence::lsmod::{self, Said};
use crate::evidence::measurement::{Buffers, Direction, Kind, P2p};
use crate::facts::NodeFacts;
use crate::facts::affinity::bindings;

/// One step of the flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    GpuLinks,
    PeerPath,
    NicPlacement,
    PcieLinks,
    Gpudirect,
    RdmaPorts,
    Counters,
    BandwidthVsCeiling,
    Affinity,
    Results,
}

/// What a step looks at, and what would let it run.
pub struct StepDef {
    pub step: Step,
    pub id: &'static str,
    /// What the step asks, in a few words.
    pub asks: &'static str,
    /// The command whose transcript lets it run.
    pub needs: &'static str,
}

/// The checks, in the order of the diagnosis flow: placement inside the
/// node first, then the GPU-to-adapter path, then the links, then the
/// figures themselves.
pub const STEPS: [StepDef; 10] = [
    StepDef {
        step: Step::GpuLinks,
        id: "gpu-links",
        asks: "how each GPU pair is joined (NVLink, xGMI, PCIe switch, host bridge, socket link), and whether the NVLinks the parts have are up",
        needs: "nvidia-smi topo -m (AMD: rocm-smi --showtopo or amd-smi topology); nvidia-smi nvlink --status",
    },
    StepDef {
        step: Step::PeerPath,
        id: "peer-path",
        asks: "whether GPU pairs copy peer to peer or stage through host memory",
        needs: "nvidia-smi topo -p2p r, or p2pBandwidthLatencyTest (P2P enabled and disabled)",
    },
    StepDef {
        step: Step::NicPlacement,
        id: "nic-placement",
        asks: "which adapter is closest to each GPU, and whether it is on the GPU's switch and socket",
        needs: "nvidia-smi topo -m (lists GPUs and adapters together)",
    },
    StepDef {
        step: Step::PcieLinks,
        id: "pcie-links",
        asks: "whether PCIe links run at the width and speed they can, and switch uplinks",
        needs: "sudo lspci -vvv (LnkCap and LnkSta), or nvidia-smi -q",
    },
    StepDef {
        step: Step::Gpudirect,
        id: "gpudirect",
        asks: "whether adapters can reach GPU memory directly (peer-memory module, dma-buf, GPU vs host buffers)",
        needs: "lsmod | grep -E 'nvidia_peermem|nv_peer_mem|amdp2p|ib_peer_mem'",
    },
    StepDef {
        step: Step::RdmaPorts,
        id: "rdma-ports",
        asks: "whether RDMA ports are active and at the rate of the fabric",
        needs: "ibstat (or ibv_devinfo -v)",
    },
    StepDef {
        step: Step::Counters,
        id: "counters",
        asks: "whether error and congestion counters grew between two readings",
        needs: "two readings a minute apart under load: ethtool -S <interface>, or grep . /sys/class/infiniband/*/ports/*/counters/*",
    },
    StepDef {
        step: Step::BandwidthVsCeiling,
        id: "bandwidth-vs-ceiling",
        asks: "whether measured figures reach the ceiling of their path",
        needs: "a bandwidth test (nvbandwidth, ib_write_bw) beside the rates of its path (nvidia-smi nvlink --status, ibstat, lspci -vvv)",
    },
    StepDef {
        step: Step::Affinity,
        id: "affinity",
        asks: "whether the measuring process ran and allocated on the NUMA node of its GPUs",
        needs: "numactl --show in the same launch as the benchmark, beside nvidia-smi topo -m",
    },
    StepDef {
        step: Step::Results,
        id: "results",
        asks: "whether the runs moved the right data and finished",
        needs: "a benchmark's full output",
    },
];

impl Step {
    pub fn def(self) -> &'static StepDef {
        STEPS.iter().find(|d| d.step == self).unwrap_or(&STEPS[0])
    }

    pub fn id(self) -> &'static str {
        self.def().id
    }

    /// The step a kind of finding belongs to; none for notes about the
    /// evidence itself (a cut transcript, a unit to convert).
    pub fn of(f: &Finding) -> Option<Step> {
        Some(match f {
            Finding::HostHopInGroup { .. } | Finding::NvlinksInactive { .. } => Step::GpuLinks,
            Finding::SilentStaging { .. }
            | Finding::PeerSlowerThanStaged { .. }
            | Finding::NoPeerPath { .. } => Step::PeerPath,
            Finding::NicOnOtherSocket { .. }
            | Finding::NicAcrossHostBridge { .. }
            | Finding::InjectionShare { .. } => Step::NicPlacement,
            Finding::PcieWidthDown { .. }
            | Finding::PcieSpeedDown { .. }
            | Finding::SwitchUplinkOversubscribed { .. } => Step::PcieLinks,
            Finding::NoPeerMemoryModule { .. } | Finding::GpuBuffersBelowHost { .. } => {
                Step::Gpudirect
            }
            Finding::RdmaPortDown { .. }
            | Finding::RdmaPortUnused { .. }
            | Finding::RdmaPortBelowRate { .. } => Step::RdmaPorts,
            Finding::PortErrorsGrew { .. }
            | Finding::CongestionSignals { .. }
            | Finding::PauseWithoutEcn { .. } => Step::Counters,
            Finding::FarBelowCeiling { .. } => Step::BandwidthVsCeiling,
            Finding::ProcessFarFromGpu { .. } => Step::Affinity,
            Finding::WrongResults { .. }
            | Finding::DataCheckFailed { .. }
            | Finding::ToolFailed { .. } => Step::Results,
            Finding::Truncated { .. }
            | Finding::BitsNotBytes { .. }
            | Finding::BidirectionalSum { .. } => return None,
        })
    }
}

/// The list as the README prints it (a test keeps the two in step).
pub fn markdown_table() -> String {
    let mut s = String::from("| check | what it asks | what lets it run |\n|---|---|---|\n");
    for d in &STEPS {
        // A `|` inside a cell would end it (`lsmod | grep`).
        let needs = d.needs.replace('|', "\\|");
        s.push_str(&format!("| `{}` | {} | {needs} |\n", d.id, d.asks));
    }
    s
}

/// How a check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    Passed,
    Finding,
    NotChecked,
    NotApplicable,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Passed => "passed",
            State::Finding => "finding",
            State::NotChecked => "not-checked",
            State::NotApplicable => "not-applicable",
        }
    }
}

/// One check of one node.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    pub step: Step,
    pub state: State,
    /// Not checked: the command whose transcript would check it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub needs: Option<&'static str>,
    /// Not applicable: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<&'static str>,
    /// Findings of this step, and the worst of their severities.
    pub findings: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worst: Option<Severity>,
}

/// A node's verdict, most severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// A finding that costs bandwidth or correctness now.
    Critical,
    /// A finding that likely costs performance.
    Warning,
    /// Nothing worse than info, but some check that applies did not run.
    Incomplete,
    /// Every check that applies ran and found nothing worse than info.
    Ok,
}

impl Verdict {
    pub const ALL: [Verdict; 4] = [
        Verdict::Critical,
        Verdict::Warning,
        Verdict::Incomplete,
        Verdict::Ok,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Critical => "critical",
            Verdict::Warning => "warning",
            Verdict::Incomplete => "incomplete",
            Verdict::Ok => "ok",
        }
    }

    /// The verdict of these findings and checks.
    pub fn of(findings: &[Diagnosed], checks: &[Check]) -> Verdict {
        match findings.iter().map(|d| d.severity).min() {
            Some(Severity::Critical) => Verdict::Critical,
            Some(Severity::Warning) => Verdict::Warning,
            _ if checks.iter().any(|c| c.state == State::NotChecked) => Verdict::Incomplete,
            _ => Verdict::Ok,
        }
    }
}

/// Whether the node has some kind of device, as far as the evidence says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Known {
    /// This many, from some transcript.
    Some(usize),
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

fn gpus(b: &Bundle, facts: &NodeFacts) -> Known {
    let on_bus = b
        .pcie
        .iter()
        .filter(|p| p.role.as_deref() == Some("gpu"))
        .map(|p| p.address.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    match facts.gpu_count().max(on_bus) {
        0 if b.host.origin == Origin::Live => {
            Known::Absent("the live collection found no GPU on the PCIe bus")
        }
        0 => Known::Unknown,
        n => Known::Some(n),
    }
}

fn adapters(b: &Bundle, facts: &NodeFacts) -> Known {
    let on_bus = b
        .pcie
        .iter()
        .filter(|p| p.role.as_deref() == Some("nic") || p.role.is_none())
        .filter(|p| {
            p.name.as_deref().is_some_and(|n| {
                let n = n.to_ascii_lowercase();
                RDMA_ADAPTER_WORDS.iter().any(|w| n.contains(w))
            })
        })
        .count();
    let n = [
        facts.nics.len(),
        b.rdma.len(),
        facts.measured_adapters.len(),
        on_bus,
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
        0 => Known::Unknown,
        n => Known::Some(n),
    }
}

/// What each step needs to run, and whether the bundle has it: `Err`
/// with why the step does not apply, `Ok(true)` when its evidence is
/// there.
fn evidence_for(step: Step, b: &Bundle, facts: &NodeFacts) -> Result<bool, &'static str> {
    let (g, a) = (gpus(b, facts), adapters(b, facts));
    let no_devices = || match (g.absent(), a.absent()) {
        (Some(_), Some(_)) => Err("no GPU and no RDMA adapter on this node"),
        _ => Ok(()),
    };
    let pairs = || match g {
        Known::Absent(why) => Err(why),
        Known::Some(1) => Err("one GPU: no GPU pair"),
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
                .any(|gpu| facts.nics.iter().any(|n| t.link(gpu, &n.id).is_some())))
        }
        Step::PcieLinks => {
            no_devices()?;
            Ok(b.pcie.iter().any(|p| {
                p.current_width_lanes.is_some()
                    || p.current_speed_gt_per_s.is_some()
                    || p.current_generation.is_some()
            }))
        }
        Step::Gpudirect => {
            g.absent().map_or(Ok(()), Err)?;
            adapter()?;
            if !b.rdma.is_empty() && b.rdma.iter().all(|d| gpudirect::has_own_gpu_path(&d.name)) {
                return Err("EFA devices reach GPU memory through their own driver");
            }
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
            Ok(b.measurements
                .iter()
                .any(|m| m.bandwidth_bytes_per_s.is_some() && facts.ceiling(m).is_some()))
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
            Ok(true)
        }
    }
}

/// Whether anything says how a GPU pair copies: a tool's peer status,
/// copies with P2P enabled and disabled side by side, or a peer copy
/// faster than any host path could carry (above a PCIe Gen5 x16 link's
/// 63 GB/s in one direction, so it cannot have been staged).
fn peer_path_seen(b: &Bundle) -> bool {
    const FASTER_THAN_ANY_HOST_PATH: f64 = 64e9;
    let p2p = |want: P2p| {
        b.measurements
            .iter()
            .any(|m| m.kind == Kind::P2pCopy && m.p2p == want && m.src != m.dst)
    };
    !b.topology.p2p.is_empty()
        || (p2p(P2p::Enabled) && p2p(P2p::Disabled))
        || b.measurements.iter().any(|m| {
            m.kind == Kind::P2pCopy
                && m.direction == Direction::Uni
                && m.src != m.dst
                && m.bandwidth_bytes_per_s
                    .is_some_and(|x| x > FASTER_THAN_ANY_HOST_PATH)
        })
}

/// Whether the peer-memory question has an answer: a live collection's
/// module list, a listing that shows a peer-memory module or rules out
/// NVIDIA's two, or perftest run with GPU buffers.
fn peer_memory_seen(b: &Bundle) -> bool {
    let listed = |m: &str| lsmod::state(&b.modules, m);
    b.system.is_some()
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
        || b.rdma
            .iter()
            .flat_map(|d| &d.ports)
            .flat_map(|p| &p.counters)
            .any(|c| c.start != c.end)
}

/// Every step of [`STEPS`] for one node, given its findings.
pub fn checks(b: &Bundle, facts: &NodeFacts, findings: &[Diagnosed]) -> Vec<Check> {
    STEPS
        .iter()
        .map(|def| {
            let mine: Vec<&Diagnosed> = findings
                .iter()
                .filter(|d| Step::of(&d.finding) == Some(def.step))
                .collect();
            let worst = mine.iter().map(|d| d.severity).min();
            let (state, needs, why) = match evidence_for(def.step, b, facts) {
                // A rule that found something had the evidence it needs.
                _ if !mine.is_empty() => (State::Finding, None, None),
                Err(why) => (State::NotApplicable, None, Some(why)),
                Ok(true) => (State::Passed, None, None),
                Ok(false) => (State::NotChecked, Some(def.needs), None),
            };
            Check {
                step: def.step,
                state,
                needs,
                why,
                findings: mine.len(),
                worst,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::Host;

    fn empty(origin: Origin) -> Bundle {
        Bundle::new(Host {
            name: "n".into(),
            origin,
        })
    }

    fn state(checks: &[Check], step: Step) -> State {
        checks.iter().find(|c| c.step == step).unwrap().state
    }

    #[test]
    fn an_empty_ingested_node_is_incomplete_not_ok() {
        let b = empty(Origin::Ingested);
        let facts = NodeFacts::of(&b);
        let c = checks(&b, &facts, &[]);
        assert_eq!(c.len(), STEPS.len());
        assert_eq!(state(&c, Step::GpuLinks), State::NotChecked);
        assert_eq!(state(&c, Step::RdmaPorts), State::NotChecked);
        assert_eq!(state(&c, Step::Results), State::NotApplicable);
        assert_eq!(Verdict::of(&[], &c), Verdict::Incomplete);
        let needs = c.iter().find(|c| c.step == Step::GpuLinks).unwrap().needs;
        assert!(needs.unwrap().contains("nvidia-smi topo -m"));
    }

    #[test]
    fn a_live_node_without_devices_has_nothing_to_check_and_is_ok() {
        let b = empty(Origin::Live);
        let facts = NodeFacts::of(&b);
        let c = checks(&b, &facts, &[]);
        assert!(
            c.iter()
                .all(|c| matches!(c.state, State::NotApplicable | State::NotChecked)),
            "{c:?}"
        );
        // The process ran (live): its binding is checkable, and here unread.
        assert_eq!(state(&c, Step::Affinity), State::NotChecked);
        assert_eq!(state(&c, Step::GpuLinks), State::NotApplicable);
        assert_eq!(state(&c, Step::Counters), State::NotApplicable);
    }

    #[test]
    fn step_ids_are_unique_and_each_step_has_one_definition() {
        let ids: std::collections::BTreeSet<_> = STEPS.iter().map(|s| s.id).collect();
        assert_eq!(ids.len(), STEPS.len());
        for d in &STEPS {
            assert_eq!(d.step.def().id, d.id);
        }
    }
}
