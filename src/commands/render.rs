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
    /// Replace host and user names, serials, addresses (IP, GID, MAC), GUIDs and UUIDs by placeholders first, in every page, file and folder name. Node names are known from the start; a user or peer name that only a later node's prompt reveals is replaced from that node on (render such a node alone, or first, to cover the earlier ones).
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
    let md_out = a.out.as_deref();
    let out = a.out.as_deref().unwrap_or(Path::new("site"));
    if single_file.is_none() && !md {
        if out.as_os_str() == "-" {
            anyhow::bail!(
                "a site is a folder of pages; for one file on standard output use --single-file -"
            );
        }
        // The inputs are named first (quick): a render of nothing leaves
        // no folder behind. Then the folder, before the long work.
        let sources = Sources::find(&inputs, a.redact)?;
        let existed = std::fs::symlink_metadata(out).is_ok();
        crate::fs::check_writable_dir(out)?;
        let done = stream_site(sources, out);
        if done.is_err() && !existed {
            crate::fs::abandon_site(out);
        }
        return done;
    }
    let sources = Sources::find(&inputs, a.redact)?;
    match single_file {
        Some(file) => stream_single_file(sources, file),
        None => stream_markdown(sources, md_out),
    }
}

/// The nodes of a render, named and slugged before any is read, and the
/// run's redaction when asked.
struct Sources {
    nodes: Vec<inputs::NodeSource>,
    slugs: Vec<String>,
    /// One numbering for the run: nodes are named first, then each node's
    /// secrets are numbered in node order as it is loaded.
    redactor: Option<crate::bundle::redact::Redactor>,
    /// Nodes that could not be loaded (see [`load`]).
    failed: std::sync::atomic::AtomicUsize,
}

impl Sources {
    fn find(inputs: &[PathBuf], redact: bool) -> anyhow::Result<Sources> {
        let nodes = inputs::node_sources(inputs)?;
        if nodes.is_empty() {
            anyhow::bail!(
                "no bundles or transcripts under {}",
                super::show_paths(inputs)
            );
        }
        // A redacted node is named by its placeholder (as `redact` names it).
        let mut redactor = redact.then(crate::bundle::redact::Redactor::new);
        let names: Vec<String> = nodes
            .iter()
            .map(|s| match &mut redactor {
                Some(r) => r.host(&s.name),
                None => s.name.clone(),
            })
            .collect();
        let slugs = crate::render::view::node_slugs(names.iter().map(String::as_str));
        Ok(Sources {
            nodes,
            slugs,
            redactor,
            failed: Default::default(),
        })
    }

    /// Each node in order, [`CHUNK`] at a time in parallel: `f` gets the
    /// loaded (and redacted) bundle, its input bytes (none when redacted)
    /// and its slug; `each` gets `f`'s results in order. Memory holds one
    /// chunk of nodes, not the fleet. A redacted chunk is searched in
    /// parallel, numbered in node order, then replaced in parallel.
    fn each<T: Send>(
        &mut self,
        f: impl Fn(crate::bundle::Bundle, Option<Vec<u8>>, String) -> anyhow::Result<T> + Sync,
        mut each: impl FnMut(T) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        use crate::bundle::redact::Redactor;
        use rayon::prelude::*;
        let failed = &self.failed;
        let nodes = std::mem::take(&mut self.nodes);
        let slugs = std::mem::take(&mut self.slugs);
        let mut it = nodes.into_iter().zip(slugs);
        loop {
            let chunk: Vec<_> = it.by_ref().take(CHUNK).collect();
            if chunk.is_empty() {
                return Ok(());
            }
            let loaded: Vec<_> = chunk
                .into_par_iter()
                .filter_map(|(src, slug)| load(src, failed).map(|(b, raw)| (b, raw, slug)))
                .collect();
            let done: Vec<anyhow::Result<T>> = match &mut self.redactor {
                None => loaded
                    .into_par_iter()
                    .map(|(b, raw, slug)| f(b, raw, slug))
                    .collect(),
                Some(r) => {
                    let found: Vec<_> = loaded
                        .par_iter()
                        .map(|(b, _, _)| Redactor::find(b, &[]))
                        .collect::<anyhow::Result<_>>()?;
                    found.iter().for_each(|x| r.learn(x));
                    let r = &*r;
                    loaded
                        .into_par_iter()
                        .map(|(mut b, _, slug)| {
                            // The input bytes hold what was redacted: dropped.
                            r.apply(&mut b, &mut [])?;
                            f(b, None, slug)
                        })
                        .collect()
                }
            };
            for d in done {
                each(d?)?;
            }
        }
    }
}

/// Nodes rendered at once by a streaming render.
const CHUNK: usize = 16;

/// A node's bundle and its input bytes. A node that cannot be loaded is
/// rendered as a stand-in naming what failed
/// ([`inputs::NodeSource::load_or_stand_in`]), with a warning, and counted
/// in `failed`: one bad bundle in a fleet never sinks the good ones.
fn load(
    src: inputs::NodeSource,
    failed: &std::sync::atomic::AtomicUsize,
) -> Option<(crate::bundle::Bundle, Option<Vec<u8>>)> {
    let (loaded, error) = src.load_or_stand_in();
    if let Some(e) = error {
        crate::say::warn(format_args!(
            "{e}; shown as a node that could not be loaded"
        ));
        failed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    loaded
}

/// Exit 0 when every node was loaded, 1 when some could not be (and were
/// rendered as stand-ins).
fn exit_code(failed: &std::sync::atomic::AtomicUsize) -> ExitCode {
    match failed.load(std::sync::atomic::Ordering::Relaxed) {
        0 => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    }
}

/// `--format md`: one node's summary at a time, to `out` (atomically) or
/// standard output.
fn stream_markdown(mut sources: Sources, out: Option<&Path>) -> anyhow::Result<ExitCode> {
    let mut file = crate::fs::AtomicWriter::create(out.unwrap_or(Path::new("-")))?;
    sources.each(
        |b, _, _| {
            Ok(crate::render::markdown::node_markdown(
                &crate::render::Analysed::of(&b),
            ))
        },
        |text| file.write(text.as_bytes()),
    )?;
    file.commit()?;
    Ok(exit_code(&sources.failed))
}

/// `--single-file`: each node's section is rendered and appended to a
/// scratch file beside `file` as it is done, keeping its index row and
/// fleet facts; then the head (with the index), the sections and the foot
/// go into `file`, atomically.
fn stream_single_file(mut sources: Sources, file: &Path) -> anyhow::Result<ExitCode> {
    // Opened first: a path that cannot be written fails before the work,
    // and a device or FIFO is known to be one (its scratch goes elsewhere).
    let mut out = crate::fs::AtomicWriter::create(file)?;
    let scratch = out.scratch()?;
    let scratch_err = |e: std::io::Error| {
        anyhow::anyhow!(
            "failed to write a scratch file for `{}`: {e}",
            file.display()
        )
    };
    let mut body = std::io::BufWriter::new(scratch);
    let with_fleet = sources.nodes.len() > 1;
    let (mut summaries, mut fleet, mut slugs) = (Vec::new(), Vec::new(), Vec::new());
    sources.each(
        |b, _, slug| {
            Ok((
                crate::render::single::node(&b, slug.clone(), with_fleet)?,
                slug,
            ))
        },
        |(n, slug)| {
            use std::io::Write;
            body.write_all(n.html.as_bytes()).map_err(scratch_err)?;
            summaries.push(n.summary);
            fleet.extend(n.fleet);
            slugs.push(slug);
            Ok(())
        },
    )?;
    let mut body = body.into_inner().map_err(|e| scratch_err(e.into_error()))?;
    let nodes = summaries.len();
    let title = crate::render::single::title(&summaries);
    let head = crate::render::single::head(title, summaries, fleet, &slugs)?;
    out.write(head.as_bytes())?;
    out.copy_from(&mut body)?;
    out.write(crate::render::single::foot()?.as_bytes())?;
    let bytes = out.bytes();
    out.commit()?;
    crate::say::info(format_args!(
        "wrote {} ({nodes} nodes, {bytes} bytes)",
        file.display()
    ));
    Ok(exit_code(&sources.failed))
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
///
/// Each node's files are entered in the site's journal before they are
/// written ([`crate::fs::SiteJournal`]): a render that fails or is killed
/// half way leaves pages the next render knows to remove.
fn stream_site(mut sources: Sources, out: &Path) -> anyhow::Result<ExitCode> {
    let journal = crate::fs::SiteJournal::open(out)?;
    let with_fleet = sources.nodes.len() > 1;
    let mut done = Vec::new();
    sources.each(
        |bundle, raw, slug| {
            let r = crate::render::render_node(&bundle, slug.clone(), raw, with_fleet)?;
            drop(bundle);
            let mut bytes = 0;
            let mut written = Vec::new();
            journal.intend(r.files.iter().map(|(rel, _)| rel.as_str()))?;
            for (rel, data) in &r.files {
                crate::fs::write_site_file(out, rel, data)?;
                bytes += data.len();
                written.push(rel.clone());
            }
            crate::say::detail(format_args!(
                "wrote {} files ({bytes} bytes) under {}",
                written.len(),
                out.join("nodes").join(&slug).display()
            ));
            Ok(Done {
                summary: r.summary,
                fleet: r.fleet,
                slug,
                written,
                bytes,
            })
        },
        |d| {
            done.push(d);
            Ok(())
        },
    )?;
    let failed = sources.failed;
    let (mut summaries, mut fleet, mut slugs) = (Vec::new(), Vec::new(), Vec::new());
    let mut written = std::collections::BTreeSet::new();
    let mut total = 0;
    for d in done {
        summaries.push(d.summary);
        fleet.extend(d.fleet);
        slugs.push(d.slug);
        written.extend(d.written);
        total += d.bytes;
    }
    let nodes = summaries.len();
    let index = crate::render::index_page(summaries, fleet, &slugs)?;
    let css = crate::render::CSS.as_bytes();
    journal.intend(["index.html", "style.css"])?;
    for (rel, data) in [("index.html", index.as_slice()), ("style.css", css)] {
        crate::fs::write_site_file(out, rel, data)?;
        total += data.len();
        written.insert(rel.to_string());
    }
    crate::fs::finish_site(out, &written)?;
    let stand_ins = match failed.load(std::sync::atomic::Ordering::Relaxed) {
        0 => String::new(),
        n => format!("; {n} could not be loaded and are shown as such"),
    };
    crate::say::info(format_args!(
        "wrote {} files ({total} bytes, {nodes} nodes) under {}{stand_ins}",
        written.len(),
        out.display()
    ));
    Ok(exit_code(&failed))
}
