//! The command line: one subcommand per stage.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "wire-report",
    version,
    about = "Which tier of the interconnect ladder does each data flow live in, and why is a number low?",
    long_about = "wire-report reads topology and bandwidth evidence from GPU nodes (vendor tool \
transcripts, sysfs, its own measurements) into one versioned JSON bundle per node, and \
answers questions about it: which GPU pairs have a direct link, which stage through the host, \
which placement is safe.\n\nExit codes: 0 success, 1 the check failed or nothing was parsed, \
2 bad input or usage."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build a bundle from transcripts captured elsewhere (`--from`).
    #[command(after_help = "Examples:\n  \
wire-report collect --from captures/dgx1-p100/ --out bundle.json\n  \
wire-report collect --from topo.txt nvlink.txt --out -\n  \
wire-report collect --from captures/ --out bundles/     # one bundle per node directory\n\n\
Files are grouped into nodes by the directory that holds them. Each file's tool is \
recognised from its content. Unrecognised or unparseable files are reported as \
`path:line: what was expected` and recorded as problems in the bundle.\n\
Exit: 0 when at least one file parsed, 1 when none did, 2 on usage errors.")]
    Collect {
        /// Transcript files or directories to ingest.
        #[arg(long = "from", num_args = 1.., required = true, value_name = "PATH")]
        from: Vec<PathBuf>,
        /// Where to write: a `.json` file, `-` for stdout (one node only), or a
        /// directory (`DIR/bundle.json` for one node, `DIR/<node>/bundle.json` for several).
        #[arg(long, value_name = "PATH")]
        out: PathBuf,
        /// Do not print warnings for problems (they stay in the bundle).
        #[arg(long)]
        quiet: bool,
    },
    /// Check that a group of GPUs is joined by good enough links.
    #[command(after_help = "Examples:\n  \
wire-report placement topo.txt --gpus 0,1,2,3 --require direct-link\n  \
wire-report placement bundle.json --gpus 0-7 --json\n\n\
Classes, best to worst: self, direct-link, pcie-switch, pcie-host, cross-socket, unknown.\n\
A pair the topology does not describe counts as unknown.\n\
Exit: 0 when no pair is worse than --require (or no --require), 1 when one is, 2 on bad input.")]
    Placement {
        /// A bundle (`bundle.json`) or a raw topology transcript.
        source: PathBuf,
        /// GPUs of the group: `0,1,2,3`, `0-3` or `GPU0,GPU1`.
        #[arg(long, value_name = "LIST")]
        gpus: String,
        /// Refuse (exit 1) when any pair is worse than this class.
        #[arg(long, value_name = "CLASS", value_parser = parse_class)]
        require: Option<crate::evidence::topology::LinkClass>,
        /// Print the verdict as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print the JSON Schema of the bundle.
    #[command(after_help = "Example:\n  wire-report schema > bundle.schema.json")]
    Schema,
}

fn parse_class(s: &str) -> Result<crate::evidence::topology::LinkClass, String> {
    use crate::evidence::topology::LinkClass;
    LinkClass::parse(s).ok_or_else(|| {
        format!(
            "`{s}` is not a class; use one of {}",
            LinkClass::ALL.map(LinkClass::as_str).join(", ")
        )
    })
}
