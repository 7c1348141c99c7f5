//! The stages behind each subcommand: they call the library and decide what
//! is printed and which exit code results. Errors returned here mean bad
//! input or usage (exit 2).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub mod diff;
pub mod model;
pub mod placement;
pub mod render;
pub mod schema;

use crate::collect;

/// `collect --from`: ingest, warn, write atomically.
pub fn collect_from(from: &[PathBuf], out: &Path, quiet: bool) -> anyhow::Result<ExitCode> {
    let to_file = out.as_os_str() == "-" || out.extension().is_some_and(|e| e == "json");
    if !to_file {
        crate::fs::check_writable_dir(out)?;
    }
    let nodes = collect::ingest(from)?;
    if nodes.is_empty() {
        eprintln!("warning: no files found under {}", show_paths(from));
        return Ok(ExitCode::from(1));
    }
    if to_file && nodes.len() > 1 {
        anyhow::bail!(
            "the input holds transcripts of {} nodes (one per directory: {}); give --out a directory to write one bundle per node",
            nodes.len(),
            nodes
                .iter()
                .map(|n| n.bundle.host.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if !quiet {
        for n in &nodes {
            for p in &n.bundle.problems {
                eprintln!("warning: {}", p.one_line());
            }
        }
    }
    let single = nodes.len() == 1;
    for n in &nodes {
        let path = if to_file {
            out.to_path_buf()
        } else if single {
            out.join("bundle.json")
        } else {
            out.join(&n.bundle.host.name).join("bundle.json")
        };
        crate::fs::write_atomic(&path, n.bundle.to_json().as_bytes())?;
        if !quiet && path.as_os_str() != "-" {
            eprintln!(
                "wrote {} ({}: {} transcripts, {} devices, {} links, {} problems)",
                path.display(),
                n.bundle.host.name,
                n.parsed(),
                n.bundle.topology.devices.len(),
                n.bundle.topology.links.len(),
                n.bundle.problems.len()
            );
        }
    }
    let parsed: usize = nodes.iter().map(|n| n.parsed()).sum();
    Ok(if parsed > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Paths for a message: `a`, `b`.
fn show_paths(p: &[PathBuf]) -> String {
    p.iter()
        .map(|p| format!("`{}`", p.display()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A usage error: printed like any error, exit 2.
pub fn usage(msg: &str) -> anyhow::Result<ExitCode> {
    anyhow::bail!("{msg}")
}

/// Options of a live `collect`.
pub struct LiveArgs {
    pub out: Option<PathBuf>,
    pub quiet: bool,
    pub redact: bool,
    pub sysfs_root: PathBuf,
    pub tool_timeout: f64,
    pub sizes: Option<String>,
    pub budget: f64,
    pub no_sweep: bool,
    /// Budget of the vendor benchmarks, when they are to run.
    pub benchmarks: Option<f64>,
    /// `--peer HOST|listen`.
    pub peer: Option<String>,
    pub rdma_device: Option<String>,
    pub peer_port: Option<u16>,
}

/// The two-node check's side: `--peer` by hand, else Slurm's two-task step
/// when benchmarks run.
fn pair_plan(a: &LiveArgs) -> anyhow::Result<Option<crate::collect::pair::Plan>> {
    use crate::collect::pair;
    let mut plan = match &a.peer {
        Some(p) if p.trim().is_empty() => anyhow::bail!("--peer needs a host name or `listen`"),
        Some(p) => Some(pair::from_flag(p.trim(), pair::DEFAULT_PORT)),
        None if a.benchmarks.is_some() => pair::from_slurm(&|k| std::env::var(k).ok())
            .transpose()
            .map_err(anyhow::Error::msg)?,
        None => None,
    };
    if let Some(p) = plan.as_mut() {
        if let Some(port) = a.peer_port {
            p.port = port;
        }
        p.device = a.rdma_device.clone();
    }
    Ok(plan)
}

/// `4096`, `4K`, `1M`, `256M`, `1G` (binary multiples).
pub fn parse_sizes(s: &str) -> anyhow::Result<Vec<usize>> {
    s.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (num, mult) = match p.chars().last() {
                Some('K' | 'k') => (&p[..p.len() - 1], 1usize << 10),
                Some('M' | 'm') => (&p[..p.len() - 1], 1 << 20),
                Some('G' | 'g') => (&p[..p.len() - 1], 1 << 30),
                _ => (p, 1),
            };
            num.parse::<usize>()
                .ok()
                .and_then(|n| n.checked_mul(mult))
                .filter(|n| *n > 0)
                .ok_or_else(|| anyhow::anyhow!("`{p}` in --sizes is not a size (4096, 4K, 1M, 1G)"))
        })
        .collect()
}

/// Expands `{host}`, `{job}` and `{rank}` in an output path, from Slurm's
/// environment when it is there.
pub fn expand_out(template: &str, host: &str) -> String {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let host = env("SLURMD_NODENAME").unwrap_or_else(|| host.to_string());
    template
        .replace("{host}", &host)
        .replace(
            "{job}",
            &env("SLURM_JOB_ID").unwrap_or_else(|| "nojob".into()),
        )
        .replace("{rank}", &env("SLURM_PROCID").unwrap_or_else(|| "0".into()))
}

/// `collect` on this machine.
pub fn collect_live(a: &LiveArgs) -> anyhow::Result<ExitCode> {
    use crate::collect::live;
    let root = crate::collect::sysfs::Root(a.sysfs_root.clone());
    if !a.sysfs_root.is_dir() {
        anyhow::bail!(
            "--sysfs-root `{}` is not a directory",
            a.sysfs_root.display()
        );
    }
    let usable = |x: f64| x.is_finite() && x > 0.0;
    if !usable(a.tool_timeout) || !usable(a.budget) {
        anyhow::bail!("--tool-timeout and --budget must be positive numbers of seconds");
    }
    let host = live::hostname(&root);
    let out = match &a.out {
        Some(o) => PathBuf::from(expand_out(&o.to_string_lossy(), &host)),
        None => PathBuf::from("captures").join(&host),
    };
    let to_stdout = out.as_os_str() == "-";
    // Before anything runs: the output must be writable.
    if !to_stdout {
        crate::fs::check_writable_dir(&out)?;
    }
    let mut plan = crate::collect::sweep::Plan {
        budget: std::time::Duration::from_secs_f64(a.budget),
        ..Default::default()
    };
    if let Some(s) = &a.sizes {
        plan.sizes = parse_sizes(s)?;
    }
    let pair = pair_plan(a)?;
    let started = std::time::Instant::now();
    let opts = live::Options {
        root: a.sysfs_root.clone(),
        redact: a.redact,
        progress: !a.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr()),
        tool_timeout: std::time::Duration::from_secs_f64(a.tool_timeout),
        sweep: (!a.no_sweep).then_some(plan),
        benchmarks: a
            .benchmarks
            .map(|s| std::time::Duration::from_secs_f64(s.max(1.0))),
        pair,
    };
    let c = live::finish(live::collect(&opts), opts.redact)?;
    if to_stdout {
        // The bundle alone (transcripts are inside it); nothing else is written.
        crate::fs::write_atomic(&out, c.bundle.to_json().as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    for (name, bytes) in &c.raw {
        crate::fs::write_atomic(&out.join(name), bytes)?;
    }
    crate::fs::write_atomic(&out.join("bundle.json"), c.bundle.to_json().as_bytes())?;
    if !a.quiet {
        for p in &c.bundle.problems {
            eprintln!("warning: {}", p.one_line());
        }
        let b = &c.bundle;
        eprintln!(
            "wrote {} in {:.1} s: {} GPU(s), {} NIC(s), {} PCIe entries, {} RDMA device(s), {} measurements, {} probes ({} ok)",
            out.join("bundle.json").display(),
            started.elapsed().as_secs_f64(),
            b.topology.gpus().count(),
            b.topology
                .devices
                .iter()
                .filter(|d| d.kind == crate::evidence::topology::DeviceKind::Nic)
                .count(),
            b.pcie.len(),
            b.rdma.len(),
            b.measurements.len(),
            b.probes.len(),
            b.probes
                .iter()
                .filter(|p| p.status == crate::collect::probes::ProbeStatus::Ok)
                .count()
        );
    }
    Ok(ExitCode::SUCCESS)
}
