//! The grammar of NCCL's log lines (see the parent module's doc for the
//! forms and where NCCL prints them): each function takes one line's
//! message and gives its fact, or `None` when the line is not that kind.

use super::NcclTransport;

/// A line's NCCL prefix and message: `node1:123:456 [0] NCCL INFO msg`.
pub(super) struct Line<'a> {
    pub(super) host: Option<&'a str>,
    pub(super) msg: &'a str,
    /// `NCCL WARN` rather than `NCCL INFO`.
    pub(super) warn: bool,
    /// Whether the line has `NCCL INFO` or `NCCL WARN` at all.
    pub(super) marked: bool,
}

/// Splits off the `host:pid:tid [dev] NCCL INFO ` prefix (anything before
/// it, a timestamp or a logger's own head, is passed over); a line without
/// one is a bare message (a log whose prefixes were cut off).
pub(super) fn split_line(l: &str) -> Line<'_> {
    // One search for `NCCL `, each hit checked for the level after it:
    // the first `NCCL INFO`, else the first `NCCL WARN` (two ranks'
    // writes can share a line).
    let mut warn_at = None;
    let mut marker = None;
    for (i, _) in l.match_indices("NCCL ") {
        match l.get(i + 5..i + 9) {
            Some("INFO") => {
                marker = Some((i, false));
                break;
            }
            Some("WARN") if warn_at.is_none() => warn_at = Some(i),
            _ => {}
        }
    }
    let marker = marker.or(warn_at.map(|i| (i, true)));
    let Some((i, warn)) = marker else {
        return Line {
            host: None,
            msg: l.trim(),
            warn: false,
            marked: false,
        };
    };
    let (head, msg) = (&l[..i], &l[i + "NCCL INFO".len()..]);
    // `host:pid:tid [3] ` (a WARN has `file:line ` after the bracket).
    let host = head
        .split_whitespace()
        .rev()
        .find(|w| w.matches(':').count() >= 2 && !w.starts_with('['))
        .and_then(|w| {
            let mut parts = w.rsplitn(3, ':');
            let tid = parts.next()?;
            let pid = parts.next()?;
            let host = parts.next()?;
            let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
            (digits(tid) && digits(pid) && !host.is_empty()).then_some(host)
        });
    Line {
        host,
        msg: msg.trim(),
        warn,
        marked: true,
    }
}

/// `1b000` -> `0000:1b:00.0` (NCCL's `int64ToBusId`).
pub fn bus_id(hex: &str) -> Option<String> {
    let hex = hex.trim_start_matches("0x");
    if hex.is_empty() || hex.len() > 12 {
        return None;
    }
    let id = u64::from_str_radix(hex, 16).ok()?;
    Some(format!(
        "{:04x}:{:02x}:{:02x}.{:x}",
        id >> 20,
        (id >> 12) & 0xff,
        (id >> 4) & 0xff,
        id & 0xf
    ))
}

/// `NCCL version 2.18.3+cuda12.1`, `RCCL version : 2.21.5-HEAD:9a0e6a1`:
/// the version and whether RCCL printed it.
pub(super) fn version(msg: &str) -> Option<(String, bool)> {
    let (rest, rccl) = if let Some(r) = msg.strip_prefix("NCCL version") {
        (r, false)
    } else {
        (msg.strip_prefix("RCCL version")?, true)
    };
    let rest = rest.trim_start().trim_start_matches(':').trim_start();
    let word = rest.split_whitespace().next()?;
    let v: &str = word.split(['+', '-']).next()?;
    let ok = v.split('.').count() >= 2 && v.split('.').all(|p| p.parse::<u32>().is_ok());
    ok.then(|| (v.to_string(), rccl))
}

/// What an `Init START` / `Init COMPLETE` line says.
pub(super) struct Init<'a> {
    pub(super) rank: u32,
    pub(super) nranks: u32,
    pub(super) cuda_dev: u32,
    pub(super) bus_id: String,
    pub(super) comm_id: Option<&'a str>,
    pub(super) complete: bool,
}

pub(super) fn init_line(msg: &str) -> Option<Init<'_>> {
    let complete = msg.ends_with("Init COMPLETE");
    if !complete && !msg.ends_with("Init START") {
        return None;
    }
    let words: Vec<&str> = msg.split_whitespace().collect();
    let after = |key: &str| {
        words
            .iter()
            .position(|w| *w == key)
            .and_then(|i| words.get(i + 1))
            .copied()
    };
    let num = |key: &str| after(key)?.parse::<u32>().ok();
    Some(Init {
        rank: num("rank")?,
        nranks: num("nranks").or_else(|| num("nRanks"))?,
        cuda_dev: num("cudaDev")?,
        bus_id: bus_id(after("busId")?)?,
        comm_id: after("commId"),
        complete,
    })
}

/// An adapter as listed: its name, port and link layer.
pub(super) type Listed = (String, Option<u32>, Option<String>);

/// A GPUDirect RDMA line: the adapter's name (or its index), enabled,
/// the GPU's bus id, NCCL's reason.
pub(super) type GdrLine = (Result<String, u32>, bool, Option<String>, Option<String>);

/// `NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB eth0:…`.
pub(super) fn adapters(msg: &str) -> Option<Vec<Listed>> {
    let list = msg.strip_prefix("NET/IB")?.trim_start();
    let list = list.strip_prefix(':')?.trim_start().strip_prefix("Using")?;
    let list = list.split(';').next().unwrap_or(list);
    let mut out = Vec::new();
    // Each entry follows a `]`: `[0]mlx5_0:1/IB`, `[0]={[0] mlx5_0:1/IB,`.
    for piece in list.split('[').skip(1) {
        let Some((_, rest)) = piece.split_once(']') else {
            continue;
        };
        let rest = rest.trim_start().trim_start_matches("={").trim_start();
        let entry = rest
            .split(|c: char| c.is_whitespace() || c == ',' || c == '}')
            .next()
            .unwrap_or("");
        let Some((name, tail)) = entry.split_once(':') else {
            continue;
        };
        if name.is_empty() {
            continue;
        }
        let (port, layer) = match tail.split_once('/') {
            Some((p, l)) => (p, Some(l)),
            None => (tail, None),
        };
        let port = port.split(':').next().and_then(|p| p.parse().ok());
        let layer = layer
            .and_then(|l| l.split('/').next())
            .filter(|l| matches!(*l, "IB" | "RoCE"))
            .map(String::from);
        out.push((name.to_string(), port, layer));
    }
    Some(out)
}

/// `GPU Direct RDMA Enabled for HCA 0 'mlx5_0'`, `… for GPU 1b000 / HCA 0 (…)`.
pub(super) fn gpu_direct(msg: &str) -> Option<GdrLine> {
    let i = msg.find("GPU Direct RDMA ")?;
    let rest = &msg[i + "GPU Direct RDMA ".len()..];
    let (enabled, rest) = if let Some(r) = rest.strip_prefix("Enabled for ") {
        (true, r)
    } else {
        (false, rest.strip_prefix("Disabled for ")?)
    };
    let why = rest
        .find('(')
        .map(|i| {
            rest[i..]
                .split(')')
                .next()
                .unwrap_or("")
                .trim_start_matches('(')
        })
        .map(str::to_string);
    // `for GPU 1b000 / HCA 0 (distance ...)`
    if let Some(r) = rest.strip_prefix("GPU ") {
        let (gpu, hca) = r.split_once(" / HCA ")?;
        let n: u32 = hca.split_whitespace().next()?.parse().ok()?;
        return Some((Err(n), enabled, bus_id(gpu.trim()), why));
    }
    // `for HCA 0 'mlx5_0'`
    let r = rest.strip_prefix("HCA ")?;
    let name = r.split('\'').nth(1).filter(|n| !n.is_empty());
    match name {
        Some(n) => Some((Ok(n.to_string()), enabled, None, why)),
        None => {
            let n: u32 = r.split_whitespace().next()?.parse().ok()?;
            Some((Err(n), enabled, None, why))
        }
    }
}

/// A channel line: `Channel 00/0 : 0[1b000] -> 1[1c000] [send] via P2P/IPC/read`.
pub(super) fn path(msg: &str) -> Option<(u32, u32, u32, NcclTransport, String, Option<String>)> {
    let (kind, rest) = msg.split_once(' ')?;
    if !matches!(kind, "Channel" | "Ring" | "CollNet" | "Coll") {
        return None;
    }
    let (chan, rest) = rest.split_once(" : ")?;
    let channel: u32 = chan.split('/').next()?.trim().parse().ok()?;
    let (ends, via) = rest.split_once(" via ")?;
    let rank = |s: &str| s.trim().split('[').next()?.trim().parse::<u32>().ok();
    let mut side = None;
    let mut ends = ends.trim();
    for s in ["send", "receive", "recv"] {
        if let Some(e) = ends.strip_suffix(&format!("[{s}]")) {
            side = Some(if s == "recv" { "receive" } else { s }.to_string());
            ends = e.trim();
        }
    }
    let (src, dst) = match ends.split_once("->") {
        Some((a, b)) => (rank(a)?, rank(b)?),
        None => {
            let r = rank(ends)?;
            (r, r)
        }
    };
    // RCCL: `via P2P/IPC comm 0x… nRanks 08`.
    let via = via.split(" comm ").next().unwrap_or(via).trim();
    let transport = match via.split('/').next()? {
        "P2P" => NcclTransport::P2p,
        "SHM" => NcclTransport::Shm,
        "NET" => NcclTransport::Net,
        "NVLS" => NcclTransport::Nvls,
        "COLLNET" => NcclTransport::Collnet,
        _ => return None,
    };
    Some((channel, src, dst, transport, via.to_string(), side))
}

/// A last line that is the start of one of NCCL's: its prefix and no
/// message (`node:921`, `host:1:2 [0] NCCL INF`), or a channel line
/// before its `via`.
pub(super) fn is_cut(l: &str) -> bool {
    let t = l.trim();
    if t.contains("NCCL INFO") {
        let msg = split_line(t).msg;
        return msg.is_empty()
            || (msg.starts_with("Channel ") || msg.starts_with("Ring ")) && !msg.contains(" via ");
    }
    let head = t.split_whitespace().next().unwrap_or("");
    let prefix = head.contains(':')
        && head
            .rsplit(':')
            .next()
            .is_some_and(|x| x.is_empty() || x.bytes().all(|b| b.is_ascii_digit()));
    prefix
        && (t.split_whitespace().count() <= 3 || t.ends_with("NCCL IN") || t.ends_with("NCCL INF"))
}
