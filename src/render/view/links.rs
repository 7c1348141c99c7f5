//! Slugs and links: a node's directory-safe slug, and the links from a
//! source line (`file:line`) to its transcript page or anchor.

use std::collections::BTreeMap;

use super::{Link, Mode};
use crate::bundle::Bundle;
use crate::evidence::Source;

/// A directory-safe slug of a node name: letters, digits, `-`, `_`, `.`.
pub fn slug(name: &str) -> String {
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

/// Links from source lines into one node's transcripts.
pub(super) struct Linker<'a> {
    mode: Mode,
    slug: &'a str,
    index: BTreeMap<&'a str, usize>,
}

impl<'a> Linker<'a> {
    pub(super) fn new(mode: Mode, slug: &'a str, b: &'a Bundle) -> Self {
        Linker {
            mode,
            slug,
            index: b
                .transcripts
                .iter()
                .enumerate()
                .map(|(i, t)| (t.path.as_str(), i))
                .collect(),
        }
    }

    pub(super) fn href(&self, s: &Source) -> String {
        let Some(i) = self.index.get(s.file.as_str()) else {
            return String::new();
        };
        match self.mode {
            Mode::Site => format!("t{i}.html#{}-t{i}-L{}", self.slug, s.line),
            Mode::SingleFile => format!("#{}-t{i}-L{}", self.slug, s.line),
        }
    }

    pub(super) fn link(&self, s: &Source) -> Link {
        let name = s.file.rsplit('/').next().unwrap_or(&s.file).to_string();
        Link {
            label: format!("{name}:{}", s.line),
            href: self.href(s),
        }
    }

    pub(super) fn transcript_href(&self, i: usize) -> String {
        match self.mode {
            Mode::Site => format!("t{i}.html"),
            Mode::SingleFile => format!("#{}-t{i}", self.slug),
        }
    }
}
