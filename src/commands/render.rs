//! `wire-report render`: bundles or captured transcripts into a static
//! site, one self-contained HTML file, or a markdown summary.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::inputs;

/// Render bundles or captured transcripts into a static site (or one file).
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
wire-report render                                   # the shipped captures/ into site/\n  \
wire-report render bundle.json other/bundle.json --out site/\n  \
wire-report render captures/rtx3090-4gpu --single-file report.html\n  \
wire-report render /shared/wire/node17 --format md --redact   # for a ticket\n\n\
Inputs: bundle files, node directories (a bundle.json, or transcripts), or folders of them.\n\
The site works offline: no CDN, no web fonts. GB/s = 1e9 bytes per second.")]
pub struct Args {
    /// Bundles, node directories or folders of them (default: captures/).
    pub inputs: Vec<PathBuf>,
    /// The site's folder (default `site`); with `--format md`, a file (default: stdout).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write one self-contained HTML file instead of a site.
    #[arg(long, value_name = "FILE")]
    pub single_file: Option<PathBuf>,
    /// `site` (HTML pages) or `md` (a summary to paste into a ticket).
    #[arg(long, value_enum, default_value_t = Format::Site)]
    pub format: Format,
    /// Replace hostnames, serials and GUIDs by stable placeholders first.
    #[arg(long)]
    pub redact: bool,
}

/// What `render` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Site,
    Md,
}

/// `render`: bundles or captures into a site, or one self-contained file.
pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let inputs: Vec<PathBuf> = if a.inputs.is_empty() {
        vec![PathBuf::from("captures")]
    } else {
        a.inputs
    };
    let single_file = a.single_file.as_deref();
    let md = a.format == Format::Md;
    if md && single_file.is_some() {
        anyhow::bail!("--single-file writes HTML; with --format md use --out FILE or stdout");
    }
    let md_out = a.out.as_deref().filter(|o| o.as_os_str() != "-");
    let out = a.out.as_deref().unwrap_or(Path::new("site"));
    if single_file.is_none() && !md {
        crate::fs::check_writable_dir(out)?;
    }
    if single_file.is_none() && !md && !a.redact {
        return stream_site(&inputs, out);
    }
    let mut bundles = inputs::load_nodes(&inputs)?;
    if bundles.is_empty() {
        anyhow::bail!(
            "no bundles or transcripts under {}",
            super::show_paths(&inputs)
        );
    }
    if a.redact {
        for b in &mut bundles {
            crate::bundle::redact::redact(b, &mut [])?;
        }
    }
    if md {
        let text = crate::render::markdown::render_markdown(&bundles);
        match md_out {
            Some(file) => crate::fs::write_atomic(file, text.as_bytes())?,
            None => print!("{text}"),
        }
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(file) = single_file {
        let html = crate::render::render_single_file(&bundles)?;
        crate::fs::write_atomic(file, html.as_bytes())?;
        eprintln!(
            "wrote {} ({} nodes, {} bytes)",
            file.display(),
            bundles.len(),
            html.len()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let site = crate::render::render_site(&bundles)?;
    crate::fs::write_site(out, &site.files)?;
    let total: usize = site.files.values().map(Vec::len).sum();
    eprintln!(
        "wrote {} files ({total} bytes, {} nodes) under {}",
        site.files.len(),
        bundles.len(),
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// What a node of [`stream_site`] leaves behind once written.
struct Done {
    summary: crate::render::NodeSummary,
    fleet: Option<crate::render::fleet::FleetNode>,
    slug: String,
    /// The site files it wrote, relative to the site.
    written: Vec<String>,
    bytes: usize,
}

/// The site, one node at a time: every node's name is known first (so
/// slugs are decided as [`crate::render::render_site`] decides them), then
/// each node is loaded, rendered, written and dropped (a few in parallel),
/// keeping only its index row and what the fleet needs; the index comes
/// last. Memory holds the nodes in flight, not the fleet.
fn stream_site(inputs: &[PathBuf], out: &Path) -> anyhow::Result<ExitCode> {
    use rayon::prelude::*;
    let sources = inputs::node_sources(inputs)?;
    if sources.is_empty() {
        anyhow::bail!(
            "no bundles or transcripts under {}",
            super::show_paths(inputs)
        );
    }
    let slugs = crate::render::view::node_slugs(sources.iter().map(|s| s.name.as_str()));
    let with_fleet = sources.len() > 1;
    let done: Vec<anyhow::Result<Option<Done>>> = sources
        .into_par_iter()
        .zip(slugs)
        .map(|(src, slug)| {
            let Some((bundle, raw)) = src.load()? else {
                return Ok(None);
            };
            let r = crate::render::render_node(&bundle, slug.clone(), raw, with_fleet)?;
            drop(bundle);
            let mut bytes = 0;
            let mut written = Vec::new();
            for (rel, data) in &r.files {
                crate::fs::write_site_file(out, rel, data)?;
                bytes += data.len();
                written.push(rel.clone());
            }
            Ok(Some(Done {
                summary: r.summary,
                fleet: r.fleet,
                slug,
                written,
                bytes,
            }))
        })
        .collect();
    let (mut summaries, mut fleet, mut slugs) = (Vec::new(), Vec::new(), Vec::new());
    let mut written = std::collections::BTreeSet::new();
    let mut total = 0;
    for d in done {
        let Some(d) = d? else {
            continue;
        };
        summaries.push(d.summary);
        fleet.extend(d.fleet);
        slugs.push(d.slug);
        written.extend(d.written);
        total += d.bytes;
    }
    let nodes = summaries.len();
    let index = crate::render::index_page(summaries, fleet, &slugs)?;
    let css = crate::render::CSS.as_bytes();
    for (rel, data) in [("index.html", index.as_slice()), ("style.css", css)] {
        crate::fs::write_site_file(out, rel, data)?;
        total += data.len();
        written.insert(rel.to_string());
    }
    crate::fs::finish_site(out, &written)?;
    eprintln!(
        "wrote {} files ({total} bytes, {nodes} nodes) under {}",
        written.len(),
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}
