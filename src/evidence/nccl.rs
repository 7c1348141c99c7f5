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

mod grammar;

pub use grammar::bus_id;
use grammar::{Init, Listed, adapters, gpu_direct, init_line, is_cut, path, split_line, version};

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
        if line.warn {
            if account {
                out.tool_error(n, format!("NCCL warned: {}", line.msg));
                out.skipped_lines
                    .push((n, "an NCCL warning (see problems)"));
            }
            continue;
        }
        let host = line.host.map(String::from);
        if r.read(line.msg, host, n, out) {
            last = Some((n, l, true));
            if r.pending.source.line == 0 {
                r.pending.source = Source::line(n);
            }
        } else if account {
            if line.host.is_some() || line.marked {
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

impl Reader {
    /// Reads the fact of message `msg` (line `n`, of `host`): whether
    /// there was one.
    fn read(&mut self, msg: &str, host: Option<String>, n: usize, out: &mut Parsed) -> bool {
        if let Some((v, rccl)) = version(msg) {
            let first = self.pending.version.is_none();
            if first {
                self.pending.version = Some(v.clone());
                self.pending.rccl = rccl;
                self.pending.version_source = Some(Source::line(n));
            }
            self.version = Some((v, rccl, Source::line(n)));
            first
        } else if let Some(i) = init_line(msg) {
            self.device(&i, host, n, out);
            true
        } else if let Some(list) = adapters(msg) {
            self.adapters(list, host, n)
        } else if let Some(net) = msg.strip_prefix("Using network ") {
            let first = self.pending.net.is_none();
            if first {
                self.pending.net = Some(net.trim().to_string());
                self.pending.net_source = Some(Source::line(n));
            }
            first
        } else if let Some((who, enabled, gpu, why)) = gpu_direct(msg) {
            let adapter = match who {
                Ok(name) => name,
                Err(i) => self
                    .names
                    .get(i as usize)
                    .cloned()
                    .unwrap_or_else(|| format!("HCA {i}")),
            };
            self.pending.gpu_direct.push(NcclGpuDirect {
                adapter,
                enabled,
                gpu_bus_id: gpu,
                why,
                source: Source::line(n),
            });
            true
        } else if let Some((channel, src, dst, transport, via, side)) = path(msg) {
            self.pending.paths.push(NcclPath {
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
            self.pending.nvls = Some(rest.starts_with("available"));
            true
        } else {
            false
        }
    }

    /// An init line: its rank's device, once (a rank's `Init START` then
    /// its `Init COMPLETE` is one device; the second line is context).
    fn device(&mut self, i: &Init<'_>, host: Option<String>, n: usize, out: &mut Parsed) {
        let k = self.init_for(i, n);
        let e = &mut self.inits[k];
        match e.devices.iter_mut().find(|d| d.rank == i.rank) {
            Some(d) => {
                d.complete |= i.complete;
                out.context_lines.push(n);
            }
            None => e.devices.push(NcclDevice {
                rank: i.rank,
                host,
                cuda_dev: i.cuda_dev,
                bus_id: i.bus_id.clone(),
                complete: i.complete,
                source: Source::line(n),
            }),
        }
    }

    /// An adapter list: the adapters not listed before in this setup
    /// (whether there was one), and the names by index for older GDR lines.
    fn adapters(&mut self, list: Vec<Listed>, host: Option<String>, n: usize) -> bool {
        self.names = list.iter().map(|a| a.0.clone()).collect();
        let have: Vec<String> = self
            .pending
            .adapters
            .iter()
            .map(|a| a.name.clone())
            .collect();
        let mut any = false;
        for (name, port, layer) in list {
            if have.contains(&name) {
                continue;
            }
            any = true;
            self.pending.adapters.push(NcclAdapter {
                name,
                port,
                link_layer: layer,
                host: host.clone(),
                source: Source::line(n),
            });
        }
        any
    }
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
