//! Live collection on the machine wire-report runs on: sysfs PCIe and NUMA
//! facts, vendor tools when present (each with a timeout), RDMA ports and
//! counters (sysfs, and `ethtool -S` of their interfaces, each read at the
//! start and the end), the process's placement, and a host memory copy sweep. Works
//! on any Linux machine with or without GPUs, adapters or vendor tools;
//! reads only, and the copy sweep is bounded by its budget.
//!
//! [`collect`] is the list of steps, in order. Each step runs through the
//! recorder (`recorder.rs`), which owns how an outcome becomes probes,
//! transcripts and problems; the commands come from the tool table
//! ([`crate::evidence::tools`]).

mod benchmarks;
mod rdma;
mod recorder;
mod sweeps;
mod system;
mod tree;

use std::path::PathBuf;
use std::time::Duration;

use super::sweep::Settings;
use super::sysfs::{self, Root};
use crate::bundle::Bundle;
use crate::evidence::tools::{Stage, live_commands};
use recorder::{Policy, Recorder};

/// How to collect.
pub struct Options {
    pub root: PathBuf,
    pub redact: bool,
    pub progress: bool,
    pub tool_timeout: Duration,
    /// What the copy sweeps measure; `None`: no copy sweep.
    pub sweep: Option<Settings>,
    /// Print each copy sweep's plan (what it measures, about how long it
    /// takes) to stderr before it runs.
    pub announce_plans: bool,
    /// Run the vendor benchmarks that are installed, within this budget.
    pub benchmarks: Option<Duration>,
    /// The two-node check's side, when a peer is given or Slurm pairs us.
    pub pair: Option<super::pair::Plan>,
}

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

/// Runs every probe. Never fails: whatever goes wrong is a probe result or
/// a problem in the bundle.
pub fn collect(opts: &Options) -> Collected {
    let root = Root(opts.root.clone());
    let inventory = live_commands(Stage::Inventory);
    // The bar counts one per inventory command and four later steps.
    let steps = inventory.len() + 4;
    let mut rec = Recorder::new(hostname(&root), opts.tool_timeout, opts.progress, steps);
    // Counters first: the delta at the end is what happened while we looked.
    let counters_start = sysfs::rdma_counters(&root);
    let ethtool_start = rdma::ethtool_start(&mut rec, &root);
    let sys = system::system(&root);

    // Vendor tools: their transcripts go through the same parsers as captures.
    rec.step("vendor tools");
    for cmd in inventory {
        let name = cmd.command_line();
        let out = rec.runner.run(cmd.program, cmd.args);
        rec.command(name.clone(), cmd.file, out, Policy::Inventory);
        rec.step(&name);
    }

    // sysfs: PCIe functions and the vendor-neutral tree topology.
    rec.step("sysfs PCIe");
    tree::pcie(&mut rec, &root);

    // RDMA ports from sysfs, merged with what the tools said; then what
    // libibverbs itself says (feature `rdma`).
    rec.step("sysfs RDMA");
    rdma::ports(&mut rec, &root);

    // Host memory copies: the host tier, and what a staged copy pays.
    rec.step("host memcpy sweep");
    if let Some(settings) = &opts.sweep {
        sweeps::host(&mut rec, settings, &sys, opts.announce_plans);
    }

    // GPU copies through the CUDA driver (and HIP, feature `rocm`), when there is one.
    rec.step("CUDA copy sweeps");
    if let Some(settings) = &opts.sweep {
        sweeps::gpu(
            &mut rec,
            settings,
            &sys,
            opts.announce_plans,
            &super::cuda::Cuda,
            super::cuda::inventory(),
        );
        #[cfg(feature = "rocm")]
        sweeps::gpu(
            &mut rec,
            settings,
            &sys,
            opts.announce_plans,
            &super::hip::Hip,
            super::hip::inventory(),
        );
    }

    // Vendor benchmarks and ib_write_bw, when asked for.
    if let Some(budget) = opts.benchmarks {
        rec.step("vendor benchmarks");
        benchmarks::run(&mut rec, budget, opts.pair.as_ref());
    }

    // Counters again: the delta is what happened while we looked.
    rec.step("RDMA counters");
    rdma::counters(&mut rec, &root, &counters_start);
    rdma::ethtool_end(&mut rec, ethtool_start);
    rec.finish(sys)
}

/// Redacts when asked; returns what to write.
pub fn finish(
    mut c: Collected,
    redactor: Option<&mut crate::bundle::redact::Redactor>,
) -> anyhow::Result<Collected> {
    if let Some(r) = redactor {
        r.redact(&mut c.bundle, &mut c.raw)?;
    }
    Ok(c)
}
