//! Collection: the only code that reads inputs from the outside world.
//!
//! `collect --from` ingests transcripts captured elsewhere. Files are grouped
//! into nodes by the directory that holds them (one directory = one node's
//! captures), each file's tool is recognised from its content, and each node
//! becomes one [`Bundle`]. A file that cannot be read, is not recognised or
//! does not parse becomes a [`Problem`]; the rest goes on.

pub mod cuda;
pub mod gpu;
#[cfg(feature = "rocm")]
pub mod hip;
pub mod live;
pub mod pair;
pub mod probes;
pub mod redact;
pub mod sweep;
pub mod sysfs;
#[cfg(feature = "rdma")]
pub mod verbs;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::bundle::{Bundle, Host, Origin, Problem, ProblemKind, Transcript};
use crate::evidence::rdma::RdmaDevice;
use crate::evidence::text::Text;
use crate::evidence::{self, IssueKind, Tool};

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
    let mut files: Vec<PathBuf> = Vec::new();
    for p in paths {
        if !p.exists() {
            anyhow::bail!("`{}` does not exist", p.display());
        }
        for entry in walkdir::WalkDir::new(p).sort_by_file_name() {
            let entry =
                entry.map_err(|e| anyhow::anyhow!("failed to walk `{}`: {e}", p.display()))?;
            if !entry.file_type().is_file() {
                continue;
            }
            let name = entry.file_name().to_string_lossy();
            if name.starts_with('.') || CATALOGUE_FILES.contains(&name.as_ref()) {
                continue;
            }
            if entry
                .path()
                .parent()
                .is_some_and(|d| skip_dirs.iter().any(|s| s == d))
            {
                continue;
            }
            files.push(entry.into_path());
        }
    }
    files.dedup();

    // Per directory: (path as shown, bytes, why it could not be read).
    type FileRead = (String, Vec<u8>, Option<String>);
    let mut by_dir: BTreeMap<PathBuf, Vec<FileRead>> = BTreeMap::new();
    for f in files {
        let dir = f.parent().map(Path::to_path_buf).unwrap_or_default();
        let shown = f.display().to_string();
        let (bytes, err) = match std::fs::read(&f) {
            Ok(b) => (b, None),
            Err(e) => (Vec::new(), Some(format!("cannot be read: {e}"))),
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
                None => add_file(&mut bundle, &path, &bytes),
            }
        }
        // Nothing but wire-report's own bundles in the directory: not a node.
        if bundle.transcripts.is_empty() && bundle.problems.is_empty() {
            continue;
        }
        out.push(NodeBundle { dir, bundle });
    }
    Ok(out)
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
        for e in walkdir::WalkDir::new(p).sort_by_file_name() {
            let e = e.map_err(|e| anyhow::anyhow!("failed to walk `{}`: {e}", p.display()))?;
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
    let bytes = crate::fs::read(path)?;
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
    add_file(&mut b, &path.display().to_string(), &bytes);
    if b.transcripts.is_empty() {
        let why = b
            .problems
            .first()
            .map(|p| p.one_line())
            .unwrap_or_else(|| format!("{}: nothing to read", path.display()));
        anyhow::bail!("{why}");
    }
    Ok(b)
}

/// Recognises, parses and records one file into `bundle` (pure: bytes in).
pub fn add_file(bundle: &mut Bundle, path: &str, bytes: &[u8]) {
    let problem = |line: Option<usize>, kind, message: String| Problem {
        file: path.to_string(),
        line,
        kind,
        message,
    };
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let line = bytes[..e.valid_up_to()]
                .iter()
                .filter(|b| **b == b'\n')
                .count()
                + 1;
            bundle.problems.push(problem(
                Some(line),
                ProblemKind::Unreadable,
                "expected UTF-8 text; this looks like a binary file".into(),
            ));
            return;
        }
    };
    if text.trim().is_empty() {
        bundle.problems.push(problem(
            Some(1),
            ProblemKind::Unrecognized,
            "expected a transcript; the file is empty".into(),
        ));
        return;
    }
    if is_bundle(text) {
        return;
    }
    if text.contains('\0') {
        let line = text[..text.find('\0').unwrap_or(0)].matches('\n').count() + 1;
        bundle.problems.push(problem(
            Some(line),
            ProblemKind::Unreadable,
            "expected text; found a NUL byte (binary file?)".into(),
        ));
        return;
    }
    let Some(tool) = evidence::detect(text) else {
        bundle.problems.push(problem(
            Some(1),
            ProblemKind::Unrecognized,
            format!("expected a transcript of a known tool ({})", known_tools()),
        ));
        return;
    };
    match evidence::parse(tool, text) {
        Ok(mut parsed) => {
            let file = Text::from(path.to_string());
            parsed.topology.set_file(&file);
            for c in bundle.topology.merge(parsed.topology) {
                bundle.problems.push(Problem {
                    file: c.other.file.to_string(),
                    line: Some(c.other.line),
                    kind: ProblemKind::Conflict,
                    message: format!("disagrees with {}:{}: {}", c.kept.file, c.kept.line, c.what),
                });
            }
            for m in &mut parsed.measurements {
                m.source.file = file.clone();
            }
            for d in &mut parsed.rdma {
                d.source.file = file.clone();
                for p in &mut d.ports {
                    p.source.file = file.clone();
                }
            }
            for p in &mut parsed.pcie {
                p.source.file = file.clone();
            }
            for i in &parsed.issues {
                bundle.problems.push(Problem {
                    file: path.to_string(),
                    line: Some(i.line),
                    kind: match i.kind {
                        IssueKind::Truncated => ProblemKind::Truncated,
                        IssueKind::ToolError => ProblemKind::ToolError,
                    },
                    message: i.message.clone(),
                });
            }
            // The first file's cells move in whole (no copy of every cell).
            if bundle.measurements.is_empty() {
                bundle.measurements = parsed.measurements;
            } else {
                bundle.measurements.extend(parsed.measurements);
            }
            merge_rdma(&mut bundle.rdma, parsed.rdma);
            bundle.pcie.extend(parsed.pcie);
            bundle.transcripts.push(Transcript {
                path: path.to_string(),
                tool,
                sha256: sha256_hex(bytes),
                text: text.to_string(),
                notes: parsed.notes,
            });
        }
        Err(e) => bundle.problems.push(problem(
            Some(e.line),
            ProblemKind::Parse,
            format!("{}: expected {}", tool.as_str(), e.expected),
        )),
    }
}

fn is_bundle(text: &str) -> bool {
    text.trim_start().starts_with('{') && text.contains("\"schema_version\"")
}

/// Every tool's name, in the enum's order (not detection order: the
/// message is in bundles and the golden site).
fn known_tools() -> String {
    let mut tools: Vec<Tool> = Tool::all().collect();
    tools.sort();
    tools
        .into_iter()
        .map(Tool::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Folds adapters from another transcript of the node: same name, same
/// adapter; a port's missing facts are filled in, facts already known kept.
pub fn merge_rdma(into: &mut Vec<RdmaDevice>, from: Vec<RdmaDevice>) {
    for d in from {
        let Some(mine) = into.iter_mut().find(|x| x.name == d.name) else {
            into.push(d);
            continue;
        };
        mine.ca_type = mine.ca_type.take().or(d.ca_type);
        mine.firmware = mine.firmware.take().or(d.firmware);
        mine.node_guid = mine.node_guid.take().or(d.node_guid);
        mine.transport = mine.transport.take().or(d.transport);
        mine.board_id = mine.board_id.take().or(d.board_id);
        for p in d.ports {
            match mine.ports.iter_mut().find(|x| x.port == p.port) {
                None => mine.ports.push(p),
                Some(q) => {
                    macro_rules! fill {
                        ($($f:ident),*) => { $( if q.$f.is_none() { q.$f = p.$f.clone(); } )* };
                    }
                    fill!(
                        state,
                        active,
                        physical_state,
                        link_up,
                        rate_bytes_per_s,
                        rate_as_printed,
                        width,
                        speed,
                        active_mtu_bytes,
                        max_mtu_bytes,
                        link_layer,
                        lid,
                        sm_lid,
                        port_guid
                    );
                    if q.gids.is_empty() {
                        q.gids = p.gids;
                    }
                }
            }
        }
    }
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in digest {
        s.push(char::from(HEX[usize::from(b >> 4)]));
        s.push(char::from(HEX[usize::from(b & 15)]));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty() -> Bundle {
        Bundle::new(Host {
            name: "t".into(),
            origin: Origin::Ingested,
        })
    }

    #[test]
    fn binary_junk_becomes_a_problem_with_a_line() {
        let mut b = empty();
        add_file(&mut b, "junk.bin", b"line one\n\xff\xfe\x00");
        assert_eq!(b.problems.len(), 1);
        assert_eq!(
            b.problems[0].one_line(),
            "junk.bin:2: expected UTF-8 text; this looks like a binary file"
        );
        assert!(b.transcripts.is_empty());
    }

    #[test]
    fn garbled_matrix_names_the_line() {
        let mut b = empty();
        add_file(
            &mut b,
            "topo.txt",
            b"\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV4\t0-3\nGPU1\tNV4\n\nLegend:\n  X = Self\n  PIX  = Connection traversing at most a single PCIe bridge\n",
        );
        assert_eq!(b.problems.len(), 1, "{:?}", b.problems);
        assert!(
            b.problems[0]
                .one_line()
                .starts_with("topo.txt:3: nvidia-smi-topo: expected 2 cells")
        );
    }

    #[test]
    fn sha256_matches_a_known_digest() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
