//! What `wire-report check` prints of each node: its verdict, its
//! findings with their severities and reasons, and its checks, as JSON
//! for scripts or one line for people. The same words as the pages
//! (summaries from [`explain`], check details from [`view::detail`]), so
//! the index, the node pages, the single file, the markdown summary and
//! `check` can be compared and agree.

use serde::Serialize;

use crate::render::{Analysed, explain, view};

/// One node, in the shape `check --json` documents.
#[derive(Debug, Serialize)]
pub struct NodeVerdict {
    pub node: String,
    pub verdict: &'static str,
    /// `6 of 8 checks that apply ran`.
    pub coverage: String,
    pub findings: Vec<FindingOut>,
    pub checks: Vec<CheckOut>,
}

#[derive(Debug, Serialize)]
pub struct FindingOut {
    pub kind: &'static str,
    pub severity: &'static str,
    pub devices: Vec<String>,
    pub text: String,
    /// Why this severity (the severity table's row).
    pub reason: String,
    /// The table row's id.
    pub rule: crate::diagnosis::Why,
    pub evidence: Vec<Line>,
}

#[derive(Debug, Serialize)]
pub struct Line {
    pub file: String,
    pub line: usize,
}

#[derive(Debug, Serialize)]
pub struct CheckOut {
    pub step: &'static str,
    pub state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub needs: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<&'static str>,
    pub findings: usize,
}

pub fn node_verdict(a: &Analysed<'_>) -> NodeVerdict {
    NodeVerdict {
        node: a.bundle.host.name.clone(),
        verdict: a.verdict.as_str(),
        coverage: view::coverage(&a.checks),
        findings: a
            .findings
            .iter()
            .map(|d| FindingOut {
                kind: d.finding.name(),
                severity: d.severity.as_str(),
                devices: d.finding.devices(),
                text: explain::summary(&d.finding),
                reason: explain::reason(d),
                rule: d.why,
                evidence: d
                    .evidence
                    .iter()
                    .map(|s| Line {
                        file: s.file.to_string(),
                        line: s.line,
                    })
                    .collect(),
            })
            .collect(),
        checks: a
            .checks
            .iter()
            .map(|c| CheckOut {
                step: c.step.id(),
                state: c.state.as_str(),
                needs: c.needs,
                why: c.why,
                findings: c.findings,
            })
            .collect(),
    }
}

/// Text safe for a terminal: control characters (escape sequences, a
/// carriage return that would overwrite the line) shown as `\u{..}`.
pub fn visible(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// `node  verdict  (6 of 8 checks that apply ran)  worst: ...  not checked: ...`.
pub fn one_line(v: &NodeVerdict) -> String {
    let worst = v
        .findings
        .first()
        .map(|f| format!("  {} {}: {}", f.severity, f.kind, f.text))
        .unwrap_or_default();
    let not_checked: Vec<&str> = v
        .checks
        .iter()
        .filter(|c| c.state == "not-checked")
        .map(|c| c.step)
        .collect();
    let missing = if not_checked.is_empty() {
        String::new()
    } else {
        format!("  not checked: {}", not_checked.join(", "))
    };
    visible(&format!(
        "{}  {}  ({}){worst}{missing}",
        v.node, v.verdict, v.coverage
    ))
}
