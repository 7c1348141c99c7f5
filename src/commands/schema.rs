//! `wire-report schema`: the bundle's JSON Schema on stdout.

use std::path::Path;
use std::process::ExitCode;

/// Print the JSON Schema of the bundle.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:\n  wire-report schema > bundle.schema.json")]
pub struct Args {}

/// `schema`: the bundle's JSON Schema on stdout.
pub fn run(_: Args) -> anyhow::Result<ExitCode> {
    crate::fs::write_atomic(Path::new("-"), crate::bundle::json_schema().as_bytes())?;
    Ok(ExitCode::SUCCESS)
}
