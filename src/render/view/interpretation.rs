//! The interpretation section: every series of figures with the seven
//! questions a number must answer, its values, and the ceiling of its path.

use std::collections::{BTreeMap, BTreeSet};

use super::{Link, Linker};
use crate::bundle::Bundle;
use crate::evidence::measurement::{Direction, Measurement, Statistic};
use crate::facts::NodeFacts;
use crate::render::answers::{LABELS, answers};
use crate::render::explain::ceiling_from;
use crate::render::format::{bytes, gbs, secs, size_short};

pub struct SeriesView {
    pub title: String,
    pub source: Link,
    /// The expected ceiling of the path, or why there is none.
    pub ceiling: String,
    pub questions: Vec<(&'static str, String)>,
    pub values: Vec<String>,
    pub more: usize,
}

pub(super) fn interpretation(
    b: &Bundle,
    facts: &NodeFacts,
    linker: &Linker<'_>,
) -> Vec<SeriesView> {
    type Key = (String, String, Statistic, Direction, bool);
    let mut groups: BTreeMap<Key, Vec<&Measurement>> = BTreeMap::new();
    for m in &b.measurements {
        groups
            .entry((
                m.source.file.to_string(),
                m.test.to_string(),
                m.statistic,
                m.direction,
                m.latency_s.is_some(),
            ))
            .or_default()
            .push(m);
    }
    let mut out = Vec::new();
    for ((_, test, stat, _, lat), cells) in groups {
        let first = cells[0];
        let all: Vec<[String; 7]> = cells.iter().map(|m| answers(m)).collect();
        let mut questions: Vec<(&'static str, String)> = Vec::new();
        for (i, label) in LABELS.iter().enumerate() {
            let distinct: BTreeSet<&str> = all.iter().map(|a| a[i].as_str()).collect();
            let text = if distinct.len() == 1 {
                all[0][i].clone()
            } else if i == 2 {
                let sizes: Vec<u64> = cells.iter().filter_map(|m| m.size_bytes).collect();
                format!(
                    "a sweep from {} to {}",
                    bytes(sizes.iter().min().copied().unwrap_or(0) as f64),
                    bytes(sizes.iter().max().copied().unwrap_or(0) as f64)
                )
            } else {
                distinct.into_iter().collect::<Vec<_>>().join(" | ")
            };
            questions.push((label, text));
        }
        let shown = 48;
        let values: Vec<String> = cells
            .iter()
            .take(shown)
            .map(|m| {
                let who = match (&m.src, &m.dst) {
                    (Some(s), Some(d)) => format!("{s}->{d} "),
                    (Some(s), None) => format!("{s} "),
                    _ => String::new(),
                };
                let size = m
                    .size_bytes
                    .map(|s| format!("{}: ", size_short(s as f64)))
                    .unwrap_or_default();
                let value = if lat {
                    secs(m.latency_s.unwrap_or(0.0))
                } else {
                    gbs(m.bandwidth_bytes_per_s.unwrap_or(0.0))
                };
                let ceiling = match (m.bandwidth_bytes_per_s, facts.ceiling(m)) {
                    (Some(v), Some(c)) => format!(
                        " = {:.0}% of {} ({})",
                        100.0 * v / c.bytes_per_s,
                        gbs(c.bytes_per_s),
                        ceiling_from(&c.from)
                    ),
                    _ => String::new(),
                };
                format!("{who}{size}{value} [printed {}]{ceiling}", m.as_printed)
            })
            .collect();
        let ceiling = match facts.ceiling(first) {
            Some(c) if !lat => format!("{} per the path's link facts ({}); ratios below", gbs(c.bytes_per_s), ceiling_from(&c.from)),
            _ => "not known: this bundle lacks the link facts of this path (link generation, width or port rate)".to_string(),
        };
        out.push(SeriesView {
            title: format!(
                "{} {test} ({})",
                first.tool,
                format!("{stat:?}").to_lowercase()
            ),
            source: linker.link(&first.source),
            ceiling,
            questions,
            more: cells.len().saturating_sub(shown),
            values,
        });
    }
    out
}
