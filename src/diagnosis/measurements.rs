//! Rules on what the figures themselves say: P2P copies staged through the
//! host, runs that reported wrong data or failed, transcripts cut short,
//! figures far below their path's ceiling, and the unit traps (bits, sums
//! of both directions).

use std::collections::BTreeMap;

use super::{Diagnosed, FAR_BELOW, Finding, Severity, push};
use crate::bundle::{Bundle, ProblemKind};
use crate::evidence::Source;
use crate::evidence::measurement::{Direction, Kind, Measurement, P2p, Statistic, Verification};
use crate::facts::{NodeFacts, PathCeiling};

/// P2P-enabled within this fraction of P2P-disabled is the staging
/// fingerprint (seed section 3.5: the fallback works and is slow).
const STAGING_SIMILARITY: f64 = 0.10;

fn key(m: &Measurement) -> Option<(String, String, String, Direction)> {
    Some((
        m.source.file.to_string(),
        m.src.as_ref()?.to_string(),
        m.dst.as_ref()?.to_string(),
        m.direction,
    ))
}

pub(super) fn silent_staging(b: &Bundle, out: &mut Vec<Diagnosed>) {
    // Pair -> (P2P enabled, P2P disabled) unidirectional cells, same transcript.
    type Pair<'a> = (Option<&'a Measurement>, Option<&'a Measurement>);
    let mut pairs: BTreeMap<(String, String, String, Direction), Pair<'_>> = BTreeMap::new();
    for m in &b.measurements {
        if m.kind != Kind::P2pCopy
            || m.bandwidth_bytes_per_s.is_none()
            || m.direction != Direction::Uni
        {
            continue;
        }
        let Some(k) = key(m) else { continue };
        let e = pairs.entry(k).or_default();
        match m.p2p {
            P2p::Enabled => e.0 = Some(m),
            P2p::Disabled => e.1 = Some(m),
            P2p::Unknown => {}
        }
    }
    let mut flagged = pairs.iter().filter_map(|((_, src, dst, _), pair)| {
        let (Some(en), Some(dis)) = pair else {
            return None;
        };
        let (e, d) = (
            en.bandwidth_bytes_per_s.unwrap_or(0.0),
            dis.bandwidth_bytes_per_s.unwrap_or(0.0),
        );
        (d > 0.0 && (e - d).abs() <= STAGING_SIMILARITY * d).then_some((src, dst, en, dis, e, d))
    });
    // One finding per node is enough to make the point; the matrices show the rest.
    let Some((src, dst, en, dis, e, d)) = flagged.next() else {
        return;
    };
    push(
        out,
        Severity::Critical,
        Finding::SilentStaging {
            src: src.clone(),
            dst: dst.clone(),
            enabled_bytes_per_s: e,
            disabled_bytes_per_s: d,
            pairs: 1 + flagged.count(),
        },
        vec![en.source.clone(), dis.source.clone()],
    );
}

pub(super) fn wrong_results(b: &Bundle, out: &mut Vec<Diagnosed>) {
    let mut per: BTreeMap<(String, String), (u64, Source)> = BTreeMap::new();
    for m in &b.measurements {
        if let Verification::Checked { errors } = m.verification
            && errors > 0
        {
            let e = per
                .entry((m.tool.to_string(), m.test.to_string()))
                .or_insert((0, m.source.clone()));
            e.0 += errors;
        }
    }
    for ((tool, what), (errors, src)) in per {
        push(
            out,
            Severity::Critical,
            Finding::WrongResults { tool, what, errors },
            vec![src],
        );
    }
}

pub(super) fn tool_failures(b: &Bundle, out: &mut Vec<Diagnosed>) {
    for p in &b.problems {
        let src = Source {
            file: p.file.clone().into(),
            line: p.line.unwrap_or(1),
        };
        let tool = b
            .transcripts
            .iter()
            .find(|t| t.path == p.file)
            .map(|t| t.tool.as_str().to_string())
            .unwrap_or_default();
        match p.kind {
            ProblemKind::ToolError => push(
                out,
                Severity::Critical,
                Finding::ToolFailed {
                    tool,
                    message: p.message.clone(),
                },
                vec![src],
            ),
            ProblemKind::Truncated => push(
                out,
                Severity::Info,
                Finding::Truncated {
                    file: p.file.clone(),
                    message: p.message.clone(),
                },
                vec![src],
            ),
            _ => {}
        }
    }
}

pub(super) fn far_below_ceiling(b: &Bundle, facts: &NodeFacts, out: &mut Vec<Diagnosed>) {
    // Best figure per series, with its ceiling.
    type Series = (String, String, Option<String>, Option<String>);
    let mut best: BTreeMap<Series, (&Measurement, PathCeiling)> = BTreeMap::new();
    for m in &b.measurements {
        if !matches!(m.statistic, Statistic::Avg | Statistic::Peak) {
            continue;
        }
        let Some(bw) = m.bandwidth_bytes_per_s else {
            continue;
        };
        let Some(c) = facts.ceiling(m) else { continue };
        let k = (
            m.source.file.to_string(),
            m.test.to_string(),
            m.src.as_ref().map(|x| x.to_string()),
            m.dst.as_ref().map(|x| x.to_string()),
        );
        match best.get(&k) {
            Some((prev, _)) if prev.bandwidth_bytes_per_s.unwrap_or(0.0) >= bw => {}
            _ => {
                best.insert(k, (m, c));
            }
        }
    }
    for ((_, test, src, dst), (m, ceiling)) in best {
        let bw = m.bandwidth_bytes_per_s.unwrap_or(0.0);
        if bw >= FAR_BELOW * ceiling.bytes_per_s {
            continue;
        }
        push(
            out,
            Severity::Warning,
            Finding::FarBelowCeiling {
                test,
                src,
                dst,
                measured_bytes_per_s: bw,
                ceiling,
            },
            vec![m.source.clone()],
        );
    }
}

pub(super) fn unit_traps(b: &Bundle, out: &mut Vec<Diagnosed>) {
    // The largest figure of each transcript printed in bits, and of each
    // bidirectional test between two different endpoints: one finding each.
    let mut bits: BTreeMap<String, &Measurement> = BTreeMap::new();
    let mut bi: BTreeMap<(String, String), &Measurement> = BTreeMap::new();
    let bigger =
        |a: &Measurement, b: &Measurement| b.bandwidth_bytes_per_s > a.bandwidth_bytes_per_s;
    for m in &b.measurements {
        if m.bandwidth_bytes_per_s.is_none() {
            continue;
        }
        if m.as_printed.contains("Gb/sec") {
            let e = bits.entry(m.source.file.to_string()).or_insert(m);
            if bigger(e, m) {
                *e = m;
            }
        }
        if m.direction == Direction::Bi && m.statistic != Statistic::Sum && m.src != m.dst {
            let e = bi
                .entry((m.source.file.to_string(), m.test.to_string()))
                .or_insert(m);
            if bigger(e, m) {
                *e = m;
            }
        }
    }
    for m in bits.into_values() {
        push(
            out,
            Severity::Info,
            Finding::BitsNotBytes {
                tool: m.tool.to_string(),
                example_as_printed: m.as_printed.clone(),
                example_bytes_per_s: m.bandwidth_bytes_per_s.unwrap_or(0.0),
            },
            vec![m.source.clone()],
        );
    }
    for m in bi.into_values() {
        push(
            out,
            Severity::Info,
            Finding::BidirectionalSum {
                tool: m.tool.to_string(),
                test: m.test.to_string(),
                example_bytes_per_s: m.bandwidth_bytes_per_s.unwrap_or(0.0),
            },
            vec![m.source.clone()],
        );
    }
}
