//! The interpretation section: every series of figures with the seven
//! questions a number must answer, its values, the ceiling of its path,
//! and the trust grade of each figure (`facts::trust`) with its reasons.

use std::collections::{BTreeMap, BTreeSet};

use super::{Link, Linker};
use crate::bundle::Bundle;
use crate::evidence::measurement::{Direction, Measurement, Statistic};
use crate::facts::NodeFacts;
use crate::facts::trust::{Grade, Trust, TrustReason};
use crate::render::answers::{LABELS, answers};
use crate::render::explain::ceiling_from;
use crate::render::format::{bytes, gbs, secs, size_short};
use crate::render::trust;

/// One figure of a series: its words and its trust grade.
pub struct ValueView {
    pub text: String,
    /// `A`, `B` or `C`.
    pub grade: &'static str,
    /// The grade's reasons, for a tooltip.
    pub why: String,
}

pub struct SeriesView {
    pub title: String,
    pub source: Link,
    /// The expected ceiling of the path, or why there is none.
    pub ceiling: String,
    pub questions: Vec<(&'static str, String)>,
    /// How many figures of the series got each grade (`A`, 12), best first.
    pub grades: Vec<(&'static str, usize)>,
    /// The reasons every figure of the series shares, in words.
    pub shared_reasons: Vec<String>,
    pub values: Vec<ValueView>,
    pub more: usize,
}

pub(super) fn interpretation(
    b: &Bundle,
    facts: &NodeFacts,
    linker: &Linker<'_>,
) -> Vec<SeriesView> {
    type Key = (String, String, Statistic, Direction, bool);
    let mut groups: BTreeMap<Key, Vec<(usize, &Measurement)>> = BTreeMap::new();
    for (i, m) in b.measurements.iter().enumerate() {
        groups
            .entry((
                m.source.file.to_string(),
                m.test.to_string(),
                m.statistic,
                m.direction,
                m.latency_s.is_some(),
            ))
            .or_default()
            .push((i, m));
    }
    let mut out = Vec::new();
    for ((_, test, stat, _, lat), indexed) in groups {
        let (index, cells): (Vec<usize>, Vec<&Measurement>) = indexed.into_iter().unzip();
        let grades: Vec<&Trust> = index.iter().filter_map(|&i| facts.trust.get(i)).collect();
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
        let values: Vec<ValueView> = cells
            .iter()
            .zip(&index)
            .take(shown)
            .map(|(m, &i)| {
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
                let text = format!("{who}{size}{value} [printed {}]{ceiling}", m.as_printed);
                match facts.trust.get(i) {
                    Some(t) => ValueView {
                        text,
                        grade: trust::letter(t.grade),
                        why: trust::summary(t),
                    },
                    None => ValueView {
                        text,
                        grade: "",
                        why: String::new(),
                    },
                }
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
            grades: grade_counts(&grades),
            shared_reasons: shared_reasons(&grades),
            more: cells.len().saturating_sub(shown),
            values,
        });
    }
    out
}

/// How many of `grades` are A, B and C, leaving out grades no figure got.
fn grade_counts(grades: &[&Trust]) -> Vec<(&'static str, usize)> {
    [Grade::A, Grade::B, Grade::C]
        .into_iter()
        .map(|g| {
            (
                trust::letter(g),
                grades.iter().filter(|t| t.grade == g).count(),
            )
        })
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// The reasons every one of `grades` gives, in the first one's order, in
/// words.
fn shared_reasons(grades: &[&Trust]) -> Vec<String> {
    let Some((first, rest)) = grades.split_first() else {
        return Vec::new();
    };
    first
        .reasons
        .iter()
        .filter(|r| rest.iter().all(|t| t.reasons.contains(r)))
        .map(|r: &TrustReason| trust::reason(r))
        .collect()
}
