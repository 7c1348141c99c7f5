//! The host's system facts: kernel, NUMA nodes, the interconnect drivers
//! loaded, the load average, and where this process may run.

use std::path::Path;

use crate::bundle::{Driver, NumaNode, System};
use crate::collect::sysfs::Root;

/// A field of this process's `/proc/self/status` (`Cpus_allowed_list`...).
fn status_field(root: &Root, key: &str) -> Option<String> {
    // The process's own status is always the real one, not the saved tree's.
    let s = if root.0 == Path::new("/") {
        std::fs::read_to_string("/proc/self/status").ok()?
    } else {
        String::from_utf8(crate::fs::read_capped(&root.path("/proc/self/status"), 1 << 20).ok()?)
            .ok()?
    };
    s.lines().find_map(|l| {
        l.strip_prefix(key)
            .map(|v| v.trim_start_matches(':').trim().to_string())
    })
}

/// Whether the kernel has dma-buf: its sysfs directory, else the kernel's
/// config; `None` when neither says.
fn dma_buf(root: &Root, release: Option<&str>) -> Option<bool> {
    if std::fs::metadata(root.path("/sys/kernel/dmabuf")).is_ok() {
        return Some(true);
    }
    let config = root.path(&format!("/boot/config-{}", release?));
    let bytes = crate::fs::read_capped(&config, 16 << 20).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    Some(text.lines().any(|l| {
        l.trim() == "CONFIG_DMA_SHARED_BUFFER=y" || l.trim() == "CONFIG_DMA_SHARED_BUFFER=m"
    }))
}

/// The kernel, NUMA nodes, loaded drivers, load and this process's
/// placement.
pub(super) fn system(root: &Root) -> System {
    let mut numa = Vec::new();
    if let Ok(rd) = std::fs::read_dir(root.path("/sys/devices/system/node")) {
        let mut nodes: Vec<u32> = rd
            .filter_map(|e| {
                e.ok()?
                    .file_name()
                    .to_str()?
                    .strip_prefix("node")?
                    .parse()
                    .ok()
            })
            .collect();
        nodes.sort_unstable();
        for n in nodes {
            if let Some(cpus) =
                root.read(&root.path(&format!("/sys/devices/system/node/node{n}/cpulist")))
            {
                numa.push(NumaNode { node: n, cpus });
            }
        }
    }
    let mut drivers = Vec::new();
    for m in [
        "nvidia",
        "amdgpu",
        "mlx5_core",
        "mlx4_core",
        "ib_core",
        "efa",
        "ionic",
        // GPUDirect RDMA peer memory (NVIDIA, legacy NVIDIA, AMD with MLNX_OFED).
        "nvidia_peermem",
        "nv_peer_mem",
        "amdp2p",
        "ib_peer_mem",
    ] {
        if let Some(v) = root.read(&root.path(&format!("/sys/module/{m}/version"))) {
            drivers.push(Driver {
                module: m.into(),
                version: v,
            });
        } else if std::fs::metadata(root.path(&format!("/sys/module/{m}"))).is_ok() {
            drivers.push(Driver {
                module: m.into(),
                version: "loaded (version not exported)".into(),
            });
        }
    }
    let kernel = root.read(&root.path("/proc/sys/kernel/osrelease"));
    System {
        dma_buf: dma_buf(root, kernel.as_deref()),
        kernel,
        cpus_allowed: status_field(root, "Cpus_allowed_list"),
        mems_allowed: status_field(root, "Mems_allowed_list"),
        numa_nodes: numa,
        drivers,
        load_average: root.read(&root.path("/proc/loadavg")),
        collected_unix_s: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        redacted: false,
    }
}
