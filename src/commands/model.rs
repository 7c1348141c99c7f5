//! `wire-report model ...`: the analytic models on the command line. Every
//! output starts with the MODEL banner and names its inputs; `--json`
//! gives the same for scripts.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use serde_json::json;

use crate::cli::{CeilingArgs, ModelCommand};
use crate::models::{self, BANNER, ceiling, fit, injection, staging};
use crate::render::format::{bytes, gbs, secs};

fn emit(json_out: bool, value: serde_json::Value, text: String) -> anyhow::Result<ExitCode> {
    if json_out {
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        print!("{BANNER}\n\n{text}");
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run(cmd: &ModelCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        ModelCommand::Staging {
            bytes: m,
            pcie_gbs,
            net_gbs,
            json: j,
        } => {
            let (pcie, net, m) = (pcie_gbs * 1e9, net_gbs * 1e9, *m as f64);
            let s = staging::staged_cost(m, pcie, net)?;
            let d = staging::direct_cost(m, pcie, net)?;
            let x = staging::crossover_pcie(net)?;
            let mut t = String::new();
            writeln!(
                t,
                "inputs: message {}, PCIe {} per direction, network {}",
                bytes(m),
                gbs(pcie),
                gbs(net)
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
                *j,
                json!({"model": BANNER, "inputs": {"bytes": m, "pcie_bytes_per_s": pcie, "net_bytes_per_s": net}, "staged": s, "direct": d, "crossover_pcie_bytes_per_s": x}),
                t,
            )
        }
        ModelCommand::Injection {
            gpus_per_node,
            nics_per_node,
            nic_gbs,
            scaleup_gbs,
            target_ratio,
            json: j,
        } => {
            let i = injection::injection(
                *gpus_per_node,
                *nics_per_node,
                nic_gbs * 1e9,
                scaleup_gbs * 1e9,
            )?;
            let need = target_ratio
                .map(|r| {
                    injection::min_nics_for_ratio(
                        *gpus_per_node,
                        nic_gbs * 1e9,
                        scaleup_gbs * 1e9,
                        r,
                    )
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
            if let (Some(r), Some(n)) = (target_ratio, need) {
                writeln!(t, "adapters for ratio {r}: at least {n}")?;
            }
            emit(
                *j,
                json!({"model": BANNER, "injection": i, "target_ratio": target_ratio, "min_nics_for_target": need}),
                t,
            )
        }
        ModelCommand::Fit {
            source,
            kind,
            max_segments,
            json: j,
        } => fit_cmd(source, kind.as_deref(), *max_segments, *j),
        ModelCommand::Ceiling(args) => ceiling_cmd(args),
    }
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

fn fit_cmd(
    source: &Path,
    kind: Option<&str>,
    max_segments: usize,
    j: bool,
) -> anyhow::Result<ExitCode> {
    let b = crate::collect::load_source(source)?;
    let mut sweeps = fit::sweeps(&b.measurements);
    if let Some(k) = kind {
        sweeps.retain(|s| s.kind.as_str() == k);
    }
    if sweeps.is_empty() {
        anyhow::bail!(
            "`{}` holds no size sweep{} (three or more message sizes of one test)",
            source.display(),
            kind.map(|k| format!(" of kind `{k}`")).unwrap_or_default()
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
        match fit::fit_with_knees(&s.points, max_segments) {
            Ok(f) => {
                let w = &f.whole;
                writeln!(
                    t,
                    "  whole sweep: alpha {}  beta {}  m* = n_half = {}  R^2 {:.4}  worst point off by {:.0}%",
                    secs(w.alpha_s),
                    gbs(w.beta_bytes_per_s),
                    bytes(w.m_star_bytes),
                    w.r_squared,
                    w.max_relative_residual * 100.0
                )?;
                if !f.knees_bytes.is_empty() {
                    writeln!(
                        t,
                        "  knees at {}: one line hides them; per segment:",
                        f.knees_bytes
                            .iter()
                            .map(|k| bytes(*k))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )?;
                    for g in &f.segments {
                        writeln!(
                            t,
                            "    {} .. {}: alpha {}  beta {}  m* {}  R^2 {:.4}",
                            bytes(g.from_bytes),
                            bytes(g.to_bytes),
                            secs(g.alpha_s),
                            gbs(g.beta_bytes_per_s),
                            bytes(g.m_star_bytes),
                            g.r_squared
                        )?;
                    }
                }
                results.push(json!({"sweep": s, "fit": f}));
            }
            Err(e) => {
                writeln!(t, "  no fit: {e}")?;
                results.push(json!({"sweep": s, "error": e.to_string()}));
            }
        }
    }
    emit(
        j,
        json!({"model": models::BANNER, "source": source.display().to_string(), "fits": results}),
        t,
    )
}
