//! Whether the direct GPU-to-adapter path (GPUDirect RDMA, seed section
//! 3.5) is there at all, and what it delivers: a node with GPUs and RDMA
//! adapters but no peer-memory module (live, or by its `lsmod` listings),
//! and perftest runs where GPU
//! buffers move far less than host buffers on the same adapter and size.

use std::collections::BTreeMap;

use super::{Diagnosed, Finding, Why, push};
use crate::bundle::Bundle;
use crate::evidence::Source;
use crate::evidence::lsmod::{self, Said};
use crate::evidence::measurement::{Buffers, Direction, Kind, Measurement, Statistic};
use crate::facts::NodeFacts;

/// Kernel modules that let an RDMA adapter reach GPU memory.
pub const PEER_MEMORY_MODULES: [&str; 4] =
    ["nvidia_peermem", "nv_peer_mem", "amdp2p", "ib_peer_mem"];

/// The two of them that serve NVIDIA GPUs: the driver's own (R470 on) and
/// the Mellanox one before it; only one is ever loaded.
pub const NVIDIA_PEER_MEMORY_MODULES: [&str; 2] = ["nvidia_peermem", "nv_peer_mem"];

/// GPU-buffer bandwidth below this fraction of host-buffer bandwidth (same
/// adapter, test and message size) is flagged: the seed's fallback costs
/// two to five times, so 75% leaves room for ordinary run-to-run spread.
pub const GPU_BELOW_HOST: f64 = 0.75;

/// GPUs and RDMA adapters and no peer-memory module: unless dma-buf
/// carries it, GPUDirect RDMA falls back to host staging. The modules are
/// a live collection's (`system.drivers`, every one read), or what `lsmod`
/// listings say: there only the NVIDIA pair (`nvidia_peermem`,
/// `nv_peer_mem`) decides, each ruled out by a listing
/// (`evidence::lsmod`); an AMD node's path may live in amdgpu itself,
/// which no listing shows.
pub(super) fn peer_memory(b: &Bundle, facts: &NodeFacts, out: &mut Vec<Diagnosed>) {
    let live = b.system.as_ref();
    if live.is_none() && b.modules.is_empty() {
        return;
    }
    let listed = |m: &str| lsmod::state(&b.modules, m);
    let loaded = |m: &str| {
        live.is_some_and(|s| s.drivers.iter().any(|d| d.module == m))
            || matches!(listed(m), Some(Said::Loaded(_)))
    };
    if PEER_MEMORY_MODULES.iter().any(|m| loaded(m)) {
        return;
    }
    let gpu_driver = ["nvidia", "amdgpu"].into_iter().find(|m| loaded(m));
    let gpus = facts.gpus.len();
    if gpus == 0 && gpu_driver.is_none() {
        return;
    }
    let verbs = b.rdma.iter().filter(|d| !has_own_gpu_path(&d.name));
    let mut evidence: Vec<Source> = verbs.clone().map(|d| d.source.clone()).collect();
    let mut adapters: Vec<String> = verbs.map(|d| d.name.clone()).collect();
    if b.rdma.is_empty() {
        // nvidia-smi topo -m names the RDMA devices it sees (`NIC0: mlx5_0`).
        for n in &facts.nics {
            let name = n.name.clone().unwrap_or_else(|| n.id.clone());
            if !has_own_gpu_path(&name) {
                adapters.push(name);
                evidence.push(n.source.clone());
            }
        }
    }
    if adapters.is_empty() {
        return;
    }
    let absent: Vec<String> = match live {
        Some(_) => PEER_MEMORY_MODULES.iter().map(|m| m.to_string()).collect(),
        None => {
            let nvidia = gpu_driver == Some("nvidia")
                || (gpu_driver.is_none() && b.transcripts.iter().any(|t| t.tool.is_nvidia_smi()));
            if !nvidia {
                return;
            }
            let mut absent = Vec::new();
            for m in NVIDIA_PEER_MEMORY_MODULES {
                let Some(Said::Absent(src)) = listed(m) else {
                    return;
                };
                absent.push(m.to_string());
                evidence.push(src);
            }
            absent
        }
    };
    let dma_buf = live.and_then(|s| s.dma_buf);
    // dma-buf may carry the path instead (NVIDIA open kernel modules,
    // upstream amdgpu): then this is worth knowing, not a fault.
    let why = if dma_buf == Some(true) {
        Why::NoPeerMemoryModuleDmaBuf
    } else {
        Why::NoPeerMemoryModule
    };
    evidence.sort_by(|a, b| (&*a.file, a.line).cmp(&(&*b.file, b.line)));
    evidence.dedup();
    push(
        out,
        why,
        Finding::NoPeerMemoryModule {
            gpus,
            gpu_driver: gpu_driver.map(str::to_string),
            adapters,
            dma_buf,
            absent,
        },
        evidence,
    );
}

/// An AWS EFA device (`efa_0`, or `rdmap16s27` as rdma-core names a
/// device whose link layer is unspecified): the EFA driver reaches GPU
/// memory itself, through the NVIDIA driver's P2P interface or dma-buf
/// (its log says `efa: Acquired peer memory using P2P`), so no peer-memory
/// module is missing for it.
pub(crate) fn has_own_gpu_path(name: &str) -> bool {
    name.starts_with("efa") || name.starts_with("rdmap")
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
            Why::GpuBuffersBelowHost,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{Host, Origin};
    use crate::diagnosis::diagnose;
    use crate::evidence::rdma::RdmaDevice;

    /// A node of one adapter and the (synthetic) paste `lsmod`.
    fn node(lsmod: &str) -> Bundle {
        let mut b = Bundle::new(Host {
            name: "n".into(),
            origin: Origin::Ingested,
        });
        b.rdma.push(RdmaDevice::new(
            "mlx5_0",
            Source {
                file: "ibstat.txt".into(),
                line: 1,
            },
        ));
        b.absorb(crate::ingest::read_transcript(
            "lsmod.txt",
            lsmod.as_bytes(),
        ));
        b
    }

    fn lines(d: &Diagnosed) -> Vec<(&str, usize)> {
        d.evidence.iter().map(|s| (&*s.file, s.line)).collect()
    }

    #[test]
    fn an_lsmod_listing_that_rules_out_both_nvidia_modules_is_warned() {
        // Synthetic: the nvidia row's holders name neither module, and
        // `grep nvidia` would have printed an nvidia_peermem row.
        let b = node(
            "$ lsmod | grep nvidia\n\
             nvidia_uvm           1523712  0\n\
             nvidia_modeset       1306624  1 nvidia_drm\n\
             nvidia              56598528  12 nvidia_uvm,nvidia_modeset\n",
        );
        let d = diagnose(&b);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].severity, crate::diagnosis::Severity::Warning);
        let Finding::NoPeerMemoryModule {
            gpu_driver,
            adapters,
            dma_buf,
            absent,
            ..
        } = &d[0].finding
        else {
            unreachable!()
        };
        assert_eq!(
            (gpu_driver.as_deref(), adapters.as_slice(), *dma_buf),
            (Some("nvidia"), &["mlx5_0".to_string()][..], None)
        );
        assert_eq!(absent, &["nvidia_peermem", "nv_peer_mem"]);
        // The adapter, the grep's first row (its listing rules out
        // nvidia_peermem) and the nvidia row whose holders leave out
        // nv_peer_mem.
        assert_eq!(
            lines(&d[0]),
            [("ibstat.txt", 1), ("lsmod.txt", 2), ("lsmod.txt", 4)]
        );
    }

    #[test]
    fn an_efa_device_is_no_adapter_a_peer_memory_module_serves() {
        let nvidia = "$ lsmod | grep nvidia\n\
                      nvidia              56598528  12 nvidia_uvm,nvidia_modeset\n";
        let mut b = node(nvidia);
        b.rdma[0].name = "rdmap16s27".into();
        assert!(diagnose(&b).is_empty());
        // Beside a verbs adapter, only that one is named.
        let mut mlx = b.rdma[0].clone();
        mlx.name = "mlx5_0".into();
        b.rdma.push(mlx);
        let d = diagnose(&b);
        let [
            Diagnosed {
                finding: Finding::NoPeerMemoryModule { adapters, .. },
                ..
            },
        ] = &d[..]
        else {
            panic!("{d:?}")
        };
        assert_eq!(adapters, &["mlx5_0"]);
    }

    #[test]
    fn a_listing_that_shows_a_module_or_not_the_driver_says_nothing() {
        // Loaded: silent.
        let b = node(
            "$ lsmod | grep peer\nnvidia_peermem         16384  0\n\
             nvidia              56598528  12 nvidia_uvm,nvidia_peermem\n",
        );
        assert!(diagnose(&b).is_empty());
        // Both ruled out, but no sign of an NVIDIA GPU or driver.
        let b = node("$ lsmod | grep peer\n$ lsmod | grep nvidia_peermem\n");
        assert_eq!(b.modules.len(), 2);
        assert!(diagnose(&b).is_empty());
        // The driver without a command line or holders naming neither:
        // nv_peer_mem is not ruled out.
        let b = node("nvidia_uvm           1523712  0\nnvidia_drm             73728  0\n");
        assert!(diagnose(&b).is_empty());
    }
}
