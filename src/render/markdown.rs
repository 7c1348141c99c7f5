//! `render --format md`: what a person pastes into a performance ticket.
//! Per node: where the evidence came from, the findings with their
//! evidence lines, the key figures (best and worst of each kind, with
//! tool, direction, message size and source line), and what is missing.
//! Text from transcripts is escaped so a ticket system renders it as text.

use std::fmt::Write;

use crate::bundle::{Bundle, Origin};
use crate::diagnosis::Diagnosed;
use crate::evidence::measurement::Measurement;
use crate::render::format::{gbs, secs, size_short};
use crate::render::{analyse, explain};

/// Rows of the key figure table per node, so a summary stays short.
const MAX_FIGURES: usize = 16;

/// Escapes what markdown (and HTML inside markdown) would interpret. An
/// underscore inside a word (`mlx5_0`, `nvidia_peermem`) is left as it
/// is: no markdown reads it as emphasis, and a ticket shows the name as
/// typed; one at a word's edge (`_x_`) is escaped.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let chars: Vec<char> = s.chars().collect();
    let word = |i: Option<usize>| {
        i.and_then(|i| chars.get(i))
            .is_some_and(|c| c.is_alphanumeric())
    };
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\n' | '\r' => out.push(' '),
            '_' if word(i.checked_sub(1)) && word(Some(i + 1)) => out.push(c),
            // ESC, BEL, NUL, bidi overrides: shown, never passed to a
            // terminal that cats the summary or to a ticket's renderer.
            c if crate::say::hidden(c) => out.extend(c.escape_unicode()),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' | '~' | '!' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// The topology matrix as a table: each GPU's row, the code the tool
/// printed for every GPU and adapter (the class where it printed none).
fn topology_table(b: &Bundle) -> Option<String> {
    let t = &b.topology;
    let gpus: Vec<&str> = t.gpus().map(|d| d.id.as_str()).collect();
    if gpus.is_empty() || t.links.is_empty() {
        return None;
    }
    let columns: Vec<&crate::evidence::topology::Device> = t.devices.iter().collect();
    let mut s = String::from("| |");
    for d in &columns {
        let name = d
            .name
            .as_deref()
            .filter(|_| d.kind == crate::evidence::topology::DeviceKind::Nic);
        s.push_str(&format!(
            " {}{} |",
            escape(&d.id),
            name.map(|n| format!(" ({})", escape(n)))
                .unwrap_or_default()
        ));
    }
    s.push_str("\n|---|");
    s.push_str(&"---|".repeat(columns.len()));
    s.push('\n');
    for g in &gpus {
        s.push_str(&format!("| {} |", escape(g)));
        for d in &columns {
            let cell = if *g == d.id {
                "X".to_string()
            } else {
                t.link(g, &d.id)
                    .map(|l| {
                        l.code
                            .clone()
                            .unwrap_or_else(|| l.class.as_str().to_string())
                    })
                    .unwrap_or_default()
            };
            s.push_str(&format!(" {} |", escape(&cell)));
        }
        s.push('\n');
    }
    Some(s)
}

/// `s` as an inline code span that nothing can leave: a backtick becomes
/// `'`, and every control character (a newline would end the paragraph and
/// let the rest become markup) and every Unicode line or paragraph
/// separator becomes a space.
pub fn code(s: &str) -> String {
    let inner: String = s
        .chars()
        .map(|c| match c {
            '`' => '\'',
            c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' => ' ',
            c => c,
        })
        .collect();
    format!("`{inner}`")
}

/// A source as `file:line`, escaped.
fn source(m: &Measurement) -> String {
    escape(&format!("{}:{}", m.source.file, m.source.line))
}

fn origin(b: &Bundle) -> String {
    match b.host.origin {
        Origin::Live => format!(
            "measured live on this node by wire-report {}",
            escape(&b.generator.version)
        ),
        Origin::Ingested => format!(
            "ingested from {} transcript(s) captured elsewhere",
            b.transcripts.len()
        ),
    }
}

/// The best and the worst figure of each (tool, kind, direction, buffers,
/// statistic), bandwidth and latency, with what they were measured at.
fn key_figures(b: &Bundle) -> Vec<String> {
    let mut rows = Vec::new();
    for k in crate::render::key_figures::key_figures(b) {
        let latency = k.latency;
        let show = |m: &Measurement| {
            let v = if latency {
                secs(m.latency_s.unwrap_or(f64::NAN))
            } else {
                gbs(m.bandwidth_bytes_per_s.unwrap_or(f64::NAN))
            };
            let pair = match (&m.src, &m.dst) {
                (Some(s), Some(d)) => format!(" {} \u{2192} {}", escape(s), escape(d)),
                (Some(s), None) => format!(" {}", escape(s)),
                _ => String::new(),
            };
            let size = m
                .size_bytes
                .map(|s| format!(" at {}", size_short(s as f64)))
                .unwrap_or_default();
            format!(
                "{v}{}{} (printed {}; {})",
                pair,
                size,
                escape(&m.as_printed),
                source(m)
            )
        };
        let what = if latency { "latency" } else { "bandwidth" };
        let worst_cell = if k.count > 1 {
            show(k.worst)
        } else {
            "(one figure)".into()
        };
        rows.push(format!(
            "| {} {} {what}, {}, {}{}{} | {} | {} | {} |",
            escape(&k.tool),
            k.kind.as_str(),
            k.statistic,
            k.direction_words(),
            k.p2p_words(),
            k.buffers_words(),
            show(k.best),
            worst_cell,
            k.count
        ));
    }
    rows
}

fn finding(d: &Diagnosed) -> String {
    let ev = d
        .evidence
        .iter()
        .take(4)
        .map(|s| code(&format!("{}:{}", s.file, s.line)))
        .collect::<Vec<_>>()
        .join(", ");
    let more = d.evidence.len().saturating_sub(4);
    format!(
        "- **{}** ({}) {} Why {}: {}{}{}",
        d.severity.as_str(),
        d.finding.name(),
        escape(&explain::summary(&d.finding)),
        d.severity.as_str(),
        escape(&explain::reason(d)),
        if ev.is_empty() {
            String::new()
        } else {
            format!(" Evidence: {ev}")
        },
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    )
}

/// The summary of one or more nodes.
pub fn render_markdown(bundles: &[Bundle]) -> String {
    analyse(bundles).iter().map(node_markdown).collect()
}

/// One node's part of [`render_markdown`] (`render --format md` writes
/// them one node at a time).
pub fn node_markdown(node: &crate::render::Analysed<'_>) -> String {
    let mut s = String::new();
    let (b, found) = (node.bundle, &node.findings);
    let _ = writeln!(s, "### wire-report: {}\n", escape(&b.host.name));
    let _ = writeln!(
        s,
        "Evidence {}; {} GPU(s) and {} other device(s) in the topology, {} figure(s), {} RDMA adapter(s), {} PCIe link(s). GB/s = 1e9 bytes/s.\n",
        origin(b),
        node.facts.gpus.len(),
        node.facts.nics.len(),
        b.measurements.len(),
        b.rdma.len(),
        b.pcie.len()
    );
    let _ = writeln!(
        s,
        "**Verdict: {}** ({}).\n",
        node.verdict.as_str(),
        crate::render::view::coverage(&node.checks)
    );
    s.push_str("**Checks:**\n\n");
    for c in &node.checks {
        let _ = writeln!(
            s,
            "- {} {}: {}",
            c.step.id(),
            c.state.as_str(),
            escape(&crate::render::view::detail(c))
        );
    }
    s.push('\n');
    if found.is_empty() {
        s.push_str("**Findings:** none from the evidence collected.\n\n");
    } else {
        let _ = writeln!(s, "**Findings** ({}):\n", found.len());
        for d in found {
            s.push_str(&finding(d));
            s.push('\n');
        }
        s.push('\n');
    }
    if let Some(table) = topology_table(b) {
        s.push_str("**Topology** (the code each tool printed for a pair: NV# NVLinks, PIX/PXB a PCIe switch, PHB/NODE a host bridge, SYS the socket link):\n\n");
        s.push_str(&table);
        s.push('\n');
    }
    let rows = key_figures(b);
    if !rows.is_empty() {
        s.push_str("**Key figures** (best and worst of each kind, host and GPU buffers apart: bandwidth at the largest message measured, latency at the smallest; source is transcript:line):\n\n");
        s.push_str("| figure | best | worst | figures |\n|---|---|---|---|\n");
        for r in rows.iter().take(MAX_FIGURES) {
            s.push_str(r);
            s.push('\n');
        }
        if rows.len() > MAX_FIGURES {
            let _ = writeln!(
                s,
                "\n{} more kinds of figure are in the bundle.",
                rows.len() - MAX_FIGURES
            );
        }
        s.push('\n');
    }
    let ports: Vec<String> = b
        .rdma
        .iter()
        .flat_map(|d| {
            d.ports.iter().map(move |p| {
                format!(
                    "{} port {}: {} {}",
                    d.name,
                    p.port,
                    p.state.clone().unwrap_or_else(|| "state unknown".into()),
                    p.rate_as_printed
                        .as_ref()
                        .map(|r| format!("(rate {r} as printed)"))
                        .unwrap_or_default()
                )
            })
        })
        .collect();
    if !ports.is_empty() {
        let _ = writeln!(s, "**RDMA ports:** {}\n", escape(&ports.join("; ")));
    }
    if !b.problems.is_empty() {
        let _ = writeln!(
            s,
            "**Problems reading the evidence** ({}): {}\n",
            b.problems.len(),
            b.problems
                .iter()
                .take(3)
                .map(|p| escape(&p.one_line()))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcript_text_cannot_become_markup() {
        assert_eq!(escape("<b>|x|</b>"), "&lt;b&gt;\\|x\\|&lt;/b&gt;");
        assert_eq!(escape("a_b*c`d"), "a_b\\*c\\`d");
        assert_eq!(escape("_x_ mlx5_0"), "\\_x\\_ mlx5_0");
        assert_eq!(escape("[l](http://x)"), "\\[l\\](http://x)");
    }

    #[test]
    fn a_code_span_cannot_be_left() {
        assert_eq!(code("a\n\n<img>`b\r\u{2028}c"), "`a  <img>'b  c`");
    }
}
