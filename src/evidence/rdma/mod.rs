//! RDMA evidence: adapters and ports (`ibv_devinfo`, `ibv_devices`,
//! `ibstat`, `ibstatus`, `show_gids`) and perftest's `ib_*_bw` / `ib_*_lat`
//! transcripts.
//!
//! Port rates are printed in Gb/s (bits); they are converted once to bytes
//! per second (1 Gb/s = 1.25e8 bytes/s) and the printed text is kept.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::measurement::{
    Buffers, CopyEngine, Direction, GBIT_BYTES, Kind, MIB, Measurement, P2p, Statistic, Text,
    parse_number,
};
use super::{ParseError, Parsed, Source, numbered_lines};

/// One RDMA adapter (an `hca_id` / `CA`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RdmaDevice {
    /// `mlx5_0`, `efa_0`, `rxe0`.
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_guid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub board_id: Option<String>,
    pub ports: Vec<RdmaPort>,
    pub source: Source,
}

/// One port of an adapter.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct RdmaPort {
    pub port: u32,
    /// As printed: `Active`, `PORT_ACTIVE (4)`, `4: ACTIVE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// True when the state says ACTIVE.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active: Option<bool>,
    /// As printed: `LinkUp`, `5: LinkUp`, `POLLING (2)`, `Disabled`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub physical_state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_up: Option<bool>,
    /// The port rate converted from the Gb/s the tool printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_bytes_per_s: Option<f64>,
    /// `200`, `200 Gb/sec (4X HDR)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_as_printed: Option<String>,
    /// `4X`, `4X (2)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<String>,
    /// `HDR`, `2.5 Gbps (1)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_mtu_bytes: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_mtu_bytes: Option<u32>,
    /// `InfiniBand` or `Ethernet` (RoCE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_layer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_lid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port_guid: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gids: Vec<Gid>,
    /// Counters read at the start and end of a live collection.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<Counter>,
    pub source: Source,
}

/// One counter of a port, read at the start and at the end of a live
/// collection (`/sys/class/infiniband/<dev>/ports/<n>/{counters,hw_counters}`).
/// Counters are cumulative since boot: the delta is what happened during
/// the collection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Counter {
    pub name: String,
    /// `counters` (IB port counters) or `hw_counters` (driver counters).
    pub group: String,
    pub start: u64,
    pub end: u64,
    pub delta: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Gid {
    pub index: u32,
    pub gid: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ipv4: Option<String>,
    /// RoCE version (`v1`, `v2`) where shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The network interface (`mce0`) where shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub netdev: Option<String>,
}

impl RdmaPort {
    /// Records the logical state as printed, and whether it says ACTIVE.
    fn set_state(&mut self, v: String) {
        self.active = Some(is_active(&v));
        self.state = Some(v);
    }

    /// Records the physical state as printed, and whether it says LinkUp.
    fn set_physical_state(&mut self, v: String) {
        self.link_up = Some(is_link_up(&v));
        self.physical_state = Some(v);
    }
}

fn is_active(s: &str) -> bool {
    s.to_ascii_uppercase().contains("ACTIVE")
}

/// `LinkUp`, `5: LinkUp`, and ibv_devinfo's `LINK_UP (5)`.
fn is_link_up(s: &str) -> bool {
    s.to_ascii_lowercase().replace('_', "").contains("linkup")
}

/// `4096 (5)` -> 4096.
fn mtu(s: &str) -> Option<u32> {
    s.split_whitespace().next()?.parse().ok()
}

/// Adds a device to `out`, or returns the existing one of that name.
fn device<'a>(out: &'a mut Vec<RdmaDevice>, name: &str, line: usize) -> &'a mut RdmaDevice {
    if let Some(i) = out.iter().position(|d| d.name == name) {
        return &mut out[i];
    }
    out.push(RdmaDevice {
        name: name.to_string(),
        ca_type: None,
        firmware: None,
        node_guid: None,
        transport: None,
        board_id: None,
        ports: Vec::new(),
        source: Source::line(line),
    });
    out.last_mut().expect("just pushed")
}

fn port(dev: &mut RdmaDevice, port: u32, line: usize) -> &mut RdmaPort {
    if let Some(i) = dev.ports.iter().position(|p| p.port == port) {
        return &mut dev.ports[i];
    }
    dev.ports.push(RdmaPort {
        port,
        source: Source::line(line),
        ..RdmaPort::default()
    });
    dev.ports.last_mut().expect("just pushed")
}

fn set_rate(p: &mut RdmaPort, printed: &str) {
    if let Some(v) = printed.split_whitespace().next().and_then(parse_number) {
        p.rate_bytes_per_s = Some(v * GBIT_BYTES);
    }
    p.rate_as_printed = Some(printed.to_string());
}

/// Lines with decoration removed: a tmux pane's `│` border and trailing
/// spaces.
fn clean_lines(text: &str) -> Vec<(usize, String)> {
    numbered_lines(text)
        .map(|(n, l)| {
            let l = l.trim_start_matches(['│', '┃', '|']).trim_end();
            (n, l.to_string())
        })
        .collect()
}

mod perftest;
mod ports;

pub use perftest::{looks_like_perftest, parse_perftest};
pub use ports::{
    looks_like_ibstat, looks_like_ibstatus, looks_like_ibv_devices, looks_like_ibv_devinfo,
    looks_like_show_gids, parse_ibstat, parse_ibstatus, parse_ibv_devices, parse_ibv_devinfo,
    parse_show_gids,
};
