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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_key_sorts_as_paths_do() {
        // Prefixes of names, separators sorting below letters (`a-b` vs
        // `a/c`), doubled and trailing slashes, `.` and `..`, roots.
        let raw = [
            "a",
            "a-b",
            "a/c",
            "a/c/d",
            "a//c",
            "a/c/",
            "ab",
            "a.b",
            "/a",
            "/",
            "./a",
            "../a",
            "a/..",
            "a/./c",
            "b",
            "",
            "a\u{1}",
            "caf\u{e9}",
            "cafe",
        ];
        let paths: Vec<&Path> = raw.iter().map(Path::new).collect();
        for p in &paths {
            for q in &paths {
                assert_eq!(order_key(p).cmp(&order_key(q)), p.cmp(q), "{p:?} vs {q:?}");
            }
        }
    }

    #[test]
    fn node_names_are_the_directory_names_absolute_would_give() {
        let dirs: Vec<PathBuf> = ["captures/dgx1-p100", "a/x", "b/x", ""]
            .iter()
            .map(PathBuf::from)
            .collect();
        let names = node_names(dirs.iter());
        assert_eq!(names[0], "captures-dgx1-p100");
        assert_eq!(names[1], "a-x");
        assert_eq!(names[2], "b-x");
        // `std::path::absolute` refuses an empty path: not the working
        // directory's name, the generic one.
        assert_eq!(names[3], "node");
    }
}
