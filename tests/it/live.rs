//! Live collection: the real sysfs of the test machine, SYNTHETIC sysfs
//! trees (a two-socket node with PCIe switches, 8 GPUs and 4 NICs, one
//! link trained down and one narrow switch uplink), and fake vendor tools
//! on PATH that hang, fail and print junk.

use crate::common::wr;
use std::path::Path;
use std::time::{Duration, Instant};
use wire_report::render::answers::answers;

use predicates::prelude::*;
use wire_report::bundle::ProbeStatus;
use wire_report::bundle::{Bundle, ProblemKind};
use wire_report::collect::live::{self, Options};
use wire_report::diagnosis::{self, Finding};
use wire_report::evidence::topology::LinkClass;

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel.trim_start_matches('/'));
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, format!("{text}\n")).unwrap();
}

/// One PCI function of the synthetic tree.
struct Fn<'a> {
    path: &'a str,
    class: &'a str,
    vendor: &'a str,
    link: (&'a str, u32, &'a str, u32),
    numa: i32,
    cpus: &'a str,
}

fn add(root: &Path, f: &Fn<'_>) {
    let dir = format!("/sys/devices/{}", f.path);
    write(root, &format!("{dir}/class"), f.class);
    write(root, &format!("{dir}/vendor"), f.vendor);
    write(root, &format!("{dir}/device"), "0x2330");
    write(root, &format!("{dir}/current_link_speed"), f.link.0);
    write(
        root,
        &format!("{dir}/current_link_width"),
        &f.link.1.to_string(),
    );
    write(root, &format!("{dir}/max_link_speed"), f.link.2);
    write(
        root,
        &format!("{dir}/max_link_width"),
        &f.link.3.to_string(),
    );
    write(root, &format!("{dir}/numa_node"), &f.numa.to_string());
    write(root, &format!("{dir}/local_cpulist"), f.cpus);
    let addr = f.path.rsplit('/').next().unwrap();
    let link = root.join("sys/bus/pci/devices").join(addr);
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(format!("../../../devices/{}", f.path), link).unwrap();
}

/// SYNTHETIC: two sockets (pci0000:00 on NUMA 0, pci0000:80 on NUMA 1),
/// two PCIe switches per socket, each with two GPUs and one NIC. GPU5 is
/// trained down to x8 at 8 GT/s; the uplink of the second switch of
/// socket 1 runs at x8 of x16.
fn synthetic_tree(root: &Path) {
    let full = ("32.0 GT/s PCIe", 16, "32.0 GT/s PCIe", 16);
    write(root, "/proc/sys/kernel/hostname", "synthetic-node");
    write(root, "/proc/sys/kernel/osrelease", "6.1.0-synthetic");
    write(root, "/proc/loadavg", "0.00 0.00 0.00 1/100 1");
    write(root, "/sys/devices/system/node/node0/cpulist", "0-31");
    write(root, "/sys/devices/system/node/node1/cpulist", "32-63");
    let mut gpu = 0;
    let mut nic = 0;
    for (socket, rc, cpus) in [(0, "00", "0-31"), (1, "80", "32-63")] {
        for sw in 0..2 {
            let bus = if rc == "00" {
                0x10 + sw * 0x10
            } else {
                0x90 + sw * 0x10
            };
            let rp = format!("pci0000:{rc}/0000:{rc}:{:02x}.0", sw + 1);
            add(
                root,
                &Fn {
                    path: &rp,
                    class: "0x060400",
                    vendor: "0x8086",
                    link: full,
                    numa: socket,
                    cpus,
                },
            );
            let up = format!("{rp}/0000:{bus:02x}:00.0");
            let uplink = if socket == 1 && sw == 1 {
                ("32.0 GT/s PCIe", 8, "32.0 GT/s PCIe", 16)
            } else {
                full
            };
            add(
                root,
                &Fn {
                    path: &up,
                    class: "0x060400",
                    vendor: "0x1000",
                    link: uplink,
                    numa: socket,
                    cpus,
                },
            );
            for port in 0..3 {
                let down = format!("{up}/0000:{:02x}:{port:02x}.0", bus + 1);
                add(
                    root,
                    &Fn {
                        path: &down,
                        class: "0x060400",
                        vendor: "0x1000",
                        link: full,
                        numa: socket,
                        cpus,
                    },
                );
                let dev = format!("{down}/0000:{:02x}:00.0", bus + 2 + port);
                if port < 2 {
                    let link = if gpu == 5 {
                        ("8.0 GT/s PCIe", 8, "32.0 GT/s PCIe", 16)
                    } else {
                        full
                    };
                    add(
                        root,
                        &Fn {
                            path: &dev,
                            class: "0x030200",
                            vendor: "0x10de",
                            link,
                            numa: socket,
                            cpus,
                        },
                    );
                    gpu += 1;
                } else {
                    add(
                        root,
                        &Fn {
                            path: &dev,
                            class: "0x020700",
                            vendor: "0x15b3",
                            link: full,
                            numa: socket,
                            cpus,
                        },
                    );
                    add_ib_port(root, &dev, nic);
                    nic += 1;
                }
            }
        }
    }
}

/// The InfiniBand port of NIC `nic` at `dev`: active, NDR (HDR for NIC 3).
fn add_ib_port(root: &Path, dev: &str, nic: usize) {
    let name = format!("mlx5_{nic}");
    std::fs::create_dir_all(root.join(format!("sys/devices/{dev}/infiniband/{name}"))).unwrap();
    let port = format!("/sys/class/infiniband/{name}/ports/1");
    write(root, &format!("{port}/state"), "4: ACTIVE");
    write(root, &format!("{port}/phys_state"), "5: LinkUp");
    write(
        root,
        &format!("{port}/rate"),
        if nic == 3 {
            "200 Gb/sec (4X HDR)"
        } else {
            "400 Gb/sec (4X NDR)"
        },
    );
    write(root, &format!("{port}/link_layer"), "InfiniBand");
    write(root, &format!("{port}/counters/port_rcv_errors"), "3");
    write(root, &format!("{port}/hw_counters/rnr_nak_retry_err"), "0");
    write(
        root,
        &format!("/sys/class/infiniband/{name}/node_guid"),
        &format!("a088:c203:00da:634{nic}"),
    );
    write(
        root,
        &format!("/sys/class/infiniband/{name}/fw_ver"),
        "28.41.1000",
    );
    // As mlx5 states its model (ConnectX-7): one kind for all four, so the
    // HDR port is trained down, not another adapter.
    write(
        root,
        &format!("/sys/class/infiniband/{name}/hca_type"),
        "MT4129",
    );
}

fn collect(root: &Path) -> Bundle {
    let opts = Options {
        root: root.to_path_buf(),
        redact: false,
        progress: false,
        tool_timeout: Duration::from_secs(2),
        sweep: None,
        announce_plans: false,
        benchmarks: None,
        pair: None,
    };
    live::collect(&opts).bundle
}

#[test]
fn synthetic_two_socket_tree_gives_classes_links_and_ports() {
    let d = tempfile::tempdir().unwrap();
    synthetic_tree(d.path());
    let b = collect(d.path());
    let t = &b.topology;
    assert_eq!(b.host.name, "synthetic-node");
    assert_eq!(t.gpus().count(), 8);
    assert_eq!(
        t.devices
            .iter()
            .filter(|x| x.kind == wire_report::evidence::topology::DeviceKind::Nic)
            .count(),
        4
    );
    let class = |a: &str, c: &str| t.link(a, c).unwrap().class;
    assert_eq!(class("GPU0", "GPU1"), LinkClass::PcieSwitch);
    assert_eq!(class("GPU0", "GPU2"), LinkClass::PcieHost);
    assert_eq!(class("GPU0", "GPU4"), LinkClass::CrossSocket);
    assert_eq!(class("GPU0", "NIC0"), LinkClass::PcieSwitch);
    assert_eq!(class("GPU6", "NIC3"), LinkClass::PcieSwitch);
    assert_eq!(t.device("NIC2").unwrap().name.as_deref(), Some("mlx5_2"));
    assert_eq!(t.device("GPU4").unwrap().numa_node, Some(1));
    // The GPU trained down and the narrow uplink are both in pcie[], the
    // uplink as a bridge on GPU6's chain.
    let gpu5 = b.pcie.iter().find(|p| p.address == "0000:93:00.0").unwrap();
    assert_eq!(
        (
            gpu5.current_width_lanes,
            gpu5.max_width_lanes,
            gpu5.current_speed_gt_per_s
        ),
        (Some(8), Some(16), Some(8.0))
    );
    let gpu6 = b
        .pcie
        .iter()
        .filter(|p| p.role.as_deref() == Some("gpu"))
        .nth(6)
        .unwrap();
    let uplink = b
        .pcie
        .iter()
        .find(|p| p.address == gpu6.upstream[1])
        .unwrap();
    assert_eq!(
        (
            uplink.role.as_deref(),
            uplink.current_width_lanes,
            uplink.max_width_lanes
        ),
        (Some("bridge"), Some(8), Some(16))
    );
    // RDMA ports from sysfs, counters with both readings and the delta.
    let p = &b.rdma.iter().find(|x| x.name == "mlx5_3").unwrap().ports[0];
    assert_eq!(
        (p.active, p.link_up, p.rate_bytes_per_s),
        (Some(true), Some(true), Some(25e9))
    );
    let c = p
        .counters
        .iter()
        .find(|c| c.name == "port_rcv_errors")
        .unwrap();
    assert_eq!((c.start, c.end, c.delta), (3, 3, 0));
    // The diagnosis sees the narrow links and the slower port.
    let found = diagnosis::diagnose(&b);
    let widths = found
        .iter()
        .filter(|f| matches!(f.finding, Finding::PcieWidthDown { .. }))
        .count();
    assert_eq!(widths, 2, "{found:#?}");
    assert!(found.iter().any(
        |f| matches!(&f.finding, Finding::RdmaPortBelowRate { device, .. } if device == "mlx5_3")
    ));
    // And it renders.
    let site = wire_report::render::render_site(std::slice::from_ref(&b)).unwrap();
    assert!(site.files.contains_key("nodes/synthetic-node/index.html"));
}

#[test]
fn the_real_sysfs_of_this_machine() {
    let b = collect(Path::new("/"));
    // Whatever this machine has, the probes ran and say so.
    assert!(
        b.probes
            .iter()
            .any(|p| p.name.starts_with("sysfs /sys/bus/pci") && p.status == ProbeStatus::Ok)
    );
    assert!(b.system.as_ref().unwrap().kernel.is_some());
    let gpus = b.topology.gpus().count();
    let pci_gpus = b
        .pcie
        .iter()
        .filter(|p| p.role.as_deref() == Some("gpu"))
        .count();
    assert_eq!(gpus, pci_gpus);
    let site = wire_report::render::render_site(std::slice::from_ref(&b)).unwrap();
    assert!(site.files.keys().any(|k| k.ends_with("index.html")));
}

fn fake_tool(dir: &Path, name: &str, body: &str) {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn fake_tools_that_hang_fail_and_print_junk() {
    let bin = tempfile::tempdir().unwrap();
    let ibstat = std::fs::canonicalize(
        "captures/h100-8nic-ndr400/ibstat-006-h100-cx7-ndr400-ib-all-active.txt",
    )
    .unwrap();
    fake_tool(bin.path(), "nvidia-smi", "sleep 1000");
    fake_tool(
        bin.path(),
        "rocm-smi",
        "echo 'rocm-smi: driver not loaded' >&2; exit 3",
    );
    fake_tool(bin.path(), "amd-smi", "head -c 300 /dev/urandom | base64");
    fake_tool(bin.path(), "ibstat", &format!("cat {}", ibstat.display()));
    let out = tempfile::tempdir().unwrap();
    let sys = tempfile::tempdir().unwrap();
    synthetic_tree(sys.path());
    let start = Instant::now();
    wr().env("PATH", format!("{}:/usr/bin:/bin", bin.path().display()))
        .args([
            "collect",
            "--quiet",
            "--no-sweep",
            "--tool-timeout",
            "1.5",
            "--sysfs-root",
        ])
        .arg(sys.path())
        .arg("--out")
        .arg(out.path())
        .assert()
        .success();
    let took = start.elapsed();
    // nvidia-smi hung once (1.5 s) and was not called three more times.
    assert!(took < Duration::from_secs(8), "{took:?}");
    let b: Bundle =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("bundle.json")).unwrap())
            .unwrap();
    let status = |name: &str| b.probes.iter().find(|p| p.name == name).unwrap().status;
    assert_eq!(status("nvidia-smi topo -m"), ProbeStatus::TimedOut);
    assert_eq!(status("nvidia-smi -q"), ProbeStatus::SkippedAfterHang);
    assert_eq!(status("rocm-smi --showtopo"), ProbeStatus::Failed);
    assert_eq!(status("amd-smi topology"), ProbeStatus::Unrecognized);
    assert_eq!(status("ibstat"), ProbeStatus::Ok);
    assert!(
        b.problems
            .iter()
            .any(|p| p.kind == ProblemKind::Probe && p.message.contains("driver not loaded"))
    );
    assert!(
        b.problems
            .iter()
            .any(|p| p.kind == ProblemKind::Probe && p.message.contains("did not finish"))
    );
    // The real ibstat transcript was saved, parsed and merged with sysfs.
    assert!(out.path().join("ibstat.txt").is_file());
    assert!(
        b.rdma
            .iter()
            .any(|d| d.name == "mlx5_0" && d.ca_type.as_deref() == Some("MT4129"))
    );
    // Collection went on: the sysfs tree is all there.
    assert_eq!(b.topology.gpus().count(), 8);
}

#[test]
fn cli_live_collect_on_this_machine_with_redaction_and_templates() {
    let out = tempfile::tempdir().unwrap();
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string();
    wr().env("SLURM_JOB_ID", "4242")
        .args([
            "collect",
            "--sizes",
            "4K,64K",
            "--repeats",
            "3",
            "--redact",
            "--out",
        ])
        .arg(out.path().join("{host}-{job}"))
        .assert()
        .success()
        .stderr(predicate::str::contains("wrote"));
    // Redacted: `{host}` is the host's placeholder, never its name.
    let placeholder = wire_report::bundle::redact::Redactor::new().host(&host);
    let dir = out.path().join(format!("{placeholder}-4242"));
    let text = std::fs::read_to_string(dir.join("bundle.json")).unwrap();
    let b: Bundle = serde_json::from_str(&text).unwrap();
    assert!(b.system.as_ref().unwrap().redacted);
    if host.len() >= 2 {
        assert!(
            !text.contains(&format!("\"{host}\"")),
            "hostname left in the bundle"
        );
    }
    let cells: Vec<_> = b
        .measurements
        .iter()
        .filter(|m| m.tool == "wire-report")
        .collect();
    assert_eq!(cells.len(), 6, "two sizes x median, fastest, slowest");
    assert!(cells.iter().all(|m| m.verification
        == wire_report::evidence::measurement::Verification::Checked { errors: 0 }));
    assert!(
        cells
            .iter()
            .all(|m| answers(m)[3].contains("untimed") && m.iterations == Some(3))
    );
    // The ticket summary carries the live figures (issue 32: it dropped
    // them, as a host copy is `host` to `host`).
    let md = wr()
        .args(["render", "--format", "md"])
        .arg(&dir)
        .output()
        .unwrap();
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(md.contains("**Key figures**"), "{md}");
    assert!(md.contains("| wire-report h2h bandwidth, median"), "{md}");
}

#[test]
fn cli_live_collect_refuses_an_unwritable_out_before_running() {
    wr().args(["collect", "--out", "/proc/wire-report-cannot-write-here"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "error: failed to create directory `/proc/wire-report-cannot-write-here`",
        ));
    wr().args(["collect", "--sizes", "4X"]).assert().code(2);
    wr().args(["collect", "--repeats", "0"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("0 is not in 1..=10000"));
    wr().args(["collect", "--sysfs-root", "/nonexistent-root"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--sysfs-root `/nonexistent-root` is not a directory",
        ));
}

#[test]
fn installed_benchmarks_run_and_their_transcripts_are_parsed() {
    // Stand-ins print real transcripts from captures/ (the orchestration is
    // real; the figures are those of the machines the captures came from).
    let bin = tempfile::tempdir().unwrap();
    let cap = |p: &str| std::fs::canonicalize(p).unwrap().display().to_string();
    fake_tool(
        bin.path(),
        "nvbandwidth",
        &format!(
            "cat {}",
            cap(
                "captures/h100-8gpu-azure-ndv5/nvbandwidth-001-v0.4-8x-h100-azure-ndv5-d2d-read-ce.txt"
            )
        ),
    );
    fake_tool(
        bin.path(),
        "all_reduce_perf",
        &format!(
            "cat {}",
            cap(
                "captures/a100-sxm4-8gpu-superbench/nccl-tests-001-allreduce-perf-8xA100-sxm4-40gb.txt"
            )
        ),
    );
    fake_tool(bin.path(), "p2pBandwidthLatencyTest", "exit 1");
    let out = tempfile::tempdir().unwrap();
    wr().env("PATH", format!("{}:/usr/bin:/bin", bin.path().display()))
        .args([
            "collect",
            "--quiet",
            "--no-sweep",
            "--benchmarks",
            "--benchmark-budget",
            "20",
            "--out",
        ])
        .arg(out.path())
        .assert()
        .success();
    let b: Bundle =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("bundle.json")).unwrap())
            .unwrap();
    let status = |prefix: &str| {
        b.probes
            .iter()
            .find(|p| p.name.starts_with(prefix))
            .unwrap()
            .status
    };
    assert_eq!(status("benchmark nvbandwidth"), ProbeStatus::Ok);
    assert_eq!(status("benchmark all_reduce_perf"), ProbeStatus::Ok);
    assert_eq!(
        status("benchmark p2pBandwidthLatencyTest"),
        ProbeStatus::Failed
    );
    assert_eq!(status("benchmark rocm-bandwidth-test"), ProbeStatus::Absent);
    assert_eq!(status("benchmark ib_write_bw"), ProbeStatus::Absent);
    assert!(b.measurements.iter().any(|m| m.tool == "nvbandwidth"));
    assert!(b.measurements.iter().any(|m| m.tool == "nccl-tests"));
    assert!(out.path().join("nvbandwidth.txt").is_file());
}

#[test]
fn ethtool_counters_of_the_rdma_interfaces_are_read_before_and_after() {
    // A SYNTHETIC tree whose mlx5_0 has a network interface, and a fake
    // `ethtool` whose pause and symbol-error counters grow between calls.
    let bin = tempfile::tempdir().unwrap();
    let state = bin.path().join("calls");
    fake_tool(
        bin.path(),
        "ethtool",
        &format!(
            "n=$(cat {s} 2>/dev/null || echo 0); echo $((n+1)) > {s}\n\
             [ \"$1\" = -S ] || exit 2\n\
             echo 'NIC statistics:'\n\
             echo \"     rx_prio3_pause: $((1000 + n * 250))\"\n\
             echo \"     rx_symbol_err_phy: $((7 + n))\"\n\
             echo '     rx_bytes_phy: 123'",
            s = state.display()
        ),
    );
    let sys = tempfile::tempdir().unwrap();
    synthetic_tree(sys.path());
    std::fs::create_dir_all(
        sys.path()
            .join("sys/class/infiniband/mlx5_0/device/net/ens1f0np0"),
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    wr().env("PATH", format!("{}:/usr/bin:/bin", bin.path().display()))
        .args(["collect", "--quiet", "--no-sweep", "--sysfs-root"])
        .arg(sys.path())
        .arg("--out")
        .arg(out.path())
        .assert()
        .success();
    let b: Bundle =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("bundle.json")).unwrap())
            .unwrap();
    let p = b
        .probes
        .iter()
        .find(|p| p.name == "ethtool -S ens1f0np0")
        .unwrap();
    assert_eq!(p.status, ProbeStatus::Ok);
    assert!(out.path().join("ethtool-S-ens1f0np0.txt").is_file());
    let i = &b.interfaces[0];
    assert_eq!(i.interface.as_deref(), Some("ens1f0np0"));
    assert_eq!(i.readings, 2);
    let delta = |n: &str| i.counters.iter().find(|c| c.name == n).unwrap().delta;
    assert_eq!(delta("rx_prio3_pause"), Some(250));
    assert_eq!(delta("rx_symbol_err_phy"), Some(1));
    assert_eq!(delta("rx_bytes_phy"), Some(0));
    let kinds: Vec<&str> = diagnosis::diagnose(&b)
        .iter()
        .filter(|d| {
            matches!(
                &d.finding,
                Finding::PortErrorsGrew { port: None, .. }
                    | Finding::CongestionSignals { port: None, .. }
            )
        })
        .map(|d| d.finding.name())
        .collect();
    assert_eq!(kinds, ["port-errors-grew", "congestion-signals"]);
}

#[test]
fn the_peer_memory_path_is_read_from_the_kernel_modules_and_dma_buf() {
    // The SYNTHETIC tree has 8 GPUs and 4 mlx5 adapters and no module.
    let d = tempfile::tempdir().unwrap();
    synthetic_tree(d.path());
    let peer = |b: &Bundle| {
        diagnosis::diagnose(b)
            .into_iter()
            .filter(|x| matches!(x.finding, Finding::NoPeerMemoryModule { .. }))
            .map(|x| x.severity.as_str())
            .collect::<Vec<_>>()
    };
    let b = collect(d.path());
    assert_eq!(b.system.as_ref().unwrap().dma_buf, None);
    assert_eq!(peer(&b), ["warning"]);
    // dma-buf in the kernel's config: it may carry the path.
    write(d.path(), "/proc/sys/kernel/osrelease", "6.8.0-test");
    write(
        d.path(),
        "/boot/config-6.8.0-test",
        "CONFIG_X=y\nCONFIG_DMA_SHARED_BUFFER=y\n",
    );
    let b = collect(d.path());
    assert_eq!(b.system.as_ref().unwrap().dma_buf, Some(true));
    assert_eq!(peer(&b), ["info"]);
    // nvidia_peermem loaded: recorded as a driver, and no finding.
    write(d.path(), "/sys/module/nvidia_peermem/version", "550.54.14");
    let b = collect(d.path());
    assert!(
        b.system
            .as_ref()
            .unwrap()
            .drivers
            .iter()
            .any(|m| m.module == "nvidia_peermem" && m.version == "550.54.14")
    );
    assert!(peer(&b).is_empty());
}

#[test]
fn the_collecting_process_bound_to_one_socket_is_far_from_the_other_sockets_gpus() {
    // SYNTHETIC tree: GPU0-3 on node 0 (CPUs 0-31), GPU4-7 on node 1; the
    // saved tree's /proc/self/status binds the process to node 0.
    let d = tempfile::tempdir().unwrap();
    synthetic_tree(d.path());
    write(
        d.path(),
        "/proc/self/status",
        "Name:\twire-report\nCpus_allowed_list:\t0-31\nMems_allowed_list:\t0",
    );
    let b = collect(d.path());
    let far: Vec<_> = diagnosis::diagnose(&b)
        .into_iter()
        .filter_map(|x| match x.finding {
            Finding::ProcessFarFromGpu {
                gpus,
                nics,
                near_gpus,
                ..
            } => Some((x.severity.as_str(), gpus, nics.len(), near_gpus)),
            _ => None,
        })
        .collect();
    // GPU4-7 and the two adapters of socket 1 are far; GPU0-3 and the
    // two adapters of socket 0 are near.
    assert_eq!(
        far,
        [(
            "info",
            vec![
                "GPU4".to_string(),
                "GPU5".into(),
                "GPU6".into(),
                "GPU7".into()
            ],
            2,
            6
        )]
    );
    // Unbound: silent.
    write(
        d.path(),
        "/proc/self/status",
        "Cpus_allowed_list:\t0-63\nMems_allowed_list:\t0-1",
    );
    let b = collect(d.path());
    assert!(
        diagnosis::diagnose(&b)
            .iter()
            .all(|x| !matches!(x.finding, Finding::ProcessFarFromGpu { .. }))
    );
}

#[test]
fn a_bmc_display_controller_is_not_a_gpu() {
    // SYNTHETIC: one root port with an ASPEED BMC VGA (vendor 0x1a03,
    // class 0x030000) and one with an NVIDIA 3D controller.
    let d = tempfile::tempdir().unwrap();
    let link = ("8.0 GT/s PCIe", 1, "8.0 GT/s PCIe", 1);
    for (port, dev, class, vendor) in [
        ("00:01.0", "01:00.0", "0x030000", "0x1a03"),
        ("00:02.0", "02:00.0", "0x030200", "0x10de"),
    ] {
        let up = format!("pci0000:00/0000:{port}");
        add(
            d.path(),
            &Fn {
                path: &up,
                class: "0x060400",
                vendor: "0x8086",
                link,
                numa: 0,
                cpus: "0-3",
            },
        );
        add(
            d.path(),
            &Fn {
                path: &format!("{up}/0000:{dev}"),
                class,
                vendor,
                link,
                numa: 0,
                cpus: "0-3",
            },
        );
    }
    let b = collect(d.path());
    // The BMC's VGA is no GPU: not one of the node's GPUs, and not kept
    // as a device of interest (or kept without a role).
    let bmc = b.pcie.iter().find(|p| p.address == "0000:01:00.0");
    assert!(bmc.is_none_or(|p| p.role.is_none()), "{bmc:?}");
    let gpu = b.pcie.iter().find(|p| p.address == "0000:02:00.0").unwrap();
    assert_eq!(gpu.role.as_deref(), Some("gpu"));
    assert_eq!(b.topology.gpus().count(), 1, "{:?}", b.topology.devices);
}

#[test]
fn collect_without_out_writes_a_folder_named_for_the_host_in_the_working_directory() {
    // Synthetic sysfs tree; no --out: `./wire-report-<host>/`, never a
    // `captures/` folder (the project's test fixtures, when run there).
    let sys = tempfile::tempdir().unwrap();
    synthetic_tree(sys.path());
    let cwd = tempfile::tempdir().unwrap();
    wr().current_dir(cwd.path())
        .args(["collect", "--quiet", "--no-sweep", "--sysfs-root"])
        .arg(sys.path())
        .assert()
        .success();
    let made: Vec<String> = std::fs::read_dir(cwd.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(made.len(), 1, "{made:?}");
    assert!(made[0].starts_with("wire-report-"), "{made:?}");
    assert!(cwd.path().join(&made[0]).join("bundle.json").is_file());
    // Redacted: the folder is named by the placeholder, not the host.
    let cwd2 = tempfile::tempdir().unwrap();
    wr().current_dir(cwd2.path())
        .args([
            "collect",
            "--quiet",
            "--no-sweep",
            "--redact",
            "--sysfs-root",
        ])
        .arg(sys.path())
        .assert()
        .success();
    let redacted: Vec<String> = std::fs::read_dir(cwd2.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(redacted.len(), 1);
    assert_ne!(
        redacted[0], made[0],
        "the real host name in a redacted path"
    );
}
