//! The sweep run against backends that copy one byte off, are slow in
//! reported (never real) time, or fail on a given copy.

use super::plan::tests::settings;
use super::*;
use crate::evidence::answers::Context;

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
    fn copy_timed(&mut self, s: usize, _: u32) -> Result<Duration, String> {
        self.0.dst[1..s].copy_from_slice(&self.0.src[..s - 1]);
        Ok(Duration::from_micros(1))
    }
    fn verify(&mut self, s: usize, seed: u64) -> Result<u64, String> {
        self.0.verify(s, seed)
    }
    fn release(&mut self) -> Result<(), String> {
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
    let plan = Plan::new(&settings(&[4096, 65536, 1 << 20], 1, 3, None), 1);
    let r = run(&mut HostBackend::new("test"), &plan);
    assert!(r.error.is_none());
    assert!(r.as_planned());
    assert_eq!(r.ran(), "ran 3 sizes x 3 repetitions");
    assert_eq!(r.points.len(), 3);
    assert!(
        r.points
            .iter()
            .all(|p| p.mismatched_bytes == 0 && p.times_s.len() == 3)
    );
    let c = cells(&r, "host", &Context::NotStated, false);
    assert_eq!(c.len(), 9);
    assert!(
        c.iter()
            .all(|m| m.verification == Verification::Checked { errors: 0 })
    );
    assert!(c.iter().all(|m| {
        m.iterations == Some(3)
            && m.warmup_iterations == Some(1)
            && crate::render::answers::answers(m)[4].contains("3 timed repetitions as planned")
    }));
}

#[test]
fn an_offset_copy_is_caught() {
    let plan = Plan::new(&settings(&[4096], 0, 2, None), 1);
    let r = run(&mut OffByOne(HostBackend::new("test")), &plan);
    assert!(r.points[0].mismatched_bytes > 2 * 4000);
}

/// A backend that does no work and reports times it never waited for:
/// every third copy "takes" 100 s. Counts every call.
#[derive(Default)]
struct Sluggish {
    prepared: Vec<usize>,
    fills: usize,
    copies: usize,
    verifies: usize,
    releases: usize,
    fail_at_copy: Option<usize>,
}

impl Backend for Sluggish {
    fn path(&self) -> Path {
        HostBackend::new("test").path()
    }
    fn prepare(&mut self, m: usize) -> Result<(), String> {
        self.prepared.push(m);
        Ok(())
    }
    fn fill(&mut self, _: usize, _: u64) -> Result<(), String> {
        self.fills += 1;
        Ok(())
    }
    fn copy_timed(&mut self, _: usize, _: u32) -> Result<Duration, String> {
        self.copies += 1;
        if self.fail_at_copy == Some(self.copies) {
            return Err("injected".into());
        }
        Ok(if self.copies.is_multiple_of(3) {
            Duration::from_secs(100)
        } else {
            Duration::from_micros(1)
        })
    }
    fn verify(&mut self, _: usize, _: u64) -> Result<u64, String> {
        self.verifies += 1;
        Ok(0)
    }
    fn release(&mut self) -> Result<(), String> {
        self.releases += 1;
        Ok(())
    }
}

#[test]
fn a_plan_runs_exactly_as_planned_however_slow_the_copies() {
    let plan = Plan::new(&settings(&default_sizes(), 2, 7, Some(10.0)), 1);
    assert_eq!(plan.repeats, 7, "{}", plan.describe());
    let mut b = Sluggish::default();
    let r = run(&mut b, &plan);
    assert!(r.as_planned(), "{}", r.ran());
    assert_eq!(r.ran(), "ran 9 sizes x 7 repetitions");
    assert_eq!(
        r.points.iter().map(|p| p.size).collect::<Vec<_>>(),
        default_sizes()
    );
    assert!(r.points.iter().all(|p| p.times_s.len() == 7));
    assert_eq!(b.prepared, vec![256 << 20]);
    assert_eq!((b.fills, b.copies, b.verifies, b.releases), (81, 81, 63, 1));
    assert_eq!(cells(&r, "fake", &Context::NotStated, false).len(), 27);
}

#[test]
fn an_error_stops_the_sweep_and_says_how_far_it_got() {
    let plan = Plan::new(&settings(&[4096, 65536, 1 << 20], 1, 4, None), 1);
    // Sizes take 5 copies each (1 warm-up, 4 timed): the 13th copy is
    // the 2nd timed one of 1 MiB.
    let mut b = Sluggish {
        fail_at_copy: Some(13),
        ..Default::default()
    };
    let r = run(&mut b, &plan);
    assert!(!r.as_planned());
    assert_eq!(r.error.as_deref(), Some("1048576 bytes (1 MiB): injected"));
    assert_eq!(r.ran(), "ran 2 of 3 sizes x 4 repetitions, then 1 of 1 MiB");
    assert_eq!(b.releases, 1);
    let c = cells(&r, "fake", &Context::NotStated, false);
    assert_eq!(c.len(), 9);
    assert!(
        c.iter()
            .filter(|m| m.size_bytes == Some(1 << 20))
            .all(|m| m.iterations == Some(1)
                && crate::render::answers::answers(m)[4].contains("1 of 4 planned"))
    );
}

#[test]
fn the_mean_is_the_bandwidth_of_the_mean_time_when_asked_for() {
    use crate::evidence::measurement::Statistic;
    let plan = Plan::new(&settings(&[4096], 1, 3, None), 1);
    let mut r = run(&mut Sluggish::default(), &plan);
    // Windows of 1, 2 and 6 s per copy: median 2 s, mean 3 s.
    r.points[0].times_s = vec![1.0, 6.0, 2.0];
    let c = cells(&r, "fake", &Context::NotStated, true);
    let bw = |s: Statistic| {
        c.iter()
            .find(|m| m.statistic == s)
            .and_then(|m| m.bandwidth_bytes_per_s)
            .unwrap()
    };
    assert_eq!(c.len(), 4);
    assert_eq!(bw(Statistic::Median), 4096.0 / 2.0);
    assert_eq!(bw(Statistic::Avg), 4096.0 / 3.0);
    assert_eq!(bw(Statistic::Min), 4096.0 / 6.0);
    assert_eq!(bw(Statistic::Max), 4096.0);
}

#[test]
fn patterns_are_built_once_per_size_and_seed_and_compared_exactly() {
    let mut p = Patterns::default();
    let a = p.get(1000, 0).unwrap().to_vec();
    let b = p.get(1000, 1).unwrap().to_vec();
    assert_ne!(a, b, "the two seeds of a size differ");
    // Alternating seeds hit the two built slots, not a rebuild.
    let a_again = p.get(1000, 0).unwrap().as_ptr();
    assert_eq!(a_again, p.get(1000, 0).unwrap().as_ptr());
    assert_eq!(p.get(1000, 0).unwrap(), &a[..]);
    let mut want = vec![0u8; 1000];
    fill_pattern(&mut want, 1);
    assert_eq!(b, want);
    assert_eq!(count_differences(&a, &a), 0);
    let mut one_off = a.clone();
    one_off[999] ^= 1;
    assert_eq!(count_differences(&one_off, &a), 1);
    assert_eq!(count_differences(&a[..998], &a), 2);
    // Consecutive windows alternate seeds within a size.
    assert_eq!(
        (seed_of(3, 0), seed_of(3, 1), seed_of(3, 2)),
        (3 << 32, (3 << 32) | 1, 3 << 32)
    );
}

#[test]
fn a_window_that_took_no_time_is_an_error_not_infinite_bandwidth() {
    assert!(nonzero(Duration::from_nanos(1), 16).is_ok());
    let e = nonzero(Duration::ZERO, 16).unwrap_err();
    assert!(e.contains("elapsed time of 0 ms for 16 copies"), "{e}");
}

/// A host backend that cannot have buffers over `limit` bytes (an
/// address-space limit, a GPU short of memory).
struct Capped {
    inner: HostBackend,
    limit: usize,
    asked: Vec<usize>,
}

impl Backend for Capped {
    fn path(&self) -> Path {
        self.inner.path()
    }
    fn prepare(&mut self, m: usize) -> Result<(), String> {
        self.asked.push(m);
        if m > self.limit {
            return Err(format!("cannot allocate {m} bytes"));
        }
        self.inner.prepare(m)
    }
    fn fill(&mut self, s: usize, seed: u64) -> Result<(), String> {
        self.inner.fill(s, seed)
    }
    fn copy_timed(&mut self, s: usize, k: u32) -> Result<Duration, String> {
        self.inner
            .copy_timed(s, k)
            .map(|_| Duration::from_micros(5))
    }
    fn verify(&mut self, s: usize, seed: u64) -> Result<u64, String> {
        self.inner.verify(s, seed)
    }
    fn release(&mut self) -> Result<(), String> {
        self.inner.release()
    }
}

#[test]
fn buffers_too_large_to_have_cost_only_their_sizes_not_the_sweep() {
    // Hostile turn 3, case 22: under `prlimit --as` the 256 MiB buffers
    // failed and the whole host sweep recorded nothing.
    let sizes = [4096, 65536, 1 << 20, 16 << 20];
    let plan = Plan::new(&settings(&sizes, 0, 2, None), 1);
    let mut b = Capped {
        inner: HostBackend::new("test"),
        limit: 1 << 20,
        asked: Vec::new(),
    };
    let r = run(&mut b, &plan);
    assert_eq!(
        b.asked,
        vec![16 << 20, 1 << 20],
        "largest first, then the next"
    );
    assert_eq!(
        r.points.iter().map(|p| p.size).collect::<Vec<_>>(),
        vec![4096, 65536, 1 << 20]
    );
    assert!(
        r.points
            .iter()
            .all(|p| p.times_s.len() == 2 && p.mismatched_bytes == 0)
    );
    let e = r.error.as_deref().unwrap();
    assert!(e.contains("16 MiB") && e.contains("cannot allocate"), "{e}");
    assert!(!r.as_planned());
    assert_eq!(r.ran(), "ran 3 of 4 sizes x 2 repetitions");
    // Nothing fits: no point, the first refusal told.
    let mut none = Capped {
        inner: HostBackend::new("test"),
        limit: 1,
        asked: Vec::new(),
    };
    let r = run(&mut none, &plan);
    assert!(r.points.is_empty());
    assert!(r.error.unwrap().contains("16 MiB"));
}
