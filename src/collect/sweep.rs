//! The copy sweep shared by every backend (host memory now; CUDA and HIP
//! devices through the same [`Backend`] trait): message sizes from small to
//! large, warm-up outside the timed window, several timed repetitions,
//! median and spread, every copied byte verified against a
//! position-dependent pattern (so a copy that lands one byte off cannot
//! pass), and a time budget that trims repetitions and the largest sizes
//! rather than overrun.

use std::time::{Duration, Instant};

use crate::evidence::measurement::{
    Buffers, CopyEngine, Direction, GB, Kind, Measurement, P2p, Statistic, Verification,
    describe_size,
};

/// What a backend copies between, for the cells it produces.
#[derive(Debug, Clone)]
pub struct Path {
    /// What is copied, for the test name: `H2D pinned`, `memcpy`.
    pub label: String,
    pub kind: Kind,
    pub src: String,
    pub dst: String,
    pub buffers: Buffers,
    pub copy_engine: CopyEngine,
    pub p2p: P2p,
    /// The seven questions' "path" answer.
    pub description: String,
    /// How the time is taken, for the questions' "unit" answer.
    pub timer: &'static str,
}

/// One way of copying bytes. Every call that can fail returns an error
/// string; [`release`](Backend::release) is always called, errors included.
pub trait Backend {
    fn path(&self) -> Path;
    /// Allocates buffers for copies of up to `max_bytes`.
    fn prepare(&mut self, max_bytes: usize) -> Result<(), String>;
    /// Writes the pattern of `seed` to the first `size` bytes of the source.
    fn fill(&mut self, size: usize, seed: u64) -> Result<(), String>;
    /// Copies `size` bytes once; returns the time the backend measured
    /// (device events on GPUs, a monotonic clock on the host).
    fn copy_timed(&mut self, size: usize) -> Result<Duration, String>;
    /// Counts the bytes of the destination that differ from the pattern.
    fn verify(&mut self, size: usize, seed: u64) -> Result<u64, String>;
    /// Frees everything the backend allocated or enabled.
    fn release(&mut self);
}

/// The pattern byte at position `i` for `seed`: every byte depends on its
/// position, so a shifted copy mismatches almost everywhere.
#[inline]
pub fn pattern_word(word_index: u64, seed: u64) -> u64 {
    let mut x = word_index
        .wrapping_add(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_add(1);
    x ^= x >> 33;
    x = x.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    x ^= x >> 33;
    x
}

/// Fills `buf` with the pattern of `seed`.
pub fn fill_pattern(buf: &mut [u8], seed: u64) {
    let k = buf.len() / 8;
    let mut chunks = buf.chunks_exact_mut(8);
    for (k, c) in (&mut chunks).enumerate() {
        c.copy_from_slice(&pattern_word(k as u64, seed).to_le_bytes());
    }
    let tail = pattern_word(k as u64, seed).to_le_bytes();
    for (b, t) in chunks.into_remainder().iter_mut().zip(tail) {
        *b = t;
    }
}

/// How many bytes of `buf` differ from the pattern of `seed`.
pub fn count_mismatches(buf: &[u8], seed: u64) -> u64 {
    let mut bad = 0u64;
    let mut chunks = buf.chunks_exact(8);
    for (k, c) in (&mut chunks).enumerate() {
        let got = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        let diff = got ^ pattern_word(k as u64, seed);
        if diff != 0 {
            bad += diff.to_le_bytes().iter().filter(|b| **b != 0).count() as u64;
        }
    }
    let k = buf.len() / 8;
    let tail = pattern_word(k as u64, seed).to_le_bytes();
    bad += chunks
        .remainder()
        .iter()
        .zip(tail)
        .filter(|(a, b)| *a != b)
        .count() as u64;
    bad
}

/// Sweep settings.
#[derive(Debug, Clone)]
pub struct Plan {
    pub sizes: Vec<usize>,
    pub warmup: u32,
    pub repeats: u32,
    /// Wall-clock budget for the whole sweep, fills and checks included.
    pub budget: Duration,
}

/// Sizes from 4 KiB to 256 MiB by factors of four.
pub fn default_sizes() -> Vec<usize> {
    (0..=8).map(|i| 4096usize << (2 * i)).collect()
}

impl Default for Plan {
    fn default() -> Plan {
        Plan {
            sizes: default_sizes(),
            warmup: 2,
            repeats: 7,
            budget: Duration::from_secs(3),
        }
    }
}

/// The times of one size.
#[derive(Debug, Clone)]
pub struct PointResult {
    pub size: usize,
    pub times_s: Vec<f64>,
    pub mismatched_bytes: u64,
}

/// A sweep's outcome.
#[derive(Debug, Clone)]
pub struct SweepResult {
    pub path: Path,
    pub points: Vec<PointResult>,
    pub warmup: u32,
    /// What the budget cut, for the record.
    pub trimmed: Vec<String>,
    /// The error that stopped the sweep, if one did.
    pub error: Option<String>,
}

/// Runs `plan` on `backend`. Never panics on a backend error: the error is
/// returned in the result with the points measured before it.
pub fn run(backend: &mut dyn Backend, plan: &Plan) -> SweepResult {
    let path = backend.path();
    let mut sizes = plan.sizes.clone();
    sizes.sort_unstable();
    sizes.dedup();
    sizes.retain(|s| *s > 0);
    let mut result = SweepResult {
        path,
        points: Vec::new(),
        warmup: plan.warmup,
        trimmed: Vec::new(),
        error: None,
    };
    let Some(&max) = sizes.last() else {
        return result;
    };
    let start = Instant::now();
    if let Err(e) = backend.prepare(max) {
        result.error = Some(format!(
            "allocation of {} failed: {e}",
            describe_size(max as u64)
        ));
        backend.release();
        return result;
    }
    // Wall time of one repetition (fill + copy + check) per byte, learnt as we go.
    let mut secs_per_byte: Option<f64> = None;
    'sizes: for (si, &size) in sizes.iter().enumerate() {
        let left = plan.budget.as_secs_f64() - start.elapsed().as_secs_f64();
        let mut repeats = plan.repeats.max(1);
        if let Some(spb) = secs_per_byte {
            let per_rep = spb * size as f64;
            let afford = (left / per_rep).floor() as i64 - i64::from(plan.warmup);
            if afford < 3 {
                result.trimmed.push(format!(
                    "sizes from {} up were skipped: the {:.1} s budget was spent",
                    describe_size(size as u64),
                    plan.budget.as_secs_f64()
                ));
                break;
            }
            if (afford as u32) < repeats {
                result.trimmed.push(format!(
                    "{}: {} repetitions instead of {} (budget)",
                    describe_size(size as u64),
                    afford,
                    repeats
                ));
                repeats = afford as u32;
            }
        }
        // Warm-up: outside the timed window (first touch, path setup).
        for w in 0..plan.warmup {
            let seed = 1_000_000 + u64::from(w);
            if let Err(e) = backend
                .fill(size, seed)
                .and_then(|_| backend.copy_timed(size).map(|_| ()))
            {
                result.error = Some(format!("warm-up at {}: {e}", describe_size(size as u64)));
                break 'sizes;
            }
        }
        let mut point = PointResult {
            size,
            times_s: Vec::new(),
            mismatched_bytes: 0,
        };
        for r in 0..repeats {
            let rep_start = Instant::now();
            let seed = (si as u64) << 32 | u64::from(r);
            let outcome = backend
                .fill(size, seed)
                .and_then(|_| backend.copy_timed(size))
                .and_then(|t| backend.verify(size, seed).map(|bad| (t, bad)));
            match outcome {
                Ok((t, bad)) => {
                    point.times_s.push(t.as_secs_f64());
                    point.mismatched_bytes += bad;
                }
                Err(e) => {
                    result.error = Some(format!("{}: {e}", describe_size(size as u64)));
                    if !point.times_s.is_empty() {
                        result.points.push(point);
                    }
                    break 'sizes;
                }
            }
            let spb = rep_start.elapsed().as_secs_f64() / size as f64;
            secs_per_byte = Some(secs_per_byte.map_or(spb, |old| old.max(spb * 0.5).max(spb)));
        }
        result.points.push(point);
    }
    backend.release();
    result
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Cells for a sweep: per size, the median bandwidth and the spread (the
/// fastest and slowest repetition), with the seven questions answered.
pub fn cells(r: &SweepResult, backend_name: &str, context: &str) -> Vec<Measurement> {
    let mut out = Vec::new();
    let test = format!(
        "{backend_name} {} {}->{}",
        r.path.label, r.path.src, r.path.dst
    );
    for p in &r.points {
        if p.times_s.is_empty() {
            continue;
        }
        let mut t = p.times_s.clone();
        let med = median(&mut t);
        let fastest = t[0];
        let slowest = t[t.len() - 1];
        for (stat, secs) in [
            (Statistic::Median, med),
            (Statistic::Max, fastest),
            (Statistic::Min, slowest),
        ] {
            let mut m = Measurement::new("wire-report", 0, r.path.kind, test.clone(), stat);
            m.src = Some(r.path.src.clone().into());
            m.dst = Some(r.path.dst.clone().into());
            m.direction = Direction::Uni;
            m.size_bytes = Some(p.size as u64);
            let bw = p.size as f64 / secs;
            m.bandwidth_bytes_per_s = Some(bw);
            m.as_printed = format!("{:.3} GB/s", bw / GB);
            m.p2p = r.path.p2p;
            m.buffers = r.path.buffers;
            m.copy_engine = r.path.copy_engine;
            m.iterations = Some(p.times_s.len() as u64);
            m.warmup_iterations = Some(u64::from(r.warmup));
            m.verification = Verification::Checked {
                errors: p.mismatched_bytes,
            };
            let q = &mut m.questions;
            q.unit = format!(
                "bytes/s = size / time per copy, time from {}; shown as GB/s = 1e9 bytes/s",
                r.path.timer
            )
            .into();
            q.direction = "unidirectional: one source buffer to one destination buffer".into();
            q.message_size = describe_size(p.size as u64);
            q.warm_up = format!(
                "{} untimed copies of this size before the timed ones",
                r.warmup
            )
            .into();
            q.outstanding = format!("one copy at a time; {} timed repetitions, each filled with a new pattern and checked byte by byte", p.times_s.len()).into();
            q.path = r.path.description.clone().into();
            q.context = context.to_string().into();
            out.push(m);
        }
    }
    out
}

/// Host memory to host memory through `memcpy` (`copy_from_slice`).
pub struct HostBackend {
    src: Vec<u8>,
    dst: Vec<u8>,
    description: String,
}

impl HostBackend {
    /// `placement` says where the process runs (CPUs, NUMA nodes).
    pub fn new(placement: &str) -> HostBackend {
        HostBackend {
            src: Vec::new(),
            dst: Vec::new(),
            description: format!(
                "memcpy between two buffers in host memory (pageable, allocated by this process); {placement}"
            ),
        }
    }
}

impl Backend for HostBackend {
    fn path(&self) -> Path {
        Path {
            label: "memcpy".into(),
            kind: Kind::H2h,
            src: "host".into(),
            dst: "host".into(),
            buffers: Buffers::HostPageable,
            copy_engine: CopyEngine::Unknown,
            p2p: P2p::Unknown,
            description: self.description.clone(),
            timer: "the monotonic clock around each copy",
        }
    }

    fn prepare(&mut self, _max_bytes: usize) -> Result<(), String> {
        // Buffers grow with the sizes actually reached: a sweep the budget
        // stops early never touches memory it will not copy.
        Ok(())
    }

    fn fill(&mut self, size: usize, seed: u64) -> Result<(), String> {
        for v in [&mut self.src, &mut self.dst] {
            if v.len() < size {
                v.try_reserve_exact(size - v.len())
                    .map_err(|e| format!("cannot allocate {size} bytes: {e}"))?;
                v.resize(size, 0);
            }
        }
        fill_pattern(&mut self.src[..size], seed);
        Ok(())
    }

    fn copy_timed(&mut self, size: usize) -> Result<Duration, String> {
        let t = Instant::now();
        self.dst[..size].copy_from_slice(&self.src[..size]);
        std::hint::black_box(&mut self.dst);
        Ok(t.elapsed())
    }

    fn verify(&mut self, size: usize, seed: u64) -> Result<u64, String> {
        Ok(count_mismatches(&self.dst[..size], seed))
    }

    fn release(&mut self) {
        self.src = Vec::new();
        self.dst = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A backend that copies one byte off, to prove verification catches it.
    struct OffByOne(HostBackend);

    impl Backend for OffByOne {
        fn path(&self) -> Path {
            self.0.path()
        }
        fn prepare(&mut self, m: usize) -> Result<(), String> {
            self.0.prepare(m)
        }
        fn fill(&mut self, s: usize, seed: u64) -> Result<(), String> {
            self.0.fill(s, seed)
        }
        fn copy_timed(&mut self, s: usize) -> Result<Duration, String> {
            let t = Instant::now();
            self.0.dst[1..s].copy_from_slice(&self.0.src[..s - 1]);
            Ok(t.elapsed())
        }
        fn verify(&mut self, s: usize, seed: u64) -> Result<u64, String> {
            self.0.verify(s, seed)
        }
        fn release(&mut self) {
            self.0.release()
        }
    }

    #[test]
    fn pattern_depends_on_position_and_seed() {
        let mut a = vec![0u8; 1000];
        fill_pattern(&mut a, 7);
        assert_eq!(count_mismatches(&a, 7), 0);
        assert!(count_mismatches(&a, 8) > 900);
        let shifted: Vec<u8> = std::iter::once(0).chain(a[..999].iter().copied()).collect();
        assert!(count_mismatches(&shifted, 7) > 900);
    }

    #[test]
    fn host_sweep_verifies_every_copy() {
        let plan = Plan {
            sizes: vec![4096, 65536, 1 << 20],
            warmup: 1,
            repeats: 3,
            budget: Duration::from_secs(5),
        };
        let r = run(&mut HostBackend::new("test"), &plan);
        assert!(r.error.is_none());
        assert_eq!(r.points.len(), 3);
        assert!(
            r.points
                .iter()
                .all(|p| p.mismatched_bytes == 0 && p.times_s.len() == 3)
        );
        let c = cells(&r, "host", "test");
        assert_eq!(c.len(), 9);
        assert!(
            c.iter()
                .all(|m| m.verification == Verification::Checked { errors: 0 })
        );
    }

    #[test]
    fn an_offset_copy_is_caught() {
        let plan = Plan {
            sizes: vec![4096],
            warmup: 0,
            repeats: 2,
            budget: Duration::from_secs(5),
        };
        let r = run(&mut OffByOne(HostBackend::new("test")), &plan);
        assert!(r.points[0].mismatched_bytes > 2 * 4000);
    }

    #[test]
    fn the_budget_trims_rather_than_overruns() {
        let plan = Plan {
            sizes: vec![1 << 20, 1 << 28],
            warmup: 1,
            repeats: 100,
            budget: Duration::from_millis(50),
        };
        let t = Instant::now();
        let r = run(&mut HostBackend::new("test"), &plan);
        assert!(!r.trimmed.is_empty());
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
    }
}
