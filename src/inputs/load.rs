//! Loading nodes: each path given becomes bundles, whether it is a
//! `bundle.json`, a single-file report carrying bundles, a directory of
//! transcripts or one transcript. [`load_nodes`] loads them all at once,
//! [`node_sources`] names them first and loads one at a time.

use std::path::{Path, PathBuf};

use super::{
    MAX_TRANSCRIPT_BYTES, NodePlan, hidden_part, ingest, ingest_except, node_names, plan,
    read_input, read_node, shown_name,
};
use crate::bundle::{Bundle, Host, Origin, Problem, ProblemKind};
use crate::ingest::{is_bundle, read_transcript};

/// Every node under `paths`: a directory holding a `bundle.json` is that
/// bundle (what `collect` wrote there); any other directory of transcripts
/// is ingested as a node; a file is a bundle or a one-transcript node.
/// Sorted by node name so a site does not depend on the filesystem.
pub fn load_nodes(paths: &[PathBuf]) -> anyhow::Result<Vec<Bundle>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_file() {
            // A single-file report: every node it carries.
            match embedded_bundles(p, &read_input(p, crate::fs::MAX_READ_BYTES)?)? {
                Some(bundles) => out.extend(bundles),
                None => out.push(load_source(p)?),
            }
            continue;
        }
        if !p.exists() {
            anyhow::bail!("`{}` does not exist", p.display());
        }
        let mut bundle_files = Vec::new();
        // Walk errors (a link loop) are reported by the ingest below.
        for e in walkdir::WalkDir::new(p)
            .follow_links(true)
            .sort_by_file_name()
            .into_iter()
            .flatten()
        {
            if e.file_type().is_file() && e.file_name() == "bundle.json" {
                bundle_files.push(e.into_path());
            }
        }
        // Parsing JSON is most of the time; bundles are independent.
        use rayon::prelude::*;
        let loaded: Vec<anyhow::Result<Bundle>> =
            bundle_files.par_iter().map(|f| load_source(f)).collect();
        for b in loaded {
            out.push(b?);
        }
        let bundle_dirs: Vec<PathBuf> = bundle_files
            .iter()
            .filter_map(|f| f.parent().map(Path::to_path_buf))
            .collect();
        out.extend(
            ingest_except(std::slice::from_ref(p), &bundle_dirs)?
                .into_iter()
                .map(|n| n.bundle),
        );
    }
    out.sort_by(|a, b| a.host.name.cmp(&b.host.name));
    Ok(out)
}

/// A loaded node: its bundle, and the bytes of the bundle file it was read
/// from (none for transcripts).
pub type Loaded = (Bundle, Option<Vec<u8>>);

/// One node to load, named before it is loaded: what [`load_nodes`] would
/// return, one bundle at a time ([`NodeSource::load`]), so a render can
/// hold one node at a time.
pub struct NodeSource {
    /// The node's name (`host.name` of its bundle).
    pub name: String,
    what: What,
}

enum What {
    /// A `bundle.json` found in a directory: read when loaded.
    BundleFile(PathBuf),
    /// A directory of transcripts: read and parsed when loaded.
    Dir(NodePlan),
    /// A path given by itself, already loaded (to know its name).
    Loaded(Box<Bundle>, Option<Vec<u8>>),
}

impl NodeSource {
    /// The node's bundle, and the bytes of the bundle file it was read
    /// from (none for transcripts). `None` when a directory turned out to
    /// hold nothing but bundles.
    pub fn load(self) -> anyhow::Result<Option<Loaded>> {
        match self.what {
            What::BundleFile(p) => {
                let bytes = crate::fs::read(&p)?;
                let text = std::str::from_utf8(&bytes).map_err(|e| {
                    anyhow::anyhow!(
                        "`{}`: not UTF-8 text (byte {} is invalid)",
                        p.display(),
                        e.valid_up_to()
                    )
                })?;
                let b = Bundle::from_json(text, &p)?;
                Ok(Some((b, Some(bytes))))
            }
            What::Dir(plan) => Ok(read_node(plan).map(|n| (n.bundle, None))),
            What::Loaded(b, raw) => Ok(Some((*b, raw))),
        }
    }

    /// [`NodeSource::load`], where a node that cannot be loaded (a bundle
    /// cut short or from a newer schema, an entry the walk cannot enter)
    /// becomes a stand-in: a bundle of its name holding one `unreadable`
    /// problem that says what failed. A site, a markdown summary and a
    /// diff show it among the others instead of stopping at it; the error
    /// comes back too, for the warning and the exit code.
    pub fn load_or_stand_in(self) -> (Option<Loaded>, Option<String>) {
        let name = self.name.clone();
        let file = match &self.what {
            What::BundleFile(p) => p.display().to_string(),
            What::Dir(plan) => plan.dir.display().to_string(),
            What::Loaded(..) => name.clone(),
        };
        match self.load() {
            Ok(loaded) => (loaded, None),
            Err(e) => {
                let error = format!("{e:#}");
                let mut b = Bundle::new(Host {
                    name,
                    origin: Origin::Ingested,
                });
                b.problems.push(Problem {
                    file,
                    line: None,
                    kind: ProblemKind::Unreadable,
                    message: format!("this node could not be loaded: {error}"),
                });
                (Some((b, None)), Some(error))
            }
        }
    }
}

/// The nodes [`load_nodes`] would load, in its order (by node name), with
/// nothing loaded but what it takes to know each node's name: a bundle
/// file's `host.name` is read without building the bundle.
pub fn node_sources(paths: &[PathBuf]) -> anyhow::Result<Vec<NodeSource>> {
    let mut out = Vec::new();
    for p in paths {
        // A single-file report: each node it carries.
        if p.is_file()
            && let Some(bundles) = embedded_bundles(p, &read_input(p, crate::fs::MAX_READ_BYTES)?)?
            && bundles.len() > 1
        {
            out.extend(bundles.into_iter().map(|b| NodeSource {
                name: b.host.name.clone(),
                what: What::Loaded(Box::new(b), None),
            }));
            continue;
        }
        if p.is_file() {
            // A file named on the command line that does not load is the
            // user's mistake to hear about at once (exit 2), unlike one bad
            // bundle found in a fleet folder.
            let b = load_source(p)?;
            let raw = crate::fs::read(p)
                .ok()
                .filter(|bytes| std::str::from_utf8(bytes).is_ok_and(is_bundle));
            out.push(NodeSource {
                name: b.host.name.clone(),
                what: What::Loaded(Box::new(b), raw),
            });
            continue;
        }
        if !p.exists() {
            anyhow::bail!("`{}` does not exist", p.display());
        }
        let mut bundle_files = Vec::new();
        // Links are followed, as the transcript walk does: a node folder
        // may be a link into a shared store. An entry the walk cannot
        // enter (unreadable, past PATH_MAX, a loop) is that entry's
        // problem, named by its path; the rest is rendered.
        for e in walkdir::WalkDir::new(p)
            .follow_links(true)
            .sort_by_file_name()
        {
            // (The transcript walk below makes it a node of its own.)
            let Ok(e) = e else {
                continue;
            };
            if e.file_type().is_file() && e.file_name() == "bundle.json" {
                bundle_files.push(e.into_path());
            }
        }
        for f in &bundle_files {
            // A bundle whose name cannot be read is named by its folder:
            // loading it gives the error, for that node alone.
            let name = host_name(f).unwrap_or_else(|_| folder_name(f));
            out.push(NodeSource {
                name,
                what: What::BundleFile(f.clone()),
            });
        }
        let bundle_dirs: Vec<PathBuf> = bundle_files
            .iter()
            .filter_map(|f| f.parent().map(Path::to_path_buf))
            .collect();
        out.extend(
            plan(std::slice::from_ref(p), &bundle_dirs)?
                .into_iter()
                .map(|n| NodeSource {
                    name: n.name.clone(),
                    what: What::Dir(n),
                }),
        );
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// The name of the folder holding `file`: what names a node whose bundle
/// cannot be read.
fn folder_name(file: &Path) -> String {
    file.parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "bundle".into())
}

/// A bundle file's `host.name`, read without building the bundle; when it
/// has none, the error loading it would give.
fn host_name(path: &Path) -> anyhow::Result<String> {
    #[derive(serde::Deserialize)]
    struct Head {
        host: Option<HostName>,
    }
    #[derive(serde::Deserialize)]
    struct HostName {
        name: String,
    }
    let bytes = crate::fs::read(path)?;
    match serde_json::from_slice::<Head>(&bytes) {
        Ok(Head {
            host: Some(HostName { name }),
        }) => Ok(name),
        _ => load_source(path).map(|b| b.host.name),
    }
}

/// The bundles a `render --single-file` report carries, or `None` when
/// `bytes` is not such a report.
fn embedded_bundles(path: &Path, bytes: &[u8]) -> anyhow::Result<Option<Vec<Bundle>>> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Ok(None);
    };
    let found = crate::render::single::embedded_bundles(text);
    if found.is_empty() {
        return Ok(None);
    }
    found
        .into_iter()
        // `<\/` (how the report keeps `</` from ending its script) is
        // JSON's own escape of `/`: read as it is.
        .map(|json| Bundle::from_json(json, path))
        .collect::<anyhow::Result<Vec<_>>>()
        .map(Some)
}

/// Reads a bundle, a node directory, or a single transcript as a one-file
/// bundle (named after its directory). Fails when the file is none of
/// these, naming the line.
pub fn load_source(path: &Path) -> anyhow::Result<Bundle> {
    if path.is_dir() {
        // A node directory: its bundle if collect wrote one, else its transcripts.
        let written = path.join("bundle.json");
        if written.is_file() {
            return load_source(&written);
        }
        let mut nodes = ingest(&[path.to_path_buf()])?;
        return match nodes.len() {
            1 => Ok(nodes.remove(0).bundle),
            0 => anyhow::bail!("`{}` holds no transcripts", path.display()),
            n => anyhow::bail!(
                "`{}` holds the transcripts of {n} nodes; name one node's directory or bundle",
                path.display()
            ),
        };
    }
    let bytes = read_input(path, crate::fs::MAX_READ_BYTES)?;
    if let Ok(text) = std::str::from_utf8(&bytes)
        && is_bundle(text)
    {
        return Bundle::from_json(text, path);
    }
    if let Some(mut embedded) = embedded_bundles(path, &bytes)? {
        return match embedded.len() {
            1 => Ok(embedded.remove(0)),
            n => anyhow::bail!(
                "`{}` is a report of {n} nodes; render or diff it whole, or name one node's bundle",
                path.display()
            ),
        };
    }
    // A bundle may be large (collect wrote it); a transcript given as a
    // file is held to the cap a node folder's transcripts have, so
    // `placement`, `model fit` and `render` of one file read what
    // `collect --from` would.
    if bytes.len() as u64 > MAX_TRANSCRIPT_BYTES {
        anyhow::bail!(
            "`{}` is larger than {} MB; not read as a transcript (the cap `collect` uses)",
            path.display(),
            MAX_TRANSCRIPT_BYTES / 1_000_000
        );
    }
    let name = node_names(std::iter::once(
        &path.parent().map(Path::to_path_buf).unwrap_or_default(),
    ))
    .pop()
    .unwrap_or_else(|| "node".into());
    let mut b = Bundle::new(Host {
        name,
        origin: Origin::Ingested,
    });
    let shown = shown_name(path, &hidden_part(path));
    let reading = read_transcript(&shown, &bytes);
    if reading.transcript.is_none() {
        let why = reading
            .first_problem()
            .unwrap_or_else(|| format!("{shown}: nothing to read"));
        anyhow::bail!("{why}");
    }
    b.absorb(reading);
    b.drop_duplicate_keys(&shown);
    b.drop_implausible();
    Ok(b)
}
