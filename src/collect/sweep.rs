//! The copy sweep shared by every backend (host memory now; CUDA and HIP
//! devices through the same [`Backend`] trait): message sizes from small to
//! large, warm-up outside the timed window, several timed repetitions,
//! median and spread, and every copied byte verified against a
//! position-dependent pattern (so a copy that lands one byte off cannot
//! pass).
//!
//! What a sweep measures is a [`Plan`], decided before any copy is timed:
//! the sizes, the warm-up and the timed repetitions of every size, for all
//! the paths of one runtime at once. A time budget may lower the
//! repetitions, evenly across sizes and paths and never below
//! [`MIN_REPEATS`]; it never drops a size. The cost behind that is
//! arithmetic on the plan's bytes at an assumed rate
//! ([`ASSUMED_BYTES_PER_S`]), not a measurement, so the same settings give
//! the same plan on every machine and in every run. Once decided, the plan
//! runs as it is: no time is read to decide anything, and only an error
//! stops a sweep early. The result keeps the plan beside what ran.

mod plan;

use std::time::{Duration, Instant};

pub use plan::{
    ASSUMED_BYTES_PER_S, ASSUMED_COPY_BYTES_PER_S, ASSUMED_SECONDS_PER_COPY, COPIES_PER_WINDOW,
    MIN_REPEATS, Plan, Settings, default_sizes,
};
use plan::{count, short_size};

use crate::evidence::answers::{
    Context, DirectionNote, Outstanding, Path as PathFacts, Questions, Unit, Windows,
};
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
    /// How a timed window is held and filled, for the questions'
    /// "outstanding" answer: `the stream held by a wait on a host flag
    /// while 1 warm-up copy and the timed copies were queued`.
    pub window: String,
}

/// One way of copying bytes. Every call that can fail returns an error
/// string; [`release`](Backend::release) is always called, errors included.
pub trait Backend {
    fn path(&self) -> Path;
    /// Allocates buffers for copies of up to `max_bytes`.
    fn prepare(&mut self, max_bytes: usize) -> Result<(), String>;
    /// Writes the pattern of `seed` to the first `size` bytes of the source.
    fn fill(&mut self, size: usize, seed: u64) -> Result<(), String>;
    /// Copies `size` bytes `copies` times back to back in one timed window;
    /// returns the window's time as the backend measured it (device events
    /// on GPUs, a monotonic clock on the host).
    fn copy_timed(&mut self, size: usize, copies: u32) -> Result<Duration, String>;
    /// Counts the bytes of the destination that differ from the pattern.
    fn verify(&mut self, size: usize, seed: u64) -> Result<u64, String>;
    /// Frees everything the backend allocated and restores what it changed;
    /// says what could not be released or restored.
    fn release(&mut self) -> Result<(), String>;
}

/// The pattern of the last two (size, seed) asked for, built once each:
/// a sweep alternates two seeds per size, so each size builds two.
#[derive(Default)]
pub struct Patterns {
    slots: [(usize, u64, Vec<u8>); 2],
    next: usize,
}

impl Patterns {
    /// The first `size` bytes of the pattern of `seed`.
    pub fn get(&mut self, size: usize, seed: u64) -> Result<&[u8], String> {
        let hit = self
            .slots
            .iter()
            .position(|(n, s, v)| *n == size && *s == seed && v.len() == size);
        let i = match hit {
            Some(i) => i,
            None => {
                let i = self.next;
                self.next = 1 - i;
                let v = &mut self.slots[i].2;
                v.clear();
                v.try_reserve_exact(size)
                    .map_err(|e| format!("pattern buffer of {size} bytes: {e}"))?;
                v.resize(size, 0);
                fill_pattern(v, seed);
                self.slots[i].0 = size;
                self.slots[i].1 = seed;
                i
            }
        };
        Ok(&self.slots[i].2)
    }
}

/// How many bytes of `got` differ from `want` (byte-exact; equal slices
/// are compared at memcmp speed).
pub fn count_differences(got: &[u8], want: &[u8]) -> u64 {
    if got == want {
        return 0;
    }
    let extra = got.len().abs_diff(want.len()) as u64;
    got.iter().zip(want).filter(|(a, b)| a != b).count() as u64 + extra
}

/// The seed of the `i`-th window (warm-up ones first) of the `si`-th size:
/// two seeds per size, alternating, so every window changes every byte of
/// the destination and the two patterns are built once.
fn seed_of(si: usize, i: u32) -> u64 {
    (si as u64) << 32 | u64::from(i % 2)
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

/// The times of one size.
#[derive(Debug, Clone)]
pub struct PointResult {
    pub size: usize,
    pub times_s: Vec<f64>,
    pub mismatched_bytes: u64,
}

/// A sweep's outcome: the plan, and what of it ran.
#[derive(Debug, Clone)]
pub struct SweepResult {
    pub path: Path,
    pub plan: Plan,
    /// The sizes that ran, in the plan's order; the last one short of
    /// repetitions when an error stopped it.
    pub points: Vec<PointResult>,
    /// The error that stopped the sweep, if one did.
    pub error: Option<String>,
}

impl SweepResult {
    /// Every planned size ran every planned repetition.
    pub fn as_planned(&self) -> bool {
        self.error.is_none()
            && self.points.len() == self.plan.sizes.len()
            && self
                .points
                .iter()
                .all(|p| p.times_s.len() == self.plan.repeats as usize)
    }

    /// `ran 9 sizes x 7 repetitions`, or how far it got:
    /// `ran 2 of 9 sizes x 7 repetitions, then 3 of 16 MiB`.
    pub fn ran(&self) -> String {
        let reps = self.plan.repeats as usize;
        let full = self
            .points
            .iter()
            .filter(|p| p.times_s.len() == reps)
            .count();
        let planned = self.plan.sizes.len();
        let mut s = if full == planned {
            format!(
                "ran {} x {}",
                count(full, "size"),
                count(reps, "repetition")
            )
        } else {
            format!(
                "ran {full} of {} x {}",
                count(planned, "size"),
                count(reps, "repetition")
            )
        };
        if let Some(p) = self.points.iter().find(|p| p.times_s.len() < reps) {
            s.push_str(&format!(
                ", then {} of {}",
                p.times_s.len(),
                short_size(p.size)
            ));
        }
        s
    }
}

/// Runs `plan` on `backend`, exactly: every size, its warm-up and its
/// repetitions, with no clock read to decide anything. Never panics on a
/// backend error: the error stops the sweep and is returned in the result
/// with the points measured before it. `release` is always called.
pub fn run(backend: &mut dyn Backend, plan: &Plan) -> SweepResult {
    let mut result = SweepResult {
        path: backend.path(),
        plan: plan.clone(),
        points: Vec::new(),
        error: None,
    };
    // The largest size first; when its buffers cannot be had (an
    // address-space limit, a GPU short of memory), the sizes below it are
    // still measured and the error says where the sweep stopped.
    let mut fits = plan.sizes.len();
    let mut refused: Option<String> = None;
    while let Some(&max) = plan.sizes[..fits].last() {
        match backend.prepare(max) {
            Ok(()) => {
                let ran = run_sizes(backend, plan, fits, &mut result.points).err();
                result.error = match (refused.take(), ran) {
                    (Some(r), Some(e)) => Some(format!("{r}; then {e}")),
                    (r, e) => r.or(e),
                };
                break;
            }
            Err(e) => {
                // Whatever the failed preparation did hold is let go
                // before a smaller one is tried.
                let undone = backend.release().err();
                let mut why = format!(
                    "preparing for copies of up to {} failed: {e}",
                    describe_size(max as u64)
                );
                if let Some(u) = undone {
                    why.push_str(&format!("; then at release: {u}"));
                    result.error = Some(refused.unwrap_or(why));
                    return result;
                }
                refused.get_or_insert(why);
                fits -= 1;
            }
        }
    }
    if result.points.is_empty() && result.error.is_none() {
        result.error = refused;
    }
    // What prepare found out (how a window is held, where memory is).
    result.path = backend.path();
    if let Err(e) = backend.release() {
        result.error = Some(match result.error.take() {
            Some(first) => format!("{first}; then at release: {e}"),
            None => format!("at release: {e}"),
        });
    }
    result
}

/// The plan's first `fits` sizes in order, into `points`, until the first
/// error.
fn run_sizes(
    backend: &mut dyn Backend,
    plan: &Plan,
    fits: usize,
    points: &mut Vec<PointResult>,
) -> Result<(), String> {
    for (si, &size) in plan.sizes[..fits].iter().enumerate() {
        let at = describe_size(size as u64);
        let k = plan.copies_per_window;
        // Warm-up: windows that are not timed (first touch, path setup).
        for w in 0..plan.warmup {
            backend
                .fill(size, seed_of(si, w))
                .and_then(|_| backend.copy_timed(size, k))
                .map_err(|e| format!("warm-up at {at}: {e}"))?;
        }
        let mut point = PointResult {
            size,
            times_s: Vec::with_capacity(plan.repeats as usize),
            mismatched_bytes: 0,
        };
        for r in 0..plan.repeats {
            let seed = seed_of(si, plan.warmup + r);
            let outcome = backend
                .fill(size, seed)
                .and_then(|_| backend.copy_timed(size, k))
                .and_then(|t| nonzero(t, k))
                .and_then(|t| backend.verify(size, seed).map(|bad| (t, bad)));
            match outcome {
                Ok((t, bad)) => {
                    point.times_s.push(t.as_secs_f64() / f64::from(k));
                    point.mismatched_bytes += bad;
                }
                Err(e) => {
                    if !point.times_s.is_empty() {
                        points.push(point);
                    }
                    return Err(format!("{at}: {e}"));
                }
            }
        }
        points.push(point);
    }
    Ok(())
}

/// A window's time, unless the timer did not advance: then no bandwidth
/// can be computed, and saying "infinite" would be a lie.
fn nonzero(t: Duration, copies: u32) -> Result<Duration, String> {
    if t.is_zero() {
        Err(format!(
            "the timer read an elapsed time of 0 ms for {copies} {} back to back: no bandwidth can be computed",
            if copies == 1 { "copy" } else { "copies" }
        ))
    } else {
        Ok(t)
    }
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
/// fastest and slowest repetition), and with `with_mean` the bandwidth of
/// the mean time (TransferBench's average), with the seven questions
/// answered.
pub fn cells(
    r: &SweepResult,
    backend_name: &str,
    context: &Context,
    with_mean: bool,
) -> Vec<Measurement> {
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
        let mean = t.iter().sum::<f64>() / t.len() as f64;
        let mut stats = vec![
            (Statistic::Median, med),
            (Statistic::Max, fastest),
            (Statistic::Min, slowest),
        ];
        if with_mean {
            stats.push((Statistic::Avg, mean));
        }
        for (stat, secs) in stats {
            let mut m = Measurement::new("wire-report", 0, r.path.kind, test.clone(), stat);
            m.src = Some(r.path.src.clone().into());
            m.dst = Some(r.path.dst.clone().into());
            m.direction = Direction::Uni;
            m.size_bytes = Some(p.size as u64);
            let bw = p.size as f64 / secs;
            m.bandwidth_bytes_per_s = Some(bw);
            m.as_printed = format!("{:.3} GB/s", bw / GB).into();
            m.p2p = r.path.p2p;
            m.buffers = r.path.buffers;
            m.copy_engine = r.path.copy_engine;
            m.iterations = Some(p.times_s.len() as u64);
            m.warmup_iterations = Some(u64::from(r.plan.warmup));
            m.verification = Verification::Checked {
                errors: p.mismatched_bytes,
            };
            m.questions = Questions {
                unit: Unit::Timed {
                    timer: r.path.timer.into(),
                },
                direction: DirectionNote::SourceToDestination,
                outstanding: Outstanding::Windows(Windows {
                    copies: r.plan.copies_per_window,
                    held: r.path.window.clone().into(),
                    planned: r.plan.repeats,
                    asked: r.plan.asked_repeats,
                    budget_ms: r
                        .plan
                        .budget
                        .filter(|_| r.plan.repeats < r.plan.asked_repeats)
                        .map(|b| b.as_millis() as u64),
                }),
                path: PathFacts::Swept {
                    description: r.path.description.clone().into(),
                },
                context: context.clone(),
                ..Questions::default()
            };
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
            timer: "the monotonic clock around each window",
            window: "copies one after the other on this thread".into(),
        }
    }

    fn prepare(&mut self, max_bytes: usize) -> Result<(), String> {
        // Both buffers whole and touched before any copy is timed.
        for v in [&mut self.src, &mut self.dst] {
            v.try_reserve_exact(max_bytes)
                .map_err(|e| format!("cannot allocate {max_bytes} bytes: {e}"))?;
            v.resize(max_bytes, 0);
        }
        Ok(())
    }

    fn fill(&mut self, size: usize, seed: u64) -> Result<(), String> {
        let src = self
            .src
            .get_mut(..size)
            .ok_or("fill beyond the prepared buffer")?;
        fill_pattern(src, seed);
        Ok(())
    }

    fn copy_timed(&mut self, size: usize, copies: u32) -> Result<Duration, String> {
        let t = Instant::now();
        for _ in 0..copies {
            self.dst[..size].copy_from_slice(&self.src[..size]);
            std::hint::black_box(&mut self.dst);
        }
        Ok(t.elapsed())
    }

    fn verify(&mut self, size: usize, seed: u64) -> Result<u64, String> {
        Ok(count_mismatches(&self.dst[..size], seed))
    }

    fn release(&mut self) -> Result<(), String> {
        self.src = Vec::new();
        self.dst = Vec::new();
        Ok(())
    }
}

#[cfg(test)]
mod tests;
