//! CUDA through the driver API, loaded at run time (the default build
//! needs no CUDA toolkit). cudarc finds and opens libcuda
//! (`sys::culib`, after `is_culib_present()`, since opening a missing
//! library panics), but the calls go through this file's own table of
//! function pointers, declared to return a plain `u32`: cudarc declares
//! them to return its `CUresult` enum, and a code a newer driver adds would
//! then be an invalid enum value, undefined behaviour at the FFI boundary.
//! Here an unknown code is just a number in an error message, and a symbol
//! the driver lacks is an error, not a panic. The copy logic is
//! [`super::gpu`]'s; this file is the driver calls.

use std::ffi::{CStr, c_char, c_uint, c_void};
use std::ptr;
use std::sync::OnceLock;
use std::time::Duration;

use cudarc::driver::sys::{self, CUcontext, CUdevice, CUdeviceptr, CUevent, CUstream};

use super::gpu::{Gpu, GpuApi, Unavailable};

const SUCCESS: u32 = 0;
const ERROR_PEER_ACCESS_ALREADY_ENABLED: u32 = 704;
const ERROR_PEER_ACCESS_NOT_ENABLED: u32 = 705;
const ERROR_NOT_READY: u32 = 600;
/// `CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP`.
const FLAG_ALLOC: c_uint = 0x1 | 0x2;
/// `CU_STREAM_WAIT_VALUE_GEQ`.
const WAIT_GEQ: c_uint = 0;

macro_rules! driver {
    ($($name:ident($($ty:ty),*);)*) => {
        /// The driver calls this backend makes, each returning its raw code.
        #[allow(non_snake_case)]
        struct Driver {
            $($name: unsafe extern "C" fn($($ty),*) -> u32,)*
        }

        /// The table, loaded once; `Err` names the first missing symbol.
        fn driver() -> Result<&'static Driver, String> {
            static D: OnceLock<Result<Driver, String>> = OnceLock::new();
            D.get_or_init(|| {
                // SAFETY: called only after `is_culib_present()`; the
                // signatures are the CUDA 12 driver API's, with CUresult
                // read as the u32 it is.
                unsafe {
                    let lib = sys::culib();
                    Ok(Driver {
                        $($name: *lib
                            .get::<unsafe extern "C" fn($($ty),*) -> u32>(
                                concat!(stringify!($name), "\0").as_bytes(),
                            )
                            .map_err(|e| format!("libcuda lacks {}: {e}", stringify!($name)))?,)*
                    })
                }
            })
            .as_ref()
            .map_err(Clone::clone)
        }
    };
}

driver! {
    cuInit(c_uint);
    cuGetErrorString(u32, *mut *const c_char);
    cuDeviceGetCount(*mut i32);
    cuDeviceGet(*mut CUdevice, i32);
    cuDeviceGetName(*mut c_char, i32, CUdevice);
    cuDeviceGetPCIBusId(*mut c_char, i32, CUdevice);
    cuDeviceTotalMem_v2(*mut usize, CUdevice);
    cuDeviceCanAccessPeer(*mut i32, CUdevice, CUdevice);
    cuDevicePrimaryCtxRetain(*mut CUcontext, CUdevice);
    cuDevicePrimaryCtxRelease_v2(CUdevice);
    cuCtxSetCurrent(CUcontext);
    cuCtxEnablePeerAccess(CUcontext, c_uint);
    cuCtxDisablePeerAccess(CUcontext);
    cuMemAlloc_v2(*mut CUdeviceptr, usize);
    cuMemFree_v2(CUdeviceptr);
    cuMemHostAlloc(*mut *mut c_void, usize, c_uint);
    cuMemFreeHost(*mut c_void);
    cuMemHostGetDevicePointer_v2(*mut CUdeviceptr, *mut c_void, c_uint);
    cuStreamCreate(*mut CUstream, c_uint);
    cuStreamDestroy_v2(CUstream);
    cuStreamSynchronize(CUstream);
    cuStreamWaitValue32_v2(CUstream, CUdeviceptr, u32, c_uint);
    cuEventCreate(*mut CUevent, c_uint);
    cuEventDestroy_v2(CUevent);
    cuEventRecord(CUevent, CUstream);
    cuEventSynchronize(CUevent);
    cuEventQuery(CUevent);
    cuEventElapsedTime(*mut f32, CUevent, CUevent);
    cuMemcpyHtoDAsync_v2(CUdeviceptr, *const c_void, usize, CUstream);
    cuMemcpyDtoHAsync_v2(*mut c_void, CUdeviceptr, usize, CUstream);
    cuMemcpyDtoDAsync_v2(CUdeviceptr, CUdeviceptr, usize, CUstream);
    cuMemcpyPeerAsync(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, usize, CUstream);
}

/// The driver's text for a code, or the number when it has none (a code
/// newer than the driver's own table, or a driver that does not say).
fn err_text(d: &Driver, r: u32) -> String {
    let mut s: *const c_char = ptr::null();
    // SAFETY: cuGetErrorString writes a pointer to a static string or leaves it null.
    let ok = unsafe { (d.cuGetErrorString)(r, &mut s) } == SUCCESS;
    if ok && !s.is_null() {
        // SAFETY: non-null pointers from cuGetErrorString are NUL-terminated static strings.
        let text = unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned();
        format!("{text} (CUDA error {r})")
    } else {
        format!("CUDA error {r}, which this driver does not describe")
    }
}

/// Turns a driver result into `Err("<call>: <error text>")`.
fn check(d: &Driver, r: u32, call: &str) -> Result<(), String> {
    if r == SUCCESS {
        Ok(())
    } else {
        Err(format!("{call}: {}", err_text(d, r)))
    }
}

/// The devices, numbered as nvidia-smi numbers them (PCI bus order).
pub fn inventory() -> Result<Vec<Gpu>, Unavailable> {
    // SAFETY: only tries to open the library; no CUDA call is made.
    if !unsafe { sys::is_culib_present() } {
        return Err(Unavailable::NoLibrary);
    }
    let d = driver().map_err(Unavailable::NoDevice)?;
    // Ordinals in PCI bus order, as nvidia-smi and the topology number them.
    // SAFETY: set before the driver is initialised, while collection runs no
    // other thread that reads the environment.
    unsafe { std::env::set_var("CUDA_DEVICE_ORDER", "PCI_BUS_ID") };
    let no = Unavailable::NoDevice;
    // SAFETY: plain driver calls with valid out-pointers.
    unsafe {
        check(d, (d.cuInit)(0), "cuInit").map_err(no)?;
        let mut n = 0;
        check(d, (d.cuDeviceGetCount)(&mut n), "cuDeviceGetCount").map_err(no)?;
        if n == 0 {
            return Err(no("cuDeviceGetCount: 0 devices".into()));
        }
        let mut out = Vec::new();
        for i in 0..n {
            let mut dev: CUdevice = 0;
            check(d, (d.cuDeviceGet)(&mut dev, i), "cuDeviceGet").map_err(no)?;
            let mut name = [0 as c_char; 256];
            let r = (d.cuDeviceGetName)(name.as_mut_ptr(), 256, dev);
            check(d, r, "cuDeviceGetName").map_err(no)?;
            let mut bus = [0 as c_char; 64];
            let r = (d.cuDeviceGetPCIBusId)(bus.as_mut_ptr(), 64, dev);
            check(d, r, "cuDeviceGetPCIBusId").map_err(no)?;
            let mut mem: usize = 0;
            let r = (d.cuDeviceTotalMem_v2)(&mut mem, dev);
            check(d, r, "cuDeviceTotalMem").map_err(no)?;
            out.push(Gpu::from_c(dev, &name, &bus, mem));
        }
        Ok(out)
    }
}

/// The CUDA driver API. Contexts are the devices' primary contexts.
pub(crate) struct Cuda;

/// Calls `$f` of the loaded table and checks its code.
macro_rules! call {
    ($f:ident($($a:expr),*)) => {{
        let d = driver()?;
        check(d, (d.$f)($($a),*), stringify!($f))
    }};
}

// SAFETY (for every call below): handles and pointers passed in were
// created by the matching call of this API and are not used after release;
// sizes never exceed what was allocated (the sweep guarantees it).
impl GpuApi for Cuda {
    const NAME: &'static str = "cuda";
    type Ctx = CUcontext;
    type Stream = CUstream;
    type Event = CUevent;
    const TIMER: &'static str = "CUDA events recorded on the copy's stream";

    fn can_access_peer(&self, dev: i32, peer: i32) -> Result<bool, String> {
        let mut can = 0;
        unsafe { call!(cuDeviceCanAccessPeer(&mut can, dev, peer)) }?;
        Ok(can != 0)
    }
    fn open(&self, dev: i32) -> Result<Self::Ctx, String> {
        let mut c: CUcontext = ptr::null_mut();
        unsafe { call!(cuDevicePrimaryCtxRetain(&mut c, dev)) }?;
        Ok(c)
    }
    fn close(&self, dev: i32) -> Result<(), String> {
        unsafe { call!(cuDevicePrimaryCtxRelease_v2(dev)) }
    }
    fn make_current(&self, ctx: Self::Ctx) -> Result<(), String> {
        unsafe { call!(cuCtxSetCurrent(ctx)) }
    }
    fn alloc(&self, n: usize) -> Result<u64, String> {
        let mut p: CUdeviceptr = 0;
        unsafe { call!(cuMemAlloc_v2(&mut p, n)) }?;
        Ok(p)
    }
    fn free(&self, p: u64) -> Result<(), String> {
        unsafe { call!(cuMemFree_v2(p)) }
    }
    fn host_alloc(&self, n: usize) -> Result<*mut u8, String> {
        let mut p: *mut c_void = ptr::null_mut();
        // Flags 0: ordinary pinned memory, not write-combined.
        unsafe { call!(cuMemHostAlloc(&mut p, n, 0)) }?;
        Ok(p as *mut u8)
    }
    fn host_free(&self, p: *mut u8) -> Result<(), String> {
        unsafe { call!(cuMemFreeHost(p as *mut c_void)) }
    }
    fn flag_alloc(&self) -> Result<(*mut u32, u64), String> {
        let mut p: *mut c_void = ptr::null_mut();
        unsafe { call!(cuMemHostAlloc(&mut p, 4, FLAG_ALLOC)) }?;
        let mut dev: CUdeviceptr = 0;
        if let Err(e) = unsafe { call!(cuMemHostGetDevicePointer_v2(&mut dev, p, 0)) } {
            let _ = self.host_free(p as *mut u8);
            return Err(e);
        }
        Ok((p as *mut u32, dev))
    }
    fn flag_free(&self, host: *mut u32) -> Result<(), String> {
        self.host_free(host as *mut u8)
    }
    fn wait_flag(&self, s: Self::Stream, flag: u64) -> Result<(), String> {
        unsafe { call!(cuStreamWaitValue32_v2(s, flag, 1, WAIT_GEQ)) }
    }
    fn stream(&self) -> Result<Self::Stream, String> {
        let mut s: CUstream = ptr::null_mut();
        unsafe { call!(cuStreamCreate(&mut s, 0)) }?;
        Ok(s)
    }
    fn stream_destroy(&self, s: Self::Stream) -> Result<(), String> {
        unsafe { call!(cuStreamDestroy_v2(s)) }
    }
    fn stream_sync(&self, s: Self::Stream) -> Result<(), String> {
        unsafe { call!(cuStreamSynchronize(s)) }
    }
    fn event(&self) -> Result<Self::Event, String> {
        let mut e: CUevent = ptr::null_mut();
        // Flags 0 (CU_EVENT_DEFAULT): events that can be timed.
        unsafe { call!(cuEventCreate(&mut e, 0)) }?;
        Ok(e)
    }
    fn event_destroy(&self, e: Self::Event) -> Result<(), String> {
        unsafe { call!(cuEventDestroy_v2(e)) }
    }
    fn record(&self, e: Self::Event, s: Self::Stream) -> Result<(), String> {
        unsafe { call!(cuEventRecord(e, s)) }
    }
    fn event_sync(&self, e: Self::Event) -> Result<(), String> {
        unsafe { call!(cuEventSynchronize(e)) }
    }
    fn event_done(&self, e: Self::Event) -> Result<bool, String> {
        let d = driver()?;
        match unsafe { (d.cuEventQuery)(e) } {
            ERROR_NOT_READY => Ok(false),
            r => check(d, r, "cuEventQuery").map(|_| true),
        }
    }
    fn elapsed(&self, a: Self::Event, b: Self::Event) -> Result<Duration, String> {
        unsafe { call!(cuEventSynchronize(b)) }?;
        let mut ms: f32 = 0.0;
        unsafe { call!(cuEventElapsedTime(&mut ms, a, b)) }?;
        if !ms.is_finite() || ms < 0.0 {
            return Err(format!("cuEventElapsedTime: {ms} ms"));
        }
        Ok(Duration::from_secs_f64(f64::from(ms) / 1e3))
    }
    fn h2d(&self, dst: u64, src: *const u8, n: usize, s: Self::Stream) -> Result<(), String> {
        unsafe { call!(cuMemcpyHtoDAsync_v2(dst, src as *const c_void, n, s)) }
    }
    fn d2h(&self, dst: *mut u8, src: u64, n: usize, s: Self::Stream) -> Result<(), String> {
        unsafe { call!(cuMemcpyDtoHAsync_v2(dst as *mut c_void, src, n, s)) }
    }
    fn d2d(&self, dst: u64, src: u64, n: usize, s: Self::Stream) -> Result<(), String> {
        unsafe { call!(cuMemcpyDtoDAsync_v2(dst, src, n, s)) }
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
        unsafe { call!(cuMemcpyPeerAsync(dst, dst_ctx, src, src_ctx, n, s)) }
    }
    fn enable_peer(&self, peer: Self::Ctx) -> Result<bool, String> {
        let d = driver()?;
        match unsafe { (d.cuCtxEnablePeerAccess)(peer, 0) } {
            ERROR_PEER_ACCESS_ALREADY_ENABLED => Ok(false),
            r => check(d, r, "cuCtxEnablePeerAccess").map(|_| true),
        }
    }
    fn disable_peer(&self, peer: Self::Ctx) -> Result<bool, String> {
        let d = driver()?;
        match unsafe { (d.cuCtxDisablePeerAccess)(peer) } {
            ERROR_PEER_ACCESS_NOT_ENABLED => Ok(false),
            r => check(d, r, "cuCtxDisablePeerAccess").map(|_| true),
        }
    }
}
