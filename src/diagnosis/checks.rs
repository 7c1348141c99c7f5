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

/// Whether the node has some kind of device, as far as the evidence says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Known {
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

fn gpus(b: &Bundle, facts: &NodeFacts) -> Known {
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
fn evidence_for(step: Step, b: &Bundle, facts: &NodeFacts) -> Result<bool, &'static str> {
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
                || super::numa_placement::places_gpus_and_adapters(b))
        }
        Step::PcieLinks => {
            no_devices()?;
            // Every GPU's link (as many GPU links as GPUs), and an
            // adapter's where the node has adapters: one NIC's line does
            // not speak for the GPUs.
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
            Ok(gpus_covered && nics_covered && b.pcie.iter().any(|p| stated(&p)))
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
            // Every copy and RDMA figure against its path's ceiling: one
            // figure with a ceiling does not speak for the others.
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
            Ok(!with_a_path.is_empty() && with_a_path.iter().all(|m| facts.ceiling(m).is_some()))
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
fn efa_only(b: &Bundle) -> bool {
    !b.rdma.is_empty() && b.rdma.iter().all(|d| gpudirect::has_own_gpu_path(&d.name))
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
    fn a_benchmark_on_one_gpu_does_not_make_a_one_gpu_node() {
        use crate::evidence::measurement::{Kind, Measurement, Statistic};
        // `GPU 7` alone (an nvbandwidth run on one device): the node has at
        // least eight, so its pairs are not known, not absent.
        let mut b = empty(Origin::Ingested);
        let mut m = Measurement::new("nvbandwidth", 3, Kind::H2d, "t", Statistic::Median);
        m.dst = Some("GPU7".into());
        m.bandwidth_bytes_per_s = Some(50e9);
        b.measurements.push(m);
        let facts = NodeFacts::of(&b);
        let c = checks(&b, &facts, &[]);
        assert_eq!(state(&c, Step::GpuLinks), State::NotChecked);
        assert_eq!(state(&c, Step::PeerPath), State::NotChecked);
        // A topology that lists one GPU is a listing: no pair to check.
        let mut one = empty(Origin::Ingested);
        one.topology
            .devices
            .push(crate::evidence::topology::Device::new(
                "GPU0",
                crate::evidence::topology::DeviceKind::Gpu,
                crate::evidence::Source::line(1),
            ));
        let facts = NodeFacts::of(&one);
        assert_eq!(
            state(&checks(&one, &facts, &[]), Step::GpuLinks),
            State::NotApplicable
        );
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
