//! How much each finding matters, decided in one table from what the
//! hardware is supposed to do (STYLE: "verdicts say what they rest on").
//! A rule never picks a severity itself: it picks the row of this table
//! whose condition held, and the row gives the severity and the reason
//! the row exists. The reason is shown beside every finding, and the
//! README prints the whole table (a test keeps the two in step).
//!
//! DCGM's diagnostic levels are the model: a part doing what it was built
//! to do is never worse than info (a GeForce card staging peer copies); a
//! part that should do better and does not is critical or a warning (an
//! SXM part staging). A row that is about the evidence rather than the
//! hardware ([`About::Evidence`]: a cut transcript, a unit to convert) is
//! never a node's top finding while a hardware finding exists.

use serde::Serialize;

use super::Severity;

/// Whether a row speaks of the hardware, or of the evidence read about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum About {
    Hardware,
    Evidence,
}

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// The finding kind the row judges (`templates/explain/<kind>.md`).
    pub kind: &'static str,
    /// When the row applies, in a few words.
    pub when: &'static str,
    pub severity: Severity,
    /// Why this severity: the sentence shown beside each finding.
    pub reason: &'static str,
    pub about: About,
}

/// A row's cells, in [`Row`]'s order: kind, when, severity, reason,
/// about.
type Cells = (&'static str, &'static str, Severity, &'static str, About);

/// The row a rule chose. Each variant is one row of [`Why::row`]; its
/// match, which sends each variant to its family's table, is exhaustive,
/// so a new row without a family does not compile, and the tests that
/// read every row of [`Why::ALL`] fail until its family gives it a
/// severity and a reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Why {
    HostHopSplitsGroups,
    HostHopRoutable,
    HostHopNoDirectLinks,
    HostHopBetweenDesignGroups,
    HostHopOnSwitchedFabric,
    StagesOnPeerCapablePart,
    StagesByDesign,
    StagesPartNotNamed,
    PeerSlowerThanStaged,
    PeerHalfOfStaged,
    NoPeerPathByDesign,
    NoPeerPathPlatform,
    NcclShmBetweenGpus,
    NcclShmByDesign,
    NcclNetWithoutGdrdma,
    NcclSocketWithRdma,
    NicOnOtherSocket,
    NicAcrossHostBridge,
    NoPeerMemoryModule,
    NoPeerMemoryModuleDmaBuf,
    GpuBuffersBelowHost,
    ProcessAwayFromEveryGpu,
    ProcessAwayFromSomeDevices,
    FewerAdaptersThanGpus,
    AdapterPerTwoGpus,
    PcieWidthDownSlotWider,
    PcieWidthDownCardOnly,
    PcieSpeedDownNotGpu,
    PcieSpeedDownGpuIdle,
    SwitchUplinkShared,
    NvlinksDown,
    NvlinksNoBridge,
    RdmaPortDown,
    RdmaPortUnused,
    RdmaPortBelowRate,
    PortErrorsGrew,
    CongestionSignals,
    PauseWithoutEcn,
    WrongResults,
    DataCheckFailed,
    ToolFailed,
    ToolMissedDevice,
    Truncated,
    FarBelowCeiling,
    FarBelowCeilingSoftwareRdma,
    BitsNotBytes,
    BidirectionalSum,
}

impl Why {
    /// Every row, in table order (the README's table and its test).
    pub const ALL: [Why; 47] = [
        Why::HostHopSplitsGroups,
        Why::HostHopRoutable,
        Why::HostHopNoDirectLinks,
        Why::HostHopBetweenDesignGroups,
        Why::HostHopOnSwitchedFabric,
        Why::StagesOnPeerCapablePart,
        Why::StagesByDesign,
        Why::StagesPartNotNamed,
        Why::PeerSlowerThanStaged,
        Why::PeerHalfOfStaged,
        Why::NoPeerPathByDesign,
        Why::NoPeerPathPlatform,
        Why::NcclShmBetweenGpus,
        Why::NcclShmByDesign,
        Why::NcclNetWithoutGdrdma,
        Why::NcclSocketWithRdma,
        Why::NicOnOtherSocket,
        Why::NicAcrossHostBridge,
        Why::NoPeerMemoryModule,
        Why::NoPeerMemoryModuleDmaBuf,
        Why::GpuBuffersBelowHost,
        Why::ProcessAwayFromEveryGpu,
        Why::ProcessAwayFromSomeDevices,
        Why::FewerAdaptersThanGpus,
        Why::AdapterPerTwoGpus,
        Why::PcieWidthDownSlotWider,
        Why::PcieWidthDownCardOnly,
        Why::PcieSpeedDownNotGpu,
        Why::PcieSpeedDownGpuIdle,
        Why::SwitchUplinkShared,
        Why::NvlinksDown,
        Why::NvlinksNoBridge,
        Why::RdmaPortDown,
        Why::RdmaPortUnused,
        Why::RdmaPortBelowRate,
        Why::PortErrorsGrew,
        Why::CongestionSignals,
        Why::PauseWithoutEcn,
        Why::WrongResults,
        Why::DataCheckFailed,
        Why::ToolFailed,
        Why::ToolMissedDevice,
        Why::Truncated,
        Why::FarBelowCeiling,
        Why::FarBelowCeilingSoftwareRdma,
        Why::BitsNotBytes,
        Why::BidirectionalSum,
    ];

    pub fn severity(self) -> Severity {
        self.row().severity
    }

    /// The table: each family of rows is a table of its own, below.
    pub const fn row(self) -> Row {
        let (kind, when, severity, reason, about) = match self {
            Why::HostHopSplitsGroups
            | Why::HostHopRoutable
            | Why::HostHopNoDirectLinks
            | Why::HostHopBetweenDesignGroups
            | Why::HostHopOnSwitchedFabric
            | Why::StagesOnPeerCapablePart
            | Why::StagesByDesign
            | Why::StagesPartNotNamed
            | Why::PeerSlowerThanStaged
            | Why::PeerHalfOfStaged
            | Why::NoPeerPathByDesign
            | Why::NoPeerPathPlatform => self.gpu_pair_row(),
            Why::NcclShmBetweenGpus
            | Why::NcclShmByDesign
            | Why::NcclNetWithoutGdrdma
            | Why::NcclSocketWithRdma => self.nccl_row(),
            Why::NicOnOtherSocket
            | Why::NicAcrossHostBridge
            | Why::NoPeerMemoryModule
            | Why::NoPeerMemoryModuleDmaBuf
            | Why::GpuBuffersBelowHost
            | Why::ProcessAwayFromEveryGpu
            | Why::ProcessAwayFromSomeDevices
            | Why::AdapterPerTwoGpus
            | Why::FewerAdaptersThanGpus => self.host_side_row(),
            Why::PcieWidthDownSlotWider
            | Why::PcieWidthDownCardOnly
            | Why::PcieSpeedDownNotGpu
            | Why::PcieSpeedDownGpuIdle
            | Why::SwitchUplinkShared
            | Why::NvlinksDown
            | Why::NvlinksNoBridge
            | Why::RdmaPortDown
            | Why::RdmaPortUnused
            | Why::RdmaPortBelowRate
            | Why::PortErrorsGrew
            | Why::CongestionSignals
            | Why::PauseWithoutEcn => self.link_row(),
            Why::WrongResults
            | Why::DataCheckFailed
            | Why::ToolFailed
            | Why::ToolMissedDevice
            | Why::Truncated
            | Why::FarBelowCeiling
            | Why::FarBelowCeilingSoftwareRdma
            | Why::BitsNotBytes
            | Why::BidirectionalSum => self.result_row(),
        };
        Row {
            kind,
            when,
            severity,
            reason,
            about,
        }
    }

    /// The rows of GPU pairs: how they are joined (host hops) and how
    /// they copy (staged, a peer path slower than staging, none).
    const fn gpu_pair_row(self) -> Cells {
        use About::Hardware;
        use Severity::{Critical, Info, Warning};
        match self {
            Why::HostHopSplitsGroups => (
                "host-hop-in-group",
                "some GPU pairs have a direct link, others not, the direct links do not join every GPU, and they do not form groups joined all to all",
                Warning,
                "a parallel group that spans such a pair runs its collectives a tier down, over PCIe or the host",
                Hardware,
            ),
            Why::HostHopRoutable => (
                "host-hop-in-group",
                "direct links still join every GPU",
                Info,
                "rings can route around the pair (a DGX-1's hybrid cube mesh is built this way)",
                Hardware,
            ),
            Why::HostHopNoDirectLinks => (
                "host-hop-in-group",
                "no GPU pair has a direct link",
                Info,
                "the node is built without a scale-up link: every pair is in the PCIe tier by design",
                Hardware,
            ),
            Why::HostHopBetweenDesignGroups => (
                "host-hop-in-group",
                "the direct links form groups joined all to all (bridge pairs, xGMI hives)",
                Info,
                "the node is built in groups: keep each parallel group inside one, since a group spanning two runs a tier down",
                Hardware,
            ),
            Why::HostHopOnSwitchedFabric => (
                "host-hop-in-group",
                "every GPU has the same number of NVLinks (8 or more: an NVSwitch fabric) and some pair is not joined by them",
                Warning,
                "an NVSwitch fabric joins every pair; a pair without its NVLinks is a fabric or link fault, not a design",
                Hardware,
            ),
            Why::StagesOnPeerCapablePart => (
                "silent-staging",
                "P2P-enabled copies at the staged speed on a part built with a peer path",
                Critical,
                "data-center and workstation parts copy peer to peer over PCIe or NVLink; staging means something switched the path off (ACS, IOMMU, a VM, the driver)",
                Hardware,
            ),
            Why::StagesByDesign => (
                "silent-staging",
                "P2P-enabled copies at the staged speed on a GeForce RTX part",
                Info,
                "GeForce RTX parts have no peer path over PCIe: the driver stages every peer copy through host memory by design",
                Hardware,
            ),
            Why::StagesPartNotNamed => (
                "silent-staging",
                "P2P-enabled copies at the staged speed, GPU model not named",
                Warning,
                "no transcript names the GPU model, so whether this part should copy peer to peer is not known",
                Hardware,
            ),
            Why::PeerSlowerThanStaged => (
                "peer-slower-than-staged",
                "a P2P-enabled copy more than 10% slower than the staged copy of the same pair",
                Warning,
                "a working peer path is never slower than a detour through host memory: ACS or the IOMMU redirecting peer traffic through the root complex leaves this fingerprint",
                Hardware,
            ),
            Why::PeerHalfOfStaged => (
                "peer-slower-than-staged",
                "a P2P-enabled copy at half the staged copy's speed or less",
                Critical,
                "the peer path costs more than half of what the host path delivers: every library that prefers it (NCCL P2P) loses that much",
                Hardware,
            ),
            Why::NoPeerPathByDesign => (
                "no-peer-path",
                "a GeForce RTX part, or the tool says the GPU does not support it (GNS)",
                Info,
                "the part is built without a peer path over PCIe: staging is its design",
                Hardware,
            ),
            Why::NoPeerPathPlatform => (
                "no-peer-path",
                "any other part without a peer path (chipset, topology or unknown cause)",
                Warning,
                "the part could copy peer to peer; the platform (chipset, PCIe topology, a VM) keeps it from doing so",
                Hardware,
            ),
            _ => panic!("Why::row sends only the GPU-pair rows here"),
        }
    }

    /// The rows of what NCCL's own log says of its paths.
    const fn nccl_row(self) -> Cells {
        use About::Hardware;
        use Severity::{Info, Warning};
        match self {
            Why::NcclShmBetweenGpus => (
                "nccl-staged-path",
                "NCCL's log joins GPU ranks of one node through shared memory (SHM)",
                Warning,
                "NCCL stages through host memory only where peer copies are off (NCCL_P2P_DISABLE, NCCL_P2P_LEVEL) or impossible (ACS, IOMMU, a VM): every collective of those ranks runs a tier down",
                Hardware,
            ),
            Why::NcclShmByDesign => (
                "nccl-staged-path",
                "the same, on GeForce RTX parts",
                Info,
                "GeForce RTX parts have no peer path over PCIe: NCCL staging through host memory is their design",
                Hardware,
            ),
            Why::NcclNetWithoutGdrdma => (
                "nccl-no-gpudirect",
                "NCCL says GPU Direct RDMA is disabled for an adapter, or its IB channels lack /GDRDMA",
                Warning,
                "inter-node traffic is staged through host memory on both ends: latency, host memory bandwidth and a CPU core, and half the throughput where PCIe is the narrow link",
                Hardware,
            ),
            Why::NcclSocketWithRdma => (
                "nccl-socket-fallback",
                "NCCL uses TCP sockets on a node with RDMA adapters",
                Warning,
                "the RDMA fabric is there and unused: sockets cost an order of magnitude in latency and most of the bandwidth",
                Hardware,
            ),
            _ => panic!("Why::row sends only the NCCL rows here"),
        }
    }

    /// The rows of the host side of the path: where the adapters sit for
    /// the GPUs and how many there are, the peer-memory module, GPU against
    /// host buffers, the process's binding.
    const fn host_side_row(self) -> Cells {
        use About::Hardware;
        use Severity::{Info, Warning};
        match self {
            Why::NicOnOtherSocket => (
                "nic-on-other-socket",
                "a GPU's closest adapter is across the socket link",
                Warning,
                "every byte GPUDirect RDMA moves crosses the socket link, which usually caps peer-to-peer traffic",
                Hardware,
            ),
            Why::NicAcrossHostBridge => (
                "nic-across-host-bridge",
                "a GPU's closest adapter is under another host bridge of its socket",
                Warning,
                "peer traffic through the root complex is often capped well below the link rate",
                Hardware,
            ),
            Why::NoPeerMemoryModule => (
                "no-peer-memory-module",
                "GPUs and RDMA adapters, no peer-memory module, dma-buf not known to be there",
                Warning,
                "without it GPUDirect RDMA falls back to host staging without a word",
                Hardware,
            ),
            Why::NoPeerMemoryModuleDmaBuf => (
                "no-peer-memory-module",
                "the same, on a kernel with dma-buf",
                Info,
                "dma-buf can carry the path instead (open kernel modules, upstream amdgpu)",
                Hardware,
            ),
            Why::GpuBuffersBelowHost => (
                "gpu-buffers-below-host",
                "perftest with GPU buffers below 75% of host buffers on the same adapter and size",
                Warning,
                "the GPU's memory is reached by a slower path than host memory: staging, or a PCIe path through the host",
                Hardware,
            ),
            Why::ProcessAwayFromEveryGpu => (
                "process-far-from-gpu",
                "the process could reach none of the GPUs it used",
                Warning,
                "every staged byte and host buffer of every GPU crosses the socket link; the fix is free",
                Hardware,
            ),
            Why::ProcessAwayFromSomeDevices => (
                "process-far-from-gpu",
                "the process is near some of its GPUs, far from others or from adapters",
                Info,
                "a process bound to one socket is near that socket's devices; the far ones pay a socket crossing",
                Hardware,
            ),
            Why::AdapterPerTwoGpus => (
                "injection-share",
                "one network adapter for every two GPUs (or more adapters than that)",
                Info,
                "a common reference design (DGX-1): the adapters are still the node's injection ceiling, at half an adapter per GPU",
                Hardware,
            ),
            Why::FewerAdaptersThanGpus => (
                "injection-share",
                "fewer than one network adapter for every two GPUs",
                Warning,
                "the adapters are the node's injection ceiling: each GPU gets a share of one, far below its scale-up bandwidth",
                Hardware,
            ),
            _ => panic!("Why::row sends only the host-side rows here"),
        }
    }

    /// The rows of links: PCIe width and speed, a switch's uplink, NVLinks,
    /// RDMA ports and their counters.
    const fn link_row(self) -> Cells {
        use About::Hardware;
        use Severity::{Critical, Info, Warning};
        match self {
            Why::PcieWidthDownSlotWider => (
                "pcie-width-down",
                "a link narrower than both the device and its slot can run",
                Critical,
                "half the lanes is half the bandwidth, and both ends could do more: a seating, riser or bifurcation fault",
                Hardware,
            ),
            Why::PcieWidthDownCardOnly => (
                "pcie-width-down",
                "narrower than the device can run, the slot's width unknown",
                Info,
                "a device's own capability does not say what its slot can carry (an x16 card in an x8 slot)",
                Hardware,
            ),
            Why::PcieSpeedDownNotGpu => (
                "pcie-speed-down",
                "a link slower than it can run, on a device that is not a GPU",
                Warning,
                "adapters and bridges do not slow their links to save power: this one trained down",
                Hardware,
            ),
            Why::PcieSpeedDownGpuIdle => (
                "pcie-speed-down",
                "a GPU's link slower than it can run",
                Info,
                "GPUs lower their PCIe speed when idle; only a reading under load says whether it trained down",
                Hardware,
            ),
            Why::SwitchUplinkShared => (
                "switch-uplink-oversubscribed",
                "devices under one switch can together carry more than its uplink",
                Info,
                "many servers are built this way; it costs only when the devices are busy at once with traffic that leaves the switch",
                Hardware,
            ),
            Why::NvlinksDown => (
                "nvlinks-inactive",
                "NVLinks the part has are down",
                Warning,
                "a GPU with links down moves its peer traffic over fewer links, or over PCIe",
                Hardware,
            ),
            Why::NvlinksNoBridge => (
                "nvlinks-inactive",
                "a bridge-wired card (PCIe NVLink) with no link up anywhere in the node",
                Info,
                "such a card's links come from an optional bridge; a card without one has none up",
                Hardware,
            ),
            Why::RdmaPortDown => (
                "rdma-port-down",
                "an RDMA port that is not active, its card's other ports not up either",
                Warning,
                "a port down is a cabling or subnet-manager problem: nothing moves over it",
                Hardware,
            ),
            Why::RdmaPortUnused => (
                "rdma-port-unused",
                "a disabled port, or the spare port of a card whose other port is up",
                Info,
                "nothing to cable or fix",
                Hardware,
            ),
            Why::RdmaPortBelowRate => (
                "rdma-port-below-rate",
                "an active port slower than the fastest of its kind and link layer in the node",
                Warning,
                "ports of one kind are built to train alike: this one runs below what it was sold at",
                Hardware,
            ),
            Why::PortErrorsGrew => (
                "port-errors-grew",
                "error counters grew between two readings",
                Warning,
                "a link that corrects or drops errors keeps the job running and paces every rank of a collective",
                Hardware,
            ),
            Why::CongestionSignals => (
                "congestion-signals",
                "ECN marks or CNPs grew between two readings",
                Info,
                "congestion control doing its work: worth knowing, not a fault",
                Hardware,
            ),
            Why::PauseWithoutEcn => (
                "pause-without-ecn",
                "pause frames received grew between two readings while the node's RoCE ECN and CNP counters (hw_counters) stayed flat",
                Warning,
                "PFC is doing the work congestion control (DCQCN) should: the design is inverted, and pauses spread congestion to flows that never touched it",
                Hardware,
            ),
            _ => panic!("Why::row sends only the link rows here"),
        }
    }

    /// The rows of the results and the evidence: wrong data, failed or
    /// cut runs, figures far below their ceiling or in another unit.
    const fn result_row(self) -> Cells {
        use About::{Evidence, Hardware};
        use Severity::{Critical, Info, Warning};
        match self {
            Why::WrongResults => (
                "wrong-results",
                "a collective or copy reported wrong data",
                Critical,
                "a fast wrong answer is the worst outcome: no figure of that run counts",
                Hardware,
            ),
            Why::DataCheckFailed => (
                "data-check-failed",
                "a copy tool's own data check failed",
                Critical,
                "the bytes that arrived were not the bytes sent: a possible hardware fault",
                Hardware,
            ),
            Why::ToolFailed => (
                "tool-failed",
                "a tool failed on the node",
                Warning,
                "what it would have measured is unknown, and the failure may be the node's",
                Hardware,
            ),
            Why::ToolMissedDevice => (
                "tool-failed",
                "a tool could not open a device the capture did not carry",
                Info,
                "a gap in the capture, not a fault of the node",
                Evidence,
            ),
            Why::Truncated => (
                "truncated",
                "a transcript stops early",
                Info,
                "what is missing was not measured: a note about the evidence",
                Evidence,
            ),
            Why::FarBelowCeiling => (
                "far-below-ceiling",
                "a series' best figure below a quarter of its path's ceiling",
                Warning,
                "a flow that runs at a quarter of its tier has fallen a tier, or its link is degraded",
                Hardware,
            ),
            Why::FarBelowCeilingSoftwareRdma => (
                "far-below-ceiling",
                "the same, over software RDMA (Soft-RoCE, siw)",
                Warning,
                "software RDMA's stated rate is no adapter's and the CPU sets the limit, but a quarter of the stated rate is far below what it moves on one core",
                Hardware,
            ),
            Why::BitsNotBytes => (
                "bits-not-bytes",
                "figures printed in bits",
                Info,
                "a unit to convert, not a fault: read once as bytes here",
                Evidence,
            ),
            Why::BidirectionalSum => (
                "bidirectional-sum",
                "bidirectional figures",
                Info,
                "the sum of both directions: compare with a bidirectional ceiling, not a one-way one",
                Evidence,
            ),
            _ => panic!("Why::row sends only the result rows here"),
        }
    }
}

/// The table as the README prints it (a test keeps the two in step).
pub fn markdown_table() -> String {
    let mut s = String::from("| kind | when | severity | why |\n|---|---|---|---|\n");
    for w in Why::ALL {
        let r = w.row();
        s.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            r.kind,
            r.when,
            r.severity.as_str(),
            r.reason
        ));
    }
    s
}

/// Whether a GPU model is a consumer part without a peer path over PCIe
/// by design: GeForce RTX (20 to 50 series) and GTX 16 series (Turing).
/// NVIDIA's driver turns PCIe P2P off on these; Pascal and older GeForce
/// cards still had it, and an NVLink bridge, where a card has one, is
/// another path. Workstation and data-center parts (RTX A6000, RTX 5880
/// Ada, RTX PRO, Quadro, TITAN, Tesla) keep it. A name without "GeForce"
/// (`NVIDIA RTX 4090`, as some tools print it) is read by its number:
/// four digits, 20xx to 50xx, not a workstation `xx00`, no `Ada`/`PRO`/`A`.
pub fn consumer_part(model: &str) -> bool {
    let m = model.to_ascii_lowercase();
    let workstation = ["quadro", "titan", "tesla", " ada", "rtx pro", "rtx a"]
        .iter()
        .any(|w| m.contains(w));
    if workstation {
        return false;
    }
    let number_after = |word: &str| -> Vec<Vec<u8>> {
        m.match_indices(word)
            .map(|(i, _)| {
                m.as_bytes()[i + word.len()..]
                    .iter()
                    .take_while(|c| c.is_ascii_digit())
                    .copied()
                    .collect()
            })
            .collect()
    };
    let rtx = number_after("rtx ")
        .iter()
        .any(|d| d.len() == 4 && matches!(d[0], b'2'..=b'5') && &d[2..] != b"00");
    let gtx16 = number_after("gtx ")
        .iter()
        .any(|d| d.len() == 4 && d.starts_with(b"16"));
    rtx || gtx16 || (m.contains("geforce") && m.contains("rtx"))
}

#[cfg(test)]
mod tests;
