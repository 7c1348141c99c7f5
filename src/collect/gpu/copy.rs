//! One GPU copy sweep's resources and its timed window (see the parent
//! module for the method). The window: hold the stream on a host flag,
//! queue [`WINDOW_WARMUP`] untimed copies, the start event, the copies,
//! the end event, then write the flag; the copies run back to back and the
//! events time only them. A pageable host buffer or a peer copy staged
//! through the host needs the host during the copy, so holding its stream
//! would deadlock: those windows are queued unheld, and say so.

use std::ptr;
use std::sync::atomic::{Ordering, fence};
use std::time::Duration;

use super::{CopyKind, GpuApi};
use crate::collect::sweep::{self, Backend, Path, Patterns};
use crate::evidence::measurement::{Buffers, Kind, P2p};

/// Untimed copies queued in each held window before its start event:
/// nvbandwidth v0.8's `WARMUP_COUNT` (`memcpy.cpp`), queued as it queues
/// them, behind the hold and ahead of the start event, so the timed copies
/// start on an engine already busy with the same copy.
pub const WINDOW_WARMUP: u32 = 4;

/// How long a held window may take to finish once its flag is written
/// before it is reported as stuck: nvbandwidth's spin kernel gives up
/// after the same 10 s (`DEFAULT_SPIN_KERNEL_TIMEOUT_MS`, `kernels.cuh`).
/// `WIRE_REPORT_HOLD_TIMEOUT_MS` lowers it (the tests of a stuck hold).
pub const HOLD_TIMEOUT: Duration = Duration::from_secs(10);

/// [`HOLD_TIMEOUT`], or the environment's override in milliseconds.
fn hold_timeout() -> Duration {
    std::env::var("WIRE_REPORT_HOLD_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(HOLD_TIMEOUT, Duration::from_millis)
}

/// What the check buffer holds before a download: a download that wrote
/// nothing leaves it, and it differs from the pattern almost everywhere.
const POISON: u8 = 0xA5;

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

/// The source's and the destination's contexts, or why there are none.
type Contexts<A> = Result<(<A as GpuApi>::Ctx, <A as GpuApi>::Ctx), String>;

/// One copy sweep's resources on one runtime.
pub(crate) struct GpuCopy<'a, A: GpuApi> {
    api: &'a A,
    kind: CopyKind,
    src: (i32, String),
    dst: (i32, String),
    can_access: Option<bool>,
    /// The run's contexts of the source and destination devices.
    ctx: Option<Contexts<A>>,
    stream: Option<A::Stream>,
    /// A stream of the destination's context, for a peer's buffer.
    stream_dst: Option<A::Stream>,
    ev: [Option<A::Event>; 2],
    host: HostBuf,
    dev_src: u64,
    /// In the destination's context.
    dev_dst: u64,
    /// The host flag that holds the stream, when windows are held.
    flag: Option<(*mut u32, u64)>,
    held: bool,
    window: String,
    binding: String,
    /// Peer accesses this sweep enabled (from, to): disabled again after.
    enabled: Vec<(A::Ctx, A::Ctx)>,
    /// Peer accesses it found enabled and disabled: enabled again after.
    disabled: Vec<(A::Ctx, A::Ctx)>,
    check: Vec<u8>,
    patterns: Patterns,
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
            ctx: None,
            stream: None,
            stream_dst: None,
            ev: [None, None],
            host: HostBuf::None,
            dev_src: 0,
            dev_dst: 0,
            flag: None,
            held: false,
            window: "not prepared".into(),
            binding: "host buffers not bound near the GPU".into(),
            enabled: Vec::new(),
            disabled: Vec::new(),
            check: Vec::new(),
            patterns: Patterns::default(),
        }
    }

    /// The ordinals of the source and destination devices.
    pub fn devices(&self) -> (i32, i32) {
        (self.src.0, self.dst.0)
    }

    /// The run's contexts of the source and destination devices.
    pub fn set_contexts(&mut self, src: Result<A::Ctx, String>, dst: Result<A::Ctx, String>) {
        self.ctx = Some(src.and_then(|s| dst.map(|d| (s, d))));
    }

    /// Where the host buffers are, for the path's description.
    pub fn set_binding(&mut self, note: String) {
        self.binding = note;
    }

    fn ctxs(&self) -> Result<(A::Ctx, A::Ctx), String> {
        match &self.ctx {
            Some(c) => c.clone(),
            None => Err("no context: the run did not open one".into()),
        }
    }

    fn stream(&self) -> Result<A::Stream, String> {
        self.stream
            .ok_or_else(|| "no stream: prepare did not run".to_string())
    }

    /// The destination buffer is in another context than the source's.
    fn two_contexts(&self) -> bool {
        matches!(self.kind, CopyKind::Peer { .. }) && self.src.0 != self.dst.0
    }

    /// Whether a held window is safe: pinned host memory or device memory
    /// with the copy done by the copy engines, not staged by the host.
    fn may_hold(&self) -> bool {
        match self.kind {
            CopyKind::H2d { pinned } | CopyKind::D2h { pinned } => pinned,
            CopyKind::D2d | CopyKind::Peer { peer_access: true } => true,
            CopyKind::Peer { peer_access: false } => false,
        }
    }

    fn alloc_on(&self, ctx: A::Ctx, n: usize) -> Result<u64, String> {
        self.api.make_current(ctx)?;
        self.api.alloc(n)
    }

    /// Peer access as a fact: enabled (or disabled) from each side, and
    /// what was changed is remembered to be restored.
    fn set_peer(&mut self, on: bool) -> Result<(), String> {
        let (cs, cd) = self.ctxs()?;
        for (from, to) in [(cs, cd), (cd, cs)] {
            self.api.make_current(from)?;
            if on {
                if self.api.enable_peer(to)? {
                    self.enabled.push((from, to));
                }
            } else if self.api.disable_peer(to)? {
                self.disabled.push((from, to));
            }
        }
        Ok(())
    }

    /// Makes the windows held when the runtime and the copy allow it.
    fn prepare_hold(&mut self) -> Result<(), String> {
        if !self.may_hold() {
            self.window = "the stream not held: the host takes part in this copy (pageable memory or staging), so a held stream would deadlock; the events time the copies as queued".into();
            return Ok(());
        }
        match self.api.flag_alloc() {
            Ok(f) => self.flag = Some(f),
            Err(e) => {
                self.window =
                    format!("the stream not held ({e}); the events time the copies as queued");
                return Ok(());
            }
        }
        // One held and released stream, its event seen within the
        // timeout, proves the wait works before any copy is queued.
        let s = self.stream()?;
        let e = self.ev[1].ok_or("no events: prepare did not run")?;
        let tried = self.hold(s).and_then(|_| self.api.record(e, s));
        self.release_flag();
        tried
            .and_then(|_| self.finished(e))
            .map_err(|e| format!("holding the stream on a host flag: {e}"))?;
        self.held = true;
        self.window = format!(
            "the stream held by a wait on a host flag while {WINDOW_WARMUP} warm-up copies, the start event, the copies and the end event were queued, then released"
        );
        Ok(())
    }

    /// Waits for `e` of a released window, at most [`HOLD_TIMEOUT`]: a
    /// stream whose wait never sees the flag would otherwise block the
    /// whole run. Windows that were not held are synchronised as usual.
    fn finished(&self, e: A::Event) -> Result<(), String> {
        if !self.held && self.flag.is_none() {
            return self.api.event_sync(e);
        }
        let limit = hold_timeout();
        let start = std::time::Instant::now();
        let mut pause = Duration::from_micros(50);
        loop {
            if self.api.event_done(e)? {
                return Ok(());
            }
            if start.elapsed() >= limit {
                return Err(format!(
                    "the held stream did not finish within {:.1} s after its host flag was released: the wait on the flag never saw the write (or the copies hang); the window is not timed and this path stops",
                    limit.as_secs_f64()
                ));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(5));
        }
    }

    fn hold(&self, s: A::Stream) -> Result<(), String> {
        let Some((host, dev)) = self.flag else {
            return Err("no host flag".into());
        };
        // SAFETY: the flag is a live 4-byte pinned allocation.
        unsafe { ptr::write_volatile(host, 0) };
        fence(Ordering::SeqCst);
        self.api.wait_flag(s, dev)
    }

    fn release_flag(&self) {
        if let Some((host, _)) = self.flag {
            fence(Ordering::SeqCst);
            // SAFETY: as in `hold`.
            unsafe { ptr::write_volatile(host, 1) };
        }
    }

    fn copy_once(&mut self, size: usize, s: A::Stream) -> Result<(), String> {
        let (cs, cd) = self.ctxs()?;
        let host = self.host.ptr();
        match self.kind {
            CopyKind::H2d { .. } => self.api.h2d(self.dev_dst, host, size, s),
            CopyKind::D2h { .. } => self.api.d2h(host, self.dev_src, size, s),
            CopyKind::D2d => self.api.d2d(self.dev_dst, self.dev_src, size, s),
            CopyKind::Peer { .. } => self.api.peer(self.dev_dst, cd, self.dev_src, cs, size, s),
        }
    }

    /// Queues the window: warm-up, start event, `copies`, end event.
    fn queue(&mut self, size: usize, copies: u32, s: A::Stream) -> Result<(), String> {
        let (Some(e0), Some(e1)) = (self.ev[0], self.ev[1]) else {
            return Err("no events: prepare did not run".into());
        };
        if self.held {
            for _ in 0..WINDOW_WARMUP {
                self.copy_once(size, s)?;
            }
        }
        self.api.record(e0, s)?;
        for _ in 0..copies {
            self.copy_once(size, s)?;
        }
        self.api.record(e1, s)
    }

    /// Brings the destination back into `check`, poisoned first, in the
    /// destination's context and on its stream.
    fn download(&mut self, size: usize) -> Result<(), String> {
        let (cs, cd) = self.ctxs()?;
        let (ctx, s) = if self.two_contexts() {
            let s = self.stream_dst.ok_or("no destination stream")?;
            (cd, s)
        } else {
            (cs, self.stream()?)
        };
        self.check[..size].fill(POISON);
        self.api.make_current(ctx)?;
        self.api
            .d2h(self.check.as_mut_ptr(), self.dev_dst, size, s)?;
        let synced = self.api.stream_sync(s);
        self.api.make_current(cs)?;
        synced
    }

    /// Everything released, in reverse order; every error is said.
    fn free_all(&mut self) -> Vec<String> {
        let mut errs = Vec::new();
        let mut note = |r: Result<(), String>| {
            if let Err(e) = r {
                errs.push(e);
            }
        };
        let Ok((cs, cd)) = self.ctxs() else {
            return errs;
        };
        for (from, to) in std::mem::take(&mut self.enabled) {
            note(self.api.make_current(from));
            note(self.api.disable_peer(to).and_then(|was| {
                was.then_some(()).ok_or_else(|| {
                    "peer access enabled by this sweep was gone at release".to_string()
                })
            }));
        }
        for (from, to) in std::mem::take(&mut self.disabled) {
            note(self.api.make_current(from));
            note(self.api.enable_peer(to).and_then(|now| {
                now.then_some(()).ok_or_else(|| {
                    "peer access disabled by this sweep was back at release".to_string()
                })
            }));
        }
        if self.two_contexts() {
            note(self.api.make_current(cd));
            if self.dev_dst != 0 {
                note(self.api.free(std::mem::take(&mut self.dev_dst)));
            }
            if let Some(s) = self.stream_dst.take() {
                note(self.api.stream_destroy(s));
            }
        }
        note(self.api.make_current(cs));
        for p in [
            std::mem::take(&mut self.dev_src),
            std::mem::take(&mut self.dev_dst),
        ] {
            if p != 0 {
                note(self.api.free(p));
            }
        }
        if let HostBuf::Pinned(p) = std::mem::replace(&mut self.host, HostBuf::None) {
            note(self.api.host_free(p));
        }
        if let Some((host, _)) = self.flag.take() {
            note(self.api.flag_free(host));
        }
        for e in &mut self.ev {
            if let Some(x) = e.take() {
                note(self.api.event_destroy(x));
            }
        }
        if let Some(s) = self.stream.take() {
            note(self.api.stream_destroy(s));
        }
        errs
    }

    fn describe(&self) -> Path {
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
        let (engine, engine_note) = self.api.engine(self.kind);
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
            copy_engine: engine,
            p2p,
            description: format!("{description}, {engine_note}; {}", self.binding),
            timer: A::TIMER,
            window: self.window.clone(),
        }
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
        self.describe()
    }

    fn prepare(&mut self, max: usize) -> Result<(), String> {
        let (cs, cd) = self.ctxs()?;
        self.api.make_current(cs)?;
        self.stream = Some(self.api.stream()?);
        self.ev[0] = Some(self.api.event()?);
        self.ev[1] = Some(self.api.event()?);
        if self.two_contexts() {
            self.api.make_current(cd)?;
            self.stream_dst = Some(self.api.stream()?);
            self.api.make_current(cs)?;
        }
        self.check
            .try_reserve_exact(max)
            .map_err(|e| format!("host check buffer: {e}"))?;
        self.check.resize(max, 0);
        let host = |pinned: bool| -> Result<HostBuf, String> {
            if pinned {
                let p = self.api.host_alloc(max)?;
                // SAFETY: `max` bytes just allocated: touched here, not in a window.
                unsafe { ptr::write_bytes(p, 0, max) };
                Ok(HostBuf::Pinned(p))
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
                self.set_peer(peer_access)?;
            }
        }
        self.api.make_current(cs)?;
        self.prepare_hold()
    }

    fn fill(&mut self, size: usize, seed: u64) -> Result<(), String> {
        let (cs, _) = self.ctxs()?;
        let s = self.stream;
        let pattern = self.patterns.get(size, seed)?;
        match self.kind {
            CopyKind::H2d { .. } => {
                let dst = self.host.ptr();
                // SAFETY: the host buffer holds `max >= size` bytes and does not overlap the pattern.
                unsafe { ptr::copy_nonoverlapping(pattern.as_ptr(), dst, size) };
                return Ok(());
            }
            CopyKind::D2h { .. } => {
                // The destination poisoned: a copy that writes nothing fails.
                // SAFETY: the host buffer holds `max >= size` bytes.
                unsafe { ptr::write_bytes(self.host.ptr(), POISON, size) };
            }
            _ => {}
        }
        let s = s.ok_or("no stream: prepare did not run")?;
        self.api.make_current(cs)?;
        self.api.h2d(self.dev_src, pattern.as_ptr(), size, s)?;
        self.api.stream_sync(s)
    }

    fn copy_timed(&mut self, size: usize, copies: u32) -> Result<Duration, String> {
        let (cs, _) = self.ctxs()?;
        let s = self.stream()?;
        self.api.make_current(cs)?;
        if self.held {
            self.hold(s)?;
        }
        let queued = self.queue(size, copies, s);
        // Always released, errors included: a held stream never stays held.
        self.release_flag();
        queued?;
        let (Some(e0), Some(e1)) = (self.ev[0], self.ev[1]) else {
            return Err("no events: prepare did not run".into());
        };
        self.finished(e1)?;
        self.api.elapsed(e0, e1)
    }

    fn verify(&mut self, size: usize, seed: u64) -> Result<u64, String> {
        if let CopyKind::D2h { .. } = self.kind {
            let p = self.host.ptr();
            // SAFETY: the host buffer holds `size` bytes written by the copy.
            let got = unsafe { std::slice::from_raw_parts(p, size) };
            let want = self.patterns.get(size, seed)?;
            return Ok(sweep::count_differences(got, want));
        }
        self.download(size)?;
        let want = self.patterns.get(size, seed)?;
        Ok(sweep::count_differences(&self.check[..size], want))
    }

    fn release(&mut self) -> Result<(), String> {
        let errs = self.free_all();
        self.check = Vec::new();
        self.patterns = Patterns::default();
        self.held = false;
        if errs.is_empty() {
            Ok(())
        } else {
            Err(errs.join("; "))
        }
    }
}
