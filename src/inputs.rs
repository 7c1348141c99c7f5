//! Inputs: paths -> bundles. The only code that walks the user's files:
//! a `bundle.json` is read as it is, a directory of transcripts becomes
//! one node's bundle, a folder of such directories becomes many. render,
//! diff, placement, model and `collect --from` all load through here.
//! Each file is read with [`read_transcript`] and merged with
//! [`Bundle::absorb`]; a file that cannot be read becomes a [`Problem`]
//! and the rest goes on.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::bundle::{Bundle, Host, Origin, Problem, ProblemKind};
use crate::ingest::{is_bundle, read_transcript};

/// Files in a captures directory that describe the captures rather than
/// being one: skipped without a problem.
const CATALOGUE_FILES: [&str; 3] = ["SOURCES.tsv", "README.md", "README"];

/// One node's bundle and the directory its transcripts came from.
#[derive(Debug)]
pub struct NodeBundle {
    pub dir: PathBuf,
    pub bundle: Bundle,
}

impl NodeBundle {
    /// How many transcripts were recognised and parsed.
    pub fn parsed(&self) -> usize {
        self.bundle.transcripts.len()
    }
}

/// Ingests every file under `paths` (files or directories, walked in name
/// order so the result does not depend on the filesystem). Fails only when a
/// given path does not exist.
pub fn ingest(paths: &[PathBuf]) -> anyhow::Result<Vec<NodeBundle>> {
    ingest_except(paths, &[])
}

/// [`ingest`], leaving out the files directly inside `skip_dirs`.
fn ingest_except(paths: &[PathBuf], skip_dirs: &[PathBuf]) -> anyhow::Result<Vec<NodeBundle>> {
    // Per directory: (path as shown, bytes, why it could not be read).
    type FileRead = (String, Vec<u8>, Option<String>);
    let mut by_dir: BTreeMap<PathBuf, Vec<FileRead>> = BTreeMap::new();
    let mut skip = |path: &Path, why: String| {
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let shown = path.display().to_string();
        by_dir
            .entry(dir)
            .or_default()
            .push((shown, Vec::new(), Some(why)));
    };
    let mut files: Vec<PathBuf> = Vec::new();
    for p in paths {
        if !p.exists() {
            anyhow::bail!("`{}` does not exist", p.display());
        }
        // Links are followed (shared stores link transcripts into node
        // folders); a link loop is a problem of its folder, not the end.
        for entry in walkdir::WalkDir::new(p)
            .follow_links(true)
            .sort_by_file_name()
        {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    let at = e.path().unwrap_or(p).to_path_buf();
                    skip(&at, format!("skipped: {e}"));
                    continue;
                }
            };
            let name = entry.file_name().to_string_lossy();
            if entry.file_type().is_dir()
                || name.starts_with('.')
                || CATALOGUE_FILES.contains(&name.as_ref())
                || entry
                    .path()
                    .parent()
                    .is_some_and(|d| skip_dirs.iter().any(|s| s == d))
            {
                continue;
            }
            if !entry.file_type().is_file() {
                skip(
                    entry.path(),
                    "is not a regular file (a FIFO, socket or device); skipped, never opened"
                        .into(),
                );
                continue;
            }
            files.push(entry.into_path());
        }
    }
    files.dedup();

    for f in files {
        let dir = f.parent().map(Path::to_path_buf).unwrap_or_default();
        let shown = f.display().to_string();
        let (bytes, err) = match read_input(&f, MAX_TRANSCRIPT_BYTES) {
            Ok(b) => (b, None),
            Err(e) => (Vec::new(), Some(format!("{e:#}"))),
        };
        by_dir.entry(dir).or_default().push((shown, bytes, err));
    }

    let names = node_names(by_dir.keys());
    let mut out = Vec::new();
    for ((dir, files), name) in by_dir.into_iter().zip(names) {
        let mut bundle = Bundle::new(Host {
            name,
            origin: Origin::Ingested,
        });
        for (path, bytes, err) in files {
            match err {
                Some(e) => bundle.problems.push(Problem {
                    file: path,
                    line: None,
                    kind: ProblemKind::Unreadable,
                    message: e,
                }),
                None => {
                    bundle.absorb(read_transcript(&path, &bytes));
                }
            }
        }
        // Nothing but wire-report's own bundles in the directory: not a node.
        if bundle.transcripts.is_empty() && bundle.problems.is_empty() {
            continue;
        }
        bundle.drop_duplicate_keys(&dir.display().to_string());
        bundle.drop_implausible();
        out.push(NodeBundle { dir, bundle });
    }
    Ok(out)
}

/// The most bytes one transcript may have: an 11.8 MB nccl-tests log is
/// the largest real one; ten times that is not a transcript.
pub const MAX_TRANSCRIPT_BYTES: u64 = 128_000_000;

/// Reads one input file (a regular file, links followed, at most `cap`
/// bytes); a JSON file that looks like a bundle without
/// its `schema_version` is said to be one rather than read as a transcript.
fn read_input(path: &Path, cap: u64) -> anyhow::Result<Vec<u8>> {
    let bytes = crate::fs::read_capped(path, cap)?;
    if let Ok(text) = std::str::from_utf8(&bytes)
        && is_unversioned_bundle(text)
    {
        anyhow::bail!(
            "`{}` looks like a wire-report bundle (host, generator, transcripts) but has no `schema_version`; \
             not read as a transcript: re-run `collect` or add the version it was written with",
            path.display()
        );
    }
    Ok(bytes)
}

/// A JSON object with a bundle's own keys and no `schema_version`.
fn is_unversioned_bundle(text: &str) -> bool {
    if !text.trim_start().starts_with('{') || is_bundle(text) {
        return false;
    }
    let Ok(serde_json::Value::Object(m)) = serde_json::from_str::<serde_json::Value>(text) else {
        return false;
    };
    m.contains_key("host")
        && ["generator", "transcripts", "topology"]
            .iter()
            .any(|k| m.contains_key(*k))
}

/// Directory names as node names; a name used twice gets its parent's name
/// prepended until unique.
fn node_names<'a>(dirs: impl Iterator<Item = &'a PathBuf>) -> Vec<String> {
    let dirs: Vec<&PathBuf> = dirs.collect();
    let base = |d: &Path, depth: usize| -> String {
        let abs = std::path::absolute(d).unwrap_or_else(|_| d.to_path_buf());
        let parts: Vec<String> = abs
            .components()
            .filter_map(|c| match c {
                std::path::Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect();
        let from = parts.len().saturating_sub(depth);
        let n = parts[from..].join("-");
        if n.is_empty() { "node".to_string() } else { n }
    };
    let mut depth = 1;
    loop {
        let names: Vec<String> = dirs.iter().map(|d| base(d, depth)).collect();
        let mut seen = std::collections::BTreeSet::new();
        if names.iter().all(|n| seen.insert(n.clone())) || depth > 16 {
            return names;
        }
        depth += 1;
    }
}

/// Every node under `paths`: a directory holding a `bundle.json` is that
/// bundle (what `collect` wrote there); any other directory of transcripts
/// is ingested as a node; a file is a bundle or a one-transcript node.
/// Sorted by node name so a site does not depend on the filesystem.
pub fn load_nodes(paths: &[PathBuf]) -> anyhow::Result<Vec<Bundle>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_file() {
            out.push(load_source(p)?);
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
    let name = node_names(std::iter::once(
        &path.parent().map(Path::to_path_buf).unwrap_or_default(),
    ))
    .pop()
    .unwrap_or_else(|| "node".into());
    let mut b = Bundle::new(Host {
        name,
        origin: Origin::Ingested,
    });
    let reading = read_transcript(&path.display().to_string(), &bytes);
    if reading.transcript.is_none() {
        let why = reading
            .first_problem()
            .unwrap_or_else(|| format!("{}: nothing to read", path.display()));
        anyhow::bail!("{why}");
    }
    b.absorb(reading);
    b.drop_duplicate_keys(&path.display().to_string());
    b.drop_implausible();
    Ok(b)
}
