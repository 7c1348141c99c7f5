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

mod load;
pub use load::{Loaded, NodeSource, load_nodes, load_source, node_sources};

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
    let mut out = Vec::new();
    for node in plan(paths, skip_dirs)? {
        out.extend(read_node(node));
    }
    Ok(out)
}

/// [`ingest`] one node at a time: each node's files are read and parsed,
/// its bundle handed to `each`, and dropped before the next node's files
/// are read, so memory holds one node whatever the corpus. Returns how
/// many nodes there were; stops at the first error `each` returns.
pub fn ingest_each(
    paths: &[PathBuf],
    mut each: impl FnMut(NodeBundle) -> anyhow::Result<()>,
) -> anyhow::Result<usize> {
    let mut n = 0;
    for node in plan(paths, &[])? {
        if let Some(b) = read_node(node) {
            n += 1;
            each(b)?;
        }
    }
    Ok(n)
}

/// One node directory to read: its files in name order (each with the
/// reason it will not be opened, when the walk already knows one), and its
/// name.
struct NodePlan {
    dir: PathBuf,
    name: String,
    files: Vec<(PathBuf, Option<String>)>,
    /// The part of an absolute path given on the command line that names
    /// the machine's own folders (`/home/u/` of `/home/u/captures`): left
    /// out of every name an output shows ([`shown_name`]).
    hidden: PathBuf,
}

/// How an input file is named in bundles and pages: relative to the path
/// given on the command line, from that path's last component on
/// (`/home/u/captures/n1/topo.txt` given as `/home/u/captures` is
/// `captures/n1/topo.txt`), so no output carries the absolute path of the
/// machine that read it. A relative path is shown as given.
pub fn shown_name(file: &Path, hidden: &Path) -> String {
    file.strip_prefix(hidden)
        .unwrap_or(file)
        .display()
        .to_string()
}

/// What [`shown_name`] leaves out of a node directory's files: the
/// machine's folders above the given path the directory lies under (a
/// file given by itself counts as its directory).
fn hidden_above(dir: &Path, given: &[PathBuf]) -> PathBuf {
    given
        .iter()
        .filter(|p| p.is_absolute())
        .find(|p| dir.starts_with(p) || p.parent().is_some_and(|d| d == dir))
        .map(|p| hidden_part(p))
        .unwrap_or_default()
}

/// What [`shown_name`] leaves out of the files under `given`.
fn hidden_part(given: &Path) -> PathBuf {
    if !given.is_absolute() {
        return PathBuf::new();
    }
    given
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| given.to_path_buf())
}

/// Every file under `paths` grouped by directory (walked in name order so
/// the result does not depend on the filesystem), with the node names;
/// nothing is read yet. Fails only when a given path does not exist.
fn plan(paths: &[PathBuf], skip_dirs: &[PathBuf]) -> anyhow::Result<Vec<NodePlan>> {
    // Asked once per file: a set, not a scan of every folder of bundles
    // (a fleet of 4,096 bundles made that 16 M path comparisons).
    let skip_dirs: std::collections::HashSet<&Path> =
        skip_dirs.iter().map(PathBuf::as_path).collect();
    let mut files: Vec<(PathBuf, Option<String>)> = Vec::new();
    // Entries the walk could not enter: each is a node of its own, named
    // by its path (not a problem of its parent, which may be the fleet).
    let mut unwalkable: Vec<(PathBuf, String)> = Vec::new();
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
                    // A link loop belongs to the folder holding the link;
                    // a folder that cannot be entered is a node of its own.
                    match e.loop_ancestor() {
                        Some(_) => files.push((at, Some(format!("skipped: {e}")))),
                        None => unwalkable.push((at, format!("skipped: {e}"))),
                    }
                    continue;
                }
            };
            let name = entry.file_name().to_string_lossy();
            if entry.file_type().is_dir()
                || name.starts_with('.')
                || CATALOGUE_FILES.contains(&name.as_ref())
                // (`parent` parses the path: not where there is nothing to skip.)
                || !skip_dirs.is_empty()
                    && entry
                        .path()
                        .parent()
                        .is_some_and(|d| skip_dirs.contains(d))
            {
                continue;
            }
            if !entry.file_type().is_file() {
                let why = "is not a regular file (a FIFO, socket or device); skipped, never opened";
                files.push((entry.into_path(), Some(why.into())));
                continue;
            }
            files.push((entry.into_path(), None));
        }
    }
    // A file reached twice by the same path (a folder given together with
    // one inside it) is one file.
    let mut seen = std::collections::HashSet::new();
    files.retain(|f| seen.insert(f.0.clone()));
    // The walk gives a directory's files one after another (but for its
    // subdirectories' between them): the map is asked once per run of
    // files, not once per file, and keyed by `order_key`, which sorts as
    // the paths do without comparing them component by component.
    type Files = Vec<(PathBuf, Option<String>)>;
    let mut by_dir: BTreeMap<Vec<u8>, (PathBuf, Files)> = BTreeMap::new();
    let mut run: Option<(PathBuf, Files)> = None;
    let mut keep = |(dir, done): (PathBuf, Files)| {
        by_dir
            .entry(order_key(&dir))
            .or_insert_with(|| (dir, Vec::new()))
            .1
            .extend(done);
    };
    for f in files {
        let parent = f.0.parent().unwrap_or(Path::new(""));
        match &mut run {
            Some((dir, same)) if dir.as_os_str() == parent.as_os_str() => same.push(f),
            _ => {
                if let Some(done) = run.replace((parent.to_path_buf(), vec![f])) {
                    keep(done);
                }
            }
        }
    }
    if let Some(done) = run {
        keep(done);
    }
    for (at, why) in unwalkable {
        keep((at.clone(), vec![(at, Some(why))]));
    }
    let by_dir: Vec<(PathBuf, Files)> = by_dir.into_values().collect();
    let names = node_names(by_dir.iter().map(|(d, _)| d));
    Ok(by_dir
        .into_iter()
        .zip(names)
        .map(|((dir, files), name)| NodePlan {
            hidden: hidden_above(&dir, paths),
            dir,
            name,
            files,
        })
        .collect())
}

/// Reads and parses one node's files; `None` when the directory held
/// nothing but wire-report's own bundles (not a node).
fn read_node(node: NodePlan) -> Option<NodeBundle> {
    let mut bundle = Bundle::new(Host {
        name: node.name,
        origin: Origin::Ingested,
    });
    // Each file's identity (device, inode), and the name it was first read by.
    use std::collections::hash_map::Entry;
    let mut seen: std::collections::HashMap<(u64, u64), String> = Default::default();
    for (f, skipped) in node.files {
        let path = shown_name(&f, &node.hidden);
        let read = match skipped {
            Some(why) => Err(why),
            None => read_input(&f, MAX_TRANSCRIPT_BYTES).map_err(|e| format!("{e:#}")),
        };
        match read {
            Err(message) => bundle.problems.push(Problem {
                file: path,
                line: None,
                kind: ProblemKind::Unreadable,
                message,
            }),
            Ok(bytes) => {
                // The same file under a second name (two links to it):
                // its figures would count twice. Two files with the same
                // bytes are two readings (a counter dump taken twice on a
                // quiet port), so the file's identity decides, not its bytes.
                let earlier = std::fs::metadata(&f).ok().and_then(|m| {
                    use std::os::unix::fs::MetadataExt;
                    match seen.entry((m.dev(), m.ino())) {
                        Entry::Occupied(first) => Some(first.get().clone()),
                        Entry::Vacant(v) => {
                            v.insert(path.clone());
                            None
                        }
                    }
                });
                if let Some(earlier) = earlier {
                    let message =
                        format!("the same file as `{earlier}` (a second link to it); read once");
                    bundle.problems.push(Problem {
                        file: path,
                        line: None,
                        kind: ProblemKind::Duplicate,
                        message,
                    });
                    continue;
                }
                let reading = read_transcript(&path, &bytes);
                bundle.absorb(reading);
            }
        }
    }
    // Nothing but wire-report's own bundles in the directory: not a node.
    if bundle.transcripts.is_empty() && bundle.problems.is_empty() {
        return None;
    }
    bundle.drop_duplicate_keys(&shown_name(&node.dir, &node.hidden));
    bundle.drop_implausible();
    Some(NodeBundle {
        dir: node.dir,
        bundle,
    })
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
    if !crate::ingest::without_bom(text)
        .trim_start()
        .starts_with('{')
        || is_bundle(text)
    {
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

/// Bytes that sort as `p` does among paths (`Path`'s order: component by
/// component, root before `.` before `..` before names, `a//b` equal to
/// `a/b`): each component as a tag byte, its bytes (a name holds neither
/// `/` nor NUL) and a NUL, so a shorter name sorts first.
fn order_key(p: &Path) -> Vec<u8> {
    use std::path::Component;
    let mut key = Vec::with_capacity(p.as_os_str().len() + 8);
    for c in p.components() {
        let (tag, bytes): (u8, &[u8]) = match c {
            Component::Prefix(x) => (1, x.as_os_str().as_encoded_bytes()),
            Component::RootDir => (2, &[]),
            Component::CurDir => (3, &[]),
            Component::ParentDir => (4, &[]),
            Component::Normal(s) => (5, s.as_encoded_bytes()),
        };
        key.push(tag);
        key.extend_from_slice(bytes);
        key.push(0);
    }
    key
}

/// Directory names as node names; a name used twice gets its parent's name
/// prepended until unique.
fn node_names<'a>(dirs: impl Iterator<Item = &'a PathBuf>) -> Vec<String> {
    let dirs: Vec<&PathBuf> = dirs.collect();
    // What `std::path::absolute` gives (only normal components are used
    // below), with the working directory asked once, not once per directory.
    // An empty path stays empty, as `absolute` refuses it.
    let cwd = std::env::current_dir().ok();
    let base = |d: &Path, depth: usize| -> String {
        let abs = match &cwd {
            Some(cwd) if d.is_relative() && !d.as_os_str().is_empty() => cwd.join(d),
            _ => d.to_path_buf(),
        };
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

#[cfg(test)]
mod tests;
