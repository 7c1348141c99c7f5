//! What the diagnosis returns: a kind of finding with the numbers and names
//! that make it concrete, its severity, and the lines it rests on. No
//! sentence here: render writes the summary and picks the explanation.

use serde::Serialize;

use crate::evidence::Source;
use crate::evidence::topology::LinkClass;
use crate::facts::PathCeiling;

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    /// Costs bandwidth or correctness now.
    Critical,
    /// Likely costs performance, or needs a look.
    Warning,
    /// Worth knowing when reading the numbers.
    Info,
}

impl Severity {
    /// The severity [`Severity::as_str`] names (info for anything else).
    pub fn of(s: &str) -> Severity {
        match s {
            "critical" => Severity::Critical,
            "warning" => Severity::Warning,
            _ => Severity::Info,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// A PCIe link speed as the evidence states it: a transfer rate, or only a
/// generation.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PcieSpeed {
    GtPerS(f64),
    Generation(u32),
}

/// What was found, with the numbers that make it concrete.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Finding {
    /// Some GPU pairs have a direct link and others do not: a group that
    /// spans one of the others runs its collectives a tier down. The pair
    /// named is the worst.
    HostHopInGroup {
        a: String,
        b: String,
        class: LinkClass,
        code: String,
        direct_pairs: usize,
        other_pairs: usize,
        /// GPU pairs the topology describes with a known class
        /// (`direct_pairs + other_pairs`).
        gpu_pairs: usize,
        /// GPU pairs whose class the evidence does not give: counted
        /// neither as direct nor as host hops.
        #[serde(default, skip_serializing_if = "is_zero")]
        unknown_pairs: usize,
        /// Direct links still join every GPU: rings can route around the
        /// pair (a DGX-1's hybrid cube mesh), so collectives need not drop
        /// a tier.
        routable: bool,
    },
    /// P2P-enabled bandwidth of a pair is within a few percent of
    /// P2P-disabled: the copy is staged through the host either way.
    /// The pair named is the first; `pairs` (unordered GPU pairs) show the
    /// same fingerprint in all.
    SilentStaging {
        src: String,
        dst: String,
        enabled_bytes_per_s: f64,
        disabled_bytes_per_s: f64,
        /// The copies' message size, where the tool states it: the cost
        /// of staging is told at this size.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size_bytes: Option<u64>,
        pairs: usize,
        /// What `nvidia-smi topo -p2p` says of the pair (`NS`, `CNS`),
        /// when a transcript says it: the cause.
        p2p_status: Option<String>,
    },
    /// P2P-enabled copies of a pair slower than the same pair's copies
    /// staged through the host (P2P disabled): the peer path exists and
    /// costs more than the detour, the fingerprint of ACS or an IOMMU
    /// redirecting peer traffic through the root complex. The pair named
    /// is the slowest by ratio; `pairs` (unordered) show it in all.
    PeerSlowerThanStaged {
        src: String,
        dst: String,
        enabled_bytes_per_s: f64,
        disabled_bytes_per_s: f64,
        size_bytes: Option<u64>,
        pairs: usize,
    },
    /// NCCL joined GPU ranks of one node through host shared memory (SHM):
    /// every byte between them is staged. The pair named is the first;
    /// `pairs` (unordered rank pairs) in all.
    NcclStagedPath {
        src_rank: u32,
        dst_rank: u32,
        /// As NCCL printed it (`SHM/direct/direct`).
        via: String,
        pairs: usize,
    },
    /// NCCL's network traffic reaches GPU memory through the host: it
    /// says GPU Direct RDMA is disabled for these adapters, or its IB
    /// channels lack `/GDRDMA`.
    NcclNoGpuDirect {
        adapters: Vec<String>,
        staged_paths: usize,
    },
    /// NCCL runs on TCP sockets while the node has RDMA adapters.
    NcclSocketFallback { adapters: Vec<String> },
    /// A tool says a GPU pair has no peer path (`nvidia-smi topo -p2p`
    /// CNS/NS/GNS/TNS, amd-smi DISABLED, the runtime's own answer as the
    /// live sweep or `peer_copy_bw` prints it): every copy between them is
    /// staged through host memory, though no comparison of copy figures
    /// (P2P enabled against disabled) shows it here.
    NoPeerPath {
        a: String,
        b: String,
        status: String,
        /// Unordered GPU pairs without a peer path.
        pairs: usize,
    },
    /// The best figure of a series far below the ceiling of its path.
    FarBelowCeiling {
        test: String,
        src: Option<String>,
        dst: Option<String>,
        measured_bytes_per_s: f64,
        /// The figure is the tool's peak (else its average).
        peak: bool,
        size_bytes: Option<u64>,
        /// The path's port is RDMA done in software (Soft-RoCE, siw):
        /// its stated rate is no adapter's and the CPU sets the limit.
        software_rdma: bool,
        ceiling: PathCeiling,
    },
    /// The closest adapter of these GPUs is across the socket boundary:
    /// one finding per adapter, naming every GPU it leaves far.
    NicOnOtherSocket {
        gpus: Vec<String>,
        /// The adapter's id in the topology (`NIC0`) and its name.
        nic: String,
        nic_name: Option<String>,
        code: String,
        /// Other adapters exactly as close (names, else ids): the GPUs
        /// have no closer choice among them either.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        also: Vec<String>,
    },
    /// The closest adapter of these GPUs sits under another host bridge of
    /// the same socket (NODE, PHB): GPUDirect RDMA crosses the root
    /// complex, which often caps peer-to-peer traffic well below the link.
    NicAcrossHostBridge {
        gpus: Vec<String>,
        nic: String,
        nic_name: Option<String>,
        code: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        also: Vec<String>,
    },
    /// A live collection, or an `lsmod` listing beside the node's GPUs and
    /// RDMA adapters, shows no peer-memory module (`nvidia_peermem`,
    /// `nv_peer_mem`, `amdp2p`, `ib_peer_mem`):
    /// GPUDirect RDMA has no path unless dma-buf carries it, and NCCL and
    /// MPI fall back to staging through host memory without a word.
    NoPeerMemoryModule {
        /// GPUs the topology names (0 when only the driver was seen).
        gpus: usize,
        /// The GPU driver loaded (`nvidia`, `amdgpu`), when one is.
        gpu_driver: Option<String>,
        adapters: Vec<String>,
        /// Whether the kernel has dma-buf (unknown when not read).
        dma_buf: Option<bool>,
        /// The peer-memory modules known not to be loaded: all four on a
        /// live node, those an `lsmod` listing rules out otherwise.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        absent: Vec<String>,
    },
    /// perftest with GPU buffers far below the same test with host buffers
    /// on the same adapter and message size: the GPU's memory is reached
    /// through a slower path (staging, or a PCIe path through the host).
    GpuBuffersBelowHost {
        test: String,
        device: Option<String>,
        size_bytes: u64,
        gpu_bytes_per_s: f64,
        host_bytes_per_s: f64,
        /// How the GPU buffer reached the adapter (DMA-BUF or the
        /// peer-memory module), as the GPU-buffer run shows it.
        #[serde(
            default,
            skip_serializing_if = "crate::evidence::answers::GpuRegistration::is_not_stated"
        )]
        registration: crate::evidence::answers::GpuRegistration,
    },
    /// A process bound to CPUs or memory away from the NUMA node of GPUs
    /// (or adapters) it used: every staged byte and host buffer crosses
    /// the socket link.
    ProcessFarFromGpu {
        /// The GPUs out of reach.
        gpus: Vec<String>,
        /// Their NUMA nodes, where known.
        gpu_numa_nodes: Vec<u32>,
        /// Adapters out of reach too (network buffers cross the socket).
        nics: Vec<String>,
        /// The binding's GPUs and adapters within reach.
        near_gpus: usize,
        /// The CPUs it was bound to, as given.
        cpus: Option<String>,
        /// NUMA nodes whose CPUs it could run on, and allocate from
        /// (empty: not stated).
        cpu_nodes: Vec<u32>,
        mem_nodes: Vec<u32>,
        /// The launcher line; none for the live collection's own process.
        command: Option<String>,
        /// Some device is far only by taking the node that holds CPU 0 to
        /// be node 0 (`facts::affinity::node_zero_far`): said in the text.
        node_zero_assumed: bool,
    },
    /// Fewer adapters than GPUs: each GPU gets a share of one.
    InjectionShare {
        gpus: usize,
        nics: usize,
        nic_bytes_per_s: Option<f64>,
        per_gpu_bytes_per_s: Option<f64>,
    },
    /// A PCIe link runs narrower than it can.
    PcieWidthDown {
        address: String,
        name: Option<String>,
        current_lanes: u32,
        max_lanes: u32,
        /// The lanes the slot (the upstream port) can carry, where a live
        /// collection read it; unknown from a device's own LnkCap alone.
        slot_lanes: Option<u32>,
    },
    /// A PCIe link runs slower than it can (may be idle power saving).
    PcieSpeedDown {
        address: String,
        name: Option<String>,
        current: PcieSpeed,
        max: PcieSpeed,
    },
    /// Devices under one PCIe switch whose links (top speed, negotiated
    /// width) together can carry more than the switch's uplink: when they
    /// are busy at once with traffic that leaves the switch, the uplink
    /// decides.
    SwitchUplinkOversubscribed {
        /// The bridge whose link is the uplink (the switch's upstream port).
        switch: String,
        uplink_link: String,
        uplink_bytes_per_s: f64,
        /// Each device under it, with its link's rate.
        devices: Vec<(String, f64)>,
        sum_bytes_per_s: f64,
    },
    /// NVLinks reported inactive; `total` is unknown when the tool could
    /// not read any link.
    NvlinksInactive {
        gpu: String,
        inactive: usize,
        total: Option<usize>,
        /// Links the part is designed with (the SKU table), when known.
        designed: Option<usize>,
    },
    /// An RDMA port that is not ACTIVE / LinkUp.
    RdmaPortDown {
        device: String,
        port: u32,
        state: Option<String>,
        physical_state: Option<String>,
    },
    /// An RDMA port that is down on purpose or unused: switched off
    /// (`Disabled`), or a second port of an adapter whose other port is up.
    RdmaPortUnused {
        device: String,
        port: u32,
        link_layer: Option<String>,
        physical_state: Option<String>,
    },
    /// Error counters of an RDMA port grew while one live collection ran
    /// (symbol errors, link downed, receive errors, transmit discards), or
    /// those of a network interface between two `ethtool -S` readings
    /// (`port` none: `device` is the interface).
    PortErrorsGrew {
        device: String,
        port: Option<u32>,
        /// Counter name and how much it grew, largest first.
        counters: Vec<(String, u64)>,
    },
    /// RoCE congestion signals grew during the collection (ECN marks,
    /// CNPs sent or handled, pause frames): the fabric pushed back. Also
    /// from two `ethtool -S` readings of an interface (`port` none).
    CongestionSignals {
        device: String,
        port: Option<u32>,
        counters: Vec<(String, u64)>,
    },
    /// Pause frames grew between two readings while the ECN marks and CNPs
    /// the same readings carry did not: PFC is doing the work congestion
    /// control should (seed section 6.1, the inverted design).
    PauseWithoutEcn {
        device: String,
        port: Option<u32>,
        /// Pause counters and how much they grew, largest first.
        pauses: Vec<(String, u64)>,
        /// The ECN and CNP counters read, none of which grew.
        flat: Vec<String>,
    },
    /// An RDMA port slower than the fastest of its link layer in the node.
    RdmaPortBelowRate {
        device: String,
        port: u32,
        link_layer: Option<String>,
        rate_bytes_per_s: f64,
        best_bytes_per_s: f64,
    },
    /// A collective or a copy that reported wrong data.
    WrongResults {
        tool: String,
        what: String,
        /// Wrong values the tool counted.
        errors: u64,
        /// Printed rows whose check failed without a count.
        failed_rows: u64,
    },
    /// A copy tool's own data check failed: the bytes that arrived were
    /// not the bytes sent. A possible hardware fault, not a flaky run.
    DataCheckFailed {
        tool: String,
        test: String,
        message: String,
    },
    /// The tool itself failed (a crash, a device it could not read). When
    /// it could not open or stat a device (`No such file or directory`),
    /// what is missing is a gap in the capture, not a fault of the node.
    ToolFailed {
        tool: String,
        message: String,
        capture_defect: bool,
    },
    /// Figures printed in bits: easy to compare against bytes by mistake.
    BitsNotBytes {
        tool: String,
        example_as_printed: String,
        example_bytes_per_s: f64,
    },
    /// Bidirectional figures are the sum of both directions.
    BidirectionalSum {
        tool: String,
        test: String,
        example_bytes_per_s: f64,
    },
    /// A transcript stops early: what is missing was not measured.
    Truncated { file: String, message: String },
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A finding with its severity and the lines it rests on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnosed {
    pub severity: Severity,
    /// The row of the severity table that decided it, with its reason.
    pub why: super::Why,
    /// The severity was lowered to info because every figure the finding
    /// rests on is graded C (`facts::trust`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub weak_figures: bool,
    pub finding: Finding,
    pub evidence: Vec<Source>,
}

impl Finding {
    /// Every kind's name, in the order the rules run: the README's list
    /// and the truth table test read it.
    pub const KINDS: [&'static str; 30] = [
        "host-hop-in-group",
        "silent-staging",
        "peer-slower-than-staged",
        "no-peer-path",
        "nccl-staged-path",
        "nccl-no-gpudirect",
        "nccl-socket-fallback",
        "nic-on-other-socket",
        "nic-across-host-bridge",
        "no-peer-memory-module",
        "gpu-buffers-below-host",
        "process-far-from-gpu",
        "injection-share",
        "pcie-width-down",
        "pcie-speed-down",
        "switch-uplink-oversubscribed",
        "nvlinks-inactive",
        "rdma-port-down",
        "rdma-port-unused",
        "rdma-port-below-rate",
        "port-errors-grew",
        "congestion-signals",
        "pause-without-ecn",
        "wrong-results",
        "data-check-failed",
        "tool-failed",
        "truncated",
        "far-below-ceiling",
        "bits-not-bytes",
        "bidirectional-sum",
    ];

    /// The devices a finding names (GPUs, adapters, PCIe addresses,
    /// interfaces), for scripts that act on them.
    pub fn devices(&self) -> Vec<String> {
        let v = |xs: &[&String]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        match self {
            Finding::HostHopInGroup { a, b, .. } | Finding::NoPeerPath { a, b, .. } => v(&[a, b]),
            Finding::SilentStaging { src, dst, .. }
            | Finding::PeerSlowerThanStaged { src, dst, .. } => v(&[src, dst]),
            Finding::FarBelowCeiling { src, dst, .. } => {
                src.iter().chain(dst.iter()).cloned().collect()
            }
            Finding::NicOnOtherSocket {
                gpus,
                nic,
                nic_name,
                ..
            }
            | Finding::NicAcrossHostBridge {
                gpus,
                nic,
                nic_name,
                ..
            } => {
                let mut d = gpus.clone();
                d.push(nic_name.clone().unwrap_or_else(|| nic.clone()));
                d
            }
            Finding::NoPeerMemoryModule { adapters, .. }
            | Finding::NcclNoGpuDirect { adapters, .. }
            | Finding::NcclSocketFallback { adapters } => adapters.clone(),
            Finding::NcclStagedPath {
                src_rank, dst_rank, ..
            } => vec![format!("rank {src_rank}"), format!("rank {dst_rank}")],
            Finding::GpuBuffersBelowHost { device, .. } => device.iter().cloned().collect(),
            Finding::ProcessFarFromGpu { gpus, nics, .. } => {
                gpus.iter().chain(nics).cloned().collect()
            }
            Finding::PcieWidthDown { address, .. } | Finding::PcieSpeedDown { address, .. } => {
                v(&[address])
            }
            Finding::SwitchUplinkOversubscribed {
                switch, devices, ..
            } => std::iter::once(switch.clone())
                .chain(devices.iter().map(|d| d.0.clone()))
                .collect(),
            Finding::NvlinksInactive { gpu, .. } => v(&[gpu]),
            Finding::RdmaPortDown { device, .. }
            | Finding::RdmaPortUnused { device, .. }
            | Finding::RdmaPortBelowRate { device, .. }
            | Finding::PortErrorsGrew { device, .. }
            | Finding::CongestionSignals { device, .. }
            | Finding::PauseWithoutEcn { device, .. } => v(&[device]),
            Finding::InjectionShare { .. }
            | Finding::WrongResults { .. }
            | Finding::DataCheckFailed { .. }
            | Finding::ToolFailed { .. }
            | Finding::BitsNotBytes { .. }
            | Finding::BidirectionalSum { .. }
            | Finding::Truncated { .. } => Vec::new(),
        }
    }

    /// The kind's name, as in `templates/explain/<name>.md`.
    pub fn name(&self) -> &'static str {
        match self {
            Finding::HostHopInGroup { .. } => "host-hop-in-group",
            Finding::SilentStaging { .. } => "silent-staging",
            Finding::NoPeerPath { .. } => "no-peer-path",
            Finding::PeerSlowerThanStaged { .. } => "peer-slower-than-staged",
            Finding::PauseWithoutEcn { .. } => "pause-without-ecn",
            Finding::NcclStagedPath { .. } => "nccl-staged-path",
            Finding::NcclNoGpuDirect { .. } => "nccl-no-gpudirect",
            Finding::NcclSocketFallback { .. } => "nccl-socket-fallback",
            Finding::FarBelowCeiling { .. } => "far-below-ceiling",
            Finding::NicOnOtherSocket { .. } => "nic-on-other-socket",
            Finding::NicAcrossHostBridge { .. } => "nic-across-host-bridge",
            Finding::NoPeerMemoryModule { .. } => "no-peer-memory-module",
            Finding::GpuBuffersBelowHost { .. } => "gpu-buffers-below-host",
            Finding::ProcessFarFromGpu { .. } => "process-far-from-gpu",
            Finding::InjectionShare { .. } => "injection-share",
            Finding::PcieWidthDown { .. } => "pcie-width-down",
            Finding::PcieSpeedDown { .. } => "pcie-speed-down",
            Finding::SwitchUplinkOversubscribed { .. } => "switch-uplink-oversubscribed",
            Finding::NvlinksInactive { .. } => "nvlinks-inactive",
            Finding::RdmaPortDown { .. } => "rdma-port-down",
            Finding::RdmaPortUnused { .. } => "rdma-port-unused",
            Finding::RdmaPortBelowRate { .. } => "rdma-port-below-rate",
            Finding::PortErrorsGrew { .. } => "port-errors-grew",
            Finding::CongestionSignals { .. } => "congestion-signals",
            Finding::WrongResults { .. } => "wrong-results",
            Finding::DataCheckFailed { .. } => "data-check-failed",
            Finding::ToolFailed { .. } => "tool-failed",
            Finding::BitsNotBytes { .. } => "bits-not-bytes",
            Finding::BidirectionalSum { .. } => "bidirectional-sum",
            Finding::Truncated { .. } => "truncated",
        }
    }
}
