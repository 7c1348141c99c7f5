//! CUDA copies through cudarc's driver API, loaded at run time (the
//! default build needs no CUDA toolkit). Per device: host-to-device and
//! device-to-host from pinned (`cuMemHostAlloc` flags 0, not
//! write-combined) and from pageable memory, and device-to-device. Per
//! ordered pair: `cuDeviceCanAccessPeer`, and copies with peer access
//! enabled and with it disabled (the host-staged fingerprint). Every call
//! is checked; timing is by CUDA events on the copy's stream; every byte is
//! verified; buffers, streams, events, peer access and contexts are
//! released on every path, errors included.
//!
//! cudarc panics when libcuda is missing, so [`inventory`] asks
//! `is_culib_present()` before any other call.

use std::ffi::{CStr, c_char, c_void};
use std::ptr;
use std::time::Duration;

use cudarc::driver::sys;

use super::sweep::{self, Backend, Path, Plan};
use crate::evidence::measurement::{Buffers, CopyEngine, Kind, Measurement, P2p};

/// One CUDA device.
#[derive(Debug, Clone)]
pub struct Gpu {
    pub ordinal: i32,
    pub name: String,
    pub pci_bus_id: String,
    pub memory_bytes: u64,
}

fn err_text(r: sys::CUresult) -> String {
    let mut s: *const c_char = ptr::null();
    // SAFETY: cuGetErrorString writes a pointer to a static string or leaves it null.
    let ok = unsafe { sys::cuGetErrorString(r, &mut s) } == sys::CUresult::CUDA_SUCCESS;
    if ok && !s.is_null() {
        // SAFETY: non-null pointers from cuGetErrorString are NUL-terminated static strings.
        unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
    } else {
        format!("{r:?}")
    }
}

/// Turns a driver result into `Err("<call>: <error text>")`.
fn check(r: sys::CUresult, call: &str) -> Result<(), String> {
    if r == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(format!("{call}: {}", err_text(r)))
    }
}

/// Why there is nothing to measure, when there is not.
#[derive(Debug, Clone, PartialEq)]
pub enum Unavailable {
    /// No libcuda on this machine.
    NoLibrary,
    /// libcuda is there but reports no device (or fails to initialise).
    NoDevice(String),
}

/// The devices, numbered as nvidia-smi numbers them (PCI bus order).
pub fn inventory() -> Result<Vec<Gpu>, Unavailable> {
    // SAFETY: only tries to open the library; no CUDA call is made.
    if !unsafe { sys::is_culib_present() } {
        return Err(Unavailable::NoLibrary);
    }
    // Ordinals in PCI bus order, as nvidia-smi and the topology number them.
    // SAFETY: set before the driver is initialised, while collection runs no
    // other thread that reads the environment.
    unsafe { std::env::set_var("CUDA_DEVICE_ORDER", "PCI_BUS_ID") };
    // SAFETY: plain driver calls with valid out-pointers.
    unsafe {
        check(sys::cuInit(0), "cuInit").map_err(Unavailable::NoDevice)?;
        let mut n = 0;
        check(sys::cuDeviceGetCount(&mut n), "cuDeviceGetCount").map_err(Unavailable::NoDevice)?;
        if n == 0 {
            return Err(Unavailable::NoDevice("cuDeviceGetCount: 0 devices".into()));
        }
        let mut out = Vec::new();
        for i in 0..n {
            let mut dev: sys::CUdevice = 0;
            check(sys::cuDeviceGet(&mut dev, i), "cuDeviceGet").map_err(Unavailable::NoDevice)?;
            let mut name = [0 as c_char; 256];
            check(
                sys::cuDeviceGetName(name.as_mut_ptr(), 256, dev),
                "cuDeviceGetName",
            )
            .map_err(Unavailable::NoDevice)?;
            let mut bus = [0 as c_char; 64];
            check(
                sys::cuDeviceGetPCIBusId(bus.as_mut_ptr(), 64, dev),
                "cuDeviceGetPCIBusId",
            )
            .map_err(Unavailable::NoDevice)?;
            let mut mem: usize = 0;
            check(sys::cuDeviceTotalMem_v2(&mut mem, dev), "cuDeviceTotalMem")
                .map_err(Unavailable::NoDevice)?;
            out.push(Gpu {
                ordinal: dev,
                name: CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned(),
                pci_bus_id: CStr::from_ptr(bus.as_ptr())
                    .to_string_lossy()
                    .to_ascii_lowercase(),
                memory_bytes: mem as u64,
            });
        }
        Ok(out)
    }
}

/// Whether `dev` can access `peer`'s memory directly.
pub fn can_access_peer(dev: i32, peer: i32) -> Result<bool, String> {
    let mut can = 0;
    // SAFETY: valid out-pointer; ordinals come from `inventory`.
    check(
        unsafe { sys::cuDeviceCanAccessPeer(&mut can, dev, peer) },
        "cuDeviceCanAccessPeer",
    )?;
    Ok(can != 0)
}

/// What one sweep copies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CopyKind {
    H2d { pinned: bool },
    D2h { pinned: bool },
    D2d,
    Peer { peer_access: bool },
}

/// Host memory of a sweep: pinned by the driver, or ordinary pageable.
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

/// One CUDA copy sweep's resources.
pub struct CudaCopy {
    kind: CopyKind,
    src: (i32, String),
    dst: (i32, String),
    can_access: Option<bool>,
    ctx_src: sys::CUcontext,
    ctx_dst: sys::CUcontext,
    retained: Vec<i32>,
    stream: sys::CUstream,
    ev: [sys::CUevent; 2],
    host: HostBuf,
    dev_src: sys::CUdeviceptr,
    dev_dst: sys::CUdeviceptr,
    /// Which (current context, peer context) accesses this sweep enabled,
    /// to disable them again.
    enabled: Vec<(sys::CUcontext, sys::CUcontext)>,
    check: Vec<u8>,
}

impl CudaCopy {
    /// `src` and `dst` are (ordinal, id as in the topology).
    pub fn new(
        kind: CopyKind,
        src: (i32, String),
        dst: (i32, String),
        can_access: Option<bool>,
    ) -> CudaCopy {
        CudaCopy {
            kind,
            src,
            dst,
            can_access,
            ctx_src: ptr::null_mut(),
            ctx_dst: ptr::null_mut(),
            retained: Vec::new(),
            stream: ptr::null_mut(),
            ev: [ptr::null_mut(); 2],
            host: HostBuf::None,
            dev_src: 0,
            dev_dst: 0,
            enabled: Vec::new(),
            check: Vec::new(),
        }
    }

    fn retain(&mut self, dev: i32) -> Result<sys::CUcontext, String> {
        let mut c: sys::CUcontext = ptr::null_mut();
        // SAFETY: valid out-pointer and ordinal.
        check(
            unsafe { sys::cuDevicePrimaryCtxRetain(&mut c, dev) },
            "cuDevicePrimaryCtxRetain",
        )?;
        self.retained.push(dev);
        Ok(c)
    }

    fn set(&self, c: sys::CUcontext) -> Result<(), String> {
        // SAFETY: `c` is a retained primary context.
        check(unsafe { sys::cuCtxSetCurrent(c) }, "cuCtxSetCurrent")
    }

    fn alloc(&self, ctx: sys::CUcontext, n: usize) -> Result<sys::CUdeviceptr, String> {
        self.set(ctx)?;
        let mut p: sys::CUdeviceptr = 0;
        // SAFETY: valid out-pointer.
        check(unsafe { sys::cuMemAlloc_v2(&mut p, n) }, "cuMemAlloc")?;
        Ok(p)
    }

    fn enable_peer(&mut self, from: sys::CUcontext, to: sys::CUcontext) -> Result<(), String> {
        self.set(from)?;
        // SAFETY: both are retained primary contexts.
        let r = unsafe { sys::cuCtxEnablePeerAccess(to, 0) };
        if r == sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED {
            // Enabled before us: leave it as we found it.
            return Ok(());
        }
        check(r, "cuCtxEnablePeerAccess")?;
        self.enabled.push((from, to));
        Ok(())
    }

    fn sync(&self) -> Result<(), String> {
        // SAFETY: the stream belongs to the current context.
        check(
            unsafe { sys::cuStreamSynchronize(self.stream) },
            "cuStreamSynchronize",
        )
    }

    fn upload(&mut self, size: usize) -> Result<(), String> {
        self.set(self.ctx_src)?;
        // SAFETY: dev_src holds at least `size` bytes; check holds `size` bytes.
        check(
            unsafe {
                sys::cuMemcpyHtoDAsync_v2(
                    self.dev_src,
                    self.check.as_ptr() as *const c_void,
                    size,
                    self.stream,
                )
            },
            "cuMemcpyHtoDAsync",
        )?;
        self.sync()
    }

    fn download(&mut self, from: sys::CUdeviceptr, size: usize) -> Result<(), String> {
        self.set(self.ctx_src)?;
        // SAFETY: `from` holds at least `size` bytes, as does `check`.
        check(
            unsafe {
                sys::cuMemcpyDtoHAsync_v2(
                    self.check.as_mut_ptr() as *mut c_void,
                    from,
                    size,
                    self.stream,
                )
            },
            "cuMemcpyDtoHAsync",
        )?;
        self.sync()
    }
}

impl Backend for CudaCopy {
    fn path(&self) -> Path {
        let (kind, buffers, p2p, description) = match self.kind {
            CopyKind::H2d { pinned } => (
                Kind::H2d,
                if pinned {
                    Buffers::HostPinned
                } else {
                    Buffers::HostPageable
                },
                P2p::Unknown,
                format!(
                    "cuMemcpyHtoDAsync from {} host memory to {} ({})",
                    if pinned {
                        "pinned (cuMemHostAlloc, flags 0)"
                    } else {
                        "pageable"
                    },
                    self.dst.1,
                    "PCIe or C2C"
                ),
            ),
            CopyKind::D2h { pinned } => (
                Kind::D2h,
                if pinned {
                    Buffers::HostPinned
                } else {
                    Buffers::HostPageable
                },
                P2p::Unknown,
                format!(
                    "cuMemcpyDtoHAsync from {} to {} host memory",
                    self.src.1,
                    if pinned {
                        "pinned (cuMemHostAlloc, flags 0)"
                    } else {
                        "pageable"
                    }
                ),
            ),
            CopyKind::D2d => (
                Kind::D2d,
                Buffers::Device,
                P2p::Unknown,
                format!("cuMemcpyDtoDAsync within {}'s memory", self.src.1),
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
                    "cuMemcpyPeerAsync {} -> {} with peer access {} (cuDeviceCanAccessPeer: {})",
                    self.src.1,
                    self.dst.1,
                    if peer_access {
                        "enabled"
                    } else {
                        "disabled: the driver stages the copy through host memory"
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
            timer: "CUDA events recorded on the copy's stream",
        }
    }

    fn prepare(&mut self, max: usize) -> Result<(), String> {
        self.ctx_src = self.retain(self.src.0)?;
        self.ctx_dst = if self.dst.0 == self.src.0 {
            self.ctx_src
        } else {
            self.retain(self.dst.0)?
        };
        self.set(self.ctx_src)?;
        // SAFETY: valid out-pointers; flags 0 (default stream, default events, which can be timed).
        unsafe {
            check(sys::cuStreamCreate(&mut self.stream, 0), "cuStreamCreate")?;
            check(sys::cuEventCreate(&mut self.ev[0], 0), "cuEventCreate")?;
            check(sys::cuEventCreate(&mut self.ev[1], 0), "cuEventCreate")?;
        }
        self.check
            .try_reserve_exact(max)
            .map_err(|e| format!("host check buffer: {e}"))?;
        self.check.resize(max, 0);
        let host = |pinned: bool| -> Result<HostBuf, String> {
            if pinned {
                let mut p: *mut c_void = ptr::null_mut();
                // SAFETY: valid out-pointer; flags 0 = ordinary pinned memory.
                check(
                    unsafe { sys::cuMemHostAlloc(&mut p, max, 0) },
                    "cuMemHostAlloc",
                )?;
                Ok(HostBuf::Pinned(p as *mut u8))
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
                self.dev_dst = self.alloc(self.ctx_src, max)?;
            }
            CopyKind::D2h { pinned } => {
                self.host = host(pinned)?;
                self.dev_src = self.alloc(self.ctx_src, max)?;
            }
            CopyKind::D2d => {
                self.dev_src = self.alloc(self.ctx_src, max)?;
                self.dev_dst = self.alloc(self.ctx_src, max)?;
            }
            CopyKind::Peer { peer_access } => {
                self.dev_src = self.alloc(self.ctx_src, max)?;
                self.dev_dst = self.alloc(self.ctx_dst, max)?;
                if peer_access {
                    self.enable_peer(self.ctx_src, self.ctx_dst)?;
                    self.enable_peer(self.ctx_dst, self.ctx_src)?;
                }
            }
        }
        self.set(self.ctx_src)
    }

    fn fill(&mut self, size: usize, seed: u64) -> Result<(), String> {
        sweep::fill_pattern(&mut self.check[..size], seed);
        match self.kind {
            CopyKind::H2d { .. } => {
                let dst = self.host.ptr();
                // SAFETY: the host buffer holds `max >= size` bytes and does not overlap `check`.
                unsafe { ptr::copy_nonoverlapping(self.check.as_ptr(), dst, size) };
                Ok(())
            }
            _ => self.upload(size),
        }
    }

    fn copy_timed(&mut self, size: usize) -> Result<Duration, String> {
        self.set(self.ctx_src)?;
        let host = self.host.ptr();
        // SAFETY: every pointer holds at least `size` bytes (allocated for `max`).
        unsafe {
            check(sys::cuEventRecord(self.ev[0], self.stream), "cuEventRecord")?;
            let r = match self.kind {
                CopyKind::H2d { .. } => sys::cuMemcpyHtoDAsync_v2(
                    self.dev_dst,
                    host as *const c_void,
                    size,
                    self.stream,
                ),
                CopyKind::D2h { .. } => {
                    sys::cuMemcpyDtoHAsync_v2(host as *mut c_void, self.dev_src, size, self.stream)
                }
                CopyKind::D2d => {
                    sys::cuMemcpyDtoDAsync_v2(self.dev_dst, self.dev_src, size, self.stream)
                }
                CopyKind::Peer { .. } => sys::cuMemcpyPeerAsync(
                    self.dev_dst,
                    self.ctx_dst,
                    self.dev_src,
                    self.ctx_src,
                    size,
                    self.stream,
                ),
            };
            check(r, "the timed copy")?;
            check(sys::cuEventRecord(self.ev[1], self.stream), "cuEventRecord")?;
            check(sys::cuEventSynchronize(self.ev[1]), "cuEventSynchronize")?;
            let mut ms: f32 = 0.0;
            check(
                sys::cuEventElapsedTime(&mut ms, self.ev[0], self.ev[1]),
                "cuEventElapsedTime",
            )?;
            Ok(Duration::from_secs_f64(f64::from(ms.max(0.0)) / 1e3))
        }
    }

    fn verify(&mut self, size: usize, seed: u64) -> Result<u64, String> {
        match self.kind {
            CopyKind::D2h { .. } => {
                let p = self.host.ptr();
                // SAFETY: the host buffer holds `size` initialised bytes written by the copy.
                let got = unsafe { std::slice::from_raw_parts(p, size) };
                Ok(sweep::count_mismatches(got, seed))
            }
            _ => {
                self.download(self.dev_dst, size)?;
                Ok(sweep::count_mismatches(&self.check[..size], seed))
            }
        }
    }

    fn release(&mut self) {
        // Best effort, in reverse order; every resource is released once.
        // SAFETY: each handle is either null (never created) or created by this sweep.
        unsafe {
            if !self.ctx_src.is_null() {
                let _ = sys::cuCtxSetCurrent(self.ctx_src);
            }
            for (from, to) in std::mem::take(&mut self.enabled) {
                let _ = sys::cuCtxSetCurrent(from);
                let _ = sys::cuCtxDisablePeerAccess(to);
            }
            if self.dev_src != 0 {
                let _ = sys::cuMemFree_v2(self.dev_src);
                self.dev_src = 0;
            }
            if self.dev_dst != 0 {
                let _ = sys::cuMemFree_v2(self.dev_dst);
                self.dev_dst = 0;
            }
            if let HostBuf::Pinned(p) = std::mem::replace(&mut self.host, HostBuf::None) {
                let _ = sys::cuMemFreeHost(p as *mut c_void);
            }
            for e in &mut self.ev {
                if !e.is_null() {
                    let _ = sys::cuEventDestroy_v2(*e);
                    *e = ptr::null_mut();
                }
            }
            if !self.stream.is_null() {
                let _ = sys::cuStreamDestroy_v2(self.stream);
                self.stream = ptr::null_mut();
            }
            for d in std::mem::take(&mut self.retained) {
                let _ = sys::cuDevicePrimaryCtxRelease_v2(d);
            }
            self.ctx_src = ptr::null_mut();
            self.ctx_dst = ptr::null_mut();
        }
        self.check = Vec::new();
    }
}

/// Everything the CUDA probe produced.
pub struct CudaResult {
    pub gpus: Vec<Gpu>,
    pub cells: Vec<Measurement>,
    /// One line per sweep: what ran, what the budget trimmed, what failed.
    pub log: Vec<String>,
    pub errors: Vec<String>,
}

/// Runs every sweep on every device and ordered pair. `id_of` maps an
/// ordinal and its PCI bus id to the topology's device id. The budget is
/// shared out between the sweeps.
pub fn run_all(
    gpus: Vec<Gpu>,
    plan: &Plan,
    id_of: &dyn Fn(&Gpu) -> String,
    context: &str,
) -> CudaResult {
    let mut jobs: Vec<CudaCopy> = Vec::new();
    for g in &gpus {
        let me = (g.ordinal, id_of(g));
        for pinned in [true, false] {
            jobs.push(CudaCopy::new(
                CopyKind::H2d { pinned },
                me.clone(),
                me.clone(),
                None,
            ));
            jobs.push(CudaCopy::new(
                CopyKind::D2h { pinned },
                me.clone(),
                me.clone(),
                None,
            ));
        }
        jobs.push(CudaCopy::new(CopyKind::D2d, me.clone(), me.clone(), None));
    }
    let mut log = Vec::new();
    let mut errors = Vec::new();
    for a in &gpus {
        for b in &gpus {
            if a.ordinal == b.ordinal {
                continue;
            }
            let can = match can_access_peer(a.ordinal, b.ordinal) {
                Ok(c) => Some(c),
                Err(e) => {
                    errors.push(format!("{} -> {}: {e}", id_of(a), id_of(b)));
                    None
                }
            };
            let (sa, sb) = ((a.ordinal, id_of(a)), (b.ordinal, id_of(b)));
            if can == Some(true) {
                jobs.push(CudaCopy::new(
                    CopyKind::Peer { peer_access: true },
                    sa.clone(),
                    sb.clone(),
                    can,
                ));
            } else {
                log.push(format!("{} -> {}: peer access not possible (cuDeviceCanAccessPeer = 0); only the staged copy is measured", sa.1, sb.1));
            }
            jobs.push(CudaCopy::new(
                CopyKind::Peer { peer_access: false },
                sa,
                sb,
                can,
            ));
        }
    }
    let share =
        Duration::from_secs_f64((plan.budget.as_secs_f64() / jobs.len().max(1) as f64).max(0.25));
    let mut cells = Vec::new();
    for mut job in jobs {
        let p = Plan {
            budget: share,
            ..plan.clone()
        };
        let r = sweep::run(&mut job, &p);
        let label = format!("cuda {} {}->{}", r.path.label, r.path.src, r.path.dst);
        if let Some(e) = &r.error {
            errors.push(format!("{label}: {e}"));
        }
        let bad: u64 = r.points.iter().map(|p| p.mismatched_bytes).sum();
        log.push(format!(
            "{label}: {} sizes{}{}",
            r.points.len(),
            if bad > 0 {
                format!(", {bad} bytes wrong")
            } else {
                String::new()
            },
            r.trimmed
                .iter()
                .map(|t| format!("; {t}"))
                .collect::<String>()
        ));
        cells.extend(sweep::cells(&r, "cuda", context));
    }
    CudaResult {
        gpus,
        cells,
        log,
        errors,
    }
}
