//! What a fit or a figure can be trusted for, in words: the sentences for
//! an unsound alpha-beta fit ([`crate::models::fit::Unsound`]) and for the
//! trust grade of a figure ([`crate::facts::trust`]). The judging is done
//! there; this module only writes.

use crate::facts::trust::{Grade, Question, Trust, TrustReason};
use crate::models::fit::{MIN_R_SQUARED, Unsound, UnsoundLine};
use crate::render::format::{bytes, gbs, percent, r_squared, secs, size_short};

/// Why one line is not sound.
pub fn unsound(u: &Unsound) -> String {
    match *u {
        Unsound::NoBandwidth { beta_bytes_per_s } => {
            format!("beta {} is not a positive bandwidth", gbs(beta_bytes_per_s))
        }
        Unsound::NegativeAlpha {
            alpha_s,
            m_star_bytes,
        } => format!(
            "alpha {} and m* {} are negative: a message cannot cost less than nothing",
            secs(alpha_s),
            size_short(m_star_bytes)
        ),
        Unsound::NegativeMStar { m_star_bytes } => {
            format!("m* {} is not a positive size", size_short(m_star_bytes))
        }
        Unsound::LowRSquared { r_squared: r } => format!(
            "R² {} is below {}, the line does not describe these points",
            r_squared(r),
            r_squared(MIN_R_SQUARED)
        ),
    }
}

/// The note in place of an unsound fit: `No alpha-beta fit drawn: ...`.
pub fn unsound_fit(why: &[UnsoundLine], segments: usize) -> String {
    format!("No alpha-beta fit drawn: {}.", unsound_lines(why, segments))
}

/// Every reason of an unsound fit, naming each segment's sizes when the
/// fit has more than one.
pub fn unsound_lines(why: &[UnsoundLine], segments: usize) -> String {
    let parts: Vec<String> = why
        .iter()
        .map(|w| {
            if segments > 1 {
                format!(
                    "{} to {}: {}",
                    size_short(w.from_bytes),
                    size_short(w.to_bytes),
                    unsound(&w.why)
                )
            } else {
                unsound(&w.why)
            }
        })
        .collect();
    parts.join("; ")
}

/// `A`, `B` or `C`.
pub fn letter(g: Grade) -> &'static str {
    match g {
        Grade::A => "A",
        Grade::B => "B",
        Grade::C => "C",
    }
}

/// The one-line legend of the grades.
pub const LEGEND: &str = "Trust grades: A = the transcript answers what the figure means (unit, direction, size, warm-up, repeats, path), the data was checked and the size reached saturation; B = sound but some of that is not stated; C = do not rest a conclusion on it (data check failed, unit or direction unknown, no message size, or far below the bandwidth the same sweep reaches).";

/// The name of a question as a reason uses it.
fn question(q: Question) -> &'static str {
    match q {
        Question::Unit => "bytes or bits",
        Question::Direction => "direction",
        Question::MessageSize => "message size",
        Question::WarmUp => "warm-up",
        Question::Outstanding => "operations in flight",
        Question::Path => "path",
        Question::Context => "what else was running",
    }
}

/// One reason in words.
pub fn reason(r: &TrustReason) -> String {
    match *r {
        TrustReason::DataCheckFailed { wrong: Some(n) } => {
            format!("the tool's data check counted {n} wrong values")
        }
        TrustReason::DataCheckFailed { wrong: None } => "the tool's data check failed".into(),
        TrustReason::UnitNotStated => "the unit is not stated (bytes or bits?)".into(),
        TrustReason::DirectionNotStated => {
            "the direction is not stated (one way or both summed?)".into()
        }
        TrustReason::SizeNotStated => "a bandwidth with no message size".into(),
        TrustReason::FarFromSaturation {
            size_bytes,
            fraction_of_best,
        } => format!(
            "at {} the sweep is far from saturation: {} of its best",
            size_short(size_bytes as f64),
            percent(fraction_of_best)
        ),
        TrustReason::Unanswered(q) => format!("{}: not stated", question(q)),
        TrustReason::SizeToolDefault { bytes: b } => format!(
            "size not printed; the tool copies a fixed buffer of {} by default",
            bytes(b as f64)
        ),
        TrustReason::SizeToolPeak => {
            "size not printed; the figure is the best over the tool's own sizes".into()
        }
        TrustReason::SweepAverage => "an average over every size of a sweep".into(),
        TrustReason::NoWarmUp => "timed without warm-up iterations".into(),
        TrustReason::NotVerified => "the tool did not check the data".into(),
        TrustReason::VerificationNotStated => "no data check stated".into(),
        TrustReason::SingleRun => "one timed run".into(),
        TrustReason::RepeatsNotStated => "repetitions not stated".into(),
        TrustReason::WideSpread { ratio } => {
            format!("repetitions vary: the slowest is {ratio:.2}x the fastest")
        }
        TrustReason::BelowSaturation {
            size_bytes,
            fraction_of_best,
        } => format!(
            "at {} the sweep has not saturated: {} of its best",
            size_short(size_bytes as f64),
            percent(fraction_of_best)
        ),
        TrustReason::SmallSingleSize { size_bytes } => format!(
            "one size only, {}: too small to show saturation",
            size_short(size_bytes as f64)
        ),
        TrustReason::DataChecked => "data checked, no wrong values".into(),
        TrustReason::WarmedUp { iterations } => format!("{iterations} warm-up iterations"),
        TrustReason::Repeated { iterations } => format!("{iterations} repetitions"),
        TrustReason::NarrowSpread { ratio } => {
            format!("repetitions agree: the slowest is {ratio:.2}x the fastest")
        }
        TrustReason::Saturated {
            size_bytes,
            fraction_of_best,
        } => format!(
            "at {} the sweep is saturated: {} of its best",
            size_short(size_bytes as f64),
            percent(fraction_of_best)
        ),
        TrustReason::LargeSingleSize { size_bytes } => {
            format!("one size, {}", size_short(size_bytes as f64))
        }
    }
}

/// Every reason of `t`, in words, worst first.
pub fn reasons(t: &Trust) -> Vec<String> {
    t.reasons.iter().map(reason).collect()
}

/// `B: warm-up: not stated; no data check stated`, for a tooltip.
pub fn summary(t: &Trust) -> String {
    format!("{}: {}", letter(t.grade), reasons(t).join("; "))
}
