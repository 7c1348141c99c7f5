//! What a fit can be trusted for, in words: the sentences for an unsound
//! alpha-beta fit ([`crate::models::fit::Unsound`]). The judging is done
//! there; this module only writes.

use crate::models::fit::{MIN_R_SQUARED, Unsound, UnsoundLine};
use crate::render::format::{gbs, r_squared, secs, size_short};

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
