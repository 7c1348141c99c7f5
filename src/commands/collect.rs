//! `wire-report collect`: probe this machine (live), or ingest transcripts
//! captured elsewhere (`--from`); write the bundles.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::inputs;

/// Collect evidence on this machine, or ingest transcripts captured elsewhere (`--from`).
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
wire-report collect                                     # this node, into ./wire-report-<hostname>/\n  \
wire-report collect --out /shared/wire/{host} --redact\n  \
wire-report collect --sysfs-root saved-tree/ --no-sweep --out tree-bundle/\n  \
wire-report collect --from captures/dgx1-p100-8gpu-4nic/ --out bundle.json\n  \
srun -N2 --ntasks-per-node=1 wire-report collect --benchmarks --out /shared/wire/{host}   # pair check\n  \
wire-report collect --peer listen    # and on the other node: wire-report collect --peer node1\n  \
wire-report collect --from captures/ --out bundles/     # one bundle per node directory\n\n\
Live: reads sysfs (PCIe devices and bridges, NUMA, RDMA ports and counters), runs the vendor \
tools that are installed (nvidia-smi, rocm-smi, amd-smi, ibv_devinfo, ibstat, lspci), each with \
a timeout and never again after one hang, and times host memory copies. Writes bundle.json and \
the raw transcripts into --out. {host}, {job} and {rank} in --out come from Slurm when it runs \
the command (SLURMD_NODENAME, SLURM_JOB_ID, SLURM_PROCID).\n\n\
Ingest (--from): files are grouped into nodes by the directory that holds them; each file's \
tool is recognised from its content. Problems print as `path:line: what was expected`.\n\
Exit: 0 when something was collected or parsed, 1 when nothing was, 2 on usage errors.")]
pub struct Args {
    /// Transcript files or directories to ingest instead of probing this machine.
    #[arg(long = "from", num_args = 1.., value_name = "PATH")]
    pub from: Vec<PathBuf>,
    /// Where to write. Live: a directory (default `./wire-report-<hostname>/`).
    /// Ingest: a `.json` file, `-` for stdout (one node only), or a directory.
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
    /// Flush every file to disk as it is written (one `fsync` per file).
    /// Without it each file is still replaced atomically, and the run
    /// flushes everything once at the end.
    #[arg(long)]
    pub fsync: bool,
    /// Replace host and user names, serials, addresses (IP, GID, MAC), GUIDs and UUIDs by placeholders, in bundles, transcripts and file names (for external tickets).
    #[arg(long)]
    pub redact: bool,
    /// Read sysfs and procfs under this directory (a saved tree) instead of /.
    #[arg(long, value_name = "PATH", default_value = "/")]
    pub sysfs_root: PathBuf,
    /// Seconds each vendor tool may run before it is killed.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub tool_timeout: f64,
    /// Copy sizes of the sweeps, in bytes (`4096,1048576` or `4K,1M,256M`;
    /// default 4K to 256M by factors of four). Every size is measured.
    #[arg(long, value_name = "LIST")]
    pub sizes: Option<String>,
    /// Timed repetitions of every size on every copy path.
    #[arg(long, value_name = "N", default_value_t = 7,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub repeats: u32,
    /// Seconds each copy sweep (the host's; each GPU runtime's, all its paths
    /// together) should plan for: its estimate lowers the repetitions evenly,
    /// never below 3, and never drops a size. Absent or 0: no budget, the
    /// sweeps run --repeats. The plan is printed before each sweep runs.
    #[arg(long, value_name = "SECONDS")]
    pub budget: Option<f64>,
    /// Skip the host copy sweep.
    #[arg(long)]
    pub no_sweep: bool,
    /// Also run the installed vendor benchmarks (nvbandwidth, p2pBandwidthLatencyTest,
    /// rocm-bandwidth-test, all_reduce_perf, ib_write_bw loopback) within --benchmark-budget.
    #[arg(long)]
    pub benchmarks: bool,
    /// Seconds all vendor benchmarks together may take.
    #[arg(long, value_name = "SECONDS", default_value_t = 300.0)]
    pub benchmark_budget: f64,
    /// Two-node RDMA check by hand: `listen` on one node (server), the server's
    /// host on the other (client). Implies --benchmarks. Under Slurm with two
    /// tasks, task 0 serves and task 1 connects without this flag.
    #[arg(long, value_name = "HOST|listen")]
    pub peer: Option<String>,
    /// RDMA device (and port) for the two-node check, e.g. `mlx5_0` or `mlx5_0:1`
    /// (default: the first active port).
    #[arg(long, value_name = "DEV[:PORT]")]
    pub rdma_device: Option<String>,
    /// TCP port of the two-node check's rendezvous (default 18515, or 18515 + job id
    /// mod 1000 under Slurm).
    #[arg(long, value_name = "PORT")]
    pub peer_port: Option<u16>,
}

impl Args {
    /// Seconds the vendor benchmarks may take, when they are to run
    /// (`--peer` implies `--benchmarks`).
    fn benchmarks_budget_s(&self) -> Option<f64> {
        (self.benchmarks || self.peer.is_some()).then_some(self.benchmark_budget)
    }
}

/// `collect`: live without `--from`, ingest with it.
pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    if a.from.is_empty() {
        return collect_live(&a);
    }
    match &a.out {
        Some(out) => collect_from(&a.from, out, a.fsync, a.redact),
        None => super::usage("collect --from needs --out (a .json file, `-`, or a directory)"),
    }
}

/// `collect --from`: ingest, warn, write atomically; one node at a time
/// into a directory (each bundle written when its node is read, then
/// dropped), and one sync at the end unless `fsync` asks for one per file.
fn collect_from(
    from: &[PathBuf],
    out: &Path,
    fsync: bool,
    redact: bool,
) -> anyhow::Result<ExitCode> {
    // An existing file, device or FIFO (`/dev/null`) is one output, whatever its name.
    let to_file = out.as_os_str() == "-"
        || out.extension().is_some_and(|e| e == "json")
        || std::fs::metadata(out).is_ok_and(|m| !m.is_dir());
    let existed = std::fs::symlink_metadata(out).is_ok();
    if !to_file {
        crate::fs::check_writable_dir(out)?;
    }
    // Redacted: every node named first (a node's transcripts name its
    // peers in words no pattern knows), as `render --redact` does.
    let redactor = match redact {
        true => {
            let mut r = crate::bundle::redact::Redactor::new();
            for s in inputs::node_sources(from)? {
                r.host(&s.name);
            }
            Some(r)
        }
        false => None,
    };
    let mut w = Writer {
        out,
        to_file,
        fsync,
        redactor,
        first: None,
        written: 0,
        parsed: 0,
        problems: 0,
        problem_files: 0,
        empty: 0,
        buf: Vec::new(),
        folders: std::collections::HashSet::new(),
    };
    let nodes = inputs::ingest_each(from, |n| w.node(n));
    if !to_file && !existed && !matches!(nodes, Ok(n) if n > 0) {
        // Nothing to write: the folder made for it goes too (if empty).
        let _ = std::fs::remove_dir(out);
    }
    if nodes? == 0 {
        crate::say::line(format_args!(
            "warning: no files found under {}",
            super::show_paths(from)
        ));
        return Ok(ExitCode::from(1));
    }
    w.finish()?;
    if !w.to_file && w.written > 1 {
        crate::say::info(format_args!("{}", w.summary()));
    }
    Ok(if w.parsed > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Where `collect --from` puts each node's bundle as it comes.
struct Writer<'a> {
    out: &'a Path,
    to_file: bool,
    fsync: bool,
    /// Each bundle is redacted before anything of it is printed or written
    /// (one numbering for the run: a peer one node names is the node
    /// another bundle is).
    redactor: Option<crate::bundle::redact::Redactor>,
    /// The first node, held until a second shows whether `out` holds one
    /// bundle (`out/bundle.json`) or one per node (`out/<node>/bundle.json`).
    first: Option<inputs::NodeBundle>,
    written: usize,
    parsed: usize,
    /// Problems, and the files they are in (counted per node).
    problems: usize,
    problem_files: usize,
    /// Nodes with no transcript parsed.
    empty: usize,
    /// One serialisation buffer for every bundle written.
    buf: Vec<u8>,
    /// The node folders this run has written, lowercased (a folder on a
    /// case-insensitive disk is one folder).
    folders: std::collections::HashSet<String>,
}

impl Writer<'_> {
    fn node(&mut self, mut n: inputs::NodeBundle) -> anyhow::Result<()> {
        if let Some(r) = &mut self.redactor {
            r.redact(&mut n.bundle, &mut [])?;
        }
        if let Some(first) = self.first.take() {
            if self.to_file {
                anyhow::bail!(
                    "the input holds transcripts of more than one node (one per directory: {}, {}, ...); give --out a directory to write one bundle per node",
                    first.bundle.host.name,
                    n.bundle.host.name
                );
            }
            self.write(&first, false)?;
            return self.write(&n, false);
        }
        if self.written == 0 {
            self.first = Some(n);
            return Ok(());
        }
        self.write(&n, false)
    }

    fn finish(&mut self) -> anyhow::Result<()> {
        if let Some(first) = self.first.take() {
            self.write(&first, true)?;
        }
        if !self.fsync && self.out.as_os_str() != "-" {
            let dir = if self.to_file {
                self.out.parent().filter(|p| !p.as_os_str().is_empty())
            } else {
                Some(self.out)
            };
            crate::fs::sync_dirs(&[dir.unwrap_or(Path::new("."))])?;
        }
        Ok(())
    }

    /// The closing line of a run over many nodes.
    fn summary(&self) -> String {
        let mut s = format!(
            "collected {} nodes: {} bundles written under {}, {} transcripts read, {} problems in {} files",
            self.written,
            self.written,
            self.out.display(),
            self.parsed,
            self.problems,
            self.problem_files
        );
        if self.empty > 0 {
            s.push_str(&format!(", {} nodes with nothing read", self.empty));
        }
        if crate::say::level() != crate::say::Level::Verbose {
            s.push_str(" (-v lists each file and bundle)");
        }
        s
    }

    /// A folder for node `name` that no earlier node of this run has:
    /// [`safe_component`] maps `node 1`, `node_1`, `node:1` (and names
    /// that differ past 100 bytes, or in bytes that are not UTF-8) to one
    /// folder, and each would overwrite the last. A collision gets `-2`,
    /// `-3`, ... and a warning.
    fn folder(&mut self, name: &str) -> String {
        let base = safe_component(name);
        let mut folder = base.clone();
        let mut k = 1;
        while !self.folders.insert(folder.to_lowercase()) {
            k += 1;
            folder = format!("{base}-{k}");
        }
        if k > 1 {
            crate::say::warn(format_args!(
                "node `{name}` maps to the folder `{base}` of an earlier node; written to `{folder}` instead"
            ));
        }
        folder
    }

    fn write(&mut self, n: &inputs::NodeBundle, single: bool) -> anyhow::Result<()> {
        if crate::say::level() == crate::say::Level::Verbose {
            for t in &n.bundle.transcripts {
                let tools: Vec<&str> = match t.blocks.as_slice() {
                    [] => vec![t.tool.as_str()],
                    b => b.iter().map(|b| b.tool.as_str()).collect(),
                };
                crate::say::detail(format_args!(
                    "read {}: {}; {}",
                    t.path,
                    tools.join(" + "),
                    t.lines.summary()
                ));
            }
        }
        for p in &n.bundle.problems {
            crate::say::warn(format_args!("{}", p.one_line()));
        }
        let path = if self.to_file {
            self.out.to_path_buf()
        } else if single {
            self.out.join("bundle.json")
        } else {
            self.out
                .join(self.folder(&n.bundle.host.name))
                .join("bundle.json")
        };
        n.bundle.write_json(&mut self.buf);
        if self.fsync {
            crate::fs::write_atomic(&path, &self.buf)?;
        } else {
            crate::fs::write_unsynced(&path, &self.buf)?;
        }
        self.written += 1;
        self.parsed += n.parsed();
        self.problems += n.bundle.problems.len();
        let files: std::collections::BTreeSet<&str> =
            n.bundle.problems.iter().map(|p| p.file.as_str()).collect();
        self.problem_files += files.len();
        if n.parsed() == 0 {
            self.empty += 1;
        }
        // One node: its line is the summary; many: each node's line is
        // detail, and the run ends with one summary line.
        let say = match self.to_file || single {
            true => crate::say::info,
            false => crate::say::detail,
        };
        if path.as_os_str() != "-" {
            say(format_args!(
                "wrote {} ({}: {} transcripts, {} devices, {} links, {} problems)",
                path.display(),
                n.bundle.host.name,
                n.parsed(),
                n.bundle.topology.devices.len(),
                n.bundle.topology.links.len(),
                n.bundle.problems.len()
            ));
        }
        Ok(())
    }
}

/// The most seconds a duration flag takes: a week. Far beyond any tool
/// or sweep, and far below what `Duration` and `Instant` can add without
/// overflowing (`--tool-timeout 1e19` panicked in `Instant + Duration`).
const MAX_SECONDS: f64 = 7.0 * 86_400.0;

/// `value` seconds of flag `flag` as a duration: a number from 0 to
/// [`MAX_SECONDS`], else a usage error naming the flag.
fn seconds(flag: &str, value: f64) -> anyhow::Result<std::time::Duration> {
    if !(0.0..=MAX_SECONDS).contains(&value) {
        anyhow::bail!(
            "{flag} must be a number of seconds from 0 to {MAX_SECONDS} (a week), got {value}"
        );
    }
    Ok(std::time::Duration::from_secs_f64(value))
}

/// `collect` on this machine.
fn collect_live(a: &Args) -> anyhow::Result<ExitCode> {
    use crate::collect::live;
    let root = crate::collect::sysfs::Root(a.sysfs_root.clone());
    if !a.sysfs_root.is_dir() {
        anyhow::bail!(
            "--sysfs-root `{}` is not a directory",
            a.sysfs_root.display()
        );
    }
    let tool_timeout = seconds("--tool-timeout", a.tool_timeout)?;
    if tool_timeout.is_zero() {
        anyhow::bail!("--tool-timeout must be a positive number of seconds");
    }
    // Absent or 0: no budget.
    let budget = match a.budget.map(|b| seconds("--budget", b)).transpose()? {
        Some(d) if !d.is_zero() => Some(d),
        _ => None,
    };
    let benchmarks = a
        .benchmarks_budget_s()
        .map(|s| seconds("--benchmark-budget", s))
        .transpose()?
        .map(|d| d.max(std::time::Duration::from_secs(1)));
    let host = live::hostname(&root);
    // A redacted collection is named by the host's placeholder, in the
    // default folder and in `{host}` alike: the real name never reaches
    // a path.
    let mut redactor = a.redact.then(crate::bundle::redact::Redactor::new);
    let named = match &mut redactor {
        Some(r) => r.host(&host),
        None => host.clone(),
    };
    // Without --out: `./wire-report-<host>/` in the working directory,
    // never the project's own `captures/` (whose every folder is a test
    // fixture).
    let out = match &a.out {
        Some(o) => PathBuf::from(expand_out(&o.to_string_lossy(), &named)),
        None => PathBuf::from(format!("wire-report-{}", safe_component(&named))),
    };
    let to_stdout = out.as_os_str() == "-";
    // Before anything runs: the output must be writable.
    if !to_stdout {
        crate::fs::check_writable_dir(&out)?;
    }
    let mut settings = crate::collect::sweep::Settings {
        repeats: a.repeats,
        budget,
        ..Default::default()
    };
    if let Some(s) = &a.sizes {
        settings.sizes = parse_sizes(s)?;
    }
    let pair = pair_plan(a)?;
    let started = std::time::Instant::now();
    let opts = live::Options {
        root: a.sysfs_root.clone(),
        redact: a.redact,
        progress: !crate::say::quiet() && std::io::IsTerminal::is_terminal(&std::io::stderr()),
        tool_timeout,
        sweep: (!a.no_sweep).then_some(settings),
        announce_plans: !crate::say::quiet(),
        benchmarks,
        pair,
    };
    let c = live::finish(live::collect(&opts), redactor.as_mut())?;
    if to_stdout {
        // The bundle alone (transcripts are inside it); nothing else is written.
        crate::fs::write_atomic(&out, c.bundle.to_json().as_bytes())?;
        return Ok(ExitCode::SUCCESS);
    }
    publish(&out, &c.raw, &c.bundle.to_json_bytes(), a.fsync)?;
    {
        for p in &c.bundle.problems {
            crate::say::warn(format_args!("{}", p.one_line()));
        }
        let b = &c.bundle;
        crate::say::info(format_args!(
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
                .filter(|p| p.status == crate::bundle::ProbeStatus::Ok)
                .count()
        ));
    }
    Ok(ExitCode::SUCCESS)
}

/// The two-node check's side: `--peer` by hand, else Slurm's two-task step
/// when benchmarks run.
fn pair_plan(a: &Args) -> anyhow::Result<Option<crate::collect::pair::Plan>> {
    use crate::collect::pair;
    let mut plan = match &a.peer {
        Some(p) if p.trim().is_empty() => anyhow::bail!("--peer needs a host name or `listen`"),
        Some(p) => Some(pair::from_flag(p.trim(), pair::DEFAULT_PORT)),
        None if a.benchmarks_budget_s().is_some() => pair::from_slurm(&|k| std::env::var(k).ok())
            .transpose()
            .map_err(anyhow::Error::msg)?,
        None => None,
    };
    if let Some(p) = plan.as_mut() {
        if let Some(port) = a.peer_port {
            p.port = port;
        }
        p.device = a.rdma_device.clone();
        // Each becomes an argument of ib_write_bw (and scontrol): a name
        // from a Slurm node list or a flag that starts with `-` would be
        // read as an option there.
        for v in [p.peer.as_deref(), p.device.as_deref()]
            .into_iter()
            .flatten()
        {
            if v.starts_with('-') {
                anyhow::bail!(
                    "`{v}` (from {}) starts with `-`: no host or device name does, and it would reach ib_write_bw as an option; refused",
                    p.via
                );
            }
        }
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
/// environment when it is there. Each value is reduced to one safe path
/// component ([`safe_component`]): a hostname of `../../x` or a job id of
/// `/etc/x` never writes outside the folder the template names.
pub fn expand_out(template: &str, host: &str) -> String {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let host = env("SLURMD_NODENAME").unwrap_or_else(|| host.to_string());
    let job = env("SLURM_JOB_ID").unwrap_or_else(|| "nojob".into());
    let rank = env("SLURM_PROCID").unwrap_or_else(|| "0".into());
    template
        .replace("{host}", &safe_component(&host))
        .replace("{job}", &safe_component(&job))
        .replace("{rank}", &safe_component(&rank))
}

/// A name from the machine or the environment (a hostname, a Slurm
/// variable, a node folder's name) as one path component: letters, digits,
/// `.`, `_` and `-` stay, anything else (a `/`, a NUL, a space) becomes
/// `_`; a leading `.` becomes `_` (no `..`, no hidden file); at most 100
/// bytes; never empty.
pub fn safe_component(name: &str) -> String {
    let mut s: String = name
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    if s.starts_with('.') {
        s.replace_range(0..1, "_");
    }
    if s.is_empty() { "unnamed".into() } else { s }
}

/// The prefix of the folder a live collection is staged in, inside `--out`
/// (followed by our process id): recognisably ours, so the next run can
/// remove what a killed one left.
const STAGING: &str = ".wire-report-collect-";

/// Publishes one live collection into `out` as one unit: every transcript
/// and the bundle are written (and flushed) into a fresh staging folder
/// first; then the old `bundle.json` is removed, the transcripts are moved
/// into place, and the new bundle is moved in last. A run killed at any
/// point leaves either the old bundle beside its own transcripts, or new
/// transcripts with no bundle yet, never an old bundle beside new
/// transcripts; its staging folder is removed by the next run.
fn publish(
    out: &Path,
    raw: &[(String, Vec<u8>)],
    bundle: &[u8],
    fsync: bool,
) -> anyhow::Result<()> {
    use anyhow::Context;
    remove_abandoned_staging(out);
    let stage = tempfile::Builder::new()
        .prefix(&format!("{STAGING}{}-", std::process::id()))
        .tempdir_in(out)
        .with_context(|| format!("failed to create a staging folder in `{}`", out.display()))?;
    let write = if fsync {
        crate::fs::write_atomic
    } else {
        crate::fs::write_unsynced
    };
    let names: Vec<String> = raw.iter().map(|(n, _)| safe_component(n)).collect();
    for (name, (_, bytes)) in names.iter().zip(raw) {
        write(&stage.path().join(name), bytes)?;
    }
    write(&stage.path().join("bundle.json"), bundle)?;
    let old = out.join("bundle.json");
    match std::fs::remove_file(&old) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(e).with_context(|| format!("failed to replace `{}`", old.display()));
        }
        _ => {}
    }
    for name in names.iter().map(String::as_str).chain(["bundle.json"]) {
        let to = out.join(name);
        std::fs::rename(stage.path().join(name), &to)
            .with_context(|| format!("failed to move the new `{}` into place", to.display()))?;
    }
    // Durable once for the whole collection (unless every file was synced).
    if !fsync {
        crate::fs::sync_dirs(&[out])?;
    }
    Ok(())
}

/// Removes the staging folders in `out` whose process is gone (a collect
/// killed with -9); nothing else is touched.
fn remove_abandoned_staging(out: &Path) {
    let Ok(entries) = std::fs::read_dir(out) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(STAGING)
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && pid > 0 && !crate::fs::process_alive(pid) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_the_machine_become_one_safe_component() {
        assert_eq!(safe_component("../../x"), "_._.._x");
        assert_eq!(safe_component("/etc/x"), "_etc_x");
        assert_eq!(safe_component(".."), "_.");
        assert_eq!(safe_component(""), "unnamed");
        assert_eq!(safe_component("node-17.cluster"), "node-17.cluster");
        assert_eq!(safe_component("a\0b c"), "a_b_c");
        assert_eq!(safe_component(&"x".repeat(500)).len(), 100);
    }

    #[test]
    fn publish_replaces_the_bundle_and_removes_abandoned_staging_only() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path();
        std::fs::write(out.join("bundle.json"), "old").unwrap();
        std::fs::write(out.join("notes.txt"), "mine").unwrap();
        // A staging folder of a process that cannot exist (above pid_max).
        let dead = out.join(format!("{STAGING}2147483647-abc"));
        std::fs::create_dir(&dead).unwrap();
        std::fs::write(dead.join("big.txt"), vec![0u8; 4096]).unwrap();
        // Ours, alive: left alone.
        let alive = out.join(format!("{STAGING}{}-zzz", std::process::id()));
        std::fs::create_dir(&alive).unwrap();
        let raw = vec![("nvidia-smi-topo.txt".to_string(), b"new".to_vec())];
        publish(out, &raw, b"{}", false).unwrap();
        assert_eq!(std::fs::read(out.join("bundle.json")).unwrap(), b"{}");
        assert_eq!(
            std::fs::read(out.join("nvidia-smi-topo.txt")).unwrap(),
            b"new"
        );
        assert_eq!(std::fs::read(out.join("notes.txt")).unwrap(), b"mine");
        assert!(!dead.exists());
        assert!(alive.exists());
        let left: Vec<_> = std::fs::read_dir(out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".wire-report") && !n.ends_with("zzz"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
