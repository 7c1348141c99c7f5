//! RDMA evidence: adapters and ports (`ibv_devinfo`, `ibv_devices`,
//! `ibstat`, `ibstatus`, `show_gids`) and perftest's `ib_*_bw` / `ib_*_lat`
//! transcripts.
//!
//! Port rates are printed in Gb/s (bits); they are converted once to bytes
//! per second (1 Gb/s = 1.25e8 bytes/s) and the printed text is kept.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::measurement::{
    Buffers, CopyEngine, Direction, GBIT_BYTES, Kind, MIB, Measurement, NOT_STATED, P2p, Statistic,
    Text, describe_size, parse_number,
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
    pub source: Source,
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

fn is_link_up(s: &str) -> bool {
    s.to_ascii_lowercase().contains("linkup")
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

// ---------------------------------------------------------------------------
// ibstat

pub fn looks_like_ibstat(text: &str, lines: &[&str]) -> bool {
    lines.iter().any(|l| {
        let t = l.trim_start_matches(['│', '┃', '|']).trim();
        (t.starts_with("CA '") || t.starts_with("CA: '")) && t.ends_with('\'')
    }) && text.contains("State:")
}

/// Parses `ibstat` (all adapters, or `ibstat <ca> <port>` with its
/// `CA: '<name>'` header and unindented fields).
pub fn parse_ibstat(text: &str) -> Result<Parsed, ParseError> {
    let mut out = Parsed::default();
    let mut counts: Vec<(String, u32)> = Vec::new();
    let mut cur: Option<String> = None;
    let mut cur_port: Option<u32> = None;
    for (n, l) in clean_lines(text) {
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(name) = t
            .strip_prefix("CA '")
            .or_else(|| t.strip_prefix("CA: '"))
            .and_then(|r| r.strip_suffix('\''))
        {
            device(&mut out.rdma, name, n);
            cur = Some(name.to_string());
            cur_port = None;
            continue;
        }
        if t.starts_with("ibpanic:") || t.starts_with("ibwarn:") {
            out.tool_error(n, format!("ibstat: {t}"));
            continue;
        }
        let Some(name) = cur.clone() else {
            return Err(ParseError::new(n, "a `CA '<name>'` line first"));
        };
        if let Some(p) = t.strip_prefix("Port ").and_then(|r| r.strip_suffix(':')) {
            let p: u32 = p.parse().map_err(|_| ParseError::new(n, "`Port <n>:`"))?;
            port(device(&mut out.rdma, &name, n), p, n);
            cur_port = Some(p);
            continue;
        }
        let Some((k, v)) = t.split_once(':') else {
            return Err(ParseError::new(
                n,
                format!("`<field>: <value>`, found `{t}`"),
            ));
        };
        let (k, v) = (k.trim(), v.trim().to_string());
        let dev = device(&mut out.rdma, &name, n);
        if k == "Number of ports"
            && let Ok(c) = v.parse()
        {
            counts.push((name.clone(), c));
        }
        match (k, cur_port) {
            ("CA type", _) => dev.ca_type = Some(v),
            ("Firmware version", _) => dev.firmware = Some(v),
            ("Node GUID", _) => dev.node_guid = Some(v),
            (_, Some(pn)) => {
                let p = port(dev, pn, n);
                match k {
                    "State" => p.set_state(v),
                    "Physical state" => p.set_physical_state(v),
                    "Rate" => set_rate(p, &v),
                    "Base lid" => p.lid = Some(v),
                    "SM lid" => p.sm_lid = Some(v),
                    "Port GUID" => p.port_guid = Some(v),
                    "Link layer" => p.link_layer = Some(v),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    if out.rdma.is_empty() {
        return Err(ParseError::new(1, "a `CA '<name>'` line"));
    }
    check_port_counts(&mut out, &counts, text);
    Ok(out)
}

/// A device that announced N ports (ibstat `Number of ports`, ibv_devinfo
/// `phys_port_cnt`) but shows ports 1..k with k < N was cut short. A query
/// for one port (`ibstat mlx4_0 2`, `ibv_devinfo -i 2`) shows a port other
/// than 1 first and is not flagged.
fn check_port_counts(out: &mut Parsed, counts: &[(String, u32)], text: &str) {
    let last = text.lines().count().max(1);
    // Every port block prints its link layer; a last port without one was cut.
    if let Some(p) = out.rdma.last().and_then(|d| d.ports.last())
        && p.link_layer.is_none()
    {
        let name = out.rdma.last().map(|d| d.name.clone()).unwrap_or_default();
        out.truncated(
            last,
            format!(
                "port {} of {name} stops before its link layer (cut short?)",
                p.port
            ),
        );
    }
    for (name, count) in counts {
        let Some(d) = out.rdma.iter().find(|d| &d.name == name) else {
            continue;
        };
        let seen: Vec<u32> = d.ports.iter().map(|p| p.port).collect();
        let from_one = seen.first() == Some(&1);
        if from_one && (seen.len() as u32) < *count {
            let msg = format!(
                "{name} has {count} ports but the capture shows {}",
                seen.len()
            );
            out.truncated(last, msg);
        }
    }
}

// ---------------------------------------------------------------------------
// ibstatus

pub fn looks_like_ibstatus(_text: &str, lines: &[&str]) -> bool {
    crate::evidence::numbered(lines)
        .any(|(_, l)| l.starts_with("Infiniband device '") && l.contains(" port "))
}

/// Parses `ibstatus`: `Infiniband device '<ca>' port <n> status:` blocks.
pub fn parse_ibstatus(text: &str) -> Result<Parsed, ParseError> {
    let mut out = Parsed::default();
    let mut cur: Option<(String, u32)> = None;
    for (n, l) in numbered_lines(text) {
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(rest) = t.strip_prefix("Infiniband device '") {
            let (name, rest) = rest
                .split_once('\'')
                .ok_or_else(|| ParseError::new(n, "a quoted device name"))?;
            let p: u32 = rest
                .trim()
                .strip_prefix("port ")
                .and_then(|r| r.strip_suffix(" status:"))
                .and_then(|r| r.parse().ok())
                .ok_or_else(|| ParseError::new(n, "`port <n> status:`"))?;
            port(device(&mut out.rdma, name, n), p, n);
            cur = Some((name.to_string(), p));
            continue;
        }
        let Some((name, pn)) = cur.clone() else {
            return Err(ParseError::new(
                n,
                "an `Infiniband device '<ca>' port <n> status:` line first",
            ));
        };
        let Some((k, v)) = t.split_once(':') else {
            return Err(ParseError::new(
                n,
                format!("`<field>: <value>`, found `{t}`"),
            ));
        };
        let v = v.trim().to_string();
        let p = port(device(&mut out.rdma, &name, n), pn, n);
        match k.trim() {
            "state" => p.set_state(v),
            "phys state" => p.set_physical_state(v),
            "rate" => {
                // `200 Gb/sec (4X HDR)`
                if let Some((_, inner)) = v.split_once('(') {
                    let inner = inner.trim_end_matches(')');
                    let mut parts = inner.split_whitespace();
                    p.width = parts.next().map(str::to_string);
                    p.speed = parts.next().map(str::to_string);
                }
                set_rate(p, &v);
            }
            "link_layer" => p.link_layer = Some(v),
            "base lid" => p.lid = Some(v),
            "sm lid" => p.sm_lid = Some(v),
            "default gid" => p.gids.push(Gid {
                index: 0,
                gid: v,
                ipv4: None,
                version: None,
                netdev: None,
            }),
            _ => {}
        }
    }
    if out.rdma.is_empty() {
        return Err(ParseError::new(1, "an `Infiniband device` line"));
    }
    // Every block prints state, rate and link_layer; a last block without
    // them was cut.
    if let Some(p) = out.rdma.last().and_then(|d| d.ports.last())
        && (p.link_layer.is_none() || p.rate_as_printed.is_none() || p.state.is_none())
    {
        out.truncated(
            text.lines().count(),
            "the last port block lacks state, rate or link_layer (cut short?)",
        );
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// ibv_devinfo

pub fn looks_like_ibv_devinfo(_text: &str, lines: &[&str]) -> bool {
    crate::evidence::numbered(lines).any(|(_, l)| l.trim_start().starts_with("hca_id:"))
}

/// Parses `ibv_devinfo` (plain, `-v`, `-l`). Device capability lines of
/// `-v` are skipped; ports, states, MTUs, widths, speeds and GIDs are kept.
pub fn parse_ibv_devinfo(text: &str) -> Result<Parsed, ParseError> {
    let mut out = Parsed::default();
    let lines: Vec<(usize, &str)> = numbered_lines(text).collect();
    // `ibv_devinfo -l`: `2 HCAs found:` then one name per line.
    if let Some((_, first)) = lines.iter().find(|(_, l)| !l.trim().is_empty())
        && first.trim().ends_with("HCAs found:")
    {
        for (n, l) in &lines[1..] {
            let t = l.trim();
            if !t.is_empty() {
                device(&mut out.rdma, t, *n);
            }
        }
        return Ok(out);
    }
    let mut cur: Option<String> = None;
    let mut cur_port: Option<u32> = None;
    let mut counts: Vec<(String, u32)> = Vec::new();
    for (n, l) in lines {
        let t = l.trim();
        if t.is_empty() {
            continue;
        }
        let Some((k, v)) = t.split_once(':') else {
            continue;
        };
        let (k, v) = (k.trim(), v.trim().to_string());
        if k == "hca_id" {
            device(&mut out.rdma, &v, n);
            cur = Some(v);
            cur_port = None;
            continue;
        }
        let Some(name) = cur.clone() else {
            return Err(ParseError::new(n, "an `hca_id:` line first"));
        };
        let dev = device(&mut out.rdma, &name, n);
        if k == "port" {
            let p: u32 = v
                .parse()
                .map_err(|_| ParseError::new(n, format!("a port number, found `{v}`")))?;
            port(dev, p, n);
            cur_port = Some(p);
            continue;
        }
        if k == "phys_port_cnt"
            && let Ok(c) = v.parse()
        {
            counts.push((name.clone(), c));
        }
        match (k, cur_port) {
            ("transport", None) => dev.transport = Some(v),
            ("fw_ver", None) => dev.firmware = Some(v),
            ("node_guid", None) => dev.node_guid = Some(v),
            ("board_id", None) => dev.board_id = Some(v),
            (_, Some(pn)) => {
                let p = port(dev, pn, n);
                match k {
                    "state" => p.set_state(v),
                    "phys_state" => p.set_physical_state(v),
                    "max_mtu" => p.max_mtu_bytes = mtu(&v),
                    "active_mtu" => p.active_mtu_bytes = mtu(&v),
                    "link_layer" => p.link_layer = Some(v),
                    "port_lid" => p.lid = Some(v),
                    "sm_lid" => p.sm_lid = Some(v),
                    "active_width" => p.width = Some(v),
                    "active_speed" => p.speed = Some(v),
                    _ if k.starts_with("GID[") => {
                        let idx = k.trim_start_matches("GID[").trim_end_matches(']').trim();
                        if let Ok(index) = idx.parse() {
                            p.gids.push(Gid {
                                index,
                                gid: v,
                                ipv4: None,
                                version: None,
                                netdev: None,
                            });
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    if out.rdma.is_empty() {
        return Err(ParseError::new(1, "an `hca_id:` line"));
    }
    check_port_counts(&mut out, &counts, text);
    Ok(out)
}

// ---------------------------------------------------------------------------
// ibv_devices, show_gids

pub fn looks_like_ibv_devices(_text: &str, lines: &[&str]) -> bool {
    let mut it = crate::evidence::numbered(lines).filter(|(_, l)| !l.trim().is_empty());
    matches!(it.next(), Some((_, l)) if { let t: Vec<&str> = l.split_whitespace().collect(); t == ["device", "node", "GUID"] })
}

/// Parses `ibv_devices`: a header, a dashes line, then `<name> <node GUID>`.
pub fn parse_ibv_devices(text: &str) -> Result<Parsed, ParseError> {
    let mut out = Parsed::default();
    for (n, l) in numbered_lines(text) {
        let toks: Vec<&str> = l.split_whitespace().collect();
        match toks.as_slice() {
            [] | ["device", "node", "GUID"] => {}
            [a, b] if a.starts_with('-') && b.starts_with('-') => {}
            [name, guid] if guid.chars().all(|c| c.is_ascii_hexdigit()) => {
                if guid.len() != 16 {
                    out.truncated(
                        n,
                        format!("node GUID `{guid}` of {name} is not 16 hex digits (cut short?)"),
                    );
                }
                device(&mut out.rdma, name, n).node_guid = Some(guid.to_string());
            }
            _ => {
                return Err(ParseError::new(
                    n,
                    format!("`<device> <node GUID>`, found `{}`", l.trim()),
                ));
            }
        }
    }
    Ok(out)
}

pub fn looks_like_show_gids(_text: &str, lines: &[&str]) -> bool {
    lines.iter().any(|l| {
        let mut t = l.split_whitespace();
        t.next() == Some("DEV")
            && t.next() == Some("PORT")
            && t.next() == Some("INDEX")
            && t.next() == Some("GID")
    })
}

/// Parses `show_gids`: `DEV PORT INDEX GID [IPv4] VER [DEV]` rows and the
/// `n_gids_found=` trailer.
pub fn parse_show_gids(text: &str) -> Result<Parsed, ParseError> {
    let mut out = Parsed::default();
    let mut found: Option<usize> = None;
    let mut rows = 0;
    for (n, l) in numbered_lines(text) {
        let toks: Vec<&str> = l.split_whitespace().collect();
        if let Some(c) = toks.first().and_then(|t| t.strip_prefix("n_gids_found=")) {
            found = c.parse().ok();
            continue;
        }
        if toks.is_empty() || toks[0] == "DEV" || toks[0].starts_with("---") {
            continue;
        }
        rows += 1;
        if toks.len() < 5 {
            return Err(ParseError::new(
                n,
                "`<dev> <port> <index> <gid> [ipv4] <ver> [netdev]`",
            ));
        }
        let p: u32 = toks[1]
            .parse()
            .map_err(|_| ParseError::new(n, "a port number"))?;
        let index: u32 = toks[2]
            .parse()
            .map_err(|_| ParseError::new(n, "a GID index"))?;
        let rest = &toks[4..];
        let (ipv4, rest) = match rest.first() {
            Some(x) if x.contains('.') => (Some(x.to_string()), &rest[1..]),
            _ => (None, rest),
        };
        let version = rest.first().map(|x| x.to_string());
        let netdev = rest.get(1).map(|x| x.to_string());
        let dev = device(&mut out.rdma, toks[0], n);
        port(dev, p, n).gids.push(Gid {
            index,
            gid: toks[3].to_string(),
            ipv4,
            version,
            netdev,
        });
    }
    if out.rdma.is_empty() {
        return Err(ParseError::new(1, "at least one GID row"));
    }
    match found {
        Some(c) if c != rows => out.truncated(
            text.lines().count(),
            format!("`n_gids_found={c}` but {rows} GID rows"),
        ),
        None => out.truncated(
            text.lines().count(),
            "no `n_gids_found=` trailer: the list may be cut short",
        ),
        _ => {}
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// perftest

pub fn looks_like_perftest(text: &str, lines: &[&str]) -> bool {
    crate::evidence::numbered(lines).any(|(_, l)| {
        let t = l.trim();
        (t.starts_with("#bytes") && (t.contains("BW average[") || t.contains("t_min[usec]")))
            || ((t.ends_with("BW Test") || t.ends_with("Latency Test"))
                && text.contains("Connection type"))
    })
}

/// What the header block of one perftest run said.
#[derive(Debug, Default, Clone)]
struct PerftestRun {
    title: Option<String>,
    server: bool,
    fields: Vec<(String, String)>,
    gpu: Option<String>,
    gpu_kind: Option<&'static str>,
    cpu_freq_warning: bool,
    no_peak: bool,
}

impl PerftestRun {
    fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    fn kind(&self) -> Kind {
        let t = self.title.as_deref().unwrap_or("");
        if t.starts_with("RDMA_Write") {
            Kind::RdmaWrite
        } else if t.starts_with("RDMA_Read") {
            Kind::RdmaRead
        } else if t.starts_with("Send") {
            Kind::RdmaSend
        } else if t.starts_with("Atomic") {
            Kind::RdmaAtomic
        } else {
            Kind::Rdma
        }
    }
}

/// Splits ` Dual-port       : OFF\t\tDevice         : mlx5_0` into pairs.
fn header_pairs(l: &str) -> Vec<(String, String)> {
    let mut pieces: Vec<String> = Vec::new();
    for chunk in l.split('\t') {
        for p in chunk.split("  ") {
            let p = p.trim();
            if !p.is_empty() {
                pieces.push(p.to_string());
            }
        }
    }
    let mut out = Vec::new();
    let mut key: Option<String> = None;
    for p in pieces {
        if let Some(v) = p.strip_prefix(':') {
            if let Some(k) = key.take() {
                out.push((k, v.trim().to_string()));
            }
        } else if let Some((k, v)) = p.split_once(" : ").or_else(|| p.split_once(" :")) {
            out.push((k.trim().to_string(), v.trim().to_string()));
        } else {
            key = Some(match key.take() {
                Some(k) => format!("{k} {p}"),
                None => p,
            });
        }
    }
    out
}

/// Parses perftest bandwidth and latency transcripts: one or more runs
/// (server and client output pasted together), each a header block and a
/// results table. Bandwidth units are read from the table header: `MB/sec`
/// and `MiB/sec` are 2^20 bytes, `Gb/sec` is 1e9 bits (see
/// [`super::measurement::MIB`] and [`GBIT_BYTES`] for the perftest source
/// lines).
pub fn parse_perftest(text: &str) -> Result<Parsed, ParseError> {
    let lines: Vec<(usize, &str)> = numbered_lines(text).collect();
    let mut out = Parsed::default();
    let mut run = PerftestRun::default();
    let mut waiting = false;
    let mut i = 0;
    let mut tables = 0;
    while i < lines.len() {
        let (_, l) = lines[i];
        let t = l.trim();
        if t.contains("Waiting for client to connect") {
            waiting = true;
        } else if t.contains("BW peak won't be measured") {
            run.no_peak = true;
        } else if t.ends_with("BW Test") || t.ends_with("Latency Test") {
            run = PerftestRun {
                title: Some(t.to_string()),
                server: waiting,
                no_peak: run.no_peak,
                gpu: run.gpu.take(),
                gpu_kind: run.gpu_kind.take(),
                ..PerftestRun::default()
            };
            waiting = false;
        } else if let Some(rest) = t
            .strip_prefix("[pid = ")
            .and_then(|r| r.split_once("device name = ["))
        {
            run.gpu = Some(rest.1.trim_end_matches(']').to_string());
            run.gpu_kind = Some("CUDA");
        } else if t == "initializing CUDA" {
            run.gpu_kind = Some("CUDA");
        } else if t.starts_with("initializing ROCm") || t.contains("ROCm device") {
            run.gpu_kind = Some("ROCm");
        } else if t.contains(" : ") || t.contains("\t: ") || t.contains("\t : ") {
            if !t.starts_with('#') && !t.contains("address:") {
                run.fields.extend(header_pairs(l));
            }
        } else if t.starts_with("#bytes") {
            tables += 1;
            let next = perftest_table(&lines, i, &run, &mut out)?;
            i = next;
            run.no_peak = false;
            continue;
        }
        i += 1;
    }
    if tables == 0 {
        let last = lines.last().map_or(1, |x| x.0);
        out.truncated(
            last,
            "a perftest run with no results table (cut before the results)",
        );
    }
    Ok(out)
}

fn perftest_table(
    lines: &[(usize, &str)],
    start: usize,
    run: &PerftestRun,
    out: &mut Parsed,
) -> Result<usize, ParseError> {
    let (hn, head) = lines[start];
    let cols: Vec<String> = perftest_columns(head);
    let latency = cols.iter().any(|c| c.starts_with("t_"));
    let bw_factor = if head.contains("[Gb/sec]") {
        Some((GBIT_BYTES, "Gb/sec"))
    } else if head.contains("[MB/sec]") {
        Some((MIB, "MB/sec"))
    } else if head.contains("[MiB/sec]") {
        Some((MIB, "MiB/sec"))
    } else {
        None
    };
    if !latency && bw_factor.is_none() {
        return Err(ParseError::new(
            hn,
            "a `BW average[MB/sec]`, `[MiB/sec]` or `[Gb/sec]` column, or `t_min[usec]`",
        ));
    }
    let mut i = start + 1;
    let mut rows = 0;
    let mut cpu_warning = run.cpu_freq_warning;
    let mut closed = false;
    // Everything a cell says that does not change from row to row.
    let title: Text = match &run.title {
        Some(t) => t.clone().into(),
        None => "perftest (header not captured)".into(),
    };
    let mut template = Measurement::new("perftest", hn, run.kind(), title, Statistic::Avg);
    perftest_cell(&mut template, run, latency, bw_factor.map(|x| x.1));
    while let Some((n, l)) = lines.get(i) {
        let t = l.trim();
        if t.starts_with("Conflicting CPU frequency values detected") {
            cpu_warning = true;
            i += 1;
            continue;
        }
        if t.starts_with("---") {
            closed = true;
            break;
        }
        let toks: Vec<&str> = t.split_whitespace().collect();
        // Anything that is not a data row ends the table (a server's
        // "Waiting for client" banner, a blank line).
        if toks.first().is_none_or(|x| x.parse::<u64>().is_err()) {
            closed = true;
            break;
        }
        if toks.len() != cols.len() {
            return Err(ParseError::new(
                *n,
                format!(
                    "{} columns ({}), found {}",
                    cols.len(),
                    cols.join(" "),
                    toks.len()
                ),
            ));
        }
        let size: u64 = toks[0]
            .parse()
            .map_err(|_| ParseError::new(*n, format!("a byte count, found `{}`", toks[0])))?;
        let iters: u64 = toks[1]
            .parse()
            .map_err(|_| ParseError::new(*n, format!("an iteration count, found `{}`", toks[1])))?;
        let size_text = describe_size(size);
        for (c, v) in cols.iter().zip(&toks).skip(2) {
            let value = parse_number(v)
                .ok_or_else(|| ParseError::new(*n, format!("a number in `{c}`, found `{v}`")))?;
            let (stat, is_bw) = match c.as_str() {
                "BW peak" => (Statistic::Peak, true),
                "BW average" => (Statistic::Avg, true),
                "t_min" => (Statistic::Min, false),
                "t_max" => (Statistic::Max, false),
                "t_typical" => (Statistic::Typical, false),
                "t_avg" => (Statistic::Avg, false),
                "t_stdev" => (Statistic::Stdev, false),
                "99% percentile" => (Statistic::P99, false),
                "99.9% percentile" => (Statistic::P999, false),
                _ => continue,
            };
            // A peak of 0.00 is not a measurement: the run said it would not
            // measure peak, or this is a server's side.
            if stat == Statistic::Peak && (run.no_peak || value == 0.0) {
                continue;
            }
            let mut m = template.clone();
            m.source = Source::line(*n);
            m.statistic = stat;
            m.size_bytes = Some(size);
            m.iterations = Some(iters);
            m.questions.message_size = size_text.clone();
            if cpu_warning {
                m.questions.context = "perftest warned the CPU frequency was not at maximum".into();
            }
            if is_bw {
                let (f, unit) = bw_factor.expect("checked above");
                m.bandwidth_bytes_per_s = Some(value * f);
                m.as_printed = format!("{v} {unit}");
            } else {
                m.latency_s = Some(value * 1e-6);
                m.as_printed = format!("{v} usec");
            }
            out.measurements.push(m);
        }
        rows += 1;
        i += 1;
    }
    if rows == 0 || !closed {
        let at = lines.get(i.saturating_sub(1)).map_or(hn, |x| x.0);
        if rows == 0 {
            out.truncated(at, "the results table has no rows");
        } else if i >= lines.len() {
            out.truncated(
                at,
                "the results table is not closed by a dashes line (cut short?)",
            );
        }
    }
    if cpu_warning {
        out.note(hn, "perftest warned that CPU frequency is not at its maximum: cycle-based timings may be skewed");
    }
    Ok(i)
}

/// Column names of a perftest table header, units stripped:
/// `#bytes #iterations BW peak[MB/sec] ...` -> `#bytes`, `#iterations`, `BW peak`...
fn perftest_columns(head: &str) -> Vec<String> {
    let mut cols = Vec::new();
    let mut cur = String::new();
    for tok in head.split_whitespace() {
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(tok);
        if tok.starts_with('#') || tok.ends_with(']') {
            let name = cur.split('[').next().unwrap_or("").trim().to_string();
            cols.push(name);
            cur.clear();
        }
    }
    cols
}

fn perftest_cell(m: &mut Measurement, run: &PerftestRun, latency: bool, unit: Option<&str>) {
    let dev = run.get("Device").map(str::to_string);
    m.src = dev.clone().map(Text::from);
    m.direction = if run.title.as_deref().unwrap_or("").contains("Bidirectional") {
        Direction::Bi
    } else {
        Direction::Uni
    };
    m.qps = run.get("Number of qps").and_then(|v| v.parse().ok());
    m.queue_depth = run.get("TX depth").and_then(|v| v.parse().ok());
    m.buffers = if run.gpu_kind.is_some() {
        Buffers::Device
    } else {
        Buffers::Unknown
    };
    m.p2p = P2p::Unknown;
    m.copy_engine = CopyEngine::Unknown;
    let q = &mut m.questions;
    q.unit = match (latency, unit) {
        (true, _) => "microseconds (usec), as printed".into(),
        (false, Some("Gb/sec")) => "Gb/sec as printed (--report_gbits): 1e9 bits per second, converted to bytes by dividing by 8".into(),
        (false, Some(u)) => format!("{u} as printed; perftest divides by 2^20 for this unit, so 1 {u} = 1,048,576 bytes/s").into(),
        _ => NOT_STATED.into(),
    };
    q.direction = match (latency, m.direction) {
        (true, _) if matches!(m.kind, Kind::RdmaRead | Kind::RdmaAtomic) => {
            "round trip: perftest does not halve read and atomic latencies".into()
        }
        (true, _) => "one way: perftest reports half the round trip for write and send".into(),
        (false, Direction::Bi) => {
            "bidirectional: both directions at once, the figure is the sum".into()
        }
        (false, Direction::Uni) => "unidirectional".into(),
    };
    q.message_size = m.size_bytes.map_or(NOT_STATED.into(), describe_size);
    q.warm_up = NOT_STATED.into();
    q.outstanding = match (m.queue_depth, m.qps) {
        (Some(d), Some(qp)) => format!("TX depth {d} per QP, {qp} QP(s)").into(),
        (None, Some(qp)) => format!("{qp} QP(s); TX depth not printed on this side").into(),
        _ => NOT_STATED.into(),
    };
    let side = if run.server {
        "server side"
    } else {
        "client side"
    };
    let link = run.get("Link type").map_or(String::new(), |lt| {
        if lt == "Ethernet" {
            ", link type Ethernet (RoCE)".to_string()
        } else {
            format!(", link type {lt}")
        }
    });
    let mtu = run
        .get("Mtu")
        .map_or(String::new(), |v| format!(", MTU {v}"));
    let buf = match (&run.gpu_kind, &run.gpu) {
        (Some(k), Some(g)) => format!("; buffers in GPU memory ({k}, {g})"),
        (Some(k), None) => format!("; buffers in GPU memory ({k})"),
        (None, _) => {
            "; buffer location not printed (host memory unless --use_cuda/--use_rocm was given)"
                .into()
        }
    };
    q.path = match &dev {
        Some(d) => format!("{side}, device {d}{link}{mtu}{buf}").into(),
        None => format!("{side}; device not printed (header not captured){buf}").into(),
    };
    q.context = NOT_STATED.into();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_two_column_header_lines() {
        let p = header_pairs(" Dual-port       : OFF\t\tDevice         : mlx5_0");
        assert_eq!(
            p,
            vec![
                ("Dual-port".into(), "OFF".into()),
                ("Device".into(), "mlx5_0".into())
            ]
        );
        let p = header_pairs(" rdma_cm QPs\t : OFF");
        assert_eq!(p, vec![("rdma_cm QPs".into(), "OFF".into())]);
        let p = header_pairs(" Data ex. method : rdma_cm \tTOS    : 41");
        assert_eq!(p[1], ("TOS".into(), "41".into()));
    }

    #[test]
    fn perftest_columns_strip_units() {
        let c = perftest_columns(
            " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]",
        );
        assert_eq!(
            c,
            ["#bytes", "#iterations", "BW peak", "BW average", "MsgRate"]
        );
        let c = perftest_columns(" #bytes #iterations    t_min[usec]    99% percentile[usec]");
        assert_eq!(c, ["#bytes", "#iterations", "t_min", "99% percentile"]);
    }
}
