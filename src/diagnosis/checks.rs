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

use super::{Diagnosed, Finding, Severity};
use crate::bundle::Bundle;
use crate::evidence::Tool;
use crate::facts::NodeFacts;

mod evidence;
use evidence::{Known, efa_only, evidence_for, gpus};

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

/// Whose tools can supply a step's evidence: the GPUs' vendor, as the
/// transcripts show it, or neither when no GPU is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vendor {
    Nvidia,
    Amd,
    NoGpuKnown,
}

/// What a step looks at, and what would let it run.
pub struct StepDef {
    pub step: Step,
    pub id: &'static str,
    /// What the step asks, in a few words.
    pub asks: &'static str,
    /// The command whose transcript lets it run, for NVIDIA GPUs, AMD
    /// GPUs, and a node whose GPUs (if any) no transcript names.
    pub needs: [&'static str; 3],
}

impl StepDef {
    pub fn needs(&self, vendor: Vendor) -> &'static str {
        match vendor {
            Vendor::Nvidia => self.needs[0],
            Vendor::Amd => self.needs[1],
            Vendor::NoGpuKnown => self.needs[2],
        }
    }
}

/// Which GPUs first: `lspci` tells whether a node has any.
const WHICH_GPUS: &str =
    "lspci (whether the node has GPUs, and whose), then nvidia-smi topo -m or amd-smi topology";

/// The checks, in the order of the diagnosis flow: placement inside the
/// node first, then the GPU-to-adapter path, then the links, then the
/// figures themselves.
pub const STEPS: [StepDef; 10] = [
    StepDef {
        step: Step::GpuLinks,
        id: "gpu-links",
        asks: "how each GPU pair is joined (NVLink, xGMI, PCIe switch, host bridge, socket link), and whether the NVLinks the parts have are up",
        needs: [
            "nvidia-smi topo -m; nvidia-smi nvlink --status",
            "amd-smi topology (or rocm-smi --showtopo)",
            WHICH_GPUS,
        ],
    },
    StepDef {
        step: Step::PeerPath,
        id: "peer-path",
        asks: "whether GPU pairs copy peer to peer or stage through host memory",
        needs: [
            "nvidia-smi topo -p2p r, or p2pBandwidthLatencyTest (P2P enabled and disabled)",
            "amd-smi topology -a (or rocm-smi --showtopoaccess), or rocm-bandwidth-test",
            WHICH_GPUS,
        ],
    },
    StepDef {
        step: Step::NicPlacement,
        id: "nic-placement",
        asks: "which adapter is closest to each GPU, and whether it is on the GPU's switch and socket",
        needs: [
            "nvidia-smi topo -m (lists GPUs and adapters together)",
            "lstopo-no-graphics, or wire-report collect on the node (the PCIe tree and NUMA node of each GPU and adapter)",
            WHICH_GPUS,
        ],
    },
    StepDef {
        step: Step::PcieLinks,
        id: "pcie-links",
        asks: "whether every GPU's and adapter's PCIe link runs at the width and speed it can, and switch uplinks",
        needs: [
            "sudo lspci -vvv (LnkCap and LnkSta), or nvidia-smi -q",
            "sudo lspci -vvv (LnkCap and LnkSta)",
            "sudo lspci -vvv (LnkCap and LnkSta)",
        ],
    },
    StepDef {
        step: Step::Gpudirect,
        id: "gpudirect",
        asks: "whether adapters can reach GPU memory directly (peer-memory module, dma-buf, GPU vs host buffers)",
        needs: [
            "lsmod | grep -E 'nvidia_peermem|nv_peer_mem'",
            "lsmod | grep -E 'amdp2p|ib_peer_mem', or ib_write_bw --use_rocm beside host buffers",
            WHICH_GPUS,
        ],
    },
    StepDef {
        step: Step::RdmaPorts,
        id: "rdma-ports",
        asks: "whether RDMA ports are active and at the rate of the fabric",
        needs: [
            "ibstat (or ibv_devinfo -v)",
            "ibstat (or ibv_devinfo -v)",
            "ibstat (or ibv_devinfo -v)",
        ],
    },
    StepDef {
        step: Step::Counters,
        id: "counters",
        asks: "whether error and congestion counters grew between two readings",
        needs: [COUNTERS, COUNTERS, COUNTERS],
    },
    StepDef {
        step: Step::BandwidthVsCeiling,
        id: "bandwidth-vs-ceiling",
        asks: "whether every copy and RDMA figure reaches the ceiling of its path",
        needs: [
            "nvbandwidth or ib_write_bw, beside the rates of their paths (nvidia-smi nvlink --status, ibstat, lspci -vvv)",
            "rocm-bandwidth-test, TransferBench or ib_write_bw, beside the rates of their paths (amd-smi topology, ibstat, lspci -vvv)",
            "ib_write_bw beside ibstat",
        ],
    },
    StepDef {
        step: Step::Affinity,
        id: "affinity",
        asks: "whether the measuring process ran and allocated on the NUMA node of its GPUs",
        needs: [
            "numactl --show in the same launch as the benchmark, beside nvidia-smi topo -m",
            "numactl --show in the same launch as the benchmark, beside rocm-smi --showtoponuma",
            "numactl --show in the same launch as the benchmark",
        ],
    },
    StepDef {
        step: Step::Results,
        id: "results",
        asks: "whether the runs moved the right data and finished",
        needs: [RESULTS, RESULTS, RESULTS],
    },
];

const COUNTERS: &str = "two readings a minute apart under load: ethtool -S <interface>, and grep . /sys/class/infiniband/*/ports/*/counters/* /sys/class/infiniband/*/ports/*/hw_counters/*";
const RESULTS: &str = "the benchmark's whole output (a cut run hides its end and its data check)";
/// EFA reaches GPU memory through its own driver, which says so when it
/// loads.
const EFA_GPUDIRECT: &str = "dmesg | grep -i 'peer memory' (efa: Acquired peer memory using P2P)";

/// The GPUs' vendor, from the tools that read them and the models named.
pub fn vendor(b: &Bundle, facts: &NodeFacts) -> Vendor {
    let amd_tool = b.transcripts.iter().any(|t| {
        matches!(
            t.tool,
            Tool::RocmSmiTopo
                | Tool::AmdSmiTopology
                | Tool::RocmBandwidthTest
                | Tool::Transferbench
        )
    });
    let amd_name = facts
        .named_gpus
        .iter()
        .map(|g| g.model.as_str())
        .chain(facts.gpu_names.values().map(String::as_str))
        .any(|m| {
            let m = m.to_ascii_lowercase();
            m.contains("instinct") || m.contains("radeon") || m.contains("amd")
        });
    if amd_tool || amd_name {
        Vendor::Amd
    } else if matches!(gpus(b, facts), Known::Unknown | Known::Absent(_)) {
        Vendor::NoGpuKnown
    } else {
        Vendor::Nvidia
    }
}

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
            | Finding::NoPeerPath { .. }
            | Finding::NcclStagedPath { .. } => Step::PeerPath,
            Finding::NcclNoGpuDirect { .. } => Step::Gpudirect,
            Finding::NcclSocketFallback { .. } => Step::RdmaPorts,
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
    let mut s = String::from(
        "| check | what it asks | what lets it run: NVIDIA | AMD | no GPU named |\n|---|---|---|---|---|\n",
    );
    // A `|` inside a cell would end it (`lsmod | grep`).
    let cell = |t: &str| t.replace('|', "\\|");
    for d in &STEPS {
        s.push_str(&format!(
            "| `{}` | {} | {} | {} | {} |\n",
            d.id,
            d.asks,
            cell(d.needs[0]),
            cell(d.needs[1]),
            cell(d.needs[2])
        ));
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

/// Every step of [`STEPS`] for one node, given its findings.
pub fn checks(b: &Bundle, facts: &NodeFacts, findings: &[Diagnosed]) -> Vec<Check> {
    let vendor = vendor(b, facts);
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
                Ok(false) if def.step == Step::Gpudirect && efa_only(b) => {
                    (State::NotChecked, Some(EFA_GPUDIRECT), None)
                }
                Ok(false) => (State::NotChecked, Some(def.needs(vendor)), None),
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
mod tests;
