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
wire-report diff before/ after/ --html diff.html\n  \
wire-report diff old-fleet/ new-fleet/ --pair node07=gpu-a07 --pair node08=gpu-a08\n\n\
Nodes are matched by name; when each side holds one node, the two are compared whatever their \
names (and the output says so); --pair OLD=NEW compares renamed nodes of a fleet. Devices are \
matched by adapter name or PCI bus id, not by position. Reported: GPUs, adapters, topology \
pairs, active NVLinks and RDMA ports listed on one side only (one gone is worse, one that \
appears better), topology class changes per pair, PCIe width and speed per \
device, RDMA port state and rate, error counters that grew, and bandwidth figures (same tool, \
test, pair, direction and size) that moved beyond the spread the repetitions showed, or 10% \
when the tool reports none.\n\
Exit: 0 when nothing got worse (improvements are listed as better), 1 when something did or a node could not be loaded, 2 on bad input.")]
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
    /// Compare node OLD of the old collection with node NEW of the new one
    /// (a node renamed); repeat for each.
    #[arg(long, value_name = "OLD=NEW", value_parser = parse_pair)]
    pub pair: Vec<(String, String)>,
}

/// `OLD=NEW`: two node names.
fn parse_pair(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((o, n)) if !o.trim().is_empty() && !n.trim().is_empty() => {
            Ok((o.trim().to_string(), n.trim().to_string()))
        }
        _ => Err(format!("`{s}` is not OLD=NEW (two node names)")),
    }
}

/// `diff`: exit 1 when something got worse.
pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let (old, new) = (a.old.as_path(), a.new.as_path());
    let (before, bad_before) = load(old)?;
    let (after, bad_after) = load(new)?;
    for (p, b) in [(old, &before), (new, &after)] {
        if b.is_empty() {
            anyhow::bail!("no bundles or transcripts under `{}`", p.display());
        }
    }
    let d = crate::render::diff::diff_view_paired(&before, &after, &a.pair)
        .map_err(|e| anyhow::anyhow!("--pair: {e}"))?;
    if let Some(file) = &a.html {
        let page = d.to_html(&old.display().to_string(), &new.display().to_string())?;
        crate::fs::write_atomic(file, page.as_bytes())?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&d)?);
    } else {
        print!("{}", d.to_text());
    }
    Ok(if d.significant() > 0 || bad_before + bad_after > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Every node under `path`, loaded in parallel; a node that cannot be
/// loaded is a stand-in that names what failed (with a warning), so one
/// bad bundle never hides what changed on the others. Also how many were.
fn load(path: &std::path::Path) -> anyhow::Result<(Vec<crate::bundle::Bundle>, usize)> {
    use rayon::prelude::*;
    let loaded: Vec<_> = inputs::node_sources(&[path.to_path_buf()])?
        .into_par_iter()
        .map(inputs::NodeSource::load_or_stand_in)
        .collect();
    let mut bad = 0;
    let mut out = Vec::new();
    for (b, error) in loaded {
        if let Some(e) = error {
            crate::say::warn(format_args!(
                "{e}; shown as a node that could not be loaded"
            ));
            bad += 1;
        }
        out.extend(b.map(|(b, _)| b));
    }
    Ok((out, bad))
}
