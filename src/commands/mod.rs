//! The stages behind each subcommand, one module each: its clap `Args`
//! (flags, help and examples) and its `run`, which calls the library and
//! decides what is printed and which exit code results. Errors returned
//! here mean bad input or usage (exit 2).

use std::path::PathBuf;
use std::process::ExitCode;

pub mod check;
pub mod collect;
pub mod diff;
pub mod model;
pub mod placement;
pub mod render;
pub mod schema;
pub mod shell;

pub use collect::{expand_out, parse_sizes};

/// A usage error: printed like any error, exit 2.
pub fn usage(msg: &str) -> anyhow::Result<ExitCode> {
    anyhow::bail!("{msg}")
}

/// Paths for a message: `a`, `b`.
fn show_paths(p: &[PathBuf]) -> String {
    p.iter()
        .map(|p| format!("`{}`", p.display()))
        .collect::<Vec<_>>()
        .join(", ")
}
