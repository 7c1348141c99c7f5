//! `wire-report diff`: what changed between two collections of the same
//! nodes. Exit 1 when something significant changed.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::inputs;

/// What changed between two collections of the same nodes, and whether it matters.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
wire-report diff before/ after/\n  \
wire-report diff old/bundle.json new/bundle.json --json\n  \
wire-report diff before/ after/ --html diff.html\n\n\
Nodes are matched by name. Reported: topology class changes per pair, PCIe width and speed per \
device, RDMA port state and rate, error counters that grew, and bandwidth figures (same tool, \
test, pair, direction and size) that moved beyond the spread the repetitions showed, or 10% \
when the tool reports none.\n\
Exit: 0 when nothing got worse (improvements are listed as better), 1 when something did, 2 on bad input.")]
pub struct Args {
    /// Bundles, node directories or folders of them, before.
    pub old: PathBuf,
    /// The same, after.
    pub new: PathBuf,
    /// Print the changes as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also write a self-contained HTML page.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// `diff`: exit 1 when something got worse.
pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let (old, new) = (a.old.as_path(), a.new.as_path());
    let before = inputs::load_nodes(&[old.to_path_buf()])?;
    let after = inputs::load_nodes(&[new.to_path_buf()])?;
    for (p, b) in [(old, &before), (new, &after)] {
        if b.is_empty() {
            anyhow::bail!("no bundles or transcripts under `{}`", p.display());
        }
    }
    let d = crate::render::diff::diff_view(&before, &after);
    if let Some(file) = &a.html {
        let page = d.to_html(&old.display().to_string(), &new.display().to_string())?;
        crate::fs::write_atomic(file, page.as_bytes())?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&d)?);
    } else {
        print!("{}", d.to_text());
    }
    Ok(if d.significant() > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
