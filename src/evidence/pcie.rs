//! PCIe link state: `lspci -vvv` (LnkCap vs LnkSta) and the PCI part of
//! `nvidia-smi -q` (PCIe generation and link width, max vs current). A
//! whole-machine `lspci -vvv` also gives the tree: each device's bridge
//! chain and role, as sysfs gives them live (see `tree`).
//!
//! A link below its capability may be a fault (a riser, a bad slot, a
//! bifurcated slot) or power saving: GPUs drop to a lower generation when
//! idle, so a low current *speed* on an idle GPU is not proof of a fault,
//! while a low current *width* usually is.

use crate::evidence::SplitWords;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

use super::{ParseError, Parsed, Source, numbered_lines};

mod tree;
pub use tree::BMC_DISPLAY_VENDORS;
use tree::{BusRange, bus_range, chains, express_kind, role_of};

/// One device's PCIe link, capable vs current.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema)]
pub struct PcieLink {
    /// The PCI address as printed (`01:00.0`, `00000000:03:00.0`), or
    /// `unknown` when the capture does not show it.
    pub address: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub numa_node: Option<u32>,
    /// lspci `LnkCap: Speed 16GT/s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_speed_gt_per_s: Option<f64>,
    /// lspci `LnkSta: Speed 8GT/s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_speed_gt_per_s: Option<f64>,
    /// nvidia-smi `PCIe Generation / Max`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_generation: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_generation: Option<u32>,
    /// nvidia-smi `Host Max`: what the slot/host side supports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_max_generation: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_width_lanes: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_width_lanes: Option<u32>,
    /// lspci printed `(downgraded)` after the current speed.
    #[serde(default)]
    pub speed_downgraded: bool,
    /// lspci printed `(downgraded)` after the current width.
    #[serde(default)]
    pub width_downgraded: bool,
    /// The capability lines were not readable (lspci without root).
    #[serde(default)]
    pub link_hidden: bool,
    /// What the device is, from its PCI class (`gpu`, `nic`, `bridge`),
    /// where sysfs or an lspci device line stated it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// `0x10de` and the like, from sysfs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_id: Option<String>,
    /// The bridges from this device up to its root port, nearest first
    /// (sysfs, or the `Bus:` lines of a whole-machine lspci); each is also
    /// a `pcie[]` entry with its own link state, so a narrow switch uplink
    /// is visible.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub upstream: Vec<String>,
    /// The root complex (`pci0000:00`), from sysfs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_complex: Option<String>,
    /// CPUs local to the device (`local_cpulist`), from sysfs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_cpus: Option<String>,
    pub source: Source,
}

/// `8GT/s` -> 8.0; `2.5GT/s` -> 2.5.
fn gts(s: &str) -> Option<f64> {
    s.trim().strip_suffix("GT/s")?.trim().parse().ok()
}

/// `x16` -> 16.
fn lanes(s: &str) -> Option<u32> {
    s.trim().strip_prefix('x')?.trim().parse().ok()
}

// ---------------------------------------------------------------------------
// lspci

pub fn looks_like_lspci(text: &str, lines: &[&str]) -> bool {
    let mut it = crate::evidence::numbered(lines).filter(|(_, l)| !l.trim().is_empty());
    let headed = it.next().is_some_and(|(_, l)| device_header(l).is_some())
        && (has!(text, "Capabilities:")
            || has!(text, "LnkSta:")
            || has!(text, "Kernel driver in use"));
    headed || is_lnk_fragment(text, lines)
}

/// `lspci -vvv | grep -E 'LnkCap|LnkSta'`: only `Lnk*` lines (and lspci's
/// own `lspci: ...` messages), at least one `LnkCap:` and one `LnkSta:`;
/// a loop that echoes each device's bus id first (`echo $d; lspci -s $d
/// -vvv | grep Lnk`) adds bare bus id lines.
fn is_lnk_fragment(text: &str, lines: &[&str]) -> bool {
    has!(text, "LnkCap:")
        && has!(text, "LnkSta:")
        && lines.iter().all(|l| {
            let t = l.trim();
            t.is_empty()
                || t.starts_with("Lnk")
                || t.starts_with("lspci: ")
                || bare_bus_id(t).is_some()
        })
}

/// `0000:1a:00.0` or `1a:00.0` alone on its line (a `:` after it
/// allowed): the address a loop printed before a device's `Lnk` lines.
fn bare_bus_id(t: &str) -> Option<&str> {
    let id = t.strip_suffix(':').unwrap_or(t);
    let addr = match id.len() {
        7 => id,
        12 if id.as_bytes()[4] == b':' && id[..4].bytes().all(|b| b.is_ascii_hexdigit()) => {
            &id[5..]
        }
        _ => return None,
    };
    let b = addr.as_bytes();
    let hex = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_hexdigit);
    (b[2] == b':' && b[5] == b'.' && hex(0..2) && hex(3..5) && b[6].is_ascii_digit()).then_some(id)
}

/// What a header-less fragment lacks.
const NO_DEVICE: &str =
    "device not stated by the transcript (lspci output filtered to its Lnk lines)";

/// Reads `LnkCap:`/`LnkSta:` pairs without device headers: each `LnkCap:`
/// starts a device whose address is not stated (`unknown #1`, `#2`, ... in
/// the order printed).
fn parse_lnk_fragment(text: &str) -> Parsed {
    let mut out = Parsed::default();
    // A bus id printed before a device's `Lnk` lines, not yet used.
    let mut named: Option<&str> = None;
    for (n, l) in numbered_lines(text) {
        let t = l.trim();
        if t.starts_with("lspci: ") {
            out.note(n, format!("lspci's own message, not a link: {t}"));
        } else if let Some(id) = bare_bus_id(t) {
            named = Some(id);
            out.context_lines.push(n);
        } else if let Some(v) = t.strip_prefix("LnkCap:") {
            let (address, name) = match named.take() {
                Some(id) => (id.to_string(), None),
                None => (
                    format!("unknown #{}", out.pcie.len() + 1),
                    Some(NO_DEVICE.into()),
                ),
            };
            out.pcie.push(PcieLink {
                address,
                name,
                source: Source::line(n),
                ..PcieLink::default()
            });
            if let Some(dev) = out.pcie.last_mut() {
                read_lnk_cap(dev, v);
            }
        } else if let Some(v) = t.strip_prefix("LnkSta:") {
            match out.pcie.last_mut() {
                Some(dev) if dev.current_width_lanes.is_none() => read_lnk_sta(dev, v),
                _ => out.bad_row(n, "`LnkSta:` without a `LnkCap:` before it"),
            }
        }
    }
    let unnamed: Vec<usize> = out
        .pcie
        .iter()
        .filter(|d| d.name.as_deref() == Some(NO_DEVICE))
        .map(|d| d.source.line)
        .collect();
    if let Some(&first) = unnamed.first() {
        out.note(
            first,
            format!(
                "{} link(s) read from `LnkCap`/`LnkSta` lines alone: {NO_DEVICE}",
                unnamed.len()
            ),
        );
    }
    out
}

fn read_lnk_cap(dev: &mut PcieLink, v: &str) {
    for part in v.split(',') {
        let p = part.trim();
        if let Some(s) = p.strip_prefix("Speed ") {
            dev.max_speed_gt_per_s = gts(s.words().next().unwrap_or(""));
        } else if let Some(w) = p.strip_prefix("Width ") {
            dev.max_width_lanes = lanes(w.words().next().unwrap_or(""));
        }
    }
}

fn read_lnk_sta(dev: &mut PcieLink, v: &str) {
    for part in v.split(',') {
        let p = part.trim();
        if let Some(s) = p.strip_prefix("Speed ") {
            dev.current_speed_gt_per_s = gts(s.words().next().unwrap_or(""));
            dev.speed_downgraded = s.contains("downgraded");
        } else if let Some(w) = p.strip_prefix("Width ") {
            dev.current_width_lanes = lanes(w.words().next().unwrap_or(""));
            dev.width_downgraded = w.contains("downgraded");
        }
    }
}

/// `01:00.0 VGA compatible controller: NVIDIA ...` -> (address, description).
fn device_header(l: &str) -> Option<(&str, &str)> {
    if l.starts_with([' ', '\t']) {
        return None;
    }
    let (addr, rest) = l.split_once(' ')?;
    let ok = addr.len() >= 7
        && addr.contains(':')
        && addr.contains('.')
        && addr
            .chars()
            .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.');
    ok.then_some((addr, rest))
}

/// An author's `...` inside a device (its line, the device's address):
/// passed over (a note) and flagged as a cut, since the lines it stands
/// for may hold the link.
fn flag_elided(out: &mut Parsed, elided: Vec<(usize, String)>) {
    for (n, addr) in elided {
        out.note(n, "elided by whoever captured it");
        out.truncated(
            n,
            format!("cut at line {n} by whoever captured it (`...`): lines of {addr} not in the transcript"),
        );
    }
}

/// Parses `lspci -v`/`-vv`/`-vvv` for one or more devices. Lines that a
/// mail client wrapped (unindented text that is not a device header) are
/// joined back onto the line before.
pub fn parse_lspci(text: &str) -> Result<Parsed, ParseError> {
    // `text.lines()`, each `\n` found by memchr, and a second `\r` off.
    let mut split: Vec<&str> = Vec::new();
    crate::evidence::push_lines(text, &mut split);
    for l in &mut split {
        *l = l.strip_suffix('\r').unwrap_or(l);
    }
    if is_lnk_fragment(text, &split) {
        return Ok(parse_lnk_fragment(text));
    }
    // Quoted-printable mail encoding is taken off by the scanner (`qp`).
    // Lines are borrowed from the text; only a line a wrapped one is
    // joined onto is copied.
    let mut lines: Vec<(usize, Cow<'_, str>)> = Vec::with_capacity(split.len());
    let mut rejoined = false;
    for (n, l) in numbered_lines(text) {
        let wrapped = !l.is_empty()
            && !l.starts_with([' ', '\t'])
            && device_header(l).is_none()
            && !lines.is_empty();
        if wrapped && let Some(last) = lines.last_mut() {
            let joined = last.1.to_mut();
            joined.push(' ');
            joined.push_str(l.trim());
            rejoined = true;
            continue;
        }
        lines.push((n, Cow::Borrowed(l)));
    }
    let mut out = Parsed::default();
    // Each bridge's `Bus:` line: (its index in `out.pcie`, the range, line).
    let mut buses: Vec<(usize, BusRange, usize)> = Vec::new();
    // Each device's PCI Express port kind (`Root Port`, `Upstream Port`).
    let mut kinds: Vec<(usize, String)> = Vec::new();
    if rejoined {
        out.note(
            1,
            "wrapped lines (mail or terminal width) were joined back before reading",
        );
    }
    let mut elided = Vec::new();
    for (n, l) in &lines {
        if let Some((addr, desc)) = device_header(l) {
            out.pcie.push(PcieLink {
                address: addr.to_string(),
                name: Some(desc.trim().to_string()),
                role: role_of(desc).map(str::to_string),
                source: Source::line(*n),
                ..PcieLink::default()
            });
            continue;
        }
        let t = crate::evidence::trim(l);
        let Some(dev) = out.pcie.last_mut() else {
            if t.is_empty() {
                continue;
            }
            return Err(ParseError::new(
                *n,
                "a device line such as `01:00.0 VGA compatible controller: ...`",
            ));
        };
        if t == "..." {
            elided.push((*n, dev.address.clone()));
        } else if t == "Capabilities: <access denied>" {
            dev.link_hidden = true;
        } else if let Some(v) = t.strip_prefix("Bus:") {
            match bus_range(v) {
                Some(r) => {
                    let i = out.pcie.len() - 1;
                    buses.push((i, r, *n));
                }
                None => out.bad_row(*n, "a `Bus: primary=.., secondary=.., subordinate=..` line"),
            }
        } else if let Some(k) = express_kind(t) {
            kinds.push((out.pcie.len() - 1, k.to_string()));
        } else if let Some(v) = t.strip_prefix("NUMA node:") {
            dev.numa_node = v.trim().parse().ok();
        } else if let Some(v) = t.strip_prefix("LnkCap:") {
            read_lnk_cap(dev, v);
        } else if let Some(v) = t.strip_prefix("LnkSta:") {
            read_lnk_sta(dev, v);
        }
    }
    if out.pcie.is_empty() {
        return Err(ParseError::new(
            1,
            "a device line such as `01:00.0 VGA compatible controller: ...`",
        ));
    }
    let kinds: Vec<(usize, &str)> = kinds.iter().map(|(i, k)| (*i, k.as_str())).collect();
    chains(&mut out, &buses, &kinds);
    flag_elided(&mut out, elided);
    let cut: Vec<(String, usize)> = out
        .pcie
        .iter()
        .filter(|d| d.max_width_lanes.is_some() && d.current_width_lanes.is_none())
        .map(|d| (d.address.clone(), d.source.line))
        .collect();
    for (addr, _) in cut {
        out.truncated(
            text.lines().count(),
            format!("{addr}: `LnkCap` without `LnkSta` (cut short?)"),
        );
    }
    for d in &out.pcie {
        if d.link_hidden {
            let line = d.source.line;
            out.notes.push(super::Note {
                line,
                text: format!(
                    "{}: link capabilities hidden (`<access denied>`: lspci was not run as root)",
                    d.address
                ),
            });
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// nvidia-smi -q

pub fn looks_like_nvidia_smi_q(text: &str, lines: &[&str]) -> bool {
    has!(text, "==============NVSMI LOG==============")
        || (has!(text, "Link Width")
            && has!(text, "Replays")
            && crate::evidence::numbered(lines)
                .any(|(_, l)| l.trim_start().starts_with("Link Width"))
            && crate::evidence::numbered(lines).any(|(_, l)| l.trim_start().starts_with("Replays")))
}

fn indent(l: &str) -> usize {
    l.len() - l.trim_start().len()
}

/// Parses the PCI part of `nvidia-smi -q`: per GPU, `PCIe Generation`
/// (Max, Current, Device Current, Device Max, Host Max) and `Link Width`
/// (Max, Current). A capture that starts inside a GPU's PCI block keeps
/// what it has under an `unknown` address.
pub fn parse_nvidia_smi_q(text: &str) -> Result<Parsed, ParseError> {
    let mut out = Parsed::default();
    let mut attached: Option<(usize, usize)> = None;
    let mut section: Option<(String, usize)> = None;
    let mut first_content: Option<usize> = None;
    for (n, l) in numbered_lines(text) {
        let t = crate::evidence::trim(l);
        if t.is_empty() || t.starts_with("====") {
            continue;
        }
        first_content.get_or_insert(n);
        if let Some(addr) = t.strip_prefix("GPU ")
            && indent(l) == 0
        {
            out.pcie.push(PcieLink {
                address: addr.trim().to_string(),
                source: Source::line(n),
                ..PcieLink::default()
            });
            section = None;
            continue;
        }
        let (k, v) = match crate::evidence::key_value(t) {
            Some((k, v)) => (k, Some(v)),
            None => (t, None),
        };
        if k == "Attached GPUs" {
            attached = v.and_then(|v| v.parse().ok()).map(|c| (c, n));
            continue;
        }
        let Some(v) = v else {
            // A block title such as `PCIe Generation` or `Link Width`.
            section = Some((k.to_string(), indent(l)));
            continue;
        };
        if out.pcie.is_empty() && (k == "Max" || k == "Current") {
            // Cut in the middle of a GPU's block: the fields before `Link
            // Width` with no title can only be the PCIe generation.
            out.pcie.push(PcieLink {
                address: "unknown".into(),
                source: Source::line(n),
                ..PcieLink::default()
            });
            out.truncated(
                n,
                "the capture starts inside a GPU's PCI block; the GPU is not named",
            );
            section = Some(("PCIe Generation".into(), indent(l).saturating_sub(4)));
        }
        let Some(dev) = out.pcie.last_mut() else {
            continue;
        };
        if k == "Product Name" {
            dev.name = Some(v.to_string());
            continue;
        }
        if let Some((sec, sec_indent)) = &section
            && indent(l) > *sec_indent
        {
            let num = |s: &str| s.trim_end_matches('x').parse::<u32>().ok();
            match (sec.as_str(), k) {
                ("PCIe Generation", "Max") => dev.max_generation = num(v),
                ("PCIe Generation", "Current") => dev.current_generation = num(v),
                ("PCIe Generation", "Host Max") => dev.host_max_generation = num(v),
                ("Link Width", "Max") => dev.max_width_lanes = num(v),
                ("Link Width", "Current") => dev.current_width_lanes = num(v),
                _ => {}
            }
        }
    }
    if out.pcie.is_empty() {
        return Err(ParseError::new(
            first_content.unwrap_or(1),
            "a `GPU <bus id>` block",
        ));
    }
    if let Some((count, n)) = attached
        && count > out.pcie.len()
    {
        let last = text.lines().count();
        out.truncated(
            last,
            format!(
                "`Attached GPUs : {count}` (line {n}) but the capture shows {}",
                out.pcie.len()
            ),
        );
    }
    Ok(out)
}

/// `01:00.0 VGA compatible controller: ...`, optionally with a domain of
/// 4 to 8 hex digits (`0000:01:00.0`; `10000:e1:00.0` behind an Intel VMD,
/// whose domains start at 0x10000: lspci prints the domain `%04x`).
pub(crate) fn is_lspci_device(line: &str) -> bool {
    // The `:` after the bus, or a domain's first digit: most lines end here.
    let b = line.as_bytes();
    let domain = if b.get(2) == Some(&b':') {
        0
    } else if b.first().is_some_and(u8::is_ascii_hexdigit) {
        // The domain's `:` is byte 4 to 8.
        match b
            .get(4..b.len().min(9))
            .and_then(|w| w.iter().position(|c| *c == b':'))
        {
            Some(k) if b[..4 + k].iter().all(u8::is_ascii_hexdigit) => 5 + k,
            _ => return false,
        }
    } else {
        return false;
    };
    let Some((addr, rest)) = line.split_once(' ') else {
        return false;
    };
    // `get` keeps a cut inside a multi-byte character from panicking.
    let Some(addr) = addr.get(domain..) else {
        return false;
    };
    let b = addr.as_bytes();
    b.len() == 7
        && b[2] == b':'
        && b[5] == b'.'
        && addr
            .bytes()
            .enumerate()
            .all(|(i, c)| i == 2 || i == 5 || c.is_ascii_hexdigit())
        && rest.contains(": ")
}
