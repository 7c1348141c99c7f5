//! The command line: one subcommand per stage.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::commands;

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

/// The subcommands; each one's flags, help and `run` live in its module
/// under [`crate::commands`].
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
    Render(commands::render::Args),
    Diff(commands::diff::Args),
    Placement(commands::placement::Args),
    Model(commands::model::Args),
    Schema(commands::schema::Args),
}
