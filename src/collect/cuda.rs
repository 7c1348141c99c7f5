//! CUDA through cudarc's driver API, loaded at run time (the default build
//! needs no CUDA toolkit). cudarc panics when libcuda is missing, so
//! [`inventory`] asks `is_culib_present()` before any other call. The copy
//! logic is [`super::gpu`]'s; this file is the driver calls.

use std::ffi::{CStr, c_char, c_void};
use std::ptr;
use std::time::Duration;

use cudarc::driver::sys;

use super::gpu::{Gpu, GpuApi, Unavailable};

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
            out.push(Gpu::from_c(dev, &name, &bus, mem));
        }
        Ok(out)
    }
}

/// The CUDA driver API. Contexts are the devices' primary contexts.
pub(crate) struct Cuda;

// SAFETY (for every call below): handles and pointers passed in were
// created by the matching call of this API and are not used after release;
// sizes never exceed what was allocated (the sweep guarantees it).
impl GpuApi for Cuda {
    const NAME: &'static str = "cuda";
    type Ctx = sys::CUcontext;
    type Stream = sys::CUstream;
    type Event = sys::CUevent;
    const TIMER: &'static str = "CUDA events recorded on the copy's stream";

    fn can_access_peer(&self, dev: i32, peer: i32) -> Result<bool, String> {
        let mut can = 0;
        check(
            unsafe { sys::cuDeviceCanAccessPeer(&mut can, dev, peer) },
            "cuDeviceCanAccessPeer",
        )?;
        Ok(can != 0)
    }
    fn open(&self, dev: i32) -> Result<Self::Ctx, String> {
        let mut c: sys::CUcontext = ptr::null_mut();
        check(
            unsafe { sys::cuDevicePrimaryCtxRetain(&mut c, dev) },
            "cuDevicePrimaryCtxRetain",
        )?;
        Ok(c)
    }
    fn close(&self, dev: i32) {
        let _ = unsafe { sys::cuDevicePrimaryCtxRelease_v2(dev) };
    }
    fn make_current(&self, ctx: Self::Ctx) -> Result<(), String> {
        check(unsafe { sys::cuCtxSetCurrent(ctx) }, "cuCtxSetCurrent")
    }
    fn alloc(&self, n: usize) -> Result<u64, String> {
        let mut p: sys::CUdeviceptr = 0;
        check(unsafe { sys::cuMemAlloc_v2(&mut p, n) }, "cuMemAlloc")?;
        Ok(p)
    }
    fn free(&self, p: u64) {
        let _ = unsafe { sys::cuMemFree_v2(p) };
    }
    fn host_alloc(&self, n: usize) -> Result<*mut u8, String> {
        let mut p: *mut c_void = ptr::null_mut();
        // Flags 0: ordinary pinned memory, not write-combined.
        check(
            unsafe { sys::cuMemHostAlloc(&mut p, n, 0) },
            "cuMemHostAlloc",
        )?;
        Ok(p as *mut u8)
    }
    fn host_free(&self, p: *mut u8) {
        let _ = unsafe { sys::cuMemFreeHost(p as *mut c_void) };
    }
    fn stream(&self) -> Result<Self::Stream, String> {
        let mut s: sys::CUstream = ptr::null_mut();
        check(unsafe { sys::cuStreamCreate(&mut s, 0) }, "cuStreamCreate")?;
        Ok(s)
    }
    fn stream_destroy(&self, s: Self::Stream) {
        let _ = unsafe { sys::cuStreamDestroy_v2(s) };
    }
    fn stream_sync(&self, s: Self::Stream) -> Result<(), String> {
        check(
            unsafe { sys::cuStreamSynchronize(s) },
            "cuStreamSynchronize",
        )
    }
    fn event(&self) -> Result<Self::Event, String> {
        let mut e: sys::CUevent = ptr::null_mut();
        // Flags 0 (CU_EVENT_DEFAULT): events that can be timed.
        check(unsafe { sys::cuEventCreate(&mut e, 0) }, "cuEventCreate")?;
        Ok(e)
    }
    fn event_destroy(&self, e: Self::Event) {
        let _ = unsafe { sys::cuEventDestroy_v2(e) };
    }
    fn record(&self, e: Self::Event, s: Self::Stream) -> Result<(), String> {
        check(unsafe { sys::cuEventRecord(e, s) }, "cuEventRecord")
    }
    fn elapsed(&self, a: Self::Event, b: Self::Event) -> Result<Duration, String> {
        check(unsafe { sys::cuEventSynchronize(b) }, "cuEventSynchronize")?;
        let mut ms: f32 = 0.0;
        check(
            unsafe { sys::cuEventElapsedTime(&mut ms, a, b) },
            "cuEventElapsedTime",
        )?;
        Ok(Duration::from_secs_f64(f64::from(ms.max(0.0)) / 1e3))
    }
    fn h2d(&self, dst: u64, src: *const u8, n: usize, s: Self::Stream) -> Result<(), String> {
        check(
            unsafe { sys::cuMemcpyHtoDAsync_v2(dst, src as *const c_void, n, s) },
            "cuMemcpyHtoDAsync",
        )
    }
    fn d2h(&self, dst: *mut u8, src: u64, n: usize, s: Self::Stream) -> Result<(), String> {
        check(
            unsafe { sys::cuMemcpyDtoHAsync_v2(dst as *mut c_void, src, n, s) },
            "cuMemcpyDtoHAsync",
        )
    }
    fn d2d(&self, dst: u64, src: u64, n: usize, s: Self::Stream) -> Result<(), String> {
        check(
            unsafe { sys::cuMemcpyDtoDAsync_v2(dst, src, n, s) },
            "cuMemcpyDtoDAsync",
        )
    }
    fn peer(
        &self,
        dst: u64,
        dst_ctx: Self::Ctx,
        src: u64,
        src_ctx: Self::Ctx,
        n: usize,
        s: Self::Stream,
    ) -> Result<(), String> {
        check(
            unsafe { sys::cuMemcpyPeerAsync(dst, dst_ctx, src, src_ctx, n, s) },
            "cuMemcpyPeerAsync",
        )
    }
    fn enable_peer(&self, peer: Self::Ctx) -> Result<bool, String> {
        let r = unsafe { sys::cuCtxEnablePeerAccess(peer, 0) };
        if r == sys::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED {
            return Ok(false);
        }
        check(r, "cuCtxEnablePeerAccess")?;
        Ok(true)
    }
    fn disable_peer(&self, peer: Self::Ctx) {
        let _ = unsafe { sys::cuCtxDisablePeerAccess(peer) };
    }
}
