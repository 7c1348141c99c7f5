//! The command line: one subcommand per stage.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "wire-report",
    version,
    about = "Which tier of the interconnect ladder does each data flow live in, and why is a number low?",
    long_about = "wire-report reads topology and bandwidth evidence from GPU nodes (vendor tool \
transcripts, sysfs, its own measurements) into one versioned JSON bundle per node, and \
answers questions about it: which GPU pairs have a direct link, which stage through the host, \
which placement is safe.\n\nExit codes: 0 success, 1 the check failed or nothing was parsed, \
2 bad input or usage."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Collect evidence on this machine, or ingest transcripts captured elsewhere (`--from`).
    #[command(after_help = "Examples:\n  \
wire-report collect                                     # this node, into captures/<hostname>/\n  \
wire-report collect --out /shared/wire/{host} --redact\n  \
wire-report collect --sysfs-root saved-tree/ --no-sweep --out tree-bundle/\n  \
wire-report collect --from captures/dgx1-p100/ --out bundle.json\n  \
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
    Collect {
        /// Transcript files or directories to ingest instead of probing this machine.
        #[arg(long = "from", num_args = 1.., value_name = "PATH")]
        from: Vec<PathBuf>,
        /// Where to write. Live: a directory (default `captures/<hostname>/`).
        /// Ingest: a `.json` file, `-` for stdout (one node only), or a directory.
        #[arg(long, value_name = "PATH")]
        out: Option<PathBuf>,
        /// Do not print warnings or progress (problems stay in the bundle).
        #[arg(long)]
        quiet: bool,
        /// Replace hostnames, serials and GUIDs by stable placeholders (for external tickets).
        #[arg(long)]
        redact: bool,
        /// Read sysfs and procfs under this directory (a saved tree) instead of /.
        #[arg(long, value_name = "PATH", default_value = "/")]
        sysfs_root: PathBuf,
        /// Seconds each vendor tool may run before it is killed.
        #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
        tool_timeout: f64,
        /// Copy sizes for the host sweep, in bytes (`4096,1048576` or `4K,1M,256M`).
        #[arg(long, value_name = "LIST")]
        sizes: Option<String>,
        /// Wall-clock budget of the host copy sweep, in seconds.
        #[arg(long, value_name = "SECONDS", default_value_t = 3.0)]
        budget: f64,
        /// Skip the host copy sweep.
        #[arg(long)]
        no_sweep: bool,
        /// Also run the installed vendor benchmarks (nvbandwidth, p2pBandwidthLatencyTest,
        /// rocm-bandwidth-test, all_reduce_perf, ib_write_bw loopback) within --benchmark-budget.
        #[arg(long)]
        benchmarks: bool,
        /// Seconds all vendor benchmarks together may take.
        #[arg(long, value_name = "SECONDS", default_value_t = 300.0)]
        benchmark_budget: f64,
        /// Two-node RDMA check by hand: `listen` on one node (server), the server's
        /// host on the other (client). Implies --benchmarks. Under Slurm with two
        /// tasks, task 0 serves and task 1 connects without this flag.
        #[arg(long, value_name = "HOST|listen")]
        peer: Option<String>,
        /// RDMA device (and port) for the two-node check, e.g. `mlx5_0` or `mlx5_0:1`
        /// (default: the first active port).
        #[arg(long, value_name = "DEV[:PORT]")]
        rdma_device: Option<String>,
        /// TCP port of the two-node check's rendezvous (default 18515, or 18515 + job id
        /// mod 1000 under Slurm).
        #[arg(long, value_name = "PORT")]
        peer_port: Option<u16>,
    },
    /// Render bundles or captured transcripts into a static site (or one file).
    #[command(after_help = "Examples:\n  \
wire-report render                                   # the shipped captures/ into site/\n  \
wire-report render bundle.json other/bundle.json --out site/\n  \
wire-report render captures/rtx3090-4gpu --single-file report.html\n  \
wire-report render /shared/wire/node17 --format md --redact   # for a ticket\n\n\
Inputs: bundle files, node directories (a bundle.json, or transcripts), or folders of them.\n\
The site works offline: no CDN, no web fonts. GB/s = 1e9 bytes per second.")]
    Render {
        /// Bundles, node directories or folders of them (default: captures/).
        inputs: Vec<PathBuf>,
        /// The site's folder (default `site`); with `--format md`, a file (default: stdout).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Write one self-contained HTML file instead of a site.
        #[arg(long, value_name = "FILE")]
        single_file: Option<PathBuf>,
        /// `site` (HTML pages) or `md` (a summary to paste into a ticket).
        #[arg(long, value_enum, default_value_t = RenderFormat::Site)]
        format: RenderFormat,
        /// Replace hostnames, serials and GUIDs by stable placeholders first.
        #[arg(long)]
        redact: bool,
    },
    /// What changed between two collections of the same nodes, and whether it matters.
    #[command(after_help = "Examples:\n  \
wire-report diff before/ after/\n  \
wire-report diff old/bundle.json new/bundle.json --json\n  \
wire-report diff before/ after/ --html diff.html\n\n\
Nodes are matched by name. Reported: topology class changes per pair, PCIe width and speed per \
device, RDMA port state and rate, error counters that grew, and bandwidth figures (same tool, \
test, pair, direction and size) that moved beyond the spread the repetitions showed, or 10% \
when the tool reports none.\n\
Exit: 0 when nothing significant changed, 1 when something did, 2 on bad input.")]
    Diff {
        /// Bundles, node directories or folders of them, before.
        old: PathBuf,
        /// The same, after.
        new: PathBuf,
        /// Print the changes as JSON.
        #[arg(long)]
        json: bool,
        /// Also write a self-contained HTML page.
        #[arg(long, value_name = "FILE")]
        html: Option<PathBuf>,
    },
    /// Check that a group of GPUs is joined by good enough links.
    #[command(after_help = "Examples:\n  \
wire-report placement topo.txt --gpus 0,1,2,3 --require direct-link\n  \
wire-report placement bundle.json --gpus 0-7 --json\n\n\
Classes, best to worst: self, direct-link, pcie-switch, pcie-host, cross-socket, unknown.\n\
A pair the topology does not describe counts as unknown.\n\
Exit: 0 when no pair is worse than --require (or no --require), 1 when one is, 2 on bad input.")]
    Placement {
        /// A bundle (`bundle.json`) or a raw topology transcript.
        source: PathBuf,
        /// GPUs of the group: `0,1,2,3`, `0-3` or `GPU0,GPU1`.
        #[arg(long, value_name = "LIST")]
        gpus: String,
        /// Refuse (exit 1) when any pair is worse than this class.
        #[arg(long, value_name = "CLASS", value_parser = parse_class)]
        require: Option<crate::evidence::topology::LinkClass>,
        /// Print the verdict as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Analytic models, labelled MODEL: staged vs direct, injection, alpha-beta fit, link ceilings.
    #[command(
        after_help = "GB/s on the command line means 1e9 bytes per second.\n\nExamples:\n  \
wire-report model staging --bytes 1073741824 --pcie-gbs 20 --net-gbs 10\n  \
wire-report model injection --gpus-per-node 8 --nics-per-node 1 --nic-gbs 25 --scaleup-gbs 400 --target-ratio 0.5\n  \
wire-report model fit captures/cx3-qdr-graph500/ --kind rdma-write\n  \
wire-report model ceiling --pcie-gen 5 --pcie-width 16"
    )]
    Model {
        #[command(subcommand)]
        model: ModelCommand,
    },
    /// Print the JSON Schema of the bundle.
    #[command(after_help = "Example:\n  wire-report schema > bundle.schema.json")]
    Schema,
}

fn parse_class(s: &str) -> Result<crate::evidence::topology::LinkClass, String> {
    use crate::evidence::topology::LinkClass;
    LinkClass::parse(s).ok_or_else(|| {
        format!(
            "`{s}` is not a class; use one of {}",
            LinkClass::ALL.map(LinkClass::as_str).join(", ")
        )
    })
}

/// What `render` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RenderFormat {
    Site,
    Md,
}

#[derive(Debug, Subcommand)]
pub enum ModelCommand {
    /// Host-staged vs direct (GPUDirect RDMA) transfer of one message.
    #[command(
        after_help = "GB/s means 1e9 bytes per second.\n\nExample:\n  wire-report model staging --bytes 1073741824 --pcie-gbs 20 --net-gbs 10"
    )]
    Staging {
        /// Message size in bytes.
        #[arg(long)]
        bytes: u64,
        /// PCIe bandwidth per direction, GB/s (1e9 bytes/s).
        #[arg(long)]
        pcie_gbs: f64,
        /// Network bandwidth per direction, GB/s (1e9 bytes/s).
        #[arg(long)]
        net_gbs: f64,
        #[arg(long)]
        json: bool,
    },
    /// Per-GPU share of a node's network injection bandwidth.
    #[command(
        after_help = "GB/s means 1e9 bytes per second.\n\nExample:\n  wire-report model injection --gpus-per-node 8 --nics-per-node 1 --nic-gbs 25 --scaleup-gbs 400 --target-ratio 0.5"
    )]
    Injection {
        #[arg(long)]
        gpus_per_node: u32,
        #[arg(long)]
        nics_per_node: u32,
        /// Bandwidth of one adapter, GB/s (1e9 bytes/s; a 200 Gb/s port is 25).
        #[arg(long)]
        nic_gbs: f64,
        /// Scale-up (NVLink/xGMI) bandwidth per GPU, GB/s.
        #[arg(long)]
        scaleup_gbs: f64,
        /// Also print the fewest adapters that reach this per-GPU/scale-up ratio.
        #[arg(long)]
        target_ratio: Option<f64>,
        #[arg(long)]
        json: bool,
    },
    /// Fit t(m) = alpha + m/beta to the size sweeps in a bundle or transcript.
    #[command(
        after_help = "Examples:\n  wire-report model fit captures/cx3-qdr-graph500/perftest-bw-004-ib-write-bw-a-cx3-qdr-mbsec-client.txt\n  wire-report model fit bundle.json --kind allreduce --json"
    )]
    Fit {
        /// A bundle (`bundle.json`) or one transcript.
        source: std::path::PathBuf,
        /// Only sweeps of this kind (`rdma-write`, `allreduce`, `p2p-copy`...).
        #[arg(long)]
        kind: Option<String>,
        /// Most segments a sweep with knees is cut into.
        #[arg(long, default_value_t = 3)]
        max_segments: usize,
        #[arg(long)]
        json: bool,
    },
    /// Ceiling of a link from its facts (generation, width, rate, links).
    #[command(
        after_help = "Examples:\n  wire-report model ceiling --pcie-gen 5 --pcie-width 16\n  wire-report model ceiling --ib-rate 400\n  wire-report model ceiling --ib-width 4X --ib-speed HDR\n  wire-report model ceiling --nvlink-gen 4 --links 18\n  wire-report model ceiling --xgmi mi300 --links 7"
    )]
    Ceiling(CeilingArgs),
}

#[derive(Debug, clap::Args)]
pub struct CeilingArgs {
    /// PCIe generation, 1 to 6.
    #[arg(long)]
    pub pcie_gen: Option<u32>,
    /// PCIe lanes (default 16).
    #[arg(long)]
    pub pcie_width: Option<u32>,
    /// InfiniBand/RoCE port rate in Gb/s, as ibstat prints it.
    #[arg(long)]
    pub ib_rate: Option<f64>,
    /// InfiniBand width, e.g. 4X (with --ib-speed).
    #[arg(long)]
    pub ib_width: Option<String>,
    /// InfiniBand speed name: SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR.
    #[arg(long)]
    pub ib_speed: Option<String>,
    /// NVLink generation, 1 to 5 (with --links).
    #[arg(long)]
    pub nvlink_gen: Option<u32>,
    /// xGMI generation: mi200 or mi300 (with --links).
    #[arg(long)]
    pub xgmi: Option<String>,
    /// Number of NVLink or xGMI links.
    #[arg(long)]
    pub links: Option<u32>,
    #[arg(long)]
    pub json: bool,
}
