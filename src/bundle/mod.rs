//! The bundle: everything collected about one node, as one versioned JSON
//! document. This module is the contract between `collect` and everything
//! downstream (render, placement, scripts); its rustdoc is the schema, and
//! `wire-report schema` prints the same thing as JSON Schema.
//!
//! The bundle holds observations only. Models and diagnosis run when a
//! bundle is read, so a better model can re-interpret old bundles.
//!
//! # Example (abridged, version 3; written on one line)
//! ```json
//! {
//!   "schema_version": 3,
//!   "generator": { "name": "wire-report", "version": "0.1.0" },
//!   "host": { "name": "dgx1-p100", "origin": "ingested" },
//!   "files": ["captures/dgx1-p100/topo.txt", "captures/dgx1-p100/p2p.txt"],
//!   "topology": {
//!     "devices": [
//!       { "id": "GPU0", "kind": "gpu", "cpu_affinity": [{ "first": 1, "last": 1 }],
//!         "source": [0, 2] },
//!       { "id": "NIC0", "kind": "nic", "name": "mlx5_0", "source": [0, 10] }
//!     ],
//!     "links": [
//!       { "a": "GPU0", "b": "GPU1", "class": "direct-link", "code": "NV1", "nvlinks": 1,
//!         "sources": [[0, 2]] }
//!     ]
//!   },
//!   "measurements": {
//!     "series": [
//!       { "tool": "p2pBandwidthLatencyTest", "file": 1, "kind": "p2p-copy",
//!         "test": "Unidirectional P2P=Enabled Bandwidth Matrix (GB/s)",
//!         "direction": "uni", "statistic": "avg", "p2p": "enabled",
//!         "buffers": "device", "copy_engine": "unknown",
//!         "verification": { "state": "unknown" },
//!         "questions": { "unit": "gigabytes-per-s", "direction": "row-to-column",
//!                        "path": { "gpu-to-gpu": { "access": true } } } }
//!     ],
//!     "cells": [
//!       { "series": 0, "src": "GPU0", "dst": "GPU1",
//!         "bandwidth_bytes_per_s": 18170000000.0, "as_printed": "18.17 GB/s", "line": 30 }
//!     ]
//!   },
//!   "transcripts": [
//!     { "path": "captures/dgx1-p100/topo.txt", "tool": "nvidia-smi-topo",
//!       "sha256": "9f2c...", "text": "\t    GPU0GPU1..." }
//!   ],
//!   "problems": []
//! }
//! ```
//! A source is `[index into files, line]`. A series' `questions` are the
//! seven answers as facts (`evidence::answers`; an answer the transcript
//! does not give is left out), made into sentences at render time. Version 1
//! (pretty JSON, sources `{ "file": ..., "line": ... }`, `measurements` a
//! list of full cells, answers as sentences) and version 2 (this form with
//! the answers as sentences) are still read and migrated; see [`wire`] and
//! [`migrate`].

pub(crate) mod absorb;
mod dedup;
pub mod migrate;
mod peer;
mod probe;
pub mod read;
pub mod redact;
pub mod wire;

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::evidence::counters::CounterDump;
use crate::evidence::ethtool::InterfaceStats;
use crate::evidence::lsmod::ModuleListing;
use crate::evidence::measurement::Measurement;
use crate::evidence::nccl::NcclInit;
use crate::evidence::numa::NumaTopology;
use crate::evidence::pcie::PcieLink;
use crate::evidence::rdma::RdmaDevice;
use crate::evidence::topology::Topology;
use crate::evidence::{Note, Tool};

pub use absorb::{Absorbed, merge_rdma};
pub use peer::{PeerLink, Role};
pub use probe::{Probe, ProbeStatus};

/// The version of the bundle format this build writes. Readers refuse a
/// newer version rather than misread it.
pub const SCHEMA_VERSION: u32 = 3;

/// The oldest version this build reads (version 1 is migrated on read).
pub const OLDEST_READ: u32 = 1;

/// One node's evidence.
#[derive(Debug, Clone, PartialEq, JsonSchema)]
pub struct Bundle {
    /// Always [`SCHEMA_VERSION`] when written by this build. Example: `1`.
    pub schema_version: u32,
    /// The program that wrote the bundle.
    pub generator: Generator,
    /// The node the evidence describes.
    pub host: Host,
    /// Devices and links, merged from every topology transcript.
    pub topology: Topology,
    /// Bandwidth and latency figures, one cell per number a tool printed,
    /// each with its unit in the field name, its source line and the seven
    /// questions answered as facts. Example cell: `{ "tool": "nvbandwidth", "kind":
    /// "p2p-copy", "src": "GPU0", "dst": "GPU1", "direction": "uni",
    /// "bandwidth_bytes_per_s": 370900000000.0, "statistic": "avg",
    /// "as_printed": "370.90 GB/s", ... }`.
    #[schemars(with = "read::Measurements")]
    pub measurements: Vec<Measurement>,
    /// RDMA adapters and ports (ibstat, ibv_devinfo, ...). Example:
    /// `{ "name": "mlx5_0", "ports": [{ "port": 1, "state": "Active",
    /// "active": true, "rate_bytes_per_s": 25000000000.0, "rate_as_printed": "200" }] }`.
    #[serde(default)]
    pub rdma: Vec<RdmaDevice>,
    /// PCIe links, capable vs current (lspci, nvidia-smi -q). Example:
    /// `{ "address": "01:00.0", "max_speed_gt_per_s": 16.0,
    /// "current_speed_gt_per_s": 8.0, "speed_downgraded": true, ... }`.
    #[serde(default)]
    pub pcie: Vec<PcieLink>,
    /// Network interface counters (`ethtool -S`; a live collection reads
    /// each RDMA adapter's interface at its start and end). Example:
    /// `{ "interface": "ens1f0np0", "readings": 2, "counters": [{ "name":
    /// "rx_prio3_pause", "value": 1200, "delta": 200, "source": [3, 41] }] }`:
    /// `value` is the last reading (since the driver loaded), `delta` the
    /// growth between the first and last reading.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interfaces: Vec<InterfaceStats>,
    /// Kernel module listings read from transcripts (`lsmod`, whole or
    /// through `grep`): the rows and the command that printed them, which
    /// says what an absent row rules out (`evidence::lsmod`). A live
    /// collection's modules are in `system.drivers`. Example: `{ "command":
    /// "lsmod | grep nvidia", "rows": [{ "name": "nvidia_peermem",
    /// "size_bytes": 16384, "used": 0, "source": [2, 4] }], "source": [2, 2] }`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modules: Vec<ModuleListing>,
    /// NCCL and RCCL initialisations read from their `NCCL_DEBUG=INFO`
    /// logs (`evidence::nccl`): the ranks' GPUs, the adapters and network
    /// NCCL chose, whether GPUDirect RDMA was on, and each channel's path.
    /// Example: `{ "version": "2.18.3", "ranks": 2, "devices": [{ "rank":
    /// 0, "host": "node1", "cuda_dev": 0, "bus_id": "0000:1b:00.0",
    /// "source": [4, 9] }], "adapters": [], "net": null, "gpu_direct": [],
    /// "paths": [{ "channel": 0, "src_rank": 0, "dst_rank": 1, "transport":
    /// "SHM", "via": "SHM/direct/direct", "source": [4, 7] }], "source": [4, 1] }`.
    /// Optional: older bundles have none, and older readers ignore it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nccl: Vec<NcclInit>,
    /// NUMA topologies read from `numactl -H` and lstopo text
    /// (`evidence::numa`): each node's CPUs and memory, numactl's distance
    /// matrix as cells, and lstopo's PCI devices with the node and host
    /// bridge they sit under. Example: `{ "tool": "numactl", "nodes": [{
    /// "node": 0, "cpus": "0-17,36-53", "cpu_count": 36, "size_bytes":
    /// 99184918528, "source": [5, 2] }], "distances": [{ "from": 0, "to":
    /// 1, "distance": 21, "source": [5, 10] }], "source": [5, 1] }`.
    /// Optional: older bundles have none, and older readers ignore it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub numa: Vec<NumaTopology>,
    /// RDMA counter readings (`evidence::counters`): one per port and
    /// reading, from sysfs dumps (`grep . .../counters/*`) and perfquery.
    /// Growth between two readings is worked out where the bundle is used.
    /// Example: `{ "tool": "sysfs", "adapter": "mlx5_0", "port": 1,
    /// "reading": 0, "values": [{ "name": "port_xmit_data", "group":
    /// "counters", "value": 1234, "source": [6, 3] }], "source": [6, 3] }`.
    /// Optional, as `numa`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<CounterDump>,
    /// Every transcript read, verbatim, with how it was recognised.
    pub transcripts: Vec<Transcript>,
    /// What was probed on a live node and what happened to each probe
    /// (empty for ingested transcripts). Example: `{ "name": "nvidia-smi
    /// topo -m", "status": "absent", "duration_s": 0.0, "message":
    /// "nvidia-smi is not on PATH" }`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub probes: Vec<Probe>,
    /// The machine and the collecting process (live collection only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<System>,
    /// The two-node check this node took part in, and its peer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer: Option<PeerLink>,
    /// Everything that could not be read or did not agree.
    pub problems: Vec<Problem>,
}

/// Example: `{ "name": "wire-report", "version": "0.1.0" }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Generator {
    pub name: String,
    pub version: String,
}

impl Generator {
    pub fn this() -> Generator {
        Generator {
            name: env!("CARGO_PKG_NAME").to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }
}

/// How the evidence was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    /// Read from transcripts captured elsewhere (`collect --from`).
    Ingested,
    /// Probed on the machine that wrote the bundle.
    Live,
}

/// Example: `{ "name": "dgx1-p100", "origin": "ingested" }`. For ingested
/// transcripts the name is the directory that held them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Host {
    pub name: String,
    pub origin: Origin,
}

/// Facts about the machine and the collecting process. Example:
/// `{ "kernel": "6.1.0-18-amd64", "cpus_allowed": "0-63", "numa_nodes":
/// [{ "node": 0, "cpus": "0-31" }], "drivers": [{ "module": "nvidia",
/// "version": "550.54.14" }], "collected_unix_s": 1764428400 }`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct System {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// CPUs this process may run on (`Cpus_allowed_list`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus_allowed: Option<String>,
    /// NUMA nodes this process may allocate from (`Mems_allowed_list`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mems_allowed: Option<String>,
    pub numa_nodes: Vec<NumaNode>,
    /// Interconnect kernel modules loaded, among them the GPUDirect RDMA
    /// peer-memory ones (`nvidia_peermem`, `nv_peer_mem`, `amdp2p`,
    /// `ib_peer_mem`).
    pub drivers: Vec<Driver>,
    /// Whether the kernel has dma-buf (the other way an adapter can reach
    /// GPU memory): `true` when `/sys/kernel/dmabuf` exists or the
    /// kernel's config (`/boot/config-<release>`) sets
    /// `CONFIG_DMA_SHARED_BUFFER`, `false` when that config leaves it
    /// unset, absent when neither could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dma_buf: Option<bool>,
    /// `/proc/loadavg` at the start: what else was running, roughly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_average: Option<String>,
    pub collected_unix_s: u64,
    /// Hostnames, serials and GUIDs were replaced by stable placeholders.
    #[serde(default)]
    pub redacted: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NumaNode {
    pub node: u32,
    pub cpus: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Driver {
    pub module: String,
    pub version: String,
}

/// A transcript as read. Example: `{ "path": "captures/x/topo.txt", "tool":
/// "nvidia-smi-topo", "sha256": "9f2c…", "text": "…", "notes": [] }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Transcript {
    /// The path as given on the command line (joined with the walked path).
    pub path: String,
    /// The tool recognised from the content.
    pub tool: Tool,
    /// SHA-256 of the raw bytes, lowercase hex.
    pub sha256: String,
    /// The raw text, unchanged.
    pub text: String,
    /// Lines the parser recognised and deliberately skipped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Note>,
    /// The tool blocks found in the file, in order: one for a plain
    /// transcript, several for a paste of several commands.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocks: Vec<Block>,
    /// Every line of the file, accounted for.
    #[serde(default)]
    pub lines: LineAccount,
}

/// One tool's output inside a transcript file. Example: `{ "tool":
/// "ibstat", "first_line": 2, "last_line": 40, "command": "sudo ibstat" }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Block {
    pub tool: Tool,
    /// 1-based lines of the file, inclusive.
    pub first_line: usize,
    pub last_line: usize,
    /// The command line pasted before it (prompt removed), when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
}

/// How the lines of a transcript were used. `read + skipped +
/// not_understood` is the file's line count. Read: lines of a recognised
/// tool block that its parser accepted (rows, headers, the tool's own
/// banners). Skipped: blank lines, prompts and command lines, fences,
/// lines the parser noted and passed over; by reason. Not understood:
/// lines outside any recognised block, and the lines of a block its
/// parser rejected; listed by number.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LineAccount {
    pub read: usize,
    pub skipped: usize,
    pub not_understood: usize,
    /// `(reason, lines)`, in a fixed order of reasons.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_by_reason: Vec<(String, usize)>,
    /// 1-based numbers of the lines not understood.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_understood_lines: Vec<usize>,
}

impl LineAccount {
    /// `40 lines read, 3 skipped (2 blank, 1 shell prompt or command
    /// line), 0 not understood`.
    pub fn summary(&self) -> String {
        let reasons = self
            .skipped_by_reason
            .iter()
            .map(|(r, n)| format!("{n} {r}"))
            .collect::<Vec<_>>()
            .join(", ");
        let skipped = if reasons.is_empty() {
            format!("{} skipped", self.skipped)
        } else {
            format!("{} skipped ({reasons})", self.skipped)
        };
        format!(
            "{} lines read, {skipped}, {} not understood",
            self.read, self.not_understood
        )
    }
}

/// What went wrong with one input. Example: `{ "file": "x.txt", "line": 3,
/// "kind": "parse", "message": "4 cells after `GPU1` ..." }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Problem {
    pub file: String,
    /// 1-based; absent when the problem is about the whole file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    pub kind: ProblemKind,
    pub message: String,
}

impl Problem {
    /// The one-line form printed as a warning: `path:line: message`.
    pub fn one_line(&self) -> String {
        match self.line {
            Some(l) => format!("{}:{}: {}", self.file, l, self.message),
            None => format!("{}: {}", self.file, self.message),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ProblemKind {
    /// The file could not be read (permissions, not UTF-8).
    Unreadable,
    /// The content is not a transcript of any tool wire-report knows.
    Unrecognized,
    /// The tool was recognised but the transcript did not parse.
    Parse,
    /// Two transcripts of the node disagree.
    Conflict,
    /// The transcript stops in the middle; what it did contain was kept.
    Truncated,
    /// The tool itself reported an error or a failed data check.
    ToolError,
    /// A live probe could not run: the tool is absent, failed or hung.
    Probe,
    /// The file is one the node already read under another name (a
    /// second link to it): read once.
    Duplicate,
}

impl Bundle {
    pub fn new(host: Host) -> Bundle {
        Bundle {
            schema_version: SCHEMA_VERSION,
            generator: Generator::this(),
            host,
            topology: Topology::default(),
            measurements: Vec::new(),
            rdma: Vec::new(),
            pcie: Vec::new(),
            interfaces: Vec::new(),
            modules: Vec::new(),
            nccl: Vec::new(),
            numa: Vec::new(),
            counters: Vec::new(),
            transcripts: Vec::new(),
            probes: Vec::new(),
            system: None,
            peer: None,
            problems: Vec::new(),
        }
    }

    /// Serialises as version 3: compact JSON (see [`wire`]), trailing newline.
    pub fn to_json(&self) -> String {
        String::from_utf8(self.to_json_bytes()).expect("serde_json writes UTF-8")
    }

    /// [`Bundle::to_json`] as bytes, as written to a file.
    pub fn to_json_bytes(&self) -> Vec<u8> {
        wire::write(self)
    }

    /// [`Bundle::to_json_bytes`] into `out` (cleared first), so that one
    /// buffer serves a run of bundles.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        wire::write_into(self, out)
    }

    /// Reads a bundle of version 1 or 2, in one pass straight into
    /// [`Bundle`]; version 1 is migrated (its `schema_version` becomes
    /// [`SCHEMA_VERSION`]). When it does not read, the version is checked
    /// first so a newer bundle gets advice instead of a confusing field error.
    pub fn from_json(text: &str, path: &Path) -> anyhow::Result<Bundle> {
        // A bundle opened and saved in a Windows editor starts with a BOM.
        let text = crate::ingest::without_bom(text);
        let read = read::read(text);
        let version = match &read {
            Ok(b) => u64::from(b.schema_version),
            Err(_) => schema_version(text, path)?,
        };
        if version > u64::from(SCHEMA_VERSION) {
            anyhow::bail!(
                "`{}` has schema_version {version}, newer than this wire-report reads ({SCHEMA_VERSION}); \
                 upgrade wire-report to read it, or re-run `collect` with this version",
                path.display()
            );
        }
        if version < u64::from(OLDEST_READ) {
            anyhow::bail!(
                "`{}` has schema_version {version}, which this wire-report no longer reads; \
                 re-run `collect` to write version {SCHEMA_VERSION}",
                path.display()
            );
        }
        let mut b =
            read.map_err(|e| anyhow::anyhow!("`{}`: not a valid bundle: {e}", path.display()))?;
        b.schema_version = SCHEMA_VERSION;
        b.drop_duplicate_keys(&path.display().to_string());
        b.drop_implausible();
        Ok(b)
    }

    /// Bandwidths and latencies outside what a machine can show are kept
    /// out of the bundle's figures (so out of every chart, fit and
    /// finding), each one a problem naming its transcript line: a busbw
    /// printed as `1e-320`, a latency of `1e308` s. Zero stays (tools print
    /// `0.00` at tiny sizes). Returns how many figures were dropped.
    pub fn drop_implausible(&mut self) -> usize {
        let mut problems = Vec::new();
        self.measurements.retain(|m| {
            let why = match (m.bandwidth_bytes_per_s, m.latency_s) {
                (Some(bw), _) if !plausible(bw, BANDWIDTH_BYTES_PER_S) => {
                    format!("a bandwidth of {bw:e} bytes/s")
                }
                (_, Some(lat)) if !plausible(lat, LATENCY_S) => format!("a latency of {lat:e} s"),
                _ => return true,
            };
            problems.push(Problem {
                file: m.source.file.to_string(),
                line: Some(m.source.line),
                kind: ProblemKind::Parse,
                message: format!(
                    "{why} (printed `{}`) is outside what a machine can show; the figure is left out of charts, fits and findings",
                    m.as_printed
                ),
            });
            false
        });
        let n = problems.len();
        self.problems.extend(problems);
        n
    }
}

/// Bandwidths a machine can show, bytes/s: above 1 byte/s (a tool prints
/// `0.00` at tiny sizes, which stays) and at most 1e15 (1 PB/s, far above
/// any node's memory or fabric).
pub const BANDWIDTH_BYTES_PER_S: (f64, f64) = (1.0, 1e15);
/// Latencies a machine can show, seconds: from 1 ps to a day.
pub const LATENCY_S: (f64, f64) = (1e-12, 86_400.0);

/// `v` is zero or inside `(lo, hi)`; never NaN, infinite or negative.
fn plausible(v: f64, (lo, hi): (f64, f64)) -> bool {
    v == 0.0 || (v.is_finite() && v >= lo && v <= hi)
}

/// The `schema_version` of a document that did not read as a bundle, or
/// why it has none.
fn schema_version(text: &str, path: &Path) -> anyhow::Result<u64> {
    #[derive(Deserialize)]
    struct Head {
        schema_version: Option<serde_json::Value>,
    }
    let head: Head = serde_json::from_str(text)
        .map_err(|e| anyhow::anyhow!("`{}`:{}: not JSON: {e}", path.display(), e.line()))?;
    head.schema_version
        .ok_or_else(|| {
            anyhow::anyhow!(
                "`{}`: no `schema_version`; this is not a wire-report bundle",
                path.display()
            )
        })?
        .as_u64()
        .ok_or_else(|| anyhow::anyhow!("`{}`: `schema_version` is not a number", path.display()))
}

/// The JSON Schema of [`Bundle`], pretty-printed.
pub fn json_schema() -> String {
    let mut schema = schemars::schema_for!(Bundle);
    // `files` exists only in the wire form (see `wire`): every source of a
    // version 2 bundle is `[index into files, line]`.
    if let Some(props) = schema
        .as_object_mut()
        .and_then(|o| o.get_mut("properties"))
        .and_then(|p| p.as_object_mut())
    {
        props.insert(
            "files".into(),
            serde_json::json!({
                "description": "Version 2: every transcript path a source names, once; a source is `[index into files, line]`. Example: `[\"captures/dgx1-p100/topo.txt\"]`.",
                "type": "array",
                "items": { "type": "string" }
            }),
        );
    }
    let mut s = serde_json::to_string_pretty(&schema).expect("a schema always serialises");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bundle_from_newer_schema() {
        let text = r#"{"schema_version": 4, "whatever": true}"#;
        let err = Bundle::from_json(text, Path::new("b.json"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("schema_version 4"), "{err}");
        assert!(err.contains("upgrade wire-report"), "{err}");
    }

    #[test]
    fn round_trips_a_bundle() {
        let b = Bundle::new(Host {
            name: "n1".into(),
            origin: Origin::Ingested,
        });
        let back = Bundle::from_json(&b.to_json(), Path::new("b.json")).unwrap();
        assert_eq!(back, b);
    }

    #[test]
    fn repeated_keys_keep_the_first_entry_and_become_one_problem() {
        let nodes = crate::inputs::ingest(&["captures".into()]).unwrap();
        let with_ports = |b: &&Bundle| b.rdma.iter().any(|d| !d.ports.is_empty());
        let rdma = (nodes.iter().map(|n| &n.bundle).find(with_ports))
            .expect("a capture with RDMA ports")
            .rdma
            .clone();
        let mut b = (nodes.into_iter().map(|n| n.bundle))
            .find(|b| b.topology.links.len() >= 2)
            .expect("a capture with links");
        b.rdma = rdma;
        b.pcie = vec![
            crate::evidence::pcie::PcieLink {
                address: "01:00.0".into(),
                ..Default::default()
            },
            crate::evidence::pcie::PcieLink {
                address: "02:00.0".into(),
                ..Default::default()
            },
        ];
        let before = b.clone();
        let mut swapped = b.topology.links[0].clone();
        std::mem::swap(&mut swapped.a, &mut swapped.b);
        swapped.code = Some("SYS".into());
        b.topology.links.insert(1, swapped);
        b.topology.links.push(b.topology.links[2].clone());
        let mut pcie = b.pcie[1].clone();
        pcie.name = Some("other".into());
        b.pcie.push(pcie);
        let d = b.rdma.iter().position(|d| !d.ports.is_empty()).unwrap();
        let port = b.rdma[d].ports[0].clone();
        b.rdma[d].ports.push(port);
        b.rdma.push(b.rdma[0].clone());
        let problems = b.problems.len();
        assert_eq!(b.drop_duplicate_keys("n/"), 5);
        assert_eq!(b.topology.links, before.topology.links);
        assert_eq!(b.pcie, before.pcie);
        assert_eq!(b.rdma, before.rdma);
        assert_eq!(b.problems.len(), problems + 1);
        let l = &before.topology.links[0];
        let p = b.problems.last().unwrap();
        assert_eq!(p.file, "n/");
        assert_eq!(
            p.message,
            format!(
                "5 entries repeat a key already present (topology pair {}-{} and 4 more); the first of each is kept, the repeats are dropped",
                l.b, l.a
            )
        );
        assert_eq!(b.drop_duplicate_keys("n/"), 0);
    }

    #[test]
    fn schema_names_the_topology_fields_scripts_rely_on() {
        let s = json_schema();
        for field in [
            "schema_version",
            "cpu_affinity",
            "gpu_numa_node",
            "nvlinks",
            "xgmi_hops",
            "direct-link",
            "cross-socket",
        ] {
            assert!(s.contains(field), "schema lacks {field}");
        }
    }
}
