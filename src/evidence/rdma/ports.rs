//! Adapters and ports: `ibstat`, `ibstatus`, `ibv_devinfo`, `ibv_devices`, `show_gids`.

use super::*;
#[allow(unused_imports)]
use crate::evidence::SplitWords;

pub fn looks_like_ibstat(text: &str, lines: &[&str]) -> bool {
    // Whole-text searches first: the line pass runs only where they match.
    has!(text, "State:")
        && (has!(text, "CA '") || has!(text, "CA: '"))
        && lines.iter().any(|l| {
            let t = l.trim_start_matches(['│', '┃', '|']).trim();
            (t.starts_with("CA '") || t.starts_with("CA: '")) && t.ends_with('\'')
        })
}

/// Parses `ibstat` (all adapters, or `ibstat <ca> <port>` with its
/// `CA: '<name>'` header and unindented fields).
pub fn parse_ibstat(text: &str) -> Result<Parsed, ParseError> {
    let mut out = Parsed::default();
    let mut counts: Vec<(String, u32)> = Vec::new();
    // The current device's name, borrowed from its `CA` line.
    let mut cur: Option<&str> = None;
    let mut cur_port: Option<u32> = None;
    for (n, l) in clean_lines(text) {
        let t = crate::evidence::trim(l);
        if t.is_empty() {
            continue;
        }
        if let Some(name) = t
            .strip_prefix("CA '")
            .or_else(|| t.strip_prefix("CA: '"))
            .and_then(|r| r.strip_suffix('\''))
        {
            device(&mut out.rdma, name, n);
            cur = Some(name);
            cur_port = None;
            continue;
        }
        if t.starts_with("ibpanic:") || t.starts_with("ibwarn:") {
            out.tool_error(n, format!("ibstat: {t}"));
            continue;
        }
        let Some(name) = cur else {
            return Err(ParseError::new(n, "a `CA '<name>'` line first"));
        };
        if let Some(p) = t.strip_prefix("Port ").and_then(|r| r.strip_suffix(':')) {
            let p: u32 = p.parse().map_err(|_| ParseError::new(n, "`Port <n>:`"))?;
            port(device(&mut out.rdma, name, n), p, n);
            cur_port = Some(p);
            continue;
        }
        // The value is copied only into a field that keeps it.
        let Some((k, v)) = crate::evidence::key_value(t) else {
            return Err(ParseError::new(
                n,
                format!("`<field>: <value>`, found `{t}`"),
            ));
        };
        let dev = device(&mut out.rdma, name, n);
        if k == "Number of ports"
            && let Ok(c) = v.parse()
        {
            counts.push((name.to_string(), c));
        }
        match (k, cur_port) {
            ("CA type", _) => dev.ca_type = Some(v.to_string()),
            ("Firmware version", _) => dev.firmware = Some(v.to_string()),
            ("Node GUID", _) => dev.node_guid = Some(v.to_string()),
            (_, Some(pn)) => {
                let p = port(dev, pn, n);
                match k {
                    "State" => p.set_state(v.to_string()),
                    "Physical state" => p.set_physical_state(v.to_string()),
                    "Rate" => set_rate(p, v),
                    "Base lid" => p.lid = Some(v.to_string()),
                    "SM lid" => p.sm_lid = Some(v.to_string()),
                    "Port GUID" => p.port_guid = Some(v.to_string()),
                    "Link layer" => p.link_layer = Some(v.to_string()),
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
    // The last line, counted only when a problem is to be told, and once
    // (a paste repeating one adapter's block asked for it per block).
    let last_line = std::cell::OnceCell::new();
    let last = || *last_line.get_or_init(|| crate::evidence::lines(text).count().max(1));
    // Every port block prints its link layer; a last port without one was cut.
    if let Some(p) = out.rdma.last().and_then(|d| d.ports.last())
        && p.link_layer.is_none()
    {
        let name = out.rdma.last().map(|d| d.name.clone()).unwrap_or_default();
        out.truncated(
            last(),
            format!(
                "port {} of {name} stops before its link layer (cut short?)",
                p.port
            ),
        );
    }
    // Each adapter once, at its first count, in the order printed: a
    // block repeated thousands of times is checked once.
    let mut checked = std::collections::HashSet::new();
    for (name, count) in counts {
        let count = *count;
        if !checked.insert(name.as_str()) {
            continue;
        }
        let Some(d) = out.rdma.iter().find(|d| &d.name == name) else {
            continue;
        };
        let seen: Vec<u32> = d.ports.iter().map(|p| p.port).collect();
        let from_one = seen.first() == Some(&1);
        if from_one && (seen.len() as u32) < count {
            let msg = format!(
                "{name} has {count} ports but the capture shows {}",
                seen.len()
            );
            out.truncated(last(), msg);
        }
    }
}

pub fn looks_like_ibstatus(text: &str, lines: &[&str]) -> bool {
    has!(text, "Infiniband device '")
        && crate::evidence::numbered(lines)
            .any(|(_, l)| l.starts_with("Infiniband device '") && l.contains(" port "))
}

/// Parses `ibstatus`: `Infiniband device '<ca>' port <n> status:` blocks.
pub fn parse_ibstatus(text: &str) -> Result<Parsed, ParseError> {
    let mut out = Parsed::default();
    let mut cur: Option<(String, u32)> = None;
    for (n, l) in numbered_lines(text) {
        let t = crate::evidence::trim(l);
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
        // The current port, borrowed (not its name copied a line).
        let Some((name, pn)) = &cur else {
            return Err(ParseError::new(
                n,
                "an `Infiniband device '<ca>' port <n> status:` line first",
            ));
        };
        let Some((k, v)) = crate::evidence::key_value(t) else {
            return Err(ParseError::new(
                n,
                format!("`<field>: <value>`, found `{t}`"),
            ));
        };
        let p = port(device(&mut out.rdma, name, n), *pn, n);
        // The value is copied only into a field that keeps it.
        match k {
            "state" => p.set_state(v.to_string()),
            "phys state" => p.set_physical_state(v.to_string()),
            "rate" => {
                // `200 Gb/sec (4X HDR)`
                if let Some((_, inner)) = v.split_once('(') {
                    let inner = inner.trim_end_matches(')');
                    let mut parts = inner.words();
                    p.width = parts.next().map(str::to_string);
                    p.speed = parts.next().map(str::to_string);
                }
                set_rate(p, v);
            }
            "link_layer" => p.link_layer = Some(v.to_string()),
            "base lid" => p.lid = Some(v.to_string()),
            "sm lid" => p.sm_lid = Some(v.to_string()),
            "default gid" => p.gids.push(Gid {
                index: 0,
                gid: v.to_string(),
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

pub fn looks_like_ibv_devinfo(text: &str, lines: &[&str]) -> bool {
    has!(text, "hca_id:")
        && crate::evidence::numbered(lines).any(|(_, l)| l.trim_start().starts_with("hca_id:"))
        || lines
            .iter()
            .find(|l| !l.trim().is_empty())
            .is_some_and(|l| is_list_head(l))
}

/// `4 HCAs found:` or `1 HCA found:` (`ibv_devinfo -l`).
fn is_list_head(l: &str) -> bool {
    let t = l.trim();
    let Some(n) = t
        .strip_suffix("HCAs found:")
        .or_else(|| t.strip_suffix("HCA found:"))
    else {
        return false;
    };
    let n = n.trim();
    !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
}

/// Parses `ibv_devinfo` (plain, `-v`, `-l`). Device capability lines of
/// `-v` are skipped; ports, states, MTUs, widths, speeds and GIDs are kept.
pub fn parse_ibv_devinfo(text: &str) -> Result<Parsed, ParseError> {
    let mut out = Parsed::default();
    let all: Vec<(usize, &str)> = crate::evidence::numbered_vec(text);
    let mut lines = &all[..];
    // `ibv_devinfo -l`: `2 HCAs found:` then one name per line, up to the
    // first line that is not a bare name (a second command's output).
    if let Some(i) = lines.iter().position(|(_, l)| !l.trim().is_empty())
        && is_list_head(lines[i].1)
    {
        let mut k = i + 1;
        while let Some((n, l)) = lines.get(k) {
            let t = l.trim();
            if t.contains(char::is_whitespace) || t.contains(':') {
                break;
            }
            if !t.is_empty() {
                device(&mut out.rdma, t, *n);
            }
            k += 1;
        }
        // What follows (`ibv_devinfo -v -d mlx5_0` pasted after it) is
        // read from its first `hca_id:`.
        let rest = &lines[k..];
        let start = rest
            .iter()
            .position(|(_, l)| l.trim_start().starts_with("hca_id:"));
        match start {
            Some(s) => lines = &rest[s..],
            None => return Ok(out),
        }
    }
    // The current device's name and each value are borrowed from the
    // text; a value is copied only where it is kept.
    let mut cur: Option<&str> = None;
    let mut cur_port: Option<u32> = None;
    let mut counts: Vec<(String, u32)> = Vec::new();
    for &(n, l) in lines {
        let t = crate::evidence::trim(l);
        if t.is_empty() {
            continue;
        }
        let Some((k, v)) = crate::evidence::key_value(t) else {
            // `ibv_devinfo -v` continues a value on indented lines (its
            // capability flags); a line at the margin that is no field
            // (a sentence typed after the output) is not the tool's.
            if t == "Failed to open device" {
                // Its own message for a device it may not open (a
                // container given one VF of several).
                out.skipped_lines
                    .push((n, "ibv_devinfo's own message: a device it could not open"));
            } else if !l.starts_with([' ', '\t']) {
                out.unread_lines.push(n);
            }
            continue;
        };
        if k == "hca_id" {
            device(&mut out.rdma, v, n);
            cur = Some(v);
            cur_port = None;
            continue;
        }
        let Some(name) = cur else {
            return Err(ParseError::new(n, "an `hca_id:` line first"));
        };
        let dev = device(&mut out.rdma, name, n);
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
            counts.push((name.to_string(), c));
        }
        match (k, cur_port) {
            ("transport", None) => dev.transport = Some(v.to_string()),
            ("fw_ver", None) => dev.firmware = Some(v.to_string()),
            ("node_guid", None) => dev.node_guid = Some(v.to_string()),
            ("board_id", None) => dev.board_id = Some(v.to_string()),
            (_, Some(pn)) => {
                let p = port(dev, pn, n);
                match k {
                    "state" => p.set_state(v.to_string()),
                    "phys_state" => p.set_physical_state(v.to_string()),
                    "max_mtu" => p.max_mtu_bytes = mtu(v),
                    "active_mtu" => p.active_mtu_bytes = mtu(v),
                    "link_layer" => p.link_layer = Some(v.to_string()),
                    "port_lid" => p.lid = Some(v.to_string()),
                    "sm_lid" => p.sm_lid = Some(v.to_string()),
                    "active_width" => p.width = Some(v.to_string()),
                    "active_speed" => p.speed = Some(v.to_string()),
                    _ if k.starts_with("GID[") => {
                        let idx = k.trim_start_matches("GID[").trim_end_matches(']').trim();
                        if let Ok(index) = idx.parse() {
                            p.gids.push(Gid {
                                index,
                                gid: v.to_string(),
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

pub fn looks_like_ibv_devices(_text: &str, lines: &[&str]) -> bool {
    let mut it = crate::evidence::numbered(lines).filter(|(_, l)| !l.trim().is_empty());
    matches!(it.next(), Some((_, l)) if l.words().eq(["device", "node", "GUID"]))
}

/// Parses `ibv_devices`: a header, a dashes line, then `<name> <node GUID>`.
pub fn parse_ibv_devices(text: &str) -> Result<Parsed, ParseError> {
    let mut out = Parsed::default();
    for (n, l) in numbered_lines(text) {
        let toks: Vec<&str> = l.words().collect();
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

pub fn looks_like_show_gids(text: &str, lines: &[&str]) -> bool {
    has!(text, "INDEX")
        && lines.iter().any(|l| {
            let mut t = l.words();
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
        let toks: Vec<&str> = l.words().collect();
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
