//! `wire-report model ...`: the analytic models on the command line. Every
//! output starts with the MODEL banner and names its inputs; `--json`
//! gives the same for scripts.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;

use crate::models::{self, BANNER, ceiling, fit, injection, staging};
use crate::render::format::{bytes, gbs, secs};

/// Analytic models, labelled MODEL: staged vs direct, injection, alpha-beta fit, link ceilings.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "GB/s on the command line means 1e9 bytes per second.\n\nExamples:\n  \
wire-report model staging --bytes 1073741824 --pcie-gbs 20 --net-gbs 10\n  \
wire-report model injection --gpus-per-node 8 --nics-per-node 1 --nic-gbs 25 --scaleup-gbs 400 --target-ratio 0.5\n  \
wire-report model fit captures/cx3-qdr-graph500/ --kind rdma-write\n  \
wire-report model ceiling --pcie-gen 5 --pcie-width 16"
)]
pub struct Args {
    #[command(subcommand)]
    pub model: ModelCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum ModelCommand {
    Staging(StagingArgs),
    Injection(InjectionArgs),
    Fit(FitArgs),
    Ceiling(CeilingArgs),
}

/// Host-staged vs direct (GPUDirect RDMA) transfer of one message.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "GB/s means 1e9 bytes per second.\n\nExample:\n  wire-report model staging --bytes 1073741824 --pcie-gbs 20 --net-gbs 10"
)]
pub struct StagingArgs {
    /// Message size in bytes.
    #[arg(long)]
    pub bytes: u64,
    /// PCIe bandwidth per direction, GB/s (1e9 bytes/s).
    #[arg(long)]
    pub pcie_gbs: f64,
    /// Network bandwidth per direction, GB/s (1e9 bytes/s).
    #[arg(long)]
    pub net_gbs: f64,
    /// Fixed cost of each store-and-forward step, microseconds (a copy's
    /// launch and completion). Assumed 2 when not given; use the alpha of
    /// a latency sweep (`model fit`) from your own node.
    #[arg(long)]
    pub hop_latency_us: Option<f64>,
    #[arg(long)]
    pub json: bool,
}

/// Per-GPU share of a node's network injection bandwidth.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "GB/s means 1e9 bytes per second.\n\nExample:\n  wire-report model injection --gpus-per-node 8 --nics-per-node 1 --nic-gbs 25 --scaleup-gbs 400 --target-ratio 0.5"
)]
pub struct InjectionArgs {
    #[arg(long)]
    pub gpus_per_node: u32,
    #[arg(long)]
    pub nics_per_node: u32,
    /// Bandwidth of one adapter, GB/s (1e9 bytes/s; a 200 Gb/s port is 25).
    #[arg(long)]
    pub nic_gbs: f64,
    /// Scale-up (NVLink/xGMI) bandwidth per GPU, GB/s.
    #[arg(long)]
    pub scaleup_gbs: f64,
    /// Also print the fewest adapters that reach this per-GPU/scale-up ratio.
    #[arg(long)]
    pub target_ratio: Option<f64>,
    #[arg(long)]
    pub json: bool,
}

/// Fit t(m) = alpha + m/beta to the size sweeps in a bundle or transcript.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  wire-report model fit captures/cx3-qdr-graph500/perftest-bw-004-ib-write-bw-a-cx3-qdr-mbsec-client.txt\n  wire-report model fit bundle.json --kind allreduce --json"
)]
pub struct FitArgs {
    /// A bundle (`bundle.json`) or one transcript.
    pub source: PathBuf,
    /// Only sweeps of this kind (`rdma-write`, `allreduce`, `p2p-copy`...).
    #[arg(long)]
    pub kind: Option<String>,
    /// Most segments a sweep with knees is cut into.
    #[arg(long, default_value_t = 3)]
    pub max_segments: usize,
    #[arg(long)]
    pub json: bool,
}

/// Ceiling of a link from its facts (generation, width, rate, links).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  wire-report model ceiling --pcie-gen 5 --pcie-width 16\n  wire-report model ceiling --ib-rate 400\n  wire-report model ceiling --ib-width 4X --ib-speed HDR\n  wire-report model ceiling --nvlink-gen 4 --links 18\n  wire-report model ceiling --xgmi mi300 --links 7"
)]
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

fn emit(json_out: bool, value: serde_json::Value, text: String) -> anyhow::Result<ExitCode> {
    if json_out {
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        print!("{BANNER}\n\n{text}");
    }
    Ok(ExitCode::SUCCESS)
}

/// `model`: one model's numbers, text or JSON.
pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    match &a.model {
        ModelCommand::Staging(a) => staging_cmd(a),
        ModelCommand::Injection(a) => injection_cmd(a),
        ModelCommand::Fit(a) => fit_cmd(a),
        ModelCommand::Ceiling(a) => ceiling_cmd(a),
    }
}

fn staging_cmd(a: &StagingArgs) -> anyhow::Result<ExitCode> {
    let (pcie, net, m) = (a.pcie_gbs * 1e9, a.net_gbs * 1e9, a.bytes as f64);
    let hop = a
        .hop_latency_us
        .map_or(staging::ASSUMED_HOP_LATENCY_S, |us| us * 1e-6);
    let s = staging::staged_cost_with_latency(m, pcie, net, hop)?;
    let d = staging::direct_cost_with_latency(m, pcie, net, hop)?;
    let x = staging::crossover_pcie(net)?;
    let mut t = String::new();
    writeln!(
        t,
        "inputs: message {}, PCIe {} per direction, network {}, {} per store-and-forward step (5 staged, 3 direct{})",
        bytes(m),
        gbs(pcie),
        gbs(net),
        secs(hop),
        if a.hop_latency_us.is_none() {
            "; assumed, --hop-latency-us"
        } else {
            ""
        }
    )?;
    writeln!(
        t,
        "                 serial      pipelined   host memory traffic   PCIe crossings"
    )?;
    for (name, c) in [("staged (host)", s), ("direct (RDMA)", d)] {
        writeln!(
            t,
            "{name:16} {:<11} {:<11} {:<21} {}",
            secs(c.serial_s),
            secs(c.pipelined_s),
            bytes(c.host_memory_traffic_bytes),
            c.pcie_crossings
        )?;
    }
    writeln!(
        t,
        "staging is bandwidth-limited by PCIe below {} (twice the network rate); above it, it costs latency, host memory bandwidth and CPU time",
        gbs(x)
    )?;
    emit(
        a.json,
        json!({"model": BANNER, "inputs": {"bytes": m, "pcie_bytes_per_s": pcie, "net_bytes_per_s": net, "hop_latency_s": hop}, "staged": s, "direct": d, "crossover_pcie_bytes_per_s": x}),
        t,
    )
}

fn injection_cmd(a: &InjectionArgs) -> anyhow::Result<ExitCode> {
    let i = injection::injection(
        a.gpus_per_node,
        a.nics_per_node,
        a.nic_gbs * 1e9,
        a.scaleup_gbs * 1e9,
    )?;
    let need = a
        .target_ratio
        .map(|r| {
            injection::min_nics_for_ratio(a.gpus_per_node, a.nic_gbs * 1e9, a.scaleup_gbs * 1e9, r)
        })
        .transpose()?;
    let mut t = String::new();
    writeln!(
        t,
        "inputs: {} GPUs and {} adapters of {} per node, scale-up {} per GPU",
        i.gpus_per_node,
        i.nics_per_node,
        gbs(i.nic_bytes_per_s),
        gbs(i.scaleup_bytes_per_s)
    )?;
    writeln!(
        t,
        "node injection:      {}",
        gbs(i.node_injection_bytes_per_s)
    )?;
    writeln!(t, "per-GPU share:       {}", gbs(i.per_gpu_bytes_per_s))?;
    writeln!(
        t,
        "ratio to scale-up:   {:.4} (1/{:.0})",
        i.ratio_to_scaleup,
        1.0 / i.ratio_to_scaleup
    )?;
    if let (Some(r), Some(n)) = (a.target_ratio, need) {
        writeln!(t, "adapters for ratio {r}: at least {n}")?;
    }
    emit(
        a.json,
        json!({"model": BANNER, "injection": i, "target_ratio": a.target_ratio, "min_nics_for_target": need}),
        t,
    )
}

fn ceiling_cmd(a: &CeilingArgs) -> anyhow::Result<ExitCode> {
    let mut out = Vec::new();
    if let Some(g) = a.pcie_gen {
        out.push(ceiling::pcie(g, a.pcie_width.unwrap_or(16))?);
    }
    if let Some(r) = a.ib_rate {
        out.push(ceiling::ib_rate(r)?);
    }
    if let (Some(w), Some(s)) = (&a.ib_width, &a.ib_speed) {
        out.push(ceiling::ib_width_speed(w, s)?);
    }
    if let Some(g) = a.nvlink_gen {
        out.push(ceiling::nvlink(g, a.links.unwrap_or(1))?);
    }
    if let Some(x) = &a.xgmi {
        out.push(ceiling::xgmi(x, a.links.unwrap_or(1))?);
    }
    if out.is_empty() {
        anyhow::bail!(
            "give a link: --pcie-gen N [--pcie-width W], --ib-rate GBITS, --ib-width 4X --ib-speed HDR, --nvlink-gen N --links L, or --xgmi mi200|mi300 --links L"
        );
    }
    let mut t = String::new();
    for c in &out {
        writeln!(
            t,
            "{}: {} per direction, {} both directions",
            c.link,
            gbs(c.per_direction_bytes_per_s),
            gbs(c.bidirectional_bytes_per_s)
        )?;
        writeln!(t, "  = {}", c.derivation)?;
        writeln!(t, "  source: {}", c.source)?;
    }
    t.push_str("No achievable fraction is applied: these are line rates after encoding.\n");
    emit(a.json, json!({"model": BANNER, "ceilings": out}), t)
}

fn fit_cmd(a: &FitArgs) -> anyhow::Result<ExitCode> {
    let b = crate::inputs::load_source(&a.source)?;
    let mut sweeps = fit::sweeps(&b.measurements);
    if let Some(k) = a.kind.as_deref() {
        sweeps.retain(|s| s.kind.as_str() == k);
    }
    if sweeps.is_empty() {
        anyhow::bail!(
            "`{}` holds no size sweep{} (three or more message sizes of one test)",
            a.source.display(),
            a.kind
                .as_ref()
                .map(|k| format!(" of kind `{k}`"))
                .unwrap_or_default()
        );
    }
    let mut t = String::new();
    let mut results = Vec::new();
    for s in &sweeps {
        let label = s.label();
        writeln!(
            t,
            "{label}\n  from {}:{} ({} points)",
            s.source.file,
            s.source.line,
            s.points.len()
        )?;
        if s.kind.is_collective() {
            writeln!(
                t,
                "  a collective: beta is its size over the whole collective's time (nccl-tests' algbw), not a link's bandwidth; alpha is the time of an empty one"
            )?;
        }
        results.push(fit_text(&mut t, s, &fit::fit_sweep(s, a.max_segments))?);
    }
    emit(
        a.json,
        json!({"model": models::BANNER, "source": a.source.display().to_string(), "fits": results}),
        t,
    )
}

/// One sweep's fit in words, added to `t`, and as JSON. An unsound fit's
/// numbers are printed under a line that says it is not sound and why,
/// never alone as a model result.
fn fit_text(
    t: &mut String,
    s: &fit::Sweep,
    judged: &fit::SweepFit,
) -> anyhow::Result<serde_json::Value> {
    Ok(match judged {
        fit::SweepFit::BetaOnly {
            plateau_bytes_per_s,
            queue_depth,
            knees_bytes,
        } => {
            writeln!(
                t,
                "  beta {} (the largest message's bandwidth); alpha and m* not given: {queue_depth} messages in flight hide the cost of one (alpha comes from a latency test)",
                gbs(*plateau_bytes_per_s),
            )?;
            if !knees_bytes.is_empty() {
                let knees: Vec<String> = knees_bytes.iter().map(|k| bytes(*k)).collect();
                writeln!(t, "  knees at {}", knees.join(", "))?;
            }
            json!({
                "sweep": s,
                "beta_bytes_per_s": plateau_bytes_per_s,
                "knees_bytes": knees_bytes,
                "alpha": "not given: a bandwidth test with many messages in flight",
            })
        }
        fit::SweepFit::Sound(f) => {
            fit_numbers(t, f)?;
            json!({"sweep": s, "fit": f, "sound": true})
        }
        fit::SweepFit::Unsound { fit: f, why } => {
            writeln!(
                t,
                "  NOT SOUND, not a model result: {}",
                crate::render::trust::unsound_lines(why, f.segments.len())
            )?;
            writeln!(t, "  the rejected line's numbers, for inspection:")?;
            fit_numbers(t, f)?;
            json!({"sweep": s, "fit": f, "sound": false, "unsound": why})
        }
        fit::SweepFit::NoFit(e) => {
            writeln!(t, "  no fit: {e}")?;
            json!({"sweep": s, "error": e.to_string()})
        }
    })
}

/// The whole sweep's line and each segment's, each marked when it is not
/// sound on its own.
fn fit_numbers(t: &mut String, f: &fit::SegmentedFit) -> anyhow::Result<()> {
    let mark = |g: &fit::Fit| {
        let why: Vec<String> = fit::judge(g)
            .iter()
            .map(crate::render::trust::unsound)
            .collect();
        if why.is_empty() {
            String::new()
        } else {
            format!("  (not sound: {})", why.join("; "))
        }
    };
    let w = &f.whole;
    writeln!(
        t,
        "  whole sweep: alpha {}  beta {}  m* = n_half = {}  R^2 {:.4}  worst point off by {:.0}%{}",
        secs(w.alpha_s),
        gbs(w.beta_bytes_per_s),
        bytes(w.m_star_bytes),
        w.r_squared,
        w.max_relative_residual * 100.0,
        mark(w)
    )?;
    if f.knees_bytes.is_empty() {
        return Ok(());
    }
    let knees: Vec<String> = f.knees_bytes.iter().map(|k| bytes(*k)).collect();
    writeln!(
        t,
        "  knees at {}: one line hides them; per segment:",
        knees.join(", ")
    )?;
    for g in &f.segments {
        writeln!(
            t,
            "    {} .. {}: alpha {}  beta {}  m* {}  R^2 {:.4}{}",
            bytes(g.from_bytes),
            bytes(g.to_bytes),
            secs(g.alpha_s),
            gbs(g.beta_bytes_per_s),
            bytes(g.m_star_bytes),
            g.r_squared,
            mark(g)
        )?;
    }
    Ok(())
}
