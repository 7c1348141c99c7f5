//! The alpha-beta (Hockney) model of a size sweep: `t(m) = alpha + m / beta`.
//! alpha is the fixed cost of one message, beta the bandwidth it tends to.
//! In this model the size reaching half of beta (n-half) and the crossover
//! where fixed cost and transfer time are equal (m*) are the same number,
//! `alpha * beta`; both are reported, under both names.
//!
//! The fit is least squares weighted by `1 / t^2`, so each size counts by
//! its relative error: sweeps span six orders of magnitude in time, and an
//! unweighted fit would let the largest messages decide alpha alone.
//! (Hockney, "The communication challenge for MPP", Parallel Computing 20,
//! 1994, for the model; weighted least squares as in any numerical text.)
//!
//! Real sweeps have knees where the library switches protocol (eager to
//! rendezvous, LL to Simple). One straight line through a knee describes
//! neither side, so [`fit_with_knees`] splits the sweep where that lowers
//! the error decisively and reports the knees.
//!
//! A line is drawn, quoted or used only where [`judge`] finds it sound
//! ([`fit_sweep`] decides for a sweep): see `sound`.

mod sound;

use serde::Serialize;
pub use sound::{MIN_R_SQUARED, SweepFit, Unsound, UnsoundLine, fit_sweep, judge};

use super::ModelError;
use crate::evidence::Source;
use crate::evidence::measurement::{Direction, Kind, Measurement, Statistic};

/// One point of a sweep: a message size and the time one message took.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Point {
    pub size_bytes: f64,
    pub time_s: f64,
}

/// One fitted line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fit {
    pub alpha_s: f64,
    pub beta_bytes_per_s: f64,
    /// Size at which the model reaches half of beta: `alpha * beta`.
    pub n_half_bytes: f64,
    /// Size at which fixed cost equals transfer time: `alpha * beta`.
    pub m_star_bytes: f64,
    /// Weighted coefficient of determination of the times.
    pub r_squared: f64,
    /// Largest `|t_model - t| / t` over the points.
    pub max_relative_residual: f64,
    /// `(t_model - t) / t` per point, in size order.
    pub relative_residuals: Vec<f64>,
    pub from_bytes: f64,
    pub to_bytes: f64,
    pub points: usize,
}

/// A sweep fitted whole and, where it has knees, piecewise.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SegmentedFit {
    pub whole: Fit,
    /// One fit per segment between knees (just `whole` when there is no knee).
    pub segments: Vec<Fit>,
    /// The first size of each segment after the first.
    pub knees_bytes: Vec<f64>,
}

/// Fits `t = alpha + m / beta` to at least two points of distinct sizes.
pub fn fit(points: &[Point]) -> Result<Fit, ModelError> {
    let mut pts: Vec<Point> = points
        .iter()
        .copied()
        .filter(|p| {
            p.size_bytes > 0.0 && p.time_s > 0.0 && p.size_bytes.is_finite() && p.time_s.is_finite()
        })
        .collect();
    pts.sort_by(|a, b| a.size_bytes.total_cmp(&b.size_bytes));
    let distinct = pts
        .windows(2)
        .filter(|w| w[0].size_bytes != w[1].size_bytes)
        .count()
        + usize::from(!pts.is_empty());
    if distinct < 2 {
        return Err(ModelError::Undefined(format!(
            "a fit needs at least two distinct message sizes with positive times, got {distinct}"
        )));
    }
    let (mut s, mut sm, mut st, mut smm, mut smt) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for p in &pts {
        let w = 1.0 / (p.time_s * p.time_s);
        s += w;
        sm += w * p.size_bytes;
        st += w * p.time_s;
        smm += w * p.size_bytes * p.size_bytes;
        smt += w * p.size_bytes * p.time_s;
    }
    let det = s * smm - sm * sm;
    if det.abs() <= f64::EPSILON * s * smm {
        return Err(ModelError::Undefined(
            "the sizes are too close together to separate alpha from beta".into(),
        ));
    }
    let slope = (s * smt - sm * st) / det;
    let alpha = (st - slope * sm) / s;
    if slope <= 0.0 {
        return Err(ModelError::Undefined(
            "time does not grow with message size over this range: no finite bandwidth fits".into(),
        ));
    }
    let beta = 1.0 / slope;
    let mean = st / s;
    let (mut ss_res, mut ss_tot) = (0.0, 0.0);
    let mut rel = Vec::with_capacity(pts.len());
    for p in &pts {
        let w = 1.0 / (p.time_s * p.time_s);
        let model = alpha + p.size_bytes * slope;
        ss_res += w * (p.time_s - model).powi(2);
        ss_tot += w * (p.time_s - mean).powi(2);
        rel.push((model - p.time_s) / p.time_s);
    }
    let r_squared = if ss_tot > 0.0 {
        1.0 - ss_res / ss_tot
    } else {
        1.0
    };
    Ok(Fit {
        alpha_s: alpha,
        beta_bytes_per_s: beta,
        n_half_bytes: alpha * beta,
        m_star_bytes: alpha * beta,
        r_squared,
        max_relative_residual: rel.iter().fold(0.0f64, |a, r| a.max(r.abs())),
        relative_residuals: rel,
        from_bytes: pts[0].size_bytes,
        to_bytes: pts[pts.len() - 1].size_bytes,
        points: pts.len(),
    })
}

/// Weighted squared error of a fit over its points (relative errors squared).
fn sse(f: &Fit) -> f64 {
    f.relative_residuals.iter().map(|r| r * r).sum()
}

/// Smallest number of points a segment may have.
const MIN_SEGMENT: usize = 3;
/// A split is kept only when it cuts the error to this fraction or less,
/// and the whole fit misses some point by more than [`KNEE_RESIDUAL`].
const SPLIT_GAIN: f64 = 0.25;
const KNEE_RESIDUAL: f64 = 0.10;

/// Fits the whole sweep, then splits it at knees (up to `max_segments`
/// pieces) where one line misses points by more than 10 % and two lines
/// cut the squared relative error at least fourfold.
///
/// Linear in the points per knee: every candidate split of a piece is
/// scored from prefix sums ([`Sums`]) in constant time, and only the
/// chosen split is fitted in full. (Fitting both sides of every split was
/// quadratic: an 11.8 MB nccl-tests log took minutes.)
pub fn fit_with_knees(points: &[Point], max_segments: usize) -> Result<SegmentedFit, ModelError> {
    let mut pts: Vec<Point> = points
        .iter()
        .copied()
        .filter(|p| {
            p.size_bytes > 0.0 && p.time_s > 0.0 && p.size_bytes.is_finite() && p.time_s.is_finite()
        })
        .collect();
    pts.sort_by(|a, b| a.size_bytes.total_cmp(&b.size_bytes));
    let whole = fit(&pts)?;
    let mut pieces: Vec<Vec<Point>> = vec![pts];
    while pieces.len() < max_segments.max(1) {
        // Split the piece whose best split gains the most.
        let mut best: Option<(usize, usize, f64)> = None;
        for (pi, piece) in pieces.iter().enumerate() {
            let Ok(one) = fit(piece) else { continue };
            if one.max_relative_residual <= KNEE_RESIDUAL {
                continue;
            }
            let sums = Sums::prefix(piece);
            let whole_sse = sse(&one);
            for k in MIN_SEGMENT..=piece.len().saturating_sub(MIN_SEGMENT) {
                let (Some(a), Some(b)) = (
                    Sums::between(&sums, 0, k).sse(),
                    Sums::between(&sums, k, piece.len()).sse(),
                ) else {
                    continue;
                };
                let two = a + b;
                if two <= SPLIT_GAIN * whole_sse && best.is_none_or(|(_, _, g)| two / whole_sse < g)
                {
                    best = Some((pi, k, two / whole_sse));
                }
            }
        }
        let Some((pi, k, _)) = best else { break };
        let piece = pieces.remove(pi);
        let (a, b) = piece.split_at(k);
        pieces.insert(pi, b.to_vec());
        pieces.insert(pi, a.to_vec());
    }
    let segments: Vec<Fit> = pieces.iter().map(|p| fit(p)).collect::<Result<_, _>>()?;
    let knees_bytes = pieces.iter().skip(1).map(|p| p[0].size_bytes).collect();
    Ok(SegmentedFit {
        whole,
        segments,
        knees_bytes,
    })
}

/// The weighted sums [`fit`] solves with (weights `1/t^2`), over a run of
/// sorted points, and how many distinct sizes the run holds: enough to
/// give the fit's squared relative error without visiting the points.
#[derive(Debug, Clone, Copy, Default)]
struct Sums {
    n: f64,
    s: f64,
    sm: f64,
    st: f64,
    smm: f64,
    smt: f64,
    /// Points whose size differs from the previous point's; over a run,
    /// the points after its first one: distinct sizes minus one.
    new_sizes: f64,
}

impl Sums {
    /// `out[i]`: the sums over `pts[..i]`.
    fn prefix(pts: &[Point]) -> Vec<Sums> {
        let mut out = Vec::with_capacity(pts.len() + 1);
        let mut acc = Sums::default();
        out.push(acc);
        for (i, p) in pts.iter().enumerate() {
            let w = 1.0 / (p.time_s * p.time_s);
            acc.n += 1.0;
            acc.s += w;
            acc.sm += w * p.size_bytes;
            acc.st += w * p.time_s;
            acc.smm += w * p.size_bytes * p.size_bytes;
            acc.smt += w * p.size_bytes * p.time_s;
            acc.new_sizes += f64::from(u8::from(i > 0 && pts[i - 1].size_bytes != p.size_bytes));
            out.push(acc);
        }
        out
    }

    /// The sums over `pts[i..j]`, from the prefixes of `pts` (`i < j`).
    fn between(prefix: &[Sums], i: usize, j: usize) -> Sums {
        let (hi, lo) = (&prefix[j], &prefix[i]);
        Sums {
            n: hi.n - lo.n,
            s: hi.s - lo.s,
            sm: hi.sm - lo.sm,
            st: hi.st - lo.st,
            smm: hi.smm - lo.smm,
            smt: hi.smt - lo.smt,
            // Size changes inside the run: not the one at its first point.
            new_sizes: hi.new_sizes - prefix[i + 1].new_sizes,
        }
    }

    /// The squared relative error of the weighted fit over the run, or
    /// `None` where [`fit`] refuses it (fewer than two sizes, sizes too
    /// close, time not growing with size). With `w = 1/t^2`, each
    /// residual squared is `w (a + b m)^2 - 2 (a + b m) / t + 1`, and
    /// `1/t = w t`, `m/t = w m t`: all from the sums.
    fn sse(&self) -> Option<f64> {
        if self.n < 2.0 || self.new_sizes < 1.0 {
            return None;
        }
        let det = self.s * self.smm - self.sm * self.sm;
        if det.abs() <= f64::EPSILON * self.s * self.smm {
            return None;
        }
        let slope = (self.s * self.smt - self.sm * self.st) / det;
        if slope <= 0.0 {
            return None;
        }
        let a = (self.st - slope * self.sm) / self.s;
        let e = a * a * self.s + 2.0 * a * slope * self.sm + slope * slope * self.smm
            - 2.0 * a * self.st
            - 2.0 * slope * self.smt
            + self.n;
        Some(e.max(0.0))
    }
}

/// A size sweep found in a bundle: cells of one test, one pair, one
/// statistic, at three or more sizes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sweep {
    pub tool: String,
    pub kind: Kind,
    pub test: String,
    pub src: Option<String>,
    pub dst: Option<String>,
    pub direction: Direction,
    pub statistic: Statistic,
    /// Whether the times come from latency cells (`true`) or from
    /// `size / bandwidth` (`false`).
    pub from_latency: bool,
    /// The first cell of the sweep.
    pub source: Source,
    pub points: Vec<Point>,
    /// The most messages the tool kept in flight (perftest `TX depth`),
    /// where it says.
    pub queue_depth: Option<u32>,
}

impl Sweep {
    /// Whether the fit's alpha means the cost of one message. Only times
    /// of one message at a time say that; a bandwidth test that keeps
    /// many in flight (perftest's TX depth 128) overlaps the fixed costs,
    /// so its fit gives beta alone, and alpha and m* come from latency
    /// tests (seed section 5.2).
    pub fn alpha_meaningful(&self) -> bool {
        self.from_latency || self.queue_depth.is_none_or(|q| q <= 1)
    }

    /// beta of a sweep whose alpha is not meaningful: the bandwidth at its
    /// largest message (a least-squares line through a deep-queue sweep
    /// can overshoot every figure measured).
    pub fn plateau_bytes_per_s(&self) -> Option<f64> {
        self.points
            .iter()
            .max_by(|a, b| a.size_bytes.total_cmp(&b.size_bytes))
            .map(|p| p.size_bytes / p.time_s)
    }

    /// `perftest RDMA_Write BW Test mlx4_0 (avg)` for people.
    pub fn label(&self) -> String {
        let pair = match (&self.src, &self.dst) {
            (Some(s), Some(d)) => format!(" {s}->{d}"),
            (Some(s), None) => format!(" {s}"),
            _ => String::new(),
        };
        format!(
            "{} {}{pair} ({:?}, {})",
            self.tool,
            self.test,
            self.statistic,
            if self.from_latency {
                "time"
            } else {
                "bandwidth"
            }
        )
    }
}

/// The sweeps in `cells`: for each test and pair, one series, preferring
/// times the tool measured (latency cells: average, then typical) over
/// times derived from bandwidth (average, then algbw). Peaks, busbw and
/// percentiles are not fitted.
pub fn sweeps(cells: &[Measurement]) -> Vec<Sweep> {
    use std::collections::BTreeMap;
    type Key = (
        String,
        String,
        String,
        Option<String>,
        Option<String>,
        Direction,
    );
    let mut groups: BTreeMap<Key, Vec<&Measurement>> = BTreeMap::new();
    for m in cells {
        if m.size_bytes.is_none_or(|s| s == 0) {
            continue;
        }
        let key = (
            m.source.file.to_string(),
            m.tool.to_string(),
            m.test.to_string(),
            m.src.as_ref().map(|s| s.to_string()),
            m.dst.as_ref().map(|s| s.to_string()),
            m.direction,
        );
        groups.entry(key).or_default().push(m);
    }
    let preference: [(bool, Statistic); 4] = [
        (true, Statistic::Avg),
        (true, Statistic::Typical),
        (false, Statistic::Avg),
        (false, Statistic::Algbw),
    ];
    let mut out = Vec::new();
    for ((_, tool, test, src, dst, direction), ms) in groups {
        for (lat, stat) in preference {
            let series: Vec<&&Measurement> = ms
                .iter()
                .filter(|m| {
                    m.statistic == stat
                        && if lat {
                            m.latency_s.is_some()
                        } else {
                            m.bandwidth_bytes_per_s.is_some()
                        }
                })
                .collect();
            let mut sizes: Vec<u64> = series.iter().filter_map(|m| m.size_bytes).collect();
            sizes.sort_unstable();
            sizes.dedup();
            if sizes.len() < 3 {
                continue;
            }
            let points = series
                .iter()
                .filter_map(|m| {
                    let size = m.size_bytes? as f64;
                    let time = if lat {
                        m.latency_s?
                    } else {
                        size / m.bandwidth_bytes_per_s.filter(|b| *b > 0.0)?
                    };
                    Some(Point {
                        size_bytes: size,
                        time_s: time,
                    })
                })
                .collect();
            out.push(Sweep {
                tool,
                kind: series[0].kind,
                test,
                src,
                dst,
                direction,
                statistic: stat,
                from_latency: lat,
                source: series[0].source.clone(),
                points,
                queue_depth: series.iter().filter_map(|m| m.queue_depth).max(),
            });
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synthetic(alpha: f64, beta: f64, sizes: &[f64]) -> Vec<Point> {
        sizes
            .iter()
            .map(|&m| Point {
                size_bytes: m,
                time_s: alpha + m / beta,
            })
            .collect()
    }

    #[test]
    fn recovers_alpha_and_beta_from_noiseless_data() {
        let sizes: Vec<f64> = (0..24).map(|i| f64::from(1u32 << i)).collect();
        let f = fit(&synthetic(2e-6, 12.5e9, &sizes)).unwrap();
        assert!((f.alpha_s - 2e-6).abs() < 1e-15, "{}", f.alpha_s);
        assert!(
            (f.beta_bytes_per_s - 12.5e9).abs() / 12.5e9 < 1e-12,
            "{}",
            f.beta_bytes_per_s
        );
        assert!((f.m_star_bytes - 25_000.0).abs() < 1e-6);
        assert_eq!(f.n_half_bytes, f.m_star_bytes);
        assert!(f.r_squared > 1.0 - 1e-12);
        assert!(f.max_relative_residual < 1e-12);
    }

    #[test]
    fn finds_the_knee_between_two_regimes() {
        // Eager below 64 KiB (alpha 1 us, 5 GB/s), rendezvous above (alpha 20 us, 12 GB/s).
        let mut pts = synthetic(
            1e-6,
            5e9,
            &(4..16).map(|i| f64::from(1u32 << i)).collect::<Vec<_>>(),
        );
        pts.extend(synthetic(
            20e-6,
            12e9,
            &(16..27).map(|i| f64::from(1u32 << i)).collect::<Vec<_>>(),
        ));
        let s = fit_with_knees(&pts, 3).unwrap();
        assert_eq!(s.knees_bytes, vec![65536.0]);
        assert!((s.segments[0].beta_bytes_per_s - 5e9).abs() / 5e9 < 1e-9);
        assert!((s.segments[1].alpha_s - 20e-6).abs() < 1e-12);
        // A straight line needs no knee.
        let s = fit_with_knees(&synthetic(1e-6, 5e9, &[1e3, 1e4, 1e5, 1e6, 1e7, 1e8]), 3).unwrap();
        assert!(s.knees_bytes.is_empty());
    }

    #[test]
    fn the_error_from_sums_is_the_error_of_the_fit() {
        // Two regimes with a wobble, and repeated sizes.
        let mut pts: Vec<Point> = (0..40)
            .map(|i| {
                let m = f64::from(1u32 << (i / 2));
                let t = if i < 20 {
                    1e-6 + m / 5e9
                } else {
                    2e-5 + m / 12e9
                };
                Point {
                    size_bytes: m,
                    time_s: t * (1.0 + 0.03 * f64::from(i % 3) - 0.03),
                }
            })
            .collect();
        pts.sort_by(|a, b| a.size_bytes.total_cmp(&b.size_bytes));
        let sums = Sums::prefix(&pts);
        for i in 0..pts.len() {
            for j in i + 1..=pts.len() {
                let quick = Sums::between(&sums, i, j).sse();
                match fit(&pts[i..j]) {
                    Ok(f) => {
                        let q = quick.expect("fit accepts, sums refuse");
                        assert!(
                            (q - sse(&f)).abs() <= 1e-9 + 1e-6 * sse(&f),
                            "{i}..{j}: {q} vs {}",
                            sse(&f)
                        );
                    }
                    Err(_) => assert!(quick.is_none(), "{i}..{j}"),
                }
            }
        }
    }

    #[test]
    fn a_long_sweep_is_split_in_linear_time() {
        // 200,000 points: a quadratic search would fit 4e10 points here.
        let sizes: Vec<f64> = (0..200_000).map(|i| 64.0 + f64::from(i) * 64.0).collect();
        let (lo, hi) = sizes.split_at(100_000);
        let mut pts = synthetic(1e-6, 5e9, lo);
        pts.extend(synthetic(30e-6, 20e9, hi));
        let s = fit_with_knees(&pts, 3).unwrap();
        assert_eq!(s.knees_bytes.first().copied(), Some(hi[0]));
    }

    #[test]
    fn refuses_what_cannot_be_fitted() {
        assert!(
            fit(&[Point {
                size_bytes: 8.0,
                time_s: 1e-6
            }])
            .is_err()
        );
        let flat = synthetic(1e-6, 1e9, &[1.0, 2.0, 4.0])
            .iter()
            .map(|p| Point {
                time_s: 5e-6 - p.size_bytes * 1e-9,
                ..*p
            })
            .collect::<Vec<_>>();
        assert!(
            fit(&flat)
                .unwrap_err()
                .to_string()
                .contains("does not grow")
        );
    }

    #[test]
    fn a_deep_queue_bandwidth_sweep_gives_beta_only() {
        use crate::evidence::measurement::Kind;
        let cells: Vec<Measurement> = [1024u64, 65536, 8 << 20]
            .iter()
            .zip([1.0e9, 3.5e9, 3.84e9])
            .map(|(&size, bw)| {
                let mut m = Measurement::new("perftest", 18, Kind::RdmaWrite, "bw", Statistic::Avg);
                m.size_bytes = Some(size);
                m.bandwidth_bytes_per_s = Some(bw);
                m.queue_depth = Some(128);
                m
            })
            .collect();
        let s = &sweeps(&cells)[0];
        assert!(!s.alpha_meaningful());
        assert_eq!(s.plateau_bytes_per_s(), Some(3.84e9));
        let one: Vec<Measurement> = cells
            .into_iter()
            .map(|mut m| {
                m.queue_depth = Some(1);
                m
            })
            .collect();
        assert!(sweeps(&one)[0].alpha_meaningful());
    }
}
