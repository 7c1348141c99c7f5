//! NCCL's and RCCL's own log: `NCCL_DEBUG=INFO`, from version 2.7 on,
//! the lines of many ranks interleaved.
//!
//! Every line NCCL logs starts `host:pid:tid [cudaDev] NCCL INFO ` (its
//! `debug.cc`; a timestamp may come first, and launchers add theirs,
//! which the scanner takes off). We read, from NCCL's source:
//! - `NCCL version 2.18.3+cuda12.1` (`init.cc`, `VERSION_STRING`); RCCL
//!   prints `RCCL version 2.6.4+hip3.5` or `RCCL version : 2.21.5-HEAD:…`;
//! - `[ncclCommInitRank ]comm 0x… rank 0 nranks 8 cudaDev 0 [nvmlDev 0 ]busId
//!   1b000 [commId 0x… ]- Init COMPLETE` (and `- Init START`, 2.19 on): one
//!   device per rank. `busId` is NCCL's 64-bit form of the PCI address,
//!   printed `%lx`; `int64ToBusId` (`utils.cc`) makes it
//!   `%04lx:%02lx:%02lx.%01lx` of `id>>20, id>>12 & 0xff, id>>4 & 0xff,
//!   id & 0xf`, so `1b000` is `0000:1b:00.0`;
//! - `NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB …`
//!   (`net_ib.cc`: ` [%d]%s:%d/%s`, device, port, link layer; 2.19–2.21
//!   merge devices as `[0]={[0] mlx5_0:1/IB, [1] mlx5_1:1/IB}`; newer ones
//!   may add `:rail` or `/SHARP`);
//! - `Using network IB` (`init.cc`; `Socket`, `AWS Libfabric`,
//!   `Libfabric`, a plugin's name);
//! - GPUDirect RDMA: `NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'
//!   [(no module)]` (2.7–2.17's check for the peer-memory module; 2.18 on
//!   `NET/<net> : GPU Direct RDMA Enabled|Disabled for HCA n 'name'`), and
//!   `GPU Direct RDMA Enabled|Disabled for GPU 1b000 / HCA 0 (distance …)`
//!   (`paths.cc`, up to 2.2x: a GPU and an adapter too far apart);
//! - paths: `Channel 00/0 : 0[1b000] -> 1[1c000] via P2P/IPC/read`
//!   (`p2p.cc`), `Channel 00 : 3[3] -> 2[2] via SHM/direct/direct`
//!   (`shm.cc`), `Channel 00/0 : 7[e4000] -> 0[7000] [receive] via
//!   NET/IB/0/GDRDMA` (`net.cc`), `CollNet 00/0 : 0 [send] via
//!   COLLNET/IB/0` (`coll_net.cc`); before 2.7, `Ring 00 : 7 -> 8 [send]
//!   via NET/…`. The bracket after a rank is its bus id up to 2.17 and its
//!   NVML index from 2.18: not read. RCCL adds ` comm 0x… nRanks 08`.
//!
//! One [`NcclInit`] per initialisation: the ranks of one communicator
//! (one `commId`, or, before 2.18, one run of `nranks` whose ranks do not
//! repeat). The lines before an init's first `Init START`/`Init COMPLETE`
//! line are its setup; lines after the last one (connections made for
//! point-to-point calls) go with the next init, or the last one at the
//! end. Lines of NCCL's with nothing read here are skipped, named as such;
//! anything else in the block is not understood.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{ParseError, Parsed, Source, numbered_lines};

/// One NCCL (or RCCL) initialisation: a communicator's ranks, the
/// adapters and network it chose, and the path of every channel.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NcclInit {
    /// `2.18.3`, from `NCCL version 2.18.3+cuda12.1`.
    pub version: Option<String>,
    /// RCCL (AMD's port) printed the version line.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rccl: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version_source: Option<Source>,
    /// The communicator's rank count (`nranks 8`).
    pub ranks: Option<u32>,
    /// `commId 0x…` (2.18 on): the communicator's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comm_id: Option<String>,
    pub devices: Vec<NcclDevice>,
    pub adapters: Vec<NcclAdapter>,
    /// `Using network IB`: `IB`, `Socket`, `AWS Libfabric`…; from a
    /// channel's `via NET/<net>/…` when that line is not in the log.
    pub net: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net_source: Option<Source>,
    pub gpu_direct: Vec<NcclGpuDirect>,
    pub paths: Vec<NcclPath>,
    /// `NVLS multicast support is available on dev 0` (or `is not`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nvls: Option<bool>,
    /// The init's first line read.
    pub source: Source,
}

/// A rank's GPU: `comm 0x… rank 0 nranks 8 cudaDev 0 busId 1b000 - Init COMPLETE`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NcclDevice {
    pub rank: u32,
    /// The host name of the line's prefix.
    pub host: Option<String>,
    pub cuda_dev: u32,
    /// `0000:1b:00.0`.
    pub bus_id: String,
    /// `Init COMPLETE` was logged for this rank (else only `Init START`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub complete: bool,
    pub source: Source,
}

/// An adapter NCCL's IB transport listed: `[0]mlx5_0:1/IB`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NcclAdapter {
    pub name: String,
    pub port: Option<u32>,
    /// `IB` or `RoCE`.
    pub link_layer: Option<String>,
    /// The host name of the line's prefix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    pub source: Source,
}

/// Whether NCCL would let `adapter` reach GPU memory directly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NcclGpuDirect {
    /// `mlx5_0`; `HCA 0` where the log names the index only and no
    /// adapter list gives its name.
    pub adapter: String,
    pub enabled: bool,
    /// The GPU it was judged for (`for GPU 1b000 / HCA 0`), where said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_bus_id: Option<String>,
    /// `(no module)`, `(distance 4 > 3)`: the reason NCCL printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    pub source: Source,
}

/// One channel's connection between two ranks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NcclPath {
    pub channel: u32,
    pub src_rank: u32,
    /// The peer; for a CollNet line (no peer), the rank itself.
    pub dst_rank: u32,
    pub transport: NcclTransport,
    /// `P2P/IPC/read`, `SHM/direct/direct`, `NET/IB/0/GDRDMA`.
    pub via: String,
    /// `send` or `receive`, where printed (network paths).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub side: Option<String>,
    /// The host name of the line's prefix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    pub source: Source,
}

/// NCCL's transports, as the `via` of a channel line names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum NcclTransport {
    /// Direct GPU-to-GPU (NVLink or PCIe peer access, or through one GPU).
    #[serde(rename = "P2P")]
    P2p,
    /// Through host shared memory: staged.
    #[serde(rename = "SHM")]
    Shm,
    /// Through a network adapter.
    #[serde(rename = "NET")]
    Net,
    #[serde(rename = "NVLS")]
    Nvls,
    #[serde(rename = "COLLNET")]
    Collnet,
}

impl NcclPath {
    /// A network path that goes through host memory: `via NET/IB/0`
    /// without `/GDRDMA` (not a socket, which never reaches GPU memory).
    pub fn net_without_gdr(&self) -> bool {
        self.transport == NcclTransport::Net
            && !self.via.contains("/GDRDMA")
            && !self.via.starts_with("NET/Socket")
    }
}

impl NcclInit {
    /// Whether this init holds any fact at all.
    fn is_empty(&self) -> bool {
        self.version.is_none()
            && self.devices.is_empty()
            && self.adapters.is_empty()
            && self.net.is_none()
            && self.gpu_direct.is_empty()
            && self.paths.is_empty()
            && self.nvls.is_none()
    }

    /// Moves `other`'s facts in (the setup lines of this init).
    fn absorb(&mut self, other: NcclInit) {
        if self.version.is_none() {
            self.version = other.version;
            self.rccl = other.rccl;
            self.version_source = other.version_source;
        }
        if self.net.is_none() {
            self.net = other.net;
            self.net_source = other.net_source;
        }
        self.nvls = self.nvls.or(other.nvls);
        self.adapters.extend(other.adapters);
        self.gpu_direct.extend(other.gpu_direct);
        self.paths.extend(other.paths);
        self.devices.extend(other.devices);
        if other.source.line != 0 && (self.source.line == 0 || other.source.line < self.source.line)
        {
            self.source = other.source;
        }
    }

    pub(crate) fn for_each_source(&mut self, f: &mut impl FnMut(&mut Source)) {
        f(&mut self.source);
        if let Some(s) = &mut self.version_source {
            f(s);
        }
        if let Some(s) = &mut self.net_source {
            f(s);
        }
        self.devices.iter_mut().for_each(|d| f(&mut d.source));
        self.adapters.iter_mut().for_each(|a| f(&mut a.source));
        self.gpu_direct.iter_mut().for_each(|g| f(&mut g.source));
        self.paths.iter_mut().for_each(|p| f(&mut p.source));
    }

    /// Every source of this init, for the file table.
    pub fn sources(&self) -> impl Iterator<Item = &Source> {
        std::iter::once(&self.source)
            .chain(&self.version_source)
            .chain(&self.net_source)
            .chain(self.devices.iter().map(|d| &d.source))
            .chain(self.adapters.iter().map(|a| &a.source))
            .chain(self.gpu_direct.iter().map(|g| &g.source))
            .chain(self.paths.iter().map(|p| &p.source))
    }
}

/// A line's NCCL prefix and message: `node1:123:456 [0] NCCL INFO msg`.
struct Line<'a> {
    host: Option<&'a str>,
    msg: &'a str,
    /// `NCCL WARN` rather than `NCCL INFO`.
    warn: bool,
}

/// Splits off the `host:pid:tid [dev] NCCL INFO ` prefix (anything before
/// it, a timestamp or a logger's own head, is passed over); a line without
/// one is a bare message (a log whose prefixes were cut off).
fn split_line(l: &str) -> Line<'_> {
    let (head, msg, warn) = if let Some(i) = l.find("NCCL INFO") {
        (&l[..i], &l[i + "NCCL INFO".len()..], false)
    } else if let Some(i) = l.find("NCCL WARN") {
        (&l[..i], &l[i + "NCCL WARN".len()..], true)
    } else {
        return Line {
            host: None,
            msg: l.trim(),
            warn: false,
        };
    };
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
fn version(msg: &str) -> Option<(String, bool)> {
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
struct Init<'a> {
    rank: u32,
    nranks: u32,
    cuda_dev: u32,
    bus_id: String,
    comm_id: Option<&'a str>,
    complete: bool,
}

fn init_line(msg: &str) -> Option<Init<'_>> {
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
type Listed = (String, Option<u32>, Option<String>);

/// A GPUDirect RDMA line: the adapter's name (or its index), enabled,
/// the GPU's bus id, NCCL's reason.
type GdrLine = (Result<String, u32>, bool, Option<String>, Option<String>);

/// `NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB eth0:…`.
fn adapters(msg: &str) -> Option<Vec<Listed>> {
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
fn gpu_direct(msg: &str) -> Option<GdrLine> {
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
fn path(msg: &str) -> Option<(u32, u32, u32, NcclTransport, String, Option<String>)> {
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

/// The facts of an NCCL log and how each line was used.
#[derive(Default)]
struct Reader {
    inits: Vec<NcclInit>,
    /// Facts since the last init line: the next init's setup.
    pending: NcclInit,
    /// The last version line (a process's library, for every init of it).
    version: Option<(String, bool, Source)>,
    /// The last adapter list, to name `HCA n` in older GDR lines.
    names: Vec<String>,
}

impl Reader {
    /// Where an init line of `comm_id`, `nranks` and `rank` belongs: the
    /// index of its init, made when none fits.
    fn init_for(&mut self, i: &Init<'_>, line: usize) -> usize {
        let found = match i.comm_id {
            Some(c) => self
                .inits
                .iter()
                .rposition(|e| e.comm_id.as_deref() == Some(c)),
            // Before commIds: the last init, while its ranks do not repeat
            // (a rank's `Init START` then its `Init COMPLETE` is one).
            None => self.inits.len().checked_sub(1).filter(|&k| {
                let e = &self.inits[k];
                e.comm_id.is_none()
                    && e.ranks == Some(i.nranks)
                    && !e
                        .devices
                        .iter()
                        .any(|d| d.rank == i.rank && (d.complete || !i.complete))
            }),
        };
        let k = match found {
            Some(k) => k,
            None => {
                self.inits.push(NcclInit {
                    ranks: Some(i.nranks),
                    comm_id: i.comm_id.map(String::from),
                    source: Source::line(line),
                    ..NcclInit::default()
                });
                self.inits.len() - 1
            }
        };
        let pending = std::mem::take(&mut self.pending);
        self.inits[k].absorb(pending);
        k
    }

    fn finish(mut self) -> Vec<NcclInit> {
        let pending = std::mem::take(&mut self.pending);
        if !pending.is_empty() {
            match self.inits.last_mut() {
                Some(last) => last.absorb(pending),
                None => self.inits.push(pending),
            }
        }
        for e in &mut self.inits {
            if e.version.is_none()
                && let Some((v, rccl, s)) = &self.version
            {
                e.version = Some(v.clone());
                e.rccl = *rccl;
                e.version_source = Some(s.clone());
            }
            if e.net.is_none()
                && let Some(p) = e.paths.iter().find(|p| p.transport == NcclTransport::Net)
            {
                let name = p.via.trim_start_matches("NET/");
                let name = name.split('/').next().unwrap_or(name);
                e.net = Some(name.to_string());
                e.net_source = Some(p.source.clone());
            }
        }
        self.inits
    }
}

/// Reads the NCCL facts of `text` into `out`: `nccl`, and, with
/// `account` (a log of its own, not lines inside an nccl-tests run),
/// NCCL's warnings and each line's use (lines of NCCL's with no fact
/// skipped, others not understood).
pub(crate) fn read_into(text: &str, out: &mut Parsed, account: bool) {
    let mut r = Reader::default();
    // The last line, and whether a fact was read from it.
    let mut last: Option<(usize, &str, bool)> = None;
    for (n, l) in numbered_lines(text) {
        if l.trim().is_empty() {
            continue;
        }
        last = Some((n, l, false));
        let line = split_line(l);
        let host = line.host.map(String::from);
        let is_nccl = line.host.is_some() || l.contains("NCCL INFO") || line.warn;
        if line.warn {
            if account {
                out.tool_error(n, format!("NCCL warned: {}", line.msg));
                out.skipped_lines
                    .push((n, "an NCCL warning (see problems)"));
            }
            continue;
        }
        let msg = line.msg;
        let read = if let Some((v, rccl)) = version(msg) {
            let first = r.pending.version.is_none();
            if first {
                r.pending.version = Some(v.clone());
                r.pending.rccl = rccl;
                r.pending.version_source = Some(Source::line(n));
            }
            r.version = Some((v, rccl, Source::line(n)));
            first
        } else if let Some(i) = init_line(msg) {
            let k = r.init_for(&i, n);
            let e = &mut r.inits[k];
            match e.devices.iter_mut().find(|d| d.rank == i.rank) {
                Some(d) => {
                    d.complete |= i.complete;
                    out.context_lines.push(n);
                }
                None => e.devices.push(NcclDevice {
                    rank: i.rank,
                    host,
                    cuda_dev: i.cuda_dev,
                    bus_id: i.bus_id,
                    complete: i.complete,
                    source: Source::line(n),
                }),
            }
            true
        } else if let Some(list) = adapters(msg) {
            r.names = list.iter().map(|a| a.0.clone()).collect();
            let known = |a: &NcclAdapter| a.name.clone();
            let have: Vec<String> = r.pending.adapters.iter().map(known).collect();
            let mut any = false;
            for (name, port, layer) in list {
                if have.contains(&name) {
                    continue;
                }
                any = true;
                r.pending.adapters.push(NcclAdapter {
                    name,
                    port,
                    link_layer: layer,
                    host: host.clone(),
                    source: Source::line(n),
                });
            }
            any
        } else if let Some(net) = msg.strip_prefix("Using network ") {
            if r.pending.net.is_none() {
                r.pending.net = Some(net.trim().to_string());
                r.pending.net_source = Some(Source::line(n));
                true
            } else {
                false
            }
        } else if let Some((who, enabled, gpu, why)) = gpu_direct(msg) {
            let adapter = match who {
                Ok(name) => name,
                Err(i) => r
                    .names
                    .get(i as usize)
                    .cloned()
                    .unwrap_or_else(|| format!("HCA {i}")),
            };
            r.pending.gpu_direct.push(NcclGpuDirect {
                adapter,
                enabled,
                gpu_bus_id: gpu,
                why,
                source: Source::line(n),
            });
            true
        } else if let Some((channel, src, dst, transport, via, side)) = path(msg) {
            r.pending.paths.push(NcclPath {
                channel,
                src_rank: src,
                dst_rank: dst,
                transport,
                via,
                side,
                host,
                source: Source::line(n),
            });
            true
        } else if let Some(rest) = msg.strip_prefix("NVLS multicast support is ") {
            r.pending.nvls = Some(rest.starts_with("available"));
            true
        } else {
            false
        };
        if read {
            last = Some((n, l, true));
            if r.pending.source.line == 0 {
                r.pending.source = Source::line(n);
            }
        } else if account {
            if is_nccl {
                out.skipped_lines
                    .push((n, "an NCCL log line with no fact read here"));
            } else {
                out.unread_lines.push(n);
            }
        }
    }
    if account
        && let Some((n, l, false)) = last
        && is_cut(l)
    {
        out.truncated(n, "the log stops inside an NCCL line");
    }
    out.nccl.extend(r.finish());
}

/// A last line that is the start of one of NCCL's: its prefix and no
/// message (`node:921`, `host:1:2 [0] NCCL INF`), or a channel line
/// before its `via`.
fn is_cut(l: &str) -> bool {
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

/// NCCL's or RCCL's INFO log: a line with its prefix and `NCCL INFO`
/// that holds a fact read here, or a bare fact line of a log whose
/// prefixes were cut (`Channel 00/0 : 0[0] -> 1[1] via P2P/IPC`).
pub fn looks_like_nccl_info(text: &str, lines: &[&str]) -> bool {
    if !has!(text, "NCCL INFO")
        && !has!(text, "Init COMPLETE")
        && !has!(text, " via ")
        && !has!(text, "NET/IB : Using")
        && !has!(text, "Using network")
    {
        return false;
    }
    lines.iter().any(|l| {
        let line = split_line(l);
        let msg = line.msg;
        if line.warn {
            return false;
        }
        init_line(msg).is_some()
            || path(msg).is_some()
            || adapters(msg).is_some_and(|a| !a.is_empty())
            || (line.host.is_some()
                && (msg.starts_with("Using network ")
                    || gpu_direct(msg).is_some()
                    || version(msg).is_some()))
    })
}

/// Parses an NCCL/RCCL `NCCL_DEBUG=INFO` log.
pub fn parse_nccl_info(text: &str) -> Result<Parsed, ParseError> {
    let mut out = Parsed::default();
    read_into(text, &mut out, true);
    if out.nccl.is_empty() {
        return Err(ParseError::new(
            1,
            "NCCL INFO lines (`NCCL version`, `Init COMPLETE`, `NET/IB : Using`, `Channel 00/0 : 0[0] -> 1[1] via …`)",
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
