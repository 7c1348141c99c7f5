//! The PCIe tree as `lspci -vv`/`-vvv` prints it for a whole machine: each
//! bridge's `Bus: primary=17, secondary=18, subordinate=1a` line and each
//! device's address are enough to rebuild every device's bridge chain
//! (nearest bridge first, root port last), the way sysfs paths give it on a
//! live node, so the switch analysis (`facts::switches`) reads transcripts
//! and live trees alike. A device's parent is the bridge whose secondary
//! bus is the device's bus, in the same PCI domain (lspci prints the
//! domain only with `-D` or several domains; a bare `17:00.0` is domain
//! `0000`). The PCI Express capability's port kind (`Root Port`,
//! `Upstream Port`, `Downstream Port`) tells a chain that reaches its root
//! port from one cut short by the transcript (`lspci -s` of some devices).

use std::collections::{BTreeMap, BTreeSet};

use crate::evidence::Parsed;

/// A bridge's `Bus:` line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct BusRange {
    pub primary: u8,
    pub secondary: u8,
    pub subordinate: u8,
}

/// ` primary=17, secondary=18, subordinate=1a, sec-latency=0` -> the range.
pub(super) fn bus_range(v: &str) -> Option<BusRange> {
    let get = |key: &str| {
        v.split(',')
            .filter_map(|p| p.trim().strip_prefix(key))
            .find_map(|x| u8::from_str_radix(x.trim(), 16).ok())
    };
    Some(BusRange {
        primary: get("primary=")?,
        secondary: get("secondary=")?,
        subordinate: get("subordinate=")?,
    })
}

/// `Capabilities: [68] Express (v2) Upstream Port, MSI 00` -> `Upstream
/// Port`; `Express (v2) Root Port (Slot+), MSI 00` -> `Root Port`.
pub(super) fn express_kind(t: &str) -> Option<&str> {
    let rest = t.strip_prefix("Capabilities: [")?;
    let rest = rest.split_once("] Express")?.1.trim_start();
    let rest = match rest.strip_prefix("(v") {
        Some(r) => r.split_once(')')?.1.trim_start(),
        None => rest,
    };
    let end = rest.find([',', '(']).unwrap_or(rest.len());
    Some(rest[..end].trim()).filter(|k| !k.is_empty())
}

/// PCI vendors whose display controllers are a server's BMC console
/// (ASPEED `1a03`, Matrox `102b` on iDRAC), not GPUs: `0x1a03` from sysfs,
/// `1a03` from lspci's `[1a03:2000]`.
pub const BMC_DISPLAY_VENDORS: [&str; 2] = ["1a03", "102b"];

/// Whether an lspci device description is a BMC's display controller.
fn is_bmc_display(desc: &str) -> bool {
    desc.contains("ASPEED")
        || desc.contains("Matrox")
        || BMC_DISPLAY_VENDORS
            .iter()
            .any(|v| desc.contains(&format!("[{v}:")))
}

/// The role sysfs gives a PCI class (`gpu`, `nic`, `bridge`), from the
/// header's class: its code where lspci printed it (`-nn`: `PCI bridge
/// [0604]`), else its name. A BMC's display controller has none.
pub(super) fn role_of(desc: &str) -> Option<&'static str> {
    if is_bmc_display(desc) {
        return None;
    }
    let class = desc.split_once(':').map_or(desc, |(c, _)| c).trim();
    let code = class
        .rsplit_once('[')
        .and_then(|(_, c)| c.strip_suffix(']'))
        .or_else(|| class.strip_prefix("Class "))
        .and_then(|c| u32::from_str_radix(c.trim(), 16).ok())
        .filter(|_| class.ends_with(']') || class.starts_with("Class "));
    match code {
        Some(c) if c >> 8 == 0x03 => Some("gpu"),
        Some(0x0200 | 0x0207) => Some("nic"),
        Some(0x0604) => Some("bridge"),
        Some(_) => None,
        None => {
            let name = class.split(" [").next().unwrap_or(class);
            match name {
                "VGA compatible controller" | "3D controller" | "Display controller" => Some("gpu"),
                "Ethernet controller" | "Infiniband controller" => Some("nic"),
                "PCI bridge" => Some("bridge"),
                _ => None,
            }
        }
    }
}

/// `0000:17:00.0` -> (`0000`, 0x17); `17:00.0` -> (`0000`, 0x17).
fn domain_bus(address: &str) -> Option<(&str, u8)> {
    let mut parts = address.rsplitn(3, ':');
    let _devfn = parts.next()?;
    let bus = u8::from_str_radix(parts.next()?, 16).ok()?;
    Some((parts.next().unwrap_or("0000"), bus))
}

/// The most bridges a chain holds: PCIe allows 256 buses, but a real
/// tree is a root port, a few switch levels and a device (a dozen at
/// most); beyond this a text's chains would cost memory per device line
/// times its depth.
const MAX_CHAIN: usize = 64;

/// Fills each device's `upstream` chain from the bridges' bus ranges.
/// `buses` holds (index in `out.pcie`, range, line) per bridge, `kinds`
/// (index, PCI Express port kind) per device that printed one.
pub(super) fn chains(
    out: &mut Parsed,
    buses: &[(usize, BusRange, usize)],
    kinds: &[(usize, &str)],
) {
    // (domain, secondary bus) -> the bridge that leads to it.
    let mut below: BTreeMap<(String, u8), usize> = BTreeMap::new();
    let mut twice: BTreeSet<(String, u8)> = BTreeSet::new();
    for &(i, r, n) in buses {
        let Some((domain, _)) = domain_bus(&out.pcie[i].address) else {
            continue;
        };
        let key = (domain.to_string(), r.secondary);
        if let Some(&j) = below.get(&key) {
            let first = out.pcie[j].address.clone();
            if first == out.pcie[i].address {
                continue; // the same bridge printed twice (a paste repeated)
            }
            out.note(
                n,
                format!(
                    "{} and {first} both lead to bus {:02x}: devices on it get no bridge chain",
                    out.pcie[i].address, r.secondary
                ),
            );
            twice.insert(key);
        } else {
            below.insert(key, i);
        }
    }
    for key in &twice {
        below.remove(key);
    }
    let kind: BTreeMap<usize, &str> = kinds.iter().copied().collect();
    let mut cut_at: BTreeSet<usize> = BTreeSet::new();
    let mut listed: BTreeSet<String> = BTreeSet::new();
    let mut too_deep = None;
    for i in 0..out.pcie.len() {
        // A device printed again (a paste repeated) gets no second copy
        // of its chain: the bundle keeps the first entry of an address.
        if !listed.insert(out.pcie[i].address.clone()) {
            continue;
        }
        let mut chain = Vec::new();
        let mut seen = BTreeSet::from([i]);
        let mut at = i;
        while let Some((domain, bus)) = domain_bus(&out.pcie[at].address)
            && let Some(&up) = below.get(&(domain.to_string(), bus))
            && seen.insert(up)
        {
            if chain.len() == MAX_CHAIN {
                too_deep.get_or_insert(out.pcie[i].source.line);
                break;
            }
            chain.push(out.pcie[up].address.clone());
            at = up;
        }
        if at != i && matches!(kind.get(&at), Some(k) if k.ends_with("stream Port")) {
            cut_at.insert(at);
        }
        out.pcie[i].upstream = chain;
    }
    if let Some(line) = too_deep {
        out.note(
            line,
            format!(
                "bridge chains deeper than {MAX_CHAIN} bridges (no machine's) are cut there: \
                 the devices below keep the {MAX_CHAIN} nearest"
            ),
        );
    }
    for at in cut_at {
        let (line, address) = (out.pcie[at].source.line, out.pcie[at].address.clone());
        out.note(
            line,
            format!(
                "{address} is a switch port and the bridge above it is not in the transcript: \
                 the chains below it stop there, without their root port"
            ),
        );
    }
}

#[cfg(test)]
mod tests;
