//! The transcripts section: the list of transcripts on a node's page, and
//! each transcript shown whole with line anchors on its own page.

use super::{Linker, Mode, NodeSlugs};
use crate::bundle::Bundle;
use crate::evidence::Source;
use crate::evidence::text::Text;

pub struct TranscriptLink {
    pub name: String,
    pub tool: &'static str,
    pub href: String,
    pub lines: usize,
    pub notes: Vec<String>,
    /// "40 lines read, 3 skipped (2 blank, 1 shell prompt or command
    /// line), 0 not understood".
    pub accounting: String,
    /// The lines not understood: number and link, at most
    /// [`UNREAD_SHOWN`] (the rest are counted in `accounting`).
    pub unread: Vec<(usize, String)>,
}

/// How many not-understood lines the node page links one by one.
const UNREAD_SHOWN: usize = 50;

pub struct TranscriptView {
    pub anchor: String,
    pub name: String,
    pub path: String,
    pub tool: &'static str,
    pub sha256: String,
    pub lines: Vec<(usize, String)>,
    /// Back to the node's page (or its section of a single file).
    pub back_href: String,
    pub node_name: String,
}

/// The file name of a transcript's path.
fn file_name(path: &str) -> String {
    path.rsplit('/').next().unwrap_or(path).to_string()
}

/// The list on the node's page.
pub(super) fn links(b: &Bundle, linker: &Linker<'_>) -> Vec<TranscriptLink> {
    b.transcripts
        .iter()
        .enumerate()
        .map(|(i, tr)| TranscriptLink {
            name: file_name(&tr.path),
            tool: tr.tool.as_str(),
            href: linker.transcript_href(i),
            lines: tr.text.lines().count(),
            notes: tr
                .notes
                .iter()
                .map(|n| format!("line {}: {}", n.line, n.text))
                .collect(),
            accounting: tr.lines.summary(),
            unread: tr
                .lines
                .not_understood_lines
                .iter()
                .take(UNREAD_SHOWN)
                .map(|&line| {
                    let s = Source {
                        file: Text::from(&tr.path),
                        line,
                    };
                    (line, linker.href(&s))
                })
                .collect(),
        })
        .collect()
}

/// Each transcript whole, its lines numbered from 1.
pub(super) fn views(b: &Bundle, slugs: &NodeSlugs, mode: Mode) -> Vec<TranscriptView> {
    let back_href = match mode {
        Mode::Site => "index.html".to_string(),
        Mode::SingleFile => format!("#{}", slugs.node),
    };
    b.transcripts
        .iter()
        .zip(&slugs.transcripts)
        .map(|(tr, t)| TranscriptView {
            anchor: slugs.transcript_anchor(t),
            name: file_name(&tr.path),
            path: tr.path.clone(),
            tool: tr.tool.as_str(),
            sha256: tr.sha256.clone(),
            back_href: back_href.clone(),
            node_name: b.host.name.clone(),
            lines: tr
                .text
                .lines()
                .enumerate()
                .map(|(n, l)| (n + 1, l.to_string()))
                .collect(),
        })
        .collect()
}
