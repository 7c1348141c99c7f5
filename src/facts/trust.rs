//! A trust grade for every figure (the seed text, section 5.2): how far
//! the transcript lets a reader rest a conclusion on one measurement.
//!
//! Each figure gets reasons, facts and numbers with no prose (render words
//! them, `render::trust`), and each reason caps the grade at A, B or C
//! ([`TrustReason::caps`]); the grade is the lowest cap. The rule:
//!
//! - **C**, do not rest a conclusion on it: the tool's data check failed or
//!   counted wrong values; the unit or the direction is not stated; a
//!   bandwidth figure has no message size and its tool has no fixed one;
//!   or, in a sweep of the same test, pair, direction and statistic, the
//!   figure's size is below the size of the sweep's best and it reaches
//!   less than half of that best (far from saturation).
//! - **B**, sound but not fully answered: warm-up, operations in flight,
//!   the path or the repetitions not stated, or no warm-up; no data check
//!   stated, or the tool says it did not check; one timed run; repetitions
//!   whose slowest is over 1.25x the fastest; a size below the sweep's best
//!   at 50 to 90 % of it, or past the best and fallen below 90 % of it; a
//!   single size under 1 MiB for a bandwidth test; a size the transcript
//!   does not print but the tool fixes; a figure averaged over a sweep.
//! - **A** otherwise: every question but the last answered, the data
//!   checked with no wrong values, warmed up, repeated, and at saturation.
//!   "What else was running" is listed when not stated but does not lower
//!   the grade: none of the tools read here prints it, and asking it of A
//!   would leave no A at all.
//!
//! Facts only: the grade is a judgement of the evidence, not of the
//! hardware; the diagnosis decides what a weak figure may still say.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::bundle::Bundle;
use crate::evidence::answers::{Context, MessageSize, Outstanding, Path, Unit};
use crate::evidence::measurement::{Direction, Measurement, Statistic, Verification};

/// How far a figure can be trusted; `A < B < C`, so the worst is the max.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Grade {
    A,
    B,
    C,
}

/// The seven questions, for the ones a transcript leaves open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Question {
    Unit,
    Direction,
    MessageSize,
    WarmUp,
    Outstanding,
    Path,
    Context,
}

/// One fact that raises or lowers the trust in a figure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
pub enum TrustReason {
    // Caps at C.
    /// `Checked` with wrong values, or `Failed` (no count printed).
    DataCheckFailed {
        wrong: Option<u64>,
    },
    UnitNotStated,
    DirectionNotStated,
    /// A bandwidth figure with no message size, from a tool with no fixed one.
    SizeNotStated,
    /// Below the size of its sweep's best and under half of that best.
    FarFromSaturation {
        size_bytes: u64,
        fraction_of_best: f64,
    },
    // Caps at B (or A for `Unanswered(Question::Context)`).
    /// A question the transcript leaves open (the ones not above).
    Unanswered(Question),
    /// The size is not printed; the tool copies a fixed buffer this large
    /// unless told otherwise.
    SizeToolDefault {
        bytes: u64,
    },
    /// The size is not printed; the figure is the best over the tool's sizes.
    SizeToolPeak,
    /// The figure averages every size of a sweep.
    SweepAverage,
    /// The tool says it ran no warm-up iterations.
    NoWarmUp,
    /// The tool says it did not check the data.
    NotVerified,
    VerificationNotStated,
    /// One timed run (`iterations` 1, or a `Single` statistic).
    SingleRun,
    RepeatsNotStated,
    /// The slowest repetition over the fastest, above [`WIDE_SPREAD`].
    WideSpread {
        ratio: f64,
    },
    /// Below the size of its sweep's best at 50 to 90 % of it, or past it
    /// and fallen under 90 %.
    BelowSaturation {
        size_bytes: u64,
        fraction_of_best: f64,
    },
    /// The only size of a bandwidth test, under [`SATURATING_SIZE_BYTES`].
    SmallSingleSize {
        size_bytes: u64,
    },
    // Caps at A: what holds the figure up.
    DataChecked,
    WarmedUp {
        iterations: u64,
    },
    Repeated {
        iterations: u64,
    },
    NarrowSpread {
        ratio: f64,
    },
    Saturated {
        size_bytes: u64,
        fraction_of_best: f64,
    },
    LargeSingleSize {
        size_bytes: u64,
    },
}

/// A sweep point at this fraction of the sweep's best, or more, is saturated.
pub const SATURATED: f64 = 0.9;
/// Below this fraction of the best, a point is far from saturation.
pub const FAR_FROM_SATURATION: f64 = 0.5;
/// A single-size bandwidth figure under this size is not known to saturate.
pub const SATURATING_SIZE_BYTES: u64 = 1 << 20;
/// Slowest over fastest repetition above this: the figure wanders.
pub const WIDE_SPREAD: f64 = 1.25;

impl TrustReason {
    /// The best grade a figure with this reason can have.
    pub fn caps(&self) -> Grade {
        use TrustReason::*;
        match self {
            DataCheckFailed { .. }
            | UnitNotStated
            | DirectionNotStated
            | SizeNotStated
            | FarFromSaturation { .. } => Grade::C,
            Unanswered(Question::Context) => Grade::A,
            Unanswered(_)
            | SizeToolDefault { .. }
            | SizeToolPeak
            | SweepAverage
            | NoWarmUp
            | NotVerified
            | VerificationNotStated
            | SingleRun
            | RepeatsNotStated
            | WideSpread { .. }
            | BelowSaturation { .. }
            | SmallSingleSize { .. } => Grade::B,
            DataChecked
            | WarmedUp { .. }
            | Repeated { .. }
            | NarrowSpread { .. }
            | Saturated { .. }
            | LargeSingleSize { .. } => Grade::A,
        }
    }
}

/// The grade of one figure and every reason for it, worst first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trust {
    pub grade: Grade,
    pub reasons: Vec<TrustReason>,
}

impl Trust {
    /// The grade the reasons allow, the reasons ordered worst first (in
    /// their order otherwise).
    pub fn from_reasons(mut reasons: Vec<TrustReason>) -> Trust {
        reasons.sort_by_key(|r| std::cmp::Reverse(r.caps()));
        let grade = reasons
            .iter()
            .map(TrustReason::caps)
            .max()
            .unwrap_or(Grade::A);
        Trust { grade, reasons }
    }

    /// Graded C: no finding may rest on it above info.
    pub fn is_weak(&self) -> bool {
        self.grade == Grade::C
    }
}

/// What a figure's sweep says about its size (see [`saturation`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SweepPlace {
    pub size_bytes: u64,
    /// Distinct sizes in the sweep (1: a single-size figure).
    pub sizes: usize,
    pub best_bytes_per_s: f64,
    pub best_size_bytes: u64,
}

/// The grade of every figure of `b`, index for index with `b.measurements`.
pub fn grades(b: &Bundle) -> Vec<Trust> {
    let places = saturation(&b.measurements);
    let spreads = spreads(&b.measurements);
    b.measurements
        .iter()
        .zip(places)
        .zip(spreads)
        .map(|((m, place), spread)| grade(m, place, spread))
        .collect()
}

/// The grade of one figure, given its place in its sweep (bandwidth
/// figures with a size) and the spread of its repetitions (slowest over
/// fastest, where the tool printed both).
pub fn grade(m: &Measurement, place: Option<SweepPlace>, spread: Option<f64>) -> Trust {
    let mut r = Vec::new();
    let q = &m.questions;
    let legacy = &q.legacy;
    let bandwidth = m.bandwidth_bytes_per_s.is_some();
    match m.verification {
        Verification::Checked { errors: 0 } => r.push(TrustReason::DataChecked),
        Verification::Checked { errors } => r.push(TrustReason::DataCheckFailed {
            wrong: Some(errors),
        }),
        Verification::Failed => r.push(TrustReason::DataCheckFailed { wrong: None }),
        Verification::NotVerified => r.push(TrustReason::NotVerified),
        Verification::Unknown => r.push(TrustReason::VerificationNotStated),
    }
    if q.unit == Unit::NotStated && legacy.unit.is_none() {
        r.push(TrustReason::UnitNotStated);
    }
    if m.direction == Direction::NotStated {
        r.push(TrustReason::DirectionNotStated);
    }
    r.extend(size(m, bandwidth, place));
    match m.warmup_iterations {
        Some(0) => r.push(TrustReason::NoWarmUp),
        Some(n) => r.push(TrustReason::WarmedUp { iterations: n }),
        None if legacy.warm_up.is_none() => r.push(TrustReason::Unanswered(Question::WarmUp)),
        None => {}
    }
    let open = [
        (
            Question::Outstanding,
            q.outstanding == Outstanding::NotStated && legacy.outstanding.is_none(),
        ),
        (
            Question::Path,
            q.path == Path::NotStated && legacy.path.is_none(),
        ),
        (
            Question::Context,
            q.context == Context::NotStated && legacy.context.is_none(),
        ),
    ];
    r.extend(
        open.into_iter()
            .filter(|(_, open)| *open)
            .map(|(q, _)| TrustReason::Unanswered(q)),
    );
    match m.iterations {
        _ if m.statistic == Statistic::Single => r.push(TrustReason::SingleRun),
        Some(1) => r.push(TrustReason::SingleRun),
        Some(n) => r.push(TrustReason::Repeated { iterations: n }),
        None => r.push(TrustReason::RepeatsNotStated),
    }
    match spread {
        Some(ratio) if ratio > WIDE_SPREAD => r.push(TrustReason::WideSpread { ratio }),
        Some(ratio) => r.push(TrustReason::NarrowSpread { ratio }),
        None => {}
    }
    Trust::from_reasons(r)
}

/// The size's reasons: stated or not, and for a bandwidth figure whether
/// it reached saturation.
fn size(m: &Measurement, bandwidth: bool, place: Option<SweepPlace>) -> Option<TrustReason> {
    if m.questions.message_size == MessageSize::SweepAverage {
        return Some(TrustReason::SweepAverage);
    }
    let Some(size_bytes) = m.size_bytes else {
        return Some(if !bandwidth {
            TrustReason::Unanswered(Question::MessageSize)
        } else if let Some(bytes) = tool_buffer_bytes(m.tool.as_str()) {
            TrustReason::SizeToolDefault { bytes }
        } else if m.tool.as_str() == "rocm-bandwidth-test" && m.statistic == Statistic::Peak {
            TrustReason::SizeToolPeak
        } else {
            TrustReason::SizeNotStated
        });
    };
    let p = place?;
    if p.sizes < 2 {
        return Some(if size_bytes < SATURATING_SIZE_BYTES {
            TrustReason::SmallSingleSize { size_bytes }
        } else {
            TrustReason::LargeSingleSize { size_bytes }
        });
    }
    let fraction_of_best = m.bandwidth_bytes_per_s.unwrap_or(0.0) / p.best_bytes_per_s;
    Some(if fraction_of_best >= SATURATED {
        TrustReason::Saturated {
            size_bytes,
            fraction_of_best,
        }
    } else if size_bytes < p.best_size_bytes && fraction_of_best < FAR_FROM_SATURATION {
        TrustReason::FarFromSaturation {
            size_bytes,
            fraction_of_best,
        }
    } else {
        TrustReason::BelowSaturation {
            size_bytes,
            fraction_of_best,
        }
    })
}

/// The buffer a copy tool moves when its transcript prints no size:
/// nvbandwidth's `--bufferSize` defaults to 67108864 bytes (its README's
/// option list; later releases default larger), and
/// p2pBandwidthLatencyTest copies `numElems = 10000000` ints, 40,000,000
/// bytes, with no option to change it (cuda-samples,
/// `p2pBandwidthLatencyTest.cu`).
pub fn tool_buffer_bytes(tool: &str) -> Option<u64> {
    match tool {
        "nvbandwidth" => Some(64 << 20),
        "p2pBandwidthLatencyTest" => Some(40_000_000),
        _ => None,
    }
}

/// Each bandwidth figure's place in its sweep: the figures of one
/// transcript, tool, test, pair, direction and statistic with a size
/// (standard deviations and sweep averages left out), and their best.
fn saturation(cells: &[Measurement]) -> Vec<Option<SweepPlace>> {
    type Key<'a> = (
        &'a str,
        &'a str,
        &'a str,
        Option<&'a str>,
        Option<&'a str>,
        Direction,
        Statistic,
    );
    let mut sweeps: BTreeMap<Key<'_>, (Vec<u64>, f64, u64)> = BTreeMap::new();
    let keyed: Vec<Option<(Key<'_>, u64)>> = cells
        .iter()
        .map(|m| {
            // A printed 0.00 (8 bytes in GB/s) belongs to the sweep too.
            let bw = m.bandwidth_bytes_per_s.filter(|b| *b >= 0.0)?;
            let size = m.size_bytes.filter(|s| *s > 0)?;
            if m.statistic == Statistic::Stdev
                || m.questions.message_size == MessageSize::SweepAverage
            {
                return None;
            }
            let k: Key<'_> = (
                m.source.file.as_str(),
                m.tool.as_str(),
                m.test.as_str(),
                m.src.as_deref(),
                m.dst.as_deref(),
                m.direction,
                m.statistic,
            );
            let e = sweeps.entry(k).or_insert((Vec::new(), 0.0, 0));
            e.0.push(size);
            if bw > e.1 || (bw == e.1 && size < e.2) {
                e.1 = bw;
                e.2 = size;
            }
            Some((k, size))
        })
        .collect();
    for (sizes, _, _) in sweeps.values_mut() {
        sizes.sort_unstable();
        sizes.dedup();
    }
    keyed
        .into_iter()
        .map(|k| {
            let (k, size_bytes) = k?;
            let (sizes, best, best_size) = &sweeps[&k];
            if *best <= 0.0 {
                return None;
            }
            Some(SweepPlace {
                size_bytes,
                sizes: sizes.len(),
                best_bytes_per_s: *best,
                best_size_bytes: *best_size,
            })
        })
        .collect()
}

/// What figures share a spread: one transcript, tool, test, pair,
/// direction and size, latency or bandwidth.
type SpreadKey<'a> = (
    &'a str,
    &'a str,
    &'a str,
    Option<&'a str>,
    Option<&'a str>,
    Direction,
    Option<u64>,
    bool,
);

fn spread_key(m: &Measurement) -> SpreadKey<'_> {
    (
        m.source.file.as_str(),
        m.tool.as_str(),
        m.test.as_str(),
        m.src.as_deref(),
        m.dst.as_deref(),
        m.direction,
        m.size_bytes,
        m.latency_s.is_some(),
    )
}

/// The spread of each figure's repetitions: where the tool printed the
/// slowest and fastest of the same test, pair, direction and size (`Min`
/// and `Max` cells), the larger over the smaller, for every figure of
/// that group.
fn spreads(cells: &[Measurement]) -> Vec<Option<f64>> {
    let mut ends: BTreeMap<SpreadKey<'_>, (Option<f64>, Option<f64>)> = BTreeMap::new();
    for m in cells {
        if !matches!(m.statistic, Statistic::Min | Statistic::Max) {
            continue;
        }
        let Some(v) = m.latency_s.or(m.bandwidth_bytes_per_s).filter(|v| *v > 0.0) else {
            continue;
        };
        let e = ends.entry(spread_key(m)).or_default();
        if m.statistic == Statistic::Min {
            e.0 = Some(v);
        } else {
            e.1 = Some(v);
        }
    }
    cells
        .iter()
        .map(|m| match ends.get(&spread_key(m))? {
            (Some(lo), Some(hi)) => Some(lo.max(*hi) / lo.min(*hi)),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests;
