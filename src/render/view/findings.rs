//! The diagnosis section: each finding with its severity, its summary, the
//! explanation from `templates/explain/` and links to its evidence lines.

use super::{Link, Linker};
use crate::diagnosis::{Diagnosed, Severity};
use crate::render::explain;

pub struct FindingView {
    pub severity: &'static str,
    pub kind: &'static str,
    /// Why this severity: the severity table's reason for its row, and
    /// what lowered it where the figures are weak.
    pub reason: String,
    pub summary: String,
    pub explanation_html: String,
    pub evidence: Vec<Link>,
    /// Findings of the same kind and severity that follow it (the same
    /// cause on other devices or files): said once, with their count,
    /// each with its own summary and lines.
    pub also: Vec<(String, Vec<Link>)>,
}

/// One function owns the markdown options.
pub fn markdown(md: &str) -> String {
    let parser = pulldown_cmark::Parser::new_ext(md, pulldown_cmark::Options::empty());
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, parser);
    out
}

fn finding_view(d: &Diagnosed, linker: &Linker<'_>) -> FindingView {
    FindingView {
        severity: d.severity.as_str(),
        kind: d.finding.name(),
        reason: explain::reason(d),
        summary: explain::summary(&d.finding),
        explanation_html: markdown(explain::explanation(&d.finding)),
        evidence: d.evidence.iter().map(|s| linker.link(s)).collect(),
        also: Vec::new(),
    }
}

/// One view per run of findings of one kind and severity: the first in
/// full, the others under it ([`FindingView::also`]).
pub(super) fn finding_views(diagnosed: &[Diagnosed], linker: &Linker<'_>) -> Vec<FindingView> {
    let mut out: Vec<FindingView> = Vec::new();
    let mut last: Option<(&str, crate::diagnosis::Severity)> = None;
    for d in diagnosed {
        let key = (d.finding.name(), d.severity);
        match out.last_mut() {
            Some(v) if last == Some(key) => v.also.push((
                explain::summary(&d.finding),
                d.evidence.iter().map(|s| linker.link(s)).collect(),
            )),
            _ => out.push(finding_view(d, linker)),
        }
        last = Some(key);
    }
    out
}

/// How many findings have this severity.
pub(super) fn count(diagnosed: &[Diagnosed], s: Severity) -> usize {
    diagnosed.iter().filter(|d| d.severity == s).count()
}
