//! `wire-report placement`: is a group of GPUs joined by good enough links?
//! Exit 1 when a pair is worse than `--require`.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::evidence::topology::LinkClass;
use crate::placement;

/// Check that a group of GPUs is joined by good enough links.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
wire-report placement topo.txt --gpus 0,1,2,3 --require direct-link\n  \
wire-report placement bundle.json --gpus 0-7 --json\n\n\
Classes, best to worst: self, direct-link, pcie-switch, pcie-host, cross-socket, unknown.\n\
A pair the topology does not describe counts as unknown.\n\
Exit: 0 when no pair is worse than --require (or no --require), 1 when one is, 2 on bad input.")]
pub struct Args {
    /// A bundle (`bundle.json`) or a raw topology transcript.
    pub source: PathBuf,
    /// GPUs of the group: `0,1,2,3`, `0-3` or `GPU0,GPU1`.
    #[arg(long, value_name = "LIST")]
    pub gpus: String,
    /// Refuse (exit 1) when any pair is worse than this class.
    #[arg(long, value_name = "CLASS", value_parser = parse_class)]
    pub require: Option<LinkClass>,
    /// Print the verdict as JSON.
    #[arg(long)]
    pub json: bool,
}

fn parse_class(s: &str) -> Result<LinkClass, String> {
    LinkClass::parse(s).ok_or_else(|| {
        format!(
            "`{s}` is not a class; use one of {}",
            LinkClass::ALL.map(LinkClass::as_str).join(", ")
        )
    })
}

/// `placement`: exit 1 when the group is worse than required.
pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let gpus = placement::parse_gpu_list(&a.gpus)?;
    let topo = placement::load_topology(&a.source)?;
    let report = placement::check(&topo, &gpus, a.require)
        .map_err(|e| anyhow::anyhow!("`{}`: {e}", a.source.display()))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.to_text());
    }
    Ok(if report.violated {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
