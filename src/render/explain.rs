//! Findings in words: the one-sentence summary of each finding with its
//! numbers, and its explanation (what it means, what to do) from
//! `templates/explain/<kind>.md`. Both are chosen by an exhaustive match,
//! so a new kind of finding without words does not compile. The node page
//! and the ticket summary both read them from here.

use crate::diagnosis::Finding;
use crate::evidence::measurement::describe_size;
use crate::evidence::topology::LinkClass;
use crate::facts::{CeilingSource, PathCeiling};
use crate::render::format::gbs_fixed;

/// Bandwidth in a finding's sentence: two decimals, or three significant
/// digits below 0.01 GB/s, where two decimals would read as zero.
fn gbs(bytes_per_s: f64) -> String {
    let g = bytes_per_s / 1e9;
    if g != 0.0 && g.abs() < 0.01 {
        let decimals = (2.0 - g.abs().log10().floor()).clamp(3.0, 12.0) as usize;
        return gbs_fixed(bytes_per_s, decimals);
    }
    gbs_fixed(bytes_per_s, 2)
}

/// A PCIe device as named in sentences: `address (name)`, or the address.
pub fn pcie_label(address: &str, name: Option<&str>) -> String {
    match name {
        Some(n) => format!("{address} ({n})"),
        None => address.to_string(),
    }
}

/// Which link facts gave a path's ceiling, in words.
pub fn ceiling_from(c: &CeilingSource) -> String {
    match c {
        CeilingSource::RdmaPort {
            device,
            port,
            rate_as_printed,
            link,
        } => match (rate_as_printed, link) {
            (Some(r), Some(l)) => {
                format!("{device} port {port} rate {r} Gb/s: {l}, data rate after line encoding")
            }
            (Some(r), None) => format!("{device} port {port} rate {r} Gb/s"),
            // No rate printed (ibv_devinfo): the width and speed gave it.
            (None, Some(l)) => format!("{device} port {port}: {l}, from its width and speed"),
            (None, None) => format!("{device} port {port}"),
        },
        CeilingSource::Nvlinks {
            links,
            per_link_bytes_per_s,
        } => format!(
            "{links} NVLinks x {} (nvidia-smi nvlink --status)",
            gbs_fixed(*per_link_bytes_per_s, 3)
        ),
        CeilingSource::XgmiMax => "XGMI max bandwidth reported by the driver".into(),
        CeilingSource::Pcie { address, link } => format!(
            "{link} of {address} (its negotiated width at the top speed it can run), per direction after line encoding"
        ),
    }
}

/// The file name of a path.
fn short(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `direct` of `total` GPU pairs have a direct link, `others` go through the host.
fn host_hop(
    (a, b): (&str, &str),
    class: LinkClass,
    code: &str,
    (direct, others, total, unknown): (usize, usize, usize, usize),
    routable: bool,
) -> String {
    // Pairs of unknown class are neither direct nor host hops: said apart.
    let unknown = match unknown {
        0 => String::new(),
        1 => " One more pair's class is unknown.".to_string(),
        n => format!(" {n} more pairs' class is unknown."),
    };
    if direct > 0 && routable {
        format!(
            "{direct} of {total} GPU pairs have a direct link and {others} do not; the worst, {a}-{b}, is {class} ({code}). Direct links still join every GPU, so rings and trees can route around it; a point-to-point copy between the two cannot.{unknown}"
        )
    } else if direct > 0 {
        format!(
            "{direct} of {total} GPU pairs have a direct link and {others} do not; the worst, {a}-{b}, is {class} ({code}). A group spanning it runs its collectives a tier down.{unknown}"
        )
    } else {
        let (known, one) = if unknown.is_empty() {
            ("", "pair")
        } else {
            (" of known class", "one")
        };
        format!(
            "No GPU pair{known} has a direct link: every {one} goes through PCIe; the worst, {a}-{b}, is {class} ({code}).{unknown}"
        )
    }
}

/// `GPUs GPU4, GPU5: their closest adapter, mlx5_0 (NIC0), is`, or with
/// adapters equally close, `their closest adapters, mlx5_0 (NIC0), mlx5_1
/// and mlx5_2 (equally close), are all`.
fn closest_adapters(gpus: &[String], nic: &str, name: Option<&str>, also: &[String]) -> String {
    let (who, whose) = if gpus.len() == 1 {
        ("GPU", "its")
    } else {
        ("GPUs", "their")
    };
    let first = format!("{} ({nic})", name.unwrap_or(nic));
    let adapters = match also {
        [] => format!("closest adapter, {first}, is"),
        [rest @ .., last] => {
            let mut names = vec![first];
            names.extend(rest.iter().cloned());
            format!(
                "closest adapters, {} and {last} (equally close), are all",
                names.join(", ")
            )
        }
    };
    format!("{who} {}: {whose} {adapters}", gpus.join(", "))
}

fn far_below(
    test: &str,
    (src, dst): (Option<&str>, Option<&str>),
    (bw, peak, size): (f64, bool, Option<u64>),
    software_rdma: bool,
    ceiling: &PathCeiling,
) -> String {
    let mut s = format!(
        "{test} {}{}: best {} ({}){} is {:.0}% of {} {} ({}).",
        src.unwrap_or_default(),
        dst.map(|d| format!("->{d}")).unwrap_or_default(),
        gbs(bw),
        if peak { "peak" } else { "average" },
        size.map(|b| format!(" at {}", describe_size(b)))
            .unwrap_or_default(),
        100.0 * bw / ceiling.bytes_per_s,
        if software_rdma {
            "the rate its port states,"
        } else {
            "the path's ceiling"
        },
        gbs(ceiling.bytes_per_s),
        ceiling_from(&ceiling.from)
    );
    if software_rdma && let CeilingSource::RdmaPort { device, .. } = &ceiling.from {
        s.push_str(&format!(
            " {device} is software RDMA (Soft-RoCE or soft-iWARP): the kernel does the RDMA work on the host CPU over an ordinary Ethernet interface, and the rate its port states is the kernel's mapping of that interface's link speed, not an adapter's."
        ));
    }
    s
}

fn injection_share(gpus: usize, nics: usize, per_gpu_bytes_per_s: Option<f64>) -> String {
    match per_gpu_bytes_per_s {
        Some(p) => format!(
            "{gpus} GPUs share {nics} adapter(s): each GPU can inject {} (MODEL) into the network.",
            gbs(p)
        ),
        None => format!(
            "{gpus} GPUs share {nics} adapter(s): each GPU gets {nics}/{gpus} of one adapter's rate (MODEL)."
        ),
    }
}

fn no_peer_memory(
    gpus: usize,
    gpu_driver: Option<&str>,
    adapters: &[String],
    dma_buf: Option<bool>,
    absent: &[String],
) -> String {
    let what = match (gpus, gpu_driver) {
        (0, Some(d)) => format!("the {d} GPU driver is loaded"),
        (n, _) => format!("{n} GPU(s)"),
    };
    let tail = match dma_buf {
        Some(true) => {
            "the kernel has dma-buf, which can carry the path only if the GPU driver exports it"
        }
        Some(false) => "and the kernel has no dma-buf: GPUDirect RDMA falls back to host staging",
        None => "unless dma-buf carries it (not seen), GPUDirect RDMA falls back to host staging",
    };
    // Old findings (before `absent`) came from live collections: all four.
    let modules = if absent.is_empty() {
        "nvidia_peermem, nv_peer_mem, amdp2p, ib_peer_mem".to_string()
    } else {
        absent.join(", ")
    };
    format!(
        "{what} and RDMA adapter(s) {} but no peer-memory module ({modules}) loaded; {tail}.",
        adapters.join(", ")
    )
}

/// What NCCL's own log says of its paths: a pair staged through host
/// memory, no GPUDirect RDMA, sockets beside RDMA adapters.
fn nccl_summary(f: &Finding) -> String {
    match f {
        Finding::NcclStagedPath {
            src_rank,
            dst_rank,
            via,
            pairs,
        } => format!(
            "NCCL joins rank {src_rank} and rank {dst_rank} of one node through host shared memory (`via {via}`): every byte between them is staged.{}",
            if *pairs > 1 {
                format!(" {pairs} rank pairs in all go this way.")
            } else {
                String::new()
            }
        ),
        Finding::NcclNoGpuDirect {
            adapters,
            staged_paths,
        } => {
            let who = if adapters.is_empty() {
                "its InfiniBand channels".to_string()
            } else {
                format!("adapter(s) {}", adapters.join(", "))
            };
            format!(
                "NCCL does not use GPUDirect RDMA for {who}{}: network traffic is staged through host memory on both ends.",
                if *staged_paths > 0 {
                    format!(" ({staged_paths} NET channel(s) without /GDRDMA)")
                } else {
                    String::new()
                }
            )
        }
        Finding::NcclSocketFallback { adapters } => format!(
            "NCCL runs its network traffic over TCP sockets although the node has RDMA adapter(s) {}: the fabric is there and unused.",
            adapters.join(", ")
        ),
        // Not an NCCL kind: [`summary`] never sends one.
        other => other.name().to_string(),
    }
}

/// Where the adapters sit for the GPUs: across the socket boundary or a
/// host bridge, or fewer of them than GPUs.
fn placement_summary(f: &Finding) -> String {
    match f {
        Finding::NicOnOtherSocket {
            gpus,
            nic,
            nic_name,
            code,
            also,
        } => format!(
            "{} across the socket boundary ({}): no fast GPUDirect path.",
            closest_adapters(gpus, nic, nic_name.as_deref(), also),
            code
        ),
        Finding::NicAcrossHostBridge {
            gpus,
            nic,
            nic_name,
            code,
            also,
        } => format!(
            "{} under another host bridge ({}): GPUDirect RDMA crosses the root complex.",
            closest_adapters(gpus, nic, nic_name.as_deref(), also),
            code
        ),
        Finding::InjectionShare {
            gpus,
            nics,
            per_gpu_bytes_per_s,
            ..
        } => injection_share(*gpus, *nics, *per_gpu_bytes_per_s),
        // Not a placement kind: [`summary`] never sends one.
        other => other.name().to_string(),
    }
}

/// The host side of the path: the peer-memory module, the process's
/// binding, GPU against host buffers, a PCIe switch's uplink.
fn host_side_summary(f: &Finding) -> String {
    match f {
        Finding::NoPeerMemoryModule {
            gpus,
            gpu_driver,
            adapters,
            dma_buf,
            absent,
        } => no_peer_memory(*gpus, gpu_driver.as_deref(), adapters, *dma_buf, absent),
        Finding::ProcessFarFromGpu {
            gpus,
            gpu_numa_nodes,
            nics,
            near_gpus,
            cpus,
            cpu_nodes,
            mem_nodes,
            command,
            node_zero_assumed,
        } => process_far(
            (gpus, gpu_numa_nodes, nics, *near_gpus),
            (cpus.as_deref(), cpu_nodes, mem_nodes),
            (command.as_deref(), *node_zero_assumed),
        ),
        Finding::GpuBuffersBelowHost {
            test,
            device,
            size_bytes,
            gpu_bytes_per_s: g,
            host_bytes_per_s: h,
            registration,
        } => format!(
            "{test}{}: with GPU buffers{} {} against {} with host buffers at {} (measured, same adapter and message size): {:.0}% of it.",
            device
                .as_deref()
                .map(|d| format!(" on {d}"))
                .unwrap_or_default(),
            registration
                .words()
                .map(|w| format!(" (registered through {w})"))
                .unwrap_or_default(),
            gbs(*g),
            gbs(*h),
            describe_size(*size_bytes),
            100.0 * g / h
        ),
        Finding::SwitchUplinkOversubscribed {
            switch,
            uplink_link,
            uplink_bytes_per_s,
            devices,
            sum_bytes_per_s,
        } => format!(
            "PCIe switch with uplink {switch} ({uplink_link}, {} per direction): the {} devices under it ({}) can carry {} per direction together (each link at its top speed and negotiated width), {:.1}x the uplink. Traffic that leaves the switch from several of them at once shares it.",
            gbs(*uplink_bytes_per_s),
            devices.len(),
            devices
                .iter()
                .map(|(a, r)| format!("{a} at {}", gbs(*r)))
                .collect::<Vec<_>>()
                .join(", "),
            gbs(*sum_bytes_per_s),
            sum_bytes_per_s / uplink_bytes_per_s
        ),
        // Not a host-side kind: [`summary`] never sends one.
        other => other.name().to_string(),
    }
}

/// What a kind of finding says, in a few words, for the fleet index's
/// groups (`412 nodes: adapter across a host bridge`).
pub fn kind_title(kind: &str) -> &'static str {
    match kind {
        "host-hop-in-group" => "GPU pairs without a direct link",
        "silent-staging" => "peer copies staged through host memory",
        "peer-slower-than-staged" => "peer path slower than staging",
        "no-peer-path" => "GPU pairs with no peer path",
        "nccl-staged-path" => "NCCL staging GPU pairs through host memory",
        "nccl-no-gpudirect" => "NCCL without GPUDirect RDMA",
        "nccl-socket-fallback" => "NCCL on sockets beside RDMA adapters",
        "nic-on-other-socket" => "adapter on the other socket",
        "nic-across-host-bridge" => "adapter across a host bridge",
        "no-peer-memory-module" => "no peer-memory module for GPUDirect RDMA",
        "gpu-buffers-below-host" => "GPU buffers slower than host buffers",
        "process-far-from-gpu" => "process bound away from its GPUs",
        "injection-share" => "fewer adapters than GPUs",
        "pcie-width-down" => "PCIe link narrower than it can run",
        "pcie-speed-down" => "PCIe link slower than it can run",
        "switch-uplink-oversubscribed" => "PCIe switch uplink shared",
        "nvlinks-inactive" => "NVLinks down",
        "rdma-port-down" => "RDMA port down",
        "rdma-port-unused" => "RDMA port unused",
        "rdma-port-below-rate" => "RDMA port below its fabric's rate",
        "port-errors-grew" => "link error counters grew",
        "congestion-signals" => "congestion signals grew",
        "pause-without-ecn" => "pause frames without ECN or CNPs",
        "wrong-results" => "wrong results",
        "data-check-failed" => "a copy's data check failed",
        "tool-failed" => "a tool failed",
        "truncated" => "a transcript stops early",
        "far-below-ceiling" => "figures far below their path's ceiling",
        "bits-not-bytes" => "figures in bits",
        "bidirectional-sum" => "bidirectional sums",
        _ => "other",
    }
}

/// One sentence with the numbers, for people (escaped where shown).
pub fn summary(f: &Finding) -> String {
    match f {
        Finding::HostHopInGroup {
            a,
            b,
            class,
            code,
            direct_pairs,
            other_pairs,
            gpu_pairs,
            unknown_pairs,
            routable,
        } => host_hop(
            (a, b),
            *class,
            code,
            (*direct_pairs, *other_pairs, *gpu_pairs, *unknown_pairs),
            *routable,
        ),
        Finding::SilentStaging {
            src,
            dst,
            enabled_bytes_per_s,
            disabled_bytes_per_s,
            size_bytes,
            pairs,
            p2p_status,
        } => peer::silent_staging(
            (src, dst),
            (*enabled_bytes_per_s, *disabled_bytes_per_s),
            *size_bytes,
            *pairs,
            p2p_status.as_deref(),
        ),
        Finding::PeerSlowerThanStaged {
            src,
            dst,
            enabled_bytes_per_s,
            disabled_bytes_per_s,
            size_bytes,
            pairs,
        } => peer::slower_than_staged(
            (src, dst),
            (*enabled_bytes_per_s, *disabled_bytes_per_s),
            *size_bytes,
            *pairs,
        ),
        Finding::NoPeerPath {
            a,
            b,
            status,
            pairs,
        } => peer::no_peer_path((a, b), status, *pairs),
        Finding::NcclStagedPath { .. }
        | Finding::NcclNoGpuDirect { .. }
        | Finding::NcclSocketFallback { .. } => nccl_summary(f),
        Finding::FarBelowCeiling {
            test,
            src,
            dst,
            measured_bytes_per_s: bw,
            peak,
            size_bytes,
            software_rdma,
            ceiling,
        } => far_below(
            test,
            (src.as_deref(), dst.as_deref()),
            (*bw, *peak, *size_bytes),
            *software_rdma,
            ceiling,
        ),
        Finding::NicOnOtherSocket { .. }
        | Finding::NicAcrossHostBridge { .. }
        | Finding::InjectionShare { .. } => placement_summary(f),
        Finding::NoPeerMemoryModule { .. }
        | Finding::ProcessFarFromGpu { .. }
        | Finding::GpuBuffersBelowHost { .. }
        | Finding::SwitchUplinkOversubscribed { .. } => host_side_summary(f),
        Finding::PcieWidthDown { .. }
        | Finding::PcieSpeedDown { .. }
        | Finding::NvlinksInactive { .. }
        | Finding::RdmaPortUnused { .. }
        | Finding::RdmaPortDown { .. }
        | Finding::RdmaPortBelowRate { .. }
        | Finding::PortErrorsGrew { .. }
        | Finding::CongestionSignals { .. } => link_summary(f),
        Finding::PauseWithoutEcn {
            device,
            port,
            pauses,
            flat,
        } => peer::pause_without_ecn(device, *port, pauses, flat),
        Finding::WrongResults { .. }
        | Finding::DataCheckFailed { .. }
        | Finding::ToolFailed { .. }
        | Finding::BitsNotBytes { .. }
        | Finding::BidirectionalSum { .. }
        | Finding::Truncated { .. } => tool_output_summary(f),
    }
}

/// Why a finding has its severity: its row's condition and reason, and
/// what lowered it where every figure it rests on is graded C.
pub fn reason(d: &crate::diagnosis::Diagnosed) -> String {
    let row = d.why.row();
    let mut s = format!(
        "{} (severity table: {} when {}).",
        row.reason,
        row.severity.as_str(),
        row.when
    );
    if d.weak_figures {
        s.push_str(" Lowered to info: every figure it rests on is graded C.");
    }
    s
}

/// The markdown explaining a kind: what it means and what to do.
pub fn explanation(f: &Finding) -> &'static str {
    match f {
        Finding::HostHopInGroup { .. } => {
            include_str!("../../templates/explain/host-hop-in-group.md")
        }
        Finding::SilentStaging { .. } => include_str!("../../templates/explain/silent-staging.md"),
        Finding::NoPeerPath { .. } => include_str!("../../templates/explain/no-peer-path.md"),
        Finding::PeerSlowerThanStaged { .. } => {
            include_str!("../../templates/explain/peer-slower-than-staged.md")
        }
        Finding::NcclStagedPath { .. } => {
            include_str!("../../templates/explain/nccl-staged-path.md")
        }
        Finding::NcclNoGpuDirect { .. } => {
            include_str!("../../templates/explain/nccl-no-gpudirect.md")
        }
        Finding::NcclSocketFallback { .. } => {
            include_str!("../../templates/explain/nccl-socket-fallback.md")
        }
        Finding::PauseWithoutEcn { .. } => {
            include_str!("../../templates/explain/pause-without-ecn.md")
        }
        Finding::FarBelowCeiling {
            software_rdma: true,
            ..
        } => include_str!("../../templates/explain/far-below-ceiling-software-rdma.md"),
        Finding::FarBelowCeiling { .. } => {
            include_str!("../../templates/explain/far-below-ceiling.md")
        }
        Finding::NicOnOtherSocket { .. } => {
            include_str!("../../templates/explain/nic-on-other-socket.md")
        }
        Finding::NicAcrossHostBridge { .. } => {
            include_str!("../../templates/explain/nic-across-host-bridge.md")
        }
        Finding::InjectionShare { .. } => {
            include_str!("../../templates/explain/injection-share.md")
        }
        Finding::NoPeerMemoryModule { .. } => {
            include_str!("../../templates/explain/no-peer-memory-module.md")
        }
        Finding::ProcessFarFromGpu { .. } => {
            include_str!("../../templates/explain/process-far-from-gpu.md")
        }
        Finding::GpuBuffersBelowHost {
            registration: crate::evidence::answers::GpuRegistration::DmaBuf,
            ..
        } => {
            include_str!("../../templates/explain/gpu-buffers-below-host-dmabuf.md")
        }
        Finding::GpuBuffersBelowHost { .. } => {
            include_str!("../../templates/explain/gpu-buffers-below-host.md")
        }
        Finding::PcieWidthDown { .. } => include_str!("../../templates/explain/pcie-width-down.md"),
        Finding::PcieSpeedDown { .. } => include_str!("../../templates/explain/pcie-speed-down.md"),
        Finding::SwitchUplinkOversubscribed { .. } => {
            include_str!("../../templates/explain/switch-uplink-oversubscribed.md")
        }
        Finding::NvlinksInactive { .. } => {
            include_str!("../../templates/explain/nvlinks-inactive.md")
        }
        Finding::RdmaPortDown { .. } => include_str!("../../templates/explain/rdma-port-down.md"),
        Finding::RdmaPortUnused { .. } => {
            include_str!("../../templates/explain/rdma-port-unused.md")
        }
        Finding::RdmaPortBelowRate { .. } => {
            include_str!("../../templates/explain/rdma-port-below-rate.md")
        }
        Finding::PortErrorsGrew { .. } => {
            include_str!("../../templates/explain/port-errors-grew.md")
        }
        Finding::CongestionSignals { .. } => {
            include_str!("../../templates/explain/congestion-signals.md")
        }
        Finding::WrongResults { .. } => include_str!("../../templates/explain/wrong-results.md"),
        Finding::DataCheckFailed { .. } => {
            include_str!("../../templates/explain/data-check-failed.md")
        }
        Finding::ToolFailed { .. } => include_str!("../../templates/explain/tool-failed.md"),
        Finding::BitsNotBytes { .. } => include_str!("../../templates/explain/bits-not-bytes.md"),
        Finding::BidirectionalSum { .. } => {
            include_str!("../../templates/explain/bidirectional-sum.md")
        }
        Finding::Truncated { .. } => include_str!("../../templates/explain/truncated.md"),
    }
}

mod affinity;
use affinity::process_far;
mod link;
use link::link_summary;
mod peer;
mod tool_output;
use tool_output::tool_output_summary;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod kind_titles {
    #[test]
    fn every_kind_has_a_title_of_its_own() {
        let mut seen = std::collections::BTreeSet::new();
        for k in crate::diagnosis::Finding::KINDS {
            let t = super::kind_title(k);
            assert_ne!(t, "other", "{k}");
            assert!(seen.insert(t), "{k}: `{t}` twice");
        }
    }
}
