//! GPU copy sweeps, the same for every vendor: per device, host-to-device
//! and device-to-host from pinned and from pageable host memory, and
//! device-to-device; per ordered pair, `can access peer`, and copies with
//! peer access enabled and with it disabled (the host-staged fingerprint of
//! the seed's section 3.5). Every runtime call is checked, timing is by
//! device events on the copy's stream, every byte is verified, and every
//! buffer, stream, event, peer access and context is released on every
//! path, errors included. [`GpuApi`] is what a vendor runtime provides:
//! CUDA (`cuda.rs`, default build) and HIP (`hip.rs`, feature `rocm`).
//!
//! The method is nvbandwidth's (its `memcpy.cpp`): the stream is held (a
//! wait on a host flag) while a warm-up copy, the start event, the copies
//! of one window back to back and the end event are queued, then released,
//! so neither submit time nor an idle GPU between copies is timed ([`copy`]).
//! Each device's primary context is retained once per run; peer access is a
//! checked fact, set for the copy and restored after it; host buffers are
//! allocated by a thread bound to the GPU's local CPUs ([`bind`]).

mod bind;
mod copy;

use std::time::Duration;

pub(crate) use copy::GpuCopy;
pub use copy::{HOLD_TIMEOUT, WINDOW_WARMUP};

use super::sweep::{self, Plan};
use crate::evidence::measurement::Measurement;

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
    /// Whether the sweeps also report the mean (TransferBench's statistic,
    /// the reference on AMD machines) beside the median, min and max.
    const WITH_MEAN: bool = false;

    /// What runs a copy of `kind` (copy engine or kernel), and how that
    /// is known. CUDA's memcpy calls run on the copy engines.
    fn engine(&self, kind: CopyKind) -> (crate::evidence::measurement::CopyEngine, &'static str) {
        let _ = kind;
        (
            crate::evidence::measurement::CopyEngine::Ce,
            "run by the copy engines (memcpy calls)",
        )
    }
    fn can_access_peer(&self, dev: i32, peer: i32) -> Result<bool, String>;
    /// The device's context, retained once per run.
    fn open(&self, dev: i32) -> Result<Self::Ctx, String>;
    fn close(&self, dev: i32) -> Result<(), String>;
    fn make_current(&self, ctx: Self::Ctx) -> Result<(), String>;
    /// Device memory in the current context.
    fn alloc(&self, n: usize) -> Result<u64, String>;
    /// Frees device memory; the context that allocated it is current.
    fn free(&self, p: u64) -> Result<(), String>;
    fn host_alloc(&self, n: usize) -> Result<*mut u8, String>;
    fn host_free(&self, p: *mut u8) -> Result<(), String>;
    /// A 4-byte flag in pinned host memory the device can read: (host
    /// pointer, device address). `Err` when the runtime cannot hold a
    /// stream on a host flag (the windows are then not held).
    fn flag_alloc(&self) -> Result<(*mut u32, u64), String>;
    fn flag_free(&self, host: *mut u32) -> Result<(), String>;
    /// Holds `s` until the flag at device address `flag` is at least 1.
    fn wait_flag(&self, s: Self::Stream, flag: u64) -> Result<(), String>;
    /// A stream of the current context.
    fn stream(&self) -> Result<Self::Stream, String>;
    fn stream_destroy(&self, s: Self::Stream) -> Result<(), String>;
    fn stream_sync(&self, s: Self::Stream) -> Result<(), String>;
    /// An event that can be timed.
    fn event(&self) -> Result<Self::Event, String>;
    fn event_destroy(&self, e: Self::Event) -> Result<(), String>;
    fn record(&self, e: Self::Event, s: Self::Stream) -> Result<(), String>;
    /// Blocks until `e` has happened.
    fn event_sync(&self, e: Self::Event) -> Result<(), String>;
    /// Whether `e` has happened, without blocking (how a held window is
    /// waited for with a timeout).
    fn event_done(&self, e: Self::Event) -> Result<bool, String>;
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
    /// Stops the current context reaching `peer`'s memory. `Ok(false)` when
    /// it could not (access was not enabled).
    fn disable_peer(&self, peer: Self::Ctx) -> Result<bool, String>;
}

/// What one sweep copies.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CopyKind {
    H2d { pinned: bool },
    D2h { pinned: bool },
    D2d,
    Peer { peer_access: bool },
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
    /// The runtime's answer to `can access peer` per ordered pair of
    /// topology ids.
    pub peers: Vec<(String, String, bool)>,
}

/// Runs `plan` on every job, one after the other. An error stops only the
/// sweep it happened in; it is recorded, and the next sweep runs. Each
/// device's context is retained once, before the first job, and released
/// after the last; each job runs on a thread bound near its GPU.
pub(crate) fn run_jobs<A: GpuApi>(
    api: &A,
    gpus: &[Gpu],
    jobs: Jobs<'_, A>,
    plan: &Plan,
    context: &crate::evidence::answers::Context,
) -> GpuResult {
    let Jobs {
        copies,
        mut log,
        mut errors,
        peers,
    } = jobs;
    let contexts: Vec<(i32, Result<A::Ctx, String>)> = gpus
        .iter()
        .map(|g| (g.ordinal, api.open(g.ordinal)))
        .collect();
    let ctx_of = |dev: i32| -> Result<A::Ctx, String> {
        match contexts.iter().find(|(d, _)| *d == dev) {
            Some((_, c)) => c.clone(),
            None => Err(format!("no device {dev}")),
        }
    };
    let paths = copies.len();
    let mut complete = 0;
    let mut cells = Vec::new();
    for mut job in copies {
        let (src, dst) = job.devices();
        job.set_contexts(ctx_of(src), ctx_of(dst));
        let bus = gpus.iter().find(|g| g.ordinal == src);
        let binding = bind::near(bus.map(|g| g.pci_bus_id.as_str()).unwrap_or(""));
        job.set_binding(binding.note.clone());
        let r = sweep::run(&mut job, plan);
        if let Err(e) = binding.restore() {
            errors.push(e);
        }
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
        cells.extend(sweep::cells(&r, A::NAME, context, A::WITH_MEAN));
    }
    for (dev, c) in &contexts {
        if c.is_ok()
            && let Err(e) = api.close(*dev)
        {
            errors.push(format!("{} device {dev}: {e}", A::NAME));
        }
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
