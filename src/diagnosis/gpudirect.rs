//! Whether the direct GPU-to-adapter path (GPUDirect RDMA, seed section
//! 3.5) is there at all, and what it delivers: a live node with GPUs and
//! RDMA adapters but no peer-memory module, and perftest runs where GPU
//! buffers move far less than host buffers on the same adapter and size.

use std::collections::BTreeMap;

use super::{Diagnosed, Finding, Severity, push};
use crate::bundle::Bundle;
use crate::evidence::measurement::{Buffers, Direction, Kind, Measurement, Statistic};
use crate::facts::NodeFacts;

/// Kernel modules that let an RDMA adapter reach GPU memory.
pub const PEER_MEMORY_MODULES: [&str; 4] =
    ["nvidia_peermem", "nv_peer_mem", "amdp2p", "ib_peer_mem"];

/// GPU-buffer bandwidth below this fraction of host-buffer bandwidth (same
/// adapter, test and message size) is flagged: the seed's fallback costs
/// two to five times, so 75% leaves room for ordinary run-to-run spread.
pub const GPU_BELOW_HOST: f64 = 0.75;

/// A live collection saw GPUs and RDMA adapters and no peer-memory module:
/// unless dma-buf carries it, GPUDirect RDMA falls back to host staging.
pub(super) fn peer_memory(b: &Bundle, facts: &NodeFacts, out: &mut Vec<Diagnosed>) {
    let Some(sys) = &b.system else { return };
    let loaded = |m: &str| sys.drivers.iter().any(|d| d.module == m);
    if PEER_MEMORY_MODULES.iter().any(|m| loaded(m)) {
        return;
    }
    let gpu_driver = ["nvidia", "amdgpu"].into_iter().find(|m| loaded(m));
    let gpus = facts.gpus.len();
    if gpus == 0 && gpu_driver.is_none() {
        return;
    }
    let adapters: Vec<String> = b.rdma.iter().map(|d| d.name.clone()).collect();
    if adapters.is_empty() {
        return;
    }
    // dma-buf may carry the path instead (NVIDIA open kernel modules,
    // upstream amdgpu): then this is worth knowing, not a fault.
    let severity = if sys.dma_buf == Some(true) {
        Severity::Info
    } else {
        Severity::Warning
    };
    let evidence = b.rdma.iter().map(|d| d.source.clone()).collect();
    push(
        out,
        severity,
        Finding::NoPeerMemoryModule {
            gpus,
            gpu_driver: gpu_driver.map(str::to_string),
            adapters,
            dma_buf: sys.dma_buf,
        },
        evidence,
    );
}

/// Which runs compare: one tool, test kind, adapter, direction, queue
/// pairs and depth (a 1-QP run is no match for a 16-QP run), size and
/// statistic.
type RunKey = (
    String,
    Kind,
    Option<String>,
    Direction,
    Settings,
    u64,
    Statistic,
);

/// Queue pairs and TX depth as the transcript states them.
type Settings = (Option<u32>, Option<u32>);

/// A [`RunKey`] without the message size.
type SeriesKey = (String, Kind, Option<String>, Direction, Settings, Statistic);

/// perftest with GPU buffers (`--use_cuda`, `--use_rocm`) against the same
/// test with host buffers: the largest message size both ran, per adapter
/// and test, flagged when the GPU figure is far below.
pub(super) fn gpu_vs_host_buffers(b: &Bundle, out: &mut Vec<Diagnosed>) {
    let rdma = |m: &&Measurement| {
        matches!(
            m.kind,
            Kind::RdmaWrite | Kind::RdmaRead | Kind::RdmaSend | Kind::RdmaAtomic
        ) && m.bandwidth_bytes_per_s.is_some()
            // A peak repeats its run's average: one finding, from the average.
            && m.statistic != Statistic::Peak
    };
    type Both<'a> = (Option<&'a Measurement>, Option<&'a Measurement>);
    let mut runs: BTreeMap<RunKey, Both<'_>> = BTreeMap::new();
    for m in b.measurements.iter().filter(rdma) {
        let Some(size) = m.size_bytes else { continue };
        let key = (
            m.tool.to_string(),
            m.kind,
            m.src.as_ref().map(|s| s.to_string()),
            m.direction,
            (m.qps, m.queue_depth),
            size,
            m.statistic,
        );
        let e = runs.entry(key).or_default();
        // perftest uses host memory unless told to use a GPU's, and says
        // so when it does: a run without that line is a host-buffer run.
        let slot = if m.buffers == Buffers::Device {
            &mut e.0
        } else if matches!(
            m.buffers,
            Buffers::Unknown | Buffers::Host | Buffers::HostPinned
        ) {
            &mut e.1
        } else {
            continue;
        };
        slot.get_or_insert(m);
    }
    // Per (tool, kind, adapter, direction, statistic): the largest size both ran.
    let mut best: BTreeMap<SeriesKey, (u64, &Measurement, &Measurement)> = BTreeMap::new();
    for ((tool, kind, dev, dir, set, size, stat), both) in &runs {
        let (Some(gpu), Some(host)) = both else {
            continue;
        };
        let k = (tool.clone(), *kind, dev.clone(), *dir, *set, *stat);
        if best.get(&k).is_none_or(|(s, _, _)| size > s) {
            best.insert(k, (*size, gpu, host));
        }
    }
    for ((_, _, dev, _, _, _), (size, gpu, host)) in best {
        let (Some(g), Some(h)) = (gpu.bandwidth_bytes_per_s, host.bandwidth_bytes_per_s) else {
            continue;
        };
        if h <= 0.0 || g >= GPU_BELOW_HOST * h {
            continue;
        }
        push(
            out,
            Severity::Warning,
            Finding::GpuBuffersBelowHost {
                test: gpu.test.to_string(),
                device: dev,
                size_bytes: size,
                gpu_bytes_per_s: g,
                host_bytes_per_s: h,
                registration: match &gpu.questions.path {
                    crate::evidence::answers::Path::Rdma(r) => r.registration,
                    _ => Default::default(),
                },
            },
            vec![gpu.source.clone(), host.source.clone()],
        );
    }
}
