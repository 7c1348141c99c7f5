//! Slugs and links. Every slug of a render (each node's directory and
//! anchor, each transcript's page) is decided once, by [`Slugs::decide`],
//! before any view is built; views and pages only read them. A [`Linker`]
//! turns a source line (`file:line`) into a link to its transcript page or
//! anchor.

use std::collections::{BTreeMap, BTreeSet};

use super::{Link, Mode};
use crate::bundle::Bundle;
use crate::evidence::Source;

/// The longest slug, in bytes: a folder name and the `-2` a repeat gets
/// stay far under the 255 bytes a file name may have.
const SLUG_MAX: usize = 96;

/// A directory-safe slug of a node name: letters, digits, `-`, `_`, `.`;
/// a name longer than [`SLUG_MAX`] is cut and keeps a digest of itself
/// after the cut, so two long names that share a beginning stay apart.
pub fn slug(name: &str) -> String {
    let s = slug_chars(name);
    if s.len() <= SLUG_MAX {
        return s;
    }
    let tag = &crate::ingest::sha256_hex(name.as_bytes())[..8];
    // The slug is ASCII: any byte index is a char boundary.
    format!("{}-{tag}", &s[..SLUG_MAX - 9])
}

fn slug_chars(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with('.') {
        format!("n{s}")
    } else {
        s
    }
}

/// Every slug of one render, decided before any view is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slugs {
    nodes: Vec<NodeSlugs>,
}

/// One node's slugs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeSlugs {
    /// The node's directory and anchor: [`slug`] of its name, with `-2`,
    /// `-3`, ... added when an earlier node already has it.
    pub node: String,
    /// Each transcript's page, in bundle order: `t0`, `t1`, ...
    pub transcripts: Vec<String>,
    /// A transcript's path -> its position; of two with the same path, the
    /// later.
    by_path: BTreeMap<String, usize>,
}

impl Slugs {
    /// The slugs of these bundles, unique among them, in the order given.
    pub fn decide(bundles: &[Bundle]) -> Slugs {
        let names = node_slugs(bundles.iter().map(|b| b.host.name.as_str()));
        let nodes = bundles
            .iter()
            .zip(names)
            .map(|(b, node)| NodeSlugs::of(node, b))
            .collect();
        Slugs { nodes }
    }

    /// Per bundle, in the order given to [`Slugs::decide`].
    pub fn nodes(&self) -> &[NodeSlugs] {
        &self.nodes
    }
}

/// The node slugs of these names, in order: [`slug`] of each, with `-2`,
/// `-3`, ... when an earlier name already has it. [`Slugs::decide`] and a
/// streaming render (which knows every name before it loads any bundle)
/// both decide them here.
pub fn node_slugs<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut seen = BTreeSet::new();
    names
        .map(|name| {
            let base = slug(name);
            let mut node = base.clone();
            let mut k = 2;
            while !seen.insert(node.clone()) {
                node = format!("{base}-{k}");
                k += 1;
            }
            node
        })
        .collect()
}

impl NodeSlugs {
    /// A node's slugs, its own slug decided by [`node_slugs`].
    pub fn of(node: String, b: &Bundle) -> NodeSlugs {
        NodeSlugs {
            node,
            transcripts: (0..b.transcripts.len()).map(|i| format!("t{i}")).collect(),
            by_path: b
                .transcripts
                .iter()
                .enumerate()
                .map(|(i, t)| (t.path.clone(), i))
                .collect(),
        }
    }

    /// The page slug of the transcript read from `path`, if the bundle has one.
    pub fn transcript_of(&self, path: &str) -> Option<&str> {
        self.by_path
            .get(path)
            .map(|&i| self.transcripts[i].as_str())
    }

    /// The anchor of a transcript (page slug `t`) in a single-file report,
    /// and the prefix of its line anchors: `<node>-<t>`.
    pub fn transcript_anchor(&self, t: &str) -> String {
        format!("{}-{t}", self.node)
    }
}

/// Links from source lines into one node's transcripts.
pub(super) struct Linker<'a> {
    mode: Mode,
    slugs: &'a NodeSlugs,
}

impl<'a> Linker<'a> {
    pub(super) fn new(mode: Mode, slugs: &'a NodeSlugs) -> Self {
        Linker { mode, slugs }
    }

    pub(super) fn href(&self, s: &Source) -> String {
        let Some(t) = self.slugs.transcript_of(&s.file) else {
            return String::new();
        };
        let anchor = self.slugs.transcript_anchor(t);
        match self.mode {
            Mode::Site => format!("{t}.html#{anchor}-L{}", s.line),
            Mode::SingleFile => format!("#{anchor}-L{}", s.line),
        }
    }

    pub(super) fn link(&self, s: &Source) -> Link {
        let name = s.file.rsplit('/').next().unwrap_or(&s.file).to_string();
        Link {
            label: format!("{name}:{}", s.line),
            href: self.href(s),
        }
    }

    /// The `i`-th transcript of the bundle: its page, or its anchor.
    pub(super) fn transcript_href(&self, i: usize) -> String {
        let t = &self.slugs.transcripts[i];
        match self.mode {
            Mode::Site => format!("{t}.html"),
            Mode::SingleFile => format!("#{}", self.slugs.transcript_anchor(t)),
        }
    }

    /// The bundle's download: a file beside the node's page, or none in a
    /// single file.
    pub(super) fn bundle_href(&self) -> String {
        match self.mode {
            Mode::Site => "bundle.json".into(),
            Mode::SingleFile => String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{Host, Origin};

    fn bundle(name: &str) -> Bundle {
        Bundle::new(Host {
            name: name.into(),
            origin: Origin::Ingested,
        })
    }

    #[test]
    fn repeated_node_names_get_distinct_slugs_in_order() {
        let slugs = Slugs::decide(&[
            bundle("gpu 1"),
            bundle("gpu-1"),
            bundle("gpu 1"),
            bundle(""),
        ]);
        let nodes: Vec<&str> = slugs.nodes().iter().map(|n| n.node.as_str()).collect();
        assert_eq!(nodes, ["gpu-1", "gpu-1-2", "gpu-1-3", "n"]);
    }
}
