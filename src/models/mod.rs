//! Small analytic models. Pure functions of numbers: no I/O, no bundle.
//! Every result is a model, not a measurement; callers label it so (the
//! CLI and the site print [`BANNER`]), and every constant carries its
//! source next to it.
//!
//! Bandwidths are bytes per second, times seconds, sizes bytes.

pub mod ceiling;
pub mod fit;
pub mod injection;
pub mod ladder;
pub mod staging;

/// The banner every model output carries.
pub const BANNER: &str = "MODEL: computed from the inputs shown, not measured on any machine";

/// A model input that cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    #[error("{what} must be a positive number, got {value}")]
    NotPositive { what: &'static str, value: f64 },
    #[error("{0}")]
    Undefined(String),
}

/// Checks that `value` is finite and above zero.
pub fn positive(what: &'static str, value: f64) -> Result<f64, ModelError> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(ModelError::NotPositive { what, value })
    }
}
