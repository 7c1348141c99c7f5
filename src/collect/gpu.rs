//! GPU copy sweeps, the same for every vendor: per device, host-to-device
//! and device-to-host from pinned and from pageable host memory, and
//! device-to-device; per ordered pair, `can access peer`, and copies with
//! peer access enabled and with it disabled (the host-staged fingerprint of
//! the seed's section 3.5). Every runtime call is checked, timing is by
//! device events on the copy's stream, every byte is verified, and every
//! buffer, stream, event, peer access and context is released on every
//! path, errors included. [`GpuApi`] is what a vendor runtime provides:
//! CUDA (`cuda.rs`, default build) and HIP (`hip.rs`, feature `rocm`).

use std::ptr;
use std::time::Duration;

use super::sweep::{self, Backend, Path, Plan};
use crate::evidence::measurement::{Buffers, CopyEngine, Kind, Measurement, P2p};

/// One device as its runtime describes it.
#[derive(Debug, Clone)]
pub struct Gpu {
    pub ordinal: i32,
    pub name: String,
    pub pci_bus_id: String,
    pub memory_bytes: u64,
}

impl Gpu {
    /// From the NUL-terminated name and PCI bus id buffers a runtime filled.
    pub fn from_c(
        ordinal: i32,
        name: &[std::ffi::c_char],
        bus: &[std::ffi::c_char],
        memory_bytes: usize,
    ) -> Gpu {
        let text = |b: &[std::ffi::c_char]| {
            let bytes: Vec<u8> = b
                .iter()
                .take_while(|c| **c != 0)
                .map(|c| *c as u8)
                .collect();
            String::from_utf8_lossy(&bytes).into_owned()
        };
        Gpu {
            ordinal,
            name: text(name),
            pci_bus_id: text(bus).to_ascii_lowercase(),
            memory_bytes: memory_bytes as u64,
        }
    }
}

/// Why there is nothing to measure, when there is not.
#[derive(Debug, Clone, PartialEq)]
pub enum Unavailable {
    /// The runtime library is not on this machine.
    NoLibrary,
    /// The runtime is there but reports no device (or fails to initialise).
    NoDevice(String),
}

/// The calls a vendor runtime provides. Every call that can fail returns
/// `Err("<call>: <error text>")`. Device pointers are plain addresses.
pub(crate) trait GpuApi {
    /// `cuda`, `hip`: for test names and logs.
    const NAME: &'static str;
    /// What a copy is issued in: a context (CUDA) or a device (HIP).
    type Ctx: Copy;
    type Stream: Copy;
    type Event: Copy;
    /// What times copies, for the questions.
    const TIMER: &'static str;

    fn can_access_peer(&self, dev: i32, peer: i32) -> Result<bool, String>;
    fn open(&self, dev: i32) -> Result<Self::Ctx, String>;
    fn close(&self, dev: i32);
    fn make_current(&self, ctx: Self::Ctx) -> Result<(), String>;
    fn alloc(&self, n: usize) -> Result<u64, String>;
    fn free(&self, p: u64);
    fn host_alloc(&self, n: usize) -> Result<*mut u8, String>;
    fn host_free(&self, p: *mut u8);
    fn stream(&self) -> Result<Self::Stream, String>;
    fn stream_destroy(&self, s: Self::Stream);
    fn stream_sync(&self, s: Self::Stream) -> Result<(), String>;
    fn event(&self) -> Result<Self::Event, String>;
    fn event_destroy(&self, e: Self::Event);
    fn record(&self, e: Self::Event, s: Self::Stream) -> Result<(), String>;
    fn elapsed(&self, a: Self::Event, b: Self::Event) -> Result<Duration, String>;
    fn h2d(&self, dst: u64, src: *const u8, n: usize, s: Self::Stream) -> Result<(), String>;
    fn d2h(&self, dst: *mut u8, src: u64, n: usize, s: Self::Stream) -> Result<(), String>;
    fn d2d(&self, dst: u64, src: u64, n: usize, s: Self::Stream) -> Result<(), String>;
    fn peer(
        &self,
        dst: u64,
        dst_ctx: Self::Ctx,
        src: u64,
        src_ctx: Self::Ctx,
        n: usize,
        s: Self::Stream,
    ) -> Result<(), String>;
    /// Lets the current context reach `peer`'s memory. `Ok(false)` when it
    /// already could (then it is left enabled afterwards).
    fn enable_peer(&self, peer: Self::Ctx) -> Result<bool, String>;
    fn disable_peer(&self, peer: Self::Ctx);
}

/// What one sweep copies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CopyKind {
    H2d { pinned: bool },
    D2h { pinned: bool },
    D2d,
    Peer { peer_access: bool },
}

/// Host memory of a sweep: pinned by the runtime, or ordinary pageable.
enum HostBuf {
    None,
    Pinned(*mut u8),
    Pageable(Vec<u8>),
}

impl HostBuf {
    fn ptr(&mut self) -> *mut u8 {
        match self {
            HostBuf::None => ptr::null_mut(),
            HostBuf::Pinned(p) => *p,
            HostBuf::Pageable(v) => v.as_mut_ptr(),
        }
    }
}

/// One copy sweep's resources on one runtime.
pub(crate) struct GpuCopy<'a, A: GpuApi> {
    api: &'a A,
    kind: CopyKind,
    src: (i32, String),
    dst: (i32, String),
    can_access: Option<bool>,
    ctx_src: Option<A::Ctx>,
    ctx_dst: Option<A::Ctx>,
    opened: Vec<i32>,
    stream: Option<A::Stream>,
    ev: [Option<A::Event>; 2],
    host: HostBuf,
    dev_src: u64,
    dev_dst: u64,
    /// Accesses this sweep enabled (from, to), to disable them again.
    enabled: Vec<(A::Ctx, A::Ctx)>,
    check: Vec<u8>,
}

impl<'a, A: GpuApi> GpuCopy<'a, A> {
    /// `src` and `dst` are (ordinal, id as in the topology).
    pub fn new(
        api: &'a A,
        kind: CopyKind,
        src: (i32, String),
        dst: (i32, String),
        can_access: Option<bool>,
    ) -> Self {
        GpuCopy {
            api,
            kind,
            src,
            dst,
            can_access,
            ctx_src: None,
            ctx_dst: None,
            opened: Vec::new(),
            stream: None,
            ev: [None, None],
            host: HostBuf::None,
            dev_src: 0,
            dev_dst: 0,
            enabled: Vec::new(),
            check: Vec::new(),
        }
    }

    fn open(&mut self, dev: i32) -> Result<A::Ctx, String> {
        let c = self.api.open(dev)?;
        self.opened.push(dev);
        Ok(c)
    }

    fn ctx_src(&self) -> Result<A::Ctx, String> {
        self.ctx_src
            .ok_or_else(|| "no context: prepare did not run".to_string())
    }

    fn stream(&self) -> Result<A::Stream, String> {
        self.stream
            .ok_or_else(|| "no stream: prepare did not run".to_string())
    }

    fn alloc_on(&self, ctx: A::Ctx, n: usize) -> Result<u64, String> {
        self.api.make_current(ctx)?;
        self.api.alloc(n)
    }

    fn enable_peer(&mut self, from: A::Ctx, to: A::Ctx) -> Result<(), String> {
        self.api.make_current(from)?;
        if self.api.enable_peer(to)? {
            self.enabled.push((from, to));
        }
        Ok(())
    }

    /// Brings the destination back into `check` for verification.
    fn download(&mut self, from: u64, size: usize) -> Result<(), String> {
        self.api.make_current(self.ctx_src()?)?;
        let s = self.stream()?;
        self.api.d2h(self.check.as_mut_ptr(), from, size, s)?;
        self.api.stream_sync(s)
    }
}

fn host_buffers(pinned: bool) -> Buffers {
    if pinned {
        Buffers::HostPinned
    } else {
        Buffers::HostPageable
    }
}

impl<A: GpuApi> Backend for GpuCopy<'_, A> {
    fn path(&self) -> Path {
        let (kind, buffers, p2p, description) = match self.kind {
            CopyKind::H2d { pinned } => (
                Kind::H2d,
                host_buffers(pinned),
                P2p::Unknown,
                format!(
                    "{} host-to-device copy from {} host memory to {}",
                    A::NAME,
                    if pinned {
                        "pinned (not write-combined)"
                    } else {
                        "pageable"
                    },
                    self.dst.1
                ),
            ),
            CopyKind::D2h { pinned } => (
                Kind::D2h,
                host_buffers(pinned),
                P2p::Unknown,
                format!(
                    "{} device-to-host copy from {} to {} host memory",
                    A::NAME,
                    self.src.1,
                    if pinned {
                        "pinned (not write-combined)"
                    } else {
                        "pageable"
                    }
                ),
            ),
            CopyKind::D2d => (
                Kind::D2d,
                Buffers::Device,
                P2p::Unknown,
                format!(
                    "{} device-to-device copy within {}'s memory",
                    A::NAME,
                    self.src.1
                ),
            ),
            CopyKind::Peer { peer_access } => (
                Kind::P2pCopy,
                Buffers::Device,
                if peer_access {
                    P2p::Enabled
                } else {
                    P2p::Disabled
                },
                format!(
                    "{} peer copy {} -> {} with peer access {} (can access peer: {})",
                    A::NAME,
                    self.src.1,
                    self.dst.1,
                    if peer_access {
                        "enabled"
                    } else {
                        "disabled: the runtime stages the copy through host memory"
                    },
                    match self.can_access {
                        Some(true) => "yes",
                        Some(false) => "no",
                        None => "not asked",
                    }
                ),
            ),
        };
        let label = match self.kind {
            CopyKind::H2d { pinned } => {
                format!("H2D {}", if pinned { "pinned" } else { "pageable" })
            }
            CopyKind::D2h { pinned } => {
                format!("D2H {}", if pinned { "pinned" } else { "pageable" })
            }
            CopyKind::D2d => "D2D".into(),
            CopyKind::Peer { peer_access } => format!(
                "peer copy, peer access {}",
                if peer_access { "enabled" } else { "disabled" }
            ),
        };
        Path {
            label,
            kind,
            src: if matches!(self.kind, CopyKind::H2d { .. }) {
                "host".into()
            } else {
                self.src.1.clone()
            },
            dst: if matches!(self.kind, CopyKind::D2h { .. }) {
                "host".into()
            } else {
                self.dst.1.clone()
            },
            buffers,
            copy_engine: CopyEngine::Ce,
            p2p,
            description,
            timer: A::TIMER,
        }
    }

    fn prepare(&mut self, max: usize) -> Result<(), String> {
        let cs = self.open(self.src.0)?;
        self.ctx_src = Some(cs);
        let cd = if self.dst.0 == self.src.0 {
            cs
        } else {
            self.open(self.dst.0)?
        };
        self.ctx_dst = Some(cd);
        self.api.make_current(cs)?;
        self.stream = Some(self.api.stream()?);
        self.ev[0] = Some(self.api.event()?);
        self.ev[1] = Some(self.api.event()?);
        self.check
            .try_reserve_exact(max)
            .map_err(|e| format!("host check buffer: {e}"))?;
        self.check.resize(max, 0);
        let host = |pinned: bool| -> Result<HostBuf, String> {
            if pinned {
                Ok(HostBuf::Pinned(self.api.host_alloc(max)?))
            } else {
                let mut v = Vec::new();
                v.try_reserve_exact(max)
                    .map_err(|e| format!("pageable host buffer: {e}"))?;
                v.resize(max, 0);
                Ok(HostBuf::Pageable(v))
            }
        };
        match self.kind {
            CopyKind::H2d { pinned } => {
                self.host = host(pinned)?;
                self.dev_dst = self.alloc_on(cs, max)?;
            }
            CopyKind::D2h { pinned } => {
                self.host = host(pinned)?;
                self.dev_src = self.alloc_on(cs, max)?;
            }
            CopyKind::D2d => {
                self.dev_src = self.alloc_on(cs, max)?;
                self.dev_dst = self.alloc_on(cs, max)?;
            }
            CopyKind::Peer { peer_access } => {
                self.dev_src = self.alloc_on(cs, max)?;
                self.dev_dst = self.alloc_on(cd, max)?;
                if peer_access {
                    self.enable_peer(cs, cd)?;
                    self.enable_peer(cd, cs)?;
                }
            }
        }
        self.api.make_current(cs)
    }

    fn fill(&mut self, size: usize, seed: u64) -> Result<(), String> {
        sweep::fill_pattern(&mut self.check[..size], seed);
        if let CopyKind::H2d { .. } = self.kind {
            let dst = self.host.ptr();
            // SAFETY: the host buffer holds `max >= size` bytes and does not overlap `check`.
            unsafe { ptr::copy_nonoverlapping(self.check.as_ptr(), dst, size) };
            return Ok(());
        }
        self.api.make_current(self.ctx_src()?)?;
        let s = self.stream()?;
        self.api.h2d(self.dev_src, self.check.as_ptr(), size, s)?;
        self.api.stream_sync(s)
    }

    fn copy_timed(&mut self, size: usize) -> Result<Duration, String> {
        let (cs, s) = (self.ctx_src()?, self.stream()?);
        let cd = self.ctx_dst.unwrap_or(cs);
        let (Some(e0), Some(e1)) = (self.ev[0], self.ev[1]) else {
            return Err("no events: prepare did not run".into());
        };
        self.api.make_current(cs)?;
        let host = self.host.ptr();
        self.api.record(e0, s)?;
        match self.kind {
            CopyKind::H2d { .. } => self.api.h2d(self.dev_dst, host, size, s)?,
            CopyKind::D2h { .. } => self.api.d2h(host, self.dev_src, size, s)?,
            CopyKind::D2d => self.api.d2d(self.dev_dst, self.dev_src, size, s)?,
            CopyKind::Peer { .. } => self.api.peer(self.dev_dst, cd, self.dev_src, cs, size, s)?,
        }
        self.api.record(e1, s)?;
        self.api.elapsed(e0, e1)
    }

    fn verify(&mut self, size: usize, seed: u64) -> Result<u64, String> {
        if let CopyKind::D2h { .. } = self.kind {
            let p = self.host.ptr();
            // SAFETY: the host buffer holds `size` bytes written by the copy.
            let got = unsafe { std::slice::from_raw_parts(p, size) };
            return Ok(sweep::count_mismatches(got, seed));
        }
        self.download(self.dev_dst, size)?;
        Ok(sweep::count_mismatches(&self.check[..size], seed))
    }

    fn release(&mut self) {
        // Best effort, in reverse order; every resource is released once.
        if let Some(c) = self.ctx_src {
            let _ = self.api.make_current(c);
        }
        for (from, to) in std::mem::take(&mut self.enabled) {
            let _ = self.api.make_current(from);
            self.api.disable_peer(to);
        }
        if let Some(c) = self.ctx_src {
            let _ = self.api.make_current(c);
        }
        if self.dev_src != 0 {
            self.api.free(self.dev_src);
            self.dev_src = 0;
        }
        if self.dev_dst != 0 {
            self.api.free(self.dev_dst);
            self.dev_dst = 0;
        }
        if let HostBuf::Pinned(p) = std::mem::replace(&mut self.host, HostBuf::None) {
            self.api.host_free(p);
        }
        for e in &mut self.ev {
            if let Some(x) = e.take() {
                self.api.event_destroy(x);
            }
        }
        if let Some(s) = self.stream.take() {
            self.api.stream_destroy(s);
        }
        for d in std::mem::take(&mut self.opened) {
            self.api.close(d);
        }
        self.ctx_src = None;
        self.ctx_dst = None;
        self.check = Vec::new();
    }
}

/// Every sweep of one runtime, built before any runs, so that one plan
/// covers them all.
pub(crate) struct Jobs<'a, A: GpuApi> {
    pub copies: Vec<GpuCopy<'a, A>>,
    /// Pairs whose peer access is not possible (only their staged copy is measured).
    pub log: Vec<String>,
    /// `can access peer` questions that failed.
    pub errors: Vec<String>,
    /// The runtime's answer to `can access peer` per ordered pair of
    /// topology ids.
    pub peers: Vec<(String, String, bool)>,
}

/// The sweeps of every device and ordered pair: per device H2D and D2H
/// from pinned and from pageable memory and D2D; per ordered pair, the
/// peer copy with peer access enabled (when possible) and disabled. `id_of`
/// gives the topology's id of a device. Nothing is opened or allocated yet.
pub(crate) fn jobs<'a, A: GpuApi>(
    api: &'a A,
    gpus: &[Gpu],
    id_of: &dyn Fn(&Gpu) -> String,
) -> Jobs<'a, A> {
    let mut jobs = Jobs {
        copies: Vec::new(),
        log: Vec::new(),
        errors: Vec::new(),
        peers: Vec::new(),
    };
    for g in gpus {
        let me = (g.ordinal, id_of(g));
        for kind in [
            CopyKind::H2d { pinned: true },
            CopyKind::D2h { pinned: true },
            CopyKind::H2d { pinned: false },
            CopyKind::D2h { pinned: false },
            CopyKind::D2d,
        ] {
            let copy = GpuCopy::new(api, kind, me.clone(), me.clone(), None);
            jobs.copies.push(copy);
        }
    }
    for a in gpus {
        for b in gpus.iter().filter(|b| b.ordinal != a.ordinal) {
            let (sa, sb) = ((a.ordinal, id_of(a)), (b.ordinal, id_of(b)));
            let can = match api.can_access_peer(a.ordinal, b.ordinal) {
                Ok(c) => {
                    jobs.peers.push((sa.1.clone(), sb.1.clone(), c));
                    Some(c)
                }
                Err(e) => {
                    jobs.errors.push(format!("{} -> {}: {e}", sa.1, sb.1));
                    None
                }
            };
            if can == Some(true) {
                let on = CopyKind::Peer { peer_access: true };
                let copy = GpuCopy::new(api, on, sa.clone(), sb.clone(), can);
                jobs.copies.push(copy);
            } else {
                jobs.log.push(format!(
                    "{} -> {}: peer access not possible; only the staged copy is measured",
                    sa.1, sb.1
                ));
            }
            let off = CopyKind::Peer { peer_access: false };
            jobs.copies.push(GpuCopy::new(api, off, sa, sb, can));
        }
    }
    jobs
}

/// Everything one runtime's sweeps produced.
pub(crate) struct GpuResult {
    pub cells: Vec<Measurement>,
    /// `ran 27 of 27 paths as planned`.
    pub ran: String,
    /// The jobs' log, then one line per sweep that did not run as planned
    /// or copied wrong bytes.
    pub log: Vec<String>,
    pub errors: Vec<String>,
    /// The runtime's `can access peer` answer per ordered pair.
    pub peers: Vec<(String, String, bool)>,
}

/// Runs `plan` on every job, one after the other. An error stops only the
/// sweep it happened in; it is recorded, and the next sweep runs.
pub(crate) fn run_jobs<A: GpuApi>(jobs: Jobs<'_, A>, plan: &Plan, context: &str) -> GpuResult {
    let Jobs {
        copies,
        mut log,
        mut errors,
        peers,
    } = jobs;
    let paths = copies.len();
    let mut complete = 0;
    let mut cells = Vec::new();
    for mut job in copies {
        let r = sweep::run(&mut job, plan);
        let label = format!(
            "{} {} {}->{}",
            A::NAME,
            r.path.label,
            r.path.src,
            r.path.dst
        );
        if let Some(e) = &r.error {
            errors.push(format!("{label}: {e}"));
        }
        let bad: u64 = r.points.iter().map(|p| p.mismatched_bytes).sum();
        if r.as_planned() {
            complete += 1;
        }
        if !r.as_planned() || bad > 0 {
            let wrong = if bad > 0 {
                format!(", {bad} bytes wrong")
            } else {
                String::new()
            };
            log.push(format!("{label}: {}{wrong}", r.ran()));
        }
        cells.extend(sweep::cells(&r, A::NAME, context));
    }
    GpuResult {
        cells,
        ran: format!("ran {complete} of {paths} paths as planned"),
        log,
        errors,
        peers,
    }
}

#[cfg(test)]
mod tests {
    use super::Gpu;

    #[test]
    fn c_buffers_stop_at_nul_and_bus_ids_are_lowercase() {
        let buf = |t: &str, n: usize| {
            let mut v = vec![0 as std::ffi::c_char; n];
            for (d, b) in v.iter_mut().zip(t.bytes()) {
                *d = b as std::ffi::c_char;
            }
            v
        };
        let g = Gpu::from_c(
            3,
            &buf("NVIDIA H200", 256),
            &buf("00000000:1A:00.0", 64),
            1 << 30,
        );
        assert_eq!(
            (
                g.ordinal,
                g.name.as_str(),
                g.pci_bus_id.as_str(),
                g.memory_bytes
            ),
            (3, "NVIDIA H200", "00000000:1a:00.0", 1 << 30)
        );
    }
}
