//! The evidence section: where the evidence came from, the tools collected
//! and the kinds missing, the problems met while reading, the probes run
//! live, and the two-node check this node took part in.

use std::collections::BTreeMap;

use super::{Link, Linker};
use crate::bundle::Bundle;
use crate::evidence::measurement::Kind;
use crate::evidence::{Source, Tool};

/// `Two-node check: served ib_write_bw for n2 (paired by Slurm, job 7); ...`.
pub(super) fn pair_text(p: &crate::bundle::PeerLink) -> String {
    use crate::bundle::Role;
    let peer = p
        .peer
        .as_deref()
        .or(p.address.as_deref())
        .unwrap_or("an unnamed peer");
    let side = match p.role {
        Role::Server => format!("served {} for {peer}", p.tool),
        Role::Client => format!(
            "ran the {} client against {peer}{}",
            p.tool,
            p.address
                .as_deref()
                .filter(|a| *a != peer)
                .map(|a| format!(" at {a}"))
                .unwrap_or_default()
        ),
    };
    let via = match (p.via.as_str(), &p.job) {
        ("slurm", Some(j)) => format!("paired by Slurm, job {j}"),
        ("slurm", None) => "paired by Slurm".to_string(),
        (v, _) => format!("paired by {v}"),
    };
    format!(
        "Two-node check: this node {side} ({via}); {}{}.",
        if p.ok {
            "completed"
        } else {
            "did not complete (see the probes)"
        },
        p.transcript
            .as_deref()
            .map(|t| format!("; its side's figures are in {t}"))
            .unwrap_or_default()
    )
}

pub(super) fn collected(b: &Bundle) -> Vec<String> {
    let mut tools: BTreeMap<&str, usize> = BTreeMap::new();
    for t in &b.transcripts {
        *tools.entry(t.tool.as_str()).or_default() += 1;
    }
    tools
        .into_iter()
        .map(|(t, n)| {
            if n > 1 {
                format!("{t} x{n}")
            } else {
                t.to_string()
            }
        })
        .collect()
}

/// Kinds of evidence the bundle lacks: (short name, what would supply it).
pub fn missing_kinds(b: &Bundle) -> Vec<(&'static str, &'static str)> {
    let mut m = Vec::new();
    let has = |f: &dyn Fn(Kind) -> bool| b.measurements.iter().any(|x| f(x.kind));
    // A one-GPU matrix has no pairs, and is a topology all the same.
    let matrix_read = b.transcripts.iter().flat_map(|t| &t.blocks).any(|x| {
        matches!(
            x.tool,
            Tool::NvidiaSmiTopo | Tool::RocmSmiTopo | Tool::AmdSmiTopology | Tool::PpuSmiTopo
        )
    });
    if b.topology.links.is_empty() && !matrix_read {
        m.push((
            "topology",
            "nvidia-smi topo -m, rocm-smi --showtopo, amd-smi topology",
        ));
    }
    if !has(&|k| matches!(k, Kind::P2pCopy | Kind::H2d | Kind::D2h | Kind::D2d)) {
        m.push((
            "copy bandwidth",
            "nvbandwidth, p2pBandwidthLatencyTest, rocm-bandwidth-test",
        ));
    }
    if b.rdma.is_empty() {
        m.push(("RDMA ports", "ibstat, ibv_devinfo, or live collect"));
    }
    if b.pcie.is_empty() {
        m.push((
            "PCIe link state",
            "lspci -vvv, nvidia-smi -q, or live collect",
        ));
    }
    if !has(&|k| {
        matches!(
            k,
            Kind::RdmaWrite | Kind::RdmaRead | Kind::RdmaSend | Kind::RdmaAtomic | Kind::Rdma
        )
    }) {
        m.push(("RDMA bandwidth", "perftest"));
    }
    m
}

pub(super) fn missing(kinds: &[(&str, &str)]) -> Vec<String> {
    kinds
        .iter()
        .map(|(k, how)| format!("{k} ({how})"))
        .collect()
}

/// How the evidence was obtained, in words.
pub(super) fn origin(b: &Bundle) -> &'static str {
    match b.host.origin {
        crate::bundle::Origin::Ingested => "ingested from captured transcripts",
        crate::bundle::Origin::Live => "collected live on the node",
    }
}

/// The short names of the missing kinds, for the index.
pub(super) fn missing_short(kinds: &[(&str, &str)]) -> String {
    kinds.iter().map(|k| k.0).collect::<Vec<_>>().join(", ")
}

/// Problems met while reading, each linked to its line.
/// Problems, less those a live probe already states (the probe list says
/// them once, with their status).
pub(super) fn problems(b: &Bundle, linker: &Linker<'_>) -> Vec<Link> {
    let said_by_probe = |p: &crate::bundle::Problem| {
        b.probes
            .iter()
            .any(|q| q.name == p.file || q.message == p.message)
    };
    b.problems
        .iter()
        .filter(|p| !said_by_probe(p))
        .map(|p| {
            let src = Source {
                file: p.file.clone().into(),
                line: p.line.unwrap_or(1),
            };
            Link {
                label: p.one_line(),
                href: linker.href(&src),
            }
        })
        .collect()
}

/// Live probes: `name: status (seconds): message`.
pub(super) fn probes(b: &Bundle) -> Vec<String> {
    b.probes
        .iter()
        .map(|p| {
            let status = serde_json::to_value(p.status)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            if p.message.is_empty() {
                format!("{}: {status} ({:.2} s)", p.name, p.duration_s)
            } else {
                format!(
                    "{}: {status} ({:.2} s): {}",
                    p.name, p.duration_s, p.message
                )
            }
        })
        .collect()
}
