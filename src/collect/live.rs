//! Live collection on the machine wire-report runs on: sysfs PCIe and NUMA
//! facts, vendor tools when present (each with a timeout), RDMA ports and
//! counters, the process's placement, and a host memory copy sweep. Works
//! on any Linux machine with or without GPUs, adapters or vendor tools;
//! reads only, and the copy sweep is bounded by its budget.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::probes::{Probe, ProbeStatus, Runner};
use super::sweep::{self, HostBackend, Plan};
use super::sysfs::{self, Root};
use crate::bundle::{Bundle, Driver, Host, NumaNode, Origin, Problem, ProblemKind, System};
use crate::evidence::topology::LinkClass;

/// How to collect.
pub struct Options {
    pub root: PathBuf,
    pub redact: bool,
    pub progress: bool,
    pub tool_timeout: Duration,
    /// `None`: no copy sweep.
    pub sweep: Option<Plan>,
    /// Run the vendor benchmarks that are installed, within this budget.
    pub benchmarks: Option<Duration>,
    /// The two-node check's side, when a peer is given or Slurm pairs us.
    pub pair: Option<super::pair::Plan>,
}

/// Vendor benchmarks `collect --benchmarks` runs when present: (tool,
/// arguments, transcript file). Short settings: a node check, not a study.
pub const BENCHMARKS: [(&str, &[&str], &str); 4] = [
    (
        "nvbandwidth",
        &[
            "-t",
            "host_to_device_memcpy_ce",
            "device_to_host_memcpy_ce",
            "device_to_device_memcpy_read_ce",
        ],
        "nvbandwidth.txt",
    ),
    (
        "p2pBandwidthLatencyTest",
        &[],
        "p2pBandwidthLatencyTest.txt",
    ),
    ("rocm-bandwidth-test", &[], "rocm-bandwidth-test.txt"),
    (
        "all_reduce_perf",
        &["-b", "8", "-e", "256M", "-f", "2", "-g", "1"],
        "all_reduce_perf.txt",
    ),
];

/// The vendor tools run when present: (tool, arguments, transcript file).
pub const TOOLS: [(&str, &[&str], &str); 9] = [
    ("nvidia-smi", &["topo", "-m"], "nvidia-smi-topo-m.txt"),
    (
        "nvidia-smi",
        &["topo", "-p2p", "r"],
        "nvidia-smi-topo-p2p-r.txt",
    ),
    (
        "nvidia-smi",
        &["nvlink", "--status"],
        "nvidia-smi-nvlink-status.txt",
    ),
    ("nvidia-smi", &["-q"], "nvidia-smi-q.txt"),
    ("rocm-smi", &["--showtopo"], "rocm-smi-showtopo.txt"),
    ("amd-smi", &["topology"], "amd-smi-topology.txt"),
    ("ibv_devinfo", &["-v"], "ibv-devinfo-v.txt"),
    ("ibstat", &[], "ibstat.txt"),
    ("lspci", &["-vvv"], "lspci-vvv.txt"),
];

/// What a live collection produced: the bundle and the raw transcripts to
/// save beside it (file name, bytes).
pub struct Collected {
    pub bundle: Bundle,
    pub raw: Vec<(String, Vec<u8>)>,
}

/// The host's name from the kernel (`/proc/sys/kernel/hostname`).
pub fn hostname(root: &Root) -> String {
    root.read(&root.path("/proc/sys/kernel/hostname"))
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

fn status_field(root: &Root, key: &str) -> Option<String> {
    // The process's own status is always the real one, not the saved tree's.
    let s = if root.0 == Path::new("/") {
        std::fs::read_to_string("/proc/self/status").ok()?
    } else {
        std::fs::read_to_string(root.path("/proc/self/status")).ok()?
    };
    s.lines().find_map(|l| {
        l.strip_prefix(key)
            .map(|v| v.trim_start_matches(':').trim().to_string())
    })
}

fn system(root: &Root) -> System {
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
    System {
        kernel: root.read(&root.path("/proc/sys/kernel/osrelease")),
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

fn problem(b: &mut Bundle, file: &str, kind: ProblemKind, message: String) {
    b.problems.push(Problem {
        file: file.into(),
        line: None,
        kind,
        message,
    });
}

/// Runs every probe. Never fails: whatever goes wrong is a probe result or
/// a problem in the bundle.
pub fn collect(opts: &Options) -> Collected {
    let root = Root(opts.root.clone());
    let bar = opts.progress.then(|| {
        let b = indicatif::ProgressBar::new((TOOLS.len() + 4) as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    });
    let step = |msg: &str| {
        if let Some(b) = &bar {
            b.set_message(msg.to_string());
            b.inc(1);
        }
    };
    let mut b = Bundle::new(Host {
        name: hostname(&root),
        origin: Origin::Live,
    });
    let mut raw = Vec::new();
    let mut probes = Vec::new();
    let counters_start = sysfs::rdma_counters(&root);
    let sys = system(&root);

    // Vendor tools: their transcripts go through the same parsers as captures.
    step("vendor tools");
    let mut runner = Runner::new(opts.tool_timeout);
    for (tool, args, file) in TOOLS {
        let name = format!("{tool} {}", args.join(" ")).trim().to_string();
        let out = runner.run(tool, args);
        let mut probe = Probe {
            name: name.clone(),
            status: out.status,
            duration_s: out.duration.as_secs_f64(),
            transcript: None,
            message: out.message.clone(),
        };
        if !out.stdout.is_empty()
            && matches!(
                out.status,
                ProbeStatus::Ok | ProbeStatus::Failed | ProbeStatus::TimedOut
            )
        {
            let before = b.transcripts.len();
            let problems_before = b.problems.len();
            super::add_file(&mut b, file, &out.stdout);
            raw.push((file.to_string(), out.stdout.clone()));
            probe.transcript = Some(file.to_string());
            if b.transcripts.len() == before && out.status == ProbeStatus::Ok {
                probe.status = ProbeStatus::Unrecognized;
                let why = b.problems[problems_before..]
                    .first()
                    .map(|p| p.one_line())
                    .unwrap_or_default();
                probe.message = format!("{name} printed output no parser recognises ({why})");
                // add_file already recorded the parse problem.
            }
        }
        match probe.status {
            ProbeStatus::Ok | ProbeStatus::Unrecognized => {}
            ProbeStatus::Absent => {
                problem(&mut b, &name, ProblemKind::Probe, probe.message.clone())
            }
            _ => problem(&mut b, &name, ProblemKind::Probe, probe.message.clone()),
        }
        probes.push(probe);
        step(&name);
    }

    // sysfs: PCIe functions and the vendor-neutral tree topology.
    step("sysfs PCIe");
    let t = Instant::now();
    let funcs = sysfs::pci_functions(&root);
    let relevant: std::collections::BTreeSet<&str> = funcs
        .iter()
        .filter(|f| f.is_gpu() || f.is_nic())
        .flat_map(|f| std::iter::once(f.address.as_str()).chain(f.chain.iter().map(String::as_str)))
        .collect();
    for f in &funcs {
        if relevant.contains(f.address.as_str()) {
            b.pcie.push(f.link.clone());
        }
    }
    let tree = sysfs::tree_topology(&funcs);
    let gpus = funcs.iter().filter(|f| f.is_gpu()).count();
    let nics = funcs.iter().filter(|f| f.is_nic()).count();
    probes.push(Probe {
        name: "sysfs /sys/bus/pci/devices".into(),
        status: if funcs.is_empty() {
            ProbeStatus::Failed
        } else {
            ProbeStatus::Ok
        },
        duration_s: t.elapsed().as_secs_f64(),
        transcript: None,
        message: format!(
            "{} PCI functions: {gpus} GPU(s), {nics} network adapter(s)",
            funcs.len()
        ),
    });
    fold_tree(&mut b, tree);

    // RDMA ports from sysfs, merged with what the tools said.
    step("sysfs RDMA");
    let rdma = sysfs::rdma_devices(&root);
    probes.push(Probe {
        name: "sysfs /sys/class/infiniband".into(),
        status: ProbeStatus::Ok,
        duration_s: 0.0,
        transcript: None,
        message: format!("{} RDMA device(s)", rdma.len()),
    });
    super::merge_rdma(&mut b.rdma, rdma);
    #[cfg(feature = "rdma")]
    {
        let t = Instant::now();
        let (status, message) = match super::verbs::devices() {
            Ok(devs) => {
                let msg = format!("{} device(s) from libibverbs", devs.len());
                super::merge_rdma(&mut b.rdma, devs);
                (ProbeStatus::Ok, msg)
            }
            Err(e) => (ProbeStatus::Failed, e),
        };
        if status != ProbeStatus::Ok {
            problem(&mut b, "libibverbs", ProblemKind::Probe, message.clone());
        }
        probes.push(Probe {
            name: "libibverbs devices".into(),
            status,
            duration_s: t.elapsed().as_secs_f64(),
            transcript: None,
            message,
        });
    }

    // Host memory copies: the host tier, and what a staged copy pays.
    step("host memcpy sweep");
    if let Some(plan) = &opts.sweep {
        let t = Instant::now();
        let placement = format!(
            "process allowed on CPUs {} and NUMA nodes {}",
            sys.cpus_allowed.as_deref().unwrap_or("not stated"),
            sys.mems_allowed.as_deref().unwrap_or("not stated")
        );
        let context = format!(
            "load average at the start {}; other processes were not controlled",
            sys.load_average.as_deref().unwrap_or("not readable")
        );
        let r = sweep::run(&mut HostBackend::new(&placement), plan);
        let cells = sweep::cells(&r, "host", &context);
        let mut message = format!("{} sizes, {} cells", r.points.len(), cells.len());
        for tr in &r.trimmed {
            message.push_str(&format!("; {tr}"));
        }
        let status = match &r.error {
            Some(e) => {
                problem(&mut b, "host memcpy sweep", ProblemKind::Probe, e.clone());
                ProbeStatus::Failed
            }
            None => ProbeStatus::Ok,
        };
        let bad: u64 = r.points.iter().map(|p| p.mismatched_bytes).sum();
        if bad > 0 {
            problem(
                &mut b,
                "host memcpy sweep",
                ProblemKind::ToolError,
                format!("{bad} bytes differed after host copies"),
            );
        }
        for mut m in cells {
            m.source.file = "host memcpy sweep".into();
            b.measurements.push(m);
        }
        probes.push(Probe {
            name: "host memcpy sweep".into(),
            status,
            duration_s: t.elapsed().as_secs_f64(),
            transcript: None,
            message,
        });
    }

    // GPU copies through the CUDA driver, when there is one.
    step("CUDA copy sweeps");
    if let Some(plan) = &opts.sweep {
        gpu_probe(
            &mut b,
            &mut probes,
            plan,
            &sys,
            &super::cuda::Cuda,
            super::cuda::inventory(),
        );
        #[cfg(feature = "rocm")]
        gpu_probe(
            &mut b,
            &mut probes,
            plan,
            &sys,
            &super::hip::Hip,
            super::hip::inventory(),
        );
    }

    if let Some(budget) = opts.benchmarks {
        step("vendor benchmarks");
        benchmarks(
            &mut b,
            &mut raw,
            &mut probes,
            &mut runner,
            budget,
            opts.pair.as_ref(),
        );
    }

    // Counters again: the delta is what happened while we looked.
    step("RDMA counters");
    let counters_end = sysfs::rdma_counters(&root);
    for ((dev, port), cs) in sysfs::counter_deltas(&counters_start, &counters_end) {
        if let Some(p) = b
            .rdma
            .iter_mut()
            .find(|d| d.name == dev)
            .and_then(|d| d.ports.iter_mut().find(|p| p.port == port))
        {
            p.counters = cs;
        }
    }
    b.system = Some(sys);
    b.probes = probes;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Collected { bundle: b, raw }
}

/// Records one benchmark run: its transcript (parsed like a capture), its
/// probe, and a problem when it did not succeed.
fn keep(
    b: &mut Bundle,
    raw: &mut Vec<(String, Vec<u8>)>,
    probes: &mut Vec<Probe>,
    name: String,
    file: &str,
    out: super::probes::Output,
) {
    let mut probe = Probe {
        name: name.clone(),
        status: out.status,
        duration_s: out.duration.as_secs_f64(),
        transcript: None,
        message: out.message,
    };
    if !out.stdout.is_empty() {
        let before = b.transcripts.len();
        super::add_file(b, file, &out.stdout);
        raw.push((file.to_string(), out.stdout));
        probe.transcript = Some(file.to_string());
        if b.transcripts.len() == before && probe.status == ProbeStatus::Ok {
            probe.status = ProbeStatus::Unrecognized;
        }
    }
    if !matches!(probe.status, ProbeStatus::Ok | ProbeStatus::Absent) {
        problem(
            b,
            &name,
            ProblemKind::Probe,
            if probe.message.is_empty() {
                format!("{name}: {:?}", probe.status)
            } else {
                probe.message.clone()
            },
        );
    }
    probes.push(probe);
}

/// The two-node `ib_write_bw`: this side of the pair, linked in the bundle.
fn pair_benchmark(
    b: &mut Bundle,
    raw: &mut Vec<(String, Vec<u8>)>,
    probes: &mut Vec<Probe>,
    runner: &mut Runner,
    plan: &super::pair::Plan,
    budget: Duration,
) {
    use super::pair::{self, PeerLink, Role};
    let mut plan = plan.clone();
    if plan.device.is_none() {
        plan.device = b.rdma.iter().find_map(|d| {
            d.ports
                .iter()
                .find(|p| p.active == Some(true))
                .map(|p| format!("{}:{}", d.name, p.port))
        });
    }
    // The client connects to the server node's address: Slurm's NodeAddr
    // when Slurm formed the pair, else the name as given.
    let address = match (&plan.role, &plan.address, &plan.peer) {
        (Role::Client, Some(a), _) => Some(a.clone()),
        (Role::Client, None, Some(peer)) => {
            let out = runner.run("scontrol", &["show", "node", "-o", peer]);
            Some(
                pair::node_addr(&String::from_utf8_lossy(&out.stdout))
                    .unwrap_or_else(|| peer.clone()),
            )
        }
        _ => None,
    };
    let side = match plan.role {
        Role::Server => "server",
        Role::Client => "client",
    };
    let name = format!(
        "benchmark ib_write_bw pair {side}{}",
        plan.peer
            .as_ref()
            .map(|p| format!(" with {p}"))
            .unwrap_or_default()
    );
    let file = format!("ib_write_bw-pair-{side}.txt");
    // Absent from PATH comes back as an absent probe, not retried.
    let out = pair::run(runner, &plan, address.as_deref(), budget);
    let ok = out.status == ProbeStatus::Ok;
    let printed = !out.stdout.is_empty();
    keep(b, raw, probes, name, &file, out);
    b.peer = Some(PeerLink {
        role: plan.role.clone(),
        peer: plan.peer.clone(),
        address,
        tool: "ib_write_bw".into(),
        transcript: printed.then_some(file),
        via: plan.via.to_string(),
        job: plan.job.clone(),
        ok,
    });
}

/// Runs the installed vendor benchmarks, each parsed by the same parsers as
/// captures, so the report holds their figures beside ours; then
/// `ib_write_bw` in loopback on the first active RDMA port.
fn benchmarks(
    b: &mut Bundle,
    raw: &mut Vec<(String, Vec<u8>)>,
    probes: &mut Vec<Probe>,
    runner: &mut Runner,
    budget: Duration,
    pair: Option<&super::pair::Plan>,
) {
    let start = Instant::now();
    let left = |start: &Instant| {
        budget
            .saturating_sub(start.elapsed())
            .max(Duration::from_secs(1))
    };
    for (tool, args, file) in BENCHMARKS {
        let name = format!("benchmark {tool} {}", args.join(" "))
            .trim()
            .to_string();
        let out = runner.run_for(tool, args, left(&start));
        keep(b, raw, probes, name, file, out);
    }
    if let Some(plan) = pair {
        pair_benchmark(b, raw, probes, runner, plan, left(&start));
        return;
    }
    // RDMA loopback: server and client on the same active port.
    let port = b.rdma.iter().find_map(|d| {
        d.ports
            .iter()
            .find(|p| p.active == Some(true))
            .map(|p| (d.name.clone(), p.port))
    });
    let name = "benchmark ib_write_bw loopback".to_string();
    match (runner.which("ib_write_bw"), port) {
        (None, _) => probes.push(Probe {
            name,
            status: ProbeStatus::Absent,
            duration_s: 0.0,
            transcript: None,
            message: "ib_write_bw is not on PATH".into(),
        }),
        (Some(_), None) => probes.push(Probe {
            name,
            status: ProbeStatus::Absent,
            duration_s: 0.0,
            transcript: None,
            message: "no active RDMA port for a loopback test".into(),
        }),
        (Some(exe), Some((dev, p))) => {
            let port_s = p.to_string();
            let server = std::process::Command::new(&exe)
                .args(["-d", &dev, "-i", &port_s, "--report_gbits", "-a"])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::null())
                .spawn();
            std::thread::sleep(Duration::from_millis(500));
            let out = runner.run_for(
                "ib_write_bw",
                &[
                    "-d",
                    &dev,
                    "-i",
                    &port_s,
                    "--report_gbits",
                    "-a",
                    "localhost",
                ],
                left(&start),
            );
            if let Ok(mut server) = server {
                let mut text = Vec::new();
                if out.status == ProbeStatus::Ok {
                    let _ = server.wait();
                } else {
                    let _ = server.kill();
                    let _ = server.wait();
                }
                if let Some(mut so) = server.stdout.take() {
                    use std::io::Read;
                    let _ = so.read_to_end(&mut text);
                }
                if !text.is_empty() {
                    super::add_file(b, "ib_write_bw-server.txt", &text);
                    raw.push(("ib_write_bw-server.txt".into(), text));
                }
            }
            keep(b, raw, probes, name, "ib_write_bw-client.txt", out);
        }
    }
}

/// Runs one runtime's copy sweeps (CUDA, or HIP with feature `rocm`).
fn gpu_probe<A: super::gpu::GpuApi>(
    b: &mut Bundle,
    probes: &mut Vec<Probe>,
    plan: &Plan,
    sys: &System,
    api: &A,
    inventory: Result<Vec<super::gpu::Gpu>, super::gpu::Unavailable>,
) {
    use super::gpu;
    let name = format!("{} copy sweeps", A::NAME);
    let t = Instant::now();
    let gpus = match inventory {
        Ok(g) => g,
        Err(why) => {
            let (status, message) = match why {
                gpu::Unavailable::NoLibrary => (
                    ProbeStatus::Absent,
                    format!(
                        "the {} runtime is not installed: no {} copies measured",
                        A::NAME,
                        A::NAME
                    ),
                ),
                gpu::Unavailable::NoDevice(e) => (
                    ProbeStatus::Failed,
                    format!("the {} runtime reports no usable device: {e}", A::NAME),
                ),
            };
            problem(b, A::NAME, ProblemKind::Probe, message.clone());
            probes.push(Probe {
                name,
                status,
                duration_s: t.elapsed().as_secs_f64(),
                transcript: None,
                message,
            });
            return;
        }
    };
    // Name each GPU as the topology does, matched by PCI bus id.
    let norm = |s: &str| {
        s.trim()
            .to_ascii_lowercase()
            .trim_start_matches("0000")
            .to_string()
    };
    let ids: Vec<(i32, String)> = gpus
        .iter()
        .map(|g| {
            let id = b
                .topology
                .devices
                .iter()
                .find(|d| {
                    d.pci_bus_id
                        .as_deref()
                        .is_some_and(|p| norm(p) == norm(&g.pci_bus_id))
                })
                .map(|d| d.id.clone())
                .unwrap_or_else(|| format!("GPU{}", g.ordinal));
            (g.ordinal, id)
        })
        .collect();
    for g in &gpus {
        if let Some(d) = b.topology.devices.iter_mut().find(|d| {
            d.pci_bus_id
                .as_deref()
                .is_some_and(|p| norm(p) == norm(&g.pci_bus_id))
        }) {
            d.name = Some(g.name.clone());
        }
    }
    let id_of = |g: &gpu::Gpu| {
        ids.iter()
            .find(|(o, _)| *o == g.ordinal)
            .map(|x| x.1.clone())
            .unwrap_or_default()
    };
    let context = format!(
        "load average at the start {}; other GPU work on the node was not controlled",
        sys.load_average.as_deref().unwrap_or("not readable")
    );
    let summary: Vec<String> = gpus
        .iter()
        .map(|g| {
            format!(
                "{} {} ({}, {} GiB)",
                id_of(g),
                g.name,
                g.pci_bus_id,
                g.memory_bytes >> 30
            )
        })
        .collect();
    let r = gpu::run_all(api, &gpus, plan, &id_of, &context);
    for e in &r.errors {
        problem(b, &name, ProblemKind::Probe, e.clone());
    }
    let bad = r.cells.iter().filter(|m| matches!(m.verification, crate::evidence::measurement::Verification::Checked { errors } if errors > 0)).count();
    if bad > 0 {
        problem(
            b,
            &name,
            ProblemKind::ToolError,
            format!("{bad} {} copy results had wrong bytes", A::NAME),
        );
    }
    for mut m in r.cells {
        m.source.file = name.clone().into();
        b.measurements.push(m);
    }
    probes.push(Probe {
        name,
        status: if r.errors.is_empty() {
            ProbeStatus::Ok
        } else {
            ProbeStatus::Failed
        },
        duration_s: t.elapsed().as_secs_f64(),
        transcript: None,
        message: format!("{}; {}", summary.join(", "), r.log.join("; ")),
    });
}

/// Folds the sysfs tree into the topology. Without a vendor matrix the tree
/// is the topology. With one, each pair keeps the vendor's class and gains
/// the tree's PCIe class beside it; where both describe a PCIe path and
/// disagree, a conflict problem says so.
fn fold_tree(b: &mut Bundle, tree: crate::evidence::topology::Topology) {
    if b.topology.links.is_empty() {
        // Keep any devices the tools described (names, UUIDs), add the tree's.
        let tools = std::mem::take(&mut b.topology);
        b.topology = tree;
        for c in b.topology.merge(tools) {
            b.problems.push(Problem {
                file: c.other.file.to_string(),
                line: Some(c.other.line),
                kind: ProblemKind::Conflict,
                message: format!("sysfs and the vendor tool disagree: {}", c.what),
            });
        }
        return;
    }
    for tl in tree.links {
        let Some(vl) = b
            .topology
            .links
            .iter_mut()
            .find(|l| (l.a == tl.a && l.b == tl.b) || (l.a == tl.b && l.b == tl.a))
        else {
            continue;
        };
        vl.pcie_class = Some(tl.class);
        let vendor_pcie = matches!(
            vl.class,
            LinkClass::PcieSwitch | LinkClass::PcieHost | LinkClass::CrossSocket
        );
        if vendor_pcie && tl.class != LinkClass::Unknown && tl.class != vl.class {
            b.problems.push(Problem {
                file: "sysfs /sys/bus/pci/devices".into(),
                line: None,
                kind: ProblemKind::Conflict,
                message: format!(
                    "{}-{}: the PCIe tree says {}, {} says {} ({}); both kept",
                    vl.a,
                    vl.b,
                    tl.class,
                    vl.sources
                        .first()
                        .map(|s| s.file.to_string())
                        .unwrap_or_default(),
                    vl.class,
                    vl.code.clone().unwrap_or_default()
                ),
            });
        }
    }
    // Devices: add PCI bus ids and NUMA nodes the vendor matrix lacks.
    for d in tree.devices {
        if let Some(v) = b.topology.devices.iter_mut().find(|x| x.id == d.id) {
            if v.pci_bus_id.is_none() {
                v.pci_bus_id = d.pci_bus_id;
            }
            if v.numa_node.is_none() {
                v.numa_node = d.numa_node;
            }
        } else {
            b.topology.devices.push(d);
        }
    }
    b.topology.sort();
}

/// Redacts when asked; returns what to write.
pub fn finish(mut c: Collected, redact: bool) -> anyhow::Result<Collected> {
    if redact {
        super::redact::redact(&mut c.bundle, &mut c.raw)?;
    }
    Ok(c)
}
