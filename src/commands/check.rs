//! `wire-report check`: one line per node (its verdict, its worst finding,
//! the checks that did not run), or JSON for scripts; exit 1 when a node
//! reaches `--fail-on`, for CI gates and job prologs.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::render::{Analysed, verdicts};

/// Verdicts of nodes: what was checked, what was not, and how bad it is.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
wire-report check captures/                        # one line a node\n  \
wire-report check captures/ --json                 # the same for scripts\n  \
wire-report check /shared/wire/ --fail-on warning  # exit 1 when a node has a warning or worse\n\n\
Verdicts: critical, warning (the worst finding), incomplete (nothing worse than info,\n\
but a check that applies did not run), ok (every check that applies ran);\n\
unreadable (the node's bundle could not be read: it fails any --fail-on but none).\n\
Exit: 0, or 1 when a node reaches --fail-on; 2 on bad input or usage.")]
pub struct Args {
    /// Bundles, node directories or folders of them.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Print `{"nodes": [...]}` with each node's verdict, findings and checks.
    #[arg(long)]
    pub json: bool,
    /// Exit 1 when any node's verdict is this bad or worse.
    #[arg(long, value_enum, default_value_t = FailOn::None)]
    pub fail_on: FailOn,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    Critical,
    Warning,
    None,
}

impl FailOn {
    fn reached(self, verdict: &str) -> bool {
        match self {
            FailOn::Critical => matches!(verdict, "critical" | "unreadable"),
            FailOn::Warning => matches!(verdict, "critical" | "warning" | "unreadable"),
            FailOn::None => false,
        }
    }
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let sources = crate::inputs::node_sources(&a.inputs)?;
    if sources.is_empty() {
        anyhow::bail!(
            "no bundles or transcripts under {}",
            super::show_paths(&a.inputs)
        );
    }
    let mut out = std::io::stdout().lock();
    let mut failed = false;
    let mut first = true;
    let write_err = |e: std::io::Error| anyhow::anyhow!("failed to write to standard output: {e}");
    if a.json {
        out.write_all(b"{\"nodes\": [").map_err(write_err)?;
    }
    // One node loaded at a time: memory stays flat in the fleet's size.
    for src in sources {
        let name = src.name.clone();
        // One node that cannot be read is that node's verdict, not the
        // end of the gate: it fails any threshold (nothing was checked).
        let (json, line, verdict) = match src.load() {
            Ok(None) => continue,
            Ok(Some((bundle, _))) => {
                let v = verdicts::node_verdict(&Analysed::of(&bundle));
                (serde_json::to_value(&v)?, verdicts::one_line(&v), v.verdict)
            }
            Err(e) => {
                let error = format!("{e:#}");
                let line = verdicts::visible(&format!("{name}  unreadable  {error}"));
                let json =
                    serde_json::json!({"node": name, "verdict": "unreadable", "error": error});
                (json, line, "unreadable")
            }
        };
        failed |= a.fail_on.reached(verdict);
        if a.json {
            if !first {
                out.write_all(b",\n").map_err(write_err)?;
            }
            serde_json::to_writer(&mut out, &json)?;
        } else {
            writeln!(out, "{line}").map_err(write_err)?;
        }
        first = false;
    }
    if a.json {
        out.write_all(b"]}\n").map_err(write_err)?;
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
