//! ROCm through hip-sys (feature `rocm`): the same copy sweeps as CUDA, on
//! the HIP runtime. hip-sys links libamdhip64, so this module exists only
//! in builds with the feature; without a device the runtime answers
//! `hipErrorNoDevice` and collection goes on. Only calls with plain
//! arguments are used (hipDeviceProp_t changed layout in ROCm 6).
//!
//! Windows are held as on CUDA: `hipStreamWaitValue32` (in hip-sys 0.1.2's
//! bindings, HIP 5.4) on a flag in mapped, coherent pinned host memory,
//! where the device says it can (`hipDeviceAttributeCanUseStreamWaitValue`);
//! elsewhere the windows are not held and the cells say why. This path has
//! not yet run on an AMD GPU: a hold that never releases is caught by the
//! sweep's hold timeout, not by a hang.
//!
//! Statistics: each size reports the median (nvbandwidth's, ours), the mean
//! (TransferBench reports the average over its iterations) and the min and
//! max (rocm_bandwidth_test reports its best iteration, our `max`), so each
//! reference is read against its own statistic.
//!
//! What ran a copy: HIP does not say. ROCm runs host<->device copies on the
//! SDMA engines unless `HSA_ENABLE_SDMA=0` (then blit kernels), and copies
//! within and between GPUs' memory usually as blit kernels, so those cells
//! say "unknown" with that reason rather than "copy engine".

use std::ffi::{CStr, c_char, c_void};
use std::ptr;
use std::time::Duration;

use hip_sys::hiprt as hip;

use super::gpu::{CopyKind, Gpu, GpuApi, Unavailable};
use crate::evidence::measurement::CopyEngine;

/// `hipHostMallocPortable | hipHostMallocMapped | hipHostMallocCoherent`:
/// a flag every device can read, its host writes seen without a flush.
const FLAG_ALLOC: u32 =
    hip::hipHostMallocPortable | hip::hipHostMallocMapped | hip::hipHostMallocCoherent;
/// `hipStreamWaitValueGte` (a macro in hip_runtime_api.h, not in the bindings).
const WAIT_GTE: u32 = 0;

fn check(r: hip::hipError_t, call: &str) -> Result<(), String> {
    if r == hip::hipError_t::hipSuccess {
        return Ok(());
    }
    // SAFETY: hipGetErrorString returns a static NUL-terminated string.
    let text = unsafe { CStr::from_ptr(hip::hipGetErrorString(r)) }
        .to_string_lossy()
        .into_owned();
    Err(format!("{call}: {text}"))
}

/// The devices the HIP runtime sees.
pub fn inventory() -> Result<Vec<Gpu>, Unavailable> {
    let mut n = 0;
    // SAFETY: valid out-pointers for every call below.
    unsafe {
        check(hip::hipGetDeviceCount(&mut n), "hipGetDeviceCount")
            .map_err(Unavailable::NoDevice)?;
        if n == 0 {
            return Err(Unavailable::NoDevice("hipGetDeviceCount: 0 devices".into()));
        }
        let mut out = Vec::new();
        for dev in 0..n {
            let mut name = [0 as c_char; 256];
            check(
                hip::hipDeviceGetName(name.as_mut_ptr(), 256, dev),
                "hipDeviceGetName",
            )
            .map_err(Unavailable::NoDevice)?;
            let mut bus = [0 as c_char; 64];
            check(
                hip::hipDeviceGetPCIBusId(bus.as_mut_ptr(), 64, dev),
                "hipDeviceGetPCIBusId",
            )
            .map_err(Unavailable::NoDevice)?;
            let mut mem: usize = 0;
            check(hip::hipDeviceTotalMem(&mut mem, dev), "hipDeviceTotalMem")
                .map_err(Unavailable::NoDevice)?;
            out.push(Gpu::from_c(dev, &name, &bus, mem));
        }
        Ok(out)
    }
}

/// The HIP runtime API. A "context" is a device number (hipSetDevice).
pub(crate) struct Hip;

// SAFETY (for every call below): handles and pointers passed in were
// created by the matching call of this API and are not used after release;
// sizes never exceed what was allocated (the sweep guarantees it).
impl GpuApi for Hip {
    const NAME: &'static str = "hip";
    type Ctx = i32;
    type Stream = hip::hipStream_t;
    type Event = hip::hipEvent_t;
    const TIMER: &'static str = "HIP events recorded on the copy's stream";
    const WITH_MEAN: bool = true;

    fn engine(&self, kind: CopyKind) -> (CopyEngine, &'static str) {
        let sdma_off = std::env::var("HSA_ENABLE_SDMA").is_ok_and(|v| v.trim() == "0");
        match kind {
            CopyKind::H2d { .. } | CopyKind::D2h { .. } if sdma_off => (
                CopyEngine::Sm,
                "run by blit kernels (HSA_ENABLE_SDMA=0 turns the SDMA engines off)",
            ),
            CopyKind::H2d { .. } | CopyKind::D2h { .. } => (
                CopyEngine::Ce,
                "run by the SDMA copy engines (ROCm's default for host copies; HIP does not confirm it per copy)",
            ),
            CopyKind::D2d | CopyKind::Peer { .. } => (
                CopyEngine::Unknown,
                "copy engine or blit kernel not known: HIP does not say, and ROCm usually runs copies between device buffers as blit kernels",
            ),
        }
    }

    fn can_access_peer(&self, dev: i32, peer: i32) -> Result<bool, String> {
        let mut can = 0;
        check(
            unsafe { hip::hipDeviceCanAccessPeer(&mut can, dev, peer) },
            "hipDeviceCanAccessPeer",
        )?;
        Ok(can != 0)
    }
    fn open(&self, dev: i32) -> Result<i32, String> {
        Ok(dev)
    }
    fn close(&self, _dev: i32) -> Result<(), String> {
        Ok(())
    }
    fn make_current(&self, dev: i32) -> Result<(), String> {
        check(unsafe { hip::hipSetDevice(dev) }, "hipSetDevice")
    }
    fn alloc(&self, n: usize) -> Result<u64, String> {
        let mut p: *mut c_void = ptr::null_mut();
        check(unsafe { hip::hipMalloc(&mut p, n) }, "hipMalloc")?;
        Ok(p as u64)
    }
    fn free(&self, p: u64) -> Result<(), String> {
        check(unsafe { hip::hipFree(p as *mut c_void) }, "hipFree")
    }
    fn host_alloc(&self, n: usize) -> Result<*mut u8, String> {
        let mut p: *mut c_void = ptr::null_mut();
        // Flags 0 (hipHostMallocDefault): pinned, not write-combined.
        check(unsafe { hip::hipHostMalloc(&mut p, n, 0) }, "hipHostMalloc")?;
        Ok(p as *mut u8)
    }
    fn host_free(&self, p: *mut u8) -> Result<(), String> {
        check(unsafe { hip::hipHostFree(p as *mut c_void) }, "hipHostFree")
    }
    fn flag_alloc(&self) -> Result<(*mut u32, u64), String> {
        let mut dev = 0;
        check(unsafe { hip::hipGetDevice(&mut dev) }, "hipGetDevice")?;
        let mut can = 0;
        let attr = hip::hipDeviceAttribute_t::hipDeviceAttributeCanUseStreamWaitValue;
        check(
            unsafe { hip::hipDeviceGetAttribute(&mut can, attr, dev) },
            "hipDeviceGetAttribute(CanUseStreamWaitValue)",
        )?;
        if can == 0 {
            return Err(format!(
                "device {dev} cannot hold a stream on a value (hipDeviceAttributeCanUseStreamWaitValue = 0)"
            ));
        }
        let mut p: *mut c_void = ptr::null_mut();
        check(
            unsafe { hip::hipHostMalloc(&mut p, 4, FLAG_ALLOC) },
            "hipHostMalloc(flag)",
        )?;
        let mut d: *mut c_void = ptr::null_mut();
        if let Err(e) = check(
            unsafe { hip::hipHostGetDevicePointer(&mut d, p, 0) },
            "hipHostGetDevicePointer",
        ) {
            let _ = self.host_free(p as *mut u8);
            return Err(e);
        }
        Ok((p as *mut u32, d as u64))
    }
    fn flag_free(&self, host: *mut u32) -> Result<(), String> {
        self.host_free(host as *mut u8)
    }
    fn wait_flag(&self, s: Self::Stream, flag: u64) -> Result<(), String> {
        check(
            unsafe { hip::hipStreamWaitValue32(s, flag as *mut c_void, 1, WAIT_GTE, u32::MAX) },
            "hipStreamWaitValue32",
        )
    }
    fn stream(&self) -> Result<Self::Stream, String> {
        let mut s: hip::hipStream_t = ptr::null_mut();
        check(unsafe { hip::hipStreamCreate(&mut s) }, "hipStreamCreate")?;
        Ok(s)
    }
    fn stream_destroy(&self, s: Self::Stream) -> Result<(), String> {
        check(unsafe { hip::hipStreamDestroy(s) }, "hipStreamDestroy")
    }
    fn stream_sync(&self, s: Self::Stream) -> Result<(), String> {
        check(
            unsafe { hip::hipStreamSynchronize(s) },
            "hipStreamSynchronize",
        )
    }
    fn event(&self) -> Result<Self::Event, String> {
        let mut e: hip::hipEvent_t = ptr::null_mut();
        check(unsafe { hip::hipEventCreate(&mut e) }, "hipEventCreate")?;
        Ok(e)
    }
    fn event_destroy(&self, e: Self::Event) -> Result<(), String> {
        check(unsafe { hip::hipEventDestroy(e) }, "hipEventDestroy")
    }
    fn record(&self, e: Self::Event, s: Self::Stream) -> Result<(), String> {
        check(unsafe { hip::hipEventRecord(e, s) }, "hipEventRecord")
    }
    fn event_sync(&self, e: Self::Event) -> Result<(), String> {
        check(
            unsafe { hip::hipEventSynchronize(e) },
            "hipEventSynchronize",
        )
    }
    fn event_done(&self, e: Self::Event) -> Result<bool, String> {
        let r = unsafe { hip::hipEventQuery(e) };
        if r == hip::hipError_t::hipErrorNotReady {
            return Ok(false);
        }
        check(r, "hipEventQuery")?;
        Ok(true)
    }
    fn elapsed(&self, a: Self::Event, b: Self::Event) -> Result<Duration, String> {
        check(
            unsafe { hip::hipEventSynchronize(b) },
            "hipEventSynchronize",
        )?;
        let mut ms: f32 = 0.0;
        check(
            unsafe { hip::hipEventElapsedTime(&mut ms, a, b) },
            "hipEventElapsedTime",
        )?;
        if !ms.is_finite() || ms < 0.0 {
            return Err(format!("hipEventElapsedTime: {ms} ms"));
        }
        Ok(Duration::from_secs_f64(f64::from(ms) / 1e3))
    }
    fn h2d(&self, dst: u64, src: *const u8, n: usize, s: Self::Stream) -> Result<(), String> {
        let kind = hip::hipMemcpyKind::hipMemcpyHostToDevice;
        check(
            unsafe { hip::hipMemcpyAsync(dst as *mut c_void, src as *const c_void, n, kind, s) },
            "hipMemcpyAsync(H2D)",
        )
    }
    fn d2h(&self, dst: *mut u8, src: u64, n: usize, s: Self::Stream) -> Result<(), String> {
        let kind = hip::hipMemcpyKind::hipMemcpyDeviceToHost;
        check(
            unsafe { hip::hipMemcpyAsync(dst as *mut c_void, src as *const c_void, n, kind, s) },
            "hipMemcpyAsync(D2H)",
        )
    }
    fn d2d(&self, dst: u64, src: u64, n: usize, s: Self::Stream) -> Result<(), String> {
        let kind = hip::hipMemcpyKind::hipMemcpyDeviceToDevice;
        check(
            unsafe { hip::hipMemcpyAsync(dst as *mut c_void, src as *const c_void, n, kind, s) },
            "hipMemcpyAsync(D2D)",
        )
    }
    fn peer(
        &self,
        dst: u64,
        dst_dev: i32,
        src: u64,
        src_dev: i32,
        n: usize,
        s: Self::Stream,
    ) -> Result<(), String> {
        check(
            unsafe {
                hip::hipMemcpyPeerAsync(
                    dst as *mut c_void,
                    dst_dev,
                    src as *const c_void,
                    src_dev,
                    n,
                    s,
                )
            },
            "hipMemcpyPeerAsync",
        )
    }
    fn enable_peer(&self, peer: i32) -> Result<bool, String> {
        let r = unsafe { hip::hipDeviceEnablePeerAccess(peer, 0) };
        if r == hip::hipError_t::hipErrorPeerAccessAlreadyEnabled {
            return Ok(false);
        }
        check(r, "hipDeviceEnablePeerAccess")?;
        Ok(true)
    }
    fn disable_peer(&self, peer: i32) -> Result<bool, String> {
        let r = unsafe { hip::hipDeviceDisablePeerAccess(peer) };
        if r == hip::hipError_t::hipErrorPeerAccessNotEnabled {
            return Ok(false);
        }
        check(r, "hipDeviceDisablePeerAccess")?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn no_device_is_a_clean_answer() {
        // CI builds this with Debian's HIP and no GPU: the runtime must say
        // so without a crash, and collection must go on.
        match super::inventory() {
            Ok(gpus) => assert!(!gpus.is_empty()),
            Err(super::Unavailable::NoDevice(e)) => {
                assert!(e.starts_with("hipGetDeviceCount"), "{e}")
            }
            Err(other) => panic!("{other:?}"),
        }
    }
}
