//! Whether a fitted line may be drawn, quoted or used: the one place that
//! judges a fit.
//!
//! Least squares always returns a line, even through points no straight
//! line describes. Real captures gave alpha −657 µs, m* −9.9 MB and R² of
//! 0.05 to 0.28: a negative fixed cost is not a cost, and a line that
//! explains a quarter of the variance does not describe the sweep. Such a
//! fit is *unsound*: the chart draws no line for it, the page quotes no
//! alpha, beta or m* from it as a model result, and no rule reads it. The
//! reasons are facts ([`Unsound`]); render chooses the sentence.
//!
//! A segmented fit is judged by the lines it draws (its segments, which
//! are the whole fit when it has no knee): one unsound segment makes the
//! whole picture unsound, since the segments only mean something together.

use serde::Serialize;

use super::{SegmentedFit, Sweep, fit_with_knees};
use crate::models::ModelError;

/// Below this R² the line does not describe its points. 0.9 is a plain
/// threshold, not a statistical test (issue 26). R² also falls on a flat
/// segment (small-message latencies), where the line is alpha alone and
/// there is little variance to explain: such a segment is not drawn either.
pub const MIN_R_SQUARED: f64 = 0.9;

/// Why one fitted line is not sound.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
pub enum Unsound {
    /// beta is not a finite positive bandwidth.
    NoBandwidth { beta_bytes_per_s: f64 },
    /// A message would cost less than nothing; m* (`alpha * beta`) is
    /// then negative too.
    NegativeAlpha { alpha_s: f64, m_star_bytes: f64 },
    /// m* (= n-half) is negative or not finite while alpha is not negative.
    NegativeMStar { m_star_bytes: f64 },
    /// The line explains too little of the variance of the times (or R² is
    /// not a number).
    LowRSquared { r_squared: f64 },
}

/// Every reason `f` is not sound; empty when it is sound.
pub fn judge(f: &super::Fit) -> Vec<Unsound> {
    let mut out = Vec::new();
    let beta = f.beta_bytes_per_s;
    if !(beta.is_finite() && beta > 0.0) {
        out.push(Unsound::NoBandwidth {
            beta_bytes_per_s: beta,
        });
    }
    if f.alpha_s < 0.0 {
        out.push(Unsound::NegativeAlpha {
            alpha_s: f.alpha_s,
            m_star_bytes: f.m_star_bytes,
        });
    } else if !(f.m_star_bytes.is_finite() && f.m_star_bytes >= 0.0 && f.n_half_bytes >= 0.0) {
        out.push(Unsound::NegativeMStar {
            m_star_bytes: f.m_star_bytes,
        });
    }
    // A NaN R² is not sound either.
    if f.r_squared.is_nan() || f.r_squared < MIN_R_SQUARED {
        out.push(Unsound::LowRSquared {
            r_squared: f.r_squared,
        });
    }
    out
}

/// A reason one drawn line of a segmented fit is not sound, with the
/// sizes the line spans.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct UnsoundLine {
    pub from_bytes: f64,
    pub to_bytes: f64,
    pub why: Unsound,
}

impl SegmentedFit {
    /// The reasons the lines this fit draws (its segments) are not sound;
    /// empty when every one is sound.
    pub fn unsound(&self) -> Vec<UnsoundLine> {
        self.segments
            .iter()
            .flat_map(|g| {
                judge(g).into_iter().map(|why| UnsoundLine {
                    from_bytes: g.from_bytes,
                    to_bytes: g.to_bytes,
                    why,
                })
            })
            .collect()
    }
}

/// What a sweep supports, decided once for the chart, the CLI and any rule.
#[derive(Debug, Clone, PartialEq)]
pub enum SweepFit {
    /// Sound lines: alpha, beta and m* of every segment may be drawn and quoted.
    Sound(SegmentedFit),
    /// Many messages in flight ([`Sweep::alpha_meaningful`]): beta is the
    /// largest message's bandwidth, measured; the line gives only its knees.
    BetaOnly {
        plateau_bytes_per_s: f64,
        queue_depth: u32,
        knees_bytes: Vec<f64>,
    },
    /// A line was fitted but is not sound: not drawn, not quoted as a
    /// model result, not used. The fit is kept for the CLI's numbers.
    Unsound {
        fit: SegmentedFit,
        why: Vec<UnsoundLine>,
    },
    /// No line can be fitted.
    NoFit(ModelError),
}

impl SweepFit {
    /// The lines that may be drawn: none unless the fit is sound.
    pub fn sound(&self) -> Option<&SegmentedFit> {
        match self {
            SweepFit::Sound(f) => Some(f),
            _ => None,
        }
    }
}

/// Fits `s` with up to `max_segments` pieces and judges the result.
pub fn fit_sweep(s: &Sweep, max_segments: usize) -> SweepFit {
    let f = match fit_with_knees(&s.points, max_segments) {
        Ok(f) => f,
        Err(e) => return SweepFit::NoFit(e),
    };
    if !s.alpha_meaningful() {
        return SweepFit::BetaOnly {
            plateau_bytes_per_s: s.plateau_bytes_per_s().unwrap_or(0.0),
            queue_depth: s.queue_depth.unwrap_or_default(),
            knees_bytes: f.knees_bytes,
        };
    }
    let why = f.unsound();
    if why.is_empty() {
        SweepFit::Sound(f)
    } else {
        SweepFit::Unsound { fit: f, why }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Point, fit};
    use super::*;
    use crate::evidence::Source;
    use crate::evidence::measurement::{Direction, Kind, Statistic};

    fn sweep(points: Vec<Point>) -> Sweep {
        Sweep {
            tool: "osu".into(),
            kind: Kind::MpiPt2pt,
            test: "osu_latency".into(),
            src: None,
            dst: None,
            direction: Direction::Uni,
            statistic: Statistic::Avg,
            from_latency: true,
            source: Source::line(1),
            points,
            queue_depth: None,
        }
    }

    fn points(times: &[(f64, f64)]) -> Vec<Point> {
        times
            .iter()
            .map(|&(size_bytes, time_s)| Point { size_bytes, time_s })
            .collect()
    }

    #[test]
    fn a_clean_line_is_sound() {
        let pts: Vec<(f64, f64)> = (0..20)
            .map(|i| {
                let m = f64::from(1u32 << i);
                (m, 2e-6 + m / 10e9)
            })
            .collect();
        let f = fit(&points(&pts)).unwrap();
        assert!(judge(&f).is_empty(), "{:?}", judge(&f));
        assert!(matches!(
            fit_sweep(&sweep(points(&pts)), 3),
            SweepFit::Sound(_)
        ));
    }

    #[test]
    fn a_negative_alpha_is_not_sound() {
        // Time grows faster than size at the small end: the line crosses
        // zero time at a positive size, so alpha comes out negative.
        let f = fit(&points(&[
            (1e3, 1e-7),
            (1e4, 1e-6),
            (1e5, 2e-5),
            (1e6, 2e-4),
        ]))
        .unwrap();
        assert!(f.alpha_s < 0.0, "{}", f.alpha_s);
        let why = judge(&f);
        assert!(
            why.iter().any(
                |u| matches!(u, Unsound::NegativeAlpha { alpha_s, m_star_bytes }
                if *alpha_s < 0.0 && *m_star_bytes < 0.0)
            ),
            "{why:?}"
        );
    }

    #[test]
    fn a_low_r_squared_is_not_sound_and_is_not_drawn() {
        // Times that jump about with size: no line describes them.
        let pts = points(&[
            (1e3, 9e-6),
            (2e3, 1e-6),
            (4e3, 8e-6),
            (8e3, 1.5e-6),
            (16e3, 9e-6),
            (32e3, 2e-6),
            (64e3, 1.2e-5),
        ]);
        let f = fit(&pts).unwrap();
        assert!(f.r_squared < MIN_R_SQUARED, "{}", f.r_squared);
        assert!(judge(&f).contains(&Unsound::LowRSquared {
            r_squared: f.r_squared
        }));
        let judged = fit_sweep(&sweep(pts), 3);
        assert!(judged.sound().is_none());
        match judged {
            SweepFit::Unsound { why, .. } => assert!(
                why.iter()
                    .any(|w| matches!(w.why, Unsound::LowRSquared { .. }))
            ),
            other => panic!("judged {other:?}"),
        }
    }

    #[test]
    fn a_bad_beta_or_negative_m_star_is_not_sound() {
        let mut f = fit(&points(&[(1e3, 1e-6), (1e4, 2e-6), (1e5, 1.2e-5)])).unwrap();
        f.beta_bytes_per_s = f64::INFINITY;
        f.m_star_bytes = f64::INFINITY;
        let why = judge(&f);
        assert!(matches!(why[0], Unsound::NoBandwidth { .. }), "{why:?}");
        assert!(matches!(why[1], Unsound::NegativeMStar { .. }), "{why:?}");
    }

    #[test]
    fn a_deep_queue_sweep_is_beta_only_whatever_its_line() {
        let mut s = sweep(points(&[
            (1e3, 1e-7),
            (1e4, 1e-6),
            (1e5, 2e-5),
            (1e6, 2e-4),
        ]));
        s.from_latency = false;
        s.queue_depth = Some(128);
        assert!(matches!(
            fit_sweep(&s, 3),
            SweepFit::BetaOnly {
                queue_depth: 128,
                ..
            }
        ));
    }
}
